"""What an evaluation tells its user while it runs, as two kinds of event:

    count(done, total, message)   a system has scored one more cell (done of total system-cells)
    note(message)                 what it is doing between two counts: a corpus indexed, texts
                                  encoded so far (a dense system's corpus can take minutes)

`mmedbench evaluate` prints them as lines of their own (`Lines`: `[3/18] bm25 cd/fr: ...`,
`minilm: encoded 1024/8000 documents of cd corpus`); `build` prints them in its plain
progress lines, with the stage's count (flows/progress.py, `Progress.counter`), so that both
show the same counts. `start(total)` comes first, before any model is loaded.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol


class EvaluationProgress(Protocol):
    def start(self, total: int) -> None: ...

    def count(self, done: int, total: int, message: str) -> None: ...

    def note(self, message: str) -> None: ...


class Lines:
    """`mmedbench evaluate`'s lines: a note as it is, a count as `[done/total] message`."""

    def __init__(self, write: Callable[[str], None]):
        self.write = write

    def start(self, total: int) -> None:
        pass  # the first count says the total

    def count(self, done: int, total: int, message: str) -> None:
        self.write(f"[{done}/{total}] {message}")

    def note(self, message: str) -> None:
        self.write(message)


class Silent:
    def start(self, total: int) -> None:
        pass

    def count(self, done: int, total: int, message: str) -> None:
        pass

    def note(self, message: str) -> None:
        pass


def as_progress(progress: EvaluationProgress | Callable[[str], None] | None) -> EvaluationProgress:
    """A reporter from what a caller gave: one already, a function taking lines, or nothing."""
    if progress is None:
        return Silent()
    if all(hasattr(progress, m) for m in ("start", "count", "note")):
        return progress
    return Lines(progress)
