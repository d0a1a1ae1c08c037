"""The Python API of the persisted correlation analyses: one function per analysis.

``correlate``, ``ci`` and ``compare`` each resolve the scope (dataset, human judgment, metric
globs, levels, coefficients), leave out the metrics too sparse to correlate (saying why),
compute what the warehouse does not already hold and return an
:class:`~metaeval.runs.engine.Outcome` whose :meth:`~metaeval.runs.engine.Outcome.rows` are the
latest rows of that setting (all through :func:`metaeval.runs.engine.analyse`). The
``metaeval correlate|ci|compare`` commands are these functions plus printing::

    from metaeval.runs import Warehouse
    from metaeval.runs import api

    with Warehouse("warehouse.duckdb") as wh:
        out = api.ci(wh, "summeval", "expert.relevance", metrics=["rouge-*.f1"], levels=["system"])
        out.rows(wh)          # metric, level, coefficient, estimate, lower, upper, ...
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from metaeval import core
from metaeval.runs import comparisons, correlations, engine, intervals, parameters, runner, selection

if TYPE_CHECKING:
    import pandas as pd

    from metaeval.runs.evaluate import Evaluation

Outcome = engine.Outcome


def _one(wh: Warehouse, build: Callable[[selection.Scope], runner.Analysis], dataset: str, human: str,
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


def correlate(wh: Warehouse, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
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


def ci(wh: Warehouse, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
       coefficients: Sequence[str] = (), *, method: str = "boot-both", k: int = parameters.DEFAULT_K,
       alpha: float = parameters.DEFAULT_ALPHA,
       seed: int = parameters.DEFAULT_SEED, system_inputs: str = parameters.DEFAULT_SYSTEM_INPUTS,
       resample_annotators: str | None = None, control: str | None = None,
       aggregate: str = parameters.DEFAULT_AGGREGATE, human_aggregate: str | None = None,
       resample_clusters: str | None = None, **run) -> Outcome:
    """Confidence intervals of the correlations (table ``confidence_intervals``);
    ``resample_annotators`` ("cells" or "panel") re-draws the annotators in every resample;
    ``control``: of the partial correlations (as :func:`correlate`); ``resample_clusters``: the
    bootstrap draws the clusters of inputs that input attribute names."""
    aggregate = parameters.aggregate_value(aggregate, human_aggregate)
    return _one(wh, lambda scope: intervals.ci_analysis(scope, method, k, alpha, seed, system_inputs,
                                                        resample_annotators, aggregate, resample_clusters),
                dataset, human, metrics, levels, coefficients, control, annotations=resample_annotators is not None,
                clusters=resample_clusters, **run)


def compare(wh: Warehouse, *args, **given) -> Outcome:
    """Tests of every ordered pair of metrics (table ``hypothesis_tests``). The parameters are
    the ``compare`` family's (:class:`metaeval.runs.declarations.Compare`: ``dataset, human,
    metrics, levels, coefficients`` positional, then ``method``, ``k``, ``alpha``, ``seed``,
    ``alternative``, ``correction``, ``correction_group``, ``k_block``, ``sequential``, ``k_max``,
    ``risk``, ``resample_annotators``, ``epsilon``, ``tie_calibration``, ``where``, ``control``,
    ``system_inputs``, ``aggregate``, ``jobs``, ``force``) as keywords or as one
    :class:`~metaeval.runs.families.Parameters` of it, carried whole to the analysis
    (:func:`metaeval.runs.comparisons.analysis_of`). ``k_block``: early stopping of the permutation
    tests (mt-metrics-eval's protocol); ``sequential``: MMCTest, each pair resampled while its
    corrected decision is uncertain, up to ``k_max``, with resampling risk <= ``risk`` (``k`` is
    then not used); ``control``: tests of the partial correlations (as :func:`correlate`:
    Williams' t with n reduced by g - 1, permutation on residuals, paired bootstrap)."""
    from metaeval.runs.families import family

    p = family("compare").parameters(*args, **given)
    coefficients = selection.with_tie_threshold(p.coefficients, p.epsilon, p.tie_calibration)
    return _one(wh, lambda scope: comparisons.analysis_of(scope, p), p.dataset, p.human, p.metrics, p.levels,
                coefficients, p.control, annotations=p.resample_annotators is not None, where=p.where, jobs=p.jobs,
                force=p.force, clusters=p.resample_clusters, **p.run)


class Warehouse(core.Store):
    """A :class:`metaeval.Store` with the analyses as methods (``metaeval.runs.Warehouse``).

    The storage core does not know the analyses (it sits below them), so they are added here::

        from metaeval.runs import Warehouse

        with Warehouse("warehouse.duckdb") as wh:
            wh.add_scores("realsumm", "mymetric.csv")
            ev = wh.evaluate("realsumm", "litepyramid.recall", metrics=["mymetric"])
            ev.table                      # metric, level, coefficient, correlation, lower, upper, rank, ...
            wh.ci("realsumm", "litepyramid.recall", metrics=["mymetric"], levels=["system"])   # a DataFrame

    Every analysis command has its method, which runs (or reuses) and persists as the command
    does and returns the latest rows of its setting: ``correlate``, ``ci``, ``compare``,
    ``accuracy``, ``systems_agreement``, ``winners``, ``replicability``, ``annotators``,
    ``agreement``, ``judges``, ``simulate_coverage``, ``simulate_power``, ``normality``, ``rank_tasks``,
    ``detection``, ``categories`` (and ``evaluate``). A command writing several tables returns
    ``{table: rows}``.

    Every other registered analysis family (:data:`metaeval.runs.families.FAMILIES`) is a method
    too, by its Python name (``system-tests`` -> ``wh.system_tests(...)``): its
    :meth:`~metaeval.runs.families.Family.run` (the declared options checked, defaults filled,
    then ``compute``), with no method to write here.
    """

    def __getattr__(self, name: str):
        """``wh.<family>(...)``: :meth:`Family.run` of the registered family ``name`` (``_`` for
        ``-``) on this warehouse."""
        if name.startswith("_"):
            raise AttributeError(name)
        from metaeval.runs.families import FAMILIES

        key = name.replace("_", "-")
        if key in FAMILIES and FAMILIES[key].python_name == name:
            return functools.partial(FAMILIES[key].run, self)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def add_scores(self, dataset: str, sources, **options):
        """Ingest score tables (paths or DataFrames): :func:`metaeval.runs.evaluate.add_scores`."""
        from metaeval.runs import evaluate

        return evaluate.add_scores(self, dataset, sources, **options)

    def evaluate(self, dataset: str, human: str, scores=(), **options) -> Evaluation:
        """:func:`metaeval.runs.evaluate.evaluate` on this warehouse."""
        from metaeval.runs import evaluate

        return evaluate.evaluate(self, dataset, human, scores, **options)

    def evaluate_judge(self, dataset: str, preferences, **options):
        """:func:`metaeval.runs.evaluate.evaluate_judge`: ingest a new judge's preference file and
        judge it with the stored judges against the human preference."""
        from metaeval.runs import evaluate

        return evaluate.evaluate_judge(self, dataset, preferences, **options)

    def correlate(self, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
                  coefficients: Sequence[str] = (), **options) -> pd.DataFrame:
        """:func:`correlate`'s rows (table ``correlations``)."""
        return correlate(self, dataset, human, metrics, levels, coefficients, **options).rows(self)

    def ci(self, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
           coefficients: Sequence[str] = (), **options) -> pd.DataFrame:
        """:func:`ci`'s rows (table ``confidence_intervals``), with a Kendall interval's share of
        pairs ranked wrongly (:func:`metaeval.runs.intervals.with_pairs_wrong`)."""
        return intervals.with_pairs_wrong(ci(self, dataset, human, metrics, levels, coefficients, **options).rows(self))

    def compare(self, *args, **given) -> pd.DataFrame:
        """:func:`compare`'s rows of its correction (table ``hypothesis_tests``)."""
        out = compare(self, *args, **given)
        rows = out.rows(self)
        params = out.analysis.params
        return rows[(rows["correction"] == params.correction)
                    & (rows["correction_group"] == params.correction_group)].reset_index(drop=True)

    def accuracy(self, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
                 coefficients: Sequence[str] = (), **options) -> dict[str, pd.DataFrame]:
        """:func:`metaeval.runs.ranking.accuracy`: the rows of each table it wrote."""
        from metaeval.runs import ranking

        return _tables(self, ranking.accuracy(self, dataset, human, metrics, levels, coefficients, **options))

    def systems_agreement(self, dataset: str, human: str, metrics: Sequence[str] = (), tests: Sequence[str] = (),
                          **options) -> pd.DataFrame:
        """:func:`metaeval.runs.ranking.systems_agreement`'s rows (table ``system_agreement``)."""
        import pandas as pd

        from metaeval.runs import ranking

        outcomes = ranking.systems_agreement(self, dataset, human, metrics, tests, **options)
        return pd.concat([o.rows(self) for o in outcomes], ignore_index=True)

    def winners(self, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
                coefficients: Sequence[str] = (), **options) -> pd.DataFrame:
        """:func:`metaeval.runs.ranking.winners`' rows (table ``winners``; reads stored tests)."""
        from metaeval.runs import ranking

        return ranking.winners(self, dataset, human, metrics, levels, coefficients, **options)[1]

    def replicability(self, on: Sequence[tuple[str, str]], metrics: Sequence[str] = (), **options) -> pd.DataFrame:
        """:func:`metaeval.runs.ranking.replicability`'s rows over the (dataset, human) pairs ``on``."""
        from metaeval.runs import ranking

        return ranking.replicability(self, on, metrics, **options)[1]

    def annotators(self, dataset: str, humans: Sequence[str] = (), levels: Sequence[str] = (),
                   coefficients: Sequence[str] = (), **options) -> dict[str, pd.DataFrame]:
        """:func:`metaeval.runs.annotators.annotators`: ``annotator_agreement`` and ``human_ceiling`` rows."""
        from metaeval.runs import annotators

        summaries = annotators.annotators(self, dataset, humans, levels, coefficients, **options)
        agreement, ceiling = annotators.latest(self, dataset, [s.human for s in summaries])
        return {"annotator_agreement": agreement, "human_ceiling": ceiling}

    def judges(self, dataset: str, humans: Sequence[str] = (), judges: Sequence[str] = (),
               **options) -> dict[str, pd.DataFrame]:
        """:func:`metaeval.runs.judges.judges`: ``judge_statistics``, ``judge_tests`` and
        ``preference_rankings`` rows of the human judges ``humans`` (globs; default all)."""
        from metaeval.runs import judges as runs

        summary = runs.judges(self, dataset, humans, judges, **options)
        return runs.latest(self, dataset, summary.human, list(summary.tied_majority))

    def agreement(self, dataset: str, metrics: Sequence[str] = (), **options) -> dict[str, pd.DataFrame]:
        """:func:`metaeval.runs.agreement.run_agreement`: ``score_range_agreement`` and
        ``property_agreement`` rows of its setting."""
        from metaeval.runs import agreement

        scope = agreement.resolve(self, dataset, metrics)
        summary = agreement.run_agreement(self, scope, **options)
        alpha, significant_only = options.get("alpha", 0.05), options.get("significant_only", False)
        return {"score_range_agreement": agreement.latest_rows(self, scope, options.get("normalisation", "input"),
                                                               alpha, significant_only),
                "property_agreement": agreement.latest_property_rows(self, scope, alpha, significant_only),
                **({} if summary.curves is None else {"agreement_curves": summary.curves})}

    def simulate_coverage(self, dataset: str, human: str, metrics: Sequence[str], **options) -> pd.DataFrame:
        """:func:`metaeval.runs.simulation.simulate_coverage`'s rows (table ``ci_coverage``)."""
        from metaeval.runs import simulation

        return simulation.with_coverage_tests(simulation.simulate_coverage(self, dataset, human, metrics, **options).rows)

    def simulate_power(self, dataset: str, human: str, **options) -> pd.DataFrame:
        """:func:`metaeval.runs.simulation.simulate_power`'s rows (table ``power``)."""
        from metaeval.runs import simulation

        return simulation.simulate_power(self, dataset, human, **options).rows

    def normality(self, dataset: str, measures: Sequence[str] = (), **options) -> pd.DataFrame:
        """:func:`metaeval.runs.simulation.normality`'s rows (table ``normality``)."""
        from metaeval.runs import simulation

        simulation.normality(self, dataset, measures, **options)
        return simulation.latest_normality(self, dataset, measures)

    def detection(self, dataset: str, human: str, metrics: Sequence[str] = (), *, positive: float,
                  **options) -> dict[str, pd.DataFrame]:
        """:func:`metaeval.runs.detection.detection`: the ``detection`` rows of its setting (per
        metric and group, the macro average last) and the ``detection_tests`` rows (empty with one
        metric or ``tests=False``)."""
        from metaeval.runs import detection

        out = detection.detection(self, dataset, human, metrics, positive=positive, **options)
        return {"detection": out.rows, "detection_tests": out.tests}
    def categories(self, dataset: str, human: str, categories=(), ablations=(), metrics: Sequence[str] = (),
                   levels: Sequence[str] = (), coefficients: Sequence[str] = (), **options) -> pd.DataFrame:
        """:func:`metaeval.runs.categories.categories`' rows (table ``error_categories``): each
        metric's correlation with each error category (``categories``: category -> human measure)
        and the drop of its correlation with ``human`` when the category is ignored (``ablations``:
        category -> the judgment without it)."""
        from metaeval.runs import categories as family

        out = family.categories(self, dataset, human, categories, ablations, metrics, levels, coefficients, **options)
        return family.rows(self, out)

    def rank_tasks(self, tasks: Sequence[str] = (), metrics: Sequence[str] = (), task_set: str | None = None,
                   datasets: Sequence[str] = (), human: str | None = None, **options) -> pd.DataFrame:
        """:func:`metaeval.runs.task_ranking.rank_tasks` of the tasks written
        ``DATASET:HUMAN:LEVEL:COEFFICIENT[:WEIGHT]`` and of a named ``task_set`` (``"wmt24"``) over
        ``datasets`` (one per language pair) judged by ``human``."""
        from metaeval.runs import task_ranking

        specs = task_ranking.specs_of(tasks, task_set, datasets, human)
        return task_ranking.rank_tasks(self, specs, metrics, **options).rows


def _tables(wh: Warehouse, outcomes: Sequence[Outcome]) -> dict[str, pd.DataFrame]:
    """Each outcome's latest rows by its table."""
    return {o.analysis.table: o.rows(wh) for o in outcomes}
