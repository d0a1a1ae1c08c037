"""Adversarial review of issue 26/28's subsets, partial correlations and detection: rows of a
subset never leak into what reads the rows of every cell, and subset labels never collide."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval import Store
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


def test_report_draws_each_subset_in_its_own_figure_never_mixed(factuality, tmp_path):
    common = ["--dataset", "factuality", "--human", HUMAN, "--level", "global", "--coefficient", "pearson",
              "--k", "100"]
    run_cli(factuality, "ci", *common)
    run_cli(factuality, "ci", *common, "--where", "split=test")
    run_cli(factuality, "compare", *common, "--method", "boot-both")
    run_cli(factuality, "compare", *common, "--method", "boot-both", "--where", "source=xsum")
    out = tmp_path / "report.html"
    run_cli(factuality, "report", "--dataset", "factuality", "--out", out)
    with Store(factuality, read_only=True) as wh:
        stored = wh.sql("SELECT subset, metric, estimate FROM latest_confidence_intervals")
    by_subset = {s: dict(zip(p["metric"], p["estimate"])) for s, p in stored.groupby("subset")}
    tables = _csv_tables(out.read_text())
    forests = [t for t in tables if "estimate" in t.columns]
    assert forests, "the report draws the intervals"
    drawn = []
    for t in forests:
        # each metric once, with the estimates of exactly one subset (every cell, or split=test)
        assert t["metric"].is_unique
        got = dict(zip(t["metric"], t["estimate"]))
        hit = [s for s, want in by_subset.items() if got.keys() == want.keys()
               and all(got[m] == pytest.approx(want[m]) for m in got)]
        assert len(hit) == 1, got
        drawn += hit
    assert set(drawn) == {"", "split=test"}


@pytest.mark.parametrize("row, field", [
    ("d00,k=v,z", "attribute"),          # 'k=v' = 'z' reads back as k = 'v=z': the subset label k=v=z of both
    ("d00,a & b,c", "attribute"),        # ' & ' joins the conditions of a subset label
    ("d00,a&b,c", "attribute"),
    ("d00,system,x", "attribute"),       # --control system groups by the system, never by this attribute
    ("d00,weird,*", "value"),            # weird=* is the label of --by weird's macro average
    ("d00,weird,x & y=z", "value"),      # weird=x & y=z is also the label of --where weird=x --where y=z
])
def test_attribute_names_and_values_that_would_make_subset_labels_collide_are_refused(db, tmp_path, row, field):
    frame = pd.DataFrame({"system": ["s1", "s2"], "input": ["d00", "d00"], "h": [1.0, 2.0], "m": [0.5, 0.1]})
    scores = tmp_path / "scores.csv"
    frame.to_csv(scores, index=False)
    run_cli(db, "ingest", "table", scores, "--dataset", "d", "--human", "h")
    path = tmp_path / "attributes.csv"
    path.write_text(f"input,attribute,value\nd00,ok,fine = yes\n{row}\n", encoding="utf-8")
    out = run_cli(db, "ingest", "attributes", path, "--dataset", "d", ok=False)
    assert out.exit_code != 0 and "Traceback" not in out.output
    assert f"{path}:3" in out.output and field in out.output and len(out.output.strip().splitlines()) == 1
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT count(*) AS n FROM attributes")["n"].iloc[0] == 0


def test_values_with_equals_signs_spaces_and_unicode_select_their_cells(db, tmp_path):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"system": ["s1", "s2", "s3"] * 4, "input": [f"d{j}" for j in range(4) for _ in range(3)],
                          "h": rng.normal(size=12), "m": rng.normal(size=12)})
    scores = tmp_path / "scores.csv"
    frame.to_csv(scores, index=False)
    run_cli(db, "ingest", "table", scores, "--dataset", "d", "--human", "h")
    path = tmp_path / "attributes.csv"
    path.write_text("input,attribute,value\nd0,src,a=b c\nd1,src,a=b c\nd2,src,ünï\nd3,src,ünï\n", encoding="utf-8")
    run_cli(db, "ingest", "attributes", path, "--dataset", "d")
    run_cli(db, "correlate", "--dataset", "d", "--human", "h", "--level", "global", "--coefficient", "pearson",
            "--where", "src=a=b c", "--metric", "m")
    with Store(db, read_only=True) as wh:
        row = wh.sql("SELECT subset, value FROM latest_correlations").iloc[0]
    assert row["subset"] == "src=a=b c"
    inside = frame[frame["input"].isin(["d0", "d1"])]
    assert row["value"] == pytest.approx(np.corrcoef(inside["m"], inside["h"])[0, 1])
