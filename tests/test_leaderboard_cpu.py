"""The leaderboard without pandas or scipy (issue 35 item 6, its CPU target): the complex-``exp``
expit is scipy's bit for bit, and the rows the command line prints without pandas (``plain``)
are those of the DataFrame the Python API returns, in the same order."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.special import expit as scipy_expit

from metaeval.runs import Warehouse
from metaeval.analyses import leaderboard as lb
from metaeval.present import plain, tables
from metaeval.rows import Rows
from metaeval.runs.engine import persist
from tests.conftest import run_cli

PREFERENCES = Path(__file__).resolve().parents[1] / "docs" / "examples" / "preferences.csv"


@pytest.mark.parametrize("scale", [1.0, 30.0, 800.0, 5000.0])
def test_expit_is_scipys_bit_for_bit(scale):
    x = np.random.default_rng(int(scale)).normal(0, scale, (40, 2500))
    assert np.array_equal(lb.expit(x), scipy_expit(x))


def test_expit_edges_and_scalars():
    edge = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-320, -1e-320, 36.7, 37.0, 709.9, -700.0, -700.5, -709.0,
                     -709.5, -709.9, -710.0, -745.0, -746.0, -1500.0, -2200.0, 1e308, -1e308])
    assert np.array_equal(lb.expit(edge), scipy_expit(edge), equal_nan=True)
    for v in (0.3, -709.5, -800.0):
        got = lb.expit(v)
        assert isinstance(got, np.float64) and got == scipy_expit(v)
    assert lb.expit([[0.5, -0.5]]).shape == (1, 2)


def test_sorted_rows_order_equal_ratings_as_pandas():
    import pandas as pd

    values = [3.0, 1.0, 3.0, 2.0, 1.0, 3.0] * 5
    rows = Rows(("i", "rating"), ("int", "float"), tuple(enumerate(values)))
    got = [r[0] for r in persist.sorted_rows(rows, "rating", ascending=False).data]
    assert got == pd.DataFrame({"i": range(len(values)), "rating": values}).sort_values(
        "rating", ascending=False)["i"].tolist()


@pytest.mark.parametrize("extra", [(), ("--interval", "sandwich"), ("--ties", "davidson", "--seed", "3")])
def test_plain_rows_print_as_the_dataframe(db, extra):
    run_cli(db, "ingest", "preferences", PREFERENCES, "--dataset", "jd")
    printed = json.loads(run_cli(db, "leaderboard", "--dataset", "jd", "--k", "50", *extra, "--format", "json").output)
    given = dict(zip(extra[::2], extra[1::2]))
    kwargs = {k.lstrip("-"): (int(v) if k == "--seed" else v) for k, v in given.items()}
    with Warehouse(db) as wh:
        frame = wh.leaderboard(dataset="jd", **{"k": 50, **kwargs})
        rows = wh.leaderboard(dataset="jd", **{"k": 50, **kwargs}, plain=True)
    assert isinstance(rows, Rows) and printed == json.loads(tables.render(frame, "json"))
    assert plain.render(rows, "json") == tables.render(frame, "json")
    assert plain.render(rows, "csv") == tables.render(frame, "csv")


def test_rounds_started_at_the_observed_fit_equal_those_started_at_zero():
    rng = np.random.default_rng(5)
    strength = rng.normal(0, 1, 8)
    a = rng.integers(0, 8, 400)
    b = (a + rng.integers(1, 8, 400)) % 8
    y = np.where(rng.random(400) < 0.2, 0.5, (rng.random(400) < 1 / (1 + np.exp(strength[b] - strength[a]))) * 1.0)
    c = lb.count(a, b, y, 8)
    W = lb.bootstrap_counts(c, 60, seed=2)
    W[((c.a == 0) & (c.y < 1)) | ((c.b == 0) & (c.y > 0)), 0] = 0     # system 0 never loses: no estimate
    cold, warm = lb.fit(c, W), lb.fit(c, W, start=lb.fit(c))
    assert np.isnan(cold[0]).all() and np.array_equal(np.isnan(cold), np.isnan(warm))
    np.testing.assert_allclose(warm, cold, rtol=0, atol=1e-12)


def _blas_threads() -> set[int]:
    from threadpoolctl import threadpool_info

    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


def test_the_small_solves_run_on_one_blas_thread_with_the_same_ratings():
    # issue 47 item 2: stacked S x S Newton solves cost 70x the CPU on two OpenBLAS threads
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(5)
    S, n = 90, 30_000
    a = rng.integers(0, S, n)
    b = (a + rng.integers(1, S, n)) % S
    y = (rng.random(n) < scipy_expit(np.linspace(-2, 2, S)[a] - np.linspace(-2, 2, S)[b])).astype(float)
    c = lb.count(a, b, y, S)
    W = lb.bootstrap_counts(c, 30, seed=0)
    with threadpool_limits(limits=2, user_api="blas"):
        two = lb.elo(lb.fit(c, W))
    with lb.one_blas_thread():
        assert _blas_threads() == {1}
        one = lb.elo(lb.fit(c, W))
    assert np.isfinite(one).all() and np.abs(one - two).max() <= 1e-9


def test_the_leaderboard_fits_on_one_blas_thread(db, monkeypatch):
    seen = []
    fit = lb.fit

    def spy(*args, **kwargs):
        seen.append(_blas_threads())
        return fit(*args, **kwargs)
    monkeypatch.setattr(lb, "fit", spy)
    run_cli(db, "ingest", "preferences", PREFERENCES, "--dataset", "jd")
    run_cli(db, "leaderboard", "--dataset", "jd", "--k", "50")
    assert seen and all(threads == {1} for threads in seen)


def _straightforward_fit(c, W, ridge=0.0, start=None, tol=1e-10, max_iter=100):
    """Newton's steps as the formulas read: every round's gradient and information summed with
    np.add.at over its rows in their order (what lb.fit's bincounts must add, in that order),
    P(a beats b) by scipy for every row, the masked solve of the estimable rounds."""
    W = W.T
    R, S = len(W), c.n_systems
    ok = np.ones(R, bool) if ridge else np.array([lb.estimable(c, w) for w in W])
    theta = np.zeros((R, S)) if start is None else np.tile(start, (R, 1))
    last = np.full(R, np.inf)
    for _ in range(max_iter):
        p = scipy_expit(theta[:, c.a] - theta[:, c.b])
        residual, curvature = W * (c.y - p), W * p * (1 - p)
        grad = -ridge * theta if ridge else np.zeros((R, S))
        info = np.zeros((R, S, S))
        for r in range(R):
            np.add.at(grad[r], c.a, residual[r])
            np.add.at(grad[r], c.b, -residual[r])
            np.add.at(info[r], (c.a, c.b), -curvature[r])
        info += info.transpose(0, 2, 1)
        info[:, np.arange(S), np.arange(S)] = -info.sum(axis=2) + ridge
        step = np.linalg.solve(info[ok] + np.ones((S, S)) / S, grad[ok][..., None])[..., 0]
        theta[ok] += step
        theta -= theta.mean(axis=1, keepdims=True)
        last[ok] = np.max(np.abs(step), axis=1)
        if np.max(last[ok]) < tol:
            break
    ok &= (last < tol) & np.isfinite(theta).all(axis=1)
    theta[~ok] = np.nan
    return theta


@pytest.mark.parametrize("ridge", [0.0, 0.3])
def test_the_batched_newton_steps_are_the_straightforward_ones_bit_for_bit(ridge):
    # issue 47 item 2: lb.fit's arrays made once, P per pair of systems, round-by-round bincounts
    rng = np.random.default_rng(11)
    S, n = 12, 3000
    a = rng.integers(0, S, n)
    b = (a + rng.integers(1, S, n)) % S
    y = np.where(rng.random(n) < 0.2, 0.5, (rng.random(n) < scipy_expit(np.linspace(-1, 1, S)[a]
                                                                      - np.linspace(-1, 1, S)[b])) * 1.0)
    c = lb.count(a, b, y, S)
    W = lb.bootstrap_counts(c, 25, seed=4)
    W[((c.a == 3) & (c.y < 1)) | ((c.b == 3) & (c.y > 0)), 2] = 0     # round 2: system 3 never loses
    with lb.one_blas_thread():
        point = lb.fit(c, ridge=ridge)
        rounds = lb.fit(c, W, ridge=ridge, start=point)
        assert np.array_equal(point, _straightforward_fit(c, c.w[:, None], ridge)[0])
        assert np.array_equal(rounds, _straightforward_fit(c, W, ridge, start=point), equal_nan=True)
    assert np.isnan(rounds[2]).all() != bool(ridge) and np.isfinite(np.delete(rounds, 2, axis=0)).all()
