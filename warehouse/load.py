"""Atomic, idempotent loading of parsed files into the warehouse.

Ingest modules parse a file into a :class:`Batch` (plain DataFrames of names and values,
each row remembering its line). :func:`load` merges batches in one transaction: new
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
from dataclasses import dataclass, field

import duckdb
import pandas as pd

from metaeval.errors import CommitError, ConflictError, NewIdsError, WarehouseError, one_line

CELL_COLUMNS = ["system", "input", "measure", "annotator", "value", "line"]
MEASURE_COLUMNS = ["name", "kind", "direction"]
SUMMARY_COLUMNS = ["system", "input", "text", "line"]
REFERENCE_COLUMNS = ["input", "reference_id", "text", "line"]
DOCUMENT_COLUMNS = ["input", "position", "text", "line"]
MAX_CONFLICTS_SHOWN = 20


def _frame(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


@dataclass
class Batch:
    """What one file contributes. ``cells.annotator`` is None for automatic scores."""

    file: str
    format: str
    sha256: str
    options: dict
    systems: pd.DataFrame = field(default_factory=lambda: _frame(["name", "type"]))
    measures: pd.DataFrame = field(default_factory=lambda: _frame(MEASURE_COLUMNS))
    cells: pd.DataFrame = field(default_factory=lambda: _frame(CELL_COLUMNS))
    summaries: pd.DataFrame = field(default_factory=lambda: _frame(SUMMARY_COLUMNS))
    references: pd.DataFrame = field(default_factory=lambda: _frame(REFERENCE_COLUMNS))
    documents: pd.DataFrame = field(default_factory=lambda: _frame(DOCUMENT_COLUMNS))

    @property
    def rows(self) -> int:
        return len(self.cells) + len(self.summaries) + len(self.references) + len(self.documents)

    @property
    def contents(self) -> str:
        """What the file gave, e.g. ``"2400 summaries, 100 references, 0 documents"``: the
        kinds of values it has, and all three kinds of text if it has any text."""
        human = int(self.cells["annotator"].notna().sum())
        values = [(len(self.cells) - human, "score", "scores"), (human, "judgment", "judgments")]
        texts = [(len(self.summaries), "summary", "summaries"), (len(self.references), "reference", "references"),
                 (len(self.documents), "document", "documents")]
        shown = [v for v in values if v[0]] + (texts if any(n for n, _, _ in texts) else [])
        return ", ".join(_count(*v) for v in shown) or "nothing"

    def input_names(self) -> pd.Series:
        names = [self.cells["input"], self.summaries["input"], self.references["input"], self.documents["input"]]
        return pd.concat(names, ignore_index=True).drop_duplicates()


def _count(n: int, singular: str, plural: str) -> str:
    return f"{n} {singular if n == 1 else plural}"


@dataclass(frozen=True)
class LoadReport:
    file: str
    rows: int
    inserted: int
    replaced: int
    contents: str = ""  # what was read, as Batch.contents says it

    @property
    def changed(self) -> bool:
        return bool(self.inserted or self.replaced)


# table -> (key columns, value column) of what is compared and replaced as one value. For
# judgments the key is the cell's and the value its annotators' values (see _comparable);
# _ROW_KEYS are the stored rows' keys where they differ from that.
_TARGETS = {
    "scores": (["system_id", "input_id", "measure_id"], "value"),
    "judgments": (["system_id", "input_id", "measure_id"], "value"),
    "summaries": (["system_id", "input_id"], "text"),
    '"references"': (["input_id", "reference_id"], "text"),
    "documents": (["input_id", "position"], "text"),
}
_ROW_KEYS = {"judgments": ["system_id", "input_id", "measure_id", "annotator"]}


def _row_keys(table: str) -> list[str]:
    """The key of one value as the input gives it: a judgment's includes the annotator."""
    return _ROW_KEYS.get(table, _TARGETS[table][0])


@dataclass
class _Loaded:
    """What the earlier batches of one :func:`load` call gave: to tell a conflict inside
    the input (naming both files) from a conflict with the warehouse, and to gather each
    judgment cell's annotators over the batches."""

    measures: dict[str, str] = field(default_factory=dict)         # name -> first file giving it
    rows: dict[str, pd.DataFrame] = field(default_factory=dict)    # table -> staged rows with their file, origin
    ingest_ids: list[int] = field(default_factory=list)            # the ingests rows written

    def remember(self, table: str, frame: pd.DataFrame, file: str, origin: int) -> None:
        """Keep the rows of ``frame`` (of batch number ``origin``) whose key no earlier batch gave."""
        if frame.empty:
            return
        frame = frame.assign(file=file, origin=origin)
        earlier = self.rows.get(table)
        if earlier is not None:
            keys = _row_keys(table)
            known = frame[keys].merge(earlier[keys].drop_duplicates(), how="left", on=keys, indicator=True)
            frame = frame[(known["_merge"] == "left_only").to_numpy()]
            frame = pd.concat([earlier, frame], ignore_index=True)
        self.rows[table] = frame

    def judgment_cells(self, origin: int, own: pd.DataFrame) -> pd.DataFrame:
        """The judgment rows, from every batch, of the cells that batch ``origin`` is the
        first to give (``own``, its staged judgments, when no batch gives any); ``line`` is
        null on the rows of other batches, so that a cell is named by its first batch's line."""
        union = self.rows.get("judgments")
        if union is None:
            return own.assign(file=pd.Series(dtype=object), origin=pd.Series(dtype="int64"))
        cell = _TARGETS["judgments"][0]
        first = union.groupby(cell)["origin"].transform("min")
        rows = union[(first == origin).to_numpy()].copy()
        rows["line"] = rows["line"].astype("Int64").where(rows["origin"] == origin, pd.NA)
        return rows.reset_index(drop=True)


def load(
    con: duckdb.DuckDBPyConnection,
    dataset: str,
    batches: list[Batch],
    *,
    replace: bool = False,
    command: str | None = None,
    allow_new: bool = False,
) -> list[LoadReport]:
    """Merge ``batches`` into ``dataset`` in one transaction; all or nothing.

    Systems and inputs new to a dataset that has some are a :class:`NewIdsError` unless
    ``allow_new``. A write that fails (a full disk) is a :class:`WarehouseError` saying that
    nothing was written; a commit that fails or is interrupted, a :class:`CommitError`
    saying whether it completed all the same, as far as ``con`` can still tell.
    """
    if not dataset or not dataset.strip():
        raise WarehouseError("the dataset name must not be empty")
    con.begin()
    try:
        dataset_id = _ensure_dataset(con, dataset)
        if not allow_new:
            _check_new_ids(con, dataset, dataset_id, batches)
        loaded = _Loaded()
        staged = [_stage_batch(con, dataset_id, b, i, loaded) for i, b in enumerate(batches)]
        counted: dict[int, list[int]] = {}
        reports = [_load_batch(con, dataset_id, b, i, s, replace, command, loaded, counted)
                   for i, (b, s) in enumerate(zip(batches, staged))]
        _unregister_staged(con)
    except BaseException as exc:
        _quietly(con.rollback)  # after a fatal error DuckDB has dropped the transaction and refuses this
        _unregister_staged(con)
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


def _unregister_staged(con: duckdb.DuckDBPyConnection) -> None:
    for name in _STAGED:
        _quietly(con.unregister, name)


def _quietly(method, *args) -> None:
    """``method(*args)``, ignoring a DuckDB error (when cleaning up after another)."""
    try:
        method(*args)
    except duckdb.Error:
        pass


_STAGED = ("staged_systems", "staged_inputs", "staged_measures", "staged_cells",
           "staged_summaries", "staged_references", "staged_documents", "staged_rows", "other_rows",
           "changed_cells")


def _ensure_dataset(con: duckdb.DuckDBPyConnection, name: str) -> int:
    con.execute("INSERT INTO datasets (name) VALUES (?) ON CONFLICT DO NOTHING", [name])
    return con.execute("SELECT dataset_id FROM datasets WHERE name = ?", [name]).fetchall()[0][0]


def _check_new_ids(con, dataset: str, dataset_id: int, batches: list[Batch]) -> None:
    """Systems and inputs of the batches that the dataset lacks, when it has any: a
    :class:`NewIdsError`. A new dataset (or one holding no systems or inputs yet) takes all."""
    stored = {column: {r[0] for r in con.execute(f"SELECT name FROM {table} WHERE dataset_id = ?",
                                                  [dataset_id]).fetchall()}
              for column, table in (("system", "systems"), ("input", "inputs"))}
    if not stored["system"] and not stored["input"]:
        return
    new = {column: _new_ids(batches, column, known) for column, known in stored.items()}
    if new["system"] or new["input"]:
        raise NewIdsError(dataset, new["system"], new["input"])


def _new_ids(batches: list[Batch], column: str, known: set[str]) -> list[tuple[str, str]]:
    """The ids in ``column`` (system or input) of the batches that are not ``known``, each
    with the file and line that first gives it, in the order they are given."""
    found: dict[str, str] = {}
    for batch in batches:
        frames = [batch.cells, batch.summaries] + ([batch.references, batch.documents] if column == "input" else [])
        frames = [f[[column, "line"]] for f in frames if not f.empty]
        if frames:
            rows = pd.concat(frames, ignore_index=True)
            rows[column] = rows[column].astype(str)
            rows = rows[~rows[column].isin(known)].sort_values("line", kind="stable").drop_duplicates(column)
            for name, line in zip(rows[column], rows["line"]):
                found.setdefault(name, f"{batch.file}:{int(line)}")
        if column == "system":  # systems listed without rows (possible in a Batch built in Python)
            for name in batch.systems["name"].astype(str):
                if name not in known:
                    found.setdefault(name, batch.file)
    return list(found.items())


def _stage_batch(con, dataset_id: int, batch: Batch, origin: int, loaded: _Loaded) -> dict[str, pd.DataFrame]:
    """Add the batch's names and measures, resolve its rows to ids and check them against
    the earlier batches of the call; its rows by target table."""
    _add_names(con, dataset_id, batch)
    _add_measures(con, dataset_id, batch, loaded)
    staged = _resolve(con, dataset_id, batch)
    _check_input_conflicts(con, staged, batch.file, loaded)
    for table, frame in staged.items():
        loaded.remember(table, frame, batch.file, origin)
    return staged


def _load_batch(con, dataset_id: int, batch: Batch, origin: int, staged: dict[str, pd.DataFrame], replace: bool,
                command, loaded: _Loaded, counted: dict[int, list[int]]) -> LoadReport:
    """Check the batch against the warehouse and merge it. Its judgments are the whole cells
    (all batches' annotators) it is the first to give; their rows are counted for the
    batch giving each (``counted``: origin -> [inserted, replaced])."""
    staged = {**staged, "judgments": loaded.judgment_cells(origin, staged["judgments"])}
    if not replace:
        _check_conflicts(con, staged, batch.file)
    inserted = replaced = 0
    for table, frame in staged.items():
        if table == "judgments":
            for o, counts in _merge_judgments(con, frame).items():
                total = counted.setdefault(o, [0, 0])
                total[0], total[1] = total[0] + counts[0], total[1] + counts[1]
            continue
        i, r = _merge(con, table, frame)
        inserted, replaced = inserted + i, replaced + r
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


def _add_names(con, dataset_id: int, batch: Batch) -> None:
    """Add the batch's systems and inputs that the dataset does not have yet."""
    con.register("staged_systems", batch.systems.astype({"name": str}))
    con.register("staged_inputs", pd.DataFrame({"name": batch.input_names().astype(str)}))
    p = {"dataset_id": dataset_id}
    con.execute(
        """INSERT INTO systems (dataset_id, name, type)
           SELECT $dataset_id, name, any_value(type) FROM staged_systems
           WHERE name NOT IN (SELECT name FROM systems WHERE dataset_id = $dataset_id)
           GROUP BY name""", p)
    con.execute(
        """INSERT INTO inputs (dataset_id, name)
           SELECT DISTINCT $dataset_id, name FROM staged_inputs
           WHERE name NOT IN (SELECT name FROM inputs WHERE dataset_id = $dataset_id)""", p)


def _add_measures(con, dataset_id: int, batch: Batch, loaded: _Loaded) -> None:
    """Add the batch's new measures; a measure stored (or given by an earlier batch) with
    another kind or direction is an error, which ``replace`` does not lift."""
    con.register("staged_measures", batch.measures)
    p = {"dataset_id": dataset_id}
    clashes = con.execute(
        """SELECT s.name, m.kind, s.kind, m.direction, s.direction
           FROM staged_measures AS s JOIN measures AS m
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
        raise ConflictError(outside[:MAX_CONFLICTS_SHOWN], len(outside), headline=(
            f"{len(outside)} measure(s) would change kind or direction, which a stored measure keeps; "
            f"nothing was written. To load these values, {how} (or load them into another dataset)"))
    con.execute(
        """INSERT INTO measures (dataset_id, name, kind, direction)
           SELECT $dataset_id, name, kind, direction FROM staged_measures
           WHERE name NOT IN (SELECT name FROM measures WHERE dataset_id = $dataset_id)""", p)
    for name in batch.measures["name"]:
        loaded.measures.setdefault(name, batch.file)


def _kind(kind: str, direction: str) -> str:
    return f"{kind} ({direction} is better)"


def _resolve(con, dataset_id: int, batch: Batch) -> dict[str, pd.DataFrame]:
    """The batch's rows with names resolved to ids, by target table."""
    return {
        "scores": _resolve_cells(con, dataset_id, batch.cells, human=False),
        "judgments": _resolve_cells(con, dataset_id, batch.cells, human=True),
        "summaries": _resolve_texts(con, dataset_id, "staged_summaries", batch.summaries,
                                    "SELECT s.system_id, i.input_id, t.text, t.line FROM staged_summaries t "
                                    "JOIN systems s ON s.dataset_id = $dataset_id AND s.name = t.system "
                                    "JOIN inputs i ON i.dataset_id = $dataset_id AND i.name = t.input"),
        '"references"': _resolve_texts(con, dataset_id, "staged_references", batch.references,
                                       "SELECT i.input_id, t.reference_id, t.text, t.line FROM staged_references t "
                                       "JOIN inputs i ON i.dataset_id = $dataset_id AND i.name = t.input"),
        "documents": _resolve_texts(con, dataset_id, "staged_documents", batch.documents,
                                    "SELECT i.input_id, t.position, t.text, t.line FROM staged_documents t "
                                    "JOIN inputs i ON i.dataset_id = $dataset_id AND i.name = t.input"),
    }


def _resolve_cells(con, dataset_id: int, cells: pd.DataFrame, *, human: bool) -> pd.DataFrame:
    part = cells[cells["annotator"].notna()] if human else cells[cells["annotator"].isna()]
    part = part.astype({"system": str, "input": str, "measure": str, "value": float, "line": int})
    con.register("staged_cells", part)
    annotator = ", c.annotator" if human else ""
    return con.execute(
        f"""SELECT s.system_id, i.input_id, m.measure_id{annotator}, c.value, c.line
            FROM staged_cells c
            JOIN systems s ON s.dataset_id = $dataset_id AND s.name = c.system
            JOIN inputs i ON i.dataset_id = $dataset_id AND i.name = c.input
            JOIN measures m ON m.dataset_id = $dataset_id AND m.name = c.measure""",
        {"dataset_id": dataset_id}).df()


def _resolve_texts(con, dataset_id: int, view: str, frame: pd.DataFrame, sql: str) -> pd.DataFrame:
    con.register(view, frame)
    return con.execute(sql, {"dataset_id": dataset_id}).df()


def _comparable(table: str, relation: str, extra: tuple[str, ...] = (), *, per_row: bool = False) -> str:
    """SQL for the rows of ``relation`` as ``table`` compares them: its key columns, a
    ``value`` column and the ``extra`` columns. A judgment cell is one row whose value is
    the list of its annotators' values, in annotator order (extra columns: their least);
    with ``per_row``, each annotator's value is compared on its own."""
    keys, value = _TARGETS[table]
    if table != "judgments" or per_row:
        return f"SELECT {', '.join([*_row_keys(table), f'{value} AS value', *extra])} FROM {relation}"
    firsts = "".join(f", min({c}) AS {c}" for c in extra)
    return (f"SELECT {', '.join(keys)}, list({{'annotator': annotator, 'value': value}} ORDER BY annotator) "
            f"AS value{firsts} FROM {relation} GROUP BY {', '.join(keys)}")


def _stored(table: str) -> str:
    """The rows of ``table`` whose key is among the staged rows' (``staged_rows``)."""
    keys, _ = _TARGETS[table]
    on = " AND ".join(f"t.{k} = r.{k}" for k in keys)
    return f"(SELECT t.* FROM {table} t WHERE EXISTS (SELECT 1 FROM staged_rows r WHERE {on}))"


def _differences(con, table: str, frame: pd.DataFrame, other: str, extra: tuple[str, ...] = (), *,
                 per_row: bool = False) -> list[tuple]:
    """``(line, key, other's extra columns..., other's value, staged value)`` for each key of
    ``frame`` that ``other`` (SQL of rows of ``table``) holds with another value, by line;
    ``per_row`` as :func:`_comparable` says."""
    keys = _row_keys(table) if per_row else _TARGETS[table][0]
    con.register("staged_rows", frame)
    on = " AND ".join(f"o.{k} = r.{k}" for k in keys)
    rows = con.execute(
        f"""WITH r AS ({_comparable(table, 'staged_rows', ('line',), per_row=per_row)}),
                 o AS ({_comparable(table, other, extra, per_row=per_row)})
            SELECT r.line, {', '.join('r.' + k for k in keys)}{''.join(', o.' + c for c in extra)}, o.value, r.value
            FROM r JOIN o ON {on}
            WHERE o.value IS DISTINCT FROM r.value ORDER BY r.line""").fetchall()
    con.unregister("staged_rows")
    return [(line, dict(zip(keys, rest[:len(keys)])), *rest[len(keys):]) for line, *rest in rows]


def _check_conflicts(con, staged: dict[str, pd.DataFrame], file: str) -> None:
    """Values of the batch that the warehouse holds otherwise: a :class:`ConflictError`.
    A judgment cell given by several files of the call is compared as the union of their
    annotators, and its message names the other files."""
    total, shown, judgments = 0, [], 0
    for table, frame in staged.items():
        if frame.empty:
            continue
        rows = _differences(con, table, frame, _stored(table))
        total += len(rows)
        if table == "judgments":
            judgments += len(rows)
        for line, key, old, new in rows[:MAX_CONFLICTS_SHOWN - len(shown)]:
            given = f"file has {_short(new)}"
            if table == "judgments":
                cell = frame[(frame[list(key)] == pd.Series(key)).all(axis=1)]
                others = list(dict.fromkeys(cell.loc[cell["line"].isna(), "file"]))
                if others:
                    given = f"this ingest has {_short(new)} (from this file and {', '.join(others)})"
            shown.append(f"{file}:{line}: {_what(con, table, key)}: warehouse has {_short(old)}, {given}")
    if total:
        headline = None
        if judgments:
            headline = (f"{total} value(s) conflict with the warehouse; nothing was written (use --replace to "
                        "overwrite them). A judgment cell's value is its whole set of annotators: --replace leaves "
                        "exactly the annotators this command gives, so to add annotators to stored cells, ingest "
                        "the files of all the cells' annotators together, in one command")
        raise ConflictError(shown, total, headline=headline)


def _check_input_conflicts(con, staged: dict[str, pd.DataFrame], file: str, loaded: _Loaded) -> None:
    """Values of the batch that an earlier batch of the same call gave otherwise: an error
    naming both places, whatever ``replace`` says."""
    total, shown = 0, []
    for table, frame in staged.items():
        if frame.empty or table not in loaded.rows:
            continue
        con.register("other_rows", loaded.rows[table])
        rows = _differences(con, table, frame, "other_rows", ("file", "line"), per_row=True)
        total += len(rows)
        for line, key, other_file, other_line, old, new in rows[:MAX_CONFLICTS_SHOWN - len(shown)]:
            shown.append(f"{file}:{line}: {_what(con, table, key)}: {_short(new)} here, "
                         f"{_short(old)} in {other_file}:{other_line}")
    if total:
        raise ConflictError(shown, total, headline=(
            f"{total} value(s) conflict within the input: files of this ingest give the same score, text or "
            "annotator's judgment different values (files may give a judgment cell different annotators); "
            "nothing was written. Fix or leave out one of the files"))


def _what(con, table: str, key: dict) -> str:
    """The table and the names of a key's internal ids (only for error messages)."""
    parts = []
    for col, names, label in (("system_id", "systems", "system"), ("input_id", "inputs", "input"),
                              ("measure_id", "measures", "measure")):
        if col in key:
            name = con.execute(f"SELECT name FROM {names} WHERE {col} = ?", [key[col]]).fetchall()[0][0]
            parts.append(f"{label}={name}")
    parts += [f"{k}={v}" for k, v in key.items() if not k.endswith("_id") or k == "reference_id"]
    return f"{table.strip(chr(34))} " + " ".join(parts)


def _short(value) -> str:
    """A value for a message; a judgment cell as ``{annotator: value, ...}``."""
    if isinstance(value, list):
        text = "{" + ", ".join(f"{a['annotator']}: {a['value']!r}" for a in value) + "}"
    else:
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _merge(con, table: str, frame: pd.DataFrame) -> tuple[int, int]:
    """Insert rows new to ``table`` (not judgments: :func:`_merge_judgments`); overwrite those
    whose value differs. (inserted, replaced)."""
    if frame.empty:
        return 0, 0
    keys, value = _TARGETS[table]
    con.register("staged_rows", frame)
    on = " AND ".join(f"t.{k} = r.{k}" for k in keys)
    cols = ", ".join(keys + [value])
    replaced = con.execute(
        f"""UPDATE {table} AS t SET {value} = r.{value} FROM staged_rows r
            WHERE {on} AND t.{value} IS DISTINCT FROM r.{value}""").fetchall()[0][0]
    inserted = con.execute(
        f"""INSERT INTO {table} ({cols})
            SELECT {', '.join('r.' + c for c in keys + [value])} FROM staged_rows r
            WHERE NOT EXISTS (SELECT 1 FROM {table} t WHERE {on})""").fetchall()[0][0]
    con.unregister("staged_rows")
    return inserted, replaced


def _merge_judgments(con, frame: pd.DataFrame) -> dict[int, tuple[int, int]]:
    """Insert new judgment cells; leave each stored cell whose annotators or values differ
    with exactly the staged annotators and values. By the ``origin`` of the staged rows:
    (rows in new cells, rows in replaced cells)."""
    if frame.empty:
        return {}
    cell, row = _TARGETS["judgments"][0], _ROW_KEYS["judgments"]
    changed = [tuple(key.values()) for _, key, _, _ in _differences(con, "judgments", frame, _stored("judgments"))]
    con.register("changed_cells", pd.DataFrame(changed, columns=cell, dtype="int64"))
    con.register("staged_rows", frame)
    same_cell = " AND ".join(f"{{a}}.{k} = {{b}}.{k}" for k in cell).format
    same_row = " AND ".join(f"r.{k} = t.{k}" for k in row)
    counts = con.execute(
        f"""SELECT origin,
                   count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM judgments t WHERE {same_cell(a='t', b='r')})),
                   count(*) FILTER (WHERE EXISTS (SELECT 1 FROM changed_cells c WHERE {same_cell(a='c', b='r')}))
            FROM staged_rows r GROUP BY origin""").fetchall()
    con.execute(
        f"""DELETE FROM judgments t
            WHERE EXISTS (SELECT 1 FROM changed_cells c WHERE {same_cell(a='c', b='t')})
              AND NOT EXISTS (SELECT 1 FROM staged_rows r WHERE {same_row})""")
    con.execute(
        f"""UPDATE judgments AS t SET value = r.value FROM staged_rows r
            WHERE {same_row} AND t.value IS DISTINCT FROM r.value""")
    con.execute(
        f"""INSERT INTO judgments ({', '.join(row)}, value)
            SELECT {', '.join('r.' + c for c in row)}, r.value FROM staged_rows r
            WHERE NOT EXISTS (SELECT 1 FROM judgments t WHERE {same_row})""")
    con.unregister("staged_rows")
    con.unregister("changed_cells")
    return {origin: (inserted, replaced) for origin, inserted, replaced in counts}
