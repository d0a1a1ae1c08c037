"""A long table of values — CSV, TSV, Parquet or JSONL — with columns
``system, input, measure, value`` and optionally ``annotator`` and ``kind``.

A ``.tsv`` file is read exactly as a ``.csv`` file with a tab for the comma (same quoting, same
header, same errors), on every path below: DuckDB's reader and the exact Python reader alike.

Rows with an annotator, a ``kind`` of ``human`` or a measure matched by a ``human`` glob
are human judgments (annotator "0" when none is given); the others automatic scores.
Without an ``input`` column the values are per system (as in MT shared tasks) and are
stored under the single input :data:`SYSTEM_LEVEL_INPUT`.

Errors name a CSV record by the physical line it starts on (blank lines and line breaks
inside quoted fields counted), a JSONL record by its line, a Parquet record by its row.
CSV values are text, so ``value`` is parsed as a number; JSONL and Parquet are typed, so a
``value`` that is a string (``"0.5"``) or a boolean is an error.

A table without ``measure`` and ``value`` columns is *wide*: ``system, [input,] [annotator,]
<measure>...``, one column per measure (a spreadsheet of scores, a pandas DataFrame). Every
column but ``system``, ``input`` and ``annotator`` is a measure; an empty cell is a missing
value (not stored); ``--human`` globs mark the measure columns that are judgments (annotator
"0", or the row's ``annotator``, which a wide table may have only when every measure is human).
A measure column whose first value is text that is not a number holds names, not values: the
table has an unknown column layout (e.g. a long table under other names, ``metric,score``).

Reading: :func:`stage` reads a CSV, Parquet or long JSONL file (or a DataFrame) with DuckDB's
own readers and validates it there in SQL; the rows never pass through Python (a cell given
twice is left to :func:`metaeval.load.load`, which finds it on the resolved ids). Anything it
cannot vouch for (a bad value, a duplicate, an id with spaces around it, ...) makes :func:`ingest`
read the file again with :func:`stage_exact`: :func:`parse`, the exact Python reader whose errors
name the file, line and field, streamed into DuckDB in chunks so that its memory does not grow
with the file. Both end in the same set-based merge (:func:`metaeval.load.load`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from metaeval.core import Store
from metaeval.errors import ConflictError, DuplicateCellsError, InputError, NewIdsError, WarehouseError
from metaeval.ingest.common import (
    cells_frame,
    check_globs_used,
    check_staged_cells,
    identifier,
    matches,
    measures_frame,
    number,
    number_text,
    replicate_number,
    sha256,
    stage_rows,
)
from metaeval.ingest.table_files import (  # noqa: F401 (the table's layout and reading, importable from here)
    FORMAT,
    KINDS,
    OPTIONAL,
    REQUIRED,
    SYSTEM_LEVEL_INPUT,
    batch_options,
    frame_digest,
    is_nan,
    is_wide,
    present,
    read_all,
    stream_rows,
    wide_measures,
)
from metaeval.ingest.table_staged import Unsure, drop_staged, is_frame, stage
from metaeval.batch import Batch, LoadReport

if TYPE_CHECKING:  # imported where used: a file's ingest needs no pandas (~0.5 s of CPU)
    import pandas as pd


def parse(path: Path, *, human: Sequence[str] = (), lower: Sequence[str] = (), replicate: int = 0) -> Batch:
    """The exact Python reader: a file as a :class:`Batch`, or an :class:`InputError` naming
    the file, line and field of the first problem. ``replicate``: the run of the scores that
    give none (``--replicate``)."""
    columns, records, lines, typed = read_all(path)
    return _parse_records(str(path), sha256(path), columns, records, lines, typed, human, lower, replicate)


def parse_frame(frame: pd.DataFrame, name: str, *, human: Sequence[str] = (), lower: Sequence[str] = (),
                replicate: int = 0) -> Batch:
    """A DataFrame (long or wide, typed like Parquet) as a :class:`Batch`; rows are numbered
    from 1 in the order of the frame; ``name`` stands for the file in messages."""
    columns = [str(c) for c in frame.columns]
    records = [dict(zip(columns, r.values())) for r in frame.to_dict("records")]  # Python values, None for NA
    return _parse_records(name, frame_digest(frame), columns, records, list(range(1, 1 + len(records))), True,
                          human, lower, replicate)


def stage_exact(con: duckdb.DuckDBPyConnection, path: Path, *, human: Sequence[str] = (),
                lower: Sequence[str] = (), origin: int = 0, name: str | None = None, replicate: int = 0) -> Batch:
    """:func:`parse`, streamed: the same errors and the same cells, but the cells go to a
    temporary table of ``con`` (``Batch.cells_table``, with their lines) :data:`CHUNK` rows at a
    time, so memory does not grow with the file. What :func:`ingest` reads a file with when
    DuckDB's reading steps aside.

    :func:`parse` reads the whole file before it checks a record, so an unreadable part (a
    malformed CSV line, bytes that are not UTF-8) is the error even after a bad record: so here,
    after the first bad record, the rest of the file is read for such an error. ``name``: the
    file's name in the batch and in its errors (default: the path)."""
    import pandas as pd

    file = str(path) if name is None else name
    columns, records, typed = stream_rows(path)
    first = next(records, None)
    if first is None:
        raise InputError(file, None, None, "the file has no rows")
    try:
        wide = _check_columns(file, columns, human)
    except InputError as bad:
        _read_to_the_end(records, bad)
    name = f"_cells_{origin}"
    runs = "replicate" in columns
    try:
        try:
            rows = stage_rows(con, name, _rows(file, columns, itertools.chain([first], records), typed, human,
                                               replicate), runs=runs)
        except InputError as bad:
            _read_to_the_end(records, bad)
        check_staged_cells(con, name, file, field=(lambda measure: measure) if wide else (lambda measure: "value"),
                           runs=runs)
        kinds = con.execute(f"SELECT measure, bool_or(annotator IS NOT NULL), bool_and(annotator IS NOT NULL) "
                            f"FROM {name} GROUP BY measure ORDER BY measure").fetchall()
        mixed = [m for m, some, every in kinds if some != every]
        if mixed:
            [(line,)] = con.execute(f"SELECT line FROM {name} WHERE measure = ? AND annotator IS NULL "
                                    "ORDER BY seq LIMIT 1", [mixed[0]]).fetchall()
            raise InputError(file, int(line), "kind", _MIXED.format(m=mixed[0]))
        systems = [r[0] for r in con.execute(f"SELECT system FROM {name} GROUP BY system ORDER BY min(seq)").fetchall()]
        [(judgments,)] = con.execute(f"SELECT count(annotator) FROM {name}").fetchall()
    except BaseException:
        con.execute(f"DROP TABLE IF EXISTS {name}")
        raise
    return Batch(
        file=file, format=FORMAT, sha256=sha256(path),
        options=batch_options(human, lower, "input" in columns, wide, replicate),
        systems=pd.DataFrame({"name": systems, "type": None}),
        measures=pd.DataFrame({"name": [m for m, *_ in kinds],
                               "kind": ["human" if some else "automatic" for _, some, _ in kinds],
                               "direction": ["lower" if matches(m, lower) else "higher" for m, *_ in kinds]},
                              columns=["name", "kind", "direction"]),
        cells_table=name, cell_counts=(rows - judgments, judgments), replicate=replicate, runs=runs,
    )


def _read_to_the_end(records: Iterator, bad: InputError) -> None:
    """Raise ``bad``, or the error of a part of the file after it that cannot be read: the one
    :func:`parse` gives, as it reads the whole file before it checks a record."""
    for _ in records:
        pass
    raise bad from None


def _parse_records(file: str, digest: str, columns: list[str], records: list[dict], lines: list[int], typed: bool,
                   human: Sequence[str], lower: Sequence[str], replicate: int = 0) -> Batch:
    import pandas as pd

    if not records:
        raise InputError(file, None, None, "the file has no rows")
    wide = _check_columns(file, columns, human)
    runs = "replicate" in columns
    rows = list(_rows(file, columns, zip(lines, records), typed, human, replicate))
    cells = cells_frame(rows, file, field=(lambda measure: measure) if wide else (lambda measure: "value"), runs=runs)
    measures = measures_frame(cells, lower)
    mixed = set(cells.loc[cells["annotator"].isna(), "measure"]) & set(cells.loc[cells["annotator"].notna(), "measure"])
    if mixed:
        m = sorted(mixed)[0]
        line = int(cells.loc[(cells["measure"] == m) & cells["annotator"].isna(), "line"].iloc[0])
        raise InputError(file, line, "kind", _MIXED.format(m=m))
    return Batch(
        file=file, format=FORMAT, sha256=digest,
        options=batch_options(human, lower, "input" in columns, wide, replicate),
        systems=pd.DataFrame({"name": cells["system"].drop_duplicates(), "type": None}),
        measures=measures, cells=cells, replicate=replicate, runs=runs,
    )


_MIXED = "measure {m!r} has rows both with and without annotators/kind human"


def _check_columns(file: str, columns: list[str], human: Sequence[str]) -> bool:
    """The column errors :func:`parse` gives; whether the table is wide."""
    wide = is_wide(columns)
    if wide:
        _check_wide_columns(file, columns, human)
    else:
        unknown = [c for c in columns if c not in REQUIRED + OPTIONAL]
        if unknown:
            raise InputError(file, None, unknown[0], f"unknown column(s) {unknown}; "
                             f"expected {list(REQUIRED)} and optionally {list(OPTIONAL)}")
        for c in REQUIRED:
            if c not in columns:
                raise InputError(file, None, c, f"required column missing (columns: {list(columns)})")
    return wide


def _rows(file: str, columns: list[str], records, typed: bool, human: Sequence[str], replicate: int = 0):
    """Cell rows ``(system, input, measure, annotator, value, line)`` of ``(line, record)``
    pairs, in order; the first bad record is an :class:`InputError` naming its line and field.
    A table with a ``replicate`` column: each row ends with its run (a score without one is run
    ``replicate``; a judgment has none: its repeated values are its annotators')."""
    to_number = number if typed else number_text
    has = {c: c in columns for c in OPTIONAL}
    wide = is_wide(columns)
    measures = wide_measures(columns) if wide else []
    unseen = dict.fromkeys(measures)  # measure columns whose first value is still to come, in order
    for line, rec in records:
        if unseen:
            _check_first_values(file, line, columns, rec, unseen)
        for rec in (_unpivot_one(rec, measures) if wide else (rec,)):
            system = identifier(present(rec.get("system")), file, line, "system")
            input_ = (identifier(present(rec.get("input")), file, line, "input") if has["input"]
                      else SYSTEM_LEVEL_INPUT)
            measure = identifier(present(rec.get("measure")), file, line, "measure")
            value = rec.get("value")  # a typed NaN is not finite, not null: say so (wide tables dropped it)
            value = to_number(value if is_nan(value) else present(value), file, line, measure if wide else "value")
            annotator = present(rec.get("annotator"))
            kind = present(rec.get("kind"))
            if kind is not None and kind not in KINDS:
                raise InputError(file, line, "kind", f"expected one of {KINDS}, got {kind!r}")
            is_human = kind == "human" or annotator is not None or (kind is None and matches(measure, human))
            if kind == "automatic" and annotator is not None:
                raise InputError(file, line, "annotator", "an annotator on a row of kind 'automatic'")
            if is_human:
                annotator = "0" if annotator is None else identifier(annotator, file, line, "annotator")
            if not has["replicate"]:
                yield system, input_, measure, annotator, value, line
                continue
            run = replicate_number(rec.get("replicate"), file, line)
            if is_human and run is not None:
                raise InputError(file, line, "replicate", "a run number on a human judgment: runs are an automatic "
                                 "measure's (a judgment's repeated values are its annotators')")
            yield system, input_, measure, annotator, value, line, (None if is_human else replicate if run is None
                                                                    else run)


def _check_first_values(file: str, line: int, columns: list[str], rec: dict, unseen: dict[str, None]) -> None:
    """In a wide table, a measure column whose first value is text that is not a number is a
    column of names, not of values: the table has an unknown column layout (a long table under
    other column names, ``system,input,metric,score``, read as wide would blame each name as a
    bad number). An :class:`InputError` naming the columns and both layouts expected; a later
    non-number in a column of numbers stays a bad value."""
    for column in [c for c in unseen if present(rec.get(c)) is not None]:
        del unseen[column]
        value = rec[column]
        if not isinstance(value, str) or _reads_as_float(value):
            continue
        hint = _rename_hint(columns, column)
        raise InputError(file, line, column, f"unknown column layout {columns}: column {column!r} holds text "
                         f"({value!r}), not numbers; expected a long table (columns {', '.join(REQUIRED)}; optionally "
                         f"{', '.join(OPTIONAL)}) or a wide one (system, optionally input and annotator, and one "
                         f"column of numbers per measure){hint}")


#: Column names that say a long table's parts (a measure's name; its value): a text column among
#: them, or beside one of the values', is a long table's column of measure names.
LONG_NAMES = {"metric", "metrics", "measure_name", "metric_name", "name"}
VALUE_NAMES = {"score", "scores", "val", "result", "rating", "number"}


def _rename_hint(columns: list[str], column: str) -> str:
    """The renaming a wide table with one text column ``column`` and one other column may need:
    a long table's (``column`` the measures' names, the other their values) when the names say so
    (``system,input,metric,score``), else the inputs' (``system,doc,lenratio5``: ``doc`` names
    the inputs, the wide table lacking its ``input`` column); '' when the table has more columns."""
    others = [c for c in wide_measures(columns) if c != column]
    if len(others) != 1:
        return ""
    if "input" not in columns and not (column.lower() in LONG_NAMES or others[0].lower() in VALUE_NAMES):
        return f"; if {column!r} names the inputs (a wide table of the measure {others[0]!r}), rename it to 'input'"
    return f"; if it is a long table, rename {column!r} to 'measure' and {others[0]!r} to 'value'"


def _reads_as_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _unpivot_one(rec: dict, measures: list[str]) -> list[dict]:
    """A wide record as long ones: one per measure with a value."""
    return [{"system": rec.get("system"), "input": rec.get("input"), "annotator": rec.get("annotator"),
             "replicate": rec.get("replicate"), "measure": m, "value": rec[m]}
            for m in measures if present(rec.get(m)) is not None]


def _check_wide_columns(file: str, columns: Sequence[str], human: Sequence[str]) -> None:
    """A wide table: a system column, at least one measure column, no ``kind`` (a measure is
    human by --human) and an annotator column only if every measure is human."""
    if "system" not in columns:
        raise InputError(file, None, "system", f"required column missing (columns: {list(columns)}); a long "
                         f"table has columns {list(REQUIRED)}, a wide one system, [input,] and one per measure")
    measures = wide_measures(columns)
    if not measures:
        raise InputError(file, None, None, f"no measure columns (columns: {list(columns)}): a long table has "
                         f"columns {list(REQUIRED)}, a wide one system, [input,] and one column per measure")
    if "annotator" in columns:
        automatic = [m for m in measures if not matches(m, human)]
        if automatic:
            raise InputError(file, None, automatic[0], "a wide table with an annotator column must have only human "
                             f"measures (mark them with --human); {automatic} are not")


Source = "Path | pd.DataFrame"


def ingest(wh: Store, dataset: str, sources: Sequence[Source], *, human: Sequence[str] = (),
           lower: Sequence[str] = (), replace: bool = False, allow_new: bool = False, command: str | None = None,
           names: Sequence[str] | None = None, replicate: int = 0) -> list[LoadReport]:
    """Load table files (and/or DataFrames, named by ``names`` in messages) into ``dataset``
    of ``wh`` in one transaction, as ``metaeval ingest table`` does: staged and checked in
    DuckDB; when DuckDB's reading finds anything wrong (a bad value, a conflict, a new id),
    everything is read again by :func:`stage_exact` (:func:`parse`, streamed: memory bounded
    whatever the file's size) and loaded the same way, so that the error is the exact one,
    naming file, line and field. ``replicate``: the run (``--replicate``, a non-negative integer) of
    the scores whose row gives none (a ``replicate`` column gives each row's; default 0)."""
    names = list(names) if names is not None else [
        f"<DataFrame {i + 1}>" if is_frame(s) else str(s) for i, s in enumerate(sources)]
    replicate = run_option(replicate, names)
    batches: list[Batch] = []
    with bounded_memory(wh.con):
        try:
            return _ingest_staged(wh, dataset, sources, names, batches, human, lower, replace, allow_new, command,
                                  replicate)
        except (Unsure, InputError, ConflictError, NewIdsError, DuplicateCellsError):
            pass  # read again below, by the exact reader, for the exact error (or a file DuckDB doubted)
        except (duckdb.ConstraintException, duckdb.ConversionException, duckdb.InvalidInputException):
            pass  # values DuckDB could not take: the exact reader says which
        except duckdb.OutOfMemoryException as exc:  # never retried in Python, which would need far more
            raise WarehouseError(f"out of memory while loading ({' '.join(str(exc).split()[:12])}...); "
                                 "nothing was written") from None
        finally:
            drop_staged(wh.con, batches)
            for i in range(len(sources)):
                _quietly_unregister(wh.con, f"_frame_{i}")
    exact: list[Batch] = []
    with bounded_memory(wh.con):
        try:
            for i, (s, n) in enumerate(zip(sources, names)):
                exact.append(parse_frame(s, str(n), human=human, lower=lower, replicate=replicate)
                             if is_frame(s) else
                             stage_exact(wh.con, Path(s), human=human, lower=lower, origin=i, name=str(n),
                                         replicate=replicate))
            _check_globs(exact, human, lower)
            _check_replicate(exact, replicate)
            return wh.load(dataset, exact, replace=replace, command=command, allow_new=allow_new)
        finally:
            for b in exact:
                if b.cells_table:
                    try:
                        wh.con.execute(f"DROP TABLE IF EXISTS {b.cells_table}")
                    except duckdb.Error:
                        pass


def _ingest_staged(wh, dataset, sources, names, batches, human, lower, replace, allow_new, command, replicate=0):
    for i, (s, n) in enumerate(zip(sources, names)):
        batches.append(stage(wh.con, s, human=human, lower=lower, name=str(n), origin=i, check_duplicates=False))
        batches[-1].replicate = replicate
        if replicate:   # (as batch_options says it)
            batches[-1].options["replicate"] = replicate
    _check_globs(batches, human, lower)
    _check_replicate(batches, replicate)
    return wh.load(dataset, batches, replace=replace, command=command, allow_new=allow_new)


def run_option(replicate, names: Sequence[str]) -> int:
    """``--replicate N`` checked: a non-negative integer, else an :class:`InputError` naming the files."""
    files = ", ".join(map(str, names))
    if replicate_number(replicate, files, None, "--replicate") is None:
        raise InputError(files, None, "--replicate", f"the run number must be a non-negative integer; got {replicate!r}")
    return int(replicate)


def _check_replicate(batches: Sequence[Batch], replicate: int) -> None:
    """``--replicate N`` (N > 0) names a run of automatic scores: a file with human judgments is
    refused (their repeated values are their annotators')."""
    for b in batches:
        if replicate and b.counts[1]:
            human = next(n for n, kind in zip(b.measures["name"], b.measures["kind"]) if kind == "human")
            raise InputError(b.file, None, "--replicate", f"a run number for human judgments (measure "
                             f"{human!r}): runs are an automatic measure's (a judgment's repeated values "
                             "are its annotators'); ingest the judgments without --replicate")


#: DuckDB's memory while it stages and merges a table (it spills to the warehouse's .tmp
#: directory beyond it), so that an ingest's peak memory does not grow with the file.
MEMORY_LIMIT = "1GB"


@contextmanager
def bounded_memory(con: duckdb.DuckDBPyConnection, limit: str = MEMORY_LIMIT):
    """DuckDB limited to ``limit`` of memory, and free to reorder rows (nothing staged relies
    on their order), inside the block; the previous settings after. No IN-list filters derived
    from a join's build side (``dynamic_or_filter_threshold``: the few systems or measures of an
    id-mapping join tested on each of millions of staged rows cost more than the join: 1.6 s of
    CPU on 22M rows, bench/README.md)."""
    settings = {"memory_limit": limit, "preserve_insertion_order": "false", "dynamic_or_filter_threshold": "0"}
    before = {k: con.execute("SELECT current_setting(?)", [k]).fetchall()[0][0] for k in settings}
    for k, v in settings.items():
        con.execute(f"SET {k} = '{v}'")
    try:
        yield
    finally:
        for k, v in before.items():
            try:
                con.execute(f"SET {k} = '{v}'")
            except duckdb.Error:
                pass


def add_scores(wh: Store, dataset: str, frame: pd.DataFrame, *, human: Sequence[str] = (),
               lower: Sequence[str] = (), replace: bool = False, allow_new: bool = False,
               name: str = "<DataFrame>", replicate: int = 0) -> LoadReport:
    """A pandas DataFrame of scores, wide (``system, [input,] <measure>...``) or long
    (``system, [input,] measure, value[, annotator][, kind][, replicate]``), into ``dataset``: as
    :func:`ingest` for one file, rows named by their position in the frame (from 1)."""
    return ingest(wh, dataset, [frame], human=human, lower=lower, replace=replace, allow_new=allow_new,
                  names=[name], replicate=replicate)[0]


def _check_globs(batches: Sequence[Batch], human, lower) -> None:
    measures = [m for b in batches for m in b.measures["name"]]
    files = [b.file for b in batches]
    check_globs_used(human, measures, "--human", files)
    check_globs_used(lower, measures, "--lower", files)


def _quietly_unregister(con, name: str) -> None:
    try:
        con.unregister(name)
    except duckdb.Error:
        pass
