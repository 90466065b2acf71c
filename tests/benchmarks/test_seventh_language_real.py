"""benchmarks/seventh_language_real.py's config, without building: the made-up language `xq`
added to configs/shared-real.toml loads through the project's own loader, its registry entry is
there, its case files read through the real CasiMedicos reader, and its names reach concepts of
the real vocabulary (Disease Ontology + HPO from ../shared/data) through the project's own
name-list and glossary rules. The full build and audit: docs/adding-a-language.md, "On the
real-data configuration"."""
from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import seventh_language_real as seventh
from tests.conftest import ROOT, require_shared
from tests.made_up_language import CASES, CODE


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    require_shared("hpo", "hp.obo")
    return seventh.write_config(ROOT / "configs" / "shared-real.toml", tmp_path_factory.mktemp("seventh"))


def test_the_config_loads_with_the_language_in_it(generated):
    from schemas.config import load_config

    loaded = load_config(generated)
    original = load_config(ROOT / "configs" / "shared-real.toml")
    assert loaded.config.languages == [*original.config.languages, CODE]
    assert (loaded.registry[CODE].umls_lat, loaded.registry[CODE].preferred_sources, loaded.registry[CODE].scripts) == (
        "XQX", ["MMBXQ"], ["Latin"])
    assert Path(loaded.config.release_dir) == generated.parent / "releases"
    assert Path(loaded.config.work_dir) == generated.parent / "work"
    # the copy works from its own folder: every path it names is absolute and exists
    c = loaded.config
    named = [c.vocabulary.path, *(x.path for x in (*c.vocabulary.code_names, *c.vocabulary.name_lists,
                                                   *c.vocabulary.glossaries, *c.sources))]
    assert all(Path(p).is_absolute() and Path(p).exists() for p in named)
    assert [s.path for s in c.sources][-1] == str(generated.parent / "casimedicos")
    assert c.sources[-1].options == {"files": {"en": "EN", CODE: CODE.upper()}, "native": CODE}
    assert c.sources[-1].key_concepts == "answer"
    assert c.sources[-1].id_prefix == f"{CODE}cases"  # beside the config's own CasiMedicos, whose ids it would repeat


def test_its_case_files_read_through_the_casimedicos_reader(generated):
    from tasks.sources.adapters import read_casimedicos_cases

    folder = generated.parent / "casimedicos"
    raw = (folder / CODE.upper() / "test.tsv").read_bytes()
    assert raw.startswith("\ufeff".encode()) and b"\r\n" in raw and b"\tB-Premise\t\t" in raw
    read = read_casimedicos_cases(folder, {"en", CODE}, files={"en": "EN", CODE: CODE.upper()}, native=CODE)
    assert [(i.lang, i.text, i.pivot) for i in read.items] == [
        (CODE, f"{c[1]} {c[2]}", f"{e[1]} {e[2]}") for c, e in zip(CASES[CODE.upper()], CASES["EN"])]
    assert read.drops == []


def test_its_names_reach_concepts_of_the_real_vocabulary(generated):
    """Every one of its 100 CUI-keyed names and 60 glossary terms names a DO/HPO concept (the
    glossary's English sides are exact English names of exactly one concept)."""
    from schemas.config import load_config
    from umls.name_lists import add_name_lists
    from umls.obo_vocabulary import _collect_open

    vocabulary = load_config(generated).config.vocabulary
    concepts, id_to_cui = _collect_open(Path(vocabulary.path), "all", (), None)
    report = add_name_lists(concepts, id_to_cui, [vocabulary.name_lists[-1]], [vocabulary.glossaries[-1]], {CODE})
    assert {sab: (r["rows_read"], r["names_added"], r["concepts_named"], r["concepts_created"], r["dropped"])
            for sab, r in report.items()} == {"MMBXQ": (100, 100, 100, 0, {}), "MMBXQGLOS": (60, 60, 60, 0, {})}
    named = {cui for cui, c in concepts.items() if c["names"].get(CODE)}
    assert len(named) == 160
    # the first case's answer, atrioventricular block, is named in the language
    assert [n for _, _, n in concepts["C0004245"]["names"][CODE]] == ["Atrioventrikulärer Block"]


def test_paths_become_absolute_and_the_code_is_appended_once(tmp_path):
    text = ('languages = ["en", "fr"]\nregistry = "languages.toml"\n\n[vocabulary]\npath = "../data"  # the data\n'
            '[translation]\nmemory = [\n  "../tm/a.jsonl",\n  "/abs/b.jsonl",\n]\n')
    out = seventh.with_language(seventh.absolute_paths(text, tmp_path / "configs"), CODE)
    assert out == (f'languages = ["en", "fr", "{CODE}"]\nregistry = "{tmp_path}/configs/languages.toml"\n\n[vocabulary]\n'
                   f'path = "{tmp_path}/data"  # the data\n[translation]\nmemory = [\n  "{tmp_path}/tm/a.jsonl",\n'
                   '  "/abs/b.jsonl",\n]\n')
    assert seventh.with_language(out, CODE) == out


def test_the_tier_reading_is_the_cells_own_part():
    detail = "easy: sets=3 | within-set accuracy@1: cd/en pivots 0.8/0.5/0.3 | cd/xq pivots 1.0/0.9/0.8, at chance | cd/xqa x"
    assert seventh.tier_reading(detail, "cd/xq") == "cd/xq pivots 1.0/0.9/0.8, at chance"
    assert seventh.tier_reading(detail, "cd/en") == "cd/en pivots 0.8/0.5/0.3"
    assert seventh.tier_reading(detail, "cd/fr") == ""


def test_without_its_own_cases_the_sources_are_the_configs(tmp_path):
    """--no-own-cases: the language's names only, the config's sources as they are."""
    require_shared("hpo", "hp.obo")
    from schemas.config import load_config

    loaded = load_config(seventh.write_config(ROOT / "configs" / "shared-real.toml", tmp_path, own_cases=False))
    original = load_config(ROOT / "configs" / "shared-real.toml")
    assert [(s.format, original.resolve(s.path)) for s in original.config.sources] == [
        (s.format, Path(s.path)) for s in loaded.config.sources]
    assert CODE in loaded.config.languages and loaded.config.vocabulary.glossaries[-1].lang == CODE


def test_without_shared_data_it_says_so_in_one_line_and_exits_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(seventh, "SHARED_DATA", tmp_path / "shared" / "data")
    assert seventh.main([str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {tmp_path}/shared/data: not found (the real-data configuration reads ../shared/data)\n"
    assert not (tmp_path / "out").exists()
