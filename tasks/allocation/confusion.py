"""Confusion sets: a target concept plus look-alike distractors at three tiers.

  easy    another semantic type (another semantic group when the vocabulary has
          several), no common ancestor within EASY_DEPTH steps, and no word of the
          target's names anywhere in the distractor's entry;
  medium  the same semantic type, no common ancestor within MEDIUM_DEPTH steps, and
          some but few of the target's name words in the distractor's entry
          (0 < coverage < HARD_MIN_COVERAGE);
  hard    hierarchy siblings (a shared parent) whose entries cover at least
          HARD_MIN_COVERAGE of the target's name words, the most covering first,
          topped up with covering concepts of the same type.

Why words of entries and not only names: a retriever sees the query (a name of the
target in some language) against whole entries (name, definition, synonyms). Tiers
built from name-to-name character similarity alone were ordered by that similarity but
not for retrievers (real-data within-set BM25 accuracy fr 0.41 / 0.40 / 0.34, es 0.47 /
0.36 / 0.32). `coverage(target, d)` is the IDF-weighted share of the target's name words
(preferred name and synonyms) that occur in d's entry: what a lexical retriever can
confuse.

Pure functions over small in-memory maps; the caller decides which sets to keep.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass

from common.text import char_shingles, jaccard, word_tokens
from tasks.allocation.allocator import seeded_order

EASY_DEPTH = 3
MEDIUM_DEPTH = 2
HARD_MIN_COVERAGE = 0.5
MEDIUM_MAX_COVERAGE = 0.2
MEDIUM_CONFUSERS = 1  # look-alikes in a medium set (hard: all k; easy: none)
POOL = 300  # seeded sample of same-type candidates examined per target (keeps full UMLS tractable)


@dataclass(frozen=True)
class ConceptInfo:
    cui: str
    tui: str
    group: str
    name: str


class Lexicon:
    """What a lexical retriever over English entries can match, per concept.

    `entries[cui]`: the texts of the concept's English entry (preferred name, synonyms,
    definition); `names[cui]`: its names in every build language (the queries a set may
    get). A concept's *name words* are the words of its names, in any language, that occur
    in some English entry: French "syndrome de marfan" contributes "syndrome" and "marfan",
    Chinese contributes nothing. IDF is over entries; stop-words never count."""

    def __init__(self, entries: dict[str, list[str]], names: dict[str, list[str]], stopwords: frozenset[str] = frozenset()):
        self.entries, self.names, self.stopwords = entries, names, stopwords
        self._entry_words = {c: self._words(texts) for c, texts in sorted(entries.items())}
        df: Counter = Counter()
        for words in self._entry_words.values():
            df.update(words)
        n = max(1, len(entries))
        self.idf = {w: math.log(1 + n / c) for w, c in df.items()}
        self._name_words: dict[str, frozenset[str]] = {}
        self._postings: dict[str, list[str]] | None = None

    def _words(self, texts) -> frozenset[str]:
        return frozenset(w for t in texts for w in word_tokens(t) if w not in self.stopwords and not w.isdigit())

    def words_of(self, text: str) -> frozenset[str]:
        return self._words([text])

    def name_words(self, cui: str) -> frozenset[str]:
        hit = self._name_words.get(cui)
        if hit is None:
            hit = self._name_words[cui] = frozenset(w for w in self._words(self.names.get(cui, ())) if w in self.idf)
        return hit

    def entry_words(self, cui: str) -> frozenset[str]:
        return self._entry_words.get(cui, frozenset())

    def look_alikes(self, target: str, limit: int = 3) -> list[str]:
        """Concepts whose entries hold the target's rarest name words (the `limit` of highest
        IDF; words in more than 2% of entries say nothing and are skipped): where a lexical
        retriever's confusions come from, whatever the hierarchy says."""
        if self._postings is None:
            postings: dict[str, list[str]] = defaultdict(list)
            for cui in sorted(self._entry_words):
                for w in self._entry_words[cui]:
                    postings[w].append(cui)
            cap = max(50, len(self._entry_words) // 50)
            self._postings = {w: v for w, v in postings.items() if len(v) <= cap}
        words = sorted(self.name_words(target), key=lambda w: (-self.idf.get(w, 0.0), w))
        found: set[str] = set()
        for w in [w for w in words if w in self._postings][:limit]:
            found.update(self._postings[w])
        found.discard(target)
        return sorted(found)

    def coverage(self, target: str, other: str) -> float:
        """IDF-weighted share of the target's name words found in the other's entry."""
        words = self.name_words(target)
        total = sum(self.idf.get(w, 0.0) for w in words)
        if total == 0:
            return 0.0
        return sum(self.idf.get(w, 0.0) for w in words & self.entry_words(other)) / total


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
                     targets: list[str], lexicon: Lexicon, one_tier_per_target: bool = False,
                     excluded: frozenset[str] = frozenset()) -> dict[str, list[ConfusionCandidate]]:
    """Every feasible (target, tier) set, each tier list in seeded order.

    With `one_tier_per_target`, target i tries tier i mod 3 first and stops at the first
    feasible tier: a target is used once anyway, and computing all three tiers for every
    candidate target tripled the work at paper scale. Concepts in `excluded` (owned by
    another cell, when overlap covers every role) are never distractors."""
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
    everyone = sorted((c for c in concepts if c not in excluded), key=lambda c: seeded_order(seed, f"easy-pool:{c}"))
    cover = lexicon.coverage
    tiers: dict[str, list[ConfusionCandidate]] = {"easy": [], "medium": [], "hard": []}
    def hard_set(cui, t, order, related):
        # hard: siblings, most similar first; then lexically close concepts of the same type
        sib = [s for s in hierarchy.siblings(cui) if s in concepts and s not in related and s not in excluded
               and cover(cui, s) >= HARD_MIN_COVERAGE]
        sib.sort(key=lambda s: (-cover(cui, s), -similarity(t, concepts[s], cache), s))
        hard = sib[:k]
        if len(hard) < k:
            pool = set(same_type_window(cui, t, order, related)) | {
                c for c in lexicon.look_alikes(cui) if c in concepts and concepts[c].tui == t.tui and c not in related and c not in excluded}
            close = [c for c in sorted(pool) if c not in hard and not hierarchy.near(cui, c, 1)]
            close = [c for c in close if cover(cui, c) >= HARD_MIN_COVERAGE]
            close.sort(key=lambda c: (-cover(cui, c), -similarity(t, concepts[c], cache), c))
            hard += close[: k - len(hard)]
        return tuple(hard) if len(hard) == k else None

    def same_type_window(cui, t, order, related):
        pool = by_tui[t.tui]
        start = int(order("pool")[:12], 16) % max(1, len(pool))
        size = POOL + len(related) + 1
        window = pool[start : start + size]
        if len(window) < size:  # wrap around, never past the start (no repeats)
            window += pool[: min(start, size - len(window))]
        return [c for c in window if c not in related and c not in excluded][:POOL]

    def medium_set(cui, t, order, related, hard):
        # medium: same semantic type, far in the hierarchy; one lexical look-alike (covering
        # as much of the target's name words as a hard distractor does), the others sharing
        # little: one confuser where hard has k and easy none
        confusers = [c for c in lexicon.look_alikes(cui) if c in concepts and c not in related and c not in excluded
                     and concepts[c].tui == t.tui and cover(cui, c) >= HARD_MIN_COVERAGE
                     and not hierarchy.near(cui, c, MEDIUM_DEPTH)]
        far = [c for c in same_type_window(cui, t, order, related) if not hierarchy.near(cui, c, MEDIUM_DEPTH)]
        others = sorted((c for c in far if cover(cui, c) < MEDIUM_MAX_COVERAGE), key=lambda c: (-similarity(t, concepts[c], cache), order(c)))
        n = min(MEDIUM_CONFUSERS, k - 1)
        if len(confusers) < n or len(others) < k - n:
            return None
        confusers.sort(key=lambda c: (-cover(cui, c), order(c)))
        return tuple(sorted([*confusers[:n], *others[: k - n]]))

    def easy_set(cui, t, order):
        # easy: another type (another group where there are several), far in the hierarchy
        easy = []
        start = int(order("easy")[:12], 16) % len(everyone)
        for i in range(len(everyone)):  # walk the seeded order from a target-specific start
            c = everyone[(start + i) % len(everyone)]
            other = concepts[c].group != t.group if by_group else concepts[c].tui != t.tui
            if other and cover(cui, c) == 0 and not hierarchy.near(cui, c, EASY_DEPTH):
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
