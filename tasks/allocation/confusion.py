"""Confusion sets: a target concept plus look-alike distractors at three tiers.

  easy    another semantic type (another semantic group when the vocabulary has
          several), no common ancestor within EASY_DEPTH steps;
  medium  the same semantic type, no common ancestor within MEDIUM_DEPTH steps;
  hard    hierarchy siblings (a shared parent), the lexically closest first, topped
          up with lexically close concepts of the same type.

Pure functions over small in-memory maps; the caller decides which sets to keep.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from common.text import char_shingles, jaccard
from tasks.allocation.allocator import seeded_order

EASY_DEPTH = 3
MEDIUM_DEPTH = 2
HARD_MIN_SIMILARITY = 0.2
POOL = 300  # seeded sample of same-type candidates examined per target (keeps full UMLS tractable)


@dataclass(frozen=True)
class ConceptInfo:
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


class Hierarchy:
    def __init__(self, parents: list[tuple[str, str]]):
        self.parents: dict[str, set[str]] = defaultdict(set)
        self.children: dict[str, set[str]] = defaultdict(set)
        for child, parent in parents:
            self.parents[child].add(parent)
            self.children[parent].add(child)
        self._memo: dict[tuple[str, int], dict[str, int]] = {}  # candidates recur across targets

    def ancestors_within(self, cui: str, depth: int) -> dict[str, int]:
        key = (cui, depth)
        hit = self._memo.get(key)
        if hit is None:
            hit = self._memo[key] = self._ancestors_within(cui, depth)
        return hit

    def _ancestors_within(self, cui: str, depth: int) -> dict[str, int]:
        out = {cui: 0}
        frontier = {cui}
        for d in range(1, depth + 1):
            frontier = {p for c in frontier for p in self.parents.get(c, ())} - out.keys()
            for p in frontier:
                out[p] = d
        return out

    def near(self, a: str, b: str, depth: int) -> bool:
        """True if a and b share an ancestor within `depth` steps of each (or one contains the other)."""
        return bool(self.ancestors_within(a, depth).keys() & self.ancestors_within(b, depth).keys())

    def siblings(self, cui: str) -> set[str]:
        sib = {s for p in self.parents.get(cui, ()) for s in self.children.get(p, ())}
        sib.discard(cui)
        return sib


def similarity(a: ConceptInfo, b: ConceptInfo, cache: dict) -> float:
    for c in (a, b):
        if c.cui not in cache:
            cache[c.cui] = char_shingles(c.name, 3)
    return jaccard(cache[a.cui], cache[b.cui])


def build_candidates(concepts: dict[str, ConceptInfo], hierarchy: Hierarchy, k: int, seed: int,
                     targets: list[str], one_tier_per_target: bool = False) -> dict[str, list[ConfusionCandidate]]:
    """Every feasible (target, tier) set, each tier list in seeded order.

    With `one_tier_per_target`, target i tries tier i mod 3 first and stops at the first
    feasible tier: a target is used once anyway, and computing all three tiers for every
    candidate target tripled the work at paper scale."""
    cache: dict[str, set[str]] = {}
    by_tui: dict[str, list[str]] = defaultdict(list)
    # one seeded order per semantic type, computed once: each target then reads a window of
    # it at a target-specific offset (sorting the whole type per target is quadratic at scale)
    for c in sorted(concepts, key=lambda c: seeded_order(seed, f"pool:{c}")):
        by_tui[concepts[c].tui].append(c)
    group_sizes = Counter(c.group for c in concepts.values())
    # "another semantic group" only where the vocabulary really has several (full UMLS);
    # the open ontologies are nearly all disorders, so there it means another type
    by_group = sum(1 for g, n in group_sizes.items() if n >= max(50, len(concepts) // 20)) >= 2
    everyone = sorted(concepts, key=lambda c: seeded_order(seed, f"easy-pool:{c}"))
    tiers: dict[str, list[ConfusionCandidate]] = {"easy": [], "medium": [], "hard": []}
    def hard_set(cui, t, order, related):
        # hard: siblings, most similar first; then lexically close concepts of the same type
        sib = [s for s in hierarchy.siblings(cui) if s in concepts and s not in related]
        sib.sort(key=lambda s: (-similarity(t, concepts[s], cache), s))
        hard = sib[:k]
        if len(hard) < k:
            close = [c for c in same_type_window(cui, t, order, related) if c not in hard and not hierarchy.near(cui, c, 1)]
            close = [c for c in close if similarity(t, concepts[c], cache) >= HARD_MIN_SIMILARITY]
            close.sort(key=lambda c: (-similarity(t, concepts[c], cache), c))
            hard += close[: k - len(hard)]
        return tuple(hard) if len(hard) == k else None

    def same_type_window(cui, t, order, related):
        pool = by_tui[t.tui]
        start = int(order("pool")[:12], 16) % max(1, len(pool))
        size = POOL + len(related) + 1
        window = pool[start : start + size]
        if len(window) < size:  # wrap around, never past the start (no repeats)
            window += pool[: min(start, size - len(window))]
        return [c for c in window if c not in related][:POOL]

    def medium_set(cui, t, order, related, hard):
        # medium: same semantic type, far in the hierarchy; lexically related but below
        # every hard distractor, so that the tiers differ in kind, not only in degree
        if hard is None:
            hard = hard_set(cui, t, order, related) or ()
        ceiling = min((similarity(t, concepts[h], cache) for h in hard), default=1.0)
        far = [c for c in same_type_window(cui, t, order, related) if not hierarchy.near(cui, c, MEDIUM_DEPTH)]
        far = [c for c in far if similarity(t, concepts[c], cache) < ceiling]
        far.sort(key=lambda c: (-similarity(t, concepts[c], cache), order(c)))
        return tuple(sorted(far[:k])) if len(far) >= k else None

    def easy_set(cui, t, order):
        # easy: another type (another group where there are several), far in the hierarchy
        easy = []
        start = int(order("easy")[:12], 16) % len(everyone)
        for i in range(len(everyone)):  # walk the seeded order from a target-specific start
            c = everyone[(start + i) % len(everyone)]
            other = concepts[c].group != t.group if by_group else concepts[c].tui != t.tui
            if other and not hierarchy.near(cui, c, EASY_DEPTH):
                easy.append(c)
                if len(easy) == k:
                    return tuple(sorted(easy))
        return None

    names = ("easy", "medium", "hard")
    for i, cui in enumerate(targets):
        t = concepts[cui]
        order = lambda x, cui=cui: seeded_order(seed, f"{cui}:{x}")  # noqa: E731
        related = set(hierarchy.ancestors_within(cui, 50)) | {cui}
        wanted = [names[(i + j) % 3] for j in range(3)] if one_tier_per_target else ["hard", "medium", "easy"]
        hard = None
        for tier in wanted:
            if tier == "hard":
                hard = hard_set(cui, t, order, related)
                got = hard
            elif tier == "medium":
                got = medium_set(cui, t, order, related, hard)
            else:
                got = easy_set(cui, t, order)
            if got is not None:
                tiers[tier].append(ConfusionCandidate(cui, t.name, tier, got))
                if one_tier_per_target:
                    break
    for tier in tiers:
        tiers[tier].sort(key=lambda s: seeded_order(seed, f"{tier}:{s.target_cui}"))
    return tiers


def mean_similarity(sets: list[tuple[str, list[str]]]) -> float:
    """Mean target-distractor trigram Jaccard over (target_name, distractor_names) pairs."""
    vals = [jaccard(char_shingles(t, 3), char_shingles(d, 3)) for t, ds in sets for d in ds]
    return sum(vals) / len(vals) if vals else 0.0
