"""Matching rules every matcher shares (pure): a vocabulary atom, the word and mention-break
patterns, the better-ranked atom per key, and how overlapping candidates resolve."""
from __future__ import annotations

from abc import ABC, abstractmethod
from enum import IntEnum
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


class Tier(IntEnum):
    """The kind of match a candidate is. Between overlapping candidates of one length the
    smaller tier wins (`select_matches`), before the score: the values are that order."""

    EXACT = 0  # the vocabulary string's words (CJK: its folded characters); a defining acronym
    STEMMED = 1  # its stemmed words or lemmas (ja: Sudachi's normalised forms)
    VARIANT = 2  # its stems in another order, or an eponym without its head word
    APPROXIMATE = 3  # QuickUMLS: character-trigram similarity


# (start, end, cui, score, tier) in the original text; a smaller tier is a better kind of match
Candidate = tuple[int, int, str, float, Tier]


class CandidateMatcher(ABC):
    """One way a Grounder finds candidate mentions in a text; a Grounder runs a list of them
    (`Grounder.matchers`) and resolves their candidates together (`select_matches`). The
    hooks let forked grounding workers run any matcher without knowing which it is."""

    @abstractmethod
    def candidates(self, text: str) -> list[Candidate]:
        """(start, end, cui, score, tier) in the original text."""

    def after_fork(self) -> None:
        """In a forked worker, before its first text (no file handle shared with the parent)."""

    def take_found(self) -> object | None:
        """In a forked worker: what it learnt that its parent should keep (None: nothing)."""
        return None

    def absorb(self, found: object) -> None:
        """In the parent: keep what a worker's `take_found` returned."""


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
