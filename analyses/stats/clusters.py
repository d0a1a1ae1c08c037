"""Clustered resampling: whole clusters of inputs drawn, or swapped, together (issue 45 item 3).

Inputs are often not independent: segments come in documents, questions in passages. A
bootstrap over single inputs then treats the segments of one document as independent draws and
its intervals are too narrow (Miller 2024: clustered standard errors up to about 3x the naive
ones). The cluster bootstrap (Field & Welsh 2007; Cameron, Gelbach & Miller 2008) draws the
**clusters** with replacement instead, each drawn cluster bringing all its inputs, as often as
it is drawn:

- Boot-Inputs: C clusters drawn with replacement (C = the number of clusters), the resample the
  inputs of the drawn clusters, with their multiplicity;
- Boot-Both: systems x clusters, the systems drawn as before, independently of the clusters;
- Boot-Systems: the inputs are not resampled, so the clustering changes nothing.

Permutation tests (Perm-Inputs, Perm-Both) swap the two metrics' values of an exchangeable unit
with probability 1/2. With clustered inputs the unit is the cluster: one coin per cluster
(Perm-Inputs) or per (system, cluster) (Perm-Both), the same swap decision for every input of the
cluster -- the block randomisation that keeps the null distribution when the dependence lies
within clusters. mt-metrics-eval's PermutationSigDiff has no clustering (it swaps per system or
per item); this is the cluster analogue of its per-item swap, not a copy of anything it does.
Perm-Systems swaps whole systems: the clustering of inputs changes nothing.

Reproducibility: the draws are those of :mod:`.resampling` with the number of clusters in place
of the number of inputs, in the same order (systems first, then clusters; or the coins), so with
one input per cluster -- numbered in input order -- every draw, and every number, is the
unclustered one bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from . import resampling

#: What the conventions of a clustered resampling say about it.
PROCEDURE = ("clusters of inputs resampled whole: a bootstrap draws clusters with replacement (all inputs of a "
             "drawn cluster, with its multiplicity; Boot-Both: systems x clusters); a permutation test swaps per "
             "cluster (Perm-Inputs) or per system and cluster (Perm-Both), the same decision for every input of "
             "the cluster; resampling only systems is unchanged")


@dataclass(frozen=True)
class Clusters:
    """The clusters of M inputs: ``codes`` (M,) the cluster of each input, numbered 0..C-1 in
    order of first appearance; ``order`` the inputs sorted by cluster (stably: input order within
    a cluster), cluster c the slice ``order[starts[c]:starts[c] + sizes[c]]``."""

    codes: np.ndarray
    order: np.ndarray
    starts: np.ndarray
    sizes: np.ndarray

    @property
    def count(self) -> int:
        """C, the number of clusters."""
        return int(self.sizes.size)

    def inputs(self, drawn: np.ndarray) -> np.ndarray:
        """The inputs (column indices, int32) of the clusters ``drawn`` (1-d), each drawn
        cluster's inputs in input order, as often as it is drawn."""
        reps = self.sizes[drawn]
        ends = np.cumsum(reps)
        within = np.arange(int(ends[-1]) if ends.size else 0) - np.repeat(ends - reps, reps)
        return self.order[np.repeat(self.starts[drawn], reps) + within]

    def conventions(self) -> dict:
        """What a result records of the clustering."""
        return {"clusters": self.count, "cluster_sizes": f"{int(self.sizes.min())}-{int(self.sizes.max())}",
                "cluster_procedure": PROCEDURE}


def clusters_iv(labels: Sequence | np.ndarray | None, n_inputs: int) -> Clusters | None:
    """``labels`` (one per input: any hashable values, None not allowed) as :class:`Clusters`;
    None stays None. A ValueError when their number is not ``n_inputs``, a label is missing, or
    they make fewer than two clusters (nothing to resample)."""
    if labels is None:
        return None
    if isinstance(labels, Clusters):
        if labels.codes.size != n_inputs:
            raise ValueError(f"clusters: {labels.codes.size} inputs clustered, the matrices have {n_inputs}")
        return labels
    labels = list(labels)
    if len(labels) != n_inputs:
        raise ValueError(f"clusters: {len(labels)} labels for {n_inputs} inputs")
    if any(v is None or (isinstance(v, float) and v != v) for v in labels):
        raise ValueError("clusters: every input needs a cluster label")
    number: dict = {}
    codes = np.array([number.setdefault(v, len(number)) for v in labels], dtype=np.int32)
    if len(number) < 2:
        raise ValueError("clusters: the inputs form a single cluster; nothing to resample")
    order = np.argsort(codes, kind="stable").astype(np.int32)
    sizes = np.bincount(codes, minlength=len(number))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return Clusters(codes, order, starts, sizes)


# --- draws --------------------------------------------------------------------------------
def bootstrap_draws(rng: np.random.Generator, size: int, n_systems: int, clusters: Clusters,
                    method: str) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(rows, drawn)``: the systems as :func:`.resampling.bootstrap_indices` draws them, and
    (size, C) clusters drawn with replacement in place of its inputs (the same calls, C for M)."""
    return resampling.bootstrap_indices(rng, size, n_systems, clusters.count, method)


def permutation_masks(rng: np.random.Generator, size: int, n_systems: int, clusters: Clusters, method: str,
                      variant: str = "paper") -> tuple[np.ndarray]:
    """Swap masks of :func:`.resampling.permutation_masks` with one coin per cluster where it
    has one per input, spread onto the cluster's inputs (shapes (size, 1, M), (size, N, M))."""
    mask, = resampling.permutation_masks(rng, size, n_systems, clusters.count, method, variant)
    if method == "systems":
        return (mask,)
    return (np.ascontiguousarray(mask[..., clusters.codes]),)


def bootstrap_evaluator(evaluate: Callable[..., np.ndarray], clusters: Clusters) -> Callable[..., np.ndarray]:
    """``evaluate(rows, cols)`` (a batched bootstrap evaluator) of clusters drawn: each
    resample's inputs are those of its drawn clusters (:meth:`Clusters.inputs`); resamples with
    the same number of inputs are evaluated together (all of them when the clusters are of
    one size)."""
    def run(rows: np.ndarray | None, drawn: np.ndarray | None) -> np.ndarray:
        if drawn is None:
            return evaluate(rows, None)
        lengths = clusters.sizes[drawn].sum(axis=1)
        out = np.empty(drawn.shape[0])
        for length in np.unique(lengths):
            chosen = np.flatnonzero(lengths == length)
            cols = np.stack([clusters.inputs(drawn[b]) for b in chosen])
            out[chosen] = evaluate(None if rows is None else rows[chosen], cols)
        return out

    return run
