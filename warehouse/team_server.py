"""The team warehouse's server (:mod:`metaeval.team`): its connection, the schema it keeps and
what both directions share.

The server keeps the warehouse in a schema of its own (:data:`SERVER_SCHEMA`), whose tables are
made through SQLAlchemy Core from the warehouse's own table definitions (:func:`server_metadata`
reads DuckDB's catalog: the same columns, types, keys and unique names; no second copy of the
schema), with the ``latest_*`` views made from the same ``schema/*.sql`` text
(:func:`postgres_view`), so that any PostgreSQL client reads the team's results with plain SQL.

The password is never printed: URLs are shown masked (:func:`mask`) and the server's error
messages have it removed (:func:`_scrub`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from metaeval import schema
from metaeval.errors import WarehouseError, one_line

if TYPE_CHECKING:
    import duckdb
    import sqlalchemy

#: The schema of the server holding the team warehouse.
SERVER_SCHEMA = "metaeval"


#: The oldest PostgreSQL server accepted (``server_version_num``): 14.
FLOOR = 140000


#: The key of the advisory lock every push holds for its transaction.
LOCK_KEY = 0x6D657461  # "meta"


#: The data tables a push copies, in the order they are merged (entities before what refers to them).
DATA_TABLES = ("datasets", "systems", "inputs", "measures", "documents", "references", "summaries", "scores",
               "judgments", "attributes", "preferences", "error_spans", "bleu_statistics")


#: Entities: their id column and the columns naming one (its unique key).
ENTITIES = {"datasets": ("dataset_id", ("name",)), "systems": ("system_id", ("dataset_id", "name")),
            "inputs": ("input_id", ("dataset_id", "name")), "measures": ("measure_id", ("dataset_id", "name"))}


#: Columns holding another table's internal id.
REFERENCES = {"dataset_id": "datasets", "system_id": "systems", "system_a_id": "systems", "system_b_id": "systems",
              "input_id": "inputs", "measure_id": "measures", "run_id": "analysis_runs"}


#: The key of the data tables whose catalog declares none (warehouse/merge.py's keys of a value).
KEYS = {"scores": ("system_id", "input_id", "measure_id", "replicate"), "judgments": ("system_id", "input_id", "measure_id",
                                                                        "annotator"),
        "preferences": ("dataset_id", "input_id", "system_a_id", "system_b_id", "judge", "presentation", "replicate")}


#: Entity columns not compared (when it was created on each side).
UNCOMPARED = {"datasets": ("created_at",)}


def mask(url: str | sqlalchemy.URL) -> str:
    """``url`` with its password shown as ``***``."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL: show its scheme only
        return re.sub(r"//.*", "//...", str(url))


def _url(url: str) -> sqlalchemy.URL:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        raise WarehouseError(f"{mask(url)} is not a database URL: give postgresql://USER@HOST[:PORT]/DATABASE") from None
    if parsed.get_backend_name() != "postgresql":
        raise WarehouseError(f"{mask(url)} is not a PostgreSQL URL: give postgresql://USER@HOST[:PORT]/DATABASE")
    return parsed.set(drivername="postgresql+psycopg")


def _scrub(message: str, url: sqlalchemy.URL) -> str:
    text = one_line(message)
    if url.password:
        text = text.replace(str(url.password), "***")
    return text


def server_version_num(raw) -> int:
    """The server's ``server_version_num`` (e.g. 150018 for 15.18)."""
    with raw.cursor() as cur:
        cur.execute("SELECT current_setting('server_version_num')::int")
        return cur.fetchone()[0]


class Server:
    """A connection to the team's server, its version checked; a context manager."""

    def __init__(self, url: str, application: str = "metaeval"):
        import sqlalchemy

        self.url = _url(url)
        self.shown = mask(self.url.set(drivername=self.url.get_backend_name()))
        engine = sqlalchemy.create_engine(self.url, poolclass=sqlalchemy.pool.NullPool,
                                          connect_args={"application_name": application, "connect_timeout": 10})
        try:
            self.conn = engine.connect()
        except sqlalchemy.exc.DBAPIError as exc:
            raise WarehouseError(f"cannot connect to {self.shown}: {_scrub(str(exc.orig), self.url)}") from None
        self.raw = self.conn.connection.driver_connection
        try:
            version = server_version_num(self.raw)
        except Exception:
            self.conn.close()
            raise
        if version < FLOOR:
            self.conn.close()
            raise WarehouseError(f"{self.shown} is PostgreSQL {version // 10000}.{version % 10000}; a team warehouse "
                                 f"needs PostgreSQL {FLOOR // 10000} or later")
        self.schema = SERVER_SCHEMA

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.conn.close()

    def q(self, table: str) -> str:
        return f'"{self.schema}"."{table}"'

    def exists(self) -> bool:
        with self.raw.cursor() as cur:
            cur.execute("SELECT to_regclass(%s) IS NOT NULL", [f'"{self.schema}"."schema_info"'])
            return cur.fetchone()[0]

    def error(self, exc: Exception) -> WarehouseError:
        return WarehouseError(f"{self.shown}: {_scrub(str(exc), self.url)}; nothing was written")


def _catalog(con: duckdb.DuckDBPyConnection, tables: list[str]) -> dict[str, dict]:
    """Each table's columns (name, DuckDB type, nullable), primary key and unique keys, from DuckDB's catalog."""
    out: dict[str, dict] = {t: {"columns": [], "primary": (), "unique": []} for t in tables}
    for table, column, type_, nullable in con.execute(
            """SELECT table_name, column_name, data_type, is_nullable FROM duckdb_columns()
               WHERE schema_name = 'main' AND list_contains(?, table_name) ORDER BY table_name, column_index""",
            [tables]).fetchall():
        out[table]["columns"].append((column, type_, nullable))
    for table, kind, columns in con.execute(
            """SELECT table_name, constraint_type, constraint_column_names FROM duckdb_constraints()
               WHERE schema_name = 'main' AND list_contains(?, table_name)
                 AND constraint_type IN ('PRIMARY KEY', 'UNIQUE') ORDER BY table_name, constraint_index""",
            [tables]).fetchall():
        if kind == "PRIMARY KEY":
            out[table]["primary"] = tuple(columns)
        else:
            out[table]["unique"].append(tuple(columns))
    return out


def result_tables() -> list[str]:
    """The result tables (``schema.RESULT_TABLES`` but ``analysis_runs``)."""
    return [t for t in schema.RESULT_TABLES if t != "analysis_runs"]


def _sql_type(table: str, column: str, duck: str):
    from sqlalchemy import ARRAY, BigInteger, Boolean, DateTime, Double, Integer, SmallInteger, Text
    from sqlalchemy.dialects.postgresql import JSON

    types = {"VARCHAR": Text, "INTEGER": Integer, "BIGINT": BigInteger, "SMALLINT": SmallInteger,
             "DOUBLE": Double, "BOOLEAN": Boolean, "JSON": JSON, "TIMESTAMP WITH TIME ZONE": lambda: DateTime(True)}
    if duck.endswith("[]") and duck[:-2] in types:
        return ARRAY(types[duck[:-2]]())
    if duck not in types:
        raise WarehouseError(f"the team warehouse has no PostgreSQL type for {table}.{column} ({duck})")
    return types[duck]()


def server_metadata(con: duckdb.DuckDBPyConnection, schema_name: str = SERVER_SCHEMA) -> sqlalchemy.MetaData:
    """The server's tables as SQLAlchemy Core defines them, read from the warehouse ``con``'s
    catalog: every data table (:data:`DATA_TABLES`), ``analysis_runs``, every result table and
    ``schema_info``, with the same columns, types, nullability, primary and unique keys; the id
    of an entity, a run and a result row an identity of the server's. Plus the server's own
    ``pushes`` (who pushed what, when) and ``pushed_parts`` (what content each push brought)."""
    from sqlalchemy import (BigInteger, Column, DateTime, Identity, Integer, MetaData, PrimaryKeyConstraint, Table,
                            Text, UniqueConstraint, func)
    from sqlalchemy.dialects.postgresql import JSON

    tables = ["schema_info", *DATA_TABLES, "analysis_runs", *result_tables()]
    catalog = _catalog(con, tables)
    md = MetaData(schema=schema_name)
    for table in tables:
        info = catalog[table]
        if not info["columns"]:
            raise WarehouseError(f"the warehouse has no table {table}")
        generated = {ENTITIES[table][0]} if table in ENTITIES else {"run_id"} if table == "analysis_runs" else \
            {"result_id"} if table in schema.RESULT_TABLES else set()
        columns = [Column(name, _sql_type(table, name, type_), *([Identity()] if name in generated else []),
                          nullable=nullable and name not in info["primary"])
                   for name, type_, nullable in info["columns"]]
        keys = ([PrimaryKeyConstraint(*info["primary"])] if info["primary"] else []) + \
            [UniqueConstraint(*u) for u in info["unique"]]
        Table(table, md, *columns, *keys)
    Table("pushes", md,
          Column("push_id", Integer, Identity(), primary_key=True),
          Column("pushed_at", DateTime(True), nullable=False, server_default=func.now()),
          Column("server_user", Text, nullable=False, server_default=func.current_user()),
          Column("client_user", Text), Column("client_host", Text), Column("warehouse", Text),
          Column("version", Text, nullable=False), Column("datasets", JSON, nullable=False),
          Column("rows", JSON, nullable=False, comment="rows added, per dataset and table"))
    Table("pushed_parts", md,
          Column("dataset", Text, nullable=False), Column("part", Text, nullable=False),
          Column("digest", Text, nullable=False), Column("push_id", Integer, nullable=False),
          Column("rows", BigInteger, nullable=False),
          PrimaryKeyConstraint("dataset", "part", "digest"))
    return md


_EXCLUDE = re.compile(r"\*\s+EXCLUDE\s*\(([^)]*)\)", re.I)


def postgres_view(sql: str, columns: list[str]) -> str:
    """One ``CREATE OR REPLACE VIEW latest_T`` statement of ``schema/*.sql`` (DuckDB's SQL) as
    PostgreSQL's: ``* EXCLUDE (...)`` becomes the table's ``columns`` (the columns it leaves out
    are the window's), and a subquery in FROM gets the alias PostgreSQL < 16 requires."""
    sql = _EXCLUDE.sub(", ".join(f'"{c}"' for c in columns), sql)
    out, i, n = [], 0, 0
    for m in re.finditer(r"\bFROM\s*\(", sql, re.I):
        if m.start() < i:
            continue
        depth, j = 0, m.end() - 1
        while j < len(sql):
            depth += {"(": 1, ")": -1}.get(sql[j], 0)
            if depth == 0:
                break
            j += 1
        following = sql[j + 1:].lstrip()
        if re.match(r"(AS\b|[A-Za-z_]\w*\s*(,|$|\bWHERE\b|\bJOIN\b))", following, re.I) and \
                not re.match(r"(WHERE|GROUP|ORDER|LIMIT|UNION|WINDOW|HAVING)\b", following, re.I):
            continue
        n += 1
        out.append((j + 1, f" AS _q{n}"))
    for position, alias in reversed(out):
        sql = sql[:position] + alias + sql[position:]
    return sql.strip().rstrip(";")


_VIEW = re.compile(r"CREATE\s+OR\s+REPLACE\s+VIEW\s+latest_(\w+)\b.*?;", re.S | re.I)


def _create(server: Server, con) -> None:
    """The server's schema, tables and views, if missing; its schema version checked."""
    md = server_metadata(con, server.schema)
    with server.raw.cursor() as cur:
        cur.execute(f'CREATE SCHEMA IF NOT EXISTS "{server.schema}"')
        fresh = not server.exists()
    md.create_all(server.conn, checkfirst=True)
    with server.raw.cursor() as cur:
        if fresh:
            cur.execute(f"SET LOCAL search_path TO \"{server.schema}\"")
            for _name, sql in schema.ddl_scripts():
                for m in _VIEW.finditer(sql):
                    table = m.group(1)
                    cur.execute(postgres_view(m.group(0), [c.name for c in md.tables[f"{server.schema}.{table}"].c]))
            cur.execute("SET LOCAL search_path TO DEFAULT")
            cur.execute(f"INSERT INTO {server.q('schema_info')} VALUES ('version', %s)", [str(schema.SCHEMA_VERSION)])
    _check_server_version(server)


def _check_server_version(server: Server) -> None:
    with server.raw.cursor() as cur:
        cur.execute(f"SELECT value FROM {server.q('schema_info')} WHERE key = 'version'")
        row = cur.fetchone()
    if row is None or row[0] != str(schema.SCHEMA_VERSION):
        raise WarehouseError(f"the team warehouse at {server.shown} has schema version {row and row[0]}, this metaeval "
                             f"uses {schema.SCHEMA_VERSION}: push and pull with a metaeval release of that version")


def _columns(con, table: str) -> list[str]:
    return [r[0] for r in con.execute("SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' "
                                      "AND table_name = ? ORDER BY column_index", [table]).fetchall()]


def _all_columns(con) -> dict[str, list[str]]:
    """Every table's columns, in one query of the catalog."""
    out: dict[str, list[str]] = {}
    for t, c in con.execute("SELECT table_name, column_name FROM duckdb_columns() WHERE schema_name = 'main' "
                            "ORDER BY table_name, column_index").fetchall():
        out.setdefault(t, []).append(c)
    return out


def _q(name: str) -> str:
    return f'"{name}"'


def _dataset_scope(columns: list[str], q, dataset: str) -> str | None:
    """The condition (on alias ``t``) that a row of a table with ``columns`` belongs to the dataset
    bound as ``dataset`` (``$dataset`` in DuckDB, ``%(dataset)s`` on the server; ``q`` quotes a
    table's name on that side): by its dataset id or name, else through its measure, system or input.
    None: no column names a dataset."""
    d = f"(SELECT dataset_id FROM {q('datasets')} WHERE name = {dataset})"
    if "dataset_id" in columns:
        return f"t.dataset_id = {d}"
    if "dataset" in columns:
        return f"t.dataset = {dataset}"
    for entity in ("measure", "system", "input"):
        if f"{entity}_id" in columns:
            return f"t.{entity}_id IN (SELECT {entity}_id FROM {q(entity + 's')} WHERE dataset_id = {d})"
    return None


def _comparable(column: str, types: dict[str, str]) -> str:
    return f"{column}::text" if types.get(column.split(".")[-1].strip('"')) == "json" else column


def _short(values: tuple) -> str:
    text = repr(values[0]) if len(values) == 1 else repr(tuple(values))
    return text if len(text) <= 60 else text[:57] + "..."
