"""Tests between systems (analyses/system_tests.py): against scipy directly, brute-force loops on
small matrices (exact randomization by full enumeration, the bootstrap by its own draws), and
properties (p in (0, 1], symmetric pairs, the top system not outperformed, undefined tests)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.stats as st

from metaeval.analyses import system_tests as s
from metaeval.analyses.stats import resampling
from metaeval.analyses.stats.multiple import correct_pvalues


def _matrix(seed=0, n=5, m=12, shift=0.8, missing=0.1):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, m)) + np.linspace(shift, 0, n)[:, None]
    A[rng.random((n, m)) < missing] = np.nan
    return A


def _shared(A, i, j):
    keep = ~np.isnan(A[i]) & ~np.isnan(A[j])
    return A[i][keep], A[j][keep]


ALTERNATIVES = ("two-sided", "greater", "less")


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_closed_forms_equal_scipy_pair_by_pair(alternative):
    A = _matrix(1)
    for method in ("t-test", "wilcoxon", "rank-sum"):
        t = s.pair_tests(A, method, alternative=alternative)
        assert len(t.a) == (10 if alternative == "two-sided" else 20)
        for r, (i, j) in enumerate(zip(t.a, t.b)):
            x, y = _shared(A, i, j)
            assert t.n[r] == x.size and t.mean_a[r] == pytest.approx(x.mean()) and t.mean_b[r] == pytest.approx(y.mean())
            assert t.delta[r] == pytest.approx(np.mean(x - y))
            if method == "t-test":
                ref = st.ttest_rel(x, y, alternative=alternative)
                assert t.statistic[r] == pytest.approx(ref.statistic, rel=1e-12)
            elif method == "wilcoxon":
                ref = st.wilcoxon(x - y, zero_method="wilcox", correction=False, alternative=alternative)
                d = (x - y)[(x - y) != 0]
                w_plus = st.rankdata(np.abs(d))[d > 0].sum()
                assert t.statistic[r] == pytest.approx(w_plus)
                if alternative != "two-sided":
                    assert t.statistic[r] == pytest.approx(ref.statistic)
                else:
                    assert min(w_plus, d.size * (d.size + 1) / 2 - w_plus) == pytest.approx(ref.statistic)
            else:
                ref = st.mannwhitneyu(x, y, alternative=alternative, use_continuity=True, method="auto")
                assert t.statistic[r] == pytest.approx(ref.statistic)
            assert t.p_value[r] == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-15)


def _exact_randomization(d, alternative):
    """p over all 2^n swap patterns (the identity included): the limit of the approximate test."""
    T = d.mean()
    Tb = np.array([np.mean(np.array(signs) * d) for signs in itertools.product((1, -1), repeat=d.size)])
    tol = 1e-12 * np.abs(d).mean()
    if alternative == "two-sided":
        return np.mean(np.abs(Tb) >= abs(T) - tol)
    return np.mean(Tb >= T - tol) if alternative == "greater" else np.mean(Tb <= T + tol)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_randomization_tends_to_the_exact_test(alternative):
    A = _matrix(2, n=3, m=9, missing=0.0, shift=0.6)
    t = s.pair_tests(A, "randomization", alternative=alternative, k=40000, seed=3)
    for r, (i, j) in enumerate(zip(t.a, t.b)):
        exact = _exact_randomization(A[i] - A[j], alternative)
        assert t.p_value[r] == pytest.approx(exact, abs=0.012)
        assert t.n_valid[r] == 40000


def _stream(seed, method, m):
    if method == "bootstrap":
        draw = lambda rng, size: resampling.bootstrap_indices(rng, size, 1, m, "inputs")[1:]  # noqa: E731
    else:
        draw = lambda rng, size: resampling.permutation_masks(rng, size, 1, m, "inputs")  # noqa: E731
    return resampling.ResampleStream(np.random.SeedSequence(seed), draw)


@pytest.mark.parametrize("method", s.RESAMPLING_METHODS)
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_resampling_tests_equal_a_loop_over_their_draws(method, alternative, monkeypatch):
    A = _matrix(4, n=4, m=7, missing=0.25)
    k = 300
    monkeypatch.setattr(s, "MEMORY_BUDGET", 8 * 4 * 7 * 5)    # batches of 5: results do not depend on them
    t = s.pair_tests(A, method, alternative=alternative, k=k, seed=11)
    (drawn,) = _stream(11, method, A.shape[1]).take(0, k)
    for r, (i, j) in enumerate(zip(t.a, t.b)):
        d = A[i] - A[j]
        delta = np.nanmean(d)
        count = valid = 0
        for b in range(k):
            if method == "bootstrap":
                picked = d[drawn[b]]
                if np.isnan(picked).all():
                    continue
                stat = np.nanmean(picked)
                valid += 1
                count += {"greater": stat >= 2 * delta - 1e-9, "less": stat <= 2 * delta + 1e-9,
                          "two-sided": abs(stat - delta) >= abs(delta) - 1e-9}[alternative]
            else:
                signs = np.where(drawn[b, 0], -1.0, 1.0)
                stat = np.nanmean(signs * d)
                valid += 1
                count += {"greater": stat >= delta - 1e-9, "less": stat <= delta + 1e-9,
                          "two-sided": abs(stat) >= abs(delta) - 1e-9}[alternative]
        assert t.n_valid[r] == valid
        assert t.p_value[r] == pytest.approx((1 + count) / (1 + valid), abs=1e-15)


def test_resampling_is_reproducible_by_seed():
    A = _matrix(5)
    for method in s.RESAMPLING_METHODS:
        one = s.pair_tests(A, method, k=200, seed=7)
        two = s.pair_tests(A, method, k=200, seed=7)
        other = s.pair_tests(A, method, k=200, seed=8)
        assert np.array_equal(one.p_value, two.p_value)
        assert not np.array_equal(one.p_value, other.p_value)
        assert one.conventions["seed"] == 7 and "rng" in one.conventions


def test_p_values_lie_in_0_1_and_undefined_tests_are_nan():
    A = _matrix(6, n=6, m=10)
    A[5] = A[4] + 0.5          # constant differences: the t-test is 0/0-like, undefined
    A[3] = A[2]                 # identical systems: no nonzero difference for Wilcoxon
    A[1, 2:] = np.nan           # system 1 shares fewer than 2 inputs with some systems
    A[0, :2] = np.nan
    r = s.system_tests(A, s.METHODS, k=199)
    for method, t in r.tests.items():
        defined = ~np.isnan(t.p_value)
        assert ((t.p_value[defined] > 0) & (t.p_value[defined] <= 1)).all(), method
        assert not t.significant[~defined].any()
        assert np.isnan(t.p_value[(t.a == 0) & (t.b == 1)]).all(), method     # no shared input
        if method == "t-test":
            assert np.isnan(t.p_value[(t.a == 4) & (t.b == 5)]).all()
            assert np.isnan(t.p_value[(t.a == 2) & (t.b == 3)]).all()
        if method == "wilcoxon":
            assert np.isnan(t.p_value[(t.a == 2) & (t.b == 3)]).all()
            assert not np.isnan(t.p_value[(t.a == 4) & (t.b == 5)]).any()
        if method in s.RESAMPLING_METHODS:    # identical systems: every resample as extreme, p = 1
            assert t.p_value[(t.a == 2) & (t.b == 3)][0] == 1.0


@pytest.mark.parametrize("method", s.METHODS)
def test_pairs_are_symmetric(method):
    A = _matrix(7, n=4, m=15)
    two = s.pair_tests(A, method, k=300, seed=1)
    swapped = s.pair_tests(A[::-1], method, k=300, seed=1)
    n = A.shape[0]
    for r, (i, j) in enumerate(zip(two.a, two.b)):
        q = np.flatnonzero((swapped.a == n - 1 - j) & (swapped.b == n - 1 - i))[0]
        assert swapped.p_value[q] == pytest.approx(two.p_value[r], rel=1e-9)
        assert swapped.direction[q] == -two.direction[r]
    greater = s.pair_tests(A, method, alternative="greater", k=300, seed=1)
    less = s.pair_tests(A, method, alternative="less", k=300, seed=1)
    for r, (i, j) in enumerate(zip(greater.a, greater.b)):
        q = np.flatnonzero((less.a == j) & (less.b == i))[0]      # H1 i > j is H1 j < i
        assert less.p_value[q] == pytest.approx(greater.p_value[r], rel=1e-9)
    assert np.array_equal(greater.beats(), less.beats())


@pytest.mark.parametrize("seed", range(6))
def test_the_top_system_is_not_outperformed(seed):
    A = _matrix(seed, n=6, m=30, shift=1.5, missing=0.0)
    for method, t in s.system_tests(A, s.METHODS, k=999, seed=seed).tests.items():
        winners, undetermined = t.not_outperformed()
        assert winners is not None and not undetermined
        top = int(np.argmax(np.nanmean(A, axis=1)))
        if method != "rank-sum" and method != "wilcoxon":    # a mean-based test never favours a lower mean
            assert top in winners, method
        assert winners, method


def test_beats_and_matrix_follow_graham_fig4():
    A = np.vstack([np.arange(20.0) + 5, np.arange(20.0), np.arange(20.0) - 5]) + np.random.default_rng(0).normal(
        0, 0.5, (3, 20))
    t = s.pair_tests(A, "t-test")
    expected = np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]], bool)
    assert np.array_equal(t.beats(), expected)
    P = t.matrix()
    assert np.isnan(P[1, 0]) and P[0, 1] == t.p_adjusted[0]
    assert t.not_outperformed() == ([0], [])
    flipped = s.pair_tests(A[::-1], "t-test")
    assert np.array_equal(flipped.beats(), expected[::-1, ::-1])


def test_correction_over_each_family():
    A = _matrix(8, n=5, m=25)
    t = s.pair_tests(A, "t-test", correction="holm")
    assert np.allclose(t.p_adjusted, correct_pvalues(t.p_value, "holm"), equal_nan=True)
    assert (t.family_size == 10).all()
    assert np.array_equal(t.significant, t.p_adjusted <= 0.05)
    g = s.pair_tests(A, "t-test", alternative="greater", correction="bonferroni", correction_group="system")
    for i in range(5):
        members = g.a == i
        assert np.allclose(g.p_adjusted[members], correct_pvalues(g.p_value[members], "bonferroni"))
        assert (g.family_size[members] == 4).all()
    with pytest.raises(ValueError, match="one-sided"):
        s.pair_tests(A, "t-test", correction_group="system")


def test_a_family_that_cannot_resolve_has_no_significant_test_and_no_winners():
    A = _matrix(9, n=6, m=30, shift=4.0, missing=0.0)
    t = s.pair_tests(A, "bootstrap", k=99, correction="holm")          # 1/100 > 0.05/15
    res = t.resolution[0]
    assert not res.resolvable and res.k_needed == 299
    assert not t.significant.any() and not t.beats().any()
    assert t.not_outperformed() == (None, [])
    assert s.pair_tests(A, "bootstrap", k=299, correction="holm").significant.any()


def test_randomization_floor_on_few_inputs():
    A = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]])                  # n = 3: exact two-sided p >= 1/4
    t = s.pair_tests(A, "randomization", k=999, correction="none")
    assert t.p_value[0] == pytest.approx(0.25, abs=0.04)
    assert not t.significant[0]


def test_normality_equals_scipy_shapiro():
    A = _matrix(10, n=4, m=20)
    A[3] = 2.0
    r = s.normality(A, correction="holm")
    for i in range(3):
        x = A[i][~np.isnan(A[i])]
        ref = st.shapiro(x)
        assert r.statistic[i] == pytest.approx(ref.statistic) and r.p_value[i] == pytest.approx(ref.pvalue)
    assert np.isnan(r.p_value[3]) and not r.significant[3] and r.family_size == 3
    assert np.allclose(r.p_adjusted, correct_pvalues(r.p_value, "holm"), equal_nan=True)


def test_refusals():
    A = _matrix(11)
    with pytest.raises(ValueError, match="method"):
        s.pair_tests(A, "williams")
    with pytest.raises(ValueError, match="methods"):
        s.system_tests(A, ())
    with pytest.raises(ValueError, match="alternative"):
        s.pair_tests(A, "t-test", alternative="bigger")
