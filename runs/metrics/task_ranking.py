"""``rank-tasks``: metrics ranked over several tasks at once (WMT23/24), persisted in
``task_rankings`` (see :mod:`metaeval.analyses.task_ranking`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
import pandas as pd

from metaeval.analyses import task_ranking, task_tests
from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError
from metaeval.analyses.stats import vocabulary
from metaeval.runs.engine import bookkeeping, parameters, selection
from metaeval.runs.engine.parameters import Params


@dataclass(frozen=True)
class TaskSpec:
    dataset: str
    human: str
    level: str
    coefficient: str
    weight: float = 1.0
    #: the test between metrics (``task_tests.TESTS``): perm-both, or pairs (WMT24's acc-eq)
    test: str = "perm-both"
    #: a system's score over its inputs (a system-level task; :func:`with_aggregate`)
    aggregate: str = parameters.DEFAULT_AGGREGATE

    @property
    def name(self) -> str:
        return f"{self.dataset}:{self.human}:{self.level}:{self.coefficient}"

    def as_dict(self) -> dict:
        """The spec as stored (``test`` and ``aggregate`` only when not the default: earlier specs
        unchanged)."""
        out = vars(self).copy()
        if out["test"] == "perm-both":
            del out["test"]
        if out["aggregate"] == parameters.DEFAULT_AGGREGATE:
            del out["aggregate"]
        return out


def with_aggregate(specs: Sequence[TaskSpec], aggregate: str = parameters.DEFAULT_AGGREGATE) -> list[TaskSpec]:
    """``specs`` with every system-level task's system scores aggregated by ``aggregate`` (the
    median: Graham 2015); the other levels have no system score and are unchanged. The median
    needs a system-level task and is refused for spa (soft pairwise accuracy's tests between
    metrics are the mean's) and the coefficients that compute their own system means."""
    from metaeval.analyses.stats import validation

    if aggregate not in parameters.AGGREGATE_VALUES:
        raise WarehouseError(Message("unknown ", Argument("aggregate", aggregate),
                                     f"; choose from {', '.join(parameters.AGGREGATES)}"))
    if aggregate == parameters.DEFAULT_AGGREGATE:
        return list(specs)
    system = [s for s in specs if s.level == "system"]
    if not system:
        raise WarehouseError(Message(Argument("aggregate", aggregate), " is a system-level notion: give a "
                                     "system-level task, e.g. ", Argument("tasks", ["D:HUMAN:system:pearson"])))
    for s in system:
        if s.coefficient == task_tests.SPA:
            raise WarehouseError(Message(Argument("aggregate", aggregate), f" is not offered for the spa task {s.name} "
                                         "(its tests between metrics are the mean's): drop ", Argument("aggregate"),
                                         " or the task"))
        try:
            validation.aggregate_iv(s.coefficient, aggregate)
        except ValueError as exc:
            raise WarehouseError(Message(Argument("aggregate", aggregate), f": {exc}")) from None
    return [replace(s, aggregate=aggregate) if s.level == "system" else s for s in specs]


#: Task sets by name: mt-metrics-eval's ``tasks.WMT24`` (per language pair, i.e. per dataset:
#: system-level soft pairwise accuracy and segment-level acc-eq averaged over items with the
#: permutation test over pairs; uniform weights).
TASK_SETS = ("wmt24",)


def task_set_specs(name: str, datasets: Sequence[str], human: str) -> list[TaskSpec]:
    """The tasks of the named set over ``datasets`` (one per language pair) judged by ``human``."""
    if name not in TASK_SETS:
        raise WarehouseError(Message(Argument("task_set", name), f": choose from {', '.join(TASK_SETS)}"))
    if not datasets or not human:
        raise WarehouseError(Message(Argument("task_set", name), " needs ", Argument("datasets", ["D"]),
                                     " (one per language pair) and ", Argument("human", placeholder="HUMAN")))
    out = []
    for d in sorted(dict.fromkeys(datasets)):   # mt-metrics-eval sorts the language pairs
        out.append(TaskSpec(d, human, "system", task_tests.SPA))
        out.append(TaskSpec(d, human, "summary", task_tests.ACC_EQ, test="pairs"))
    return out


def specs_of(tasks: Sequence[str] = (), task_set: str | None = None, datasets: Sequence[str] = (),
             human: str | None = None) -> list[TaskSpec]:
    """The tasks written ``DATASET:HUMAN:LEVEL:COEFFICIENT[:WEIGHT]``, then those of the named set."""
    specs = [parse_task(t) for t in tasks]
    if task_set is not None:
        specs += task_set_specs(task_set, datasets, human)
    elif datasets or human:
        given = Argument("datasets", list(datasets)) if datasets else Argument("human", human)
        raise WarehouseError(Message(given, " is for a named task set: add ", Argument("task_set", placeholder="NAME")))
    if not specs:
        raise WarehouseError(Message("give at least one ", Argument("tasks"), " or a ",
                                     Argument("task_set", placeholder="NAME")))
    return specs


def parse_task(text: str) -> TaskSpec:
    """``DATASET:HUMAN:LEVEL:COEFFICIENT[:WEIGHT]``."""
    parts = text.split(":")
    if len(parts) not in (4, 5) or not all(parts):
        raise WarehouseError(Message(Argument("tasks", [text]), ": expected DATASET:HUMAN:LEVEL:COEFFICIENT[:WEIGHT]"))
    weight = 1.0
    if len(parts) == 5:
        try:
            weight = float(parts[4])
        except ValueError:
            weight = float("nan")
        if not (np.isfinite(weight) and weight > 0):
            raise WarehouseError(Message(Argument("tasks", [text]), ": the weight must be a number > 0"))
    if parts[2] not in vocabulary.LEVELS:
        raise WarehouseError(Message(Argument("tasks", [text]), f": level must be one of {', '.join(vocabulary.LEVELS)}"))
    if parts[3] == task_tests.SPA:
        if parts[2] != "system":
            raise WarehouseError(Message(Argument("tasks", [text]), ": spa (soft pairwise accuracy) is a system-level task"))
        return TaskSpec(parts[0], parts[1], parts[2], parts[3], weight)
    coefficient = selection.coefficient_choices([parts[3]])[0]
    return TaskSpec(parts[0], parts[1], parts[2], coefficient, weight)


@dataclass(frozen=True)
class TaskRankingParams(Params):
    """A ranking of the metrics over several tasks (table ``task_rankings``, written by
    :func:`rank_tasks`, not the run loop): ``task_set`` names the tasks (a digest of their specs)."""

    table: ClassVar[str] = "task_rankings"
    task_set: str
    k: int
    seed: int
    alpha: float


@dataclass(frozen=True)
class Outcome:
    run_id: int | None
    rows: pd.DataFrame


def rank_tasks(wh: Store, specs: Sequence[TaskSpec], metric_globs: Sequence[str] = (), *, k: int = parameters.DEFAULT_K,
               seed: int = parameters.DEFAULT_SEED, alpha: float = 0.05, force: bool = False,
               aggregate: str = parameters.DEFAULT_AGGREGATE) -> Outcome:
    """Rank the metrics present in every task; reuse the latest ranking of the same tasks,
    parameters and data (``force`` recomputes). ``aggregate`` "median": the system-level tasks'
    system scores are medians (:func:`with_aggregate`; in the specs stored, the fingerprint, the
    run's parameters and the conventions)."""
    if len(specs) < 1:
        raise WarehouseError(Message("give at least one ", Argument("tasks")))
    specs = with_aggregate(specs, aggregate)
    median = next((s.aggregate for s in specs if s.aggregate != parameters.DEFAULT_AGGREGATE), None)
    tasks, measures_fp = [], hashlib.sha256()
    for spec in specs:
        # SPA reads the segment cells as any coefficient does: the scope is checked with pearson
        coefficient = "pearson" if spec.coefficient == task_tests.SPA else spec.coefficient
        scope = selection.resolve_scope(wh, spec.dataset, spec.human, metric_globs, [spec.level], [coefficient])
        data = selection.load_data(wh, scope)
        scope, _ = selection.without_sparse_metrics(data, scope)
        metrics = {m: data.values[m] for m in scope.metrics}
        tasks.append(task_ranking.TaskData(spec.name, metrics, data.values[spec.human], spec.level, spec.coefficient,
                                           spec.weight, spec.test, spec.aggregate))
        measures_fp.update(selection.data_fingerprint(data, scope.measures).encode())
    common = [m for m in tasks[0].metrics if all(m in t.metrics for t in tasks)]
    if len(common) < 2:
        raise WarehouseError(f"ranking needs at least two metrics present in every task; common: {common}")
    spec_json = json.dumps([s.as_dict() for s in specs], sort_keys=True)
    task_set = hashlib.sha256(spec_json.encode()).hexdigest()[:16]
    fingerprint = parameters.aggregate_fingerprint(measures_fp.hexdigest(), median or parameters.DEFAULT_AGGREGATE)
    params = TaskRankingParams(task_set, k, seed, alpha)
    if not force:
        prev = wh.con.execute(
            f"SELECT * FROM {params.view} WHERE task_set = $task_set AND k = $k AND seed = $seed "
            f"AND alpha = $alpha AND fingerprint = $fp AND {bookkeeping.THIS_VERSION} ORDER BY rank",
            {**params.columns(), "fp": fingerprint, **bookkeeping.version_parameter()}).df()
        if set(prev["metric"]) == set(common):
            return Outcome(None, prev)
    r = task_ranking.rank_tasks(tasks, k=k, seed=seed, alpha=alpha)
    recorded = {"tasks": [s.as_dict() for s in specs], "metrics": list(r.metrics), **params.recorded(),
                **({"aggregate": median} if median else {})}
    run_id = bookkeeping.start_run(wh, "rank-tasks", recorded, seed, fingerprint, len(r.metrics))
    with bookkeeping.finishing(wh, run_id):
        rows = []
        for i, m in enumerate(r.metrics):
            rows.append({
                "run_id": run_id, "tasks": spec_json, "metric": m,
                "average": bookkeeping.as_float(r.average[i]),
                "correlations": json.dumps([bookkeeping.as_float(c) for c in r.correlations[:, i]]),
                # an undefined average never ranks, clusters or wins (NULL)
                "rank": None if np.isnan(r.rank[i]) else int(r.rank[i]),
                "cluster": None if np.isnan(r.cluster[i]) else int(r.cluster[i]),
                "winner": bool(r.is_winner[i]) if r.winner_known[i] else None,
                "n_beaten_by": int(r.n_beaten_by[i]),
                "p_values": json.dumps({o: bookkeeping.as_float(r.pvalues[i, j]) for j, o in enumerate(r.metrics) if j != i}),
                **params.columns(), "fingerprint": fingerprint,
                "conventions": json.dumps({**r.conventions, "orientation": bookkeeping.ORIENTATION}, sort_keys=True,
                                          default=bookkeeping.jsonable),
            })
        frame = pd.DataFrame(rows)
        bookkeeping.insert_rows(wh, "task_rankings", frame)
        bookkeeping.finish_run(wh, run_id, "finished", len(rows))
    out = wh.con.execute("SELECT * FROM task_rankings WHERE run_id = ? ORDER BY rank", [run_id]).df()
    return Outcome(run_id, out)


# --- what `metaeval rank-tasks` prints (:meth:`metaeval.runs.metrics.ranking_families.RankTasks.present`) --------
def specs_of_rows(rows: pd.DataFrame) -> list[TaskSpec]:
    """The tasks of stored ``task_rankings`` rows (their ``tasks`` JSON, in the order given)."""
    return [TaskSpec(**d) for d in json.loads(rows["tasks"].iloc[0])] if len(rows) else []


def _int(x) -> int | None:
    """A stored integer (or bool), None where NULL."""
    return None if x is None or pd.isna(x) else int(x)


def _sides(aggregate: str) -> str:
    """A task's system scores under ``aggregate``: the metric's, then the human's."""
    metric, human = parameters.aggregate_sides(aggregate)
    return f"{metric}s (metric), {human}s (human)"


def note_line(rows: pd.DataFrame) -> list[str]:
    """The one "cannot resolve" line of the stored ranking (the conclusion layer's), as the
    command prints it; none when the tests can resolve."""
    from metaeval.analyses import stored_tests

    note = _bare_note(rows)
    return [stored_tests.not_a_finding(note)] if note else []


def text(rows: pd.DataFrame, run_id: int | None) -> list[str]:
    """The text output's lines: the run, the tasks, one line per metric (rank, cluster, * a
    winner, the average, each task's correlation), then the "cannot resolve" line."""
    specs = specs_of_rows(rows)
    out = ["task_rankings: " + ("up to date; nothing computed (--force recomputes)" if run_id is None
                                else f"run {run_id}: ranked {len(rows)} metrics over {len(specs)} tasks")]
    for i, s in enumerate(specs, 1):
        test = " (test over pairs)" if s.test == "pairs" else ""
        test += f" (system scores: {_sides(s.aggregate)})" if s.aggregate != "mean" else ""
        out.append(f"  task {i}: {s.name} (weight {s.weight:g}){test}")
    for r in rows.itertuples():
        corr = " ".join(f"{c:7.3f}" if c is not None else "     --" for c in json.loads(r.correlations))
        avg = "--" if r.average is None or r.average != r.average else f"{r.average:.4f}"
        rank, cluster = (f"{v:{w}d}" if (v := _int(x)) is not None else " " * (w - 2) + "--"
                         for x, w in ((r.rank, 3), (r.cluster, 2)))
        out.append(f"{rank}  cluster {cluster}{' *' if _int(r.winner) else '  '}  {r.metric:30s} {avg}   {corr}")
    return out + note_line(rows)


def as_json(rows: pd.DataFrame) -> str:
    """The json output: per metric its rank, cluster, winner, average, each task's correlation
    (by task name) and its p-values against the others."""
    names = [s.name for s in specs_of_rows(rows)]
    return json.dumps([{"metric": r.metric, "rank": _int(r.rank), "cluster": _int(r.cluster),
                        "winner": None if _int(r.winner) is None else bool(r.winner), "average": r.average,
                        "correlations": dict(zip(names, json.loads(r.correlations))),
                        "p_values": json.loads(r.p_values)} for r in rows.itertuples()], indent=2) + "\n"


def paper(rows: pd.DataFrame, fmt: str, layout: str) -> str:
    """The ranking as a paper's table (latex) or the markdown that agrees with it: per metric the
    average (its cluster; bold: cluster 1) and each task's correlation (bold: the best)."""
    from metaeval.present import ranking_tables, tables

    specs = specs_of_rows(rows)
    k, seed, alpha = (int(rows["k"].iloc[0]), int(rows["seed"].iloc[0]), float(rows["alpha"].iloc[0])) \
        if len(rows) else (parameters.DEFAULT_K, parameters.DEFAULT_SEED, parameters.DEFAULT_ALPHA)
    long, headers = [], {"average": ("", "Average", "Avg.", "average")}
    for i, s in enumerate(specs):
        group, name, short, _ = ranking_tables.setting_header(s.level, s.coefficient)
        headers[f"task {i + 1}"] = (tables.latex_escape(s.dataset), f"{group} {name}", f"{group[:3]}. {short}",
                                    f"{s.dataset} {s.level} {s.coefficient}")
    for r in rows.itertuples():
        long.append({"metric": r.metric, "task": "average", "correlation": r.average, "cluster": r.cluster})
        for i, c in enumerate(json.loads(r.correlations)):
            long.append({"metric": r.metric, "task": f"task {i + 1}", "correlation": c, "cluster": None})
    frame = pd.DataFrame(long).astype({"correlation": float})
    note = _bare_note(rows)   # no bold from tests that cannot resolve (the conclusion layer)
    ranking = ranking_tables.Ranking(frame, keys=("task",), headers={(t,): h for t, h in headers.items()},
                                     unresolved={("average",): note} if note else {})
    tasks = "; ".join(f"{i + 1}: {s.name}{' of system ' + _sides(s.aggregate) if s.aggregate != 'mean' else ''} "
                      f"(weight {s.weight:g})" for i, s in enumerate(specs))
    caption = (f"Metrics ranked over {len(specs)} tasks ({tasks}): each task's correlation, and their weighted "
               f"average after mapping each score to [0, 1] (WMT23/24); clusters (cl.) from permutation tests on "
               f"the average (k={k}, seed={seed}, alpha={alpha:g}).")
    return ranking.latex(caption, layout) if fmt == "latex" else ranking.markdown(caption)


def _bare_note(rows: pd.DataFrame) -> str | None:
    """The conclusion layer's "cannot resolve" note itself (not yet said as "not a finding")."""
    from metaeval.analyses import conclusions

    if not len(rows):
        return None
    return conclusions.stored_note(rows["conventions"].iloc[0], "none", float(rows["alpha"].iloc[0]),
                                   "the permutation tests between metrics")
