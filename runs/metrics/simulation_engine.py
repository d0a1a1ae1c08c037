"""The machinery the simulations of :mod:`metaeval.runs.metrics.simulation` share: a simulation cut into
units (blocks of ``simulation.TRIAL_BLOCK`` trials of a group of configurations), the blocks
already stored reused, the missing ones computed in worker processes (or on a Dask cluster)
and written as they complete, each configuration's final row written once all its blocks are in."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from metaeval.analyses import simulation as sim
from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine import bookkeeping, executors, runner, selection
from metaeval.signals import interruption


@dataclass(frozen=True)
class Summary:
    """What a simulation command did: ``run_id`` None when everything was up to date; ``rows``:
    the final rows answering it (its parameters and data), whichever run wrote them -- not
    necessarily the ``latest_*`` rows, which another setting may have written since."""

    run_id: int | None
    results: int
    computed_blocks: int
    reused_blocks: int
    written: int
    rows: pd.DataFrame | None = field(default=None, repr=False, compare=False)

    @property
    def up_to_date(self) -> bool:
        return self.run_id is None


@dataclass
class Group:
    """Configurations sharing parameters (one method): final rows and block rows."""

    final: runner.Analysis
    blocks: runner.Analysis
    tasks: list[runner.Task]           # one per final row
    conventions: Callable[[runner.Task], dict]


@dataclass
class Simulation:
    command: str
    scope: selection.Scope
    groups: list[Group]
    trials: int
    seed: int
    fingerprint: str
    parameters: dict[str, Any]
    work: Callable                       # (context, unit) -> list[(group index, task key tuple, values)]
    context: Any
    unit_of: Callable[[int, runner.Task], tuple]   # (group index, task) -> the unit that computes it
    block_values: Callable[[list[dict]], dict]      # summed block values -> final row values


def _blocks(trials: int) -> list[range]:
    size = sim.TRIAL_BLOCK
    return [range(b, min(b + size, trials)) for b in range(0, trials, size)]


def _key(task: runner.Task) -> tuple:
    return tuple(task.key.values())


def execute(s: Simulation, wh: Store, *, jobs: int, force: bool, progress: bool) -> Summary:
    if jobs < 1:
        raise WarehouseError(Message(Argument("jobs"), " must be at least 1"))
    blocks = _blocks(s.trials)
    need: dict[tuple, list[tuple[int, runner.Task]]] = {}    # unit -> (group, task) missing
    have: dict[tuple[int, tuple], dict[int, dict]] = {}       # (group, task key) -> block -> values
    finals_needed = []
    reused = 0
    for g, group in enumerate(s.groups):
        finals = {} if force else _done(wh, s.scope, group.final)
        existing_blocks = {} if force else _done(wh, s.scope, group.blocks)
        for task in group.tasks:
            if (*_key(task), task.fingerprint) in finals:
                continue
            finals_needed.append((g, task))
            got = have.setdefault((g, _key(task)), {})
            for b, trials in enumerate(blocks):
                row = existing_blocks.get((*_key(task), b, len(trials), task.fingerprint))
                if row is not None:
                    got[b] = row
                    reused += 1
                else:
                    need.setdefault((*s.unit_of(g, task), b), []).append((g, task))
    if not finals_needed:
        return Summary(None, sum(len(gr.tasks) for gr in s.groups), 0, 0, 0, _answer(wh, s))
    run_id = bookkeeping.start_run(wh, s.command, s.parameters, s.seed, s.fingerprint, len(finals_needed), jobs)
    block_writers = [bookkeeping.Writer(wh, gr.blocks.table, run_id, s.scope) for gr in s.groups]
    final_writers = [bookkeeping.Writer(wh, gr.final.table, run_id, s.scope) for gr in s.groups]
    pending_finals = {(g, _key(t)): t for g, t in finals_needed}

    def finish_complete() -> None:
        for (g, key), task in list(pending_finals.items()):
            got = have[(g, key)]
            if len(got) == len(blocks):
                group = s.groups[g]
                values = s.block_values([got[b] for b in range(len(blocks))])
                final_writers[g].add(task, {**values, "conventions": group.conventions(task)}, group.final.params)
                del pending_finals[(g, key)]

    def on_result(unit: tuple, results: list) -> None:
        b = unit[-1]
        for g, key, values in results:
            task = next(t for gg, t in need[unit] if gg == g and _key(t) == key)
            group = s.groups[g]
            block_writers[g].add(runner.Task({**task.key, "block": b, "trials": len(blocks[b])}, task.measures,
                                             task.fingerprint, task.n_systems, task.n_inputs),
                                 {**values, "conventions": group.conventions(task)}, group.blocks.params)
            have[(g, key)][b] = {**values, "trials": len(blocks[b])}
        finish_complete()

    units = sorted(need, key=lambda u: (u[-1], u))  # block by block: early final rows, even load
    payload = [(u, blocks[u[-1]], [(g, _key(t)) for g, t in need[u]]) for u in units]
    total = sum(len(p[1]) * len(p[2]) for p in payload)
    bar = runner.progress_bar(progress, total, s.command)
    computed = 0
    try:
        finish_complete()  # configurations whose blocks were all computed before
        for unit, results in _map(executors.of(wh), s.work, s.context, payload, jobs):
            on_result(unit, results)
            computed += 1
            bar.advance(len(blocks[unit[-1]]) * len(need[unit]))
    except BaseException as exc:
        stop = interruption(exc)
        for w in (*block_writers, *final_writers):
            w.flush()
        bookkeeping.finish_run(wh, run_id, "failed" if stop is None else "interrupted", computed)
        bar.close()
        bookkeeping.reraise(exc, stop)
    bar.close()
    with bookkeeping.finishing(wh, run_id):
        for w in (*block_writers, *final_writers):
            w.flush()
        bookkeeping.finish_run(wh, run_id, "finished", computed)
    return Summary(run_id, len(finals_needed), computed, reused, sum(w.written for w in final_writers),
                   _answer(wh, s))


def _answer(wh: Store, s: Simulation) -> pd.DataFrame:
    """The final row of each task of ``s`` (its key, parameters and fingerprint), latest first."""
    rows = []
    for group in s.groups:
        done = _done(wh, s.scope, group.final)
        rows += [done[k] for t in group.tasks if (k := (*_key(t), t.fingerprint)) in done]
    return pd.DataFrame(rows)


def _done(wh: Store, scope: selection.Scope, analysis: runner.Analysis) -> dict[tuple, dict]:
    """Rows of ``analysis.table`` written by this version with the same parameters, by (key...,
    fingerprint)."""
    rows = wh.con.execute(f"SELECT * FROM {analysis.table} WHERE dataset = $dataset AND human = $human "
                          f"AND {bookkeeping.THIS_VERSION} ORDER BY result_id",
                          {"dataset": scope.dataset, "human": scope.human, **bookkeeping.version_parameter()}).df()
    done = {}
    for r in rows.to_dict("records"):
        r = {c: None if isinstance(v, float) and np.isnan(v) else v for c, v in r.items()}
        if all(r[c] == v for c, v in analysis.params.columns().items()):
            done[tuple(r[c] for c in (*analysis.key_columns, "fingerprint"))] = r
    return done


_CONTEXT: Any = None


def _set_context(context: Any) -> None:
    global _CONTEXT
    _CONTEXT = context


def _run_unit(work: Callable, item: tuple) -> tuple:
    return item[0], work(_CONTEXT, item)


def _run_unit_with(work: Callable, context: Any, item: tuple) -> tuple:
    return item[0], work(context, item)


def _map(executor: executors.Executor, work: Callable, context: Any, payload: list, jobs: int):
    """(unit, work(context, item)) for every item, in this process, ``jobs`` local workers
    (each given ``context`` once) or on the Dask cluster of ``executor`` (``context`` sent
    to its workers once), as they complete."""
    with executor.pool(jobs, initializer=_set_context, initargs=(context,)) as pool:
        if pool is None:
            for item in payload:
                yield item[0], work(context, item)
            return
        if executors.is_distributed(pool):
            shared = executors.shared(pool, context)
            pending = {pool.submit(_run_unit_with, work, shared, item) for item in payload}
        else:
            pending = {pool.submit(_run_unit, work, item) for item in payload}
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                yield future.result()


