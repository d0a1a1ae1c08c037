"""CIs, tests and corrections: hand-computed values, p-value formulas, type-I error, errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from metaeval.analyses import (
    bootstrap_ci,
    correct_pvalues,
    correlate,
    fisher_ci,
    paired_bootstrap_test,
    permutation_test,
    williams_t,
    williams_test,
)
from tests._jsonl_matrix import dataset_xyz

Z_975 = 1.959963984540054  # standard normal 0.975 quantile


@pytest.fixture(scope="module")
def xyz() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(10, 12))
    X = Z + rng.normal(size=Z.shape)
    Y = Z + 2 * rng.normal(size=Z.shape)
    return X, Y, Z


# --- Fisher ---------------------------------------------------------------------------------


def test_fisher_pearson_by_hand(xyz) -> None:
    X, _, Z = xyz
    r = np.corrcoef(X.mean(axis=1), Z.mean(axis=1))[0, 1]
    result = fisher_ci(X, Z, "system", "pearson")
    half = Z_975 / np.sqrt(10 - 3)
    assert result.estimate == pytest.approx(r)
    assert (result.lower, result.upper) == pytest.approx((np.tanh(np.arctanh(r) - half), np.tanh(np.arctanh(r) + half)))
    assert result.n == 10


def test_fisher_numbers_for_a_known_r() -> None:
    # (1, 2, 3) vs (1, 3, 2) has r = 0.5; 9 copies pooled at the global level: n = 27, b = 3,
    # half width 1.959964 / sqrt(24) = 0.400076; tanh(0.549306 -/+ 0.400076)
    X = np.tile([1.0, 2.0, 3.0], (9, 1))
    Z = np.tile([1.0, 3.0, 2.0], (9, 1))
    result = fisher_ci(X, Z, "global", "pearson")
    assert result.n == 27
    assert (result.lower, result.upper) == pytest.approx((0.148132183, 0.739503195), abs=1e-8)


def test_fisher_rank_constants_and_undefined_small_n(xyz) -> None:
    X, _, Z = xyz
    rs = correlate(X, Z, "summary", "spearman")
    result = fisher_ci(X, Z, "summary", "spearman")
    half = Z_975 * np.sqrt(1 + rs**2 / 2) / np.sqrt(10 - 3)
    assert result.lower == pytest.approx(np.tanh(np.arctanh(rs) - half))
    rk = correlate(X, Z, "global", "kendall")
    result = fisher_ci(X, Z, "global", "kendall")
    assert result.upper == pytest.approx(np.tanh(np.arctanh(rk) + Z_975 * np.sqrt(0.437) / np.sqrt(120 - 4)))
    four = fisher_ci(X[:4], Z[:4], "system", "kendall")  # n = 4 <= b = 4
    assert np.isnan(four.lower) and np.isnan(four.upper)
    assert not np.isnan(fisher_ci(X[:5], Z[:5], "system", "kendall").lower)


# --- Williams -------------------------------------------------------------------------------


def test_williams_check_value() -> None:
    t = williams_t(0.8, 0.6, 0.7, 20)
    assert scipy.stats.t.sf(t, 17) == pytest.approx(0.0487, abs=5e-5)
    assert np.isnan(williams_t(0.8, 0.6, 0.7, 3))


def test_williams_test_uses_level_correlations(xyz) -> None:
    X, Y, Z = xyz
    result = williams_test(X, Y, Z, "system", "pearson", alternative="greater")
    r12, r13, r23 = (abs(correlate(A, B, "system")) for A, B in ((X, Z), (Y, Z), (X, Y)))
    assert (result.r12, result.r13, result.r23, result.n, result.df) == pytest.approx((r12, r13, r23, 10, 7))
    assert result.statistic == pytest.approx(williams_t(r12, r13, r23, 10))
    assert result.pvalue == pytest.approx(scipy.stats.t.sf(result.statistic, 7))
    less = williams_test(X, Y, Z, "system", "pearson", alternative="less").pvalue
    two = williams_test(X, Y, Z, "system", "pearson", alternative="two-sided").pvalue
    assert less == pytest.approx(1 - result.pvalue)
    assert two == pytest.approx(2 * min(result.pvalue, less))


def test_williams_identical_metrics_and_degenerate_inputs() -> None:
    assert williams_t(0.7, 0.7, 1.0, 20) == 0.0  # X = Y: det = 0, the formula would be 0/0
    assert np.isnan(williams_t(np.nan, 0.6, 0.7, 20))
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(10, 4))
    X = Z + rng.normal(size=Z.shape)
    assert williams_test(X, X, Z, "system", "pearson", alternative="greater").pvalue == pytest.approx(0.5)
    result = williams_test(X, X, Z, "system", "pearson")  # two-sided (the default): t = 0, p = 1
    assert result.statistic == 0.0 and result.pvalue == pytest.approx(1.0)


def test_williams_records_negative_correlations_and_approximation() -> None:
    rng = np.random.default_rng(4)
    Z = rng.normal(size=(15, 5))
    X = -Z + 0.3 * rng.normal(size=Z.shape)  # disagrees in sign with Z
    Y = Z + 2.0 * rng.normal(size=Z.shape)
    result = williams_test(X, Y, Z, "system", "pearson")
    assert "r(X,Z)" in result.conventions["negative_correlations"]
    assert result.r12 == pytest.approx(abs(correlate(X, Z, "system")))
    assert "approximation" not in result.conventions
    assert "kendall" in williams_test(X, Y, Z, "system", "kendall").conventions["approximation"]


# --- Bootstrap CI ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
def test_bootstrap_ci_is_the_percentile_interval_of_its_samples(xyz, method: str) -> None:
    X, _, Z = xyz
    result = bootstrap_ci(X, Z, "summary", "kendall", method, k=300, alpha=0.1, seed=1)
    assert result.samples.shape == (300,)
    valid = result.samples[~np.isnan(result.samples)]
    assert (result.lower, result.upper) == pytest.approx(tuple(np.percentile(valid, [5, 95])))
    assert result.estimate == correlate(X, Z, "summary", "kendall")
    assert result.lower < result.estimate < result.upper
    assert result.conventions | {"seed": 1, "k": 300, "alpha": 0.1, "method": f"boot-{method}",
                                 "level": "summary", "coefficient": "kendall",
                                 "kendall_variant": "b"} == result.conventions


def test_the_percentile_interval_is_numpys_over_the_defined_samples() -> None:
    """resampling.percentile_interval, the one percentile interval of every bootstrap: numpy's
    nanpercentile at 100 alpha/2 and 100 (1 - alpha/2), the defined count, NaN bounds for none."""
    from metaeval.analyses.stats.resampling import percentile_interval

    rng = np.random.default_rng(3)
    samples = rng.normal(size=501)
    samples[rng.choice(501, 40, replace=False)] = np.nan
    for alpha in (0.05, 0.1, 0.3):
        lower, upper, n = percentile_interval(samples, alpha)
        assert (lower, upper) == tuple(np.nanpercentile(samples, [100 * alpha / 2, 100 * (1 - alpha / 2)]))
        assert n == 461 and isinstance(lower, float) and lower < upper
    lower, upper, n = percentile_interval(np.full(7, np.nan), 0.05)
    assert np.isnan(lower) and np.isnan(upper) and n == 0
    assert percentile_interval(np.array([2.0]), 0.05) == (2.0, 2.0, 1)


def test_bootstrap_drops_undefined_resamples() -> None:
    # 3 systems, one differing: many Boot-Systems resamples are constant -> NaN, dropped
    X = np.array([[1.0, 2.0], [1.0, 2.0], [3.0, 1.0]])
    Z = np.array([[0.0, 1.0], [0.5, 1.0], [2.0, 0.0]])
    result = bootstrap_ci(X, Z, "system", "pearson", "systems", k=200, seed=0)
    nan = np.isnan(result.samples)
    assert 0 < nan.sum() < 200
    assert result.conventions["n_valid_samples"] == 200 - nan.sum()
    assert result.lower == pytest.approx(np.percentile(result.samples[~nan], 2.5))


@pytest.mark.shared_data
def test_bootstrap_on_realsumm_brackets_the_estimate() -> None:
    X, _, Z = dataset_xyz("realsumm")
    result = bootstrap_ci(X, Z, "system", "pearson", "both", k=500, seed=0)
    assert result.lower < result.estimate < result.upper <= 1


# --- Permutation and paired bootstrap -------------------------------------------------------


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_permutation_pvalue_formula(xyz, alternative: str) -> None:
    X, Y, Z = xyz
    paper = permutation_test(X, Y, Z, "summary", "pearson", "both", k=200, alternative=alternative, seed=3)
    d, s = paper.delta, paper.samples
    count = {"greater": s >= d, "less": s <= d, "two-sided": np.abs(s) >= abs(d)}[alternative].sum()
    assert paper.pvalue == pytest.approx((1 + count) / 201)
    std = lambda A: (A - A.mean()) / A.std()  # noqa: E731
    assert d == pytest.approx(correlate(std(X), Z, "summary") - correlate(std(Y), Z, "summary"))
    nlp = permutation_test(X, Y, Z, "summary", "pearson", "both", k=200, alternative=alternative, seed=3,
                           variant="nlpstats")
    s = nlp.samples
    count = {"greater": s >= d, "less": s <= d, "two-sided": np.abs(s) >= abs(d)}[alternative].sum()
    assert nlp.pvalue == pytest.approx(count / 200)
    assert nlp.conventions["variant"] == "nlpstats" and paper.conventions["variant"] == "paper"


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_paired_bootstrap_pvalue_formula(xyz, alternative: str) -> None:
    X, Y, Z = xyz
    result = paired_bootstrap_test(X, Y, Z, "system", "kendall", "both", k=200, alternative=alternative, seed=3)
    d, s = result.delta, result.samples
    assert d == pytest.approx(correlate(X, Z, "system", "kendall") - correlate(Y, Z, "system", "kendall"))
    count = {"greater": s >= 2 * d, "less": s <= 2 * d, "two-sided": np.abs(s - d) >= abs(d)}[alternative].sum()
    assert result.pvalue == pytest.approx(count / 200)
    if alternative == "two-sided":  # both tails of the null (shifted) distribution
        count = sum(1 for b in s if b - d >= abs(d) or b - d <= -abs(d))
        assert result.pvalue == pytest.approx(count / 200)


def test_paired_bootstrap_two_sided_counts_the_near_tail() -> None:
    """A resample of delta_b = 0 when delta > 0 is as far from delta as the null is: it counts
    for the two-sided p, and two-sided p >= one-sided p."""
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(12, 6))
    X = Z + 0.8 * rng.normal(size=Z.shape)
    Y = Z + 1.0 * rng.normal(size=Z.shape)
    kw = dict(level="system", coefficient="pearson", method="both", k=400, seed=1)
    one = paired_bootstrap_test(X, Y, Z, alternative="greater", **kw)
    two = paired_bootstrap_test(X, Y, Z, alternative="two-sided", **kw)
    assert one.delta > 0
    assert two.pvalue >= one.pvalue
    assert two.pvalue == pytest.approx(np.mean((two.samples >= 2 * two.delta) | (two.samples <= 0)))


def test_identical_metrics_give_p_one(xyz) -> None:
    X, _, Z = xyz
    assert permutation_test(X, X, Z, "summary", "kendall", k=50, seed=0).pvalue == 1.0
    assert paired_bootstrap_test(X, X, Z, "global", "pearson", k=50, seed=0).pvalue == 1.0


def test_a_clearly_better_metric_is_significant() -> None:
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(30, 20))
    X = Z + 0.5 * rng.normal(size=Z.shape)
    Y = Z + 3 * rng.normal(size=Z.shape)
    for level in ("system", "summary", "global"):
        assert permutation_test(X, Y, Z, level, "pearson", k=200, seed=0).pvalue < 0.05  # two-sided
        assert permutation_test(X, Y, Z, level, "pearson", k=200, alternative="greater", seed=0).pvalue < 0.05
        assert permutation_test(Y, X, Z, level, "pearson", k=200, alternative="greater", seed=0).pvalue > 0.5


@pytest.mark.parametrize(("method", "level"), [("both", "summary"), ("systems", "system")])
def test_permutation_type_one_error_under_the_null(method: str, level: str) -> None:
    """X and Y exchangeable given Z: p-values ~ uniform, rejection rate ~ alpha."""
    rng = np.random.default_rng(123)
    pvalues = []
    for rep in range(400):
        Z = rng.normal(size=(8, 10))
        X = Z + rng.normal(size=Z.shape)
        Y = Z + rng.normal(size=Z.shape)
        pvalues.append(permutation_test(X, Y, Z, level, "pearson", method, k=99, seed=rep).pvalue)
    p = np.array(pvalues)
    # binomial(400, alpha) bounds at ~4 sigma
    assert (p <= 0.05).sum() <= 20 + 4 * np.sqrt(400 * 0.05 * 0.95)
    assert (p <= 0.5).sum() == pytest.approx(200, abs=4 * np.sqrt(100))
    assert scipy.stats.kstest(p, "uniform").pvalue > 1e-3


# --- Multiple comparisons -------------------------------------------------------------------


P = [0.01, 0.04, 0.03, 0.005]


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("bonferroni", [0.04, 0.16, 0.12, 0.02]),
        ("holm", [0.03, 0.06, 0.06, 0.02]),
        ("bh", [0.02, 0.04, 0.04, 0.02]),
        ("none", P),
    ],
)
def test_corrections_by_hand(method: str, expected: list[float]) -> None:
    np.testing.assert_allclose(correct_pvalues(P, method), expected)


def test_corrections_cap_at_one_and_skip_nan() -> None:
    np.testing.assert_allclose(correct_pvalues([0.5, 0.6], "bonferroni"), [1.0, 1.0])
    np.testing.assert_allclose(correct_pvalues([0.01, np.nan, 0.04], "bonferroni"), [0.02, np.nan, 0.08])
    np.testing.assert_allclose(correct_pvalues([0.04, 0.01, 0.03], "bh"), [0.04, 0.03, 0.04])
    assert correct_pvalues([], "holm").size == 0
    with pytest.raises(ValueError, match=r"`method` must be one of \['bonferroni', 'holm', 'bh', 'none', 'by'\]"):
        correct_pvalues(P, "fdr")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        correct_pvalues([1.5], "holm")


# --- Argument validation --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda X, Y, Z: bootstrap_ci(X, Z, "system", "pearson", "rows"), r"`method` must be one of \['systems', 'inputs', 'both'\]"),
        (lambda X, Y, Z: bootstrap_ci(X, Z, "system", k=0), r"`k` must be an integer >= 1"),
        (lambda X, Y, Z: bootstrap_ci(X, Z, "system", k=2.5), r"`k` must be an integer >= 1"),
        (lambda X, Y, Z: bootstrap_ci(X, Z, "system", alpha=1.0), r"0 < alpha < 1"),
        (lambda X, Y, Z: fisher_ci(X, Z, "system", alpha=0), r"0 < alpha < 1"),
        (lambda X, Y, Z: bootstrap_ci(X, Z, "system", seed=-1), r"`seed` must be None or a non-negative"),
        (lambda X, Y, Z: bootstrap_ci(X, Z, "system", batch_size=0), r"`batch_size`"),
        (lambda X, Y, Z: permutation_test(X, Y, Z, "system", alternative="bigger"), r"`alternative` must be one of \['greater', 'less', 'two-sided'\]"),
        (lambda X, Y, Z: permutation_test(X, Y, Z, "system", variant="xor"), r"`variant` must be one of \['paper', 'nlpstats'\]"),
        (lambda X, Y, Z: williams_test(X, Y[:, :3], Z, "system"), r"`X` and `Y` must have the same shape"),
        (lambda X, Y, Z: paired_bootstrap_test(X, Y, Z, "sys"), r"`level` must be one of"),
    ],
)
def test_bad_arguments_raise(xyz, call, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(*xyz)


@pytest.mark.parametrize("level", ["system", "summary", "global"])
@pytest.mark.parametrize("scale", [3.0, 100.0, 0.01])
def test_a_rescaled_copy_is_never_significantly_better(level: str, scale: float) -> None:
    """X = c Y: every correlation equals Y's up to ~1e-16; no test may call that a difference."""
    rng = np.random.default_rng(7)
    Z = rng.normal(size=(12, 8))
    Y = Z + rng.normal(size=Z.shape)
    X = scale * Y
    for alternative in ("greater", "less", "two-sided"):
        w = williams_test(X, Y, Z, level, "pearson", alternative=alternative)
        assert w.statistic == 0.0 and w.pvalue >= 0.5
        for test in (permutation_test, paired_bootstrap_test):
            r = test(X, Y, Z, level, "pearson", "both", k=100, alternative=alternative, seed=0)
            assert r.delta == 0.0 and r.pvalue == 1.0, (test.__name__, alternative, r.delta)


# --- Undefined comparisons: no p-value ------------------------------------------------------

# X's system means are all 2 (r(X,Z) undefined at the system level) while its cells vary, so
# resamples over inputs have defined deltas: a p-value from them would look meaningful
SAME_MEANS = np.array([[1.0, 3.0, 2.0], [3.0, 1.0, 2.0], [2.0, 2.0, 2.0], [0.0, 4.0, 2.0], [4.0, 0.0, 2.0]])


def _undefined_cases():
    rng = np.random.default_rng(8)
    Z = rng.normal(size=(6, 5))
    Y = Z + rng.normal(size=Z.shape)
    constant = np.ones_like(Z)
    Zm = rng.normal(size=SAME_MEANS.shape)
    Ym = Zm + rng.normal(size=Zm.shape)
    return {"constant X": (constant, Y, Z), "constant Y": (Y, constant, Z),
            "equal system means": (SAME_MEANS, Ym, Zm)}


TESTS = [(permutation_test, m, v) for m in ("systems", "inputs", "both") for v in ("paper", "nlpstats")] + [
    (paired_bootstrap_test, m, None) for m in ("systems", "inputs", "both")]


@pytest.mark.parametrize(("case", "level"), [(c, lv) for c in ("constant X", "constant Y")
                                             for lv in ("system", "summary", "global")]
                         + [("equal system means", "system")])
@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_an_undefined_delta_has_no_pvalue(case: str, level: str, alternative: str) -> None:
    """Permutation tests used to give p = 1/(1 + k) (significant in both directions) and the
    paired bootstrap p = 0 when delta was NaN: the resamples were counted against a NaN."""
    X, Y, Z = _undefined_cases()[case]
    assert np.isnan(correlate(X, Z, level) - correlate(Y, Z, level))
    defined_samples = 0
    for test, method, variant in TESTS:
        extra = {} if variant is None else {"variant": variant}
        r = test(X, Y, Z, level, "pearson", method, k=60, alternative=alternative, seed=0, **extra)
        assert np.isnan(r.delta) and np.isnan(r.pvalue), (test.__name__, method, variant, r.pvalue)
        assert r.conventions["pvalue_undefined"].startswith("delta undefined: r(")
        defined_samples += int((~np.isnan(r.samples)).sum())
    assert defined_samples > 0  # there were resamples to count: p must not come from them
    w = williams_test(X, Y, Z, level, "pearson", alternative=alternative)
    assert np.isnan(w.pvalue) and w.conventions["pvalue_undefined"].startswith("delta undefined: r(")


def test_pvalue_undefined_names_the_undefined_correlation() -> None:
    X, Y, Z = _undefined_cases()["constant Y"]
    r = permutation_test(X, Y, Z, "system", k=20, seed=0)
    assert r.conventions["pvalue_undefined"].startswith("delta undefined: r(Y,Z) undefined at the system level")
    assert "pvalue_undefined" not in permutation_test(X, X[:, ::-1], Z, "system", k=20, seed=0).conventions
    few = williams_test(X[:3], X[:3] + 1, Z[:3], "system")  # n = 3: no degrees of freedom
    assert np.isnan(few.pvalue) and "n = 3" in few.conventions["pvalue_undefined"]


def test_resampling_pvalue_is_nan_without_delta_or_resamples() -> None:
    from metaeval.analyses.stats.hypothesis import resampling_pvalue

    assert resampling_pvalue(0.2, 3, 9, add_one=True) == pytest.approx(4 / 10)
    assert resampling_pvalue(0.2, 3, 9, add_one=False) == pytest.approx(3 / 9)
    assert np.isnan(resampling_pvalue(np.nan, 0, 9, add_one=True))
    assert np.isnan(resampling_pvalue(0.2, 0, 0, add_one=False))


@pytest.mark.parametrize("method", ["bonferroni", "holm", "bh", "none"])
def test_corrections_over_the_defined_pvalues_only(method: str) -> None:
    p = np.array([0.03, np.nan, 0.01, 0.2, np.nan, 0.04])
    defined = ~np.isnan(p)
    out = correct_pvalues(p, method)
    assert np.isnan(out[~defined]).all()
    m = defined.sum()  # brute force over the 4 defined p-values
    ranked = np.sort(p[defined])
    by_hand = {"bonferroni": np.minimum(1, m * ranked),
               "holm": np.maximum.accumulate(np.minimum(1, (m - np.arange(m)) * ranked)),
               "bh": np.minimum.accumulate((m * ranked / np.arange(1, m + 1))[::-1])[::-1],
               "none": ranked}[method]
    np.testing.assert_allclose(out[defined], by_hand[np.argsort(np.argsort(p[defined]))])


# --- Any finite scale -----------------------------------------------------------------------


def _scaled_pairs():
    """(X, its rescaled copy, Y, Z): X around 1e307 (sums overflow) and around 1e-300."""
    rng = np.random.default_rng(9)
    Z = rng.normal(size=(9, 40))
    base = 2 + (Z + rng.normal(size=Z.shape)) / 4
    Y = Z + 2 * rng.normal(size=Z.shape)
    base[0, 3] = Z[2, 5] = np.nan
    return [(1e307 * base, 1e307 * base / 1e300, Y, Z), (1e307 * (base - 2), 1e307 * (base - 2) / 1e300, Y, Z),
            (1e-300 * base, 1e-300 * base * 1e300, Y, Z)]


@pytest.mark.parametrize("case", [0, 1, 2])
@pytest.mark.parametrize("level", ["system", "summary", "global"])
@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall", "kendall-c"])
def test_huge_and_tiny_values_give_the_rescaled_copys_inference(case: int, level: str, coefficient: str) -> None:
    big, copy, Y, Z = _scaled_pairs()[case]
    f, g = fisher_ci(big, Z, level, coefficient), fisher_ci(copy, Z, level, coefficient)
    np.testing.assert_allclose([f.estimate, f.lower, f.upper], [g.estimate, g.lower, g.upper], rtol=0, atol=1e-12)
    w, v = williams_test(big, Y, Z, level, coefficient), williams_test(copy, Y, Z, level, coefficient)
    assert np.isfinite(w.statistic) and w.statistic == pytest.approx(v.statistic, rel=1e-9)
    assert w.pvalue == pytest.approx(v.pvalue, abs=1e-12)
    for method in ("systems", "inputs", "both"):
        a, b = (bootstrap_ci(A, Z, level, coefficient, method, k=30, seed=1) for A in (big, copy))
        np.testing.assert_allclose(a.samples, b.samples, rtol=0, atol=1e-12)
        assert (a.lower, a.upper) == pytest.approx((b.lower, b.upper), abs=1e-12)
        for test in (permutation_test, paired_bootstrap_test):
            for first, second, alternative in ((big, Y, "greater"), (Y, big, "less"), (big, 3 * big, "two-sided")):
                rescaled = [copy if A is big else 3 * copy if A is not Y else Y for A in (first, second)]
                a = test(first, second, Z, level, coefficient, method, k=30, alternative=alternative, seed=1)
                b = test(*rescaled, Z, level, coefficient, method, k=30, alternative=alternative, seed=1)
                assert a.delta == pytest.approx(b.delta, abs=1e-12) and not np.isnan(a.delta)
                np.testing.assert_allclose(a.samples, b.samples, rtol=0, atol=1e-12)
                assert a.pvalue == b.pvalue, (test.__name__, method, alternative)
