"""A system's median over its inputs at the system level (Graham 2015's median variants; issue 33
item 9): the batched evaluators against brute-force loops over the resampled matrices."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from metaeval.analyses.stats import batched, hypothesis, intervals, resampling
from metaeval.analyses.stats.correlation import correlate, level_correlation
from metaeval.analyses.stats.reductions import system_medians, system_scores
from metaeval.analyses.stats.validation import aggregate_iv

SCIPY = {"pearson": lambda x, z: scipy.stats.pearsonr(x, z)[0], "spearman": lambda x, z: scipy.stats.spearmanr(x, z)[0],
         "kendall": lambda x, z: scipy.stats.kendalltau(x, z)[0],
         "kendall-c": lambda x, z: scipy.stats.kendalltau(x, z, variant="c")[0]}


def _matrices(seed=0, n=7, m=9, holes=True):
    rng = np.random.default_rng(seed)
    X, Y, Z = (rng.normal(size=(n, m)).round(1) for _ in range(3))   # rounded: ties among medians
    if holes:
        for A in (X, Y, Z):
            A[rng.random((n, m)) < 0.15] = np.nan
    return X, Y, Z


def _r(coefficient, x, z):
    keep = ~np.isnan(x) & ~np.isnan(z)
    if keep.sum() < 2 or np.ptp(x[keep]) == 0 or np.ptp(z[keep]) == 0:
        return np.nan
    return SCIPY[coefficient](x[keep], z[keep])


def _loop_median(A):
    return np.array([np.median(r[~np.isnan(r)]) if (~np.isnan(r)).any() else np.nan for r in A])


def _loop(A, aggregate):
    """Each system's median or mean over its non-NaN cells, one row at a time."""
    if aggregate == "median":
        return _loop_median(A)
    # the exactly rounded sum (math.fsum), as the core sums: a tie among the means is then a tie
    return np.array([math.fsum(r[~np.isnan(r)]) / (~np.isnan(r)).sum() if (~np.isnan(r)).any() else np.nan
                     for r in A])


def _for(A, aggregate, seed=0):
    """``A`` for a side aggregated by ``aggregate``: rounded for a median (ties among medians), with a
    continuous jitter for a mean (ties among means would be decided by the order of a sum's rounding)."""
    return A if aggregate == "median" else A + 1e-3 * np.random.default_rng(seed).normal(size=A.shape)


#: (the analysis' aggregate, the metric's, the human's): Graham's median (the metric's median, the
#: human's mean), both medians, and the human's median alone
SIDES = [("median", "median", "mean"), ("median/median", "median", "median"), ("mean/median", "mean", "median")]


def test_system_medians_against_numpy_with_holes_and_leading_axes():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(5, 6, 8))
    A[rng.random(A.shape) < 0.3] = np.nan
    A[0, 0] = np.nan                      # a system without any cell: NaN
    with np.errstate(all="ignore"), pytest.warns(RuntimeWarning):
        expected = np.nanmedian(A, axis=-1)
    np.testing.assert_array_equal(system_medians(A), expected)
    assert system_scores(A[0], "mean").shape == (6,)
    with pytest.raises(ValueError, match="aggregate"):
        system_scores(A[0], "mode")


@pytest.mark.parametrize("aggregate, metric, human", SIDES)
@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall", "kendall-c"])
@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
def test_bootstrap_evaluator_median_against_a_loop(coefficient, method, aggregate, metric, human):
    X, _, Z = _matrices(1)
    X, Z = _for(X, metric, 1), _for(Z, human, 2)
    coef = aggregate_iv(coefficient, aggregate)
    rng = np.random.default_rng(5)
    rows, cols = resampling.bootstrap_indices(rng, 40, *X.shape, method)
    got = batched.bootstrap_evaluator(X, Z, "system", coef)(rows, cols)
    expected = []
    for b in range(40):
        r = slice(None) if rows is None else rows[b]
        c = slice(None) if cols is None else cols[b]     # duplicated inputs counted as drawn
        expected.append(_r(coefficient, _loop(X[r][:, c], metric), _loop(Z[r][:, c], human)))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert level_correlation(X, Z, "system", coef) == pytest.approx(
        _r(coefficient, _loop(X, metric), _loop(Z, human)), abs=1e-12)


@pytest.mark.parametrize("aggregate, metric, human", SIDES)
@pytest.mark.parametrize("coefficient", ["pearson", "kendall"])
@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
def test_permutation_evaluator_median_against_a_loop(coefficient, method, aggregate, metric, human):
    X, Y, Z = _matrices(2)
    X, Y, Z = _for(X, metric, 1), _for(Y, metric, 3), _for(Z, human, 2)
    coef = aggregate_iv(coefficient, aggregate)
    (mask,) = resampling.permutation_masks(np.random.default_rng(7), 30, *X.shape, method=method)
    got = batched.permutation_evaluator(X, Y, Z, "system", coef)(mask)
    full = np.broadcast_to(mask, (30, *X.shape))
    zm = _loop(Z, human)
    expected = [_r(coefficient, _loop(np.where(full[b], Y, X), metric), zm)
                - _r(coefficient, _loop(np.where(full[b], X, Y), metric), zm) for b in range(30)]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("aggregate, metric, human", SIDES)
def test_unpaired_evaluator_median_against_a_loop(aggregate, metric, human):
    X, _, Z = _matrices(4)
    X, Z = _for(X, metric, 1), _for(Z, human, 2)
    coef = aggregate_iv("spearman", aggregate)
    rng = np.random.default_rng(9)
    rows, cx, cz = resampling.unpaired_bootstrap_indices(rng, 25, X.shape[0], np.arange(9), np.arange(2, 9), "both")
    got = batched.unpaired_system_evaluator(X, Z, coef)(rows, cx, cz)
    expected = [_r("spearman", _loop(X[rows[b]][:, cx[b]], metric), _loop(Z[rows[b]][:, cz[b]], human))
                for b in range(25)]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_median_equals_mean_when_each_systems_cells_are_constant():
    rng = np.random.default_rng(6)
    X = np.repeat(rng.normal(size=(8, 1)), 10, axis=1)
    Z = np.repeat(rng.normal(size=(8, 1)), 10, axis=1)
    Y = np.repeat(rng.normal(size=(8, 1)), 10, axis=1)
    mean, median = aggregate_iv("pearson"), aggregate_iv("pearson", "median")
    a = intervals.bootstrap_ci(X, Z, "system", mean, "both", k=200, seed=1)
    b = intervals.bootstrap_ci(X, Z, "system", median, "both", k=200, seed=1)
    np.testing.assert_allclose(a.samples, b.samples, rtol=0, atol=1e-12)
    assert (a.estimate, a.lower, a.upper) == pytest.approx((b.estimate, b.lower, b.upper), abs=1e-12)
    # (swapping whole systems keeps each permuted row constant; swapping cells would not)
    p = hypothesis.permutation_test(X, Y, Z, "system", mean, "systems", k=200, seed=2)
    q = hypothesis.permutation_test(X, Y, Z, "system", median, "systems", k=200, seed=2)
    assert p.pvalue == q.pvalue and p.delta == pytest.approx(q.delta, abs=1e-12)


def test_the_median_differs_from_the_mean_and_is_refused_where_it_is_not_offered():
    X, _, Z = _matrices(8, holes=False)
    X[:, 0] += 50                                  # an outlying input moves every mean, no median
    assert correlate(X, Z, "system", aggregate_iv("pearson", "median")) == pytest.approx(
        correlate(X[:, 1:], Z[:, 1:], "system", aggregate_iv("pearson", "median")), abs=0.5)
    assert correlate(X, Z, "system", aggregate_iv("pearson", "median")) != correlate(X, Z, "system", "pearson")
    for label in ("kendall-23", "pearson[control=system]", "acc-23[tie-calibrated]"):
        with pytest.raises(ValueError, match="median is offered"):
            aggregate_iv(label, "median")
    with pytest.raises(ValueError, match="aggregate"):
        aggregate_iv("pearson", "mode")
    assert aggregate_iv("kendall-23").aggregate == "mean"
