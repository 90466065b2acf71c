"""Russian grounding matches inflected forms: the registry's `morphology` (pymorphy3 lemmas for
ru), the word matcher with each choice, and the held-out measurement that chose it
(benchmarks/ru_grounding_eval.py, docs/grounding.md "Russian")."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from schemas.config import load_registry
from tasks.grounding.matchers import Term, TermMatcher, TermRules, lemma
from tasks.grounding.params import LANGUAGE_DEFAULTS, GroundingParams, params_for
from tests.conftest import ROOT, SHARED

REGISTRY = load_registry(ROOT / "configs" / "languages.toml")
HELDOUT = ROOT / "benchmarks" / "data" / "ru_grounding_heldout.jsonl"

TERMS = [Term("Шизофрения", "C1", (False, 0, "C1")), Term("Сахарный диабет 2 типа", "C2", (False, 0, "C2")),
         Term("Корь", "C3", (False, 0, "C3")), Term("Язвенный колит", "C4", (False, 0, "C4"))]
TEXT = "Больной шизофренией и сахарным диабетом 2 типа привит от кори; язвенного колита нет."


def matches(**kw) -> list[tuple[str, str]]:
    m = TermMatcher(TERMS, False, "ru", set(), TermRules(**kw))
    return [(x.text, x.cui) for x in m.match(TEXT)]


def test_the_registry_chooses_pymorphy3_for_russian_and_leaves_other_languages_alone():
    p = params_for(REGISTRY["ru"])
    assert (p.stem, p.stemmer) == (True, "pymorphy3")
    for code in ("en", "fr", "es", "de"):
        assert params_for(REGISTRY[code]) == LANGUAGE_DEFAULTS.get(code, GroundingParams())
        assert params_for(REGISTRY[code]).stemmer == "snowball"
    assert params_for(REGISTRY["ru"].model_copy(update={"morphology": "none"})).stem is False
    assert params_for(REGISTRY["ru"].model_copy(update={"morphology": "snowball"})).stemmer == "snowball"


def test_lemmas_match_every_inflected_form():
    assert lemma("шизофренией", "ru") == "шизофрения"
    assert lemma("геморроем", "ru") == "геморрой"
    assert lemma("ёлкой", "ru") == "елка"  # folded as fold() folds
    assert matches(stemmer="pymorphy3") == [
        ("шизофренией", "C1"), ("сахарным диабетом 2 типа", "C2"), ("кори", "C3"), ("язвенного колита", "C4")]


def test_snowball_misses_a_short_word_and_no_morphology_misses_every_inflection():
    # Snowball: "кори" -> "кор", shorter than a one-word stemmed match may be; "колит" -> "кол"
    # but "колита" -> "колит" (it takes -ит for a verb ending)
    assert matches(stemmer="snowball") == [("шизофренией", "C1"), ("сахарным диабетом 2 типа", "C2")]
    assert matches(stem=False) == []


def test_heldout_mentions_are_well_formed_and_authored_here():
    items = [json.loads(line) for line in HELDOUT.read_text(encoding="utf-8").splitlines()]
    assert len(items) == 98 and len({i["id"] for i in items}) == 98
    for item in items:
        assert len(item["mentions"]) == 1
        for m in item["mentions"]:
            assert item["text"][m["start"]:m["end"]] == m["text"]
            assert re.fullmatch(r"C\d{7}", m["cui"])
    # written for the project: no sentence is taken from RuMedDaNet (its licence forbids committing them)
    rumed = SHARED / "qa" / "rumedbench"
    if rumed.exists():
        corpus = "".join(p.read_text(encoding="utf-8", errors="ignore") for p in sorted(rumed.rglob("*.jsonl")))
        assert not [i["text"] for i in items if i["text"] in corpus]


@pytest.mark.shared
def test_heldout_mentions_ground_to_their_gold_cui_with_the_real_config(real_russian_vocabulary, tmp_path):
    """What benchmarks/ru_grounding_eval.py prints for the config as it stands (94/98), and every
    gold CUI is a concept of the vocabulary the config builds."""
    import pyarrow.parquet as pq

    from schemas.config import load_config
    from tasks.grounding.grounder import Grounder

    loaded = load_config(ROOT / "configs" / "shared-real.toml")
    v = loaded.config.vocabulary
    code_names = [{**c.model_dump(), "path": str(loaded.resolve(c.path))} for c in v.code_names]
    # the run's shared build: the config's vocabulary, English and Russian, its code-keyed lists
    assert real_russian_vocabulary["arguments"] == {
        "format": v.format, "path": str(loaded.resolve(v.path)), "lat_to_lang": {"ENG": "en", "RUS": "ru"}, "max_srl": v.max_srl,
        "preferred_en": loaded.registry["en"].preferred_sources, "roots": v.roots, "code_names": json.loads(json.dumps(code_names))}
    paths = real_russian_vocabulary["paths"]
    concepts = set(pq.read_table(paths["concepts"], columns=["cui"])["cui"].to_pylist())
    items = [json.loads(line) for line in HELDOUT.read_text(encoding="utf-8").splitlines()]
    assert all(m["cui"] in concepts for i in items for m in i["mentions"])
    g = Grounder(Path(paths["atoms_by_lang"]["ru"]), loaded.registry["ru"], tmp_path / "indexes")
    hits = sum(any(f.cui == m["cui"] and f.start < m["end"] and m["start"] < f.end for f in g.ground(i["text"]))
               for i in items for m in i["mentions"])
    assert hits == 94
