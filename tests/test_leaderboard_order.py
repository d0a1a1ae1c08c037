"""Leaderboard ties, ranks and fragility (issue 35 item 1): the Rao-Kupper and Davidson fits
against a direct scipy maximisation of the per-vote likelihood, rank intervals and pairwise tests
against loops, the fragility search against brute force over subsets of individual votes."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from metaeval.analyses import leaderboard as lb
from metaeval.analyses import leaderboard_ranks as lr
from metaeval.analyses import leaderboard_ties as lt


def tie_votes(n_systems=5, n=2000, seed=0, eta=0.4):
    rng = np.random.default_rng(seed)
    s = np.linspace(-1, 1, n_systems)
    a = rng.integers(0, n_systems, n)
    b = (a + rng.integers(1, n_systems, n)) % n_systems
    u, pa, pb = rng.random(n), expit(s[a] - s[b] - eta), expit(s[b] - s[a] - eta)
    return a, b, np.where(u < pa, 1.0, np.where(u < pa + pb, 0.0, 0.5))


def scipy_mle(model, a, b, y, S):
    """The per-vote likelihood written from the papers' formulas, maximised by BFGS."""
    def nll(p):
        pi, d = np.exp(p[:S]), p[:S][a] - p[:S][b]
        if model == "rao-kupper":            # Rao & Kupper 1967, theta = e^(e^p)
            th = np.exp(np.exp(p[S]))
            pa, pb = pi[a] / (pi[a] + th * pi[b]), pi[b] / (pi[b] + th * pi[a])
            pt = (th ** 2 - 1) * pi[a] * pi[b] / ((pi[a] + th * pi[b]) * (pi[b] + th * pi[a]))
        else:                                # Davidson 1970, nu = e^p
            nu = np.exp(p[S])
            z = pi[a] + pi[b] + nu * np.sqrt(pi[a] * pi[b])
            pa, pb, pt = pi[a] / z, pi[b] / z, nu * np.sqrt(pi[a] * pi[b]) / z
        return -np.sum(np.log(np.where(y == 1, pa, np.where(y == 0, pb, pt))))
    r = minimize(nll, np.zeros(S + 1), method="BFGS", options={"gtol": 1e-9})
    t = r.x[:S] - r.x[:S].mean()
    return t, (np.exp(np.exp(r.x[S])) if model == "rao-kupper" else np.exp(r.x[S]))


@pytest.mark.parametrize("model", lt.TIE_MODELS)
def test_tie_models_equal_a_direct_scipy_maximisation(model):
    a, b, y = tie_votes()
    theta, tau = lt.fit(lb.count(a, b, y, 5), model)
    expected, parameter = scipy_mle(model, a, b, y, 5)
    np.testing.assert_allclose(theta, expected, atol=1e-5)
    assert lt.tie_parameter(model, tau) == pytest.approx(parameter, rel=1e-5)
    if model == "rao-kupper":
        assert lt.tie_parameter(model, tau) == pytest.approx(np.exp(0.4), rel=0.1)   # the simulated theta


@pytest.mark.parametrize("model", lt.TIE_MODELS)
def test_tie_models_batched_rounds_and_undefined_cases(model):
    c = lb.count(*tie_votes(seed=1), 5)
    W = lb.bootstrap_counts(c, 4, seed=2)
    theta, tau = lt.fit(c, model, W)
    for r in range(4):
        one, t1 = lt.fit(lb.Counted(c.a, c.b, c.y, W[:, r], 5), model)
        np.testing.assert_allclose(theta[r], one, atol=1e-9)
    no_ties = lb.count([0, 1, 0, 1], [1, 0, 1, 0], [1.0, 1.0, 0.0, 0.0], 2)
    assert np.isnan(lt.fit(no_ties, model)[0]).all()                  # no tie: the tie parameter is at 0


@pytest.mark.parametrize("model", lt.TIE_MODELS)
def test_tie_sandwich_against_a_per_vote_loop(model):
    a, b, y = tie_votes(n=600, seed=3)
    c = lb.count(a, b, y, 5)
    theta, tau = lt.fit(c, model)
    eps = 1e-5
    H, J = np.zeros((6, 6)), np.zeros((6, 6))
    for (i, j, out), n in Counter(zip(a, b, y)).items():      # each distinct vote, n times
        def ll(p):
            return lt.row_terms(model, np.array([p[i] - p[j]]), np.array([p[5]]), np.array([out]))[0][0]
        p0 = np.append(theta, tau)
        g = np.array([(ll(p0 + eps * e) - ll(p0 - eps * e)) / (2 * eps) for e in np.eye(6)])
        J += n * np.outer(g, g)
        H -= n * np.array([[(ll(p0 + eps * (e + f)) - ll(p0 + eps * (e - f)) - ll(p0 - eps * (e - f))
                         + ll(p0 - eps * (e + f))) / (4 * eps ** 2) for f in np.eye(6)] for e in np.eye(6)])
    u = np.append(np.ones(5), 0) / np.sqrt(5)          # the null direction (a constant added to theta)
    Hi = np.linalg.inv(H + np.outer(u, u))               # = H^+ + u u', and J u = 0
    np.testing.assert_allclose(lt.sandwich(c, model, theta, tau), (Hi @ J @ Hi)[:5, :5], rtol=1e-3, atol=1e-7)


def test_rank_intervals_and_bootstrap_tests_against_loops():
    rng = np.random.default_rng(0)
    samples = rng.normal([0.0, 0.1, 1.0], 0.2, size=(200, 3))
    samples[5] = np.nan
    lo, hi = lr.rank_interval(samples, 0.05)
    valid = samples[~np.isnan(samples).any(axis=1)]
    ranks = np.array([[1 + sum(r[j] > r[i] for j in range(3)) for i in range(3)] for r in valid])
    np.testing.assert_array_equal(lo, np.floor(np.percentile(ranks, 2.5, axis=0)))
    np.testing.assert_array_equal(hi, np.ceil(np.percentile(ranks, 97.5, axis=0)))
    tests = lr.bootstrap_tests(np.array([0.0, 0.1, 1.0]), samples)
    for a, b, p in zip(tests.a, tests.b, tests.pvalue):
        d = valid[:, a] - valid[:, b]
        assert p == min(1, 2 * min((d <= 0).sum(), (d >= 0).sum()) / len(valid))
    assert tests.n_valid == 199


def brute_force_fragility(a, b, y, S):
    """Remove every subset of individual votes, smallest first, refit: the first that changes the leader."""
    point = lb.fit(lb.count(a, b, y, S))
    leader = int(np.argmax(point))
    n = len(a)
    for m in range(1, n + 1):
        for drop in itertools.combinations(range(n), m):
            keep = np.setdiff1d(np.arange(n), drop)
            try:
                theta = lb.fit(lb.count(a[keep], b[keep], y[keep], S))
            except ValueError:
                continue
            if np.isfinite(theta).all() and np.delete(theta, leader).max() >= theta[leader] - lr.LEADER_TIE:
                return m
    return None


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fragility_equals_brute_force_on_small_votes(seed):
    rng = np.random.default_rng(seed)
    a = np.array([0, 0, 1, 1, 2, 2, 0, 1, 2, 0, 1])
    b = np.array([1, 2, 2, 0, 0, 1, 1, 2, 0, 2, 0])
    y = rng.choice([1.0, 0.0, 0.5], size=len(a), p=[0.5, 0.3, 0.2])
    c = lb.count(a, b, y, 3)
    if not lb.estimable(c):
        pytest.skip("these votes admit no estimate")
    got = lr.fragility(c, lambda W: lb.fit(c, W))
    assert got.exact and got.votes == brute_force_fragility(a, b, y, 3)


def test_fragility_greedy_is_a_verified_upper_bound():
    from tests.test_leaderboard import votes

    c = lb.count(*votes(n_systems=3, n=60, seed=7), 3)
    exact = lr.fragility(c, lambda W: lb.fit(c, W), budget=10 ** 5)
    greedy = lr.fragility(c, lambda W: lb.fit(c, W), budget=0)
    assert exact.exact and not greedy.exact and greedy.votes >= exact.votes == 3


def test_a_tie_at_the_top_has_fragility_zero():
    # 0 and 1 split their two votes and each beat 2 twice in three: equal strengths at the top
    a, b = np.array([0, 1, 0, 0, 2, 1, 1, 2]), np.array([1, 0, 2, 2, 0, 2, 2, 1])
    y = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    c = lb.count(a, b, y, 3)
    theta = lb.fit(c)
    assert abs(theta[0] - theta[1]) < 1e-9
    assert lr.fragility(c, lambda W: lb.fit(c, W)).votes == 0
