"""`metaeval judges` / Warehouse.judges on the synthetic preferences: persisted, reused, and equal
to counts made by hand from the file."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from metaeval import schema
from metaeval.runs import Warehouse
from metaeval.analyses.preferences_synthetic import TRUE_STRENGTHS, synthetic_preferences
from metaeval.errors import WarehouseError
from metaeval.ingest import preferences
from metaeval.runs.votes import judges as runs
from tests.conftest import run_cli


@pytest.fixture
def judged(db, tmp_path):
    frame = synthetic_preferences(seed=1, inputs=40)
    path = tmp_path / "p.csv"
    frame.to_csv(path, index=False)
    with Warehouse(db) as wh:
        preferences.ingest(wh, "demo", path)
    return db, frame


def _by_hand(frame: pd.DataFrame) -> pd.DataFrame:
    """accuracy per order (orders as stored: system names sorted), tie and first-position rates,
    from the raw rows with pandas, the human label the majority of the annotators' votes."""
    f = frame.copy()
    swap = f["system_a"] > f["system_b"]
    f["item"] = [tuple(sorted(p)) + (i,) for p, i in zip(zip(f["system_a"], f["system_b"]), f["input"])]
    f["order"] = np.where(swap, f["order"].map({"ab": "ba", "ba": "ab"}), f["order"])
    f["winner"] = np.where(swap, f["winner"].map({"a": "b", "b": "a", "tie": "tie"}), f["winner"])
    votes = f[f["kind"] == "human"].groupby(["item", "winner"]).size().unstack(fill_value=0)
    top = votes.max(axis=1)
    label = votes.idxmax(axis=1)[(votes == top.to_numpy()[:, None]).sum(axis=1) == 1]
    rows = []
    for judge, g in f[f["kind"] == "automatic"].groupby("judge"):
        g = g[g["item"].isin(label.index)]
        correct = g["winner"].to_numpy() == label.loc[g["item"]].to_numpy()
        ab, ba = correct[g["order"] == "ab"].mean(), correct[g["order"] == "ba"].mean()
        non_tie = g[g["winner"] != "tie"]
        first = ((non_tie["order"] == "ab") & (non_tie["winner"] == "a")) | ((non_tie["order"] == "ba")
                                                                             & (non_tie["winner"] == "b"))
        rows.append({"judge": judge, "n": g["item"].nunique(), "accuracy_ab": ab, "accuracy_ba": ba,
                     "accuracy": (ab + ba) / 2, "tie_rate": (g["winner"] == "tie").mean(),
                     "first_position_rate": first.mean(), "tied_majority": len(votes) - len(label)})
    return pd.DataFrame(rows)


def test_judges_persisted_equal_counts_by_hand_and_reused(judged):
    db, frame = judged
    with Warehouse(db) as wh:
        rows = wh.judges("demo", k=199, seed=3)
        stats = rows["judge_statistics"].set_index("judge")
        expected = _by_hand(frame).set_index("judge")
        for column in expected.columns:
            np.testing.assert_allclose(stats.loc[expected.index, column].astype(float), expected[column], err_msg=column)
        # the position-biased judge prefers the first output; the tying judge ties most; the consistent one is
        # consistent and the most accurate
        assert stats.loc["judge-position", "first_position_rate_lower"] > 0.5
        assert stats["tie_rate"].idxmax() == "judge-ties"
        assert stats.loc["judge-consistent", "position_consistency"] == 1.0
        assert stats.loc["judge-consistent", "cluster"] == 1 and stats.loc["judge-consistent", "is_winner"]
        for name in ("accuracy", "kappa", "kendall"):
            assert (stats[f"{name}_lower"] <= stats[name]).all() and (stats[name] <= stats[f"{name}_upper"]).all()
        # the humans' Bradley-Terry ranking recovers the true order
        ranking = rows["preference_rankings"]
        human = ranking[ranking["judge"] == runs.HUMAN_JUDGE].sort_values("rank")
        assert human["system"].tolist() == sorted(TRUE_STRENGTHS, key=TRUE_STRENGTHS.get, reverse=True)
        assert len(ranking) == 4 * len(TRUE_STRENGTHS)
        tests = rows["judge_tests"]
        assert len(tests) == 2 * 3 and set(tests["test"]) == {"mcnemar", "permutation"}
        run = wh.sql("SELECT * FROM analysis_runs WHERE command = 'judges'")
        assert len(run) == 1 and run["status"].iloc[0] == "finished"
        assert json.loads(run["parameters"].iloc[0])["k"] == 199
        assert set(stats["fingerprint"]) == {run["data_fingerprint"].iloc[0]}
        assert runs.judges(wh, "demo", k=199, seed=3).run_id is None           # up to date: nothing computed
        assert runs.judges(wh, "demo", k=199, seed=4).run_id is not None       # another seed: a new run
        for table in runs.TABLES:
            assert len(wh.sql(f"SELECT * FROM {schema.RESULT_TABLES[table]}")) == len(rows[table])


def test_degenerate_preferences_give_nulls_not_numbers(db, tmp_path):
    # two annotators who disagree on every item: every human majority is tied, nothing is compared
    path = tmp_path / "p.csv"
    path.write_text("input,system_a,system_b,judge,order,winner,kind\n"
                    "d1,S1,S2,h1,ab,a,human\nd1,S1,S2,h2,ab,b,human\nd1,S1,S2,llm,ab,a,\n"
                    "d2,S1,S2,h1,ab,tie,human\nd2,S1,S2,h2,ab,a,human\nd2,S1,S2,llm,ab,tie,\n")
    with Warehouse(db) as wh:
        preferences.ingest(wh, "x", path)
        stats = wh.judges("x", k=39)["judge_statistics"]
        assert stats["n"].tolist() == [0] and stats["tied_majority"].tolist() == [2]
        assert stats[["accuracy", "kappa", "first_position_rate", "rank", "cluster"]].isna().all().all()
        with pytest.raises(WarehouseError, match=r"judges=\['gpt\*'\] matches no automatic judge"):
            runs.judges(wh, "x", judge_globs=["gpt*"])
        with pytest.raises(WarehouseError, match="unknown dataset 'nope'"):
            runs.judges(wh, "nope")


def test_cli_judges_json_rows_carry_the_names(judged):
    db, _ = judged
    result = run_cli(db, "judges", "--dataset", "demo", "--k", "99", "--format", "json")
    document = json.loads(result.stdout)
    [row, *_] = document["judge_statistics"]
    for name in ("judge", "n", "accuracy_ab", "accuracy_ba", "accuracy", "both_correct", "position_consistency",
                 "first_position_rate", "tie_rate", "kappa", "kendall"):
        assert name in row
    text = run_cli(db, "judges", "--dataset", "demo", "--k", "99").output
    assert "judge-position" in text and "Bradley-Terry" in text
    bad = run_cli(db, "judges", "--dataset", "demo", "--human", "zzz", ok=False)
    assert bad.exit_code != 0 and "matches no human judge" in bad.output and "Traceback" not in bad.output


def test_where_and_by_select_items_by_input_attributes(judged, tmp_path):
    db, frame = judged
    inputs = sorted(set(frame["input"]))
    attributes = tmp_path / "a.csv"
    attributes.write_text("input,attribute,value\n" + "".join(f"{i},half,{'first' if n < 20 else 'second'}\n"
                                                              for n, i in enumerate(inputs)))
    run_cli(db, "ingest", "attributes", attributes, "--dataset", "demo")
    first = frame[frame["input"].isin(inputs[:20])]
    path = tmp_path / "first.csv"
    first.to_csv(path, index=False)
    with Warehouse(db) as wh:
        preferences.ingest(wh, "first-half", path)
        by = wh.judges("demo", k=99, by="half")["judge_statistics"]
        assert sorted(set(by["subset"])) == ["half=first", "half=second"]
        where = wh.judges("demo", k=99, where=["half=first"])["judge_statistics"].set_index("judge")
        alone = wh.judges("first-half", k=99)["judge_statistics"].set_index("judge")
        columns = ["n", "tied_majority", "accuracy", "accuracy_lower", "kappa", "first_position_rate", "kendall"]
        pd.testing.assert_frame_equal(where[columns], alone[columns])
        pd.testing.assert_frame_equal(by[by["subset"] == "half=first"].set_index("judge")[columns], alone[columns])
        with pytest.raises(WarehouseError, match="never has the value 'third'"):
            wh.judges("demo", k=99, where=["half=third"])


def test_a_system_nobody_compared_has_no_strength_and_no_rank(db, tmp_path):
    """The judge gave no verdict on the one item with S3: its Bradley-Terry strength for S3 would
    be the ridge prior's 0 and rank it between S1 and S2; it is NULL, and the others rank 1, 2."""
    path = tmp_path / "p.csv"
    rows = ["input,system_a,system_b,judge,order,winner,kind"]
    for i in range(6):
        rows += [f"d{i},S1,S2,h1,ab,{'ab'[i % 2]},human", f"d{i},S1,S2,llm,ab,a,"]
    rows += ["e,S1,S3,h1,ab,a,human"]
    path.write_text("\n".join(rows) + "\n")
    with Warehouse(db) as wh:
        preferences.ingest(wh, "x", path)
        wh.judges("x", k=39)
        got = wh.sql("SELECT judge, system, strength, lower, upper, rank, comparisons FROM latest_preference_rankings "
                     "ORDER BY judge, system")
    for _, r in got.groupby("judge"):
        r = r.set_index("system")
        if r.loc["S3", "comparisons"] == 0:
            assert r.loc["S3", ["strength", "lower", "upper", "rank"]].isna().all()
            assert r.loc[["S1", "S2"], "rank"].tolist() == [1, 2]
    assert (got["comparisons"] == 0).any()       # the case arose


def test_a_schema_5_warehouse_is_upgraded_to_take_the_null_strengths(db, tmp_path):
    """Schema 5 had preference_rankings.strength and rank NOT NULL; `metaeval init` (migrate_5)
    drops the constraints, keeping every row."""
    from metaeval.connection import duckdb_connect

    run_cli(db, "init")
    with duckdb_connect(db) as con:
        con.execute("ALTER TABLE preference_rankings ALTER COLUMN strength SET NOT NULL")
        con.execute("ALTER TABLE preference_rankings ALTER COLUMN rank SET NOT NULL")
        con.execute("UPDATE schema_info SET value = '5' WHERE key = 'version'")
    assert "from schema 5 to " in run_cli(db, "init").output
    test_a_system_nobody_compared_has_no_strength_and_no_rank(db, tmp_path)
