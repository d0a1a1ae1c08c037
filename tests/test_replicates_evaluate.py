"""evaluate --replicates resample (issue 45 item 4): the intervals of an evaluation draw each cell's
runs of a metric again inside every bootstrap resample (analyses/score_runs.py, as ci's), checked
against a brute-force loop with the same seed streams; with one run per cell its rows are the
mean's bit for bit; correlate and compare read the means (their rows and fingerprints unchanged);
the refusals are one line with nothing written; evaluate --preferences FILE --replicate N stores
the file's rows as that run."""

from __future__ import annotations

import json
from functools import partial

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from metaeval.errors import WarehouseError
from metaeval.ingest import table
from metaeval.runs import Warehouse
from tests.conftest import run_cli

SYSTEMS = [f"s{k}" for k in range(6)]
INPUTS = [f"i{k}" for k in range(7)]
COLUMNS = ["metric", "level", "coefficient", "correlation", "lower", "upper", "rank", "beats", "beaten_by"]


def _warehouse(db, tmp_path, most: int = 3, seed: int = 0) -> dict:
    """Metric m with 1..most runs per cell, metric n run once, human h: m's runs by cell."""
    rng = np.random.default_rng(seed)
    rows, runs = [], {}
    for k, s in enumerate(SYSTEMS):
        for i in INPUTS:
            for r in range(int(rng.integers(1, most + 1))):
                v = float(np.round(rng.normal(k * 0.5, 1), 6))
                rows.append((s, i, "m", v, r))
                runs.setdefault((SYSTEMS.index(s), INPUTS.index(i)), []).append(v)
            rows.append((s, i, "n", float(np.round(rng.normal(k * 0.2, 1), 6)), 0))
            rows.append((s, i, "h", float(np.round(rng.normal(k * 0.4, 1), 6)), None))
    frame = pd.DataFrame(rows, columns=["system", "input", "measure", "value", "replicate"])
    scores, human = frame[frame["measure"] != "h"].astype({"replicate": int}), frame[frame["measure"] == "h"].drop(columns="replicate")
    scores.to_csv(tmp_path / "m.csv", index=False)
    human.to_csv(tmp_path / "h.csv", index=False)
    with Warehouse(db) as wh:
        table.ingest(wh, "d", [str(tmp_path / "m.csv"), str(tmp_path / "h.csv")], human=["h"])
    return {"runs": runs, "Z": human.pivot(index="system", columns="input", values="value").loc[SYSTEMS, INPUTS]
            .to_numpy()}


def _brute_force(runs: dict, Z: np.ndarray, k: int, seed: int) -> tuple[float, float]:
    """The system-level Pearson interval, two stages by loops: systems and inputs drawn as
    bootstrap_ci draws them, then every cell's runs drawn again (score_runs' stream)."""
    from metaeval.analyses import score_runs
    from metaeval.analyses.stats import resampling
    from metaeval.analyses.stats.validation import seed_iv

    K = max(len(v) for v in runs.values())
    seq = seed_iv(seed)
    rows_b, cols_b = resampling.ResampleStream(seq, partial(resampling.bootstrap_indices, n_systems=len(SYSTEMS),
                                                            n_inputs=len(INPUTS), method="both")).take(0, k)
    (u,) = resampling.ResampleStream(np.random.SeedSequence(seq.entropy, spawn_key=(score_runs.RUN_STREAM,)),
                                     lambda rng, size: (rng.random((size, len(SYSTEMS), len(INPUTS), K)),)).take(0, k)
    samples = []
    for b in range(k):
        Xb = np.empty(Z.shape)
        for (a, c), vs in runs.items():
            Xb[a, c] = sum(vs[int(u[b, a, c, slot] * len(vs))] for slot in range(len(vs))) / len(vs)
        x, z = Xb[rows_b[b]][:, cols_b[b]].mean(axis=1), Z[rows_b[b]][:, cols_b[b]].mean(axis=1)
        samples.append(np.nan if np.ptp(x) == 0 or np.ptp(z) == 0 else sps.pearsonr(x, z)[0])
    valid = np.array([s for s in samples if s == s])
    return tuple(np.percentile(valid, [2.5, 97.5]))


def test_evaluate_intervals_against_a_brute_force_loop(db, tmp_path):
    data = _warehouse(db, tmp_path)
    with Warehouse(db) as wh:
        mean = wh.evaluate("d", "h", metrics=["m"], k=50, seed=4)
        ev = wh.evaluate("d", "h", metrics=["m"], k=50, seed=4, replicates="resample")
        params = wh.sql("SELECT command, parameters FROM analysis_runs ORDER BY run_id")
    row = ev.table.set_index(["metric", "level", "coefficient"]).loc[("m", "system", "pearson")]
    lower, upper = _brute_force(data["runs"], data["Z"], 50, 4)
    assert (row["lower"], row["upper"]) == pytest.approx((lower, upper), abs=1e-12)
    assert ev.settings["replicates"] == "resample" and "replicates" not in mean.settings
    assert all("|reps:resample|" in s for s in ev.table["signature"])
    assert not any("reps:" in s for s in mean.table["signature"])
    said = [json.loads(p) for c, p in zip(params["command"], params["parameters"]) if c == "ci"]
    assert "replicates" not in said[0] and said[-1]["replicates"] == "resample"
    # the correlations and the tests read the means: reused as they were, not computed again
    assert ev.outcomes["correlate"].summary.up_to_date and ev.outcomes["compare"].summary.up_to_date
    assert not ev.outcomes["ci"].summary.up_to_date
    pd.testing.assert_frame_equal(mean.table[["correlation", "beats", "beaten_by"]],
                                  ev.table[["correlation", "beats", "beaten_by"]])
    # the same intervals as ci --replicates resample on the same settings
    with Warehouse(db) as wh:
        ci = wh.ci("d", "h", metrics=["m"], levels=["system"], coefficients=["pearson"], k=50, seed=4,
                   replicates="resample")
    assert (ci["lower"].iloc[0], ci["upper"].iloc[0]) == (row["lower"], row["upper"])


def test_one_run_per_cell_gives_the_mean_rows_bit_for_bit(db, tmp_path):
    _warehouse(db, tmp_path, most=1)
    with Warehouse(db) as wh:
        mean = wh.evaluate("d", "h", metrics=["m"], k=40, seed=1)
        ev = wh.evaluate("d", "h", metrics=["m"], k=40, seed=1, replicates="resample")
    pd.testing.assert_frame_equal(mean.table[COLUMNS], ev.table[COLUMNS])
    pd.testing.assert_frame_equal(mean.tests, ev.tests)


@pytest.mark.parametrize("extra, said", [({"ci_method": "fisher"}, "bootstrap"),
                                         ({"aggregate": "median", "levels": ["system"]}, "aggregate"),
                                         ({"control": "system"}, "partial"),
                                         ({"replicates": "sometimes"}, "must be one of")])
def test_refusals_are_one_line_and_write_nothing(db, tmp_path, extra, said):
    _warehouse(db, tmp_path)
    with Warehouse(db) as wh:
        with pytest.raises(WarehouseError) as exc:
            wh.evaluate("d", "h", metrics=["m"], k=40, **{"replicates": "resample", **extra})
        assert said in str(exc.value) and "\n" not in str(exc.value)
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == 0


def test_unjudged_inputs_under_all_are_refused_before_any_write(db, tmp_path):
    _warehouse(db, tmp_path)
    extra = pd.DataFrame([(s, "extra", "m", 0.5, 0) for s in SYSTEMS] + [(s, "extra", "n", 0.1, 0) for s in SYSTEMS],
                         columns=["system", "input", "measure", "value", "replicate"])
    extra.to_csv(tmp_path / "extra.csv", index=False)
    with Warehouse(db) as wh:
        table.ingest(wh, "d", [str(tmp_path / "extra.csv")], allow_new=True)
        with pytest.raises(WarehouseError) as exc:
            wh.evaluate("d", "h", metrics=["m"], k=40, replicates="resample")
        assert "system_inputs" in str(exc.value) and "\n" not in str(exc.value)
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == 0
        ev = wh.evaluate("d", "h", metrics=["m"], k=40, replicates="resample", system_inputs="judged")
    assert ev.table["lower"].notna().all()


def test_the_command_line(db, tmp_path):
    _warehouse(db, tmp_path)
    out = run_cli(db, "evaluate", "--dataset", "d", "--human", "h", "--metric", "m", "--k", "40",
                  "--replicates", "resample", "--format", "json")
    rows = json.loads(out.stdout)
    assert all("reps:resample" in r["signature"] for r in rows)
    bad = run_cli(db, "evaluate", "--dataset", "d", "--human", "h", "--metric", "m", "--replicates", "often", ok=False)
    assert bad.exit_code != 0 and "Traceback" not in bad.output
    usage = run_cli(db, "evaluate", "--dataset", "d", "--human", "h", "--metric", "m", "--replicate", "2", ok=False)
    assert usage.exit_code == 2 and "--preferences" in usage.output


# --- evaluate --preferences FILE --replicate N -------------------------------------------------
def _judge_files(tmp_path):
    from tests.test_evaluate_judge import NEW, PREFERENCES

    rows = pd.read_csv(PREFERENCES)
    rows[rows["judge"] != NEW].to_csv(tmp_path / "stored.csv", index=False)
    flipped = rows[rows["judge"] == NEW].copy()
    flipped.loc[flipped.index[::3], "winner"] = "tie"   # a second run that differs on a third of the cells
    rows[rows["judge"] == NEW].to_csv(tmp_path / "new.csv", index=False)
    flipped.to_csv(tmp_path / "again.csv", index=False)
    return tmp_path / "stored.csv", tmp_path / "new.csv", tmp_path / "again.csv"


def test_evaluate_preferences_takes_the_run_number(db, tmp_path):
    from tests.conftest import digest

    stored, new, again = _judge_files(tmp_path)
    run_cli(db, "ingest", "preferences", stored, "--dataset", "j")
    run_cli(db, "evaluate", "--dataset", "j", "--preferences", new, "--k", "40")
    before = digest(db)
    for bad in ("-1", "x"):
        out = run_cli(db, "evaluate", "--dataset", "j", "--preferences", again, "--replicate", bad, ok=False)
        errors = [line for line in out.output.splitlines() if line.startswith("Error")]
        assert out.exit_code != 0 and "Traceback" not in out.output and len(errors) == 1 and "replicate" in errors[0]
    assert digest(db) == before
    run_cli(db, "evaluate", "--dataset", "j", "--preferences", again, "--replicate", "1", "--k", "40",
            "--replicates", "resample")
    # independently: the same runs by ingest preferences, then judges
    other = tmp_path / "other.duckdb"
    Warehouse.create(other).close()
    run_cli(other, "ingest", "preferences", stored, "--dataset", "j")
    run_cli(other, "ingest", "preferences", new, "--dataset", "j")
    run_cli(other, "ingest", "preferences", again, "--dataset", "j", "--replicate", "1")
    cols = ["judge", "n", "accuracy", "accuracy_lower", "accuracy_upper", "runs"]
    with Warehouse(db) as wh, Warehouse(other) as wo:
        runs = wh.sql("SELECT replicate, count(*) AS n FROM preferences GROUP BY replicate ORDER BY replicate")
        assert runs["n"].tolist()[1] == 360
        mine = wh.judges("j", k=40, replicates="resample")["judge_statistics"].sort_values("judge")[cols]
        theirs = wo.judges("j", k=40, replicates="resample")["judge_statistics"].sort_values("judge")[cols]
    pd.testing.assert_frame_equal(mine.reset_index(drop=True), theirs.reset_index(drop=True), check_dtype=False)
    assert mine.set_index("judge").loc["judge-position", "runs"] == 2
