"""The tests and intervals of an evaluation computed on workers (``evaluate --jobs N`` or a Dask
scheduler) the way one process computes them: in blocks sharing their resamples.

In one process, :func:`metaeval.runs.metrics.evaluate.run_request` runs every analysis inside one
:func:`.allpairs.sharing` block with the scope's metrics offered, so the permutation tests of all
pairs are one batched computation (:mod:`.permuted_sums`) and the intervals come from the linear
sums of :mod:`.drawn_sums`. On workers, each unit of work (:attr:`.runner.Analysis.units`) is a
:class:`Block`: its tasks evaluated inside a sharing block of the command's path
(``METAEVAL_ALLPAIRS`` as the command reads it, not the worker's environment), with the matrices
of its pairs offered. compare's tasks are grouped by unordered pair, :data:`PAIRS_PER_BLOCK`
consecutive pairs (the order of itertools.combinations over the scope's metrics) a block, both
orders, every level and coefficient of a pair in the same block; the pairs of a block are
computed together (:meth:`.allpairs.Shared.offer` with ``pairs``). A pair's resampled deltas do
not depend on the pairs computed with it nor on the batch of resamples (tested), so every
p-value and interval is the one-process run's, bit for bit. The scheduler is Dask's (or the
local process pool's): a block is one task of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from metaeval.analyses.stats import allpairs, permuted_sums
from metaeval.runs.metrics import correlations
from metaeval.runs.engine import runner, selection

#: Unordered pairs per block (whole chunks of :data:`.permuted_sums.PAIR_CHUNK`): ~40 blocks for
#: 100 metrics, each block's forms a few tens of MB.
PAIRS_PER_BLOCK = 8 * permuted_sums.PAIR_CHUNK

Offer = tuple[np.ndarray, list[np.ndarray], list[tuple[int, int]] | None]


@dataclass(frozen=True)
class Block:
    """Runs a unit's tasks (:func:`.runner.evaluate_chunk`) inside :func:`.allpairs.sharing` of
    ``path`` with ``offers`` (Z, matrices, pairs) offered; sent to the worker with its tasks."""

    path: str
    offers: tuple[Offer, ...] = ()

    def __call__(self, evaluate, arguments, chunk) -> list[tuple[int, dict]]:
        with allpairs.sharing(path=self.path) as shared:
            if shared is not None:
                for Z, metrics, pairs in self.offers:
                    shared.offer(Z, metrics, pairs)
            return runner.evaluate_chunk(evaluate, arguments, chunk)


def level_matrices(data: selection.Data, scope: selection.Scope, system_inputs: str) -> dict[str, list[np.ndarray]]:
    """The scope's metrics then the human, as each level's tests read them ({} when the task
    arrays carry annotator values: nothing is offered then)."""
    arrays = data.task_arrays((*scope.metrics, scope.human))
    if len(arrays) != len(scope.metrics) + 1:
        return {}
    return {level: correlations.protocol(arrays, level, system_inputs)[0] for level in scope.levels}


def tested_pairs(tasks: Sequence[runner.Task], todo: Sequence[int], metrics: Sequence[str]) -> dict[tuple, list[int]]:
    """The tasks ``todo`` (compare's: ``metric_a``, ``metric_b`` keys) by unordered pair (i < j
    indices into ``metrics``), in itertools.combinations order."""
    index = {m: i for i, m in enumerate(metrics)}
    pairs: dict[tuple, list[int]] = {}
    for t in todo:
        a, b = (index[tasks[t].key[c]] for c in ("metric_a", "metric_b"))
        pairs.setdefault((min(a, b), max(a, b)), []).append(t)
    return dict(sorted(pairs.items()))


def offers(matrices: dict[str, list[np.ndarray]], pairs: Sequence[tuple[int, int]] | None) -> tuple[Offer, ...]:
    """What a block offers for ``pairs`` (None: every pair) at each level: the human, the
    matrices of the metrics the pairs use (in the scope's order) and the pairs as indices into them."""
    found = []
    for *metrics, Z in matrices.values():
        if pairs is None:
            found.append((Z, metrics, None))
            continue
        used = sorted({i for pair in pairs for i in pair})
        at = {i: n for n, i in enumerate(used)}
        found.append((Z, [metrics[i] for i in used], [(at[i], at[j]) for i, j in pairs]))
    return tuple(found)


def chunk_units(plan: runner.Plan, todo: list[int]) -> list[tuple[list[int], Callable | None]]:
    """Consecutive chunks of ``chunk_size`` tasks, each a :class:`Block` (the intervals' linear
    sums, a bootstrap test's shared resamples) unless the path is "per-pair"."""
    path = allpairs.mode()
    block = None if path == "per-pair" else Block(path)
    return [(todo[i:i + plan.chunk_size], block) for i in range(0, len(todo), plan.chunk_size)]


def pair_units(plan: runner.Plan, todo: list[int], system_inputs: str) -> list[tuple[list[int], Callable | None]]:
    """compare's tasks in blocks of :data:`PAIRS_PER_BLOCK` unordered pairs, each a :class:`Block`
    offering its pairs (see the module docstring)."""
    path = allpairs.mode()
    if path == "per-pair":
        return chunk_units(plan, todo)
    by_pair = tested_pairs(plan.tasks, todo, plan.scope.metrics)
    pairs = list(by_pair)
    matrices = level_matrices(plan.data, plan.scope, system_inputs)
    units = []
    for start in range(0, len(pairs), PAIRS_PER_BLOCK):
        block = pairs[start:start + PAIRS_PER_BLOCK]
        units.append(([t for pair in block for t in by_pair[pair]], Block(path, offers(matrices, block))))
    return units
