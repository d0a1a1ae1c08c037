"""Prediction-powered inference (analyses/ppi.py, runs/studies/ppi.py, ``metaeval ppi``): PPI++'s mean and
lambda against loops written from the paper's formulas, the authors' implementation ppi_py run
beside ours (tests/anchors/ppi_py.json, written by tests/anchors/ppi_py_fixtures.py), the
interval's coverage over simulated pilots, and the command's refusals."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from metaeval.analyses import ppi as stat
from tests.conftest import run_cli

FIXTURES = json.loads((Path(__file__).parent / "anchors" / "ppi_py.json").read_text())
ALPHA = FIXTURES["alpha"]


def _lam(key: str):
    return None if key == "None" else float(key)


# --- the statistics ----------------------------------------------------------------------------------
def test_mean_and_lambda_equal_a_loop_over_the_formulas():
    rng = np.random.default_rng(3)
    y, yhat, yhat_u = rng.normal(size=15), rng.normal(size=15), rng.normal(size=60)
    yhat = 0.7 * y + 0.5 * yhat
    n, N = len(y), len(yhat_u)
    my, mh = sum(y) / n, sum(yhat) / n
    cov = sum((y[i] - my) * (yhat[i] - mh) for i in range(n)) / n
    pooled = list(yhat) + list(yhat_u)
    mp = sum(pooled) / (n + N)
    var = sum((v - mp) ** 2 for v in pooled) / (n + N - 1)
    lam = min(1.0, max(0.0, cov / ((1 + n / N) * var)))
    theta = lam * sum(yhat_u) / N + sum(y[i] - lam * yhat[i] for i in range(n)) / n
    r = [y[i] - lam * yhat[i] for i in range(n)]
    mr, mu = sum(r) / n, lam * sum(yhat_u) / N
    se = math.sqrt(sum((lam * v - mu) ** 2 for v in yhat_u) / N / N + sum((v - mr) ** 2 for v in r) / n / n)
    z = stats.norm.ppf(0.95)
    e = stat.mean(y, yhat, yhat_u, alpha=0.1)
    assert 0 < lam < 1 and e.lam == pytest.approx(lam, abs=1e-12) == stat.lam_hat(y, yhat, yhat_u)
    assert e.estimate == pytest.approx(theta, abs=1e-12) and e.se == pytest.approx(se, abs=1e-12)
    assert (e.lower, e.upper) == (pytest.approx(theta - z * se, abs=1e-12), pytest.approx(theta + z * se, abs=1e-12))
    csd = math.sqrt(sum((v - my) ** 2 for v in y) / n / n)
    assert e.classical == pytest.approx(my) and e.classical_se == pytest.approx(csd)
    assert e.effective_labels == pytest.approx(n * (csd / se) ** 2)
    assert (e.n, e.N) == (n, N)


def test_lambda_zero_is_the_classical_estimate_and_one_plain_ppi():
    rng = np.random.default_rng(4)
    y, yhat, yhat_u = rng.normal(size=20), rng.normal(size=20), rng.normal(size=50)
    zero, one = stat.mean(y, yhat, yhat_u, lam=0), stat.mean(y, yhat, yhat_u, lam=1)
    assert (zero.estimate, zero.lower, zero.upper) == (zero.classical, zero.classical_lower, zero.classical_upper)
    assert zero.effective_labels == pytest.approx(20)
    assert one.estimate == pytest.approx(yhat_u.mean() + (y - yhat).mean())
    assert one.se == pytest.approx(math.sqrt(yhat_u.var() / 50 + (y - yhat).var() / 20))


def test_undefined_is_nan_not_a_number():
    e = stat.mean([1.0], [1.0], [0.5, 0.7])                       # one labelled cell
    assert math.isnan(e.estimate) and math.isnan(e.lower) and math.isnan(e.effective_labels)
    flat = stat.mean([2.0, 2.0, 2.0], [1.0, 1.0, 1.0], [1.0, 1.0])    # nothing varies: no interval
    assert flat.estimate == 2.0 and flat.lam == 0.0 and math.isnan(flat.lower) and math.isnan(flat.pvalue)
    with pytest.raises(ValueError):
        stat.mean([1.0, 2.0], [1.0, 2.0], [1.0], lam=1.5)


@pytest.mark.parametrize("key", list(FIXTURES["mean"]["results"]))
def test_mean_equals_ppi_py(key):
    f = FIXTURES["mean"]
    e = stat.mean(f["y"], f["yhat"], f["yhat_u"], lam=_lam(key), alpha=ALPHA)
    want = f["results"][key]
    assert (e.estimate, e.lower, e.upper) == (pytest.approx(want["estimate"], abs=1e-6),
                                              pytest.approx(want["lower"], abs=1e-6),
                                              pytest.approx(want["upper"], abs=1e-6))


@pytest.mark.parametrize("key", list(FIXTURES["votes"]["bradley_terry"]))
def test_bradley_terry_equals_ppi_py(key):
    votes = _vote_items()
    lab, unl = ~np.isnan(votes["human"]), np.isnan(votes["human"])
    X = stat.design(votes["b"], votes["a"], 4)
    fit = stat.bradley_terry(X[lab], votes["human"][lab], votes["judged"][lab], X[unl], votes["judged"][unl],
                             lam=_lam(key), alpha=ALPHA)
    want = FIXTURES["votes"]["bradley_terry"][key]
    assert fit.converged
    for ours, theirs in ((fit.estimate, want["estimate"]), (fit.lower, want["lower"]), (fit.upper, want["upper"])):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4)


def test_bradley_terry_of_a_system_that_never_wins_is_no_fit(recwarn):
    """Quasi-separated votes (system C loses every comparison, to humans and judge alike): the
    likelihood has no finite maximum, so Newton's iterate (where it stopped) is no estimate: every
    score NaN, ``converged`` False, and no RuntimeWarning from a negative variance's square root."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, 300)
    b = (a + rng.integers(1, 3, 300)) % 3
    y = np.where(a == 2, 0.0, np.where(b == 2, 1.0, (rng.random(300) < 0.5).astype(float)))   # 1: a preferred
    judged = np.clip(y + rng.normal(scale=0.2, size=300), 0, 1)
    X = stat.design(a, b, 3)
    lab = np.arange(300) < 60
    fit = stat.bradley_terry(X[lab], y[lab], judged[lab], X[~lab], judged[~lab])
    assert not fit.converged and np.isnan(fit.estimate).all() and np.isnan(fit.se).all()
    assert not [w for w in recwarn.list if issubclass(w.category, RuntimeWarning)]
    # the same votes with C winning a few: a fit, finite everywhere
    y[np.flatnonzero(a == 2)[:15]] = 1.0
    fit = stat.bradley_terry(X[lab], y[lab], judged[lab], X[~lab], judged[~lab])
    assert fit.converged and np.isfinite(fit.se).all()


def _vote_items():
    """The fixture's items (one human vote, or none, and one judge verdict each)."""
    index = {s: i for i, s in enumerate("ABCD")}
    items = {}
    for v in FIXTURES["votes"]["rows"]:
        key = (v["input"], v["system_a"], v["system_b"])
        value = {"a": 0.0, "b": 1.0, "tie": 0.5}[v["winner"]]
        items.setdefault(key, {})["judged" if v["kind"] == "automatic" else "human"] = value
    keys = sorted(items)
    return {"a": np.array([index[k[1]] for k in keys]), "b": np.array([index[k[2]] for k in keys]),
            "human": np.array([items[k].get("human", np.nan) for k in keys]),
            "judged": np.array([items[k]["judged"] for k in keys])}


def test_the_interval_covers_over_simulated_pilots_and_saves_labels():
    """2000 pilots (n = 50 labelled, N = 500 unlabelled, a metric correlated 0.8 with the human
    score): the 90% PPI++ interval covers the true mean at least 1 - alpha - 0.02 of the time, and
    is worth more human labels than it has."""
    rng = np.random.default_rng(0)
    trials, n, N, alpha, truth = 2000, 50, 500, 0.1, 3.0
    latent = rng.normal(size=(trials, n + N))
    human = truth + latent + rng.normal(0, 0.5, (trials, n + N))
    metric = 0.2 + 0.5 * latent + rng.normal(0, 0.3, (trials, n + N))
    covered, effective = np.zeros(trials, bool), np.zeros(trials)
    for t in range(trials):
        e = stat.mean(human[t, :n], metric[t, :n], metric[t, n:], alpha=alpha)
        covered[t] = e.lower <= truth <= e.upper
        effective[t] = e.effective_labels
    assert covered.mean() >= 1 - alpha - 0.02
    assert np.median(effective) > n and (effective > n).mean() > 0.9


# --- the command -------------------------------------------------------------------------------------
def _cells_warehouse(db: Path, tmp_path: Path) -> None:
    path = tmp_path / "cells.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "input", "metric", "human"])
        for r in FIXTURES["cells"]["rows"]:
            w.writerow([r["system"], r["input"], repr(r["metric"]), "" if r["human"] is None else repr(r["human"])])
    run_cli(db, "ingest", "table", path, "--dataset", "toy", "--human", "human")


def _votes_warehouse(db: Path, tmp_path: Path) -> None:
    path = tmp_path / "votes.csv"
    rows = FIXTURES["votes"]["rows"]
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    run_cli(db, "ingest", "preferences", path, "--dataset", "arena")


def _rows(db, *args):
    result = run_cli(db, "ppi", *args, "--format", "json")
    return json.loads(result.stdout)


@pytest.mark.parametrize("key", ["None", "1.0", "0.0", "0.4"])
def test_the_commands_means_and_differences_equal_ppi_py(db, tmp_path, key):
    _cells_warehouse(db, tmp_path)
    lam = [] if key == "None" else ["--lam", key]
    rows = _rows(db, "--dataset", "toy", "--human", "human", "--metric", "metric", "--alpha", str(ALPHA), *lam)
    means = {r["system"]: r for r in rows if r["estimand"] == "mean"}
    diffs = {f"{r['system']}-{r['other']}": r for r in rows if r["estimand"] == "difference"}
    assert set(means) == set(FIXTURES["cells"]["means"]) and set(diffs) == set(FIXTURES["cells"]["differences"])
    for got, want in [*((means[s], FIXTURES["cells"]["means"][s][key]) for s in means),
                      *((diffs[d], FIXTURES["cells"]["differences"][d][key]) for d in diffs)]:
        for column in ("estimate", "lower", "upper"):
            assert got[column] == pytest.approx(want[column], abs=1e-6), (got["system"], got["other"], column)
    assert means["S1"]["n_labelled"] == 13 and diffs["S0-S1"]["n_labelled"] == 12
    assert diffs["S0-S1"]["n_unlabelled"] == 28


@pytest.mark.parametrize("key", ["None", "1.0", "0.0"])
def test_the_commands_win_rates_and_bradley_terry_equal_ppi_py(db, tmp_path, key):
    _votes_warehouse(db, tmp_path)
    lam = [] if key == "None" else ["--lam", key]
    rows = _rows(db, "--dataset", "arena", "--judge", "robot", "--baseline", "A", "--alpha", str(ALPHA), *lam)
    assert {r["system"] for r in rows} == {"B", "C", "D"}
    for r in rows:
        want = FIXTURES["votes"]["winrates"][r["system"]][key]
        for column in ("estimate", "lower", "upper"):
            assert r[column] == pytest.approx(want[column], abs=1e-6)
    bt = _rows(db, "--dataset", "arena", "--judge", "robot", "--alpha", str(ALPHA), *lam)
    want = FIXTURES["votes"]["bradley_terry"][key]
    scores = {r["system"]: r for r in bt if r["estimand"] == "bradley-terry"}
    assert scores["A"]["estimate"] == 0.0 and scores["A"]["lower"] is None      # the reference
    for j, s in enumerate("BCD"):
        for column in ("estimate", "lower", "upper"):
            assert scores[s][column] == pytest.approx(want[column][j], rel=1e-4)


def test_a_labelled_share_is_a_seeded_uniform_draw_of_inputs(db, tmp_path):
    _cells_warehouse(db, tmp_path)
    args = ["--dataset", "toy", "--human", "human", "--metric", "metric", "--labelled-share", "0.25"]
    first = _rows(db, *args)
    again = _rows(db, *args, "--force")
    other = _rows(db, *args, "--label-seed", "7")
    means = [r for r in first if r["estimand"] == "mean"]
    # 10 of the 40 inputs drawn; only those of inputs 0-11 (12 for S1) have human labels to keep
    assert all(r["n_labelled"] + r["n_unlabelled"] == 40 and r["n_labelled"] <= 10 for r in means)
    assert [r["estimate"] for r in first] == [r["estimate"] for r in again]
    assert [r["estimate"] for r in first] != [r["estimate"] for r in other]


def test_the_output_says_the_assumption_and_a_useless_metric(db, tmp_path):
    rng = np.random.default_rng(1)
    path = tmp_path / "noise.csv"
    with path.open("w") as f:
        f.write("system,input,noise,human\n")
        for s in ("X", "Y"):
            for j in range(60):
                h = "" if j >= 20 else f"{rng.normal():.4f}"
                f.write(f"{s},i{j},{rng.normal():.4f},{h}\n")
    run_cli(db, "ingest", "table", path, "--dataset", "noise", "--human", "human")
    out = run_cli(db, "ppi", "--dataset", "noise", "--human", "human", "--metric", "noise").stdout
    assert "uniform random sample" in out
    rows = _rows(db, "--dataset", "noise", "--human", "human", "--metric", "noise")
    if all(r["lam"] <= stat.LAM_NEGLIGIBLE for r in rows):
        assert "does not help: lambda" in out
    else:
        assert "does not help on" in out


def test_differences_reach_the_conclusion_layer(db, tmp_path):
    _cells_warehouse(db, tmp_path)
    rows = _rows(db, "--dataset", "toy", "--human", "human", "--metric", "metric")
    diffs = [r for r in rows if r["estimand"] == "difference"]
    p = np.array([r["p_value"] for r in diffs])
    holm = np.minimum(1, np.maximum.accumulate((len(p) - np.arange(len(p))) * np.sort(p)))[np.argsort(np.argsort(p))]
    for r, adj in zip(diffs, holm):
        assert r["p_adjusted"] == pytest.approx(adj)
        assert r["significant"] == (adj <= 0.05)
        e = (r["estimate"] / ((r["upper"] - r["lower"]) / (2 * stats.norm.ppf(0.975))))
        assert r["p_value"] == pytest.approx(2 * stats.norm.sf(abs(e)))
    assert all(r["cluster"] is not None for r in rows if r["estimand"] == "mean")


def test_the_same_command_computes_nothing_again(db, tmp_path):
    _cells_warehouse(db, tmp_path)
    args = ("--dataset", "toy", "--human", "human", "--metric", "metric")
    first = _rows(db, *args)
    second = _rows(db, *args)
    assert {r["run_id"] for r in first} == {r["run_id"] for r in second}


def _runs(db) -> int:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        n = con.execute("SELECT count(*) FROM analysis_runs").fetchone()[0]
        return n + (con.execute("SELECT count(*) FROM ppi_estimates").fetchone()[0] if "ppi_estimates" in tables
                    else 0)
    finally:
        con.close()


@pytest.mark.parametrize("args, said", [
    (("--human", "human", "--metric", "metric", "--lam", "1.5"), "--lam"),
    (("--human", "human", "--metric", "metric", "--labelled-share", "1"), "--labelled-share"),
    (("--human", "human"), "--metric"),
    (("--human", "human", "--metric", "human"), "--metric"),
    (("--human", "human", "--metric", "metric", "--judge", "robot"), "--judge"),
    (("--baseline", "S0",), "--baseline"),
    (("--human", "nothing", "--metric", "metric"), "nothing"),
])
def test_bad_options_are_one_line_and_write_nothing(db, tmp_path, args, said):
    _cells_warehouse(db, tmp_path)
    before = _runs(db)
    result = run_cli(db, "ppi", "--dataset", "toy", *args, ok=False)
    assert result.exit_code != 0 and "Traceback" not in result.output
    lines = [line for line in result.output.strip().splitlines() if line.strip()]
    assert said in result.output and (len(lines) == 1 or lines[-1].startswith("Error")), result.output
    assert _runs(db) == before


def test_no_labelled_cell_and_every_cell_labelled_are_refused(db, tmp_path):
    path = tmp_path / "t.csv"
    with path.open("w") as f:
        f.write("system,input,metric,human,judged\n")
        for s in ("X", "Y"):
            for j in range(10):
                f.write(f"{s},i{j},{j * 0.1 + (s == 'X')},{'' if j < 5 else j},{j}\n")
    run_cli(db, "ingest", "table", path, "--dataset", "t", "--human", "human", "--human", "judged")
    before = _runs(db)
    nothing = run_cli(db, "ppi", "--dataset", "t", "--human", "judged", "--metric", "metric", ok=False)
    assert nothing.exit_code != 0 and "nothing to predict" in nothing.output and "classical" in nothing.output
    assert len(nothing.output.strip().splitlines()) == 1
    # the human measure only where the metric is not: no labelled cell
    path2 = tmp_path / "u.csv"
    with path2.open("w") as f:
        f.write("system,input,metric2,human2\n")
        for s in ("X", "Y"):
            for j in range(10):
                f.write(f"{s},i{j},{j if j < 5 else ''},{'' if j < 5 else j}\n")
    run_cli(db, "ingest", "table", path2, "--dataset", "u", "--human", "human2")
    before = _runs(db)
    none = run_cli(db, "ppi", "--dataset", "u", "--human", "human2", "--metric", "metric2", ok=False)
    assert none.exit_code != 0 and "no cell has both" in none.output
    assert len(none.output.strip().splitlines()) == 1
    assert _runs(db) == before


def test_win_rate_verdicts_and_bradley_terry_groups_come_from_the_conclusion_layer(db, tmp_path):
    _votes_warehouse(db, tmp_path)
    rates = _rows(db, "--dataset", "arena", "--judge", "robot", "--baseline", "A")
    z = stats.norm.ppf(0.975)
    p = np.array([2 * stats.norm.sf(abs(r["estimate"] - 0.5) / ((r["upper"] - r["lower"]) / (2 * z))) for r in rates])
    order = np.argsort(p)
    holm = np.empty(3)
    holm[order] = np.minimum(1, np.maximum.accumulate((3 - np.arange(3)) * p[order]))
    for r, want_p, adj in zip(rates, p, holm):
        assert r["p_value"] == pytest.approx(want_p) and r["p_adjusted"] == pytest.approx(adj)
        assert r["significant"] == (adj <= 0.05)
    bt = _rows(db, "--dataset", "arena", "--judge", "robot")
    scores = {r["system"]: r for r in bt if r["estimand"] == "bradley-terry"}
    pairs = {(r["system"], r["other"]): r for r in bt if r["estimand"] == "bradley-terry-difference"}
    assert len(pairs) == 6
    for s in "BCD":          # against the reference: minus the score, with the score's standard error
        assert pairs[("A", s)]["estimate"] == pytest.approx(-scores[s]["estimate"])
        assert pairs[("A", s)]["se"] == pytest.approx(scores[s]["se"])
    for (a, b), r in pairs.items():
        if a != "A":
            assert r["estimate"] == pytest.approx(scores[a]["estimate"] - scores[b]["estimate"])
        assert r["p_value"] == pytest.approx(2 * stats.norm.sf(abs(r["estimate"]) / r["se"]))
    beaten = {b if r["estimate"] > 0 else a for (a, b), r in pairs.items() if r["significant"]}
    top = {s for s, r in scores.items() if r["cluster"] == 1}
    assert top and not top & beaten and all(r["cluster"] is not None for r in scores.values())


def test_a_lower_is_better_human_measure_keeps_its_scale_and_its_groups_the_right_way(db, tmp_path):
    """An error count (lower is better) predicted by a higher-is-better metric: the estimates are in
    the errors' own scale, the metric is turned to help (lambda > 0), and the system with the most
    errors is the one in the last group."""
    rng = np.random.default_rng(0)
    path = tmp_path / "t.csv"
    with path.open("w") as f:
        f.write("system,input,err,metric\n")
        for s, q in (("X", 0.0), ("Y", 1.0), ("Z", 2.0)):
            for j in range(80):
                t = q + rng.normal()
                f.write(f"{s},i{j},{'' if j >= 30 else f'{5 - t + rng.normal(0, .3):.4f}'},{t + rng.normal(0, .3):.4f}\n")
    run_cli(db, "ingest", "table", path, "--dataset", "t", "--human", "err", "--lower", "err")
    rows = _rows(db, "--dataset", "t", "--human", "err", "--metric", "metric")
    means = {r["system"]: r for r in rows if r["estimand"] == "mean"}
    assert means["X"]["estimate"] > means["Y"]["estimate"] > means["Z"]["estimate"] > 0
    assert all(r["lam"] > 0.3 and r["effective_labels"] > r["n_labelled"] for r in means.values())
    assert [means[s]["cluster"] for s in "XYZ"] == [3, 2, 1]
    text = run_cli(db, "ppi", "--dataset", "t", "--human", "err", "--metric", "metric").stdout
    assert "worse" in text and "better" not in text            # X - Y, X - Z, Y - Z: more errors
