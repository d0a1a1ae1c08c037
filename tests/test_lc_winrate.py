"""`metaeval lc-winrate` (runs/votes/length_control.py): the stored rows equal the pure statistic on
the file's own numbers, reuse, refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval.analyses import length_control as lc
from metaeval.ingest import preferences
from metaeval.runs import Warehouse
from metaeval.errors import WarehouseError

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "alpaca.csv"


def test_rows_equal_the_statistic_on_the_files_numbers_and_are_reused(db):
    with Warehouse(db) as wh:
        preferences.ingest(wh, "alpaca", EXAMPLE, judge="gpt4")
        rows = wh.lc_winrate("alpaca", "baseline", judge="gpt4", k=50)
        again = wh.lc_winrate("alpaca", "baseline", judge="gpt4", k=50)
        runs = wh.sql("SELECT count(*) AS n FROM analysis_runs WHERE command = 'lc-winrate'")["n"][0]
    assert runs == 1 and again.equals(rows)
    raw = pd.read_csv(EXAMPLE)
    systems = sorted(raw["generator_2"].unique())
    for i, system in enumerate(systems):
        part = raw[raw["generator_2"] == system]
        y = part["preference"].map({1: 0.0, 2: 1.0, 1.5: 0.5}).to_numpy(float)
        lm, lb = part["length_2"].to_numpy(float), part["length_1"].to_numpy(float)
        r = lc.alpaca_lc(y, lm, lb)
        row = rows.set_index("system").loc[system]
        assert row["n_items"] == len(part) and row["winrate"] == pytest.approx(100 * y.mean())
        assert row["glm"] == r.glm == "length_controlled_minimal"
        assert row["lc_winrate"] == pytest.approx(r.lc_winrate, abs=1e-9)
        assert row["length_coefficient"] == pytest.approx(-r.length, abs=1e-9)
        assert row["standard_error"] == pytest.approx(100 * y.std(ddof=1) / np.sqrt(y.size))
        child = int(np.random.SeedSequence(0, spawn_key=(i,)).generate_state(1, np.uint64)[0])
        lower, upper, _ = lc.alpaca_bootstrap(y, lm, lb, None, None, r.C, 50, child, 0.05)
        assert (row["lower"], row["upper"]) == pytest.approx((lower, upper), abs=1e-9)
    assert list(rows["lc_winrate"]) == sorted(rows["lc_winrate"], reverse=True)     # best first


def test_refusals_name_the_option_and_write_nothing(db):
    with Warehouse(db) as wh:
        preferences.ingest(wh, "alpaca", EXAMPLE, judge="gpt4")
        with pytest.raises(WarehouseError, match="--baseline|baseline='nobody'"):
            wh.lc_winrate("alpaca", "nobody", judge="gpt4", k=50)
        with pytest.raises(WarehouseError, match="no human preferences"):
            wh.lc_winrate("alpaca", "baseline", k=50)
        with pytest.raises(WarehouseError, match="too small for a percentile interval"):
            wh.lc_winrate("alpaca", "baseline", judge="gpt4", k=10)
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == 0


def test_items_without_lengths_are_left_out_and_counted(db, tmp_path):
    path = tmp_path / "a.csv"
    raw = pd.read_csv(EXAMPLE)
    raw[raw["generator_2"] == "concise"].drop(columns=["length_1", "length_2"]).to_csv(path, index=False)
    with Warehouse(db) as wh:
        preferences.ingest(wh, "bare", path, judge="gpt4")
        rows = wh.lc_winrate("bare", "baseline", judge="gpt4", k=50)
    assert rows["n_items"].tolist() == [0] and rows[["winrate", "lc_winrate", "lower", "upper"]].isna().all().all()
    assert '"items_without_lengths": 80' in rows["conventions"][0]
