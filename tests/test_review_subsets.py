"""Adversarial review of issue 26/28's subsets, partial correlations and detection: rows of a
subset never leak into what reads the rows of every cell, and subset labels never collide."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pandas as pd
import pytest

from metaeval import Warehouse
from tests.conftest import run_cli

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "factuality"
HUMAN = "human.consistency"


@pytest.fixture
def factuality(db):
    run_cli(db, "ingest", "table", EXAMPLE / "scores.csv", "--dataset", "factuality", "--human", "human.*")
    run_cli(db, "ingest", "attributes", EXAMPLE / "attributes.csv", "--dataset", "factuality")
    return db


def _csv_tables(html: str) -> list[pd.DataFrame]:
    """The tables behind the report's figures (its CSV downloads)."""
    import io

    return [pd.read_csv(io.StringIO(base64.b64decode(m).decode()))
            for m in re.findall(r'href="data:text/csv;base64,([^"]+)"', html)]


def test_report_draws_the_rows_of_every_cell_not_those_of_a_subset(factuality, tmp_path):
    common = ["--dataset", "factuality", "--human", HUMAN, "--level", "global", "--coefficient", "pearson",
              "--k", "100"]
    run_cli(factuality, "ci", *common)
    run_cli(factuality, "ci", *common, "--where", "split=test")
    run_cli(factuality, "compare", *common, "--method", "boot-both")
    run_cli(factuality, "compare", *common, "--method", "boot-both", "--where", "source=xsum")
    out = tmp_path / "report.html"
    run_cli(factuality, "report", "--dataset", "factuality", "--out", out)
    with Warehouse(factuality, read_only=True) as wh:
        every = wh.sql("SELECT metric, estimate FROM latest_confidence_intervals WHERE subset = ''")
    tables = _csv_tables(out.read_text())
    forests = [t for t in tables if "estimate" in t.columns]
    assert forests, "the report draws the intervals"
    for t in forests:
        # each metric once, with the estimate of every cell (not the split=test subset's)
        assert t["metric"].is_unique
        assert dict(zip(t["metric"], t["estimate"])) == pytest.approx(dict(zip(every["metric"], every["estimate"])))
