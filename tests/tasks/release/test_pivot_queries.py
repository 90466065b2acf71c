"""Pivot controls: a non-English cell's queries asked again in English, under the same ids.

Unit tests on crafted cell folders (no build): where a pivot's English comes from, the files a
cell with some pivots gets, the manifest block with its reason, the `datasets` configs, BEIR's
loader on a cell where only some queries have a pivot, and a carried cell from a base release
made before pivot controls."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from common.errors import InputError
from common.parquet import write_parquet
from tasks.release.hub import hub_configs, loadable_files, write_split_files
from tasks.release.writers import pivot_count, pivot_provenance, pivot_rows, write_pivot_files


def _q(qid: str, pivot: str | None, provenance: str = "native", split: str = "test", lang: str = "fr") -> dict:
    return {"_id": qid, "text": f"question {qid} en français", "lang": lang, "cuis": ["C0000001"], "pivot_text": pivot,
            "provenance": provenance, "split": split}


def _cell(root: Path, queries: list[dict], splits=("test",)) -> Path:
    """A BEIR cell folder: queries, one qrel per query (to d-<id>), a corpus of those documents."""
    root.mkdir(parents=True)
    (root / "queries.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries), encoding="utf-8")
    (root / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d-{q['_id']}", "title": "", "text": "passage"}) + "\n"
                                               for q in queries))
    write_parquet(pa.table({"_id": [f"d-{q['_id']}" for q in queries], "title": [""] * len(queries),
                            "text": ["passage"] * len(queries)}), root / "corpus.parquet")
    (root / "qrels").mkdir()
    for split in splits:
        (root / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
            f"{q['_id']}\td-{q['_id']}\t1\n" for q in queries if q["split"] == split))
    return root


def test_pivot_provenance_rule():
    assert pivot_provenance("cd", _q("cd-fr-C1", "Asthma", "terminology"), "fr", {}) == "terminology"
    # written in the cell's language: its English is its source's translation (IgakuQA's *_translate.jsonl)
    assert pivot_provenance("xqa", _q("igakuqa-1", "What ...?", "native", lang="ja"), "ja", {}) == "human-translated"
    # translated from the memory: where the item's English comes from depends on the item's own language
    assert pivot_provenance("xqa", _q("pubmedqa-1", "Is ...?", "machine-translated"), "fr", {"pubmedqa-1": "en"}) == "native"
    assert pivot_provenance("evidence", _q("igakuqa-2", "Which ...?", "human-translated"), "fr", {"igakuqa-2": "ja"}) == "human-translated"
    assert pivot_provenance("xqa", _q("lost-1", "Is ...?", "machine-translated"), "fr", {}) is None


def test_pivot_rows_keep_id_split_and_cuis_and_skip_queries_without_english():
    queries = [_q("b", "Why B?", split="dev"), _q("frenchmedmcqa-x", None), _q("a", "Why A?", "machine-translated")]
    rows = pivot_rows(queries, "xqa", "fr", {"a": "en"})
    assert rows == [
        {"_id": "a", "text": "Why A?", "lang": "en", "cuis": ["C0000001"], "pivot_text": None, "provenance": "native", "split": "test"},
        {"_id": "b", "text": "Why B?", "lang": "en", "cuis": ["C0000001"], "pivot_text": None, "provenance": "human-translated",
         "split": "dev"}]
    assert pivot_rows(queries, "xqa", "en", {"a": "en"}) == []  # an English cell has no pivot control
    with pytest.raises(InputError) as err:
        pivot_rows(queries, "xqa", "fr", {}, "xqa/fr/queries.jsonl")
    assert str(err.value) == ("xqa/fr/queries.jsonl:3: field 'pivot_text': query 'a' is translated, and its item is not in "
                              "this build's sources: where its English pivot comes from is unknown")


def test_a_cell_where_some_queries_have_a_pivot(tmp_path):
    """Only the pivot queries' qrels go to pivot-qrels/: BEIR's loader wants a query for every qrel."""
    from beir.datasets.data_loader import GenericDataLoader

    d = _cell(tmp_path / "xqa" / "fr", [_q("frenchmedmcqa-1", None), _q("frenchmedmcqa-2", None), _q("igakuqa-9", "Why?", "human-translated"),
                                        _q("rumeddanet-3", None, split="dev")], splits=("test", "dev"))
    assert write_pivot_files(d, "xqa", "fr", {"igakuqa-9": "ja"}) == 1
    assert [json.loads(l) for l in (d / "pivot-queries.jsonl").read_text().splitlines()] == [
        {"_id": "igakuqa-9", "cuis": ["C0000001"], "lang": "en", "pivot_text": None, "provenance": "human-translated",
         "split": "test", "text": "Why?"}]
    assert (d / "pivot-qrels" / "test.tsv").read_text() == "query-id\tcorpus-id\tscore\nigakuqa-9\td-igakuqa-9\t1\n"
    assert (d / "pivot-qrels" / "dev.tsv").read_text() == "query-id\tcorpus-id\tscore\n"
    assert pq.read_table(d / "pivot-queries.parquet").to_pylist() == [json.loads((d / "pivot-queries.jsonl").read_text())]
    assert pivot_count(d, "fr") == {
        "queries": 1, "of": 4, "dev_queries": 0, "provenance": {"human-translated": 1},
        "reason": "3 of 4 queries have no English text: their source items (frenchmedmcqa-*, rumeddanet-*) come without one, "
                  "and the translation memory translates from English only"}
    # the cell's own qrels name queries the pivot file lacks: BEIR fails on them; prefix="pivot" reads pivot-qrels/
    with pytest.raises(KeyError):
        GenericDataLoader(data_folder=str(d), query_file="pivot-queries.jsonl").load(split="test")
    _, queries, qrels = GenericDataLoader(data_folder=str(d), prefix="pivot").load(split="test")
    assert (queries, qrels) == ({"igakuqa-9": "Why?"}, {"igakuqa-9": {"d-igakuqa-9": 1}})
    # datasets configs: the pivot subset in the split where it has queries only (dev has none)
    assert write_split_files(d, "xqa", []) == ["test", "dev"]
    files = loadable_files(d, "xqa")
    assert {k: v for k, v in files.items() if k.startswith("pivot-")} == {
        "pivot-corpus": {"test": "corpus.parquet"}, "pivot-queries": {"test": "pivot-queries/test.parquet"},
        "pivot-qrels": {"test": "pivot-qrels/test.parquet"}}
    assert pq.read_table(d / "pivot-queries" / "dev.parquet").num_rows == 0
    assert [c["config_name"] for c in hub_configs({"xqa/fr": files})] == [
        "xqa-fr-corpus", "xqa-fr-queries", "xqa-fr-qrels", "xqa-fr-pivot-corpus", "xqa-fr-pivot-queries", "xqa-fr-pivot-qrels"]


def test_a_cell_without_any_pivot_says_why(tmp_path):
    d = _cell(tmp_path / "evidence" / "ru", [_q("rumeddanet-1", None, lang="ru"), _q("rumeddanet-2", None, lang="ru")])
    assert write_pivot_files(d, "evidence", "ru", {}) == 0
    assert not (d / "pivot-queries.jsonl").exists() and not (d / "pivot-qrels").exists()
    assert pivot_count(d, "ru") == {"queries": 0, "of": 2, "dev_queries": 0, "provenance": {},
                                    "reason": "2 of 2 queries have no English text: their source items (rumeddanet-*) come "
                                              "without one, and the translation memory translates from English only"}
    assert "pivot-queries" not in loadable_files(d, "evidence")
    e = _cell(tmp_path / "evidence" / "en", [_q("pubmedqa-1", "Is it?", lang="en")])
    assert write_pivot_files(e, "evidence", "en", {}) == 0 and pivot_count(e, "en") is None  # English cells have none


def test_a_carried_cell_from_a_base_without_pivots_gets_them(tmp_path):
    """add-language on a release made before pivot controls: its carried cells get pivot files
    (as a new cell's), and the manifest block follows the files; a carried cell that has them keeps them byte for byte."""
    from tasks.release.stage import _add_pivot_counts, _write_split_files

    (tmp_path / "cd").mkdir()
    (tmp_path / "cd" / "confusion_sets.jsonl").write_text("")
    old = _cell(tmp_path / "xqa" / "ja", [_q("igakuqa-1", "Why?", lang="ja"), _q("pubmedqa-7", "Is it?", "human-translated", lang="ja")])
    kept = _cell(tmp_path / "xqa" / "fr", [_q("pubmedqa-8", "Is that so?", "machine-translated")])
    write_pivot_files(kept, "xqa", "fr", {"pubmedqa-8": "en"})
    write_split_files(kept, "xqa", [])
    before = {p.relative_to(kept).as_posix(): p.read_bytes() for p in sorted(kept.rglob("*")) if p.is_file()}
    counts = {"xqa/ja": {"queries": 2}, "xqa/fr": {"queries": 1, "pivots": {"stale": True}}}
    _write_split_files(tmp_path, counts, carried={"xqa/ja", "xqa/fr"}, item_langs={"pubmedqa-7": "en"})
    _add_pivot_counts(tmp_path, counts)
    assert [r["provenance"] for r in map(json.loads, (old / "pivot-queries.jsonl").read_text().splitlines())] == ["human-translated", "native"]
    assert pq.read_table(old / "pivot-queries" / "test.parquet").num_rows == 2
    assert pq.read_table(old / "pivot-qrels" / "test.parquet").num_rows == 2
    assert counts["xqa/ja"]["pivots"] == {"queries": 2, "of": 2, "dev_queries": 0,
                                          "provenance": {"human-translated": 1, "native": 1}, "reason": None}
    assert counts["xqa/fr"]["pivots"]["provenance"] == {"native": 1}
    assert {p.relative_to(kept).as_posix(): p.read_bytes() for p in sorted(kept.rglob("*")) if p.is_file()} == before
