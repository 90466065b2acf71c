"""Uncertainty of a score, read from its queries: bootstrap intervals and paired randomization.

    interval(values, key)                   95% percentile bootstrap of a mean over queries
    macro_interval([values...], [key...])   the same for an unweighted mean of cell means
                                            (each cell resampled within itself)
    randomization_p(a, b, key)              paired two-sided test of mean(a) == mean(b)
    permutation_p_greater(upper, lower, key)
                                            unpaired one-sided test of mean(upper) > mean(lower)
    holm(p_values)                          Holm's step-down adjustment for several tests

Every draw comes from a generator seeded by `key`, so the results never depend on the order
in which cells are evaluated. A bootstrap's key is the cell and split, not the retriever: the
same queries are resampled for every retriever of a cell (common random numbers: two
systems' intervals differ by their scores, not by their draws). A test's key names what it
tests (cell, split, systems or tier step). Pure numpy; no clock, no global state.
"""
from __future__ import annotations

import hashlib
import math
from itertools import combinations, product

import numpy as np

RESAMPLES = 1000        # bootstrap draws per interval
PERMUTATIONS = 10000    # random sign flips per randomization test (exact below EXACT_MAX queries)
EXACT_MAX = 13          # 2**13 = 8192 sign patterns: enumerate them instead of drawing
EXACT_MAX_PATTERNS = 2 ** EXACT_MAX  # the unpaired test enumerates its label patterns up to as many
CONFIDENCE = 0.95
ALPHA = 0.05
SEED = 20261126


def rng_for(key: str) -> np.random.Generator:
    digest = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "little")
    return np.random.default_rng(np.random.SeedSequence([SEED, digest]))


def _draws(n: int, key: str, resamples: int) -> np.ndarray:
    """resamples x n indices into a cell's queries, the same for every caller with this key."""
    return rng_for(f"bootstrap|{key}|{n}").integers(0, n, size=(resamples, n))


def bootstrap_means(values: np.ndarray, key: str, resamples: int = RESAMPLES) -> np.ndarray:
    """The mean of `values` in each bootstrap resample of its positions."""
    values = np.asarray(values, dtype=np.float64)
    return values[_draws(len(values), key, resamples)].mean(axis=1)


def percentile_interval(means: np.ndarray, confidence: float = CONFIDENCE) -> tuple[float, float]:
    tail = round((1.0 - confidence) * 50, 9)  # 2.5 for 95%, not 2.5000000000000027
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo), float(hi)


def interval(values, key: str, resamples: int = RESAMPLES) -> tuple[float, float] | None:
    """95% percentile bootstrap interval of the mean of per-query values (None without values)."""
    if len(values) == 0:
        return None
    return percentile_interval(bootstrap_means(np.asarray(values), key, resamples))


def macro_interval(cells: list, keys: list[str], resamples: int = RESAMPLES) -> tuple[float, float] | None:
    """Interval of an unweighted mean of cell means: each cell is resampled within itself
    (with its own key, so a cell's draws are the ones its own interval used)."""
    cells = [np.asarray(c, dtype=np.float64) for c in cells]
    if not cells or any(len(c) == 0 for c in cells):
        return None
    means = np.mean([bootstrap_means(c, k, resamples) for c, k in zip(cells, keys)], axis=0)
    return percentile_interval(means)


def randomization_p(a, b, key: str, permutations: int = PERMUTATIONS) -> float:
    """Two-sided p-value of a paired randomization (sign-flip) test on per-query scores.

    Under the null hypothesis the two systems' scores of a query are exchangeable, so each
    difference keeps or flips its sign with probability 1/2. Up to EXACT_MAX queries every
    sign pattern is enumerated (the exact p-value); above, `permutations` patterns are drawn
    and the observed one counts too ((hits + 1) / (draws + 1): never 0)."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = len(d)
    if n == 0:
        return 1.0
    observed = abs(d.sum())
    tol = 1e-9 * max(1.0, observed)
    if n <= EXACT_MAX:
        signs = np.array(list(product((1.0, -1.0), repeat=n)))
        return float(np.mean(np.abs(signs @ d) >= observed - tol))
    rng = rng_for(f"randomization|{key}|{n}")
    hits, left = 0, permutations
    while left:
        chunk = min(left, 1000)
        signs = rng.integers(0, 2, size=(chunk, n), dtype=np.int8).astype(np.float64) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ d) >= observed - tol))
        left -= chunk
    return (hits + 1) / (permutations + 1)


def permutation_p_greater(upper, lower, key: str, permutations: int = PERMUTATIONS) -> float:
    """One-sided p-value of "mean(upper) > mean(lower)" from an unpaired permutation test.

    The two groups hold different items (the sets of two tiers), so under the null hypothesis
    the group labels are exchangeable: every way of choosing len(upper) of the pooled values
    as "upper" is equally likely. With both sizes fixed, mean(upper) - mean(lower) rises with
    the upper group's sum alone, so that sum is the statistic. Up to EXACT_MAX_PATTERNS label
    patterns every one is enumerated (the exact p-value); above, `permutations` shuffles are
    drawn from a generator seeded by `key` and the observed labelling counts too."""
    u, l = np.asarray(upper, dtype=np.float64), np.asarray(lower, dtype=np.float64)
    if len(u) == 0 or len(l) == 0:
        raise ValueError("permutation_p_greater: both groups need at least one value")
    pooled, k = np.concatenate([u, l]), len(u)
    observed = float(u.sum())
    tol = 1e-9 * max(1.0, abs(observed))  # the same sum added in another order may differ in its last bits
    if math.comb(len(pooled), k) <= EXACT_MAX_PATTERNS:
        chosen = np.array(list(combinations(range(len(pooled)), k)))
        return float(np.mean(pooled[chosen].sum(axis=1) >= observed - tol))
    rng = rng_for(f"permutation|{key}|{k}|{len(l)}")
    hits, left = 0, permutations
    while left:
        chunk = min(left, 1000)
        shuffled = rng.permuted(np.tile(pooled, (chunk, 1)), axis=1)
        hits += int(np.count_nonzero(shuffled[:, :k].sum(axis=1) >= observed - tol))
        left -= chunk
    return (hits + 1) / (permutations + 1)


def holm(p_values: list[float]) -> list[float]:
    """Holm-Bonferroni adjusted p-values (family-wise error over the tests given), in the
    order given: the k-th smallest p is multiplied by (m - k + 1), then made monotone."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
