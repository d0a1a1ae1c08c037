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


# --- the ppi question: PPI++'s variance formula against simulated studies ----------------------------
def test_the_ppi_closed_form_is_the_coverage_width_and_power_of_simulated_ppi_intervals():
    """A population where the metric predicts the human difference (y = 0.8 f + noise): at the planned
    n labelled and N unlabelled inputs, 2000 simulated studies estimated by analyses.ppi.mean cover
    the true mean at 1 - alpha (within 0.02), their mean width is the closed form's, and the share
    rejecting 0 at the level is the closed form's power."""
    from metaeval.analyses import ppi

    rng = np.random.default_rng(11)
    delta, var_f, noise = 0.25, 1.0, 0.6
    var_y, cov = 0.8 ** 2 * var_f + noise ** 2, 0.8 * var_f
    n, N, alpha, level, trials = 60, 400, 0.05, 0.01, 2000
    se, lam = plan.ppi_se(var_y, var_f, cov, n, N)
    assert lam == pytest.approx(cov / ((1 + n / N) * var_f))
    covered, widths, rejected = 0, [], 0
    z = stats.norm.ppf(1 - level / 2)
    for _ in range(trials):
        f = rng.normal(0, 1, n + N)
        y = delta + 0.8 * f[:n] + rng.normal(0, noise, n)
        e = ppi.mean(y, f[:n], f[n:], alpha=alpha)
        covered += e.lower <= delta <= e.upper
        widths.append(e.upper - e.lower)
        rejected += abs(e.estimate) > z * e.se
    assert covered / trials >= 1 - alpha - 0.02
    assert np.mean(widths) == pytest.approx(2 * stats.norm.ppf(1 - alpha / 2) * se, rel=0.03)
    closed = plan.normal_power(delta, se, level)
    assert rejected / trials == pytest.approx(closed, abs=3 * math.sqrt(closed * (1 - closed) / trials) + 0.01)
    # the metric helps: fewer labels than the classical test needs for the same power
    needed = plan.labels_for_power(delta, var_y, var_f, cov, N, level, 0.8)
    assert plan.normal_power(delta, plan.ppi_se(var_y, var_f, cov, needed, N)[0], level) >= 0.8
    assert plan.normal_power(delta, plan.ppi_se(var_y, var_f, cov, needed - 1, N)[0], level) < 0.8
    classical = plan.ppi_se(var_y, var_f, cov, needed, N, lam=0.0)[0]
    assert classical == pytest.approx(math.sqrt(var_y / needed)) and plan.normal_power(delta, classical, level) < 0.8
    assert plan.normal_power(plan.normal_minimum_effect(se, level, 0.8), se, level) == pytest.approx(0.8, abs=1e-8)


def test_the_resampled_ppi_power_and_width_agree_with_the_closed_form_on_a_large_pilot():
    rng = np.random.default_rng(12)
    f = rng.normal(0, 1, 3000)
    y = 0.3 + 0.8 * f + rng.normal(0, 0.6, 3000)
    var_y, var_f, cov = plan.ppi_moments(y, f)
    se, _ = plan.ppi_se(var_y, var_f, cov, 80, 500)
    power, width = plan.resampled_ppi(y, f, f, 0.3, 80, 500, 0.01, 0.05, trials=1500, seed=0)
    assert power == pytest.approx(plan.normal_power(0.3, se, 0.01), abs=0.05)
    assert width == pytest.approx(2 * stats.norm.ppf(0.975) * se, rel=0.03)
    assert plan.resampled_ppi(y, f, f, 0.3, 80, 500, 0.01, 0.05, trials=50, seed=3) == \
        plan.resampled_ppi(y, f, f, 0.3, 80, 500, 0.01, 0.05, trials=50, seed=3)


# --- the metrics question: the vectorised Perm-Both power against a brute loop -----------------------
def test_the_metrics_power_is_a_brute_loop_over_draws_and_permutations():
    """The same draws of systems and inputs, the same swap masks (the resample stream of the seed),
    and a plain loop of scipy's Kendall on system means for each permuted pair: the same power."""
    from functools import partial

    from metaeval.analyses.stats import resampling
    from tests._stats_reference import level_corr, standardize

    rng = np.random.default_rng(3)
    Z = rng.normal(0, 1, (8, 12)) + np.arange(8)[:, None] * 0.3
    X = Z + rng.normal(0, 0.8, Z.shape)
    Y = Z + rng.normal(0, 1.6, Z.shape)
    k, trials, seed, level, sizes = 60, 12, 4, 0.1, (5, 7)
    got = plan.resampled_metric_power(X, Y, Z, *sizes, level, correlation_level="system", coefficient="kendall",
                                      alternative="two-sided", k=k, trials=trials, seed=seed)
    seeds = np.random.SeedSequence(seed).spawn(2)
    draws = np.random.default_rng(seeds[0])
    rejected = 0
    for t in range(trials):
        rows = draws.choice(8, sizes[0], replace=False)
        cols = draws.choice(12, sizes[1], replace=False)
        x, y, z = (A[np.ix_(rows, cols)] for A in (X, Y, Z))
        xs, ys = standardize(x), standardize(y)
        delta = level_corr(xs, z, "system", "kendall") - level_corr(ys, z, "system", "kendall")
        stream = resampling.ResampleStream(np.random.SeedSequence(int(seeds[1].generate_state(1)[0]) + t),
                                           partial(resampling.permutation_masks, n_systems=sizes[0],
                                                   n_inputs=sizes[1], method="both"))
        (mask,) = stream.take(0, k)
        extreme = 0
        for b in range(k):
            xp, yp = np.where(mask[b], ys, xs), np.where(mask[b], xs, ys)
            d = level_corr(xp, z, "system", "kendall") - level_corr(yp, z, "system", "kendall")
            extreme += abs(d) >= abs(delta) - 1e-12
        rejected += (1 + extreme) / (1 + k) <= level
    assert got == rejected / trials
    assert 0 < got < 1                       # the fixture tells something apart
    assert math.isnan(plan.resampled_metric_power(X, Y, Z, 9, 5, level, k=k, trials=2))


# --- the ppi and metrics questions as commands -----------------------------------------------------
def _pilot_with_metrics(db, tmp_path, n_inputs=24):
    """4 systems x n_inputs: the human rel (one rating), m1 (informative), m2 (noisier)."""
    from tests.conftest import run_cli

    rng = np.random.default_rng(8)
    path = tmp_path / "metrics.csv"
    with path.open("w") as f:
        f.write("system,input,measure,value\n")
        for s, q in (("A", 0.6), ("B", 0.0), ("C", -0.3), ("D", 0.2)):
            for j in range(n_inputs):
                t = q + rng.normal(0, 0.7)
                f.write(f"{s},i{j},rel,{t + rng.normal(0, 0.4):.4f}\n")
                f.write(f"{s},i{j},m1,{t + rng.normal(0, 0.3):.4f}\n")
                f.write(f"{s},i{j},m2,{t + rng.normal(0, 1.5):.4f}\n")
    run_cli(db, "ingest", "table", path, "--dataset", "q", "--human", "rel")
    return path


def test_the_ppi_questions_rows_are_ppis_variance_formula_on_the_pilot(db, tmp_path):
    import json

    import pandas as pd

    from tests.conftest import run_cli

    _pilot_with_metrics(db, tmp_path)
    args = ["plan", "--dataset", "q", "--human", "rel", "--question", "ppi", "--system", "A", "--system", "B",
            "--metric", "m1", "--inputs", "10", "--inputs", "40", "--systems", "4", "--unlabelled", "200",
            "--trials", "300"]
    rows = json.loads(run_cli(db, *args, "--format", "json").stdout)
    table = pd.read_csv(tmp_path / "metrics.csv").pivot_table(index="input", columns=["measure", "system"],
                                                              values="value")
    y = (table["rel"]["A"] - table["rel"]["B"]).to_numpy()
    f = (table["m1"]["A"] - table["m1"]["B"]).to_numpy()
    c = np.cov(y, f, ddof=1)
    assert len(rows) == 2
    for r in rows:
        n, N = r["n_inputs"], 200
        lam = min(1.0, max(0.0, c[0, 1] / ((1 + n / N) * c[1, 1])))
        se = math.sqrt(lam ** 2 * c[1, 1] / N + (c[0, 0] - 2 * lam * c[0, 1] + lam ** 2 * c[1, 1]) / n)
        assert r["unlabelled"] == 200 and r["lam"] == pytest.approx(lam) and r["sd"] == pytest.approx(se)
        assert r["effect"] == pytest.approx(y.mean()) and r["level"] == pytest.approx(0.05 / 6)
        z = stats.norm.ppf(1 - r["level"] / 2)
        assert r["power"] == pytest.approx(stats.norm.cdf(y.mean() / se - z) + stats.norm.cdf(-y.mean() / se - z))
        assert r["interval_width"] == pytest.approx(2 * stats.norm.ppf(0.975) * se)
        assert r["ratings"] is None and 0 <= r["power_resampled"] <= 1 and r["width_resampled"] > 0
    text = run_cli(db, *args).stdout
    assert "labels for power" in text and "uniform random sample" in text and "reaching power 0.8" in text
    again = json.loads(run_cli(db, *args, "--format", "json").stdout)
    assert {r["run_id"] for r in again} == {r["run_id"] for r in rows}          # computed once


def test_the_metrics_questions_rows_are_the_resampled_perm_both_power(db, tmp_path):
    import json

    from metaeval.analyses.stats import hypothesis
    from tests.conftest import run_cli

    _pilot_with_metrics(db, tmp_path)
    args = ["plan", "--dataset", "q", "--human", "rel", "--question", "metrics", "--metric", "m1", "--metric", "m2",
            "--inputs", "6", "--inputs", "24", "--systems", "3", "--systems", "4", "--trials", "20", "--k", "50"]
    rows = json.loads(run_cli(db, *args, "--format", "json").stdout)
    assert len(rows) == 4 and {r["level"] for r in rows} == {0.05}
    import pandas as pd

    table = pd.read_csv(tmp_path / "metrics.csv").pivot_table(index="system", columns=["measure", "input"],
                                                              values="value")
    order = sorted(set(table.columns.get_level_values(1)))          # the warehouse orders inputs by name
    X, Y, Z = (table[m][order].to_numpy() for m in ("m1", "m2", "rel"))
    for r in rows:
        assert r["power"] is None and r["minimum_effect"] is None
        expected = plan.resampled_metric_power(X, Y, Z, r["n_systems"], r["n_inputs"], 0.05, k=50, trials=20, seed=0)
        assert r["power_resampled"] == pytest.approx(expected)
    pilot = hypothesis.permutation_test(X, Y, Z, "system", "kendall", "both", 50, "two-sided", seed=0)
    assert rows[0]["effect"] == pytest.approx(pilot.delta)
    assert "reaching power 0.8 (resampled)" in run_cli(db, *args).stdout
    run_cli(db, *args, "--out", tmp_path / "metrics.svg")
    assert "<svg" in (tmp_path / "metrics.svg").read_text()


@pytest.mark.parametrize("args, said", [
    (("--question", "ppi", "--system", "A", "--system", "B", "--metric", "m1", "--power", "1"), "--power"),
    (("--question", "ppi", "--system", "A", "--system", "B"), "--metric"),
    (("--question", "ppi", "--system", "A", "--system", "B", "--metric", "m1", "--ratings", "2"), "--ratings"),
    (("--question", "ppi", "--system", "A", "--system", "B", "--metric", "m1", "--unlabelled", "0"), "--unlabelled"),
    (("--question", "ppi", "--system", "A", "--system", "B", "--metric", "rel"), "--metric"),
    (("--question", "metrics", "--metric", "m1", "--power", "-0.2"), "--power"),
    (("--question", "metrics", "--metric", "m1"), "--metric"),
    (("--question", "metrics", "--metric", "m1", "--metric", "m2", "--system", "A"), "--system"),
    (("--question", "metrics", "--metric", "m1", "--metric", "m2", "--inputs", "25"), "--inputs"),
    (("--question", "metrics", "--metric", "m1", "--metric", "m2", "--k", "10", "--alpha", "0.01"), "--k"),
    (("--question", "metrics", "--metric", "m1", "--metric", "m2", "--effect", "0.2"), "--effect"),
    (("--question", "systems", "--system", "A", "--system", "B", "--metric", "m1"), "--metric"),
    # the metrics question's test settings given to another question: refused, not ignored
    (("--question", "systems", "--system", "A", "--system", "B", "--k", "500"), "--k"),
    (("--question", "ppi", "--system", "A", "--system", "B", "--metric", "m1", "--level", "summary"), "--level"),
    (("--question", "systems", "--system", "A", "--system", "B", "--coefficient", "pearson"), "--coefficient"),
])
def test_bad_ppi_and_metrics_plans_are_one_line_and_write_nothing(db, tmp_path, args, said):
    import duckdb

    from tests.conftest import run_cli

    _pilot_with_metrics(db, tmp_path, n_inputs=8)

    def runs():
        con = duckdb.connect(str(db), read_only=True)
        try:
            return con.execute("SELECT count(*) FROM analysis_runs").fetchone()[0]
        finally:
            con.close()

    before = runs()
    result = run_cli(db, "plan", "--dataset", "q", "--human", "rel", *args, ok=False)
    errors = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert result.exit_code != 0 and "Traceback" not in result.output, result.output
    assert len(errors) == 1 and said in errors[0], result.output
    assert runs() == before
