"""The DuckDB reading of a table (:func:`stage`): a CSV, Parquet or long JSONL file, or a
DataFrame, read by DuckDB's own readers and validated there in SQL; the rows never pass
through Python. Anything it cannot vouch for is :class:`Unsure`, and
:func:`metaeval.ingest.table.ingest` reads the file again with the exact reader."""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from typing import TYPE_CHECKING

import duckdb

from metaeval.errors import InputError, WarehouseError
from metaeval.ingest.common import MAX_ABS_VALUE, MIN_NORMAL, identifier, matches, sha256
from metaeval.ingest.table_files import (
    DELIMITERS,
    FORMAT,
    JSONL_SUFFIXES,
    OPTIONAL,
    REQUIRED,
    SYSTEM_LEVEL_INPUT,
    WIDE_KEYS,
    batch_options,
    frame_digest,
    is_wide,
    wide_measures,
)
from metaeval.batch import REFERENCE_COLUMNS, SUMMARY_COLUMNS, DOCUMENT_COLUMNS, CELL_COLUMNS, Batch, Columns

if TYPE_CHECKING:  # imported where used
    import pandas as pd

#: Python's csv module refuses a longer field (its default field_size_limit).
CSV_FIELD_LIMIT = csv.field_size_limit()


class Unsure(Exception):
    """The DuckDB reader cannot vouch for a file: read it with :func:`parse` instead."""


_ID_TYPES = ("VARCHAR", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT")
_NUMBER_TYPES = _ID_TYPES[1:] + ("FLOAT", "DOUBLE")


def text_number_sql(column: str, cast: str | None = None) -> str:
    """SQL of a CSV field ``column`` (quoted SQL) as the number :func:`metaeval.ingest.common.number_text`
    reads, NULL where it refuses the text (a non-finite or too large value is refused later);
    ``cast``: a column of the same rows holding :func:`number_cast_sql` of it, computed once
    beneath (default: cast here, twice).

    DuckDB's cast of text to DOUBLE takes what ``number_text`` takes (a plain decimal number, the
    same ASCII spaces around it), correctly rounded alike, and beyond it only digit separators
    (``1_000``), a ``+`` before a sign (``+-1``), and ``inf``/``nan`` spellings (not finite); the
    first two are refused here by two substring tests, which cost less than half of a regular
    expression (the staging of 5.5M rows: 1.7-1.8 s of CPU against 2.1-2.2 s, 1.5 s without a
    check; bench/README.md). tests/test_ingest_values.py compares the two readings on every
    short string of number characters and on random text and printed doubles. A field
    longer than Python's csv field limit is an error there: doubted here (bytes, not characters:
    strlen is a stored length, and a number is ASCII). A non-zero number written below the
    smallest normal double (``1e-400``: the cast gives 0, ``1e-310`` a subnormal), which
    ``number_text`` refuses, is doubted too: one magnitude test on the cast (computed once, in a
    column beneath: a CASE computes its branches apart), then, on the few values it selects (a 0,
    a subnormal), two substring tests (such a number has an exponent ``e-``, or more than 300
    characters), then a regular expression (a non-zero digit before the exponent) on what is left
    (1-4% of CPU more than without it on 5M values; 0.07 s more when half of them are 0)."""
    number = number_cast_sql(column) if cast is None else cast
    return (f"CASE WHEN strlen({column}) > {CSV_FIELD_LIMIT} OR contains({column}, '_') OR contains({column}, '+-') "
            f"THEN NULL WHEN abs({number}) < {MIN_NORMAL!r} AND (contains({column}, 'e-') OR contains({column}, 'E-') "
            f"OR strlen({column}) > 300) AND regexp_matches({column}, '^[^eE]*[1-9]') THEN NULL ELSE {number} END")


def number_cast_sql(column: str) -> str:
    """DuckDB's reading of the text ``column`` as a double (NULL where it reads none)."""
    return f"TRY_CAST({column} AS DOUBLE)"


#: The column of :func:`number_cast_sql` of the value that :func:`_select` computes beneath its checks.
_CAST = "_number"

#: A staged row's ``kind`` as a 1-byte code (a UTINYINT, not the text: 16 bytes a row less to store
#: and scan; 5.5M cells with a kind column: ~0.5 s of CPU less, bench/README.md): none given
#: (NULL, an empty field), ``automatic``, ``human``, anything else (refused by the checks).
KIND_NONE, KIND_AUTOMATIC, KIND_HUMAN, KIND_OTHER = 0, 1, 2, 3


def kind_code_sql(column: str) -> str:
    """SQL of the text ``column`` (a kind) as its code (:data:`KIND_NONE` ...)."""
    return (f"CAST(CASE WHEN {column} IS NULL THEN {KIND_NONE} WHEN {column} = 'automatic' THEN {KIND_AUTOMATIC} "
            f"WHEN {column} = 'human' THEN {KIND_HUMAN} ELSE {KIND_OTHER} END AS UTINYINT)")


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

    frame = source if is_frame(source) else None
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
    copy, flagged = frame is None and suffix != ".parquet", suffix in JSONL_SUFFIXES
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


def is_frame(source) -> bool:
    """Whether ``source`` is a pandas DataFrame (none is when pandas was never imported: a file's
    ingest does not import it)."""
    pd = sys.modules.get("pandas")
    return pd is not None and isinstance(source, pd.DataFrame)


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


def text_table(con, path: Path, name: str,
               wanted: Callable[[list[str]], Sequence[str]]) -> tuple[list[str], int, str]:
    """A CSV (TSV) file read by DuckDB under the rule :func:`stage` reads one by (the header on the
    first line, a byte order mark dropped, no quoting, no lone carriage return, every record as
    many fields as the header; bytes that are not UTF-8 make DuckDB fail), into the new temporary
    table ``name``: the columns ``wanted(header)`` names (which may refuse the header), as text,
    a record a row in the file's order (the file has no blank line: record ``rowid`` starts on
    the physical line ``rowid + 2``); the header, the records and the file's sha256.
    :class:`Unsure` where the rule cannot vouch for the file (the Python reader,
    :func:`metaeval.ingest.table_files.stream_rows`, then reads it and explains what it
    refuses)."""
    delimiter = DELIMITERS.get(path.suffix.lower())
    if delimiter is None or any(c in str(path) for c in "*?[{") or str(path).startswith("~"):
        raise Unsure("not a CSV or TSV file DuckDB reads by its name")
    header = _first_csv_record(path, delimiter)
    if header is None:
        raise Unsure("no header on the first line")
    if len({c.lower() for c in header}) != len(header) or not all(header):
        raise Unsure("column names DuckDB would rename (equal but for case, or empty)")
    chosen = set(wanted(header))
    keep = [c for c in header if c in chosen]
    if not keep:
        raise Unsure("none of the columns wanted")
    text: dict = {}
    digest = sha256(path, text, delimiter.encode())
    if text["quoted"] or text["bare_cr"]:
        raise Unsure("quoted CSV fields or lone carriage returns, which the Python reader reads")
    try:
        con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT {', '.join(_quote(c) for c in keep)} "
                    "FROM read_csv($path, header = true, delim = $delim, quote = '\"', escape = '\"', "
                    "strict_mode = true, null_padding = false, auto_detect = false, columns = $columns)",
                    {"path": str(path), "delim": delimiter, "columns": dict.fromkeys(header, "VARCHAR")})
        [(records,)] = con.execute(f"SELECT count(*) FROM {name}").fetchall()
        if text["newlines"] != records + text["ends_newline"]:
            raise Unsure("blank lines: the records' lines are counted by the Python reader")
        _check_csv_text(con, name, header, text, records)
    except (duckdb.Error, Unsure) as exc:  # bytes that are not UTF-8, a record of other fields than the header's
        con.execute(f"DROP TABLE IF EXISTS {name}")
        if isinstance(exc, duckdb.OutOfMemoryException) or isinstance(exc, Unsure):
            raise
        raise Unsure(str(exc)) from None
    return header, records, digest


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
    if suffix in JSONL_SUFFIXES:
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


#: What a JSON field of each kind may be for the value to be read as :func:`parse` reads it.
_JSON_ID_TYPES = ("VARCHAR", "BIGINT", "UBIGINT")
_JSON_NUMBER_TYPES = ("BIGINT", "UBIGINT", "DOUBLE")


def _jsonl_relation(con, literal: str) -> tuple[str, list[str]]:
    """SQL reading a long JSONL table with DuckDB's JSON reader, one row per object, and its
    columns (every key of every line). A first pass over the lines' text finds the keys and
    doubts the whole file (:class:`Unsure`) if a line has a key twice (DuckDB would keep one) or
    a comma before a closing bracket (DuckDB allows it, JSON does not; a string holding one is
    doubted too), or a number that may underflow (an exponent below -99, or 200 zeros: DuckDB
    reads a 0 or a subnormal where the Python reader refuses a non-zero number; a string holding
    such text is doubted too; two substring tests first, as the regular expression alone would
    cost three times the line check); the rows then come from ``read_json`` with each field as a JSON value, and
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
                                   OR regexp_matches(json, ',[ \t\r\n]*[\]}}]')
                                   OR ((contains(json, 'e-') OR contains(json, 'E-'))
                                       AND regexp_matches(json, '[eE]-0*[1-9][0-9][0-9]'))
                                   OR contains(json, '{"0" * 200}') AS doubtful
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
    import pandas as pd

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
    if "replicate" in columns:
        raise Unsure("a run number column (replicate) is read in Python")
    if wide:
        if "system" not in columns or not wide_measures(columns) or "annotator" in columns:
            raise Unsure("a wide table the Python reader explains")
    elif not set(REQUIRED) <= set(columns) or not set(columns) <= set(REQUIRED + OPTIONAL):
        raise Unsure("columns the Python reader explains")
    select = _select(con, relation, columns, typed, flagged)
    raw = f"_raw_{origin}"
    # columns the file lacks are constants of a view, not stored: the staged table is no wider than the file.
    # Text (CSV, JSONL) is parsed once, into a table (``copy``); Parquet and a DataFrame are columnar and
    # cheaper to read again at each step than a copy spilled to disk (110M Parquet cells: 7.8 s to copy, then
    # each check 5-10x slower on the copy), so they are read through a view (a file changed meanwhile:
    # Batch.unchanged)
    absent = "".join(f", CAST({null} AS {kind}) AS {c}" for c, null, kind in
                     (("annotator", "NULL", "VARCHAR"), ("kind", KIND_NONE, "UTINYINT")) if wide or c not in columns)
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
        return _validated(con, raw, file, human, lower, wide, "input" in columns, origin, check_duplicates,
                          labelled=not wide and bool({"annotator", "kind"} & set(columns)), flagged=flagged)
    except BaseException as exc:
        con.execute(f"DROP VIEW IF EXISTS _cells_{origin}")
        con.execute(f"DROP VIEW IF EXISTS {raw}")
        con.execute(f"DROP TABLE IF EXISTS {raw}_stored")
        if isinstance(exc, duckdb.Error) and not isinstance(exc, duckdb.OutOfMemoryException):
            raise Unsure(str(exc)) from None  # a view's first full read (a typed source) can fail here
        raise


def _select(con, relation: str, columns: list[str], typed: bool, flagged: bool) -> str:
    """The SQL of ``relation``'s rows as long cells ``system, input, measure[, annotator][, kind],
    value[, _bad]``: ids as text, values as numbers (NULL where a text value is not one), a wide
    table unpivoted; :class:`Unsure` if a typed column has a type the Python reader explains."""
    wide = is_wide(columns)
    measure_columns = wide_measures(columns) if wide else []
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
        return text_number_sql(q, _CAST)

    cast = "" if typed else f", {number_cast_sql(_quote('value'))} AS {_CAST}"   # once, beneath the checks

    input_ = text("input") if "input" in columns else f"'{SYSTEM_LEVEL_INPUT}'"
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
                  f"CAST({KIND_NONE} AS UTINYINT) AS kind, {value('value')} AS value "
                  f"FROM (SELECT {keep}, measure, value{cast} FROM (UNPIVOT ({columns_as_values}) "
                  f"ON {unpivot} INTO NAME measure VALUE value)) WHERE {present}")
    else:
        annotator = f", {text('annotator')} AS annotator" if "annotator" in columns else ""
        kind = f", {kind_code_sql(text('kind'))} AS kind" if "kind" in columns else ""
        select = (f"SELECT {text('system')} AS system, {input_} AS input, {text('measure')} AS measure"
                  f"{annotator}{kind}, {value('value')} AS value{', _bad' if flagged else ''} "
                  f"FROM {f'(SELECT *{cast} FROM {relation})' if cast else relation}")
    return select


def _validated(con, raw: str, file: str, human, lower, wide: bool, has_input: bool, origin: int,
               check_duplicates: bool = True, labelled: bool = True, flagged: bool = True) -> Batch:
    """The checks of :func:`parse`, in SQL, on the staged rows; :class:`Unsure` if any fails
    (cells given twice: only with ``check_duplicates``). ``labelled``: the rows may have a kind
    or an annotator (else a row is a judgment exactly when ``human`` matches its measure);
    ``flagged``: they may have ``_bad`` set (else it is false)."""
    duplicates = ("count(*) - count(DISTINCT hash(system, input, measure, annotator))" if check_duplicates
                  else "0")
    # one scan for the row checks and the distinct ids, one GROUP BY for the measures' kinds (the
    # kinds are decided here, in Python, from each measure's kinds and annotators given): 0.25 s
    # of CPU less than a scan per check on 5.5M rows
    # a NULL id or value counted from the columns' counts, a value not finite or too large from
    # the largest magnitude (NaN the greatest), compared here (in SQL, statistics of a Parquet
    # file, which leave NaN out, could decide the comparison): 0.6 s of CPU less on 22M rows than
    # testing every row
    bad = " + ".join(f"(count(*) - count({c}))" for c in ("system", "input", "measure", "value"))
    if labelled or flagged:
        bad += (f" + count(*) FILTER (WHERE _bad OR kind = {KIND_OTHER} "
                f"OR (kind = {KIND_AUTOMATIC} AND annotator IS NOT NULL))")
    [(rows, bad, largest, duplicates, *distinct)] = con.execute(
        f"""SELECT count(*), {bad}, max(abs(value)), {duplicates},
                   list(DISTINCT system) FILTER (WHERE system IS NOT NULL),
                   list(DISTINCT input) FILTER (WHERE input IS NOT NULL),
                   list(DISTINCT annotator) FILTER (WHERE annotator IS NOT NULL)
            FROM {raw}""").fetchall()
    if not rows or bad or duplicates or (largest is not None and not largest <= MAX_ABS_VALUE):
        raise Unsure("rows the Python reader explains")
    given = con.execute(f"SELECT measure, CASE kind WHEN {KIND_AUTOMATIC} THEN 'automatic' WHEN {KIND_HUMAN} "
                        f"THEN 'human' END, annotator IS NOT NULL, count(*) FROM {raw} GROUP BY measure, kind, "
                        "annotator IS NOT NULL").fetchall()
    ids = dict(zip(("system", "input", "annotator"), (names or [] for names in distinct)))
    ids["measure"] = sorted({m for m, *_ in given})
    for column, names in ids.items():
        try:
            if any(identifier(n, file, None, column) != n or len(n) > CSV_FIELD_LIMIT for n in names):
                raise Unsure(f"{column} ids with spaces around them, or longer than a CSV field may be")
        except InputError:
            raise Unsure(f"a blank {column}, or one with a control character") from None
    kinds = _kinds(given, human)
    if any(some != every for _, some, every, _ in kinds):
        raise Unsure("a measure with rows of both kinds")
    view = f"_cells_{origin}"
    # the rows as two parts: load's scans of the scores (annotator NULL) and of the judgments each
    # read one part, filtered in the scan on the measure (1.5 s of CPU less on 22M rows). A row is
    # a judgment when its kind is human, it has an annotator, or it has no kind and ``human``
    # matches its measure; every row of a measure is of one kind (checked just above, from the
    # same rows), so a row is a judgment exactly when its measure is one of the judged ones, also
    # in a file with kinds or annotators (a test of the kind and annotator on every row there made
    # both scans read all rows and every column: bench/README.md)
    judged = "list_contains([" + ", ".join(f"'{_escape(m)}'" for m, some, *_ in kinds if some) + "], measure)"
    cells = " UNION ALL ".join(
        f"""SELECT system, input, measure, {label} AS annotator, value, CAST(NULL AS BIGINT) AS line
            FROM {raw} WHERE {test}{judged}"""
        for label, test in (("CAST(NULL AS VARCHAR)", "NOT "), ("coalesce(annotator, '0')" if labelled else "'0'", "")))
    con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS {cells}")
    judgments = sum(n for *_, n in kinds)
    systems = sorted(ids["system"])
    return Batch(
        file=file, format=FORMAT, sha256="", options=batch_options(human, lower, has_input, wide),
        systems=Columns({"name": systems, "type": [None] * len(systems)}),
        measures=Columns({"name": [m for m, *_ in kinds],
                          "kind": ["human" if k else "automatic" for _, k, *_ in kinds],
                          "direction": ["lower" if matches(m, lower) else "higher" for m, *_ in kinds]}),
        cells=Columns.empty_of(CELL_COLUMNS), summaries=Columns.empty_of(SUMMARY_COLUMNS),
        references=Columns.empty_of(REFERENCE_COLUMNS), documents=Columns.empty_of(DOCUMENT_COLUMNS),
        cells_table=view, cell_counts=(rows - judgments, judgments), unique_cells=check_duplicates,
        cell_inputs=ids["input"],
    )


def _kinds(given: list[tuple], human: Sequence[str]) -> list[tuple[str, bool, bool, int]]:
    """``(measure, some rows human, every row human, human rows)`` by measure, in order, from the
    ``(measure, kind, has an annotator, rows)`` given: a row is a judgment when its kind is
    human, it has an annotator, or it has no kind and ``human`` matches its measure (as the view
    of the cells says)."""
    out: dict[str, list] = {}
    for measure, kind, annotated, n in given:
        judged = kind == "human" or annotated or (kind is None and matches(measure, human))
        some, every, judgments = out.get(measure, (False, True, 0))
        out[measure] = (some or judged, every and judged, judgments + (n if judged else 0))
    return [(m, *out[m]) for m in sorted(out)]


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

