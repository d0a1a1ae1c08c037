"""The registry of analysis families: each declared once, with its options, tables and computation.

After sacrebleu's ``METRICS`` registry and ``Metric`` base class, and mt-metrics-eval's ``Task``
(which carries its parameters whole). A family is a subclass of :class:`Family`, registered
with :func:`register`::

    from metaeval.runs.engine.families import Family, register
    from metaeval.runs.engine.options import DATASET, FORCE, HUMAN, K, SEED, Option

    @register
    class SystemTests(Family):
        name = "system-tests"               # the registry key = the command (Python: wh.system_tests)
        summary = "Tests between systems."  # first line of --help and of the report section
        topic = "systems"                   # its section of `metaeval --help` (TOPICS)
        tables = ("system_tests",)          # result tables it writes (latest view: latest_<table>)
        tests_table = "system_tests"        # where its tests live (the conclusion layer reads them), or None
        options = (DATASET, HUMAN, Option("measure", required=True, help="..."), K, SEED, FORCE)

        def compute(self, wh, **params):    # run (or reuse) and persist; the latest rows back
            from metaeval.runs import system_tests_impl   # heavy imports inside (see below)
            ...

Every consumer reads the registry rather than naming families one by one: the command line
builds each family's click options from its ``options`` (``metaeval.cli.families.options_of``:
flags, types, defaults, help and choices are never restated) and generates the command of a
family that has no hand-written one; ``Warehouse.<python name>(...)`` calls
:meth:`Family.run` (``runs/engine/api.py``); a test checks that the families' ``tables`` cover
:data:`metaeval.schema.RESULT_TABLES` (every ``latest_*`` view) exactly once.

:data:`FAMILIES` finds the families on first use: it imports every module of ``metaeval.runs``
listed in :data:`MODULES` (each family's declaration beside, or in a light module next to, its
computation: ``runs/metrics/correlation_families.py`` declares correlate, ci and compare). The command
line reads the registry when it starts, so a family module imports its computation (numpy, scipy, the engine) inside
``compute``, never at its top: ``metaeval --help`` loads no analysis.

The options (:class:`~metaeval.runs.engine.options.Option` and the shared ones, ``DATASET``,
``K``, ...) are declared in :mod:`metaeval.runs.engine.options`. This module is light and
click-free: it imports nothing of ``analyses/`` at load time.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine.options import Option

#: What a command answers, key -> the title of its section of ``metaeval --help``, in the order
#: the listing shows them: every family declares one (:attr:`Family.topic`), and so does every
#: command that is not a family, where it is defined (``metaeval.cli.sections.topic``).
TOPICS = {"start": "Start here (demo, then evaluate, then report)", "storage": "Storage",
          "ingest": "Ingest", "metrics": "Metrics against humans", "systems": "Systems",
          "votes": "Judges and votes", "mt": "MT and spans", "output": "Output"}



class Parameters(Mapping):
    """A family's parameters, checked and complete: every declared option's value by name
    (``params.k`` or ``params["k"]``), read-only, carried whole from the command line through the
    Python API to the computation (as mt-metrics-eval's ``Task`` carries its own); ``family``
    names whose, ``run`` holds what is no parameter of the results (``progress``). A Mapping, so
    ``f(**params)`` passes the values as keywords; :meth:`but` is a checked copy with some changed."""

    __slots__ = ("family", "_values", "run")

    def __init__(self, family: str, values: Mapping[str, Any], run: Mapping[str, Any] | None = None):
        object.__setattr__(self, "family", family)
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "run", dict(run or {}))

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"{self.family} has no parameter {name!r}") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Parameters are read-only: use .but(name=value)")

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __reduce__(self):
        return Parameters, (self.family, self._values, self.run)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Parameters({self.family}: " + ", ".join(f"{k}={v!r}" for k, v in self._values.items()) + ")"

    def but(self, **changes) -> Parameters:
        """A copy with the values in ``changes`` (checked as the family's options check them)."""
        return family(self.family).parameters(**{**self._values, **self.run, **changes})

    def keywords(self) -> dict[str, Any]:
        """The values and the run's keywords, for ``compute(wh, **...)``."""
        return {**self._values, **self.run}


# --- the families --------------------------------------------------------------------------------
class Family:
    """An analysis family (see the module docstring). Subclasses set the class attributes and
    :meth:`compute`; :meth:`present` and :meth:`section` have defaults."""

    name: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    #: what the family answers: a key of :data:`TOPICS` (its section of ``metaeval --help``)
    topic: ClassVar[str] = ""
    #: its line in ``metaeval --help``, whole, at most 75 characters: when ``summary`` is longer
    headline: ClassVar[str] = ""
    tables: ClassVar[tuple[str, ...]] = ()
    tests_table: ClassVar[str | None] = None
    options: ClassVar[tuple[Option, ...]] = ()
    #: keywords ``compute`` takes besides the options, not declared as such (e.g. ``progress``)
    run_keywords: ClassVar[tuple[str, ...]] = ("progress",)
    #: the command line gives ``compute`` a progress bar (``progress``) when standard error is a terminal
    shows_progress: ClassVar[bool] = False
    #: the family's sections of the report, ``"module:function"`` (each a function of the report's
    #: :class:`~metaeval.runs.report.context.Context` returning a Section or None, imported on
    #: first use), shown by the default :meth:`section`
    report: ClassVar[tuple[str, ...]] = ()
    #: where the family's sections stand on the report's page: the page shows the answer, then the
    #: families' sections by this position (equal positions: the registry's order), then the dataset
    report_position: ClassVar[int] = 1000
    #: the options a Python call may give by position, in order (None: every option, as declared);
    #: the ``Warehouse`` method's signature takes them first (:meth:`signature`)
    positional: ClassVar[tuple[str, ...] | None] = None
    #: options of the command line only, given to :meth:`present` as keywords (``--layout``), never to compute
    presented: ClassVar[tuple[Option, ...]] = ()
    #: older Python keywords still accepted: keyword -> the option it gives (``judges=`` for ``judge_globs``)
    aliases: ClassVar[dict[str, str]] = {}
    #: its command writes a figure and prints no rows: it takes no ``--format`` (``plot ci``)
    figure_only: ClassVar[bool] = False
    #: :meth:`present` takes ``hint``, how the caller writes a suggested call (a
    #: :class:`~metaeval.errors.Hint` as a command line, with its ``--db``); never given to :meth:`notes`
    hinted: ClassVar[bool] = False
    #: the family's own help for ``--format`` (None: the command line's)
    format_help: ClassVar[str | None] = None
    #: what a run stopped by Ctrl-C keeps, as the command line says it
    interrupted: ClassVar[str] = "the results finished so far are saved; run the same command again to resume"

    @property
    def python_name(self) -> str:
        """The ``Warehouse`` method: the name with ``_`` for ``-``."""
        return self.name.replace("-", "_")

    def option(self, name: str) -> Option:
        """The declared option ``name``."""
        for option in self.options:
            if option.name == name:
                return option
        raise KeyError(f"family {self.name!r} has no option {name!r}")

    def parameters(self, *args, **given) -> Parameters:
        """Every option's value (positional ``args`` in the declared order, then keywords),
        checked, defaults filled, as one :class:`Parameters` object (the one the command line, the
        Python API and the computation pass along); an unknown keyword is refused naming the
        family's options. A :class:`Parameters` of this family given alone is returned as it is."""
        if len(args) == 1 and not given and isinstance(args[0], Parameters) and args[0].family == self.name:
            return args[0]
        names = [o.name for o in self.options]
        by_position = self.positional_names()
        if len(args) > len(by_position):
            raise WarehouseError(f"{self.python_name}() takes at most {len(by_position)} positional arguments "
                                 f"({', '.join(by_position)})")
        for old, name in self.aliases.items():
            if old in given and old not in names:
                if name in given:
                    raise WarehouseError(Message(Argument(name, given[name]), f" is given twice to {self.python_name}()"
                                                 f" (as {old}= too)"))
                given[name] = given.pop(old)
        for name, value in zip(by_position, args):
            if name in given:
                raise WarehouseError(Message(Argument(name, value), f" is given twice to {self.python_name}()"))
            given[name] = value
        extra = {k: given.pop(k) for k in list(given) if k in self.run_keywords}
        for option in self.options:        # a companion's value folded into its option's (human_aggregate)
            for companion in option.companions:
                if companion.name in given and companion.name not in names:
                    own = given.pop(companion.name)
                    given[option.name] = companion.joined(
                        option.default if given.get(option.name) is None else given[option.name], own)
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise WarehouseError(Message(Argument(unknown[0], given[unknown[0]]),
                                         f" is not a parameter of {self.name}; one of {', '.join(names)}"))
        values = {o.name: o.value(given.get(o.name)) for o in self.options}
        for o in self.options:             # a subset condition joins its subset (system types: where)
            if o.role == "subset" and o.into in values and o.name in values:
                values[o.into] = o.joined(values[o.into], values.pop(o.name))
        return Parameters(self.name, values, extra)

    def positional_names(self) -> tuple[str, ...]:
        """The options a call may give by position: :attr:`positional` (default every option), up
        to the first required one after an optional one (which a signature cannot take by position)."""
        names = self.positional if self.positional is not None else tuple(o.name for o in self.options)
        out, optional = [], False
        for name in names:
            required = self.option(name).required
            if required and optional:
                break
            optional = optional or not required
            out.append(name)
        return tuple(out)

    def run(self, wh, *args, **given):
        """:meth:`compute` of the checked :meth:`parameters` (``Warehouse.<python name>``; by
        default the one way to store, :func:`metaeval.runs.engine.store.run`); with a
        ``subset`` option that restricts what the family reads (:attr:`Option.restricts`) given,
        :func:`metaeval.runs.engine.subset_runs.run`: ``compute`` once per subset on its rows only, and
        ``{subset label: what compute returned}``."""
        params = self.parameters(*args, **given)
        applied = [o.name for o in self.options if o.restricts]
        if applied:
            from metaeval.runs.engine import subset_runs

            return subset_runs.run(self, wh, params, applied)
        return self.compute(wh, **params.keywords())

    def compute(self, wh, **params):
        """Run (or reuse) and persist; the latest rows of the setting (a DataFrame, or
        ``{table: rows}``). The default is the one way to store (:func:`metaeval.runs.engine.store.run`):
        the family gives its :meth:`inputs` and its :meth:`rows`; the store reuses what is up to date,
        creates the tables, writes one run and reads the rows back (:meth:`outcome` of them). A
        family whose rows are written task by task (the engine: :mod:`metaeval.runs.engine.runner`)
        gives its own ``compute``."""
        if type(self).inputs is Family.inputs:
            raise NotImplementedError(f"family {self.name!r} has no compute")
        from metaeval.runs.engine import store

        return store.run(self, wh, **params)

    def inputs(self, wh, **params):
        """What the rows of ``params`` are of (:class:`metaeval.runs.engine.store.Inputs`: dataset,
        fingerprint, the keys selecting them, the data read), checked: every refusal comes here or
        in :meth:`rows`, before the first write."""
        raise NotImplementedError(f"family {self.name!r} declares no inputs")

    def rows(self, wh, inputs, **params):
        """The rows of ``inputs`` (:class:`metaeval.runs.engine.store.Rows`: a frame per table, the
        run's parameters and seed), computed; the store writes them."""
        raise NotImplementedError(f"family {self.name!r} computes no rows")

    def enough(self, stored, inputs, **params) -> bool:
        """Whether the stored rows of the setting answer ``params`` (default: yes; of several
        tables, ``{table: rows or None}``: when every table has its rows)."""
        return not isinstance(stored, Mapping) or all(rows is not None for rows in stored.values())

    def outcome(self, stored, inputs, **params):
        """What the family returns of the rows read back (default: as read)."""
        return stored

    def present(self, outcome, fmt: str) -> str:
        """``outcome`` (what :meth:`compute` returned) as text in ``fmt``
        (:func:`metaeval.present.tables.render`; several tables: ``render_blocks``). Text and
        LaTeX leave the bookkeeping columns (:data:`BOOKKEEPING`) to json and csv; LaTeX sets the
        table in a float captioned with :attr:`summary`; every reader's format (not json and csv)
        prints p-values as the conclusion layer does (:func:`printed_frame`)."""
        from metaeval.present import tables
        from metaeval.runs.engine.family_present import latex_note, latex_settings, printed_frame

        blocks = list(outcome.items()) if isinstance(outcome, Mapping) else [(None, outcome)]
        hidden, original = [], blocks
        if fmt in ("text", "table", "latex"):     # a reader's table: the bookkeeping columns only in json / csv
            hidden = sorted({c for _, f in blocks for c in getattr(f, "columns", ()) if c in BOOKKEEPING},
                            key=BOOKKEEPING.index)
            blocks = [(name, f.drop(columns=[c for c in hidden if c in f.columns]) if hidden else f)
                      for name, f in blocks]
        note = f"({', '.join(hidden)}: in the json and csv formats)" if hidden else ""
        if fmt == "latex":
            title = self.summary.rstrip(".") or self.name
            out = []
            for (name, f), (_, whole) in zip(blocks, original):
                if f is not None:
                    f, settings = latex_settings(printed_frame(f), {o.name for o in self.options})
                    out.append(tables.to_latex(f, caption=f"{title}" + (f" ({name})." if name else "."),
                                               comment=" ".join(x for x in (latex_note(whole), note, settings) if x)))
            return "".join(out)
        if fmt in ("text", "table", "markdown"):
            blocks = [(name, printed_frame(f)) for name, f in blocks]
        text = (tables.render_blocks(blocks, fmt) if isinstance(outcome, Mapping)
                else tables.render(blocks[0][1], fmt))
        return text + (note + "\n" if note else "")

    def refusal(self, warehouse, params: dict, **shown):
        """What the command line refuses before the run (a Message or text: a usage error), given the
        warehouse's path, the parameters as given and the :attr:`presented` options; None: nothing."""
        return None

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        """Lines said on standard error before :meth:`present`'s text (the run's); ``shown``: :attr:`presented`."""
        return []

    def section(self, ctx) -> list:
        """The family's sections of the report: ``ctx`` is the report's
        :class:`~metaeval.runs.report.context.Context` (``ctx.wh``, ``ctx.dataset``, ``ctx.human``,
        ``ctx.words``, ``ctx.rows(view)``); a Section, a list of them, or None (nothing to show or
        suggest). The default: the functions named in :attr:`report`, in order."""
        out = []
        for ref in self.report:
            module, attr = ref.split(":")
            out.append(getattr(importlib.import_module(module), attr)(ctx))
        return out


#: The columns of a result table that identify and document a row rather than state a result:
#: left out of a family's text table (:meth:`Family.present`), in its json and csv.
BOOKKEEPING: tuple[str, ...] = ("result_id", "run_id", "fingerprint", "conventions", "parameters")


_REGISTERED: dict[str, Family] = {}
_PYTHON_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def register(cls: type[Family]) -> type[Family]:
    """Class decorator: add ``cls`` (an instance of it) to :data:`FAMILIES`. Refused: a name
    that is not lower-case words joined by ``-``, a topic not of :data:`TOPICS`, a name or a
    table already registered."""
    if not _PYTHON_NAME.match(cls.name or ""):
        raise ValueError(f"family name {cls.name!r}: lower-case words joined by '-'")
    if cls.topic not in TOPICS:
        raise ValueError(f"family {cls.name!r}: topic {cls.topic!r} is not one of {', '.join(TOPICS)}")
    if cls.name in _REGISTERED:
        raise ValueError(f"family {cls.name!r} is registered twice")
    taken = {t: f.name for f in _REGISTERED.values() for t in f.tables}
    for table in cls.tables:
        if table in taken:
            raise ValueError(f"table {table!r} of family {cls.name!r} is already family {taken[table]!r}'s")
    if any(o.restricts for o in cls.options):  # its subsets' outcome shown table by table, then the correction
        cls.present = _by_subset(cls.present)
    _REGISTERED[cls.name] = cls()
    return cls


def _by_subset(present):
    """``present`` of a family with subsets (:attr:`Option.restricts`): an outcome of several
    (:class:`metaeval.runs.engine.subset_runs.Subsets`) is shown subset by subset, as
    :func:`metaeval.runs.engine.subset_runs.present` says."""
    def shown(self, outcome, fmt: str) -> str:
        from metaeval.runs.engine import subset_runs

        if isinstance(outcome, subset_runs.Subsets):
            return subset_runs.present(outcome, fmt, lambda part, f: present(self, part, f))
        return present(self, outcome, fmt)
    shown.__doc__, shown.__name__ = present.__doc__, present.__name__
    return shown


class _Registry(Mapping):
    """Name -> :class:`Family`; the family modules of ``metaeval.runs`` are imported on first use."""

    _loaded = False

    def _load(self) -> dict[str, Family]:
        if not _Registry._loaded:
            _Registry._loaded = True
            _discover()
        return _REGISTERED

    def __getitem__(self, name: str) -> Family:
        return self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())

    def __repr__(self) -> str:
        return f"FAMILIES({', '.join(self)})"


#: The modules declaring the families (``metaeval.runs.<package>.<module>``), in registration order: a new
#: family's module is added here (a test checks that no module of ``runs/`` registers one unlisted).
MODULES: tuple[str, ...] = (
    "metrics.correlation_families", "metrics.ranking_families", "agreement.agreement_families",
    "metrics.simulation_families", "factuality.factuality_families", "votes.judge_families",
    "metrics.error_overlap", "metrics.held_out_ties", "votes.judge_diagnostics", "votes.judge_leaderboard",
    "votes.leaderboard", "votes.length_control", "metrics.measure_correlation", "metrics.optimal_set",
    "studies.plan", "studies.ppi", "systems.rank_change", "mt.raters", "mt.span_eval", "systems.system_tests")


def _discover() -> None:
    """Import every module of :data:`MODULES`."""
    for name in MODULES:
        importlib.import_module(f"metaeval.runs.{name}")


#: Every registered family by name (the command), in registration order.
FAMILIES: Mapping[str, Family] = _Registry()


def family(name: str) -> Family:
    """The family ``name`` (its command, or its Python name with ``_``); a WarehouseError names
    the registered ones."""
    key = name.replace("_", "-")
    if key not in FAMILIES:
        raise WarehouseError(f"unknown analysis family {name!r}; one of {', '.join(FAMILIES)}")
    return FAMILIES[key]


def by_table() -> dict[str, Family]:
    """Result table -> the family writing it."""
    return {table: f for f in FAMILIES.values() for table in f.tables}
