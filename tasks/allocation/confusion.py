"""Confusion sets computed when they are read: each target's sets by the tier rules
(tasks/allocation/tiers.py), memoised, in each tier's seeded order, optionally a batch
ahead on forked worker processes.

    lazy_candidates(TierPools.build(...), targets, ...)  # tier -> LazyTier
    build_candidates(...)                                                 # tier -> list, all computed
    with computed_on(sets_by_tier, workers): ...                          # the same lists, on workers

A target's sets depend on the target alone, so every way of computing them gives the same
lists in the same order, whatever the worker count.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import replace

from common.workers import fork_pool, worker_count
from schemas.records import TIERS
from tasks.allocation.allocator import seeded_order
from tasks.allocation.hierarchy import Hierarchy
from tasks.allocation.lexicon import LanguageNames, Lexicon, stop_words
from tasks.allocation.tiers import ConceptInfo, ConfusionCandidate, TierPools, tier_order, tier_set


def build_candidates(concepts: dict[str, ConceptInfo], hierarchy: Hierarchy, k: int, seed: int,
                     targets: list[str], lexicon: Lexicon, one_tier_per_target: bool = False,
                     excluded: frozenset[str] = frozenset()) -> dict[str, list[ConfusionCandidate]]:
    """Every feasible (target, tier) set, each tier list in seeded order.

    With `one_tier_per_target`, target i tries tier i mod 3 first and stops at the first
    feasible tier: a target is used once anyway, and computing all three tiers for every
    candidate target tripled the work at paper scale. Concepts in `excluded` (owned by
    another cell, when overlap covers every role) are never distractors."""
    lazy = lazy_candidates(TierPools.build(concepts, hierarchy, lexicon, k, seed, excluded), targets, one_tier_per_target)
    return {tier: list(sets) for tier, sets in lazy.items()}


def lazy_candidates(pools: TierPools, targets: list[str], one_tier_per_target: bool = False, names_in=None,
                    languages: tuple[str, ...] = ()) -> dict[str, "LazyTier | ByLanguage"]:
    """`build_candidates`' tier lists, each target's sets computed only when a reader of a
    tier list gets to it. A target's sets depend on nothing but the target (and its index),
    so the lists hold exactly what `build_candidates` returns, in the same order; the
    allocator stops reading once its cells are full, and at paper scale it reads a fraction
    of the ~60k targets drawn (computing all of them was most of the stage's time).

    With `names_in(cui, lang)` and `languages`, each language gets its own lists (a
    `ByLanguage` per tier), made with the lexicon's name words of that language and English
    (`LanguageNames`): a set is read by one language's query, and how close its distractors
    are lexically is how close they are to what that query can match. English-only name
    words made the French medium tier no harder than easy for BM25 (real test
    accuracy@1 0.545 / 0.556): its look-alikes shared the English name's rare words, which
    the French query does not have. `pools`: `TierPools.build(concepts, hierarchy, lexicon,
    k, seed, excluded)`."""
    seed, lexicon = pools.seed, pools.lexicon
    order = {}
    for tier in TIERS:
        keys = [seeded_order(seed, f"{tier}:{cui}") for cui in targets]
        # stable: equal keys (a target listed twice) keep their target order, as a stable list sort does
        order[tier] = sorted(range(len(targets)), key=keys.__getitem__)
    if names_in is None:
        sets = _TargetSets(pools, targets, one_tier_per_target)
        return {tier: LazyTier(tier, order[tier], sets) for tier in TIERS}
    by_lang = {lang: _TargetSets(replace(pools, lexicon=lexicon.with_names(
                   LanguageNames(lang, names_in, lexicon.names, stop_words(lang)))), targets, one_tier_per_target)
               for lang in languages}
    return {tier: ByLanguage({lang: LazyTier(tier, order[tier], sets) for lang, sets in by_lang.items()}) for tier in TIERS}


class ByLanguage:
    """One tier's lists, one per language (`lazy_candidates` with `names_in`): the allocator
    reads `for_language(lang)` for a language's cell."""

    def __init__(self, lists: dict[str, "LazyTier"]):
        self.lists = lists

    def for_language(self, lang: str) -> "LazyTier":
        return self.lists[lang]


class LazyTier:
    """One tier's sets in seeded order, computed as they are read (and kept: every language
    re-reads the lists from the start). With worker processes (`computed_on`), the targets
    ahead of the reader are computed on them a batch at a time, one batch ahead."""

    def __init__(self, tier: str, order: list[int], sets: "_TargetSets"):
        self.tier, self._order, self._sets = tier, order, sets
        self._pos = 0
        self._done: list[ConfusionCandidate] = []
        self._sent = 0  # positions of `_order` before this one are computed or on the workers
        self._mark = 0  # where the batch sent last starts: reaching it sends the next one

    def __iter__(self):
        i = 0
        while True:
            while i >= len(self._done) and self._pos < len(self._order):
                if self._sets.pool is not None and self._pos >= self._mark:
                    self._send()
                got = self._sets.of(self._order[self._pos]).get(self.tier)
                self._pos += 1
                if got is not None:
                    self._done.append(got)
            if i >= len(self._done):
                return
            yield self._done[i]
            i += 1

    def read(self, passed_over):
        """The tier's candidates in order, as iterating it gives them, except that a target
        `passed_over(cui)` is skipped without its sets being computed (a reader that would
        reject it whatever its distractors: its cell cannot name it, or it is taken), and
        of the others only the tiers that decide whether it is in this one (`in_tier`). The
        sets left uncomputed are computed when another reader gets to them. With worker
        processes, which compute ahead in order, this is plain iteration."""
        sets = self._sets
        if sets.pool is not None:
            yield from self
            return
        for i in self._order:
            if passed_over(sets.targets[i]):
                continue
            got = sets.in_tier(i, self.tier)
            if got is not None:
                yield got

    def _send(self) -> None:
        """Send the workers the next batch of targets nobody has computed or sent, and keep one
        batch in flight beyond the one being read (the reader then rarely waits). At most two
        batches per tier are computed and never read, where the allocator stops."""
        if self._sent <= self._pos:  # nothing sent ahead: send the batch to read now
            self._sent = self._pos
            self._send_batch()
        self._mark = self._sent
        self._send_batch()  # and the next, computed while the reader reads the first

    def _send_batch(self) -> None:
        sets, batch = self._sets, []
        while self._sent < len(self._order) and len(batch) < sets.batch:
            i = self._order[self._sent]
            if not sets.known(i):
                batch.append(i)
            self._sent += 1
        sets.send(batch)


class _TargetSets:
    """The sets of each target (by its index in `targets`), memoised."""

    def __init__(self, pools: TierPools, targets: list[str], one_tier_per_target: bool):
        self.pools, self.targets, self.one_tier = pools, targets, one_tier_per_target
        self._memo: dict[int, dict[str, ConfusionCandidate]] = {}
        self.pool = None  # worker processes (`computed_on`), or None: computed here when read
        self.batch = SET_BATCH
        self._pending: dict[int, object] = {}  # target -> the pending answer of the chunk computing it
        # target -> the tiers computed so far (a set, or None: infeasible), while its full
        # result is not: `in_tier` computes only the tiers that decide its answer
        self._tiers: dict[int, dict[str, ConfusionCandidate | None]] = {}

    def of(self, i: int) -> dict[str, ConfusionCandidate]:
        hit = self._memo.get(i)
        if hit is None:
            pending = self._pending.get(i)
            if pending is None:
                hit = self._memo[i] = self._compute(i)
            else:
                for j, got in pending.get():  # a worker's exception is raised here
                    self._memo[j] = got
                    del self._pending[j]
                hit = self._memo[i]
        return hit

    def in_tier(self, i: int, tier: str) -> ConfusionCandidate | None:
        """`self.of(i).get(tier)`, computing only the tiers that decide it. With one tier per
        target, the target's set is the first feasible tier of its order: it is in `tier`
        when `tier` is feasible and every tier before it is not. Each tier's feasibility
        depends on the target alone, so they are tried in a fixed order, easy first (0.1 ms,
        and feasible for almost every target), and the answer stops at the first that
        settles it: a reader of the scarce medium tier learns that most targets are not
        medium from their easy set alone."""
        hit = self._memo.get(i)
        if hit is not None or i in self._pending:
            return self.of(i).get(tier)
        order = self._order_of(i)
        if tier not in order:
            return None
        deciding = order[:order.index(tier) + 1] if self.one_tier else [tier]
        for t in sorted(deciding, key=TIERS.index):  # easy, medium, hard
            got = self._tier(i, t)
            if (got is None) == (t == tier):  # the tier asked is infeasible, or one before it is feasible
                return None
        return self._tier(i, tier)

    def _order_of(self, i: int) -> list[str]:
        return tier_order(i, self.one_tier)

    def _tier(self, i: int, tier: str) -> ConfusionCandidate | None:
        known = self._tiers.setdefault(i, {})
        if tier not in known:
            known[tier] = self._tier_set(i, tier)
        return known[tier]

    def known(self, i: int) -> bool:
        """Computed, or being computed on a worker."""
        return i in self._memo or i in self._pending

    def send(self, targets: list[int]) -> None:
        """Have the workers compute these targets' sets, `_CHUNK` targets a message (the
        pool hands messages out in the order sent)."""
        for j in range(0, len(targets), _CHUNK):
            part = targets[j:j + _CHUNK]
            pending = self.pool.apply_async(_compute_chunk, (part,))
            for i in part:
                self._pending[i] = pending

    def _compute(self, i: int) -> dict[str, ConfusionCandidate]:
        """Target i's sets: the first feasible tier of its order (one tier per target), or
        every feasible tier."""
        out: dict[str, ConfusionCandidate] = {}
        for tier in self._order_of(i):
            got = self._tier(i, tier)
            if got is not None:
                out[tier] = got
                if self.one_tier:
                    break
        self._tiers.pop(i, None)
        return out

    def _tier_set(self, i: int, tier: str) -> ConfusionCandidate | None:
        """Target i's set of this tier, by the rules (tasks/allocation/tiers.py)."""
        return tier_set(self.pools, self.targets[i], tier)


SET_BATCH = 64  # targets per batch sent to the workers (two batches ahead of a tier's reader at most)
_CHUNK = 4  # targets per message to a worker: a few tens of ms of work at paper scale
WORKERS_ENV = "MMEDBENCH_ALLOC_WORKERS"
_FORKED: list = []  # the _TargetSets a forked worker computes with (set just before the fork)


def set_workers() -> int:
    """Worker processes for confusion sets: $MMEDBENCH_ALLOC_WORKERS (1 in a daemonic
    process or a Dask worker), else 1. Opt-in: once the sets cost ~1.3 ms a target, two
    workers at paper scale took more wall time than one (179 vs 131 s, 188 vs 130 CPU s),
    each worker refilling the memos (title shingles, hierarchy neighbourhoods, entry words)
    that the in-process path fills once."""
    if not os.environ.get(WORKERS_ENV, "").strip():
        return 1
    return worker_count(WORKERS_ENV)


def _compute_chunk(targets: list[int]) -> list[tuple[int, dict[str, ConfusionCandidate]]]:
    """In a forked worker: the sets of these targets, with the structures inherited from the parent."""
    sets = _FORKED[0]
    return [(i, sets._compute(i)) for i in targets]


@contextmanager
def computed_on(sets_by_tier: dict[str, LazyTier], workers: int):
    """Within the block, `lazy_candidates`' tier lists are computed on `workers` processes
    forked here (after the lexicon, hierarchy and pools exist, which they share
    copy-on-write), a batch of targets ahead of each tier's reader. A target's sets are a
    function of the target alone, so the lists are what the in-process path reads, in the
    same order, whatever the worker count. The pool is terminated on leaving the block,
    normally (sets computed ahead and never read are dropped) or on an exception (a
    worker's is re-raised as itself)."""
    tiers = list(sets_by_tier.values())
    if workers <= 1 or not tiers or not all(isinstance(t, LazyTier) for t in tiers):
        # per-language lists (`ByLanguage`) are computed in process
        yield
        return
    sets = tiers[0]._sets
    _FORKED[:] = [sets]
    try:
        pool = fork_pool(workers, what="confusion sets", env=WORKERS_ENV)  # the lexicon and the allocator's structures, shared
    finally:
        _FORKED[:] = []
    sets.pool = pool
    try:
        yield
    finally:
        sets.pool = None
        sets._pending.clear()
        pool.terminate()
        pool.join()
