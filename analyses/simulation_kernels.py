"""Fast resampled summary-level correlations for the simulations (:mod:`analyses.simulation`).

:mod:`analyses.stats.batched` evaluates the summary-level correlation of a batch of resamples
by materialising the resampled matrices (or, for Kendall, by pair arrays); for Pearson and
Spearman that is ~0.1-0.2 s per 1000 resamples of a 24 x 100 matrix, and the simulations need
tens of thousands of such batches. These kernels compute the same numbers from sums that are
linear in the resampling weights, with one matrix product per batch:

- **bootstrap over systems** (system i drawn w_i times): input j's Pearson correlation on the
  resampled column is the weighted correlation with weights w, so the six sums
  (n, Σx, Σz, Σx², Σz², Σxz) of every input and resample are ``W @ [v, x, z, x², z², xz]``.
  Spearman uses weighted mid-ranks, 2 rank_i = 2 Σ_k w_k [x_k < x_i] + Σ_k w_k [x_k = x_i] + 1,
  also a product ``W @ G``; their sums are exact integers.
- **permutation** (swap bits a_ij): with d = y - x, x'_ij = x_ij + a_ij d_ij and
  x'^2 = x^2 + a (y^2 - x^2), so the sums of X' (and of Y', whose bits are 1 - a) are the
  unpermuted sums plus (minus) three masked sums per input.

A correlation is undefined (NaN, left out of the summary mean) where scipy's is: fewer than 2
pairs, or a constant side; r is rounded to +-1 for 2 pairs. Sums can only show that a variance
is tiny, so (resample, input) pairs whose variance is below ``1e-9`` of its scale are checked
exactly on the drawn values. Results equal :mod:`analyses.stats.batched`'s up to rounding
(``tests/test_simulation_kernels.py``). Data are centred per input first (correlations are
shift-invariant), which keeps the sums' cancellation error near machine precision.
"""

from __future__ import annotations

import numpy as np

from metaeval.analyses.stats.correlation import summary_mean

#: A variance below this share of n Σx² is checked exactly for a constant column.
SUSPECT_VARIANCE = 1e-9


def bootstrap_summary(X: np.ndarray, Z: np.ndarray, coefficient: str, W: np.ndarray | None,
                      C: np.ndarray | None) -> np.ndarray:
    """Summary-level correlation of each bootstrap resample: (k,).

    ``W`` (k, N): how many times each system was drawn (None: all once); ``C`` (k, M): how many
    times each input was drawn (None: all once). ``coefficient``: "pearson" or "spearman".
    Equals ``batched.bootstrap_statistics(X, Z, "summary", coefficient, rows, cols)`` for the
    rows/cols whose counts are W and C.
    """
    valid = ~np.isnan(X) & ~np.isnan(Z)
    W = np.ones((1, X.shape[0])) if W is None else W.astype(np.float64)
    if coefficient == "pearson":
        r = _bootstrap_pearson(X, Z, valid, W)
    elif coefficient == "spearman":
        r = _bootstrap_spearman(X, Z, valid, W)
    else:
        raise ValueError(f"no fast kernel for {coefficient!r}; use analyses.stats.batched")
    if C is None:
        return summary_mean(r)
    return summary_mean(np.broadcast_to(r, C.shape), C)


def permutation_summary_pearson(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """delta_b = r(X'_b, Z) - r(Y'_b, Z) at the summary level, Pearson: (k,).

    X'_b = where(mask_b, Y, X), Y'_b = where(mask_b, X, Y); ``mask`` broadcasts to (k, N, M).
    X and Y must have the same missing cells (so X' and Y' have them too). Equals
    ``batched.permutation_statistics(X, Y, Z, "summary", pearson, mask)``.
    """
    if not np.array_equal(np.isnan(X), np.isnan(Y)):
        raise ValueError("X and Y must have the same missing cells")
    valid = ~np.isnan(X) & ~np.isnan(Z)
    v = valid.astype(np.float64)
    centre = _column_means((X + Y) / 2, valid)
    xc, yc = (np.where(valid, A - centre, 0.0) for A in (X, Y))
    zc = np.where(valid, Z - _column_means(Z, valid), 0.0)
    k = mask.shape[0]
    full = np.broadcast_to(mask, (k, *X.shape))
    bits = np.ascontiguousarray(full.transpose(2, 1, 0)).astype(np.float64)  # (M, N, k): a product per input
    d = yc - xc
    coef = np.stack([d, yc * yc - xc * xc, d * zc]).transpose(2, 0, 1)  # (M, 3, N)
    lin = np.matmul(coef, bits).transpose(1, 0, 2)  # (3, M, k): the masked sums
    n, sz, szz = (a.sum(axis=0)[:, None] for a in (v, zc, zc * zc))
    const_z = _constant_columns(Z, valid)[:, None]
    means = []
    for A, B, sign in ((xc, yc, 1.0), (yc, xc, -1.0)):
        sx, sxx, sxz = (base.sum(axis=0)[:, None] + sign * part for base, part in zip((A, A * A, A * zc), lin))
        suspect = _suspect(n, sx, sxx)
        constant = np.broadcast_to(const_z, suspect.shape).copy()
        if suspect.any():
            j, b = np.nonzero(suspect)
            # the drawn column: B where swapped if A is X (sign 1), A where swapped if A is Y
            values = np.where(full[b, :, j], B[:, j].T, A[:, j].T)
            constant[j, b] |= _exactly_constant(values, valid[:, j].T)
        means.append(summary_mean(_pearson(n, sx, sz, sxx, szz, sxz, constant).T))
    return means[0] - means[1]


# --- bootstrap paths -------------------------------------------------------------------------
def _bootstrap_pearson(X: np.ndarray, Z: np.ndarray, valid: np.ndarray, W: np.ndarray) -> np.ndarray:
    """(k, M) per-input Pearson of the resampled columns."""
    xc = np.where(valid, X - _column_means(X, valid), 0.0)
    zc = np.where(valid, Z - _column_means(Z, valid), 0.0)
    sums = W @ np.hstack([valid.astype(np.float64), xc, zc, xc * xc, zc * zc, xc * zc])
    n, sx, sz, sxx, szz, sxz = np.ascontiguousarray(sums.reshape(len(W), 6, -1).transpose(1, 0, 2))
    constant = np.zeros(n.shape, dtype=bool)
    for A, s, ss in ((X, sx, sxx), (Z, sz, szz)):
        suspect = _suspect(n, s, ss)
        if suspect.any():
            b, j = np.nonzero(suspect)
            constant[b, j] |= _exactly_constant(A[:, j].T, (W[b] > 0) & valid[:, j].T)
    return _pearson(n, sx, sz, sxx, szz, sxz, constant)


def _bootstrap_spearman(X: np.ndarray, Z: np.ndarray, valid: np.ndarray, W: np.ndarray) -> np.ndarray:
    """(k, M) per-input Spearman of the resampled columns: weighted Pearson of doubled mid-ranks.

    All sums are integers below 2**53 (exact), so a constant column has variance exactly 0.
    """
    n_sys, n_in = X.shape
    weights = W[:, :, None] * valid  # (k, N, M): w_i where the pair (x_ij, z_ij) is valid
    ranks = [(W.astype(np.float32) @ _rank_matrix(A, valid)).reshape(-1, n_sys, n_in) + 1.0 for A in (X, Z)]
    n = weights.sum(axis=1)
    wx, wz = (weights * r for r in ranks)
    sx, sz = wx.sum(axis=1), wz.sum(axis=1)
    sxx, szz, sxz = (np.einsum("bij,bij->bj", a, b) for a, b in ((wx, ranks[0]), (wz, ranks[1]), (wx, ranks[1])))
    constant = (n * sxx - sx * sx == 0) | (n * szz - sz * sz == 0)
    return _pearson(n, sx, sz, sxx, szz, sxz, constant)


def _rank_matrix(A: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """(N, N*M) float32 G with G[k, (i, j)] = 2 [a_kj < a_ij] + [a_kj = a_ij] over valid pairs,
    so that (w @ G)[(i, j)] + 1 is twice system i's mid-rank in input j under weights w."""
    both = valid[:, None, :] & valid[None, :, :]
    less = A[:, None, :] < A[None, :, :]
    equal = A[:, None, :] == A[None, :, :]
    return np.where(both, 2.0 * less + equal, 0.0).astype(np.float32).reshape(A.shape[0], -1)


# --- shared arithmetic -----------------------------------------------------------------------
def _column_means(A: np.ndarray, valid: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(valid, A, 0.0).sum(axis=0) / valid.sum(axis=0)
    return np.nan_to_num(means)


def _pearson(n, sx, sz, sxx, szz, sxz, constant) -> np.ndarray:
    """r from the sums; NaN where fewer than 2 pairs or a side is constant, +-1 for 2 pairs."""
    with np.errstate(invalid="ignore", divide="ignore"):
        r = n * sxz - sx * sz
        r /= np.sqrt((n * sxx - sx * sx) * (n * szz - sz * sz))
    np.clip(r, -1.0, 1.0, out=r)
    pairs = np.broadcast_to(n, r.shape)
    if (pairs == 2).any():
        r = np.where(pairs == 2, np.round(r), r)
    r[(pairs < 2) | constant] = np.nan
    return r


def _suspect(n: np.ndarray, s: np.ndarray, ss: np.ndarray) -> np.ndarray:
    """Where the variance n Σx² - (Σx)² is too small to tell a constant column by the sums."""
    return n * ss - s * s <= SUSPECT_VARIANCE * n * ss


def _exactly_constant(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """Rows of ``values`` whose present entries are all equal (at least one present)."""
    high = np.where(present, values, -np.inf).max(axis=1)
    low = np.where(present, values, np.inf).min(axis=1)
    return high == low


def _constant_columns(A: np.ndarray, valid: np.ndarray) -> np.ndarray:
    return _exactly_constant(A.T, valid.T)
