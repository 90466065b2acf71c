"""Rank ranges: which places a system may hold once noise is taken into account.

    pairwise(scores, key)      every pair of systems: a paired randomization test over the
                               same queries (stats.randomization_p), Holm-adjusted over the pairs
    rank_ranges(means, pairs)  per system (best, worst): 1 + the systems significantly better,
                               and the number of systems less those significantly worse

A bare rank says rank 3 is behind rank 2; a range says whether that is beyond noise. Two
systems whose difference is within noise share their places; a chain A~B, B~C, A>C gives A
1-2, B 1-3, C 2-3. Pure: numbers in, numbers out.

The macro score is an unweighted mean of cell means, so its per-query form weighs a query of
cell c by 1 / (cells x queries of c): the sum of a system's weighted scores is its macro
score, and flipping the sign of a query's weighted difference is a paired test of it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tasks.evaluation import stats

TEST = ("paired randomization (sign-flip) test over the same queries, two-sided, "
        f"{stats.PERMUTATIONS} random sign patterns (every pattern up to {stats.EXACT_MAX} queries)")
CORRECTION = "Holm-Bonferroni over all pairs of systems"


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    difference: float  # mean(a) - mean(b)
    p_value: float
    p_adjusted: float
    significant: bool  # p_adjusted < alpha


def weighted(cells: list[list[float]]) -> np.ndarray:
    """A system's per-query scores over several cells, each weighed so that their sum is the
    unweighted mean of the cell means (the macro score)."""
    n = len(cells)
    return np.concatenate([np.asarray(c, dtype=np.float64) / (n * len(c)) for c in cells]) if cells else np.zeros(0)


def pairwise(scores: dict[str, np.ndarray], key: str, summed: bool = False, alpha: float = stats.ALPHA) -> list[Pair]:
    """Every pair of systems (in name order) on the same queries. `summed`: the scores are
    weighted (see weighted()), so a system's score is their sum, not their mean."""
    names = sorted(scores)
    lengths = {len(scores[n]) for n in names}
    if len(lengths) > 1:
        raise ValueError("pairwise: every system must be scored on the same queries")

    def score(n: str) -> float:
        v = np.asarray(scores[n], dtype=np.float64)
        return float(v.sum() if summed else v.mean()) if len(v) else 0.0

    raw = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            raw.append((a, b, score(a) - score(b), stats.randomization_p(scores[a], scores[b], f"{key}|{a}|{b}")))
    adjusted = stats.holm([p for *_x, p in raw])
    return [Pair(a, b, d, p, padj, padj < alpha) for (a, b, d, p), padj in zip(raw, adjusted)]


def rank_ranges(means: dict[str, float], pairs: list[Pair]) -> dict[str, tuple[int, int]]:
    """Per system: (1 + systems significantly better, systems - systems significantly worse)."""
    better = {n: 0 for n in means}
    worse = {n: 0 for n in means}
    for p in pairs:
        if not p.significant:
            continue
        top, bottom = (p.a, p.b) if means[p.a] > means[p.b] else (p.b, p.a)
        better[bottom] += 1
        worse[top] += 1
    k = len(means)
    return {n: (1 + better[n], k - worse[n]) for n in means}


def label(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"
