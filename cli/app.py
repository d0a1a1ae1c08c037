"""The ``metaeval`` command line.

Start-up is kept light so that ``metaeval --help`` is fast: the analyses (numpy/scipy),
figures (matplotlib), the text metrics and the demo data are imported inside the commands
that use them, and option choices defined by analysis modules are :class:`LazyChoice` s,
read only when a command parses its options or shows its own help.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import math
import os
import shlex
import signal
import sys
from collections.abc import MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from metaeval import connection, signals
from metaeval.cli.db_option import attach, wide_option
from metaeval.errors import NO_VALUE, Argument, Hint, Terminated, WarehouseError

if TYPE_CHECKING:  # annotations only: importing them at start-up would slow `--help`
    import pandas as pd

    from metaeval.core import Store
    from metaeval.rows import Rows

#: ``--format`` of the commands that print rows (analyses.tables); ``table`` is the old name of ``text``.
FORMATS = ("text", "json", "csv", "markdown", "latex", "table")
#: ``metaeval export``: file suffix -> format (json is JSON lines, one record a line).
EXPORT_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".json": "json", ".jsonl": "json"}
#: ``--overwrite`` of the commands that write a file or directory (:mod:`metaeval.files`).
OVERWRITE = click.option("--overwrite", is_flag=True,
                         help="Replace the --out file (or report directory) if it exists. Never the warehouse.")
#: Any seed numpy's SeedSequence accepts that the warehouse's BIGINT seed columns can store.
SEED = click.IntRange(0, 2**63 - 1)


class LazyChoice(click.Choice):
    """A :class:`click.Choice` whose choices are a constant of another module, given as
    ``"module:NAME"`` (e.g. ``"metaeval.analyses.stats.vocabulary:LEVELS"``) and imported on first use, so that
    defining the option does not import the module (and scipy with it)."""

    def __init__(self, source: str, case_sensitive: bool = True):
        self.source = source
        self._choices: tuple | None = None
        self.case_sensitive = case_sensitive

    @property
    def choices(self) -> tuple:
        if self._choices is None:
            module, name = self.source.split(":")
            self._choices = tuple(getattr(importlib.import_module(module), name))
        return self._choices

    @choices.setter
    def choices(self, value) -> None:
        self._choices = tuple(value)


class FiniteFloatRange(click.FloatRange):
    """A :class:`click.FloatRange` of finite numbers: click lets ``nan`` through every range (it
    compares false with both bounds) and reads an overflowing literal (``1e400``) as ``inf``."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            bounded = self.min is not None or self.max is not None
            self.fail(f"{value!r} is not a finite number; give a "
                      + (f"number in the range {self._describe_range()}" if bounded else "finite number"), param, ctx)
        return number

    def _describe_range(self) -> str:
        """Without bounds, what click would print as ``x<=None``: any finite number."""
        if self.min is None and self.max is None:
            return "any finite number"
        return super()._describe_range()


#: ``--alpha`` of every command that takes one: a finite number with 0 < alpha < 1.
ALPHA = FiniteFloatRange(0, 1, min_open=True, max_open=True)


class Resamples(click.IntRange):
    """A number of resamples (``--k``): an integer from 1 to ``K_MAX`` of
    ``metaeval.analyses.stats.validation`` (the analyses' own bound, read on first use as
    :class:`LazyChoice` reads its choices), so that a huge k is refused before anything is
    allocated."""

    def __init__(self):
        super().__init__(1)

    @property
    def max(self) -> int:
        from metaeval.analyses.stats.validation import K_MAX

        return K_MAX

    @max.setter
    def max(self, value) -> None:  # click.IntRange.__init__ sets it; the bound is K_MAX
        pass


#: ``--k`` (and ``--k-block``) of every command that resamples.
RESAMPLES = Resamples()


class CoefficientChoice(LazyChoice):
    """A coefficient: one of ``metaeval.analyses.stats.vocabulary:CORRELATION_COEFFICIENTS``, or one of them
    with a tie threshold, ``acc-23[eps=0.01]`` / ``acc-23[tie-calibrated]`` (canonical label)."""

    def __init__(self):
        super().__init__("metaeval.analyses.stats.vocabulary:CORRELATION_COEFFICIENTS")

    def convert(self, value, param, ctx):
        if isinstance(value, str) and "[" in value:
            from metaeval.errors import WarehouseError
            from metaeval.runs import selection

            try:
                return selection.coefficient_choices([value])[0]
            except WarehouseError as exc:
                self.fail(error_text(exc), param, ctx)
        return super().convert(value, param, ctx)


def out_file(*suffixes: str):
    """A click callback for an ``--out`` file: its directory must exist and, if ``suffixes``
    are given, its suffix must be one of them (case-insensitive)."""
    def check(ctx, param, value: Path | None) -> Path | None:
        if value is None:
            return value
        if suffixes and value.suffix.lower() not in suffixes:
            raise click.BadParameter(f"{str(value)!r}: unsupported file type "
                                     f"{value.suffix or '(no suffix)'!r}; use {', '.join(suffixes)}", ctx, param)
        _require_directory(value, ctx, param)
        return value
    return check


def _require_directory(path: Path, ctx=None, param=None) -> None:
    parent = path.parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        raise click.BadParameter(f"{str(path)!r}: directory {str(parent)!r} {what}", ctx, param)


class Context:
    def __init__(self, db: str | None):
        self.db = db                                  # --db as given (None: $METAEVAL_DB or the default)
        self.path = connection.resolve_path(db)
        #: what computes the tasks (a metaeval.runs.executors.Executor), from --scheduler or
        #: $METAEVAL_SCHEDULER (:data:`scheduler_option`); None: $METAEVAL_SCHEDULER, else local
        self.executor = None
        #: --wide: text output as wide as it is (:func:`width`)
        self.wide = False

    def command(self, *args) -> str:
        """A ``metaeval`` command line for a hint: with this --db when one was given, quoted for
        a POSIX shell, so that it works when copy-pasted."""
        return shlex.join(["metaeval", *(["--db", str(self.db)] if self.db else []), *map(str, args)])

    def hint(self, hint: Hint) -> str:
        """What to run (a :class:`~metaeval.errors.Hint` of ``runs/``) as a command line on this
        warehouse: with this --db when one was given and the hint names none."""
        return command_line(dataclasses.replace(hint, db=str(self.db)) if self.db and hint.db is None else hint)

    def heatmap_command(self, dataset: str, human: str, level: str, coefficient: str, method: str,
                        alternative: str, correction: str, correction_group: str, alpha: float,
                        out: str = "tests.png") -> str:
        """The ``plot heatmap`` command drawing the tests of one ``compare`` setting."""
        return self.command("plot", "heatmap", "--dataset", dataset, "--human", human, "--level", level,
                            "--coefficient", coefficient, "--method", method, "--alternative", alternative,
                            "--correction", correction, "--correction-group", correction_group,
                            "--alpha", alpha, "--out", out)

    def open(self, *, read_only: bool = False, create: bool = False) -> Store:
        from metaeval.core import Store

        wh = Store.create(self.path) if create else Store(self.path, read_only=read_only)
        wh.command_line = _command_line()  # recorded with the runs it starts: runs/ never reads sys.argv
        wh.executor = self.executor if self.executor is not None else _environment_executor()
        return wh


def width() -> int | None:
    """The most characters of a line of text output: :data:`metaeval.analyses.plain.WIDTH`, or
    None (no limit) under ``--wide`` (:func:`metaeval.analyses.plain.display_width`)."""
    from metaeval.analyses.plain import resolve_width

    return resolve_width()


def say(text: str = "", *, err: bool = False) -> None:
    """Print prose (a note, a caption, a hint) wrapped to :func:`width` columns: a line of text as
    words; a command line in it (after ``: ``) on lines of its own, continued with `` \\``, so that it
    still runs when copy-pasted."""
    from metaeval.analyses.plain import wrap

    click.echo(wrap(text, width()), err=err)


def say_caption(caption: str, notes: str = "", *, err: bool = False) -> None:
    """Print a table's caption in text: its title and notes in at most three lines of
    :func:`width` (:func:`metaeval.analyses.tables.caption_text`), all of it under ``--wide``."""
    from metaeval.analyses.tables import caption_text

    click.echo(caption_text(caption, notes, width()), err=err)


def show(frame: pd.DataFrame | Rows, fmt: str, *, caption: str | None = None) -> None:
    """Print a DataFrame in ``fmt`` (:data:`FORMATS`): an aligned table, JSON (one object per
    row, typed, ``conventions`` nested), CSV, markdown or a LaTeX booktabs tabular. Or
    :class:`~metaeval.rows.Rows` (a light command's, fetched as such when :func:`plain` says
    so): printed the same without pandas (:mod:`metaeval.analyses.plain`)."""
    from metaeval.rows import Rows

    if isinstance(frame, Rows) and frame.plain and caption is None:
        from metaeval.analyses import plain as plain_tables

        click.echo(plain_tables.render(frame, fmt, width=width()), nl=False)
        return
    from metaeval.analyses import tables

    frame = frame.frame if isinstance(frame, Rows) else frame
    if fmt == "latex" and caption is None:          # every float captioned and labelled: the command's words
        ctx = click.get_current_context(silent=True)
        words = [ctx.command_path if ctx else "metaeval"] + [str(v) for k, v in (ctx.params if ctx else {}).items()
                                                             if k in ("table", "dataset") and isinstance(v, str)]
        caption = f"The rows of {' '.join(words)}."
    click.echo(tables.render(frame, fmt, caption=caption, width=width()), nl=False)


def plain(fmt: str) -> bool:
    """Whether a light command fetches :class:`~metaeval.rows.Rows` for ``fmt`` (text, json, csv:
    printed without importing pandas) rather than a DataFrame (markdown, latex)."""
    from metaeval.analyses.plain import FORMATS as PLAIN_FORMATS

    return ("text" if fmt == "table" else fmt) in PLAIN_FORMATS


def show_blocks(blocks, fmt: str) -> None:
    """Print several named tables [(name, DataFrame)] in ``fmt`` (see analyses.tables.render_blocks)."""
    from metaeval.analyses import tables

    click.echo(tables.render_blocks(blocks, fmt, width=width()), nl=False)


def fmt_option(default: str = "text", help: str | None = None):
    """``--format`` (:data:`FORMATS`)."""
    return click.option("--format", "fmt", type=click.Choice(FORMATS), default=default, show_default=True,
                        help=help or "Output: text (aligned), json (one object per row), csv, markdown, "
                                     "latex (booktabs). table = text.")


def layout_option(f):
    """``--layout`` of a paper table (``--format latex``): auto fits an ACL two-column page
    (see :func:`metaeval.analyses.tables.choose_layout`)."""
    return click.option("--layout", type=click.Choice(("auto", "wide", "compact", "long")), default="auto",
                        show_default=True,
                        help="LaTeX layout: wide (per setting its cluster, correlation and CI), compact (the "
                             "correlations only), long (one row per metric and setting); auto: the first that "
                             "fits an ACL column, else the page (table*).")(f)


def is_text(fmt: str) -> bool:
    """Whether ``fmt`` is the aligned text (progress lines then go to stdout; else to stderr,
    so that stdout holds only the JSON/CSV/... document)."""
    return fmt in ("text", "table")


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


_ONCE_CLASSES: dict[type, type] = {}


def once_only(command: click.Command) -> click.Command:
    """``command`` (and every command below a group) as a :class:`OnceOnly` of its own click
    class; idempotent."""
    cls = type(command)
    if not issubclass(cls, OnceOnly):
        command.__class__ = _ONCE_CLASSES.setdefault(cls, type(cls.__name__, (OnceOnly, cls), {}))
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            once_only(sub)
    return command


class Group(OnceOnly, click.Group):
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
            if isinstance(exc, WarehouseError):
                raise click.ClickException(error_text(exc)) from None
            raise


#: The flag of a parameter whose name is not its flag's (a list parameter: its repeated flag).
#: Every other parameter ``name`` is the flag ``--name`` with ``_`` as ``-`` (:func:`flag`).
FLAGS = {"metrics": "--metric", "levels": "--level", "coefficients": "--coefficient", "humans": "--human",
         "datasets": "--dataset", "methods": "--method", "tasks": "--task", "measures": "--measure",
         "directory": "--dir", "calibrate": "--tie-calibration", "n_systems": "--systems", "n_inputs": "--inputs",
         "sera": "--index", "judges": "--judge", "categories": "--category", "ablations": "--ablation",
         "system_types": "--system-type", "formula": "--as", "sources": "--from", "fmt": "--format",
         "predictors": "--predictor", "correlation_level": "--level"}
#: The command of a ``Warehouse`` method (a :class:`~metaeval.errors.Hint`'s ``command``) whose
#: name is not the command's; every other method is the command of its name.
COMMANDS = {"simulate_coverage": "simulate coverage", "simulate_power": "simulate power",
            "rank_tasks": "rank-tasks", "load_summaries": "ingest summaries", "build_index": "index build",
            "create": "init", "heatmap": "plot heatmap", "drop_measure": "drop measure",
            "load_table": "ingest table", "load_mqm": "ingest mqm", "load_preferences": "ingest preferences",
            "measure_correlation": "measure-correlation"}


def flag(name: str) -> str:
    """The command-line flag of the Python parameter ``name`` (``k`` -> ``--k``,
    ``system_inputs`` -> ``--system-inputs``, ``metrics`` -> ``--metric``)."""
    return FLAGS.get(name, "--" + name.replace("_", "-"))


def argument_text(argument: Argument) -> str:
    """A parameter named in an error (:class:`metaeval.errors.Argument`) as its flag: ``--k 5``,
    ``--metric 'rouge-*'``, ``--system-inputs``, ``--overwrite`` (True: a switch)."""
    name = flag(argument.name)
    if argument.placeholder is not None:
        return f"{name} {argument.placeholder}"
    if argument.value is NO_VALUE or argument.value is True:
        return name
    values = argument.value if isinstance(argument.value, (list, tuple)) else [argument.value]
    return " ".join(f"{name} {v!r}" for v in values)


def command_line(hint: Hint) -> str:
    """A :class:`metaeval.errors.Hint` as a ``metaeval`` command line, quoted for a POSIX shell:
    the command of its method (:data:`COMMANDS`), each parameter its flag (:func:`flag`), a
    list's values each after the flag, a True flag alone (``--overwrite``)."""
    args = ["metaeval", *(["--db", hint.db] if hint.db else []), *COMMANDS.get(hint.command, hint.command).split(),
            *map(str, hint.positional)]
    for name, value in hint.arguments:
        if value is True:
            args.append(flag(name))
            continue
        for v in (value if isinstance(value, (list, tuple)) else [value]):
            args += [flag(name), str(v)]
    return shlex.join(args)


def error_text(exc: WarehouseError) -> str:
    """The message the command line prints for ``exc``: its parameters as flags, its hint as a
    command line."""
    message = exc.render(argument_text, command_line)
    return message if exc.hint is None else f"{message}\n  {command_line(exc.hint)}"


def interrupted(exc: KeyboardInterrupt, saved: str | None = None) -> click.ClickException:
    """The one-line error of a command stopped by Ctrl-C or SIGTERM (``saved``: what is kept).
    It exits as a shell reports a process killed by that signal: 128 + 2 = 130 for Ctrl-C
    (SIGINT), 128 + 15 = 143 for SIGTERM."""
    term = isinstance(exc, Terminated)
    what = "terminated (SIGTERM)" if term else "interrupted"
    error = click.ClickException(f"{what}: {saved}" if saved else what)
    error.exit_code = 128 + (signal.SIGTERM if term else signal.SIGINT)
    return error


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
                from metaeval.runs.families import FAMILIES

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
        from metaeval.runs.families import FAMILIES, TOPICS

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
    wide = isinstance(ctx.obj, Context) and ctx.obj.wide     # --wide, read first (eager)
    ctx.obj = Context(db)
    ctx.obj.wide = wide
    # until the command ends, SIGTERM (`kill`, a scheduler, a container stopping) stops it as
    # Ctrl-C does: a run is marked interrupted and keeps its rows; one line (`interrupted`)
    ctx.call_on_close(signals.install())


def _command_line() -> str:
    return shlex.join(["metaeval", *sys.argv[1:]])


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
    if summary.up_to_date:
        say(f"{table}: all {summary.tasks} results up to date; nothing computed (--force recomputes)",
                   err=not is_text(fmt))
    else:
        say(f"{table}: run {summary.run_id}: computed {summary.computed} of {summary.tasks}, "
                   f"wrote {summary.written} rows", err=not is_text(fmt))


def report_outcome(out, fmt: str = "text") -> None:
    """The metrics an analysis left out (stderr), then :func:`report_run` of its Outcome."""
    for reason in out.skipped.values():
        say(f"skipped: {reason}", err=True)
    report_run(out.analysis.table, out.summary, fmt)


from metaeval.schema import RESULT_TABLES  # noqa: E402  (the results tables `results` and `export` offer)


def _environment_executor():
    """The executor of ``$METAEVAL_SCHEDULER``: what a command without ``--scheduler`` gives the
    runs it starts; None (local, as a Store's default) when it is not set, so that a light
    command does not import the executors (and multiprocessing)."""
    if not os.environ.get("METAEVAL_SCHEDULER"):    # executors.ENV_VAR; unset: local (the Store's None)
        return None
    from metaeval.runs import executors

    return executors.Executor.from_environment()


def _set_scheduler(ctx, param, value) -> None:
    """The executor of this command (:class:`metaeval.runs.executors.Executor`, given to the
    warehouse it opens: ``Context.open``). A malformed address fails here, at once; whether a
    Dask scheduler answers there is checked before a run is recorded (``Executor.check``), so
    that parsing needs no network. Errors name the option (``--scheduler``, the parameter
    ``scheduler`` rendered) or the environment variable it came from."""
    from metaeval.runs import executors

    from_env = ctx.get_parameter_source(param.name) is click.core.ParameterSource.ENVIRONMENT
    executor = executors.Executor(value or None, f"${executors.ENV_VAR}" if from_env else None)
    if executor.scheduler:
        executors.check_address(executor.scheduler, executor.source)
    obj = ctx.find_object(Context)
    if obj is None:                      # the command run on its own (no `metaeval` group above it)
        obj = ctx.obj = Context(None)
    obj.executor = executor


#: ``--scheduler ADDRESS``: compute the tasks on a Dask distributed cluster (an ``Executor`` the
#: warehouse the command opens carries, so the commands' signatures do not change).
scheduler_option = click.option(
    "--scheduler", metavar="ADDRESS", envvar="METAEVAL_SCHEDULER", expose_value=False, callback=_set_scheduler,
    help="Run the tasks on the Dask distributed cluster whose scheduler is at ADDRESS (e.g. tcp://host:8786) "
         "instead of local processes; results are identical. Default: $METAEVAL_SCHEDULER.")


def _parse_where(ctx, param, value):
    """``--where`` as the canonical ``((attribute, value), ...)`` of
    :func:`metaeval.runs.selection.parse_where` (sorted, deduplicated)."""
    if not value:
        return ()
    from metaeval.runs import selection

    try:
        return selection.parse_where(value)
    except WarehouseError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None
