"""Matching rules every matcher shares (pure): a vocabulary atom, the word and mention-break
patterns, the better-ranked atom per key, and how overlapping candidates resolve."""
from __future__ import annotations

from typing import NamedTuple
import re

from tasks.grounding.params import Match


class Term(NamedTuple):
    """One vocabulary atom. A named tuple, not a dataclass: a grounder holds one per atom
    (1.1M in English), and a tuple is built faster and is smaller (80 bytes, 104 for the
    frozen dataclass it was)."""

    text: str
    cui: str
    rank: tuple  # smaller wins between CUIs sharing a string: preferred atom, source order, CUI


# (start, end, cui, score, tier) in the original text; a smaller tier is a better kind of match
Candidate = tuple[int, int, str, float, int]


WORD = re.compile(r"\w+")


MENTION_BREAK = re.compile(r"[()\[\]{},;:.!?\n]")  # a mention does not cross these (in the original text)


def keep_best_ranked(index: dict, key, term: Term) -> None:
    """Index `term` under `key` unless a better-ranked atom (smaller rank) holds it already."""
    cur = index.get(key)
    if cur is None or term.rank < cur.rank:
        index[key] = term


def select_matches(cands: list[Candidate], text: str) -> list[Match]:
    """Non-overlapping matches from (start, end, cui, score, tier) candidates: longest
    first, then the better tier (smaller), the higher score, the leftmost, the smallest CUI."""
    taken: list[tuple[int, int]] = []
    out = []
    for s, e, cui, score, _tier in sorted(cands, key=lambda c: (-(c[1] - c[0]), c[4], -c[3], c[0], c[2])):
        if any(s < te and ts < e for ts, te in taken):
            continue
        taken.append((s, e))
        out.append(Match(s, e, text[s:e], cui, score))
    return sorted(out, key=lambda m: (m.start, m.end, m.cui))
