"""The simulations' fast kernels equal the statistics core's batched evaluators."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.analyses import simulation_kernels as kernels
from metaeval.analyses.stats import batched, resampling
from metaeval.analyses.stats.validation import coefficient_iv
from metaeval.analyses.stats.hypothesis import standardize


def _data(n_sys: int, n_in: int, kind: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_sys, n_in))
    Z = X + rng.normal(size=(n_sys, n_in))
    Y = X + 2 * rng.normal(size=(n_sys, n_in))
    if kind in ("ties", "missing"):  # few distinct values: ties and constant resampled columns
        X, Y, Z = np.round(X / 2), np.round(Y / 2), np.round(Z)
        Z[:, 0] = 1.0  # a constant human column
    if kind == "missing":
        X[rng.random(X.shape) < 0.15] = np.nan
        Z[rng.random(Z.shape) < 0.15] = np.nan
        Y[np.isnan(X)] = np.nan
    return X, Y, Z


def _same(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("kind", ["continuous", "ties", "missing"])
@pytest.mark.parametrize("shape", [(12, 30), (3, 5)])
@pytest.mark.parametrize("method", ["systems", "both", "inputs"])
@pytest.mark.parametrize("coefficient", ["pearson", "spearman"])
def test_bootstrap_summary_equals_batched(kind, shape, method, coefficient):
    X, _, Z = _data(*shape, kind)
    rows, cols = resampling.bootstrap_indices(np.random.default_rng(1), 300, *shape, method)
    W = None if rows is None else batched._counts(rows, shape[0])
    C = None if cols is None else batched._counts(cols, shape[1])
    expected = batched.bootstrap_statistics(X, Z, "summary", coefficient_iv(coefficient), rows, cols)
    _same(kernels.bootstrap_summary(X, Z, coefficient, W, C), expected)


@pytest.mark.parametrize("kind", ["continuous", "ties", "missing"])
@pytest.mark.parametrize("shape", [(12, 30), (3, 5)])
@pytest.mark.parametrize("method", ["both", "systems", "inputs"])
def test_permutation_summary_pearson_equals_batched(kind, shape, method):
    X, Y, Z = _data(*shape, kind)
    Xs, Ys = standardize(X), standardize(Y)
    (mask,) = resampling.permutation_masks(np.random.default_rng(2), 300, *shape, method)
    expected = batched.permutation_statistics(Xs, Ys, Z, "summary", coefficient_iv("pearson"), mask)
    _same(kernels.permutation_summary_pearson(Xs, Ys, Z, mask), expected)


def test_identical_metrics_give_exactly_zero_deltas():
    X, _, Z = _data(12, 30, "ties")
    (mask,) = resampling.permutation_masks(np.random.default_rng(2), 100, 12, 30, "both")
    assert not kernels.permutation_summary_pearson(X, X.copy(), Z, mask).any()


def test_kernel_arguments():
    X, Y, Z = _data(4, 5, "missing")
    Y[~np.isnan(X)] = np.nan  # other missing cells than X
    with pytest.raises(ValueError, match="same missing cells"):
        kernels.permutation_summary_pearson(X, Y, Z, np.zeros((1, 4, 5), dtype=bool))
    with pytest.raises(ValueError, match="no fast kernel"):
        kernels.bootstrap_summary(X, Z, "kendall", None, None)
