"""Tables printed without pandas: :class:`metaeval.rows.Rows` (column names, kinds, tuples) in the
text, json and csv formats, character for character as :func:`metaeval.analyses.tables.render`
prints the DataFrame DuckDB's ``.df()`` gives for the same query (pandas 3's ``to_string``,
``to_csv`` and the tables' JSON). The light commands use it, so that they start without
importing pandas and numpy; markdown and LaTeX stay with :mod:`metaeval.analyses.tables`.

``text`` follows pandas' ``DataFrame.to_string(index=False)`` at its default options: each
column formatted by its dtype (the row's *kind*, see :mod:`metaeval.rows`), right-justified
under a right-justified header (a numeric column's header gets one leading space), no cell
cut (``to_string`` has no ``max_colwidth``), columns joined by one space; timestamps with the
decimals of seconds the column needs. Floats: ``display.precision`` = 6 decimals, trailing zeros trimmed alike over the
column (at least one kept), scientific notation for the whole column when a non-zero value is
below 1e-6 in magnitude, or when a value exceeds 1e6 and a cell would be wider than 12.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import math
import re

#: The formats printed here (the others need pandas: :mod:`metaeval.analyses.tables`).
FORMATS: tuple[str, ...] = ("text", "json", "csv")
#: Columns whose values are JSON documents (stored as JSON text): nested objects in JSON output.
JSON_COLUMNS: tuple[str, ...] = ("conventions", "parameters", "beaten_by", "consensus", "pc_pvalues", "p_values")
#: pandas' display.precision
PRECISION = 6
_NUMERIC = frozenset({"int", "Int", "float", "bool", "Bool"})
_ESCAPES = {"\t": r"\t", "\r": r"\r", "\n": r"\n"}
_DECIMAL = re.compile(r"^\s*[+-]?[0-9]+\.[0-9]*$")


def render(rows, fmt: str) -> str:
    """``rows`` (a :class:`metaeval.rows.Rows` with plain kinds) in ``fmt`` (:data:`FORMATS`; ``table``
    is ``text``), ending with a newline."""
    fmt = "text" if fmt == "table" else fmt
    if fmt == "json":
        return json.dumps(records(rows), indent=1, allow_nan=False) + "\n"
    if fmt == "csv":
        return to_csv(rows)
    if fmt != "text":
        raise ValueError(f"plain tables print {', '.join(FORMATS)}, not {fmt!r}")
    if not rows.data or not rows.columns:
        return "(no rows)\n"
    return to_text(rows) + "\n"


# --- JSON and CSV ----------------------------------------------------------------------------------
def value(v, parse: bool = False):
    """A cell as a JSON value: NULL / NaN / infinity -> None, timestamps as ISO 8601, JSON text parsed
    when ``parse`` (as :func:`metaeval.analyses.tables.records` does)."""
    if v is None:
        return None
    if isinstance(v, float):
        return None if math.isnan(v) or math.isinf(v) else v
    if isinstance(v, (bool, int)):
        return v
    if isinstance(v, (_dt.datetime, _dt.date)):
        return v.isoformat()
    if parse and isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v if isinstance(v, str) else str(v)


def records(rows) -> list[dict]:
    names = [str(c) for c in rows.columns]
    parse = [c in JSON_COLUMNS for c in rows.columns]
    return [{n: value(v, p) for n, v, p in zip(names, row, parse)} for row in rows.data]


def _csv_cell(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        return repr(v)
    return str(v)


def _timestamps(values: list, missing: str) -> list[str]:
    """pandas' text of a column of timezone-aware timestamps: seconds, then the decimals every
    value needs (6 if one has microseconds, 3 if one has milliseconds, else none), then the offset."""
    micro = [v.microsecond for v in values if v is not None]
    digits = 6 if any(m % 1000 for m in micro) else 3 if any(micro) else 0

    def text(v) -> str:
        whole = str(v.replace(microsecond=0))          # 2026-11-25 02:11:06+00:00
        fraction = f".{v.microsecond:06d}"[:1 + digits] if digits else ""
        return whole[:19] + fraction + whole[19:]
    return [missing if v is None else text(v) for v in values]


def to_csv(rows) -> str:
    """pandas' ``to_csv(index=False)``: a header, missing values empty, floats as their shortest repr."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(rows.columns)
    stamps = {at: _timestamps([row[at] for row in rows.data], "") for at, k in enumerate(rows.kinds)
              if k == "datetimetz"}
    for i, row in enumerate(rows.data):
        writer.writerow([stamps[at][i] if at in stamps else _csv_cell(v) for at, v in enumerate(row)])
    return out.getvalue()


# --- text ---------------------------------------------------------------------------------------------
def _escaped(v) -> str:
    text = str(v)
    for char, escape in _ESCAPES.items():
        text = text.replace(char, escape)
    return text


def _missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _trim_zeros(cells: list[str]) -> list[str]:
    """pandas' ``_trim_zeros_float``: trailing zeros cut alike from every decimal number, one kept."""
    number = [_DECIMAL.match(x) is not None for x in cells]
    if not any(number):
        return cells
    while all(x.endswith("0") for x, n in zip(cells, number) if n):
        cells = [x[:-1] if n else x for x, n in zip(cells, number)]
    return [x + "0" if n and x.endswith(".") else x for x, n in zip(cells, number)]


def _floats(values: list) -> list[str]:
    """pandas' FloatArrayFormatter (no leading space: ``index=False``)."""
    def formatted(spec: str) -> list[str]:
        return _trim_zeros(["NaN" if _missing(v) else format(v, spec) for v in values])

    cells = formatted(f".{PRECISION}f")
    finite = [abs(v) for v in values if not _missing(v)]
    too_long = bool(cells) and max(map(len, cells)) > PRECISION + 6
    large = any(a > 1e6 for a in finite)
    small = any(0 < a < 10 ** -PRECISION for a in finite)
    if small or (too_long and large):
        cells = formatted(f".{PRECISION}e")
    return cells


def _cells(kind: str, values: list) -> list[str]:
    """A column's cells as pandas formats them for its dtype (before justification)."""
    if kind == "float":
        return _floats(values)
    if kind == "int":
        return [f"{v:d}" for v in values]
    if kind in ("Int", "Bool"):
        return ["<NA>" if v is None else str(v) for v in values]
    if kind == "bool":
        return [str(v) for v in values]
    if kind == "datetimetz":
        return _timestamps(values, "NaT")
    if kind == "str":
        return ["NaN" if _missing(v) else _escaped(v) for v in values]
    if kind == "object":
        return ["None" if v is None else "NaN" if _missing(v) else _escaped(v) for v in values]
    raise ValueError(f"no plain rendering of a column of kind {kind!r}")


def to_text(rows) -> str:
    """pandas' ``to_string(index=False)`` of the rows' DataFrame (without the final newline)."""
    columns = []
    for at, (name, kind) in enumerate(zip(rows.columns, rows.kinds)):
        header = (" " if kind in _NUMERIC else "") + _escaped(name)
        cells = _cells(kind, [row[at] for row in rows.data])
        width = max(len(header), *map(len, cells))
        columns.append([header.rjust(width), *(x.rjust(width) for x in cells)])
    widths = [max(map(len, col)) + 1 for col in columns[:-1]] + [max(map(len, columns[-1]))]
    return "\n".join("".join(cell.ljust(w) for cell, w in zip(line, widths)) for line in zip(*columns))
