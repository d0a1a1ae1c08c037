"""Partial correlations (analyses/stats/partial.py) against independent computations: residuals of
an explicit least-squares regression on group dummies (np.linalg.lstsq) correlated by scipy, the
closed-form partial correlation for one control, OLS t-tests, and brute-force loops over resamples."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from metaeval.analyses.stats import validation, partial, resampling
from metaeval.analyses.stats.correlation import corr
from metaeval.analyses.stats.williams import williams_t


def _data(seed=0, n_sys=7, n_in=25, missing=True):
    rng = np.random.default_rng(seed)
    effect = rng.normal(size=(n_sys, 1)) * 3
    X = effect + rng.normal(size=(n_sys, n_in))
    Y = effect + rng.normal(size=(n_sys, n_in)) + 0.2 * X
    Z = effect + rng.normal(size=(n_sys, n_in)) + 0.4 * X
    if missing:
        X[0, 3] = Y[1, 4] = Z[2, 5] = np.nan
    labels = rng.choice(np.array(["cnndm", "xsum", "other"], dtype=object), size=(n_sys, n_in))
    labels[3, 7] = None
    return X, Y, Z, labels


def _lstsq_residuals(values, labels):
    """Residuals of each vector regressed on the dummies of ``labels`` (intercept absorbed)."""
    levels = sorted(set(labels))
    D = np.array([[lab == lv for lv in levels] for lab in labels], dtype=float)
    return [v - D @ np.linalg.lstsq(D, v, rcond=None)[0] for v in values]


def _cells(groups, *arrays):
    """The cells where every array is present and the group is known: vectors and labels."""
    shape = arrays[0].shape
    labels = np.repeat(np.arange(shape[0])[:, None], shape[1], axis=1).astype(object) if isinstance(groups, str) \
        else np.asarray(groups, dtype=object)
    valid = np.ones(shape, dtype=bool)
    for a in arrays:
        valid &= ~np.isnan(a)
    valid &= np.array([[v is not None for v in row] for row in labels])
    return [a[valid] for a in arrays], list(labels[valid])


SCIPY = {"pearson": lambda a, b: scipy.stats.pearsonr(a, b).statistic,
         "spearman": lambda a, b: scipy.stats.spearmanr(a, b).statistic,
         "kendall": lambda a, b: scipy.stats.kendalltau(a, b).statistic}


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
@pytest.mark.parametrize("control", ["system", "attribute"])
def test_coefficients_equal_scipy_on_lstsq_residuals(coefficient, control):
    X, _, Z, labels = _data()
    groups = "system" if control == "system" else labels
    (x, z), lab = _cells(groups, X, Z)
    rx, rz = _lstsq_residuals([x, z], lab)
    res = partial.partial_correlation(X, Z, groups, coefficient)
    assert res.value == pytest.approx(SCIPY[coefficient](rx, rz), abs=1e-12)
    g = len(set(lab))
    assert (res.n, res.groups, res.df) == (len(x), g, len(x) - 2 - (g - 1))


def test_pvalue_is_the_ols_t_test_of_the_metric_given_the_dummies():
    """z on [x, group dummies] by least squares: the t statistic of x's coefficient has
    n - 1 - g degrees of freedom = n - 2 - (g - 1), and equals the partial correlation's t."""
    X, _, Z, labels = _data(1)
    (x, z), lab = _cells(labels, X, Z)
    levels = sorted(set(lab))
    A = np.column_stack([x, *[[lv == v for v in lab] for lv in levels]]).astype(float)
    beta, *_ = np.linalg.lstsq(A, z, rcond=None)
    df = len(z) - A.shape[1]
    sigma2 = ((z - A @ beta) ** 2).sum() / df
    t = beta[0] / np.sqrt(sigma2 * np.linalg.inv(A.T @ A)[0, 0])
    res = partial.partial_correlation(X, Z, labels)
    assert res.df == df
    assert res.statistic == pytest.approx(t, rel=1e-9)
    assert res.pvalue == pytest.approx(2 * scipy.stats.t.sf(abs(t), df), rel=1e-9)
    greater = partial.partial_correlation(X, Z, labels, alternative="greater")
    assert greater.pvalue == pytest.approx(scipy.stats.t.sf(t, df), rel=1e-9)


def test_one_binary_control_equals_the_closed_form():
    """With two groups, r_xz.d = (r_xz - r_xd r_zd) / sqrt((1 - r_xd^2)(1 - r_zd^2)), d the dummy."""
    rng = np.random.default_rng(2)
    labels = rng.choice(np.array(["a", "b"], dtype=object), size=(5, 40))
    d = (labels == "b").astype(float)
    X = 2 * d + rng.normal(size=d.shape)
    Z = -d + 0.5 * X + rng.normal(size=d.shape)
    r = lambda a, b: np.corrcoef(a.ravel(), b.ravel())[0, 1]  # noqa: E731
    closed = (r(X, Z) - r(X, d) * r(Z, d)) / np.sqrt((1 - r(X, d) ** 2) * (1 - r(Z, d) ** 2))
    assert partial.partial_correlation(X, Z, labels).value == pytest.approx(closed, abs=1e-12)


def test_residuals_are_group_centred_and_singletons_are_zero():
    X = np.array([[1.0, 2.0, 4.0], [5.0, 5.0, 7.0]])
    Z = np.array([[0.0, 1.0, 5.0], [2.0, 3.0, np.nan]])
    labels = np.array([["a", "a", "b"], ["a", "c", "c"]], dtype=object)
    rx, rz = partial.residuals(X, Z, labels)
    # group a = cells (0,0), (0,1), (1,0): x mean 8/3; group b one cell; group c: (1,2) has no z
    assert rx[0, 0] == pytest.approx(1 - 8 / 3) and rx[1, 0] == pytest.approx(5 - 8 / 3)
    assert rx[0, 2] == 0.0 and rz[0, 2] == 0.0          # a group of one cell
    assert rx[1, 1] == 0.0 and rz[1, 1] == 0.0          # c has one jointly present cell
    assert np.isnan(rx[1, 2]) and np.isnan(rz[1, 2])


def test_constant_within_groups_is_exactly_zero_and_the_value_nan():
    rng = np.random.default_rng(3)
    X = np.repeat(rng.normal(size=(6, 1)), 10, axis=1) * 0.1   # constant within each system
    Z = rng.normal(size=(6, 10))
    rx, _ = partial.residuals(X, Z, "system")
    assert (rx == 0).all()
    for c in ("pearson", "spearman", "kendall"):
        res = partial.partial_correlation(X, Z, "system", c)
        assert np.isnan(res.value) and np.isnan(res.statistic) and np.isnan(res.pvalue)


def test_too_many_groups_is_nan():
    rng = np.random.default_rng(4)
    X, Z = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    # n = 6 cells, g = 4 groups: df = 6 - 2 - 3 = 1 < 2
    labels = np.array([["a", "a"], ["b", "b"], ["c", "d"]], dtype=object)
    assert np.isnan(partial.partial_correlation(X, Z, labels).value)
    # g = 3 groups of two: df = 2, defined
    labels = np.array([["a", "a"], ["b", "b"], ["c", "c"]], dtype=object)
    assert not np.isnan(partial.partial_correlation(X, Z, labels).value)
    # every cell its own system and one input: all residuals 0
    assert np.isnan(partial.partial_correlation(X[:, :1], Z[:, :1], "system").value)


def test_refusals():
    X, Y, Z, labels = _data()
    for bad in ("kendall-c", "acc-23", "kendall[eps=0.1]", "pdp"):
        with pytest.raises(ValueError):
            partial.partial_correlation(X, Z, "system", bad)
    with pytest.raises(ValueError):
        partial.partial_correlation(X, Z, labels[:, :3])
    with pytest.raises(ValueError):
        partial.partial_correlation(X, Z, "input")
    coef = validation.coefficient_iv("pearson[control=system]")
    assert coef.label == "pearson[control=system]" and coef.control == "system"
    with pytest.raises(ValueError, match="partial"):
        corr(X[0], Z[0], coef)          # the generic engines need the groups
    with pytest.raises(ValueError):
        validation.coefficient_iv("kendall-c[control=system]")
    with pytest.raises(ValueError):
        validation.coefficient_iv("pearson[control=a]b]")


def test_control_label_accepts_an_attribute_and_reads_back():
    coef = validation.coefficient_iv("spearman[control=source dataset]")
    assert coef.control == "source dataset" and validation.coefficient_iv(coef.label) == coef


def test_fisher_interval_reduces_n_by_the_groups():
    X, _, Z, labels = _data(5)
    res = partial.partial_fisher_ci(X, Z, labels, alpha=0.1)
    p = partial.partial_correlation(X, Z, labels)
    n_eff = p.n - (p.groups - 1)
    half = scipy.stats.norm.ppf(0.95) / np.sqrt(n_eff - 3)
    assert res.n == n_eff
    assert (res.lower, res.upper) == pytest.approx((np.tanh(np.arctanh(p.value) - half),
                                                    np.tanh(np.arctanh(p.value) + half)), abs=1e-12)
    few = partial.partial_fisher_ci(X[:, :1], Z[:, :1], "system")
    assert np.isnan(few.lower) and np.isnan(few.upper)


@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
@pytest.mark.parametrize("control", ["system", "attribute"])
def test_bootstrap_equals_a_loop_over_the_resampled_matrices(method, control):
    """Each resample: the partial coefficient of X[rows][:, cols] with the groups drawn alongside
    (a system drawn twice keeps its group), recomputed from scratch by partial_correlation."""
    X, _, Z, labels = _data(6, 5, 9)
    groups = "system" if control == "system" else labels
    sys_labels = np.repeat(np.arange(5)[:, None], 9, axis=1).astype(object)
    lab = sys_labels if control == "system" else labels
    k = 40
    res = partial.partial_bootstrap_ci(X, Z, groups, "spearman", method, k=k, seed=7, batch_size=7)
    from functools import partial as bind
    rows, cols = resampling.ResampleStream(np.random.SeedSequence(7), bind(
        resampling.bootstrap_indices, n_systems=5, n_inputs=9, method=method)).take(0, k)
    for b in range(k):
        r = slice(None) if rows is None else rows[b]
        c = slice(None) if cols is None else cols[b]
        expected = partial.partial_correlation(X[r][:, c], Z[r][:, c], lab[r][:, c], "spearman").value
        if np.isnan(expected):
            assert np.isnan(res.samples[b])
        else:
            assert res.samples[b] == pytest.approx(expected, abs=1e-12)
    again = partial.partial_bootstrap_ci(X, Z, groups, "spearman", method, k=k, seed=7, batch_size=1000)
    np.testing.assert_array_equal(res.samples, again.samples)      # batches change nothing
    valid = res.samples[~np.isnan(res.samples)]
    assert (res.lower, res.upper) == tuple(np.percentile(valid, [2.5, 97.5]))


@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
def test_permutation_equals_a_loop_over_swapped_residuals(method):
    X, Y, Z, labels = _data(8, 5, 8)
    k = 30
    res = partial.partial_permutation_test(X, Y, Z, labels, "pearson", method, k=k, alternative="two-sided", seed=3,
                                           batch_size=4)
    # independently: residuals by lstsq on the common cells, standardised, swapped, re-residualised
    common = ~np.isnan(X) & ~np.isnan(Y) & ~np.isnan(Z) & (labels != None)  # noqa: E711
    lab = list(labels[common])
    rx, ry, rz = _lstsq_residuals([X[common], Y[common], Z[common]], lab)
    rx, ry = rx / rx.std(), ry / ry.std()
    Rx, Ry = np.full(X.shape, np.nan), np.full(X.shape, np.nan)
    Rx[common], Ry[common] = rx, ry
    from functools import partial as bind
    masks, = resampling.ResampleStream(np.random.SeedSequence(3), bind(
        resampling.permutation_masks, n_systems=5, n_inputs=8, method=method, variant="paper")).take(0, k)
    for b in range(k):
        xp, yp = np.where(masks[b], Ry, Rx)[common], np.where(masks[b], Rx, Ry)[common]
        ex, ey = _lstsq_residuals([xp, yp], lab)
        expected = scipy.stats.pearsonr(ex, rz).statistic - scipy.stats.pearsonr(ey, rz).statistic
        assert res.samples[b] == pytest.approx(expected, abs=1e-10)
    delta = (partial.partial_correlation(np.where(common, X, np.nan), Z, labels).value
             - partial.partial_correlation(np.where(common, Y, np.nan), Z, labels).value)
    assert res.delta == pytest.approx(delta, abs=1e-14)
    count = int((np.abs(res.samples) >= abs(res.delta)).sum())
    assert res.pvalue == (1 + count) / (1 + k)


def test_williams_uses_the_partial_correlations_and_reduced_n():
    X, Y, Z, labels = _data(9)
    res = partial.partial_williams_test(X, Y, Z, labels, alternative="two-sided")
    common = ~np.isnan(X) & ~np.isnan(Y) & ~np.isnan(Z) & (labels != None)  # noqa: E711
    lab = list(labels[common])
    rx, ry, rz = _lstsq_residuals([X[common], Y[common], Z[common]], lab)
    r12, r13, r23 = (abs(scipy.stats.pearsonr(a, b).statistic) for a, b in ((rx, rz), (ry, rz), (rx, ry)))
    n = int(common.sum()) - (len(set(lab)) - 1)
    t = williams_t(r12, r13, r23, n)
    assert res.n == n and res.df == n - 3
    assert (res.r12, res.r13, res.r23) == pytest.approx((r12, r13, r23), abs=1e-12)
    assert res.statistic == pytest.approx(t, rel=1e-9)
    assert res.pvalue == pytest.approx(2 * scipy.stats.t.sf(abs(t), n - 3), rel=1e-9)


def test_paired_bootstrap_is_the_difference_of_the_two_resampled_partials():
    X, Y, Z, _ = _data(10, 5, 8)
    k = 25
    res = partial.partial_paired_bootstrap_test(X, Y, Z, "system", "kendall", "both", k=k, seed=2,
                                                alternative="greater")
    common = ~np.isnan(X) & ~np.isnan(Y) & ~np.isnan(Z)
    Xc, Yc = np.where(common, X, np.nan), np.where(common, Y, np.nan)
    sys_labels = np.repeat(np.arange(5)[:, None], 8, axis=1).astype(object)
    from functools import partial as bind
    rows, cols = resampling.ResampleStream(np.random.SeedSequence(2), bind(
        resampling.bootstrap_indices, n_systems=5, n_inputs=8, method="both")).take(0, k)
    for b in range(k):
        sub = lambda A: A[rows[b]][:, cols[b]]  # noqa: E731
        expected = (partial.partial_correlation(sub(Xc), sub(Z), sub(sys_labels), "kendall").value
                    - partial.partial_correlation(sub(Yc), sub(Z), sub(sys_labels), "kendall").value)
        assert res.samples[b] == pytest.approx(expected, abs=1e-12) or (np.isnan(expected) and np.isnan(res.samples[b]))
    valid = res.samples[~np.isnan(res.samples)]
    assert res.pvalue == (valid >= 2 * res.delta).sum() / valid.size


def test_identical_metrics_are_not_different():
    X, _, Z, labels = _data(11)
    assert partial.partial_permutation_test(X, X, Z, labels, k=50, seed=0, alternative="two-sided").pvalue == 1.0
    assert partial.partial_williams_test(X, 2 * X, Z, "system").statistic == 0.0
