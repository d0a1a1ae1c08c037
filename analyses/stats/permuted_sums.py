"""Permutation tests' resampled deltas from sums linear in the swap masks (``evaluate --all-pairs``).

A permutation resample swaps cells of X and Y (bits a, :func:`.resampling.permutation_masks`);
X' = where(a, Y, X), Y' = where(a, X, Y) = X' of the bits 1 - a. What the level's coefficient
needs of X' is, per system or per input, a few sums, each linear in the bits given the pair:

- system level: sum_j x'_ij = sum_j x_ij + sum_j a_ij (y_ij - x_ij) (one product of the masks
  with Y - X). Pearson takes the means as they are (as :mod:`.batched` already does); Spearman
  and Kendall only depend on the order of the means, so the means are computed so and a
  resample whose means are not separated by more than :data:`TIE_GAP` (relative) -- where
  the rounding of the linear form could differ from summing the permuted cells -- is
  computed again cell by cell (:func:`.batched._permuted_system_means` ``exact``): every
  rank, hence every coefficient, is that of the cell-by-cell path, bit for bit.
- summary level, Pearson: per input j, sum x', sum x'^2 and sum x' u (u the human's unit
  deviations) are sum x + a'(y - x), sum x^2 + a'(y^2 - x^2), sum x u + a'((y - x) u) (the
  values centred on the input's mean of X and Y, which keeps the variance's cancellation
  small): one batched matrix product (inputs x resamples x systems) @ (inputs x systems x 3)
  for X' and Y' together; r = sum x'u / sqrt(sum x'^2 - (sum x')^2 / n). The rounding
  differs from the two-pass deviations of :func:`.correlation.corr_columns` by ~1e-16.
- summary level, Spearman: the ranks of X' from the rank tables of :func:`.batched._rank_tables`
  by one product (those of Y' are the tables' column sums minus it), then
  sum_i R'_i w_i (w the human's centred ranks) and sum_i R'_i^2, which are exact (halves and
  quarters below 2^24, float32), so that r = num / sqrt(var_x' var_z) rounds only in its
  last two operations.
- Kendall at the summary level keeps :mod:`.batched`'s quadratic forms (already one product).

Used when the data are complete (no NaN), there are at least 3 systems and no column of X'
can be constant (Pearson's linear variance could then be rounding instead of 0); otherwise
:func:`evaluator` returns None and :mod:`.batched` computes the resamples. The resampled
deltas equal the cell-by-cell ones to ~1e-15 (``tests/test_permuted_sums.py``: within 1e-12,
and identical p-value counts; ``bench/bench_allpairs.py`` measures the difference).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import batched
from .correlation import corr, system_means
from .reductions import summary_mean
from .validation import Coefficient

#: Relative gap below which two linearly summed system means may be tied or ordered otherwise
#: by the cell-by-cell sums (their rounding differs by ~1e-15 relative): such resamples are
#: computed again cell by cell.
TIE_GAP = 1e-9


def evaluator(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, level: str,
              coefficient: Coefficient) -> Callable[[np.ndarray], np.ndarray] | None:
    """``evaluate(mask)`` -> delta_b = r(X'_b, Z) - r(Y'_b, Z), as
    :func:`.batched.permutation_evaluator` (X, Y standardised by the caller); None where this
    module does not apply (see the module docstring)."""
    if coefficient.whole_level or level not in ("system", "summary") or X.shape[0] < 3:
        return None
    if np.isnan(X).any() or np.isnan(Y).any() or np.isnan(Z).any():
        return None
    if level == "system" and coefficient.name in ("spearman", "kendall") and not coefficient.ties_variant:
        return _system_ranked(X, Y, Z, coefficient)
    if level == "summary" and coefficient.name == "pearson" and not _may_be_constant(X, Y):
        return _summary_pearson(X, Y, Z)
    if level == "summary" and coefficient.name == "spearman":
        return _summary_spearman(X, Y, Z)
    return None


def _system_ranked(X, Y, Z, coefficient: Coefficient) -> Callable[[np.ndarray], np.ndarray]:
    """System level, a coefficient of the means' order: linear means, near ties cell by cell."""
    zm = system_means(Z)

    def evaluate(mask: np.ndarray) -> np.ndarray:
        xm, ym = batched._permuted_system_means(X, Y, mask, exact=False)
        close = _near_ties(xm) | _near_ties(ym)
        if close.any():
            xm, ym = xm.copy(), ym.copy()
            xm[close], ym[close] = batched._permuted_system_means(X, Y, mask[close], exact=True)
        return corr(xm, zm, coefficient) - corr(ym, zm, coefficient)

    return evaluate


def _near_ties(m: np.ndarray) -> np.ndarray:
    """(c,) which rows of means (c, N) have two values within TIE_GAP of each other (relative to
    the row's largest magnitude), or a value that is not finite."""
    s = np.sort(m, axis=1)
    scale = np.maximum(np.abs(s[:, :1]), np.abs(s[:, -1:]))
    with np.errstate(invalid="ignore"):
        close = (np.diff(s, axis=1) <= TIE_GAP * scale).any(axis=1)
    return close | ~np.isfinite(s).all(axis=1)


def _may_be_constant(X: np.ndarray, Y: np.ndarray) -> bool:
    """Whether some swap could make a column of X' (or Y') constant: a value v (x_0j or y_0j)
    such that every system has x_ij = v or y_ij = v."""
    return any(bool(((X == v) | (Y == v)).all(axis=0).any()) for v in (X[0], Y[0]))


def _unit_columns(Z: np.ndarray) -> np.ndarray:
    """Each column's deviations from its mean over their norm (NaN for a constant column)."""
    dev = Z - Z.mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = dev / np.sqrt((dev * dev).sum(axis=0))
    constant = Z.min(axis=0) == Z.max(axis=0)
    return np.where(constant, np.nan, u)


def _summary_pearson(X, Y, Z) -> Callable[[np.ndarray], np.ndarray]:
    """Summary level, Pearson: three sums per input and resample from one batched product."""
    n = X.shape[0]
    centre = (X.mean(axis=0) + Y.mean(axis=0)) / 2
    x, y, u = X - centre, Y - centre, _unit_columns(Z)
    base_x = np.stack([x.sum(axis=0), (x * x).sum(axis=0), (x * u).sum(axis=0)], axis=-1)  # (M, 3)
    base_y = np.stack([y.sum(axis=0), (y * y).sum(axis=0), (y * u).sum(axis=0)], axis=-1)
    terms = np.ascontiguousarray(np.stack([y - x, y * y - x * x, (y - x) * u], axis=-1).transpose(1, 0, 2))

    def r_of(sums: np.ndarray) -> np.ndarray:  # (M, c, 3) -> (c, M)
        with np.errstate(invalid="ignore", divide="ignore"):
            var = sums[..., 1] - sums[..., 0] * sums[..., 0] / n
            r = np.clip(sums[..., 2] / np.sqrt(var), -1.0, 1.0)
        return r.T

    def evaluate(mask: np.ndarray) -> np.ndarray:
        full = np.broadcast_to(mask, (mask.shape[0], *X.shape))
        bits = full.transpose(2, 0, 1).astype(np.float64)  # (M, c, N)
        change = np.einsum("mcn,mnk->mck", bits, terms)  # (M, c, 3); einsum: BLAS threads cost more here
        return summary_mean(r_of(base_x[:, None] + change)) - summary_mean(r_of(base_y[:, None] - change))

    return evaluate


def _summary_spearman(X, Y, Z) -> Callable[[np.ndarray], np.ndarray]:
    """Summary level, Spearman, per input: sum_i w_i R'_i (w the human's centred ranks) is a
    quadratic form c0 + l'a + a'Qa of the bits (the ranks of :func:`.batched._rank_tables`,
    R'_i = (1 - a_i)(s0_i + (G1 a)_i) + a_i (s1_i + (G2 a)_i): Q = diag(w)(G2 - G1)); Y' is X'
    of the bits 1 - a. The variance of the ranks is (n^3 - n - sum_v (t_v^3 - t_v)) / 12 with
    t_v, the cells of X' equal to v, linear in the bits too. One product per batch
    bits @ [Q' | l | l_y | B] gives everything; all sums are exact (quarters below 2^24)."""
    n = X.shape[0]
    forms = _spearman_forms(X, Y, batched.corr_ranks(Z) - (n + 1) / 2)
    A, dtype = forms["A"], forms["A"].dtype
    var_z = forms["var_z"][:, None]

    def r_of(num: np.ndarray, ties: np.ndarray) -> np.ndarray:  # (M, c) each -> (c, M)
        var_x = (n**3 - n - ties) / 12
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.clip(num / np.sqrt(var_x * var_z), -1.0, 1.0)
        return np.where((var_x > 0) & (var_z > 0), r, np.nan).T

    def evaluate(mask: np.ndarray) -> np.ndarray:
        full = np.broadcast_to(mask, (mask.shape[0], *X.shape))
        bits = full.transpose(2, 0, 1).astype(dtype)  # (M, c, N)
        P = np.einsum("mcn,mnk->mck", bits, A)  # einsum: BLAS threads cost more here
        quad = np.einsum("mcn,mcn->mc", P[..., :n], bits).astype(np.float64)
        lin_x, lin_y, t = P[..., n].astype(np.float64), P[..., n + 1].astype(np.float64), P[..., n + 2:]
        t_x, t_y = forms["alpha_x"][:, None] + t, forms["alpha_y"][:, None] - t
        ties_x, ties_y = ((u * u * u - u).sum(axis=-1).astype(np.float64) for u in (t_x, t_y))
        rx = r_of(forms["c0"][:, None] + lin_x + quad, ties_x)
        ry = r_of(forms["cy"][:, None] - lin_y + quad, ties_y)
        return summary_mean(rx) - summary_mean(ry)

    return evaluate


def _spearman_forms(X: np.ndarray, Y: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    """The forms of :func:`_summary_spearman` for each input (w (N, M): the human's centred ranks).

    A (M, N, N + 2 + V): Q' (so that bits @ Q' is Qa), l, l_y = l + Q1 + Q'1, then B (the
    change of t_v when a bit is set, for the V values of the input seen twice or more among
    its X and Y cells, zero-padded); c0 and cy = c0 + sum l + 1'Q1; alpha_x / alpha_y (M, V):
    t_v at a = 0 for X' / Y'; var_z (M,): sum w^2."""
    n, m = X.shape
    dtype = np.float32 if 2 * n**3 < 2**22 else np.float64
    G, sums = batched._rank_tables(X, Y)
    G1, G2 = (np.asarray(G[..., part], dtype=np.float64).transpose(0, 2, 1) for part in (slice(0, n), slice(n, 2 * n)))
    wt = w.T  # (M, N)
    Q = wt[:, :, None] * (G2 - G1)
    l = wt * (sums[:, 1] - sums[:, 0]) + np.einsum("mik,mi->mk", G1, wt)
    c0 = (wt * sums[:, 0]).sum(axis=1)
    values = [np.unique(np.concatenate([X[:, j], Y[:, j]]), return_counts=True) for j in range(m)]
    values = [v[c > 1] for v, c in values]
    V = max(1, max(len(v) for v in values))
    B, alpha_x, alpha_y = np.zeros((m, n, V)), np.zeros((m, V)), np.zeros((m, V))
    for j, v in enumerate(values):
        ex, ey = X[:, j, None] == v, Y[:, j, None] == v  # (N, len(v))
        B[j, :, :len(v)] = ey.astype(float) - ex
        alpha_x[j, :len(v)], alpha_y[j, :len(v)] = ex.sum(axis=0), ey.sum(axis=0)
    l_y = l + Q.sum(axis=1) + Q.sum(axis=2)
    A = np.concatenate([Q.transpose(0, 2, 1), l[..., None], l_y[..., None], B], axis=2)
    return {"A": np.ascontiguousarray(A, dtype=dtype), "c0": c0, "cy": c0 + l.sum(axis=1) + Q.sum(axis=(1, 2)),
            "alpha_x": alpha_x.astype(dtype), "alpha_y": alpha_y.astype(dtype), "var_z": (wt * wt).sum(axis=1)}
