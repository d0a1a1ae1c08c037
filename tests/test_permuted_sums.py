"""Permutation deltas from sums linear in the swap masks (analyses/stats/permuted_sums.py) and
summary-level bootstrap r from sums linear in the draw counts (drawn_sums.py) equal
the cell-by-cell evaluators' (analyses/stats/batched.py) to 1e-12, and the p-values of the tests
that use them (``evaluate --all-pairs``: inside ``allpairs.sharing()``, the pairs offered
together) are those of the cell-by-cell path, on SummEval-sized data (16 systems x 100 inputs)
with ties."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from metaeval.analyses.stats import (allpairs, batched, drawn_sums, hypothesis, pair_forms, permutation_test,
                                     permuted_sums, resampling)
from metaeval.analyses.stats.validation import coefficient_iv

COEFFICIENTS = ("pearson", "spearman", "kendall")


@pytest.fixture(scope="module")
def summeval() -> tuple[list[np.ndarray], np.ndarray]:
    """A human judgment on a 1-5 scale in quarters (ties) and four metrics, one rounded (ties)."""
    rng = np.random.default_rng(37)
    Z = np.clip(np.round((3 + rng.normal(0, 0.6, (16, 1)) + rng.normal(0, 0.8, (16, 100))) * 4) / 4, 1, 5)
    metrics = [Z + rng.normal(0, s, Z.shape) for s in (0.4, 0.8, 1.5)]
    metrics.append(np.round(metrics[1], 1))
    return metrics, Z


def _same(a, b) -> bool:
    return bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


@pytest.mark.parametrize("level", ["system", "summary"])
@pytest.mark.parametrize("method", ["both", "systems", "inputs"])
def test_pairs_deltas_equal_cell_by_cell(summeval, level, method, monkeypatch):
    monkeypatch.setattr(permuted_sums, "KENDALL_SUMMARY", True)   # (the default)
    metrics, Z = summeval
    standard = [hypothesis.standardize(X) for X in metrics]
    (mask,) = resampling.permutation_masks(np.random.default_rng(5), 200, *Z.shape, method)
    for name in COEFFICIENTS:
        coef = coefficient_iv(name)
        evaluate, per_resample = permuted_sums.pairs_evaluator(standard, Z, level, coef)
        assert per_resample > 0
        fast = evaluate(mask)
        for p, (i, j) in enumerate(itertools.combinations(range(len(metrics)), 2)):
            slow = batched.permutation_evaluator(standard[i], standard[j], Z, level, coef)(mask)
            assert np.array_equal(np.isnan(fast[p]), np.isnan(slow)), (name, i, j)
            assert np.nanmax(np.abs(fast[p] - slow)) <= 1e-12, (name, i, j)
            if level == "system" and name != "pearson":   # the order of the means: bit for bit
                assert _same(fast[p], slow), (name, i, j)


def test_tied_system_means_are_summed_cell_by_cell():
    """Two systems with the same cells in X and Y: their permuted means tie exactly, which the
    linear form could break by rounding; those resamples are computed cell by cell."""
    rng = np.random.default_rng(2)
    Z = rng.normal(0, 1, (6, 30))
    X, Y = Z + rng.normal(0, 1, Z.shape), Z + rng.normal(0, 1, Z.shape)
    X[1], Y[1] = X[0], Y[0]
    X[3] = X[2] * 0.1 + 0.3   # sums whose rounding differs between the two orders
    Xs, Ys = hypothesis.standardize(X), hypothesis.standardize(Y)
    (mask,) = resampling.permutation_masks(np.random.default_rng(1), 300, 6, 30, "systems")
    for name in ("spearman", "kendall"):
        coef = coefficient_iv(name)
        fast = permuted_sums.evaluator(Xs, Ys, Z, "system", coef)(mask)
        assert _same(fast, batched.permutation_evaluator(Xs, Ys, Z, "system", coef)(mask))


def test_not_applicable_falls_back():
    rng = np.random.default_rng(3)
    Z = rng.normal(0, 1, (5, 8))
    X, Y = Z + rng.normal(0, 1, Z.shape), Z + rng.normal(0, 1, Z.shape)
    pearson = coefficient_iv("pearson")
    X[:, 2] = Y[:, 2] = 1.0   # a column of X' constant for every swap
    assert permuted_sums.evaluator(X, Y, Z, "summary", pearson) is None
    Y[0, 0] = np.nan
    assert permuted_sums.evaluator(X, Y, Z, "system", pearson) is None
    assert permuted_sums.evaluator(X, X, Z, "global", pearson) is None
    assert permuted_sums.evaluator(X[:2], Y[:2], Z[:2], "system", pearson) is None


@pytest.mark.parametrize("level", ["system", "summary"])
def test_all_pairs_pvalues_identical(summeval, level, monkeypatch):
    """Every ordered pair's test inside a sharing block with the metrics offered (computed
    together, linear sums) against the cell-by-cell path (METAEVAL_ALLPAIRS=shared): the same
    p-values, deltas, conventions; resampled deltas within 1e-12."""
    metrics, Z = summeval
    ordered = list(itertools.permutations(range(len(metrics)), 2))
    for name, alternative in zip(COEFFICIENTS, ("two-sided", "greater", "less")):
        def run():
            with allpairs.sharing() as shared:
                shared.offer(Z, metrics)
                return {(i, j): permutation_test(metrics[i], metrics[j], Z, level, name, "both", k=150,
                                                 alternative=alternative, seed=4) for i, j in ordered}
        fast = run()
        monkeypatch.setenv(allpairs.ENVIRONMENT, "shared")
        slow = run()
        monkeypatch.delenv(allpairs.ENVIRONMENT)
        for pair in ordered:
            f, s = fast[pair], slow[pair]
            assert _same(f.pvalue, s.pvalue) and _same(f.delta, s.delta), (name, pair)
            assert np.nanmax(np.abs(f.samples - s.samples)) <= 1e-12 and f.conventions == s.conventions


@pytest.mark.parametrize("method", ["both", "systems"])
def test_drawn_sums_equal_gathered(summeval, method):
    """Summary-level bootstrap r from sums linear in the draw counts (analyses/stats/drawn_sums.py)
    against the gathered columns, with constant drawn columns (NaN) included."""
    metrics, Z = summeval
    Z = Z.copy()
    Z[:, 3] = 2.0                 # a constant input
    Z[4:10, 8] = 1.0              # tied systems: constant whenever only they are drawn
    rows, cols = resampling.bootstrap_indices(np.random.default_rng(6), 300, *Z.shape, method)
    rows[:5] = rows[:5] % 6 + 4   # (resamples drawing only those systems)
    for X in metrics:
        for name in ("pearson", "spearman"):
            coef = coefficient_iv(name)
            fast = drawn_sums.bootstrap_evaluator(X, Z, "summary", coef, method)(rows, cols)
            slow = batched.bootstrap_evaluator(X, Z, "summary", coef)(rows, cols)
            assert np.array_equal(np.isnan(fast), np.isnan(slow)) and np.nanmax(np.abs(fast - slow)) <= 1e-12


def test_shared_intervals_within_1e12(summeval, monkeypatch):
    """bootstrap_ci in a sharing block (drawn sums) and with METAEVAL_ALLPAIRS=shared: intervals
    within 1e-12."""
    from metaeval.analyses.stats import bootstrap_ci

    metrics, Z = summeval

    def intervals():
        with allpairs.sharing():
            return [bootstrap_ci(X, Z, "summary", name, "both", k=200, seed=3) for X in metrics
                    for name in ("pearson", "spearman")]

    fast = intervals()
    monkeypatch.setenv(allpairs.ENVIRONMENT, "shared")
    for f, s in zip(fast, intervals()):
        assert abs(f.lower - s.lower) <= 1e-12 and abs(f.upper - s.upper) <= 1e-12 and f.conventions == s.conventions


@pytest.mark.parametrize("level", ["system", "summary"])
def test_a_pair_deltas_do_not_depend_on_its_block(summeval, level, monkeypatch):
    """A pair's deltas are the same bits whatever other pairs are computed with it and however
    many masks a batch holds: the blocks of an all-pairs run on workers (runs/metrics/pair_blocks.py)
    store the numbers of the whole run in one process."""
    monkeypatch.setattr(permuted_sums, "KENDALL_SUMMARY", True)
    metrics, Z = summeval
    metrics = [*metrics, np.round(metrics[0], 1), metrics[2] * 0.5 + metrics[0]]
    standard = [hypothesis.standardize(X) for X in metrics]
    (mask,) = resampling.permutation_masks(np.random.default_rng(6), 60, *Z.shape, "both")
    everything = list(itertools.combinations(range(len(metrics)), 2))
    for name in COEFFICIENTS:
        coef = coefficient_iv(name)
        whole = permuted_sums.pairs_evaluator(standard, Z, level, coef)[0](mask)
        for pairs in (everything[3:5], everything[::-3], [everything[7]]):
            used = sorted({i for pair in pairs for i in pair})
            local = [(used.index(i), used.index(j)) for i, j in pairs]
            evaluate = permuted_sums.pairs_evaluator([standard[i] for i in used], Z, level, coef, local)[0]
            for batch in (slice(0, 60), slice(0, 7), slice(7, 8), slice(8, 60)):
                part = evaluate(mask[batch])
                for p, pair in enumerate(pairs):
                    assert _same(part[p], whole[everything.index(pair)][batch]), (name, pair, batch)


@pytest.mark.parametrize("name", ["spearman", "kendall"])
def test_exact_forms_do_not_depend_on_the_input_blocks(summeval, name, monkeypatch):
    """The exact forms' deltas (summary Spearman, Kendall tau-b) are the same bits whether each
    chunk's product takes one input at a time or every input at once (BLOCK_CELLS,
    KENDALL_BLOCK_CELLS), and computed on one BLAS thread or two: every sum is exact."""
    from threadpoolctl import threadpool_limits

    metrics, Z = summeval
    metrics = [*metrics, np.round(metrics[0], 1)]
    standard = [hypothesis.standardize(X) for X in metrics]
    (mask,) = resampling.permutation_masks(np.random.default_rng(8), 40, *Z.shape, "both")
    coef = coefficient_iv(name)
    runs = []
    for cells in (1, 2**30):
        monkeypatch.setattr(permuted_sums, "BLOCK_CELLS", cells)
        monkeypatch.setattr(permuted_sums, "KENDALL_BLOCK_CELLS", cells)
        runs.append(permuted_sums.pairs_evaluator(standard, Z, "summary", coef)[0](mask))
    with threadpool_limits(limits=2, user_api="blas"):
        A = np.random.default_rng(1).integers(-8, 8, (300, 24)).astype(np.float32) / 4
        B = np.random.default_rng(2).integers(-8, 8, (24, 500)).astype(np.float32) / 4
        two = A @ B
    with permuted_sums._engine.one_blas_thread():
        one = A @ B
    assert _same(runs[0], runs[1]) and np.isfinite(runs[0]).any() and np.array_equal(one, two)


def test_all_pairs_in_groups_equal_all_pairs_at_once(summeval, monkeypatch):
    """The pairs of one process' batch computed PAIR_GROUP at a time (bounded memory) are the
    numbers of all of them at once."""
    metrics, Z = summeval
    seq = np.random.SeedSequence(4)
    for level in ("system", "summary"):
        coef = coefficient_iv("spearman")
        whole = hypothesis._all_pairs_samples(metrics, Z, level, coef, "both", seq, "paper", None, 50)
        monkeypatch.setattr(permuted_sums, "PAIR_GROUP", 4)
        grouped = hypothesis._all_pairs_samples(metrics, Z, level, coef, "both", seq, "paper", None, 50)
        monkeypatch.undo()
        assert whole.keys() == grouped.keys() and len(whole) == 6
        for pair, (delta, r_x, r_y, samples) in whole.items():
            assert grouped[pair][:3] == (delta, r_x, r_y) and _same(grouped[pair][3], samples), (level, pair)


def test_summary_bootstrap_sums_do_not_depend_on_blas_threads(tmp_path):
    """The linear sums of a summary-level Pearson bootstrap are the same bits with one BLAS
    thread (a Dask worker's) or two (a command's): ``evaluate --all-pairs`` stores the same
    intervals on workers as in one process."""
    import os
    import subprocess
    import sys

    code = ("import sys, numpy as np\n"
            "from metaeval.analyses.stats import allpairs, bootstrap_ci\n"
            "rng = np.random.default_rng(37)\n"   # bench_allpairs.py's metric.64: one resample of 100 differed
            "Z = rng.normal(0, 1, (24, 1)) + rng.normal(0, 1, (24, 100))\n"
            "X = [Z + rng.normal(0, 0.5 + m / 10, Z.shape) for m in range(65)][-1]\n"
            "with allpairs.sharing(path=''):\n"
            "    r = bootstrap_ci(X, Z, 'summary', 'pearson', 'both', k=100, seed=0)\n"
            "np.save(sys.argv[1], r.samples)\n")
    samples = []
    for threads in ("1", "2"):
        path = tmp_path / f"{threads}.npy"
        subprocess.run([sys.executable, "-c", code, str(path)], check=True,
                       env={**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads})
        samples.append(np.load(path))
    assert _same(*samples)


def test_summary_mean_without_nan_is_the_masked_mean_bit_for_bit() -> None:
    """summary_mean's path for r without NaN (the all-pairs kernels') gives the bits of the
    masked formula it skips (where(defined, r, 0) * w summed, over sum w), unweighted and
    weighted (weights broadcast like np.where's), on a transposed input too; and the weighted
    means of a plain loop (math.fsum) to rounding, NaN inputs skipped."""
    import math

    from metaeval.analyses.stats.reductions import summary_mean

    rng = np.random.default_rng(3)
    r = rng.uniform(-1, 1, (100, 5, 3)).transpose(2, 1, 0)   # (3, 5, 100), not contiguous
    counts = rng.integers(0, 3, (5, 100)).astype(np.float64)
    for weights in (None, counts, counts[0]):
        got = summary_mean(r, weights)
        rc = np.ascontiguousarray(r)
        defined = ~np.isnan(rc)
        w = defined if weights is None else np.where(defined, weights, 0)
        masked = (np.where(defined, rc, 0.0) * w).sum(axis=-1) / w.sum(axis=-1)
        assert got.shape == masked.shape and got.tobytes() == masked.tobytes()
        wb = np.broadcast_to(np.ones(100) if weights is None else weights, r.shape)
        loop = [[math.fsum(r[a, b] * wb[a, b]) / math.fsum(wb[a, b]) for b in range(5)] for a in range(3)]
        np.testing.assert_allclose(got, loop, rtol=1e-13)
    with_nan = r.copy()
    with_nan[0, 0, :7] = np.nan
    keep = ~np.isnan(with_nan[0, 0])
    np.testing.assert_allclose(summary_mean(with_nan)[0, 0], math.fsum(with_nan[0, 0][keep]) / keep.sum(), rtol=1e-13)


def test_tied_values_equal_np_unique_per_input() -> None:
    """_tied_values (every input at once) against np.unique input by input: the values seen
    twice or more among X[:, j] and Y[:, j], ascending, their indicator differences and counts."""
    rng = np.random.default_rng(5)
    X, Y = rng.integers(0, 6, (7, 11)) / 2, rng.integers(0, 6, (7, 11)) / 2
    X[:, 3], Y[:, 3] = np.arange(7), np.arange(7) + 10.5   # an input without ties
    X[0, 4] = -0.0
    Y[1, 4] = 0.0
    B, alpha_x, alpha_y = permuted_sums._tied_values(X, Y)
    V = max(1, max(int((np.unique(np.concatenate([X[:, j], Y[:, j]]), return_counts=True)[1] > 1).sum())
                   for j in range(11)))
    assert B.shape == (11, 7, V) and alpha_x.shape == alpha_y.shape == (11, V)
    for j in range(11):
        values, counts = np.unique(np.concatenate([X[:, j], Y[:, j]]), return_counts=True)
        v = values[counts > 1]
        np.testing.assert_array_equal(B[j, :, :len(v)], (Y[:, j, None] == v).astype(float) - (X[:, j, None] == v))
        np.testing.assert_array_equal(alpha_x[j, :len(v)], (X[:, j, None] == v).sum(axis=0))
        np.testing.assert_array_equal(alpha_y[j, :len(v)], (Y[:, j, None] == v).sum(axis=0))
        assert not B[j, :, len(v):].any() and not alpha_x[j, len(v):].any() and not alpha_y[j, len(v):].any()
    assert not B[3].any()


def test_pair_forms_from_tables_built_once_equal_the_pair_forms_byte_for_byte() -> None:
    """pair_forms' Kendall and Spearman forms (each matrix's comparison tables once, per pair only
    X against Y) against permuted_sums' forms of the pair (batched._perm_pairs' float64 tables,
    batched._rank_tables): the same arrays, dtypes and bytes (signed zeros too), on data with
    ties, a -0.0 beside a 0.0, and an input where the human ties every system."""
    rng = np.random.default_rng(11)
    for trial in range(24):
        n, m = int(rng.integers(3, 26)), int(rng.integers(1, 12))
        X, Y, Z = (rng.normal(size=(n, m)) for _ in range(3))
        if trial % 2:
            X, Y, Z = np.round(X), np.round(Y, 1), np.round(Z)
        if trial % 3 == 0:
            Z[:, 0] = 1.0
            X[0, 0], Y[1, 0], Z[2, -1] = -0.0, 0.0, -0.0
        w = (batched.corr_ranks(Z) - (n + 1) / 2).T
        cases = [(permuted_sums._kendall_forms(X, Y, Z),
                  pair_forms.kendall_forms(*(pair_forms.kendall_tables(A) for A in (X, Y, Z)))),
                 (permuted_sums._spearman_forms(X, Y, Z),
                  pair_forms.spearman_forms(pair_forms.spearman_tables(X), pair_forms.spearman_tables(Y), w,
                                            permuted_sums._tied_values(X, Y)))]
        for expected, got in cases:
            assert expected.keys() == got.keys()
            for key in expected:
                assert got[key].dtype == expected[key].dtype and got[key].shape == expected[key].shape, key
                assert got[key].tobytes() == expected[key].tobytes(), (trial, key)


def test_pearson_against_one_vector_is_corr_on_its_broadcast_copy_bit_for_bit() -> None:
    """correlation.pearson_against (the human's unit deviations once) against corr with the
    human broadcast to every row: the same bytes, for ranks with ties, a constant row, a
    constant human (NaN) and humans of any scale; None for fewer than 3 values."""
    import scipy.stats

    from metaeval.analyses.stats.correlation import corr, pearson_against

    rng = np.random.default_rng(3)
    for trial in range(60):
        n, c = int(rng.integers(3, 40)), int(rng.integers(1, 300))
        z = rng.normal(size=n) * 10.0 ** int(rng.integers(-3, 4))
        if trial % 3 == 0:
            z = np.round(z)
        if trial % 17 == 0:
            z[:] = 2.0
        x = scipy.stats.rankdata(np.round(rng.normal(size=(c, n)), trial % 2), axis=1)
        x[0] = 1.5
        expected = corr(x, np.broadcast_to(z, x.shape), batched.PEARSON)
        assert pearson_against(z)(x).tobytes() == expected.tobytes()
        assert np.isnan(expected[0])
    assert pearson_against(np.arange(2.0)) is None
