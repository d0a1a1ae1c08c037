"""Errors a user can act on. The CLI prints their message and exits non-zero."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def one_line(exc: BaseException) -> str:
    """An exception's message on one line (DuckDB's can span several), for an error message."""
    return " ".join(str(exc).split())


@dataclass(frozen=True)
class Hint:
    """What to run, in the Python API's words: the ``Warehouse`` method ``command`` and its
    arguments, in order (a list or tuple: the values of a repeated option; True: a switch), after
    the ``positional`` values, on the warehouse at ``db``. ``python``: the Python call, written
    out, when it is not that method (a function of ``metaeval.runs``, ``Warehouse.create``). The
    command line renders it as a ``metaeval`` command line (``metaeval.cli.app.command_line``);
    ``str()`` is the Python call."""

    command: str
    arguments: tuple[tuple[str, Any], ...] = ()
    db: str | None = None
    positional: tuple[Any, ...] = ()
    python: str | None = None

    def __str__(self) -> str:
        if self.python is not None:
            return self.python
        args = ", ".join([*map(repr, self.positional),
                          *(f"{name}={list(v) if isinstance(v, tuple) else v!r}" for name, v in self.arguments)])
        return f"wh.{self.command}({args})"


class _NoValue:
    def __repr__(self) -> str:
        return "NO_VALUE"

    def __reduce__(self) -> str:  # pickled as a reference: one NO_VALUE in every process (workers)
        return "NO_VALUE"


#: :attr:`Argument.value` when the text names the parameter only.
NO_VALUE: Any = _NoValue()


@dataclass(frozen=True)
class Argument:
    """A parameter an error's text names, by its Python name (``k``, ``system_inputs``), with the
    value it was given (:data:`NO_VALUE`: the parameter only; a list: the values of a repeated
    option; ``placeholder``: a value written as is, ``NAME``). ``str()`` is the Python wording
    (``k=5``, ``system_inputs``); the command line renders it as its flag (``--k 5``,
    ``--system-inputs``: ``metaeval.cli.app.argument_text``)."""

    name: str
    value: Any = NO_VALUE
    placeholder: str | None = None

    def __str__(self) -> str:
        if self.placeholder is not None:
            return f"{self.name}={self.placeholder}"
        return self.name if self.value is NO_VALUE else f"{self.name}={self.value!r}"


class Message:
    """An error's text whose parameters (:class:`Argument`) and calls (:class:`Hint`) stay
    structured, so that each reader gets them in its own words: ``str()`` names them as the
    Python API does (``k=5``, ``wh.compare(...)``), :meth:`render` as a caller says (the command
    line: ``--k 5``, ``metaeval compare ...``)."""

    def __init__(self, *parts):
        flat: list = []
        for p in parts:
            flat += p.parts if isinstance(p, Message) else [p]
        self.parts = tuple(flat)

    def render(self, argument: Callable[[Argument], str], hint: Callable[[Hint], str]) -> str:
        return "".join(argument(p) if isinstance(p, Argument) else hint(p) if isinstance(p, Hint) else str(p)
                       for p in self.parts)

    def __str__(self) -> str:
        return self.render(str, str)

    def __repr__(self) -> str:
        return f"Message{self.parts!r}"

    def __add__(self, other) -> Message:
        return Message(self, other)

    def __radd__(self, other) -> Message:
        return Message(other, self)


def text(*parts) -> str | Message:
    """``parts`` joined: a plain string when all are strings, else a :class:`Message`."""
    if all(isinstance(p, str) for p in parts):
        return "".join(parts)
    return Message(*parts)


class WarehouseError(Exception):
    """Something about the warehouse or a request to it is wrong; the message says what (a string,
    or a :class:`Message` naming parameters), and ``hint`` (a :class:`Hint`, or None) what to run
    about it."""

    def __init__(self, *args, hint: Hint | None = None):
        super().__init__(*args)
        self.hint = hint

    @property
    def message(self) -> str:
        """The message without the hint, in the Python API's words."""
        return super().__str__()

    def render(self, argument: Callable[[Argument], str], hint: Callable[[Hint], str]) -> str:
        """The message without the hint, its parameters and calls rendered by ``argument`` and
        ``hint`` (the command line's flags and command lines)."""
        first = self.args[0] if len(self.args) == 1 else None
        return first.render(argument, hint) if isinstance(first, Message) else self.message

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message}\n  {self.hint}"


class InputError(WarehouseError):
    """Bad content in an input file, located by file, line and field."""

    def __init__(self, file: str, line: int | None, field: str | None, message: str):
        self.file, self.line, self.field = file, line, field
        where = str(file) + (f":{line}" if line is not None else "")
        what = f" field {field!r}:" if field else ""
        super().__init__(f"{where}:{what} {message}")


class ConflictError(WarehouseError):
    """An ingest gives a different value for something the warehouse already holds (or two
    files of one ingest disagree). ``headline`` says what to do; the default suggests
    ``--replace``, so conflicts that replacing does not resolve, or where it is not offered,
    give their own."""

    def __init__(self, conflicts: list[str], total: int, headline: str | None = None):
        self.conflicts, self.total = conflicts, total
        headline = headline or (f"{total} value(s) conflict with the warehouse; nothing was written "
                                "(use --replace to overwrite them)")
        more = f"\n  ... and {total - len(conflicts)} more" if total > len(conflicts) else ""
        super().__init__(text(headline, ":\n  " + "\n  ".join(conflicts) + more))


class DuplicateCellsError(WarehouseError):
    """Cells staged without a duplicate check (a table read by DuckDB) give a key twice. Found
    on the resolved ids, so without a line: the table ingest reads the file again with its exact
    reader, whose error names the line."""

    def __init__(self, file: str, count: int):
        self.file, self.count = file, count
        super().__init__(f"{file}: {count} cell(s) given more than once (same system, input, measure and "
                         "annotator); nothing was written")


class NewIdsError(WarehouseError):
    """An ingest would add systems or inputs to a dataset that has some, without being told to
    (``--allow-new``): often a typo in an id. ``systems`` and ``inputs`` are the new ids, each
    with where it is first given (``file:line``). ``advice`` says what to do."""

    SHOWN = 5

    def __init__(self, dataset: str, systems: list[tuple[str, str]], inputs: list[tuple[str, str]],
                 advice: str = "pass --allow-new to add them (allow_new=True in Python), or fix the ids"):
        self.dataset, self.systems, self.inputs = dataset, systems, inputs
        parts = [_ids(systems, "system", "systems", self.SHOWN), _ids(inputs, "input", "inputs", self.SHOWN)]
        super().__init__(text(f"{' and '.join(p for p in parts if p)} for dataset {dataset}; nothing was written: ",
                              advice))


def _ids(ids: list[tuple[str, str]], singular: str, plural: str, shown: int) -> str:
    if not ids:
        return ""
    listed = ", ".join(f"{name!r} at {where}" for name, where in ids[:shown])
    more = f", and {len(ids) - shown} more" if len(ids) > shown else ""
    return f"{len(ids)} new {singular if len(ids) == 1 else plural} ({listed}{more})"


class CommitError(WarehouseError):
    """The commit of an ingest failed (``cause``) or was interrupted. ``committed`` says whether
    the ingest is in the warehouse all the same, as checked there afterwards; None when that
    could not be checked (``check_error`` says why). ``ingest_ids`` are the ``ingests`` rows
    the transaction wrote (none when it changed nothing)."""

    def __init__(self, cause: str | None, ingest_ids: list[int], inserted: int, replaced: int,
                 committed: bool | None = None, check_error: str | None = None):
        self.cause, self.ingest_ids, self.inserted, self.replaced = cause, ingest_ids, inserted, replaced
        self.committed, self.check_error = committed, check_error
        super().__init__(self._message())

    def checked(self, committed: bool | None, check_error: str | None = None) -> CommitError:
        """This error, with the outcome of the commit as checked in the warehouse."""
        return CommitError(self.cause, self.ingest_ids, self.inserted, self.replaced, committed, check_error)

    def _message(self) -> str:
        what = "the commit was interrupted" if self.cause is None else f"the commit reported an error ({self.cause})"
        if self.committed is None:
            why = f" ({self.check_error})" if self.check_error else ""
            return (f"{what}; whether it completed could not be checked{why}: run the same command again, "
                    "which adds only what is missing")
        if not self.committed:
            return f"{what} and did not complete (checked in the warehouse): nothing was written"
        if not self.ingest_ids:
            return f"{what}, but this ingest changed nothing: the warehouse is as it was"
        counts = f"{self.inserted} value(s) inserted" + (f", {self.replaced} replaced" if self.replaced else "")
        return (f"{what}, but it completed (checked in the warehouse): this ingest is stored, {counts}; "
                "running the same command again changes nothing")


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised by the CLI's handler: a KeyboardInterrupt, so that it stops a command as
    Ctrl-C does (the run is marked interrupted and keeps the rows written so far)."""


def ingest_hint(fmt: str, dataset: str, *arguments: tuple[str, Any]) -> Hint:
    """What to run to ingest a ``fmt`` file (``table``, ``mqm``, ``preferences``, ``summaries``)
    into ``dataset``: ``metaeval ingest FMT FILE --dataset D ...`` (the Python call:
    ``metaeval.ingest.FMT``)."""
    return Hint(f"load_{fmt}", (("dataset", dataset), *arguments), positional=("FILE",),
                python=f"metaeval.ingest.{fmt}.ingest(wh, {dataset!r}, [FILE], ...)")


def measures_hint(dataset: str) -> Hint:
    """What lists a dataset's measures and their kinds: ``metaeval measures D``."""
    return Hint("measures", positional=(dataset,))


def no_human_judgment(dataset: str, human: str, humans, automatic=()) -> WarehouseError:
    """The refusal of a human judgment ``human`` that ``dataset`` does not have (``humans``: the
    ones it has); when ``human`` is among its ``automatic`` measures (a wide table ingested
    without ``--human``), it names the way out: drop the measure, then ingest it again."""
    message = (f"dataset {dataset!r} has no human judgment {human!r}; its human judgments: "
               f"{', '.join(sorted(humans)) or 'none'}")
    if human not in set(automatic):
        return WarehouseError(message)
    return WarehouseError(text(message, f". {human!r} is stored as an automatic metric (a table ingested without "
                                        "--human?): drop it (`", Hint("drop_measure", positional=(dataset, human)),
                               "`), then ingest the file again with --human; or, to correlate two metrics (with "
                               f"p): `metaeval measure-correlation --dataset {dataset} --measure {human} --measure "
                               "OTHER`"))
