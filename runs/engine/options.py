"""The options of the analysis families: :class:`Option` (one parameter, declared once: its
name, default, kind, checks, flag, role) and the options several families share (``DATASET``,
``HUMAN``, ``K``, ``SEED``, ``WHERE``, ``AGGREGATE``, ...), defined once here and given by each
family in its ``options`` (:class:`metaeval.runs.engine.families.Family`)::

    from metaeval.runs.engine.families import Family, register
    from metaeval.runs.engine.options import DATASET, FORCE, HUMAN, K, SEED, Option

:meth:`Option.value` checks a value as the command line does (choices, ``minimum`` /
``maximum`` / ``open`` bounds, finiteness of a float, ``check``), so that ``wh.<family>(...)``
and ``metaeval <family>`` refuse the same values in the same words.

Light and click-free, as the registry is: it imports nothing of ``analyses/`` at load time
(choices given as ``"module:ATTR"`` are read on first use).
"""

from __future__ import annotations

import importlib
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

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
        """``given`` checked (choices; an ``int`` or ``float`` in its ``minimum`` / ``maximum``,
        a float finite, as the command line checks them: :meth:`_in_range`; ``check``), or the
        default when None (a tuple for a repeatable option)."""
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
        if self.check is not None:       # the family's own words first, where it has a check
            self.check(values if self.multiple else given)
        if self.kind in ("int", "float"):
            for v in values:
                self._in_range(v)
        return values if self.multiple else given


    def _in_range(self, v: Any) -> None:
        """``v`` refused as the command line refuses it (click's ``IntRange`` / the finite
        ``FloatRange`` of ``metaeval.cli.options``, in their words): not a number of the kind, not
        finite (a float), or outside ``minimum`` / ``maximum`` (``open``: the bounds excluded)."""
        integral = self.kind == "int"
        if isinstance(v, bool) or not isinstance(v, numbers.Integral if integral else numbers.Real):
            raise WarehouseError(Message(Argument(self.name, v), f" is not {'an integer' if integral else 'a number'}"))
        low = self.minimum is not None and (v <= self.minimum if self.open and not integral else v < self.minimum)
        high = self.maximum is not None and (v >= self.maximum if self.open and not integral else v > self.maximum)
        if low or high:                  # (click's order: the range, then finiteness; NaN is in every range)
            raise WarehouseError(Message(Argument(self.name, v), f" is not in the range {self.range_text()}"))
        if not integral and not math.isfinite(v):
            bounded = self.minimum is not None or self.maximum is not None
            raise WarehouseError(Message(Argument(self.name, v), " is not a finite number; give a "
                                         + (f"number in the range {self.range_text()}" if bounded else "finite number")))

    def range_text(self) -> str:
        """The bounds as click describes a range (``x>=1``, ``0<x<1``)."""
        strict = self.open and self.kind == "float"
        below, above = ("<" if strict else "<="), ("<" if strict else "<=")
        if self.minimum is None:
            return f"x{above}{self.maximum}"
        if self.maximum is None:
            return f"x{'>' if strict else '>='}{self.minimum}"
        return f"{self.minimum}{below}x{above}{self.maximum}"

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
