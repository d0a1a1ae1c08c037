"""The one way a family stores its rows (runs/engine/store.py): a family gives its inputs and its rows;
store.run reuses what is up to date, creates the table in a warehouse that predates it, writes one run
and reads the rows back; force recomputes; a refusal in inputs or rows writes nothing."""

from __future__ import annotations

import pytest

from metaeval import Store
from metaeval.errors import WarehouseError
from metaeval.runs.engine import store
from metaeval.runs.engine.families import FAMILIES
from tests.conftest import run_cli

PARAMS = {"dataset": "d", "metrics": ("sim-low.f1", "sim-divergence")}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    db = tmp_path_factory.mktemp("demo") / "w.duckdb"
    run_cli(db, "demo", "--dataset", "d", "--systems", "6", "--inputs", "8", "--k", "40")
    return db


def counting(base):
    """A family of ``base``'s class whose rows() counts its calls (the stored rows are its own)."""
    class Counting(type(base)):
        calls = 0

        def rows(self, wh, inputs, **params):
            type(self).calls += 1
            return super().rows(wh, inputs, **params)
    return Counting()


def runs(wh, command):
    return wh.sql("SELECT count(*) AS n FROM analysis_runs WHERE command = ?", [command])["n"][0]


def test_store_reuses_writes_once_and_rereads(demo, tmp_path):
    import shutil

    db = tmp_path / "w.duckdb"
    shutil.copy(demo, db)
    family = counting(FAMILIES["rank-change"])
    with Store(db) as wh:
        wh.con.execute("DROP VIEW IF EXISTS latest_rank_changes")   # a warehouse made before the family
        wh.con.execute("DROP TABLE IF EXISTS rank_changes")
        params = dict(family.parameters(**PARAMS))
        first = store.run(family, wh, **params)
        assert family.calls == 1 and runs(wh, "rank-change") == 1
        stored = wh.sql("SELECT * FROM rank_changes ORDER BY result_id")
        assert len(first) == len(stored) == 6 and set(stored["fingerprint"]) == set(first["fingerprint"])
        assert list(first["position_a"]) == sorted(first["position_a"])     # the family's outcome: best first
        again = store.run(family, wh, **params)
        assert family.calls == 1 and runs(wh, "rank-change") == 1         # up to date: nothing computed
        assert again.equals(first)
        forced = store.run(family, wh, **{**params, "force": True})
        assert family.calls == 2 and runs(wh, "rank-change") == 2
        assert list(forced["score_a"]) == list(first["score_a"])
        # the generated Warehouse method is the same path
        assert FAMILIES["rank-change"].run(wh, "d", list(PARAMS["metrics"]))["system"].tolist() == \
            first["system"].tolist()
        assert runs(wh, "rank-change") == 2


def test_a_refusal_writes_nothing(demo, tmp_path):
    import shutil

    db = tmp_path / "w.duckdb"
    shutil.copy(demo, db)
    family = counting(FAMILIES["rank-change"])
    with Store(db) as wh:
        before = wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0]
        with pytest.raises(WarehouseError, match="exactly two measures"):
            store.run(family, wh, **dict(family.parameters(dataset="d", metrics=("sim-low.f1",))))
        assert family.calls == 0 and wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == before


def test_several_tables_one_run(tmp_path):
    """A family with two tables (span-eval) writes both in one run; enough decides what is reused."""
    fam = FAMILIES["span-eval"]
    assert fam.tables == ("span_evaluation", "span_tests")
    inputs = store.Inputs("d", "f", {"a": 1}, more={"span_tests": {"b": 2}})
    assert inputs.keys_of(fam, "span_evaluation") == {"a": 1} and inputs.keys_of(fam, "span_tests") == {"b": 2}
    assert FAMILIES["raters"].enough({"rater_agreement": object(), "rating_stability": None}, inputs) is False
    assert FAMILIES["raters"].enough({"rater_agreement": object(), "rating_stability": object()}, inputs) is True
