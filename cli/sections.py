"""The sections of ``metaeval --help``: the commands grouped by what they answer.

A family declares its section as :attr:`metaeval.runs.engine.families.Family.topic`; a command that is
not a family declares it where it is defined, with :func:`topic`::

    @topic("storage")
    @click.command()
    def datasets(...): ...

The keys and titles are :data:`metaeval.runs.engine.families.TOPICS`, in the listing's order; the
"start here" section lists its commands in :data:`START`'s order (demo, then evaluate, then
report), every other section by name. A command's line in the listing is its whole summary
(:func:`summary`), never cut, at most :data:`SUMMARY_WIDTH` characters so that it takes one
line of a 100-column terminal. :class:`metaeval.cli.app.Main` reads the section and
the summary of each command from its command index, so that ``--help`` imports no command.

This module imports click only (the listing is printed at every ``metaeval --help``).
"""

from __future__ import annotations

import re
import textwrap

import click

#: The first commands a newcomer runs, in order: the "start" section lists them so.
START = ("demo", "evaluate", "report")
#: The most characters of a command's summary in the listing (a test checks every command's).
SUMMARY_WIDTH = 75
#: The section of a command that declares none (a test keeps it empty).
OTHER = ("other", "Other commands")

_SENTENCE_END = re.compile(r"(?<=[.?!])\s+(?=[A-Z`(])")


def topic(key: str):
    """Decorator: ``key`` (of :data:`metaeval.runs.engine.families.TOPICS`) is the section of this
    command in ``metaeval --help``; put it above the ``@click.command`` (or group) decorator."""
    def mark(command: click.Command) -> click.Command:
        command.topic = key
        return command
    return mark


def first_sentence(text: str) -> str:
    """The first sentence of the first paragraph of ``text``, on one line."""
    paragraph = " ".join(text.strip().split("\n\n")[0].split())
    return _SENTENCE_END.split(paragraph, maxsplit=1)[0]


def summary(command: click.Command, family=None) -> str:
    """What the listing says of ``command`` (of ``family``, a
    :class:`~metaeval.runs.engine.families.Family`, or None), whole: the family's ``headline``, else the
    command's ``short_help``, else the family's summary, else the first sentence of its help."""
    text = (getattr(family, "headline", "") or command.short_help or getattr(family, "summary", "")
            or first_sentence(command.help or ""))
    return " ".join(text.split())


def section_of(command: click.Command, family_topic: str | None, topics: dict[str, str]) -> list:
    """[position, title] of ``command``'s section: its own ``topic`` (:func:`topic`), else its
    family's, else the first of its subcommands' (a group), else :data:`OTHER`'s."""
    key = getattr(command, "topic", None) or family_topic
    if key is None:
        for sub in getattr(command, "commands", {}).values():
            key = getattr(sub, "topic", None)
            if key:
                break
    if key not in topics:
        return [len(topics), OTHER[1]]
    return [list(topics).index(key), topics[key]]


def order(name: str) -> tuple:
    """Where ``name`` stands in its section: :data:`START`'s order first, then by name."""
    return (START.index(name) if name in START else len(START), name)


def write(formatter: click.HelpFormatter, rows: list[tuple[list, str, str]]) -> None:
    """The listing: ``rows`` of ([position, title], name, summary), one section per title in
    position order, each command on a line of its own with its summary wrapped beside it, the
    summaries of every section aligned on one column."""
    if not rows:
        return
    width = min(max(len(name) for _, name, _ in rows), 30) + 2
    text_width = max(formatter.width - formatter.current_indent - width - 2, 20)
    for position, title in sorted({tuple(section) for section, _, _ in rows}):
        with formatter.section(title):
            for _, name, text in sorted(((s, n, t) for s, n, t in rows if s[0] == position), key=lambda r: order(r[1])):
                lines = textwrap.wrap(text, text_width, break_long_words=False, break_on_hyphens=False) or [""]
                pad = " " * formatter.current_indent
                if len(name) > width - 2:                 # a very long name: its summary below it
                    formatter.write(f"{pad}{name}\n")
                    lines = [f"{' ' * width}{line}" for line in lines]
                    formatter.write("".join(f"{pad}{line}\n" for line in lines))
                    continue
                formatter.write(f"{pad}{name:<{width}}{lines[0]}\n")
                formatter.write("".join(f"{pad}{' ' * width}{line}\n" for line in lines[1:]))
