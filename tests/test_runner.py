"""Analyses over the warehouse: persisted, reproducible, incremental."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval import Store, analyses
from metaeval.cli import main
from metaeval.runs.engine import bookkeeping, runner, selection
from metaeval.runs.metrics import comparisons, correlations
from tests.conftest import run_cli as _cli

VOLATILE = ["result_id", "run_id"]


def _rows(db, table, order):
    with Store(db, read_only=True) as wh:
        frame = wh.sql(f"SELECT * FROM {table}")
    return frame.drop(columns=VOLATILE).sort_values(order).reset_index(drop=True)


@pytest.mark.parametrize("dataset, human, metrics", [
    ("summeval", "expert.relevance", ["rouge-2.f1", "bertscore.f1", "qa-eval.f1"]),
    ("realsumm", "litepyramid.recall", ["rouge-1.recall", "js-2", "MoverScore"]),
])
def test_persisted_correlations_equal_analyses(warehouse_copy, dataset, human, metrics):
    args = ["correlate", "--dataset", dataset, "--human", human]
    for m in metrics:
        args += ["--metric", m]
    _cli(warehouse_copy, *args)
    with Store(warehouse_copy, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_correlations WHERE dataset = ?", [dataset])
        assert len(rows) == len(metrics) * 9
        for r in rows.itertuples():
            m = wh.matrix(dataset, [r.metric, human])
            expected = analyses.correlate(m[r.metric], m[human], r.level, r.coefficient)
            assert r.value == pytest.approx(expected, abs=1e-12), r
            assert (r.n_systems, r.n_inputs) == m[human].shape


def test_ci_and_test_rows_identical_across_runs_and_jobs(shared_warehouse, tmp_path):
    common = ["--dataset", "realsumm", "--human", "litepyramid.recall", "--metric", "rouge-*.recall",
              "--level", "system", "--level", "summary", "--coefficient", "pearson", "--coefficient", "kendall",
              "--k", "200", "--seed", "7"]
    tables = {}
    for name, jobs in (("a", 1), ("b", 2)):
        db = tmp_path / f"{name}.duckdb"
        db.write_bytes(shared_warehouse.read_bytes())
        _cli(db, "ci", *common, "--ci-method", "boot-both", "--jobs", jobs)
        _cli(db, "compare", *common, "--method", "perm-both", "--correction", "holm", "--jobs", jobs)
        tables[name] = {"ci": _rows(db, "confidence_intervals", ["metric", "level", "coefficient"]),
                        "tests": _rows(db, "hypothesis_tests", ["metric_a", "metric_b", "level", "coefficient"])}
    assert len(tables["a"]["ci"]) == 3 * 4 and len(tables["a"]["tests"]) == 6 * 4
    pd.testing.assert_frame_equal(tables["a"]["ci"], tables["b"]["ci"])
    pd.testing.assert_frame_equal(tables["a"]["tests"], tables["b"]["tests"])
    # and --force in the same warehouse recomputes the very same numbers
    db = tmp_path / "a.duckdb"
    _cli(db, "ci", *common, "--ci-method", "boot-both", "--force")
    with Store(db, read_only=True) as wh:
        again = wh.sql("SELECT * FROM latest_confidence_intervals").drop(columns=VOLATILE)
    again = again.sort_values(["metric", "level", "coefficient"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(again, tables["a"]["ci"])


def test_second_run_computes_nothing_and_new_metric_only_its_rows(warehouse_copy, tmp_path):
    base = ["--dataset", "realsumm", "--human", "litepyramid.recall", "--coefficient", "pearson",
            "--level", "system"]
    metrics = ["--metric", "rouge-1.recall", "--metric", "rouge-2.recall", "--metric", "new-metric"]
    with Store(warehouse_copy, read_only=True) as wh:
        n_auto = len(wh.measures("realsumm", "automatic"))
    first = _cli(warehouse_copy, "correlate", *base).output
    assert f"computed {n_auto} of {n_auto}" in first
    assert "up to date; nothing computed" in _cli(warehouse_copy, "correlate", *base).output
    # one more metric: a noisy copy of rouge-1 recall
    with Store(warehouse_copy, read_only=True) as wh:
        frame = wh.matrix("realsumm", "rouge-1.recall").frame().stack().rename("value").reset_index()
    frame["measure"] = "new-metric"
    frame["value"] += np.random.default_rng(0).normal(0, 0.05, len(frame))
    path = tmp_path / "new.csv"
    frame.to_csv(path, index=False)
    _cli(warehouse_copy, "ingest", "table", path, "--dataset", "realsumm")
    assert f"computed 1 of {n_auto + 1}" in _cli(warehouse_copy, "correlate", *base).output
    out = _cli(warehouse_copy, "compare", *base, "--metric", "rouge-1.recall", "--metric", "rouge-2.recall",
               "--method", "perm-both", "--k", "50", "--correction", "none").output
    assert "computed 2 of 2" in out
    out = _cli(warehouse_copy, "compare", *base, *metrics, "--method", "perm-both", "--k", "50",
               "--correction", "none").output
    assert "computed 4 of 6" in out, "only the pairs involving the new metric"
    out = _cli(warehouse_copy, "compare", *base, *metrics, "--method", "perm-both", "--k", "50",
               "--correction", "none").output
    assert "up to date; nothing computed" in out
    # a correction over the family reuses the raw p-values and writes corrected rows
    out = _cli(warehouse_copy, "compare", *base, *metrics, "--method", "perm-both", "--k", "50",
               "--correction", "bonferroni").output
    assert "computed 0 of 6, wrote 6 rows" in out
    with Store(warehouse_copy, read_only=True) as wh:
        t = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE correction = 'bonferroni'")
        raw = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE correction = 'none'")
    merged = t.merge(raw, on=["metric_a", "metric_b"], suffixes=("", "_raw"))
    np.testing.assert_allclose(merged["p_value"], merged["p_value_raw"])
    np.testing.assert_allclose(merged["p_adjusted"], np.minimum(1, 2 * merged["p_value"]))
    assert set(t["family_size"]) == {2} and t["family"].nunique() == 1
    assert raw["family"].isna().all() and raw["family_size"].isna().all()
    # Bonferroni on a subset: a family of one pair per metric; the latest view then shows that
    # family alone, not its rows beside the three-metric family's other pairs
    out = _cli(warehouse_copy, "compare", *base, "--metric", "rouge-1.recall", "--metric", "rouge-2.recall",
               "--method", "perm-both", "--k", "50", "--correction", "bonferroni").output
    assert "computed 0 of 2, wrote 2 rows" in out
    with Store(warehouse_copy, read_only=True) as wh:
        sub = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE correction = 'bonferroni'")
        assert len(wh.sql("SELECT * FROM hypothesis_tests WHERE correction = 'bonferroni'")) == 8
    assert sorted(zip(sub["metric_a"], sub["metric_b"])) == [("rouge-1.recall", "rouge-2.recall"),
                                                            ("rouge-2.recall", "rouge-1.recall")]
    assert set(sub["family_size"]) == {1} and sub["family"].nunique() == 1
    np.testing.assert_allclose(sub["p_adjusted"], sub["p_value"])
    # back to the three metrics: their family is restored whole (copied, not recomputed)
    out = _cli(warehouse_copy, "compare", *base, *metrics, "--method", "perm-both", "--k", "50",
               "--correction", "bonferroni").output
    assert "computed 0 of 6, wrote 6 rows" in out
    with Store(warehouse_copy, read_only=True) as wh:
        again = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE correction = 'bonferroni'")
    assert len(again) == 6 and set(again["family"]) == set(t["family"]) and set(again["family_size"]) == {2}
    # without a correction every pair's latest row stays visible whatever was compared since
    with Store(warehouse_copy, read_only=True) as wh:
        assert len(wh.sql("SELECT * FROM latest_hypothesis_tests WHERE correction = 'none'")) == 6


def test_changed_data_changes_fingerprint_and_is_recomputed(warehouse_copy, tmp_path):
    base = ["correlate", "--dataset", "realsumm", "--human", "litepyramid.recall", "--metric", "js-2",
            "--level", "system", "--coefficient", "pearson"]
    _cli(warehouse_copy, *base)
    path = tmp_path / "fix.csv"
    path.write_text("system,input,measure,value\nbart_out,0,js-2,0.0\n")
    _cli(warehouse_copy, "ingest", "table", path, "--dataset", "realsumm", "--replace")
    assert "computed 1 of 1" in _cli(warehouse_copy, *base).output
    with Store(warehouse_copy, read_only=True) as wh:
        runs = wh.sql("SELECT data_fingerprint FROM analysis_runs ORDER BY run_id")
        rows = wh.sql("SELECT count(*) AS n, count(DISTINCT fingerprint) AS f FROM correlations")
    assert runs["data_fingerprint"].nunique() == 2
    assert (rows["n"][0], rows["f"][0]) == (2, 2)


def test_latest_views_one_row_per_key(warehouse_copy):
    args = ["--dataset", "summeval", "--human", "expert.relevance", "--metric", "rouge-1.f1",
            "--metric", "rouge-2.f1", "--level", "system", "--k", "50"]
    for _ in range(2):
        _cli(warehouse_copy, "ci", *args, "--ci-method", "boot-systems", "--force")
        _cli(warehouse_copy, "compare", *args, "--method", "boot-inputs", "--force")
        _cli(warehouse_copy, "correlate", *args[:-2], "--force")  # no --k
    with Store(warehouse_copy, read_only=True) as wh:
        for table, view, n in (("correlations", "latest_correlations", 6),
                               ("confidence_intervals", "latest_confidence_intervals", 6),
                               ("hypothesis_tests", "latest_hypothesis_tests", 6)):
            assert len(wh.sql(f"SELECT * FROM {table}")) == 2 * n
            latest = wh.sql(f"SELECT * FROM {view}")
            assert len(latest) == n
            newest = wh.sql(f"SELECT max(run_id) AS r FROM {table}")["r"][0]
            assert (latest["run_id"] == newest).all()


def test_interrupted_run_keeps_its_rows_and_resumes(warehouse_copy, monkeypatch):
    calls = {"n": 0}
    original = correlations.evaluate_correlation

    def flaky(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 10:
            raise KeyboardInterrupt
        return original(*args, **kwargs)

    with Store(warehouse_copy) as wh:
        scope = selection.resolve_scope(wh, "summeval", "expert.relevance", ["rouge-*"])
        analysis = correlations.correlate_analysis(scope)
        analysis.evaluate = flaky
        with pytest.raises(KeyboardInterrupt):
            runner.run(wh, scope, analysis, chunk_size=4)
        status = wh.sql("SELECT status, computed FROM analysis_runs").iloc[0]
        # the 10th evaluation was interrupted inside the third chunk of 4: two chunks finished
        assert status["status"] == "interrupted" and status["computed"] == 8
        assert len(wh.sql("SELECT * FROM correlations")) == 8
        summary = runner.run(wh, scope, correlations.correlate_analysis(scope))
        assert summary.computed == len(scope.metrics) * 9 - 8
        assert len(wh.sql("SELECT * FROM latest_correlations")) == len(scope.metrics) * 9


@pytest.mark.parametrize("args, message", [
    (["--human", "expert.relevanc"], "no human judgment 'expert.relevanc'; its human judgments: expert.coherence"),
    (["--human", "rouge-1.f1"], "no human judgment 'rouge-1.f1'"),
    (["--human", "expert.relevance", "--metric", "rouge-9*"], "--metric 'rouge-9*' matches no automatic measure"),
])
def test_clear_errors(shared_warehouse, args, message):
    result = _cli(shared_warehouse, "correlate", "--dataset", "summeval", *args, ok=False)
    assert result.exit_code != 0 and message in result.output, result.output
    result = _cli(shared_warehouse, "correlate", "--dataset", "nope", "--human", "x", ok=False)
    assert "unknown dataset 'nope'" in result.output and "summeval" in result.output


def test_too_few_systems_and_no_overlap(db, tmp_path):
    path = tmp_path / "tiny.csv"
    path.write_text("system,input,measure,value,kind\n"
                    "A,d1,m,1,automatic\nB,d1,m,2,automatic\nA,d1,h,1,human\nB,d1,h,3,human\n"
                    "A,d2,m2,1,automatic\nB,d2,m2,1,automatic\n")
    _cli(db, "ingest", "table", path, "--dataset", "tiny")
    result = _cli(db, "correlate", "--dataset", "tiny", "--human", "h", "--metric", "m", ok=False)
    assert "share fewer than 3 systems" in result.output
    result = _cli(db, "correlate", "--dataset", "tiny", "--human", "h", "--metric", "m2", ok=False)
    assert "have no cell (system, input) in common" in result.output


def test_a_sparse_metric_is_skipped_and_reported_not_fatal(db, tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for s in "ABCDE":
        for d in ("d1", "d2", "d3"):
            h = rng.normal()
            rows += [(s, d, "h", h, "human"), (s, d, "good", h + rng.normal(), "automatic"),
                     (s, d, "good2", h + rng.normal(), "automatic")]
    rows += [("A", "d1", "sparse", 1.0, "automatic"), ("B", "d1", "sparse", 2.0, "automatic")]
    path = tmp_path / "mixed.jsonl"
    pd.DataFrame(rows, columns=["system", "input", "measure", "value", "kind"]).to_json(path, orient="records",
                                                                                      lines=True)
    _cli(db, "ingest", "table", path, "--dataset", "mixed")
    result = CliRunner().invoke(main, ["--db", str(db), "correlate", "--dataset", "mixed", "--human", "h"])
    assert result.exit_code == 0, result.output
    assert "skipped: 'sparse' and 'h' share fewer than 3 systems" in result.output
    assert "computed 18 of 18" in result.output
    result = CliRunner().invoke(main, ["--db", str(db), "compare", "--dataset", "mixed", "--human", "h",
                                       "--method", "williams", "--level", "system", "--coefficient", "pearson",
                                       "--correction", "holm"])
    assert result.exit_code == 0 and "computed 2 of 2" in result.output, result.output
    with Store(db, read_only=True) as wh:
        assert "sparse" not in set(wh.sql("SELECT metric FROM correlations")["metric"])
        tests = wh.sql("SELECT * FROM hypothesis_tests")
    assert set(tests["metric_a"]) | set(tests["metric_b"]) == {"good", "good2"}
    assert set(tests["family_size"]) == {1}


def test_results_and_export(warehouse_copy, tmp_path):
    _cli(warehouse_copy, "correlate", "--dataset", "summeval", "--human", "expert.relevance",
         "--metric", "rouge-2.f1", "--level", "system")
    out = _cli(warehouse_copy, "results", "correlations", "--dataset", "summeval", "--format", "csv").output
    assert out.splitlines()[0].startswith("result_id,run_id,dataset,metric,human,level,coefficient,value")
    assert len(out.strip().splitlines()) == 4
    for fmt in ("csv", "parquet", "json"):
        target = tmp_path / f"c.{fmt}"
        _cli(warehouse_copy, "export", "correlations", "--format", fmt, "--out", target)
        frame = {"csv": pd.read_csv, "parquet": pd.read_parquet,
                 "json": lambda p: pd.read_json(p, lines=True)}[fmt](target)
        assert len(frame) == 3 and set(frame["metric"]) == {"rouge-2.f1"}


def test_data_changed_back_restores_the_latest_rows_without_computing(warehouse_copy, tmp_path):
    base = ["correlate", "--dataset", "realsumm", "--human", "litepyramid.recall", "--metric", "js-2",
            "--level", "system", "--coefficient", "pearson"]
    _cli(warehouse_copy, *base)
    with Store(warehouse_copy, read_only=True) as wh:
        original = float(wh.matrix("realsumm", "js-2").frame().loc["bart_out", "0"])
        first = wh.sql("SELECT value FROM latest_correlations")["value"][0]
    for value, expect in ((0.0, "computed 1 of 1"), (original, "computed 0 of 1, wrote 1 rows")):
        path = tmp_path / "cell.csv"
        path.write_text(f"system,input,measure,value\nbart_out,0,js-2,{value!r}\n")
        _cli(warehouse_copy, "ingest", "table", path, "--dataset", "realsumm", "--replace")
        assert expect in _cli(warehouse_copy, *base).output
    with Store(warehouse_copy, read_only=True) as wh:
        assert wh.sql("SELECT value FROM latest_correlations")["value"][0] == first
    assert "up to date" in _cli(warehouse_copy, *base).output


def test_other_parameters_in_between_are_reused_not_recomputed(warehouse_copy):
    base = ["ci", "--dataset", "summeval", "--human", "expert.relevance", "--metric", "rouge-2.f1",
            "--level", "system", "--coefficient", "pearson", "--ci-method", "boot-systems"]
    _cli(warehouse_copy, *base, "--k", "50")
    _cli(warehouse_copy, *base, "--k", "60")
    assert "computed 0 of 1, wrote 1 rows" in _cli(warehouse_copy, *base, "--k", "50").output
    with Store(warehouse_copy, read_only=True) as wh:
        latest = wh.sql("SELECT k FROM latest_confidence_intervals")
    assert list(latest["k"]) == [50]


def test_compare_prints_only_the_pairs_in_scope_in_order(warehouse_copy):
    base = ["compare", "--dataset", "realsumm", "--human", "litepyramid.recall", "--level", "system",
            "--coefficient", "pearson", "--method", "williams"]
    _cli(warehouse_copy, *base, "--metric", "rouge-1.recall", "--metric", "rouge-2.recall", "--metric", "js-2")
    out = _cli(warehouse_copy, *base, "--metric", "rouge-2.recall", "--metric", "rouge-1.recall").output
    lines = [line.split() for line in out.splitlines() if line.split()[:1] in (["rouge-1.recall"], ["rouge-2.recall"])]
    assert [line[:2] for line in lines] == [["rouge-2.recall", "rouge-1.recall"], ["rouge-1.recall", "rouge-2.recall"]]
    assert "js-2" not in out


def test_results_of_another_version_are_recomputed_not_reused(warehouse_copy):
    """An upgrade that changes a computation must not serve the old numbers."""
    args = ["correlate", "--dataset", "realsumm", "--human", "litepyramid.recall", "--metric", "rouge-1.recall",
            "--level", "system"]
    _cli(warehouse_copy, *args)
    assert "up to date" in _cli(warehouse_copy, *args).output
    with Store(warehouse_copy) as wh:
        wh.con.execute("UPDATE analysis_runs SET version = '0.0.1'")
    assert "computed 3 of 3" in _cli(warehouse_copy, *args).output
    assert "up to date" in _cli(warehouse_copy, *args).output


WILLIAMS_HOLM = ("SELECT * FROM latest_hypothesis_tests WHERE method = 'williams' AND correction = 'holm' "
                 "AND level = 'system' AND coefficient = 'pearson'")


def test_an_interrupted_compare_never_hides_the_finished_family(db, monkeypatch):
    """A compare cut off after writing raw rows (not yet corrected) must not show in the view
    instead of the finished family; run again, it completes with one row per pair."""
    _cli(db, "demo", "--systems", "5", "--inputs", "6", "--k", "40")
    base = ["compare", "--dataset", "demo", "--human", "expert.relevance", "--method", "williams",
            "--level", "system", "--coefficient", "pearson", "--correction", "holm"]
    _cli(db, *base, "--metric", "sim-*")
    with Store(db, read_only=True) as wh:
        family = wh.sql(WILLIAMS_HOLM)
    assert len(family) == 12
    calls = {"n": 0}
    original = comparisons.evaluate_test

    def cut(*args, **kwargs):  # the first chunk of 8 tests is written (undefined), the 10th is cut off
        calls["n"] += 1
        if calls["n"] == 10:
            raise KeyboardInterrupt
        return {**original(*args, **kwargs), "p_value": None}

    monkeypatch.setattr(comparisons, "evaluate_test", cut)
    assert _cli(db, *base, "--metric", "sim-*", "--force", ok=False).exit_code != 0
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT status FROM analysis_runs ORDER BY run_id DESC LIMIT 1")["status"][0] == "interrupted"
        assert len(wh.sql("SELECT * FROM hypothesis_tests WHERE p_value IS NULL")) == 8
        shown = wh.sql(WILLIAMS_HOLM)
    assert sorted(shown["result_id"]) == sorted(family["result_id"])
    monkeypatch.setattr(comparisons, "evaluate_test", original)
    _cli(db, *base, "--metric", "sim-*")   # resumes: one row per pair, all of finished runs
    with Store(db, read_only=True) as wh:
        shown = wh.sql(WILLIAMS_HOLM)
        finished = set(wh.sql("SELECT run_id FROM analysis_runs WHERE status = 'finished'")["run_id"])
    assert len(shown) == 12 and not shown.duplicated(["metric_a", "metric_b"]).any()
    assert set(shown["run_id"]) <= finished


def test_this_release_says_whose_results_it_reproduces():
    """Reuse depends on bookkeeping.SAME_RESULTS_AS: a release must list itself (results unchanged:
    append; changed: start a new list), or it would recompute everything every time."""
    from metaeval import __version__

    assert __version__ in bookkeeping.SAME_RESULTS_AS


def _with_constant_metric(db, tmp_path):
    """Dataset 'flat': human h, two noisy copies of it and a metric constant everywhere."""
    rng = np.random.default_rng(1)
    rows = []
    for s in "ABCDEFG":
        for d in ("d1", "d2", "d3", "d4"):
            h = rng.normal()
            rows += [(s, d, "h", h, "human"), (s, d, "good", h + 0.3 * rng.normal(), "automatic"),
                     (s, d, "good2", h + 2 * rng.normal(), "automatic"), (s, d, "flat", 0.5, "automatic")]
    path = tmp_path / "flat.jsonl"
    pd.DataFrame(rows, columns=["system", "input", "measure", "value", "kind"]).to_json(path, orient="records",
                                                                                      lines=True)
    _cli(db, "ingest", "table", path, "--dataset", "flat")
    return ["--dataset", "flat", "--human", "h", "--level", "system", "--coefficient", "pearson"]


@pytest.mark.parametrize("method", ["perm-both", "perm-systems", "boot-inputs", "williams"])
@pytest.mark.parametrize("group", ["metric", "all"])
def test_a_constant_metric_is_never_significant_and_left_out_of_the_family(db, tmp_path, method, group):
    """corr(flat, h) is undefined: its tests used to store p = 1/(k + 1), significant in both
    directions, and counted in the Bonferroni/Holm families."""
    scope = _with_constant_metric(db, tmp_path)
    _cli(db, "compare", *scope, "--method", method, "--k", "40", "--correction", "holm", "--correction-group", group)
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_hypothesis_tests")
    assert len(rows) == 6
    flat = (rows["metric_a"] == "flat") | (rows["metric_b"] == "flat")
    undefined, defined = rows[flat], rows[~flat]
    assert undefined["p_value"].isna().all() and undefined["p_adjusted"].isna().all()
    assert undefined["delta"].isna().all() and undefined["significant"].tolist() == [False] * 4
    for r in undefined.itertuples():
        reason = json.loads(r.conventions)["excluded_from_correction"]
        side = "r(X,Z)" if r.metric_a == "flat" else "r(Y,Z)"
        assert reason.startswith(f"delta undefined: {side} undefined at the system level"), reason
        assert "X = metric_a, Y = metric_b, Z = human" in reason
    assert defined["p_value"].notna().all()
    assert "excluded_from_correction" not in " ".join(defined["conventions"])
    # Holm over the defined p-values only, and family_size counts just those
    families = ([rows["metric_a"] == a for a in ("good", "good2", "flat")] if group == "metric"
                else [rows["metric_a"].notna()])
    for member in families:
        family = rows[member]
        p = family["p_value"].to_numpy(dtype=float)
        np.testing.assert_allclose(family["p_adjusted"].to_numpy(dtype=float), analyses.correct_pvalues(p, "holm"))
        assert set(family["family_size"]) == {int((~np.isnan(p)).sum())}
    expected = defined["p_adjusted"] <= 0.05
    assert list(defined["significant"]) == list(expected)
