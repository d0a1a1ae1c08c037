"""Batched evaluation of resampled correlations, given drawn indices or swap masks.

No loop over resamples: every function takes a batch of c resamples (indices from
:func:`.resampling.bootstrap_indices`, masks from :func:`.resampling.permutation_masks`) and
returns the c statistics. The results equal computing the level correlation on each actually
resampled matrix (``X[rows][:, cols]``, or ``where(mask, Y, X)``) with scipy, which is what the
reference implementations do; ``tests/test_stats_batched.py`` checks this resample by resample.

How, per level:

- system: resampled system means are weighted sums -- with c_bj the number of times input j
  was drawn, mean_i = sum_j c_bj x_ij / sum_j c_bj [x_ij not NaN], one contraction; drawn
  systems are then gathered, and the coefficient is computed on the (c, N) batch. For
  Pearson, permuted means are linear in the swap mask:
  sum_j x'_ij = sum_j x_ij + sum_j a_ij (y_ij - x_ij). Float contractions use einsum, not
  BLAS, whose rounding can depend on the batch shape: results are bit-identical for any batch
  size. (The BLAS products below only add small integers, exactly.) A coefficient whose
  ``aggregate`` is the median (:func:`.validation.aggregate_iv`) takes each system's median
  over the drawn inputs instead -- the resampled matrix gathered, (c, N, m), duplicates as
  drawn, and :func:`.reductions.system_medians` along its last axis -- and, under permutation,
  the median of each permuted matrix's rows.
- summary: each input's correlation only depends on the drawn systems, so it is computed for
  all M inputs per resample and then averaged with the inputs' draw counts as weights (without
  drawn systems the M correlations are computed once). The drawn columns are gathered
  systems first, (N, c, m), for a block of m inputs at a time (:data:`SUMMARY_BLOCK_CELLS`),
  and :func:`.correlation.corr_columns` computes exactly :func:`.correlation.corr`'s numbers
  on them with element-wise operations: a batch's temporaries do not grow with M (only its
  (c, M) per-input correlations and draw counts do), and results do not depend on the
  blocks.
  Kendall uses weights instead of gathering: with w_i the number of times system i is drawn,
  2(C - D) = w' P w for P_ik = sign(x_i - x_k) sign(z_i - z_k) and the tied (ordered) pairs
  in x are w' Tx w (diagonal included), Tx_ik = [x_i = x_k]; duplicated systems are thus
  tied pairs, exactly as in the resampled matrix. One matrix product W @ [P | Tx | Tz] covers
  all resamples and inputs (in blocks of inputs bounded by PAIR_ARRAYS_BUDGET). Under permutation, each pair term depends on the two cells' swap
  bits, S(a) = c0 + l'a + a'Da with D = F11 - F10 - F01 + F00, so one quadratic form per
  input and resample gives the statistic for both X' (swap bits a) and Y' (bits 1 - a).
- global: the resampled matrices are gathered and the coefficient computed on the flattened
  (c, N*M) batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._engine import one_blas_thread
from .validation import Coefficient, coefficient_iv
from .correlation import (
    corr,
    corr_columns,
    kendall_tau,
    scaled,
    summary_mean,
    system_means,
    system_scores,
    unit_scale,
    unscaled,
)


#: The coefficient a Spearman correlation is on its ranks.
PEARSON = coefficient_iv("pearson")


def corr_ranks(z: np.ndarray) -> np.ndarray:
    """The average ranks along the first axis (no NaN), as :func:`.correlation.corr_columns` takes them."""
    import scipy.stats  # here, not at import time: the command line starts without scipy

    return scipy.stats.rankdata(z, axis=0, nan_policy="omit")


def bytes_per_cell(level: str, coefficient: Coefficient) -> int:
    """Upper bound of the temporaries the evaluators below allocate per resample and matrix
    cell they hold at once: a few float64 (c, N, M) arrays when gathering or ranking, a few
    float32 ones on the summary-level Kendall tau-b paths."""
    return 24 if level == "summary" and coefficient.label == "kendall-b" else 96


#: Cells (resamples x systems x inputs) of the summary level's resampled columns gathered at
#: once: the inputs are taken in blocks that fit (the temporaries then stay in the CPU's cache).
SUMMARY_BLOCK_CELLS = 2**17
#: Bytes per resample and input of the summary level's (c, M) arrays: per-input correlations,
#: draw counts and the weighted mean's temporaries.
SUMMARY_BYTES_PER_INPUT = 64


def resample_bytes(level: str, coefficient: Coefficient, n_systems: int, n_inputs: int) -> int:
    """Upper bound of the bytes of temporaries per resample of a batch (the batch size is the
    memory budget divided by it, :func:`._engine.default_batch_size`).

    System and global levels (and tie-calibrated coefficients): ``bytes_per_cell`` x N x M.
    Summary level: the (c, M) arrays, N x M bytes of drawn swap masks, and the temporaries of one
    block of inputs -- bytes_per_cell x N x (the inputs of a Kendall pair-array block, or 1: the
    gathered blocks hold SUMMARY_BLOCK_CELLS cells, or c x N when a batch is larger).
    """
    per_cell = bytes_per_cell(level, coefficient)
    if level != "summary" or coefficient.whole_level:
        return per_cell * n_systems * n_inputs
    block = len(_input_blocks((n_systems, n_inputs))[0]) if coefficient.label in ("kendall-b", "kendall-c") else 1
    return per_cell * n_systems * block + (SUMMARY_BYTES_PER_INPUT + n_systems) * n_inputs


def bootstrap_evaluator(
    X: np.ndarray, Z: np.ndarray, level: str, coefficient: Coefficient
) -> Callable[[np.ndarray | None, np.ndarray | None], np.ndarray]:
    """``evaluate(rows, cols)``: r(X[rows][:, cols], Z[rows][:, cols]) at ``level`` for each
    resample b of a batch.

    ``rows`` (c, N) / ``cols`` (c, M) are drawn indices, None meaning "all, once each". What
    does not depend on the draws (Kendall's pair arrays) is computed once, here.
    """
    n_systems, n_inputs = X.shape
    if coefficient.whole_level:
        return _per_resample_bootstrap(X, Z, level, coefficient)
    kendall_blocks = None
    if level == "summary" and coefficient.label in ("kendall-b", "kendall-c"):
        kendall_blocks = [_boot_pairs(X[:, b], Z[:, b]) for b in _input_blocks(X.shape)]
    unresampled: list[np.ndarray] = []  # the M correlations without drawn systems, once computed
    complete = level == "summary" and not (np.isnan(X).any() or np.isnan(Z).any())

    def evaluate(rows: np.ndarray | None, cols: np.ndarray | None) -> np.ndarray:
        if level == "system":
            if coefficient.aggregate == coefficient.human_aggregate:
                xm, zm = np.split(_drawn_system_scores(np.concatenate([X, Z]), cols, coefficient.aggregate), 2, axis=-1)
            else:
                xm = _drawn_system_scores(X, cols, coefficient.aggregate)
                zm = _drawn_system_scores(Z, cols, coefficient.human_aggregate)
            if rows is not None:
                xm, zm = (np.take_along_axis(np.broadcast_to(m, rows.shape), rows, axis=1) for m in (xm, zm))
            return corr(xm, zm, coefficient)
        if level == "summary":
            if rows is None:
                if not unresampled:
                    unresampled.append(corr(X.T, Z.T, coefficient))
                r = unresampled[0]
            elif kendall_blocks is not None:
                W = _counts(rows, n_systems)
                r = np.concatenate(
                    [_kendall_weighted_columns(pairs, W, coefficient.variant) for pairs in kendall_blocks], axis=-1
                )
            else:
                r = _resampled_columns(X, Z, rows, coefficient, complete)
            return summary_mean(r, None if cols is None else _counts(cols, n_inputs))
        xg, zg = (gather(A, rows, cols) for A in (X, Z))
        return corr(xg, zg, coefficient)

    return evaluate


def permutation_evaluator(
    X: np.ndarray, Y: np.ndarray, Z: np.ndarray, level: str, coefficient: Coefficient
) -> Callable[[np.ndarray], np.ndarray]:
    """``evaluate(mask)``: delta_b = r(X'_b, Z) - r(Y'_b, Z) for each resample b of a batch,
    X'_b = where(mask_b, Y, X), Y'_b = where(mask_b, X, Y).

    ``mask`` broadcasts to (c, N, M) (see :func:`.resampling.permutation_masks`); X and Y are
    used as given (the caller standardises them). Kendall's pair arrays are computed once, here.
    """
    if coefficient.whole_level:
        return _per_resample_permutation(X, Y, Z, level, coefficient)
    kendall_blocks = None
    if level == "summary" and coefficient.label == "kendall-b":
        kendall_blocks = [(b, _perm_pairs(X[:, b], Y[:, b], Z[:, b])) for b in _input_blocks(X.shape)]
    zm = system_scores(Z, coefficient.human_aggregate)
    complete = level == "summary" and not (np.isnan(X).any() or np.isnan(Y).any() or np.isnan(Z).any())
    tables = _rank_tables(X, Y) if complete and coefficient.name == "spearman" else None

    def evaluate(mask: np.ndarray) -> np.ndarray:
        if level == "system" and coefficient.aggregate == "median":
            xm, ym = system_scores(np.where(mask, Y, X), "median"), system_scores(np.where(mask, X, Y), "median")
            return corr(xm, zm, coefficient) - corr(ym, zm, coefficient)
        if level == "system":
            xm, ym = _permuted_system_means(X, Y, mask, exact=coefficient.name != "pearson")
            return corr(xm, zm, coefficient) - corr(ym, zm, coefficient)
        if kendall_blocks is not None:
            full = np.broadcast_to(mask, (mask.shape[0], *X.shape))
            rx, ry = np.concatenate(
                [_kendall_b_permuted_columns(pairs, full[:, :, b]) for b, pairs in kendall_blocks], axis=-1
            )
            return summary_mean(rx) - summary_mean(ry)
        if level == "summary":
            rx, ry = _permuted_columns(X, Y, Z, mask, coefficient, complete, tables)
            return summary_mean(rx) - summary_mean(ry)
        shape = np.broadcast_shapes(mask.shape, X.shape)
        xp = np.where(mask, Y, X)
        yp = np.where(mask, X, Y)
        zp = np.broadcast_to(Z, shape)
        flat = (shape[0], -1)
        zf = zp.reshape(flat)
        return corr(xp.reshape(flat), zf, coefficient) - corr(yp.reshape(flat), zf, coefficient)

    return evaluate


def unpaired_system_evaluator(
    X: np.ndarray, Z: np.ndarray, coefficient: Coefficient
) -> Callable[[np.ndarray | None, np.ndarray | None, np.ndarray | None], np.ndarray]:
    """``evaluate(rows, cols_x, cols_z)``: the system-level r of each resample b, the metric's
    system means over its drawn inputs ``cols_x[b]`` and the human's over ``cols_z[b]`` (drawn
    independently: :func:`.resampling.unpaired_bootstrap_indices`), the systems ``rows[b]``."""
    def evaluate(rows: np.ndarray | None, cols_x: np.ndarray | None, cols_z: np.ndarray | None) -> np.ndarray:
        xm = _drawn_system_scores(X, cols_x, coefficient.aggregate)
        zm = _drawn_system_scores(Z, cols_z, coefficient.human_aggregate)
        c = next(a.shape[0] for a in (rows, cols_x, cols_z) if a is not None)
        xm, zm = (np.broadcast_to(m, (c, X.shape[0])) for m in (xm, zm))
        if rows is not None:
            xm, zm = (np.take_along_axis(m, rows, axis=1) for m in (xm, zm))
        return corr(xm, zm, coefficient)

    return evaluate


def _per_resample_bootstrap(
    X: np.ndarray, Z: np.ndarray, level: str, coefficient: Coefficient
) -> Callable[[np.ndarray | None, np.ndarray | None], np.ndarray]:
    """The bootstrap evaluator of a tie-calibrated coefficient: not vectorised over resamples.

    Each resampled matrix X[rows_b][:, cols_b] is built and the level's value computed on it,
    epsilon re-calibrated inside the resample (Deutsch, Foster & Freitag 2023's protocol).
    """
    from .correlation import level_correlation

    def evaluate(rows: np.ndarray | None, cols: np.ndarray | None) -> np.ndarray:
        c = (rows if rows is not None else cols).shape[0]
        out = np.empty(c)
        for b in range(c):
            r = slice(None) if rows is None else rows[b]
            k = slice(None) if cols is None else cols[b]
            out[b] = level_correlation(X[r][:, k], Z[r][:, k], level, coefficient)
        return out

    return evaluate


def _per_resample_permutation(
    X: np.ndarray, Y: np.ndarray, Z: np.ndarray, level: str, coefficient: Coefficient
) -> Callable[[np.ndarray], np.ndarray]:
    """The permutation evaluator of a tie-calibrated coefficient, one resample at a time:
    delta_b = r(X'_b, Z) - r(Y'_b, Z), each with its own epsilon calibrated on X'_b (Y'_b)."""
    from .correlation import level_correlation

    def evaluate(mask: np.ndarray) -> np.ndarray:
        full = np.broadcast_to(mask, (mask.shape[0], *X.shape))
        out = np.empty(mask.shape[0])
        for b in range(mask.shape[0]):
            xp, yp = np.where(full[b], Y, X), np.where(full[b], X, Y)
            out[b] = level_correlation(xp, Z, level, coefficient) - level_correlation(yp, Z, level, coefficient)
        return out

    return evaluate


def bootstrap_statistics(
    X: np.ndarray,
    Z: np.ndarray,
    level: str,
    coefficient: Coefficient,
    rows: np.ndarray | None,
    cols: np.ndarray | None,
) -> np.ndarray:
    """One batch: ``bootstrap_evaluator(X, Z, level, coefficient)(rows, cols)``."""
    return bootstrap_evaluator(X, Z, level, coefficient)(rows, cols)


def permutation_statistics(
    X: np.ndarray, Y: np.ndarray, Z: np.ndarray, level: str, coefficient: Coefficient, mask: np.ndarray
) -> np.ndarray:
    """One batch: ``permutation_evaluator(X, Y, Z, level, coefficient)(mask)``."""
    return permutation_evaluator(X, Y, Z, level, coefficient)(mask)


#: Bytes of (N, N, inputs) pair arrays the Kendall paths build at once; inputs are processed in
#: blocks that fit (all of them at once for REALSumm-sized data).
PAIR_ARRAYS_BUDGET = 128 * 2**20
#: float64 (N, N) arrays per input that the Kendall paths hold at the same time (upper bound).
PAIR_ARRAYS_PER_INPUT = 24


def _summary_blocks(n_resamples: int, n_systems: int, n_inputs: int) -> list[slice]:
    """Blocks of inputs whose gathered (N, c, m) columns hold at most SUMMARY_BLOCK_CELLS cells
    (one input at least)."""
    step = max(1, SUMMARY_BLOCK_CELLS // (n_resamples * n_systems))
    return [slice(a, min(n_inputs, a + step)) for a in range(0, n_inputs, step)]


def _resampled_columns(
    X: np.ndarray, Z: np.ndarray, rows: np.ndarray, coefficient: Coefficient, complete: bool = False
) -> np.ndarray:
    """(c, M): r(X[rows_b, j], Z[rows_b, j]) for each resample b and input j, gathered and
    computed a block of inputs at a time, systems first (:func:`.correlation.corr_columns`;
    ``complete``: X and Z hold no NaN)."""
    c = rows.shape[0]
    out = np.empty((c, X.shape[1]))
    drawn = rows.T  # (N, c): X[:, block][drawn] is (N, c, m)
    for block in _summary_blocks(c, *X.shape):
        out[:, block] = corr_columns(X[:, block][drawn], Z[:, block][drawn], coefficient, complete)
    return out


def _permuted_columns(
    X: np.ndarray, Y: np.ndarray, Z: np.ndarray, mask: np.ndarray, coefficient: Coefficient, complete: bool = False,
    tables: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(c, M) each: per-input r(X'_b[:, j], Z[:, j]) and r(Y'_b[:, j], Z[:, j]) for masks of
    shape (c, N|1, M|1), a block of inputs at a time, systems first (``complete``: X, Y and Z
    hold no NaN; ``tables``: Spearman's :func:`_rank_tables`, the permuted ranks then taken
    from them, :func:`_permuted_ranks`)."""
    c = mask.shape[0]
    rx, ry = np.empty((c, X.shape[1])), np.empty((c, X.shape[1]))
    for block in _summary_blocks(c, *X.shape):
        x, y, z = X[:, None, block], Y[:, None, block], Z[:, None, block]
        if tables is not None:
            full = np.broadcast_to(mask, (c, *X.shape))[:, :, block]
            ranks = _permuted_ranks(tables[0][block], tables[1][block], full)
            rz = corr_ranks(z)
            rx[:, block], ry[:, block] = (corr_columns(r, rz, PEARSON, True) for r in ranks)
            continue
        swap = np.moveaxis(mask[:, :, block] if mask.shape[2] > 1 else mask, 1, 0)  # (N|1, c, m|1)
        xp, yp = np.where(swap, y, x), np.where(swap, x, y)  # (N, c, m)
        zp = z if complete else np.broadcast_to(z, xp.shape)  # complete: the human side once per block
        rx[:, block] = corr_columns(xp, zp, coefficient, complete)
        ry[:, block] = corr_columns(yp, zp, coefficient, complete)
    return rx, ry


def _rank_tables(X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What the average ranks of X' and Y' (no NaN) need, per input: with H(d) = 1, 1/2, 0 for
    d >, =, < 0 and C_uv[i, k] = H(u_i - v_k), the rank of x'_i among x' (swap bits a) is
    1/2 + sum_k C_{a_i a_k}[i, k] (= 1 + #less + #tied others / 2) = (1 - a_i)(1/2 + sum_k Cxx[i, k] + (G1 a)_i)
    + a_i (1/2 + sum_k Cyx[i, k] + (G2 a)_i) with G1 = Cxy - Cxx, G2 = Cyy - Cyx; Y' is X' of bits 1 - a.
    Returns [G1' | G2'] as (M, N, 2N) float32 and the 1/2 + sums (M, 2, N): halves, exact."""
    def table(u: np.ndarray, v: np.ndarray) -> np.ndarray:  # (M, N, N): C_uv of each input
        return (np.sign(u.T[:, :, None] - v.T[:, None, :]) + 1) / 2

    cxx, cxy, cyx, cyy = table(X, X), table(X, Y), table(Y, X), table(Y, Y)
    G = np.concatenate([(cxy - cxx).transpose(0, 2, 1), (cyy - cyx).transpose(0, 2, 1)], axis=2)
    return G.astype(np.float32), 0.5 + np.stack([cxx.sum(axis=2), cyx.sum(axis=2)], axis=1)


def _permuted_ranks(G: np.ndarray, sums: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The average ranks of X' and Y' (:func:`_rank_tables` of a block of m inputs) under swap
    masks (c, N, m), each (N, c, m) float64: the integers and halves rankdata gives, exactly
    (every sum in float32 is of halves below 2^23)."""
    n = G.shape[1]
    ranks = []
    for a in (mask, ~mask):
        bits = np.ascontiguousarray(a.transpose(2, 0, 1)).astype(np.float32)  # (m, c, N)
        P = np.einsum("mcn,mnk->mck", bits, G)  # (m, c, 2N); einsum: BLAS threads cost more here
        r = (1 - bits) * (sums[:, None, 0] + P[..., :n]) + bits * (sums[:, None, 1] + P[..., n:])
        ranks.append(r.transpose(2, 1, 0).astype(np.float64))
    return ranks[0], ranks[1]


def _input_blocks(shape: tuple[int, int]) -> list[np.ndarray]:
    """Blocks of input indices whose pair arrays fit PAIR_ARRAYS_BUDGET."""
    n_sys, n_in = shape
    step = max(1, PAIR_ARRAYS_BUDGET // (8 * PAIR_ARRAYS_PER_INPUT * n_sys * n_sys))
    return [np.arange(a, min(n_in, a + step)) for a in range(0, n_in, step)]


def _counts(indices: np.ndarray, n: int) -> np.ndarray:
    """(c, n) number of times each index appears in each row of ``indices``."""
    c = indices.shape[0]
    offsets = indices + n * np.arange(c, dtype=np.int64)[:, None]
    return np.bincount(offsets.ravel(), minlength=c * n).reshape(c, n).astype(np.float64)


def gather(A: np.ndarray, rows: np.ndarray | None, cols: np.ndarray | None) -> np.ndarray:
    """The resampled matrices flattened to (c, N*M)."""
    if rows is None:
        g = A[:, cols].transpose(1, 0, 2)
    elif cols is None:
        g = A[rows]
    else:
        g = A[rows[:, :, None], cols[:, None, :]]
    return g.reshape(g.shape[0], -1)


def _drawn_system_scores(A: np.ndarray, cols: np.ndarray | None, aggregate: str) -> np.ndarray:
    """Each system's score over the inputs ``cols`` (c, m) drawn in each resample, (c, N); (N,)
    if None (all, once each): the mean (weighted by the draw counts) or the median of the
    gathered (N, c, m) cells, a duplicated input counted as often as drawn."""
    if aggregate == "median":
        return system_scores(A, "median") if cols is None else system_scores(A[:, cols], "median").T
    return _weighted_system_means(A, None if cols is None else _counts(cols, A.shape[1]))


def _weighted_system_means(A: np.ndarray, col_w: np.ndarray | None) -> np.ndarray:
    """System means over inputs drawn with multiplicities ``col_w`` (c, M); (N,) if None.

    einsum, not BLAS: each resample's sums are then computed the same way whatever the batch
    size, so results are bit-identical for any batch size. Rows are summed in the scale of
    :func:`.correlation.unit_scale` (exact), so any finite values have a mean.
    """
    if col_w is None:
        return system_means(A)
    valid = ~np.isnan(A)
    e = unit_scale(A)
    with np.errstate(invalid="ignore", divide="ignore"):
        sums = np.einsum("bj,ij->bi", col_w, np.where(valid, scaled(A, e), 0.0))
        if valid.all():
            return unscaled(sums / col_w.sum(axis=1, keepdims=True), e)
        return unscaled(sums / np.einsum("bj,ij->bi", col_w, valid.astype(np.float64)), e)


def _permuted_system_means(
    X: np.ndarray, Y: np.ndarray, mask: np.ndarray, exact: bool
) -> tuple[np.ndarray, np.ndarray]:
    """System means of X' = where(mask, Y, X) and Y' = where(mask, X, Y), (c, N) each.

    ``exact``: summed cell by cell in the permuted order, so that means tied in the permuted
    matrices stay exactly tied (needed by the rank coefficients). Otherwise (Pearson, which is
    continuous in the means) the sums are linear in the swap bits,
    sum_j x'_ij = sum_j x_ij + sum_j a_ij (y_ij - x_ij): a matrix product, several times faster.
    Each system's X and Y values are summed in the scale of their largest magnitude
    (:func:`.correlation.unit_scale`, exact), so any finite values have means.
    """
    vx, vy = ~np.isnan(X), ~np.isnan(Y)
    e = unit_scale(np.concatenate([X, Y], axis=1))
    x0, y0 = np.where(vx, scaled(X, e), 0.0), np.where(vy, scaled(Y, e), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        if exact:
            xm = np.where(mask, y0, x0).sum(axis=2) / np.where(mask, vy, vx).sum(axis=2)
            ym = np.where(mask, x0, y0).sum(axis=2) / np.where(mask, vx, vy).sum(axis=2)
        else:
            d_sum = _row_masked_sums(mask, y0 - x0)
            d_cnt = _row_masked_sums(mask, vy.astype(np.float64) - vx)
            xm = (x0.sum(axis=1) + d_sum) / (vx.sum(axis=1) + d_cnt)
            ym = (y0.sum(axis=1) - d_sum) / (vy.sum(axis=1) - d_cnt)
    return unscaled(xm, e), unscaled(ym, e)


def _row_masked_sums(mask: np.ndarray, D: np.ndarray) -> np.ndarray:
    """sum_j mask_bij D_ij as (c, N), for masks of shape (c, N, 1), (c, 1, M) or (c, N, M)."""
    if not D.any():
        return np.zeros((mask.shape[0], D.shape[0]))
    if mask.shape[2] == 1:
        return mask[:, :, 0] * D.sum(axis=1)
    return np.einsum("bij,ij->bi", np.broadcast_to(mask, (mask.shape[0], *D.shape)).view(np.uint8), D)


def _exact_dtype(n: int) -> type:
    """float32 is exact for the integer sums below (< 4 n^2) and twice as fast as float64."""
    return np.float32 if 4 * n * n < 2**24 else np.float64


def _pair_signs(u: np.ndarray, vu: np.ndarray, w: np.ndarray, vw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """sign(u_i - w_k) and [u_i = w_k] as (N, N, M) arrays, zero where a side is invalid."""
    both = vu[:, None, :] & vw[None, :, :]
    with np.errstate(over="ignore"):  # a difference of finite values beyond 1e308 is +-inf: same sign
        diff = np.where(both, u[:, None, :] - w[None, :, :], 1.0)
    return np.where(both, np.sign(diff), 0.0), (both & (diff == 0)).astype(np.float64)


def _off_diagonal(T: np.ndarray) -> np.ndarray:
    """Copy of an (N, N, M) pair array with the i = k entries zeroed."""
    T = T.copy()
    np.einsum("iim->im", T)[...] = 0.0
    return T


@dataclass(frozen=True)
class _BootPairs:
    """Pair arrays of a block of inputs for bootstrapped Kendall (int8: values in -1..1)."""

    arrays: np.ndarray  # (N, q * N * inputs): sign products, then the off-diagonal ties present
    ties_present: tuple[bool, bool]  # (x, z)
    valid: np.ndarray  # (N, inputs) float64


def _boot_pairs(X: np.ndarray, Z: np.ndarray) -> _BootPairs:
    n_sys = X.shape[0]
    valid = ~np.isnan(X) & ~np.isnan(Z)
    sx, tx = _pair_signs(X, valid, X, valid)
    sz, tz = _pair_signs(Z, valid, Z, valid)
    ties = [_off_diagonal(t) for t in (tx, tz)]
    present = (bool(ties[0].any()), bool(ties[1].any()))
    arrays = [sx * sz] + [t for t, p in zip(ties, present) if p]
    stacked = np.stack(arrays, axis=1).reshape(n_sys, -1).astype(np.int8)
    return _BootPairs(stacked, present, valid.astype(np.float64))


@one_blas_thread()   # exact integer products: the same bits on any threads
def _kendall_weighted_columns(pairs: _BootPairs, W: np.ndarray, variant: str) -> np.ndarray:
    """Per-input Kendall tau (c, inputs) of the bootstrap samples where system i appears W_bi times.

    Quadratic forms w'Tw of the off-diagonal tie arrays are only computed when some column has
    a tie (the diagonal contributes sum_i w_i^2 [valid]); tau-c's distinct-value count is
    sum_i w_i / (T w)_i over the drawn valid systems.
    """
    n_sys, n_in = pairs.valid.shape
    q = 1 + sum(pairs.ties_present)
    dtype = _exact_dtype(n_sys)
    Wd = W.astype(dtype)
    Q = (Wd @ pairs.arrays.astype(dtype)).reshape(-1, q, n_sys, n_in)
    quad = np.matmul(Wd[:, None, None, :], Q)[:, :, 0, :].astype(np.float64)  # (c, q, inputs)
    n = W @ pairs.valid
    diagonal = (W * W) @ pairs.valid
    slot = np.cumsum(pairs.ties_present)  # where each present tie array sits in Q / quad
    tie_sums = [diagonal + quad[:, slot[j]] if pairs.ties_present[j] else diagonal for j in range(2)]
    untied_x, untied_z = (n * n - t for t in tie_sums)
    classes = None
    if variant == "c":
        wv = W[:, :, None] * pairs.valid
        rows = [wv + Q[:, slot[j]] if pairs.ties_present[j] else wv for j in range(2)]
        with np.errstate(invalid="ignore", divide="ignore"):
            classes = np.minimum(*(np.rint(np.where(wv > 0, wv / t, 0.0).sum(axis=1)) for t in rows))
    return kendall_tau(quad[:, 0], n, untied_x, untied_z, variant, classes)


@dataclass(frozen=True)
class _PermPairs:
    """What permuted Kendall tau-b needs of a block of inputs, for the three pair sums
    f = (sign products with z, ties in x', ties in z): S_f(a) = c0 + l'a + a'Da."""

    D: np.ndarray  # (3, inputs, N, N) int8, off-diagonal, values in -4..4
    nonzero: tuple[bool, bool, bool]
    coef: np.ndarray  # (inputs, N, 7): l (3), D1 (3), change of the valid count (1)
    const_x: np.ndarray  # (inputs, 3): c0
    const_y: np.ndarray  # (inputs, 3): c0 + sum(l) + sum(D)
    n_x: np.ndarray  # (inputs,): valid pairs of X
    n_y: np.ndarray  # (inputs,): valid pairs of Y


def _perm_pairs(X: np.ndarray, Y: np.ndarray, Z: np.ndarray) -> _PermPairs:
    """For swap bits a of an input (a_i = 1: X' takes y_i), each pair sum
    S(a) = sum_{i,k} F(a_i, a_k)[i, k] equals c0 + l'a + a'Da with c0 = sum F00,
    D = F11 - F10 - F01 + F00 (diagonal moved into l), l_i = sum_k (F10 - F00)[i, k] +
    (F01 - F00)[k, i] + D_ii; Y' has bits 1 - a: S(1 - a) = c0 + sum(l) + sum(D) - (l + 2 D1)'a + a'Da.
    """
    n_sys, n_in = X.shape
    vz = ~np.isnan(Z)
    u = (X, Y)
    vu = tuple(~np.isnan(v) & vz for v in u)
    signs_z, ties_z = _pair_signs(Z, vz, Z, vz)
    F = np.empty((3, 2, 2, n_sys, n_sys, n_in))  # [function, p, q, i, k, input]
    for p in range(2):
        for q in range(2):
            s, t = _pair_signs(u[p], vu[p], u[q], vu[q])
            F[0, p, q], F[1, p, q] = s * signs_z, t
            F[2, p, q] = ties_z * (vu[p][:, None, :] & vu[q][None, :, :])
    D = F[:, 1, 1] - F[:, 1, 0] - F[:, 0, 1] + F[:, 0, 0]
    diag = np.einsum("fiim->fim", D).copy()
    np.einsum("fiim->fim", D)[...] = 0.0
    lin = (F[:, 1, 0] - F[:, 0, 0]).sum(axis=2) + (F[:, 0, 1] - F[:, 0, 0]).sum(axis=1) + diag
    const_x = F[:, 0, 0].sum(axis=(1, 2))  # (3, inputs)
    count = vu[1].astype(np.float64) - vu[0]
    return _PermPairs(
        D=np.ascontiguousarray(D.transpose(0, 3, 1, 2)).astype(np.int8),
        nonzero=tuple(bool(D[f].any()) for f in range(3)),
        coef=np.concatenate([lin, D.sum(axis=2), count[None]]).transpose(2, 1, 0),
        const_x=const_x.T,
        const_y=(const_x + lin.sum(axis=1) + D.sum(axis=(1, 2))).T,
        n_x=vu[0].sum(axis=0).astype(np.float64),
        n_y=vu[1].sum(axis=0).astype(np.float64),
    )


@one_blas_thread()   # exact integer products: the same bits on any threads
def _kendall_b_permuted_columns(pairs: _PermPairs, mask: np.ndarray) -> np.ndarray:
    """Per-input Kendall tau-b of X' and Y' vs Z, stacked as (2, c, inputs); ``mask`` (c, N, inputs)."""
    n_in, n_sys = pairs.coef.shape[:2]
    c = mask.shape[0]
    dtype = _exact_dtype(n_sys)
    bits = np.ascontiguousarray(mask.view(np.uint8).transpose(2, 0, 1)).astype(dtype)  # (inputs, c, N)
    linear = np.matmul(bits, pairs.coef.astype(dtype)).astype(np.float64)  # (inputs, c, 7)
    la, da, dn = linear[..., :3], linear[..., 3:6], linear[..., 6]
    quad = np.zeros((n_in, c, 3))
    for f in range(3):
        if pairs.nonzero[f]:
            Da = np.matmul(bits, pairs.D[f].astype(dtype))  # (inputs, c, N); D symmetric
            quad[..., f] = np.einsum("mcn,mcn->mc", Da, bits)
    sums_x = pairs.const_x[:, None, :] + la + quad  # (inputs, c, 3)
    sums_y = pairs.const_y[:, None, :] - la - 2 * da + quad
    taus = []
    for n, sums in ((pairs.n_x[:, None] + dn, sums_x), (pairs.n_y[:, None] - dn, sums_y)):
        taus.append(kendall_tau(sums[..., 0], n, n * n - sums[..., 1], n * n - sums[..., 2], "b").T)
    return np.stack(taus)
