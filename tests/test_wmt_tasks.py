"""WMT24's task set (mt-metrics-eval tasks.WMT24): system-level SPA and item-grouped acc-eq with
the test over pairs, against brute-force restatements of mt-metrics-eval's definitions."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval.analyses import task_ranking, task_tests
from metaeval.analyses.stats import resampling, soft_pairwise
from tests._mtme_reference import calibrate, level_variant
from tests._stats_reference import standardize


def _data(seed=3, n=4, m=6):
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 5, (n, m)).astype(float)
    metrics = {"good": Z + rng.normal(0, 0.6, (n, m)), "mid": Z + rng.normal(0, 2.0, (n, m)),
               "bad": rng.normal(size=(n, m))}
    return metrics, Z


def _spa_brute(X, Z, signs):
    """1 - mean |p_h - p_m| with p = #{e : sum_j e_j d_j >= sum_j d_j} / K, pair by pair."""
    total, pairs = 0.0, 0
    for i in range(Z.shape[0]):
        for k in range(i + 1, Z.shape[0]):
            ps = []
            for S in (Z, X):
                d = S[i] - S[k]
                ps.append(np.mean([np.dot(e, d) >= d.sum() - 1e-12 for e in signs]))
            total += abs(ps[0] - ps[1])
            pairs += 1
    return 1 - total / pairs


def _acc_eq_item(agree_a, agree_b, flips_row, Z, epsilons, Xa, Xb):
    """The hybrid acc-eq of a (pair outcomes swapped where the coin says), item by item."""
    vals, u = [], 0
    for j in range(Z.shape[1]):
        n = Z.shape[0]
        hits = 0
        pairs = 0
        for i in range(n):
            for k in range(i + 1, n):
                a = _agrees(Xa[i, j] - Xa[k, j], Z[i, j] - Z[k, j], epsilons[0])
                b = _agrees(Xb[i, j] - Xb[k, j], Z[i, j] - Z[k, j], epsilons[1])
                hits += b if flips_row[u] else a
                pairs += 1
                u += 1
        vals.append(hits / pairs)
    return float(np.mean(vals))


def _agrees(dx, dz, eps):
    sx = 0 if abs(dx) <= eps else (1 if dx > 0 else -1)
    return int(sx == np.sign(dz))


def test_wmt24_tasks_equal_loops_over_resamples():
    metrics, Z = _data()
    k, seed = 25, 7
    tasks = [task_ranking.TaskData("spa", metrics, Z, "system", task_tests.SPA),
             task_ranking.TaskData("acc", metrics, Z, "summary", task_tests.ACC_EQ, test="pairs")]
    r = task_ranking.rank_tasks(tasks, k=k, seed=seed)
    names = list(r.metrics)
    signs = soft_pairwise.mtme_permutation_signs(1000, Z.shape[1])
    # the values: SPA as `accuracy --soft` computes it; acc-eq as mt-metrics-eval's KendallWithTiesOpt
    for i, m in enumerate(names):
        assert r.correlations[0, i] == pytest.approx(soft_pairwise.soft_pairwise_accuracy(metrics[m], Z).spa, abs=1e-12)
        assert r.correlations[0, i] == pytest.approx(_spa_brute(metrics[m], Z, signs), abs=1e-12)
        value, _ = calibrate(metrics[m], Z, "summary", "acc23")
        assert r.correlations[1, i] == pytest.approx(value, abs=1e-12)
    np.testing.assert_allclose(r.average, r.correlations.mean(axis=0), atol=1e-12)
    mask = resampling.ResampleStream(np.random.SeedSequence(seed, spawn_key=(0,)), lambda rng, size: (
        resampling.permutation_masks(rng, size, *Z.shape, "both", "paper"))).take(0, k)[0]
    n_units = Z.shape[1] * Z.shape[0] * (Z.shape[0] - 1) // 2
    flips = resampling.ResampleStream(np.random.SeedSequence(seed, spawn_key=(1,)),
                                      lambda rng, size: (rng.random((size, n_units)) < 0.5,)).take(0, k)[0]
    eps = {m: calibrate(metrics[m], Z, "summary", "acc23")[1] for m in names}
    for a in range(3):
        for b in range(a + 1, 3):
            A, B = names[a], names[b]
            Xs, Ys = standardize(metrics[A]), standardize(metrics[B])
            obs = 0.5 * (r.correlations[0, a] - r.correlations[0, b]) + 0.5 * (r.correlations[1, a] - r.correlations[1, b])
            samples = np.zeros(k)
            for i in range(k):
                Xp, Yp = np.where(mask[i], Ys, Xs), np.where(mask[i], Xs, Ys)
                samples[i] += 0.5 * (_spa_brute(Xp, Z, signs) - _spa_brute(Yp, Z, signs))
                ea, eb = eps[A], eps[B]
                ha = _acc_eq_item(None, None, flips[i], Z, (ea, eb), metrics[A], metrics[B])
                hb = _acc_eq_item(None, None, flips[i], Z, (eb, ea), metrics[B], metrics[A])
                samples[i] += 0.5 * (ha - hb)
            assert r.pvalues[a, b] == pytest.approx((1 + (samples >= obs - 1e-12).sum()) / (1 + k), abs=1e-12)
            assert r.pvalues[b, a] == pytest.approx((1 + (-samples >= -obs - 1e-12).sum()) / (1 + k), abs=1e-12)
    assert r.conventions["task_tests"] == {"spa": "perm-both", "acc": "pairs"}


def test_wmt24_tasks_use_the_common_cells_and_refuse_misfits():
    metrics, Z = _data(n=4, m=5)
    metrics["mid"][1, 2] = np.nan
    t = task_ranking.TaskData("spa", metrics, Z, "system", task_tests.SPA)
    r = task_ranking.rank_tasks([t], k=10, seed=1)
    Zc = Z.copy()
    Zc[:, 2] = np.nan  # SPA needs every system on an input: input 2 is left out for everyone
    for i, m in enumerate(r.metrics):
        assert r.correlations[0, i] == pytest.approx(soft_pairwise.soft_pairwise_accuracy(metrics[m], Zc).spa)
    with pytest.raises(ValueError, match="system-level"):
        task_ranking.rank_tasks([task_ranking.TaskData("x", metrics, Z, "summary", task_tests.SPA)], k=10)
    with pytest.raises(ValueError, match="over pairs"):
        task_ranking.rank_tasks([task_ranking.TaskData("x", metrics, Z, "summary", "kendall", test="pairs")], k=10)


def test_rank_tasks_task_set_command(tmp_path):
    from metaeval import Store
    from tests.conftest import run_cli

    db = tmp_path / "wh.duckdb"
    run_cli(db, "demo", "--dataset", "lp1", "--systems", "5", "--inputs", "6", "--k", "40")
    run_cli(db, "demo", "--dataset", "lp2", "--systems", "4", "--inputs", "6", "--k", "40", "--seed", "2")
    args = ["rank-tasks", "--task-set", "wmt24", "--dataset", "lp2", "--dataset", "lp1", "--human", "expert.relevance",
            "--k", "30"]
    out = run_cli(db, *args).output
    assert "ranked 4 metrics over 4 tasks" in out
    assert "task 1: lp1:expert.relevance:system:spa (weight 1)" in out   # the language pairs sorted
    assert "task 2: lp1:expert.relevance:summary:acc-23[tie-calibrated] (weight 1) (test over pairs)" in out
    assert "up to date" in run_cli(db, *args).output
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT tasks, conventions FROM latest_task_rankings")
    assert '"test": "pairs"' in rows["tasks"].iloc[0]
    assert '"task_tests"' in rows["conventions"].iloc[0]
    bad = run_cli(db, "rank-tasks", "--dataset", "lp1", ok=False).output
    assert "--dataset 'lp1' is for a named task set: add --task-set NAME" in bad
    bad = run_cli(db, "rank-tasks", "--task", "lp1:expert.relevance:global:spa", ok=False).output
    assert "system-level task" in bad
