"""schemas/drops.py: one typed record per dropped item, its sentence and its count key made
from the record (never parsed back out of the sentence); the allocation stage's tables and
the build report's `dropped` / `dropped_by_reason` / `gate_rejections` / `unrealized` made from them."""
from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import ValidationError

from schemas.drops import DROP_TABLE, GATE_TABLE, REASON, UNREALIZED_TABLE, Drop, drop_counts, drop_rows, drops_from_rows

# (code, detail) -> (the build report's sentence, its dropped_by_reason key), by hand
CASES = [
    ("unanswerable", "", "unanswerable: no key concept in its gold passage", "unanswerable: no key concept in its gold passage"),
    ("no-answer-concept", "", "no answer passage: a correct option names no vocabulary concept",
     "no answer passage: a correct option names no vocabulary concept"),
    ("names-answer", "", "the question names its answer", "the question names its answer"),
    ("no-key-concept", "", "no key concept grounded", "no key concept grounded"),
    ("near-duplicate", "xqa-en-001 (pivot, jaccard=0.89)", "near-duplicate of xqa-en-001 (pivot, jaccard=0.89)", "near-duplicate"),
    ("key-concepts-owned", "evidence/en and xqa/ja", "key concepts already in cells evidence/en and xqa/ja",
     "key concepts already in cells evidence/en and xqa/ja"),
    ("key-concept-owned", "xqa/en", "key concept already in cell xqa/en", "key concept already in cell xqa/en"),
    ("owner-unrealizable", "xqa/fr", "key concept in cell xqa/fr, where the item has no realization",
     "key concept in cell xqa/fr, where the item has no realization"),
    ("owner-full", "evidence/en", "key concept in cell evidence/en, which is full", "key concept in cell evidence/en, which is full"),
    ("cells-full", "", "every cell it can be realized in is full", "every cell it can be realized in is full"),
]


@pytest.mark.parametrize("code, detail, reason, tally", CASES)
def test_a_drop_says_its_reason_and_counts_under_its_key(code, detail, reason, tally):
    d = Drop(stage="allocation", item_id="x", code=code, detail=detail)
    assert (d.reason, d.tally) == (reason, tally)
    assert d.report_row() == {"id": "x", "reason": reason, "stage": "allocation"}


def test_a_detail_whose_words_look_like_a_sentence_break_is_kept_whole():
    """The old key was `reason.split(" (")[0].split(" of ")[0]`: a cell or item id with " of "
    or " (" in it cut the key short. The record's key does not look inside its detail."""
    d = Drop(stage="allocation", item_id="x", code="key-concept-owned", detail="xqa/a of b (c)")
    assert d.tally == "key concept already in cell xqa/a of b (c)"


def test_the_vocabulary_is_closed_and_a_detail_goes_where_the_sentence_has_one():
    with pytest.raises(ValidationError):
        Drop(stage="allocation", item_id="x", code="too-long")
    with pytest.raises(ValidationError):
        Drop(stage="writing", item_id="x", code="cells-full")
    with pytest.raises(ValidationError, match="needs detail"):
        Drop(stage="allocation", item_id="x", code="near-duplicate")
    with pytest.raises(ValidationError, match="takes no detail"):
        Drop(stage="allocation", item_id="x", code="cells-full", detail="xqa/en")
    with pytest.raises(ValidationError, match="extra"):
        Drop(stage="allocation", item_id="x", code="cells-full", reason="every cell")
    assert set(REASON) == set(Drop.model_fields["code"].annotation.__args__)


def test_counts_and_table_round_trip(tmp_path):
    drops = [Drop(stage="allocation", item_id="b", code="near-duplicate", detail="a (pivot, jaccard=1.00)"),
             Drop(stage="allocation", item_id="c", code="near-duplicate", detail="a (text:fr, jaccard=0.75)"),
             Drop(stage="grounding", item_id="a", code="unanswerable"),
             Drop(stage="allocation", item_id="d", code="key-concept-owned", detail="xqa/en")]
    assert drop_counts(drops) == {"key concept already in cell xqa/en": 1, "near-duplicate": 2,
                                  "unanswerable: no key concept in its gold passage": 1}
    rows = drop_rows(drops)
    assert [r["id"] for r in rows] == ["a", "b", "c", "d"]
    path = tmp_path / "dropped.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=DROP_TABLE), path)
    back = drops_from_rows(pq.read_table(path).to_pylist())
    assert back == sorted(drops, key=lambda d: d.item_id)


def test_the_build_report_is_made_from_the_records(tmp_path):
    from tasks.release.writers import write_build_report

    drops = [Drop(stage="grounding", item_id="q1", code="names-answer"),
             Drop(stage="allocation", item_id="q2", code="near-duplicate", detail="q0 (text:ja, jaccard=0.91)"),
             Drop(stage="sources", item_id="q3", code="answer-disagrees", detail="en 2, es 2, fr 3")]
    pq.write_table(pa.Table.from_pylist(drop_rows(drops), schema=DROP_TABLE), tmp_path / "dropped.parquet")
    pq.write_table(pa.Table.from_pylist([{"gate": "fr: langid", "rejections": 3}, {"gate": "ja: script", "rejections": 1}],
                                        schema=GATE_TABLE), tmp_path / "gates.parquet")
    pq.write_table(pa.Table.from_pylist([{"lang": "en", "unrealized": "no-pivot", "items": 7},
                                         {"lang": "fr", "unrealized": "no-translation", "items": 2}],
                                        schema=UNREALIZED_TABLE), tmp_path / "unrealized.parquet")
    counts = {"xqa/en": {"queries": 1}, "xqa/ja": {"queries": 2}}
    report = write_build_report(str(tmp_path / "dropped.parquet"), str(tmp_path / "gates.parquet"),
                                str(tmp_path / "unrealized.parquet"), counts, {"xqa": 2}, tmp_path)
    assert report == json.loads((tmp_path / "build_report.json").read_text())
    assert report["dropped"] == [{"id": "q1", "reason": "the question names its answer", "stage": "grounding"},
                                 {"id": "q2", "reason": "near-duplicate of q0 (text:ja, jaccard=0.91)", "stage": "allocation"},
                                 {"id": "q3", "reason": "its languages disagree on the answer (en 2, es 2, fr 3)", "stage": "sources"}]
    assert report["dropped_by_reason"] == {"its languages disagree on the answer": 1, "near-duplicate": 1,
                                           "the question names its answer": 1}
    assert report["gate_rejections"] == {"fr: langid": 3, "ja: script": 1}
    assert report["unrealized"] == {"en: no English pivot": 7, "fr: no translation in memory": 2}
    assert report["cells_short_of_quota"] == {"xqa/en": "1/2: sources, translation memory or concepts ran out (see dropped)"}


def test_grounding_verdict_keeps_or_says_why():
    from tasks.allocation.stage import grounding_verdict

    keep = {"answerable": True, "no_passage": None}
    assert grounding_verdict({"id": "e", "task": "evidence"}, keep) is None
    assert grounding_verdict({"id": "e", "task": "evidence"}, {"answerable": False, "no_passage": None}) == \
        Drop(stage="grounding", item_id="e", code="unanswerable")
    # an exam question need not be answerable from its passage
    assert grounding_verdict({"id": "q", "task": "xqa"}, {"answerable": False, "no_passage": None}) is None
    assert grounding_verdict({"id": "q", "task": "xqa"}, {"answerable": False, "no_passage": "ambiguous-answer"}) == \
        Drop(stage="grounding", item_id="q", code="ambiguous-answer")


def test_the_allocator_records_typed_drops():
    from tasks.allocation.allocator import Allocator, Candidate, Realization

    alloc = Allocator({("xqa", "en"): 1}, ["en"], {"en": 3}, 0.7, 128, 0)

    def cand(i, text, keys):
        return Candidate(i, "xqa", "en", text, text, keys, {"en": Realization(text, "native")})

    alloc.allocate_items([cand("a", "asthma in children with fever", ("C1",)), cand("b", "diabetes in adults", ()),
                          cand("c", "gout of the big toe at night", ("C1",))])
    placed = alloc.assignments[0].id
    other = ({"a", "c"} - {placed}).pop()
    # b has no key concept; of a and c (one key concept, one cell of quota 1) one is placed,
    # the other finds the cell owning its key concept full
    assert sorted((d.item_id, d.stage, d.code, d.detail) for d in alloc.drops) == [
        ("b", "allocation", "no-key-concept", ""), (other, "allocation", "owner-full", "xqa/en")]
    assert sorted(alloc.dropped) == [("b", "no key concept grounded"), (other, "key concept in cell xqa/en, which is full")]
