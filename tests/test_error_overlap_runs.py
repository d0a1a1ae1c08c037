"""error-overlap and rank-change persisted (runs/metrics/error_overlap.py, runs/systems/rank_change.py): the stored
rows against the pure computations on the system scores, reuse, refusals that write nothing."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from scipy import stats

from metaeval import Store
from metaeval.analyses.error_overlap import error_overlap
from tests.conftest import digest, run_cli

HUMAN = "expert.relevance"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    db = tmp_path_factory.mktemp("demo") / "w.duckdb"
    run_cli(db, "demo", "--dataset", "d", "--systems", "7", "--inputs", "10", "--k", "40")
    return db


@pytest.fixture
def db(demo, tmp_path):
    path = tmp_path / "w.duckdb"
    shutil.copy(demo, path)
    return path


def system_means(db, measure):
    with Store(db, read_only=True) as wh:
        m = wh.matrix("d", measure)
        direction = dict(zip(*wh.measure_kinds("d")[["measure", "direction"]].T.values))[measure]
        x = np.nanmean(m[measure], axis=1)
        return dict(zip(m.systems, -x if direction == "lower" else x))


def test_error_overlap_rows_equal_the_pure_table_and_are_reused(db):
    out = run_cli(db, "error-overlap", "--dataset", "d", "--human", HUMAN, "--metric", "sim-low.f1",
                  "--metric", "sim-divergence").output
    assert "McNemar" in out and "pairs" in out
    h, a, b = (system_means(db, m) for m in (HUMAN, "sim-low.f1", "sim-divergence"))
    systems = sorted(h)
    expected = error_overlap([h[s] for s in systems], [a[s] for s in systems], [b[s] for s in systems])
    with Store(db, read_only=True) as wh:
        row = wh.sql("SELECT * FROM latest_error_overlap").iloc[0]
    assert [row.both_correct, row.a_only_correct, row.b_only_correct, row.both_wrong] == expected.table.ravel().tolist()
    assert row.n_pairs == 21 == expected.table.sum()
    before = digest(db)
    run_cli(db, "error-overlap", "--dataset", "d", "--human", HUMAN, "--metric", "sim-low.f1",
            "--metric", "sim-divergence")
    assert digest(db) == before                                   # up to date: nothing written


def test_rank_change_rows_and_metric_vs_metric(db):
    run_cli(db, "rank-change", "--dataset", "d", "--metric", "sim-high.f1", "--metric", "sim-divergence")
    a, b = system_means(db, "sim-high.f1"), system_means(db, "sim-divergence")
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_rank_changes ORDER BY system")
    systems = list(rows["system"])
    assert rows["kendall"].iloc[0] == pytest.approx(stats.kendalltau([a[s] for s in systems],
                                                                     [b[s] for s in systems]).statistic)
    assert (rows["change"] == rows["position_b"] - rows["position_a"]).all()
    assert rows.loc[rows["score_a"].idxmax(), "position_a"] == 1


@pytest.mark.parametrize("args", [
    ["error-overlap", "--dataset", "d", "--human", HUMAN, "--metric", "sim-low.f1"],
    ["error-overlap", "--dataset", "d", "--human", HUMAN, "--metric", "sim-low.f1", "--metric", "nosuch"],
    ["rank-change", "--dataset", "d", "--metric", "sim-low.f1", "--metric", "sim-low.f1"],
    ["rank-change", "--dataset", "nosuch", "--metric", "a", "--metric", "b"],
])
def test_refusals_write_nothing(db, args):
    before = digest(db)
    result = run_cli(db, *args, ok=False)
    assert result.exit_code != 0 and len(result.output.strip().splitlines()) == 1, result.output
    assert digest(db) == before
