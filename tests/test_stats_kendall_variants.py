"""Kendall variants with ties, tie calibration and soft pairwise accuracy against brute-force
loops written from the definitions (tests/_mtme_reference.py) and scipy."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from metaeval.analyses import stats
from metaeval.analyses.stats import batched, resampling
from metaeval.analyses.stats.validation import coefficient_iv
from metaeval.analyses.stats.kendall_variants import kendall_variant, pair_counts
from tests import _mtme_reference as ref
from tests._stats_reference import standardize

LEVELS = ("system", "summary", "global")
VARIANTS = ("a", "b", "23", "acc23")
NAMES = {"a": "kendall-a", "b": "kendall-b", "23": "kendall-23", "acc23": "acc-23"}


def _matrices(kind: str, seed: int):
    rng = np.random.default_rng(seed)
    if kind == "random":
        X, Z = rng.normal(size=(7, 9)), rng.normal(size=(7, 9))
    else:  # tie-heavy: few distinct values, a constant column, NaNs
        X, Z = rng.integers(0, 4, (7, 9)) / 2, rng.integers(0, 3, (7, 9)).astype(float)
        Z[:, 3] = 1.0
    X[0, 1] = Z[2, 5] = np.nan
    return X, Z


@pytest.mark.parametrize("kind", ["random", "ties"])
@pytest.mark.parametrize("seed", range(4))
def test_vector_variants_equal_pair_loop(kind, seed) -> None:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=15) if kind == "random" else rng.integers(0, 4, 15) / 4
    z = rng.integers(0, 3, 15).astype(float)
    x[3] = np.nan
    for eps in (0.0, 0.25, 0.6):
        for v in VARIANTS:
            np.testing.assert_allclose(kendall_variant(x, z, v, eps), ref.variant(x, z, v, eps), atol=1e-9,
                                       err_msg=f"{v} eps={eps}")


def test_tau_b_and_c_equal_scipy() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        x, z = rng.integers(0, 5, 12).astype(float), rng.integers(0, 4, 12).astype(float)
        np.testing.assert_allclose(kendall_variant(x, z, "b"), scipy.stats.kendalltau(x, z).statistic, atol=1e-12)
        np.testing.assert_allclose(stats.correlate(x[:, None], z[:, None], "global", "kendall-c"),
                                   scipy.stats.kendalltau(x, z, variant="c").statistic, atol=1e-12)


def test_long_vectors_use_row_blocks_with_the_same_counts(monkeypatch) -> None:
    from metaeval.analyses.stats import kendall_variants as kv

    rng = np.random.default_rng(0)
    x, z = rng.integers(0, 30, 1500) / 3, rng.integers(0, 5, 1500).astype(float)
    x[7] = np.nan
    c = pair_counts(x, z, 0.5)
    monkeypatch.setattr(kv, "PAIRWISE_BUDGET", 8 * 8 * 1500 * 40)  # many row blocks
    c2 = pair_counts(x, z, 0.5)
    assert (c.con, c.dis, c.ties_both) == (c2.con, c2.dis, c2.ties_both)
    tau = scipy.stats.kendalltau(x[~np.isnan(x)], z[~np.isnan(x)]).statistic
    np.testing.assert_allclose(kendall_variant(x, z, "b"), tau, atol=1e-12)
    assert c.con + c.dis + c.ties_metric + c.ties_human + c.ties_both == 1499 * 1498 / 2


@pytest.mark.parametrize("kind", ["random", "ties"])
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("v", VARIANTS)
def test_level_values_equal_pair_loop(kind, level, v) -> None:
    X, Z = _matrices(kind, 1)
    for eps in (0.0, 0.5):
        name = NAMES[v] + (f"[eps={eps}]" if eps else "")
        np.testing.assert_allclose(stats.correlate(X, Z, level, name), ref.level_variant(X, Z, level, v, eps),
                                   atol=1e-9, err_msg=name)


@pytest.mark.parametrize("kind", ["random", "ties"])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("coefficient", ["acc-23", "kendall-23"])
def test_tie_calibration_equals_exhaustive_search(kind, seed, level, coefficient) -> None:
    X, Z = _matrices(kind, seed)
    r = stats.tie_calibration(X, Z, level, coefficient)
    value, eps = ref.calibrate(X, Z, level, coefficient_iv(coefficient).variant)
    np.testing.assert_allclose(r.value, value, atol=1e-9)
    assert r.epsilon == eps
    assert r.value == stats.correlate(X, Z, level, f"{coefficient}[tie-calibrated]")
    assert r.value >= stats.correlate(X, Z, level, coefficient) - 1e-12  # epsilon = 0 is a candidate


def test_tie_calibration_of_a_constant_human_and_empty_levels() -> None:
    X = np.arange(12.0).reshape(3, 4)
    Z = np.ones((3, 4))
    r = stats.tie_calibration(X, Z, "global", "acc-23")
    assert r.value == 1.0 and r.epsilon == 11.0  # everything tied: all pairs agree
    r = stats.tie_calibration(X[:1], Z[:1], "summary")
    assert np.isnan(r.value) and np.isnan(r.epsilon)


def test_invalid_coefficients_are_refused() -> None:
    X = np.arange(12.0).reshape(3, 4)
    for bad in ("kendall-c[eps=0.1]", "acc-23[eps=-1]", "acc-23[eps=nan]", "kendall-b[tie-calibrated]",
                "pearson[eps=0.1]", "acc-23[foo]"):
        with pytest.raises(ValueError):
            stats.correlate(X, X, "system", bad)
    with pytest.raises(ValueError):
        stats.fisher_ci(X, X, "system", "acc-23")
    with pytest.raises(ValueError):
        stats.williams_test(X, X, X, "system", "kendall-23")


COEFS = ("kendall-a", "kendall-23", "acc-23", "acc-23[eps=0.5]", "kendall-b[eps=0.5]", "acc-23[tie-calibrated]",
         "kendall-23[tie-calibrated]")


def _reference(X, Z, level, coefficient):
    c = coefficient_iv(coefficient)
    if c.calibrated:
        return ref.calibrate(X, Z, level, c.variant)[0]
    return ref.level_variant(X, Z, level, c.variant, c.epsilon)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("coefficient", COEFS)
def test_bootstrap_resamples_equal_loop(level, coefficient) -> None:
    """Each resample's value equals the reference on the resampled matrix (calibrated: epsilon
    re-calibrated inside the resample)."""
    X, Z = _matrices("ties", 2)
    rows, cols = resampling.bootstrap_indices(np.random.default_rng(5), 6, 7, 9, "both")
    got = batched.bootstrap_statistics(X, Z, level, coefficient_iv(coefficient), rows, cols)
    for b in range(6):
        np.testing.assert_allclose(got[b], _reference(X[rows[b]][:, cols[b]], Z[rows[b]][:, cols[b]], level,
                                                      coefficient), atol=1e-9)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("coefficient", COEFS)
def test_permutation_resamples_equal_loop(level, coefficient) -> None:
    X, Z = _matrices("ties", 3)
    Y = np.round(X + np.random.default_rng(0).normal(size=X.shape), 0)
    Xs, Ys = standardize(X), standardize(Y)
    (mask,) = resampling.permutation_masks(np.random.default_rng(5), 6, 7, 9, "both", "paper")
    got = batched.permutation_statistics(Xs, Ys, Z, level, coefficient_iv(coefficient), mask)
    for b in range(6):
        Xp, Yp = np.where(mask[b], Ys, Xs), np.where(mask[b], Xs, Ys)
        want = _reference(Xp, Z, level, coefficient) - _reference(Yp, Z, level, coefficient)
        np.testing.assert_allclose(got[b], want, atol=1e-9)


def test_ci_and_tests_record_the_ties_conventions() -> None:
    X, Z = _matrices("random", 0)
    r = stats.bootstrap_ci(X, Z, "system", "acc-23[tie-calibrated]", k=5, seed=0)
    assert "tie_calibration" in r.conventions and r.conventions["kendall_variant"] == "acc23"
    r = stats.permutation_test(X, X[::-1], Z, "summary", "kendall-23[eps=0.25]", k=5, seed=0)
    assert r.conventions["epsilon"] == 0.25


# --- soft pairwise accuracy ----------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["random", "ties"])
@pytest.mark.parametrize("seed", range(3))
def test_soft_pairwise_accuracy_equals_exact_loop(kind, seed) -> None:
    rng = np.random.default_rng(seed)
    if kind == "random":
        Z = rng.normal(size=(5, 10))
        X = Z + rng.normal(size=(5, 10))
    else:  # MQM-like: many zeros and equal scores, so exact ties of the permuted sums
        Z = -rng.choice([0, 0, 0, 1, 5], size=(5, 10)).astype(float)
        X = np.round(Z + rng.normal(size=(5, 10)), 0)
    signs = stats.mtme_permutation_signs(60, 10, seed=4)
    r = stats.soft_pairwise_accuracy(X, Z, signs=signs)
    np.testing.assert_allclose(r.spa, ref.spa(X, Z, signs), atol=1e-9)
    assert r.spa == stats.soft_pairwise_accuracy(X, Z, k=60).spa  # mt-metrics-eval's draw for seed 4


def test_soft_pairwise_accuracy_properties() -> None:
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(4, 12))
    assert stats.soft_pairwise_accuracy(Z, Z, k=50).spa == 1.0
    assert stats.soft_pairwise_accuracy(3 * Z + 1, Z, k=50).spa == 1.0  # a positive affine copy: same tests
    X = Z.copy()
    X[1, 2] = np.nan  # input 2 dropped for every system
    r = stats.soft_pairwise_accuracy(X, Z, k=50)
    assert 2 not in r.inputs and r.inputs.size == 11
    assert np.isnan(stats.soft_pairwise_accuracy(Z[:1], Z[:1], k=5).spa)


def test_mtme_signs_are_its_draw() -> None:
    """compute_pairwise_p_values draws rng.random((K, M), float32), rounds in place, 2m - 1."""
    m = np.random.default_rng(4).random(size=(7, 5), dtype=np.float32)
    expected = np.where(m >= 0.5, 1.0, -1.0)  # rint of [0, 1): 0 below 0.5, 1 above (0.5 -> 0, even)
    expected[m == 0.5] = -1.0
    np.testing.assert_array_equal(stats.mtme_permutation_signs(7, 5), expected)
