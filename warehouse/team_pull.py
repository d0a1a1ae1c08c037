"""``pull`` from the team warehouse (:mod:`metaeval.team`): the team's rows of a dataset merged
into the local file by :func:`metaeval.load.load` (cells, texts; the rest in its
``before_commit``), one local transaction per dataset, under the ingest's rules: new rows added,
identical rows skipped, a row this warehouse holds with another value refused, naming it, with
nothing of that dataset written. Also :func:`team_datasets`, what the team holds.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from metaeval.errors import ConflictError, WarehouseError, one_line
from metaeval.team_server import (DATA_TABLES, ENTITIES, KEYS, REFERENCES, Server, _catalog, _check_server_version,
                                  _columns, _comparable, _dataset_scope, _q, _scrub, _short, result_tables)

if TYPE_CHECKING:
    import duckdb


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
    run = ["replicate"] if "replicate" in scores.columns else []   # (a server of schema 12 has no runs: run 0)
    cells = pd.concat([scores[["system", "input", "measure", "annotator", "value", *run]],
                       judgments[["system", "input", "measure", "annotator", "value"]]], ignore_index=True)
    if run:
        cells["replicate"] = cells["replicate"].astype(object).where(cells["replicate"].notna(), None)
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


def _merge_scales(con, dataset: str, fetched: dict, source: str) -> None:
    """The measures' scales: set where this warehouse has none; another one is a conflict."""
    d = {"dataset": dataset}
    ids = "(SELECT dataset_id FROM datasets WHERE name = $dataset)"
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

def _merge_rest(con, dataset: str, fetched: dict, source: str) -> dict[str, int]:
    """Inside the pull's transaction: the measures' scales, attributes, preferences, spans,
    BLEU statistics, then the runs and result rows this warehouse lacks."""
    counts: dict[str, int] = {}
    d = {"dataset": dataset}
    ids = "(SELECT dataset_id FROM datasets WHERE name = $dataset)"
    _merge_scales(con, dataset, fetched, source)
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
        keys = [k for k in (KEYS.get(t) or _catalog(con, [t])[t]["primary"] or local)]
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
                    [f"{source}: {t} " + " ".join(f"{k}={v}" for k, v in zip(keys, r[:n])
                                                   if not (k == "replicate" and v == 0)) +
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
