"""Repeated runs of a metric (issue 45 item 4): scores take a run number (a replicate column in
`ingest table`, or --replicate N); the analyses read the mean over a cell's runs (view
score_means), checked by hand; a cell run once reads, correlates and fingerprints as before;
the merge's key is (cell, run); schema 12 -> 13 keeps every row; the refusals are one line with
nothing written."""

from __future__ import annotations

import json

import duckdb
import numpy as np
import pandas as pd
import pytest

from metaeval import schema
from metaeval.core import Store
from metaeval.errors import ConflictError, InputError
from metaeval.ingest import table
from metaeval.runs import Warehouse
from tests.conftest import run_cli

SYSTEMS = [f"s{k}" for k in range(6)]
INPUTS = [f"i{k}" for k in range(7)]


def _frame(seed: int, measure: str = "m") -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = [(s, i, measure, float(np.round(rng.normal(k * 0.3, 1.0), 6)))
            for k, s in enumerate(SYSTEMS) for i in INPUTS]
    return pd.DataFrame(rows, columns=["system", "input", "measure", "value"])


def _human() -> pd.DataFrame:
    return _frame(7, "h")


def _write(frame: pd.DataFrame, path) -> str:
    frame.to_csv(path, index=False)
    return str(path)


def _results(wh) -> pd.DataFrame:
    ci = wh.ci("d", "h", metrics=["m"], k=60, seed=3)
    cols = [c for c in ("metric", "level", "coefficient", "estimate", "lower", "upper", "fingerprint") if c in ci]
    return ci[cols].sort_values(cols[:3]).reset_index(drop=True)


def test_a_cell_run_twice_correlates_as_its_mean_stored_once(tmp_path):
    """Runs a and b of every cell (and a third run of some) give the matrix, the correlations, the
    intervals and the fingerprints of one file holding each cell's mean, computed here by hand."""
    a, b, c = _frame(1), _frame(2), _frame(3)
    some = c.iloc[::5]                                                          # a third run of every 5th cell
    runs = pd.concat([a.assign(replicate=0), b.assign(replicate=1), some.assign(replicate=2)])
    mean = a.copy()
    third = dict(zip(zip(some["system"], some["input"]), some["value"]))
    mean["value"] = [(x + y + third[(s, i)]) / 3 if (s, i) in third else (x + y) / 2
                     for s, i, x, y in zip(a["system"], a["input"], a["value"], b["value"])]
    out = {}
    for name, frames in (("runs", [runs]), ("mean", [mean])):
        db = tmp_path / f"{name}.duckdb"
        Store.create(db).close()
        with Warehouse(db) as wh:
            for k, f in enumerate(frames):
                table.ingest(wh, "d", [_write(f, tmp_path / f"{name}{k}.csv")], allow_new=True)
            table.ingest(wh, "d", [_write(_human(), tmp_path / f"{name}-h.csv")], human=["h"])
            out[name] = (wh.matrix("d", "m"), _results(wh))
    (m_runs, r_runs), (m_mean, r_mean) = out["runs"], out["mean"]
    np.testing.assert_allclose(m_runs.values, m_mean.values, rtol=1e-15, atol=0)
    two = ~mean.set_index(["system", "input"]).index.isin(list(third))
    assert two.sum() > 0                                                        # (a + b) / 2: bit for bit
    grid = m_runs.values[[SYSTEMS.index(s) for s in mean["system"][two]], [INPUTS.index(i) for i in mean["input"][two]]]
    np.testing.assert_array_equal(grid, mean["value"][two].to_numpy())
    if np.array_equal(m_runs.values, m_mean.values):                            # the sum of three may round apart
        pd.testing.assert_frame_equal(r_runs, r_mean)
    else:
        pd.testing.assert_frame_equal(r_runs.drop(columns="fingerprint"), r_mean.drop(columns="fingerprint"),
                                      rtol=1e-9)


def test_two_runs_exactly_as_their_mean(tmp_path):
    """Two runs per cell: the mean (a + b) / 2 is exact, so everything is bit for bit the file of means,
    fingerprints included."""
    a, b = _frame(11), _frame(12)
    mean = a.assign(value=(a["value"] + b["value"]) / 2)
    out = {}
    for name, frames in (("runs", [a, b.assign(replicate=1)]), ("mean", [mean])):
        db = tmp_path / f"{name}.duckdb"
        Store.create(db).close()
        with Warehouse(db) as wh:
            for k, f in enumerate(frames):
                table.ingest(wh, "d", [_write(f, tmp_path / f"{name}{k}.csv")])
            table.ingest(wh, "d", [_write(_human(), tmp_path / f"{name}-h.csv")], human=["h"])
            out[name] = _results(wh)
            n = wh.sql("SELECT count(*) AS n, max(runs) AS most FROM score_means")
            assert n["n"][0] == len(a) and n["most"][0] == len(frames)
    pd.testing.assert_frame_equal(out["runs"], out["mean"])


@pytest.mark.parametrize("how", ["column of zeros", "option 0"])
def test_one_run_per_cell_keeps_rows_and_fingerprints(tmp_path, how):
    a = _frame(5)
    out = {}
    for name in ("plain", "zero"):
        db = tmp_path / f"{name}.duckdb"
        Store.create(db).close()
        f = a.assign(replicate=0) if name == "zero" and how == "column of zeros" else a
        with Warehouse(db) as wh:
            table.ingest(wh, "d", [_write(f, tmp_path / f"{name}.csv")], replicate=0)
            table.ingest(wh, "d", [_write(_human(), tmp_path / f"{name}-h.csv")], human=["h"])
            out[name] = (_results(wh), wh.sql("SELECT * FROM cells ORDER BY ALL"),
                         wh.sql("SELECT s.name AS system, i.name AS input, v.value FROM scores v JOIN systems s "
                                "USING (system_id) JOIN inputs i USING (input_id) ORDER BY ALL"))
            assert (wh.sql("SELECT replicate FROM scores")["replicate"] == 0).all()
    for x, y in zip(out["plain"], out["zero"]):
        pd.testing.assert_frame_equal(x, y)


def test_replicate_option_stores_the_run_and_the_same_run_again_changes_nothing(db, tmp_path):
    a, b = _frame(1), _frame(2)
    with Warehouse(db) as wh:
        table.ingest(wh, "d", [_write(a, tmp_path / "a.csv")])
        [r] = table.ingest(wh, "d", [_write(b, tmp_path / "b.csv")], replicate=3)
        assert r.inserted == len(b)
        [again] = table.ingest(wh, "d", [tmp_path / "b.csv"], replicate=3)
        assert again.inserted == 0 and again.replaced == 0
        got = wh.sql("SELECT replicate, count(*) AS n FROM scores GROUP BY ALL ORDER BY ALL")
        assert got["replicate"].tolist() == [0, 3] and got["n"].tolist() == [len(a), len(b)]
        options = wh.sql("SELECT options FROM ingests ORDER BY ingest_id")["options"].map(json.loads).tolist()
        assert "replicate" not in options[0] and options[1]["replicate"] == 3


def test_the_same_run_with_another_value_is_a_conflict_and_replace_changes_only_it(db, tmp_path):
    a, b = _frame(1), _frame(2)
    with Warehouse(db) as wh:
        table.ingest(wh, "d", [_write(a, tmp_path / "a.csv")])
        table.ingest(wh, "d", [_write(b, tmp_path / "b.csv")], replicate=1)
        before = wh.sql("SELECT * FROM scores ORDER BY ALL")
        changed = b.assign(value=b["value"] + 1).iloc[:3]
        with pytest.raises(ConflictError) as exc:
            table.ingest(wh, "d", [_write(changed, tmp_path / "c.csv")], replicate=1)
        assert "replicate=1" in str(exc.value) and "3 value(s) conflict" in str(exc.value)
        pd.testing.assert_frame_equal(wh.sql("SELECT * FROM scores ORDER BY ALL"), before)
        with pytest.raises(ConflictError) as zero:                             # run 0: the message as before runs
            table.ingest(wh, "d", [tmp_path / "c.csv"])
        assert "replicate" not in str(zero.value)
        [r] = table.ingest(wh, "d", [tmp_path / "c.csv"], replicate=1, replace=True)
        assert r.replaced == 3 and r.inserted == 0
        after = wh.sql("SELECT * FROM scores ORDER BY ALL")
        assert len(after) == len(before)
        kept = after.merge(before, on=["system_id", "input_id", "measure_id", "replicate"], suffixes=("", "_0"))
        assert (kept["value"] != kept["value_0"]).sum() == 3
        assert (kept.loc[kept["value"] != kept["value_0"], "replicate"] == 1).all()


def test_a_run_given_twice_in_one_ingest(db, tmp_path):
    a = _frame(1).iloc[:4]
    twice = pd.concat([a.assign(replicate=1), a.iloc[:1].assign(replicate=1, value=9.0)])
    with Warehouse(db) as wh:
        with pytest.raises(InputError) as exc:
            table.ingest(wh, "d", [_write(twice, tmp_path / "t.csv")])
        text = str(exc.value)
        assert "t.csv:2" in text and "replicate=1" in text and "lines 2, 6" in text and "\n" not in text
        other = a.assign(replicate=1, value=a["value"] + 1)
        with pytest.raises(ConflictError) as both:                             # two files of one call
            table.ingest(wh, "d", [_write(a.assign(replicate=1), tmp_path / "x.csv"),
                                   _write(other, tmp_path / "y.csv")])
        assert "within the input" in str(both.value)
        assert wh.sql("SELECT count(*) AS n FROM scores")["n"][0] == 0
        ok = pd.concat([a.assign(replicate=1), a.assign(replicate=2, value=a["value"] + 1)])
        [r] = table.ingest(wh, "d", [_write(ok, tmp_path / "ok.csv")])          # two runs of each cell
        assert r.inserted == 2 * len(a)


@pytest.mark.parametrize("value", ["-1", "1.5", "x", "٣"])
def test_a_bad_run_number_is_refused_in_one_line_nothing_written(db, tmp_path, value):
    path = tmp_path / "bad.csv"
    path.write_text(f"system,input,measure,value,replicate\ns0,i0,m,0.5,0\ns0,i1,m,0.5,{value}\n")
    with Warehouse(db) as wh:
        with pytest.raises(InputError) as exc:
            table.ingest(wh, "d", [path])
        assert wh.sql("SELECT count(*) AS n FROM scores")["n"][0] == 0
    text = str(exc.value)
    assert "bad.csv:3" in text and "replicate" in text and "non-negative integer" in text and "\n" not in text
    out = run_cli(db, "ingest", "table", str(path), "--dataset", "d", ok=False)
    assert out.exit_code != 0 and "Traceback" not in out.output and "non-negative integer" in out.output


def test_replicate_option_refused_before_anything_is_made(tmp_path):
    path = _write(_frame(1), tmp_path / "a.csv")
    db = tmp_path / "new.duckdb"
    out = run_cli(db, "ingest", "table", path, "--dataset", "d", "--replicate", "-2", ok=False)
    assert out.exit_code != 0 and "--replicate" in out.output and "non-negative integer" in out.output
    assert "Traceback" not in out.output and len(out.output.strip().splitlines()) == 1
    assert not db.exists()


def test_runs_of_human_judgments_are_refused(db, tmp_path):
    h = _human()
    with Warehouse(db) as wh:
        with pytest.raises(InputError) as exc:
            table.ingest(wh, "d", [_write(h.assign(replicate=1), tmp_path / "h.csv")], human=["h"])
        assert "h.csv:2" in str(exc.value) and "human judgment" in str(exc.value)
        with pytest.raises(InputError) as option:
            table.ingest(wh, "d", [_write(h, tmp_path / "h2.csv")], human=["h"], replicate=1)
        assert "--replicate" in str(option.value) and "'h'" in str(option.value)
        assert wh.sql("SELECT (SELECT count(*) FROM scores) + (SELECT count(*) FROM judgments) AS n")["n"][0] == 0
        mixed = pd.concat([h.iloc[:2].assign(replicate=None), _frame(1).iloc[:2].assign(replicate=4)])
        table.ingest(wh, "d", [_write(mixed, tmp_path / "mixed.csv")], human=["h"])  # judgments without runs
        assert wh.sql("SELECT replicate FROM scores")["replicate"].tolist() == [4, 4]


@pytest.mark.parametrize("layout", ["wide", "jsonl", "parquet", "frame"])
def test_the_run_column_in_other_layouts(db, tmp_path, layout):
    a = _frame(1).iloc[:6]
    long = pd.concat([a, a.assign(replicate=2, value=a["value"] + 2)]).astype({"replicate": "Int64"})
    with Warehouse(db) as wh:
        if layout == "wide":
            wide = long.assign(replicate=long["replicate"].fillna(0)).pivot_table(
                index=["system", "input", "replicate"], columns="measure", values="value").reset_index()
            table.ingest(wh, "d", [_write(wide, tmp_path / "w.csv")])
        elif layout == "jsonl":
            path = tmp_path / "l.jsonl"
            path.write_text("".join(json.dumps({k: v for k, v in r.items() if not pd.isna(v)}) + "\n"
                                    for r in long.astype(object).to_dict("records")))
            table.ingest(wh, "d", [path])
        elif layout == "parquet":
            long.to_parquet(tmp_path / "p.parquet", index=False)
            table.ingest(wh, "d", [tmp_path / "p.parquet"])
        else:
            wh.add_scores("d", long)
        got = wh.sql("SELECT replicate, count(*) AS n FROM scores GROUP BY ALL ORDER BY ALL")
        assert got["replicate"].tolist() == [0, 2] and got["n"].tolist() == [6, 6]
        mean = wh.sql("SELECT value FROM cells ORDER BY system, input")["value"].to_numpy()
        np.testing.assert_array_equal(np.sort(mean), np.sort(((a["value"] + (a["value"] + 2)) / 2).to_numpy()))


def _as_schema_12(db) -> None:
    """The warehouse as schema 12 made it: scores without their run."""
    con = duckdb.connect(str(db))
    con.execute("ALTER TABLE scores DROP COLUMN replicate")
    con.execute("UPDATE schema_info SET value = '12' WHERE key = 'version'")
    con.close()


def test_init_upgrades_schema_12_keeping_every_row(db, tmp_path):
    with Warehouse(db) as wh:
        table.ingest(wh, "d", [_write(_frame(1), tmp_path / "a.csv"), _write(_human(), tmp_path / "h.csv")],
                     human=["h"])
        results = _results(wh)
        before = wh.sql("SELECT * EXCLUDE (replicate) FROM scores ORDER BY ALL")
        judgments = wh.sql("SELECT * FROM judgments ORDER BY ALL")
    _as_schema_12(db)
    refused = run_cli(db, "measures", "--dataset", "d", ok=False)
    assert refused.exit_code != 0 and "init" in refused.output
    out = run_cli(db, "init")
    assert f"from schema 12 to {schema.SCHEMA_VERSION}" in out.output and schema.SCHEMA_VERSION == 14
    with Warehouse(db) as wh:
        after = wh.sql("SELECT * FROM scores ORDER BY ALL")
        assert (after["replicate"] == 0).all() and len(after) == len(before)
        pd.testing.assert_frame_equal(after.drop(columns="replicate"), before)
        pd.testing.assert_frame_equal(wh.sql("SELECT * FROM judgments ORDER BY ALL"), judgments)
        pd.testing.assert_frame_equal(_results(wh), results)                    # the stored results, reused
        [r] = table.ingest(wh, "d", [_write(_frame(2), tmp_path / "b.csv")], replicate=1)   # the new key
        assert r.inserted == len(before)
        with pytest.raises(duckdb.ConstraintException):
            wh.con.execute("INSERT INTO scores (system_id, input_id, measure_id, value, replicate) "
                           "VALUES (1, 1, 1, 0.5, NULL)")


# --- ci --replicates resample: the runs drawn again inside each resample ------------------------
def _runs_warehouse(db, tmp_path, most: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    rows = [(s, i, "m", float(np.round(rng.normal(k * 0.5, 1), 6)), r)
            for k, s in enumerate(SYSTEMS) for i in INPUTS for r in range(int(rng.integers(1, most + 1)))]
    with Warehouse(db) as wh:
        table.ingest(wh, "d", [_write(pd.DataFrame(rows, columns=["system", "input", "measure", "value", "replicate"]),
                                      tmp_path / "m.csv"), _write(_human(), tmp_path / "h.csv")], human=["h"])
    return rows


def test_second_stage_against_a_brute_force_loop(db, tmp_path):
    from functools import partial

    from scipy import stats as sps

    from metaeval.analyses import score_runs
    from metaeval.analyses.stats import resampling
    from metaeval.analyses.stats.validation import seed_iv

    rows = _runs_warehouse(db, tmp_path)
    runs: dict = {}
    for s, i, _, v, _r in rows:
        runs.setdefault((SYSTEMS.index(s), INPUTS.index(i)), []).append(v)
    K = max(len(v) for v in runs.values())
    R = np.full((len(SYSTEMS), len(INPUTS), K), np.nan)
    for (a, b), vs in runs.items():
        R[a, b, :len(vs)] = vs
    X = np.array([[np.mean(runs[a, b]) for b in range(len(INPUTS))] for a in range(len(SYSTEMS))])
    Z = _human().pivot(index="system", columns="input", values="value").loc[SYSTEMS, INPUTS].to_numpy()
    k, seed = 40, 5
    got = score_runs.run_bootstrap_ci(X, R, Z, "system", "pearson", "both", k=k, seed=seed)
    seq = seed_iv(seed)
    rows_b, cols_b = resampling.ResampleStream(seq, partial(resampling.bootstrap_indices, n_systems=len(SYSTEMS),
                                                            n_inputs=len(INPUTS), method="both")).take(0, k)
    (u,) = resampling.ResampleStream(np.random.SeedSequence(seq.entropy, spawn_key=(score_runs.RUN_STREAM,)),
                                     lambda rng, size: (rng.random((size, *R.shape)),)).take(0, k)
    for b in range(k):
        Xb = np.empty_like(X)
        for (a, c), vs in runs.items():                           # each cell's runs drawn with replacement
            Xb[a, c] = sum(vs[int(u[b, a, c, slot] * len(vs))] for slot in range(len(vs))) / len(vs)
        sub_x, sub_z = Xb[rows_b[b]][:, cols_b[b]], Z[rows_b[b]][:, cols_b[b]]
        x, z = sub_x.mean(axis=1), sub_z.mean(axis=1)
        want = np.nan if np.ptp(x) == 0 or np.ptp(z) == 0 else sps.pearsonr(x, z)[0]
        assert got.samples[b] == pytest.approx(want, abs=1e-12, nan_ok=True)
    assert got.estimate == pytest.approx(sps.pearsonr(X.mean(axis=1), Z.mean(axis=1))[0], abs=1e-12)
    valid = got.samples[~np.isnan(got.samples)]
    assert (got.lower, got.upper) == tuple(np.percentile(valid, [2.5, 97.5]))


def test_resample_with_one_run_per_cell_is_the_mean_bit_for_bit(db, tmp_path):
    _runs_warehouse(db, tmp_path, most=1)
    cols = ["metric", "level", "coefficient", "estimate", "lower", "upper"]
    with Warehouse(db) as wh:
        mean = wh.ci("d", "h", k=60, seed=2)[cols]
        resampled = wh.ci("d", "h", k=60, seed=2, replicates="resample")
        runs = wh.sql("SELECT parameters FROM analysis_runs ORDER BY run_id")["parameters"].map(json.loads).tolist()
    pd.testing.assert_frame_equal(mean.reset_index(drop=True), resampled[cols].reset_index(drop=True))
    assert "replicates" not in runs[0] and runs[-1]["replicates"] == "resample"
    assert all("replicates" in json.loads(c) for c in resampled["conventions"])


def test_resample_is_seeded_and_draws_the_runs(db, tmp_path):
    _runs_warehouse(db, tmp_path)
    cols = ["level", "coefficient", "estimate", "lower", "upper"]
    with Warehouse(db) as wh:
        mean = wh.ci("d", "h", k=60, seed=2)
        a = wh.ci("d", "h", k=60, seed=2, replicates="resample")
        b = wh.ci("d", "h", k=60, seed=2, replicates="resample", force=True)
        c = wh.ci("d", "h", k=60, seed=3, replicates="resample")
    pd.testing.assert_frame_equal(a[cols], b[cols])
    mean = mean[cols + ["fingerprint"]]
    assert (a["estimate"].to_numpy() == mean["estimate"].to_numpy()).all()       # the estimate: the mean's
    assert not np.array_equal(a[["lower", "upper"]].to_numpy(), mean[["lower", "upper"]].to_numpy())
    assert not np.array_equal(a[["lower", "upper"]].to_numpy(), c[["lower", "upper"]].to_numpy())
    assert set(a["fingerprint"]).isdisjoint(set(mean["fingerprint"]))           # the runs are in its fingerprint


@pytest.mark.parametrize("extra, said", [({"method": "fisher"}, "bootstrap"),
                                         ({"resample_annotators": "cells"}, "resample_annotators"),
                                         ({"control": "system"}, "partial")])
def test_resample_refusals_write_nothing(db, tmp_path, extra, said):
    from metaeval.errors import WarehouseError

    _runs_warehouse(db, tmp_path)
    with Warehouse(db) as wh:
        with pytest.raises(WarehouseError) as exc:
            wh.ci("d", "h", k=60, replicates="resample", **extra)
        assert said in str(exc.value) and "\n" not in str(exc.value)
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == 0
    out = run_cli(db, "ci", "--dataset", "d", "--human", "h", "--replicates", "sometimes", ok=False)
    assert out.exit_code != 0 and "Traceback" not in out.output
    ok = run_cli(db, "ci", "--dataset", "d", "--human", "h", "--k", "60", "--replicates", "resample")
    assert ok.exit_code == 0
