"""Rank ranges on crafted per-query scores: a clear winner, a tie, and a chain (A~B, B~C, A>C)."""
from __future__ import annotations

import numpy as np
import pytest

from tasks.evaluation import stats
from tasks.leaderboard import ranks


def _ranges(scores: dict[str, list[float]]) -> dict[str, str]:
    vectors = {n: np.asarray(v) for n, v in scores.items()}
    pairs = ranks.pairwise(vectors, "test")
    means = {n: float(np.mean(v)) for n, v in vectors.items()}
    return {n: ranks.label(*r) for n, r in ranks.rank_ranges(means, pairs).items()}


def _chain() -> dict[str, list[float]]:
    """32 queries. On 0-15 only A and B differ: A - B = +0.5 on 12, -0.5 on 4 (p ~ 0.077);
    on 16-31 only B and C: B - C = +0.5 on 12, -0.5 on 4. So A - C = +0.5 on 24 and -0.5
    on 8 (p ~ 0.007; x3 by Holm ~ 0.021 < 0.05)."""
    a = [1.0] * 12 + [0.0] * 4 + [0.5] * 16
    b = [0.5] * 32
    c = [0.5] * 16 + [0.0] * 12 + [1.0] * 4
    return {"a": a, "b": b, "c": c}


def test_a_chain_gives_overlapping_ranges():
    scores = _chain()
    pairs = {(p.a, p.b): p for p in ranks.pairwise({n: np.asarray(v) for n, v in scores.items()}, "test")}
    assert not pairs[("a", "b")].significant and not pairs[("b", "c")].significant
    assert pairs[("a", "c")].significant and pairs[("a", "c")].p_adjusted < 0.05 <= pairs[("a", "b")].p_value
    assert _ranges(scores) == {"a": "1-2", "b": "1-3", "c": "2-3"}


def test_a_clear_winner_holds_first_place_alone_and_a_tie_shares_places():
    rng = np.random.default_rng(7)
    noise = rng.uniform(0, 0.3, size=40)
    scores = {"winner": list(noise + 0.7), "tie-1": list(noise), "tie-2": list(noise[::-1])}
    assert _ranges(scores) == {"winner": "1", "tie-1": "2-3", "tie-2": "2-3"}
    same = {"x": [0.2, 0.9, 0.4] * 10, "y": [0.2, 0.9, 0.4] * 10}
    assert _ranges(same) == {"x": "1-2", "y": "1-2"}


def test_holm_is_what_keeps_a_chain_link_from_counting():
    """Without the correction A > C at p ~ 0.007 and A > B at p ~ 0.077 would be read the same;
    with three pairs, Holm multiplies the smallest p by 3: a mutation dropping the correction
    (or flipping the comparison with alpha) changes the ranges."""
    scores = _chain()
    pairs = ranks.pairwise({n: np.asarray(v) for n, v in scores.items()}, "test")
    by = {(p.a, p.b): p for p in pairs}
    assert by[("a", "c")].p_adjusted == pytest.approx(3 * by[("a", "c")].p_value)
    assert 0.05 / 3 > by[("a", "c")].p_value


def test_the_weighted_vector_sums_to_the_macro_score_and_is_tested_as_such():
    cells = [[1.0, 0.0], [0.5, 0.5, 0.5, 0.5]]
    w = ranks.weighted(cells)
    assert w.sum() == pytest.approx((0.5 + 0.5) / 2)
    assert list(w) == [0.25, 0.0, 0.0625, 0.0625, 0.0625, 0.0625]
    pairs = ranks.pairwise({"a": w, "b": np.zeros(6)}, "k", summed=True)
    assert pairs[0].difference == pytest.approx(0.5)
    assert pairs[0].p_value == stats.randomization_p(w, np.zeros(6), "k|a|b")


def test_systems_on_different_queries_are_refused():
    with pytest.raises(ValueError):
        ranks.pairwise({"a": np.zeros(3), "b": np.zeros(4)}, "k")
