"""The one way to run an analysis and read what it stored: resolve, load, run, read the latest rows.

- :func:`analyse` resolves the scope (dataset, human judgment, metric globs, levels,
  coefficients), loads its data, leaves out the metrics too sparse to correlate (saying why),
  builds the analyses of that scope (every argument checked before anything is written), runs
  each (:func:`metaeval.runs.engine.runner.run`: only what the warehouse does not already hold) and
  returns one :class:`Outcome` per analysis;
- :func:`run_all` is its last step, for callers that resolved and loaded the scope themselves
  (``evaluate`` plans before an ingest commits);
- :func:`latest_rows` reads the latest rows of any registered result table
  (:data:`metaeval.schema.RESULT_TABLES`), filtered by column values and ordered by a scope;
- :func:`table_rows` reads every row (or the latest) of a result table for one dataset.

Every analysis family is served by these four::

    from metaeval.runs.engine import analyse as engine
    from metaeval.runs.metrics import ranking

    out, = engine.analyse(wh, lambda scope: [ranking.accuracy_analysis(scope)], "summeval", "expert.relevance",
                          levels=["system"], valid_levels=("system", "micro"))
    out.rows(wh)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from metaeval import schema
from metaeval.runs.engine import runner, selection, system_level
from metaeval.runs.engine.stored import table_rows  # noqa: F401  (results / export; light: runs/engine/stored.py)

if TYPE_CHECKING:
    import pandas as pd

    from metaeval.core import Store
    from metaeval.runs.engine.runner import ProgressFactory

#: the key columns a scope orders and filters: column -> the scope's attribute
SCOPE_COLUMNS = {"metric": "metrics", "metric_a": "metrics", "metric_b": "metrics", "level": "levels",
                 "coefficient": "coefficients"}


@dataclass(frozen=True)
class Outcome:
    """What one analysis did: its scope (after leaving out ``skipped`` metrics, with the reason
    for each), the analysis and the run's summary (``summary.up_to_date``: nothing was
    computed)."""

    scope: selection.Scope
    analysis: runner.Analysis
    summary: runner.RunSummary
    skipped: dict[str, str]

    def rows(self, wh: Store) -> pd.DataFrame:
        """The latest rows of this setting (scope and parameters), in the scope's order."""
        scope, analysis = self.scope, self.analysis
        in_scope = {c: tuple(getattr(scope, SCOPE_COLUMNS[c])) for c in analysis.key_columns if c in SCOPE_COLUMNS}
        return latest_rows(wh, analysis.table, scope.dataset, scope.human, order=scope, subset=scope.subset,
                           **in_scope, **analysis.params.columns())

    def __repr__(self) -> str:
        s = self.summary
        state = "up to date, nothing computed" if s.up_to_date else f"run {s.run_id} computed {s.computed}"
        skipped = f"; skipped {sorted(self.skipped)}" if self.skipped else ""
        return (f"Outcome({self.analysis.command} -> {self.analysis.table} on {self.scope.dataset}/{self.scope.human}: "
                f"{len(self.scope.metrics)} metrics x {len(self.scope.levels)} levels x "
                f"{len(self.scope.coefficients)} coefficients, {s.tasks} results, {state}{skipped})")


def analyse(wh: Store, build: Callable[[selection.Scope], Sequence[runner.Analysis]], dataset: str,
            human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (), coefficients: Sequence[str] = (),
            *, valid_levels: Sequence[str] | None = None, annotations: bool = False, where: Sequence = (),
            partial: bool = False, clusters: str | None = None, runs: bool = False,
            jobs: int = 1, force: bool = False, progress: ProgressFactory | None = None) -> list[Outcome]:
    """Run the analyses ``build`` makes of the resolved scope, in order (see the module
    docstring); ``valid_levels``: the levels the analyses accept (default the correlation
    levels); ``annotations``: they read every annotator's values of the human judgment;
    ``where``: only the cells of that subset (:func:`metaeval.runs.engine.selection.parse_where`);
    ``partial``: they accept partial coefficients (``NAME[control=GROUPS]``); ``clusters``: the
    input attribute whose clusters they resample (``--resample-clusters``); ``runs``: they read every
    run of the metrics' scores (``--replicates resample``)."""
    extra = {} if valid_levels is None else {"valid_levels": valid_levels}
    if partial:
        extra["partial"] = True
    scope = selection.resolve_scope(wh, dataset, human, metrics, levels, coefficients, where=where, **extra)
    data = selection.load_data(wh, scope, annotations=annotations, clusters=clusters, runs=runs)
    data = system_level.prepare(wh, scope, data, build)   # a system-level measure: its system scores
    scope, skipped = selection.without_sparse_metrics(data, scope)
    analyses = list(build(scope))   # every argument checked before the first run writes
    return run_all(wh, scope, analyses, data=data, skipped=skipped, jobs=jobs, force=force, progress=progress)


def run_all(wh: Store, scope: selection.Scope, analyses: Sequence[runner.Analysis], *,
            data: selection.Data | None = None, skipped: dict[str, str] | None = None, jobs: int = 1,
            force: bool = False, progress: ProgressFactory | None = None) -> list[Outcome]:
    """Run each of ``analyses`` over ``scope`` (``data``: its loaded data, read if None)."""
    return [Outcome(scope, a, runner.run(wh, scope, a, jobs=jobs, force=force, progress=progress, data=data),
                    dict(skipped or {}))
            for a in analyses]


def latest_rows(wh: Store, table: str, dataset: str, human: str | None = None, *,
                order: selection.Scope | None = None, subset: str | None = selection.EVERY_CELL,
                **filters: Any) -> pd.DataFrame:
    """The latest rows of ``table`` (:data:`metaeval.schema.RESULT_TABLES`) for ``dataset`` (and
    ``human``) whose columns have the values ``filters`` give (a tuple: any of its values; None:
    NULL); ``order``: sorted by that scope's order of metrics, levels and coefficients. ``subset``:
    the rows of that subset of cells (default every cell; None: every subset), in a table that has
    the ``subset`` column."""
    clauses, args = ["dataset = ?"], [dataset]
    if human is not None:
        clauses.append("human = ?")
        args.append(human)
    frame = wh.sql(f"SELECT * FROM {schema.latest_view(table)} WHERE {' AND '.join(clauses)}", args)
    if subset is not None and "subset" in frame.columns:
        frame = frame[frame["subset"] == subset]
    for column, value in filters.items():
        frame = frame[frame[column].isna()] if value is None else frame[frame[column].isin(
            value if isinstance(value, tuple) else (value,))]
    if order is not None:
        ranks = {c: {v: i for i, v in enumerate(getattr(order, a))} for c, a in SCOPE_COLUMNS.items()
                 if c in frame.columns}
        keys = [c for c in ranks]
        if keys:
            frame = frame.sort_values(keys, key=lambda col: col.map(ranks[col.name]))
    return frame.reset_index(drop=True)


def setting_rows(wh: Store, table: str, columns: dict[str, Any],
                 settings: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The latest rows of ``table`` whose columns equal ``columns`` (dataset, human and one
    setting; a ``subset`` label among them, else every cell), and the distinct ``settings``
    columns stored for that dataset and human (what a figure of another setting could draw
    instead). (``where`` is only ever a subset of cells: :class:`metaeval.runs.engine.selection.Subset`.)"""
    wh.require_dataset(columns["dataset"])
    view = schema.latest_view(table)
    if "subset" not in columns and runner.has_subset(wh, table):  # every cell, unless a subset is asked
        columns = {**columns, "subset": selection.EVERY_CELL}
    rows = wh.sql(f"SELECT * FROM {view} WHERE " + " AND ".join(f"{c} = ${c}" for c in columns), columns)
    stored = wh.sql(f"SELECT DISTINCT {', '.join(settings)} FROM {view} WHERE dataset = $dataset "
                    "AND human = $human ORDER BY ALL", {"dataset": columns["dataset"], "human": columns["human"]})
    return rows, stored
