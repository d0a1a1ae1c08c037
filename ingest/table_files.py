"""The layout of a table file (long or wide: its columns) and the reading of its records, as
the exact reader (:func:`metaeval.ingest.table.parse`) and the readers that share its files
(attributes, preferences) see them: CSV and TSV as text, Parquet and JSONL typed, each record
with the line (row) it starts on."""

from __future__ import annotations

import csv
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from typing import TYPE_CHECKING

from metaeval.errors import InputError
from metaeval.ingest.common import CHUNK, is_json_array, json_array_objects, jsonl_objects, text_lines

if TYPE_CHECKING:  # imported where used
    import pandas as pd

FORMAT = "table"
REQUIRED = ("system", "measure", "value")
OPTIONAL = ("input", "annotator", "kind", "replicate")
SYSTEM_LEVEL_INPUT = "all"
KINDS = ("automatic", "human")


def is_wide(columns: Sequence[str]) -> bool:
    """A table without ``measure`` and ``value`` columns has one column per measure."""
    return "measure" not in columns and "value" not in columns


def wide_measures(columns: Sequence[str]) -> list[str]:
    """The measure columns of a wide table."""
    return [c for c in columns if c not in WIDE_KEYS]


WIDE_KEYS = ("system", "input", "annotator", "replicate")


def frame_digest(frame: pd.DataFrame) -> str:
    """A sha256 of a DataFrame's columns and values (what ``ingests.sha256`` holds for a file)."""
    import hashlib

    import pandas as pd

    digest = hashlib.sha256(repr([str(c) for c in frame.columns]).encode())
    digest.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    return digest.hexdigest()


def batch_options(human, lower, has_input: bool, wide: bool, replicate: int = 0) -> dict:
    options = {"human": sorted(human), "lower": sorted(lower), "system_level": not has_input}
    if wide:
        options["wide"] = True
    if replicate:   # --replicate N (run 0, the default, unsaid: the options of a file without runs as before)
        options["replicate"] = replicate
    return options


def is_nan(value) -> bool:
    return isinstance(value, float) and value != value


def present(value):
    """None for a missing value (empty CSV field, null), the value otherwise."""
    if value is None or is_nan(value) or _is_na(value):
        return None
    if isinstance(value, str) and not value.strip():
        return None
    return value


def _is_na(value) -> bool:
    """Whether ``value`` is pandas' missing value (only a value of a DataFrame can be: when pandas
    was never imported, none is)."""
    pd = sys.modules.get("pandas")
    return pd is not None and value is pd.NA


def read_all(path: Path) -> tuple[list[str], list[dict], list[int], bool]:
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
    if suffix in JSONL_SUFFIXES:
        objects = json_array_objects if is_json_array(path) else jsonl_objects     # a JSON array of records too
        columns = {}
        for _, obj in objects(path):
            columns.update(dict.fromkeys(obj))
        return list(columns), objects(path), True
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


JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
#: Suffixes of delimited text tables and their delimiter: a TSV file is a CSV file with tabs.
DELIMITERS = {".csv": ",", ".tsv": "\t"}
