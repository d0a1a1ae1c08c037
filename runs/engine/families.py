"""The registry of analysis families: each declared once, with its options, tables and computation.

After sacrebleu's ``METRICS`` registry and ``Metric`` base class, and mt-metrics-eval's ``Task``
(which carries its parameters whole). A family is a subclass of :class:`Family`, registered
with :func:`register`::

    from metaeval.runs.engine.families import DATASET, FORCE, HUMAN, K, SEED, Family, Option, register

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

This module is light and click-free: it imports nothing of ``analyses/`` at load time (choices
given as ``"module:ATTR"`` are read on first use).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine import parameters

#: The kinds of option values (the command line maps each to its click type):
#: str; int (``minimum``); float (finite; ``minimum``/``maximum``, ``open`` bounds); flag (a
#: switch, False unless given); switch (``--x/--no-x``, the default given); choice (one of
#: ``choices``); coefficient (a correlation coefficient, maybe with a tie threshold or a control);
#: where (``ATTR=VALUE`` conditions, ANDed); resamples (1..K_MAX); seed (0..2**63-1);
#: probability (0 < p < 1).
#: What an option is to the rows (:attr:`Option.role`).
ROLES = ("key", "subset", "setting")
#: The stored tables a ``subset`` option can restrict (:attr:`Option.restricts`; :mod:`metaeval.runs.engine.subset_runs`).
RESTRICTABLE = ("preferences",)
KINDS = ("str", "int", "float", "flag", "switch", "choice", "coefficient", "where", "resamples", "seed",
         "probability")

#: What a command answers, key -> the title of its section of ``metaeval --help``, in the order
#: the listing shows them: every family declares one (:attr:`Family.topic`), and so does every
#: command that is not a family, where it is defined (``metaeval.cli.sections.topic``).
TOPICS = {"start": "Start here (demo, then evaluate, then report)", "storage": "Storage",
          "ingest": "Ingest", "metrics": "Metrics against humans", "systems": "Systems",
          "votes": "Judges and votes", "mt": "MT and spans", "output": "Output"}


@dataclass(frozen=True)
class Option:
    """One parameter of a family, declared once: its Python ``name`` (the keyword of
    ``compute`` and of the ``Warehouse`` method), its ``default``, ``help``, ``kind``
    (:data:`KINDS`), ``choices`` (a tuple, or ``"module:ATTR"`` read on first use),
    ``multiple`` (repeatable; a tuple), ``required``, its command-line ``flag`` (default ``--``
    + the name with ``-`` for ``_``), ``metavar``, and ``check(value)`` raising a
    :class:`~metaeval.errors.WarehouseError` naming ``Argument(name, value)``."""

    name: str
    default: Any = None
    help: str | None = None
    kind: str = "str"
    choices: tuple | str | None = None
    multiple: bool = False
    required: bool = False
    flag: str | None = None
    metavar: str | None = None
    check: Callable[[Any], None] | None = None
    minimum: float | None = None
    maximum: float | None = None
    open: bool = False                   # the bounds themselves excluded (float)
    show_default: bool | None = None     # None: shown when there is a default (not for a flag)
    #: flags the option was once spelled with, still accepted on the command line with a note
    #: (the name, and so what is stored and fingerprinted, is the option's)
    renamed_from: tuple[str, ...] = ()
    #: what the option is to the rows (:data:`ROLES`): ``key``, a parameter of the results (stored
    #: in the run's parameters, so in the setting a later run reuses; a column of the rows); ``subset``,
    #: a condition on what the family reads, either joined into the option ``into`` (``where``: in the
    #: rows' subset and fingerprint) or, with ``restricts``, applied by :meth:`Family.run`; ``setting``,
    #: how the run is made (``jobs``, ``force``: never in the results)
    role: str = "key"
    #: a ``subset`` option :meth:`Family.run` applies (:mod:`metaeval.runs.engine.subset_runs`): the stored
    #: table the family reads only the rows in the subset of (``preferences``: the votes on the inputs
    #: whose attributes hold), never given to ``compute``. The rows are those of a warehouse holding
    #: only that subset, with its label in their key (the ``subset`` column, '' for every row: the rows
    #: and fingerprints of before), fingerprint (the label folded into the data's) and signature
    #: (``subset:category=math``)
    restricts: str | None = None
    #: ``subset`` options and companions: the option whose value this one joins, and the function
    #: joining them (``"module:function"`` of (that value, this value), read on first use)
    into: str | None = None
    fold: str | None = None
    #: options given beside this one and folded into it (:attr:`into` this option's name), each
    #: also a keyword of the Python call and a flag of the command line (``--human-aggregate``)
    companions: tuple = ()
    #: the choices the command line offers when narrower than the Python values (``--aggregate``
    #: names the metric's side; its companion the human's)
    cli_choices: tuple | None = None
    #: command-line options that follow this one's flag (``"module:attr"`` click decorators:
    #: ``--scheduler`` after ``--jobs``), not parameters of the family
    cli_after: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"option {self.name!r}: unknown kind {self.kind!r}; one of {', '.join(KINDS)}")
        if self.role not in ROLES:
            raise ValueError(f"option {self.name!r}: unknown role {self.role!r}; one of {', '.join(ROLES)}")
        if self.restricts is not None and (self.restricts not in RESTRICTABLE or self.role != "subset"):
            raise ValueError(f"option {self.name!r}: restricts {self.restricts!r} needs the role 'subset' and one of "
                             f"{', '.join(RESTRICTABLE)}")
        if self.flag is None:
            object.__setattr__(self, "flag", "--" + self.name.replace("_", "-"))

    def but(self, **changes) -> Option:
        """This option with some fields changed (a family's own help text, default, ...)."""
        return replace(self, **changes)

    def joined(self, target: Any, own: Any) -> Any:
        """``own`` (this option's value) joined into ``target`` (the value of :attr:`into`) by :attr:`fold`."""
        module, attr = self.fold.split(":")
        return getattr(importlib.import_module(module), attr)(target, own)

    def choice_values(self) -> tuple | None:
        """The choices, a ``"module:ATTR"`` source imported now."""
        if isinstance(self.choices, str):
            module, attr = self.choices.split(":")
            return tuple(getattr(importlib.import_module(module), attr))
        return self.choices

    def value(self, given: Any = None) -> Any:
        """``given`` checked (choices, ``check``), or the default when None (a tuple for a
        repeatable option)."""
        if given is None or (self.multiple and not given and not isinstance(given, str)):
            if self.required:
                raise WarehouseError(Message(Argument(self.name, placeholder=self.metavar or "VALUE"),
                                             " is required"))
            if self.kind == "where":
                from metaeval.runs.engine.subset import Subset

                return Subset(self.default or ())
            return self.default if not self.multiple else tuple(self.default or ())
        if self.kind == "where":             # one type of subset, whatever shape it is given in
            from metaeval.runs.engine.subset import Subset

            return Subset(given)
        if self.multiple and isinstance(given, Mapping):   # {KEY: VALUE} for a KEY=VALUE option
            if "=" not in (self.metavar or ""):
                raise WarehouseError(Message(Argument(self.name, list(given)), " takes a list, not a mapping"))
            given = [f"{k}={v}" for k, v in given.items()]
        values = (given,) if not self.multiple or isinstance(given, str) else tuple(given)
        choices = self.choice_values() if self.kind == "choice" else None
        for v in values:
            if choices is not None and v not in choices:
                raise WarehouseError(Message("unknown ", Argument(self.name, v), f"; choose from {', '.join(choices)}"))
        if self.check is not None:
            self.check(values if self.multiple else given)
        return values if self.multiple else given


# --- the shared options, defined once -----------------------------------------------------------
def _check_alpha(alpha: float) -> None:
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise WarehouseError(Message(Argument("alpha", alpha), " must be a number with 0 < alpha < 1"))


def _check_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= 2**63 - 1:
        raise WarehouseError(Message(Argument("seed", seed), " must be an integer from 0 to 2**63 - 1"))


_VOCABULARY = "metaeval.analyses.stats.vocabulary:"

DATASET = Option("dataset", required=True, help="Dataset to analyse.")
HUMAN = Option("human", required=True, help="The human judgment, e.g. expert.relevance.")
METRICS = Option("metrics", multiple=True, flag="--metric", metavar="GLOB",
                 help="Metrics (globs over automatic measures). Default: all. Repeatable.")
LEVELS = Option("levels", kind="choice", choices=_VOCABULARY + "LEVELS", multiple=True, flag="--level",
                help="Correlation level(s). Default: all three.")
COEFFICIENTS = Option("coefficients", kind="coefficient", multiple=True, flag="--coefficient",
                      help="Coefficient(s); kendall is tau-b; kendall-a, kendall-23 and acc-23 are the variants "
                           "with ties of Deutsch et al. (2023). Default: pearson, spearman, kendall.")
SYSTEM_INPUTS = Option("system_inputs", default=parameters.DEFAULT_SYSTEM_INPUTS, kind="choice",
                       choices=_VOCABULARY + "SYSTEM_INPUTS", check=parameters.check_system_inputs,
                       help="System level: a metric's system score averages every input it scored (all) or only "
                            "the inputs the human judged (judged). Same when every scored input is judged.")
K = Option("k", default=parameters.DEFAULT_K, kind="resamples", check=parameters.check_resamples, help="Resamples.")
ALPHA = Option("alpha", default=parameters.DEFAULT_ALPHA, kind="probability", check=_check_alpha)
SEED = Option("seed", default=parameters.DEFAULT_SEED, kind="seed", check=_check_seed,
              help="Seed of the resampling; recorded with every row.")
ALTERNATIVE = Option("alternative", default=parameters.DEFAULT_ALTERNATIVE, kind="choice",
                     choices=_VOCABULARY + "ALTERNATIVES",
                     help="H1 of each ordered pair (a, b): corr(a, human) != corr(b, human) (two-sided; the sign "
                          "of delta says which is better), or > (greater), or < (less).")
CORRECTION = Option("correction", default=parameters.DEFAULT_CORRECTION, kind="choice",
                    choices=_VOCABULARY + "CORRECTIONS", help="Multiple-comparison correction.")
CORRECTION_GROUP = Option("correction_group", default=parameters.DEFAULT_CORRECTION_GROUP, kind="choice",
                          choices=_VOCABULARY + "CORRECTION_GROUPS",
                          help="Family of the correction: the pairs of one metric_a (as in the paper), or all "
                               "pairs; always within one level and coefficient.")
WHERE = Option("where", kind="where", multiple=True, metavar="ATTR=VALUE",
               help="Only the cells whose attribute ATTR (metaeval ingest attributes) is VALUE, e.g. split=test. "
                    "Repeatable: every condition must hold (AND). Recorded as the rows' subset.")
SYSTEM_TYPE = Option("system_types", multiple=True, flag="--system-type", metavar="TYPE", role="subset",
                     into="where", fold="metaeval.runs.engine.selection:with_system_types",
                     help="Only the systems of this type (the stored systems.type: SacreROUGE's peer, reference, "
                          "oracle, ...; a system without a type is a peer), or all. Default: every type but "
                          "reference, oracle and human. Repeatable. Recorded as the rows' subset (system.type=...).")
#: The human's side of AGGREGATE, carried by it (every family with an ``aggregate`` option takes
#: ``human_aggregate`` too: :meth:`Family.parameters` folds it into ``aggregate`` as
#: "metric/human", :func:`metaeval.runs.engine.parameters.aggregate_value`), never an option of its own.
HUMAN_AGGREGATE = Option("human_aggregate", default=parameters.DEFAULT_AGGREGATE, kind="choice",
                         choices=parameters.AGGREGATES, into="aggregate",
                         fold="metaeval.runs.engine.parameters:aggregate_value",
                         help="The human's system score: the mean (default; a human cell: the annotators' mean) or "
                              "the median over its inputs. Not the mean: in the rows' aggregate "
                              "(agg:median/median), fingerprint and conventions (human_aggregate).")
AGGREGATE = Option("aggregate", default=parameters.DEFAULT_AGGREGATE, kind="choice",
                   choices=parameters.AGGREGATE_VALUES, companions=(HUMAN_AGGREGATE,),
                   cli_choices=parameters.AGGREGATES,
                   help="A metric's system score: the mean or the median over its inputs of each cell's value "
                        "(under resampling, over the inputs drawn); the human's stays its mean unless "
                        "--human-aggregate says otherwise (median: Graham 2015's median variants). The median is a "
                        "system-level notion (the system level alone). A key of the rows; a median is in their "
                        "fingerprint, conventions and signature (agg:median).")
BY = Option("by", metavar="ATTR",
            help="One result per value of the attribute ATTR (each the subset ATTR=value, with any --where), plus "
                 "their unweighted macro average (subset ATTR=*).")
#: ``--where`` / ``--by`` of the families reading votes, applied by :meth:`Family.run` (``restricts``)
VOTES_WHERE = WHERE.but(role="subset", restricts="preferences",
                        help="Only the votes on the inputs whose attribute ATTR (metaeval ingest attributes) is VALUE, "
                             "e.g. category=math (an item counts when its input's cells of both systems hold): the "
                             "rows of a warehouse holding only those votes. Repeatable (AND). Recorded as the rows' "
                             "subset.")
VOTES_BY = BY.but(role="subset", restricts="preferences",
                  help="One table per value of the attribute ATTR (each the votes of --where and ATTR=value), as "
                       "FastChat's per-category leaderboards; each table's tests are corrected within it, and the "
                       "output says the correction across the values.")
JUDGE_GLOBS = Option("judges", multiple=True, flag="--judge", metavar="GLOB",
                     help="Automatic judges (globs). Default: every automatic judge. Repeatable.")
#: ``--resample-clusters ATTR`` (not ``--cluster``: a cluster is already a significance group):
#: resample the clusters of inputs an input attribute names (:mod:`metaeval.runs.engine.clusters`)
RESAMPLE_CLUSTERS = Option("resample_clusters", metavar="ATTR",
                           help="Resample whole clusters of inputs, the values of the input attribute ATTR (metaeval "
                                "ingest attributes; e.g. the document of each segment), instead of single inputs: a "
                                "bootstrap draws clusters (Boot-Both: systems x clusters), a permutation test swaps "
                                "per cluster (Perm-Both: per system and cluster). In the rows' conventions, "
                                "fingerprint and signature (clus:ATTR).")
FORCE = Option("force", default=False, kind="flag", role="setting", help="Recompute even what is up to date.")
JOBS = Option("jobs", default=1, kind="int", minimum=1, role="setting",
              cli_after=("metaeval.cli.options:scheduler_option",), help="Worker processes.")
#: the plain coefficients (no tie threshold): the families reading tests or per-input correlations
PLAIN_COEFFICIENTS = COEFFICIENTS.but(kind="choice", choices=_VOCABULARY + "COEFFICIENTS",
                                      help="Coefficient(s). Default: all three.")
EPSILON = Option("epsilon", kind="float", minimum=0,
                 help="Tie threshold on the metric's differences (|d| <= E is a tie) for kendall-a, kendall (b), "
                      "kendall-23, acc-23.")
TIE_CALIBRATION = Option("tie_calibration", default=False, kind="flag", flag="--tie-calibration",
                         help="Choose the tie threshold that maximises kendall-23 / acc-23 at each level (Deutsch et "
                              "al. 2023; default coefficient acc-23); resamples re-calibrate.")
CONTROL = Option("control", metavar="system|ATTR",
                 help="Partial correlations at the global level: on the cells where metric and human are both "
                      "present, each group's mean (each system's, or each value's of the attribute ATTR) subtracted "
                      "from both before correlating; p-values with n - 2 - (g - 1) df. Coefficients pearson, "
                      "spearman, kendall; stored as NAME[control=system]. Default level: global.")
#: the options of the correlation families' scope, in their order on the command line
SCOPE = (DATASET, HUMAN, METRICS, LEVELS, COEFFICIENTS, SYSTEM_INPUTS, JOBS, FORCE)


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
        """:meth:`compute` of the checked :meth:`parameters` (``Warehouse.<python name>``); with a
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
        ``{table: rows}``)."""
        raise NotImplementedError(f"family {self.name!r} has no compute")

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
