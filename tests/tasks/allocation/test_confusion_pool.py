"""Confusion sets computed on forked workers (`confusion.computed_on`): exactly the lists
the in-process path reads, in the same order, whatever the worker count and batch size,
read partially or whole; a worker's exception surfaces as itself and leaves no process."""
from __future__ import annotations

import itertools
import multiprocessing
import os

import pytest

from common.errors import InputError

from tasks.allocation import confusion
from tasks.allocation.allocator import Allocator, Realization
from tasks.allocation.confusion import build_candidates, computed_on, lazy_candidates, set_workers
from tasks.allocation.tiers import TierPools
from tests.tasks.allocation.test_confusion_tiers import DISORDER_TREE, DRUG_TREE, K, lexicon_of, rule_counts, synthetic_vocabulary

SEED = 11


@pytest.fixture(scope="module")
def vocab():
    concepts, hierarchy = synthetic_vocabulary()
    targets = sorted(concepts)
    lex = lexicon_of(concepts)
    eager = build_candidates(concepts, hierarchy, K, SEED, targets, lex, one_tier_per_target=True)
    return concepts, hierarchy, targets, lex, eager


def _lazy(vocab, batch):
    concepts, hierarchy, targets, lex, _ = vocab
    lazy = lazy_candidates(TierPools.build(concepts, hierarchy, lex, K, SEED), targets, one_tier_per_target=True)
    lazy["easy"]._sets.batch = batch
    return lazy


def test_the_crafted_vocabulary_has_sets_in_every_tier(vocab):
    concepts, hierarchy, targets, lex, eager = vocab
    # every concept of the two trees is a target: the roots, areas, branches and leaves
    disorders = 1 + len(DISORDER_TREE) + sum(len(b) + sum(map(len, b.values())) for b in DISORDER_TREE.values())
    drugs = 1 + len(DRUG_TREE) + sum(map(len, DRUG_TREE.values()))
    assert len(targets) == disorders + drugs
    counts = {t: len(v) for t, v in eager.items()}
    assert counts == rule_counts(concepts, hierarchy, lex, K, SEED, targets, one_tier_per_target=True)
    assert min(counts.values()) > 0


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("batch", [1, 3, 64])
def test_pool_sets_equal_the_in_process_sets_read_partially_then_whole(vocab, workers, batch, monkeypatch):
    eager = vocab[4]
    lazy = _lazy(vocab, batch)
    sets = lazy["easy"]._sets
    with computed_on(lazy, workers):
        assert (sets.pool is not None) == (workers > 1)
        if workers > 1:
            # everything is computed on the workers: the parent's own `_compute` is never called
            monkeypatch.setattr(confusion._TargetSets, "_compute", lambda self, i: pytest.fail("computed in the parent"))
        # an early stop (the allocator stops once a cell is full) inside the first batch and
        # across a batch boundary, in an interleaving of tiers, then whole lists twice
        assert list(itertools.islice(lazy["hard"], 1)) == eager["hard"][:1]
        assert list(itertools.islice(lazy["easy"], 9)) == eager["easy"][:9]
        if workers > 1:
            # no more than two batches of targets computed ahead of each tier's reader
            ahead = sum(1 for i in range(len(vocab[2])) if sets.known(i))
            read = len({i for t in lazy.values() for i in t._order[:t._pos]})
            assert read < ahead <= read + 2 * 2 * batch
        assert list(itertools.islice(lazy["medium"], 2)) == eager["medium"][:2]
        for _ in range(2):
            got = {t: list(v) for t, v in lazy.items()}
            assert got == eager
            assert [c.distractor_cuis for c in got["hard"]] == [c.distractor_cuis for c in eager["hard"]]
    assert sets.pool is None and multiprocessing.active_children() == []


def test_allocator_picks_the_same_sets_with_one_and_two_workers(vocab):
    concepts = vocab[0]
    picked = {}
    for workers in (1, 2):
        lazy = _lazy(vocab, 2)
        alloc = Allocator({("cd", "en"): 6, ("cd", "fr"): 6}, ["en", "fr"], {"en": 3, "fr": 3}, 0.9, 64, SEED)
        realize = lambda cui, lang: Realization(f"{concepts[cui].name} ({lang})", "terminology")  # noqa: E731
        with computed_on(lazy, workers):
            chosen = alloc.allocate_confusion_sets(lazy, realize, ["easy", "medium", "hard"],
                                                   stratum=lambda cand, real: "thyroid" in real.text)
        picked[workers] = [(a.id, a.text, c.tier, c.distractor_cuis) for a, c in chosen]
    # both cells full: a tier short of its share leaves it to the others (equal shares alone gave 9)
    assert len(picked[1]) == 12 and {p[0][3:5] for p in picked[1]} == {"en", "fr"}
    assert picked[1] == picked[2]


class Boom(ValueError):
    pass


def test_a_worker_exception_is_raised_as_itself_and_leaves_no_process(vocab, monkeypatch):
    parent = os.getpid()
    real = confusion._TargetSets._compute

    def compute(self, i):
        if i == 7:
            raise Boom(f"target {i} in process {os.getpid()}")
        return real(self, i)

    monkeypatch.setattr(confusion._TargetSets, "_compute", compute)  # before the fork: the workers have it
    lazy = _lazy(vocab, 3)
    with pytest.raises(Boom, match="target 7 in process") as err:
        with computed_on(lazy, 2):
            for tier in lazy.values():
                list(tier)
    assert f"process {parent}" not in str(err.value)  # raised in a worker, re-raised here
    assert multiprocessing.active_children() == []


def test_an_exception_in_the_reader_terminates_the_workers(vocab):
    lazy = _lazy(vocab, 3)
    with pytest.raises(KeyboardInterrupt):
        with computed_on(lazy, 2):
            assert len(multiprocessing.active_children()) == 2
            next(iter(lazy["easy"]))
            raise KeyboardInterrupt
    assert multiprocessing.active_children() == []
    # the lists still read in-process afterwards, the same sets
    assert {t: list(v) for t, v in lazy.items()} == vocab[4]


def test_worker_count(monkeypatch):
    for name in (confusion.WORKERS_ENV, "MMEDBENCH_WORKERS"):
        monkeypatch.delenv(name, raising=False)
    assert set_workers() == 1  # opt-in: one worker was faster at paper scale
    monkeypatch.setenv("MMEDBENCH_WORKERS", "3")
    assert set_workers() == 1  # the general knob is grounding's, not this one
    monkeypatch.setenv(confusion.WORKERS_ENV, "2")
    assert set_workers() == 2
    monkeypatch.setenv(confusion.WORKERS_ENV, "0")
    with pytest.raises(InputError, match="MMEDBENCH_ALLOC_WORKERS.*whole number"):
        set_workers()
    monkeypatch.setenv(confusion.WORKERS_ENV, "2")
    monkeypatch.setattr(multiprocessing.current_process(), "_config",
                        {**multiprocessing.current_process()._config, "daemon": True})
    assert set_workers() == 1


def test_targets_a_cell_cannot_take_are_not_computed_and_the_same_sets_are_picked(vocab, monkeypatch):
    """The allocator reads a tier past the targets it would reject whatever their sets (a
    concept its language cannot name, or one already taken) without computing them; it
    picks exactly the sets it picks from the fully computed lists."""
    concepts, eager = vocab[0], vocab[4]
    unnamed = {c for i, c in enumerate(sorted(concepts)) if i % 3 == 0}  # "fr" cannot name a third

    def realize(cui, lang):
        return None if lang == "fr" and cui in unnamed else Realization(f"{concepts[cui].name} ({lang})", "terminology")

    def pick(sets, languages):
        alloc = Allocator({("cd", l): 6 for l in languages}, languages, {"en": 3, "fr": 3}, 0.9, 64, SEED)
        chosen = alloc.allocate_confusion_sets(sets, realize, ["easy", "medium", "hard"],
                                               stratum=lambda cand, real: "thyroid" in real.text)
        return [(a.id, a.text, c.tier, c.distractor_cuis) for a, c in chosen]

    computed = []  # (target, tier) of every tier's set computed
    real = confusion._TargetSets._tier_set
    monkeypatch.setattr(confusion._TargetSets, "_tier_set",
                        lambda self, i, tier: computed.append((self.targets[i], tier)) or real(self, i, tier))
    whole = {t: list(v) for t, v in eager.items()}
    assert pick(_lazy(vocab, 64), ["fr"]) == pick(whole, ["fr"])
    assert computed and not {c for c, _ in computed} & unnamed  # read past, never computed
    computed.clear()
    picked = pick(_lazy(vocab, 64), ["fr", "en"])
    assert picked == pick(whole, ["fr", "en"]) and len(picked) == 12 and {p[0][3:5] for p in picked} == {"en", "fr"}
    assert {c for c, _ in computed} & unnamed  # English can name them: computed when English reads
    assert len(computed) == len(set(computed))  # each target's tier computed once


def test_a_tier_reader_computes_only_the_tiers_that_decide(vocab, monkeypatch):
    """One tier per target: a target is in the tier asked when that tier is feasible and
    every tier before it in the target's order is not. `in_tier` answers that from the
    cheapest tiers first and stops once it is settled, and its answers are the full sets'."""
    concepts, h, targets, lex, _ = vocab
    computed = []
    real = confusion._TargetSets._tier_set
    monkeypatch.setattr(confusion._TargetSets, "_tier_set",
                        lambda self, i, tier: computed.append((i, tier)) or real(self, i, tier))
    lazy = lazy_candidates(TierPools.build(concepts, h, lex, K, SEED), targets, one_tier_per_target=True)
    sets = lazy["medium"]._sets
    full = {i: sets._compute(i) for i in range(len(targets))}  # the reference, every target's first feasible tier
    sets._memo.clear()
    computed.clear()
    # a hard-first target (index 2 mod 3: hard, easy, medium) with an easy set is not medium,
    # whatever its hard set: only its easy set is computed
    i = next(i for i in range(2, len(targets), 3) if "medium" not in full[i] and real(sets, i, "easy") is not None)
    assert sets.in_tier(i, "medium") is None and computed == [(i, "easy")]
    # asked for the tier it is in, or any other, it answers as the full sets do, and the
    # full sets computed afterwards from what was computed are the same
    for i in range(len(targets)):
        for tier in ("easy", "medium", "hard"):
            assert sets.in_tier(i, tier) == full[i].get(tier), (i, tier)
        assert sets._compute(i) == full[i]
    assert len(computed) == len(set(computed))  # each (target, tier) at most once
    assert {t for _, t in computed} == {"easy", "medium", "hard"}


def test_a_tier_reader_of_every_feasible_tier_answers_as_the_full_sets(vocab):
    """Without one tier per target, a target is in every tier it is feasible for."""
    concepts, h, targets, lex, _ = vocab
    sets = lazy_candidates(TierPools.build(concepts, h, lex, K, SEED), targets, one_tier_per_target=False)["easy"]._sets
    full = [sets._compute(i) for i in range(len(targets))]
    assert sum(len(f) > 1 for f in full) > 5  # targets in more than one tier
    sets._memo.clear()
    for i in range(len(targets)):
        assert {t: sets.in_tier(i, t) for t in ("easy", "medium", "hard")} == {t: full[i].get(t) for t in ("easy", "medium", "hard")}


def test_a_tier_reader_after_a_whole_iteration_reads_the_memo(vocab):
    """Plain iteration of one tier computes (and memoises) every target's sets; another tier's
    reader then answers from the memo, with exactly the eager lists."""
    eager = vocab[4]
    lazy = _lazy(vocab, 64)
    assert list(lazy["easy"]) == eager["easy"]
    assert list(lazy["medium"].read(lambda cui: False)) == eager["medium"]
    assert list(lazy["hard"].read(lambda cui: False)) == eager["hard"]


def test_every_feasible_tier_unless_asked_for_one_tier_per_target(vocab):
    concepts, h, targets, lex, one_tier = vocab
    every = build_candidates(concepts, h, K, SEED, targets, lex, one_tier_per_target=False)
    assert build_candidates(concepts, h, K, SEED, targets, lex) == every
    lazy = lazy_candidates(TierPools.build(concepts, h, lex, K, SEED), targets)
    assert {t: list(v) for t, v in lazy.items()} == every
    assert sum(map(len, every.values())) > sum(map(len, one_tier.values()))
