"""A team warehouse: datasets and results pushed to, and pulled from, a shared PostgreSQL server.

The server keeps them in a schema of its own (:data:`SERVER_SCHEMA`), whose tables are made
through SQLAlchemy Core from the warehouse's own table definitions (:func:`server_metadata`
reads DuckDB's catalog: the same columns, types, keys and unique names; no second copy of the
schema), with the ``latest_*`` views made from the same ``schema/*.sql`` text
(:func:`postgres_view`), so that any PostgreSQL client reads the team's results with plain SQL.

Internal ids (``dataset_id``, ``system_id``, ..., ``run_id``, ``result_id``) are each
warehouse's own: rows travel with them and are matched on the other side by what names them --
an entity by its name (a system by its dataset and name), a score, text, attribute or
preference by its key, a run and a result row by all their columns but their ids (so a result
computed by two people on the same data, same fingerprint and conventions, is stored once).
Both directions follow the ingest's rules: new rows added, identical rows skipped, a row the
other side holds with another value refused, naming it, with nothing written.

``push``: one server transaction under a transaction-level advisory lock (two pushes at once
run one after the other; a push killed half way leaves the server as it was), rows sent by
``COPY`` into temporary tables and merged by set-based SQL; each dataset's data and results
are recorded with a digest, so that a second push of the same content sends nothing. Who
pushed what and when: the ``pushes`` table. ``pull``: the team's rows of a dataset merged
into the local file by :func:`metaeval.load.load` (cells, texts; the rest in its
``before_commit``), one local transaction per dataset.

The password is never printed: URLs are shown masked (:func:`mask`) and the server's error
messages have it removed. It may come from the URL, ``$PGPASSWORD`` or ``~/.pgpass`` (libpq).
"""

from __future__ import annotations

import getpass
import hashlib
import json
import re
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from metaeval import schema
from metaeval.errors import ConflictError, WarehouseError, one_line

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
KEYS = {"scores": ("system_id", "input_id", "measure_id"), "judgments": ("system_id", "input_id", "measure_id",
                                                                        "annotator")}
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


# --- the server's schema, from the warehouse's ------------------------------------------------
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


# --- what a dataset's rows are, locally -------------------------------------------------------
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


def _local_rows(con, table: str, columns: list[str]) -> str:
    """SQL of the rows of ``table`` that belong to dataset ``$dataset`` (a bound name)."""
    cols = ", ".join(f"t.{_q(c)}" for c in columns)
    if table == "datasets":
        where = "t.name = $dataset"
    else:  # None: a result table over several datasets (task_rankings): with every dataset
        where = _dataset_scope(columns, _q, "$dataset") or "TRUE"
    if table in schema.RESULT_TABLES and table != "analysis_runs":
        where += " AND t.run_id IN (SELECT run_id FROM analysis_runs WHERE status <> 'running')"
    return f"SELECT {cols} FROM {_q(table)} t WHERE {where}"


def _run_rows(con, tables: list[str], columns: dict[str, list[str]]) -> str:
    """SQL of the runs behind the dataset's result rows (``$dataset``), finished or not, never running."""
    used = " UNION ".join(f"SELECT run_id FROM ({_local_rows(con, t, columns[t])})" for t in tables) or \
        "SELECT NULL"
    cols = ", ".join(_q(c) for c in columns["analysis_runs"])
    return f"SELECT {cols} FROM analysis_runs WHERE run_id IN ({used}) ORDER BY run_id"


def _params(sql: str, dataset: str) -> dict | None:
    return {"dataset": dataset} if "$dataset" in sql else None


def _digest(con, queries: dict[str, str], dataset: str) -> tuple[str, dict[str, int]]:
    """A digest of the rows of ``queries`` (table -> SQL; order-free) and how many each gives."""
    h, counts = hashlib.sha256(), {}
    for table, sql in queries.items():
        [(n, s)] = con.execute(f"SELECT count(*), CAST(sum(CAST(hash(q) AS HUGEINT)) AS VARCHAR) FROM ({sql}) q",
                               _params(sql, dataset)).fetchall()
        h.update(f"{table}:{n}:{s};".encode())
        counts[table] = n
    return h.hexdigest(), counts


# --- push ------------------------------------------------------------------------------------
@dataclass
class PushReport:
    url: str
    datasets: list[str]
    rows: dict[str, dict[str, int]] = field(default_factory=dict)   # dataset -> table -> rows added
    skipped: list[str] = field(default_factory=list)                # "dataset data", "dataset results": up to date
    push_id: int | None = None

    @property
    def added(self) -> int:
        return sum(sum(t.values()) for t in self.rows.values())


def _copy(server: Server, con, target: str, columns: list[str], sql: str, params: dict) -> int:
    """Rows of the DuckDB query ``sql`` into the server's temporary table ``target`` by COPY."""
    cols = ", ".join(_q(c) for c in columns)
    result = con.execute(sql, _params(sql, params["dataset"]))
    n = 0
    with server.raw.cursor() as cur, cur.copy(f"COPY {_q(target)} ({cols}) FROM STDIN") as copy:
        while rows := result.fetchmany(20000):
            for row in rows:
                copy.write_row(row)
            n += len(rows)
    return n


def _mapped(table: str, columns: list[str], staged: str, skip: tuple[str, ...] = ()) -> str:
    """SQL of the staged rows of ``table`` with every internal id replaced by the server's
    (joined to the ``_map_<table>`` tables); ``skip``: columns left out."""
    select, joins = [], []
    for c in columns:
        if c in skip:
            continue
        if c in REFERENCES and REFERENCES[c] != table:
            alias = f"m_{c}"
            joins.append(f'JOIN "_map_{REFERENCES[c]}" {alias} ON {alias}.local_id = l.{_q(c)}')
            select.append(f"{alias}.server_id AS {_q(c)}")
        else:
            select.append(f"l.{_q(c)}")
    return f"SELECT {', '.join(select)} FROM {_q(staged)} l {' '.join(joins)}"


def _comparable(column: str, types: dict[str, str]) -> str:
    return f"{column}::text" if types.get(column.split(".")[-1].strip('"')) == "json" else column


def _refuse_conflicts(cur, table: str, keys: tuple[str, ...], values: list[str], mapped: str, target: str,
                      describe, where: str) -> None:
    if not values:
        return
    on = " AND ".join(f"o.{_q(k)} = r.{_q(k)}" for k in keys)
    differ = " OR ".join(f"o.{_q(v)} IS DISTINCT FROM r.{_q(v)}" for v in values)
    cur.execute(f"SELECT count(*) OVER (), {', '.join('r.' + _q(k) for k in keys)}, "
                f"{', '.join('o.' + _q(v) for v in values)}, {', '.join('r.' + _q(v) for v in values)} "
                f"FROM ({mapped}) r JOIN {target} o ON {on} WHERE {differ} LIMIT 20")
    rows = cur.fetchall()
    if rows:
        total = rows[0][0]
        shown = []
        for row in rows:
            key = dict(zip(keys, row[1:1 + len(keys)]))
            old, new = row[1 + len(keys):1 + len(keys) + len(values)], row[1 + len(keys) + len(values):]
            shown.append(f"{describe(table, key)}: {where} has {_short(old)}, this warehouse has {_short(new)}")
        raise ConflictError(shown, total, headline=f"{total} row(s) conflict with the team warehouse; nothing was "
                                                   "written (nothing replaces a value there)")


def _short(values: tuple) -> str:
    text = repr(values[0]) if len(values) == 1 else repr(tuple(values))
    return text if len(text) <= 60 else text[:57] + "..."


def push(con: duckdb.DuckDBPyConnection, url: str, datasets: list[str] | None = None, *,
         warehouse: str | None = None, progress=None) -> PushReport:
    """Copy ``datasets`` (all by default) of the warehouse ``con``, with their results, to the
    team warehouse at ``url``, in one server transaction. See the module's docstring."""
    from metaeval import __version__

    local = [r[0] for r in con.execute("SELECT name FROM datasets ORDER BY name").fetchall()]
    chosen = list(dict.fromkeys(datasets or local))
    unknown = [d for d in chosen if d not in local]
    if unknown:
        raise WarehouseError(f"unknown dataset {unknown[0]!r}; the warehouse has: {', '.join(local) or 'none'}")
    if not chosen:
        raise WarehouseError("the warehouse has no dataset to push")
    import duckdb

    try:   # read before connecting: the server's lock is held while the rows are sent, not while they are read
        parts = _parts(con, chosen)
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot read the warehouse: {one_line(exc)}; nothing was sent") from None
    server = Server(url, "metaeval push")
    report = PushReport(server.shown, chosen)
    with server:
        try:
            _push(server, con, chosen, parts, report, warehouse, __version__)
        except WarehouseError:
            _rollback(server)
            raise
        except Exception as exc:
            _rollback(server)
            raise _translated(server, exc) from None
    return report


def _rollback(server: Server) -> None:
    try:
        server.raw.rollback()
    except Exception:  # the connection is gone: the server rolls the transaction back itself
        pass


def _translated(server: Server, exc: Exception) -> Exception:
    """A server's or DuckDB's error as a one-line :class:`WarehouseError` (the password removed);
    anything else unchanged."""
    import duckdb
    import psycopg
    from sqlalchemy.exc import DBAPIError

    if isinstance(exc, DBAPIError) and exc.orig is not None:
        exc = exc.orig
    if isinstance(exc, psycopg.Error):
        return server.error(exc)
    if isinstance(exc, duckdb.Error):
        return WarehouseError(f"cannot read the warehouse: {one_line(exc)}; nothing was written")
    return exc


def _describe_server(cur, server: Server):
    def describe(table: str, key: dict) -> str:
        parts = []
        for column, value in key.items():
            entity = REFERENCES.get(column)
            if entity in ENTITIES and entity != table:
                cur.execute(f"SELECT name FROM {server.q(entity)} WHERE {_q(ENTITIES[entity][0])} = %s", [value])
                parts.append(f"{column.removesuffix('_id')}={cur.fetchone()[0]}")
            else:
                parts.append(f"{column}={value}")
        return f"{table} " + " ".join(parts)
    return describe


def _parts(con, chosen: list[str]) -> dict[tuple[str, str], tuple[str, dict[str, int]]]:
    """What each dataset's content is: (dataset, "data" | "results") -> its digest and rows per table."""
    results = result_tables()
    cols = _all_columns(con)
    parts: dict[tuple[str, str], tuple[str, dict[str, int]]] = {}
    for d in chosen:
        parts[(d, "data")] = _digest(con, {t: _local_rows(con, t, cols[t]) for t in DATA_TABLES}, d)
        held = {t: _local_rows(con, t, cols[t]) for t in results}
        _, counts = _digest(con, held, d)
        held = {t: sql for t, sql in held.items() if counts[t]}
        parts[(d, "results")] = _digest(con, {"analysis_runs": _run_rows(con, list(held), cols), **held}, d)
    return parts


def _push(server: Server, con, chosen: list[str], parts: dict, report: PushReport, warehouse, version) -> None:
    with server.raw.cursor() as cur:
        # one push at a time: the second waits for the first to commit, then sends what it lacks
        cur.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK_KEY])
        cur.execute("SET LOCAL work_mem = '64MB'")
    _create(server, con)
    cols = _all_columns(con)
    with server.raw.cursor() as cur:
        cur.execute(f"SELECT dataset, part, digest FROM {server.q('pushed_parts')} WHERE dataset = ANY(%s)", [chosen])
        have = {(d, p, g) for d, p, g in cur.fetchall()}
    todo = [(d, p) for (d, p), (g, n) in parts.items() if (d, p, g) not in have and sum(n.values())]
    report.skipped = [f"{d} {p}" for (d, p), (g, _) in parts.items() if (d, p, g) in have]
    if not todo:
        return
    describe = None
    with server.raw.cursor() as cur:
        describe = _describe_server(cur, server)
        cur.execute("SELECT table_name, column_name, data_type FROM information_schema.columns "
                    "WHERE table_schema = %s", [server.schema])
        types: dict[str, dict[str, str]] = {}
        for t, c, ty in cur.fetchall():
            types.setdefault(t, {})[c] = ty
        cur.execute(f"INSERT INTO {server.q('pushes')} (client_user, client_host, warehouse, version, datasets, rows) "
                    "VALUES (%s, %s, %s, %s, %s, '{}') RETURNING push_id",
                    [_user(), socket.gethostname(), warehouse, version, json.dumps(chosen)])
        report.push_id = cur.fetchone()[0]
        md_keys = _catalog(con, list(DATA_TABLES))
        for d, part in todo:
            counts = report.rows.setdefault(d, {})
            present = [t for t, n in parts[(d, part)][1].items() if n]
            tables = present
            # the dataset's entities are always staged: every other table's ids map through them
            staged = list(dict.fromkeys([*ENTITIES, *tables]))
            held = [t for t in present if t != "analysis_runs"]
            for t in staged:
                cur.execute(f'DROP TABLE IF EXISTS "_in_{t}"')
                cur.execute(f'CREATE TEMP TABLE "_in_{t}" (LIKE {server.q(t)}) ON COMMIT DROP')
                sql = _run_rows(con, held, cols) if t == "analysis_runs" else _local_rows(con, t, cols[t])
                _copy(server, con, f"_in_{t}", cols[t], sql, {"dataset": d})
            for t in ENTITIES:
                added = _merge_entity(cur, server, t, cols[t], types[t], describe)
                if part == "data":
                    counts[t] = added
            if part == "data":
                for t in DATA_TABLES:
                    if t in ENTITIES or not parts[(d, part)][1][t]:
                        continue
                    keys = KEYS.get(t) or md_keys[t]["primary"] or tuple(cols[t])
                    counts[t] = _merge_keyed(cur, server, t, cols[t], keys, types[t], describe)
            else:
                counts.update(_merge_results(cur, server, cols, held, types, d))
            digest, rows = parts[(d, part)]
            cur.execute(f"INSERT INTO {server.q('pushed_parts')} VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                        [d, part, digest, report.push_id, sum(rows.values())])
            for t in staged:
                cur.execute(f'DROP TABLE IF EXISTS "_in_{t}"')
            for t in ENTITIES:
                cur.execute(f'DROP TABLE IF EXISTS "_map_{t}"')
        cur.execute(f"UPDATE {server.q('pushes')} SET rows = %s WHERE push_id = %s",
                    [json.dumps(report.rows, sort_keys=True), report.push_id])
    server.raw.commit()


def _user() -> str | None:
    try:
        return getpass.getuser()
    except Exception:
        return None


def _merge_entity(cur, server: Server, table: str, columns: list[str], types: dict, describe) -> int:
    """Add the staged entities the server lacks (by their naming key), refuse those it holds
    otherwise; then ``_map_<table>``: local id -> server id."""
    id_column, keys = ENTITIES[table]
    mapped = _mapped(table, columns, f"_in_{table}")
    values = [c for c in columns if c not in (id_column, *keys, *UNCOMPARED.get(table, ()))]
    _refuse_conflicts(cur, table, keys, values, mapped, server.q(table), describe, "the team warehouse")
    rest = [c for c in columns if c != id_column]
    on = " AND ".join(f"o.{_q(k)} = r.{_q(k)}" for k in keys)
    cur.execute(f"INSERT INTO {server.q(table)} ({', '.join(map(_q, rest))}) "
                f"SELECT {', '.join('r.' + _q(c) for c in rest)} FROM ({mapped}) r "
                f"WHERE NOT EXISTS (SELECT 1 FROM {server.q(table)} o WHERE {on}) ORDER BY r.{_q(id_column)}")
    added = cur.rowcount
    cur.execute(f'DROP TABLE IF EXISTS "_map_{table}"')
    cur.execute(f'CREATE TEMP TABLE "_map_{table}" ON COMMIT DROP AS SELECT r.{_q(id_column)} AS local_id, '
                f"o.{_q(id_column)} AS server_id FROM ({mapped}) r JOIN {server.q(table)} o ON {on}")
    return added


def _merge_keyed(cur, server: Server, table: str, columns: list[str], keys: tuple[str, ...], types: dict,
                 describe) -> int:
    """Add the staged rows the server lacks (by key), refuse those it holds with another value.
    A judgment cell is compared whole (its annotators), as the ingest compares it."""
    mapped = _mapped(table, columns, f"_in_{table}")
    values = [c for c in columns if c not in keys]
    _refuse_conflicts(cur, table, keys, values, mapped, server.q(table), describe, "the team warehouse")
    cur.execute(f'CREATE TEMP TABLE "_m_{table}" ON COMMIT DROP AS {mapped}')
    if table == "judgments":
        cell = ("system_id", "input_id", "measure_id")
        on = " AND ".join(f"o.{_q(k)} = r.{_q(k)}" for k in cell)
        cur.execute(f"""WITH r AS (SELECT system_id, input_id, measure_id, array_agg(annotator ORDER BY annotator) AS a
                                   FROM "_m_judgments" GROUP BY system_id, input_id, measure_id),
                             o AS (SELECT j.system_id, j.input_id, j.measure_id, array_agg(j.annotator ORDER BY j.annotator)
                                          AS a
                                   FROM {server.q('judgments')} j
                                   WHERE EXISTS (SELECT 1 FROM r WHERE r.system_id = j.system_id
                                                 AND r.input_id = j.input_id AND r.measure_id = j.measure_id)
                                   GROUP BY j.system_id, j.input_id, j.measure_id)
                        SELECT count(*) OVER (), r.system_id, r.input_id, r.measure_id
                        FROM r JOIN o ON {on} WHERE r.a IS DISTINCT FROM o.a LIMIT 20""")
        rows = cur.fetchall()
        if rows:
            raise ConflictError([f"{describe('judgments', dict(zip(cell, r[1:])))}: the team warehouse has other "
                                 "annotators for this cell" for r in rows], rows[0][0],
                                headline=f"{rows[0][0]} judgment cell(s) conflict with the team warehouse; nothing "
                                         "was written (a cell's value is its whole set of annotators)")
    if keys == tuple(columns):   # no key: a row is new when no identical row is there
        row = ", ".join(_comparable(f"r.{_q(c)}", types) for c in columns)
        other = ", ".join(_comparable(f"o.{_q(c)}", types) for c in columns)
        cur.execute(f'INSERT INTO {server.q(table)} SELECT * FROM "_m_{table}" r WHERE NOT EXISTS '
                    f"(SELECT 1 FROM (SELECT md5(ROW({other})::text) AS h FROM {server.q(table)} o) x "
                    f"WHERE x.h = md5(ROW({row})::text))")
    else:
        on = " AND ".join(f"o.{_q(k)} = r.{_q(k)}" for k in keys)
        cur.execute(f"INSERT INTO {server.q(table)} ({', '.join(map(_q, columns))}) SELECT "
                    f"{', '.join('r.' + _q(c) for c in columns)} FROM \"_m_{table}\" r "
                    f"WHERE NOT EXISTS (SELECT 1 FROM {server.q(table)} o WHERE {on})")
    added = cur.rowcount
    cur.execute(f'DROP TABLE "_m_{table}"')
    return added


def _row_md5(alias: str, columns: list[str], types: dict) -> str:
    return f"md5(ROW({', '.join(_comparable(f'{alias}.{_q(c)}', types) for c in columns)})::text)"


def _merge_results(cur, server: Server, cols: dict, results: list[str], types: dict, dataset: str) -> dict[str, int]:
    """Add the staged result rows the server lacks (identical in every column but their ids)
    and the runs behind them (a run: every column but its id)."""
    counts: dict[str, int] = {}
    run_cols = [c for c in cols["analysis_runs"] if c != "run_id"]
    for t in results:
        body = [c for c in cols[t] if c not in ("result_id", "run_id")]
        where = "WHERE o.dataset = %(dataset)s" if "dataset" in cols[t] else ""
        cur.execute(f'CREATE TEMP TABLE "_new_{t}" ON COMMIT DROP AS SELECT l.* FROM "_in_{t}" l '
                    f"WHERE NOT EXISTS (SELECT 1 FROM (SELECT {_row_md5('o', body, types[t])} AS h FROM {server.q(t)} o "
                    f"{where}) x WHERE x.h = {_row_md5('l', body, types[t])})", {"dataset": dataset})
    used = " UNION ".join(f'SELECT run_id FROM "_new_{t}"' for t in results)
    runs_md5 = _row_md5("l", run_cols, types["analysis_runs"])
    cur.execute(f"INSERT INTO {server.q('analysis_runs')} ({', '.join(map(_q, run_cols))}) "
                f"SELECT {', '.join('l.' + _q(c) for c in run_cols)} FROM \"_in_analysis_runs\" l "
                f"WHERE l.run_id IN ({used}) AND NOT EXISTS (SELECT 1 FROM (SELECT "
                f"{_row_md5('o', run_cols, types['analysis_runs'])} AS h FROM {server.q('analysis_runs')} o) x "
                f"WHERE x.h = {runs_md5}) ORDER BY l.run_id")
    counts["analysis_runs"] = cur.rowcount
    cur.execute(f'CREATE TEMP TABLE "_map_analysis_runs" ON COMMIT DROP AS SELECT l.run_id AS local_id, '
                f"min(o.run_id) AS server_id FROM \"_in_analysis_runs\" l JOIN {server.q('analysis_runs')} o "
                f"ON {runs_md5} = {_row_md5('o', run_cols, types['analysis_runs'])} "
                f"WHERE l.run_id IN ({used}) GROUP BY l.run_id")
    for t in results:
        rest = [c for c in cols[t] if c != "result_id"]
        mapped = _mapped(t, rest, f"_new_{t}")
        cur.execute(f"INSERT INTO {server.q(t)} ({', '.join(map(_q, rest))}) {mapped} ORDER BY l.result_id")
        counts[t] = cur.rowcount
        cur.execute(f'DROP TABLE "_new_{t}"')
    cur.execute('DROP TABLE "_map_analysis_runs"')
    return {t: n for t, n in counts.items() if n}


# --- what the team has -----------------------------------------------------------------------
def team_datasets(url: str):
    """The team's datasets: systems, inputs, measures, scores and judgments, result rows, and
    who pushed last and when (:class:`~warehouse.rows.Rows`)."""
    from metaeval.rows import Rows

    with Server(url) as server:
        if not server.exists():
            raise WarehouseError(f"{server.shown} has no team warehouse yet (no schema {server.schema}): push to it first")
        _check_server_version(server)
        q = server.q
        with server.raw.cursor() as cur:
            cur.execute(f"""
                SELECT d.name AS dataset,
                       (SELECT count(*) FROM {q('systems')} s WHERE s.dataset_id = d.dataset_id) AS systems,
                       (SELECT count(*) FROM {q('inputs')} i WHERE i.dataset_id = d.dataset_id) AS inputs,
                       (SELECT count(*) FROM {q('measures')} m WHERE m.dataset_id = d.dataset_id) AS measures,
                       (SELECT count(*) FROM {q('scores')} v JOIN {q('measures')} m USING (measure_id)
                        WHERE m.dataset_id = d.dataset_id) AS scores,
                       (SELECT count(*) FROM {q('judgments')} v JOIN {q('measures')} m USING (measure_id)
                        WHERE m.dataset_id = d.dataset_id) AS judgments,
                       p.pushed_by, to_char(p.pushed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') AS last_push_utc
                FROM {q('datasets')} d
                LEFT JOIN LATERAL (SELECT coalesce(x.client_user || '@' || x.client_host, x.server_user) AS pushed_by,
                                          x.pushed_at
                                   FROM {q('pushed_parts')} pp JOIN {q('pushes')} x USING (push_id)
                                   WHERE pp.dataset = d.name ORDER BY x.push_id DESC LIMIT 1) p ON TRUE
                ORDER BY d.name""")
            names = tuple(c.name for c in cur.description)
            data = tuple(tuple(r) for r in cur.fetchall())
    kinds = tuple("int" if 0 < i < 6 else "str" if data and all(r[i] is not None for r in data) else
                  "object" if not data or all(r[i] is None for r in data) else "str" for i in range(len(names)))
    return Rows(names, kinds, data)


# --- pull ------------------------------------------------------------------------------------
@dataclass
class PullReport:
    url: str
    rows: dict[str, dict[str, int]] = field(default_factory=dict)   # dataset -> table -> rows added

    @property
    def added(self) -> int:
        return sum(sum(t.values()) for t in self.rows.values())


def _fetch(cur, sql: str, params) -> tuple[list[str], list[tuple]]:
    cur.execute(sql, params)
    return [c.name for c in cur.description], cur.fetchall()


def _arrow(columns: list[str], rows: list[tuple]):
    """Rows as an Arrow table: NULL stays NULL and NaN stays NaN (a DataFrame would merge them)."""
    import pyarrow as pa

    return pa.table({c: pa.array([r[i] for r in rows]) for i, c in enumerate(columns)}) if rows else \
        pa.table({c: pa.array([], pa.null()) for c in columns})


def _named(server: Server, table: str, columns: list[str], types: dict) -> str:
    """SQL (server side) of a data table's rows of dataset ``%(dataset)s`` with names for ids:
    ``system``, ``input``, ``measure``, ``system_a``, ``system_b``; JSON as text."""
    q = server.q
    select, joins = [], []
    for c in columns:
        entity = REFERENCES.get(c)
        if entity in ENTITIES and entity != table and c != "dataset_id":
            a = f"n_{c}"
            joins.append(f"JOIN {q(entity)} {a} ON {a}.{_q(ENTITIES[entity][0])} = t.{_q(c)}")
            select.append(f"{a}.name AS {_q(c.removesuffix('_id'))}")
        elif c != "dataset_id":
            select.append(_comparable(f"t.{_q(c)}", types) + f" AS {_q(c)}")
    where = _dataset_scope(columns, q, "%(dataset)s")
    if where is None:
        raise WarehouseError(f"{table}: no column names its dataset, so it cannot be pulled by dataset")
    return f"SELECT {', '.join(select)} FROM {q(table)} t {' '.join(joins)} WHERE {where}"


def pull(con: duckdb.DuckDBPyConnection, url: str, datasets: list[str] | None = None, *,
         command: str | None = None) -> PullReport:
    """Bring ``datasets`` (all by default) of the team warehouse at ``url``, with their results,
    into the warehouse ``con``: one transaction per dataset, under the ingest's rules
    (:func:`metaeval.load.load`): new rows added, identical rows skipped, a row this warehouse
    holds with another value refused, naming it, with nothing of that dataset written."""
    import psycopg

    with Server(url, "metaeval pull") as server:
        if not server.exists():
            raise WarehouseError(f"{server.shown} has no team warehouse yet (no schema {server.schema}): push to it first")
        _check_server_version(server)
        report = PullReport(server.shown)
        try:
            server.raw.rollback()   # one snapshot for every dataset
            server.raw.isolation_level, server.raw.read_only = psycopg.IsolationLevel.REPEATABLE_READ, True
            with server.raw.cursor() as cur:
                cur.execute(f"SELECT name FROM {server.q('datasets')} ORDER BY name")
                team = [r[0] for r in cur.fetchall()]
                chosen = list(dict.fromkeys(datasets or team))
                unknown = [d for d in chosen if d not in team]
                if unknown:
                    raise WarehouseError(f"the team warehouse at {server.shown} has no dataset {unknown[0]!r}; "
                                         f"it has: {', '.join(team) or 'none'}")
                cur.execute("SELECT table_name, column_name, data_type FROM information_schema.columns "
                            "WHERE table_schema = %s", [server.schema])
                types: dict[str, dict[str, str]] = {}
                for t, c, ty in cur.fetchall():
                    types.setdefault(t, {})[c] = ty
                fetched = {d: _fetch_dataset(cur, server, con, d, types) for d in chosen}
        except psycopg.Error as exc:
            raise WarehouseError(f"{server.shown}: {_scrub(str(exc), server.url)}; nothing was written") from None
        finally:
            server.raw.rollback()
    import duckdb

    for d in chosen:
        try:
            report.rows[d] = _merge_pulled(con, d, fetched[d], report.url, command)
        except duckdb.Error as exc:
            raise WarehouseError(f"cannot pull {d!r} into the warehouse: {one_line(exc)}; nothing of {d!r} was "
                                 "written") from None
    return report


def _fetch_dataset(cur, server: Server, con, dataset: str, types: dict) -> dict:
    p = {"dataset": dataset}
    out: dict = {}
    for t in DATA_TABLES:
        if t == "datasets":
            continue
        cols = [c for c in _columns(con, t)]
        if t in ENTITIES:
            cols = [c for c in cols if c != ENTITIES[t][0]]
        out[t] = _fetch(cur, _named(server, t, cols, types[t]), p)
    results = result_tables()
    rows = {}
    for t in results:
        cols = _columns(con, t)
        where = "WHERE t.dataset = %(dataset)s" if "dataset" in cols else ""
        sel = ", ".join(_comparable(f"t.{_q(c)}", types[t]) + f" AS {_q(c)}" for c in cols)
        rows[t] = _fetch(cur, f"SELECT {sel} FROM {server.q(t)} t {where} ORDER BY t.result_id", p)
    used = sorted({r[rows[t][0].index("run_id")] for t in results for r in rows[t][1]})
    run_cols = _columns(con, "analysis_runs")
    sel = ", ".join(_comparable(f"t.{_q(c)}", types["analysis_runs"]) + f" AS {_q(c)}" for c in run_cols)
    out["analysis_runs"] = _fetch(cur, f"SELECT {sel} FROM {server.q('analysis_runs')} t WHERE t.run_id = ANY(%s) "
                                       "ORDER BY t.run_id", [used])
    out["results"] = rows
    return out


def _merge_pulled(con, dataset: str, fetched: dict, url: str, command: str | None) -> dict[str, int]:
    """One dataset's fetched rows into the warehouse, in one transaction (:func:`metaeval.load.load`)."""
    import pandas as pd

    from metaeval.batch import Batch
    from metaeval.load import load

    source = f"{url} ({dataset})"
    frames = {}
    for t in ("systems", "measures", "scores", "judgments", "summaries", "references", "documents"):
        columns, rows = fetched[t]
        frames[t] = pd.DataFrame.from_records(rows, columns=columns) if rows else pd.DataFrame(columns=columns)
    scores, judgments = frames["scores"], frames["judgments"]
    scores = scores.assign(annotator=None)
    cells = pd.concat([scores[["system", "input", "measure", "annotator", "value"]],
                       judgments[["system", "input", "measure", "annotator", "value"]]], ignore_index=True)
    cells["line"] = range(1, len(cells) + 1)

    def lined(frame, columns):
        frame = frame[columns].reset_index(drop=True)
        return frame.assign(line=range(1, len(frame) + 1))

    digest = hashlib.sha256(repr(sorted((t, len(v[1])) for t, v in fetched.items() if t != "results")).encode())
    batch = Batch(file=source, format="pull", sha256=digest.hexdigest(), options={"url": url},
                  systems=frames["systems"][["name", "type"]],
                  measures=frames["measures"][["name", "kind", "direction"]],
                  cells=cells,
                  summaries=lined(frames["summaries"], ["system", "input", "text"]),
                  references=lined(frames["references"], ["input", "reference_id", "text"]),
                  documents=lined(frames["documents"], ["input", "position", "text"]))
    counts: dict[str, int] = {}

    def rest():
        counts.update(_merge_rest(con, dataset, fetched, source))

    try:
        [loaded] = load(con, dataset, [batch], allow_new=True, command=command, before_commit=rest)
    except ConflictError as exc:
        raise ConflictError(exc.conflicts, exc.total, headline=(
            f"{exc.total} value(s) of the team warehouse conflict with this warehouse; nothing of {dataset!r} was "
            "written (nothing replaces a value here: drop or rename the local one, or pull another dataset)")) from None
    counts["values and texts"] = loaded.inserted
    return {k: v for k, v in counts.items() if v}


def _register(con, name: str, columns: list[str], rows: list[tuple]) -> None:
    con.register(name, _arrow(columns, rows))


def _merge_rest(con, dataset: str, fetched: dict, source: str) -> dict[str, int]:
    """Inside the pull's transaction: the measures' scales, attributes, preferences, spans,
    BLEU statistics, then the runs and result rows this warehouse lacks."""
    counts: dict[str, int] = {}
    d = {"dataset": dataset}
    ids = "(SELECT dataset_id FROM datasets WHERE name = $dataset)"
    # scales: set where this warehouse has none; another one is a conflict
    columns, rows = fetched["measures"]
    _register(con, "_pull_measures", columns, rows)
    clash = con.execute(f"""SELECT m.name, m.scale, p.scale FROM _pull_measures p JOIN measures m
                            ON m.dataset_id = {ids} AND m.name = p.name
                            WHERE m.scale IS NOT NULL AND p.scale IS NOT NULL AND m.scale <> p.scale
                            ORDER BY m.name""", d).fetchall()
    if clash:
        raise ConflictError([f"{source}: measures measure={n}: warehouse has scale {a!r}, the team warehouse {b!r}"
                             for n, a, b in clash[:20]], len(clash),
                            headline=f"{len(clash)} measure scale(s) of the team warehouse conflict with this "
                                     f"warehouse; nothing of {dataset!r} was written")
    con.execute(f"""UPDATE measures SET scale = p.scale FROM _pull_measures p
                    WHERE measures.dataset_id = {ids} AND measures.name = p.name AND measures.scale IS NULL
                      AND p.scale IS NOT NULL""", d)
    con.unregister("_pull_measures")
    resolve = {"system": ("systems", "system_id"), "system_a": ("systems", "system_a_id"),
               "system_b": ("systems", "system_b_id"), "input": ("inputs", "input_id"),
               "measure": ("measures", "measure_id")}
    # inputs named only by preferences, spans or attributes (the batch added those of cells and texts)
    columns, rows = fetched["inputs"]
    _register(con, "_pull_inputs", columns, rows)
    con.execute(f"""INSERT INTO inputs (dataset_id, name) SELECT {ids}, p.name FROM _pull_inputs p
                    WHERE p.name NOT IN (SELECT name FROM inputs WHERE dataset_id = {ids}) ORDER BY p.name""", d)
    con.unregister("_pull_inputs")
    for t in ("attributes", "preferences", "error_spans", "bleu_statistics"):
        columns, rows = fetched[t]
        if not rows:
            continue
        _register(con, "_pull_rows", columns, rows)
        local = _columns(con, t)
        select, joins = [], []
        for c in local:
            named = next((n for n, (_, col) in resolve.items() if col == c), None)
            if c == "dataset_id":
                select.append(f"{ids} AS dataset_id")
            elif named and t != "attributes":
                entity = resolve[named][0]
                joins.append(f"JOIN {entity} n_{named} ON n_{named}.dataset_id = {ids} AND n_{named}.name = p.{named}")
                select.append(f"n_{named}.{ENTITIES[entity][0]} AS {_q(c)}")
            elif c == "dataset":
                select.append("$dataset AS dataset")
            else:
                select.append(f"p.{_q(c)}")
        con.execute(f"CREATE OR REPLACE TEMP TABLE _pull_staged AS SELECT {', '.join(select)} FROM _pull_rows p "
                    f"{' '.join(joins)}", d)
        [(staged,)] = con.execute("SELECT count(*) FROM _pull_staged").fetchall()
        if staged != len(rows):   # a name this warehouse lacks (never: the batch and the inputs above add them)
            raise WarehouseError(f"{source}: {len(rows) - staged} {t} row(s) name a system, input or measure "
                                 f"{dataset!r} lacks; nothing of {dataset!r} was written")
        keys = [k for k in (_catalog(con, [t])[t]["primary"] or local)]
        values = [c for c in local if c not in keys]
        on = " AND ".join(f"o.{_q(k)} = r.{_q(k)}" for k in keys)
        if values:
            differ = " OR ".join(f"o.{_q(v)} IS DISTINCT FROM r.{_q(v)}" for v in values)
            bad = con.execute(f"SELECT {', '.join('r.' + _q(k) for k in keys)}, {', '.join('o.' + _q(v) for v in values)}, "
                              f"{', '.join('r.' + _q(v) for v in values)}, count(*) OVER () FROM _pull_staged r "
                              f"JOIN {_q(t)} o ON {on} WHERE {differ} LIMIT 20").fetchall()
            if bad:
                n = len(keys)
                raise ConflictError(
                    [f"{source}: {t} " + " ".join(f"{k}={v}" for k, v in zip(keys, r[:n])) +
                     f": warehouse has {_short(r[n:n + len(values)])}, the team warehouse "
                     f"{_short(r[n + len(values):-1])}" for r in bad], bad[0][-1],
                    headline=f"{bad[0][-1]} row(s) of the team warehouse conflict with this warehouse; nothing of "
                             f"{dataset!r} was written")
        same = " AND ".join(f"o.{_q(k)} IS NOT DISTINCT FROM r.{_q(k)}" for k in keys)
        [(added,)] = con.execute(f"INSERT INTO {_q(t)} ({', '.join(map(_q, local))}) SELECT "
                                 f"{', '.join('r.' + _q(c) for c in local)} FROM _pull_staged r "
                                 f"WHERE NOT EXISTS (SELECT 1 FROM {_q(t)} o WHERE {same})").fetchall()
        counts[t] = added
        con.execute("DROP TABLE _pull_staged")
        con.unregister("_pull_rows")
    counts.update(_merge_pulled_results(con, fetched))
    return counts


def _merge_pulled_results(con, fetched: dict) -> dict[str, int]:
    """The runs and result rows the warehouse lacks (identical in every column but their ids),
    with new local ids, in the team's order."""
    counts: dict[str, int] = {}
    run_cols, runs = fetched["analysis_runs"]
    if not runs:
        return counts
    body = [c for c in run_cols if c != "run_id"]
    _register(con, "_pull_runs_rows", run_cols, runs)
    con.execute("CREATE OR REPLACE TEMP TABLE _pull_runs AS SELECT * FROM analysis_runs LIMIT 0")
    con.execute(f"INSERT INTO _pull_runs ({', '.join(map(_q, run_cols))}) "
                f"SELECT {', '.join(map(_q, run_cols))} FROM _pull_runs_rows")
    con.unregister("_pull_runs_rows")
    same = " AND ".join(f"o.{_q(c)}::VARCHAR IS NOT DISTINCT FROM r.{_q(c)}::VARCHAR" if c == "parameters" else
                        f"o.{_q(c)} IS NOT DISTINCT FROM r.{_q(c)}" for c in body)
    new_results = {}
    for t, (columns, rows) in fetched["results"].items():
        if not rows:
            continue
        _register(con, "_pull_result_rows", columns, rows)
        con.execute(f'CREATE OR REPLACE TEMP TABLE "_pull_{t}" AS SELECT * FROM {_q(t)} LIMIT 0')
        con.execute(f'INSERT INTO "_pull_{t}" ({", ".join(map(_q, columns))}) '
                    f"SELECT {', '.join(map(_q, columns))} FROM _pull_result_rows")
        con.unregister("_pull_result_rows")
        types = dict(con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ?",
                                 [t]).fetchall())
        rbody = [c for c in columns if c not in ("result_id", "run_id")]
        rsame = " AND ".join(f"o.{_q(c)}::VARCHAR IS NOT DISTINCT FROM r.{_q(c)}::VARCHAR" if types[c] == "JSON" else
                             f"o.{_q(c)} IS NOT DISTINCT FROM r.{_q(c)}" for c in rbody)
        con.execute(f'DELETE FROM "_pull_{t}" r WHERE EXISTS (SELECT 1 FROM {_q(t)} o WHERE {rsame})')
        new_results[t] = columns
    used = " UNION ".join(f'SELECT run_id FROM "_pull_{t}"' for t in new_results)
    if not used:
        con.execute("DROP TABLE _pull_runs")
        return counts
    # runs: the local one identical to the team's, else a new one
    con.execute(f"""CREATE OR REPLACE TEMP TABLE _pull_run_map AS
                    SELECT r.run_id AS team_id, (SELECT min(o.run_id) FROM analysis_runs o WHERE {same}) AS local_id
                    FROM _pull_runs r WHERE r.run_id IN ({used})""")
    missing = [r[0] for r in con.execute("SELECT team_id FROM _pull_run_map WHERE local_id IS NULL "
                                         "ORDER BY team_id").fetchall()]
    for team_id in missing:
        [(local_id,)] = con.execute(
            f"INSERT INTO analysis_runs ({', '.join(map(_q, body))}) SELECT {', '.join(map(_q, body))} "
            "FROM _pull_runs WHERE run_id = ? RETURNING run_id", [team_id]).fetchall()
        con.execute("UPDATE _pull_run_map SET local_id = ? WHERE team_id = ?", [local_id, team_id])
    counts["analysis_runs"] = len(missing)
    for t, columns in new_results.items():
        rest = [c for c in columns if c not in ("result_id", "run_id")]
        [(n,)] = con.execute(
            f"INSERT INTO {_q(t)} (run_id, {', '.join(map(_q, rest))}) SELECT m.local_id, "
            f"{', '.join('r.' + _q(c) for c in rest)} FROM \"_pull_{t}\" r JOIN _pull_run_map m ON m.team_id = r.run_id "
            "ORDER BY r.result_id").fetchall()
        if n:
            counts[t] = n
        con.execute(f'DROP TABLE "_pull_{t}"')
    con.execute("DROP TABLE _pull_runs")
    con.execute("DROP TABLE _pull_run_map")
    return counts
