"""Everyday command lines (issue 27, item 5): ``--db`` at any position, ``-`` reads standard
input (``ingest table -``, ``evaluate -``), and ``.tsv`` files read like ``.csv`` with a tab on
every reader path of the table ingest."""

from __future__ import annotations

import io
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval import Store
from metaeval.cli import main
from metaeval.cli import stdin as stdin_module
from metaeval.errors import InputError
from metaeval.ingest import table
from tests.conftest import digest, run_cli
from tests.test_ingest_staged import TRICKY_CSV, _agree_or_step_aside, _both, _cells

HUMAN = "expert.relevance"
LONG = "system,input,measure,value\ns1,d1,m,0.5\ns2,d1,m,0.25\ns1,d2,m,1\n"


def invoke(args, **kwargs):
    return CliRunner().invoke(main, [str(a) for a in args], **kwargs)


# --- --db at any position ------------------------------------------------------------------------
def test_db_after_the_command_means_the_same_as_before_it(db, tmp_path):
    table_file = tmp_path / "t.csv"
    table_file.write_text(LONG)
    assert invoke(["ingest", "table", table_file, "--dataset", "x", "--db", db]).exit_code == 0
    after = invoke(["datasets", "--db", db, "--format", "csv"])
    before = invoke(["--db", db, "datasets", "--format", "csv"])
    assert after.exit_code == 0 and after.output == before.output and "x," in after.output
    assert invoke(["measures", "x", "--db", db]).exit_code == 0
    assert invoke(["ingest", "--db", db, "table", table_file, "--dataset", "x"]).exit_code == 0  # a group's too


def test_db_after_the_command_wins_over_the_environment_and_is_repeated_in_hints(tmp_path, monkeypatch):
    monkeypatch.setenv("METAEVAL_DB", str(tmp_path / "env.duckdb"))
    missing = tmp_path / "given.duckdb"
    result = invoke(["datasets", "--db", missing])
    assert result.exit_code == 1 and f"no warehouse at {missing}: create it with `metaeval --db {missing} init`" \
        in result.output
    assert invoke(["init", "--db", missing]).exit_code == 0 and missing.exists()
    assert not (tmp_path / "env.duckdb").exists()


def test_db_given_twice_must_name_the_same_file(db, tmp_path, monkeypatch):
    monkeypatch.chdir(db.parent)
    assert invoke(["--db", db, "datasets", "--db", db.name]).exit_code == 0   # the same file, spelled otherwise
    other = tmp_path / "other.duckdb"
    before = digest(db)
    result = invoke(["--db", db, "drop", "dataset", "x", "--db", other])
    assert result.exit_code == 2 and "--db is given twice with different warehouses" in result.output
    assert str(db) in result.output and str(other) in result.output and not other.exists()
    assert digest(db) == before


# --- - reads standard input ----------------------------------------------------------------------
@pytest.fixture
def no_leftovers(tmp_path, monkeypatch):
    """Standard input's temporary copies go under tmp_path/tmp: the test checks none is left."""
    directory = tmp_path / "tmp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    yield directory
    assert list(directory.iterdir()) == []


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "parquet"])
@pytest.mark.parametrize("hint", [False, True])
def test_ingest_table_reads_standard_input_of_each_format(db, tmp_path, no_leftovers, fmt, hint):
    frame = pd.read_csv(io.StringIO(LONG))
    data = {"csv": LONG.encode(), "tsv": LONG.replace(",", "\t").encode(),
            "jsonl": frame.to_json(orient="records", lines=True).encode()}
    if fmt == "parquet":
        frame.to_parquet(tmp_path / "t.parquet", index=False)
        data["parquet"] = (tmp_path / "t.parquet").read_bytes()
    args = ["--db", db, "ingest", "table", "-", "--dataset", "x", *(["--format", fmt] if hint else [])]
    result = invoke(args, input=data[fmt])
    assert result.exit_code == 0, result.output
    assert result.output == "<stdin>: read 3 scores, inserted 3\n"
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT system, input, value FROM cells ORDER BY ALL").values.tolist() == [
            ["s1", "d1", 0.5], ["s1", "d2", 1.0], ["s2", "d1", 0.25]]
        assert wh.sql("SELECT file FROM ingests")["file"].tolist() == ["<stdin>"]


def test_standard_input_errors_name_stdin_line_and_field_and_write_nothing(db, no_leftovers):
    before = digest(db)
    result = invoke(["--db", db, "ingest", "table", "-", "--dataset", "x"], input=LONG + "s3,d1,m,oops\n")
    assert result.exit_code == 1 and result.output == "Error: <stdin>:5: field 'value': expected a number, got 'oops'\n"
    empty = invoke(["--db", db, "ingest", "table", "-", "--dataset", "x"], input="")
    assert empty.exit_code == 1 and "<stdin>: the file is empty" in empty.output
    assert digest(db) == before


def test_standard_input_with_files_is_read_once(db, tmp_path, no_leftovers):
    other = tmp_path / "o.tsv"
    other.write_text("system\tinput\tn\ns1\td1\t2\n")
    result = invoke(["--db", db, "ingest", "table", other, "-", "--dataset", "x", "--allow-new"], input=LONG)
    assert result.exit_code == 0 and "<stdin>: read 3 scores" in result.output and "o.tsv: read 1 score" in result.output
    twice = invoke(["--db", db, "ingest", "table", "-", "-", "--dataset", "x"], input=LONG)
    assert twice.exit_code == 2 and "given 2 times: it can be read once" in twice.output
    hint = invoke(["--db", db, "ingest", "table", other, "--format", "csv", "--dataset", "x"])
    assert hint.exit_code == 2 and "--format is the format of - (standard input)" in hint.output


def test_format_is_sniffed_from_the_first_bytes():
    assert stdin_module.sniff(b"PAR1....") == "parquet"
    assert stdin_module.sniff(b"\xef\xbb\xbf\n  {\"system\": 1}") == "jsonl"
    assert stdin_module.sniff(b"system\tinput\tm\n") == "tsv"
    assert stdin_module.sniff(b"system,input,m\ns1,a\tb,1\n") == "csv"


@pytest.fixture(scope="module")
def demo_warehouse(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("demo") / "w.duckdb"
    run_cli(db, "demo", "--dataset", "d", "--systems", "4", "--inputs", "5", "--k", "40")
    return db


def test_evaluate_reads_standard_input(demo_warehouse, tmp_path, no_leftovers):
    db = tmp_path / "w.duckdb"
    shutil.copy(demo_warehouse, db)
    with Store(db, read_only=True) as wh:
        cells = wh.sql("SELECT system, input, value * 2 + 0.01 AS mine FROM cells WHERE measure = 'sim-low.f1'")
    tsv = cells.to_csv(sep="\t", index=False)
    args = ["--db", db, "evaluate", "d:-", "--dataset", "d", "--human", HUMAN, "--k", "40", "--level", "system",
            "--coefficient", "kendall", "--format", "csv"]
    result = CliRunner().invoke(main, [str(a) for a in args], input=tsv)
    assert result.exit_code == 0, result.output
    assert "d,expert.relevance,mine,True,system,kendall," in result.stdout
    with Store(db, read_only=True) as wh:
        assert "<stdin>" in wh.sql("SELECT file FROM ingests")["file"].tolist()
        assert len(wh.matrix("d", "mine").systems) == 4
    bad = invoke(["--db", db, "evaluate", "-", "--dataset", "d", "--human", HUMAN, "--k", "40"],
                 input="system,input,other\nS00,D000,x\n")
    assert bad.exit_code == 1 and bad.output.startswith("Error: <stdin>:2: field 'other'"), bad.output


# --- .tsv on every reader path ---------------------------------------------------------------------
def _tsv(content: str) -> str:
    return content.replace(",", "\t")


TSV_CASES = sorted(n for n, c in TRICKY_CSV.items() if c is not None and "\t" not in c)


@pytest.mark.parametrize("name", TSV_CASES)
def test_tsv_is_read_as_the_csv_with_tabs_by_duckdb_and_by_the_exact_reader(db, tmp_path, name):
    """The same cells or the same error (line and field) as the CSV file, from parse and from the
    streamed exact reader; and DuckDB's reading agrees with them or steps aside."""
    csv_file, tsv_file = tmp_path / "t.csv", tmp_path / "t.tsv"
    csv_file.write_bytes(TRICKY_CSV[name].encode())
    tsv_file.write_bytes(_tsv(TRICKY_CSV[name]).encode())
    human = ["expert", "h"] if "human" in name or "kind" in name else []
    with Store(db) as wh:
        _agree_or_step_aside(wh, *_both(wh, tsv_file, human=human))
        results = []
        for path in (csv_file, tsv_file):
            try:
                results.append(_cells(wh, table.parse(path, human=human)))
            except InputError as exc:
                results.append((exc.line, exc.field))
            try:
                batch = table.stage_exact(wh.con, path, human=human)
                results.append(_cells(wh, batch))
                wh.con.execute(f"DROP TABLE {batch.cells_table}")
            except InputError as exc:
                results.append((exc.line, exc.field))
        assert results[0] == results[1] == results[2] == results[3]


@pytest.mark.parametrize("name", ["plain", "kind and annotator", "no input column", "wide", "wide human"])
def test_clean_tsv_files_are_read_by_duckdb(db, tmp_path, name):
    """The fast path is taken for ordinary TSV files, as for CSV."""
    path = tmp_path / "t.tsv"
    path.write_text(_tsv(TRICKY_CSV[name]))
    human = ["expert", "h"] if "human" in name or "kind" in name else []
    with Store(db) as wh:
        staged = table.stage(wh.con, path, human=human)
        assert _cells(wh, staged) == _cells(wh, table.parse(path, human=human))
        table.drop_staged(wh.con, [staged])


def test_tsv_ingest_and_its_errors(db, cli, tmp_path):
    good = tmp_path / "good.TSV"
    good.write_text(_tsv(LONG))
    assert "good.TSV: read 3 scores, inserted 3" in cli("ingest", "table", good, "--dataset", "x").output
    bad = tmp_path / "bad.tsv"
    bad.write_text("system\tinput\tmeasure\tvalue\ns1\td1\tm\t0.5\textra\n")
    before = digest(db)
    result = cli("ingest", "table", bad, "--dataset", "x", expect_ok=False)
    assert result.exit_code == 1 and result.output == f"Error: {bad}:2: 5 fields, the header has 4\n"
    assert digest(db) == before
