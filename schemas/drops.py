"""Why an item is not in the release: one typed record per dropped item, and its counters.

A step that can drop an item returns a `Drop` (or None to keep it); the loop around it
collects the records and `drop_counts` counts them (datatrove's base_filter: a step says
keep-or-reason, the loop counts). The release's words are made from the record, never
read back out of them:

- `Drop.reason`: the sentence build_report.json lists for the item;
- `Drop.tally`: the key it is counted under in `dropped_by_reason` (the manifest's
  `dropped`): the sentence without what only this item has (which query it duplicates),
  with what groups items (the cells that own its key concepts).

Gate rejections are counts per (language, gate) and have a table of their own
(`GATE_TABLE`), not rows of the drop table. Items that offer no text in a language (no
English pivot, or no translation of it in the memory: schemas.gates.Unrealized) failed no
gate and are counted apart, per (language, cause) (`UNREALIZED_TABLE`).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, model_validator

DropStage = Literal["sources", "grounding", "allocation"]
DropCode = Literal[
    # sources: a case whose languages a parallel source (casimedicos) cannot pair
    "answer-disagrees",      # detail: each language's answer ("en 2, es 2, fr 3"; "none": no answer line)
    "options-disagree",      # detail: each language's option count ("en 5, es 5, fr 4")
    "answer-not-an-option",  # detail: the answer and the option count
    "missing-text",          # detail: which text is missing in which language
    # grounding: the item has no gold passage the release could stand behind
    "unanswerable",          # evidence: no key concept in its gold passage
    "no-answer-concept",     # a correct option names no vocabulary concept
    "answer-not-key",        # the answer's concept is outside the key semantic groups
    "no-definition",         # the answer's concept has no definition (its entry explains nothing)
    "ambiguous-answer",      # a wrong option names the answer's concept too
    "names-answer",          # the question names its answer
    # allocation: no cell can take the item
    "no-key-concept",        # nothing in a key group was grounded
    "near-duplicate",        # detail: the kept query, its text namespace and Jaccard
    "key-concepts-owned",    # detail: the cells ("evidence/en and xqa/ja") owning its key concepts
    "key-concept-owned",     # detail: the cell of another task owning its key concept
    "owner-unrealizable",    # detail: the cell owning its key concept, where it has no text
    "owner-full",            # detail: the cell owning its key concept, which is full
    "no-realization",        # no text in any build language
    "cells-full",            # every cell it can be realized in is full
]

# what build_report.json says, per code; `{detail}` is the record's detail
REASON: dict[str, str] = {
    "answer-disagrees": "its languages disagree on the answer ({detail})",
    "options-disagree": "its languages disagree on the option count ({detail})",
    "answer-not-an-option": "its answer is not one of its options: {detail}",
    "missing-text": "unpaired: {detail}",
    "unanswerable": "unanswerable: no key concept in its gold passage",
    "no-answer-concept": "no answer passage: a correct option names no vocabulary concept",
    "answer-not-key": "no answer passage: the answer's concept is outside the key semantic groups",
    "no-definition": "no answer passage: the answer's concept has no definition",
    "ambiguous-answer": "no answer passage: a wrong option names the answer's concept too",
    "names-answer": "the question names its answer",
    "no-key-concept": "no key concept grounded",
    "near-duplicate": "near-duplicate of {detail}",
    "key-concepts-owned": "key concepts already in cells {detail}",
    "key-concept-owned": "key concept already in cell {detail}",
    "owner-unrealizable": "key concept in cell {detail}, where the item has no realization",
    "owner-full": "key concept in cell {detail}, which is full",
    "no-realization": "no realization in any build language",
    "cells-full": "every cell it can be realized in is full",
}
# codes whose detail is this item's alone: counted without it (one key, not one per item)
PER_ITEM_DETAIL: dict[str, str] = {
    "near-duplicate": "near-duplicate",
    "answer-disagrees": "its languages disagree on the answer",
    "options-disagree": "its languages disagree on the option count",
    "answer-not-an-option": "its answer is not one of its options",
}


class Drop(BaseModel):
    """One item the build leaves out: which stage, which item, why (code), and the specifics."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stage: DropStage
    item_id: str
    code: DropCode
    detail: str = ""

    @model_validator(mode="after")
    def _detail_where_the_sentence_has_one(self) -> "Drop":
        wants = "{detail}" in REASON[self.code]
        if wants != bool(self.detail):
            raise ValueError(f"drop code {self.code!r} {'needs' if wants else 'takes no'} detail (got {self.detail!r})")
        return self

    @property
    def reason(self) -> str:
        return REASON[self.code].format(detail=self.detail)

    @property
    def tally(self) -> str:
        return PER_ITEM_DETAIL.get(self.code) or self.reason

    def report_row(self) -> dict:
        """The item's row in build_report.json's `dropped`."""
        return {"id": self.item_id, "reason": self.reason, "stage": self.stage}


def drop_counts(drops: Iterable[Drop]) -> dict[str, int]:
    """`dropped_by_reason`: how many items each tally key counts, sorted by key."""
    return dict(sorted(Counter(d.tally for d in drops).items()))


# the allocation stage's tables (work dir): drops as records, gate rejections and unrealized
# texts as counts (`unrealized`: a schemas.gates.Unrealized code)
DROP_TABLE = pa.schema([("id", pa.string()), ("stage", pa.string()), ("code", pa.string()), ("detail", pa.string())])
GATE_TABLE = pa.schema([("gate", pa.string()), ("rejections", pa.int64())])
UNREALIZED_TABLE = pa.schema([("lang", pa.string()), ("unrealized", pa.string()), ("items", pa.int64())])


def drop_rows(drops: Iterable[Drop]) -> list[dict]:
    """Rows of DROP_TABLE, sorted by item id then stage (the order build_report.json lists)."""
    rows = [{"id": d.item_id, "stage": d.stage, "code": d.code, "detail": d.detail} for d in drops]
    return sorted(rows, key=lambda r: (r["id"], r["stage"]))


def drops_from_rows(rows: Iterable[dict]) -> list[Drop]:
    return [Drop(stage=r["stage"], item_id=r["id"], code=r["code"], detail=r["detail"] or "") for r in rows]
