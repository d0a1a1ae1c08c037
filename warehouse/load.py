"""Atomic, idempotent loading of parsed files into the warehouse.

Ingest modules parse a file into a :class:`Batch` (plain DataFrames of names and values,
each row remembering its line; a file staged in DuckDB: its cells there, its systems and
measures as :class:`~metaeval.batch.Columns`, without pandas). :func:`load` merges batches in one transaction: new
measures are added, and new systems and inputs (to a dataset that has some, only with
``allow_new``: an unknown id is more often a typo); values new to the warehouse are inserted;
values equal to the stored ones are left alone (so re-ingesting a file changes nothing); values
that differ are conflicts — reported with their file and line, and the transaction rolled
back — unless ``replace`` is set, when they overwrite the stored values.

A human judgment cell (system, input, measure) is compared and replaced as a whole: its
value is its set of annotators with their values, so another set of annotators is a
conflict, and ``replace`` leaves exactly the new set. Within one call the set is the union
over the batches: judgments split into one file per annotator load together, and a cell
given by several files is compared with the warehouse (and replaced) once, as that union.

Batches of one call that contradict each other (a score, text or one annotator's judgment
given two values, a measure of two kinds) are an error whatever ``replace`` says: it is the
input, not the warehouse, that needs fixing. The same value given by two batches is not a
contradiction; it is counted (inserted or replaced) for the first batch giving it only. A
measure's kind and direction never change once stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import duckdb

from metaeval.batch import Batch, Columns, LoadReport
from metaeval.errors import CommitError, ConflictError, Hint, NewIdsError, WarehouseError, one_line, text
from metaeval.merge import (
    MAX_CONFLICTS_SHOWN,
    Loaded,
    check_conflicts,
    check_duplicates,
    check_fresh_duplicates,
    check_input_conflicts,
    merge,
    merge_judgments,
    stored_measures,
)


def load(
    con: duckdb.DuckDBPyConnection,
    dataset: str,
    batches: list[Batch],
    *,
    replace: bool = False,
    command: str | None = None,
    allow_new: bool = False,
    before_commit: Callable[[], object] | None = None,
) -> list[LoadReport]:
    """Merge ``batches`` into ``dataset`` in one transaction; all or nothing.

    Every batch's rows are staged in temporary tables of ``con`` (a batch parsed in Python is
    read from its DataFrames; one staged by DuckDB already is one) and checked and merged
    with set-based SQL: no row passes through Python.

    Systems and inputs new to a dataset that has some are a :class:`NewIdsError` unless
    ``allow_new``. A write that fails (a full disk) is a :class:`WarehouseError` saying that
    nothing was written; a commit that fails or is interrupted, a :class:`CommitError`
    saying whether it completed all the same, as far as ``con`` can still tell.

    ``before_commit``: called once everything is merged, inside the transaction (``con`` then
    sees the merged rows), to check what can only be checked on them; if it raises, the
    transaction is rolled back and its exception propagates unchanged.
    """
    if not dataset or not dataset.strip():
        raise WarehouseError("the dataset name must not be empty")
    loaded = Loaded(con, single=len(batches) == 1)
    con.begin()
    try:
        dataset_id = _ensure_dataset(con, dataset)
        sources = [_sources(con, b, i, loaded) for i, b in enumerate(batches)]
        if not allow_new:
            _check_new_ids(con, dataset, dataset_id, batches, sources)
        last = len(batches) - 1
        staged = [_stage_batch(con, dataset_id, b, i, s, loaded, remember=i < last)
                  for i, (b, s) in enumerate(zip(batches, sources))]
        counted: dict[int, list[int]] = {}
        reports = [_load_batch(con, dataset_id, b, i, s, replace, command, loaded, counted)
                   for i, (b, s) in enumerate(zip(batches, staged))]
        _drop_staged(con, loaded)
        for batch in batches:
            if batch.unchanged is not None:
                batch.unchanged()
        if before_commit is not None:
            before_commit()
    except BaseException as exc:
        _quietly(con.rollback)  # after a fatal error DuckDB has dropped the transaction and refuses this
        _drop_staged(con, loaded)
        if isinstance(exc, (duckdb.IOException, duckdb.FatalException)):
            raise WarehouseError(f"cannot write to the warehouse ({one_line(exc)}); nothing was written") from None
        raise
    try:
        con.commit()
    except BaseException as exc:
        interrupted = isinstance(exc, (KeyboardInterrupt, duckdb.InterruptException))
        error = CommitError(None if interrupted else one_line(exc), loaded.ingest_ids,
                            sum(r.inserted for r in reports), sum(r.replaced for r in reports))
        raise error.checked(*_commit_outcome(con, loaded.ingest_ids)) from None
    return reports


def committed(con: duckdb.DuckDBPyConnection, ingest_ids: list[int]) -> bool:
    """Whether the ``ingests`` rows ``ingest_ids``, written with the rows of their transaction,
    are in the warehouse as ``con`` sees it (outside any transaction of its own)."""
    if not ingest_ids:
        return True  # the transaction changed nothing
    found = con.execute("SELECT count(*) FROM ingests WHERE list_contains(?, ingest_id)", [ingest_ids]).fetchall()
    return found[0][0] == len(ingest_ids)


def _commit_outcome(con: duckdb.DuckDBPyConnection, ingest_ids: list[int]) -> tuple[bool | None, str | None]:
    """After ``con.commit()`` raised: whether the transaction is committed, and why that cannot
    be told (None, reason) when ``con`` no longer answers."""
    try:
        con.rollback()
        return False, None  # the transaction was still open: never committed, and now rolled back
    except duckdb.TransactionException:
        pass  # no transaction: the commit completed, or DuckDB rolled it back; the ingests rows say which
    except duckdb.Error as exc:
        return None, one_line(exc)
    try:
        return committed(con, ingest_ids), None
    except duckdb.Error as exc:
        return None, one_line(exc)


def _drop_staged(con: duckdb.DuckDBPyConnection, loaded: Loaded) -> None:
    for name in _STAGED:
        _quietly(con.unregister, name)
    for name in loaded.temp:
        if name.startswith("_view_"):
            _quietly(con.unregister, name)
        elif name in loaded.fresh:
            _quietly(con.execute, f"DROP VIEW IF EXISTS {name}")
        else:
            _quietly(con.execute, f"DROP TABLE IF EXISTS {name}")
    loaded.temp.clear()


def _quietly(method, *args) -> None:
    """``method(*args)``, ignoring a DuckDB error (when cleaning up after another)."""
    try:
        method(*args)
    except duckdb.Error:
        pass


_STAGED = ("staged_systems", "staged_measures", "changed_cells")


def _ensure_dataset(con: duckdb.DuckDBPyConnection, name: str) -> int:
    con.execute("INSERT INTO datasets (name) VALUES (?) ON CONFLICT DO NOTHING", [name])
    return con.execute("SELECT dataset_id FROM datasets WHERE name = ?", [name]).fetchall()[0][0]


_FRAME_KEYS = {"cells": ["system", "input", "measure", "annotator", "replicate"], "summaries": ["system", "input"],
               "references": ["input", "reference_id"], "documents": ["input", "position"]}
_SINGULAR = {"cells": "cell", "summaries": "summary", "references": "reference", "documents": "document"}


def _sources(con, batch: Batch, origin: int, loaded: Loaded) -> dict[str, str | None]:
    """The relations (SQL names) holding the batch's cells and texts as parsed (names, not
    ids): ``cells``, ``summaries``, ``references``, ``documents``; None for what it lacks."""
    out: dict[str, str | None] = {"cells": batch.cells_table}
    frames = {"summaries": batch.summaries, "references": batch.references, "documents": batch.documents}
    if batch.cells_table is None:
        frames["cells"] = batch.cells.astype({"system": str, "input": str, "measure": str, "value": float})
    for key, frame in frames.items():  # parsers refuse these; the tables have no primary key to catch them
        if not frame.empty and frame.duplicated([c for c in _FRAME_KEYS[key] if c in frame.columns]).any():
            raise WarehouseError(f"{batch.file}: a {_SINGULAR[key]} is given more than once (same {_FRAME_KEYS[key]}); "
                                 "nothing was written")
    for key, frame in frames.items():
        if frame.empty:
            out[key] = None
            continue
        name = f"_view_{key}_{origin}"
        con.register(name, frame)
        loaded.temp.append(name)
        out[key] = name
    return out


def _check_new_ids(con, dataset: str, dataset_id: int, batches: list[Batch],
                   sources: list[dict[str, str | None]]) -> None:
    """Systems and inputs of the batches that the dataset lacks, when it has any: a
    :class:`NewIdsError`. A new dataset (or one holding no systems or inputs yet) takes all."""
    stored = con.execute("SELECT (SELECT count(*) FROM systems WHERE dataset_id = $d) "
                         "+ (SELECT count(*) FROM inputs WHERE dataset_id = $d)", {"d": dataset_id}).fetchall()[0][0]
    if not stored:
        return
    new = {column: _new_ids(con, dataset_id, batches, sources, column) for column in ("system", "input")}
    if new["system"] or new["input"]:
        raise NewIdsError(dataset, new["system"], new["input"])


def _new_ids(con, dataset_id: int, batches: list[Batch], sources: list[dict[str, str | None]],
             column: str) -> list[tuple[str, str]]:
    """The ids in ``column`` (system or input) of the batches that the dataset lacks, each
    with the file and line that first gives it, in the order they are given."""
    table = "systems" if column == "system" else "inputs"
    found: dict[str, str] = {}
    for batch, source in zip(batches, sources):
        parts = ["cells", "summaries"] + (["references", "documents"] if column == "input" else [])
        selects = [f"SELECT CAST({column} AS VARCHAR) AS name, line, {k} AS part FROM {source[p]}"
                   for k, p in enumerate(parts) if source[p]]
        if selects:
            rows = con.execute(
                f"""SELECT name, arg_min(line, (line, part)) FROM ({' UNION ALL '.join(selects)})
                    WHERE name NOT IN (SELECT name FROM {table} WHERE dataset_id = ?)
                    GROUP BY name ORDER BY min((line, part)), name""", [dataset_id]).fetchall()
            for name, line in rows:
                found.setdefault(name, batch.file if line is None else f"{batch.file}:{int(line)}")
        if column == "system":  # systems listed without rows (possible in a Batch built in Python)
            known = {r[0] for r in con.execute("SELECT name FROM systems WHERE dataset_id = ?",
                                                [dataset_id]).fetchall()}
            for name in (str(n) for n in batch.systems["name"]):
                if name not in known:
                    found.setdefault(name, batch.file)
    return list(found.items())


def _stage_batch(con, dataset_id: int, batch: Batch, origin: int, source: dict[str, str | None], loaded: Loaded,
                 *, remember: bool) -> dict[str, str | None]:
    """Add the batch's names and measures, resolve its rows to ids and check them against
    the earlier batches of the call; its staged rows (temp tables) by target table.
    ``remember``: keep them for the later batches to be checked against (judgments always)."""
    _add_names(con, dataset_id, batch, source, loaded)
    _add_measures(con, dataset_id, batch, loaded)
    staged = _resolve(con, dataset_id, batch, origin, source, loaded)
    loaded.files.append(batch.file)
    check_input_conflicts(con, staged, batch.file, loaded)
    for table, relation in staged.items():
        if relation and (remember or (table == "judgments" and not loaded.single)):
            loaded.remember(table, relation)
    return staged


def _load_batch(con, dataset_id: int, batch: Batch, origin: int, staged: dict[str, str | None], replace: bool,
                command, loaded: Loaded, counted: dict[int, list[int]]) -> LoadReport:
    """Check the batch against the warehouse and merge it. Its judgments are the whole cells
    (all batches' annotators) it is the first to give; their rows are counted for the
    batch giving each (``counted``: origin -> [inserted, replaced])."""
    judgments = None
    if staged["judgments"] or "judgments" in loaded.rows:
        judgments = loaded.judgment_cells(origin, staged["judgments"])
    staged = {**staged, "judgments": judgments}
    if not replace:
        check_conflicts(con, staged, batch.file, loaded.files, loaded.fresh)
    inserted = replaced = 0
    for table, relation in staged.items():
        if relation is None:
            continue
        if table == "judgments":
            for o, counts in merge_judgments(con, relation, loaded.fresh).items():
                total = counted.setdefault(o, [0, 0])
                total[0], total[1] = total[0] + counts[0], total[1] + counts[1]
        else:
            i, r = merge(con, table, relation, loaded.fresh)
            inserted, replaced = inserted + i, replaced + r
        if relation in loaded.fresh and not batch.unique_cells:
            check_fresh_duplicates(con, table, dataset_id, batch)
    own = counted.get(origin, [0, 0])
    inserted, replaced = inserted + own[0], replaced + own[1]
    report = LoadReport(batch.file, batch.rows, inserted, replaced, batch.contents)
    if report.changed:
        [(ingest_id,)] = con.execute(
            """INSERT INTO ingests (dataset_id, format, file, sha256, options, rows, inserted, replaced, command)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ingest_id""",
            [dataset_id, batch.format, batch.file, batch.sha256,
             json.dumps(batch.options, sort_keys=True), batch.rows, inserted, replaced, command]).fetchall()
        loaded.ingest_ids.append(ingest_id)
    return report


def _register(con, name: str, frame, loaded: Loaded) -> str:
    """The relation holding ``frame``'s rows: a DataFrame registered as ``name``, or
    :class:`Columns` (text) as the temporary table ``<name>_columns`` (no pandas needed)."""
    if not isinstance(frame, Columns):
        con.register(name, frame)
        return name
    table = f"{name}_columns"
    columns = frame.columns
    con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT "
                + ", ".join(f"unnest(CAST(${i + 1} AS VARCHAR[])) AS {c}" for i, c in enumerate(columns)),
                [[None if v is None else str(v) for v in frame[c]] for c in columns])
    loaded.temp.append(table)
    return table


def _add_names(con, dataset_id: int, batch: Batch, source: dict[str, str | None], loaded: Loaded) -> None:
    """Add the batch's systems and inputs that the dataset does not have yet."""
    systems = batch.systems if isinstance(batch.systems, Columns) else batch.systems.astype({"name": str})
    staged = _register(con, "staged_systems", systems, loaded)
    p = {"dataset_id": dataset_id}
    con.execute(
        f"""INSERT INTO systems (dataset_id, name, type)
           SELECT $dataset_id, name, any_value(type) FROM {staged}
           WHERE name NOT IN (SELECT name FROM systems WHERE dataset_id = $dataset_id)
           GROUP BY name""", p)
    known = batch.cell_inputs is not None and source["cells"] == batch.cells_table
    inputs = [f"SELECT CAST(input AS VARCHAR) AS name FROM {source[k]}"
              for k in ("cells", "summaries", "references", "documents") if source[k] and not (k == "cells" and known)]
    if known:
        inputs.append("SELECT unnest(CAST($cell_inputs AS VARCHAR[])) AS name")
        p["cell_inputs"] = batch.cell_inputs
    if inputs:
        con.execute(
            f"""INSERT INTO inputs (dataset_id, name)
                SELECT DISTINCT $dataset_id, name FROM ({' UNION ALL '.join(inputs)})
                WHERE name NOT IN (SELECT name FROM inputs WHERE dataset_id = $dataset_id)""", p)


def _add_measures(con, dataset_id: int, batch: Batch, loaded: Loaded) -> None:
    """Add the batch's new measures; a measure stored (or given by an earlier batch) with
    another kind or direction is an error, which ``replace`` does not lift."""
    staged = _register(con, "staged_measures", batch.measures, loaded)
    p = {"dataset_id": dataset_id}
    clashes = con.execute(
        f"""SELECT s.name, m.kind, s.kind, m.direction, s.direction
           FROM {staged} AS s JOIN measures AS m
             ON m.dataset_id = $dataset_id AND m.name = s.name
           WHERE m.kind <> s.kind OR m.direction <> s.direction
           ORDER BY s.name""", p).fetchall()
    inside, outside = [], []
    for name, k0, k1, d0, d1 in clashes:
        if name in loaded.measures:
            inside.append(f"{batch.file}: measure {name!r} is {_kind(k1, d1)} here, "
                          f"{_kind(k0, d0)} in {loaded.measures[name]}")
        else:
            outside.append(f"{batch.file}: measure {name!r} is stored as {_kind(k0, d0)}, "
                           f"this file makes it {_kind(k1, d1)}")
    how = ("check the --human / --lower patterns (and a table's kind and annotator columns), "
           "or give the values another measure name")
    if inside:
        raise ConflictError(inside[:MAX_CONFLICTS_SHOWN], len(inside), headline=(
            f"{len(inside)} measure(s) have another kind or direction in another file of this ingest; "
            f"nothing was written. Make the files agree: {how}"))
    if outside:
        names = [name for name, *_ in clashes if name not in loaded.measures]
        dataset = con.execute("SELECT name FROM datasets WHERE dataset_id = $dataset_id", p).fetchone()[0]
        raise ConflictError(outside[:MAX_CONFLICTS_SHOWN], len(outside), headline=text(
            f"{len(outside)} measure(s) would change kind or direction, which a stored measure keeps; "
            "nothing was written. Stored under the wrong kind (a judgment ingested without --human)? Drop it (`",
            Hint("drop_measure", positional=(dataset, names[0])),
            "`, and each other measure below; --cascade if results were computed from it), then ingest again. "
            f"Otherwise {how} (or load them into another dataset)"))
    con.execute(
        f"""INSERT INTO measures (dataset_id, name, kind, direction)
           SELECT $dataset_id, name, kind, direction FROM {staged}
           WHERE name NOT IN (SELECT name FROM measures WHERE dataset_id = $dataset_id)""", p)
    for name in batch.measures["name"]:
        loaded.measures.setdefault(name, batch.file)


def _kind(kind: str, direction: str) -> str:
    return f"{kind} ({direction} is better)"


_RESOLVE = {
    "scores": ("SELECT s.system_id, i.input_id, m.measure_id, CAST(t.value AS DOUBLE) AS value, {line}, {tag}, "
               "{replicate} AS replicate FROM {rel} t {systems} {inputs} {measures} WHERE t.annotator IS NULL"),
    "judgments": ("SELECT s.system_id, i.input_id, m.measure_id, CAST(t.annotator AS VARCHAR) AS annotator, "
                  "CAST(t.value AS DOUBLE) AS value, {line}, {tag} "
                  "FROM {rel} t {systems} {inputs} {measures} WHERE t.annotator IS NOT NULL"),
    "summaries": "SELECT s.system_id, i.input_id, t.text, {line}, {tag} FROM {rel} t {systems} {inputs}",
    '"references"': "SELECT i.input_id, t.reference_id, t.text, {line}, {tag} FROM {rel} t {inputs}",
    "documents": "SELECT i.input_id, t.position, t.text, {line}, {tag} FROM {rel} t {inputs}",
}
_SOURCE = {"scores": "cells", "judgments": "cells", "summaries": "summaries", '"references"': "references",
           "documents": "documents"}


def _run_sql(batch: Batch) -> str:
    """SQL of a staged score's run (``t.replicate`` where the batch's cells have one, else the
    batch's ``replicate``): a non-negative integer."""
    default = batch.replicate
    if isinstance(default, bool) or not isinstance(default, int) or not 0 <= default <= 2**31 - 1:
        raise WarehouseError(f"{batch.file}: the run number must be a non-negative integer; got {default!r}")
    runs = batch.runs or (batch.cells_table is None and "replicate" in batch.cells.columns)
    if runs and not batch.unique_cells:   # check_duplicates counts cells, not runs
        raise WarehouseError(f"{batch.file}: cells with runs must be checked for duplicates by their reader")
    return f"coalesce(CAST(t.replicate AS INTEGER), {default})" if runs else f"CAST({default} AS INTEGER)"


def _resolve(con, dataset_id: int, batch: Batch, origin: int, source: dict[str, str | None],
             loaded: Loaded) -> dict[str, str | None]:
    """The batch's rows with names resolved to ids, by target table: temporary tables
    ``_staged_<table>_<origin>`` with the key, the value, ``line``, ``file`` and ``origin``."""
    joins = {
        "systems": "JOIN systems s ON s.dataset_id = $dataset_id AND s.name = CAST(t.system AS VARCHAR)",
        "inputs": "JOIN inputs i ON i.dataset_id = $dataset_id AND i.name = CAST(t.input AS VARCHAR)",
        "measures": "JOIN measures m ON m.dataset_id = $dataset_id AND m.name = CAST(t.measure AS VARCHAR)",
    }
    out: dict[str, str | None] = {}
    for table, sql in _RESOLVE.items():
        relation = source[_SOURCE[table]]
        if relation is None:
            out[table] = None
            continue
        name = f"_staged_{table.strip(chr(34))}_{origin}"
        if table in ("scores", "judgments") and not batch.counts[table == "judgments"]:
            out[table] = None
            continue
        query = sql.format(rel=relation, line="CAST(t.line AS BIGINT) AS line",
                           tag=f"CAST({int(origin)} AS INTEGER) AS origin", replicate=_run_sql(batch), **joins)
        query = query.replace("$dataset_id", str(int(dataset_id)))
        loaded.temp.append(name)
        if loaded.single and table in ("scores", "judgments") and not stored_measures(con, table, dataset_id, batch):
            # values of new measures, read once by the merge: a view, not a copy of millions of rows
            con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {query}")
            loaded.fresh.add(name)
            out[table] = name
            continue
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS {query}")
        empty = not con.execute(f"SELECT EXISTS (SELECT 1 FROM {name})").fetchall()[0][0]
        out[table] = None if empty else name
        if not empty and table in ("scores", "judgments") and not batch.unique_cells:
            check_duplicates(con, table, name, batch.file)
    return out


