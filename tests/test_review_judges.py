"""Adversarial review of `metaeval judges` (issue 28): a setting asked again after a run of
another k, seed or set of judges returns its own rows (the latest view's key has neither)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from metaeval.runs import Warehouse as RunsWarehouse
from tests.conftest import run_cli

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "preferences.csv"


def test_a_setting_run_again_after_another_k_seed_or_judges_returns_its_own_rows(db, tmp_path):
    # a small slice of the example: 12 inputs
    frame = pd.read_csv(EXAMPLE)
    frame = frame[frame["input"].isin(sorted(frame["input"].unique())[:12])]
    path = tmp_path / "prefs.csv"
    frame.to_csv(path, index=False)
    run_cli(db, "ingest", "preferences", path, "--dataset", "p")
    with RunsWarehouse(db) as wh:
        first = wh.judges("p", k=40, seed=1)
        wh.judges("p", k=60, seed=1)
        wh.judges("p", k=40, seed=2)
        wh.judges("p", judges=["judge-consistent"], k=40, seed=1, ridge=0.5)
        again = wh.judges("p", k=40, seed=1)
        runs = wh.sql("SELECT count(*) AS n FROM analysis_runs WHERE command = 'judges'")["n"].iloc[0]
        unchanged = wh.judges("p", k=40, seed=1)
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs WHERE command = 'judges'")["n"].iloc[0] == runs
    for table in ("judge_statistics", "judge_tests", "preference_rankings"):
        for out in (again, unchanged):
            assert set(out[table]["k"].dropna()) == {40} and set(out[table]["seed"].dropna()) == {1}, table
    cols = ["judge", "accuracy", "accuracy_lower", "accuracy_upper", "kappa_lower"]
    pd.testing.assert_frame_equal(again["judge_statistics"][cols], first["judge_statistics"][cols])
    ranks = again["preference_rankings"]
    assert set(ranks["ridge"]) == {0.01}
