"""MQM and ESA error spans (Google's ``wmt-mqm-human-evaluation`` layout), refused by file, line and field.

The file is tab-separated *without* CSV quoting (its texts hold ``"``), one row per error; line 1
is the header, every error names its file's physical line::

    system  doc  doc_id  seg_id  rater  source  target  category  severity  [comment]  [score]

``comment`` is optional (some releases have none); ``score`` (0-100) makes it an ESA file
(the TSV layout with ESA's segment score: one score per system, segment and rater, repeated on
each of its rows). The input is ``seg_id`` as given, the system ``system``, the judge ``rater``
(or, for a metric's predicted spans, the one name given as ``judge``: an automatic judge).
``doc`` and ``doc_id`` are checked present, not stored.

An error's span is marked ``<v>...</v>`` inside ``source`` or ``target``: :func:`strip_markers`
gives the text without markers and the ``[start, end)`` character offsets of each span in it.
A marker that does not close, a closing marker with no span open, or nested markers are errors;
so is a text (without markers) that differs from the one the same segment has on another line
(the source of a ``seg_id``; the target of a system's ``seg_id``). A row may mark no span (an
omission, a whole-segment error), or several (one span row each). A row whose category or
severity is ``No-error`` (any case) -- or, in an ESA file, whose both are empty -- says the judge
rated the segment and found no error: it is kept, with no span (a ``No-error`` row with a span is
refused).

:func:`parse` returns the rows; :func:`store` writes them to ``error_spans`` inside the ingest's
transaction (idempotent: a judge's segment given with the same spans changes nothing; with
others it is a conflict, unless ``replace``, which leaves exactly the new ones).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from metaeval.schema import statements
from metaeval.errors import ConflictError, InputError
from metaeval.ingest.common import identifier, number_text, sha256, text_lines

FORMAT = "mqm"
REQUIRED = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity")
OPTIONAL = ("comment", "score")
OPEN, CLOSE = "<v>", "</v>"
NO_ERROR = "no-error"
#: The columns of :attr:`Spans.spans`: one row per span (an error marking none, or a No-error row:
#: side, start and end None); ``error`` numbers a judge's rows of a segment in file order.
SPAN_COLUMNS = ["system", "input", "judge", "error", "severity", "category", "comment", "side", "span_start",
                "span_end", "line"]


def strip_markers(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The text without ``<v>``/``</v>`` markers and the ``[start, end)`` offsets of each span
    (``ValueError`` for a marker that does not close, closes nothing, or opens inside a span)."""
    plain: list[str] = []
    spans, start, i, length = [], None, 0, 0
    while i < len(text):
        if text.startswith(OPEN, i):
            if start is not None:
                raise ValueError(f"a span marker opens inside another span (character {i})")
            start, i = length, i + len(OPEN)
        elif text.startswith(CLOSE, i):
            if start is None:
                raise ValueError(f"a span marker closes with no span open (character {i})")
            spans.append((start, length))
            start, i = None, i + len(CLOSE)
        else:
            plain.append(text[i])
            length, i = length + 1, i + 1
    if start is not None:
        raise ValueError("a span marker does not close")
    return "".join(plain), spans


@dataclass(frozen=True)
class Spans:
    """A parsed file: ``spans`` (:data:`SPAN_COLUMNS`), the texts without markers (``sources``:
    input, text, line; ``targets``: system, input, text, line), and, for an ESA file, ``scores``
    (system, input, judge, score, line)."""

    file: str
    sha256: str
    spans: pd.DataFrame
    sources: pd.DataFrame
    targets: pd.DataFrame
    scores: pd.DataFrame | None
    kind: str   # human | automatic

    @property
    def esa(self) -> bool:
        return self.scores is not None


def _lines(path: Path):
    """(physical line number, text without its line ending) of every line of ``path``, read by the
    one reader rule of every ingest (:func:`metaeval.ingest.common.text_lines`: UTF-8, a byte order
    mark dropped, a line that is not UTF-8 named)."""
    for number, line in text_lines(path):
        yield number, line.rstrip("\n").removesuffix("\r")


def _header(fields: list[str], file: str) -> dict[str, int]:
    columns = [c.strip() for c in fields]
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise InputError(file, 1, missing[0], f"missing column; an MQM/ESA file is tab-separated with the columns "
                         f"{' '.join(REQUIRED)} [comment] [score]")
    bad = [c for c in columns if c not in REQUIRED + OPTIONAL or columns.count(c) > 1]
    if bad:
        raise InputError(file, 1, bad[0], "unknown or repeated column (the file is read tab-separated, "
                         "without quoting)")
    return {c: columns.index(c) for c in columns}


class _Segments:
    """The texts without markers seen so far: a segment's source (per input) and target (per
    system and input) must be the same on every line."""

    def __init__(self, file: str):
        self.file, self.sources, self.targets = file, {}, {}

    def text(self, value: str, key, store: dict, line: int, field: str) -> list[tuple[int, int]]:
        try:
            plain, spans = strip_markers(value)
        except ValueError as exc:
            raise InputError(self.file, line, field, str(exc)) from None
        first = store.setdefault(key, (plain, line))
        if first[0] != plain:
            raise InputError(self.file, line, field, f"the {field} text (without <v> markers) differs from the one "
                             f"of the same segment on line {first[1]}: a span must mark the segment's own text")
        return spans


def parse(path: Path, judge: str | None = None) -> Spans:
    """The rows of an MQM/ESA file; ``judge``: the spans are one automatic judge's (a metric's
    predictions), whatever the ``rater`` column says."""
    path = Path(path)
    file = str(path)
    lines = _lines(path)
    first = next(lines, None)
    if first is None or not first[1].strip():
        raise InputError(file, 1, None, "the file is empty: expected a header line")
    at = _header(first[1].split("\t"), file)
    segments, rows, scores, ordinal, seen = _Segments(file), [], {}, {}, {}
    for line, text in lines:
        if not text.strip():
            continue
        if (first_line := seen.setdefault(text, line)) != line:   # as ingest table and preferences refuse it
            raise InputError(file, line, None, f"the same row as line {first_line}: an error given twice would "
                             "count twice; remove one")
        fields = text.split("\t")
        if len(fields) != len(at):
            raise InputError(file, line, None, f"expected {len(at)} tab-separated fields, got {len(fields)}")
        system, input_ = (identifier(fields[at[c]], file, line, c) for c in ("system", "seg_id"))
        rater = judge if judge is not None else identifier(fields[at["rater"]], file, line, "rater")
        for c in ("doc", "doc_id"):
            if not fields[at[c]].strip():
                raise InputError(file, line, c, "empty")
        sides = {"source": segments.text(fields[at["source"]], input_, segments.sources, line, "source"),
                 "target": segments.text(fields[at["target"]], (system, input_), segments.targets, line, "target")}
        severity, category = fields[at["severity"]].strip(), fields[at["category"]].strip()
        none = NO_ERROR in (severity.lower(), category.lower()) or ("score" in at and not severity and not category)
        if not none and not severity:
            raise InputError(file, line, "severity", "empty (a segment without errors has a No-error row)")
        if none and any(sides.values()):
            raise InputError(file, line, "source" if sides["source"] else "target",
                             "a No-error row marks a span: a row with a span is an error")
        if "score" in at:
            _esa_score(scores, (system, input_, rater), fields[at["score"]], file, line)
        key = (system, input_, rater)
        error = ordinal[key] = ordinal.get(key, -1) + 1
        comment = fields[at["comment"]] if "comment" in at else None
        marked = [(side, a, b) for side in ("source", "target") for a, b in sides[side]] or [(None, None, None)]
        base = (system, input_, rater, error, severity if not none else "No-error",
                category if not none else "No-error", comment or None)
        rows += [(*base, side, a, b, line) for side, a, b in marked]
    if not rows:
        raise InputError(file, None, None, "no rows after the header")
    return Spans(file=file, sha256=sha256(path), spans=pd.DataFrame(rows, columns=SPAN_COLUMNS),
                 sources=pd.DataFrame([(k, t, n) for k, (t, n) in segments.sources.items()],
                                      columns=["input", "text", "line"]),
                 targets=pd.DataFrame([(*k, t, n) for k, (t, n) in segments.targets.items()],
                                      columns=["system", "input", "text", "line"]),
                 scores=None if "score" not in at else pd.DataFrame(
                     [(*k, v, n) for k, (v, n) in scores.items()], columns=["system", "input", "judge", "score", "line"]),
                 kind="automatic" if judge is not None else "human")


def _esa_score(scores: dict, key: tuple, text: str, file: str, line: int) -> None:
    value = number_text(text, file, line, "score")
    if not 0 <= value <= 100:
        raise InputError(file, line, "score", f"an ESA score is between 0 and 100, got {value:g}")
    first = scores.setdefault(key, (value, line))
    if first[0] != value:
        raise InputError(file, line, "score", f"{value:g} here but {first[0]:g} on line {first[1]} for the same "
                         "system, segment and rater: a rater gives a segment one score")


def store(con, dataset: str, spans: Spans, *, replace: bool = False) -> tuple[int, int]:
    """Write the spans of ``spans`` into ``error_spans`` of ``dataset`` (whose systems and inputs
    exist), inside the caller's transaction: (rows inserted, rows replaced). A judge's segment
    given with other spans than stored is a :class:`ConflictError` unless ``replace``."""
    sql = statements("error_spans")
    staged = spans.spans.assign(kind=spans.kind)
    con.register("_staged_error_spans", staged)
    try:
        con.execute(sql["resolve"], {"dataset": dataset})
        con.execute(sql["changed"])
        changed = con.execute(sql["conflicts"]).fetchall()   # (system, input, judge, line, stored before)
        conflicts = [(s, i, j, line) for s, i, j, line, stored in changed if stored]
        if conflicts and not replace:
            raise ConflictError([f"{spans.file}:{line}: judge {j} on system {s}, segment {i}: other error spans "
                                 "than stored" for s, i, j, line in conflicts[:10]], len(conflicts))
        [(kinds,)] = con.execute(sql["other_kind"]).fetchall()
        if kinds:
            raise InputError(spans.file, None, "rater", f"judge {kinds!r} is stored as the other kind (human / "
                             "automatic): a judge is a person or a model, not both")
        replaced = con.execute(sql["delete"]).fetchall()[0][0] if conflicts else 0
        inserted = con.execute(sql["insert"]).fetchall()[0][0]
        con.execute("DROP TABLE _resolved_error_spans; DROP TABLE _changed_error_spans")
    finally:
        con.unregister("_staged_error_spans")
    return inserted, replaced
