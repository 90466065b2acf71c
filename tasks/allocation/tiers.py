"""The confusion-set tier rules: a target concept plus look-alike distractors at three tiers.

  easy    another semantic type (another semantic group when the vocabulary has
          several), no common ancestor within EASY_DEPTH steps, and no word of the
          target's names anywhere in the distractor's entry;
  medium  the same semantic type, no common ancestor within MEDIUM_DEPTH steps, one
          look-alike (covering at least HARD_MIN_COVERAGE of the target's name words) and
          the others covering under MEDIUM_MAX_COVERAGE;
  hard    hierarchy siblings (a shared parent) whose entries cover at least
          HARD_MIN_COVERAGE of the target's name words, the most covering first,
          topped up with covering concepts of the same type.

Why words of entries and not only names: a retriever sees the query (a name of the
target in some language) against whole entries (name, definition, synonyms). Tiers
built from name-to-name character similarity alone were ordered by that similarity but
not for retrievers (real-data within-set BM25 accuracy fr 0.41 / 0.40 / 0.34, es 0.47 /
0.36 / 0.32). `Lexicon.coverage(target, d)` is the IDF-weighted share of the target's name
words that occur in d's entry: what a lexical retriever can confuse.

Each rule is a function of one target and the `TierPools` (the concepts, hierarchy,
lexicon and seeded pools they read); none keeps state. When and where they run (lazily,
memoised, on forked workers) is tasks/allocation/confusion.py's business.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from schemas.records import TIERS
from tasks.allocation.allocator import seeded_order
from tasks.allocation.hierarchy import Hierarchy
from tasks.allocation.lexicon import Lexicon
from tasks.allocation.similarity import name_similarities

EASY_DEPTH = 3
MEDIUM_DEPTH = 2
HARD_MIN_COVERAGE = 0.5
MEDIUM_MAX_COVERAGE = 0.2
MEDIUM_CONFUSERS = 1  # look-alikes in a medium set (hard: all k; easy: none)
POOL = 300  # seeded sample of same-type candidates examined per target (keeps full UMLS tractable)
RELATED_DEPTH = 50  # a target's ancestors up to this depth are never its medium or hard distractors


class ConceptInfo(NamedTuple):
    """A tuple, not a frozen dataclass: hundreds of thousands are made per build, and a
    frozen dataclass sets each field through object.__setattr__ (1.2 of 1.5 s at paper scale)."""
    cui: str
    tui: str
    group: str
    name: str


@dataclass(frozen=True)
class ConfusionCandidate:
    target_cui: str
    target_name: str
    tier: str
    distractor_cuis: tuple[str, ...]


def first_sorted(items: list, keys: list, tiebreak, m: int) -> list:
    """`sorted(items, key=lambda x: (its key, tiebreak(x)))[:m]`, calling `tiebreak` (a hash)
    only for the items that can be among the first m: those whose key is at most the m-th
    smallest."""
    if m <= 0 or not items:
        return []
    cut = sorted(keys)[min(m, len(keys)) - 1]
    near = [(key, tiebreak(x), x) for x, key in zip(items, keys) if key <= cut]
    near.sort(key=lambda e: (e[0], e[1]))  # stable, as the full sort is
    return [x for _, _, x in near[:m]]


@dataclass
class TierPools:
    """What the tier rules read, built once per allocation: the concepts, hierarchy and
    lexicon, the size of a set (k distractors), the concepts that may not be distractors
    (`excluded`: owned by another cell), and seeded pools over the concepts."""

    concepts: dict[str, ConceptInfo]
    hierarchy: Hierarchy
    lexicon: Lexicon
    k: int
    seed: int
    excluded: frozenset[str]
    by_tui: dict[str, list[str]]  # per semantic type, its concepts in one seeded order
    everyone: list[str]  # every possible distractor, in another seeded order (easy sets)
    by_group: bool  # easy means "another semantic group" (else "another type")
    entry_of: np.ndarray  # per hierarchy id: its entry index in the lexicon, or -1 (not a possible distractor)

    @classmethod
    def build(cls, concepts: dict[str, ConceptInfo], hierarchy: Hierarchy, lexicon: Lexicon, k: int, seed: int,
              excluded: frozenset[str] = frozenset()) -> "TierPools":
        by_tui: dict[str, list[str]] = defaultdict(list)
        # one seeded order per semantic type, computed once: each target then reads a window of
        # it at a target-specific offset (sorting the whole type per target is quadratic at scale)
        for c in sorted(concepts, key=lambda c: seeded_order(seed, f"pool:{c}")):
            by_tui[concepts[c].tui].append(c)
        group_sizes = Counter(c.group for c in concepts.values())
        # "another semantic group" only where the vocabulary really has several (full UMLS);
        # the open ontologies are nearly all disorders, so there it means another type
        by_group = sum(1 for g, n in group_sizes.items() if n >= max(50, len(concepts) // 20)) >= 2
        everyone = sorted((c for c in concepts if c not in excluded), key=lambda c: seeded_order(seed, f"easy-pool:{c}"))
        # siblings are filtered as arrays of entry indexes: -1 for no entry, not a concept, or excluded
        entry_of = np.array([lexicon.entry_index(c) if c in concepts and c not in excluded else -1 for c in hierarchy.cuis],
                            np.int64)
        return cls(concepts, hierarchy, lexicon, k, seed, excluded, by_tui, everyone, by_group, entry_of)


def target_order(seed: int, cui: str):
    """The target's seeded tie-break and offset hash: order(x) for any key x."""
    return lambda x: seeded_order(seed, f"{cui}:{x}")


def same_type_window(pools: TierPools, cui: str, related: set[str]) -> list[str]:
    """Up to POOL concepts of the target's type, from a target-specific offset of the type's
    seeded order, never the target's relatives nor an excluded concept."""
    pool = pools.by_tui[pools.concepts[cui].tui]
    start = int(target_order(pools.seed, cui)("pool")[:12], 16) % max(1, len(pool))
    size = POOL + len(related) + 1
    window = pool[start : start + size]
    if len(window) < size:  # wrap around, never past the start (no repeats)
        window += pool[: min(start, size - len(window))]
    return [c for c in window if c not in related and c not in pools.excluded][:POOL]


def hard_set(pools: TierPools, cui: str, related: set[str]) -> tuple[str, ...] | None:
    """Siblings covering at least HARD_MIN_COVERAGE of the target's name words, the most
    covering (then the most similar name) first; topped up with covering concepts of the
    same type that are not the target's neighbours."""
    concepts, hierarchy, lexicon, k = pools.concepts, pools.hierarchy, pools.lexicon, pools.k
    t, cover = concepts[cui], lexicon.coverage
    # the siblings that are possible distractors and not related, as entry indexes (in id
    # order: the sort below is a total order, so the order given does not matter)
    sib_ids = hierarchy.sibling_ids(cui)
    sib_ids = sib_ids[~np.isin(sib_ids, hierarchy.ids_of(related))]
    sib_ids = pools.entry_of[sib_ids]
    sib = lexicon.covering_ids(cui, sib_ids[sib_ids >= 0], HARD_MIN_COVERAGE)
    sims = dict(zip(sib, name_similarities(t.name, [concepts[s].name for s in sib])))
    sib.sort(key=lambda s: (-cover(cui, s), -sims[s], s))
    hard = sib[:k]
    if len(hard) < k:
        pool = set(same_type_window(pools, cui, related)) | {
            c for c in lexicon.look_alikes(cui)
            if c in concepts and concepts[c].tui == t.tui and c not in related and c not in pools.excluded}
        close = lexicon.covering(cui, [c for c in sorted(pool) if c not in hard], HARD_MIN_COVERAGE)
        close = [c for c, near in zip(close, hierarchy.near_mask(cui, close, 1)) if not near]
        sims = dict(zip(close, name_similarities(t.name, [concepts[c].name for c in close])))
        close.sort(key=lambda c: (-cover(cui, c), -sims[c], c))
        hard += close[: k - len(hard)]
    return tuple(hard) if len(hard) == k else None


def medium_set(pools: TierPools, cui: str, related: set[str]) -> tuple[str, ...] | None:
    """Same semantic type, far in the hierarchy: one lexical look-alike (covering as much of
    the target's name words as a hard distractor does), the others sharing little: one
    confuser where hard has k and easy none."""
    concepts, hierarchy, lexicon, k = pools.concepts, pools.hierarchy, pools.lexicon, pools.k
    t, order = concepts[cui], target_order(pools.seed, cui)
    confusers = [c for c in lexicon.look_alikes(cui) if c in concepts and c not in related and c not in pools.excluded
                 and concepts[c].tui == t.tui]
    confusers = [c for c in lexicon.covering(cui, confusers, HARD_MIN_COVERAGE) if not hierarchy.near(cui, c, MEDIUM_DEPTH)]
    n = min(MEDIUM_CONFUSERS, k - 1)
    if len(confusers) < n:
        return None  # whatever the others are
    window = same_type_window(pools, cui, related)
    far = [c for c, near in zip(window, hierarchy.near_mask(cui, window, MEDIUM_DEPTH)) if not near]
    others = lexicon.not_covering(cui, far, MEDIUM_MAX_COVERAGE)
    if len(others) < k - n:
        return None
    sims = name_similarities(t.name, [concepts[c].name for c in others])
    others = first_sorted(others, [-s for s in sims], order, k - n)
    confusers.sort(key=lambda c: (-lexicon.coverage(cui, c), order(c)))
    return tuple(sorted([*confusers[:n], *others[: k - n]]))


def easy_set(pools: TierPools, cui: str) -> tuple[str, ...] | None:
    """Another type (another group where there are several), far in the hierarchy, sharing
    no word: the first k such concepts of the seeded order, from a target-specific start."""
    concepts, everyone, k = pools.concepts, pools.everyone, pools.k
    t = concepts[cui]
    easy = []
    start = int(target_order(pools.seed, cui)("easy")[:12], 16) % len(everyone)
    for j in range(len(everyone)):
        c = everyone[(start + j) % len(everyone)]
        other = concepts[c].group != t.group if pools.by_group else concepts[c].tui != t.tui
        if other and pools.lexicon.coverage(cui, c) == 0 and not pools.hierarchy.near(cui, c, EASY_DEPTH):
            easy.append(c)
            if len(easy) == k:
                return tuple(sorted(easy))
    return None


def tier_set(pools: TierPools, cui: str, tier: str) -> ConfusionCandidate | None:
    """The target's set of this tier, or None where the tier is infeasible for it."""
    if tier == "easy":
        got = easy_set(pools, cui)
    else:
        related = set(pools.hierarchy.ancestors_within(cui, RELATED_DEPTH)) | {cui}
        got = hard_set(pools, cui, related) if tier == "hard" else medium_set(pools, cui, related)
    return None if got is None else ConfusionCandidate(cui, pools.concepts[cui].name, tier, got)


def tier_order(i: int, one_tier_per_target: bool) -> list[str]:
    """The tiers target i tries, in order: with one tier per target, starting at i mod 3
    (and it takes the first feasible one); else every tier, hardest first."""
    return [TIERS[(i + j) % 3] for j in range(3)] if one_tier_per_target else ["hard", "medium", "easy"]
