"""Bootstrap intervals, the paired randomization test and Holm's correction, against hand
computation and scipy's own permutation test; the pivot gap's item-difficulty label at its
floor."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from tasks.evaluation import stats
from tasks.evaluation.stage import DIFFICULTY_FLOOR, _pivot_gaps


def test_a_constant_score_has_a_zero_width_interval():
    assert stats.interval([0.4] * 25, "cd/fr/test") == pytest.approx((0.4, 0.4), abs=1e-15)
    assert stats.interval([], "cd/fr/test") is None


def test_the_interval_is_the_percentiles_of_the_means_of_its_seeded_draws():
    values = np.linspace(0, 1, 40) ** 2
    draws = stats.rng_for(f"bootstrap|xqa/ja/test|{len(values)}").integers(0, 40, size=(stats.RESAMPLES, 40))
    means = values[draws].mean(axis=1)
    assert stats.interval(values, "xqa/ja/test") == (float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5)))


def test_draws_depend_on_the_cell_not_on_the_call():
    values = np.arange(30) % 7 / 7
    a = stats.interval(values, "cd/es/test")
    assert stats.interval(values, "cd/es/test") == a  # seeded: reruns agree
    assert stats.interval(values, "cd/es/dev") != a  # another cell, other draws


def test_a_macro_interval_resamples_each_cell_within_itself():
    one = np.array([0.0, 1.0] * 10)
    assert stats.macro_interval([one], ["a"]) == stats.interval(one, "a")
    # a constant cell adds no spread: the macro mean of (x, 1) spans half x's interval, shifted
    lo, hi = stats.interval(one, "a")
    mlo, mhi = stats.macro_interval([one, np.ones(5)], ["a", "b"])
    assert (mlo, mhi) == pytest.approx(((lo + 1) / 2, (hi + 1) / 2))
    assert stats.macro_interval([one, []], ["a", "b"]) is None


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.25, 0.5, 1.0]), st.sampled_from([0.0, 0.5, 1.0])), min_size=2, max_size=9))
def test_the_exact_randomization_test_is_scipys_exact_permutation_test(pairs):
    a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    ours = stats.randomization_p(a, b, "k")
    ref = scipy_stats.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis), vectorized=True,
                                       permutation_type="samples", n_resamples=np.inf, alternative="two-sided").pvalue
    assert ours == pytest.approx(min(1.0, ref), abs=1e-12)


def test_the_randomization_test_by_hand():
    # differences +1, +1, +1: of the 8 sign patterns only +++ and --- reach |sum| 3
    assert stats.randomization_p([1, 1, 1], [0, 0, 0], "k") == 0.25
    assert stats.randomization_p([0.5] * 4, [0.5] * 4, "k") == 1.0  # no difference at all
    # above EXACT_MAX queries patterns are drawn; the observed one counts: never 0
    n = stats.EXACT_MAX + 27
    p = stats.randomization_p(np.ones(n), np.zeros(n), "k")
    assert p == 1 / (stats.PERMUTATIONS + 1)
    assert stats.randomization_p(np.ones(n), np.zeros(n), "k") == p  # seeded
    assert stats.randomization_p(np.zeros(n), np.zeros(n), "k") == 1.0


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1: 0.02, 0.03, 0.06, 0.04 -> monotone 0.06
    assert stats.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm([0.5, 0.9]) == [1.0, 1.0]  # capped at 1
    assert stats.holm([]) == []


def _pivot_case(pivot_scores: dict[str, float]):
    class S:
        def __init__(self, name):
            self.name = name

    class C:
        task, lang, name, qrels = "xqa", "ja", "xqa/ja", {"test": {"q1": {"d": 1}}}

    per_q = {}
    for name, score in pivot_scores.items():
        per_q[(name, "xqa", "ja", "test", "native")] = {"q1": {"ndcg_at_10": 0.0}}
        per_q[(name, "xqa", "ja", "test", "pivot")] = {"q1": {"ndcg_at_10": score}}
    return _pivot_gaps(per_q, [S(n) for n in pivot_scores], [C()], "test")


def test_a_cell_is_labelled_item_difficulty_only_when_every_system_is_below_the_floor():
    assert all(g.item_difficulty for g in _pivot_case({"bm25": 0.1, "dense": DIFFICULTY_FLOOR - 1e-6}))
    assert not any(g.item_difficulty for g in _pivot_case({"bm25": 0.1, "dense": DIFFICULTY_FLOOR}))
    assert not any(g.item_difficulty for g in _pivot_case({"bm25": 0.9}))
