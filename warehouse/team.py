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

The server, its connection and its schema: :mod:`metaeval.team_server`; ``pull``:
:mod:`metaeval.team_pull`. ``push`` (here): one server transaction under a transaction-level advisory lock (two pushes at once
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
import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from metaeval import schema
from metaeval.errors import ConflictError, WarehouseError, one_line
from metaeval.team_server import (DATA_TABLES, ENTITIES, KEYS, LOCK_KEY, REFERENCES, UNCOMPARED, Server, _all_columns,
                                  _catalog, _comparable, _create, _dataset_scope, _q, _short, result_tables)

if TYPE_CHECKING:
    import duckdb

# --- what a dataset's rows are, locally -------------------------------------------------------
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


def _refuse_conflicts(cur, table: str, keys: tuple[str, ...], values: list[str], mapped: str, target: str,
                      describe, where: str) -> None:
    if not values:
        return
    on = " AND ".join(f"o.{_q(k)} = r.{_q(k)}" for k in keys)
    differ = " OR ".join(f"o.{_q(v)} IS DISTINCT FROM r.{_q(v)}" for v in values)
    cur.execute(f"SELECT count(*) OVER (), {', '.join('r.' + _q(k) for k in keys)}, "
                f"{', '.join('o.' + _q(v) for v in values)}, {', '.join('r.' + _q(v) for v in values)} "
                f"FROM ({mapped}) r JOIN {target} o ON {on} WHERE {differ} "
                f"ORDER BY {', '.join('r.' + _q(k) for k in keys)} LIMIT 20")   # the first 20 by key, whatever the plan
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
            elif not (column == "replicate" and value == 0):   # a score's run 0: unsaid, as before runs
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
