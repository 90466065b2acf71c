"""The card's "What each cell measures" section (tasks/release/card.py): per cell what it
asks, its test queries, the build's own baseline with its 95% half-width, a flag under 100
test queries, and why an empty cell is empty, from the build's facts."""
from __future__ import annotations

import json

from tasks.release.card import empty_reason, gold_kinds, measures, source_items_by_cell

LANGS = {"en": {"name": "English"}, "fr": {"name": "French"}, "ru": {"name": "Russian"}}


def _manifest(memory: list[str]) -> dict:
    return {"languages": LANGS, "config": {"tasks": {"cd": {"distractors": 3}}, "translation": {"memory": memory}},
            "cells": {
                "cd/fr": {"queries": 230, "dev_queries": 20, "provenance": {"terminology": 230}},
                "xqa/en": {"queries": 120, "dev_queries": 10, "provenance": {"native": 118, "human-translated": 2}},
                "xqa/fr": {"queries": 0, "dev_queries": 0, "provenance": {}},
                "evidence/ru": {"queries": 35, "dev_queries": 6, "provenance": {"native": 35}},
                "evidence/fr": {"queries": 0, "dev_queries": 0, "provenance": {}},
                "cd/ru": {"queries": 0, "dev_queries": 0, "provenance": {}},
            }}


def _qrels(root, cell: str, docs: list[str]) -> None:
    d = root / cell / "qrels"
    d.mkdir(parents=True)
    (d / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\t{doc}\t1\n" for i, doc in enumerate(docs)))


def _results(root) -> None:
    def cell(task, lang, ndcg, low, high, n, retriever="bm25", query_set="native", split="test"):
        return {"retriever": retriever, "task": task, "lang": lang, "split": split, "query_set": query_set, "queries": n,
                "metrics": {"ndcg_at_10": ndcg}, "intervals": {"ndcg_at_10": {"low": low, "high": high}}}
    (root / "evaluation").mkdir()
    (root / "evaluation" / "results.json").write_text(json.dumps({
        "retrievers": [{"name": "bm25"}, {"name": "dense-minilm"}],
        "cells": [cell("cd", "fr", 0.321, 0.27, 0.37, 210), cell("xqa", "en", 0.77, 0.69, 0.84, 110),
                  cell("evidence", "ru", 0.547, 0.40, 0.70, 29),
                  # neither another system, nor the pivot control, nor the dev split is the card's number
                  cell("cd", "fr", 0.9, 0.0, 1.0, 210, retriever="dense-minilm"),
                  cell("xqa", "en", 0.1, 0.0, 1.0, 110, query_set="pivot"),
                  cell("cd", "fr", 0.2, 0.0, 1.0, 20, split="dev")]}))


def test_measures_lines(tmp_path):
    _results(tmp_path)
    _qrels(tmp_path, "xqa/en", ["pubmed-1-long", "C0000001", "pubmed-2-long"])
    _qrels(tmp_path, "evidence/ru", ["rumeddanet-1"])
    lines = measures(_manifest([]), tmp_path, {"xqa/en": 1000, "evidence/ru": 1564, "xqa/fr": 3104})
    assert lines[4] == ("Every evidence cell is cross-lingual in one way: its queries in the cell's language, its corpus the English "
                        "evidence passages of every evidence source, and every non-English query has its English pivot. A "
                        "source whose gold passages are not English (RuMedDaNet's Russian contexts) measures monolingual "
                        "retrieval and is not an evidence source of this design.")
    assert lines[6:] == [
        "| cell | measures | test queries | bm25 nDCG@10 (test) ± 95% half-width | note |",
        "|---|---|---:|---:|---|",
        "| cd/fr | telling a concept named in French from 3 look-alike concepts, among their English entries "
        "(queries: terminology 230) | 210 | 0.321 ± 0.050 | - |",
        "| cd/ru | nothing: empty | 0 | - | empty: no concept left to it has a Russian name in the vocabulary; no "
        "translation: no machine-translation engine is reachable offline and no translation memory is configured |",
        "| evidence/fr | nothing: empty | 0 | - | empty: no evidence source in French; no translation: no "
        "machine-translation engine is reachable offline and no translation memory is configured |",
        "| evidence/ru | finding the English evidence passage that answers a question asked in Russian "
        "(queries: native 35; gold: 1 source passages, 0 concept entries) | 29 | 0.547 ± 0.150 | "
        "**fewer than 100 test queries** |",
        "| xqa/en | finding the English answer passage of a question asked in English (queries: human-translated 2, "
        "native 118; gold: 2 source passages, 1 concept entries) | 110 | 0.770 ± 0.075 | - |",
        "| xqa/fr | nothing: empty | 0 | - | empty: its 3104 French xqa source items were all dropped (build_report.json "
        "says why, item by item); no translation: no machine-translation engine is reachable offline and no "
        "translation memory is configured |",
        "",
    ]


def test_an_evidence_cell_says_its_sources_and_pivots(tmp_path):
    _qrels(tmp_path, "evidence/es", ["casimedicos-exp-1", "casimedicos-exp-2", "pubmed-3-0"])
    (tmp_path / "evidence" / "es" / "queries.jsonl").write_text("".join(
        json.dumps({"_id": i}) + "\n" for i in ("casimedicos-dev-001", "casimedicos-test-002", "pubmedqa-3")))
    manifest = {"languages": {"es": {"name": "Spanish"}}, "config": {"tasks": {"cd": {"distractors": 3}}, "translation": {"memory": []}},
                "cells": {"evidence/es": {"queries": 3, "dev_queries": 1, "provenance": {"native": 2, "human-translated": 1},
                                          "pivots": {"queries": 3, "of": 3, "provenance": {"human-translated": 3}}}}}
    (row,) = measures(manifest, tmp_path)[8:-1]
    assert row == (
        "| evidence/es | finding the English evidence passage that answers a question asked in Spanish (queries: "
        "human-translated 1, native 2; gold: 3 source passages, 0 concept entries; English pivots: 3 of 3). From: CasiMedicos "
        "clinical cases with their question (Spanish MIR exam; Spanish original, French translation); gold: the doctors' "
        "English explanation of the case (2); PubMedQA questions; gold: their abstract's sections and conclusion (1) | 2 | - | "
        "**fewer than 100 test queries** |")


def test_flag_is_strictly_under_100_test_queries(tmp_path):
    m = _manifest([])
    m["cells"] = {"cd/fr": {"queries": 110, "dev_queries": 10, "provenance": {"terminology": 110}},
                  "cd/ru": {"queries": 110, "dev_queries": 11, "provenance": {"terminology": 110}}}
    lines = measures(m, tmp_path, {})
    assert lines[2].startswith("Per cell:") and lines[6].endswith("| baseline (none: the build did not evaluate itself) | note |")
    assert lines[8].endswith("| 100 | - | - |")  # 100 test queries: not flagged
    assert lines[9].endswith("| 99 | - | **fewer than 100 test queries** |")


def test_empty_reasons_follow_the_facts():
    m = _manifest(["tm.jsonl"])
    # a memory configured, but no text in it for these items
    assert empty_reason("evidence/fr", m, {}) == (
        "no evidence source in French; no translation: the translation memory holds no French text passing the gates "
        "for the items left, and no machine-translation engine is reachable offline")
    # an English cell is never translated into
    assert empty_reason("xqa/en", m, {}) == "no xqa source in English"
    assert empty_reason("xqa/en", m, {"xqa/en": 2}) == (
        "its 2 English xqa source items were all dropped (build_report.json says why, item by item)")
    # without the sources' counts the card says only what it knows
    assert empty_reason("xqa/fr", _manifest([]), None).startswith("no xqa source item in French was placed; ")


def test_gold_kinds_and_source_items(tmp_path):
    _qrels(tmp_path, "xqa/ja", ["C0268542", "C0027125", "pubmed-9-long", "C027125"])  # the last is no CUI
    assert gold_kinds(tmp_path / "xqa" / "ja") == (2, 2)
    assert gold_kinds(tmp_path / "xqa" / "zh") == (0, 0)
    import pyarrow as pa
    import pyarrow.parquet as pq

    for i, rows in enumerate([[("xqa", "ja"), ("xqa", "ja"), ("evidence", "en")], [("xqa", "ja"), ("xqa", "en")]]):
        pq.write_table(pa.table({"task": [t for t, _ in rows], "lang": [l for _, l in rows]}), tmp_path / f"items-{i}.parquet")
    assert source_items_by_cell([str(tmp_path / "items-0.parquet"), str(tmp_path / "items-1.parquet")]) == {
        "evidence/en": 1, "xqa/en": 1, "xqa/ja": 3}
