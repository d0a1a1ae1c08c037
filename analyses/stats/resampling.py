"""Drawing resamples: bootstrap indices and permutation swap masks.

Drawing is separate from evaluation (see :mod:`.batched`): a draw function returns the indices
or masks of a batch of resamples, and the batched evaluators compute the statistic of every
resample in the batch with array operations.

Reproducibility: resample b is drawn from block ``b // RNG_BLOCK`` whose generator is
``default_rng(SeedSequence(entropy, spawn_key=(block,)))`` (see :class:`ResampleStream`). The numbers a resample gets thus
depend only on the seed and its index, never on how many resamples are evaluated at once, so
any batch size (memory budget) gives identical results.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: Resamples drawn from one generator; part of the reproducibility contract (changing it
#: changes the numbers a given seed produces).
RNG_BLOCK = 256

Draw = Callable[[np.random.Generator, int], tuple[np.ndarray | None, ...]]


def bootstrap_indices(
    rng: np.random.Generator, size: int, n_systems: int, n_inputs: int, method: str
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Indices of ``size`` bootstrap resamples: ``(rows, cols)``.

    ``rows`` is (size, N) int32 -- systems drawn with replacement -- for methods "systems" and
    "both", else None (all systems kept); ``cols`` is (size, M) for "inputs" and "both".
    Boot-Both keeps the sub-matrix X[rows][:, cols] (rows and columns drawn independently).
    """
    rows = rng.integers(0, n_systems, size=(size, n_systems), dtype=np.int32) if method != "inputs" else None
    cols = rng.integers(0, n_inputs, size=(size, n_inputs), dtype=np.int32) if method != "systems" else None
    return rows, cols


def unpaired_bootstrap_indices(
    rng: np.random.Generator, size: int, n_systems: int, x_inputs: np.ndarray, z_inputs: np.ndarray, method: str
) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """Indices of ``size`` bootstrap resamples whose metric and human inputs are not paired:
    ``(rows, cols_x, cols_z)``.

    The systems are drawn once for both (they are paired: ``rows`` as in :func:`bootstrap_indices`);
    the metric's inputs ``x_inputs`` and the human's ``z_inputs`` (column indices) are each drawn
    with replacement, independently, as nlpstats resamples with ``paired_inputs=False``.
    """
    rows = rng.integers(0, n_systems, size=(size, n_systems), dtype=np.int32) if method != "inputs" else None
    if method == "systems":
        return rows, None, None
    cols_x = x_inputs[rng.integers(0, len(x_inputs), size=(size, len(x_inputs)))]
    cols_z = z_inputs[rng.integers(0, len(z_inputs), size=(size, len(z_inputs)))]
    return rows, cols_x, cols_z


def permutation_masks(
    rng: np.random.Generator,
    size: int,
    n_systems: int,
    n_inputs: int,
    method: str,
    variant: str = "paper",
) -> tuple[np.ndarray]:
    """Swap masks of ``size`` permutation resamples (True: the X and Y values are exchanged).

    Shapes broadcast against (size, N, M): (size, N, 1) for "systems" (whole rows),
    (size, 1, M) for "inputs" (whole columns), (size, N, M) for "both" -- each cell with
    probability 1/2 (variant "paper"), or a row coin XOR a column coin (variant "nlpstats",
    which swaps systems and then inputs).
    """
    if method == "systems":
        return (_coins(rng, (size, n_systems, 1)),)
    if method == "inputs":
        return (_coins(rng, (size, 1, n_inputs)),)
    if variant == "nlpstats":
        return (_coins(rng, (size, n_systems, 1)) ^ _coins(rng, (size, 1, n_inputs)),)
    return (_coins(rng, (size, n_systems, n_inputs)),)


def _coins(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Fair boolean coins, one random bit each."""
    count = int(np.prod(shape))
    bits = np.unpackbits(rng.integers(0, 256, size=(count + 7) // 8, dtype=np.uint8))
    return bits[:count].view(bool).reshape(shape)  # 0/1 bytes read as booleans: no second copy


class ResampleStream:
    """The draws of resamples 0, 1, 2, ... of one seed, served in any slices.

    ``draw(rng, size)`` returns a tuple of arrays (or None) with ``size`` resamples on axis 0.
    Slices are cut from whole blocks, the last block being kept for the next slice, so the
    draws do not depend on how the range of resamples is split.
    """

    def __init__(self, seed: np.random.SeedSequence, draw: Draw) -> None:
        self._seed = seed
        self._draw = draw
        self._cached: tuple[int, tuple[np.ndarray | None, ...]] | None = None

    def _block(self, block: int) -> tuple[np.ndarray | None, ...]:
        if self._cached is None or self._cached[0] != block:
            seed = np.random.SeedSequence(self._seed.entropy, spawn_key=(*self._seed.spawn_key, block))
            self._cached = (block, self._draw(np.random.default_rng(seed), RNG_BLOCK))
        return self._cached[1]

    def take(self, start: int, stop: int) -> tuple[np.ndarray | None, ...]:
        """The draws of resamples ``start .. stop-1`` (a view of the cached block when they lie
        in one block: only the slice is ever copied, never a whole block per call)."""
        first, last = start // RNG_BLOCK, (stop - 1) // RNG_BLOCK
        pieces = []
        for b in range(first, last + 1):
            lo, hi = max(start, b * RNG_BLOCK) - b * RNG_BLOCK, min(stop, (b + 1) * RNG_BLOCK) - b * RNG_BLOCK
            pieces.append(tuple(None if a is None else a[lo:hi] for a in self._block(b)))
        if len(pieces) == 1:
            return pieces[0]
        return tuple(None if parts[0] is None else np.concatenate(parts) for parts in zip(*pieces))


def draw_range(
    seed: np.random.SeedSequence, start: int, stop: int, draw: Draw
) -> tuple[np.ndarray | None, ...]:
    """The draws of resamples ``start .. stop-1`` of ``seed`` (one-off :class:`ResampleStream` slice)."""
    return ResampleStream(seed, draw).take(start, stop)


def percentile_interval(samples: np.ndarray, alpha: float) -> tuple[float, float, int]:
    """The percentile interval of a resampling distribution: (lower, upper, n_valid), the
    ``100 alpha/2`` and ``100 (1 - alpha/2)`` percentiles (numpy's linear interpolation) of the
    defined (non-NaN) ``samples`` and how many there are; NaN bounds when none is defined (an
    undefined interval, never a point)."""
    samples = np.asarray(samples, dtype=np.float64)
    valid = samples[~np.isnan(samples)]
    if not valid.size:
        return float("nan"), float("nan"), 0
    lower, upper = np.percentile(valid, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lower), float(upper), int(valid.size)
