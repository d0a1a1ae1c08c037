"""The planner's statistics (analyses/plan.py, issue 45 item 2, the systems question): the
noncentral-t power against a simulation, the minimum detectable effect and the sizes that reach a
power against the power they invert, the ratings' noise against a two-stage simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from metaeval.analyses import plan


def test_the_noncentral_t_power_equals_a_simulation_of_the_paired_t_test():
    rng = np.random.default_rng(0)
    trials, n, delta, sd, level = 20000, 15, 0.4, 1.0, 0.05 / 3
    d = rng.normal(delta, sd, size=(trials, n))
    p = stats.ttest_1samp(d, 0.0, axis=1).pvalue
    simulated = (p <= level).mean()
    closed = plan.t_power(delta, sd, n, level)
    assert closed == pytest.approx(simulated, abs=3 * math.sqrt(closed * (1 - closed) / trials))
    assert plan.t_power(0.0, sd, n, level) == pytest.approx(level, rel=1e-9)


def test_the_minimum_effect_and_the_inputs_invert_the_power():
    mde = plan.minimum_effect(1.3, 40, 0.01, 0.8)
    assert plan.t_power(mde, 1.3, 40, 0.01) == pytest.approx(0.8, abs=1e-8)
    n = plan.inputs_for_power(0.3, 1.0, 0.05, 0.8)
    assert plan.t_power(0.3, 1.0, n, 0.05) >= 0.8 > plan.t_power(0.3, 1.0, n - 1, 0.05)
    assert plan.inputs_for_power(0.0, 1.0, 0.05, 0.8) is None
    assert math.isnan(plan.t_power(0.3, 1.0, 1, 0.05)) and math.isnan(plan.minimum_effect(0.0, 10, 0.05, 0.8))


def test_the_interval_width_is_scipys_t_interval_at_that_sd():
    lo, hi = stats.t.interval(0.95, 24, loc=0.0, scale=2.0 / math.sqrt(25))
    assert plan.interval_width(2.0, 25, 0.05) == pytest.approx(hi - lo)


def test_more_ratings_narrow_the_differences_as_a_two_stage_simulation_says():
    """Items with a true difference (sd 0.6) rated by r raters with noise sd 1 on each system: the
    pilot at r0 = 3 predicts the variance of the differences at r = 1 and r = 9."""
    rng = np.random.default_rng(1)

    def study(n, r):
        item = rng.normal(0.2, 0.6, n)
        ratings_a = item[:, None] + rng.normal(0, 1, (n, r))
        ratings_b = rng.normal(0, 1, (n, r))
        return ratings_a, ratings_b

    a, b = study(4000, 3)
    within = np.r_[a.var(axis=1, ddof=1), b.var(axis=1, ddof=1)]
    mean, var_d, var_e, n0 = plan.pilot(a.mean(axis=1) - b.mean(axis=1), within)
    for r in (1, 9):
        a_r, b_r = study(4000, r)
        observed = np.var(a_r.mean(axis=1) - b_r.mean(axis=1), ddof=1)
        assert plan.difference_sd(var_d, var_e, 3, r) ** 2 == pytest.approx(observed, rel=0.08)


def test_the_resampled_power_agrees_with_the_closed_form_on_normal_pilots():
    rng = np.random.default_rng(2)
    pilot = rng.normal(0.0, 1.0, 400)
    sd = pilot.std(ddof=1)
    for n in (20, 40):
        closed = plan.t_power(0.5, sd, n, 0.05)
        resampled = plan.resampled_power(pilot, 0.5, n, 0.05, trials=4000, seed=0)
        assert resampled == pytest.approx(closed, abs=0.04)
    # more ratings than the pilot's: the differences shrink as the closed form says
    sd9 = plan.difference_sd(sd ** 2, 0.5, 3, 9)
    assert plan.resampled_power(pilot, 0.3, 30, 0.05, var_e=0.5, r0=3, r=9, trials=4000) == pytest.approx(
        plan.t_power(0.3, sd9, 30, 0.05), abs=0.04)
    same = [plan.resampled_power(pilot, 0.3, 30, 0.05, seed=5) for _ in range(2)]
    assert same[0] == same[1]


# --- the command -------------------------------------------------------------------------------------
def _pilot(db, tmp_path, n_inputs=30):
    """3 systems x n_inputs, 2 annotators per cell (long table)."""
    from tests.conftest import run_cli

    rng = np.random.default_rng(7)
    path = tmp_path / "pilot.csv"
    with path.open("w") as f:
        f.write("system,input,measure,value,annotator\n")
        for s, q in (("A", 0.5), ("B", 0.0), ("C", -0.2)):
            for j in range(n_inputs):
                t = q + rng.normal(0, 0.7)
                for k in ("x", "y"):
                    f.write(f"{s},i{j},rel,{t + rng.normal(0, 0.5):.4f},{k}\n")
    run_cli(db, "ingest", "table", path, "--dataset", "p", "--human", "rel")
    return path


def test_the_commands_rows_are_the_closed_forms_on_the_pilot(db, tmp_path):
    import json

    from tests.conftest import run_cli

    _pilot(db, tmp_path)
    out = run_cli(db, "plan", "--dataset", "p", "--human", "rel", "--system", "A", "--system", "B", "--inputs", "30",
                  "--inputs", "120", "--systems", "3", "--systems", "6", "--ratings", "2", "--ratings", "8",
                  "--format", "json").stdout
    rows = json.loads(out)
    assert len(rows) == 8
    # the pilot's statistics, again by hand from the same file
    import pandas as pd

    table = pd.read_csv(tmp_path / "pilot.csv")
    wide = table.pivot_table(index=["input"], columns="system", values="value", aggfunc="mean")
    d = (wide["A"] - wide["B"]).to_numpy()
    within = table[table.system.isin(["A", "B"])].groupby(["system", "input"])["value"].var(ddof=1).to_numpy()
    var_e = within.mean()
    for r in rows:
        m = r["n_systems"] * (r["n_systems"] - 1) // 2
        level = 0.05 / m
        sd = math.sqrt(d.var(ddof=1) - 2 * var_e / 2 + 2 * var_e / r["ratings"])
        assert r["level"] == pytest.approx(level) and r["family_size"] == m
        assert r["sd"] == pytest.approx(sd)
        assert r["effect"] == pytest.approx(d.mean())
        assert r["power"] == pytest.approx(plan.t_power(d.mean(), sd, r["n_inputs"], level))
        assert r["interval_width"] == pytest.approx(plan.interval_width(sd, r["n_inputs"], 0.05))
        assert plan.t_power(r["minimum_effect"], sd, r["n_inputs"], level) == pytest.approx(0.8, abs=1e-6)
        assert r["inputs_needed"] == plan.inputs_for_power(d.mean(), sd, level, 0.8)
        assert abs(r["power_resampled"] - r["power"]) < 0.1
    again = json.loads(run_cli(db, "plan", "--dataset", "p", "--human", "rel", "--system", "A", "--system", "B",
                               "--inputs", "30", "--inputs", "120", "--systems", "3", "--systems", "6",
                               "--ratings", "2", "--ratings", "8", "--format", "json").stdout)
    assert {r["run_id"] for r in again} == {r["run_id"] for r in rows}          # computed once
    given = json.loads(run_cli(db, "plan", "--dataset", "p", "--human", "rel", "--system", "A", "--system", "B",
                               "--inputs", "30", "--systems", "3", "--ratings", "2", "--effect", "0.25",
                               "--format", "json").stdout)
    assert given[0]["effect"] == 0.25 and given[0]["effect_given"]


@pytest.mark.parametrize("args, said", [
    (("--system", "A"), "--system"),
    (("--system", "A", "--system", "A"), "--system"),
    (("--system", "A", "--system", "Q"), "--system"),
    (("--system", "A", "--system", "B", "--power", "1.5"), "--power"),
    (("--system", "A", "--system", "B", "--power", "0"), "--power"),
    (("--system", "A", "--system", "B", "--inputs", "1"), "--inputs"),
    (("--system", "A", "--system", "B", "--effect", "0"), "--effect"),
])
def test_bad_plans_are_one_line_and_write_nothing(db, tmp_path, args, said):
    import duckdb

    from tests.conftest import run_cli

    _pilot(db, tmp_path, n_inputs=8)

    def runs():
        con = duckdb.connect(str(db), read_only=True)
        try:
            return con.execute("SELECT count(*) FROM analysis_runs").fetchone()[0]
        finally:
            con.close()

    before = runs()
    result = run_cli(db, "plan", "--dataset", "p", "--human", "rel", *args, ok=False)
    assert result.exit_code != 0 and "Traceback" not in result.output and said in result.output, result.output
    assert runs() == before


def test_the_power_curves_are_drawn_to_out_and_a_bad_file_is_refused(db, tmp_path):
    from tests.conftest import run_cli

    _pilot(db, tmp_path, n_inputs=12)
    args = ["plan", "--dataset", "p", "--human", "rel", "--system", "A", "--system", "B", "--systems", "3",
            "--ratings", "2", "--inputs", "12", "--inputs", "48", "--trials", "200"]
    run_cli(db, *args, "--out", tmp_path / "power.svg")
    svg = (tmp_path / "power.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and len(svg) > 1000
    bad = run_cli(db, *args, "--out", tmp_path / "power.txt", ok=False)
    assert bad.exit_code != 0 and "--out" in bad.output and not (tmp_path / "power.txt").exists()
    missing = run_cli(db, *args, "--out", tmp_path / "no" / "power.png", ok=False)
    assert missing.exit_code != 0 and "folder" in missing.output
