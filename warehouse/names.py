"""The one rule for an id or a name (system, input, annotator, measure, attribute, judge), on
every path that takes one: each ingest format, ``rename``, attributes and preferences.

A name is printable text: it holds no control character (Unicode category Cc: C0 including
tab, DEL, C1 including U+0085) nor a line or paragraph separator (U+2028, U+2029), anywhere,
as they print as nothing or break the line of every listing, table and error message showing
it; and it neither begins nor ends with a space-like separator other than the plain space
(U+00A0, U+3000, ...), which would print as the same name as another. Plain spaces around
an id are what a hand-written file has: ingest strips them (:func:`strip`), ``rename`` refuses
them. Nothing else is stripped: a name that only strips to another is refused, not merged
into it."""

from __future__ import annotations

import unicodedata

#: What :func:`strip` removes from both ends of an id read from a file.
SPACE = " "


def strip(text: str) -> str:
    """``text`` without the plain spaces around it (and nothing else)."""
    return text.strip(SPACE)


def problem(name: str, what: str = "name") -> str | None:
    """Why ``name`` cannot be an id or a name (one clause, naming the character), or None."""
    for position, char in enumerate(name):
        category = unicodedata.category(char)
        if category == "Cc":
            return (f"the {what} {name!r} holds the control character U+{ord(char):04X} (a NUL, tab, line break, "
                    "escape or DEL: a broken file or a copy-paste accident); ids and names are printable text: "
                    "remove it")
        if category in ("Zl", "Zp"):
            return (f"the {what} {name!r} holds the separator U+{ord(char):04X} (a line break); ids and names "
                    "are printable text: remove it")
        if category == "Zs" and char != SPACE and position in (0, len(name) - 1):
            end = "begins" if position == 0 else "ends"
            return (f"the {what} {name!r} {end} with the space U+{ord(char):04X}, which would print as the "
                    "same name as another; remove it")
    return None


def check_option(option: str, name, what: str = "name") -> str:
    """``name`` given as the option ``option`` (a judge's name: ``judge``), checked as the names of
    the files are (:func:`problem`) and refused when empty or with spaces around it (a file's id
    would be stripped; an option is taken as typed, so it is refused, as ``rename`` refuses it):
    a :class:`~metaeval.errors.WarehouseError` naming the option. An empty judge name is not a
    name: it is the key the human votes are stored under."""
    from metaeval.errors import Argument, Message, WarehouseError

    if not isinstance(name, str) or not strip(name):
        raise WarehouseError(Message(Argument(option, name), f": the {what} is empty; give a name"))
    if name != strip(name):
        raise WarehouseError(Message(Argument(option, name), f": the {what} has spaces around it; give "
                                     f"{strip(name)!r}"))
    why = problem(name, what)
    if why:
        raise WarehouseError(Message(Argument(option, name), f": {why}"))
    return name


def check_new(name: str, what: str = "measure name") -> str:
    """A new measure name: non-empty, no spaces around it (ingest strips them), and what
    :func:`problem` refuses in every name ingest reads (a control character, ...)."""
    from metaeval.errors import WarehouseError

    if not isinstance(name, str) or not name.strip():
        raise WarehouseError(f"the new {what} is empty; give a name")
    if name != strip(name):
        raise WarehouseError(f"the new {what} {name!r} has whitespace around it (ingest strips it from names); "
                             f"give {strip(name)!r}")
    why = problem(name, f"new {what}")
    if why:
        raise WarehouseError(why)
    return name
