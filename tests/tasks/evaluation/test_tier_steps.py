"""Tier steps of concept discrimination: the unpaired one-sided permutation test against hand
enumeration, enumeration in exact arithmetic and the hypergeometric tail (its sampled path),
the verdict at its boundaries, the record of a cell's ladder, and the results.md table."""
from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from schemas.results import CellResult, EvaluationResults, Retriever, Statistics, TierStep, TierSteps
from tasks.evaluation import stats
from tasks.evaluation.report import tier_step_lines
from tasks.evaluation.tier_steps import MIN_SETS, step_key, step_verdict, tier_steps


# --- the permutation p by hand ----------------------------------------------------------------

@pytest.mark.parametrize("upper, lower, expected", [
    # pooled 1,1,0,0,0; 10 ways to label 3 of them upper; the upper sum reaches the observed 2
    # when both 1s are upper with any of the 3 zeros: 3 of 10
    ([1, 1, 0], [0, 0], 0.3),
    # 20 labellings, only the observed one puts all three 1s upper: exactly alpha
    ([1, 1, 1], [0, 0, 0], 0.05),
    # pooled 1, .5, 0, 0: upper sums 1.5 (once), 1 (twice), .5 (twice), 0 (once): 1 of 6 reach 1.5
    ([1, 0.5], [0, 0], 1 / 6),
    # a tie's expectation as a score: pooled 1/3, 1, 0; upper sums 4/3, 1/3, 1: 1 of 3 reach 4/3
    ([1 / 3, 1], [0], 1 / 3),
    # one-sided: the upper tier doing worse is no evidence for "upper > lower"
    ([0, 0], [1, 1, 0], 1.0),
    ([0, 0, 0], [1, 1, 1], 1.0),
    ([0.5], [0.5, 0.5], 1.0),  # no difference at all
])
def test_the_permutation_p_by_hand(upper, lower, expected):
    assert stats.permutation_p_greater(upper, lower, "k") == pytest.approx(expected, abs=1e-15)


def test_p_exactly_at_alpha_is_alpha_to_the_last_bit():
    assert stats.permutation_p_greater([1, 1, 1], [0, 0, 0], "k") == stats.ALPHA


def test_an_empty_group_is_refused():
    with pytest.raises(ValueError, match="both groups"):
        stats.permutation_p_greater([], [1.0], "k")


def exact_p(upper: list[Fraction], lower: list[Fraction]) -> Fraction:
    """The one-sided p by enumeration in exact arithmetic: of all ways to label len(upper) of
    the pooled scores "upper", the share whose mean difference reaches the observed one."""
    pooled, k = upper + lower, len(upper)

    def diff(chosen: tuple[int, ...]) -> Fraction:
        up = [pooled[i] for i in chosen]
        down = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        return sum(up) / len(up) - sum(down) / len(down)

    patterns = list(combinations(range(len(pooled)), k))
    observed = diff(tuple(range(k)))
    return Fraction(sum(1 for c in patterns if diff(c) >= observed), len(patterns))


# The reference is exact rational arithmetic, not scipy's permutation_test: with per-set scores
# such as 1/3 and an observed difference of 0, scipy compares 5.6e-17 with 0.0 and counts
# 30 of 56 labellings for upper [0, 1/4, 1] vs lower [0, 1/4, 1/2, 1/3, 1], where 34 reach it.
SCORES = [Fraction(0), Fraction(1, 4), Fraction(1, 3), Fraction(1, 2), Fraction(1)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(SCORES), min_size=1, max_size=6), st.lists(st.sampled_from(SCORES), min_size=1, max_size=6))
def test_the_exact_path_is_the_enumeration_in_exact_arithmetic(upper, lower):
    ours = stats.permutation_p_greater([float(x) for x in upper], [float(x) for x in lower], "k")
    assert ours == pytest.approx(float(exact_p(upper, lower)), abs=1e-12)


def test_where_scipy_miscounts_a_zero_difference():
    upper = [Fraction(0), Fraction(1, 4), Fraction(1)]
    lower = [Fraction(0), Fraction(1, 4), Fraction(1, 2), Fraction(1, 3), Fraction(1)]
    assert exact_p(upper, lower) == Fraction(34, 56)
    assert stats.permutation_p_greater([float(x) for x in upper], [float(x) for x in lower], "k") == pytest.approx(34 / 56)


# --- the sampled path ------------------------------------------------------------------------------

# 7 of 10 upper sets right against 3 of 10: C(20, 10) = 184756 labellings, too many to enumerate.
# With 0/1 scores the upper sum is hypergeometric: p = sum_{x>=7} C(10,x) C(10,10-x) / C(20,10)
# = (120*120 + 45*45 + 10*10 + 1) / 184756 = 16526 / 184756 (Fisher's exact test, one-sided).
UPPER, LOWER = [1.0] * 7 + [0.0] * 3, [1.0] * 3 + [0.0] * 7
EXACT = 16526 / 184756


def test_the_sampled_path_is_close_to_the_exact_tail():
    assert EXACT == pytest.approx(scipy_stats.hypergeom.sf(6, 20, 10, 10))
    assert math.comb(20, 10) > stats.EXACT_MAX_PATTERNS  # so the test draws
    p = stats.permutation_p_greater(UPPER, LOWER, "cd/fr/test|bm25|easy>medium")
    se = (EXACT * (1 - EXACT) / stats.PERMUTATIONS) ** 0.5
    assert abs(p - EXACT) < 4 * se


def test_the_sampled_path_is_seeded_by_its_key():
    key = step_key("fr", "test", "bm25", "easy", "medium")
    assert key == "cd/fr/test|bm25|easy>medium"
    p = stats.permutation_p_greater(UPPER, LOWER, key)
    assert stats.permutation_p_greater(UPPER, LOWER, key) == p  # reruns agree
    # the value drawn with the project's seed (a change of seed, key or draw changes it)
    assert p == 912 / (stats.PERMUTATIONS + 1)
    assert stats.permutation_p_greater(UPPER, LOWER, step_key("fr", "test", "dense-minilm", "easy", "medium")) != p
    # the observed labelling counts: a shuffle never yields a p of 0
    assert stats.permutation_p_greater([1.0] * 40, [0.0] * 40, key) == 1 / (stats.PERMUTATIONS + 1)


# --- the verdict ------------------------------------------------------------------------------------

@pytest.mark.parametrize("upper_sets, lower_sets, p, verdict", [
    (MIN_SETS - 1, 500, 0.0001, "too few sets"),  # 79 sets: not read, however small p is
    (500, MIN_SETS - 1, 0.0001, "too few sets"),
    (MIN_SETS, MIN_SETS, 0.0001, "beyond noise"),  # 80 sets in both: read
    (MIN_SETS, MIN_SETS, 0.049999, "beyond noise"),
    (MIN_SETS, MIN_SETS, 0.05, "within noise"),  # p exactly at alpha is not beyond noise
    (MIN_SETS, MIN_SETS, 0.6, "within noise"),
    (0, MIN_SETS, None, "too few sets"),  # an empty tier has no p
])
def test_the_verdict_at_its_boundaries(upper_sets, lower_sets, p, verdict):
    assert MIN_SETS == 80
    assert step_verdict(upper_sets, lower_sets, p) == verdict


# --- a cell's ladder ----------------------------------------------------------------------------

def test_a_ladder_of_few_sets_is_computed_but_not_read():
    got = tier_steps("bm25", "fr", "test", {"easy": [1.0, 1.0, 1.0], "medium": [0.0, 0.0, 0.0], "hard": []})
    assert got == TierSteps(retriever="bm25", lang="fr", split="test", strictly_ordered=False, steps=[
        TierStep(upper="easy", lower="medium", upper_sets=3, lower_sets=3, difference=1.0, p_value=0.05,
                 verdict="too few sets"),
        TierStep(upper="medium", lower="hard", upper_sets=3, lower_sets=0, difference=None, p_value=None,
                 verdict="too few sets")])


def test_a_ladder_of_80_sets_per_tier_is_read():
    per_set = {"easy": [1.0] * 80, "medium": [0.0] * 80, "hard": [0.0] * 80}
    got = tier_steps("bm25", "ru", "test", per_set)
    easy, medium = got.steps
    # no shuffle of 80 ones among 160 sets puts all of them upper (1 in C(160, 80)): p = 1 / 10001
    assert (easy.difference, easy.p_value, easy.verdict) == (1.0, round(1 / 10001, 6), "beyond noise")
    # equal tiers: every shuffle reaches the observed sum, p = 1
    assert (medium.difference, medium.p_value, medium.verdict) == (0.0, 1.0, "within noise")
    assert not got.strictly_ordered  # medium == hard is not medium > hard


@pytest.mark.parametrize("per_set, ordered", [
    ({"easy": [1.0, 1.0], "medium": [0.5, 0.5], "hard": [0.0, 1 / 3]}, True),
    ({"easy": [1.0, 0.0], "medium": [0.5, 0.5], "hard": [0.0, 1 / 3]}, False),  # easy == medium
    ({"easy": [1.0], "medium": [0.5], "hard": [1.0]}, False),  # hard above medium
    ({"easy": [1.0], "medium": [0.5], "hard": []}, False),  # a tier without a set orders nothing
])
def test_strictly_ordered_on_the_point_values(per_set, ordered):
    assert tier_steps("bm25", "fr", "test", per_set).strictly_ordered is ordered


@pytest.mark.parametrize("tied, chance", [(0, False), (2, False), (3, True), (4, True)])
def test_a_ladder_is_at_chance_when_more_than_half_its_sets_tie_every_member(tied, chance):
    # four sets in all; two of four is half, not more than half
    got = tier_steps("bm25", "ru", "test", {"easy": [0.25, 0.25], "medium": [0.25], "hard": [1.0]}, all_tied=tied)
    assert (got.all_tied, got.at_chance, got.strictly_ordered) == (tied, chance, False)


@pytest.mark.parametrize("hits, chance", [(0, True), (30, True), (39, True), (40, False), (60, False)])
def test_a_ladder_is_at_chance_when_its_accuracy_is_not_above_the_blind_guess_beyond_noise(hits, chance):
    # 120 sets of four: the blind guess is 30 hits, its standard error sqrt(120 * 0.25 * 0.75) = 4.74
    # hits; 39 hits is z 1.90 (at chance), 40 is z 2.11 (above); none of these sets ties every member
    per_set = {"easy": [1.0] * min(hits, 40) + [0.0] * (40 - min(hits, 40)),
               "medium": [1.0] * max(0, hits - 40) + [0.0] * (40 - max(0, hits - 40)), "hard": [0.0] * 40}
    got = tier_steps("bm25", "xx", "test", per_set, all_tied=0, guesses=120 * 0.25)
    assert got.at_chance is chance


def test_an_ordered_ladder_at_chance_is_still_strictly_ordered_and_says_so():
    # 3 of 5 sets tie every member (0.25 each); the order comes from the other two
    got = tier_steps("bm25", "ru", "test", {"easy": [1.0, 0.25], "medium": [0.25, 0.25], "hard": [0.0]}, all_tied=3)
    assert (got.strictly_ordered, got.at_chance) == (True, True)


def test_the_p_value_is_rounded_to_six_decimals():
    # [1, 0] above [0]: 2 of the 3 labellings reach the observed upper sum, p = 2/3 exactly
    got = tier_steps("bm25", "fr", "test", {"easy": [1.0, 0.0], "medium": [0.0], "hard": []})
    assert got.steps[0].p_value == 0.666667


def test_the_difference_is_upper_minus_lower_before_rounding():
    got = tier_steps("bm25", "fr", "test", {"easy": [1.0, 0.0, 0.0], "medium": [0.0, 0.0], "hard": [1.0]})
    assert [s.difference for s in got.steps] == [round(1 / 3, 6), -1.0]


# --- results.md -------------------------------------------------------------------------------------

def _results(steps: list[TierSteps]) -> EvaluationResults:
    return EvaluationResults(
        release="0.1.0", build_id="ab" * 32, splits=["test"], depth=100, measures={}, macro=[], tiers=[],
        retrievers=[Retriever(name=n, kind=k, parameters={}) for n, k in (("bm25", "bm25"), ("minilm", "dense"))],
        cells=[CellResult(retriever="bm25", task="cd", lang=l, split="test", queries=1, documents=1) for l in ("fr", "en")],
        tier_steps=steps, pivot_gaps=[], gap_means=[], pivotless={}, comparisons=[], inputs={},
        statistics=Statistics(confidence=0.95, bootstrap_resamples=1000, randomization_permutations=10000,
                              exact_up_to_queries=13, correction="holm", alpha=0.05, seed=1, difficulty_floor=0.3,
                              tier_step_exact_up_to_patterns=8192, tier_step_min_sets=80))


def test_the_results_md_table_lines():
    fr = TierSteps(retriever="minilm", lang="fr", split="test", strictly_ordered=True, steps=[
        TierStep(upper="easy", lower="medium", upper_sets=120, lower_sets=95, difference=0.083333, p_value=0.0123,
                 verdict="beyond noise"),
        TierStep(upper="medium", lower="hard", upper_sets=95, lower_sets=110, difference=0.02, p_value=0.31,
                 verdict="within noise")])
    en = tier_steps("bm25", "en", "test", {"easy": [1.0], "medium": [], "hard": [1.0, 0.0]}, all_tied=2)
    lines = tier_step_lines(_results([fr, en]), "test")
    assert lines[1].startswith("Tier steps: within-set accuracy@1 of the easier tier minus the harder one, and the "
                               "one-sided p-value of \"easier > harder\" from a permutation test of the tier labels")
    assert "enumerated up to 8192, else 10000 seeded shuffles); beyond noise: p < 0.05" in lines[1]
    assert "at least 80 sets" in lines[1]
    assert ("at chance: the accuracy over the cell's sets is not above the blind guess (1 / a set's members) by more "
            "than two standard errors, or more than half the sets tie every member") in lines[1]
    # rows by retriever, then language (English first), whatever their order in results.json
    assert lines[3:] == [
        "| retriever | lang | sets easy / medium | easy - medium | p | verdict | sets medium / hard | medium - hard | p "
        "| verdict | strictly ordered |",
        "|---|---|---:|---:|---:|---|---:|---:|---:|---|---|",
        "| bm25 | en | 1 / 0 | - | - | too few sets | 0 / 2 | - | - | too few sets | no (at chance: 2 of 3 sets tie "
        "every member) |",
        "| minilm | fr | 120 / 95 | +0.083 | 0.0123 | beyond noise | 95 / 110 | +0.020 | 0.3100 | within noise | yes |"]
    assert tier_step_lines(_results([fr, en]), "dev") == []
    # a ladder no better than a guess, with few ties, says which
    xx = tier_steps("bm25", "fr", "test", {"easy": [0.0] * 30 + [1.0] * 10, "medium": [0.0] * 40, "hard": [0.0] * 40},
                    all_tied=3, guesses=120 * 0.25)
    assert tier_step_lines(_results([xx]), "test")[-1].endswith(
        "| no (at chance: not above the blind guess beyond noise; 3 of 120 sets tie every member) |")
