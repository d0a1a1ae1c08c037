"""Repeated runs of a judge (issue 45 item 4): the replicate column and --replicate at ingest,
schema 10 -> 11 keeping every row, the mean over runs (soft preference) by hand, a judge run once
unchanged (rows and fingerprint), --replicates resample against a brute-force loop, repetition
stability by hand, and the refusals."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from metaeval import schema
from metaeval.analyses import preferences as pf
from metaeval.analyses import replicates as rp
from metaeval.core import Store
from metaeval.errors import InputError
from metaeval.ingest import preferences
from metaeval.runs import Warehouse
from metaeval.runs.votes import judges as runs
from tests.conftest import run_cli

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "preferences.csv"
_STATS = ["judge", "n", "accuracy", "accuracy_lower", "accuracy_upper", "kappa", "kappa_lower", "kappa_upper",
          "position_consistency", "kendall", "rank", "cluster", "fingerprint"]


def _write(path: Path, rows: list[str], header: str = "input,system_a,system_b,judge,order,winner,replicate") -> Path:
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def test_codes_agree_with_preferences():
    assert (rp.A, rp.B, rp.TIE, rp.MISSING) == (pf.A, pf.B, pf.TIE, pf.MISSING)


def test_mean_over_runs_is_the_soft_preference_by_hand(db, tmp_path):
    path = _write(tmp_path / "r.csv", [
        "i1,x,y,j,ab,b,0", "i1,x,y,j,ab,a,1", "i1,x,y,j,ab,tie,2",      # (1 + 0 + 0.5) / 3 = 0.5: tie
        "i1,x,y,j,ba,b,0", "i1,x,y,j,ba,b,1", "i1,x,y,j,ba,a,2",        # 2/3: b
        "i2,y,x,j,ab,b,0", "i2,y,x,j,ab,b,1",                           # stored swapped: x,y,ba,a twice: 0 -> a
        "i3,x,y,j,ab,tie,0"])                                           # one run: as stored
    with Warehouse(db) as wh:
        preferences.ingest(wh, "d", path)
        m = wh.sql("SELECT i.name AS input, presentation, winner, probability, runs FROM preference_means p "
                   "JOIN inputs i USING (input_id) ORDER BY input, presentation")
    got = {(r.input, r.presentation): (r.winner, r.probability, r.runs) for r in m.itertuples()}
    assert got[("i1", "ab")][0] == "tie" and got[("i1", "ab")][1] == pytest.approx(0.5)
    assert got[("i1", "ba")][0] == "b" and got[("i1", "ba")][1] == pytest.approx(2 / 3)
    assert got[("i2", "ba")][:2] == ("a", 0.0) and got[("i2", "ba")][2] == 2
    assert got[("i3", "ab")][0] == "tie" and pd.isna(got[("i3", "ab")][1]) and got[("i3", "ab")][2] == 1


def test_replicate_option_and_column(db, tmp_path):
    first = _write(tmp_path / "a.csv", ["i1,x,y,j,ab,b"], header="input,system_a,system_b,judge,order,winner")
    with Warehouse(db) as wh:
        preferences.ingest(wh, "d", first)
        preferences.ingest(wh, "d", first, replicate=4)
        again = preferences.ingest(wh, "d", first, replicate=4)     # the same run again: nothing changes
        assert again.inserted == 0
        assert sorted(wh.sql("SELECT replicate FROM preferences")["replicate"]) == [0, 4]


@pytest.mark.parametrize("value", ["-1", "1.5", "x", "٣"])
def test_a_bad_run_number_is_refused_in_one_line_nothing_written(db, tmp_path, value):
    path = _write(tmp_path / "bad.csv", ["i1,x,y,j,ab,b,0", f"i2,x,y,j,ab,b,{value}"])
    with Warehouse(db) as wh:
        with pytest.raises(InputError) as exc:
            preferences.ingest(wh, "d", path)
        assert wh.sql("SELECT count(*) AS n FROM preferences")["n"][0] == 0
    text = str(exc.value)
    assert "bad.csv:3" in text and "replicate" in text and "non-negative integer" in text and "\n" not in text
    out = run_cli(db, "ingest", "preferences", str(path), "--dataset", "d", ok=False)
    assert out.exit_code != 0 and "Traceback" not in out.output


@pytest.mark.parametrize("default", [None, 3])
def test_a_run_given_twice_once_by_default_is_refused_naming_both_lines(db, tmp_path, default):
    """A row without a run number is run --replicate (0 by default): the same run given explicitly
    on another line of the file is the same verdict twice, refused in one line, nothing written."""
    run = 0 if default is None else default
    path = _write(tmp_path / "twice.csv", ["i1,x,y,j,ab,b,", "i2,x,y,j,ab,a,", f"i1,x,y,j,ab,a,{run}"])
    options = {} if default is None else {"replicate": default}
    with Warehouse(db) as wh:
        with pytest.raises(InputError) as exc:
            preferences.ingest(wh, "d", path, **options)
        assert wh.sql("SELECT count(*) AS n FROM preferences")["n"][0] == 0
    text = str(exc.value)
    assert "twice.csv:4" in text and "'replicate'" in text and "on line 2" in text and f"(run {run}:" in text
    flags = [] if default is None else ["--replicate", str(default)]
    out = run_cli(db, "ingest", "preferences", str(path), "--dataset", "d", *flags, ok=False)
    assert out.exit_code != 0 and "Traceback" not in out.output and out.output.count("\n") == 1
    other = _write(tmp_path / "other.csv", ["i1,x,y,j,ab,b,", f"i1,x,y,j,ab,a,{run + 1}"])
    with Warehouse(db) as wh:                                  # another run of the same verdict: two runs
        preferences.ingest(wh, "d", other, **options)
        assert sorted(wh.sql("SELECT replicate FROM preferences")["replicate"]) == [run, run + 1]


def test_replicate_option_refused(db, tmp_path):
    path = _write(tmp_path / "a.csv", ["i1,x,y,j,ab,b"], header="input,system_a,system_b,judge,order,winner")
    out = run_cli(db, "ingest", "preferences", str(path), "--dataset", "d", "--replicate", "-2", ok=False)
    assert out.exit_code != 0 and "--replicate" in out.output and "non-negative integer" in out.output
    with Warehouse(db) as wh:
        assert wh.sql("SELECT count(*) AS n FROM preferences")["n"][0] == 0


def _old_fingerprint(wh, dataset: str) -> str:
    """The fingerprint as judges computed it before the runs: the preferences table's own rows."""
    rows = wh.con.execute("""SELECT i.name AS input, sa.name AS system_a, sb.name AS system_b, p.judge, p.kind,
                                    p.presentation, p.winner
                             FROM preferences p JOIN datasets d USING (dataset_id) JOIN inputs i USING (input_id)
                             JOIN systems sa ON sa.system_id = p.system_a_id JOIN systems sb ON sb.system_id = p.system_b_id
                             WHERE d.name = ? ORDER BY p.judge, i.name, sa.name, sb.name, p.presentation""",
                          [dataset]).df()
    return hashlib.sha256(rows.sort_values(["judge", "input", "system_a", "system_b", "presentation"])
                          .to_csv(index=False).encode()).hexdigest()


def test_one_run_per_cell_keeps_rows_and_fingerprint(db, tmp_path):
    """A file with an explicit replicate column of zeros gives the rows and fingerprint of the same
    file without it, and the fingerprint is the one computed from the stored rows as before."""
    frame = pd.read_csv(EXAMPLE)
    with_zero = tmp_path / "zero.csv"
    frame.assign(replicate=0).to_csv(with_zero, index=False)
    other = tmp_path / "other.duckdb"
    Store.create(other).close()
    out = {}
    for path, file in ((db, EXAMPLE), (other, with_zero)):
        with Warehouse(path) as wh:
            preferences.ingest(wh, "p", file)
            runs.judges(wh, "p", k=50)
            out[path] = wh.sql("SELECT * FROM latest_judge_statistics ORDER BY judge")
            assert runs.load(wh, "p").fingerprint == _old_fingerprint(wh, "p")
    a, b = out[db], out[other]
    pd.testing.assert_frame_equal(a[_STATS], b[_STATS])
    assert a["stability"].isna().all() and (a["runs"] == 1).all()


def test_a_second_run_changes_only_its_judge_and_the_fingerprint(db, tmp_path):
    with Warehouse(db) as wh:
        preferences.ingest(wh, "p", EXAMPLE)
        before = runs.load(wh, "p")
        again = pd.read_csv(EXAMPLE).query("judge == 'judge-ties'")
        again.to_csv(tmp_path / "again.csv", index=False)
        preferences.ingest(wh, "p", tmp_path / "again.csv", replicate=1)      # the same verdicts, run 1
        after = runs.load(wh, "p")
    assert after.fingerprint != before.fingerprint
    for j in before.judges:
        np.testing.assert_array_equal(after.V[j], before.V[j])                # the same verdicts: the same mean
    assert set(after.runs) == {"judge-ties"} and after.runs["judge-ties"].most == 2


def _tiny_runs():
    # items 0..2, cells: (0, ab) runs b, a, b; (1, ba) runs tie, a; (2, ab) one run (not a Runs cell: V only)
    return rp.Runs.of([0, 0, 0, 1, 1], [0, 0, 0, 1, 1], [0, 1, 2, 0, 1], [pf.B, pf.A, pf.B, pf.TIE, pf.A],
                      [np.nan] * 5)


def test_stability_by_hand():
    r = _tiny_runs()
    W = np.array([[1, 1, 1], [2, 0, 1], [0, 3, 0], [0, 0, 3]], float)
    point, boot = rp.stability(r, 3, W)
    # item 0: pairs (b,a) (b,b) (a,b): 1 of 3 agree; item 1: (tie, a): 0 of 1
    assert point == pytest.approx(1 / 4)
    assert boot[0] == pytest.approx(1 / 4) and boot[1] == pytest.approx(1 / 3) and boot[2] == pytest.approx(0.0)
    assert np.isnan(boot[3])                                                # no pair drawn
    single = rp.Runs.of([0], [0], [0], [pf.B], [np.nan])
    assert np.isnan(rp.stability(single, 1, W[:, :1])[0])


def test_resampled_verdicts_against_a_loop():
    r = _tiny_runs()
    V = np.array([[pf.B, pf.MISSING], [pf.MISSING, pf.A], [pf.TIE, pf.MISSING]])
    V[0, 0] = rp.rounded(np.array([2 / 3]))[0]
    got = [rp.resampled_verdicts(V, r, rng) for rng in [np.random.default_rng(7)] for _ in range(1)]
    rng = np.random.default_rng(7)
    cells = [((0, 0), ["b", "a", "b"]), ((1, 1), ["tie", "a"])]
    soft = {"a": 0.0, "b": 1.0, "tie": 0.5}
    u = rng.random(5)
    want = V.copy()
    pos = 0
    for (i, o), labels in cells:
        drawn = []
        for _ in labels:
            drawn.append(soft[labels[int(u[pos] * len(labels))]])
            pos += 1
        m = sum(drawn) / len(drawn)
        want[i, o] = pf.B if m > 0.5 else pf.A if m < 0.5 else pf.TIE
    np.testing.assert_array_equal(got[0], want)


def test_two_stage_bootstrap_against_a_brute_force_loop():
    """judge_statistics with the runs drawn again: each resample's accuracy from a plain loop over
    the drawn items and the drawn runs."""
    r = _tiny_runs()
    V = np.array([[pf.B, pf.MISSING], [pf.MISSING, pf.A], [pf.TIE, pf.MISSING]])
    h = np.array([pf.B, pf.A, pf.TIE])
    k, seed = 200, 3
    W = pf.bootstrap_weights(3, k, seed)
    rng = rp.second_stage_rng(seed)
    s = pf.judge_statistics(V, h, W=W, resampled=lambda b: rp.resampled_verdicts(V, r, rng))
    rng = rp.second_stage_rng(seed)
    acc = []
    labels = {(0, 0): [pf.B, pf.A, pf.B], (1, 1): [pf.TIE, pf.A]}
    soft = {pf.A: 0.0, pf.B: 1.0, pf.TIE: 0.5}
    for b in range(k):
        u = rng.random(5)
        Vb, pos = V.copy(), 0
        for (i, o), runs_ in labels.items():
            m = np.mean([soft[runs_[int(u[pos + t] * len(runs_))]] for t in range(len(runs_))])
            pos += len(runs_)
            Vb[i, o] = pf.B if m > 0.5 else pf.A if m < 0.5 else pf.TIE
        right = sum(W[b, i] * (Vb[i, o] == h[i]) for i in range(3) for o in range(2) if Vb[i, o] != pf.MISSING)
        judged = sum(W[b, i] for i in range(3) for o in range(2) if Vb[i, o] != pf.MISSING)
        acc.append(right / judged if judged else np.nan)
    acc = np.array(acc)
    lo, hi = np.quantile(acc[~np.isnan(acc)], [0.025, 0.975])
    assert s.lower["accuracy"] == pytest.approx(lo) and s.upper["accuracy"] == pytest.approx(hi)
    assert s.value["accuracy"] == pytest.approx(1.0)                       # the means' verdicts, as V says


def test_judges_resample_is_seeded_and_recorded(db, tmp_path):
    with Warehouse(db) as wh:
        preferences.ingest(wh, "p", EXAMPLE)
        flip = pd.read_csv(EXAMPLE).query("judge == 'judge-consistent'").copy()
        flip["winner"] = flip["winner"].map({"a": "b", "b": "a", "tie": "tie"})
        flip.head(60).to_csv(tmp_path / "flip.csv", index=False)
        preferences.ingest(wh, "p", tmp_path / "flip.csv", replicate=1)
        mean = runs.judges(wh, "p", judge_globs=["judge-consistent"], k=100)
        rows_mean = wh.sql("SELECT * FROM latest_judge_statistics")
        res = runs.judges(wh, "p", judge_globs=["judge-consistent"], k=100, replicates="resample")
        rows_res = wh.sql("SELECT * FROM latest_judge_statistics")
        again = runs.judges(wh, "p", judge_globs=["judge-consistent"], k=100, replicates="resample")
        params = wh.sql("SELECT parameters FROM analysis_runs ORDER BY run_id")["parameters"].tolist()
    assert again.run_id is None                                             # reproducible: reused
    assert rows_mean["accuracy"][0] == rows_res["accuracy"][0]
    assert rows_res["accuracy_upper"][0] - rows_res["accuracy_lower"][0] != pytest.approx(
        rows_mean["accuracy_upper"][0] - rows_mean["accuracy_lower"][0])
    assert '"replicates"' not in params[-2] and '"replicates": "resample"' in params[-1]
    assert rows_mean["stability"][0] < 1 and rows_mean["runs"][0] == 2
    assert mean.run_id != res.run_id


def _as_schema_10(path: Path) -> None:
    """Turn a warehouse of this schema into one of schema 10: the preferences table of before (no
    replicate, the old key) and judge_statistics without the runs' columns."""
    con = duckdb.connect(str(path))
    con.execute("DROP VIEW preference_matrix")
    con.execute("DROP VIEW preference_means")
    con.execute("CREATE TABLE old AS SELECT * EXCLUDE (replicate) FROM preferences")
    con.execute("DROP TABLE preferences")
    con.execute("""CREATE TABLE preferences (dataset_id INTEGER NOT NULL, input_id INTEGER NOT NULL,
                   system_a_id INTEGER NOT NULL, system_b_id INTEGER NOT NULL, judge VARCHAR NOT NULL,
                   kind VARCHAR NOT NULL, presentation VARCHAR NOT NULL, winner VARCHAR NOT NULL, probability DOUBLE,
                   PRIMARY KEY (dataset_id, input_id, system_a_id, system_b_id, judge, presentation))""")
    con.execute("INSERT INTO preferences SELECT * FROM old")
    con.execute("DROP TABLE old")
    for c in ("stability", "stability_lower", "stability_upper", "runs"):
        con.execute(f"ALTER TABLE judge_statistics DROP COLUMN {c}")
    con.execute("UPDATE schema_info SET value = '10' WHERE key = 'version'")
    con.close()


def test_init_upgrades_schema_10_keeping_every_row(db):
    with Warehouse(db) as wh:
        preferences.ingest(wh, "p", EXAMPLE)
        runs.judges(wh, "p", k=50)
        before = wh.sql("SELECT * FROM preferences ORDER BY ALL")
        stats = wh.sql("SELECT * EXCLUDE (stability, stability_lower, stability_upper, runs) "
                       "FROM judge_statistics ORDER BY result_id")
    _as_schema_10(db)
    out = run_cli(db, "init")
    assert f"from schema 10 to {schema.SCHEMA_VERSION}" in out.output
    with Warehouse(db) as wh:
        after = wh.sql("SELECT * FROM preferences ORDER BY ALL")
        assert (after["replicate"] == 0).all()
        pd.testing.assert_frame_equal(after.drop(columns="replicate"), before.drop(columns="replicate"))
        stats_after = wh.sql("SELECT * FROM judge_statistics ORDER BY result_id")
        pd.testing.assert_frame_equal(stats_after[stats.columns], stats)
        assert stats_after["stability"].isna().all()
        assert runs.judges(wh, "p", k=50).run_id is None                    # the stored results reused
        _write(Path(str(db) + ".csv"), ["doc-001,sys-4,sys-5,judge-ties,ab,b,1"])
        preferences.ingest(wh, "p", Path(str(db) + ".csv"))                 # a second run fits the new key
        assert wh.sql("SELECT count(*) AS n FROM preferences")["n"][0] == len(before) + 1
