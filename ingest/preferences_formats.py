"""The other pairwise-preference files ``ingest preferences`` reads, told by their columns, each
turned into the native rows ``(line, input, system_a, system_b, judge, kind, order, winner)``.

**Arena votes** (Chatbot Arena's released battles): ``model_a, model_b, winner`` with ``winner``
one of ``model_a``, ``model_b``, ``tie``, ``tie (bothbad)`` (both ties alike); optional
``question_id`` (the input; without it each vote is its own input, ``vote-<line>``) and
``judge`` (the voter). The votes are human (judge: the ``judge`` column, else ``arena``) unless a
judge name is given to the ingest: then they are that automatic judge's. ``model_a`` is the
output shown first (order ``ab``). Other columns (the conversation, language, turn, ...) are
ignored.

**AlpacaEval annotations** (its released ``annotations.json`` as it is: a JSON array of records,
or JSON lines, CSV, ...): ``generator_1, generator_2, preference`` with ``preference`` in [1, 2],
AlpacaEval's orientation: 1 ``output_1`` preferred, 2 ``output_2``, 1.5 a tie, and any value
between from a continuous (weighted) judge, e.g. 1.0000630276; AlpacaEval's 0 is a draw (1.5, as
its ``winrate.py`` reads it); a ``null`` preference (the judge gave none) is left out, and
counted. The preference is kept as the probability that the stored second system is preferred
(``preference - 1`` when that system is ``output_2``, ``2 - preference`` when the systems are
stored the other way round) and the verdict is its rounding (above 0.5 a win, below a loss, 0.5 a
tie). ``output_1`` is shown first. The input is ``instruction_id`` when given, else ``i-`` and the
first 16 hex digits of the sha256 of ``instruction`` (the same instruction is the same input in
every file). The judge is the ``annotator`` column or the name given to the ingest (automatic).
The outputs' lengths are read from ``output_1``/``output_2`` (texts: their length in
characters) or ``length_1``/``length_2`` (integers), and stored as the cell attribute
``output_length`` (``--where output_length=...``; length-controlled analyses read it). The
record's place among the file's records of the same two generators (0, 1, ...: AlpacaEval's
``index`` of the instruction, which its ``df_gamed.csv`` names) is stored as the input-level
attribute ``instruction_index``.

The words every layout's fields are read as (``order``, ``winner``, ``kind``: :func:`word`,
:func:`judge_kind`) are here too, for the Python reader and the DuckDB one
(:mod:`metaeval.ingest.preferences_staged`) alike.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

from metaeval.errors import InputError
from metaeval.ingest.common import identifiers
from metaeval.ingest.table_files import KINDS as JUDGE_KINDS

#: The words of the ``order`` and ``winner`` columns (analyses.stats.vocabulary has the same).
PRESENTATION_ORDERS = ("ab", "ba")
PREFERENCE_LABELS = ("a", "b", "tie")
ARENA = ("model_a", "model_b", "winner")
ALPACA = ("generator_1", "generator_2", "preference")
ARENA_WINNERS = {"model_a": "a", "model_b": "b", "tie": "tie", "tie (bothbad)": "tie"}
#: AlpacaEval's draw in its older annotations (read as 1.5).
ALPACA_DRAW = 0.0
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
    identifier = identifiers(file)
    for line, rec in records:
        a = identifier(rec.get("model_a"), line, "model_a")
        b = identifier(rec.get("model_b"), line, "model_b")
        if a == b:
            raise InputError(file, line, "model_b", f"model_a and model_b are both {a!r}: a vote compares two systems")
        winner = arena_winner(rec.get("winner"), file, line)
        qid = rec.get("question_id")
        given = qid is not None and not (isinstance(qid, str) and not qid.strip())
        item = identifier(qid, line, "question_id") if given else f"vote-{line}"
        if judge is not None:
            who, kind = judge, "automatic"
        else:
            voter = rec.get("judge")
            who = identifier(voter, line, "judge") if voter not in (None, "") else ARENA_HUMAN_JUDGE
            kind = "human"
        yield line, item, a, b, who, kind, "ab", winner, None


def arena_winner(raw, file: str, line: int | None) -> str:
    """An arena vote's ``winner`` field as the verdict ``a``, ``b`` or ``tie``."""
    word = raw.strip().lower() if isinstance(raw, str) else None
    if word not in ARENA_WINNERS:
        got = "nothing" if raw is None or word == "" else repr(raw)
        raise InputError(file, line, "winner", f"expected one of {', '.join(ARENA_WINNERS)}, got {got}")
    return ARENA_WINNERS[word]


def alpaca_rows(file: str, columns, records, judge: str | None, lengths: list, left_out: list | None = None):
    """The native rows of AlpacaEval annotations, each with the probability that generator_2 is
    preferred; each output's length appended to ``lengths`` as (system, input, length, line,
    ``output_length``) and each record's place as (``''``, input, place, line,
    ``instruction_index``); the lines of null preferences appended to ``left_out``."""
    if judge is None and "annotator" not in columns:
        raise InputError(file, None, "annotator", "AlpacaEval annotations without an annotator column need the "
                         "judge's name: give it with --judge NAME")
    places: dict = {}
    identifier = identifiers(file)
    for line, rec in records:
        g1 = identifier(rec.get("generator_1"), line, "generator_1")
        g2 = identifier(rec.get("generator_2"), line, "generator_2")
        if g1 == g2:
            raise InputError(file, line, "generator_2", f"generator_1 and generator_2 are both {g1!r}")
        place = places[(g1, g2)] = places.get((g1, g2), -1) + 1
        preference = _preference(rec.get("preference"), file, line)
        if preference is None:
            if left_out is not None:
                left_out.append(line)
            continue
        item = _alpaca_input(rec, file, line, identifier)
        lengths.append(("", item, place, line, "instruction_index"))
        who = judge if judge is not None else identifier(rec.get("annotator"), line, "annotator")
        for system, n in ((g1, "1"), (g2, "2")):
            length = _length(rec, n, file, line)
            if length is not None:
                lengths.append((system, item, length, line, "output_length"))
        probability = preference - 1.0              # P(output_2 preferred)
        winner = "b" if probability > 0.5 else "a" if probability < 0.5 else "tie"
        yield line, item, g1, g2, who, "automatic", "ab", winner, probability


def _preference(value, file, line) -> float | None:
    """AlpacaEval's preference in [1, 2] (its 0: 1.5, a draw); None for a null one."""
    if value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str)
                                                                               and not value.strip()):
        return None
    expected = "expected a number in [1, 2] (1: output_1 preferred, 2: output_2, 1.5 a tie; 0 a draw), or null"
    if isinstance(value, bool):
        raise InputError(file, line, "preference", f"{expected}, got {value!r}")
    try:
        p = float(value)
    except (TypeError, ValueError):
        raise InputError(file, line, "preference", f"{expected}, got {value!r}") from None
    if p == ALPACA_DRAW:
        return 1.5
    if not (math.isfinite(p) and 1.0 <= p <= 2.0):
        raise InputError(file, line, "preference", f"{expected}, got {value!r}")
    return p


def _alpaca_input(rec, file, line, identifier) -> str:
    if rec.get("instruction_id") not in (None, ""):
        return identifier(rec.get("instruction_id"), line, "instruction_id")
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


def word(value, choices: Sequence[str], file: str, line: int | None, field: str) -> str:
    """One of the words ``choices`` (spaces around it and the letters' case aside)."""
    if isinstance(value, str) and value.strip().lower() in choices:
        return value.strip().lower()
    got = "nothing" if value is None or (isinstance(value, str) and not value.strip()) else repr(value)
    raise InputError(file, line, field, f"expected one of {', '.join(choices)}, got {got}")


def judge_kind(value, file: str, line: int | None) -> str:
    """A ``kind`` field: ``automatic`` (also when empty) or ``human``."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return "automatic"
    return word(value, JUDGE_KINDS, file, line, "kind")
