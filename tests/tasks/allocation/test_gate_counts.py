"""The allocation stage counts gate rejections from the gates' typed names (the realized
table's `gates` column, `GateFailure.gate`), never from reason text; a text never made (no
English pivot, no translation in memory) is counted apart from them, by its typed cause."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from tasks.allocation.allocator import Realization
from tasks.allocation.stage import _realizations, _write_tables
from tasks.translation.stage import REALIZED_SCHEMA


def _row(id_, lang, text="", provenance="", rejected=None, gates=(), unrealized=None):
    return {"id": id_, "lang": lang, "text": text, "provenance": provenance, "rejected": rejected,
            "gates": list(gates), "unrealized": unrealized}


SHARD_FR = [
    _row("q1", "fr", "Quel est le traitement ?", "native"),
    _row("q2", "fr", "What is the treatment of gout in adults today?", "machine-translated",
         "langid: detected en, expected fr; copy: translation equals its source", ["langid", "copy"]),
    _row("q3", "fr", rejected="no English pivot", unrealized="no-pivot"),
    _row("q4", "fr", rejected="no translation in memory", unrealized="no-translation"),
]
SHARD_EN_JA = [
    _row("q1", "en", "What is the treatment?", "human-translated", "numbers: 40 missing from the translation", ["numbers"]),
    _row("q3", "en", rejected="no English pivot", unrealized="no-pivot"),
    # a detail holding "; " and ":" (a gate may say anything): still one script rejection
    _row("q5", "ja", "心筋梗塞の症状", "machine-translated", "script: contains Latin; Cyrillic: see 'x: y'", ["script"]),
]


def _shards(tmp_path, fr=SHARD_FR, en_ja=SHARD_EN_JA) -> list[str]:
    paths = []
    for name, rows in (("a-fr", fr), ("a-en-ja", en_ja)):
        path = tmp_path / f"{name}.parquet"
        pq.write_table(pa.Table.from_pylist(rows, schema=REALIZED_SCHEMA), path)
        paths.append(str(path))
    return paths


def test_realizations_count_the_gates_column(tmp_path):
    reals, gate_rejections, unrealized = _realizations(_shards(tmp_path))
    assert dict(reals) == {"q1": {"fr": Realization("Quel est le traitement ?", "native")}}
    assert dict(gate_rejections) == {"en: numbers": 1, "fr: langid": 1, "fr: copy": 1, "ja: script": 1}
    # no text to gate: counted apart, by cause (was "en: no English pivot" among the gates)
    assert dict(unrealized) == {("en", "no-pivot"): 1, ("fr", "no-pivot"): 1, ("fr", "no-translation"): 1}


def test_the_counts_tables_hold_gates_and_unrealized_texts_apart(tmp_path):
    _, gate_rejections, unrealized = _realizations(_shards(tmp_path))
    paths = _write_tables(tmp_path, [], [], gate_rejections, unrealized)
    assert pq.read_table(paths["gates"]).to_pylist() == [
        {"gate": "en: numbers", "rejections": 1}, {"gate": "fr: copy", "rejections": 1},
        {"gate": "fr: langid", "rejections": 1}, {"gate": "ja: script", "rejections": 1}]
    assert pq.read_table(paths["unrealized"]).to_pylist() == [
        {"lang": "en", "unrealized": "no-pivot", "items": 1}, {"lang": "fr", "unrealized": "no-pivot", "items": 1},
        {"lang": "fr", "unrealized": "no-translation", "items": 1}]


def test_a_reason_text_with_separators_does_not_change_the_counts(tmp_path):
    """The reason text is for people: rewriting it (here into a sentence full of "; " and
    ":") leaves the counts as they were, since they come from the gates column."""
    (tmp_path / "before").mkdir(), (tmp_path / "after").mkdir()
    _, gates_before, unrealized_before = _realizations(_shards(tmp_path / "before"))
    reworded = [{**r, "rejected": "a; b: c; d" if r["rejected"] else None} for r in SHARD_FR + SHARD_EN_JA]
    _, gates_after, unrealized_after = _realizations(_shards(tmp_path / "after", reworded[:len(SHARD_FR)],
                                                               reworded[len(SHARD_FR):]))
    assert (gates_after, unrealized_after) == (gates_before, unrealized_before)


def test_the_concept_realizer_counts_each_failed_gate_and_a_giveaway():
    from schemas.config import load_config
    from schemas.records import Translation
    from tasks.allocation.concept_entries import entry_parts
    from tasks.allocation.stage import ConceptRealizer
    from tasks.translation.memory import TranslationMemory
    from tests.conftest import SAMPLE_CONFIG

    langs = {l.code: l for l in load_config(SAMPLE_CONFIG).languages if l.code in ("en", "fr")}
    concepts = pa.table({"cui": ["C1", "C2", "C3", "C4"], "name_en": ["Heart failure", "Aspirin 40 mg", "Gout", "Kidney"],
                         "definition": ["", "", "Arthritis (goutte) caused by uric acid crystals.", ""]})
    entries = entry_parts(concepts, pa.table({"cui": [], "lang": [], "str": []}, schema=pa.schema(
        [("cui", pa.string()), ("lang", pa.string()), ("str", pa.string())])))
    tm = TranslationMemory([
        Translation(source_lang="en", target_lang="fr", source="Heart failure", target="Heart failure"),  # copy
        Translation(source_lang="en", target_lang="fr", source="Aspirin 40 mg", target="Aspirine"),  # numbers
        Translation(source_lang="en", target_lang="fr", source="Gout", target="Goutte"),  # in its own entry
        Translation(source_lang="en", target_lang="fr", source="Kidney", target="Rein")])
    realizer = ConceptRealizer({}, entries, langs, tm)
    assert [realizer(c, "fr") for c in ("C1", "C2", "C3")] == [None, None, None]
    assert realizer("C4", "fr") == Realization("Rein", "human-translated")
    assert dict(realizer.rejections) == {"fr: copy": 1, "fr: numbers": 1, "fr: gives its entry away": 1}
