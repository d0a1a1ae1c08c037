"""The other pairwise-preference files ``ingest preferences`` reads, told by their columns, each
turned into the native rows ``(line, input, system_a, system_b, judge, kind, order, winner)``.

**Arena votes** (Chatbot Arena's released battles): ``model_a, model_b, winner`` with ``winner``
one of ``model_a``, ``model_b``, ``tie``, ``tie (bothbad)`` (both ties alike); optional
``question_id`` (the input; without it each vote is its own input, ``vote-<line>``) and
``judge`` (the voter). The votes are human (judge: the ``judge`` column, else ``arena``) unless a
judge name is given to the ingest: then they are that automatic judge's. ``model_a`` is the
output shown first (order ``ab``). Other columns (the conversation, language, turn, ...) are
ignored.

**AlpacaEval annotations**: ``generator_1, generator_2, preference`` with ``preference`` 1
(``output_1`` preferred), 2 (``output_2``) or 1.5 (a tie), as AlpacaEval's annotators write it;
``output_1`` is shown first. The input is ``instruction_id`` when given, else ``i-`` and the
first 16 hex digits of the sha256 of ``instruction`` (the same instruction is the same input in
every file). The judge is the ``annotator`` column or the name given to the ingest (automatic).
The outputs' lengths are read from ``output_1``/``output_2`` (texts: their length in
characters) or ``length_1``/``length_2`` (integers), and stored as the cell attribute
``output_length`` (``--where output_length=...``; length-controlled analyses read it).
"""

from __future__ import annotations

import hashlib
import math

from metaeval.errors import InputError
from metaeval.ingest.common import identifier

ARENA = ("model_a", "model_b", "winner")
ALPACA = ("generator_1", "generator_2", "preference")
ARENA_WINNERS = {"model_a": "a", "model_b": "b", "tie": "tie", "tie (bothbad)": "tie"}
ALPACA_PREFERENCES = {1.0: "a", 2.0: "b", 1.5: "tie"}
ARENA_HUMAN_JUDGE = "arena"


def format_of(columns) -> str:
    """``arena``, ``alpaca_eval`` or ``native`` by the file's columns."""
    cols = set(columns)
    if set(ARENA) <= cols:
        return "arena"
    if set(ALPACA) <= cols:
        return "alpaca_eval"
    return "native"


def arena_rows(file: str, columns, records, judge: str | None):
    """The native rows of an arena vote table (see the module docstring)."""
    for line, rec in records:
        a = identifier(rec.get("model_a"), file, line, "model_a")
        b = identifier(rec.get("model_b"), file, line, "model_b")
        if a == b:
            raise InputError(file, line, "model_b", f"model_a and model_b are both {a!r}: a vote compares two systems")
        raw = rec.get("winner")
        word = raw.strip().lower() if isinstance(raw, str) else None
        if word not in ARENA_WINNERS:
            got = "nothing" if raw is None or word == "" else repr(raw)
            raise InputError(file, line, "winner", f"expected one of {', '.join(ARENA_WINNERS)}, got {got}")
        qid = rec.get("question_id")
        given = qid is not None and not (isinstance(qid, str) and not qid.strip())
        item = identifier(qid, file, line, "question_id") if given else f"vote-{line}"
        if judge is not None:
            who, kind = judge, "automatic"
        else:
            voter = rec.get("judge")
            who = identifier(voter, file, line, "judge") if voter not in (None, "") else ARENA_HUMAN_JUDGE
            kind = "human"
        yield line, item, a, b, who, kind, "ab", ARENA_WINNERS[word]


def alpaca_rows(file: str, columns, records, judge: str | None, lengths: list):
    """The native rows of AlpacaEval annotations; each output's length appended to ``lengths`` as
    (system, input, length, line)."""
    if judge is None and "annotator" not in columns:
        raise InputError(file, None, "annotator", "AlpacaEval annotations without an annotator column need the "
                         "judge's name: give it with --judge NAME")
    for line, rec in records:
        g1 = identifier(rec.get("generator_1"), file, line, "generator_1")
        g2 = identifier(rec.get("generator_2"), file, line, "generator_2")
        if g1 == g2:
            raise InputError(file, line, "generator_2", f"generator_1 and generator_2 are both {g1!r}")
        winner = ALPACA_PREFERENCES.get(_preference(rec.get("preference"), file, line))
        if winner is None:
            raise InputError(file, line, "preference", f"expected 1 (output_1 preferred), 2 (output_2) or 1.5 (a tie), "
                             f"got {rec.get('preference')!r}")
        item = _alpaca_input(rec, file, line)
        who = judge if judge is not None else identifier(rec.get("annotator"), file, line, "annotator")
        for system, n in ((g1, "1"), (g2, "2")):
            length = _length(rec, n, file, line)
            if length is not None:
                lengths.append((system, item, length, line))
        yield line, item, g1, g2, who, "automatic", "ab", winner


def _preference(value, file, line):
    try:
        p = float(value)
    except (TypeError, ValueError):
        raise InputError(file, line, "preference", f"expected a number 1, 2 or 1.5, got {value!r}") from None
    if not math.isfinite(p):
        raise InputError(file, line, "preference", f"expected a number 1, 2 or 1.5, got {value!r}")
    return p


def _alpaca_input(rec, file, line) -> str:
    if rec.get("instruction_id") not in (None, ""):
        return identifier(rec.get("instruction_id"), file, line, "instruction_id")
    text = rec.get("instruction")
    if not isinstance(text, str) or not text.strip():
        raise InputError(file, line, "instruction", "expected the instruction's text (or an instruction_id column)")
    return "i-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def _length(rec, n: str, file, line) -> int | None:
    if rec.get(f"length_{n}") not in (None, ""):
        value = rec.get(f"length_{n}")
        try:
            length = float(value)
        except (TypeError, ValueError):
            length = -1.0
        if not (math.isfinite(length) and length >= 0 and length == int(length)):
            raise InputError(file, line, f"length_{n}", f"expected a length (an integer >= 0), got {value!r}")
        return int(length)
    text = rec.get(f"output_{n}")
    if text is None:
        return None
    if not isinstance(text, str):
        raise InputError(file, line, f"output_{n}", f"expected the output's text, got {type(text).__name__}")
    return len(text)
