"""The nlpstats equivalences of docs/reference/conventions.md, against nlpstats 0.0.1 itself (the
`test` extra installs it): correlations, Fisher intervals, Williams' test, and -- fed the same
draws -- the permutation tests and bootstrap intervals, so the same p-values, significance and
interval endpoints."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from metaeval.analyses import stats
from metaeval.analyses.stats import resampling

nlp = pytest.importorskip("nlpstats.correlations")

LEVELS = {"system": "system", "summary": "input", "global": "global"}   # here -> nlpstats


def _matrices(seed: int, n_sys: int = 6, n_in: int = 8):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n_sys, n_in))
    X = Z + rng.normal(size=Z.shape)
    Y = Z + rng.normal(scale=2.0, size=Z.shape)
    return X, Y, Z


@pytest.mark.parametrize("seed", range(3))
def test_correlations_fisher_and_williams_equal_nlpstats(seed):
    X, Y, Z = _matrices(seed)
    X[0, 1] = Y[0, 1] = Z[0, 1] = np.nan   # nlpstats needs the same NaN cells in every matrix
    for level, theirs in LEVELS.items():
        for coef in ("pearson", "spearman", "kendall"):
            assert stats.correlate(X, Z, level, coef) == pytest.approx(nlp.correlate(X, Z, theirs, coef), abs=1e-12)
            got, want = stats.fisher_ci(X, Z, level, coef), nlp.fisher(X, Z, theirs, coef)
            np.testing.assert_allclose([got.lower, got.upper], [want.lower, want.upper], atol=1e-12)
            for alternative in ("two-sided", "greater", "less"):
                p = stats.williams_test(X, Y, Z, level, coef, alternative).pvalue
                assert p == pytest.approx(nlp.williams_test(X, Y, Z, theirs, coef, alternative).pvalue, rel=1e-9)


def _draws(seed, k, n_sys, n_in, draw, method):
    return resampling.draw_range(np.random.SeedSequence(seed), 0, k,
                                 partial(draw, n_systems=n_sys, n_inputs=n_in, method=method))


@pytest.mark.parametrize("method", ["systems", "inputs"])
@pytest.mark.parametrize("level", ["system", "summary"])
def test_permutation_test_equals_nlpstats_with_the_same_swaps(monkeypatch, method, level):
    """variant "nlpstats": nlpstats' p = count / k and its swaps (np.random.rand > 0.5), fed the
    project's masks: the same p-value exactly, so the same decision."""
    X, Y, Z = _matrices(4)
    k, seed = 120, 3
    got = stats.permutation_test(X, Y, Z, level, "pearson", method, k, "two-sided", seed, variant="nlpstats")
    (masks,) = _draws(seed, k, *X.shape, resampling.permutation_masks, method)
    coins = iter(masks.astype(float))
    monkeypatch.setattr(np.random, "rand", lambda *shape: next(coins).reshape(shape))
    want = nlp.permutation_test(X, Y, Z, LEVELS[level], "pearson", method, alternative="two-sided", n_resamples=k)
    np.testing.assert_allclose(got.samples, want.samples, atol=1e-12)
    # the same count, but for resamples exactly as extreme as the observed delta, which rounding
    # decides either way (see test_a_resample_exactly_as_extreme_as_observed_counts)
    boundary = int((np.abs(np.abs(got.samples) - abs(got.delta)) <= 1e-12).sum())
    assert abs(got.pvalue - want.pvalue) * k <= boundary + 1e-9
    assert (got.pvalue <= 0.05) == (want.pvalue <= 0.05)


def test_a_resample_exactly_as_extreme_as_observed_counts():
    """Found by the nlpstats comparison: the full swap of a perm-inputs test (every input swapped)
    has delta_b = -delta exactly, computed as -delta + 2e-16; the two-sided count takes it (0.7.0
    missed it: analyses/stats/hypothesis.py compared without a tolerance)."""
    X, Y, Z = _matrices(4)
    got = stats.permutation_test(X, Y, Z, "system", "pearson", "inputs", 200, "two-sided", 3, variant="nlpstats")
    (masks,) = _draws(3, 200, *X.shape, resampling.permutation_masks, "inputs")
    full = masks.reshape(200, -1).all(axis=1) | (~masks).reshape(200, -1).all(axis=1)
    assert full.any()
    assert (np.abs(got.samples[full]) >= abs(got.delta) - 1e-12).all()
    extreme = int((np.abs(got.samples) >= abs(got.delta) - 1e-12).sum())
    assert got.pvalue == pytest.approx(extreme / got.samples.size) or \
        got.pvalue == pytest.approx((1 + extreme) / (1 + got.samples.size))


@pytest.mark.parametrize("method", ["systems", "inputs", "both"])
def test_bootstrap_ci_equals_nlpstats_with_the_same_draws(monkeypatch, method):
    """Boot-Systems / Boot-Inputs / Boot-Both: nlpstats' percentile interval over the same drawn
    systems and inputs (np.random.choice, systems first): the same endpoints."""
    X, _, Z = _matrices(5)
    k, seed = 200, 2
    got = stats.bootstrap_ci(X, Z, "system", "pearson", method, k, seed=seed)
    rows, cols = _draws(seed, k, *X.shape, resampling.bootstrap_indices, method)
    order = [a[b] for b in range(k) for a in (rows, cols) if a is not None]
    draws = iter(order)
    monkeypatch.setattr(np.random, "choice", lambda n, size, replace=True: next(draws))
    want = nlp.bootstrap(X, Z, "system", "pearson", method, n_resamples=k)
    np.testing.assert_allclose([got.lower, got.upper], [want.lower, want.upper], atol=1e-12)
