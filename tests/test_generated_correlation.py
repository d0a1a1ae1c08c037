"""correlate, ci, compare and simulate coverage|power are their families' generated commands
(issue 44 item 1): ``wh.<family>(...)`` returns the rows the command prints, carrying what the run
did; the command prints them from those rows alone; a bad value is refused alike."""

from __future__ import annotations

import json

import pytest

from metaeval.errors import WarehouseError
from metaeval.runs import Warehouse
from metaeval.runs.engine.families import FAMILIES
from metaeval.runs.engine.family_present import run_of
from tests.conftest import run_cli

D = ["--dataset", "demo", "--human", "expert.relevance"]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    db = tmp_path_factory.mktemp("generated") / "w.duckdb"
    run_cli(db, "demo", "--systems", "5", "--inputs", "8", "--k", "40")
    return db


def test_python_gets_the_printed_rows_with_their_run(small):
    printed = json.loads(run_cli(small, "ci", *D, "--level", "system", "--k", "60", "--format", "json").stdout)
    with Warehouse(small) as wh:
        rows = wh.ci("demo", "expert.relevance", levels=["system"], k=60)
    said = run_of(rows)
    assert said is not None and said.run == (f"confidence_intervals: all {len(rows)} results up to date; nothing "
                                             "computed (--force recomputes)",)
    # the very rows and columns the command printed (signature, human ceiling, pairs ranked wrongly)
    assert sorted(r["result_id"] for r in printed) == sorted(int(i) for i in rows["result_id"])
    assert set(printed[0]) == set(rows.columns)
    assert {"signature", "human_ceiling", "pairs_wrong_lower"} <= set(rows.columns)
    # the text is present's of those rows: the run line, then the ranking
    text = FAMILIES["ci"].present(rows, "text")
    assert text.startswith(said.run[0]) and "sim-high.f1" in text
    assert text in run_cli(small, "ci", *D, "--level", "system", "--k", "60").stdout


def test_compare_writes_its_heatmap_commands_as_the_command_line_does(small):
    out = run_cli(small, "compare", *D, "--level", "system", "--coefficient", "kendall", "--k", "40").stdout
    assert f"metaeval --db {small} plot heatmap --dataset demo" in out.replace(" \\\n     ", "")
    with Warehouse(small) as wh:
        rows = wh.compare("demo", "expert.relevance", levels=["system"], coefficients=["kendall"], k=40)
    [hint] = run_of(rows).heatmaps
    assert hint.command == "heatmap" and dict(hint.arguments)["out"] == "tests-system-kendall.png"
    shown = FAMILIES["compare"].present(rows, "text", hint=lambda h: "DRAW " + dict(h.arguments)["level"])
    assert "  DRAW system\n" in shown


def test_a_bad_proportions_list_is_refused_alike(small):
    message = "not a comma-separated list of numbers: '0.5,x'"
    with Warehouse(small) as wh:
        with pytest.raises(WarehouseError, match=message):
            wh.simulate_power("demo", "expert.relevance", proportions="0.5,x")
        with pytest.raises(WarehouseError, match="not a comma-separated"):
            wh.simulate_power("demo", "expert.relevance", proportions=[0.5, "x"])
    result = run_cli(small, "simulate", "power", *D, "--proportions", "0.5,x", ok=False)
    assert result.exit_code == 2 and f"Invalid value for '--proportions': {message}" in result.output


def test_simulate_coverage_prints_its_run_and_takes_a_format(small):
    args = ["simulate", "coverage", *D, "--metric", "sim-high.f1", "--coefficient", "pearson", "--level", "system",
            "--trials", "10", "--k", "40", "--ci-method", "fisher"]
    text = run_cli(small, *args).stdout
    assert text.startswith("ci_coverage: run ") and "z_test_p: one-tailed" in text
    result = run_cli(small, *args, "--format", "json")
    assert "up to date" in result.stderr
    rows = json.loads(result.stdout)
    with Warehouse(small) as wh:
        again = wh.simulate_coverage("demo", "expert.relevance", ["sim-high.f1"], coefficients=["pearson"],
                                     levels=["system"], trials=10, k=40, methods=["fisher"])
    assert run_of(again).up_to_date and [r["coverage"] for r in rows] == list(again["coverage"])
