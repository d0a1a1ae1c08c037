"""Batched resampling equals a per-resample loop with scipy fed the same indices / masks."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.analyses import bootstrap_ci, paired_bootstrap_test, permutation_test
import tracemalloc

from metaeval.analyses.stats import _engine, resampling
from metaeval.analyses.stats import batched as batched_module
from metaeval.analyses.stats.validation import coefficient_iv
from metaeval.analyses.stats.batched import bootstrap_statistics, permutation_statistics
from metaeval.analyses.stats.correlation import corr, corr_columns, pairwise_sum_first, summary_mean
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


SUMMARY_COEFFICIENTS = (*COEFFICIENTS, "kendall-23[eps=0.5]")


@pytest.mark.parametrize("coefficient", SUMMARY_COEFFICIENTS)
def test_summary_input_blocks_give_the_same_result(xyz, monkeypatch, coefficient: str) -> None:
    """The summary level gathers the resampled columns a block of inputs at a time: one input
    per block gives the numbers of all inputs at once, to the bit, for every method."""
    X, Y, Z = xyz
    coef = coefficient_iv(coefficient)
    Xs, Ys = standardize(X), standardize(Y)

    def run() -> list[np.ndarray]:
        out = []
        for method in METHODS:
            rows, cols = resampling.bootstrap_indices(np.random.default_rng(2), 20, 7, 9, method)
            (mask,) = resampling.permutation_masks(np.random.default_rng(2), 20, 7, 9, method)
            out += [bootstrap_statistics(X, Z, "summary", coef, rows, cols),
                    permutation_statistics(Xs, Ys, Z, "summary", coef, mask)]
        return out

    monkeypatch.setattr(batched_module, "SUMMARY_BLOCK_CELLS", 2**30)  # every input in one block
    whole = run()
    monkeypatch.setattr(batched_module, "SUMMARY_BLOCK_CELLS", 1)  # one input per block
    blocked = run()
    for a, b in zip(whole, blocked):
        np.testing.assert_array_equal(a, b)


def test_pairwise_sum_first_is_numpy_row_sum() -> None:
    """Summing the first axis element-wise reproduces numpy's sum of each contiguous row, bit
    for bit (the lengths cover the running sum, the eight-way sums and the halving above 128)."""
    rng = np.random.default_rng(4)
    for n in [*range(1, 300), 1000, 1029]:
        A = rng.standard_normal((40, n)) * 10.0 ** rng.integers(-12, 12, (40, n))
        A[0] = -0.0
        np.testing.assert_array_equal(pairwise_sum_first(np.ascontiguousarray(A.T)), A.sum(axis=-1), err_msg=f"n={n}")
        assert not np.signbit(pairwise_sum_first(np.ascontiguousarray(A.T))[0])  # -0.0 + -0.0 sums to 0.0 too


@pytest.mark.parametrize("coefficient", SUMMARY_COEFFICIENTS)
@pytest.mark.parametrize("kind", ["continuous", "ties", "missing", "huge", "tiny"])
@pytest.mark.parametrize("n", [1, 2, 3, 8, 20, 131])
def test_corr_columns_equals_corr_on_rows(coefficient: str, kind: str, n: int) -> None:
    """corr along the first axis gives corr's numbers on the moved axes to the bit, NaN where
    corr has NaN (constant columns, fewer than 2 pairs, missing cells)."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal((n, 5, 13))
    z = x + rng.standard_normal((n, 5, 13))
    if kind == "ties":
        x, z = np.round(x), np.round(2 * z) / 2
    x[:, 0, 0] = 1.5  # a constant column
    x[:, 0, 1] = 0.1  # constant, its mean not exactly 0.1: deviations equal but not 0
    x[:, 0, 2] = np.arange(n) % 2  # all |deviations| equal (n even), not constant
    z[:, 0, 3] = 1.7e308  # constant, its sum overflows
    if kind == "missing":
        x[rng.random(x.shape) < 0.2] = np.nan
        z[rng.random(z.shape) < 0.2] = np.nan
        z[1:, 1, 1] = np.nan  # one pair left
    if kind == "huge":
        x[:, 1:3] *= 2.0**1020
    if kind == "tiny":
        z[:, 2:] *= 2.0**-1040
    coef = coefficient_iv(coefficient)
    expected = corr(np.moveaxis(x, 0, -1), np.moveaxis(z, 0, -1), coef)
    np.testing.assert_array_equal(corr_columns(x, z, coef), expected)
    if not coef.ties_variant:  # tau-23 and acc-23 are defined on a constant column
        assert np.isnan(expected[0, :2]).all() and np.isnan(expected[0, 3])


def test_summary_batches_are_bounded_whatever_the_inputs(monkeypatch) -> None:
    """A summary-level Boot-Both batch over many inputs: its batch size is several resamples
    (not 1 per batch, as when a batch held c x N x M temporaries), and its evaluation stays
    within the memory budget (numpy's allocations, traced)."""
    monkeypatch.setattr(_engine, "MEMORY_BUDGET", 24 * 2**20)
    rng = np.random.default_rng(0)
    X = rng.random((20, 40_000))
    Z = X + rng.random((20, 40_000))
    coef = coefficient_iv("pearson")
    size = _engine.default_batch_size(batched_module.resample_bytes("summary", coef, *X.shape))
    assert size >= 4
    evaluate = batched_module.bootstrap_evaluator(X, Z, "summary", coef)
    rows, cols = resampling.bootstrap_indices(np.random.default_rng(1), size, *X.shape, "both")
    tracemalloc.start()
    try:
        samples = evaluate(rows, cols)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < _engine.MEMORY_BUDGET
    # the resampled matrices gathered whole, each input's r along its rows (small tests above
    # check these against scipy loops): the same numbers to the bit
    for b in range(size):
        per_input = corr(X[rows[b]].T, Z[rows[b]].T, coef)
        np.testing.assert_array_equal(samples[b], summary_mean(per_input, np.bincount(cols[b], minlength=X.shape[1])))


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
        lambda X, Y, Z, **kw: bootstrap_ci(X, Z, "summary", "pearson", "both", k=300, seed=7, **kw).samples,
        lambda X, Y, Z, **kw: bootstrap_ci(X, Z, "summary", "spearman", "inputs", k=300, seed=7, **kw).samples,
        lambda X, Y, Z, **kw: permutation_test(X, Y, Z, "summary", "pearson", "both", k=300, seed=7, **kw).samples,
        lambda X, Y, Z, **kw: paired_bootstrap_test(X, Y, Z, "summary", "spearman", "systems", k=300, seed=7,
                                                    **kw).samples,
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
    d = bootstrap_ci(X, Z, "system", "pearson", k=50, seed=None)
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
