"""The warehouse file: a DuckDB file that is not a warehouse is refused, never filled."""

from __future__ import annotations

import re

import duckdb
import pytest
from click.testing import CliRunner

from metaeval import ConflictError, Warehouse, WarehouseError, schema
from metaeval.cli import main
from metaeval.runs import demo
from tests.conftest import assert_same, snapshot


def _foreign(path, sql="CREATE TABLE orders (id INTEGER, total DOUBLE); INSERT INTO orders VALUES (1, 9.5)"):
    with duckdb.connect(str(path)) as con:
        con.execute(sql)
    return path


def _tables(path) -> list[str]:
    with duckdb.connect(str(path), read_only=True) as con:
        return sorted(r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall())


def _metaeval(path, *args):
    return CliRunner().invoke(main, ["--db", str(path), *map(str, args)], catch_exceptions=False)


@pytest.mark.parametrize("sql", ids=["table", "other-schema", "view", "schema_info-without-version",
                                     "schema_info-of-other-columns"], argvalues=[
    "CREATE TABLE orders (id INTEGER, total DOUBLE); INSERT INTO orders VALUES (1, 9.5)",
    "CREATE SCHEMA shop; CREATE TABLE shop.orders (id INTEGER)",
    "CREATE VIEW answer AS SELECT 42 AS x",
    "CREATE TABLE schema_info (key VARCHAR, value VARCHAR); INSERT INTO schema_info VALUES ('owner', 'me')",
    "CREATE TABLE schema_info (name VARCHAR)",
])
def test_init_refuses_a_foreign_duckdb_file(tmp_path, sql):
    path = _foreign(tmp_path / "other.duckdb", sql)
    before = _tables(path)
    result = _metaeval(path, "init")
    assert result.exit_code != 0
    assert f"{path} is a DuckDB file but not a metaeval warehouse" in result.output, result.output
    assert "Traceback" not in result.output and "--db" in result.output
    assert _tables(path) == before


@pytest.mark.parametrize("read_only", [True, False])
def test_opening_a_foreign_duckdb_file_is_refused(tmp_path, read_only):
    path = _foreign(tmp_path / "other.duckdb", "CREATE TABLE schema_info (key VARCHAR, value VARCHAR)")
    with pytest.raises(WarehouseError, match="not a metaeval warehouse .its schema_info table has no"):
        Warehouse(path, read_only=read_only)
    result = _metaeval(path, "datasets")
    assert result.exit_code != 0 and "not a metaeval warehouse" in result.output


def test_ingest_into_a_foreign_duckdb_file_is_refused(tmp_path):
    path = _foreign(tmp_path / "other.duckdb")
    table = tmp_path / "t.csv"
    table.write_text("system,input,measure,value\nA,d,m,1\n")
    result = _metaeval(path, "ingest", "table", table, "--dataset", "t")
    assert result.exit_code != 0 and "not a metaeval warehouse" in result.output
    assert _tables(path) == ["orders"]


def test_init_on_an_empty_duckdb_file_and_again(tmp_path):
    path = tmp_path / "empty.duckdb"
    duckdb.connect(str(path)).close()
    assert _metaeval(path, "init").exit_code == 0
    tables = _tables(path)
    assert "schema_info" in tables and "scores" in tables
    result = _metaeval(path, "init")
    assert result.exit_code == 0 and "Checked" in result.output
    assert _tables(path) == tables


# --- the demo's ingest ---------------------------------------------------------------------
def test_demo_conflict_says_what_to_do_without_replace(db, tmp_path):
    with Warehouse(db) as wh:
        first = demo.load(wh, "demo", tmp_path / "a", n_systems=4, n_inputs=5, seed=0)
        assert first.changed and first.contents == "80 scores, 60 judgments"
        assert not demo.load(wh, "demo", tmp_path / "b", n_systems=4, n_inputs=5, seed=0).changed
        before = snapshot(wh)
        with pytest.raises(ConflictError) as caught:
            demo.load(wh, "demo", tmp_path / "c", n_systems=4, n_inputs=5, seed=1)
        assert_same(before, snapshot(wh))
        assert demo.load(wh, "demo-1", tmp_path / "d", n_systems=4, n_inputs=5, seed=1).changed
    message = str(caught.value)
    assert "--replace" not in message and "--dataset NAME" in message and "--db PATH" in message
    assert "<demo seed=1 systems=4 inputs=5>:62: scores system=S00 input=D000 measure=sim-high.f1" in message


def test_ingests_format_comment_lists_the_formats_written(db, tmp_path):
    from metaeval.ingest import sacrerouge, summaries, table
    from metaeval.runs.scoring import score_dataset
    from tests.conftest import write_jsonl

    texts = write_jsonl(tmp_path / "s.jsonl", [{"instance_id": f"d{j}", "summarizer_id": f"s{i}",
                                                "summary": "the cat sat .", "references": [{"text": "a cat sat ."}]}
                                               for i in range(2) for j in range(2)])
    metrics = write_jsonl(tmp_path / "m.jsonl", [{"instance_id": "d0", "summarizer_id": "s0", "metrics": {"m": 1}}])
    long = tmp_path / "t.csv"
    long.write_text("system,input,measure,value\ns0,d0,t,1\n")
    with Warehouse(db) as wh:
        wh.load("t", [summaries.parse(texts), sacrerouge.parse(metrics), table.parse(long)])
        score_dataset(wh, "t", ["bleu"])
        demo.load(wh, "demo", tmp_path / "demo", n_systems=3, n_inputs=3)
        written = set(wh.sql("SELECT DISTINCT format FROM ingests")["format"])
    ddl = next(line for line in schema.read("04_ingests").splitlines() if line.strip().startswith("format"))
    documented = {re.sub(r"\(.*\)", "", f).strip() for f in ddl.split("--", 1)[1].split("|")}
    assert documented == written == {"sacrerouge", "summaries", "table", "score"}
