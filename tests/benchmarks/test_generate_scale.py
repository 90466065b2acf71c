"""benchmarks/scale: the 'tiny' preset is deterministic, parses with the builder's own
readers, passes the translation gates, and builds an audited release; the CLI writes the same
bytes; the data tables parse with their columns, and a malformed one is one clear error."""
from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from benchmarks.scale.data import (DATA, TABLE_COLUMNS, TOML_KEYS, DataError, check_entries, parse_toml, parse_tsv, table,
                                   toml)
from benchmarks.scale.generate import generate
from benchmarks.scale.presets import PRESETS, QUESTION_LANGS, Preset
from tests.conftest import ROOT

LANGS = ["en", "zh", "ja", "fr", "ru", "es"]


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("scale") / "tiny"
    generate(PRESETS["tiny"], out, seed=0)
    return out


def test_tiny_is_deterministic(tiny, tmp_path):
    again = tmp_path / "tiny"
    generate(PRESETS["tiny"], again, seed=0)
    a, b = _tree(tiny), _tree(again)
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []
    other = tmp_path / "seed1"
    generate(PRESETS["tiny"], other, seed=1)
    assert (other / "umls" / "MRCONSO.RRF").read_bytes() != a["umls/MRCONSO.RRF"]


def test_rrf_parses_with_the_builder_reader(tiny):
    from umls.rrf import COLUMNS, read_rrf_table

    umls = tiny / "umls"
    tables = {name: read_rrf_table(umls / name, cols) for name, cols in COLUMNS.items()}
    for name, cols in COLUMNS.items():
        # every line has exactly len(cols) '|'-terminated fields (read_rrf_table checked it too)
        for line in (umls / name).read_text(encoding="utf-8").splitlines()[:500]:
            assert line.endswith("|") and line.count("|") == len(cols), (name, line)
    conso = tables["MRCONSO.RRF"]
    # generation stops at the first tree that reaches the preset's row count, and one tree is
    # far smaller than a quarter of it
    target = PRESETS["tiny"].mrconso_rows
    assert target <= conso.num_rows < 1.25 * target
    assert json.loads((tiny / "generation.json").read_text())["umls"]["rows"]["MRCONSO.RRF"] == conso.num_rows
    files = {r["FIL"]: r for r in tables["MRFILES.RRF"].to_pylist()}
    assert set(files) == {"MRCONSO.RRF", "MRDEF.RRF", "MRREL.RRF", "MRSAB.RRF", "MRSTY.RRF"}
    for name, row in files.items():
        assert int(row["CLS"]) == len(COLUMNS[name]) and int(row["RWS"]) == tables[name].num_rows
        assert int(row["BTS"]) == (umls / name).stat().st_size


def _conso(tiny: Path) -> list[dict]:
    from umls.rrf import read_rrf_table

    columns = ["CUI", "LAT", "TS", "STT", "ISPREF", "AUI", "SAB", "TTY", "STR", "SRL", "SUPPRESS"]
    return read_rrf_table(tiny / "umls" / "MRCONSO.RRF", columns).to_pylist()


def test_concepts_and_atoms(tiny):
    conso = _conso(tiny)
    cuis = [r["CUI"] for r in conso]
    assert cuis == sorted(cuis), "MRCONSO is in CUI order"
    auis = [r["AUI"] for r in conso]
    assert len(set(auis)) == len(auis)
    # one concept, one CUI: each CUI's rows are contiguous and it has exactly one preferred English string
    blocks = Counter(c for i, c in enumerate(cuis) if i == 0 or cuis[i - 1] != c)
    assert max(blocks.values()) == 1
    pref_en = defaultdict(set)
    for r in conso:
        if r["LAT"] == "ENG" and r["TS"] == "P" and r["STT"] == "PF":
            pref_en[r["CUI"]].add(r["STR"].lower())
    assert all(len(v) == 1 for v in pref_en.values())
    names = [next(iter(v)) for v in pref_en.values()]
    assert len(set(names)) / len(names) > 0.97, "preferred names are mostly unique"
    by_cui = Counter(cuis)
    assert sum(by_cui.values()) / len(by_cui) >= 3  # several atoms per concept
    lats = Counter(r["LAT"] for r in conso)
    assert lats.most_common(1)[0][0] == "ENG" and lats["ENG"] / len(conso) > 0.5
    assert {"FRE", "SPA", "JPN", "CHI", "RUS", "GER"} <= set(lats) and len(lats) >= 8
    assert {"PT", "SY", "AB", "FN", "MH"} <= {r["TTY"] for r in conso}
    assert {"O", "N"} <= {r["SUPPRESS"] for r in conso}
    assert any(r["SRL"] != "0" for r in conso)
    # scripts: Japanese with kana, Chinese with Han, Russian Cyrillic
    from common.text import script_profile

    def scripts(lat):
        return sum((script_profile(r["STR"]) for r in conso if r["LAT"] == lat), Counter())

    assert scripts("RUS")["Cyrillic"] > 0.9 * sum(scripts("RUS").values())
    ja = scripts("JPN")
    assert ja["Han"] and (ja["Katakana"] + ja["Hiragana"])
    zh = scripts("CHI")
    assert zh["Han"] > 0.9 * sum(zh.values()) and not zh["Hiragana"] and not zh["Katakana"]


def test_semantic_types_hierarchy_and_sources(tiny):
    from umls.rrf import read_rrf_table
    from umls.semgroups import group_of

    umls = tiny / "umls"
    conso = _conso(tiny)
    by_cui = Counter(r["CUI"] for r in conso)
    sty = read_rrf_table(umls / "MRSTY.RRF", ["CUI", "TUI"]).to_pylist()
    assert {r["CUI"] for r in sty} == set(by_cui)
    groups = Counter(group_of(r["TUI"]) for r in sty)
    assert all(groups[g] > 20 for g in ("DISO", "CHEM", "PROC", "ANAT", "GENE"))

    rel = read_rrf_table(umls / "MRREL.RRF", ["CUI1", "REL", "CUI2"]).to_pylist()
    parents = defaultdict(set)
    for r in rel:
        if r["REL"] == "PAR":
            parents[r["CUI1"]].add(r["CUI2"])
    assert sum(1 for r in rel if r["REL"] == "CHD") == sum(len(v) for v in parents.values())

    def depth(c, seen=()):
        return 0 if not parents.get(c) else 1 + max(depth(p, seen + (c,)) for p in parents[c] if p not in seen)

    depths = Counter(depth(c) for c in by_cui)
    assert max(depths) == 5 and depths[5] > 50  # six levels, root to leaf
    children = defaultdict(set)
    for c, ps in parents.items():
        for p in ps:
            children[p].add(c)
    assert sum(1 for v in children.values() if len(v) >= 3) > 200  # sibling groups for the hard tier

    sab = {r["RSAB"]: int(r["SRL"]) for r in read_rrf_table(umls / "MRSAB.RRF", ["RSAB", "SRL"]).to_pylist()}
    assert {r["SAB"] for r in conso} <= set(sab)
    assert any(v > 0 for v in sab.values()) and any(v == 0 for v in sab.values())


def test_sources_parse_and_look_right(tiny):
    from tasks.sources.passages import read_passages, read_sample_jsonl

    items = [it for t in ("xqa", "evidence") for it in read_sample_jsonl(tiny / "sources" / f"{t}.jsonl", set(LANGS))]
    # every question the preset asks for (each role's pool was large enough), plus the
    # deliberate duplicates its shares give
    preset = PRESETS["tiny"]
    n_en, n_native = preset.xqa_en + preset.ev_en, len(QUESTION_LANGS) * (preset.xqa_native + preset.ev_native)
    near, exact = int(n_en * preset.dup_share), int(n_en * preset.exact_share)
    cross = int((n_en + n_native) * preset.xdup_share)
    assert len(items) == n_en + n_native + near + exact + cross
    langs = Counter((it.task, it.lang) for it in items)
    assert all(langs[(t, l)] > 0 for t in ("xqa", "evidence") for l in LANGS)
    assert len({it.id for it in items}) == len(items)
    for it in items:
        for p in it.passages:
            assert 60 <= len(p.text.split()) <= 150
    # English templates vary: at least 10 distinct openings per task
    for task in ("xqa", "evidence"):
        starts = {" ".join(it.text.split(": ")[-1].split()[:3]) for it in items if it.task == task and it.lang == "en"}
        assert len(starts) >= 10, (task, starts)
    # a few deliberate duplicates: each shares its original's gold passage
    by_passage = Counter(it.passages[0].id for it in items)
    assert 5 <= sum(v - 1 for v in by_passage.values()) == near + exact + cross <= 0.06 * len(items)
    background = list(read_passages(tiny / "sources" / "background.jsonl"))
    assert len(background) == PRESETS["tiny"].background
    counts = json.loads((tiny / "generation.json").read_text())
    assert counts["questions_total"] == len(items)
    assert counts["deliberate_duplicates"] == {"near": near, "exact": exact, "cross_lingual": cross}


def test_memory_parses_and_passes_the_gates(tiny):
    from schemas.config import load_registry
    from tasks.translation.gates import text_gates, translation_gates
    from tasks.translation.memory import TranslationMemory
    from tasks.sources.passages import read_sample_jsonl

    memory = tiny / "tm" / "memory.jsonl"
    tm = TranslationMemory.from_files([memory])
    registry = load_registry(tiny / "languages.toml")
    entries = [json.loads(l) for l in memory.read_text(encoding="utf-8").splitlines()]
    assert {e["target_lang"] for e in entries} == set(LANGS) - {"en"}
    english = [it for t in ("xqa", "evidence") for it in read_sample_jsonl(tiny / "sources" / f"{t}.jsonl", set(LANGS))
               if it.lang == "en"]
    covered = sum(1 for it in english if tm.lookup(it.text, "en", "ja") is not None)
    assert covered / len(english) > 0.75
    rng = random.Random(0)
    sample = rng.sample(entries, 250)
    failures = [(e["target"], r) for e in sample
                for r in translation_gates(e["source"], e["target"], registry["en"], registry[e["target_lang"]])]
    assert len(failures) <= 2, failures
    natives = [it for t in ("xqa", "evidence") for it in read_sample_jsonl(tiny / "sources" / f"{t}.jsonl", set(LANGS))
               if it.lang != "en"]
    failures = [(it.text, r) for it in rng.sample(natives, 80)
                for r in text_gates(it.text, registry[it.lang])
                + translation_gates(it.text, it.pivot, registry[it.lang], registry["en"])]
    assert len(failures) <= 1, failures


def test_addition_memory_is_german_and_passes_the_gates(tiny):
    from schemas.config import load_config, load_registry
    from tasks.translation.gates import translation_gates

    registry = load_registry(tiny / "languages.toml")
    entries = [json.loads(l) for l in (tiny / "tm" / "memory-de.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(entries) > 50 and {e["target_lang"] for e in entries} == {"de"}
    failures = [(e["target"], r) for e in entries
                for r in translation_gates(e["source"], e["target"], registry["en"], registry["de"])]
    assert len(failures) <= len(entries) // 50, failures
    added = load_config(tiny / "config-add-de.toml").config
    assert added.languages == LANGS + ["de"]
    assert added.translation.memory == ["tm/memory.jsonl", "tm/memory-de.jsonl"]


def test_config_points_at_the_generated_files(tiny):
    from schemas.config import load_config
    from flows.inputs import input_files

    loaded = load_config(tiny / "config.toml")
    assert loaded.config.languages == LANGS
    assert not any(Path(p).is_absolute() for p in [loaded.config.vocabulary.path, loaded.config.registry]
                   + [s.path for s in loaded.config.sources] + loaded.config.translation.memory)
    files = input_files(loaded)
    assert all(p.is_relative_to(tiny.resolve()) for p in files.values())
    paper = PRESETS["paper"]
    assert paper.quotas == {"xqa": 1021, "evidence": 340, "cd": 829}
    assert paper.mrconso_rows >= 3_000_000 and paper.background + paper.ev_en + 5 * paper.ev_native >= 100_000
    assert (paper.xqa_en + paper.ev_en + 5 * (paper.xqa_native + paper.ev_native)) >= 13_000
    assert PRESETS["full"].mrconso_rows >= 16_000_000


@pytest.mark.slow
def test_tiny_builds_an_audited_release(tiny, prefect_harness, tmp_path):
    from flows.build_release import build_release_flow
    from tasks.audit.stage import audit_release

    result = build_release_flow(str(tiny / "config.toml"), release_dir=str(tmp_path / "releases"), work_dir=str(tmp_path / "work"))
    assert isinstance(result, dict), result
    release = Path(result["release"])
    report = audit_release(release)
    assert report.passed, [c for c in report.checks if not c.passed]
    manifest = json.loads((release / "manifest.json").read_text())
    assert sorted(manifest["cells"]) == sorted(f"{t}/{l}" for t in ("xqa", "cd", "evidence") for l in LANGS)
    assert all(c["queries"] > 0 for c in manifest["cells"].values())
    assert all(level == 0 for level in manifest["sources_srl"].values())  # SRL > 0 sources filtered out
    dropped = manifest["dropped"]
    assert any("near-duplicate" in k for k in dropped), dropped

    # the benchmark's seventh language, added on top (what run_bench.py times at scale)
    from flows.add_language import add_language_flow

    added = add_language_flow(str(release), str(tiny / "config-add-de.toml"), release_dir=str(tmp_path / "releases"),
                              work_dir=str(tmp_path / "work"))
    assert isinstance(added, dict), added
    report = audit_release(Path(added["release"]))
    assert report.passed, [c for c in report.checks if not c.passed]
    new = json.loads((Path(added["release"]) / "manifest.json").read_text())["cells"]
    assert all(new[f"{t}/de"]["queries"] > 0 for t in ("xqa", "cd", "evidence"))


def test_full_preset_is_a_full_release_with_paper_quotas():
    full, paper = PRESETS["full"], PRESETS["paper"]
    assert full.mrconso_rows >= 16_000_000 and full.min_concepts >= 3_000_000
    assert full.quotas == paper.quotas == {"xqa": 1021, "evidence": 340, "cd": 829}
    assert (full.xqa_en, full.xqa_native, full.ev_en, full.ev_native, full.background) == \
        (paper.xqa_en, paper.xqa_native, paper.ev_en, paper.ev_native, paper.background)


def test_generation_goes_on_until_the_concept_floor(tmp_path):
    # a row target alone gives about 5 rows per concept: 2,000 rows would stop near 400 concepts
    mini = Preset("mini", 2_000, 20, 3, 10, 2, 40, 5, {"xqa": 5, "evidence": 2, "cd": 4}, min_concepts=1_200)
    counts = generate(mini, tmp_path / "mini", seed=0)
    rows = (tmp_path / "mini" / "umls" / "MRCONSO.RRF").read_bytes().count(b"\n")
    cuis = {line.split(b"|", 1)[0] for line in (tmp_path / "mini" / "umls" / "MRCONSO.RRF").read_bytes().splitlines()}
    assert counts["umls"]["concepts"] == len(cuis) >= 1_200
    assert counts["umls"]["rows"]["MRCONSO.RRF"] == rows > 2_000 * 2


def test_the_cli_writes_what_generate_writes(tiny, tmp_path):
    out = tmp_path / "cli"
    run = subprocess.run([sys.executable, "-m", "benchmarks.scale", "--preset", "tiny", "--out", str(out)],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == f"preset=tiny seed=0 out={out}"
    a, b = _tree(tiny), _tree(out)
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []


# ---------------------------------------------------------------------------- the data tables
SEMANTIC_TYPES = {row[0] for row in table("semantic_types")}


@pytest.mark.parametrize("name", sorted(TABLE_COLUMNS))
def test_each_table_parses_with_its_columns(name):
    columns = TABLE_COLUMNS[name]
    lines = (DATA / f"{name}.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0].split("\t") == list(columns)
    rows = table(name)
    assert len(rows) == len(lines) - 1 >= 2
    for row in rows:
        assert len(row) == len(columns)
        for column, cell in zip(columns, row):
            assert cell == cell.strip() and (cell or column == "gloss_en"), (name, column, row)  # only a gloss may be left out
            if column == "tui":
                assert cell in SEMANTIC_TYPES, (name, row)
            if column.endswith("_g"):  # a noun and its gender
                assert cell.rsplit(" ", 1)[1] in ("m", "f", "n"), (name, column, row)
            if column == "srl":
                assert cell in ("0", "1", "2", "3", "4", "9"), (name, row)
    assert len({tuple(r) for r in rows}) == len(rows), f"{name}: a row twice"


@pytest.mark.parametrize("name", sorted(TOML_KEYS))
def test_each_toml_file_holds_its_keys(name):
    assert sorted(toml(name)) == sorted(TOML_KEYS[name])


def test_every_population_and_lead_in_has_its_german_and_only_generic_templates_do():
    from benchmarks.scale.addition import LEAD_INS_DE, POPULATIONS_DE, TEMPLATES_DE
    from benchmarks.scale.questions import LEAD_INS, POPULATIONS, TEMPLATES

    assert len(POPULATIONS_DE) == len(POPULATIONS) == len(toml("questions")["population"])
    assert len(LEAD_INS_DE) == len(LEAD_INS)
    generic = {texts["en"] for task, groups, texts in TEMPLATES if groups == "*"}
    assert set(TEMPLATES_DE) == generic
    # the German keeps the English slots: same names in braces
    for en, de in TEMPLATES_DE.items():
        assert sorted(_slots(en)) == sorted(_slots(de)), (en, de)


def _slots(text: str) -> list[str]:
    return re.findall(r"\{(\w+)\}", text)


ORGANS_COLUMNS = TABLE_COLUMNS["organs"]


def _organs_with(tmp_path: Path, line: int, edit) -> Path:
    lines = (DATA / "organs.tsv").read_text(encoding="utf-8").splitlines()
    lines[line - 1] = edit(lines[line - 1])
    path = tmp_path / "organs.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("line, edit, cells", [
    (5, lambda l: l.rsplit("\t", 1)[0], 19),  # the Latin adjective left out
    (7, lambda l: l.replace("\t", "\t\t", 1), 21),  # an empty cell too many
    (39, lambda l: "", 1),  # a blank line (the last row)
])
def test_a_row_with_the_wrong_cell_count_is_one_error_naming_file_and_line(tmp_path, line, edit, cells):
    path = _organs_with(tmp_path, line, edit)
    with pytest.raises(DataError) as raised:
        parse_tsv(path, ORGANS_COLUMNS)
    assert str(raised.value) == f"{path}:{line}: {cells} cells, expected 20 ({', '.join(ORGANS_COLUMNS)}), tab-separated"
    assert parse_tsv(DATA / "organs.tsv", ORGANS_COLUMNS) == table("organs")  # the real one parses


def test_a_header_that_is_not_the_columns_is_an_error_on_line_1(tmp_path):
    path = _organs_with(tmp_path, 1, lambda l: l.replace("la", "latin"))
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}:1: header \[.*'latin'\] is not the expected columns \[.*'la'\]$"):
        parse_tsv(path, ORGANS_COLUMNS)


def test_a_toml_file_with_a_missing_key_or_bad_syntax_is_an_error_naming_it(tmp_path):
    path = tmp_path / "words.toml"
    text = (DATA / "words.toml").read_text(encoding="utf-8")
    path.write_text(text.replace("epithets = ", "epithet = "), encoding="utf-8")
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}: keys \[.*'epithet'.*\] are not the expected \[.*'epithets'.*\]$"):
        parse_toml(path, TOML_KEYS["words"])
    path.write_text(text.replace("epithets = [", "epithets = [[", 1), encoding="utf-8")
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}: .*\(at line \d+, column \d+\)$"):
        parse_toml(path, TOML_KEYS["words"])


@pytest.mark.parametrize("bad, problem", [
    ({"task": "xqa", "groups": "*", "en": "{c}?", "fr": "{c} ?"}, "missing ['es']"),
    ({"task": "xqa", "groups": "*", "en": "{c}?", "fr": "{c} ?", "es": "¿{c}?", "it": "{c}?"}, "unexpected ['it']"),
])
def test_an_entry_with_a_missing_or_unknown_field_is_an_error_naming_it(bad, problem):
    good = {"task": "xqa", "groups": "*", "en": "{c}?", "fr": "{c} ?", "es": "¿{c}?", "de": "„{c}“?"}
    required = ("task", "groups", "en", "fr", "es")
    assert check_entries(Path("q.toml"), "template", [good], required, ("de",)) == [good]
    with pytest.raises(DataError) as raised:
        check_entries(Path("q.toml"), "template", [good, bad], required, ("de",))
    assert str(raised.value) == (f"q.toml: [[template]] number 2: {problem} "
                                 "(expected ['task', 'groups', 'en', 'fr', 'es'], optionally ['de'])")


def test_the_cli_stops_at_a_malformed_table_with_one_error_line_and_writes_nothing(tmp_path):
    copy = tmp_path / "checkout"
    shutil.copytree(ROOT / "benchmarks" / "scale", copy / "benchmarks" / "scale", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "benchmarks" / "__init__.py", copy / "benchmarks" / "__init__.py")
    bad = copy / "benchmarks" / "scale" / "data" / "syllables.tsv"
    lines = bad.read_text(encoding="utf-8").splitlines()
    lines[2] += "\tx"
    bad.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the builder's packages; benchmarks/ comes from the copy (cwd)
    run = subprocess.run([sys.executable, "-m", "benchmarks.scale", "--preset", "tiny", "--out", str(out)],
                         cwd=copy, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2
    assert run.stderr == (f"error: {bad.resolve()}:3: 5 cells, expected 4 (latin, ru, ja, zh), tab-separated\n")
    assert run.stdout == "" and not out.exists()
