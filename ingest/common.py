"""What every input format shares: reading lines, validating ids and numbers, naming
measures, classifying them as human or automatic, and catching duplicate cells."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path

import pandas as pd

from warehouse.errors import InputError
from warehouse.load import CELL_COLUMNS, MEASURE_COLUMNS


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each physical line, line ending kept, decoded as UTF-8;
    a clear error naming the line for bytes that are not UTF-8."""
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(str(path), number, None,
                                 f"not UTF-8 text (byte {raw[exc.start]:#04x} at byte {exc.start + 1} of the line); "
                                 "save the file as UTF-8") from None


def jsonl_objects(path: Path) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for each non-blank line; a clear error for anything else."""
    seen = False
    for number, text in text_lines(path):
        if not text.strip():
            continue
        try:
            obj = json.loads(text, parse_constant=_reject_constant)
        except (json.JSONDecodeError, ValueError) as exc:
            raise InputError(str(path), number, None, f"malformed JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise InputError(str(path), number, None, f"expected a JSON object, got {type(obj).__name__}")
        seen = True
        yield number, obj
    if not seen:
        raise InputError(str(path), None, None, "the file is empty")


def _reject_constant(name: str):
    raise ValueError(f"{name} is not a number the warehouse accepts")


def identifier(value, file: str, line: int | None, field: str) -> str:
    """A system / input / annotator id: a non-empty string (integers are accepted as text)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        got = "missing" if value is None else f"{type(value).__name__} {value!r}"
        raise InputError(file, line, field, f"expected an id (string), got {got}")
    text = str(value).strip()
    if not text:
        raise InputError(file, line, field, "the id is empty")
    return text


def number(value, file: str, line: int | None, field: str) -> float:
    """A finite real number from a typed source (JSON, Parquet): strings and booleans are
    not numbers, even when they spell one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if isinstance(value, str):
            got = f"the string {value!r} (write numbers without quotes)"
        else:
            got = "null" if value is None else f"{type(value).__name__} {value!r}"
        raise InputError(file, line, field, f"expected a number, got {got}")
    return _finite(float(value), file, line, field)


def number_text(text, file: str, line: int | None, field: str) -> float:
    """A finite real number written as text (a CSV field)."""
    if text is None:
        raise InputError(file, line, field, "expected a number, got nothing")
    try:
        value = float(text)
    except ValueError:
        raise InputError(file, line, field, f"expected a number, got {text!r}") from None
    return _finite(value, file, line, field)


def _finite(value: float, file: str, line: int | None, field: str) -> float:
    if not math.isfinite(value):
        raise InputError(file, line, field, f"the value {value} is not finite")
    return value


def matches(name: str, globs: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, g) for g in globs)


def measures_frame(cells: pd.DataFrame, lower: Sequence[str]) -> pd.DataFrame:
    """One row per measure in ``cells``: its kind (human if it has annotators) and direction."""
    if cells.empty:
        return pd.DataFrame(columns=MEASURE_COLUMNS)
    kinds = cells.groupby("measure", sort=True)["annotator"].agg(lambda a: "human" if a.notna().any() else "automatic")
    names = kinds.index.astype(str)
    return pd.DataFrame({
        "name": names,
        "kind": kinds.to_numpy(),
        "direction": ["lower" if matches(n, lower) else "higher" for n in names],
    })


def cells_frame(rows: list[tuple], file: str) -> pd.DataFrame:
    """Rows ``(system, input, measure, annotator, value, line)`` as a frame, with no
    cell given twice (the error names both lines)."""
    cells = pd.DataFrame(rows, columns=CELL_COLUMNS)
    if cells.empty:
        raise InputError(file, None, None, "no values found")
    key = ["system", "input", "measure", "annotator"]
    dup = cells.duplicated(key, keep=False)
    if dup.any():
        first = cells[dup].sort_values("line").iloc[0]
        same = cells[dup & (cells["system"] == first.system) & (cells["input"] == first.input)
                     & (cells["measure"] == first.measure)]
        lines = ", ".join(str(n) for n in same["line"])
        who = f" annotator={first.annotator}" if first.annotator is not None else ""
        raise InputError(file, int(first.line), "value",
                         f"cell system={first.system} input={first.input} measure={first.measure}{who} "
                         f"is given more than once (lines {lines})")
    return cells


def check_globs_used(globs: Sequence[str], measures: Sequence[str], option: str, files: Sequence[str]) -> None:
    """A ``--human``/``--lower`` pattern that matches no measure is almost surely a typo."""
    for g in globs:
        if not any(fnmatch.fnmatchcase(m, g) for m in measures):
            raise InputError(", ".join(files), None, None,
                             f"{option} {g!r} matches no measure (measures: {', '.join(sorted(set(measures))[:30])})")
