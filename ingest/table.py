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

import csv
import itertools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pandas as pd

from metaeval.core import Store
from metaeval.errors import ConflictError, DuplicateCellsError, InputError, NewIdsError, WarehouseError
from metaeval.ingest.common import (
    CHUNK,
    MAX_ABS_VALUE,
    cells_frame,
    check_globs_used,
    check_staged_cells,
    identifier,
    jsonl_objects,
    matches,
    measures_frame,
    number,
    number_text,
    sha256,
    stage_rows,
    text_lines,
)
from metaeval.load import Batch, LoadReport

FORMAT = "table"
REQUIRED = ("system", "measure", "value")
OPTIONAL = ("input", "annotator", "kind")
SYSTEM_LEVEL_INPUT = "all"
KINDS = ("automatic", "human")


def is_wide(columns: Sequence[str]) -> bool:
    """A table without ``measure`` and ``value`` columns has one column per measure."""
    return "measure" not in columns and "value" not in columns


def wide_measures(columns: Sequence[str]) -> list[str]:
    """The measure columns of a wide table."""
    return [c for c in columns if c not in WIDE_KEYS]


WIDE_KEYS = ("system", "input", "annotator")


def parse(path: Path, *, human: Sequence[str] = (), lower: Sequence[str] = ()) -> Batch:
    """The exact Python reader: a file as a :class:`Batch`, or an :class:`InputError` naming
    the file, line and field of the first problem."""
    columns, records, lines, typed = _read(path)
    return _parse_records(str(path), sha256(path), columns, records, lines, typed, human, lower)


def parse_frame(frame: pd.DataFrame, name: str, *, human: Sequence[str] = (), lower: Sequence[str] = ()) -> Batch:
    """A DataFrame (long or wide, typed like Parquet) as a :class:`Batch`; rows are numbered
    from 1 in the order of the frame; ``name`` stands for the file in messages."""
    columns = [str(c) for c in frame.columns]
    records = [dict(zip(columns, r.values())) for r in frame.to_dict("records")]  # Python values, None for NA
    return _parse_records(name, frame_digest(frame), columns, records, list(range(1, 1 + len(records))), True,
                          human, lower)


def frame_digest(frame: pd.DataFrame) -> str:
    """A sha256 of a DataFrame's columns and values (what ``ingests.sha256`` holds for a file)."""
    import hashlib

    digest = hashlib.sha256(repr([str(c) for c in frame.columns]).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return digest.hexdigest()


def stage_exact(con: duckdb.DuckDBPyConnection, path: Path, *, human: Sequence[str] = (),
                lower: Sequence[str] = (), origin: int = 0, name: str | None = None) -> Batch:
    """:func:`parse`, streamed: the same errors and the same cells, but the cells go to a
    temporary table of ``con`` (``Batch.cells_table``, with their lines) :data:`CHUNK` rows at a
    time, so memory does not grow with the file. What :func:`ingest` reads a file with when
    DuckDB's reading steps aside.

    :func:`parse` reads the whole file before it checks a record, so an unreadable part (a
    malformed CSV line, bytes that are not UTF-8) is the error even after a bad record: so here,
    after the first bad record, the rest of the file is read for such an error. ``name``: the
    file's name in the batch and in its errors (default: the path)."""
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
    try:
        try:
            rows = stage_rows(con, name, _rows(file, columns, itertools.chain([first], records), typed, human))
        except InputError as bad:
            _read_to_the_end(records, bad)
        check_staged_cells(con, name, file, field=(lambda measure: measure) if wide else (lambda measure: "value"))
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
        file=file, format=FORMAT, sha256=sha256(path), options=_options(human, lower, "input" in columns, wide),
        systems=pd.DataFrame({"name": systems, "type": None}),
        measures=pd.DataFrame({"name": [m for m, *_ in kinds],
                               "kind": ["human" if some else "automatic" for _, some, _ in kinds],
                               "direction": ["lower" if matches(m, lower) else "higher" for m, *_ in kinds]},
                              columns=["name", "kind", "direction"]),
        cells_table=name, cell_counts=(rows - judgments, judgments),
    )


def _read_to_the_end(records: Iterator, bad: InputError) -> None:
    """Raise ``bad``, or the error of a part of the file after it that cannot be read: the one
    :func:`parse` gives, as it reads the whole file before it checks a record."""
    for _ in records:
        pass
    raise bad from None


def _parse_records(file: str, digest: str, columns: list[str], records: list[dict], lines: list[int], typed: bool,
                   human: Sequence[str], lower: Sequence[str]) -> Batch:
    if not records:
        raise InputError(file, None, None, "the file has no rows")
    wide = _check_columns(file, columns, human)
    rows = list(_rows(file, columns, zip(lines, records), typed, human))
    cells = cells_frame(rows, file, field=(lambda measure: measure) if wide else (lambda measure: "value"))
    measures = measures_frame(cells, lower)
    mixed = set(cells.loc[cells["annotator"].isna(), "measure"]) & set(cells.loc[cells["annotator"].notna(), "measure"])
    if mixed:
        m = sorted(mixed)[0]
        line = int(cells.loc[(cells["measure"] == m) & cells["annotator"].isna(), "line"].iloc[0])
        raise InputError(file, line, "kind", _MIXED.format(m=m))
    return Batch(
        file=file, format=FORMAT, sha256=digest,
        options=_options(human, lower, "input" in columns, wide),
        systems=pd.DataFrame({"name": cells["system"].drop_duplicates(), "type": None}),
        measures=measures, cells=cells,
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


def _rows(file: str, columns: list[str], records, typed: bool, human: Sequence[str]):
    """Cell rows ``(system, input, measure, annotator, value, line)`` of ``(line, record)``
    pairs, in order; the first bad record is an :class:`InputError` naming its line and field."""
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
            value = to_number(value if _is_nan(value) else present(value), file, line, measure if wide else "value")
            annotator = present(rec.get("annotator"))
            kind = present(rec.get("kind"))
            if kind is not None and kind not in KINDS:
                raise InputError(file, line, "kind", f"expected one of {KINDS}, got {kind!r}")
            is_human = kind == "human" or annotator is not None or (kind is None and matches(measure, human))
            if kind == "automatic" and annotator is not None:
                raise InputError(file, line, "annotator", "an annotator on a row of kind 'automatic'")
            if is_human:
                annotator = "0" if annotator is None else identifier(annotator, file, line, "annotator")
            yield system, input_, measure, annotator, value, line


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
        others = [c for c in wide_measures(columns) if c != column]
        hint = (f"; if it is a long table, rename {column!r} to 'measure' and {others[0]!r} to 'value'"
                if len(others) == 1 else "")
        raise InputError(file, line, column, f"unknown column layout {columns}: column {column!r} holds text "
                         f"({value!r}), not numbers; expected a long table (columns {', '.join(REQUIRED)}; optionally "
                         f"{', '.join(OPTIONAL)}) or a wide one (system, optionally input and annotator, and one "
                         f"column of numbers per measure){hint}")


def _reads_as_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _unpivot_one(rec: dict, measures: list[str]) -> list[dict]:
    """A wide record as long ones: one per measure with a value."""
    return [{"system": rec.get("system"), "input": rec.get("input"), "annotator": rec.get("annotator"),
             "measure": m, "value": rec[m]} for m in measures if present(rec.get(m)) is not None]


def _options(human, lower, has_input: bool, wide: bool) -> dict:
    options = {"human": sorted(human), "lower": sorted(lower), "system_level": not has_input}
    if wide:
        options["wide"] = True
    return options


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


def _is_nan(value) -> bool:
    return isinstance(value, float) and value != value


def present(value):
    """None for a missing value (empty CSV field, null), the value otherwise."""
    if value is None or value is pd.NA or _is_nan(value):
        return None
    if isinstance(value, str) and not value.strip():
        return None
    return value


def _read(path: Path) -> tuple[list[str], list[dict], list[int], bool]:
    """The columns, the records, each record's line number (row number for Parquet), and
    whether the values are typed (not CSV text): :func:`stream_rows`, all in memory."""
    columns, records, typed = stream_rows(path)
    pairs = list(records)
    return columns, [rec for _, rec in pairs], [line for line, _ in pairs], typed


def stream_rows(path: Path) -> tuple[list[str], Iterator[tuple[int, dict]], bool]:
    """The columns, an iterator of ``(line, record)`` (row number for Parquet) read as it goes
    (a file that cannot be read is an :class:`InputError` where it stops being readable), and
    whether the values are typed (not CSV text). A JSONL file is read twice: its columns are
    every key of every line."""
    suffix = path.suffix.lower()
    if suffix in DELIMITERS:
        header, records = _csv_stream(path, DELIMITERS[suffix])
        return header, records, False
    if suffix == ".parquet":
        return (*_parquet_stream(path), True)
    if suffix in _JSONL_SUFFIXES:
        columns = {}
        for _, obj in jsonl_objects(path):
            columns.update(dict.fromkeys(obj))
        return list(columns), jsonl_objects(path), True
    raise InputError(str(path), None, None, f"unknown table format {suffix!r}: use .csv, .tsv, .parquet or .jsonl")


def _parquet_stream(path: Path) -> tuple[list[str], Iterator[tuple[int, dict]]]:
    import pyarrow.parquet as pq

    try:
        data = pq.ParquetFile(path)
    except (OSError, ValueError) as exc:
        raise InputError(str(path), None, None, f"cannot read as parquet: {exc}") from None
    index = {c for c in (data.schema_arrow.pandas_metadata or {}).get("index_columns", [])  # a DataFrame's index
             if isinstance(c, str)}
    columns = [str(c) for c in data.schema_arrow.names if c not in index]

    def records() -> Iterator[tuple[int, dict]]:
        row = 0
        try:  # as Python values: an integer column with nulls stays integers (pandas would make floats of it)
            for batch in data.iter_batches(batch_size=CHUNK, columns=columns):
                for rec in batch.to_pylist():
                    row += 1
                    yield row, rec
        except (OSError, ValueError) as exc:
            raise InputError(str(path), None, None, f"cannot read as parquet: {exc}") from None

    return columns, records()


def _csv_stream(path: Path, delimiter: str = ",") -> tuple[list[str], Iterator[tuple[int, dict]]]:
    """The header and the records (all fields text) of a CSV file (a TSV file: ``delimiter``
    a tab), each with the physical line it starts on."""
    file = str(path)
    reader = csv.reader((text for _, text in text_lines(path)), strict=True, delimiter=delimiter)

    def rows() -> Iterator[tuple[int, list[str]]]:
        while True:
            start = reader.line_num + 1
            try:
                row = next(reader, None)
            except csv.Error as exc:
                raise InputError(file, reader.line_num, None, f"malformed CSV: {exc}") from None
            if row is None:
                return
            if len(row) <= 1 and not "".join(row).strip():
                continue  # a blank line
            yield start, row

    found = rows()
    first = next(found, None)
    if first is None:
        raise InputError(file, None, None, "the file is empty")
    header = _csv_header(first[1], file, first[0])

    def records() -> Iterator[tuple[int, dict]]:
        for start, row in found:
            if len(row) != len(header):
                raise InputError(file, start, None, f"{len(row)} fields, the header has {len(header)}")
            yield start, dict(zip(header, row))

    return header, records()


def _csv_header(row: list[str], file: str, line: int) -> list[str]:
    twice = sorted({c for c in row if row.count(c) > 1})
    if twice:
        raise InputError(file, line, twice[0], "column given more than once in the header")
    return row


# --- staging inside DuckDB -------------------------------------------------------------

#: Python's csv module refuses a longer field (its default field_size_limit).
CSV_FIELD_LIMIT = csv.field_size_limit()


class Unsure(Exception):
    """The DuckDB reader cannot vouch for a file: read it with :func:`parse` instead."""


_PLAIN_NUMBER_SQL = r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_NUMBER_SQL = r"[ \t\r\n\f\v]*" + _PLAIN_NUMBER_SQL + r"[ \t\r\n\f\v]*"
_ID_TYPES = ("VARCHAR", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT")
_NUMBER_TYPES = _ID_TYPES[1:] + ("FLOAT", "DOUBLE")


def stage(con: duckdb.DuckDBPyConnection, source: Path | pd.DataFrame, *, human: Sequence[str] = (),
          lower: Sequence[str] = (), name: str | None = None, origin: int = 0,
          check_duplicates: bool = True) -> Batch:
    """A CSV, Parquet or long JSONL file (or a DataFrame, called ``name`` in messages) read by
    DuckDB and validated there in SQL: a :class:`Batch` whose cells are a temporary view of
    ``con`` (``Batch.cells_table``). Raises :class:`Unsure` when the file needs :func:`parse`
    (bad or unusual content, a wide JSONL table); never returns values :func:`parse` would read
    otherwise. Text files (CSV, JSONL) are parsed once, into a temporary table; Parquet files and
    DataFrames are read again at each step (see :func:`_stage_relation`).

    ``check_duplicates=False`` leaves a cell given twice to :func:`metaeval.load.load`, which
    finds it on the resolved ids (``Batch.unique_cells`` is then False) for a fraction of the
    cost of comparing the names here: what :func:`ingest` does."""
    import threading

    frame = source if isinstance(source, pd.DataFrame) else None
    file = name if frame is not None or name is not None else str(source)
    digest: list[str] = []
    text: dict[str, int | bool] = {}
    try:
        if frame is not None:
            relation, columns, typed = _frame_relation(con, frame, origin)
            digest.append(frame_digest(frame))
            hashing = None
        else:
            if any(c in str(source) for c in "*?[{") or str(source).startswith("~"):
                raise Unsure("a path DuckDB would read as a pattern of file names")
            stat = _identity(Path(source))
            relation, columns, typed = _file_relation(con, Path(source))
            hashing = None
    except duckdb.Error as exc:  # a column DuckDB cannot take (an empty name, a complex number, ...)
        if isinstance(exc, duckdb.OutOfMemoryException):
            raise
        raise Unsure(str(exc)) from None
    if len({c.lower() for c in columns}) != len(columns) or not all(columns):
        raise Unsure("column names DuckDB would rename (equal but for case, or empty)")
    if frame is None:
        delimiter = DELIMITERS.get(Path(source).suffix.lower())
        hashing = threading.Thread(target=lambda: digest.append(
            sha256(Path(source), text if delimiter else None, (delimiter or ",").encode())))
        hashing.start()  # hashlib frees the GIL
    suffix = "" if frame is not None else Path(source).suffix.lower()
    copy, flagged = frame is None and suffix != ".parquet", suffix in _JSONL_SUFFIXES
    try:
        batch = _stage_relation(con, relation, columns, typed, file, human, lower, origin, check_duplicates, copy,
                                flagged)
    finally:
        if hashing is not None:
            hashing.join()
    batch.sha256 = digest[0]
    if text:
        try:  # a long table's staged rows are its records; a wide one's are counted
            _check_csv_text(con, relation, columns, text, None if is_wide(columns) else sum(batch.counts))
        except Unsure:
            drop_staged(con, [batch])
            raise
    if frame is None and not copy:  # read through a view until the merge: it must not change meanwhile
        batch.unchanged = lambda: _check_unchanged(Path(source), stat)
    return batch


def _check_csv_text(con, relation: str, columns: list[str], text: dict, records: int | None) -> None:
    """What DuckDB's CSV reader takes otherwise than Python's ``csv`` module: quoting (a space
    before a quote, text after one), a carriage return alone ending a line, and rows with more
    fields than the header when the extra ones are empty. A file with a quote character or a lone
    carriage return is read by the Python reader; one without has a record per line, so its commas
    (a TSV file's tabs) are (fields - 1) per record, header included, exactly when no row has a
    field too many:
    :class:`Unsure` otherwise. ``records``: the file's records when known (else counted)."""
    if text["quoted"] or text["bare_cr"]:
        raise Unsure("quoted CSV fields or lone carriage returns, which the Python reader reads")
    if records is None:
        [(records,)] = con.execute(f"SELECT count(*) FROM {relation}").fetchall()
    if text["commas"] != (len(columns) - 1) * (records + 1):
        raise Unsure("rows with other numbers of fields than the header")


def _identity(path: Path) -> tuple[int, int, int]:
    """What tells a file's content changed: its inode, size and modification time."""
    st = path.stat()
    return st.st_ino, st.st_size, st.st_mtime_ns


def _check_unchanged(path: Path, identity: tuple[int, int, int]) -> None:
    """A :class:`WarehouseError` if ``path`` is not the file it was when staged (replaced, rewritten):
    not an :class:`InputError`, which :func:`ingest` would answer by reading the new content again."""
    try:
        same = _identity(path) == identity
    except OSError:
        same = False
    if not same:
        raise WarehouseError(f"{path}: the file changed (or went) while it was being read; nothing was written: "
                             "ingest it again once it is complete")


def _file_relation(con, path: Path) -> tuple[str, list[str], bool]:
    """SQL reading the file, its columns, and whether it is typed (Parquet, JSONL) or text (CSV)."""
    suffix = path.suffix.lower()
    literal = "'" + str(path).replace("'", "''") + "'"
    if suffix in _JSONL_SUFFIXES:
        return (*_jsonl_relation(con, literal), True)
    if suffix in DELIMITERS:
        delimiter = DELIMITERS[suffix]
        header = _first_csv_record(path, delimiter)
        if header is None:
            raise Unsure("no header on the first line")
        columns = "{" + ", ".join(f"'{_escape(c)}': 'VARCHAR'" for c in header) + "}"
        delim = "'\\t'" if delimiter == "\t" else "','"
        return (f"read_csv({literal}, header = true, delim = {delim}, quote = '\"', escape = '\"', "
                f"strict_mode = true, null_padding = false, auto_detect = false, columns = {columns})",
                header, False)
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            schema = pq.read_schema(path)
        except (OSError, ValueError) as exc:
            raise Unsure(str(exc)) from None
        index = {c for c in (schema.pandas_metadata or {}).get("index_columns", []) if isinstance(c, str)}
        columns = [c for c in schema.names if c not in index]
        if len(set(columns)) != len(columns):
            raise Unsure("a column given twice")
        select = ", ".join(_quote(c) for c in columns)
        return f"(SELECT {select} FROM read_parquet({literal}))", columns, True
    raise Unsure(f"{suffix} files are read in Python")


_JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
#: Suffixes of delimited text tables and their delimiter: a TSV file is a CSV file with tabs.
DELIMITERS = {".csv": ",", ".tsv": "\t"}
#: What a JSON field of each kind may be for the value to be read as :func:`parse` reads it.
_JSON_ID_TYPES = ("VARCHAR", "BIGINT", "UBIGINT")
_JSON_NUMBER_TYPES = ("BIGINT", "UBIGINT", "DOUBLE")


def _jsonl_relation(con, literal: str) -> tuple[str, list[str]]:
    """SQL reading a long JSONL table with DuckDB's JSON reader, one row per object, and its
    columns (every key of every line). A first pass over the lines' text finds the keys and
    doubts the whole file (:class:`Unsure`) if a line has a key twice (DuckDB would keep one) or
    a comma before a closing bracket (DuckDB allows it, JSON does not; a string holding one is
    doubted too); the rows then come from ``read_json`` with each field as a JSON value, and
    ``_bad`` is true where a field has another JSON type than an id (string, integer) or a number
    (DuckDB would cast a string "0.5"). NaN and Infinity, which DuckDB reads, are not finite:
    refused later. Malformed JSON, a line that is not an object, lone surrogates, a byte order
    mark and bytes that are not UTF-8 make DuckDB fail, and the Python reader explains them."""
    objects = f"read_ndjson_objects({literal})"
    try:
        [(keys, doubtful)] = con.execute(
            rf"""SELECT list(DISTINCT key ORDER BY key), coalesce(bool_or(doubtful), false)
                FROM (SELECT unnest(k) AS key, doubtful
                      FROM (SELECT json_keys(json) AS k,
                                   len(json_keys(json)) <> len(list_distinct(json_keys(json)))
                                   OR regexp_matches(json, ',[ \t\r\n]*[\]}}]') AS doubtful
                            FROM {objects}))""").fetchall()
    except duckdb.Error as exc:
        if isinstance(exc, duckdb.OutOfMemoryException):
            raise
        raise Unsure(str(exc)) from None
    keys = keys or []
    if doubtful:
        raise Unsure("a JSON line DuckDB would read otherwise than JSON does")
    if is_wide(keys) or not set(keys) <= set(REQUIRED + OPTIONAL):
        raise Unsure("a wide JSONL table, or columns the Python reader explains")
    bad, fields = [], []
    for key in keys:
        q = _quote(key)
        kinds = _JSON_NUMBER_TYPES if key == "value" else _JSON_ID_TYPES
        bad.append(f"coalesce(json_type({q}) NOT IN ('NULL', {', '.join(repr(t) for t in kinds)}), false)")
        if key == "value":
            fields.append(f"CASE WHEN json_type({q}) IN {_JSON_NUMBER_TYPES!r} THEN CAST({q} AS DOUBLE) END AS value")
        else:
            fields.append(f"json_extract_string({q}, '$') AS {q}")
    columns = "{" + ", ".join(f"'{_escape(k)}': 'JSON'" for k in keys) + "}"
    relation = (f"(SELECT {', '.join(fields)}, ({' OR '.join(bad)}) AS _bad FROM read_json({literal}, "
                f"format = 'newline_delimited', records = true, columns = {columns}))")
    return relation, keys


def _frame_relation(con, frame: pd.DataFrame, origin: int) -> tuple[str, list[str], bool]:
    columns = [str(c) for c in frame.columns]
    if len(set(columns)) != len(columns) or not all(isinstance(c, str) for c in frame.columns):
        raise Unsure("columns that are not distinct strings")
    ids = [c for c in columns if c in ("system", "input", "measure", "annotator", "kind")]
    values = wide_measures(columns) if is_wide(columns) else [c for c in columns if c == "value"]
    api = pd.api.types
    for c in ids:  # DuckDB would turn a float id (refused by parse) into text
        if not (api.is_integer_dtype(frame[c]) and not api.is_bool_dtype(frame[c])) \
                and api.infer_dtype(frame[c], skipna=True) not in ("string", "empty"):
            raise Unsure(f"column {c} holds other values than strings or integers")
    for c in values:
        if not api.is_numeric_dtype(frame[c]) or api.is_bool_dtype(frame[c]):
            raise Unsure(f"column {c} is not numeric")
    view = f"_frame_{origin}"
    con.register(view, frame.reset_index(drop=True))
    return view, columns, True


def _first_csv_record(path: Path, delimiter: str = ",") -> list[str] | None:
    """The header of a CSV (TSV) file if it is its first physical line, parsed as :func:`parse` does."""
    with open(path, "rb") as f:
        raw = f.readline()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    if not text.strip() or '"' in text or "\r" in text[:-2] or not text.endswith("\n"):
        return None
    try:
        row = next(csv.reader([text], strict=True, delimiter=delimiter), None)
    except csv.Error:
        return None
    if not row or len(set(row)) != len(row):
        return None
    return row


def _escape(text: str) -> str:
    return text.replace("'", "''")


def _quote(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


def _stage_relation(con, relation: str, columns: list[str], typed: bool, file: str, human: Sequence[str],
                    lower: Sequence[str], origin: int, check_duplicates: bool = True, copy: bool = True,
                    flagged: bool = False) -> Batch:
    """``relation`` (a file's or a DataFrame's rows) staged and validated. ``copy``: parse it once
    into a table; ``flagged``: it has a column ``_bad``, true on rows to be doubted."""
    wide = is_wide(columns)
    if wide:
        if "system" not in columns or not wide_measures(columns) or "annotator" in columns:
            raise Unsure("a wide table the Python reader explains")
        measure_columns = wide_measures(columns)
    elif not set(REQUIRED) <= set(columns) or not set(columns) <= set(REQUIRED + OPTIONAL):
        raise Unsure("columns the Python reader explains")
    types = {}
    if typed:
        described = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
        types = {r[0]: r[1] for r in described}
        ids = [c for c in ("system", "input", "measure", "annotator", "kind") if c in columns]
        values = measure_columns if wide else ["value"]
        if any(types[c] not in _ID_TYPES for c in ids) or any(types[c] not in _NUMBER_TYPES for c in values):
            raise Unsure("column types the Python reader explains")

    def text(column: str) -> str:  # an id as text (a blank one is caught on the distinct ids)
        q = _quote(column)
        return f"CAST({q} AS VARCHAR)" if types.get(column, "VARCHAR") != "VARCHAR" else q

    def value(column: str) -> str:
        q = _quote(column)
        if typed:
            return f"CAST({q} AS DOUBLE)"
        # a number without spaces around it (nearly every value) is cast as it is: DuckDB's trim
        # costs more than the whole check, and matching the plain pattern first does not change the result
        # (a field longer than Python's csv field limit is an error there: doubted here; bytes, not
        # characters: strlen is a stored length, and a number is ASCII)
        return (f"CASE WHEN strlen({q}) > {CSV_FIELD_LIMIT} THEN NULL "
                f"WHEN regexp_full_match({q}, '{_PLAIN_NUMBER_SQL}') THEN TRY_CAST({q} AS DOUBLE) "
                f"WHEN regexp_full_match({q}, '{_NUMBER_SQL}') "
                f"THEN TRY_CAST(trim({q}, ' \t\r\n\f\v') AS DOUBLE) END")

    input_ = text("input") if "input" in columns else f"'{SYSTEM_LEVEL_INPUT}'"
    raw = f"_raw_{origin}"
    if wide:
        unpivot = ", ".join(_quote(m) for m in measure_columns)
        # typed measure columns as DOUBLE first: UNPIVOT would give their common type (FLOAT for an
        # integer and a float32 column, rounding the integers to float32)
        columns_as_values = (f"SELECT * REPLACE ({', '.join(f'CAST({_quote(m)} AS DOUBLE) AS {_quote(m)}' for m in measure_columns)}) "
                             f"FROM {relation}" if typed else f"SELECT * FROM {relation}")
        keep = ", ".join(_quote(c) for c in columns if c in WIDE_KEYS)
        present = "value IS NOT NULL AND " + ("NOT isnan(CAST(value AS DOUBLE))" if typed
                                              else "trim(value, ' \t\r\n\f\v') <> ''")
        select = (f"SELECT {text('system')} AS system, {input_} AS input, measure, CAST(NULL AS VARCHAR) AS annotator, "
                  f"CAST(NULL AS VARCHAR) AS kind, {value('value')} AS value "
                  f"FROM (SELECT {keep}, measure, value FROM (UNPIVOT ({columns_as_values}) "
                  f"ON {unpivot} INTO NAME measure VALUE value)) WHERE {present}")
    else:
        annotator = f", {text('annotator')} AS annotator" if "annotator" in columns else ""
        kind = f", {text('kind')} AS kind" if "kind" in columns else ""
        select = (f"SELECT {text('system')} AS system, {input_} AS input, {text('measure')} AS measure"
                  f"{annotator}{kind}, {value('value')} AS value{', _bad' if flagged else ''} FROM {relation}")
    # columns the file lacks are constants of a view, not stored: the staged table is no wider than the file.
    # Text (CSV, JSONL) is parsed once, into a table (``copy``); Parquet and a DataFrame are columnar and
    # cheaper to read again at each step than a copy spilled to disk (110M Parquet cells: 7.8 s to copy, then
    # each check 5-10x slower on the copy), so they are read through a view (a file changed meanwhile:
    # Batch.unchanged)
    absent = "".join(f", CAST(NULL AS VARCHAR) AS {c}" for c in ("annotator", "kind") if wide or c not in columns)
    if not flagged:
        absent += ", false AS _bad"  # only a JSONL line can be doubted before the checks below
    try:
        if not copy:
            con.execute(f"CREATE OR REPLACE TEMP VIEW {raw} AS SELECT *{absent} FROM ({select})")
        else:
            con.execute(f"CREATE OR REPLACE TEMP TABLE {raw}_stored AS {select}")
            con.execute(f"CREATE OR REPLACE TEMP VIEW {raw} AS SELECT *{absent} FROM {raw}_stored")
    except duckdb.Error as exc:
        con.execute(f"DROP VIEW IF EXISTS {raw}")
        con.execute(f"DROP TABLE IF EXISTS {raw}_stored")
        if isinstance(exc, duckdb.OutOfMemoryException):
            raise
        raise Unsure(str(exc)) from None
    try:
        return _validated(con, raw, file, human, lower, wide, "input" in columns, origin, check_duplicates)
    except BaseException as exc:
        con.execute(f"DROP VIEW IF EXISTS _cells_{origin}")
        con.execute(f"DROP VIEW IF EXISTS {raw}")
        con.execute(f"DROP TABLE IF EXISTS {raw}_stored")
        if isinstance(exc, duckdb.Error) and not isinstance(exc, duckdb.OutOfMemoryException):
            raise Unsure(str(exc)) from None  # a view's first full read (a typed source) can fail here
        raise


def _validated(con, raw: str, file: str, human, lower, wide: bool, has_input: bool, origin: int,
               check_duplicates: bool = True) -> Batch:
    """The checks of :func:`parse`, in SQL, on the staged rows; :class:`Unsure` if any fails
    (cells given twice: only with ``check_duplicates``)."""
    duplicates = ("count(*) - count(DISTINCT hash(system, input, measure, annotator))" if check_duplicates
                  else "0")
    [(rows, bad, duplicates)] = con.execute(
        f"""SELECT count(*),
                   count(*) FILTER (WHERE _bad OR system IS NULL OR input IS NULL OR measure IS NULL OR value IS NULL
                                    OR NOT isfinite(value) OR abs(value) > {MAX_ABS_VALUE!r}
                                    OR (kind IS NOT NULL AND kind NOT IN ('automatic', 'human'))
                                    OR (kind = 'automatic' AND annotator IS NOT NULL)),
                   {duplicates}
            FROM {raw}""").fetchall()
    if not rows or bad or duplicates:
        raise Unsure("rows the Python reader explains")
    ids = {}
    for column in ("system", "input", "measure", "annotator"):
        ids[column] = names = [r[0] for r in con.execute(
            f"SELECT DISTINCT {column} FROM {raw} WHERE {column} IS NOT NULL").fetchall()]
        try:
            if any(identifier(n, file, None, column) != n or len(n) > CSV_FIELD_LIMIT for n in names):
                raise Unsure(f"{column} ids with spaces around them, or longer than a CSV field may be")
        except InputError:
            raise Unsure(f"a blank {column}, or one with a control character") from None
    measures = ids["measure"]
    globbed = "[" + ", ".join(f"'{_escape(m)}'" for m in measures if matches(m, human)) + "]"
    view = f"_cells_{origin}"
    con.execute(
        f"""CREATE OR REPLACE TEMP VIEW {view} AS
            SELECT system, input, measure,
                   CASE WHEN kind = 'human' OR annotator IS NOT NULL
                          OR (kind IS NULL AND list_contains({globbed}, measure))
                        THEN coalesce(annotator, '0') END AS annotator,
                   value, CAST(NULL AS BIGINT) AS line
            FROM {raw}""")
    kinds = con.execute(
        f"""SELECT measure, bool_or(annotator IS NOT NULL), bool_and(annotator IS NOT NULL),
                   count(*) FILTER (WHERE annotator IS NOT NULL)
            FROM {view} GROUP BY measure ORDER BY measure""").fetchall()
    if any(some != every for _, some, every, _ in kinds):
        raise Unsure("a measure with rows of both kinds")
    judgments = sum(n for *_, n in kinds)
    systems = sorted(ids["system"])
    return Batch(
        file=file, format=FORMAT, sha256="", options=_options(human, lower, has_input, wide),
        systems=pd.DataFrame({"name": systems, "type": None}),
        measures=pd.DataFrame({"name": [m for m, *_ in kinds],
                               "kind": ["human" if k else "automatic" for _, k, *_ in kinds],
                               "direction": ["lower" if matches(m, lower) else "higher" for m, *_ in kinds]},
                              columns=["name", "kind", "direction"]),
        cells_table=view, cell_counts=(rows - judgments, judgments), unique_cells=check_duplicates,
    )


def drop_staged(con: duckdb.DuckDBPyConnection, batches: Sequence[Batch]) -> None:
    """Drop what :func:`stage` created for ``batches`` (and any half-made staging table)."""
    for b in batches:
        if b.cells_table:
            origin = b.cells_table.rsplit("_", 1)[1]
            for sql in (f"DROP VIEW IF EXISTS _cells_{origin}", f"DROP VIEW IF EXISTS _raw_{origin}",
                        f"DROP TABLE IF EXISTS _raw_{origin}_stored"):
                try:
                    con.execute(sql)
                except duckdb.Error:
                    pass


Source = Path | pd.DataFrame


def ingest(wh: Store, dataset: str, sources: Sequence[Source], *, human: Sequence[str] = (),
           lower: Sequence[str] = (), replace: bool = False, allow_new: bool = False, command: str | None = None,
           names: Sequence[str] | None = None) -> list[LoadReport]:
    """Load table files (and/or DataFrames, named by ``names`` in messages) into ``dataset``
    of ``wh`` in one transaction, as ``metaeval ingest table`` does: staged and checked in
    DuckDB; when DuckDB's reading finds anything wrong (a bad value, a conflict, a new id),
    everything is read again by :func:`stage_exact` (:func:`parse`, streamed: memory bounded
    whatever the file's size) and loaded the same way, so that the error is the exact one,
    naming file, line and field."""
    names = list(names) if names is not None else [
        f"<DataFrame {i + 1}>" if isinstance(s, pd.DataFrame) else str(s) for i, s in enumerate(sources)]
    batches: list[Batch] = []
    with bounded_memory(wh.con):
        try:
            return _ingest_staged(wh, dataset, sources, names, batches, human, lower, replace, allow_new, command)
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
                exact.append(parse_frame(s, str(n), human=human, lower=lower) if isinstance(s, pd.DataFrame)
                             else stage_exact(wh.con, Path(s), human=human, lower=lower, origin=i, name=str(n)))
            _check_globs(exact, human, lower)
            return wh.load(dataset, exact, replace=replace, command=command, allow_new=allow_new)
        finally:
            for b in exact:
                if b.cells_table:
                    try:
                        wh.con.execute(f"DROP TABLE IF EXISTS {b.cells_table}")
                    except duckdb.Error:
                        pass


def _ingest_staged(wh, dataset, sources, names, batches, human, lower, replace, allow_new, command):
    for i, (s, n) in enumerate(zip(sources, names)):
        batches.append(stage(wh.con, s, human=human, lower=lower, name=str(n), origin=i, check_duplicates=False))
    _check_globs(batches, human, lower)
    return wh.load(dataset, batches, replace=replace, command=command, allow_new=allow_new)


#: DuckDB's memory while it stages and merges a table (it spills to the warehouse's .tmp
#: directory beyond it), so that an ingest's peak memory does not grow with the file.
MEMORY_LIMIT = "1GB"


@contextmanager
def bounded_memory(con: duckdb.DuckDBPyConnection, limit: str = MEMORY_LIMIT):
    """DuckDB limited to ``limit`` of memory, and free to reorder rows (nothing staged relies
    on their order), inside the block; the previous settings after."""
    settings = {"memory_limit": limit, "preserve_insertion_order": "false"}
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
               name: str = "<DataFrame>") -> LoadReport:
    """A pandas DataFrame of scores, wide (``system, [input,] <measure>...``) or long
    (``system, [input,] measure, value[, annotator][, kind]``), into ``dataset``: as
    :func:`ingest` for one file, rows named by their position in the frame (from 1)."""
    return ingest(wh, dataset, [frame], human=human, lower=lower, replace=replace, allow_new=allow_new,
                  names=[name])[0]


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
