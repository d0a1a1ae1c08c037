"""Summary-level bootstrap resamples from sums linear in the systems' draw counts (the intervals
and paired bootstrap tests of ``evaluate --all-pairs``).

A resample of the summary level draws systems (rows, with replacement: system i drawn w_i
times) and inputs; each input's correlation is computed on the drawn systems, then averaged
with the inputs' draw counts (:func:`.reductions.summary_mean`). The drawn systems are the
same for every input, so with W (c, N) the counts of a batch, every input's sums are one
product W @ T of a table T (N, q M) computed once:

- Pearson: T = [x, x^2, x z, z, z^2] per input (centred on the input's means, which keeps the
  cancellation of the variances small); r = (Sxz - Sx Sz / N) / sqrt((Sxx - Sx^2 / N)(Szz -
  Sz^2 / N)). A drawn column is constant only when its drawn systems share one value: the
  counts per class of equal values (one more product with 0/1 tables, exact) say when,
  and its r is NaN, as the gathered path's.
- Spearman: the average rank of system i among the drawn values is
  sum_k w_k [v_k < v_i] + (sum_k w_k [v_k = v_i] + 1) / 2 (a copy drawn w times is w tied
  values), one product with the tables C[k, i] = [v_k < v_i] + [v_k = v_i] / 2 of X and Z; the
  mean rank is (N + 1) / 2 and r = sum w (Rx - m)(Rz - m) / sqrt(sum w (Rx - m)^2 sum w (Rz -
  m)^2), every sum exact (halves and quarters), zero variance exactly when constant.

The values equal the gathered path's (:func:`.batched._resampled_columns`) to ~1e-16 (tests/
test_permuted_sums.py); used for complete data (no NaN) with at least 3 systems and systems
drawn; otherwise :func:`bootstrap_evaluator` returns None.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._engine import one_blas_thread
from .reductions import summary_mean
from .validation import Coefficient


def bootstrap_evaluator(X: np.ndarray, Z: np.ndarray, level: str, coefficient: Coefficient, method: str
                        ) -> Callable[[np.ndarray, np.ndarray | None], np.ndarray] | None:
    """``evaluate(rows, cols)`` of :func:`.batched.bootstrap_evaluator` at the summary level for
    Pearson and Spearman, systems drawn (``method`` "systems" or "both"); None where this module
    does not apply."""
    n, m = X.shape
    if level != "summary" or coefficient.name not in ("pearson", "spearman") or coefficient.whole_level:
        return None
    if method not in ("systems", "both"):
        return None
    if n < 3 or np.isnan(X).any() or np.isnan(Z).any():
        return None
    per_input = _pearson_tables(X, Z) if coefficient.name == "pearson" else _spearman_tables(X, Z)

    def evaluate(rows: np.ndarray, cols: np.ndarray | None) -> np.ndarray:
        c = rows.shape[0]
        W = np.bincount((rows + n * np.arange(c)[:, None]).ravel(), minlength=c * n).reshape(c, n).astype(np.float64)
        r = per_input(W)
        if cols is None:
            return summary_mean(r)
        weights = np.bincount((cols + m * np.arange(c)[:, None]).ravel(), minlength=c * m).reshape(c, m)
        return summary_mean(r, weights.astype(np.float64))

    return evaluate


@one_blas_thread()   # exact 0/1 counts: the same bits on any threads
def _constant_drawn(classes: np.ndarray, starts: np.ndarray, W: np.ndarray) -> np.ndarray:
    """(c, M): whether the drawn systems of each input share one value (the counts drawn in a
    class of equal values (``classes`` (N, total) 0/1, the classes of input j from ``starts[j]``)
    reach N)."""
    counts = W @ classes
    return np.maximum.reduceat(counts, starts, axis=1) == W.shape[1]


def _classes(V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """0/1 tables of the classes of equal values of each column of V, side by side, and where
    each column's start."""
    tables, starts, at = [], [], 0
    for j in range(V.shape[1]):
        _, inverse = np.unique(V[:, j], return_inverse=True)
        tables.append(np.eye(inverse.max() + 1)[inverse])
        starts.append(at)
        at += tables[-1].shape[1]
    return np.concatenate(tables, axis=1), np.array(starts)


def _pearson_tables(X: np.ndarray, Z: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    n, m = X.shape
    x, z = X - X.mean(axis=0), Z - Z.mean(axis=0)
    T = np.concatenate([x, x * x, x * z, z, z * z], axis=1)  # (N, 5M)
    cx, cz = _classes(X), _classes(Z)

    def per_input(W: np.ndarray) -> np.ndarray:
        # einsum, not BLAS: a BLAS product's rounding depends on its threads (1 ulp in rare
        # resamples with 1 or 2 OpenBLAS threads: a Dask worker's and a command's); einsum sums
        # each element over the systems in one order, whatever the threads and the batch
        sx, sxx, sxz, sz, szz = np.split(np.einsum("cn,nq->cq", W, T), 5, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.clip((sxz - sx * sz / n) / np.sqrt((sxx - sx * sx / n) * (szz - sz * sz / n)), -1.0, 1.0)
        return np.where(_constant_drawn(*cx, W) | _constant_drawn(*cz, W), np.nan, r)

    return per_input


def _spearman_tables(X: np.ndarray, Z: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    n, m = X.shape

    def table(V: np.ndarray) -> np.ndarray:  # (N, M * N): C[k, (j, i)] = [v_kj < v_ij] + [v_kj = v_ij] / 2
        C = (np.sign(V[None, :, :] - V[:, None, :]) + 1) / 2  # [k, i, j]
        return np.ascontiguousarray(C.transpose(0, 2, 1)).reshape(n, m * n)

    T = np.concatenate([table(X), table(Z)], axis=1)

    def per_input(W: np.ndarray) -> np.ndarray:
        with one_blas_thread():   # exact (halves): the same bits on any threads
            ranks = (W @ T).reshape(W.shape[0], 2, m, n) + (0.5 - (n + 1) / 2)  # centred ranks
        w = W[:, None, :]
        rx, rz = ranks[:, 0], ranks[:, 1]
        wx = w * rx   # (w * rx) * rz and (w * rx) * rx: the product w * rx once, the same operations
        num = (wx * rz).sum(axis=2)
        vx, vz = np.multiply(wx, rx, out=wx).sum(axis=2), (w * rz * rz).sum(axis=2)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.clip(num / np.sqrt(vx * vz), -1.0, 1.0)
        return np.where((vx > 0) & (vz > 0), r, np.nan)

    return per_input
