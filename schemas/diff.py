"""The report of `mmedbench diff OLD NEW`: what changed between two release folders.

Records are compared by id; a query's text is summarised by its hash, so the report says
*that* a text changed without copying it. Cells present in only one release are listed as
added or removed with their counts (their rows are not enumerated: every one is new or gone).
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from schemas.records import NonEmpty, Split, Strict

CellStatus = Literal["added", "removed", "changed", "unchanged"]
ChangeKind = Literal["added", "removed", "changed"]


class CellCounts(Strict):
    queries: int
    documents: int
    qrels: int
    dev_queries: int = 0


class RecordChange(Strict):
    """A record kept under its id with different content: which fields changed, and the text hash."""

    id: NonEmpty
    fields: list[str] = Field(min_length=1)
    old_text_sha256: str | None = None  # first 16 hex digits of sha256(text), for queries and documents
    new_text_sha256: str | None = None


class IdDiff(Strict):
    added: list[str] = []
    removed: list[str] = []
    changed: list[RecordChange] = []

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


class QrelRow(Strict):
    query_id: NonEmpty
    corpus_id: NonEmpty
    score: int
    split: Split


class QrelDiff(Strict):
    added: list[QrelRow] = []
    removed: list[QrelRow] = []

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed)


class CellDiff(Strict):
    cell: NonEmpty
    status: CellStatus
    old: CellCounts | None = None
    new: CellCounts | None = None
    queries: IdDiff = IdDiff()
    documents: IdDiff = IdDiff()
    qrels: QrelDiff = QrelDiff()


class ValueChange(Strict):
    """A manifest value (configuration key as a dotted path, vocabulary source, code version)."""

    key: NonEmpty
    kind: ChangeKind
    old: Any = None
    new: Any = None


class FileChange(Strict):
    path: NonEmpty
    kind: Literal["added", "removed", "changed", "moved"]  # moved: the same bytes under another path
    old_path: str | None = None  # for moved
    old_sha256: str | None = None
    new_sha256: str | None = None


class ReleaseDiff(Strict):
    old_release: NonEmpty
    new_release: NonEmpty
    old_version: NonEmpty
    new_version: NonEmpty
    old_build_id: NonEmpty
    new_build_id: NonEmpty
    identical: bool  # same build id and every listed file byte for byte
    cells_added: list[str]
    cells_removed: list[str]
    cells_changed: list[str]
    cells_unchanged: list[str]
    cells: list[CellDiff]  # every cell of either release, sorted
    confusion_sets: IdDiff
    config: list[ValueChange]
    inputs: list[FileChange]
    vocabulary_sources: list[ValueChange]
    code_version: ValueChange | None = None
    files: list[FileChange]  # every release file whose bytes differ (outside the cells too: card, report, ...)
