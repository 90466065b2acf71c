"""The ground stage's reads (tasks/grounding/reads.py): a shard's rows of the corpora,
atoms and concepts tables, read without decoding what the shard does not name."""
from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks.grounding import grounders, reads


def _write(path, ids: list[str], row_group_size: int):
    table = pa.table({"id": pa.array(ids, pa.string()), "title": pa.array([f"t{i}" for i in ids], pa.string()),
                      "text": pa.array([f"text of {i}" for i in ids], pa.string())})
    pq.write_table(table, path, row_group_size=row_group_size)
    return str(path)


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(reads, "_READ_BATCH", 3)  # several batches inside one row group


def test_rows_come_in_file_order_across_row_groups_and_batches(tmp_path, small_batches):
    path = _write(tmp_path / "c.parquet", [f"p{i:02d}" for i in range(20)], row_group_size=8)
    got = reads.read_rows(path, "id", ["p19", "p03", "p07", "p08", "p04", "nope"], ["id", "text"])
    assert got.column_names == ["id", "text"]
    assert got.to_pylist() == [{"id": "p03", "text": "text of p03"}, {"id": "p04", "text": "text of p04"},
                               {"id": "p07", "text": "text of p07"}, {"id": "p08", "text": "text of p08"},
                               {"id": "p19", "text": "text of p19"}]


def test_nothing_wanted_gives_an_empty_table_of_the_asked_columns(tmp_path):
    path = _write(tmp_path / "c.parquet", ["a", "b"], row_group_size=1)
    for values in ([], ["zzz"]):
        got = reads.read_rows(path, "id", values, ["title", "id"])
        assert got.num_rows == 0 and got.schema == pa.schema([("title", pa.string()), ("id", pa.string())])


def test_a_row_group_without_a_wanted_key_has_only_its_key_read(tmp_path, monkeypatch):
    """An exam shard names no evidence passage: the passages' text is not decoded."""
    path = _write(tmp_path / "c.parquet", [f"p{i:02d}" for i in range(12)], row_group_size=4)  # groups 0, 1, 2
    read = []
    real = pq.ParquetFile.iter_batches
    monkeypatch.setattr(pq.ParquetFile, "iter_batches",
                        lambda self, *a, **k: read.append((tuple(k["row_groups"]), tuple(k["columns"]))) or real(self, *a, **k))
    assert reads.read_rows(path, "id", ["p09", "p10"], ["id", "text"])["id"].to_pylist() == ["p09", "p10"]
    assert read == [((2,), ("id", "text"))]
    read.clear()
    assert reads.read_rows(path, "id", ["p99"], ["id", "text"]).num_rows == 0
    assert read == []


@settings(max_examples=60, deadline=None)
@given(ids=st.lists(st.sampled_from([f"k{i}" for i in range(30)]), max_size=40),
       wanted=st.lists(st.sampled_from([f"k{i}" for i in range(35)]), max_size=10),
       group=st.integers(1, 9), batch=st.integers(1, 5))
def test_read_rows_is_a_filter_of_the_whole_table(tmp_path_factory, ids, wanted, group, batch):
    path = _write(tmp_path_factory.mktemp("rr") / "c.parquet", ids, row_group_size=group)
    old, reads._READ_BATCH = reads._READ_BATCH, batch
    try:
        got = reads.read_rows(path, "id", wanted, ["id", "title"])
    finally:
        reads._READ_BATCH = old
    assert got.to_pylist() == [r for r in pq.read_table(path, columns=["id", "title"]).to_pylist() if r["id"] in set(wanted)]


def _concepts(path, rows):
    pq.write_table(pa.table({"cui": [r[0] for r in rows], "tui": ["T047"] * len(rows), "group": [r[1] for r in rows],
                             "definition": [r[2] for r in rows]}), path, row_group_size=2)
    return str(path)


def test_concept_facts_give_each_concepts_group_and_whether_it_is_defined(tmp_path, small_batches):
    reads._concept_facts.cache_clear()
    path = _concepts(tmp_path / "concepts.parquet", [
        ("C1", "DISO", "A disease."), ("C2", "DISO", None), ("C3", "CHEM", " \t\n"), ("C4", None, "x"),
        ("C5", "PROC", "\u2003"), ("C6", "ANAT", "A part."), ("C7", "DISO", ""),
    ])
    group, defined = reads.concept_facts(path, ["C2", "C1", "C3", "C4", "C5", "C7", "C9"])
    assert group == {"C1": "DISO", "C2": "DISO", "C3": "CHEM", "C4": None, "C5": "PROC", "C7": "DISO"}
    assert defined == {"C1", "C4"}  # None, empty and whitespace-only (Unicode's too) are no definition
    assert reads.concept_facts(path, []) == ({}, set())


def test_concept_facts_are_read_once_and_again_when_the_file_changes(tmp_path):
    reads._concept_facts.cache_clear()
    path = _concepts(tmp_path / "concepts.parquet", [("C1", "DISO", "A disease.")])
    assert reads.concept_facts(path, ["C1"]) == ({"C1": "DISO"}, {"C1"})
    assert reads.concept_facts(path, ["C1"]) == ({"C1": "DISO"}, {"C1"})
    assert reads._concept_facts.cache_info().misses == 1
    before = os.stat(path)
    _concepts(tmp_path / "concepts.parquet", [("C1", "CHEM", "B disease.")])  # same size, newer file
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))  # newer even within the clock's tick
    assert os.stat(path).st_size == before.st_size
    assert reads.concept_facts(path, ["C1"]) == ({"C1": "CHEM"}, {"C1"})
    same_time = os.stat(path)
    _concepts(tmp_path / "concepts.parquet", [("C1", "ANAT", "")])  # another size, the same time
    os.utime(path, ns=(same_time.st_atime_ns, same_time.st_mtime_ns))
    assert reads.concept_facts(path, ["C1"]) == ({"C1": "ANAT"}, set())
    grounders.GROUNDERS.clear()  # the flow's release of the grounders drops these too
    assert reads._concept_facts.cache_info().currsize == 0
