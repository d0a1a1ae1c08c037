"""Content-unit judgments (pyramid / LitePyramid annotations): a long table, one row per unit of a
summary, refused by file, line and field like every ingest.

Columns (a header row; CSV, or TSV for a ``.tsv`` file): ``input``, ``system``, ``unit``,
``present`` (``0``/``1`` or ``Y``/``N``, any case), and optionally ``annotator`` (default: one
annotator, ``"1"``) and ``weight`` (the unit's weight, > 0 and the same on every row of a unit: for
a pyramid, the number of model summaries that express it). Units are the input's: ``unit`` ids are
scoped by ``input``. Every summary (and with annotators, every summary an annotator judged) is
judged on every unit of its input: a missing unit is refused, since counting it absent would
lower the summary's score silently.

REALSumm's released SCU annotations (Bhandari et al. 2020, ``scus`` per document and per-summary
``scu_labels`` of 0/1 marks) are read by writing one row per (document, system, scu) with its mark;
DUC/TAC pyramids (``.pan`` files), one row per (topic, peer, SCU) with the SCU's weight.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from metaeval.errors import InputError
from metaeval.ingest.common import identifier, number_text, sha256, text_lines

FORMAT = "units"
REQUIRED = ("input", "system", "unit", "present")
OPTIONAL = ("annotator", "weight")
_MARKS = {"1": 1.0, "0": 0.0, "y": 1.0, "n": 0.0}


@dataclass(frozen=True)
class Units:
    """The validated rows of a units file: ``rows`` has input, system, unit, annotator, present
    (0.0/1.0), weight (NaN when the file has no weight column) and line."""

    file: str
    sha256: str
    rows: pd.DataFrame
    weighted: bool


def parse(path: Path) -> Units:
    file = str(path)
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    # the one reader rule of every ingest (common.text_lines): UTF-8, a byte order mark dropped,
    # a line that is not UTF-8 named
    reader = csv.reader((text for _, text in text_lines(path)), delimiter=delimiter)
    header = next(reader, None)
    if header is None:
        raise InputError(file, 1, None, "the file is empty: expected a header with input, system, unit, present")
    columns = [c.strip() for c in header]
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise InputError(file, 1, missing[0], f"missing column; a units file has {', '.join(REQUIRED)} "
                         f"(and optionally {', '.join(OPTIONAL)})")
    unknown = [c for c in columns if c not in REQUIRED + OPTIONAL]
    if unknown or len(set(columns)) != len(columns):
        bad = unknown[0] if unknown else next(c for c in columns if columns.count(c) > 1)
        raise InputError(file, 1, bad, "unknown or repeated column")
    at = {c: columns.index(c) for c in columns}
    rows = [_row(values, at, file, line) for line, values in enumerate(reader, start=2) if any(values)]
    if not rows:
        raise InputError(file, None, None, "no unit rows after the header")
    frame = pd.DataFrame(rows, columns=["input", "system", "unit", "annotator", "present", "weight", "line"])
    _check(frame, file)
    return Units(file=file, sha256=sha256(path), rows=frame, weighted="weight" in at)


def _row(values: list[str], at: dict[str, int], file: str, line: int) -> tuple:
    if len(values) != len(at):
        raise InputError(file, line, None, f"expected {len(at)} fields, got {len(values)}")
    ids = [identifier(values[at[c]], file, line, c) for c in ("input", "system", "unit")]
    annotator = identifier(values[at["annotator"]], file, line, "annotator") if "annotator" in at else "1"
    mark = values[at["present"]].strip().lower()
    if mark not in _MARKS:
        raise InputError(file, line, "present", f"expected 0/1 or Y/N, got {values[at['present']]!r}")
    weight = float("nan")
    if "weight" in at:
        weight = number_text(values[at["weight"]], file, line, "weight")
        if weight <= 0:
            raise InputError(file, line, "weight", f"a unit's weight must be > 0, got {weight:g}")
    return (*ids, annotator, _MARKS[mark], weight, line)


def _check(frame: pd.DataFrame, file: str) -> None:
    """One row per (input, system, unit, annotator); one weight per unit; every summary judged on
    every unit of its input."""
    key = ["input", "system", "unit", "annotator"]
    repeated = frame[frame.duplicated(key, keep=False)]
    if len(repeated):
        first, again = repeated["line"].iloc[0], repeated["line"].iloc[1]
        raise InputError(file, int(again), "unit", f"the unit {repeated['unit'].iloc[0]!r} of system "
                         f"{repeated['system'].iloc[0]!r}, input {repeated['input'].iloc[0]!r} is already judged "
                         f"on line {first}" + (" by this annotator" if frame["annotator"].nunique() > 1 else ""))
    weights = frame.groupby(["input", "unit"])["weight"].nunique(dropna=False)
    if (weights > 1).any():
        input_, unit = weights[weights > 1].index[0]
        rows = frame[(frame["input"] == input_) & (frame["unit"] == unit)]
        other = rows[rows["weight"] != rows["weight"].iloc[0]].iloc[0]
        raise InputError(file, int(other["line"]), "weight", f"unit {unit!r} of input {input_!r} has weight "
                         f"{other['weight']:g} here and {rows['weight'].iloc[0]:g} on line {rows['line'].iloc[0]}: "
                         "a unit has one weight")
    units = frame.groupby("input")["unit"].nunique()
    judged = frame.groupby(["input", "system", "annotator"]).agg(n=("unit", "size"), line=("line", "min"))
    short = judged[judged["n"].to_numpy() < units.reindex(judged.index.get_level_values("input")).to_numpy()]
    if len(short):
        (input_, system, annotator), row = short.index[0], short.iloc[0]
        have = set(frame[(frame["input"] == input_) & (frame["system"] == system)
                         & (frame["annotator"] == annotator)]["unit"])
        absent = sorted(set(frame[frame["input"] == input_]["unit"]) - have)[0]
        raise InputError(file, int(row["line"]), "unit", f"system {system!r} on input {input_!r} is not judged on "
                         f"unit {absent!r} of that input" + (f" (annotator {annotator!r})" if annotator != "1" else "")
                         + ": give every unit of the input a row (present 0 when absent)")
