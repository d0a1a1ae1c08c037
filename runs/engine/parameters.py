"""The typed parameters of an analysis: one frozen dataclass per family, naming its result table.

Each analysis family declares a subclass of :class:`Params` whose fields are its parameters, in
the order of the table's columns, and whose class attribute ``table`` names the result table
(:attr:`Params.view` its ``latest_*`` view, from :data:`metaeval.schema.RESULT_TABLES`). A field
plays up to three roles, given by :func:`setting` (default: all but the last):

- a **column** of every result row, matched when a later run reuses rows (:meth:`Params.columns`);
- an **argument** of the family's ``evaluate`` function, run in the workers (:meth:`Params.arguments`);
- **run-only**: recorded with the run in ``analysis_runs.parameters`` but not a column (e.g.
  compare's correction, applied after the raw tests are stored; :meth:`Params.recorded`).

For example (runs/metrics/correlations.py)::

    @dataclass(frozen=True)
    class CorrelateParams(Params):
        table: ClassVar[str] = "correlations"
        system_inputs: str = DEFAULT_SYSTEM_INPUTS

The defaults every command shares and the checks of arguments several families take (the
number of resamples, the system-inputs protocol, the parametric methods, annotator
resampling) live here too.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

from metaeval import schema
from metaeval.errors import Argument, Message, WarehouseError

# The checks import metaeval.analyses (and numpy) inside: the registry of families
# (runs/engine/families.py) reads the defaults below when the command line starts, and `metaeval
# --help` loads no analysis.

#: The defaults of every command that tests or reads tests (compare, evaluate, winners, plot
#: heatmap, report): two-sided, Holm within each metric_a's family (see README "Defaults").
DEFAULT_ALTERNATIVE, DEFAULT_CORRECTION, DEFAULT_CORRECTION_GROUP = "two-sided", "holm", "metric"
DEFAULT_CLUSTER_RULE = "any"
#: all: Deutsch, Dror & Roth (2022) recommend scoring the metric on every input it has; and it
#: is what a system mean over the stored cells has always been here (see protocols).
DEFAULT_SYSTEM_INPUTS = "all"
#: a system's score over its inputs: the mean (default) or the median (Graham 2015's variants)
AGGREGATES: tuple[str, ...] = ("mean", "median")
DEFAULT_AGGREGATE = "mean"
#: an analysis' ``aggregate``: the metric's, then the human's after a ``/`` when not the mean
#: (``--aggregate median``: Graham's median variant, the metric's median against the human's mean;
#: ``--human-aggregate median`` as well: "median/median"), as analyses.stats.reductions.AGGREGATE_VALUES
AGGREGATE_VALUES: tuple[str, ...] = ("mean", "median", "mean/median", "median/median")


def aggregate_value(metric: str, human: str | None = None) -> str:
    """The ``aggregate`` of ``--aggregate metric`` and ``--human-aggregate human`` (None: the mean;
    ``metric`` may already name both, as a stored row's ``aggregate``)."""
    if human in (None, DEFAULT_AGGREGATE):
        return metric
    if metric not in AGGREGATES:
        raise WarehouseError(Message(Argument("aggregate", metric), " is one of " + ", ".join(AGGREGATES)
                                     + " when ", Argument("human_aggregate", human), " is given"))
    if human not in AGGREGATES:
        raise WarehouseError(Message("unknown ", Argument("human_aggregate", human),
                                     f"; choose from {', '.join(AGGREGATES)}"))
    return f"{metric}/{human}"


def aggregate_sides(aggregate: str) -> tuple[str, str]:
    """(the metric's, the human's) aggregate of ``aggregate`` (:data:`AGGREGATE_VALUES`;
    :func:`metaeval.analyses.stats.reductions.aggregate_sides`, imported here on first use)."""
    from metaeval.analyses.stats.reductions import aggregate_sides as sides

    return sides(aggregate)
DEFAULT_SEED = 0
#: The number of resamples (bootstrap, permutations, simulation trials' inner resamples) of every
#: command that resamples: ``k`` (checked once, :func:`check_resamples`).
DEFAULT_K = 1000
#: The level of every interval (1 - alpha) and test.
DEFAULT_ALPHA = 0.05
#: compare --sequential: the cap on each pair's resamples and the bound on the resampling risk
DEFAULT_K_MAX = 100_000
DEFAULT_RISK = 1e-3


def setting(default: Any = MISSING, *, column: bool = True, argument: bool = True, quiet_default: bool = False) -> Any:
    """A parameter field: a ``column`` of the result rows and/or an ``argument`` of ``evaluate``;
    neither: run-only (recorded in ``analysis_runs`` when not None). ``quiet_default``: not
    recorded in the run's parameters at its default (a parameter added later, e.g. ``aggregate``:
    the runs of its default record what they recorded before it existed)."""
    return field(default=default, metadata={"column": column, "argument": argument, "quiet_default": quiet_default})


def clusters_setting() -> Any:
    """The ``resample_clusters`` field (``--resample-clusters ATTR``): an argument of ``evaluate``,
    no column of the rows (they record it in their conventions and fingerprint), recorded in the
    run's parameters when set (an unclustered run records what it recorded before the option)."""
    return field(default=None, metadata={"column": False, "argument": True, "recorded": True})


@dataclass(frozen=True)
class Params:
    """The parameters of one analysis (see the module docstring); subclasses set ``table``."""

    table: ClassVar[str] = ""

    @property
    def view(self) -> str:
        """The result table's latest view (:func:`metaeval.schema.latest_view`; a KeyError for the
        simulations' block tables, partial results without one)."""
        return schema.latest_view(self.table)

    def _fields(self, role: str) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.metadata.get(role, True)}

    def columns(self) -> dict[str, Any]:
        """The parameter columns of a result row (None: NULL), matched when reusing rows."""
        return self._fields("column")

    def arguments(self) -> dict[str, Any]:
        """The keyword arguments of the family's ``evaluate`` (besides the arrays and the key); a
        :func:`clusters_setting` only when set (the arguments of an unclustered run as before it)."""
        unset = {f.name for f in fields(self) if f.metadata.get("recorded") and getattr(self, f.name) is None}
        return {k: v for k, v in self._fields("argument").items() if k not in unset}

    def recorded(self) -> dict[str, Any]:
        """What a run records in ``analysis_runs.parameters`` besides its scope: the columns and
        the run-only parameters that are set."""
        extra = {f.name: getattr(self, f.name) for f in fields(self)
                 if not f.metadata.get("column", True)
                 and (not f.metadata.get("argument", True) or f.metadata.get("recorded", False))
                 and getattr(self, f.name) is not None}
        quiet = {f.name for f in fields(self) if f.metadata.get("quiet_default") and getattr(self, f.name) == f.default}
        return {k: v for k, v in {**self.columns(), **extra}.items() if k not in quiet}

    def run_seed(self) -> int | None:
        """The seed a run records: the ``seed`` parameter, if the family has one (None: not drawn)."""
        return getattr(self, "seed", None)


# --- checks several families share -------------------------------------------------------------
def check_resamples(k: int) -> None:
    """Refuse a number of resamples ``k`` that is not an integer from 1 to
    ``analyses.stats.validation.K_MAX`` (the one bound; the command line's ``--k`` type reads it too)."""
    from metaeval.analyses.stats.validation import K_MAX

    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= K_MAX:
        raise WarehouseError(Message(Argument("k", k), f" must be an integer from 1 to {K_MAX:,}"))


def check_k(k: int, alpha: float, purpose: str, name: str = "k") -> None:
    """Refuse a number of resamples below the floor of ``purpose`` ("interval" or "test") at
    ``alpha`` (:func:`analyses.stats.resolution.min_resamples`), naming the smallest accepted, or
    above the analyses' bound (:data:`analyses.stats.validation.K_MAX`), before anything is
    written. ``name``: the parameter that gave it (``k_max``: a sequential compare's bound)."""
    from metaeval.analyses.stats import resolution, validation

    floor = resolution.min_resamples(alpha, purpose)
    if k < floor:
        rule = "(k + 1) alpha / 2 >= 1" if purpose == "interval" else "(k + 1) alpha >= 1"
        what = "a percentile interval" if purpose == "interval" else "a resampling test"
        raise WarehouseError(Message(Argument(name, k), f" is too small for {what} at alpha {alpha:g}: it needs {rule}, "
                                     "so ", Argument(name, floor), " or more"))
    if k > validation.K_MAX:
        raise WarehouseError(Message(Argument(name, k), " is more resamples than the analyses draw: at most ",
                                     Argument(name, validation.K_MAX)))


def check_system_inputs(protocol: str) -> str:
    """``protocol`` if it is a system-inputs protocol (:data:`vocabulary.SYSTEM_INPUTS`)."""
    from metaeval.analyses.stats import vocabulary

    if protocol not in vocabulary.SYSTEM_INPUTS:
        raise WarehouseError(Message("unknown ", Argument("system_inputs", protocol),
                                     f"; choose from {', '.join(vocabulary.SYSTEM_INPUTS)}"))
    return protocol


def aggregate_setting() -> Any:
    """The ``aggregate`` field of a family's Params: a column and an argument of ``evaluate``,
    recorded with the run only when it is not the mean (:func:`setting`'s ``quiet_default``)."""
    return setting(DEFAULT_AGGREGATE, quiet_default=True)


def check_aggregate(aggregate: str, levels, coefficients, **refused) -> str:
    """``aggregate`` if the analysis can aggregate a system's inputs so (:data:`AGGREGATE_VALUES`): the
    median is a system-level notion (``levels`` must be the system level alone), of the
    coefficients computed from two vectors of system scores (pearson, spearman, kendall,
    kendall-c), and not with the options in ``refused`` that are set (name -> value)."""
    from metaeval.analyses.stats import validation

    if aggregate not in AGGREGATE_VALUES:
        raise WarehouseError(Message("unknown ", Argument("aggregate", aggregate), f"; choose from {', '.join(AGGREGATES)}"))
    if aggregate == DEFAULT_AGGREGATE:
        return aggregate
    if tuple(levels) != ("system",):
        raise WarehouseError(Message(_aggregate_argument(aggregate), " is a system-level notion (a system's score over "
                                     "its inputs): give ", Argument("levels", ["system"]), f"; got {', '.join(levels)}"))
    for coefficient in coefficients:
        try:
            validation.aggregate_iv(coefficient, aggregate)
        except ValueError as exc:
            raise WarehouseError(Message(_aggregate_argument(aggregate), f": {exc}")) from None
    for name, value in refused.items():
        if value:
            raise WarehouseError(Message(_aggregate_argument(aggregate), " is not offered with ",
                                         Argument(name, value)))
    return aggregate


def _aggregate_argument(aggregate: str) -> Argument:
    """The option that set ``aggregate``'s median: ``--aggregate``, else ``--human-aggregate``."""
    metric, human = aggregate_sides(aggregate)
    return Argument("aggregate", metric) if metric != DEFAULT_AGGREGATE else Argument("human_aggregate", human)


def aggregate_conventions(aggregate: str) -> dict[str, str]:
    """What a row's conventions record of ``aggregate``: nothing for the mean (as before the
    option); the metric's ``aggregate`` and, when not the mean, the ``human_aggregate``."""
    if aggregate == DEFAULT_AGGREGATE:
        return {}
    metric, human = aggregate_sides(aggregate)
    return {"aggregate": metric, **({"human_aggregate": human} if human != DEFAULT_AGGREGATE else {})}


def aggregate_fingerprint(fingerprint: str, aggregate: str) -> str:
    """The fingerprint of the cells as read by ``aggregate``: ``fingerprint`` itself for the mean
    (as before the option), else the sha256 of it and the aggregate -- so a median's rows never
    pass for the mean's."""
    import hashlib

    if aggregate == DEFAULT_AGGREGATE:
        return fingerprint
    return hashlib.sha256(f"{fingerprint}\x1eaggregate\x1f{aggregate}".encode()).hexdigest()


def system_inputs_parameter(protocol: str) -> dict[str, str]:
    return {"system_inputs": check_system_inputs(protocol)}


def check_annotator_resampling(coefficients, how: str, method_ok: bool, methods: str) -> None:
    """Annotator resampling (:mod:`analyses.annotators`) needs one of ``methods`` and the plain
    coefficients."""
    from metaeval.analyses.stats import validation, vocabulary

    if not method_ok or how not in vocabulary.ANNOTATOR_RESAMPLING:
        raise WarehouseError(Message(Argument("resample_annotators"),
                                     f" needs {methods} and one of {', '.join(vocabulary.ANNOTATOR_RESAMPLING)}"))
    if any(validation.coefficient_iv(c).name not in vocabulary.COEFFICIENTS
           or validation.coefficient_iv(c).variant not in (None, "b", "c") or validation.coefficient_iv(c).epsilon
           for c in coefficients):
        raise WarehouseError(Message(Argument("resample_annotators"), " works with pearson, spearman, kendall and "
                                     "kendall-c (without ", Argument("epsilon"), " or ", Argument("calibrate"), ")"))


def check_parametric(coefficients, method: str, parametric: str, message: str) -> None:
    """The Fisher interval and Williams' test have no form for the Kendall variants with ties, nor
    for the coefficients whose points are not independent pairs (:attr:`Coefficient.parametric`)."""
    from metaeval.analyses.stats import validation

    bad = [c for c in coefficients if not validation.coefficient_iv(c).parametric]
    if method == parametric and bad:
        raise WarehouseError(f"{message} {', '.join(bad)}; use a resampling method")


def check_partial(coefficients, *, resample_annotators: str | None = None, k_block: int | None = None,
                  sequential: bool = False) -> None:
    """What the partial coefficients (``NAME[control=GROUPS]``, :mod:`analyses.stats.partial`) do
    not offer: annotator resampling, early stopping (--k-block) and the sequential tests."""
    from metaeval.analyses.stats import validation

    controlled = [c for c in coefficients if validation.CONTROL in c]
    if not controlled:
        return
    for given, what in ((resample_annotators, "resample_annotators"), (k_block, "k_block"),
                        (sequential or None, "sequential")):
        if given is not None:
            raise WarehouseError(Message(Argument(what), " is not available with a partial correlation (",
                                         Argument("control"), f"); got {', '.join(controlled)}"))
