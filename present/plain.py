"""Tables printed without pandas: :class:`metaeval.rows.Rows` (column names, kinds, tuples) in the
text, json and csv formats, character for character as :func:`metaeval.present.tables.render`
prints the DataFrame DuckDB's ``.df()`` gives for the same query (its text goes through
:func:`to_text` too; csv is pandas 3's ``to_csv``, json the tables' JSON). The light commands use
it, so that they start without importing pandas and numpy; markdown and LaTeX stay with
:mod:`metaeval.present.tables`. :func:`wrap` fits prose (notes, captions, hints) alike.

``text`` follows pandas' ``DataFrame.to_string(index=False)`` at its default options: each
column formatted by its dtype (the row's *kind*, see :mod:`metaeval.rows`), right-justified
under a right-justified header (a numeric column's header gets one leading space), columns
joined by one space; timestamps with the decimals of seconds the column needs. Floats:
``display.precision`` = 6 decimals, trailing zeros trimmed alike over the column (at least one
kept), scientific notation for the whole column when a non-zero value is below 1e-6 in
magnitude, or when a value exceeds 1e6 and a cell would be wider than 12. Unlike pandas (issue
34), a missing value is an empty cell, a float column of whole numbers prints as integers, and
the table is fitted to the display width (:data:`WIDTH`, 100 characters; :func:`fit`).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import math
import re
import textwrap

#: The formats printed here (the others need pandas: :mod:`metaeval.present.tables`).
FORMATS: tuple[str, ...] = ("text", "json", "csv")
#: Columns whose values are JSON documents (stored as JSON text): nested objects in JSON output.
JSON_COLUMNS: tuple[str, ...] = ("conventions", "parameters", "beaten_by", "consensus", "pc_pvalues", "p_values")
#: Characters of a line of a text table by default (``metaeval --full-width``: no limit), and the
#: narrowest a text column is wrapped to before the columns are set in blocks.
WIDTH, MIN_WRAP = 100, 24


class _Display:
    def __repr__(self) -> str:
        return "DISPLAY"


#: A ``width`` argument meaning the display width (:func:`display_width`): WIDTH, or None (no
#: limit) within ``display_width(None)`` (``metaeval --full-width``), as pandas' ``display.width``.
DISPLAY = _Display()
_DISPLAY_WIDTH: list[int | None] = [WIDTH]


def resolve_width(value=DISPLAY) -> int | None:
    """``value``, or the display width when it is :data:`DISPLAY`."""
    return _DISPLAY_WIDTH[0] if value is DISPLAY else value


@contextlib.contextmanager
def display_width(value: int | None):
    """Within it, text is fitted to ``value`` characters a line (None: as wide as it is)."""
    old, _DISPLAY_WIDTH[0] = _DISPLAY_WIDTH[0], value
    try:
        yield
    finally:
        _DISPLAY_WIDTH[0] = old


#: pandas' display.precision
PRECISION = 6
_NUMERIC = frozenset({"int", "Int", "float", "bool", "Bool"})
_ESCAPES = {"\t": r"\t", "\r": r"\r", "\n": r"\n"}
_DECIMAL = re.compile(r"^\s*[+-]?[0-9]+\.[0-9]*$")


def render(rows, fmt: str, *, width=DISPLAY) -> str:
    """``rows`` (a :class:`metaeval.rows.Rows` with plain kinds) in ``fmt`` (:data:`FORMATS`; ``table``
    is ``text``, fitted to ``width`` columns: :func:`fit`), ending with a newline."""
    fmt = "text" if fmt == "table" else fmt
    if fmt == "json":
        import json         # here: the text tables (most light commands) need neither json nor csv

        return json.dumps(records(rows), indent=1, allow_nan=False) + "\n"
    if fmt == "csv":
        return to_csv(rows)
    if fmt != "text":
        raise ValueError(f"plain tables print {', '.join(FORMATS)}, not {fmt!r}")
    if not rows.data or not rows.columns:
        return "(no rows)\n"
    return to_text(rows, width) + "\n"


# --- JSON and CSV ----------------------------------------------------------------------------------
def value(v, parse: bool = False):
    """A cell as a JSON value: NULL / NaN / infinity -> None, timestamps as ISO 8601, JSON text parsed
    when ``parse`` (as :func:`metaeval.present.tables.records` does)."""
    if v is None:
        return None
    if isinstance(v, float):
        return None if math.isnan(v) or math.isinf(v) else v
    if isinstance(v, (bool, int)):
        return v
    if isinstance(v, (_dt.datetime, _dt.date)):
        return v.isoformat()
    if parse and isinstance(v, str):
        import json

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
    import csv
    import io

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
    """pandas' FloatArrayFormatter (no leading space: ``index=False``); a missing value is an empty
    cell, and a column whose every value is a whole number (a count that passed through a float,
    ``261.0``) prints as integers."""
    finite = [v for v in values if not _missing(v)]
    if finite and all(math.isfinite(v) and float(v).is_integer() and abs(v) < 1e15 for v in finite):
        return ["" if _missing(v) else f"{int(v):d}" for v in values]

    def formatted(spec: str) -> list[str]:
        return _trim_zeros(["" if _missing(v) else format(v, spec) for v in values])

    cells = formatted(f".{PRECISION}f")
    finite = [abs(v) for v in finite]
    too_long = bool(cells) and max(map(len, cells)) > PRECISION + 6
    large = any(a > 1e6 for a in finite)
    small = any(0 < a < 10 ** -PRECISION for a in finite)
    if small or (too_long and large):
        cells = formatted(f".{PRECISION}e")
    return cells


def _object(v) -> str:
    if _missing(v):
        return ""
    if isinstance(v, float) and math.isfinite(v) and v.is_integer():
        return f"{int(v):d}"
    return _escaped(v)


def _cells(kind: str, values: list) -> list[str]:
    """A column's cells as pandas formats them for its dtype (before justification), except that
    a missing value is an empty cell (never ``None``, ``NaN``, ``<NA>`` or ``NaT``)."""
    if kind == "float":
        return _floats(values)
    if kind == "int":
        return [f"{v:d}" for v in values]
    if kind in ("Int", "Bool"):
        return ["" if v is None else str(v) for v in values]
    if kind == "bool":
        return [str(v) for v in values]
    if kind == "datetimetz":
        return _timestamps(values, "")
    if kind in ("str", "object"):
        return [_object(v) for v in values]
    raise ValueError(f"no plain rendering of a column of kind {kind!r}")


def to_text(rows, width=DISPLAY) -> str:
    """The rows as an aligned table (without the final newline): pandas' ``to_string(index=False)``
    (cells right-justified under their header, a numeric header with one leading space, columns
    joined by one space), fitted to ``width`` columns by :func:`fit` (``None``: as wide as it is)."""
    return columns_text(rows.columns, rows.kinds, rows.data, width)


def columns_text(names, kinds, data, width=DISPLAY) -> str:
    """:func:`to_text` of the columns ``names`` of ``kinds`` (:mod:`metaeval.rows`) and the rows ``data``."""
    headers, columns, numeric = [], [], []
    for at, (name, kind) in enumerate(zip(names, kinds)):
        headers.append((" " if kind in _NUMERIC else "") + _escaped(name))
        columns.append(_cells(kind, [row[at] for row in data]))
        numeric.append(kind in _NUMERIC)
    return fit(headers, columns, numeric, width)


def fit(headers: list[str], columns: list[list[str]], numeric: list[bool], width=DISPLAY) -> str:
    """An aligned table of the formatted ``columns`` under ``headers``, every line at most ``width``
    characters: when the table is wider, the widest text columns are wrapped (at spaces and
    commas, down to :data:`MIN_WRAP` characters), then, if it is still too wide, the columns are
    set in blocks one under the other, each led by the first column (the rows' key)."""
    width = resolve_width(width)
    widths = [max(len(h), *map(len, c)) for h, c in zip(headers, columns)]
    if width is not None and _total(widths) > width:
        widths = _narrowed(headers, widths, numeric, width)
    parts = [list(range(len(headers)))] if width is None else blocks(widths, numeric, width)
    out = []
    for block in parts:
        out.append("\n".join(_block_lines(headers, columns, widths, block)))
    return "\n\n".join(out)


def _total(widths: list[int]) -> int:
    return sum(widths) + len(widths) - 1


def _narrowed(headers, widths: list[int], numeric: list[bool], width: int) -> list[int]:
    """The widths after narrowing the widest text columns until the table fits (or none can narrow)."""
    widths = list(widths)
    while _total(widths) > width:
        floor = [max(MIN_WRAP, len(h)) for h in headers]     # a short cell (an interval) is never cut
        movable = [i for i in range(len(widths)) if not numeric[i] and widths[i] > floor[i]]
        if not movable:
            break
        i = max(movable, key=lambda j: widths[j])
        widths[i] = max(floor[i], widths[i] - (_total(widths) - width))
    return widths


def blocks(widths: list[int], numeric: list[bool], width: int) -> list[list[int]]:
    """The columns in blocks of at most ``width`` characters, each led by the row's key: the
    leading text columns (a method, a pair of systems) while they take at most half the line, at
    least the first column (a metric, a result_id) unless it is wider than a third of the line."""
    lead = _lead(widths, numeric, width) if widths and _total(widths) > width else []
    blocks: list[list[int]] = []
    current = list(lead)
    for i in range(len(lead), len(widths)):
        if len(current) > len(lead) and _total([widths[j] for j in current + [i]]) > width:
            blocks.append(current)
            current = [*lead]
        current.append(i)
    blocks.append(current)
    return blocks


def _lead(widths: list[int], numeric: list[bool], width: int) -> list[int]:
    """The key columns that lead every block (:func:`blocks`)."""
    if widths[0] > width // 3:
        return []
    lead = [0]
    while (len(lead) < len(widths) - 1 and not numeric[len(lead)]
           and _total(widths[:len(lead) + 1]) <= width // 2):
        lead.append(len(lead))
    return lead


def _block_lines(headers, columns, widths, block: list[int]) -> list[str]:
    def line(parts: list[str]) -> str:
        return " ".join(p.rjust(widths[j]) for p, j in zip(parts, block)).rstrip()

    lines = [line([headers[j] for j in block])]
    for r in range(len(columns[0]) if columns else 0):
        pieces = [_wrap(columns[j][r], widths[j]) for j in block]
        for k in range(max(map(len, pieces))):
            lines.append(line([p[k] if k < len(p) else "" for p in pieces]))
    return lines


def _wrap(cell: str, width: int) -> list[str]:
    if len(cell) <= width:
        return [cell]
    return textwrap.wrap(cell, width, break_long_words=True, break_on_hyphens=False) or [""]


# --- prose --------------------------------------------------------------------------------------------
_COMMAND = re.compile(r"`(metaeval [^`]*)`|(?:(?<=: )|^\s*)(metaeval .*)$")


def number_text(x, digits: int = 3, *, undefined: str = "undefined") -> str:
    """The one way a number is printed in prose and text tables: ``digits`` decimals, a value that
    rounds to zero without its minus (-0.0004 at 3 is ``0.000``); ``undefined`` (default
    "undefined"; a table cell may pass "") where ``x`` is None, NaN or missing (pandas' NA). p-values
    are :func:`metaeval.analyses.conclusions.p_text`'s, which says which side of alpha they lie on."""
    if x is None:
        return undefined
    try:
        v = float(x)
    except (TypeError, ValueError):
        return undefined
    if math.isnan(v):
        return undefined
    text = f"{abs(v):.{digits}f}"
    return ("-" if v < 0 and float(text) != 0 else "") + text


def wrap(text: str, width=DISPLAY) -> str:
    """``text`` (a note, a caption, a hint; lines of prose) with every line at most ``width``
    characters (``None``: as it is): prose wrapped at spaces, a ``metaeval`` command line in it
    (in backticks, or after ``: ``) set on lines of its own continued with `` \\`` and indented,
    so that it still runs when copy-pasted."""
    width = resolve_width(width)
    if width is None:
        return text
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        at, prose = 0, ""
        for m in _COMMAND.finditer(line):
            prose += line[at:m.start()]
            command = m.group(1) or m.group(2)
            if len(prose) + len(command) + 2 <= width:
                prose += m.group(0)
            elif m.group(1) and len(m.group(0)) <= width // 2:      # a short one: a word of the prose
                prose += m.group(0).replace(" ", _GLUE)
            else:
                out.extend(_prose(prose.rstrip(), width))
                out.extend(_command(command, width))
                prose = ""
            at = m.end()
        tail = prose + line[at:]
        out.extend(_prose("" if at and not prose and not tail.strip(" .,;)") else tail, width))
    return "\n".join(out)


_GLUE = "\u00a0"       # a space textwrap does not break at (a short command in backticks stays whole)


def _prose(text: str, width: int) -> list[str]:
    if not text.strip():
        return []
    indent = text[:len(text) - len(text.lstrip())]
    lines = textwrap.wrap(text, width, subsequent_indent=indent, break_long_words=True, break_on_hyphens=False)
    return [line.replace(_GLUE, " ") for line in lines]


def _command(command: str, width: int) -> list[str]:
    """A command line on lines of at most ``width`` characters, continued with `` \\``."""
    import shlex

    try:
        words = [shlex.quote(w) for w in shlex.split(command)]
    except ValueError:
        words = command.split()
    units: list[str] = []                 # an option and its value stay on one line
    for w in words:
        if units and units[-1].startswith("--") and " " not in units[-1] and not w.startswith("-"):
            units[-1] += " " + w
        else:
            units.append(w)
    lines, current = [], "  "
    for w in units:
        if current.strip() and len(current) + 1 + len(w) + 2 > width:
            lines.append(current + " \\")
            current = "      "
        current += ("" if not current.strip() else " ") + w
    lines.append(current)
    return lines
