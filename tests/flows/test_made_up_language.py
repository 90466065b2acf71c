"""A made-up Latin-script language joins the sample build by configuration and data alone, as
docs/adding-a-language.md walks through (issue 45): a registry entry under a code no code knows
(`xq`), its names (vocabulary atoms with its own LAT and SAB), a translation memory, and a
clinical-case source's files in it as another publisher ships them: tab-separated, a fourth
column (a correction flag, usually empty), a few lines space-separated, a BOM and CRLF.

Its words are German (tests/data/lang-de, written for these tests), so its names share few
tokens with the English entries: BM25 reads its own cd queries no better than a guess, and the
build still publishes, audited, with every cell of the language filled, evidence/xq with the
cases its own files hold. Everything is made in tmp from the project's own sample: no ../shared."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLE_CELLS
from tests.made_up_language import CASES, CODE, DE, LAT, MRSAB, REGISTRY_ENTRY, SAB, token_file

pytestmark = pytest.mark.slow


def made_up_language_config(tmp_path: Path) -> Path:
    """The sample config plus the language: registry entry, names, memory, a source's files."""
    registry = tmp_path / "languages.toml"
    registry.write_text((ROOT / "configs" / "languages.toml").read_text(encoding="utf-8") + REGISTRY_ENTRY, encoding="utf-8")
    vocab = tmp_path / "umls"
    shutil.copytree(ROOT / "umls" / "sample", vocab)
    with (vocab / "MRCONSO.RRF").open("a", encoding="utf-8") as fh:  # its names: German atoms under its LAT and SAB
        for line in (DE / "MRCONSO.de.RRF").read_text(encoding="utf-8").splitlines():
            f = line.split("|")
            f[1], f[11] = LAT, SAB
            fh.write("|".join(f) + "\n")
    with (vocab / "MRSAB.RRF").open("a", encoding="utf-8") as fh:
        fh.write(MRSAB)
    memory = tmp_path / "memory"
    memory.mkdir()
    for name in ("tm_de.jsonl", "tm_terms_de.jsonl"):
        rows = [json.loads(l) for l in (DE / name).read_text(encoding="utf-8").splitlines() if l.strip()]
        (memory / name).write_text("".join(json.dumps({**r, "target_lang": CODE}, ensure_ascii=False) + "\n" for r in rows),
                                   encoding="utf-8")
    casi = tmp_path / "casimedicos"
    for folder, cases in CASES.items():
        (casi / folder).mkdir(parents=True)
        (casi / folder / "test.tsv").write_bytes(token_file(cases, tabs=folder != "EN"))
    text = (ROOT / "configs" / "sample.toml").read_text(encoding="utf-8")
    text = text.replace('"../', f'"{ROOT}/').replace('registry = "languages.toml"', f'registry = "{registry}"')
    text = text.replace(f'path = "{ROOT}/umls/sample"', f'path = "{vocab}"')
    text = text.replace('languages = ["en", "zh", "ja", "fr", "ru", "es"]', f'languages = ["en", "zh", "ja", "fr", "ru", "es", "{CODE}"]')
    text = text.replace(f'  "{ROOT}/sources/sample/tm_terms.jsonl",\n',
                        f'  "{ROOT}/sources/sample/tm_terms.jsonl",\n  "{memory}/tm_de.jsonl",\n  "{memory}/tm_terms_de.jsonl",\n')
    text = text.replace("[[background]]", f'''[[sources]]
format = "casimedicos"
path = "{casi}"
licence = "apache-2.0"
options = {{ files = {{ en = "EN", {CODE} = "{CODE.upper()}" }}, native = "{CODE}" }}
key_concepts = "answer"

[[background]]''', 1)
    path = tmp_path / f"sample-{CODE}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_token_files_read_as_the_english_ones(tmp_path):
    """The made-up language's tab-separated files give its cases, paired with the English."""
    from tasks.sources.adapters import read_casimedicos_cases

    cfg = made_up_language_config(tmp_path)
    assert b"\t" in (tmp_path / "casimedicos" / CODE.upper() / "test.tsv").read_bytes()
    read = read_casimedicos_cases(tmp_path / "casimedicos", {"en", CODE}, files={"en": "EN", CODE: CODE.upper()}, native=CODE)
    assert [(i.lang, i.text, i.pivot) for i in read.items] == [
        (CODE, f"{c[1]} {c[2]}", f"{e[1]} {e[2]}") for c, e in zip(CASES[CODE.upper()], CASES["EN"])]
    assert [[o.text for o in i.options] for i in read.items] == [c[3] for c in CASES[CODE.upper()]]
    assert read.drops == [] and cfg.exists()


def test_a_made_up_language_publishes_an_audited_release_with_its_cells_filled(prefect_harness, tmp_path):
    from flows.build_release import build_release_flow
    from tasks.audit.stage import audit_release

    cfg = made_up_language_config(tmp_path)
    result = build_release_flow(str(cfg), release_dir=str(tmp_path / "releases"), work_dir=str(tmp_path / "work"))
    assert isinstance(result, dict), result  # an InputError or a failed audit is returned, not a dict
    release = Path(result["release"])
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    assert len(manifest["cells"]) == SAMPLE_CELLS + 3
    for cell in (f"xqa/{CODE}", f"evidence/{CODE}", f"cd/{CODE}"):
        assert manifest["cells"][cell]["queries"] > 0, cell
    report = audit_release(release)
    assert report.passed, [c for c in report.checks if not c.passed]
    stored = json.loads((release / "audit_report.json").read_text(encoding="utf-8"))
    assert stored["passed"] is True
    tiers = next(c for c in stored["checks"] if c["name"] == "tier_ordering")
    assert f"cd/{CODE} pivots " in tiers["detail"]
    # the card gives the cell's reading; the sources stage read the tab-separated files
    card = (release / "README.md").read_text(encoding="utf-8")
    assert f"| cd/{CODE} | " in card
    # the cases read from the tab-separated files are the cell's own queries: asked in the language,
    # their English case the pivot, keyed by the concept each answer names (key_concepts = "answer",
    # as configs/shared-real.toml reads CasiMedicos), which the sample vocabulary names in both
    queries = {q["_id"]: q for q in map(json.loads, (release / "evidence" / CODE / "queries.jsonl").read_text(
        encoding="utf-8").splitlines())}
    for n, (own, english) in enumerate(zip(CASES[CODE.upper()], CASES["EN"]), 1):
        q = queries[f"casimedicos-test-{n:03d}"]
        assert (q["text"], q["pivot_text"]) == (f"{own[1]} {own[2]}", f"{english[1]} {english[2]}")
    assert queries["casimedicos-test-001"]["cuis"] == ["C0004245"]  # atrioventricular block
