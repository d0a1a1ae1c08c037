"""Resamples shared across the pairs of an all-pairs comparison (``metaeval evaluate --all-pairs``).

Every test of a pair (a, b) draws the same resamples for a seed (:class:`.resampling.ResampleStream`:
common random numbers), so much of an all-pairs run computes the same numbers twice:

- a permutation test of (b, a) swaps the same cells as (a, b) with the roles of X and Y
  exchanged: X'_b of one is Y'_b of the other, so its resampled deltas are exactly the
  negated deltas of (a, b) (the evaluators of :mod:`.batched` compute X' and Y' the same way,
  ``where(mask, Y, X)`` / ``where(mask, X, Y)`` and the linear form of their system means,
  whose two halves are negations of each other: a negation is exact in floating point);
- a paired bootstrap test's delta_b is r_b(X, Z) - r_b(Y, Z), each term depending on one
  metric only: each metric's k resampled correlations are computed once and every pair takes
  their difference; :func:`.intervals.bootstrap_ci` with the same seed and method draws the
  same resamples, so a Boot-Both interval reuses them too.

Inside ``with sharing():`` the tests and intervals of :mod:`.hypothesis` and :mod:`.intervals`
look their resamples up here (keyed by the bytes of their matrices and every argument that
draws or evaluates them, so a hit is the same computation by construction) and store what they
compute. The numbers are those of the unshared path: the reverse pair's deltas are 0 - delta_b
(0.0 - 0.0 is +0.0, as the unshared path's rounding to 0 gives), a pair's bootstrap deltas the
difference of two stored arrays, each computed as the unshared evaluator computes it. Outside
the block (a worker process, another command) nothing is shared. ``METAEVAL_ALLPAIRS=per-pair``
in the environment turns sharing off (the per-pair path, for benchmarks and checks).

Inside the block, a permutation test's resampled deltas are computed from sums linear in the
swap masks (:mod:`.permuted_sums`: one matrix product per pair where the cell-by-cell path
gathers the permuted matrices), equal to the cell-by-cell deltas to ~1e-15 -- not bit for bit:
a p-value's count can differ only where a resampled delta lies within rounding of the
threshold (the count's :data:`.hypothesis.ROUNDING`). ``METAEVAL_ALLPAIRS=shared`` keeps the
sharing with the cell-by-cell evaluators (the implementation before; benchmarks and checks).
Likewise a summary-level bootstrap's resampled Pearson and Spearman r come from sums linear in
the systems' draw counts (:mod:`.drawn_sums`), equal to the gathered path's to ~1e-16.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Callable, Iterator
from functools import partial

import numpy as np

from . import _engine, batched, drawn_sums, resampling

#: The environment variable that selects the per-pair path (value "per-pair") or the shared
#: path with the cell-by-cell permutation evaluators (value "shared").
ENVIRONMENT = "METAEVAL_ALLPAIRS"

_active: list[Shared] = []


class Shared:
    """The resamples computed so far in a :func:`sharing` block, and the metrics offered to be
    tested together (:meth:`offer`)."""

    def __init__(self, linear: bool = True) -> None:
        self.linear = linear
        self.permutations: dict[tuple, tuple] = {}
        self.metrics: dict[tuple, np.ndarray] = {}
        self.offered: dict[bytes, dict[bytes, np.ndarray]] = {}
        self.pairs: dict[bytes, set[tuple[bytes, bytes]] | None] = {}
        self.batched: set[tuple] = set()
        self.hits = 0

    def offer(self, Z: np.ndarray, metrics: list[np.ndarray], pairs: list[tuple[int, int]] | None = None) -> None:
        """Matrices that will be tested in pairs against the human Z: the first permutation test
        of two of them computes every pair's test at once (``batch`` of :meth:`permutation`):
        every pair i < j of the offered matrices (in the order offered), or only ``pairs`` (i < j
        indices into ``metrics``; a block of an all-pairs run on a worker, runs/metrics/pair_blocks.py)."""
        dz = digest(Z)
        names = [digest(X) for X in metrics]
        self.offered.setdefault(dz, {}).update(zip(names, metrics))
        if pairs is None or self.pairs.get(dz, set()) is None:
            self.pairs[dz] = None
        else:
            self.pairs.setdefault(dz, set()).update((names[i], names[j]) for i, j in pairs)

    def permutation(self, key: tuple, X, Y, Z, compute: Callable[[], tuple],
                    batch: Callable[[list[np.ndarray]], dict | None] | None = None) -> tuple:
        """(delta, r_xz, r_yz, samples) of the permutation test of X against Y: computed by
        ``compute`` or, when the test of Y against X was computed, its numbers reversed. When X
        and Y were offered with Z, ``batch(matrices)`` first computes the tests of every pair
        (i, j), i < j, of the offered matrices ({(i, j): numbers}, or None where it does not apply)."""
        dx, dy, dz = digest(X), digest(Y), digest(Z)
        mine, theirs = (dx, dy, dz, *key), (dy, dx, dz, *key)
        group = self.offered.get(dz, {})
        if batch is not None and dx in group and dy in group and (dz, *key) not in self.batched:
            self.batched.add((dz, *key))
            names, chosen = list(group), self.pairs.get(dz)
            at = {d: i for i, d in enumerate(names)}
            pairs = None if chosen is None else sorted((at[a], at[b]) for a, b in chosen)
            results = batch([group[d] for d in names], pairs=pairs) or {}
            self.permutations.update({(names[i], names[j], dz, *key): out for (i, j), out in results.items()})
        if mine in self.permutations and theirs not in self.permutations:   # a batch's (kept for the reverse)
            self.hits += 1
            return self.permutations[mine]
        if theirs in self.permutations:
            self.hits += 1
            delta, r_yz, r_xz, samples = self.permutations.pop(theirs)
            return 0.0 - delta, r_xz, r_yz, 0.0 - samples
        out = compute()
        self.permutations[mine] = out
        return out

    def metric(self, key: tuple, X, Z, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """The k resampled correlations of X with Z (a bootstrap's), computed once per key."""
        full = (digest(X), digest(Z), *key)
        if full in self.metrics:
            self.hits += 1
        else:
            self.metrics[full] = compute()
        return self.metrics[full]


def digest(A: np.ndarray) -> bytes:
    """The identity of a matrix: its shape and the bytes of its values."""
    A = np.ascontiguousarray(A, dtype=np.float64)
    return hashlib.blake2b(repr(A.shape).encode() + A.tobytes(), digest_size=16).digest()


def mode() -> str:
    """The path ``METAEVAL_ALLPAIRS`` selects in this process: "per-pair", "shared" or "" (linear)."""
    return os.environ.get(ENVIRONMENT, "")


def linear() -> bool:
    """Whether permutation deltas come from :mod:`.permuted_sums`: the active block's choice, else
    not ``METAEVAL_ALLPAIRS=shared``."""
    shared = active()
    return shared.linear if shared is not None else mode() != "shared"


def enabled() -> bool:
    """Whether sharing may be used (not turned off by ``METAEVAL_ALLPAIRS=per-pair``)."""
    return mode() != "per-pair"


@contextlib.contextmanager
def sharing(on: bool = True, path: str | None = None) -> Iterator[Shared | None]:
    """A block whose tests and intervals share their resamples (nothing shared if ``on`` is
    false or the path is "per-pair"); what was stored is dropped at its end. ``path``: a
    :func:`mode` value (a worker's block takes the command's, runs/metrics/pair_blocks.py); None: this
    process' :func:`mode`."""
    path = mode() if path is None else path
    if not on or path == "per-pair":
        yield None
        return
    shared = Shared(linear=path != "shared")
    _active.append(shared)
    try:
        yield shared
    finally:
        _active.remove(shared)


def active() -> Shared | None:
    """The innermost :func:`sharing` block's store, or None outside any."""
    return _active[-1] if _active else None


def seed_key(seq: np.random.SeedSequence) -> tuple:
    """What identifies a seed's resample stream."""
    return (repr(seq.entropy), tuple(seq.spawn_key))


def bootstrap_samples(shared: Shared, X, Z, level, coef, method, k, seq, batch_size) -> np.ndarray:
    """The k resampled r(X, Z) of a paired bootstrap (inputs paired) of ``method``: the numbers
    of :func:`.intervals.bootstrap_ci`'s resamples, computed once per matrix in ``shared``."""
    def compute() -> np.ndarray:
        n_sys, n_in = X.shape
        draw = partial(resampling.bootstrap_indices, n_systems=n_sys, n_inputs=n_in, method=method)
        size = batch_size or _engine.default_batch_size(batched.resample_bytes(level, coef, n_sys, n_in))
        evaluate = drawn_sums.bootstrap_evaluator(X, Z, level, coef, method) if linear() else None
        return _engine.run_resamples(k, seq, draw, evaluate or batched.bootstrap_evaluator(X, Z, level, coef), size)

    return shared.metric(("boot", level, repr(coef), method, k, *seed_key(seq)), X, Z, compute)
