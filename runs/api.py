"""The Python API of the persisted correlation analyses: one function per analysis.

``correlate``, ``ci`` and ``compare`` each resolve the scope (dataset, human judgment, metric
globs, levels, coefficients), leave out the metrics too sparse to correlate (saying why),
compute what the warehouse does not already hold and return an
:class:`~metaeval.runs.engine.Outcome` whose :meth:`~metaeval.runs.engine.Outcome.rows` are the
latest rows of that setting (all through :func:`metaeval.runs.engine.analyse`). The
``metaeval correlate|ci|compare`` commands are these functions plus printing::

    from metaeval import Warehouse
    from metaeval.runs import api

    with Warehouse("warehouse.duckdb") as wh:
        out = api.ci(wh, "summeval", "expert.relevance", metrics=["rouge-*.f1"], levels=["system"])
        out.rows(wh)          # metric, level, coefficient, estimate, lower, upper, ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from metaeval import core
from metaeval.runs import engine, runner, selection

if TYPE_CHECKING:
    import pandas as pd

    from metaeval.core import Warehouse
    from metaeval.runs.evaluate import Evaluation

Outcome = engine.Outcome


def _one(wh: Warehouse, build: Callable[[selection.Scope], runner.Analysis], dataset: str, human: str,
         metrics: Sequence[str], levels: Sequence[str], coefficients: Sequence[str], **run) -> Outcome:
    """:func:`metaeval.runs.engine.analyse` of the one analysis ``build`` makes."""
    outcome, = engine.analyse(wh, lambda scope: [build(scope)], dataset, human, metrics, levels, coefficients, **run)
    return outcome


def correlate(wh: Warehouse, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
              coefficients: Sequence[str] = (), *, system_inputs: str = runner.DEFAULT_SYSTEM_INPUTS,
              **run) -> Outcome:
    """Correlations of the metrics with ``human`` (table ``correlations``)."""
    return _one(wh, lambda scope: runner.correlate_analysis(scope, system_inputs), dataset, human, metrics,
                   levels, coefficients, **run)


def ci(wh: Warehouse, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
       coefficients: Sequence[str] = (), *, method: str = "boot-both", k: int = 1000, alpha: float = 0.05,
       seed: int = runner.DEFAULT_SEED, system_inputs: str = runner.DEFAULT_SYSTEM_INPUTS,
       resample_annotators: str | None = None, **run) -> Outcome:
    """Confidence intervals of the correlations (table ``confidence_intervals``);
    ``resample_annotators`` ("cells" or "panel") re-draws the annotators in every resample."""
    return _one(wh, lambda scope: runner.ci_analysis(scope, method, k, alpha, seed, system_inputs,
                                                        resample_annotators),
                   dataset, human, metrics, levels, coefficients, annotations=resample_annotators is not None, **run)


def compare(wh: Warehouse, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
            coefficients: Sequence[str] = (), *, method: str = "perm-both", k: int = 1000, alpha: float = 0.05,
            seed: int = runner.DEFAULT_SEED, alternative: str = runner.DEFAULT_ALTERNATIVE,
            correction: str = runner.DEFAULT_CORRECTION, correction_group: str = runner.DEFAULT_CORRECTION_GROUP,
            k_block: int | None = None,
            system_inputs: str = runner.DEFAULT_SYSTEM_INPUTS, resample_annotators: str | None = None,
            sequential: bool = False, k_max: int = runner.DEFAULT_K_MAX, risk: float = runner.DEFAULT_RISK,
            **run) -> Outcome:
    """Tests of every ordered pair of metrics (table ``hypothesis_tests``); ``k_block``: early
    stopping of the permutation tests (mt-metrics-eval's protocol); ``sequential``: MMCTest, each
    pair resampled while its corrected decision is uncertain, up to ``k_max``, with resampling
    risk <= ``risk`` (``k`` is then not used)."""
    build = lambda scope: runner.compare_analysis(scope, method, k_max if sequential else k,  # noqa: E731
                                                  alpha, seed, alternative, correction, correction_group, k_block,
                                                  system_inputs, resample_annotators=resample_annotators,
                                                  risk=risk if sequential else None)
    return _one(wh, build, dataset, human, metrics, levels, coefficients,
                   annotations=resample_annotators is not None, **run)


class AnalysisWarehouse(core.Warehouse):
    """A :class:`metaeval.Warehouse` with the analyses as methods (``metaeval.runs.Warehouse``).

    The storage core does not know the analyses (it sits below them), so they are added here::

        from metaeval.runs import Warehouse

        with Warehouse("warehouse.duckdb") as wh:
            wh.add_scores("realsumm", "mymetric.csv")
            ev = wh.evaluate("realsumm", "litepyramid.recall", metrics=["mymetric"])
            ev.table                      # metric, level, coefficient, correlation, lower, upper, rank, ...
            wh.ci("realsumm", "litepyramid.recall", metrics=["mymetric"], levels=["system"])   # a DataFrame

    ``correlate``, ``ci`` and ``compare`` run (or reuse) and persist as the commands do, and
    return the latest rows of their setting.
    """

    def add_scores(self, dataset: str, sources, **options):
        """Ingest score tables (paths or DataFrames): :func:`metaeval.runs.evaluate.add_scores`."""
        from metaeval.runs import evaluate

        return evaluate.add_scores(self, dataset, sources, **options)

    def evaluate(self, dataset: str, human: str, scores=(), **options) -> Evaluation:
        """:func:`metaeval.runs.evaluate.evaluate` on this warehouse."""
        from metaeval.runs import evaluate

        return evaluate.evaluate(self, dataset, human, scores, **options)

    def correlate(self, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
                  coefficients: Sequence[str] = (), **options) -> pd.DataFrame:
        """:func:`correlate`'s rows (table ``correlations``)."""
        return correlate(self, dataset, human, metrics, levels, coefficients, **options).rows(self)

    def ci(self, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
           coefficients: Sequence[str] = (), **options) -> pd.DataFrame:
        """:func:`ci`'s rows (table ``confidence_intervals``)."""
        return ci(self, dataset, human, metrics, levels, coefficients, **options).rows(self)

    def compare(self, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
                coefficients: Sequence[str] = (), **options) -> pd.DataFrame:
        """:func:`compare`'s rows of its correction (table ``hypothesis_tests``)."""
        out = compare(self, dataset, human, metrics, levels, coefficients, **options)
        rows = out.rows(self)
        extra = out.analysis.extra_parameters
        return rows[(rows["correction"] == extra["correction"])
                    & (rows["correction_group"] == extra["correction_group"])].reset_index(drop=True)
