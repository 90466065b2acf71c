"""Every parquet file of a release has the columns of the record it holds, as schemas/records.py
defines them once (the pydantic model, and the arrow schema derived from it)."""
from __future__ import annotations

from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from common.parquet import write_parquet
from schemas.records import (CONFUSION_SET_ARROW, DOCUMENT_ARROW, QREL_ARROW, QUERY_ARROW, TOP_RANKED_ARROW, Mention,
                             Strict, arrow_schema)

# qrels.parquet beside a cell's BEIR files (every split's, with a split column) is written by
# tasks/release/writers.py with an int32 score, where qrels/<split>.parquet has Qrel's int64:
# making it one changes the release's bytes, so it is pinned here as it is until then.
QRELS_BESIDE_BEIR = pa.schema([("query-id", pa.string()), ("corpus-id", pa.string()), ("score", pa.int32()),
                               ("split", pa.string())])


def expected_schema(relative: str) -> pa.Schema | None:
    """The schema a release's parquet file must have, by where it sits; None: no record."""
    parts = Path(relative).parts
    name, folder = parts[-1], parts[-2] if len(parts) > 1 else ""
    if name == "confusion_sets.parquet":
        return CONFUSION_SET_ARROW
    if name == "corpus.parquet":
        return DOCUMENT_ARROW
    if name == "qrels.parquet":
        return QRELS_BESIDE_BEIR
    if name in ("queries.parquet", "pivot-queries.parquet") or folder in ("queries", "pivot-queries"):
        return QUERY_ARROW
    if folder in ("qrels", "pivot-qrels"):
        return QREL_ARROW
    if folder in ("top_ranked", "pivot-top_ranked"):
        return TOP_RANKED_ARROW
    return None


def schema_mismatches(release: Path) -> list[str]:
    out = []
    for path in sorted(release.rglob("*.parquet")):
        relative = path.relative_to(release).as_posix()
        want, have = expected_schema(relative), pq.read_schema(path)
        if want is None:
            out.append(f"{relative}: no record defines it")
        elif not have.equals(want, check_metadata=False):
            out.append(f"{relative}: {have.to_string(show_schema_metadata=False)!r}")
    return out


def test_every_parquet_file_of_the_sample_release_has_its_records_schema(sample_build):
    release = sample_build["release"]
    kinds = {expected_schema(p.relative_to(release).as_posix()) is not None for p in release.rglob("*.parquet")}
    assert kinds == {True}
    assert schema_mismatches(release) == []
    # every kind is there to be checked: queries, pivot queries, qrels, top_ranked, corpus, sets
    found = {Path(p).parent.name for p in release.rglob("*/*.parquet")}
    assert {"queries", "pivot-queries", "qrels", "pivot-qrels", "top_ranked", "pivot-top_ranked", "cd"} <= found


@pytest.mark.parametrize("relative, table", [
    ("xqa/fr/queries/test.parquet", pa.table({"_id": ["q"], "text": ["t"]})),  # columns missing
    ("cd/fr/top_ranked/test.parquet", pa.table({"query-id": ["q"], "corpus-ids": [["a"]], "extra": [1]})),
    ("xqa/en/qrels/test.parquet", pa.table({"query-id": ["q"], "corpus-id": ["d"], "score": pa.array([1], pa.int32())})),
    ("xqa/en/notes.parquet", pa.table({"x": [1]})),
])
def test_a_file_with_other_columns_is_named(release_copy, relative, table):
    write_parquet(table, release_copy / relative)
    assert [m.split(":")[0] for m in schema_mismatches(release_copy)] == [relative]


def test_the_arrow_schema_is_derived_from_the_model():
    assert QUERY_ARROW == pa.schema([("_id", pa.string()), ("text", pa.string()), ("lang", pa.string()),
                                     ("cuis", pa.list_(pa.string())), ("pivot_text", pa.string()),
                                     ("provenance", pa.string()), ("split", pa.string())])
    assert QREL_ARROW == pa.schema([("query-id", pa.string()), ("corpus-id", pa.string()), ("score", pa.int64())])
    assert TOP_RANKED_ARROW == pa.schema([("query-id", pa.string()), ("corpus-ids", pa.list_(pa.string()))])
    assert arrow_schema(Mention) == pa.schema([("start", pa.int64()), ("end", pa.int64()), ("text", pa.string()),
                                               ("cui", pa.string()), ("score", pa.float64())])

    class Flags(Strict):
        on: bool
        kind: Literal["a", "b"] | None = None

    assert arrow_schema(Flags) == pa.schema([("on", pa.bool_()), ("kind", pa.string())])

    class Mixed(Strict):
        counts: dict[str, int]

    with pytest.raises(TypeError, match="no arrow type"):
        arrow_schema(Mixed)
