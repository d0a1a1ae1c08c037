"""Point correlations equal scipy at every level; NaN and constant-column conventions."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.analyses import correlate
from tests._jsonl_matrix import dataset_xyz
from tests._stats_reference import COEFFICIENTS, level_corr

LEVELS = ("system", "summary", "global")


@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["realsumm", "summeval"])
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("coefficient", COEFFICIENTS)
def test_equals_scipy_on_shared_data(dataset: str, level: str, coefficient: str) -> None:
    X, Y, Z = dataset_xyz(dataset)
    for A in (X, Y):
        assert correlate(A, Z, level, coefficient) == pytest.approx(
            level_corr(A, Z, level, coefficient), abs=1e-12
        )


@pytest.mark.shared_data
@pytest.mark.parametrize("dataset", ["realsumm", "summeval"])
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("coefficient", ["pearson", "kendall", "kendall-c"])
def test_bit_identical_to_scipy_without_nan(dataset: str, level: str, coefficient: str) -> None:
    X, _, Z = dataset_xyz(dataset)
    assert correlate(X, Z, level, coefficient) == level_corr(X, Z, level, coefficient)


@pytest.fixture
def holey() -> tuple[np.ndarray, np.ndarray]:
    """6 x 5 with NaNs in different places in X and Z, ties, and a constant Z column (col 3)."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 4, (6, 5)).astype(float)
    Z = rng.normal(size=(6, 5)).round(1)
    X[0, 1] = X[4, 2] = np.nan
    Z[2, 1] = Z[5, 4] = np.nan
    Z[:, 3] = 2.0
    return X, Z


@pytest.mark.parametrize("level", LEVELS + ("input",))
@pytest.mark.parametrize("coefficient", COEFFICIENTS + ("kendall-b",))
def test_nan_pairs_dropped_and_constant_columns_left_out(holey, level: str, coefficient: str) -> None:
    X, Z = holey
    reference = level_corr(X, Z, level, coefficient.replace("kendall-b", "kendall"))
    assert correlate(X, Z, level, coefficient) == pytest.approx(reference, abs=1e-12)


def test_summary_level_leaves_out_undefined_inputs_and_is_nan_when_none_defined() -> None:
    X = np.array([[1.0, 5.0], [2.0, 5.0], [3.0, 5.0]])
    Z = np.array([[1.0, 1.0], [3.0, 2.0], [2.0, 3.0]])
    # column 1 is constant in X: left out, not counted as 0
    assert correlate(X, Z, "summary", "pearson") == pytest.approx(0.5)
    assert np.isnan(correlate(X[:, 1:], Z[:, 1:], "summary", "pearson"))
    # fewer than two pairs in every column
    one = np.array([[1.0, np.nan], [np.nan, 2.0]])
    assert np.isnan(correlate(one, one, "summary", "kendall"))


def test_system_level_uses_means_ignoring_nan() -> None:
    X = np.array([[1.0, np.nan, 3.0], [2.0, 2.0, 2.0], [0.0, 1.0, np.nan]])
    Z = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 4.0], [0.0, 0.0, 0.0]])
    expected = np.corrcoef([2.0, 2.0, 0.5], [2.0, 2.0, 0.0])[0, 1]
    assert correlate(X, Z, "system", "pearson") == pytest.approx(expected)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"level": "sentence"}, r"`level` must be one of \['system', 'summary', 'input', 'global'\]"),
        ({"coefficient": "tau"}, r"`coefficient` must be one of \['pearson', 'spearman', 'kendall'"),
    ],
)
def test_bad_names_raise(kwargs: dict, message: str) -> None:
    args = {"level": "system", "coefficient": "pearson"} | kwargs
    with pytest.raises(ValueError, match=message):
        correlate(np.ones((3, 2)), np.ones((3, 2)), **args)


def test_bad_shapes_raise() -> None:
    with pytest.raises(ValueError, match="must be 2-D"):
        correlate(np.ones(3), np.ones(3), "system")
    with pytest.raises(ValueError, match="same shape"):
        correlate(np.ones((3, 2)), np.ones((3, 3)), "system")
    with pytest.raises(ValueError, match="infinite"):
        correlate(np.full((3, 2), np.inf), np.ones((3, 2)), "system")


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("coefficient", COEFFICIENTS)
def test_huge_and_tiny_values_give_the_correlation_of_their_rescaled_copy(level: str, coefficient: str) -> None:
    """Around 1e307 the sums overflowed (NaN at every level with Pearson); around 1e-300 the
    deviations' squares underflow. The result must be scipy's on the rescaled copy."""
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(8, 40))
    base = Z + rng.normal(size=Z.shape)
    base[1, 4] = Z[3, 7] = np.nan
    for X, copy in ((1e307 * (3 + base), 1e307 * (3 + base) / 1e300), (1e307 * base / 3, 1e307 * base / 3 / 1e300),
                    (1e-300 * (3 + base), 1e-300 * (3 + base) * 1e300), (1e-300 * base, 1e-300 * base * 1e300)):
        expected = level_corr(copy, Z, level, coefficient)
        assert np.isfinite(expected)
        assert correlate(X, Z, level, coefficient) == pytest.approx(expected, abs=1e-12)
        assert correlate(Z, X, level, coefficient) == pytest.approx(expected, abs=1e-12)
        assert correlate(X, copy, level, coefficient) == pytest.approx(1.0, abs=1e-12)
