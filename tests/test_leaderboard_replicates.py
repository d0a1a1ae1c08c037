"""leaderboard --judge J --replicates resample (issue 45 item 4): each drawn vote's runs drawn again
inside every bootstrap round (analyses/vote_runs.py), checked against a Python loop over rows,
draws and runs with the same seed streams; with one run per vote the rows are the mean's, bit for
bit; the refusals are one line with nothing written."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from metaeval.analyses import leaderboard as lb
from metaeval.analyses import replicates as rp
from metaeval.errors import WarehouseError
from metaeval.runs import Warehouse
from tests.conftest import digest, run_cli

SYSTEMS = ["s0", "s1", "s2", "s3"]
NUMBERS = ["system", "votes", "rating", "lower", "upper", "rank_lower", "rank_upper", "first_share", "n_valid"]


def _preferences(tmp_path, most: int, seed: int = 0):
    """A judge J's verdicts on 25 items x 2 orders, 1..most runs each (stronger systems win more)."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in range(25):
        a, b = sorted(rng.choice(len(SYSTEMS), 2, replace=False))
        for order in ("ab", "ba"):
            for run in range(int(rng.integers(1, most + 1))):
                p_b = 1 / (1 + np.exp(a - b))        # s_b stronger for a larger index
                u = rng.random()
                winner = "b" if u < 0.8 * p_b else "a" if u < 0.8 else "tie"
                rows.append((f"x{n:02d}", SYSTEMS[a], SYSTEMS[b], "J", order, winner, run))
    frame = pd.DataFrame(rows, columns=["input", "system_a", "system_b", "judge", "order", "winner", "replicate"])
    path = tmp_path / "prefs.csv"
    frame.assign(kind="automatic").to_csv(path, index=False)
    return frame, path


def _loop(counted, W, cells, seed):
    """The second stage by loops: per round, per counted row its draws landing on the votes run
    several times (binomial), which of them (a uniform each), then each picked vote's runs (a
    uniform each), the vote moved to its resampled verdict's row."""
    rng = rp.second_stage_rng(seed)
    rows = {(int(a), int(b), float(y)): r for r, (a, b, y) in enumerate(zip(counted.a, counted.b, counted.y))}
    by_row = {}
    for key, runs in cells:                                   # cells: (counted row key, runs' soft), in vote order
        by_row.setdefault(rows[key], []).append((key, runs))
    rounds = []
    for b in range(W.shape[1]):
        hits = [rng.binomial(int(W[r, b]), len(by_row.get(r, [])) / counted.w[r]) for r in range(len(W))]
        picks = [(r, by_row[r][int(rng.random() * len(by_row[r]))]) for r in range(len(W)) for _ in range(hits[r])]
        counts = {key: float(W[r, b]) for key, r in rows.items()}
        for r, (key, runs) in picks:
            drawn = [runs[int(rng.random() * len(runs))] for _ in runs]
            mean = sum(drawn) / len(drawn)
            y = 0.0 if mean > 0.5 else 1.0 if mean < 0.5 else 0.5
            counts[key] -= 1
            counts[(key[0], key[1], y)] = counts.get((key[0], key[1], y), 0.0) + 1
        rounds.append({k: v for k, v in counts.items() if v})
    return rounds


def test_second_stage_against_a_python_loop(db, tmp_path):
    from metaeval.analyses import vote_runs
    from metaeval.runs.votes import leaderboard as board
    from metaeval.runs.votes import vote_runs as runs_io

    frame, path = _preferences(tmp_path, most=3)
    run_cli(db, "ingest", "preferences", path, "--dataset", "d")
    k, seed = 40, 7
    soft = {"a": 0.0, "b": 1.0, "tie": 0.5}
    with Warehouse(db) as wh:
        systems, counted, _, _ = board._votes(wh, "d", "J")
        runs, _ = runs_io.load(wh, "d", "J", systems, counted)
        ordered = wh.sql("SELECT i.name AS input, p.presentation, p.winner FROM preferences p JOIN inputs i "
                         "USING (input_id) ORDER BY p.input_id, p.system_a_id, p.system_b_id, p.presentation, "
                         "p.replicate")
    cells = []                                                # independently of the SQL: from the file
    for (item, order), g in frame.groupby(["input", "order"], sort=False):
        values = [soft[w] for w in g.sort_values("replicate")["winner"]]
        mean = sum(values) / len(values)
        a, b = SYSTEMS.index(g["system_a"].iloc[0]), SYSTEMS.index(g["system_b"].iloc[0])
        if len(values) > 1:
            cells.append(((item, order), ((a, b, 0.0 if mean > 0.5 else 1.0 if mean < 0.5 else 0.5), values)))
    position = {key: n for n, key in enumerate(dict.fromkeys(zip(ordered["input"], ordered["presentation"])))}
    cells = [c for _, c in sorted(cells, key=lambda c: position[c[0]])]
    W = lb.bootstrap_counts(counted, k, seed)
    ext, got = vote_runs.second_stage(runs, W, rp.second_stage_rng(seed))
    want = _loop(counted, W, cells, seed)
    for b in range(k):
        have = {(int(a), int(x), float(y)): v for a, x, y, v in zip(ext.a, ext.b, ext.y, got[:, b]) if v}
        assert have == want[b]
    assert got.sum(axis=0).tolist() == W.sum(axis=0).tolist() and not np.array_equal(got[:len(W)], W)
    # the leaderboard's intervals are the fits of these rounds
    with Warehouse(db) as wh:
        rows = wh.leaderboard("d", judge="J", k=k, seed=seed, replicates="resample").set_index("system")
    samples = lb.elo(lb.fit(ext, got), None, 1000.0)
    boot = lb.summarise(samples, 0.05)
    for s, lo, up in zip(systems, boot.lower, boot.upper):
        assert (rows.loc[s, "lower"], rows.loc[s, "upper"]) == pytest.approx((lo, up), abs=1e-6)
    conventions = json.loads(rows["conventions"].iloc[0])
    assert conventions["most_runs"] == 3 and "two-stage" in conventions["replicates"]


def test_one_run_per_vote_is_the_mean_bit_for_bit(db, tmp_path):
    _, path = _preferences(tmp_path, most=1)
    run_cli(db, "ingest", "preferences", path, "--dataset", "d")
    with Warehouse(db) as wh:
        mean = wh.leaderboard("d", judge="J", k=40, seed=2)
        resampled = wh.leaderboard("d", judge="J", k=40, seed=2, replicates="resample")
        params = wh.sql("SELECT parameters FROM analysis_runs ORDER BY run_id")["parameters"].map(json.loads).tolist()
    pd.testing.assert_frame_equal(mean[NUMBERS], resampled[NUMBERS])
    assert "replicates" not in params[0] and params[-1]["replicates"] == "resample"
    assert set(mean["fingerprint"]).isdisjoint(resampled["fingerprint"])


def test_resample_is_seeded_keeps_the_ratings_and_moves_the_intervals(db, tmp_path):
    _, path = _preferences(tmp_path, most=3)
    run_cli(db, "ingest", "preferences", path, "--dataset", "d")
    with Warehouse(db) as wh:
        mean = wh.leaderboard("d", judge="J", k=40, seed=2)
        a = wh.leaderboard("d", judge="J", k=40, seed=2, replicates="resample")
        b = wh.leaderboard("d", judge="J", k=40, seed=2, replicates="resample", force=True)
    pd.testing.assert_frame_equal(a[NUMBERS], b[NUMBERS])                      # seeded
    assert a["rating"].tolist() == mean["rating"].tolist()                      # the estimate: the mean's
    assert not np.array_equal(a[["lower", "upper"]].to_numpy(), mean[["lower", "upper"]].to_numpy())


@pytest.mark.parametrize("extra, said", [({}, "judge"), ({"judge": "J", "interval": "sandwich"}, "interval"),
                                         ({"judge": "J", "style": ["length"]}, "style"),
                                         ({"judge": "J", "replicates": "often"}, "replicates")])
def test_refusals_are_one_line_and_write_nothing(db, tmp_path, extra, said):
    _, path = _preferences(tmp_path, most=2)
    run_cli(db, "ingest", "preferences", path, "--dataset", "d")
    before = digest(db)
    with Warehouse(db) as wh:
        with pytest.raises(WarehouseError) as exc:
            wh.leaderboard("d", k=40, **{"replicates": "resample", **extra})
        assert said in str(exc.value) and "\n" not in str(exc.value)
    assert digest(db) == before
    out = run_cli(db, "leaderboard", "--dataset", "d", "--replicates", "resample", ok=False)
    assert out.exit_code != 0 and "Traceback" not in out.output and "--judge" in out.output
    run_cli(db, "leaderboard", "--dataset", "d", "--judge", "J", "--k", "40", "--replicates", "resample")


# --- judge-leaderboard --replicates resample: the runs inside the bootstrap over items ----------
def _with_humans(tmp_path, most: int):
    frame, path = _preferences(tmp_path, most=most)
    humans = frame[frame["replicate"] == 0].assign(judge="H", kind="human").drop(columns="replicate")
    humans["winner"] = np.where(np.arange(len(humans)) % 4 == 0, "tie", humans["winner"])
    both = pd.concat([frame.assign(kind="automatic"), humans.assign(replicate=0)])
    both.to_csv(path, index=False)
    return frame, path


def test_item_stage_against_a_python_loop(db, tmp_path):
    from metaeval.analyses import judge_leaderboard as jl
    from metaeval.analyses import preferences as pf
    from metaeval.analyses import vote_runs
    from metaeval.runs.votes import judge_leaderboard as board
    from metaeval.runs.votes import vote_runs as runs_io

    frame, path = _with_humans(tmp_path, most=3)
    run_cli(db, "ingest", "preferences", path, "--dataset", "d")
    k, seed = 40, 3
    with Warehouse(db) as wh:
        systems, human, chosen = board._data(wh, "d", ())
        items = board._items(human, chosen["J"])
        jv = board._votes(chosen["J"], items, systems)
        cj, Mj = jl.counted(jv, len(systems), len(items))
        runs, _ = runs_io.load(wh, "d", "J", systems, cj, items)
        order = wh.sql("SELECT i.name AS input, p.presentation FROM preferences p JOIN inputs i USING (input_id) "
                       "WHERE p.judge = 'J' ORDER BY p.input_id, p.system_a_id, p.system_b_id, p.presentation")
    soft = {"a": 0.0, "b": 1.0, "tie": 0.5}
    position = {key: n for n, key in enumerate(dict.fromkeys(zip(order["input"], order["presentation"])))}
    cells = []                                                # from the file, in vote order
    for (item, _), g in sorted(frame.groupby(["input", "order"]), key=lambda c: position[c[0]]):
        values = [soft[w] for w in g.sort_values("replicate")["winner"]]
        if len(values) > 1:
            mean = sum(values) / len(values)
            a, b = SYSTEMS.index(g["system_a"].iloc[0]), SYSTEMS.index(g["system_b"].iloc[0])
            cells.append((items[(item, SYSTEMS[a], SYSTEMS[b])], (a, b, 0.0 if mean > 0.5 else 1.0 if mean < 0.5
                                                                  else 0.5), values))
    W = pf.bootstrap_weights(len(items), k, seed).T
    Wj = np.asarray(Mj @ W)
    ext, got = vote_runs.item_stage(runs, W, Wj, rp.second_stage_rng(seed))
    rng = rp.second_stage_rng(seed)
    keys = [(int(a), int(b), float(y)) for a, b, y in zip(cj.a, cj.b, cj.y)]
    cells.sort(key=lambda c: keys.index(c[1]))                # by counted row, then vote (a stable sort)
    for r in range(k):
        counts = {key: float(Wj[n, r]) for n, key in enumerate(keys)}
        for item, key, values in cells:
            for _ in range(int(W[item, r])):                  # each copy of the vote: its runs drawn again
                drawn = [values[int(rng.random() * len(values))] for _ in values]
                mean = sum(drawn) / len(drawn)
                counts[key] -= 1
                moved = (key[0], key[1], 0.0 if mean > 0.5 else 1.0 if mean < 0.5 else 0.5)
                counts[moved] = counts.get(moved, 0.0) + 1
        have = {(int(a), int(b), float(y)): v for a, b, y, v in zip(ext.a, ext.b, ext.y, got[:, r]) if v}
        assert have == {key: v for key, v in counts.items() if v}
    with Warehouse(db) as wh:
        mean = wh.judge_leaderboard("d", k=k, seed=seed)
        a = wh.judge_leaderboard("d", k=k, seed=seed, replicates="resample")
        b = wh.judge_leaderboard("d", k=k, seed=seed, replicates="resample", force=True)
    columns = ["judge", "kendall", "kendall_lower", "kendall_upper", "brier", "brier_lower", "brier_upper"]
    pd.testing.assert_frame_equal(a[columns], b[columns])
    assert a["kendall"].tolist() == mean["kendall"].tolist()                     # the estimate: the mean's
    assert not np.array_equal(a[["brier_lower", "brier_upper"]].to_numpy(),
                              mean[["brier_lower", "brier_upper"]].to_numpy())
    assert json.loads(a["conventions"].iloc[0])["most_runs"] == 3


def test_judge_leaderboard_one_run_per_vote_is_the_mean_bit_for_bit(db, tmp_path):
    _, path = _with_humans(tmp_path, most=1)
    run_cli(db, "ingest", "preferences", path, "--dataset", "d")
    columns = ["judge", "kendall", "kendall_lower", "kendall_upper", "spearman_lower", "spearman_upper", "brier",
               "brier_lower", "brier_upper", "brier_votes", "separability", "agreement", "n_valid"]
    with Warehouse(db) as wh:
        mean = wh.judge_leaderboard("d", k=40, seed=2)
        resampled = wh.judge_leaderboard("d", k=40, seed=2, replicates="resample")
        params = wh.sql("SELECT parameters FROM analysis_runs ORDER BY run_id")["parameters"].map(json.loads).tolist()
    pd.testing.assert_frame_equal(mean[columns], resampled[columns])
    assert "replicates" not in params[0] and params[-1]["replicates"] == "resample"
    assert "replicates" not in json.loads(mean["conventions"].iloc[0])
