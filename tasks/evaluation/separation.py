"""Does a cell tell multilingual systems from English-only ones?

The benchmark's claim is that an English-only encoder collapses outside English while a
multilingual one keeps part of its score. A cell supports that claim when, on its own items
(each asked natively and in English, its pivot control), some multilingual system's gap
(pivot minus native nDCG@10) is smaller than each English-only system's gap by more than
noise: the 95% paired bootstrap interval of (English-only gap - multilingual gap), over the
same queries, lies above 0.

In a Latin-script cell an English-only system keeps what the languages share (cognates,
drug and disease names), so a cell there may fail the test without being broken; in another
script it has nothing to keep, and failing says the cell does not measure language coverage.

Which side a system takes is its declared coverage (Retriever.coverage): the built-ins'
(systems.py), or a user's dense model's `dense:DIR@english` / `dense:DIR@multilingual`; a
system without one (bm25, a hybrid, an undeclared model, run files) takes no side.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Contrast:
    english_only: str
    multilingual: str
    difference: float  # English-only gap minus multilingual gap, mean over paired queries
    low: float  # its 95% bootstrap interval
    high: float


def paired_differences(english_native: list[float], english_pivot: list[float],
                       multi_native: list[float], multi_pivot: list[float]) -> list[float]:
    """Per query: (English-only pivot - native) - (multilingual pivot - native)."""
    if not (len(english_native) == len(english_pivot) == len(multi_native) == len(multi_pivot)):
        raise ValueError("paired_differences: the four score lists must cover the same queries")
    return [(ep - en) - (mp - mn) for en, ep, mn, mp in zip(english_native, english_pivot, multi_native, multi_pivot)]


def separates(contrasts: list[Contrast]) -> bool:
    """Some multilingual system loses significantly less than every English-only system
    (each of its contrasts' intervals lies strictly above 0)."""
    by_multilingual: dict[str, list[Contrast]] = {}
    for c in contrasts:
        by_multilingual.setdefault(c.multilingual, []).append(c)
    return any(all(c.low > 0 for c in group) for group in by_multilingual.values())


def reading(separated: bool, latin_script: bool) -> str:
    """The label results.md and the card print beside a cell."""
    if separated:
        return "separates multilingual from English-only systems"
    if latin_script:
        return ("does not separate multilingual from English-only systems (Latin script: an English-only "
                "system keeps the words the languages share)")
    return "does not separate multilingual from English-only systems"
