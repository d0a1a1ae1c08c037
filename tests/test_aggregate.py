"""A system's score as the median over its inputs (issue 33 item 9; Graham 2015's median variants):
persist.system_scores, rank-change and error-overlap; recorded in the fingerprint, the
conventions, the run's parameters and the signature only when it is not the mean."""

from __future__ import annotations

import json

import numpy as np
import pytest

from metaeval import Store
from metaeval.errors import WarehouseError
from metaeval.runs import persist, signatures

from .conftest import run_cli


@pytest.fixture
def holes(tmp_path):
    """6 systems x 7 inputs, two metrics and a human score, some cells missing."""
    rng = np.random.default_rng(11)
    lines, cells = [], {}
    for s in range(6):
        for i in range(7):
            if (s + i) % 5 == 0:
                continue        # a missing cell: each system's median over the inputs it has
            row = {"m1": rng.normal(), "m2": rng.normal(), "human": rng.normal()}
            cells[(s, i)] = row
            lines.append(f"s{s},{i},{row['m1']!r},{row['m2']!r},{row['human']!r}")
    csv = tmp_path / "holes.csv"
    csv.write_text("system,input,m1,m2,human\n" + "\n".join(lines) + "\n")
    db = tmp_path / "h.duckdb"
    Store.create(db).close()
    run_cli(db, "ingest", "table", csv, "--dataset", "h", "--human", "human")
    return db, cells


def _loop(cells, measure, how):
    out = []
    for s in range(6):
        values = [cells[(s, i)][measure] for i in range(7) if (s, i) in cells]
        out.append(float(np.median(values)) if how == "median" else float(np.mean(values)))
    return np.array(out)


def test_median_system_scores_against_a_loop_and_the_mean_as_before(holes):
    db, cells = holes
    with Store(db) as wh:
        systems, mean, fp_mean, conv_mean = persist.system_scores(wh, "h", ["m1", "m2"])
        _, median, fp_median, conv_median = persist.system_scores(wh, "h", ["m1", "m2"], aggregate="median")
        with pytest.raises(WarehouseError, match="unknown aggregate='mode'"):
            persist.system_scores(wh, "h", ["m1"], aggregate="mode")
    assert systems == tuple(f"s{s}" for s in range(6))
    for m in ("m1", "m2"):
        np.testing.assert_allclose(median[m], _loop(cells, m, "median"), rtol=0, atol=1e-12)
        np.testing.assert_allclose(mean[m], _loop(cells, m, "mean"), rtol=0, atol=1e-12)
    assert fp_mean != fp_median and "aggregate" not in conv_mean and conv_median["aggregate"] == "median"
    assert np.isnan(persist.system_medians(np.array([[np.nan, np.nan], [1.0, 3.0]]))[0])


def test_rank_change_median_rows_signature_and_run_parameters(holes):
    db, cells = holes
    common = ["rank-change", "--dataset", "h", "--metric", "m1", "--metric", "m2", "--format", "csv"]
    run_cli(db, *common)
    run_cli(db, *common, "--aggregate", "median")
    with Store(db) as wh:
        rows = wh.sql("SELECT * FROM rank_changes ORDER BY run_id, system")
        runs = wh.sql("SELECT parameters FROM analysis_runs ORDER BY run_id")["parameters"].map(json.loads).tolist()
        signed = signatures.with_signatures(wh, rows)
    first, second = rows[rows["run_id"] == rows["run_id"].min()], rows[rows["run_id"] == rows["run_id"].max()]
    np.testing.assert_allclose(first["score_a"], _loop(cells, "m1", "mean"))
    np.testing.assert_allclose(second["score_a"], _loop(cells, "m1", "median"))
    assert set(first["fingerprint"]).isdisjoint(set(second["fingerprint"]))
    assert "aggregate" not in runs[0] and runs[1]["aggregate"] == "median"
    assert signed["signature"].str.contains("agg:median").tolist() == [False] * 6 + [True] * 6
