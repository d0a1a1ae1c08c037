"""--scheduler / $METAEVAL_SCHEDULER: the tasks of ci, compare and simulate computed on a Dask
distributed cluster give the very rows of a --jobs 1 run, and the run records its executor."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from metaeval import Warehouse
from tests.conftest import run_cli as _cli

distributed = pytest.importorskip("distributed")

VOLATILE = ["result_id", "run_id"]
COMMON = ["--dataset", "realsumm", "--human", "litepyramid.recall", "--metric", "rouge-*.recall",
          "--level", "system", "--level", "summary", "--coefficient", "pearson", "--coefficient", "kendall",
          "--k", "100", "--seed", "7"]
COVERAGE = ["simulate", "coverage", "--dataset", "realsumm", "--human", "litepyramid.recall", "--metric", "qa-eval.f1",
            "--coefficient", "pearson", "--method", "boot-both", "--trials", 60, "--k", 40, "--seed", 3]
POWER = ["simulate", "power", "--dataset", "realsumm", "--human", "litepyramid.recall", "--proportions", "0.1,1",
         "--method", "perm-both", "--trials", 8, "--k", 40, "--seed", 3]


@pytest.fixture(scope="module")
def scheduler():
    """A one-worker cluster on 127.0.0.1 whose worker is another process (tasks are pickled)."""
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def _rows(db, table):
    with Warehouse(db, read_only=True) as wh:
        frame = wh.sql(f"SELECT * FROM {table}").drop(columns=VOLATILE)
    key = [c for c in ("metric", "metric_a", "metric_b", "level", "coefficient", "method", "proportion", "block")
           if c in frame.columns]
    return frame.sort_values(key).reset_index(drop=True)


def _executors(db) -> list[dict]:
    with Warehouse(db, read_only=True) as wh:
        return [json.loads(p)["executor"] for p in wh.sql("SELECT parameters FROM analysis_runs")["parameters"]]


def _copy(shared_warehouse, path):
    path.write_bytes(shared_warehouse.read_bytes())
    return path


def test_ci_and_compare_on_a_cluster_equal_a_local_run(shared_warehouse, tmp_path, scheduler):
    tables = {}
    for name, extra in (("local", ["--jobs", 1]), ("dask", ["--scheduler", scheduler])):
        db = _copy(shared_warehouse, tmp_path / f"{name}.duckdb")
        _cli(db, "ci", *COMMON, "--method", "boot-both", *extra)
        _cli(db, "compare", *COMMON, "--method", "perm-both", "--correction", "holm", *extra)
        tables[name] = {t: _rows(db, t) for t in ("confidence_intervals", "hypothesis_tests")}
        tables[name]["executors"] = _executors(db)
    assert len(tables["local"]["confidence_intervals"]) == 3 * 4 and len(tables["local"]["hypothesis_tests"]) == 6 * 4
    for t in ("confidence_intervals", "hypothesis_tests"):
        pd.testing.assert_frame_equal(tables["local"][t], tables["dask"][t])
    assert tables["local"]["executors"] == [{"kind": "local", "jobs": 1}] * 2
    assert tables["dask"]["executors"] == [{"kind": "dask", "scheduler": scheduler}] * 2


def test_simulations_on_a_cluster_from_the_environment_equal_a_local_run(shared_warehouse, tmp_path, scheduler,
                                                                         monkeypatch):
    tables = {}
    for name in ("local", "dask"):
        db = _copy(shared_warehouse, tmp_path / f"{name}.duckdb")
        if name == "dask":
            monkeypatch.setenv("METAEVAL_SCHEDULER", scheduler)
        _cli(db, *COVERAGE)
        _cli(db, *POWER)
        tables[name] = {t: _rows(db, t) for t in ("ci_coverage", "ci_coverage_blocks", "power", "power_blocks")}
        tables[name]["executors"] = _executors(db)
    for t in ("ci_coverage", "ci_coverage_blocks", "power", "power_blocks"):
        assert len(tables["local"][t]) > 0
        pd.testing.assert_frame_equal(tables["local"][t], tables["dask"][t])
    assert {e["kind"] for e in tables["local"]["executors"]} == {"local"}
    assert tables["dask"]["executors"] == [{"kind": "dask", "scheduler": scheduler}] * 2


def test_the_scheduler_option_holds_for_its_command_only(db, scheduler):
    from metaeval.runs import executors

    _cli(db, "demo", "--systems", 3, "--inputs", 3, "--k", 40)
    _cli(db, "ci", "--dataset", "demo", "--human", "expert.relevance", "--k", 40, "--force", "--scheduler", scheduler)
    assert executors.scheduler() is None
    with executors.using(scheduler):
        assert executors.describe(2) == {"kind": "dask", "scheduler": scheduler}
    assert executors.describe(2) == {"kind": "local", "jobs": 2}
