"""Set-up and the commands a new user runs first."""

from __future__ import annotations

import io
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner

import schema
from tests.conftest import ROOT, run_cli
from warehouse import Warehouse, WarehouseError
from warehouse.cli import main


def test_init_twice_is_harmless(tmp_path):
    db = tmp_path / "w.duckdb"
    runner = CliRunner()
    first = runner.invoke(main, ["--db", str(db), "init"])
    second = runner.invoke(main, ["--db", str(db), "init"])
    assert first.exit_code == 0 and "Created" in first.output
    assert second.exit_code == 0 and "Checked" in second.output


def test_db_from_environment(tmp_path, monkeypatch):
    db = tmp_path / "env.duckdb"
    monkeypatch.setenv("METAEVAL_DB", str(db))
    assert CliRunner().invoke(main, ["init"]).exit_code == 0
    assert db.exists()


def test_other_schema_version_is_refused(db):
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE schema_info SET value = '999' WHERE key = 'version'")
    try:
        Warehouse(db)
    except WarehouseError as exc:
        assert "schema version 999" in str(exc) and str(schema.SCHEMA_VERSION) in str(exc)
    else:
        raise AssertionError("a warehouse of another schema version was opened")
    result = CliRunner().invoke(main, ["--db", str(db), "datasets"])
    assert result.exit_code != 0 and "schema version 999" in result.output


def test_missing_warehouse_says_how_to_create_it(tmp_path):
    result = CliRunner().invoke(main, ["--db", str(tmp_path / "none.duckdb"), "datasets"])
    assert result.exit_code != 0 and "metaeval init" in result.output


def test_unknown_dataset_and_measure_name_what_exists(cli):
    cli("demo", "--systems", "4", "--inputs", "5")
    result = cli("matrix", "nope", "x", expect_ok=False)
    assert result.exit_code != 0 and "unknown dataset 'nope'" in result.output and "demo" in result.output
    result = cli("matrix", "demo", "x", expect_ok=False)
    assert result.exit_code != 0 and "no measure 'x'" in result.output and "sim-high.f1" in result.output


def test_demo_runs_the_pipeline_and_is_idempotent(cli, db):
    out = cli("demo", "--k", "200").output
    assert "compare: 48 results, computed 48" in out
    with Warehouse(db, read_only=True) as wh:
        first = wh.matrix("demo", "sim-low.f1").values
        ci = wh.sql("SELECT * FROM latest_confidence_intervals WHERE level = 'system' AND coefficient = 'pearson'"
                    " ORDER BY estimate DESC")
    assert first.shape == (12, 50)
    # the synthetic truth: the low-fidelity metric is last, and its printed CI is the stored one
    assert ci["metric"].iloc[-1] == "sim-low.f1"
    low = ci.iloc[-1]
    assert f"[{round(low.lower, 3)}, {round(low.upper, 3)}]" in out
    again = cli("demo", "--k", "200").output
    assert "nothing changed" in again and "compare: 48 results, up to date" in again


def test_every_command_has_help():
    runner = CliRunner()
    for args in (["--help"], ["init", "--help"], ["ingest", "--help"], ["ingest", "sacrerouge", "--help"],
                 ["ingest", "summaries", "--help"], ["ingest", "table", "--help"], ["datasets", "--help"],
                 ["measures", "--help"], ["matrix", "--help"], ["sql", "--help"], ["demo", "--help"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 0 and "Usage:" in result.output, args


# --- bad arguments are clear errors, never tracebacks ------------------------------------------
@pytest.mark.parametrize("seed", ["-1", str(2**63), "99999999999999999999"])
def test_seed_out_of_range_is_refused_before_any_run(cli, db, seed):
    cli("demo", "--systems", "4", "--inputs", "5", "--k", "20")
    with Warehouse(db, read_only=True) as wh:
        runs = len(wh.sql("SELECT * FROM analysis_runs"))
    for args in (["ci", "--dataset", "demo", "--human", "expert.relevance", "--level", "system"],
                 ["compare", "--dataset", "demo", "--human", "expert.relevance", "--level", "system"],
                 ["systems-agreement", "--dataset", "demo", "--human", "expert.relevance", "--test", "permutation"],
                 ["simulate", "coverage", "--dataset", "demo", "--human", "expert.relevance", "--metric", "*"],
                 ["demo", "--dataset", "other"]):
        result = cli(*args, "--seed", seed, expect_ok=False)
        assert result.exit_code == 2 and "--seed" in result.output and "is not in the range" in result.output, args
    with Warehouse(db, read_only=True) as wh:
        after = wh.sql("SELECT * FROM analysis_runs")
    assert len(after) == runs and set(after["status"]) == {"finished"}
    assert str(2**63 - 1) in cli("ci", "--help").output


def test_largest_seed_runs(cli, db):
    cli("demo", "--systems", "4", "--inputs", "5", "--k", "20", "--seed", str(2**63 - 1))
    with Warehouse(db, read_only=True) as wh:
        assert set(wh.sql("SELECT seed FROM analysis_runs WHERE seed IS NOT NULL")["seed"]) == {2**63 - 1}


def test_a_failing_run_is_marked_failed(cli, db, monkeypatch):
    from analyses import runner

    cli("demo", "--systems", "4", "--inputs", "5", "--k", "20")

    def broken(*args, **kwargs):
        raise RuntimeError("broken evaluation")

    monkeypatch.setattr(runner, "evaluate_ci", broken)
    with pytest.raises(RuntimeError, match="broken evaluation"):
        cli("ci", "--dataset", "demo", "--human", "expert.relevance", "--method", "fisher")
    with Warehouse(db, read_only=True) as wh:
        runs = wh.sql("SELECT command, status FROM analysis_runs ORDER BY run_id")
    assert list(runs["status"]) == ["finished"] * 3 + ["failed"] and runs["command"].iloc[-1] == "ci"


def test_demo_too_small_is_a_usage_error(cli):
    for args in (["--systems", "2"], ["--inputs", "1"]):
        result = cli("demo", *args, expect_ok=False)
        assert result.exit_code == 2 and "is not in the range x>=3" in result.output, result.output


def test_export_takes_the_format_from_the_suffix(cli, tmp_path):
    cli("demo", "--systems", "4", "--inputs", "5", "--k", "20")
    for name, read in (("c.csv", pd.read_csv), ("c.parquet", pd.read_parquet),
                       ("c.jsonl", lambda p: pd.read_json(p, lines=True))):
        cli("export", "correlations", "--out", tmp_path / name)
        assert len(read(tmp_path / name)) == 16


def test_export_and_results_of_analysis_runs_honour_dataset(cli, tmp_path):
    for name in ("a", "b"):
        cli("demo", "--dataset", name, "--systems", "4", "--inputs", "5", "--k", "20")
    cli("export", "analysis_runs", "--dataset", "a", "--out", tmp_path / "runs.csv")
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert len(runs) == 3 and all(json.loads(p)["dataset"] == "a" for p in runs["parameters"])
    shown = pd.read_csv(io.StringIO(cli("results", "analysis_runs", "--dataset", "b", "--format", "csv").output))
    assert len(shown) == 3 and all(json.loads(p)["dataset"] == "b" for p in shown["parameters"])
    cli("export", "analysis_runs", "--out", tmp_path / "all.csv")
    assert len(pd.read_csv(tmp_path / "all.csv")) == 6


def test_sql_is_read_only_and_touches_no_other_file(cli, tmp_path):
    cli("demo", "--systems", "4", "--inputs", "5", "--k", "20")
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n")
    for query in (f"COPY (SELECT * FROM measures) TO '{tmp_path / 'leak.csv'}'",
                  f"SELECT * FROM read_csv('{outside}')",
                  f"ATTACH '{tmp_path / 'other.duckdb'}' AS other",
                  "SET enable_external_access = true",
                  "INSERT INTO datasets (name) VALUES ('x')"):
        result = cli("sql", query, expect_ok=False)
        assert result.exit_code == 1 and "SQL error" in result.output, (query, result.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside.csv", "wh.duckdb"]
    assert "demo" in cli("sql", "SELECT name FROM datasets").output


# --- registration and start-up ------------------------------------------------------------------
def test_results_and_export_offer_every_result_table():
    from warehouse.cli import RESULT_TABLES

    tables = {"correlations", "confidence_intervals", "hypothesis_tests", "analysis_runs", "ci_coverage", "power",
              "normality", "pairwise_accuracy", "input_significance", "system_agreement", "winners",
              "replicability", "score_range_agreement", "input_properties", "property_agreement"}
    assert set(RESULT_TABLES) == tables
    for command in ("results", "export"):
        text = CliRunner().invoke(main, [command, "--help"], terminal_width=1000).output
        offered = set(re.search(r"\{([a-z_|]+)\}", text).group(1).split("|"))
        assert offered == tables, command


def test_help_imports_no_heavy_module():
    """`metaeval --help` loads neither scipy, matplotlib, the text metrics nor the analyses."""
    code = ("import sys\nfrom warehouse.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = ('scipy', 'matplotlib', 'analyses', 'analyses.text', 'nltk', 'sacrebleu')\n"
            "print('LOADED', [m for m in heavy if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "LOADED []" in out, out
