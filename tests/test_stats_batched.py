"""Batched resampling equals a per-resample loop with scipy fed the same indices / masks."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.analyses import bootstrap_ci, paired_bootstrap_test, permutation_test
from metaeval.analyses.stats import batched as batched_module
from metaeval.analyses.stats import resampling
from metaeval.analyses.stats._validation import coefficient_iv
from metaeval.analyses.stats.batched import bootstrap_statistics, permutation_statistics
from tests._stats_reference import COEFFICIENTS, level_corr, standardize

LEVELS = ("system", "summary", "global")
METHODS = ("systems", "inputs", "both")
N_RESAMPLES = 12


@pytest.fixture(scope="module")
def xyz() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """7 x 9 matrices with ties (half-integers, exact sums), NaNs placed differently in X, Y
    and Z, and a Z column that is constant except for one system."""
    rng = np.random.default_rng(11)
    X = rng.integers(0, 7, (7, 9)) / 2
    Y = rng.integers(0, 5, (7, 9)) / 2 + X / 2
    Z = rng.integers(0, 9, (7, 9)) / 4 + X / 4
    Z[:, 4] = 1.0
    Z[6, 4] = 2.0
    X[0, 2] = X[3, 7] = np.nan
    Y[1, 2] = np.nan
    Z[5, 0] = Z[2, 8] = np.nan
    return X, Y, Z


def _draw(draw, size: int):
    return draw(np.random.default_rng(5), size)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("coefficient", COEFFICIENTS)
@pytest.mark.parametrize("method", METHODS)
def test_bootstrap_equals_loop(xyz, level: str, coefficient: str, method: str) -> None:
    X, _, Z = xyz
    rows, cols = resampling.bootstrap_indices(np.random.default_rng(5), N_RESAMPLES, 7, 9, method)
    batched = bootstrap_statistics(X, Z, level, coefficient_iv(coefficient), rows, cols)
    for b in range(N_RESAMPLES):
        r = rows[b] if rows is not None else np.arange(7)
        c = cols[b] if cols is not None else np.arange(9)
        expected = level_corr(X[r][:, c], Z[r][:, c], level, coefficient)
        np.testing.assert_allclose(batched[b], expected, atol=1e-12, err_msg=f"resample {b}")


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("coefficient", COEFFICIENTS)
@pytest.mark.parametrize(("method", "variant"), [(m, "paper") for m in METHODS] + [("both", "nlpstats")])
def test_permutation_equals_loop(xyz, level: str, coefficient: str, method: str, variant: str) -> None:
    X, Y, Z = xyz
    Xs, Ys = standardize(X), standardize(Y)
    (mask,) = resampling.permutation_masks(np.random.default_rng(5), N_RESAMPLES, 7, 9, method, variant)
    batched = permutation_statistics(Xs, Ys, Z, level, coefficient_iv(coefficient), mask)
    for b in range(N_RESAMPLES):
        swap = np.broadcast_to(mask[b], X.shape)
        Xp, Yp = np.where(swap, Ys, Xs), np.where(swap, Xs, Ys)
        expected = level_corr(Xp, Z, level, coefficient) - level_corr(Yp, Z, level, coefficient)
        np.testing.assert_allclose(batched[b], expected, atol=1e-10, err_msg=f"resample {b}")


def test_kendall_bootstrap_with_many_duplicates(xyz) -> None:
    """A resample made of two systems only: all pairs among copies are ties, as in scipy."""
    X, _, Z = xyz
    rows = np.array([[0, 0, 0, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2], [3, 4, 3, 4, 5, 5, 5]])
    for coefficient in ("kendall", "kendall-c", "spearman", "pearson"):
        batched = bootstrap_statistics(X, Z, "summary", coefficient_iv(coefficient), rows, None)
        expected = [level_corr(X[r], Z[r], "summary", coefficient) for r in rows]
        np.testing.assert_allclose(batched, expected, atol=1e-12)


@pytest.mark.parametrize("coefficient", ["kendall", "kendall-c"])
def test_kendall_input_blocks_give_the_same_result(xyz, monkeypatch, coefficient: str) -> None:
    X, Y, Z = xyz
    coef = coefficient_iv(coefficient)
    rows, _ = resampling.bootstrap_indices(np.random.default_rng(1), 20, 7, 9, "systems")
    (mask,) = resampling.permutation_masks(np.random.default_rng(1), 20, 7, 9, "both")
    Xs, Ys = standardize(X), standardize(Y)
    whole = (bootstrap_statistics(X, Z, "summary", coef, rows, None),
             permutation_statistics(Xs, Ys, Z, "summary", coef, mask))
    monkeypatch.setattr(batched_module, "PAIR_ARRAYS_BUDGET", 1)  # one input per block
    blocked = (bootstrap_statistics(X, Z, "summary", coef, rows, None),
               permutation_statistics(Xs, Ys, Z, "summary", coef, mask))
    for a, b in zip(whole, blocked):
        np.testing.assert_array_equal(a, b)


def test_masks_follow_the_method() -> None:
    rng = np.random.default_rng(0)
    (systems,) = resampling.permutation_masks(rng, 500, 4, 6, "systems")
    (inputs,) = resampling.permutation_masks(rng, 500, 4, 6, "inputs")
    (cells,) = resampling.permutation_masks(rng, 500, 4, 6, "both")
    (xor,) = resampling.permutation_masks(rng, 500, 4, 6, "both", "nlpstats")
    assert systems.shape == (500, 4, 1) and inputs.shape == (500, 1, 6) and cells.shape == (500, 4, 6)
    assert abs(cells.mean() - 0.5) < 0.02 and abs(systems.mean() - 0.5) < 0.05
    # row XOR column: swapping a 2x2 block's diagonal agrees with its anti-diagonal
    assert (xor[:, 0, 0] ^ xor[:, 0, 1] == xor[:, 1, 0] ^ xor[:, 1, 1]).all()
    rows, cols = resampling.bootstrap_indices(rng, 3, 4, 6, "both")
    assert rows.shape == (3, 4) and cols.shape == (3, 6) and rows.max() < 4 and cols.max() < 6


@pytest.mark.parametrize(
    "run",
    [
        lambda X, Y, Z, **kw: bootstrap_ci(X, Z, "summary", "kendall", "both", k=300, seed=7, **kw).samples,
        lambda X, Y, Z, **kw: permutation_test(X, Y, Z, "system", "pearson", "both", k=300, seed=7, **kw).samples,
        lambda X, Y, Z, **kw: paired_bootstrap_test(X, Y, Z, "global", "spearman", "inputs", k=300, seed=7, **kw).samples,
    ],
)
def test_results_do_not_depend_on_batch_size(xyz, run) -> None:
    reference = run(*xyz)
    for batch_size in (1, 7, 64, 100, 1000):  # 300 resamples: across an RNG block boundary
        np.testing.assert_array_equal(run(*xyz, batch_size=batch_size), reference)


def test_same_seed_same_samples_and_draws_are_seeded(xyz) -> None:
    X, Y, Z = xyz
    a = permutation_test(X, Y, Z, "summary", "kendall", k=100, seed=3)
    b = permutation_test(X, Y, Z, "summary", "kendall", k=100, seed=3)
    c = permutation_test(X, Y, Z, "summary", "kendall", k=100, seed=4)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert not np.array_equal(a.samples, c.samples)
    # seed=None draws fresh entropy and records it: passing it back reproduces the result
    d = bootstrap_ci(X, Z, "system", "pearson", k=50)
    e = bootstrap_ci(X, Z, "system", "pearson", k=50, seed=d.conventions["seed"])
    np.testing.assert_array_equal(d.samples, e.samples)


def test_stream_slices_are_split_independent() -> None:
    seed = np.random.SeedSequence(1)
    draw = lambda rng, size: resampling.bootstrap_indices(rng, size, 5, 3, "both")  # noqa: E731
    block = resampling.RNG_BLOCK
    whole = resampling.ResampleStream(seed, draw).take(0, 3 * block)
    stream = resampling.ResampleStream(seed, draw)
    cuts = (0, 5, block - 1, block, block + 1, 2 * block + 7, 3 * block)
    parts = [stream.take(a, b) for a, b in zip(cuts, cuts[1:])]
    for i in range(2):
        np.testing.assert_array_equal(np.concatenate([p[i] for p in parts]), whole[i])
    assert resampling.ResampleStream(seed, draw).take(block + 3, block + 4)[0][0].tolist() == whole[0][block + 3].tolist()


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("coefficient", COEFFICIENTS)
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("scale", [2.0**1020, 2.0**-1000])
def test_huge_and_tiny_values_give_the_statistics_of_their_rescaled_copy(
    xyz, level: str, coefficient: str, method: str, scale: float
) -> None:
    """X and Y around 1e307 (their sums overflowed) or 1e-301, not standardised: every batched
    statistic equals scipy's on the rescaled matrices (by powers of two: the ties of the
    half-integer fixture stay ties)."""
    X, Y, Z = xyz
    Xs, Ys = scale * (X + 4), scale * (Y - 1)
    rescale = 1 / scale
    coef = coefficient_iv(coefficient)
    rows, cols = resampling.bootstrap_indices(np.random.default_rng(5), N_RESAMPLES, 7, 9, method)
    (mask,) = resampling.permutation_masks(np.random.default_rng(5), N_RESAMPLES, 7, 9, method)
    boot = bootstrap_statistics(Xs, Z, level, coef, rows, cols)
    perm = permutation_statistics(Xs, Ys, Z, level, coef, mask)
    Xr, Yr = Xs * rescale, Ys * rescale
    for b in range(N_RESAMPLES):
        r = rows[b] if rows is not None else np.arange(7)
        c = cols[b] if cols is not None else np.arange(9)
        expected = level_corr(Xr[r][:, c], Z[r][:, c], level, coefficient)
        np.testing.assert_allclose(boot[b], expected, atol=1e-12, err_msg=f"bootstrap resample {b}")
        swap = np.broadcast_to(mask[b], X.shape)
        expected = (level_corr(np.where(swap, Yr, Xr), Z, level, coefficient)
                    - level_corr(np.where(swap, Xr, Yr), Z, level, coefficient))
        np.testing.assert_allclose(perm[b], expected, atol=1e-10, err_msg=f"permutation resample {b}")
