"""The click types and options shared by the commands: ``--format``, ``--layout``, ``--out``,
``--overwrite``, ``--k``, ``--seed``, ``--alpha``, ``--scheduler``, ``--where``, and choices read
from the analysis modules on first use (:class:`LazyChoice`). Imports click, the command's
:class:`~metaeval.cli.context.Context` and :mod:`metaeval.cli.messages` only, so that the
generated commands of the families (:mod:`metaeval.cli.families`) import no command group.
"""

from __future__ import annotations

import importlib
import math
from pathlib import Path

import click

from metaeval.cli.context import Context
from metaeval.cli.messages import error_text
from metaeval.errors import WarehouseError


#: ``--format`` of the commands that print rows (present.tables); ``table`` is the old name of ``text``.
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
            from metaeval.runs.engine import selection

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


def plain(fmt: str) -> bool:
    """Whether a light command fetches :class:`~metaeval.rows.Rows` for ``fmt`` (text, json, csv:
    printed without importing pandas) rather than a DataFrame (markdown, latex)."""
    from metaeval.present.plain import FORMATS as PLAIN_FORMATS

    return ("text" if fmt == "table" else fmt) in PLAIN_FORMATS


def fmt_option(default: str = "text", help: str | None = None):
    """``--format`` (:data:`FORMATS`)."""
    return click.option("--format", "fmt", type=click.Choice(FORMATS), default=default, show_default=True,
                        help=help or "Output: text (aligned), json (one object per row), csv, markdown, "
                                     "latex (booktabs). table = text.")


def layout_option(f):
    """``--layout`` of a paper table (``--format latex``): auto fits an ACL two-column page
    (see :func:`metaeval.present.tables.choose_layout`)."""
    return click.option("--layout", type=click.Choice(("auto", "wide", "compact", "long")), default="auto",
                        show_default=True,
                        help="LaTeX layout: wide (per setting its cluster, correlation and CI), compact (the "
                             "correlations only), long (one row per metric and setting); auto: the first that "
                             "fits an ACL column, else the page (table*).")(f)


def is_text(fmt: str) -> bool:
    """Whether ``fmt`` is the aligned text (progress lines then go to stdout; else to stderr,
    so that stdout holds only the JSON/CSV/... document)."""
    return fmt in ("text", "table")


def _set_scheduler(ctx, param, value) -> None:
    """The executor of this command (:class:`metaeval.runs.engine.executors.Executor`, given to the
    warehouse it opens: ``Context.open``). A malformed address fails here, at once; whether a
    Dask scheduler answers there is checked before a run is recorded (``Executor.check``), so
    that parsing needs no network. Errors name the option (``--scheduler``, the parameter
    ``scheduler`` rendered) or the environment variable it came from."""
    from metaeval.runs.engine import executors

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
    :func:`metaeval.runs.engine.selection.parse_where` (sorted, deduplicated)."""
    if not value:
        return ()
    from metaeval.runs.engine import selection

    try:
        return selection.parse_where(value)
    except WarehouseError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None
