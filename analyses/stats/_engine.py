"""Runs k resamples in batches bounded by a memory budget (draw, then evaluate, per batch)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .resampling import Draw, ResampleStream

#: Bytes of temporaries one batch may use; the batch size is derived from it.
MEMORY_BUDGET = 256 * 2**20


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
