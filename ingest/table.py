"""A long table of values — CSV, Parquet or JSONL — with columns
``system, input, measure, value`` and optionally ``annotator`` and ``kind``.

Rows with an annotator, a ``kind`` of ``human`` or a measure matched by a ``human`` glob
are human judgments (annotator "0" when none is given); the others automatic scores.
Without an ``input`` column the values are per system (as in MT shared tasks) and are
stored under the single input :data:`SYSTEM_LEVEL_INPUT`.

Errors name a CSV record by the physical line it starts on (blank lines and line breaks
inside quoted fields counted), a JSONL record by its line, a Parquet record by its row.
CSV values are text, so ``value`` is parsed as a number; JSONL and Parquet are typed, so a
``value`` that is a string (``"0.5"``) or a boolean is an error.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from metaeval.errors import InputError
from metaeval.ingest.common import (
    cells_frame,
    identifier,
    jsonl_objects,
    matches,
    measures_frame,
    number,
    number_text,
    sha256,
    text_lines,
)
from metaeval.load import Batch

FORMAT = "table"
REQUIRED = ("system", "measure", "value")
OPTIONAL = ("input", "annotator", "kind")
SYSTEM_LEVEL_INPUT = "all"
KINDS = ("automatic", "human")


def parse(path: Path, *, human: Sequence[str] = (), lower: Sequence[str] = ()) -> Batch:
    file = str(path)
    columns, records, lines, typed = _read(path)
    if not records:
        raise InputError(file, None, None, "the file has no rows")
    unknown = [c for c in columns if c not in REQUIRED + OPTIONAL]
    if unknown:
        raise InputError(file, None, unknown[0], f"unknown column(s) {unknown}; "
                         f"expected {list(REQUIRED)} and optionally {list(OPTIONAL)}")
    for c in REQUIRED:
        if c not in columns:
            raise InputError(file, None, c, f"required column missing (columns: {list(columns)})")
    to_number = number if typed else number_text
    rows = []
    has = {c: c in columns for c in OPTIONAL}
    for line, rec in zip(lines, records):
        system = identifier(_present(rec.get("system")), file, line, "system")
        input_ = identifier(_present(rec.get("input")), file, line, "input") if has["input"] else SYSTEM_LEVEL_INPUT
        measure = identifier(_present(rec.get("measure")), file, line, "measure")
        value = to_number(_present(rec.get("value")), file, line, "value")
        annotator = _present(rec.get("annotator"))
        kind = _present(rec.get("kind"))
        if kind is not None and kind not in KINDS:
            raise InputError(file, line, "kind", f"expected one of {KINDS}, got {kind!r}")
        is_human = kind == "human" or annotator is not None or (kind is None and matches(measure, human))
        if kind == "automatic" and annotator is not None:
            raise InputError(file, line, "annotator", "an annotator on a row of kind 'automatic'")
        if is_human:
            annotator = "0" if annotator is None else identifier(annotator, file, line, "annotator")
        rows.append((system, input_, measure, annotator, value, line))
    cells = cells_frame(rows, file)
    measures = measures_frame(cells, lower)
    mixed = set(cells.loc[cells["annotator"].isna(), "measure"]) & set(cells.loc[cells["annotator"].notna(), "measure"])
    if mixed:
        m = sorted(mixed)[0]
        line = int(cells.loc[(cells["measure"] == m) & cells["annotator"].isna(), "line"].iloc[0])
        raise InputError(file, line, "kind", f"measure {m!r} has rows both with and without annotators/kind human")
    return Batch(
        file=file, format=FORMAT, sha256=sha256(path),
        options={"human": sorted(human), "lower": sorted(lower), "system_level": not has["input"]},
        systems=pd.DataFrame({"name": cells["system"].drop_duplicates(), "type": None}),
        measures=measures, cells=cells,
    )


def _present(value):
    """None for a missing value (empty CSV field, null), the value otherwise."""
    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, str) and not value.strip():
        return None
    return value


def _read(path: Path) -> tuple[list[str], list[dict], list[int], bool]:
    """The columns, the records, each record's line number (row number for Parquet), and
    whether the values are typed (not CSV text)."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return _read_csv(path)
    if suffix == ".parquet":
        import pyarrow.parquet as pq

        try:  # as Python values: an integer column with nulls stays integers (pandas would make floats of it)
            data = pq.read_table(path)
        except (OSError, ValueError) as exc:
            raise InputError(str(path), None, None, f"cannot read as parquet: {exc}") from None
        index = (data.schema.pandas_metadata or {}).get("index_columns", [])  # a DataFrame's index, written by pandas
        data = data.drop_columns([c for c in index if isinstance(c, str)])
        return [str(c) for c in data.column_names], data.to_pylist(), list(range(1, 1 + data.num_rows)), True
    if suffix in (".jsonl", ".json", ".ndjson"):
        lines, objs = zip(*jsonl_objects(path))
        columns = list(dict.fromkeys(k for o in objs for k in o))
        return columns, list(objs), list(lines), True
    raise InputError(str(path), None, None, f"unknown table format {suffix!r}: use .csv, .parquet or .jsonl")


def _read_csv(path: Path) -> tuple[list[str], list[dict], list[int], bool]:
    """CSV records (all fields text), each with the physical line it starts on."""
    file = str(path)
    reader = csv.reader((text for _, text in text_lines(path)), strict=True)
    header, records, lines = None, [], []
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader, None)
        except csv.Error as exc:
            raise InputError(file, reader.line_num, None, f"malformed CSV: {exc}") from None
        if row is None:
            break
        if len(row) <= 1 and not "".join(row).strip():
            continue  # a blank line
        if header is None:
            header = _csv_header(row, file, start)
        elif len(row) != len(header):
            raise InputError(file, start, None, f"{len(row)} fields, the header has {len(header)}")
        else:
            records.append(dict(zip(header, row)))
            lines.append(start)
    if header is None:
        raise InputError(file, None, None, "the file is empty")
    return header, records, lines, False


def _csv_header(row: list[str], file: str, line: int) -> list[str]:
    twice = sorted({c for c in row if row.count(c) > 1})
    if twice:
        raise InputError(file, line, twice[0], "column given more than once in the header")
    return row
