"""``metaeval ingest attributes``: attributes of inputs (and of cells) from a long table
(CSV, TSV, JSONL or Parquet, read as :mod:`ingest.table` reads its files).

Columns ``input, attribute, value`` (an input-level attribute: it applies to every system's cell
of the input) or ``system, input, attribute, value`` (a row with an empty ``system`` is
input-level; one with a system is the value of that cell, overriding the input's). Ids and values
are text (integers accepted as text; a float is refused, as for ids: ``1.0`` is not ``1``).
A key (system, input, attribute) given twice is an error naming both lines; inputs and systems
the dataset lacks are refused naming the file, line and field; values that differ from stored ones
are conflicts unless ``replace``. One transaction (:meth:`Store.load_attributes`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from metaeval.core import Store
from metaeval.errors import InputError
from metaeval.ingest.common import identifier, sha256
from metaeval.ingest.table import present, stream_rows
from metaeval.batch import LoadReport

REQUIRED = ("input", "attribute", "value")
OPTIONAL = ("system",)


def parse(path: Path, name: str | None = None) -> pd.DataFrame:
    """The rows of an attributes file (columns system ('' = input-level), input, attribute,
    value, line), or an :class:`InputError` naming the file, line and field of the first problem."""
    file = str(path) if name is None else name
    columns, records, _typed = stream_rows(Path(path))
    missing = [c for c in REQUIRED if c not in columns]
    unknown = [c for c in columns if c not in REQUIRED + OPTIONAL]
    if unknown:
        raise InputError(file, None, unknown[0], f"unknown column(s) {unknown}; an attributes table has the "
                         "columns input, attribute, value and optionally system")
    if missing:
        raise InputError(file, None, missing[0], f"missing column(s) {missing}; an attributes table has the "
                         "columns input, attribute, value and optionally system")
    rows, first_line = [], {}
    for line, rec in records:
        system = present(rec.get("system"))
        system = "" if system is None else identifier(system, file, line, "system")
        input_ = identifier(present(rec.get("input")), file, line, "input")
        attribute = identifier(present(rec.get("attribute")), file, line, "attribute")
        value = identifier(present(rec.get("value")), file, line, "value")
        key = (system, input_, attribute)
        if key in first_line:
            where = f"input={input_}" + (f" system={system}" if system else "")
            raise InputError(file, line, "attribute", f"attribute {attribute!r} of {where} is given more than once "
                             f"(lines {first_line[key]}, {line})")
        first_line[key] = line
        rows.append((system, input_, attribute, value, line))
    if not rows:
        raise InputError(file, None, None, "the file has no rows")
    return pd.DataFrame(rows, columns=["system", "input", "attribute", "value", "line"])


def ingest(wh: Store, dataset: str, path: Path, *, replace: bool = False, command: str | None = None,
           name: str | None = None) -> LoadReport:
    """Read ``path`` and merge its attributes into ``dataset`` (which must hold its inputs and
    systems), atomically; re-ingesting the same file changes nothing."""
    file = str(path) if name is None else name
    rows = parse(path, file)
    return wh.load_attributes(dataset, rows, file=file, sha256=sha256(Path(path)),
                              options={"cell_level": bool((rows["system"] != "").any())},
                              replace=replace, command=command)
