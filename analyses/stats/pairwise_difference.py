"""Pairwise Difference Pearson (PDP; DiIanni & Deutsch, EMNLP 2025; mt-metrics-eval's ``pdp=True``).

PDP is Pearson's r over the *pairwise differences* of the systems' scores instead of the scores:

    PDP(x, z) = Pearson( (x_i - x_j)_{(i, j)}, (z_i - z_j)_{(i, j)} )

over every ordered pair (i, j) of the N systems, i = j included (as mt-metrics-eval enumerates
them: the N x N matrix of differences, flattened). A pair with a missing value (NaN) on either
side, metric or human, is left out.

- ``system``: over the system means (the same means as every coefficient's system level).
- ``summary``: the within-input differences of every input pooled into one correlation
  (mt-metrics-eval's ``Pearson(average_by='item', pdp=True)``): for each input j the pairs
  (x_ij - x_i'j, z_ij - z_i'j) of its systems, all inputs' pairs in one vector. Inputs are not
  averaged: an input with more (or larger) differences weighs more.
- ``global`` is not defined: the differences of all cells pooled would compare cells of
  different inputs (and equal Pearson's r over the cells).

Notes: the differences of ordered pairs are symmetric (d_ji = -d_ij) and the diagonal is 0, so
their mean is 0 and PDP = sum d^x d^z / sqrt(sum (d^x)^2 sum (d^z)^2) over the unordered pairs
too; the enumeration changes nothing but rounding. The points are not independent (each system
appears in N pairs), so Fisher's interval and Williams' test do not apply; the bootstrap and
permutation methods recompute PDP on each resample. NaN when fewer than two pairs differ, or a
side's differences are all 0 (scipy's ``pearsonr`` would be undefined too).
"""

from __future__ import annotations

import numpy as np

from .reductions import system_means

#: The levels PDP is defined at.
LEVELS = ("system", "summary")


def differences(x: np.ndarray) -> np.ndarray:
    """x_i - x_j for every ordered pair (i, j) of the last axis, i = j included: the last axis
    of length n becomes one of length n^2, ordered as ``(x[:, None] - x[None, :]).ravel()``
    (NaN where x_i or x_j is NaN)."""
    x = np.asarray(x, dtype=float)
    return (x[..., :, None] - x[..., None, :]).reshape(*x.shape[:-1], -1)


def _pearson(dx: np.ndarray, dz: np.ndarray) -> np.ndarray:
    """Pearson's r along the last axis over the pairs where neither side is NaN, computed as
    scipy.stats.pearsonr does (deviations from the means, normalised, then their dot product)."""
    valid = ~np.isnan(dx) & ~np.isnan(dz)
    n = valid.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = np.where(valid, dx, 0.0).sum(axis=-1, keepdims=True) / n[..., None]
        mz = np.where(valid, dz, 0.0).sum(axis=-1, keepdims=True) / n[..., None]
        ex = np.where(valid, dx - mx, 0.0)
        ez = np.where(valid, dz - mz, 0.0)
        nx = np.sqrt((ex * ex).sum(axis=-1, keepdims=True))
        nz = np.sqrt((ez * ez).sum(axis=-1, keepdims=True))
        r = ((ex / nx) * (ez / nz)).sum(axis=-1)
    r = np.where((n < 2) | (nx[..., 0] == 0) | (nz[..., 0] == 0), np.nan, r)
    return np.clip(r, -1.0, 1.0)


def corr(x: np.ndarray, z: np.ndarray) -> np.ndarray:
    """PDP of vectors of system scores along the last axis (leading axes a batch)."""
    return _pearson(differences(x), differences(z))


def level_value(X: np.ndarray, Z: np.ndarray, level: str) -> float:
    """PDP of metric ``X`` and human ``Z`` (N systems x M inputs, NaN = missing) at ``level``."""
    if level == "system":
        return float(corr(system_means(X), system_means(Z)))
    if level == "summary":
        # column j's N^2 within-input differences, every input's pooled into one vector
        return float(_pearson(differences(np.asarray(X, dtype=float).T).ravel(),
                              differences(np.asarray(Z, dtype=float).T).ravel()))
    raise ValueError(f"pdp is defined at the levels {list(LEVELS)}; got {level!r}.")


def conventions() -> dict:
    """What a PDP row records besides its level and coefficient."""
    return {"pdp": "Pearson over the differences x_i - x_j of every ordered pair (i, j) of systems, i = j "
                   "included (mt-metrics-eval pdp=True); system level: of the system means; summary level: "
                   "every input's within-input differences pooled into one correlation (average_by='item'); "
                   "pairs with a NaN on either side left out"}
