"""The Python API of the persisted correlation analyses: one function per analysis.

``correlate``, ``ci`` and ``compare`` each resolve the scope (dataset, human judgment, metric
globs, levels, coefficients), leave out the metrics too sparse to correlate (saying why),
compute what the warehouse does not already hold (:func:`metaeval.runs.runner.run`) and return
an :class:`Outcome` whose :meth:`~Outcome.rows` are the latest rows of that setting. The
``metaeval correlate|ci|compare`` commands are these functions plus printing::

    from metaeval import Warehouse
    from metaeval.runs import api

    with Warehouse("warehouse.duckdb") as wh:
        out = api.ci(wh, "summeval", "expert.relevance", metrics=["rouge-*.f1"], levels=["system"])
        out.rows(wh)          # metric, level, coefficient, estimate, lower, upper, ...
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from metaeval import core
from metaeval.runs import runner, selection

if TYPE_CHECKING:
    from metaeval.runs.runner import ProgressFactory
    import pandas as pd

    from metaeval.core import Warehouse
    from metaeval.runs.evaluate import Evaluation

#: results table -> the view holding the latest row of each key
LATEST = {
    "correlations": "latest_correlations",
    "confidence_intervals": "latest_confidence_intervals",
    "hypothesis_tests": "latest_hypothesis_tests",
}


@dataclass(frozen=True)
class Outcome:
    """What one analysis command did: its scope (after leaving out ``skipped`` metrics, with
    the reason for each), the analysis and the run's summary (``summary.up_to_date``: nothing
    was computed)."""

    scope: selection.Scope
    analysis: runner.Analysis
    summary: runner.RunSummary
    skipped: dict[str, str]

    def rows(self, wh: Warehouse) -> pd.DataFrame:
        """The latest rows of this setting (scope and parameters), in the scope's order."""
        return latest_rows(wh, self.scope, self.analysis)

    def __repr__(self) -> str:
        s = self.summary
        state = "up to date, nothing computed" if s.up_to_date else f"run {s.run_id} computed {s.computed}"
        skipped = f"; skipped {sorted(self.skipped)}" if self.skipped else ""
        return (f"Outcome({self.analysis.command} -> {self.analysis.table} on {self.scope.dataset}/{self.scope.human}: "
                f"{len(self.scope.metrics)} metrics x {len(self.scope.levels)} levels x "
                f"{len(self.scope.coefficients)} coefficients, {s.tasks} results, {state}{skipped})")


def analyse(wh: Warehouse, build: Callable[[selection.Scope], runner.Analysis], dataset: str, human: str,
            metrics: Sequence[str] = (), levels: Sequence[str] = (), coefficients: Sequence[str] = (), *,
            jobs: int = 1, force: bool = False, progress: ProgressFactory | None = None, annotations: bool = False) -> Outcome:
    """Run the analysis that ``build`` makes of the resolved scope (see the module docstring);
    ``annotations``: it reads every annotator's values of the human judgment."""
    scope = selection.resolve_scope(wh, dataset, human, metrics, levels, coefficients)
    data = selection.load_data(wh, scope, annotations=annotations)
    scope, skipped = selection.without_sparse_metrics(data, scope)
    analysis = build(scope)
    summary = runner.run(wh, scope, analysis, jobs=jobs, force=force, progress=progress, data=data)
    return Outcome(scope, analysis, summary, skipped)


def correlate(wh: Warehouse, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
              coefficients: Sequence[str] = (), *, system_inputs: str = runner.DEFAULT_SYSTEM_INPUTS,
              **run) -> Outcome:
    """Correlations of the metrics with ``human`` (table ``correlations``)."""
    return analyse(wh, lambda scope: runner.correlate_analysis(scope, system_inputs), dataset, human, metrics,
                   levels, coefficients, **run)


def ci(wh: Warehouse, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
       coefficients: Sequence[str] = (), *, method: str = "boot-both", k: int = 1000, alpha: float = 0.05,
       seed: int = runner.DEFAULT_SEED, system_inputs: str = runner.DEFAULT_SYSTEM_INPUTS,
       resample_annotators: str | None = None, **run) -> Outcome:
    """Confidence intervals of the correlations (table ``confidence_intervals``);
    ``resample_annotators`` ("cells" or "panel") re-draws the annotators in every resample."""
    return analyse(wh, lambda scope: runner.ci_analysis(scope, method, k, alpha, seed, system_inputs,
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
    return analyse(wh, build, dataset, human, metrics, levels, coefficients,
                   annotations=resample_annotators is not None, **run)


def latest_rows(wh: Warehouse, scope: selection.Scope, analysis: runner.Analysis) -> pd.DataFrame:
    """The latest rows of ``analysis``'s table within ``scope`` and with its parameters, in the
    scope's order of metrics, levels and coefficients."""
    frame = wh.sql(f"SELECT * FROM {LATEST[analysis.table]} WHERE dataset = ? AND human = ?",
                   [scope.dataset, scope.human])
    in_scope = frame["level"].isin(scope.levels) & frame["coefficient"].isin(scope.coefficients)
    for column in ("metric", "metric_a", "metric_b"):
        if column in frame.columns:
            in_scope &= frame[column].isin(scope.metrics)
    frame = frame[in_scope]
    for column, value in analysis.param_columns.items():
        frame = frame[frame[column].isna()] if value is None else frame[frame[column] == value]
    order = {"metric": list(scope.metrics), "metric_a": list(scope.metrics), "metric_b": list(scope.metrics),
             "level": list(scope.levels), "coefficient": list(scope.coefficients)}
    keys = [c for c in analysis.key_columns if c in order]
    rank = lambda col: col.map({v: i for i, v in enumerate(order[col.name])})  # noqa: E731
    return frame.sort_values(keys, key=rank).reset_index(drop=True)


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
