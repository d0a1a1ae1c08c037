"""rank-tasks: metrics ranked over several tasks (WMT23/24), against a per-resample loop."""

from __future__ import annotations

import json

import numpy as np
import pytest

from metaeval import Store
from metaeval.analyses import task_ranking
from metaeval.analyses.stats import resampling
from tests._mtme_reference import level_variant
from tests._stats_reference import level_corr, standardize
from tests.conftest import run_cli


def _tasks():
    rng = np.random.default_rng(4)
    out = []
    for name, (n, m), level, coef, w in (("t1", (6, 8), "system", "kendall", 1.0),
                                         ("t2", (5, 7), "summary", "acc-23", 3.0),
                                         ("t3", (6, 5), "global", "pearson", 2.0)):
        Z = rng.integers(0, 4, (n, m)).astype(float)
        metrics = {"good": Z + rng.normal(0, 0.5, (n, m)), "mid": Z + rng.normal(0, 2, (n, m)),
                   "bad": rng.normal(size=(n, m))}
        out.append(task_ranking.TaskData(name, metrics, Z, level, coef, w))
    return out


def _ref_corr(X, Z, level, coef):
    return level_variant(X, Z, level, "acc23") if coef == "acc-23" else level_corr(X, Z, level, coef)


def test_rank_tasks_equals_a_loop_over_resamples():
    tasks = _tasks()
    k, seed = 40, 9
    r = task_ranking.rank_tasks(tasks, k=k, seed=seed, alpha=0.05)
    names = list(r.metrics)
    assert names == ["good", "mid", "bad"]
    w = np.array([t.weight for t in tasks]) / sum(t.weight for t in tasks)
    lo = np.array([0.0 if t.coefficient == "acc-23" else -1.0 for t in tasks])
    corr = np.array([[_ref_corr(t.metrics[m], t.Z, t.level, t.coefficient) for m in names] for t in tasks])
    np.testing.assert_allclose(r.correlations, corr, atol=1e-12)
    np.testing.assert_allclose(r.average, ((corr - lo[:, None]) / (1 - lo[:, None]) * w[:, None]).sum(axis=0),
                               atol=1e-12)
    masks = [resampling.ResampleStream(np.random.SeedSequence(seed, spawn_key=(ti,)),
                                       lambda rng, size, t=t: resampling.permutation_masks(
                                           rng, size, *t.Z.shape, "both", "paper")).take(0, k)[0]
             for ti, t in enumerate(tasks)]
    for a in range(3):
        for b in range(3):
            if a == b:
                continue
            obs, samples = 0.0, np.zeros(k)
            for ti, t in enumerate(tasks):
                Xs, Ys = standardize(t.metrics[names[a]]), standardize(t.metrics[names[b]])
                span = 1 - lo[ti]
                obs += w[ti] * (_ref_corr(Xs, t.Z, t.level, t.coefficient)
                                - _ref_corr(Ys, t.Z, t.level, t.coefficient)) / span
                for i in range(k):
                    Xp, Yp = np.where(masks[ti][i], Ys, Xs), np.where(masks[ti][i], Xs, Ys)
                    samples[i] += w[ti] * (_ref_corr(Xp, t.Z, t.level, t.coefficient)
                                           - _ref_corr(Yp, t.Z, t.level, t.coefficient)) / span
            assert r.pvalues[a, b] == pytest.approx((1 + (samples >= obs - 1e-12).sum()) / (1 + k), abs=1e-12)
    assert r.cluster[0] == 1 and r.is_winner[0]
    assert r.rank.tolist() == [1, 2, 3]


def test_rank_tasks_command_persists_and_prints(tmp_path):
    db = tmp_path / "wh.duckdb"
    run_cli(db, "demo", "--dataset", "a", "--systems", "6", "--inputs", "8", "--k", "40")
    run_cli(db, "demo", "--dataset", "b", "--systems", "5", "--inputs", "6", "--k", "40", "--seed", "2")
    args = ["rank-tasks", "--task", "a:expert.relevance:system:kendall", "--task", "b:expert.relevance:summary:acc-23:2",
            "--k", "50"]
    first = run_cli(db, *args).output
    assert "ranked 4 metrics over 2 tasks" in first
    assert "up to date" in run_cli(db, *args).output
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_task_rankings ORDER BY rank")
        a = wh.matrix("a", [*rows["metric"], "expert.relevance"])
        b = wh.matrix("b", [*rows["metric"], "expert.relevance"])
    assert len(rows) == 4 and rows["rank"].tolist() == [1, 2, 3, 4]
    tasks = [task_ranking.TaskData("a", {m: (-a[m] if m == "sim-divergence" else a[m]) for m in rows["metric"]},
                                   a["expert.relevance"], "system", "kendall"),
             task_ranking.TaskData("b", {m: (-b[m] if m == "sim-divergence" else b[m]) for m in rows["metric"]},
                                   b["expert.relevance"], "summary", "acc-23", 2.0)]
    r = task_ranking.rank_tasks(tasks, k=50, seed=0)
    for row in rows.itertuples():
        i = r.metrics.index(row.metric)
        assert row.average == pytest.approx(r.average[i], abs=1e-12) and row.cluster == r.cluster[i]
    data = json.loads(run_cli(db, *args, "--format", "json").output)
    assert [d["metric"] for d in data] == rows["metric"].tolist()
    latex = run_cli(db, *args, "--format", "latex").output
    # issue 27 changed: a captioned booktabs table (it was a bare tabular with \hline)
    body = "\n".join(line for line in latex.splitlines() if not line.startswith("%"))   # conventions: comments
    assert body.startswith("\\begin{table}") and "\\toprule" in latex and "\\hline" not in latex
    assert latex.count(" \\\\") == 2 + 4 and "\\caption{Metrics ranked over 2 tasks" in latex
    bad = run_cli(db, "rank-tasks", "--task", "a:expert.relevance:system", ok=False)
    assert bad.exit_code != 0 and "DATASET:HUMAN:LEVEL:COEFFICIENT" in bad.output


def test_rank_tasks_that_cannot_resolve_draw_no_cluster_and_say_so(tmp_path):
    """At k = 10 the smallest attainable p is 1/11 > alpha 0.05: the conclusion layer gives no
    cluster, no winner and the one "cannot resolve" line (before, every metric sat in cluster 1)."""
    r = task_ranking.rank_tasks(_tasks(), k=10, seed=9, alpha=0.05)
    assert np.isnan(r.cluster).all() and not r.is_winner.any() and not r.winner_known.any()
    assert r.rank.tolist() == [1, 2, 3]                      # the ranking by average stands
    assert "cannot resolve" in r.conventions["cannot_resolve"] and "k >= 19" in r.conventions["cannot_resolve"]
    resolved = task_ranking.rank_tasks(_tasks(), k=40, seed=9, alpha=0.05)
    assert "cannot_resolve" not in resolved.conventions and "resolution" not in resolved.conventions
    db = tmp_path / "wh.duckdb"
    run_cli(db, "demo", "--dataset", "a", "--systems", "6", "--inputs", "8", "--k", "40")
    args = ["rank-tasks", "--task", "a:expert.relevance:system:kendall", "--k", "10"]
    text = run_cli(db, *args).output
    assert "not a finding: the permutation tests between metrics:" in text and "cannot resolve" in text
    assert "cluster --" in text and " *" not in text
    data = json.loads(run_cli(db, *args, "--format", "json").stdout)
    assert all(d["cluster"] is None and d["winner"] is None for d in data)
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT cluster, winner FROM latest_task_rankings")
    assert rows["cluster"].isna().all() and rows["winner"].isna().all()
    latex = run_cli(db, *args, "--format", "latex").stdout
    body = [line for line in latex.split("\\midrule")[1].splitlines() if " & " in line]
    assert body and all("\\textbf" not in line.split(" & ")[1] for line in body)   # the average: no bold
    assert "cannot resolve" in latex
