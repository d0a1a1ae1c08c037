"""The run loop: plan an analysis' tasks, skip what is stored, compute the rest, write it.

An analysis (:class:`Analysis`) is declared by its family's module -- ``runs/metrics/correlations.py``,
``intervals.py``, ``comparisons.py``, ``ranking.py``, ``agreement.py``, ... -- with its typed
parameters (:class:`metaeval.runs.engine.parameters.Params`, which name the result table), its tasks and
the ``evaluate`` function the workers run. :func:`run` then, for any of them:

1. **plans** one :class:`Task` per result key (metric or metric pair x level x coefficient, ...),
   each with the fingerprint of the cells it reads (:mod:`.selection`);
2. **skips** what the warehouse already holds for the same key, parameters and fingerprint
   (``force`` recomputes);
3. **computes** the rest -- in this process, in ``jobs`` worker processes or on a Dask cluster
   (:mod:`.executors`); results do not depend on ``jobs`` or on order, since every task uses the
   seed it is given;
4. **writes** results as they complete (:class:`.bookkeeping.Writer`), in small transactions, so
   an interrupted run keeps what it finished and the same command resumes.

Steps 2-4 are :func:`store_missing`; an analysis whose rows depend on each other (compare's
correction over a family, the sequential tests) gives its own ``flow``, which :func:`run` hands a
:class:`Plan` and which builds on :func:`start_analysis_run`, :func:`compute` and
:func:`evaluate_chunk`. Every run is a row of ``analysis_runs`` (:mod:`.bookkeeping`). Progress is
reported to a ``progress`` factory the caller gives (the command line draws a bar; see
:class:`Progress`).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine import bookkeeping, executors
from metaeval.runs.engine.bookkeeping import Task
from metaeval.runs.engine.parameters import DEFAULT_AGGREGATE, Params, aggregate_fingerprint
from metaeval.runs.engine.selection import Data, Scope, data_fingerprint, load_data, too_sparse
from metaeval.signals import interruption


# --- tasks and analyses ----------------------------------------------------------------------
@dataclass
class Analysis:
    """How one command maps onto a results table: its typed parameters (which name the table),
    the key columns that with dataset and human identify a result, the tasks, the ``evaluate``
    function run in the workers (``evaluate(arrays, **{key: value for key in evaluate_keys},
    **arguments)`` -> the row's values) and, when storing the missing rows is not enough, the
    ``flow`` that runs it instead (:func:`run` hands it a :class:`Plan`)."""

    command: str
    params: Params
    key_columns: tuple[str, ...]
    tasks: list[Task]
    evaluate: Callable[..., dict] | None
    evaluate_keys: tuple[str, ...] = ("level", "coefficient")   # key columns evaluate receives
    flow: Callable[[Plan], RunSummary] | None = None
    arguments: dict[str, Any] = field(default=None)             # default params.arguments()
    #: On workers: the units of work (task indices, and what runs them instead of
    #: :func:`evaluate_chunk`, same arguments, or None) given the plan and the tasks to compute;
    #: None: chunks of ``chunk_size`` consecutive tasks (runs/metrics/pair_blocks.py groups all-pairs tests).
    units: Callable[[Plan, list[int]], list[tuple[list[int], Callable | None]]] | None = None

    def __post_init__(self):
        if self.arguments is None:
            self.arguments = self.params.arguments()

    @property
    def table(self) -> str:
        return self.params.table

    @property
    def seed(self) -> int | None:
        return self.params.run_seed()


def evaluate_chunk(evaluate, arguments, chunk) -> list[tuple[int, dict]]:
    return [(i, evaluate(arrays, **key, **arguments)) for i, arrays, key in chunk]


# --- running ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunSummary:
    run_id: int | None
    tasks: int
    computed: int
    written: int

    @property
    def up_to_date(self) -> bool:
        return self.run_id is None


@dataclass(frozen=True)
class Plan:
    """What :func:`run` hands an analysis' flow: the planned ``tasks`` (with fingerprints), the
    rows this version already ``done`` with the same parameters (by :func:`task_id`), the
    result ids the latest view shows (``latest``), the indices of the tasks to compute
    (``todo``) and the run options."""

    wh: Store
    scope: Scope
    analysis: Analysis
    data: Data
    tasks: list[Task]
    done: dict[tuple, dict]
    latest: set[int]
    todo: list[int]
    jobs: int
    progress: ProgressFactory | None
    chunk_size: int


def run(wh: Store, scope: Scope, analysis: Analysis, *, jobs: int = 1, force: bool = False,
        progress: ProgressFactory | None = None, chunk_size: int = 8, data: Data | None = None) -> RunSummary:
    """Compute what is missing for ``analysis`` over ``scope`` and persist it: by the analysis'
    ``flow`` if it has one, else :func:`store_missing`.

    ``data``: the scope's data when the tasks also read derived matrices (default
    :func:`load_data`)."""
    if jobs < 1:
        raise WarehouseError(Message(Argument("jobs"), " must be at least 1"))
    data = analysis_data(load_data(wh, scope) if data is None else data, analysis)
    tasks = planned(data, scope, analysis)
    done, latest = ({}, set()) if force else existing(wh, scope, analysis)
    todo = [i for i, t in enumerate(tasks) if task_id(t) not in done]
    plan = Plan(wh, scope, analysis, data, tasks, done, latest, todo, jobs, progress, chunk_size)
    return (analysis.flow or store_missing)(plan)


def store_missing(plan: Plan) -> RunSummary:
    """The flow of most analyses: compute the missing rows and write them as they arrive."""
    wh, scope, analysis, tasks, done, todo = plan.wh, plan.scope, plan.analysis, plan.tasks, plan.done, plan.todo
    # computed before but not the latest row of its key (the data changed and changed back,
    # or other parameters ran since): copied into this run, so the latest_* views show it
    computing = set(todo)
    stale = [i for i, t in enumerate(tasks)
             if i not in computing and done[task_id(t)]["result_id"] not in plan.latest]
    if not todo and not stale:
        return RunSummary(None, len(tasks), 0, 0)
    run_id = start_analysis_run(wh, scope, analysis, plan.data, len(tasks), plan.jobs)
    with bookkeeping.finishing(wh, run_id):
        writer = bookkeeping.Writer(wh, analysis.table, run_id, scope)
        for i in stale:
            copy = {c: v for c, v in done[task_id(tasks[i])].items() if c != "result_id"}
            writer.add_row({**copy, "run_id": run_id})
        writer.flush()
        computed = compute(plan, todo, lambda i, row: writer.add(tasks[i], row, analysis.params), writer, run_id)
        writer.flush()
        bookkeeping.finish_run(wh, run_id, "finished", computed)
    return RunSummary(run_id, len(tasks), computed, writer.written)


def _aggregate(analysis: Analysis) -> str:
    """How the analysis aggregates a system's inputs (its parameter ``aggregate``; the mean)."""
    return getattr(analysis.params, "aggregate", DEFAULT_AGGREGATE)


def analysis_data(data: Data, analysis: Analysis) -> Data:
    """``data`` as ``analysis`` reads it: without the clusters of ``--resample-clusters`` unless
    the analysis resamples them (an evaluation's correlations read the same data as its
    clustered ci and compare, unclustered: the rows and fingerprints of an unclustered run)."""
    if getattr(data, "clusters", None) is not None and getattr(analysis.params, "resample_clusters", None) is None:
        return replace(data, clusters=None)
    return data


def planned(data: Data, scope: Scope, analysis: Analysis) -> list[Task]:
    """The analysis' tasks with the fingerprints of the cells they read (as the analysis'
    ``aggregate`` reads them: :func:`metaeval.runs.engine.parameters.aggregate_fingerprint`)."""
    data = analysis_data(data, analysis)
    planned = []
    cache: dict[tuple[str, ...], tuple] = {}
    for t in analysis.tasks:
        if (t.measures, t.control) not in cache:
            cache[t.measures, t.control] = data.fingerprint(t.measures, t.control)
            if scope.human is not None:
                _check_enough(data.restrict(t.measures)[0], t.measures, *cache[t.measures, t.control][1:], analysis)
        fp, n, m = cache[t.measures, t.control]
        planned.append(Task(t.key, t.measures, aggregate_fingerprint(fp, _aggregate(analysis)), n, m, t.control))
    return planned


def _check_enough(arrays, measures, n_systems, n_inputs, analysis: Analysis) -> None:
    human = arrays[-1]
    for name, a in zip(measures[:-1], arrays[:-1]):
        if reason := too_sparse(a, human, name, measures[-1]):
            raise WarehouseError(reason)
    method = getattr(analysis.params, "method", None) or ""
    if method.endswith("inputs") or method.endswith("both"):
        if n_inputs < 2:
            raise WarehouseError(Message(Argument("method", method), f" resamples inputs but {list(measures)} cover "
                                         f"only {n_inputs} input; choose ", Argument("method", "perm-systems"), " or ",
                                         Argument("method", "boot-systems")))


def task_id(t: Task) -> tuple:
    return (*t.key.values(), t.fingerprint)


def existing(wh: Store, scope: Scope, analysis: Analysis) -> tuple[dict[tuple, dict], set[int]]:
    """Rows already computed by this version with the same parameters, by (key...,
    fingerprint); and the result_ids the table's ``latest_*`` view shows now."""
    where = " WHERE dataset = $dataset" + (" AND human = $human" if scope.human is not None else "")
    params = {"dataset": scope.dataset, **({"human": scope.human} if scope.human is not None else {})}
    if has_subset(wh, analysis.table):
        where += " AND subset = $subset"
        params["subset"] = scope.subset
    elif scope.where:
        raise WarehouseError(Message(f"{analysis.command} ({analysis.table}) is not computed on subsets of cells: "
                                     "run it without ", Argument("where")))
    rows = wh.con.execute(f"SELECT * FROM {analysis.table}{where} AND {bookkeeping.THIS_VERSION} ORDER BY result_id",
                          {**params, **bookkeeping.version_parameter()}).df()
    latest = {int(r) for r in wh.con.execute(f"SELECT result_id FROM latest_{analysis.table}{where}",
                                             params).df()["result_id"]}
    done = {}
    columns = analysis.params.columns()
    for r in rows.to_dict("records"):
        r = {c: bookkeeping.none_if_nan(v) for c, v in r.items()}
        if all(r[c] == v for c, v in columns.items()):
            done[tuple(r[c] for c in (*analysis.key_columns, "fingerprint"))] = r
    return done, latest


def has_subset(wh: Store, table: str) -> bool:
    """Whether the result table ``table`` has the ``subset`` key column (the analyses over cells)."""
    return bool(wh.con.execute("SELECT count(*) FROM information_schema.columns WHERE table_name = ? "
                               "AND column_name = 'subset'", [table]).fetchall()[0][0])


def start_analysis_run(wh: Store, scope: Scope, analysis: Analysis, data: Data, n_tasks: int,
                       jobs: int = 1) -> int:
    """Start the run of ``analysis`` (:func:`bookkeeping.start_run`), recording its scope and
    parameters (:meth:`Params.recorded`)."""
    parameters = {"dataset": scope.dataset, "human": scope.human, "metrics": list(scope.metrics),
                  "levels": list(scope.levels), "coefficients": list(scope.coefficients)}
    if scope.human is None:  # human-free: no judgment, levels or coefficients to record
        parameters = {"dataset": scope.dataset, "metrics": list(scope.metrics)}
    if scope.where:  # (not recorded for every cell: such runs' parameters are as before subsets)
        parameters["where"] = [f"{a}={v}" for a, v in scope.where]
        parameters["subset"] = scope.subset
    parameters.update(analysis.params.recorded())
    return bookkeeping.start_run(wh, analysis.command, parameters, analysis.seed,
                     aggregate_fingerprint(data_fingerprint(data, scope.measures), _aggregate(analysis)), n_tasks, jobs)


def compute(plan: Plan, todo: list[int], on_result: Callable[[int, dict], None], writer: bookkeeping.Writer,
            run_id: int) -> int:
    """Evaluate the plan's tasks ``todo``, handing each result to ``on_result`` as it arrives;
    the number computed.

    Ctrl-C (or SIGTERM in the CLI): what has arrived is written, the run is marked interrupted,
    the chunks not started are dropped, and the KeyboardInterrupt propagates; rerunning the
    command resumes. Any other exception: the same, but the run is marked failed.
    """
    tasks, data, analysis, wh, chunk_size = plan.tasks, plan.data, plan.analysis, plan.wh, plan.chunk_size
    chunks = [todo[i:i + chunk_size] for i in range(0, len(todo), chunk_size)]

    def payload(chunk):  # the tasks of one measure set share its arrays (sent once to a worker)
        arrays = {}
        for i in chunk:
            if (tasks[i].measures, tasks[i].control) not in arrays:
                arrays[tasks[i].measures, tasks[i].control] = data.task_arrays(tasks[i].measures, tasks[i].control)
        return [(i, list(arrays[tasks[i].measures, tasks[i].control]),
                 {c: tasks[i].key[c] for c in analysis.evaluate_keys}) for i in chunk]

    computed = 0
    bar = progress_bar(plan.progress, len(todo), analysis.command)
    before = _rows_of_run(wh, writer.table, run_id)
    try:
        with executors.of(wh).pool(plan.jobs) as pool:
            if pool is None:
                for chunk in chunks:
                    for i, row in evaluate_chunk(analysis.evaluate, analysis.arguments, payload(chunk)):
                        on_result(i, row)
                        computed += 1
                    bar.advance(len(chunk))
            else:
                units = [(c, None) for c in chunks] if analysis.units is None else analysis.units(plan, todo)
                pending = {pool.submit(unit or evaluate_chunk, analysis.evaluate, analysis.arguments, payload(c))
                           for c, unit in units}
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        results = future.result()
                        for i, row in results:
                            on_result(i, row)
                            computed += 1
                        bar.advance(len(results))
    except BaseException as exc:  # (a stopped pool drops its queued chunks: Executor.pool)
        stop = interruption(exc)
        try:
            writer.flush()
            # counted in the table: the interruption may have come between a row's write and its count
            computed = _rows_of_run(wh, writer.table, run_id) - before
            bookkeeping.finish_run(wh, run_id, "failed" if stop is None else "interrupted", computed)
        except bookkeeping.WRITE_ERRORS:  # the warehouse cannot be written (a full disk): the first error says so
            pass
        bar.close()
        bookkeeping.reraise(exc, stop)
    bar.close()
    return computed


class Progress(Protocol):
    """A progress display: ``advance(n)`` as n more tasks are done, ``close()`` at the end. The
    ``progress`` argument of a run is a factory ``progress(total, label) -> Progress`` (None:
    nothing is shown); the command line gives one that draws a bar on a terminal."""

    def advance(self, n: int) -> None: ...

    def close(self) -> None: ...


#: A ``progress`` argument: (total tasks, label) -> a :class:`Progress`.
ProgressFactory = Callable[[int, str], Progress]


class _NoProgress:
    def advance(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(progress: ProgressFactory | None, total: int, label: str) -> Progress:
    """The display of ``total`` tasks labelled ``label``: ``progress``'s, or none (no factory, or
    nothing to do)."""
    return progress(total, label) if callable(progress) and total else _NoProgress()


def _rows_of_run(wh: Store, table: str, run_id: int) -> int:
    return wh.con.execute(f"SELECT count(*) FROM {table} WHERE run_id = ?", [run_id]).fetchall()[0][0]
