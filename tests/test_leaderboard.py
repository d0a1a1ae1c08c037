"""Bradley-Terry on counted votes (issue 35, pure part): against scipy's optimiser on the
per-vote likelihood, per-vote loops, and the properties of the estimate."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit

from metaeval.analyses import leaderboard as lb


def votes(n_systems=6, n=3000, seed=0, ties=0.2):
    rng = np.random.default_rng(seed)
    strength = np.linspace(-1, 1, n_systems)
    a = rng.integers(0, n_systems, n)
    b = (a + rng.integers(1, n_systems, n)) % n_systems
    win = rng.random(n) < expit(strength[a] - strength[b])
    y = np.where(rng.random(n) < ties, 0.5, win.astype(float))
    return a, b, y


def per_vote_mle(a, b, y, n_systems):
    def loss(t):
        d = t[a] - t[b]
        return -np.sum(y * log_expit(d) + (1 - y) * log_expit(-d))
    t = minimize(loss, np.zeros(n_systems), method="BFGS", options={"gtol": 1e-9}).x
    return t - t.mean()


def test_counted_fit_equals_the_per_vote_maximum_likelihood():
    a, b, y = votes()
    c = lb.count(a, b, y, 6)
    assert c.n_votes == 3000 and len(c.w) <= 3 * 30
    np.testing.assert_allclose(lb.fit(c), per_vote_mle(a, b, y, 6), atol=1e-5)
    assert lb.fit(c).sum() == pytest.approx(0, abs=1e-12)


def test_batched_rounds_equal_single_fits_and_seeds_reproduce():
    c = lb.count(*votes(seed=1), 6)
    W = lb.bootstrap_counts(c, 5, seed=3)
    assert (W.sum(axis=0) == c.n_votes).all() and np.array_equal(W, lb.bootstrap_counts(c, 5, seed=3))
    batched = lb.fit(c, W)
    for r in range(5):
        single = lb.fit(lb.Counted(c.a, c.b, c.y, W[:, r], c.n_systems))
        np.testing.assert_allclose(batched[r], single, atol=1e-9)


def test_no_estimate_without_strong_connection():
    # system 0 beats everyone and never loses or ties: its strength is infinite
    a, b, y = np.array([0, 0, 1, 2]), np.array([1, 2, 2, 1]), np.array([1.0, 1.0, 1.0, 1.0])
    c = lb.count(a, b, y, 3)
    assert not lb.estimable(c) and np.isnan(lb.fit(c)).all()
    assert np.isfinite(lb.fit(c, ridge=0.1)).all()                       # a stated prior makes it finite
    boot = lb.bootstrap(c, k=20, seed=0)
    assert boot.n_valid == 0 and np.isnan(boot.lower).all()


def test_elo_scale_and_anchor():
    theta = np.array([0.0, np.log(10) / 400 * 100])
    np.testing.assert_allclose(lb.elo(theta), [1000, 1100])
    np.testing.assert_allclose(lb.elo(theta, anchor=1, anchor_rating=1114), [1014, 1114])


def test_bootstrap_intervals_cover_the_point_and_first_shares_sum_to_one():
    c = lb.count(*votes(seed=2), 6)
    point = lb.fit(c)
    boot = lb.bootstrap(c, k=200, seed=0)
    assert boot.n_valid == 200 and boot.first.sum() == pytest.approx(1)
    assert np.all(boot.lower <= point) and np.all(point <= boot.upper)


def test_sandwich_against_a_per_vote_loop():
    a, b, y = votes(n=800, seed=4)
    c = lb.count(a, b, y, 6)
    theta = lb.fit(c)
    H = np.zeros((6, 6)); J = np.zeros((6, 6))
    for i, j, out in zip(a, b, y):
        e = np.zeros(6); e[i], e[j] = 1, -1
        p = expit(theta[i] - theta[j])
        H += p * (1 - p) * np.outer(e, e)
        J += (out - p) ** 2 * np.outer(e, e)
    Hp = np.linalg.pinv(H)
    np.testing.assert_allclose(lb.sandwich(c, theta), Hp @ J @ Hp, atol=1e-10)


def test_refusals():
    with pytest.raises(ValueError):
        lb.count([0], [0], [1.0], 2)
    with pytest.raises(ValueError):
        lb.count([0], [1], [0.3], 2)


def test_a_fit_that_does_not_converge_is_undefined():
    c = lb.count(*votes(seed=5), 6)
    assert np.isnan(lb.fit(c, max_iter=1)).all()          # one Newton step is not the estimate
    assert np.isfinite(lb.fit(c)).all()


def test_estimable_equals_scipys_strong_connectivity():
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    rng = np.random.default_rng(0)
    for _ in range(500):
        S, n = rng.integers(2, 7), rng.integers(1, 12)
        a = rng.integers(0, S, n)
        b = (a + rng.integers(1, S, n)) % S
        c = lb.count(a, b, rng.choice([0.0, 0.5, 1.0], n), S)
        src = np.concatenate([c.a[c.y > 0], c.b[c.y < 1]])
        dst = np.concatenate([c.b[c.y > 0], c.a[c.y < 1]])
        graph = coo_matrix((np.ones(len(src)), (src, dst)), shape=(S, S))
        assert lb.estimable(c) == (connected_components(graph, directed=True, connection="strong")[0] == 1)


def test_first_share_splits_exact_ties_at_the_top():
    # issue 48 item 1: a round whose top rating m systems share credits each 1/m, never the first by name
    samples = np.array([[1.0, 1.0, 1.0], [2.0, 2.0, 0.0], [0.0, 3.0, 1.0], [np.nan, 1.0, 0.0]])
    first = lb.summarise(samples, 0.05).first
    expected = np.zeros(3)
    for row in samples[:3]:                  # a brute-force loop over the valid rounds
        top = [i for i in range(3) if row[i] == max(row)]
        for i in top:
            expected[i] += 1 / len(top) / 3
    np.testing.assert_allclose(first, expected, rtol=0, atol=1e-15)
    assert first.sum() == pytest.approx(1)
    # votes that are all ties: every round rates the three systems equally, each is first a third of the rounds
    c = lb.count([0, 1, 2] * 20, [1, 2, 0] * 20, [0.5] * 60, 3)
    boot = lb.bootstrap(c, k=50, seed=0)
    assert boot.n_valid == 50 and np.allclose(boot.first, 1 / 3)
