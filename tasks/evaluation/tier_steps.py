"""Whether a cd cell's tiers are ordered for a retriever: each adjacent step beyond noise.

    tier_steps(retriever, lang, split, {tier: [per-set accuracy@1, ...]}) -> TierSteps

A step (easy -> medium, medium -> hard) is the upper tier's within-set accuracy@1 minus the
lower's. Its one-sided p-value for "upper > lower" is an unpaired permutation test of the
tier labels over the two tiers' per-set scores (a tie counts as its expectation, as in the
tier table), seeded by cell, retriever, split and step (tasks/evaluation/stats.py). A step
is only read when both tiers hold MIN_SETS sets: below that its verdict is "too few sets".
A ladder is at chance when its within-set accuracy@1 over all its sets does not exceed the
blind guess (each set's 1 / its members) by more than CHANCE_Z standard errors, or when more
than half its sets tie every member (`all_tied`): the retriever tells the members apart no
better than a guess (BM25 where the language shares no token, or few, with the English
entries), so its order says nothing of the tiers. The audit's tier check reads a cell's own
queries only through systems above chance by the same test (tasks/audit/tier_readings.py).
"""
from __future__ import annotations

import math

from schemas.records import TIERS
from schemas.results import TierStep, TierSteps, TierStepVerdict
from tasks.evaluation import stats
from tasks.evaluation.metrics import mean

MIN_SETS = 80  # issue #30's bar: a step is read only where both tiers have this many sets


def step_verdict(upper_sets: int, lower_sets: int, p_value: float | None) -> TierStepVerdict:
    """"too few sets" under MIN_SETS in either tier; else beyond noise when p < alpha
    (a p exactly at alpha is within noise)."""
    if min(upper_sets, lower_sets) < MIN_SETS or p_value is None:
        return "too few sets"
    return "beyond noise" if p_value < stats.ALPHA else "within noise"


def step_key(lang: str, split: str, retriever: str, upper: str, lower: str) -> str:
    """The seed of a step's permutations: its cell, split, retriever and step."""
    return f"cd/{lang}/{split}|{retriever}|{upper}>{lower}"


def _step(retriever: str, lang: str, split: str, upper: tuple[str, list[float]], lower: tuple[str, list[float]]) -> TierStep:
    (hi, xs), (lo, ys) = upper, lower
    filled = bool(xs) and bool(ys)
    p = stats.permutation_p_greater(xs, ys, step_key(lang, split, retriever, hi, lo)) if filled else None
    return TierStep(upper=hi, lower=lo, upper_sets=len(xs), lower_sets=len(ys),
                    difference=round(mean(xs) - mean(ys), 6) if filled else None,
                    p_value=None if p is None else round(p, 6), verdict=step_verdict(len(xs), len(ys), p))


CHANCE_Z = 2.0  # above chance: accuracy over the sets beyond the blind guess by more than this many standard errors


def chance_z(hits: float, guesses: float, sets: int) -> float | None:
    """Standard errors by which `hits` (summed accuracy@1 over `sets` sets) exceed `guesses`
    (their summed blind-guess rates): a binomial z at the mean guess rate. None: no set."""
    if sets <= 0:
        return None
    p0 = guesses / sets
    se = math.sqrt(p0 * (1 - p0) / sets) or 1e-9
    return (hits / sets - p0) / se


def above_chance(hits: float, guesses: float, sets: int) -> bool:
    z = chance_z(hits, guesses, sets)
    return z is not None and z > CHANCE_Z


def at_chance(all_tied: int, sets: int, hits: float | None = None, guesses: float | None = None) -> bool:
    """More than half the sets tie every member (exactly half is not); or, given the summed
    accuracy and blind guesses of the sets, the accuracy is not above chance beyond noise."""
    if 2 * all_tied > sets:
        return True
    return hits is not None and guesses is not None and sets > 0 and not above_chance(hits, guesses, sets)


def tier_steps(retriever: str, lang: str, split: str, per_set: dict[str, list[float]], all_tied: int = 0,
               guesses: float | None = None) -> TierSteps:
    """The two steps of a cell's ladder from each tier's per-set within-set accuracy@1;
    `all_tied` counts the ladder's sets whose members all scored the same, `guesses` sums
    their blind-guess rates (1 / members of each set; None: not known, only ties count)."""
    ladder = [(t, list(per_set.get(t, []))) for t in TIERS]
    steps = [_step(retriever, lang, split, a, b) for a, b in zip(ladder, ladder[1:])]
    ordered = all(s.difference is not None for s in steps) and all(
        mean(a[1]) > mean(b[1]) for a, b in zip(ladder, ladder[1:]))
    sets = sum(len(xs) for _t, xs in ladder)
    hits = sum(x for _t, xs in ladder for x in xs)
    return TierSteps(retriever=retriever, lang=lang, split=split, steps=steps, strictly_ordered=ordered,
                     all_tied=all_tied, at_chance=at_chance(all_tied, sets, hits, guesses))
