"""A system's score as the median over its inputs (issue 33 item 9; Graham 2015's median variants):
persist.system_scores, rank-change and error-overlap; recorded in the fingerprint, the
conventions, the run's parameters and the signature only when it is not the mean."""

from __future__ import annotations

import json

import numpy as np
import pytest

from metaeval import Store
from metaeval.errors import WarehouseError
from metaeval.runs.engine import persist, signatures

from .conftest import run_cli


@pytest.fixture
def holes(tmp_path):
    """6 systems x 7 inputs, two metrics and a human score, some cells missing."""
    rng = np.random.default_rng(11)
    lines, cells = [], {}
    for s in range(6):
        for i in range(7):
            if (s + i) % 5 == 0:
                continue        # a missing cell: each system's median over the inputs it has
            row = {"m1": rng.normal(), "m2": rng.normal(), "human": rng.normal()}
            cells[(s, i)] = row
            lines.append(f"s{s},{i},{row['m1']!r},{row['m2']!r},{row['human']!r}")
    csv = tmp_path / "holes.csv"
    csv.write_text("system,input,m1,m2,human\n" + "\n".join(lines) + "\n")
    db = tmp_path / "h.duckdb"
    Store.create(db).close()
    run_cli(db, "ingest", "table", csv, "--dataset", "h", "--human", "human")
    return db, cells


def _loop(cells, measure, how):
    out = []
    for s in range(6):
        values = [cells[(s, i)][measure] for i in range(7) if (s, i) in cells]
        out.append(float(np.median(values)) if how == "median" else float(np.mean(values)))
    return np.array(out)


def test_median_system_scores_against_a_loop_and_the_mean_as_before(holes):
    db, cells = holes
    with Store(db) as wh:
        systems, mean, fp_mean, conv_mean = persist.system_scores(wh, "h", ["m1", "m2"])
        _, median, fp_median, conv_median = persist.system_scores(wh, "h", ["m1", "m2"], aggregate="median")
        with pytest.raises(WarehouseError, match="unknown aggregate='mode'"):
            persist.system_scores(wh, "h", ["m1"], aggregate="mode")
    assert systems == tuple(f"s{s}" for s in range(6))
    for m in ("m1", "m2"):
        np.testing.assert_allclose(median[m], _loop(cells, m, "median"), rtol=0, atol=1e-12)
        np.testing.assert_allclose(mean[m], _loop(cells, m, "mean"), rtol=0, atol=1e-12)
    assert fp_mean != fp_median and "aggregate" not in conv_mean and conv_median["aggregate"] == "median"
    assert np.isnan(persist.system_medians(np.array([[np.nan, np.nan], [1.0, 3.0]]))[0])


def test_rank_change_median_rows_signature_and_run_parameters(holes):
    db, cells = holes
    common = ["rank-change", "--dataset", "h", "--metric", "m1", "--metric", "m2", "--format", "csv"]
    run_cli(db, *common)
    run_cli(db, *common, "--aggregate", "median")
    with Store(db) as wh:
        rows = wh.sql("SELECT * FROM rank_changes ORDER BY run_id, system")
        runs = wh.sql("SELECT parameters FROM analysis_runs ORDER BY run_id")["parameters"].map(json.loads).tolist()
        signed = signatures.with_signatures(wh, rows)
    first, second = rows[rows["run_id"] == rows["run_id"].min()], rows[rows["run_id"] == rows["run_id"].max()]
    np.testing.assert_allclose(first["score_a"], _loop(cells, "m1", "mean"))
    np.testing.assert_allclose(second["score_a"], _loop(cells, "m1", "median"))
    assert set(first["fingerprint"]).isdisjoint(set(second["fingerprint"]))
    assert "aggregate" not in runs[0] and runs[1]["aggregate"] == "median"
    assert signed["signature"].str.contains("agg:median").tolist() == [False] * 6 + [True] * 6


# --- correlate, ci, compare at the system level (issue 33 item 9, the rest) ---------------------
def _matrix(cells, measure):
    A = np.full((6, 7), np.nan)
    for (s, i), row in cells.items():
        A[s, i] = row[measure]
    return A


def test_correlate_ci_compare_median_rows_against_the_statistics_and_a_loop(holes):
    import scipy.stats

    from metaeval.analyses.stats import hypothesis, intervals
    from metaeval.analyses.stats.validation import aggregate_iv

    db, cells = holes
    X, Y, Z = (_matrix(cells, m) for m in ("m1", "m2", "human"))
    scope = ["--dataset", "h", "--human", "human", "--metric", "m1", "--metric", "m2", "--level", "system",
             "--coefficient", "pearson", "--format", "csv"]
    for command, extra in (("correlate", []), ("ci", ["--ci-method", "boot-inputs", "--k", "199", "--seed", "3"]),
                           ("compare", ["--method", "perm-inputs", "--k", "99", "--seed", "5"])):
        run_cli(db, command, *scope, *extra)
        run_cli(db, command, *scope, *extra, "--aggregate", "median")
    median = aggregate_iv("pearson", "median")
    with Store(db) as wh:
        corr = wh.sql("SELECT * FROM latest_correlations WHERE metric = 'm1' ORDER BY aggregate")
        ci = wh.sql("SELECT * FROM latest_confidence_intervals WHERE metric = 'm1' ORDER BY aggregate")
        tests = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE metric_a = 'm1' ORDER BY aggregate")
        runs = wh.sql("SELECT command, parameters, data_fingerprint FROM analysis_runs ORDER BY run_id")
        signed = signatures.with_signatures(wh, corr)
    assert corr["aggregate"].tolist() == ci["aggregate"].tolist() == tests["aggregate"].tolist() == ["mean", "median"]
    assert corr["value"][1] == pytest.approx(scipy.stats.pearsonr(_loop(cells, "m1", "median"),
                                                                  _loop(cells, "human", "mean"))[0], abs=1e-12)
    assert corr["value"][0] == pytest.approx(scipy.stats.pearsonr(_loop(cells, "m1", "mean"),
                                                                  _loop(cells, "human", "mean"))[0], abs=1e-12)
    r = intervals.bootstrap_ci(X, Z, "system", median, "inputs", k=199, seed=3)
    assert (ci["estimate"][1], ci["lower"][1], ci["upper"][1]) == pytest.approx((r.estimate, r.lower, r.upper), abs=1e-12)
    t = hypothesis.permutation_test(X, Y, Z, "system", median, "inputs", k=99, alternative="two-sided", seed=5)
    assert (tests["delta"][1], tests["p_value"][1]) == pytest.approx((t.delta, t.pvalue), abs=1e-12)
    for rows in (corr, ci, tests):      # a median's rows are other rows: their fingerprint differs
        assert rows["fingerprint"][0] != rows["fingerprint"][1]
        assert "aggregate" not in json.loads(rows["conventions"][0])
        assert json.loads(rows["conventions"][1])["aggregate"] == "median"
    parameters = runs["parameters"].map(json.loads).tolist()
    assert ["aggregate" in p for p in parameters] == [False, True] * 3
    assert [p.get("aggregate") for p in parameters[1::2]] == ["median"] * 3
    assert runs["data_fingerprint"][0] != runs["data_fingerprint"][1]
    assert signed["signature"].str.contains("agg:").tolist() == [False, True]
    assert "|agg:median|" in signed["signature"][1]


def test_the_mean_is_computed_as_before_and_the_median_refused_where_it_is_no_system_level_notion(holes):
    db, _ = holes
    with Store(db) as wh:
        _, _, fp_mean, _ = persist.system_scores(wh, "h", ["m1"], "human")
    run_cli(db, "correlate", "--dataset", "h", "--human", "human", "--metric", "m1", "--level", "system",
            "--coefficient", "pearson")
    with Store(db) as wh:   # a default run's fingerprint is the cells' as before the option
        row = wh.sql("SELECT fingerprint, aggregate FROM correlations")
    assert row["aggregate"].tolist() == ["mean"]
    base = ["--dataset", "h", "--human", "human", "--metric", "m1", "--metric", "m2"]
    for command, extra, words in (
            ("correlate", [], "system-level notion"),
            ("correlate", ["--level", "system", "--coefficient", "kendall-23"], "not kendall-23"),
            ("ci", ["--level", "system", "--coefficient", "pearson", "--resample-annotators", "cells"],
             "is not offered with --resample-annotators"),
            ("correlate", ["--level", "system", "--by", "split"], "is not offered with --by"),
            ("compare", ["--level", "summary"], "system-level notion")):
        result = run_cli(db, command, *base, *extra, "--aggregate", "median", ok=False)
        assert result.exit_code != 0 and "--aggregate" in result.output and words in result.output, result.output
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1, result.output


def test_a_schema_6_warehouse_gains_the_aggregate_columns_and_keeps_its_rows(tmp_path):
    from metaeval import schema
    from metaeval.connection import duckdb_connect

    db = tmp_path / "v6.duckdb"
    run_cli(db, "demo", "--dataset", "d", "--systems", "4", "--inputs", "5", "--k", "40")
    tables = ("correlations", "confidence_intervals", "hypothesis_tests", "winners")
    run_cli(db, "winners", "--dataset", "d", "--human", "expert.relevance", "--method", "perm-both", "--level", "system", "--coefficient",
            "pearson")
    with duckdb_connect(db) as con:  # as a version-6 warehouse was: no aggregate column
        before = {t: con.execute(f"SELECT * FROM {t} ORDER BY result_id").df() for t in tables}
        for table in (*tables, "optimal_set_shares"):
            con.execute(f"ALTER TABLE {table} DROP COLUMN aggregate")
        con.execute("UPDATE schema_info SET value = '6' WHERE key = 'version'")
    assert f"from schema 6 to {schema.SCHEMA_VERSION}" in run_cli(db, "init").output
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT is_nullable, column_default FROM information_schema.columns WHERE table_name = "
                      "'optimal_set_shares' AND column_name = 'aggregate'").values.tolist() == [["NO", "'mean'"]]
        for table in tables:
            after = wh.sql(f"SELECT * FROM {table} ORDER BY result_id")
            assert len(after) == len(before[table]) > 0 and (after["aggregate"] == "mean").all()
            assert after.drop(columns="aggregate").equals(before[table].drop(columns="aggregate"))
            assert len(wh.sql(f"SELECT * FROM latest_{table}")) > 0


def test_graham_mean_and_median_variants_of_rouge_on_summeval(shared_warehouse, tmp_path):
    """Graham (2015): each ROUGE variant with a system's mean and its median over the inputs,
    two rows of the latest view per variant; the metric's medians against the human's means, by
    pandas over the stored cells."""
    import scipy.stats

    db = tmp_path / "s.duckdb"
    db.write_bytes(shared_warehouse.read_bytes())
    common = ["correlate", "--dataset", "summeval", "--human", "expert.relevance", "--metric", "rouge-*",
              "--level", "system", "--coefficient", "pearson", "--format", "csv"]
    run_cli(db, *common)
    run_cli(db, *common, "--aggregate", "median")
    with Store(db) as wh:
        rows = wh.sql("SELECT * FROM latest_correlations WHERE dataset = 'summeval' ORDER BY metric, aggregate")
        cells = wh.sql("SELECT system, measure, value FROM cells WHERE dataset = 'summeval' "
                       "AND measure IN ('rouge-2.f1', 'expert.relevance')")
    assert len(rows) == 2 * rows["metric"].nunique() == 36     # 18 ROUGE measures x {mean, median}
    assert set(rows["aggregate"]) == {"mean", "median"}
    medians = cells.groupby(["measure", "system"])["value"].median().unstack(0).dropna()
    means = cells.groupby(["measure", "system"])["value"].mean().unstack(0).dropna()
    got = rows[(rows["metric"] == "rouge-2.f1") & (rows["aggregate"] == "median")]["value"].item()
    # Graham's median variant: the metric's median against the human's mean (issue 43)
    assert got == pytest.approx(scipy.stats.pearsonr(medians["rouge-2.f1"], means["expert.relevance"])[0], abs=1e-9)
    mean = rows[(rows["metric"] == "rouge-2.f1") & (rows["aggregate"] == "mean")]["value"].item()
    assert got != mean


def test_winners_read_the_tests_of_their_aggregate(holes):
    db, _ = holes
    scope = ["--dataset", "h", "--human", "human", "--metric", "m1", "--metric", "m2", "--level", "system",
             "--coefficient", "pearson", "--method", "perm-inputs"]
    result = run_cli(db, "winners", *scope, "--aggregate", "median", ok=False)   # no median tests yet
    assert result.exit_code != 0 and "missing" in result.output
    for aggregate in ("mean", "median"):
        run_cli(db, "compare", *scope, "--k", "99", "--aggregate", aggregate)
        run_cli(db, "correlate", *scope[:-2], "--aggregate", aggregate)
        run_cli(db, "winners", *scope, "--aggregate", aggregate)
    with Store(db) as wh:
        won = wh.sql("SELECT * FROM latest_winners ORDER BY aggregate, metric")
        corr = wh.sql("SELECT * FROM latest_correlations ORDER BY aggregate, metric")
        runs = wh.sql("SELECT parameters FROM analysis_runs WHERE command = 'winners' ORDER BY run_id")
    assert won["aggregate"].tolist() == ["mean", "mean", "median", "median"]
    np.testing.assert_allclose(won["correlation"], corr["value"], rtol=0, atol=1e-12)
    assert ["aggregate" in p for p in runs["parameters"]] == [False, True]


# --- rank-change and error-overlap: the aggregate a key of their tables (issue 33 item 9) --------
def test_rank_change_and_error_overlap_keep_the_mean_and_the_median_and_a_schema_6_warehouse_upgrades(holes):
    from metaeval.connection import duckdb_connect

    db, cells = holes
    for aggregate in ("mean", "median"):
        run_cli(db, "rank-change", "--dataset", "h", "--metric", "m1", "--metric", "m2", "--aggregate", aggregate)
        run_cli(db, "error-overlap", "--dataset", "h", "--human", "human", "--metric", "m1", "--metric", "m2",
                "--aggregate", aggregate)
    queries = {"rank_changes": "SELECT * FROM latest_rank_changes ORDER BY aggregate, system",
               "error_overlap": "SELECT * FROM latest_error_overlap ORDER BY aggregate"}
    with Store(db) as wh:
        latest = {t: wh.sql(q) for t, q in queries.items()}
    assert latest["rank_changes"]["aggregate"].tolist() == ["mean"] * 6 + ["median"] * 6
    np.testing.assert_allclose(latest["rank_changes"]["score_a"][6:], _loop(cells, "m1", "median"), atol=1e-12)
    assert latest["error_overlap"]["aggregate"].tolist() == ["mean", "median"]
    with duckdb_connect(db) as con:   # as schema 6 had them: no aggregate column, the median in the conventions
        for table in queries:
            con.execute(f"ALTER TABLE {table} DROP COLUMN aggregate")
        con.execute("UPDATE schema_info SET value = '6' WHERE key = 'version'")
    assert "from schema 6 to " in run_cli(db, "init").output
    with Store(db) as wh:
        for table, query in queries.items():
            assert wh.sql(query).equals(latest[table]), table
        rerun = run_cli(db, "rank-change", "--dataset", "h", "--metric", "m1", "--metric", "m2", "--aggregate",
                        "median")
        assert wh.sql("SELECT count(DISTINCT run_id) AS n FROM rank_changes")["n"][0] == 2   # reused, not recomputed
    assert rerun.exit_code == 0


def test_sequential_and_williams_tests_of_the_median_against_the_statistics(holes):
    from metaeval.analyses.stats import hypothesis, williams
    from metaeval.analyses.stats.validation import aggregate_iv

    db, cells = holes
    X, Y, Z = (_matrix(cells, m) for m in ("m1", "m2", "human"))
    scope = ["--dataset", "h", "--human", "human", "--metric", "m1", "--metric", "m2", "--level", "system",
             "--coefficient", "spearman", "--aggregate", "median"]
    run_cli(db, "compare", *scope, "--method", "williams")
    run_cli(db, "compare", *scope, "--method", "perm-systems", "--sequential", "--k-max", "400")
    with Store(db) as wh:
        rows = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE metric_a = 'm1' ORDER BY method")
    assert rows["method"].tolist() == ["perm-systems", "williams"] and set(rows["aggregate"]) == {"median"}
    w = williams.williams_test(X, Y, Z, "system", aggregate_iv("spearman", "median"), alternative="two-sided")
    assert rows["p_value"][1] == pytest.approx(w.pvalue, abs=1e-12)
    delta = hypothesis.permutation_test(X, Y, Z, "system", aggregate_iv("spearman", "median"), "systems", k=10,
                                        alternative="two-sided", seed=0).delta
    assert rows["delta"][0] == pytest.approx(delta, abs=1e-12)
    assert json.loads(rows["conventions"][0])["aggregate"] == "median"
