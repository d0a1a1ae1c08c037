"""The ``metaeval`` command line: the group, its command index, and the output helpers of every
command.

Start-up is kept light so that ``metaeval --help`` is fast: the analyses (numpy/scipy),
figures (matplotlib), the text metrics and the demo data are imported inside the commands
that use them, and option choices defined by analysis modules are :class:`LazyChoice` s,
read only when a command parses its options or shows its own help.

The floors of :mod:`metaeval.cli`, each importing only those before it: :mod:`~metaeval.cli.messages`
(errors as command lines), :mod:`~metaeval.cli.context` (the command's warehouse),
:mod:`~metaeval.cli.options` (shared click types and options), :mod:`~metaeval.cli.db_option`,
:mod:`~metaeval.cli.families` (the families' options and generated commands), then this module,
which the command modules import; it names the shared helpers again so that a command imports
them from here.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from metaeval import connection, signals
from metaeval.cli.context import Context, _command_line, _environment_executor  # noqa: F401  (the commands')
from metaeval.cli.db_option import attach, wide_option
from metaeval.cli.messages import (COMMANDS, FLAGS, argument_text, command_line, command_of, error_text,  # noqa: F401
                                   flag, interrupted)
from metaeval.cli.options import (ALPHA, EXPORT_SUFFIXES, FORMATS, OVERWRITE, RESAMPLES, SEED,  # noqa: F401
                                  CoefficientChoice, FiniteFloatRange, LazyChoice, Resamples, _parse_where,
                                  _require_directory, _set_scheduler, fmt_option, is_text, layout_option,
                                  out_file, plain, scheduler_option)
from metaeval.errors import WarehouseError

if TYPE_CHECKING:  # annotations only: importing them at start-up would slow `--help`
    import pandas as pd

    from metaeval.rows import Rows


def width() -> int | None:
    """The most characters of a line of text output: :data:`metaeval.present.plain.WIDTH`, or
    None (no limit) under ``--full-width`` (:func:`metaeval.present.plain.display_width`)."""
    from metaeval.present.plain import resolve_width

    return resolve_width()


def say(text: str = "", *, err: bool = False) -> None:
    """Print prose (a note, a caption, a hint) wrapped to :func:`width` columns: a line of text as
    words; a command line in it (after ``: ``) on lines of its own, continued with `` \\``, so that it
    still runs when copy-pasted."""
    from metaeval.present.plain import wrap

    click.echo(wrap(text, width()), err=err)


def say_caption(caption: str, notes: str = "", *, err: bool = False) -> None:
    """Print a table's caption in text: its title and notes in at most three lines of
    :func:`width` (:func:`metaeval.present.tables.caption_text`), all of it under ``--full-width``."""
    from metaeval.present.tables import caption_text

    click.echo(caption_text(caption, notes, width()), err=err)


def show(frame: pd.DataFrame | Rows, fmt: str, *, caption: str | None = None) -> None:
    """Print a DataFrame in ``fmt`` (:data:`FORMATS`): an aligned table, JSON (one object per
    row, typed, ``conventions`` nested), CSV, markdown or a LaTeX booktabs tabular. Or
    :class:`~metaeval.rows.Rows` (a light command's, fetched as such when :func:`plain` says
    so): printed the same without pandas (:mod:`metaeval.present.plain`)."""
    from metaeval.rows import Rows

    if isinstance(frame, Rows) and frame.plain and caption is None:
        from metaeval.present import plain as plain_tables

        click.echo(plain_tables.render(frame, fmt, width=width()), nl=False)
        return
    from metaeval.present import tables

    frame = frame.frame if isinstance(frame, Rows) else frame
    if fmt == "latex" and caption is None:          # every float captioned and labelled: the command's words
        ctx = click.get_current_context(silent=True)
        words = [ctx.command_path if ctx else "metaeval"] + [str(v) for k, v in (ctx.params if ctx else {}).items()
                                                             if k in ("table", "dataset") and isinstance(v, str)]
        caption = f"The rows of {' '.join(words)}."
    click.echo(tables.render(frame, fmt, caption=caption, width=width()), nl=False)


def show_blocks(blocks, fmt: str) -> None:
    """Print several named tables [(name, DataFrame)] in ``fmt`` (see present.tables.render_blocks)."""
    from metaeval.present import tables

    click.echo(tables.render_blocks(blocks, fmt, width=width()), nl=False)


class RepeatedOption(click.ClickException):
    """A single-value option given more than once: a usage error of one line."""

    exit_code = 2


class OnceOnly:
    """A click command (or group) that refuses a single-value option given more than once
    (``--by split --by source``), which click would answer with the last value: one line naming
    the option, before anything runs. Options declared ``multiple``, counts, switches and
    ``--db`` (given twice, it must name the same file: :mod:`metaeval.cli.db_option`) are
    left to click. Every command of ``metaeval`` is one (:func:`once_only`)."""

    def parse_args(self, ctx, args):
        from metaeval.cli.renamed import respell

        args = respell(self, ctx, list(args))      # an option's old spelling: its new one, said
        if not ctx.resilient_parsing:
            try:
                _, _, order = self.make_parser(ctx).parse_args(args=list(args))
            except click.ClickException:
                order = []  # click's own parsing below says what is wrong
            seen = set()
            for param in order:
                single = (isinstance(param, click.Option) and not param.multiple and not param.count
                          and not param.is_flag and param.name != "db")
                if single and param.name in seen:
                    raise RepeatedOption(f"{max(param.opts, key=len)} is given more than once; it takes one "
                                         "value: give it once")
                seen.add(param.name)
        from metaeval.cli.dataset_option import as_positional, given_twice

        args = as_positional(self, ctx, args)       # `--dataset X` of a positional DATASET
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            raise given_twice(ctx, exc) or exc from None


class WholeSummaries:
    """A click group whose ``--help`` lists its commands with their whole summaries
    (:func:`metaeval.cli.sections.summary`: the short help, else the first sentence of the
    help), wrapped, never cut as click cuts them at 45 characters."""

    def format_commands(self, ctx, formatter) -> None:
        from metaeval.cli import sections

        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append(([0, "Commands"], name, sections.summary(command)))
        sections.write(formatter, rows)


_ONCE_CLASSES: dict[type, type] = {}


def once_only(command: click.Command) -> click.Command:
    """``command`` (and every command below a group) as a :class:`OnceOnly` of its own click
    class; idempotent."""
    cls = type(command)
    if not issubclass(cls, OnceOnly):
        bases = (OnceOnly, WholeSummaries, cls) if issubclass(cls, click.Group) else (OnceOnly, cls)
        command.__class__ = _ONCE_CLASSES.setdefault(cls, type(cls.__name__, bases, {}))
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            once_only(sub)
    return command


class Group(OnceOnly, WholeSummaries, click.Group):
    """Turns WarehouseError into a clean one-line error and a non-zero exit, and Ctrl-C or
    SIGTERM not handled by the command (or the error of a query it cut short) into the one-line
    error of :func:`interrupted`. Its commands accept ``--db`` after their name too
    (:mod:`metaeval.cli.db_option`), and refuse a single-value option given twice
    (:class:`OnceOnly`)."""

    def get_command(self, ctx, cmd_name):
        from metaeval.cli.db_option import attach

        command = super().get_command(ctx, cmd_name)
        return None if command is None else once_only(attach(command))

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BaseException as exc:
            if (stop := signals.interruption(exc)) is not None:
                raise interrupted(stop) from None
            if isinstance(exc, WarehouseError):   # named as the command that refused spells its options
                words = " ".join([*ctx.command_path.split()[1:], ctx.invoked_subcommand or ""]).strip()
                raise click.ClickException(error_text(exc, command_of(words))) from None
            raise


# --- commands defined in their own modules (they import the helpers above) ----------------
#: The package folders whose Python files define the commands: the command modules, the
#: helpers here, and ``runs/`` (the families, whose commands are generated).
INDEX_SOURCES = ("metaeval.cli", "metaeval.cli.commands", "metaeval.runs")
#: A command made by :func:`metaeval.cli.families.command_of` for a family (no module of its own).
FAMILY = "family"


def _command_modules() -> list[str]:
    """The modules of :mod:`metaeval.cli.commands`, in name order: every one of them is read."""
    import pkgutil

    from metaeval.cli import commands as package

    return [f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)]


def index_key() -> str:
    """What the command index is made from: this Python, and the path, size and modification time
    of every Python file of :data:`INDEX_SOURCES` (as Python checks its ``.pyc``), so that an
    index is used only for the very files it was made from; a new command module changes it."""
    parts = [sys.version]
    for name in INDEX_SOURCES:
        folder = Path(__file__).parent if name == "metaeval.cli" else None
        if folder is None:
            folder = Path(importlib.util.find_spec(name).submodule_search_locations[0])
        with os.scandir(folder) as entries:
            for entry in sorted((e for e in entries if e.name.endswith(".py")), key=lambda e: e.name):
                st = entry.stat()
                parts.append(f"{entry.path}\x1f{st.st_size}\x1f{st.st_mtime_ns}")
    return "\x1e".join(parts)


def _index_file(key: str) -> Path | None:
    """Where the index of this install is kept: the cache directory of the schema templates
    (:func:`metaeval.connection.cache_directory`), one file per install and Python (the CRC-32 of
    this folder's path and the Python version), replaced when the sources change; ``key`` itself
    is stored in it and compared on reading."""
    import zlib

    cache = connection.cache_directory()
    install = f"{Path(__file__).resolve().parent}\x1f{sys.version}"
    return None if cache is None else cache / f"commands-{zlib.crc32(install.encode()):08x}.marshal"


def _read_index(key: str) -> dict | None:
    import marshal

    path = _index_file(key)
    try:
        stored = marshal.loads(path.read_bytes()) if path is not None else None
    except (OSError, EOFError, ValueError, TypeError):
        return None
    return stored["commands"] if isinstance(stored, dict) and stored.get("key") == key else None


def _write_index(key: str, index: dict) -> None:
    """Keep ``index`` for the next commands; nothing when the cache directory cannot be written."""
    import marshal

    path = _index_file(key)
    if path is None:
        return
    part = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part.write_bytes(marshal.dumps({"key": key, "commands": index}))
        os.replace(part, path)              # whole or not at all, with other commands writing it too
    except OSError:
        try:
            part.unlink(missing_ok=True)
        except OSError:
            pass


class Commands(MutableMapping):
    """The commands of ``metaeval`` (``main.commands``), each command module imported when one of
    its commands is first asked for. Which module(s) define each command, and its one-line
    summary for the ``--help`` listing, come from an index made from the commands themselves
    (:func:`command_index`: every module imported) and kept in the cache directory under
    :func:`index_key`, made again whenever a source file changes. A name the index does not know,
    or a walk over every command, imports every module, as before; so what is found never
    depends on the index, only how much is imported to find it.

    A new command module in ``cli/commands/`` (its commands in ``COMMANDS``) is found as before:
    by :func:`_command_modules`; nothing to register."""

    def __init__(self):
        self.loaded: dict[str, click.Command] = {}
        self.modules: set[str] = set()
        self.complete = False
        self._index: dict | None = None

    def index(self) -> dict:
        """Command name -> what :func:`command_index` says of it (kept, or made now)."""
        if self._index is None:
            key = index_key()
            self._index = _read_index(key)
            if self._index is None:
                self._index = self.made_index()
                _write_index(key, self._index)
        return self._index

    def _add(self, command: click.Command) -> None:
        self.loaded[command.name] = once_only(attach(command))   # --db after its name too; no option twice

    def _import(self, module: str) -> None:
        if module not in self.modules:
            self.modules.add(module)
            for command in getattr(importlib.import_module(module), "COMMANDS", ()):
                self._add(command)

    def _load(self, name: str) -> None:
        entry = self.index().get(name)
        for module in entry["modules"] if entry is not None else ():
            if module == FAMILY:
                from metaeval.cli.families import command_of
                from metaeval.runs.engine.families import FAMILIES

                self._add(command_of(FAMILIES[name]))
            else:
                self._import(module)

    def _load_all(self) -> None:
        """Every command module, then a generated command for each registered analysis family
        without a hand-written one; in that order (modules by name)."""
        if self.complete:
            return
        self.complete = True
        for module in _command_modules():
            self._import(module)
        written = [command.name for module in _command_modules()
                   for command in getattr(importlib.import_module(module), "COMMANDS", ())]
        ordered = {name: self.loaded[name] for name in written}
        from metaeval.cli.families import generated_commands

        handwritten = set(ordered) | {f"{name}-{sub}" for name, command in ordered.items()
                                      if isinstance(command, click.Group) for sub in command.commands}
        for command in generated_commands(handwritten):
            ordered[command.name] = self.loaded.get(command.name) or once_only(attach(command))
        ordered.update((n, c) for n, c in self.loaded.items() if n not in ordered)   # added by add_command
        self.loaded = ordered

    def made_index(self) -> dict:
        """The index of every command (all imported now): name -> the modules defining it and its
        subcommands (in name order; [:data:`FAMILY`] for a generated one), the first paragraph of
        its help, its short help, hidden, deprecated (what click's listing reads)."""
        self._load_all()
        modules = _command_modules()

        def defined_in(command) -> set[str]:
            found = {getattr(command.callback, "__module__", None)}
            for sub in getattr(command, "commands", {}).values():
                found |= defined_in(sub)
            return found

        from metaeval.cli import sections
        from metaeval.runs.engine.families import FAMILIES, TOPICS

        def family(name):
            return FAMILIES[name] if name in FAMILIES else None

        return {name: {"modules": [m for m in modules if m in defined_in(command)] or [FAMILY],
                       "help": (command.help or "").split("\n\n")[0] or None, "short_help": command.short_help,
                       "hidden": command.hidden, "deprecated": command.deprecated,
                       "summary": sections.summary(command, family(name)),
                       "section": sections.section_of(command, getattr(family(name), "topic", None), TOPICS)}
                for name, command in self.loaded.items()}

    def names(self) -> list[str]:
        """Every command's name (from the index: nothing imported)."""
        index = self.index()
        return list(index) + [n for n in self.loaded if n not in index]

    def __getitem__(self, name: str) -> click.Command:
        if name not in self.loaded:
            self._load(name)
        if name not in self.loaded:
            self._load_all()
        return self.loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self.loaded[name] = command

    def __delitem__(self, name: str) -> None:
        self._load_all()
        del self.loaded[name]

    def __iter__(self):
        self._load_all()
        return iter(list(self.loaded))

    def __len__(self) -> int:
        self._load_all()
        return len(self.loaded)


class Main(Group):
    """The ``metaeval`` group: its commands are :class:`Commands`, imported on first use; its
    ``--help`` lists them from the index's summaries without importing them."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.commands = Commands()
        self.invoked: str | None = None       # the command the line named, once resolved

    def resolve_command(self, ctx, args):
        name, command, rest = super().resolve_command(ctx, args)
        self.invoked = name
        return name, command, rest

    def main(self, args=None, *more, **options):
        """As click's; as the process's entry point (no ``args``: the console script), a light
        command's or the group's own ``--help`` ends the process at once (:mod:`~metaeval.cli.ending`)."""
        if args is not None or more or not options.get("standalone_mode", True):
            return super().main(args, *more, **options)
        from metaeval.cli import ending

        self.invoked = None
        try:
            return super().main(None, **options)
        except SystemExit as exc:
            if self.invoked is None or self.invoked in ending.LIGHT:
                ending.end_now(exc.code)
            raise

    def list_commands(self, ctx) -> list[str]:
        return sorted(self.commands.names())

    def format_commands(self, ctx, formatter) -> None:
        """The commands in sections by what they answer, each with its whole summary
        (:mod:`metaeval.cli.sections`), read from the index: no command module is imported."""
        from metaeval.cli import sections

        index = self.commands.index()
        rows = []
        for name in self.list_commands(ctx):
            entry = index.get(name)
            if entry is None:                       # added by add_command: the command itself
                command = self.commands.loaded.get(name)
                if command is None or command.hidden:
                    continue
                rows.append((sections.section_of(command, None, {}), name, sections.summary(command)))
            elif not entry["hidden"]:
                text = entry["summary"] + (" (Deprecated)" if entry["deprecated"] else "")
                rows.append((entry["section"], name, text))
        sections.write(formatter, rows)


@click.group(cls=Main, context_settings={"max_content_width": 100})
@click.option("--db", type=click.Path(dir_okay=False), default=None,
              help=f"Warehouse file. Default: ${connection.ENV_VAR}, else ./{connection.DEFAULT_PATH}.")
@wide_option
@click.version_option(package_name="metaeval-warehouse")
@click.pass_context
def main(ctx, db):
    """A DuckDB warehouse for the meta-evaluation of text-generation metrics."""
    wide = isinstance(ctx.obj, Context) and ctx.obj.wide     # --full-width, read first (eager)
    ctx.obj = Context(db)
    ctx.obj.wide = wide
    # until the command ends, SIGTERM (`kill`, a scheduler, a container stopping) stops it as
    # Ctrl-C does: a run is marked interrupted and keeps its rows; one line (`interrupted`)
    ctx.call_on_close(signals.install())


def echo_reports(reports, err: bool = False) -> None:
    """One report per file an ingest read, wrapped to :func:`width` columns: when the line is
    wider, the file's name on a line of its own and what was read under it, indented; a count
    stays with its word (a script greps ``inserted N``), a name is never cut."""
    for r in reports:
        if r.changed:
            extra = f", replaced {r.replaced}" if r.replaced else ""
            said = f"read {r.contents}, inserted {r.inserted}{extra}"
        else:
            said = f"read {r.contents}, all already in the warehouse; nothing changed"
        click.echo(report_lines(f"{r.file}:", said, width()), err=err)


def report_lines(head: str, said: str, columns: int | None) -> str:
    """``head said`` on one line when it fits in ``columns`` (None: always), else ``head`` alone
    and ``said`` wrapped under it, indented by two spaces, a number kept with the word before it."""
    import re
    import textwrap

    line = f"{head} {said}"
    if columns is None or len(line) <= columns:
        return line
    glued = re.sub(r"(\w) (\d)", "\\1\u00a0\\2", said)
    lines = textwrap.wrap(glued, columns, initial_indent="  ", subsequent_indent="  ", break_long_words=False,
                          break_on_hyphens=False)
    return "\n".join([head, *lines]).replace("\u00a0", " ")


# --- shared by the commands --------------------------------------------------------------
def report_run(table: str, summary, fmt: str = "text") -> None:
    """What a run of ``table`` did (a ``runner.RunSummary``); on stderr unless ``fmt`` is text
    (stdout then holds only the rows)."""
    from metaeval.runs.engine.family_present import run_line

    say(run_line(table, summary), err=not is_text(fmt))


def report_outcome(out, fmt: str = "text") -> None:
    """The metrics an analysis left out (stderr), then :func:`report_run` of its Outcome."""
    for reason in out.skipped.values():
        say(f"skipped: {reason}", err=True)
    report_run(out.analysis.table, out.summary, fmt)


def __getattr__(name: str):
    """``RESULT_TABLES`` (the results tables `results` and `export` offer: ``schema.result_tables``),
    read from the schema at its first use, not by every command that imports this module."""
    if name == "RESULT_TABLES":
        from metaeval import schema

        return schema.result_tables()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


