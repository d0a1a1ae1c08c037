"""Runs k resamples in batches bounded by a memory budget (draw, then evaluate, per batch)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import numpy as np

from .resampling import Draw, ResampleStream

#: Bytes of temporaries one batch may use; the batch size is derived from it.
MEMORY_BUDGET = 256 * 2**20


_controller: list = []


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """A block in which BLAS runs on one thread (threadpoolctl; restored after). For the
    resampling kernels' small stacked products (a few dozen rows and columns per input): a
    second OpenBLAS thread costs them 10x the CPU it saves in wall time (summary-level Kendall's
    permuted pair sums, bench/bench_allpairs.py). Only around products whose every sum is exact
    (integers, halves and quarters in float32/float64): their bits do not depend on the threads
    nor on the order of the sums. The controller is made once (~5 ms); a block costs ~50 us."""
    if not _controller:
        from threadpoolctl import ThreadpoolController

        _controller.append(ThreadpoolController())
    with _controller[0].limit(limits=1, user_api="blas"):
        yield


def default_batch_size(resample_bytes: int) -> int:
    """Resamples per batch so that ``resample_bytes`` of temporaries per resample fit the budget
    (see :func:`.batched.resample_bytes`)."""
    return max(1, MEMORY_BUDGET // resample_bytes)


def run_resamples(
    k: int,
    seed: np.random.SeedSequence,
    draw: Draw,
    evaluate: Callable[..., np.ndarray],
    batch_size: int,
) -> np.ndarray:
    """The k statistics ``evaluate(*draws)``, evaluated ``batch_size`` resamples at a time.

    Results do not depend on ``batch_size`` (see :class:`.resampling.ResampleStream`).
    """
    return run_range(ResampleStream(seed, draw), 0, k, evaluate, batch_size)


def run_range(
    stream: ResampleStream, first: int, end: int, evaluate: Callable[..., np.ndarray], batch_size: int
) -> np.ndarray:
    """The statistics of resamples ``first`` .. ``end - 1`` of ``stream`` (the same numbers as
    those positions of :func:`run_resamples`, whatever the batches)."""
    out = np.empty(end - first)
    for start in range(first, end, batch_size):
        stop = min(end, start + batch_size)
        out[start - first:stop - first] = evaluate(*stream.take(start, stop))
    return out
