"""``--aggregate median`` on evaluate, accuracy and rank-tasks (issue 33 items 9 and 10's
leftovers): each against an independent loop (numpy's median per system, then scipy or a brute
count), the mean as before, and the refusals in one line."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from metaeval import Store
from metaeval.runs.engine import signatures

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
    assert "(a system's score: the metric's median over its inputs, the human's mean)" in " ".join(text.split())
    mean = json.loads(mean_json[mean_json.index("["):])
    median = json.loads(median_json[median_json.index("["):])
    m1 = next(r for r in median if r["metric"] == "m1")
    expected = scipy.stats.pearsonr(_loop(cells, "m1", "median"), _loop(cells, "human", "mean"))[0]   # Graham's
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


# --- accuracy ------------------------------------------------------------------------------------
def _brute_accuracy(x, z):
    """Share of system pairs whose two differences have the same sign (0 a tie), by a loop."""
    pairs = list(itertools.combinations(range(len(x)), 2))
    return sum(np.sign(x[i] - x[k]) == np.sign(z[i] - z[k]) for i, k in pairs) / len(pairs)


def test_accuracy_median_against_a_loop_and_the_mean_as_before(holes):
    db, cells = holes
    base = ["accuracy", "--dataset", "h", "--human", "human", "--metric", "m1", "--metric", "m2"]
    run_cli(db, *base, "--format", "json")
    text = run_cli(db, *base, "--level", "system", "--aggregate", "median").output
    assert "its median over its inputs (--aggregate median)" in text
    with Store(db) as wh:
        rows = wh.sql("SELECT * FROM latest_pairwise_accuracy WHERE level = 'system' ORDER BY aggregate, metric")
        runs = wh.sql("SELECT command, parameters FROM analysis_runs ORDER BY run_id")
        signed = signatures.with_signatures(wh, rows)
    assert rows["aggregate"].tolist() == ["mean", "mean", "median", "median"]
    for j, (aggregate, metric) in enumerate(itertools.product(("mean", "median"), ("m1", "m2"))):
        assert rows["accuracy"][j] == pytest.approx(
            _brute_accuracy(_loop(cells, metric, aggregate), _loop(cells, "human", "mean")), abs=1e-12)
    mean, median = (json.loads(c) for c in rows["conventions"][[0, 2]])
    assert "aggregate" not in mean and mean["level"] == "system (macro): pairs of system means"
    assert median["aggregate"] == "median"
    assert median["level"] == "system (macro): pairs of system medians (metric), means (human)"
    assert rows["fingerprint"][0] != rows["fingerprint"][2]
    assert signed["signature"].str.contains("agg:median").tolist() == [False, False, True, True]
    parameters = [json.loads(p) for p in runs["parameters"]]
    assert ["aggregate" in p for p in parameters].count(True) == 1   # the median's accuracy run only


def _brute_spa(X, Z, signs, aggregate, human_aggregate="mean"):
    """SPA by loops: per pair and sign vector, the swapped rows and their aggregate's difference
    (the metric's ``aggregate``, the human's ``human_aggregate``)."""
    import statistics

    def p(S, i, k, aggregate):
        agg = statistics.median if aggregate == "median" else statistics.fmean
        obs = agg(S[i]) - agg(S[k])
        count = 0
        for e in signs:
            a = [S[k][j] if e[j] < 0 else S[i][j] for j in range(len(e))]
            b = [S[i][j] if e[j] < 0 else S[k][j] for j in range(len(e))]
            count += agg(a) - agg(b) >= obs - (1e-12 if aggregate == "mean" else 0)
        return count / len(signs)

    pairs = list(itertools.combinations(range(X.shape[0]), 2))
    return 1 - np.mean([abs(p(Z, i, k, human_aggregate) - p(X, i, k, aggregate)) for i, k in pairs])


def test_soft_pairwise_accuracy_median_against_a_loop(full):
    from metaeval.analyses.stats import soft_pairwise

    db = full
    base = ["accuracy", "--dataset", "h", "--human", "human", "--metric", "m1", "--soft", "--k", "64"]
    run_cli(db, *base)
    run_cli(db, *base, "--aggregate", "median")
    run_cli(db, *base, "--aggregate", "median", "--human-aggregate", "median")
    with Store(db) as wh:
        rows = wh.sql("SELECT * FROM latest_soft_pairwise_accuracy ORDER BY aggregate")
        cells = wh.sql("SELECT system, input, measure, value FROM cells WHERE dataset = 'h'")
    X, Z = (cells[cells["measure"] == m].pivot(index="system", columns="input", values="value").to_numpy()
            for m in ("m1", "human"))
    signs = soft_pairwise.mtme_permutation_signs(64, X.shape[1], 4)
    assert rows["aggregate"].tolist() == ["mean", "median", "median/median"]
    assert rows["spa"][0] == pytest.approx(_brute_spa(X, Z, signs, "mean"), abs=1e-12)
    assert rows["spa"][1] == pytest.approx(_brute_spa(X, Z, signs, "median"), abs=1e-12)
    assert rows["spa"][2] == pytest.approx(_brute_spa(X, Z, signs, "median", "median"), abs=1e-12)
    assert json.loads(rows["conventions"][2])["human_aggregate"] == "median"
    assert "aggregate" not in json.loads(rows["conventions"][0])
    assert json.loads(rows["conventions"][1])["aggregate"] == "median"


def test_accuracy_refuses_the_median_off_the_system_level(holes):
    db, _ = holes
    base = ["accuracy", "--dataset", "h", "--human", "human", "--metric", "m1", "--aggregate", "median"]
    _one_line_refusal(run_cli(db, *base, ok=False), "--aggregate", "--level 'system'")
    _one_line_refusal(run_cli(db, *base, "--level", "micro", ok=False), "--level 'system'")
    _one_line_refusal(run_cli(db, *base, "--level", "system", "--delta-bins", "2", ok=False), "--delta-bins")
    with Store(db) as wh:
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == 0


def test_a_schema_7_warehouse_gains_the_accuracy_aggregate_and_keeps_its_rows(full):
    from metaeval import schema
    from metaeval.connection import duckdb_connect

    db = full
    run_cli(db, "accuracy", "--dataset", "h", "--human", "human", "--metric", "m1")
    run_cli(db, "accuracy", "--dataset", "h", "--human", "human", "--metric", "m1", "--soft", "--k", "20")
    tables = ("pairwise_accuracy", "soft_pairwise_accuracy")
    with duckdb_connect(db) as con:   # as schema 7 had them: no aggregate column
        before = {t: con.execute(f"SELECT * FROM {t} ORDER BY result_id").df() for t in tables}
        for t in tables:
            con.execute(f"ALTER TABLE {t} DROP COLUMN aggregate")
        con.execute("UPDATE schema_info SET value = '7' WHERE key = 'version'")
    assert f"from schema 7 to {schema.SCHEMA_VERSION}" in run_cli(db, "init").output
    with Store(db) as wh:
        for t in tables:
            after = wh.sql(f"SELECT * FROM {t} ORDER BY result_id")
            assert len(after) == len(before[t]) > 0 and after.equals(before[t]), t
            assert len(wh.sql(f"SELECT * FROM latest_{t}")) == len(after)


# --- rank-tasks ------------------------------------------------------------------------------------
def test_rank_tasks_median_system_tasks_against_scipy_and_the_mean_as_before(holes):
    import scipy.stats

    db, cells = holes
    tasks = ["--task", "h:human:system:pearson", "--task", "h:human:summary:spearman", "--k", "99"]
    run_cli(db, "rank-tasks", *tasks)
    text = run_cli(db, "rank-tasks", *tasks, "--aggregate", "median").output
    assert "task 1: h:human:system:pearson (weight 1) (system scores: medians (metric), means (human))" in text
    assert "task 2: h:human:summary:spearman (weight 1)\n" in text
    with Store(db) as wh:
        rows = wh.sql("SELECT * FROM latest_task_rankings ORDER BY run_id, metric")
        runs = wh.sql("SELECT parameters, data_fingerprint FROM analysis_runs ORDER BY run_id")
        signed = signatures.with_signatures(wh, rows)
    assert len(rows) == 4 and rows["task_set"].nunique() == 2     # the mean's ranking and the median's, both latest
    mean, median = rows[:2], rows[2:].reset_index(drop=True)
    assert "aggregate" not in mean["tasks"][0] and json.loads(median["tasks"][0])[0]["aggregate"] == "median"
    assert "aggregate" not in json.loads(median["tasks"][0])[1]     # the summary-level task has no system score
    for how, frame in (("mean", mean.reset_index(drop=True)), ("median", median)):
        for j, metric in enumerate(("m1", "m2")):
            r_system = json.loads(frame["correlations"][j])[0]
            expected = scipy.stats.pearsonr(_loop(cells, metric, how), _loop(cells, "human", "mean"))[0]
            assert r_system == pytest.approx(expected, abs=1e-12)
    assert json.loads(mean["correlations"][0])[1] == json.loads(median["correlations"][0])[1]
    assert json.loads(median["conventions"][0])["aggregate"] == "median"
    assert "aggregate" not in json.loads(mean["conventions"][0])
    assert signed["signature"].str.contains("agg:median").tolist() == [False, False, True, True]
    parameters = [json.loads(p) for p in runs["parameters"]]
    assert "aggregate" not in parameters[0] and parameters[1]["aggregate"] == "median"
    assert runs["data_fingerprint"][0] != runs["data_fingerprint"][1]
    again = run_cli(db, "rank-tasks", *tasks, "--aggregate", "median").output
    assert "up to date; nothing computed" in again


def test_rank_tasks_refuses_the_median_without_a_system_task_or_for_spa(holes):
    db, _ = holes
    for task, words in (("h:human:summary:pearson", "system-level task"), ("h:human:system:spa", "spa task"),
                        ("h:human:system:kendall-23", "kendall-23")):
        _one_line_refusal(run_cli(db, "rank-tasks", "--task", task, "--aggregate", "median", ok=False),
                          "--aggregate", words)


# --- readers of the latest views keyed by the aggregate (plot, report, results, export) -------------
@pytest.fixture
def both(holes):
    """The holes warehouse with the mean's and the median's correlations, intervals and tests."""
    db, cells = holes
    scope = ["--dataset", "h", "--human", "human", "--metric", "m1", "--metric", "m2", "--level", "system",
             "--coefficient", "pearson"]
    for aggregate in ("mean", "median"):
        run_cli(db, "correlate", *scope, "--aggregate", aggregate)
        run_cli(db, "ci", *scope, "--ci-method", "boot-inputs", "--k", "99", "--aggregate", aggregate)
        run_cli(db, "compare", *scope, "--method", "perm-inputs", "--k", "99", "--aggregate", aggregate)
    return db, cells


def test_plot_ci_and_heatmap_draw_one_aggregate(both, tmp_path, monkeypatch):
    from metaeval.present import figures

    db, _ = both
    drawn = []
    for name in ("ci_forest", "significance_heatmap"):
        real = getattr(figures, name)
        monkeypatch.setattr(figures, name, lambda rows, *a, _real=real, **kw: drawn.append((rows, a, kw))
                            or _real(rows, *a, **kw))
    base = ["--dataset", "h", "--human", "human", "--level", "system", "--coefficient", "pearson"]
    for i, aggregate in enumerate(("mean", "median")):
        extra = [] if aggregate == "mean" else ["--aggregate", "median"]
        run_cli(db, "plot", "ci", *base, "--ci-method", "boot-inputs", "--out", tmp_path / f"ci{i}.svg", *extra)
        run_cli(db, "plot", "heatmap", *base, "--method", "perm-inputs", "--out", tmp_path / f"h{i}.svg", *extra)
    with Store(db) as wh:
        corr = wh.sql("SELECT metric, aggregate, value FROM latest_correlations")
    for (rows, args, kw), aggregate in zip(drawn, ("mean", "mean", "median", "median")):
        assert len(rows) == 2 or "metric_a" in rows and set(rows["aggregate"]) == {aggregate}
        assert set(rows["aggregate"]) == {aggregate}
        title = args[0] if "metric_a" not in rows else args[1]
        assert ("system medians" in title) == (aggregate == "median")
        if "metric_a" in rows:   # the heatmap orders the metrics by the correlations of its aggregate
            mine = corr[corr["aggregate"] == aggregate]
            assert kw["correlations"] == dict(zip(mine["metric"], mine["value"]))
    missing = run_cli(db, "plot", "ci", *base, "--ci-method", "boot-both", "--out", tmp_path / "x.svg", "--aggregate",
                      "median", ok=False)
    assert "--aggregate median" in missing.output and "stored: " in missing.output


def test_report_results_and_export_never_mix_the_mean_and_the_median(both, tmp_path):
    import pandas as pd

    db, cells = both
    with Store(db) as wh:
        corr = wh.sql("SELECT metric, aggregate, value FROM latest_correlations ORDER BY metric, aggregate")
    html = tmp_path / "r.html"
    run_cli(db, "report", "--dataset", "h", "--human", "human", "--out", html)
    page = html.read_text()
    mean_value = corr[(corr["metric"] == "m1") & (corr["aggregate"] == "mean")]["value"].item()
    median_value = corr[(corr["metric"] == "m1") & (corr["aggregate"] == "median")]["value"].item()
    assert f"{mean_value:.3f}" in page and f"{median_value:.3f}" not in page   # the report shows the mean's
    shown = json.loads(run_cli(db, "results", "correlations", "--format", "json").output)
    assert sorted((r["metric"], r["aggregate"]) for r in shown) == [("m1", "mean"), ("m1", "median"),
                                                                     ("m2", "mean"), ("m2", "median")]
    only = json.loads(run_cli(db, "results", "correlations", "--aggregate", "median", "--format", "json").output)
    assert {r["aggregate"] for r in only} == {"median"} and len(only) == 2
    assert " aggregate" in run_cli(db, "results", "hypothesis_tests").output   # a column of the text too
    run_cli(db, "export", "confidence_intervals", "--latest", "--out", tmp_path / "ci.csv")
    exported = pd.read_csv(tmp_path / "ci.csv")
    assert sorted(exported["aggregate"]) == ["mean", "mean", "median", "median"]


# --- optimal-set --pooled: Graham's Table 2 over {mean, median} -------------------------------------
@pytest.fixture
def rouge(tmp_path):
    """6 systems x 9 inputs, three ROUGE variants and a human score, every cell present."""
    rng = np.random.default_rng(8)
    human = rng.normal(size=(6, 9))
    cols = {"rouge-1.f1": human + rng.normal(scale=0.5, size=human.shape),
            "rouge-2.recall[stem]": human + rng.normal(scale=1.5, size=human.shape),
            "rouge-l.precision": rng.normal(size=human.shape)}
    lines = [f"s{s},{i},{','.join(repr(float(c[s, i])) for c in cols.values())},{float(human[s, i])!r}"
             for s in range(6) for i in range(9)]
    csv = tmp_path / "rouge.csv"
    csv.write_text(f"system,input,{','.join(cols)},human\n" + "\n".join(lines) + "\n")
    db = tmp_path / "r.duckdb"
    Store.create(db).close()
    run_cli(db, "ingest", "table", csv, "--dataset", "r", "--human", "human")
    return db, cols, human


def _brute_boot_p(X, Y, Z, agg_x, agg_y, cols):
    """Two-sided paired bootstrap p of r(agg_x X, mean Z) - r(agg_y Y, mean Z) over the drawn
    input columns, by a loop (numpy's mean/median per system, scipy's Pearson): Graham's variants,
    the metric's median against the human's mean."""
    import scipy.stats

    def r(A, H, agg, c):
        f = np.median if agg == "median" else np.mean
        return scipy.stats.pearsonr(f(A[:, c], axis=1), np.mean(H[:, c], axis=1))[0]

    everything = np.arange(X.shape[1])
    delta = r(X, Z, agg_x, everything) - r(Y, Z, agg_y, everything)
    deltas = np.array([r(X, Z, agg_x, c) - r(Y, Z, agg_y, c) for c in cols])
    return delta, np.mean(np.abs(deltas - delta) >= abs(delta) - 1e-12)


def test_optimal_set_pooled_tests_between_mean_and_median_variants(rouge):
    from functools import partial

    from metaeval.analyses.stats import resampling
    from metaeval.analyses.stats.validation import seed_iv

    db, cols, human = rouge
    common = ["--dataset", "r", "--human", "human", "--method", "boot-inputs", "--k", "199", "--seed", "3"]
    run_cli(db, "optimal-set", *common, "--pooled")
    run_cli(db, "compare", "--dataset", "r", "--human", "human", "--level", "system", "--coefficient", "pearson",
            "--method", "boot-inputs", "--k", "199", "--seed", "3", "--aggregate", "median")
    again = run_cli(db, "optimal-set", *common, "--pooled", "--format", "json").output
    with Store(db) as wh:
        shares = wh.sql("SELECT * FROM latest_optimal_set_shares ORDER BY option, value")
        tests = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE metric_a = 'rouge-1.f1' "
                       "AND metric_b = 'rouge-l.precision'")
        n_runs = wh.sql("SELECT count(*) AS n FROM analysis_runs WHERE command = 'optimal-set'")["n"][0]
    assert n_runs == 1 and json.loads(again[again.index("["):])   # the second call computed nothing
    assert set(shares["aggregate"]) == {"pooled"}
    agg = shares[shares["option"] == "aggregate"]
    assert agg["value"].tolist() == ["mean", "median"] and agg["n_variants"].tolist() == [3, 3]
    for _, part in shares.groupby("option"):
        assert part["share"].sum() == pytest.approx(1.0)
    conv = json.loads(shares["conventions"].iloc[0])
    names = [f"{m} ({a})" for a in ("mean", "median") for m in cols]
    assert sorted(conv["optimal_variants"]) == sorted(v for v in names if v not in conv["beaten_by"])
    assert agg["n_optimal"].tolist() == [sum(v.endswith("(mean)") for v in conv["optimal_variants"]),
                                         sum(v.endswith("(median)") for v in conv["optimal_variants"])]
    # the pooled tests against loops over the same draws, and against compare within one aggregate
    from metaeval.analyses import optimal_set as osa

    matrices = dict(cols)
    pooled = osa.pooled_ranking(matrices, human, "pearson", "inputs", k=199, seed=3)
    stream = resampling.ResampleStream(seed_iv(3), partial(resampling.bootstrap_indices, n_systems=6, n_inputs=9,
                                                           method="inputs"))
    _, drawn = stream.take(0, 199)
    i, j = pooled.variants.index(("rouge-1.f1", "mean")), pooled.variants.index(("rouge-2.recall[stem]", "median"))
    delta, p = _brute_boot_p(cols["rouge-1.f1"], cols["rouge-2.recall[stem]"], human, "mean", "median", drawn)
    assert (pooled.delta[i, j], pooled.pvalues[i, j]) == pytest.approx((delta, p), abs=1e-12)
    i, j = pooled.variants.index(("rouge-1.f1", "median")), pooled.variants.index(("rouge-l.precision", "median"))
    assert (pooled.delta[i, j], pooled.pvalues[i, j]) == pytest.approx((tests["delta"][0], tests["p_value"][0]),
                                                                       abs=1e-12)
    i = pooled.variants.index(("rouge-1.f1", "mean"))
    j = pooled.variants.index(("rouge-1.f1", "median"))
    delta, p = _brute_boot_p(cols["rouge-1.f1"], cols["rouge-1.f1"], human, "mean", "median", drawn)
    assert (pooled.delta[i, j], pooled.pvalues[i, j]) == pytest.approx((delta, p), abs=1e-12)


def test_optimal_set_pooled_refusals(rouge):
    db, _, _ = rouge
    base = ["optimal-set", "--dataset", "r", "--human", "human"]
    for extra, words in ((["--pooled"], "--method 'williams'"),
                         (["--pooled", "--method", "boot-inputs", "--level", "summary"], "--level 'system'"),
                         (["--pooled", "--method", "boot-inputs", "--coefficient", "kendall-23"], "kendall-23"),
                         (["--metric", "rouge-*"], "--pooled")):
        _one_line_refusal(run_cli(db, *base, *extra, ok=False), words)


def test_pooled_optimal_set_counts_a_test_that_cannot_reach_significance_as_not_run():
    """A pooled test whose valid resamples cannot reach its corrected level is not evidence
    (conclusions rule 3): with such a test no variant is declared optimal or not, as every other
    family decides (review: the pooled ranking passed no evidence and named a winner). 3 systems x
    5 inputs, a binary metric whose bootstrap correlations are often undefined."""
    from metaeval.analyses import optimal_set as osa

    rng = np.random.default_rng(44)
    Z = rng.normal(size=(3, 5)) + np.arange(3)[:, None]
    mats = {"m1": (rng.random(size=(3, 5)) < 0.35).astype(float), "m2": Z + rng.normal(size=(3, 5))}
    r = osa.pooled_ranking(mats, Z, "pearson", "inputs", k=100, seed=0, alpha=0.05)
    assert "not evidence" in " ".join(map(str, r.conventions.values()))
    assert all(v is None for (m, a), v in r.optimal.items() if (m, a) != ("m1", "mean"))
    assert r.optimal[("m1", "median")] is None


def test_soft_pairwise_accuracy_prints_the_metrics_by_their_spa(cli):
    """Issue 48 item 15: `accuracy --soft` printed the metrics by name; the best SPA first (the
    stored rows' values, in every format)."""
    import json

    cli("demo", "--systems", "6", "--inputs", "8", "--k", "40")
    base = ["accuracy", "--dataset", "demo", "--human", "expert.relevance", "--soft", "--k", "20"]
    rows = json.loads(cli(*base, "--format", "json").stdout)
    spa = [r["spa"] for r in rows]
    assert spa == sorted(spa, reverse=True) and len(spa) == 4
    text = cli(*base).output.splitlines()
    header = next(i for i, line in enumerate(text) if line.split()[:2] == ["metric", "spa"])
    assert [line.split()[0] for line in text[header + 1:header + 5]] == [r["metric"] for r in rows]
