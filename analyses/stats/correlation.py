"""Correlation levels (system / summary / global) and batched correlation coefficients.

The coefficients are computed along the last axis of arrays of any leading shape, so the same
code computes a point estimate (leading shape ``()``), the M per-input correlations of the
summary level (leading shape ``(M,)``) and thousands of resampled statistics at once.
A pair (x_i, z_i) with a NaN on either side is dropped (pairwise deletion). Where scipy would
return NaN (fewer than 2 pairs, a constant side) the result is NaN; where scipy raises for fewer
than 2 points, we return NaN as well.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from . import vocabulary
from .validation import Coefficient, coefficient_iv, level_iv, matrices_iv
from .reductions import (SAFE_MAGNITUDES, scaled, summary_mean, system_means, system_scores,  # noqa: F401
                         unit_scale, unscaled)

#: Bytes the pairwise Kendall computation may use for its (..., n, n) temporaries at once.
PAIRWISE_BUDGET = 64 * 2**20
#: Above this many pairs per correlation, Kendall uses scipy's O(n log n) routine per row instead
#: of the O(n^2) pairwise tensors (only the global level of large matrices gets there).
PAIRWISE_MAX_N = 512


def correlate(
    X: npt.ArrayLike, Z: npt.ArrayLike, level: str, coefficient: str = "pearson"
) -> float:
    """Correlation between metric ``X`` and human ``Z`` (N systems x M inputs) at ``level``.

    - ``"system"``: Corr over the N pairs (nanmean_j x_ij, nanmean_j z_ij); the nanmedians for a
      coefficient whose ``aggregate`` is ``"median"`` (:func:`.validation.aggregate_iv`).
    - ``"summary"`` (alias ``"input"``): mean over inputs j of Corr(X[:, j], Z[:, j]), each
      over the systems where both are non-NaN; inputs whose correlation is undefined
      (constant column, < 2 pairs) are left out; NaN if no input is defined.
    - ``"global"``: Corr over all cells where both are non-NaN.

    ``coefficient`` is ``"pearson"``, ``"spearman"``, ``"kendall"`` (tau-b; alias
    ``"kendall-b"``) or ``"kendall-c"`` (Stuart's tau-c), matching ``scipy.stats``.
    Also the Kendall variants of Deutsch, Foster & Freitag (2023) -- ``"kendall-a"``,
    ``"kendall-23"``, ``"acc-23"`` -- and, for Kendall a/b/23/acc-23, a tie threshold on the
    metric's differences, ``"acc-23[eps=0.01]"``, or the calibrated threshold,
    ``"acc-23[tie-calibrated]"`` (see :mod:`.kendall_variants`).
    """
    X, Z = matrices_iv(X=X, Z=Z)
    return level_correlation(X, Z, level_iv(level), coefficient_iv(coefficient))


def level_correlation(X: np.ndarray, Z: np.ndarray, level: str, coefficient: Coefficient) -> float:
    """:func:`correlate` for validated arguments (canonical level and coefficient)."""
    if coefficient.calibrated:
        from .kendall_variants import calibrate

        return calibrate(X, Z, level, coefficient.variant).value
    if coefficient.whole_level:
        return float(level_module(coefficient).level_value(X, Z, level))
    if level == "system":
        return float(corr(system_scores(X, coefficient.aggregate), system_scores(Z, coefficient.human_aggregate),
                          coefficient))
    if level == "summary":
        return float(summary_mean(corr(X.T, Z.T, coefficient)))
    return float(corr(X.ravel(), Z.ravel(), coefficient))


def level_module(coefficient: Coefficient):
    """The module computing a coefficient of :data:`vocabulary.LEVEL_COEFFICIENTS` (imported on
    first use; it imports nothing of this module)."""
    import importlib

    return importlib.import_module(f"{__package__}.{vocabulary.LEVEL_COEFFICIENTS[coefficient.name]}")


def pairs_count(X: np.ndarray, Z: np.ndarray, level: str) -> int:
    """The n of Fisher's and Williams' formulas.

    system: systems whose two means are defined (N without empty rows); summary: the largest
    number of non-NaN pairs in any input; global: non-NaN pairs of cells.
    """
    if level == "system":
        return int((~np.isnan(system_means(X)) & ~np.isnan(system_means(Z))).sum())
    valid = ~np.isnan(X) & ~np.isnan(Z)
    if level == "summary":
        return int(valid.sum(axis=0).max())
    return int(valid.sum())


def corr(x: np.ndarray, z: np.ndarray, coefficient: Coefficient) -> np.ndarray:
    """Correlation along the last axis, pairs with a NaN dropped; leading axes are a batch."""
    # contiguous rows: numpy's summation order (hence rounding) depends on the memory layout
    if coefficient.control is not None:
        raise ValueError(f"{coefficient.label} is a partial correlation: it needs the groups of the cells "
                         f"(analyses.stats.partial), not only the two vectors")
    x, z = np.ascontiguousarray(x), np.ascontiguousarray(z)
    valid = ~np.isnan(x) & ~np.isnan(z)
    if coefficient.name == "pearson":
        return _pearson(x, z, valid)
    if coefficient.name == "spearman":
        return _spearman(x, z, valid)
    if coefficient.name in vocabulary.LEVEL_COEFFICIENTS:
        return level_module(coefficient).corr(x, z)
    if coefficient.calibrated:
        raise ValueError("a tie-calibrated coefficient is computed per level (level_correlation), not per vector")
    if coefficient.ties_variant:
        from .kendall_variants import kendall_variant

        return kendall_variant(np.where(valid, x, np.nan), z, coefficient.variant, coefficient.epsilon)
    return _kendall(x, z, valid, coefficient.variant)


#: Rows whose largest deviation from the mean lies between these (or is 0) give unit vectors
#: without overflow or subnormals; others are computed again at scale 1 (:func:`_pearson`).
SAFE_DEVIATIONS = (2.0**-960, 2.0**960)


def _pearson(x: np.ndarray, z: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """r = <dx / |dx|, dz / |dz|>, d = deviation from the mean of the valid pairs.

    The operations are scipy.stats.pearsonr's (scaled norms, vecdot, r rounded to +/-1 for
    n = 2), so that without NaNs the result is bit-identical to scipy's. Where they overflow
    (values near 1e308) or the deviations are subnormal (near 1e-300), the side is computed
    again with each row scaled by a power of two (:func:`unit_scale`, exact): any finite values
    give the r of their rescaled copy.
    """
    n = valid.sum(axis=-1)
    complete = valid.all()
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        units = []
        for v in (x, z):
            unit, scale = _unit_deviations(v, valid, n, complete)
            if not ((scale == 0) | ((scale >= SAFE_DEVIATIONS[0]) & (scale <= SAFE_DEVIATIONS[1]))).all():
                v = scaled(v, unit_scale(v if complete else np.where(valid, v, 0.0)))
                unit, _ = _unit_deviations(v, valid, n, complete)
            units.append(unit)
        r = np.clip(np.vecdot(*units), -1.0, 1.0)
    r = np.where(n == 2, np.round(r), r)
    undefined = (n < 2) | _constant(x, valid, complete) | _constant(z, valid, complete)
    return np.where(undefined, np.nan, r)


def pearson_against(z: np.ndarray) -> Callable[[np.ndarray], np.ndarray] | None:
    """``r(x)``: :func:`corr`'s Pearson of each row of x (c, n) with the one vector z (n,), bit
    for bit ``corr(x, broadcast_to(z, x.shape), pearson)`` for rows of finite values whose
    deviations lie within :data:`SAFE_DEVIATIONS` or are 0 (as ranks' do: the caller's to
    know), z's unit deviations computed once (each row of the broadcast copy would get the same
    operations on the same values). None where z is not such a vector or n < 3."""
    n = z.shape[-1]
    z = np.ascontiguousarray(z, dtype=np.float64)[None, :]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        unit_z, scale = _unit_deviations(z, None, np.full(1, n), True)
    safe = scale[0, 0] == 0 or SAFE_DEVIATIONS[0] <= scale[0, 0] <= SAFE_DEVIATIONS[1]
    if n < 3 or not np.isfinite(z).all() or not safe:
        return None
    z_constant = bool(_constant(z, None, True)[0])

    def r(x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            unit, _ = _unit_deviations(x, None, np.full(x.shape[0], n), True)
            out = np.clip(np.vecdot(unit, unit_z), -1.0, 1.0)
        return np.where(z_constant | _constant(x, None, True), np.nan, out)

    return r


def corr_columns(x: np.ndarray, z: np.ndarray, coefficient: Coefficient, complete: bool = False) -> np.ndarray:
    """:func:`corr` along the first axis: ``corr(moveaxis(x, 0, -1), moveaxis(z, 0, -1))``, bit
    for bit, for (n, ...) arrays whose first axis holds the n pairs.

    Made for the resampled columns of the summary level, gathered as (N, c, m) (systems first):
    reducing millions of rows of ~20 values along the last axis costs numpy a loop call per
    row, while along the first axis every operation is element-wise over whole (c, m) slices.
    Pearson and Spearman are computed so (the sums in numpy's own pairwise order,
    :func:`pairwise_sum_first`; maxima, minima and counts are exact in any order), then the
    dot products of the unit deviations on contiguous rows, as :func:`corr` takes them (the
    rounding of BLAS' dot depends on the layout). Other coefficients: :func:`corr` on the
    moved axes. ``complete``: the caller knows that x and z hold no NaN (not checked again).
    z may broadcast against x along the other axes (the human side of a batch, computed once for
    all its resamples when ``complete``: each column's operations are element-wise, the same).
    """
    import scipy.stats  # here, not at import time: the command line starts without scipy
    if coefficient.name not in ("pearson", "spearman"):
        return corr(np.moveaxis(x, 0, -1), np.moveaxis(np.broadcast_to(z, x.shape), 0, -1), coefficient)
    valid = None  # None: every pair valid
    if not complete:
        z = np.broadcast_to(z, x.shape)
        missing = np.isnan(x)
        missing |= np.isnan(z)
        valid = None if not missing.any() else ~missing
    if coefficient.name == "spearman":
        if valid is not None:
            x, z = np.where(valid, x, np.nan), np.where(valid, z, np.nan)
        x = scipy.stats.rankdata(x, axis=0, nan_policy="omit")
        z = scipy.stats.rankdata(z, axis=0, nan_policy="omit")
    return _pearson_columns(x, z, valid)


def pairwise_sum_first(T: np.ndarray) -> np.ndarray:
    """Sum over the first axis of ``T`` (n, ...) in the order in which numpy sums each
    contiguous row ``a`` of n values along its last axis (``pairwise_sum`` of numpy's
    loops_utils, then added to the reduction's initial 0.0): for n < 8 a running sum; for
    n <= 128 eight running sums s_r = a_r + a_{r+8} + ... over the first n - n % 8 values,
    ((s_0 + s_1) + (s_2 + s_3)) + ((s_4 + s_5) + (s_6 + s_7)), then the n % 8 last values one
    by one; above 128 the sums of the two halves (the first n // 2 rounded down to a multiple
    of 8), recursively. ``tests/test_stats_batched.py`` checks the equality for n = 1 .. 300.
    """
    n = T.shape[0]
    if n < 8:
        res = np.zeros(T.shape[1:])
        for i in range(n):
            res += T[i]
        return res
    if n <= 128:
        r = T[:8].copy()
        for i in range(8, n - n % 8, 8):
            r += T[i:i + 8]
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for i in range(n - n % 8, n):
            res += T[i]
        return 0.0 + res
    half = n // 2
    half -= half % 8
    return pairwise_sum_first(T[:half]) + pairwise_sum_first(T[half:])


def _pearson_columns(x: np.ndarray, z: np.ndarray, valid: np.ndarray | None) -> np.ndarray:
    """:func:`_pearson` along the first axis (see :func:`corr_columns`); ``valid`` None when
    every pair is (the complete path of :func:`_pearson`)."""
    complete = valid is None
    n = x.shape[0] if complete else valid.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        units, maybe_constant = [], []
        for v in (x, z):
            unit, scale, squares = _unit_deviations_columns(v, valid, n)
            if not ((scale == 0) | ((scale >= SAFE_DEVIATIONS[0]) & (scale <= SAFE_DEVIATIONS[1]))).all():
                v = scaled(v, unit_scale(v if complete else np.where(valid, v, 0.0), axis=0))
                unit, scale, squares = _unit_deviations_columns(v, valid, n)
            units.append(np.ascontiguousarray(np.moveaxis(unit, 0, -1)))
            # a column constant over its valid pairs has n equal deviations d: d = 0, or every
            # d / max|d| = +-1 and their squares sum to n exactly; only such columns are checked
            maybe_constant.append((scale == 0) | (squares == n))
        r = np.clip(np.vecdot(*units), -1.0, 1.0)
    r = np.where(n == 2, np.round(r), r)
    undefined = (n < 2) | _constant_columns(x, valid, maybe_constant[0]) | _constant_columns(z, valid, maybe_constant[1])
    return np.where(undefined, np.nan, r)


def _unit_deviations_columns(
    v: np.ndarray, valid: np.ndarray | None, n: np.ndarray | int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_unit_deviations` along the first axis: the same operations on the same values
    (some of them in place); also the sums of squares of dev / max|dev|."""
    if valid is None:
        dev = v - pairwise_sum_first(v) / n
    else:
        dev = np.where(valid, v - pairwise_sum_first(np.where(valid, v, 0.0)) / n, 0.0)
    work = np.abs(dev)
    scale = work.max(axis=0)
    np.divide(dev, scale, out=work)
    np.multiply(work, work, out=work)
    squares = pairwise_sum_first(work)
    denominator = np.sqrt(squares)
    denominator *= scale  # = scale * |dev / scale|: a product is the same in either order
    np.divide(dev, denominator, out=dev)
    return dev, scale, squares


def _constant_columns(x: np.ndarray, valid: np.ndarray | None, candidates: np.ndarray) -> np.ndarray:
    """:func:`_constant` along the first axis, tested on the ``candidates`` columns only
    (the others are known not to be constant)."""
    out = np.zeros(candidates.shape, dtype=bool)
    if candidates.any():
        xc = x[:, candidates]
        if valid is None:
            out[candidates] = xc.min(axis=0) == xc.max(axis=0)
        else:
            vc = valid[:, candidates]
            out[candidates] = np.where(vc, xc, np.inf).min(axis=0) == np.where(vc, xc, -np.inf).max(axis=0)
    return out


def _unit_deviations(
    v: np.ndarray, valid: np.ndarray, n: np.ndarray, complete: bool
) -> tuple[np.ndarray, np.ndarray]:
    """dev / |dev| along the last axis (0 at invalid pairs) and max |dev|, by scipy's operations."""
    if complete:  # same arithmetic, fewer passes
        dev = v - (v.sum(axis=-1) / n)[..., None]
    else:
        dev = np.where(valid, v - (np.where(valid, v, 0.0).sum(axis=-1) / n)[..., None], 0.0)
    scale = np.abs(dev).max(axis=-1, keepdims=True)
    return dev / (scale * np.linalg.vector_norm(dev / scale, axis=-1, keepdims=True)), scale


def _constant(x: np.ndarray, valid: np.ndarray, complete: bool = False) -> np.ndarray:
    """True where all valid values are equal (exact test, as scipy's)."""
    if complete:
        return x.min(axis=-1) == x.max(axis=-1)
    return np.where(valid, x, np.inf).min(axis=-1) == np.where(valid, x, -np.inf).max(axis=-1)


def _spearman(x: np.ndarray, z: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Pearson of the average ranks among the valid pairs (ties get their mean rank)."""
    import scipy.stats  # here, not at import time: the command line starts without scipy
    rx = scipy.stats.rankdata(np.where(valid, x, np.nan), axis=-1, nan_policy="omit")
    rz = scipy.stats.rankdata(np.where(valid, z, np.nan), axis=-1, nan_policy="omit")
    return _pearson(rx, rz, valid)


def _kendall(x: np.ndarray, z: np.ndarray, valid: np.ndarray, variant: str) -> np.ndarray:
    """Kendall tau-b or tau-c, computed from pairwise signs.

    With S = sum_{i,k} sign(x_i - x_k) sign(z_i - z_k) (= 2 (C - D)), n valid pairs,
    Tx = #{(i, k): x_i = x_k} (ordered, diagonal included) and likewise Tz:
    tau-b = S / sqrt((n^2 - Tx)(n^2 - Tz)); tau-c = S / (n^2 (m - 1) / m), m the smaller
    number of distinct values. NaN when every pair is tied in x or in z (as scipy).
    """
    n = x.shape[-1]
    lead = x.shape[:-1]
    if n > PAIRWISE_MAX_N:
        flat = [
            _kendall_scipy(xr[v], zr[v], variant)
            for xr, zr, v in zip(x.reshape(-1, n), z.reshape(-1, n), valid.reshape(-1, n))
        ]
        return np.asarray(flat, dtype=np.float64).reshape(lead)
    x2, z2, v2 = (a.reshape(-1, n) for a in (x, z, valid))
    out = np.empty(x2.shape[0])
    step = max(1, PAIRWISE_BUDGET // (8 * 6 * n * n))
    for start in range(0, x2.shape[0], step):
        sl = slice(start, start + step)
        out[sl] = _kendall_pairwise(x2[sl], z2[sl], v2[sl], variant)
    return out.reshape(lead)


def _kendall_pairwise(x: np.ndarray, z: np.ndarray, valid: np.ndarray, variant: str) -> np.ndarray:
    pair = valid[:, :, None] & valid[:, None, :]
    with np.errstate(over="ignore"):  # a difference of finite values beyond 1e308 is +-inf: same sign
        dx = x[:, :, None] - x[:, None, :]
        dz = z[:, :, None] - z[:, None, :]
    s = np.where(pair, np.sign(dx) * np.sign(dz), 0.0).sum(axis=(1, 2))
    tie_x = pair & (dx == 0)
    n = valid.sum(axis=1).astype(np.float64)
    untied_x = n * n - tie_x.sum(axis=(1, 2))
    tie_z = pair & (dz == 0)
    untied_z = n * n - tie_z.sum(axis=(1, 2))
    classes = np.minimum(_distinct(tie_x, valid), _distinct(tie_z, valid)) if variant == "c" else None
    return kendall_tau(s, n, untied_x, untied_z, variant, classes)


def kendall_tau(
    s: np.ndarray,
    n: np.ndarray,
    untied_x: np.ndarray,
    untied_z: np.ndarray,
    variant: str,
    classes: np.ndarray | None = None,
) -> np.ndarray:
    """tau from S = 2 (C - D) and the untied ordered pair counts n^2 - Tx, n^2 - Tz.

    Same operations as scipy.stats.kendalltau (S/2 and the halves are exact integers):
    tau-b = (C - D) / sqrt(tot - xtie) / sqrt(tot - ytie); tau-c = 2 (C - D) / (n^2 (m - 1) / m)
    with m = ``classes``, the smaller number of distinct values. NaN when all pairs are tied
    in x or in z; clipped to [-1, 1].
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            tau = s / 2 / np.sqrt(untied_x / 2) / np.sqrt(untied_z / 2)
        else:
            tau = s / (n * n * (classes - 1) / classes)
    return np.where((untied_x == 0) | (untied_z == 0), np.nan, np.clip(tau, -1.0, 1.0))


def _distinct(ties: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Number of distinct values: sum over valid i of 1 / #{k: x_k = x_i}."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.rint(np.where(valid, 1.0 / ties.sum(axis=2), 0.0).sum(axis=1))


def _kendall_scipy(x: np.ndarray, z: np.ndarray, variant: str) -> float:
    import scipy.stats  # here, not at import time: the command line starts without scipy
    if x.size < 2:
        return np.nan
    return float(scipy.stats.kendalltau(x, z, variant=variant).statistic)
