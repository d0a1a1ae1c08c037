"""Simulations and normality diagnostics as pure functions (analyses.simulation)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from metaeval.analyses import simulation as sim
from metaeval.analyses import stats

CONFIGS = [(lv, c) for lv in ("system", "summary", "global") for c in ("pearson", "spearman", "kendall")]


def _matrices(n_sys=10, n_in=16, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_sys, n_in))
    Z = np.round(X + rng.normal(size=(n_sys, n_in)))  # ties, like discrete human scores
    Y = X + 2 * rng.normal(size=(n_sys, n_in))
    return np.round(X, 1), Y, Z


def test_split_of_partly_judged_inputs_halves_each_kind():
    """judged=: the systems and the judged inputs split as data holding only the judged inputs;
    the others halved separately."""
    judged = np.array([True, False, False, True, True, False, True, True, False, False, False])
    s = sim.split_halves(9, 11, seed=2, trial=3, judged=judged)
    alone = sim.split_halves(9, 5, seed=2, trial=3)
    index = np.flatnonzero(judged)
    for half, alone_half in ((s.inputs_a, alone.inputs_a), (s.inputs_b, alone.inputs_b)):
        np.testing.assert_array_equal(half[judged[half]], index[alone_half])
        assert (~judged[half]).sum() == 3
    np.testing.assert_array_equal(s.systems_a, alone.systems_a)
    assert not set(s.inputs_a) & set(s.inputs_b)
    plain = sim.split_halves(9, 11, seed=2, trial=3)
    same = sim.split_halves(9, 11, seed=2, trial=3, judged=np.ones(11, bool))
    assert all(np.array_equal(a, b) for a, b in zip(vars(plain).values(), vars(same).values()))
    with pytest.raises(ValueError, match="2 judged inputs"):
        sim.split_halves(9, 11, 0, 0, judged=np.arange(11) == 0)


def test_splits_are_disjoint_equal_halves_and_seeded():
    s = sim.split_halves(25, 9, seed=1, trial=4)
    assert len(s.systems_a) == len(s.systems_b) == 12 and len(s.inputs_a) == len(s.inputs_b) == 4
    assert not set(s.systems_a) & set(s.systems_b) and not set(s.inputs_a) & set(s.inputs_b)
    again = sim.split_halves(25, 9, seed=1, trial=4)
    assert all(np.array_equal(a, b) for a, b in zip(vars(s).values(), vars(again).values()))
    other = sim.split_halves(25, 9, seed=1, trial=5)
    assert not np.array_equal(s.systems_a, other.systems_a)
    with pytest.raises(ValueError, match="at least 4 systems"):
        sim.split_halves(3, 10, 0, 0)


@pytest.mark.parametrize("method", sim.CI_METHODS)
def test_coverage_trials_are_the_statistics_core_on_each_split(method):
    X, _, Z = _matrices()
    trials = [0, 7]
    result = sim.coverage_trials(X, Z, method, CONFIGS, trials, k=100, alpha=0.1, seed=4)
    for config, r in result.items():
        for i, t in enumerate(trials):
            split = sim.split_halves(*X.shape, seed=4, trial=t)
            (XA, XB), (ZA, ZB) = split.halves(X), split.halves(Z)
            if method == "fisher":
                ci = stats.fisher_ci(XA, ZA, *config, alpha=0.1)
            else:
                ci = stats.bootstrap_ci(XA, ZA, *config, method.removeprefix("boot-"), k=100, alpha=0.1,
                                        seed=sim.trial_seed(4, sim.RESAMPLE_STREAM, t))
            np.testing.assert_allclose([r.lower[i], r.upper[i]], [ci.lower, ci.upper], rtol=0, atol=1e-12)
            assert r.heldout[i] == stats.correlate(XB, ZB, *config)
        counts = r.counts()
        assert counts.trials == 2 and counts.contains + counts.too_high + counts.too_low + counts.undefined == 2


def test_coverage_counts_classify_outcomes():
    r = sim.CoverageTrials(np.arange(5), lower=np.array([0.1, 0.1, 0.1, np.nan, 0.1]),
                           upper=np.array([0.5, 0.5, 0.5, 0.5, 0.5]), heldout=np.array([0.3, 0.6, 0.0, 0.3, 0.5]))
    c = r.counts()
    assert (c.contains, c.too_high, c.too_low, c.undefined) == (2, 1, 1, 1)
    assert c.coverage == 0.5
    assert (c + c).trials == 10


def test_fisher_coverage_of_bivariate_normal_matches_theory():
    """System means bivariate normal with rho = 0.6. Fisher's z of each half (n = 30 systems) is
    ~ N(atanh rho, 1 / (n - 3)) and the halves are independent, so the 95% CI of half A contains
    r_B with probability 2 Phi(1.96 / sqrt 2) - 1 = 0.834. Fresh data every 3 trials, so that the
    rate is not conditional on one sample."""
    rng = np.random.default_rng(0)
    total = sim.CoverageCounts(0, 0, 0, 0, 0)
    for dataset in range(500):
        means = rng.multivariate_normal([0, 0], [[1, 0.6], [0.6, 1]], size=60)
        X, Z = (np.repeat(means[:, [i]], 2, axis=1) for i in (0, 1))  # 2 inputs: the means twice
        result = sim.coverage_trials(X, Z, "fisher", [("system", "pearson")], range(3), seed=dataset)
        total = total + result[("system", "pearson")].counts()
    expected = 2 * scipy.stats.norm.cdf(scipy.stats.norm.ppf(0.975) / np.sqrt(2)) - 1
    assert total.trials == 1500 and total.undefined == 0
    assert abs(total.coverage - expected) < 4 * np.sqrt(expected * (1 - expected) / total.trials)


@pytest.mark.parametrize("method", sim.TEST_METHODS)
def test_power_pvalues_are_the_statistics_core_on_each_trial(method):
    X, Y, Z = _matrices()
    Ys = np.stack([Y, X + 0.1 * Y, X.copy()])  # the last one is X itself
    trials = [3, 4, 5]
    result = sim.power_pvalues(X, Ys, Z, method, CONFIGS, trials, k=100, seed=2)
    family, _, how = method.partition("-")
    for config, p in result.items():
        for i, t in enumerate(trials):
            seed = sim.trial_seed(2, sim.RESAMPLE_STREAM, t)
            if family == "williams":
                try:
                    expected = stats.williams_test(X, Ys[i], Z, *config, alternative="greater").pvalue
                except ZeroDivisionError:  # identical metrics at the system level
                    expected = np.nan
            elif family == "perm":
                expected = stats.permutation_test(X, Ys[i], Z, *config, how, k=100, alternative="greater",
                                                  seed=seed).pvalue
            else:
                expected = stats.paired_bootstrap_test(X, Ys[i], Z, *config, how, k=100, alternative="greater",
                                                       seed=seed).pvalue
            np.testing.assert_equal(p[i], expected)
        if family != "williams":
            assert p[2] == 1.0  # identical metrics never differ


@pytest.mark.parametrize("method", sim.TEST_METHODS)
def test_power_pvalue_of_an_undefined_comparison_is_nan(method):
    """A constant R_k has no correlation: no p-value (it used to be 1/(1 + k) for perm-*)."""
    X, _, Z = _matrices()
    result = sim.power_pvalues(X, np.ones((1, *X.shape)), Z, method, CONFIGS, [0], k=50, seed=0)
    assert all(np.isnan(p[0]) for p in result.values())


def test_power_under_the_null_is_about_alpha():
    """X and Y equally good (exchangeable) metrics: Perm-Both rejects in about 5% of trials."""
    rng = np.random.default_rng(5)
    latent = rng.normal(size=(8, 12))
    Z = latent + rng.normal(size=latent.shape)
    X = latent + rng.normal(size=latent.shape)
    trials = 300
    Ys = latent + rng.normal(size=(trials, *latent.shape))
    p = sim.power_pvalues(X, Ys, Z, "perm-both", [("summary", "pearson")], range(trials), k=200, seed=0)
    rate = np.mean(p[("summary", "pearson")] <= 0.05)
    assert 0.01 <= rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / trials)


def test_normality_equals_scipy_shapiro():
    rng = np.random.default_rng(0)
    A = np.exp(rng.normal(size=(15, 20)))
    A[0, :3] = np.nan
    A[:13, 5] = np.nan  # an input with 2 values: not tested
    system, summary = sim.normality(A)
    means = np.nanmean(A, axis=1)
    expected = scipy.stats.shapiro(means)
    assert (system.statistic, system.p_value, system.n) == (expected.statistic, expected.pvalue, 15)
    columns = [A[~np.isnan(A[:, j]), j] for j in range(20) if j != 5]
    ps = np.array([scipy.stats.shapiro(c).pvalue for c in columns])
    assert summary.n == 19 and summary.percent_significant == 100 * np.mean(ps < 0.05)
    assert np.isnan(summary.statistic) and np.isnan(system.percent_significant)


def test_argument_errors():
    X, Y, Z = _matrices()
    with pytest.raises(ValueError, match="unknown CI method"):
        sim.coverage_trials(X, Z, "boot", [("system", "pearson")], [0])
    with pytest.raises(ValueError, match="level"):
        sim.coverage_trials(X, Z, "fisher", [("systems", "pearson")], [0])
    with pytest.raises(ValueError, match="one matrix per trial"):
        sim.power_pvalues(X, Y, Z, "perm-both", [("system", "pearson")], [0])
    with pytest.raises(ValueError, match="seed"):
        sim.trial_seed(-1, 0, 0)


def _partly_judged(seed=6, n_sys=10, judged=8, extra=12):
    """The metrics score ``judged + extra`` inputs, the human only the first ``judged``."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(n_sys, 1))
    X = np.round(quality + rng.normal(size=(n_sys, judged + extra)), 2)
    Y = np.round(quality + 2 * rng.normal(size=X.shape), 2)
    Z = np.full(X.shape, np.nan)
    Z[:, :judged] = np.round(quality + rng.normal(size=(n_sys, judged)), 1)
    return X, Y, Z, judged


@pytest.mark.parametrize("method", sim.CI_METHODS)
def test_coverage_under_each_system_inputs_protocol_is_what_ci_computes(method):
    """all: the judged and the unjudged inputs split separately; each trial's interval is `ci
    --system-inputs all` on half A (intervals.evaluate_ci: at the system level the metric's and the
    human's inputs drawn independently, elsewhere the judged inputs only) and the held-out value
    `correlate --system-inputs all` on half B; judged: the trials of the data holding only the
    judged inputs. The levels other than system do not depend on the protocol."""
    from metaeval.runs.metrics import comparisons, correlations, intervals

    X, _, Z, judged = _partly_judged()
    trials, configs = [0, 5, 9], [(lv, c) for lv in ("system", "summary", "global") for c in ("pearson", "kendall")]
    every = sim.coverage_trials(X, Z, method, configs, trials, k=60, alpha=0.1, seed=2, system_inputs="all")
    for (level, coefficient), r in every.items():
        for i, t in enumerate(trials):
            split = sim.split_halves(*X.shape, seed=2, trial=t, judged=~np.isnan(Z).all(axis=0))
            assert [np.isnan(Z[0, half]).sum() for half in (split.inputs_a, split.inputs_b)] == [6, 6]
            (XA, XB), (ZA, ZB) = split.halves(X), split.halves(Z)
            ci = intervals.evaluate_ci([XA, ZA], level, coefficient, method, 0.1, 60,
                                    sim.trial_seed(2, sim.RESAMPLE_STREAM, t), "all")
            held = correlations.evaluate_correlation([XB, ZB], level, coefficient, "all")["value"]
            np.testing.assert_allclose([r.lower[i], r.upper[i], r.heldout[i]],
                                       [ci["lower"], ci["upper"], held], rtol=0, atol=1e-12)
    only = sim.coverage_trials(X[:, :judged].copy(), Z[:, :judged].copy(), method, configs, trials, k=60, alpha=0.1,
                               seed=2)
    paired = sim.coverage_trials(X, Z, method, configs, trials, k=60, alpha=0.1, seed=2, system_inputs="judged")
    for c in configs:
        for field in ("lower", "upper", "heldout"):
            np.testing.assert_array_equal(getattr(paired[c], field), getattr(only[c], field))
            if c[0] != "system":
                np.testing.assert_array_equal(getattr(every[c], field), getattr(only[c], field))
    if method in ("boot-inputs", "boot-both"):   # the protocols differ here (else the test says little)
        assert not np.allclose(every[("system", "pearson")].lower, paired[("system", "pearson")].lower)


@pytest.mark.parametrize("method", sim.TEST_METHODS)
def test_power_under_each_system_inputs_protocol_is_what_compare_computes(method):
    from metaeval.runs.metrics import comparisons, correlations, intervals

    X, Y, Z, judged = _partly_judged(seed=8)
    Ys = np.stack([Y, X + 0.5 * Y])
    trials, configs = [1, 2], [(lv, c) for lv in ("system", "summary") for c in ("pearson", "kendall")]
    for protocol in ("all", "judged"):
        got = sim.power_pvalues(X, Ys, Z, method, configs, trials, k=60, seed=3, system_inputs=protocol)
        for (level, coefficient), p in got.items():
            for i, t in enumerate(trials):
                expected = comparisons.evaluate_test([X, Ys[i], Z], level, coefficient, method, "greater", 60,
                                                sim.trial_seed(3, sim.RESAMPLE_STREAM, t),
                                                system_inputs=protocol)["p_value"]
                np.testing.assert_allclose(p[i], np.nan if expected is None else expected, rtol=0, atol=1e-12)
        if protocol == "judged":
            only = sim.power_pvalues(X[:, :judged].copy(), Ys[:, :, :judged].copy(), Z[:, :judged].copy(), method,
                                     configs, trials, k=60, seed=3)
            for c in configs:
                np.testing.assert_array_equal(got[c], only[c])


def test_system_inputs_protocol_is_checked():
    X, Y, Z, _ = _partly_judged()
    with pytest.raises(ValueError, match="system_inputs"):
        sim.coverage_trials(X, Z, "fisher", [("system", "pearson")], [0], system_inputs="some")
    with pytest.raises(ValueError, match="system_inputs"):
        sim.power_pvalues(X, Y[None], Z, "williams", [("system", "pearson")], [0], system_inputs="some")
