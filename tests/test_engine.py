"""The engine's registry of result tables (metaeval.schema.RESULT_TABLES) and its one reader."""

from metaeval import schema
from metaeval.core import Warehouse


def test_every_registered_table_and_view_exists(tmp_path):
    with Warehouse.create(tmp_path / "wh.duckdb") as wh:
        names = set(wh.sql("SELECT table_name AS name FROM duckdb_tables() UNION ALL "
                           "SELECT view_name FROM duckdb_views() WHERE NOT internal")["name"])
    for table, view in schema.RESULT_TABLES.items():
        assert table in names and view in names, (table, view)
    # every table with a latest_* view is registered
    assert {n[len("latest_"):] for n in names if n.startswith("latest_")} <= set(schema.RESULT_TABLES)
