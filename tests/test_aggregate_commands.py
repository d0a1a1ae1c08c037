"""``--aggregate median`` on evaluate, accuracy and rank-tasks (issue 33 items 9 and 10's
leftovers): each against an independent loop (numpy's median per system, then scipy or a brute
count), the mean as before, and the refusals in one line."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from metaeval import Store

from .conftest import run_cli
from .test_aggregate import _loop, _matrix, holes  # noqa: F401  (the fixture)


def _one_line_refusal(result, *words):
    assert result.exit_code != 0 and "Traceback" not in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    for w in words:
        assert w in result.output, result.output


# --- evaluate --------------------------------------------------------------------------------------
def test_evaluate_median_rows_caption_and_signature_against_the_statistics(holes):
    import scipy.stats

    from metaeval.analyses.stats import hypothesis, intervals
    from metaeval.analyses.stats.validation import aggregate_iv

    db, cells = holes
    X, Y, Z = (_matrix(cells, m) for m in ("m1", "m2", "human"))
    common = ["evaluate", "--dataset", "h", "--human", "human", "--metric", "m1", "--level", "system",
              "--coefficient", "pearson", "--k", "99", "--seed", "2"]
    mean_json = run_cli(db, *common, "--format", "json").output
    text = run_cli(db, *common, "--aggregate", "median").output
    median_json = run_cli(db, *common, "--aggregate", "median", "--format", "json").output
    assert "median over its inputs: --aggregate median" in " ".join(text.split())
    mean = json.loads(mean_json[mean_json.index("["):])
    median = json.loads(median_json[median_json.index("["):])
    m1 = next(r for r in median if r["metric"] == "m1")
    expected = scipy.stats.pearsonr(_loop(cells, "m1", "median"), _loop(cells, "human", "median"))[0]
    assert m1["correlation"] == pytest.approx(expected, abs=1e-12)
    coef = aggregate_iv("pearson", "median")
    ci = intervals.bootstrap_ci(X, Z, "system", coef, "both", k=99, seed=2)
    assert (m1["lower"], m1["upper"]) == pytest.approx((ci.lower, ci.upper), abs=1e-12)
    t = hypothesis.permutation_test(X, Y, Z, "system", coef, "both", k=99, alternative="two-sided", seed=2)
    with Store(db) as wh:
        tests = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE metric_a = 'm1' ORDER BY aggregate")
    assert tests["aggregate"].tolist() == ["mean", "median"]
    assert (tests["delta"][1], tests["p_value"][1]) == pytest.approx((t.delta, t.pvalue), abs=1e-12)
    assert m1["n_tested"] == 1 and m1["conventions"]["aggregate"] == "median" and "|agg:median|" in m1["signature"]
    m1_mean = next(r for r in mean if r["metric"] == "m1")
    assert "aggregate" not in m1_mean["conventions"] and "agg:" not in m1_mean["signature"]
    assert m1_mean["correlation"] == pytest.approx(
        scipy.stats.pearsonr(_loop(cells, "m1", "mean"), _loop(cells, "human", "mean"))[0], abs=1e-12)


@pytest.fixture
def full(tmp_path):
    """5 systems x 6 inputs, three metrics and a human score, every cell present."""
    rng = np.random.default_rng(5)
    lines = [f"s{s},{i},{','.join(repr(float(v)) for v in rng.normal(size=4))}" for s in range(5) for i in range(6)]
    csv = tmp_path / "full.csv"
    csv.write_text("system,input,m1,m2,m3,human\n" + "\n".join(lines) + "\n")
    db = tmp_path / "f.duckdb"
    Store.create(db).close()
    run_cli(db, "ingest", "table", csv, "--dataset", "h", "--human", "human")
    return db


def test_evaluate_all_pairs_median_shares_no_linear_mean_path(full):
    """evaluate's all-pairs sharing computes the mean's permutation deltas from sums linear in the
    masks (complete grids); a median's deltas are the cell-by-cell ones (those of compare)."""
    db = full
    common = ["--dataset", "h", "--human", "human", "--metric", "m*", "--level", "system",
              "--coefficient", "spearman", "--k", "99", "--seed", "1", "--aggregate", "median"]
    run_cli(db, "evaluate", *common, "--all-pairs")
    with Store(db) as wh:
        by_evaluate = wh.sql("SELECT metric_a, metric_b, delta, p_value FROM latest_hypothesis_tests ORDER BY 1, 2")
        wh.sql("DELETE FROM hypothesis_tests")
    run_cli(db, "compare", *common, "--method", "perm-both")
    with Store(db) as wh:
        by_compare = wh.sql("SELECT metric_a, metric_b, delta, p_value FROM latest_hypothesis_tests ORDER BY 1, 2")
    assert by_evaluate.equals(by_compare)


def test_evaluate_refuses_the_median_where_it_does_not_apply(holes):
    db, _ = holes
    base = ["evaluate", "--dataset", "h", "--human", "human", "--metric", "m1", "--aggregate", "median"]
    _one_line_refusal(run_cli(db, *base, ok=False), "--aggregate", "--level 'system'")
    _one_line_refusal(run_cli(db, *base, "--level", "system", "--preferences", db, ok=False),
                      "--aggregate median", "drop --aggregate")
    with Store(db) as wh:
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == 0
