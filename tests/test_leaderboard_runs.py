"""metaeval leaderboard (runs/votes/leaderboard.py): the stored ratings are the pure fit's, reused when up
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
    from metaeval.runs.votes import leaderboard as runs_lb

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


DISCONNECTED = ("model_a,model_b,winner\n" + "m1,m2,model_a\n" * 3 + "m2,m1,model_a\n" + "m1,m2,tie\n"
                + "m3,m4,model_a\n" * 4 + "m4,m3,model_a\n" * 2 + "m5,m3,model_a\n" + "m3,m5,model_a\n" * 2)


def _per_vote_elo(pairs):
    """Elo ratings (mean 1000) of one group's votes [(a, b, y)], by scipy on the per-vote likelihood."""
    from scipy.optimize import minimize
    from scipy.special import log_expit

    systems = sorted({s for a, b, _ in pairs for s in (a, b)})
    a = np.array([systems.index(p[0]) for p in pairs]); b = np.array([systems.index(p[1]) for p in pairs])
    y = np.array([p[2] for p in pairs])

    def loss(t):
        d = t[a] - t[b]
        return -np.sum(y * log_expit(d) + (1 - y) * log_expit(-d))
    t = minimize(loss, np.zeros(len(systems)), method="BFGS", options={"gtol": 1e-10}).x
    return dict(zip(systems, 1000 + 400 / np.log(10) * (t - t.mean())))


def test_unconnected_groups_are_rated_apart_and_never_ordered_by_a_prior(db, tmp_path):
    # issue 48 item 2: only m1-m2 and m3-m4-m5 ever meet; every system wins and loses
    import json

    path = tmp_path / "votes.csv"
    path.write_text(DISCONNECTED)
    run_cli(db, "ingest", "preferences", path, "--dataset", "d", "--judge", "j")
    out = " ".join(run_cli(db, "leaderboard", "--dataset", "d", "--judge", "j", "--k", "200").output.split())
    assert "2 unconnected groups" in out and "1: m1, m2; 2: m3, m4, m5" in out and "never loses" not in out
    votes = [line.split(",") for line in DISCONNECTED.splitlines()[1:]]
    pairs = [(a, b, {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}[w]) for a, b, w in votes]
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_leaderboard ORDER BY system")
    conventions = [json.loads(c) for c in rows["conventions"]]
    group = dict(zip(rows["system"], [c["connected_group"] for c in conventions]))
    assert group == {"m1": 1, "m2": 1, "m3": 2, "m4": 2, "m5": 2}
    assert conventions[0]["connected_groups"] == [["m1", "m2"], ["m3", "m4", "m5"]]
    for members in (("m1", "m2"), ("m3", "m4", "m5")):
        expected = _per_vote_elo([p for p in pairs if p[0] in members])     # each group's own votes
        part = rows[rows["system"].isin(members)]
        np.testing.assert_allclose(part["rating"], [expected[s] for s in part["system"]], atol=1e-4)
        assert part["first_share"].sum() == pytest.approx(1.0)           # first within the group
        assert part["rank"].notna().all() and part["rank"].min() == 1 and part["rank_upper"].max() <= len(members)
    # a prior and an anchor: the anchor's group is anchored, the other centred; no rank across groups
    out = run_cli(db, "leaderboard", "--dataset", "d", "--judge", "j", "--k", "200", "--ridge", "1",
                  "--anchor", "m1").output
    assert "2 unconnected groups" in out
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_leaderboard ORDER BY system").set_index("system")
    assert rows.loc["m1", "rating"] == 1000 and rows.loc["m1", "anchor_rating"] == 1000
    assert rows.loc[["m3", "m4", "m5"], "rating"].mean() == pytest.approx(1000)
    assert rows.loc[["m3", "m4", "m5"], "anchor_rating"].isna().all()
    assert rows.loc[["m1", "m2"], "first_share"].sum() == pytest.approx(1)
    printed = json.loads(run_cli(db, "leaderboard", "--dataset", "d", "--judge", "j", "--k", "200", "--ridge", "1",
                                 "--anchor", "m1", "--format", "json").output)
    order = [(r["conventions"]["connected_group"], -r["rating"]) for r in printed]
    assert order == sorted(order)            # group by group, each best first: never interleaved by the prior
    report = tmp_path / "report.html"
    run_cli(db, "report", "--dataset", "d", "--out", report)
    page = report.read_text()
    assert "2 unconnected groups" in page and "Group 1: m1, m2" in page and "Group 2: m3, m4, m5" in page
    # a model fitted on the whole graph is refused naming the groups, and writes nothing
    before = digest(db)
    result = run_cli(db, "leaderboard", "--dataset", "d", "--judge", "j", "--ties", "davidson", ok=False)
    assert result.exit_code != 0 and "2 unconnected groups" in result.output and "--ties" in result.output
    assert len(result.output.strip().splitlines()) == 1 and digest(db) == before


def test_a_group_that_admits_no_estimate_is_named(db, tmp_path):
    path = tmp_path / "votes.csv"
    path.write_text("model_a,model_b,winner\nm1,m2,model_a\nm2,m1,model_a\nm3,m4,model_a\nm3,m4,model_a\n")
    run_cli(db, "ingest", "preferences", path, "--dataset", "d", "--judge", "j")
    before = digest(db)
    result = run_cli(db, "leaderboard", "--dataset", "d", "--judge", "j", "--k", "50", ok=False)
    assert result.exit_code != 0 and "within the group m3, m4" in result.output and "--ridge" in result.output
    assert len(result.output.strip().splitlines()) == 1 and digest(db) == before
