"""metaeval leaderboard (runs/leaderboard.py): the stored ratings are the pure fit's, reused when up
to date; votes without an estimate are refused, nothing written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from metaeval import Store
from metaeval.analyses import leaderboard as lb
from tests.conftest import digest, run_cli

PREFERENCES = Path(__file__).resolve().parents[1] / "docs" / "examples" / "preferences.csv"


@pytest.fixture
def votes_db(db):
    run_cli(db, "ingest", "preferences", PREFERENCES, "--dataset", "jd")
    return db


def test_ratings_are_the_maximum_likelihood_fit_and_are_reused(votes_db):
    out = run_cli(votes_db, "leaderboard", "--dataset", "jd", "--k", "100").output
    assert "Bradley-Terry ratings from the human votes" in out
    with Store(votes_db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_leaderboard ORDER BY system")
        prefs = wh.sql("SELECT * FROM preference_matrix WHERE kind = 'human'")
    systems = sorted(set(prefs["system_a"]) | set(prefs["system_b"]))
    a, b, y = [], [], []
    for _, r in prefs.iterrows():
        for w in (r["winner_ab"], r["winner_ba"]):
            if isinstance(w, str):
                a.append(systems.index(r["system_a"])); b.append(systems.index(r["system_b"]))
                y.append({"a": 1.0, "b": 0.0, "tie": 0.5}[w])
    expected = lb.elo(lb.fit(lb.count(a, b, y, len(systems))))
    np.testing.assert_allclose(rows["rating"], expected, rtol=1e-12)
    assert (rows["lower"] <= rows["rating"]).all() and (rows["rating"] <= rows["upper"]).all()
    assert rows["first_share"].sum() == pytest.approx(1.0)
    before = digest(votes_db)
    run_cli(votes_db, "leaderboard", "--dataset", "jd", "--k", "100")
    assert digest(votes_db) == before


def test_no_estimate_is_refused_and_a_ridge_makes_one(db, tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("input,system_a,system_b,judge,order,winner,kind\n"
                    "i1,s1,s2,h1,ab,a,human\ni2,s1,s3,h1,ab,a,human\ni3,s2,s3,h1,ab,a,human\n")
    run_cli(db, "ingest", "preferences", path, "--dataset", "p")
    before = digest(db)
    result = run_cli(db, "leaderboard", "--dataset", "p", "--k", "100", ok=False)
    assert result.exit_code != 0 and "--ridge" in result.output and len(result.output.strip().splitlines()) == 1
    assert digest(db) == before
    run_cli(db, "leaderboard", "--dataset", "p", "--k", "100", "--ridge", "0.1", "--interval", "sandwich")


def test_tie_models_groups_and_fragility_as_stored(votes_db):
    from metaeval.analyses import leaderboard_ties as lt
    from metaeval.runs import leaderboard as runs_lb

    run_cli(votes_db, "leaderboard", "--dataset", "jd", "--k", "100", "--ties", "davidson")
    with Store(votes_db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_leaderboard ORDER BY system")
        systems, counted, _, _ = runs_lb._votes(wh, "jd", None)
    theta, tau = lt.fit(counted, "davidson")
    np.testing.assert_allclose(rows["rating"], lb.elo(theta), rtol=1e-12)
    assert rows["tie_parameter"].iloc[0] == pytest.approx(np.exp(tau))
    # k = 100 cannot resolve 10 Holm-corrected tests: no group and no rank, said in one line
    assert rows["cluster"].isna().all() and rows["rank"].isna().all()
    assert (rows["rank_lower"] <= rows["rank_upper"]).all() and rows["fragility"].nunique() == 1
    out = run_cli(votes_db, "leaderboard", "--dataset", "jd", "--k", "1000", "--correction", "none").output
    assert "cannot resolve" not in out and "Fragility" in out
    with Store(votes_db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_leaderboard ORDER BY rating DESC")
    assert list(rows["cluster"]) == [1, 2, 3, 4, 5] and list(rows["rank"]) == [1, 2, 3, 4, 5]


def test_a_ridge_with_a_tie_model_is_refused(votes_db):
    result = run_cli(votes_db, "leaderboard", "--dataset", "jd", "--ties", "rao-kupper", "--ridge", "0.1", ok=False)
    assert result.exit_code != 0 and "--ridge" in result.output and "--ties" in result.output


def test_the_bootstrap_on_a_dask_cluster_equals_the_local_run(votes_db, tmp_path):
    distributed = pytest.importorskip("distributed")
    other = tmp_path / "other.duckdb"
    other.write_bytes(votes_db.read_bytes())
    run_cli(votes_db, "leaderboard", "--dataset", "jd", "--k", "60")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=None) as cluster:
        run_cli(other, "leaderboard", "--dataset", "jd", "--k", "60", "--scheduler", cluster.scheduler_address)
    frames = []
    for db in (votes_db, other):
        with Store(db, read_only=True) as wh:
            frames.append(wh.sql("SELECT * FROM latest_leaderboard ORDER BY system"))
            executor = wh.sql("SELECT parameters FROM analysis_runs")["parameters"].iloc[-1]
    assert '"dask"' in executor
    for column in ("rating", "lower", "upper", "first_share", "rank_lower", "rank_upper"):
        np.testing.assert_allclose(frames[0][column].astype(float), frames[1][column].astype(float), rtol=1e-9)
