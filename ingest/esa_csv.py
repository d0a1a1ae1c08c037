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
offsets ``[start_i, end_i)`` into the **target** (the system's translation; the file carries no
text, so none is stored), both ``"missing"`` for an error with no position (an omission),
``severity`` minor or major; an empty list: the rater found no error (a No-error row is kept).

As the WMT24 scripts, the records that are not judgments of the test set are skipped (and
counted): tutorial items (``document_id`` containing ``-tutorial``), attention checks
(``tgt_type`` other than ``TGT``, e.g. ``BAD``) and documents marked ``#bad``, ``#dup`` or
``#incomplete``. A file holding several language pairs needs one chosen (``lp``, e.g.
``eng-jpn``). Every error names the file, the physical line where its record starts (line 1
is the first record: there is no header) and the field.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd

from metaeval.errors import InputError
from metaeval.ingest.common import identifier, number_text, sha256
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
    if not input_.isdigit():
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
