"""The correlation analyses run over a scope (``correlate``, ``ci``, ``compare``): each resolves
the scope (dataset, human judgment, metric globs, levels, coefficients), leaves out the metrics
too sparse to correlate (saying why), computes what the warehouse does not already hold and
returns an :class:`~metaeval.runs.engine.analyse.Outcome` whose :meth:`~metaeval.runs.engine.analyse.Outcome.rows`
are the latest rows of that setting (all through :func:`metaeval.runs.engine.analyse`). Their
families (:mod:`metaeval.runs.metrics.correlation_families`) call these; ``metaeval.runs.engine.api`` re-exports
them::

    from metaeval.runs import Warehouse
    from metaeval.runs.engine import api

    with Warehouse("warehouse.duckdb") as wh:
        out = api.ci(wh, "summeval", "expert.relevance", metrics=["rouge-*.f1"], levels=["system"])
        out.rows(wh)          # metric, level, coefficient, estimate, lower, upper, ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.metrics import comparisons, correlations, intervals
from metaeval.runs.engine import analyse as engine, parameters, runner, selection

Outcome = engine.Outcome


def _one(wh: Store, build: Callable[[selection.Scope], runner.Analysis], dataset: str, human: str,
         metrics: Sequence[str], levels: Sequence[str], coefficients: Sequence[str], control: str | None = None,
         **run) -> Outcome:
    """:func:`metaeval.runs.engine.analyse` of the one analysis ``build`` makes; ``control``: the
    coefficients as partial ones controlling for it (``NAME[control=...]``; the levels default
    to the global one, where they are defined)."""
    coefficients = selection.with_control(coefficients, control)
    if control is not None and not levels:
        levels = ("global",)
    outcome, = engine.analyse(wh, lambda scope: [build(scope)], dataset, human, metrics, levels, coefficients,
                              partial=True, **run)
    return outcome


def correlate(wh: Store, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
              coefficients: Sequence[str] = (), *, system_inputs: str = parameters.DEFAULT_SYSTEM_INPUTS,
              control: str | None = None, aggregate: str = parameters.DEFAULT_AGGREGATE,
              human_aggregate: str | None = None, **run) -> Outcome:
    """Correlations of the metrics with ``human`` (table ``correlations``); ``control="system"``
    (or an attribute's name): partial correlations at the global level, the coefficient labels
    ``NAME[control=system]`` (:mod:`metaeval.analyses.stats.partial`); ``aggregate="median"``: a
    metric's system score the median over its inputs (system level only; Graham's median: the
    human's stays its mean unless ``human_aggregate="median"``)."""
    aggregate = parameters.aggregate_value(aggregate, human_aggregate)
    return _one(wh, lambda scope: correlations.correlate_analysis(scope, system_inputs, aggregate), dataset, human,
                metrics,
                levels, coefficients, control, **run)


def ci(wh: Store, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
       coefficients: Sequence[str] = (), *, method: str = "boot-both", k: int = parameters.DEFAULT_K,
       alpha: float = parameters.DEFAULT_ALPHA,
       seed: int = parameters.DEFAULT_SEED, system_inputs: str = parameters.DEFAULT_SYSTEM_INPUTS,
       resample_annotators: str | None = None, control: str | None = None,
       aggregate: str = parameters.DEFAULT_AGGREGATE, human_aggregate: str | None = None,
       resample_clusters: str | None = None, replicates: str = "mean", **run) -> Outcome:
    """Confidence intervals of the correlations (table ``confidence_intervals``); ``replicates``
    "resample": each cell's runs of a metric (``scores.replicate``) drawn again in every resample
    (:mod:`metaeval.analyses.score_runs`; "mean", the default: the mean over the runs);
    ``resample_annotators`` ("cells" or "panel") re-draws the annotators in every resample;
    ``control``: of the partial correlations (as :func:`correlate`); ``resample_clusters``: the
    bootstrap draws the clusters of inputs that input attribute names."""
    aggregate = parameters.aggregate_value(aggregate, human_aggregate)
    if replicates not in intervals.REPLICATES:
        raise WarehouseError(Message(Argument("replicates", replicates), f" must be one of "
                                     f"{', '.join(intervals.REPLICATES)}"))
    resample = "resample" if replicates == "resample" else None
    return _one(wh, lambda scope: intervals.ci_analysis(scope, method, k, alpha, seed, system_inputs,
                                                        resample_annotators, aggregate, resample_clusters, resample),
                dataset, human, metrics, levels, coefficients, control, annotations=resample_annotators is not None,
                clusters=resample_clusters, runs=resample is not None, **run)


def compare(wh: Store, *args, **given) -> Outcome:
    """Tests of every ordered pair of metrics (table ``hypothesis_tests``). The parameters are
    the ``compare`` family's (:class:`metaeval.runs.metrics.correlation_families.Compare`: ``dataset, human,
    metrics, levels, coefficients`` positional, then ``method``, ``k``, ``alpha``, ``seed``,
    ``alternative``, ``correction``, ``correction_group``, ``k_block``, ``sequential``, ``k_max``,
    ``risk``, ``resample_annotators``, ``epsilon``, ``tie_calibration``, ``where``, ``control``,
    ``system_inputs``, ``aggregate``, ``jobs``, ``force``) as keywords or as one
    :class:`~metaeval.runs.engine.families.Parameters` of it, carried whole to the analysis
    (:func:`metaeval.runs.metrics.comparisons.analysis_of`). ``k_block``: early stopping of the permutation
    tests (mt-metrics-eval's protocol); ``sequential``: MMCTest, each pair resampled while its
    corrected decision is uncertain, up to ``k_max``, with resampling risk <= ``risk`` (``k`` is
    then not used); ``control``: tests of the partial correlations (as :func:`correlate`:
    Williams' t with n reduced by g - 1, permutation on residuals, paired bootstrap)."""
    from metaeval.runs.engine.families import family

    p = family("compare").parameters(*args, **given)
    coefficients = selection.with_tie_threshold(p.coefficients, p.epsilon, p.tie_calibration)
    return _one(wh, lambda scope: comparisons.analysis_of(scope, p), p.dataset, p.human, p.metrics, p.levels,
                coefficients, p.control, annotations=p.resample_annotators is not None, where=p.where, jobs=p.jobs,
                force=p.force, clusters=p.resample_clusters, **p.run)
