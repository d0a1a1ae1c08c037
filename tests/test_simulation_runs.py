"""Simulations over the warehouse: persisted, reproducible whatever --jobs, incremental, resumable."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from metaeval import Store
from metaeval.runs.metrics import simulation as simulation_runs
from tests.conftest import run_cli as _cli

VOLATILE = ["result_id", "run_id"]
COVERAGE = ["simulate", "coverage", "--dataset", "realsumm", "--human", "litepyramid.recall", "--metric", "qa-eval.f1",
            "--coefficient", "pearson", "--ci-method", "fisher", "--ci-method", "boot-both", "--trials", 60, "--k", 50,
            "--seed", 3]
POWER = ["simulate", "power", "--dataset", "realsumm", "--human", "litepyramid.recall", "--proportions", "0.1,1",
         "--method", "perm-both", "--method", "williams", "--trials", 8, "--k", 50, "--seed", 3]


@pytest.fixture
def copy_of(shared_warehouse, tmp_path):
    def make(name: str):
        path = tmp_path / f"{name}.duckdb"
        path.write_bytes(shared_warehouse.read_bytes())
        return path
    return make


def _rows(db, table):
    with Store(db, read_only=True) as wh:
        frame = wh.sql(f"SELECT * FROM {table}").drop(columns=VOLATILE)
    key = [c for c in ("metric", "level", "coefficient", "method", "proportion", "block") if c in frame.columns]
    return frame.sort_values(key).reset_index(drop=True)


def test_rows_identical_across_jobs_and_up_to_date_after(copy_of):
    tables, dbs = {}, {}
    for name, jobs in (("a", 1), ("b", 2)):
        db = dbs[name] = copy_of(name)
        _cli(db, *COVERAGE, "--jobs", jobs)
        _cli(db, *POWER, "--jobs", jobs)
        tables[name] = {t: _rows(db, t) for t in ("ci_coverage", "ci_coverage_blocks", "power", "power_blocks")}
    for t in tables["a"]:
        pd.testing.assert_frame_equal(tables["a"][t], tables["b"][t])
    coverage, power = tables["a"]["ci_coverage"], tables["a"]["power"]
    assert len(coverage) == 2 * 2 and (coverage["trials"] == 60).all()
    assert (coverage["contains"] + coverage["too_high"] + coverage["too_low"] + coverage["undefined"] == 60).all()
    assert len(tables["a"]["ci_coverage_blocks"]) == 2 * 2 * 2  # blocks of 50 and 10 trials
    assert len(power) == 2 * 2 * 2 and (power["trials"] == 8).all()
    # R_k keeping 10% of the tokens is detectably worse; R_k = ROUGE-1 itself never is
    perm = power[power["method"] == "perm-both"].set_index(["level", "proportion"])["power"]
    assert perm[("summary", 0.1)] > 0.5 and perm[("summary", 1.0)] == 0 and perm[("system", 1.0)] == 0
    db = dbs["a"]
    assert "up to date; nothing computed" in _cli(db, *COVERAGE).output
    assert "up to date; nothing computed" in _cli(db, *POWER).output


def test_more_trials_reuse_blocks_and_equal_a_fresh_run(copy_of):
    db = copy_of("grow")
    _cli(db, *COVERAGE[:-6], "--trials", 50, "--k", 50, "--seed", 3)
    out = _cli(db, *COVERAGE).output
    assert "reused 4 blocks" in out  # the first 50 trials of each configuration
    fresh = copy_of("fresh")
    _cli(fresh, *COVERAGE)
    with Store(db, read_only=True) as wh:
        grown = wh.sql("SELECT * FROM latest_ci_coverage WHERE trials = 60").drop(columns=VOLATILE)
    pd.testing.assert_frame_equal(grown.sort_values(["level", "method"]).reset_index(drop=True),
                                  _rows(fresh, "ci_coverage").sort_values(["level", "method"]).reset_index(drop=True))


def test_interrupted_simulation_resumes(copy_of, monkeypatch):
    reference = copy_of("reference")
    _cli(reference, *COVERAGE)
    db = copy_of("interrupted")
    calls = []
    real = simulation_runs._coverage_unit

    def flaky(context, item):
        calls.append(item[0])
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(context, item)

    monkeypatch.setattr(simulation_runs, "_coverage_unit", flaky)
    result = _cli(db, *COVERAGE, ok=False)
    assert result.exit_code != 0 and "run the same command again to resume" in result.output
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT status FROM analysis_runs")["status"].tolist() == ["interrupted"]
        assert len(wh.sql("SELECT * FROM ci_coverage_blocks")) == 2 * 2  # two units of two configurations
    calls.clear()
    out = _cli(db, *COVERAGE).output
    assert "reused 4 blocks" in out and len(calls) == 2
    pd.testing.assert_frame_equal(_rows(db, "ci_coverage"), _rows(reference, "ci_coverage"))


def test_normality_rows_equal_scipy_and_are_incremental(copy_of):
    db = copy_of("normality")
    _cli(db, "normality", "--dataset", "realsumm", "--measure", "rouge-1.recall", "--measure", "litepyramid.*")
    assert "up to date" in _cli(db, "normality", "--dataset", "realsumm", "--measure", "litepyramid.recall").output
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_normality").set_index(["measure", "level"])
        values = wh.matrix("realsumm", "rouge-1.recall")["rouge-1.recall"]
    assert len(rows) == 4
    expected = scipy.stats.shapiro(values.mean(axis=1))
    system = rows.loc[("rouge-1.recall", "system")]
    assert (system["statistic"], system["p_value"], system["n"]) == (expected.statistic, expected.pvalue, 24)
    per_input = [scipy.stats.shapiro(values[:, j]).pvalue for j in range(values.shape[1])]
    assert rows.loc[("rouge-1.recall", "summary"), "percent_significant"] == 100 * np.mean(np.array(per_input) < 0.05)
    listed = _cli(db, "results", "normality", "--dataset", "realsumm").output
    assert "rouge-1.recall" in listed


def test_clear_errors(copy_of):
    db = copy_of("errors")
    out = _cli(db, "simulate", "power", "--dataset", "summeval", "--human", "expert.relevance", ok=False).output
    assert "no summary texts" in out and "metaeval ingest summaries" in out
    out = _cli(db, "normality", "--dataset", "realsumm", "--measure", "rouge-9*", ok=False).output
    assert "matches no measure" in out and "rouge-1.recall" in out
    out = _cli(db, *COVERAGE[:4], "--human", "pyramid", "--metric", "qa-eval.f1", ok=False).output
    assert "no human judgment 'pyramid'" in out and "litepyramid.recall" in out
    out = _cli(db, *POWER[:6], "--proportions", "0,0.5", ok=False).output
    assert "proportions must be in (0, 1]" in out
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == 0


def test_power_under_each_system_inputs_protocol(tmp_path):
    """REALSumm with the human judgments of 40 of its 100 inputs, the summaries of all 100:
    judged = the power of the dataset holding only those 40 inputs' judgments and summaries;
    all = the summaries of every input scored, other rows (not reused); each recorded."""
    import json

    from tests.conftest import shared

    realsumm = shared("realsumm")
    judged_ids = {str(i) for i in range(40)}
    keep = lambda path: [line for line in path.read_text().splitlines()  # noqa: E731
                         if json.loads(line)["instance_id"] in judged_ids]
    (tmp_path / "pyramid.jsonl").write_text("\n".join(keep(realsumm / "pyramid.jsonl")) + "\n")
    (tmp_path / "summaries.jsonl").write_text("\n".join(keep(realsumm / "summaries.jsonl")) + "\n")
    db = tmp_path / "w.duckdb"
    for dataset, summaries in (("half", realsumm / "summaries.jsonl"), ("only", tmp_path / "summaries.jsonl")):
        _cli(db, "ingest", "sacrerouge", tmp_path / "pyramid.jsonl", "--dataset", dataset,
             "--human", "litepyramid.recall")
        _cli(db, "ingest", "summaries", summaries, "--dataset", dataset, "--allow-new")
    power = [*POWER[:2], "--human", "litepyramid.recall", *POWER[6:]]
    _cli(db, *power, "--dataset", "half", "--system-inputs", "judged")
    _cli(db, *power, "--dataset", "only")
    out = _cli(db, *power, "--dataset", "half").output
    assert "nothing computed" not in out
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM power ORDER BY result_id")
        runs = wh.sql("SELECT parameters FROM analysis_runs WHERE command = 'simulate power' ORDER BY run_id")
    assert [json.loads(p)["system_inputs"] for p in runs["parameters"]] == ["judged", "all", "all"]
    key = ["level", "coefficient", "method", "proportion"]
    judged, only, every = (rows[rows.run_id == r].sort_values(key).reset_index(drop=True)
                           for r in sorted(set(rows.run_id)))
    values = [*key, "trials", "rejections", "power", "n_systems", "n_inputs"]
    pd.testing.assert_frame_equal(judged[values], only[values])
    assert (judged.n_inputs == 40).all() and (every.n_inputs == 100).all()
    assert judged.fingerprint.iloc[0] == only.fingerprint.iloc[0] != every.fingerprint.iloc[0]
    assert [(json.loads(c)["system_inputs"], json.loads(c)["unjudged_inputs"]) for c in
            (judged.conventions[0], only.conventions[0], every.conventions[0])] == [
        ("judged", 60), ("all = judged (every input scored is judged)", 0), ("all", 60)]
    assert "up to date" in _cli(db, *power, "--dataset", "half", "--system-inputs", "judged").output
