"""Why a text is not a query: a gate's typed failure, or a language the item has no text in.

A translation or language gate (tasks/translation/gates.py) returns a `GateFailure`; its
`gate` is what the build counts by and its str() is the sentence stored wherever a reason is
written (the realized table's `rejected` text, a translation memory's rejection journal, the
audit's messages). Nothing is parsed back out of that sentence: a reader counts `gate`.

An item that offers no text at all in a language (`Unrealized`) failed no gate: there was
nothing to gate.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

GateName = Literal[
    "script",            # the text's letters are not in the language's scripts
    "langid",            # language identification names another language of the same script
    "copy",              # the translation equals its source
    "length",            # the translation's length is out of proportion to its source's
    "numbers",           # a number of the source is missing from the translation
    "units",             # a unit of the source is missing from the translation
    "back-translation",  # the round trip is too far from the source (translate --back-translation-min)
]
GATE_NAMES: frozenset[str] = frozenset(get_args(GateName))

# why an item has no text in a language, and the words written where it is recorded
Unrealized = Literal["no-pivot", "no-translation"]
UNREALIZED_TEXT: dict[str, str] = {
    "no-pivot": "no English pivot",            # nothing to translate from
    "no-translation": "no translation in memory",  # the memory has no translation of the pivot
}


@dataclass(frozen=True, slots=True)
class GateFailure:
    """One gate's verdict against a text: which gate, and what it found."""

    gate: GateName
    detail: str

    def __post_init__(self) -> None:
        if self.gate not in GATE_NAMES:
            raise ValueError(f"unknown gate {self.gate!r} (expected one of {', '.join(sorted(GATE_NAMES))})")

    def __str__(self) -> str:
        return f"{self.gate}: {self.detail}"


def gate_key(lang: str, gate: str) -> str:
    """The key a rejection is counted under (gate_rejections.parquet, build_report.json)."""
    return f"{lang}: {gate}"
