"""ESA's released CSV (WMT24, ``wmt-conference/wmt24-news-systems`` ``humeval/esa_*.csv``), read
into the same :class:`~metaeval.ingest.mqm.Spans` as the MQM/ESA TSV.

The file is a CSV **without a header** (standard quoting: the span lists are quoted JSON), one
record per (rater, system, segment) judgment, twelve fields, named here as the WMT24 scripts
(``humeval/merge_to_jsonl.py``) unpack them::

    user_id, system, line_id, tgt_type, lang1, lang2, esa_score, document_id, unknown, esa_spans,
    time_start, time_end

``line_id`` is the segment (its index in the language pair's ``txt/sources``), kept as given as
the input id; ``user_id`` the rater; ``esa_score`` the 0-100 score (the measure ``esa``);
``esa_spans`` a JSON list of ``{"start_i", "end_i", "severity", "error_type"}`` -- character
offsets ``[start_i, end_i)`` into the **target** (the system's translation), both ``"missing"``
for an error with no position (an omission), ``severity`` minor or major; an empty list: the
rater found no error (a No-error row is kept).

The file carries no text: the targets the offsets point into are the system outputs, one line
per segment (``line_id`` 0-based), read by :func:`read_targets` from a directory of
``SYSTEM.txt`` files (WMT24's and mt-metrics-eval's ``system-outputs/LP/``) or taken from the
summaries a dataset already holds (``ingest mtme``); :func:`with_targets` checks every span lies
within its text (an error naming the file, the record's line and ``esa_spans`` otherwise) and
keeps the texts read from files to be stored once per segment, as the TSV path stores its own.

As the WMT24 scripts, the records that are not judgments of the test set are skipped (and
counted): tutorial items (``document_id`` containing ``-tutorial``), attention checks
(``tgt_type`` other than ``TGT``, e.g. ``BAD``) and documents marked ``#bad``, ``#dup`` or
``#incomplete``. A file holding several language pairs needs one chosen (``lp``, e.g.
``eng-jpn``). Every error names the file, the physical line where its record starts (line 1
is the first record: there is no header) and the field.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import pandas as pd

from metaeval.errors import InputError
from metaeval.ingest.common import identifier, number_text, sha256, text_lines
from metaeval.ingest.mqm import SPAN_COLUMNS, Spans

FORMAT = "esa-csv"
FIELDS = ("user_id", "system", "line_id", "tgt_type", "lang1", "lang2", "esa_score", "document_id", "unknown",
          "esa_spans", "time_start", "time_end")
SKIPPED_SUFFIXES = ("#bad", "#dup", "#incomplete")
SEVERITIES = ("minor", "major")


def looks_like(path: Path) -> bool:
    """Whether ``path`` starts as ESA's released CSV: a first line of twelve comma-separated
    fields (no tab), the seventh a number."""
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as f:
        first = next(csv.reader(f), None)
    if not first or len(first) != len(FIELDS) or any("\t" in x for x in first):
        return False
    try:
        float(first[6])
    except ValueError:
        return False
    return True


def _records(path: Path):
    """(physical line where the record starts, fields) of every record; not UTF-8 or a broken
    quote is an :class:`InputError` naming the line."""
    file = str(path)
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            reader = csv.reader(f, strict=True)
            start = 1
            for fields in reader:
                yield start, fields
                start = reader.line_num + 1
    except UnicodeDecodeError as exc:
        raise InputError(file, None, None, f"not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except csv.Error as exc:
        raise InputError(file, start, None, f"not a well-formed CSV record ({exc})") from None


def _spans(text: str, file: str, line: int) -> list[tuple[int | None, int | None, str, str]]:
    """(start, end, severity, error type) of each span of an ``esa_spans`` field."""
    try:
        items = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(file, line, "esa_spans", f"not JSON ({exc.msg}): expected a list of spans") from None
    if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
        raise InputError(file, line, "esa_spans", "expected a JSON list of objects with start_i, end_i, severity")
    out = []
    for k, item in enumerate(items):
        where = f"span {k + 1}: "
        severity = item.get("severity")
        if not isinstance(severity, str) or severity.lower() not in SEVERITIES:
            raise InputError(file, line, "esa_spans", f"{where}severity {severity!r}; expected minor or major")
        a, b = item.get("start_i"), item.get("end_i")
        if a == "missing" and b == "missing":
            a = b = None
        elif not (type(a) is int and type(b) is int and 0 <= a <= b):
            raise InputError(file, line, "esa_spans", f"{where}start_i {a!r}, end_i {b!r}: expected integers "
                             "0 <= start_i <= end_i (or both \"missing\")")
        kind = item.get("error_type")
        out.append((a, b, severity, "" if kind is None else str(kind)))
    return out


def _judgment(fields: list[str], file: str, line: int):
    """(system, input, rater, score, spans) of a record that is a judgment."""
    system = identifier(fields[1], file, line, "system")
    rater = identifier(fields[0], file, line, "user_id")
    input_ = fields[2].strip()
    if not (input_.isascii() and input_.isdigit()):   # str.isdigit alone takes '²' and Arabic-Indic digits
        raise InputError(file, line, "line_id", f"expected a segment index (a whole number), got {fields[2]!r}")
    score = number_text(fields[6], file, line, "esa_score")
    if not 0 <= score <= 100:
        raise InputError(file, line, "esa_score", f"an ESA score is between 0 and 100, got {score:g}")
    if not fields[7].strip():
        raise InputError(file, line, "document_id", "empty")
    for k in (10, 11):
        number_text(fields[k], file, line, FIELDS[k])
    return system, input_, rater, score, _spans(fields[9], file, line)


def parse(path: Path, lp: str | None = None) -> tuple[Spans, dict[str, int]]:
    """The judgments of an ESA CSV (of language pair ``lp``, ``SRC-TGT`` as its lang1 and lang2
    fields), and the records skipped by reason."""
    path = Path(path)
    file = str(path)
    rows, scores, pairs, skipped = [], {}, {}, {"tutorial": 0, "attention check": 0, "bad, dup or incomplete": 0}
    for line, fields in _records(path):
        if not any(x.strip() for x in fields):
            continue
        if len(fields) != len(FIELDS):
            raise InputError(file, line, None, f"expected {len(FIELDS)} comma-separated fields ({', '.join(FIELDS)}), "
                             f"got {len(fields)}")
        pair = f"{fields[4].strip()}-{fields[5].strip()}"
        pairs.setdefault(pair, line)
        if lp is not None and pair != lp:
            continue
        document = fields[7].strip()
        reason = ("tutorial" if "-tutorial" in document else "attention check" if fields[3].strip() != "TGT"
                  else "bad, dup or incomplete" if document.endswith(SKIPPED_SUFFIXES) else None)
        if reason:
            skipped[reason] += 1
            continue
        system, input_, rater, score, spans = _judgment(fields, file, line)
        key = (system, input_, rater)
        if key in scores:
            raise InputError(file, line, "user_id", f"rater {rater} judges system {system}, segment {input_} again "
                             f"(first on line {scores[key][1]}): a rater gives a segment one judgment")
        scores[key] = (score, line)
        if not spans:
            rows.append((system, input_, rater, 0, "No-error", "No-error", None, None, None, None, line))
        for error, (a, b, severity, kind) in enumerate(spans):
            rows.append((system, input_, rater, error, severity, kind, None, None if a is None else "target", a, b, line))
    if lp is None and len(pairs) > 1:
        raise InputError(file, list(pairs.values())[1], "lang2", f"the file holds the language pairs "
                         f"{', '.join(pairs)}: choose one with --lp (e.g. --lp {next(iter(pairs))})")
    if lp is not None and lp not in pairs:
        raise InputError(file, None, "lang1", f"no record of the language pair {lp}; the file has {', '.join(pairs)}")
    if not rows:
        raise InputError(file, None, None, "no judgment of the test set (every record skipped, or none)")
    empty_sources = pd.DataFrame(columns=["input", "text", "line"])
    empty_targets = pd.DataFrame(columns=["system", "input", "text", "line"])
    spans = Spans(file=file, sha256=sha256(path), spans=pd.DataFrame(rows, columns=SPAN_COLUMNS),
                  sources=empty_sources, targets=empty_targets,
                  scores=pd.DataFrame([(*k, v, n) for k, (v, n) in scores.items()],
                                      columns=["system", "input", "judge", "score", "line"]), kind="human")
    return spans, skipped


def read_targets(directory: Path, spans: Spans) -> dict[tuple[str, str], tuple[str, str]]:
    """(system, input) -> (target text, where it was read) of every judged segment, from
    ``directory/SYSTEM.txt``: line ``line_id + 1`` (``line_id`` is 0-based, as the WMT24 scripts
    index the system outputs), its line ending removed. A system without its file, or a segment
    beyond the file's lines, is an :class:`InputError` naming the CSV's record and field."""
    directory = Path(directory)
    lines: dict[str, list[str]] = {}
    out = {}
    for system, input_, line in spans.scores[["system", "input", "line"]].itertuples(index=False):
        path = directory / f"{system}.txt"
        if system not in lines:
            if not path.is_file():
                raise InputError(spans.file, int(line), "system", f"no target texts for system {system}: "
                                 f"{path} is not a file (one SYSTEM.txt per system, a line per segment)")
            lines[system] = [text.rstrip("\r\n") for _, text in text_lines(path)]
        index = int(input_)
        if index >= len(lines[system]):
            raise InputError(spans.file, int(line), "line_id", f"segment {input_} is beyond the "
                             f"{len(lines[system])} lines of {path} (line_id counts from 0)")
        out[(system, input_)] = (lines[system][index], f"{path} line {index + 1}")
    return out


def with_targets(spans: Spans, read: dict, stored: dict) -> tuple[Spans, int]:
    """``spans`` with the target texts ``read`` from files (:func:`read_targets`) to store, every
    target span checked against its text (the one read, else the one ``stored``: (system, input)
    -> (text, where)); and the number of judged segments with neither (their spans are kept,
    without a text to measure them in). A span beyond its text is an :class:`InputError`."""
    rows = spans.spans
    marked = rows[rows["side"] == "target"]
    for system, input_, error, end, line in marked[["system", "input", "error", "span_end", "line"]].itertuples(
            index=False):
        text = read.get((system, input_)) or stored.get((system, input_))
        if text is not None and end > len(text[0]):
            raise InputError(spans.file, int(line), "esa_spans", f"span {int(error) + 1}: end_i {int(end)} is "
                             f"beyond the {len(text[0])} characters of system {system}'s target of segment "
                             f"{input_} ({text[1]})")
    first = spans.scores.groupby(["system", "input"], sort=False)["line"].min()
    targets = pd.DataFrame([(s, i, read[(s, i)][0], int(n)) for (s, i), n in first.items() if (s, i) in read],
                           columns=["system", "input", "text", "line"])
    missing = sum(1 for key in first.index if key not in read and key not in stored)
    return dataclasses.replace(spans, targets=targets), missing
