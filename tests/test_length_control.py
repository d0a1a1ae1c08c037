"""AlpacaEval's length-controlled win rate (analyses/length_control.py): against scikit-learn's
logistic regression fitted as alpaca_eval fits it (each item twice, weighted by y and 1 - y), and
its closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.analyses.length_control import fit_soft_logistic, length_controlled_winrate


def _data(seed=0, n=400, length_effect=1.5, skill=0.4):
    rng = np.random.default_rng(seed)
    lm, lb = rng.integers(200, 2000, n).astype(float), rng.integers(200, 2000, n).astype(float)
    g = rng.normal(size=n)
    d = lm - lb
    p = 1 / (1 + np.exp(-(skill + length_effect * np.tanh(d / d.std(ddof=1)) + 0.3 * g)))
    y = np.where(rng.random(n) < 0.1, 0.5, (rng.random(n) < p).astype(float))   # 10% ties
    return y, lm, lb, g


def test_the_fit_equals_scikit_learns_on_the_duplicated_items():
    sklearn = pytest.importorskip("sklearn.linear_model")
    y, lm, lb, g = _data()
    d = lm - lb
    X = np.column_stack([np.ones_like(y), np.tanh(d / d.std(ddof=1)), g])
    beta, ok = fit_soft_logistic(X, y)
    # alpaca_eval's trick: every item once with label 1 weighted y, once with label 0 weighted 1 - y
    model = sklearn.LogisticRegression(C=np.inf, fit_intercept=False, tol=1e-12, max_iter=10_000)
    model.fit(np.vstack([X, X]), np.r_[np.ones_like(y), np.zeros_like(y)], sample_weight=np.r_[y, 1 - y])
    assert ok
    np.testing.assert_allclose(beta, model.coef_[0], atol=1e-6)
    r = length_controlled_winrate(y, lm, lb, g)
    expected = 100 * np.mean(1 / (1 + np.exp(-(model.coef_[0][0] + model.coef_[0][2] * g))))
    assert r.converged and r.lc_winrate == pytest.approx(expected, abs=1e-5)
    assert r.winrate == pytest.approx(100 * y.mean()) and r.phi > 0     # longer outputs were preferred


def test_without_length_differences_the_lc_win_rate_is_the_win_rate():
    y = np.array([1, 1, 0, 0.5, 1, 0, 1, 1.0])
    same = np.full(y.size, 500.0)
    r = length_controlled_winrate(y, same, same)
    assert r.lc_winrate == pytest.approx(r.winrate, abs=1e-9) == pytest.approx(100 * y.mean())
    assert np.isnan(r.phi) and np.isnan(r.psi)


def test_a_preference_for_length_alone_is_removed():
    """A judge that prefers the longer output and nothing else: raw win rate far from 50, the
    length-controlled one near 50 (the model's skill term is 0)."""
    y, lm, lb, _ = _data(seed=3, n=4000, length_effect=2.5, skill=0.0)
    lm = lm + 400                                          # the model writes longer outputs
    d = lm - lb
    rng = np.random.default_rng(4)
    y = (rng.random(d.size) < 1 / (1 + np.exp(-2.5 * np.tanh(d / d.std(ddof=1))))).astype(float)
    r = length_controlled_winrate(y, lm, lb)
    assert r.winrate > 60 and abs(r.lc_winrate - 50) < 3


def test_separation_is_undefined_not_a_number():
    y = np.ones(10)
    r = length_controlled_winrate(y, np.arange(10.0), np.zeros(10))
    assert not r.converged and np.isnan(r.lc_winrate) and r.winrate == 100
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        length_controlled_winrate([2.0, 1.0], [1, 2], [1, 1])
