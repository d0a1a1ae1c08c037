"""A new warehouse is a copy of the schema template (warehouse/connection.py ``template``): the
same tables, views, columns, comments, sequences, indexes and schema version as the scripts
applied one by one; made once per set of scripts, never copied over an existing file."""

from __future__ import annotations

from pathlib import Path

import duckdb

from metaeval import Store, connection, schema

CATALOG = {
    "tables": "SELECT table_name, comment, sql FROM duckdb_tables() WHERE NOT internal ORDER BY ALL",
    "views": "SELECT view_name, comment, sql FROM duckdb_views() WHERE NOT internal ORDER BY ALL",
    "columns": "SELECT table_name, column_name, column_index, data_type, column_default, is_nullable, comment "
               "FROM duckdb_columns() WHERE NOT internal ORDER BY ALL",
    "sequences": "SELECT sequence_name, start_value, increment_by, last_value FROM duckdb_sequences() ORDER BY ALL",
    "indexes": "SELECT index_name, table_name, sql FROM duckdb_indexes() ORDER BY ALL",
    "constraints": "SELECT table_name, constraint_type, constraint_text FROM duckdb_constraints() ORDER BY ALL",
    "schema_info": "SELECT * FROM schema_info ORDER BY ALL",
}


def _catalog(path: Path) -> dict:
    with connection.duckdb_connect(path, read_only=True) as con:
        return {name: con.execute(sql).fetchall() for name, sql in CATALOG.items()}


def test_a_copy_of_the_template_is_the_scripts_warehouse(tmp_path, monkeypatch):
    monkeypatch.setenv(connection.CACHE_VAR, str(tmp_path / "cache"))
    copied = tmp_path / "copied.duckdb"
    Store.create(copied).close()
    templates = list((tmp_path / "cache").glob("schema-*.duckdb"))
    assert len(templates) == 1 and not list((tmp_path / "cache").glob(".*"))   # nothing left of its making
    monkeypatch.setattr(connection, "template", lambda: None)
    scripted = tmp_path / "scripted.duckdb"
    Store.create(scripted).close()
    assert _catalog(copied) == _catalog(scripted)
    assert len(_catalog(copied)["columns"]) > 500


def test_the_template_is_made_once_per_set_of_scripts(tmp_path, monkeypatch):
    monkeypatch.setenv(connection.CACHE_VAR, str(tmp_path / "cache"))
    first = connection.template()
    made = first.stat().st_mtime_ns
    Store.create(tmp_path / "a.duckdb").close()
    assert connection.template() == first and first.stat().st_mtime_ns == made
    scripts = schema.ddl_scripts()
    monkeypatch.setattr(schema, "ddl_scripts", lambda: [*scripts, ("99_extra.sql", "CREATE TABLE extra (x INTEGER)")])
    second = connection.template()
    assert second != first
    Store.create(tmp_path / "b.duckdb").close()
    with connection.duckdb_connect(tmp_path / "b.duckdb", read_only=True) as con:
        assert con.execute("SELECT count(*) FROM extra").fetchall() == [(0,)]


def test_an_existing_file_is_never_replaced_by_the_template(tmp_path, monkeypatch):
    monkeypatch.setenv(connection.CACHE_VAR, str(tmp_path / "cache"))
    path = tmp_path / "wh.duckdb"
    Store.create(path).close()
    with Store(path) as wh:
        wh.con.execute("INSERT INTO datasets (name) VALUES ('kept')")
    assert connection._copy_template(path) is False
    Store.create(path).close()           # an existing warehouse: brought up to date in place
    with Store(path, read_only=True) as wh:
        assert wh.con.execute("SELECT name FROM datasets").fetchall() == [("kept",)]


def test_without_a_cache_directory_the_scripts_are_applied(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(connection.CACHE_VAR, str(blocker / "cache"))
    assert connection.template() is None
    Store.create(tmp_path / "wh.duckdb").close()
    with duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True) as con:
        assert con.execute("SELECT value FROM schema_info WHERE key = 'version'").fetchall() == [
            (str(schema.SCHEMA_VERSION),)]
