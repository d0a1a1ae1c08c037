"""``evaluate --preferences FILE`` (issue 28 item 5): a new judge's preference file is ingested and
judged with the stored judges exactly as ``judges`` judges them all when ingested at once; a
second call computes nothing; a bad file or option is refused before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from metaeval.errors import WarehouseError
from metaeval.runs import Warehouse
from tests.conftest import digest, run_cli

PREFERENCES = Path(__file__).resolve().parents[1] / "docs" / "examples" / "preferences.csv"
NEW = "judge-position"
K = 40
STATISTICS = ["judge", "n", "accuracy", "accuracy_lower", "accuracy_upper", "accuracy_ab", "accuracy_ba",
              "both_correct", "position_consistency", "first_position_rate", "first_position_rate_lower",
              "tie_rate", "kappa", "kendall", "rank", "cluster"]


@pytest.fixture
def split(tmp_path):
    """The example's preferences without one judge, and that judge's own file."""
    rows = pd.read_csv(PREFERENCES)
    rows[rows["judge"] != NEW].to_csv(tmp_path / "stored.csv", index=False)
    rows[rows["judge"] == NEW].to_csv(tmp_path / "new.csv", index=False)
    return tmp_path / "stored.csv", tmp_path / "new.csv"


def test_new_judge_is_judged_as_judges_judges_all(db, tmp_path, split):
    stored, new = split
    run_cli(db, "ingest", "preferences", stored, "--dataset", "j")
    with Warehouse(db) as wh:
        ev = wh.evaluate_judge("j", new, k=K, seed=3)
        assert ev.judges == (NEW,) and ev.summary.run_id is not None and ev.loaded.inserted == 360
        mine = ev.rows["judge_statistics"].sort_values("judge")[STATISTICS].reset_index(drop=True)
        assert set(mine["judge"]) == {"judge-consistent", NEW, "judge-ties"}
        tests = ev.rows["judge_tests"]
        assert {frozenset(p) for p in zip(tests["judge_a"], tests["judge_b"])} >= {
            frozenset((NEW, "judge-consistent")), frozenset((NEW, "judge-ties"))}
        # the same call again: ingest unchanged, nothing computed
        again = wh.evaluate_judge("j", new, k=K, seed=3)
        assert again.summary.run_id is None and again.loaded.inserted == 0
    # independently: everything ingested at once, then `judges`
    other = tmp_path / "other.duckdb"
    Warehouse.create(other).close()
    run_cli(other, "ingest", "preferences", PREFERENCES, "--dataset", "j")
    with Warehouse(other) as wh:
        rows = wh.judges("j", k=K, seed=3)["judge_statistics"]
    expected = rows.sort_values("judge")[STATISTICS].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, expected, check_dtype=False)
    # the position-biased judge is found out
    biased = mine.set_index("judge").loc[NEW]
    assert biased["first_position_rate_lower"] > 0.5 and biased["accuracy_ab"] > biased["accuracy_ba"]


def test_bad_file_or_option_writes_nothing(db, tmp_path, split):
    stored, new = split
    run_cli(db, "ingest", "preferences", stored, "--dataset", "j")
    humans = pd.read_csv(PREFERENCES).query("kind == 'human'").head(2)
    humans.to_csv(tmp_path / "humans.csv", index=False)
    (tmp_path / "broken.csv").write_text("input,system_a,system_b,judge,order,winner\ndoc-001,sys-1,sys-2,x,ab,maybe\n")
    before = digest(db)
    cases = [((tmp_path / "humans.csv", {}), "is of kind human"),
             ((tmp_path / "broken.csv", {}), "broken.csv:2"),
             ((new, {"humans": ["nobody*"]}), "matches no human judge"),
             ((tmp_path / "missing.csv", {}), "no such file"),
             ((new, {"where": ["split=test"]}), "no attribute 'split'"),
             ((new, {"k": 3}), "k"),
             ((new, {"alpha": 1.5}), "alpha"),
             ((new, {"correction": "none-such"}), "correction")]
    with Warehouse(db) as wh:
        for (path, options), message in cases:
            with pytest.raises(WarehouseError, match=message):
                wh.evaluate_judge("j", path, **options)
        with pytest.raises(WarehouseError, match="unknown dataset"):
            wh.evaluate_judge("nowhere", new)
    assert digest(db) == before


def test_evaluate_preferences_cli(db, split):
    stored, new = split
    run_cli(db, "ingest", "preferences", stored, "--dataset", "j")
    out = run_cli(db, "evaluate", "--dataset", "j", "--preferences", new, "--k", K).output
    line = next(ln for ln in out.splitlines() if NEW in ln and "*" in ln)
    assert line.split()[0] == "*" and "judges of j vs the majority of annotator-1,annotator-2,annotator-3" in out
    rows = json.loads(run_cli(db, "evaluate", "--dataset", "j", "--preferences", new, "--k", K, "--format",
                              "json").stdout)
    assert {r["judge"] for r in rows["judge_statistics"]} == {"judge-consistent", NEW, "judge-ties"}
    bad = run_cli(db, "evaluate", "--dataset", "j", ok=False)
    assert bad.exit_code == 2 and "Missing option '--human'" in bad.output
    both = run_cli(db, "evaluate", "--dataset", "j", "--preferences", new, "--metric", "m", ok=False)
    assert both.exit_code == 2 and "separate evaluate" in both.output


def test_a_refusal_of_the_judges_leaves_the_preference_file_unstored(db, split, monkeypatch):
    """The judges are computed inside the ingest's transaction: a refusal they raise (here
    simulated in their computation) rolls the ingest back, so the command writes nothing."""
    from metaeval.runs.votes import judges as judges_runs

    stored, new = split
    run_cli(db, "ingest", "preferences", stored, "--dataset", "j")
    before = digest(db)

    def refuse(*args, **kwargs):
        raise WarehouseError("refused by the judges")

    monkeypatch.setattr(judges_runs, "compute", refuse)
    with Warehouse(db) as wh, pytest.raises(WarehouseError, match="refused by the judges"):
        wh.evaluate_judge("j", new, k=K, seed=3)
    assert digest(db) == before
    with Warehouse(db, read_only=True) as wh:
        assert NEW not in set(wh.sql("SELECT DISTINCT judge FROM preferences")["judge"])
