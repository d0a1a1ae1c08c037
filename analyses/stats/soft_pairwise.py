"""Soft pairwise accuracy (Thompson et al. 2024; WMT24 metrics task; mt-metrics-eval ``pce.py``).

For every pair of systems (i, k), i < k, a one-sided paired permutation test of "i is better
than k" over the inputs j, once under the human scores and once under the metric, with the same
sign flips: with d_j = s_ij - s_kj and signs e_bj in {-1, +1} (b = 1..K permutations),

    p_ik = #{b : sum_j e_bj d_j >= sum_j d_j} / K  =  #{b : sum_{j: e_bj = -1} d_j <= 0} / K

(the second form, used here, is exact when the flipped differences are all 0). Then

    SPA = 1 - mean_{i<k} |p_ik(human) - p_ik(metric)|.

With ``aggregate="median"`` (Graham 2015's median variants: a system's score the median over its
inputs) the statistic is the difference of the two systems' medians, under the same sign flips
(e_bj = -1 swaps s_ij and s_kj):

    p_ik = #{b : median_j s'_bij - median_j s'_bkj >= median_j s_ij - median_j s_kj} / K

(with the mean, the sum form above: sum_j (s'_bij - s'_bkj) = sum_j e_bj d_j).

mt-metrics-eval draws the signs as ``rint(default_rng(seed).random((K, M), float32))``,
mapped to 2 m - 1 (:func:`mtme_permutation_signs`, its default seed 4) and sums float32
scores; here sums are float64 over the flipped differences, so p-values only differ from it
where its float32 rounding breaks an exact tie.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

#: mt-metrics-eval's default seed of compute_pairwise_p_values.
MTME_SEED = 4


def mtme_permutation_signs(k: int, n_inputs: int, seed: int = MTME_SEED) -> np.ndarray:
    """(k, n_inputs) signs +-1 drawn as mt-metrics-eval's ``pce.compute_pairwise_p_values``:
    ``default_rng(seed).random((k, n_inputs), dtype=float32)`` rounded to 0/1, then 2 m - 1."""
    m = np.random.default_rng(seed).random(size=(k, n_inputs), dtype=np.float32)
    np.rint(m, out=m)
    return (2.0 * m - 1.0).astype(np.float64)


def pairwise_permutation_pvalues(S: npt.ArrayLike, signs: np.ndarray) -> np.ndarray:
    """(N, N) matrix, upper triangle p_ik of "system i better than k" (module docstring), NaN
    elsewhere; ``S`` is N systems x M inputs without NaN, ``signs`` (K, M) in {-1, +1}."""
    S = np.asarray(S, dtype=np.float64)
    n_sys = S.shape[0]
    flipped = (np.asarray(signs) < 0).astype(np.float64)  # (K, M)
    p = np.full((n_sys, n_sys), np.nan)
    for i in range(n_sys):
        for k in range(i + 1, n_sys):
            d = S[i] - S[k]
            p[i, k] = np.count_nonzero(flipped @ d <= 0) / signs.shape[0]
    return p


def pairwise_median_pvalues(S: npt.ArrayLike, signs: np.ndarray) -> np.ndarray:
    """:func:`pairwise_permutation_pvalues` with the difference of the two systems' medians over
    the inputs as the statistic (module docstring)."""
    S = np.asarray(S, dtype=np.float64)
    n_sys = S.shape[0]
    flipped = np.asarray(signs) < 0  # (K, M)
    p = np.full((n_sys, n_sys), np.nan)
    for i in range(n_sys):
        for k in range(i + 1, n_sys):
            observed = np.median(S[i]) - np.median(S[k])
            a, b = np.where(flipped, S[k], S[i]), np.where(flipped, S[i], S[k])
            p[i, k] = np.count_nonzero(np.median(a, axis=1) - np.median(b, axis=1) >= observed) / signs.shape[0]
    return p


@dataclass(frozen=True)
class SoftPairwiseResult:
    """SPA, the per-pair p-values under the human (``p_human``) and the metric (``p_metric``,
    upper triangles), and the systems / inputs used (complete ones)."""

    spa: float
    p_human: np.ndarray
    p_metric: np.ndarray
    systems: np.ndarray
    inputs: np.ndarray
    k: int


def soft_pairwise_accuracy(X: npt.ArrayLike, Z: npt.ArrayLike, k: int = 1000, seed: int = MTME_SEED, *,
                           signs: np.ndarray | None = None, aggregate: str = "mean") -> SoftPairwiseResult:
    """SPA of metric ``X`` against human ``Z`` (N systems x M inputs, NaN = missing).

    Systems without any pair of values are dropped, then every input where some remaining
    system lacks a metric or human value (the test pairs all systems on the same inputs, as
    mt-metrics-eval's complete matrices). The K = ``k`` sign vectors are mt-metrics-eval's for
    ``seed`` (:func:`mtme_permutation_signs`) unless ``signs`` (K, M_used) are given. NaN when
    fewer than 2 systems or no input remain. ``aggregate`` "median": the tests of the systems'
    medians (module docstring).
    """
    from .validation import k_iv, matrices_iv

    X, Z = matrices_iv(X=X, Z=Z)
    from .reductions import aggregate_sides

    metric_side, human_side = aggregate_sides(aggregate)   # the metric's, then the human's (a ValueError else)
    both = ~np.isnan(X) & ~np.isnan(Z)
    systems = np.flatnonzero(both.any(axis=1))
    inputs = np.flatnonzero(both[systems].all(axis=0))
    if signs is None:
        signs = mtme_permutation_signs(k_iv(k), inputs.size, seed)
    signs = np.asarray(signs, dtype=np.float64)
    if signs.ndim != 2 or signs.shape[1] != inputs.size or not np.isin(signs, (-1.0, 1.0)).all():
        raise ValueError(f"`signs` must be a (k, {inputs.size}) array of -1 and +1.")
    if systems.size < 2 or inputs.size == 0:
        empty = np.full((systems.size, systems.size), np.nan)
        return SoftPairwiseResult(np.nan, empty, empty, systems, inputs, signs.shape[0])
    sub = np.ix_(systems, inputs)
    pvalues = {"mean": pairwise_permutation_pvalues, "median": pairwise_median_pvalues}
    p_h, p_m = pvalues[human_side](Z[sub], signs), pvalues[metric_side](X[sub], signs)
    upper = np.triu_indices(systems.size, 1)
    spa = float(1.0 - np.mean(np.abs(p_h - p_m)[upper]))
    return SoftPairwiseResult(spa, p_h, p_m, systems, inputs, signs.shape[0])
