"""Reductions of a level shared by every coefficient: exact scaling, system means, and the
mean of per-input correlations.

- ``system_means(X)``: mean_j x_ij over the non-NaN cells of each system (NaN without any);
- ``system_medians(X)``: median_j x_ij over the same cells (Graham 2015's median variants);
  ``system_scores(X, aggregate)`` either, by name (:data:`AGGREGATES`);
- ``summary_mean(r, w)``: sum_j w_j r_j / sum_j w_j over the inputs whose r_j is defined
  (w_j = 1, or how often input j was drawn by a bootstrap);
- ``unit_scale`` / ``scaled`` / ``unscaled``: exact power-of-two scaling, so sums of values
  near 1e308 do not overflow and values near 1e-300 keep their digits.

No other module of the statistics core is imported here.
"""

from __future__ import annotations

import numpy as np


#: Largest magnitudes between these are used as they are: sums of up to 2^31 such values and
#: their deviations neither overflow nor become subnormal (see :func:`unit_scale`).
SAFE_MAGNITUDES = (2.0**-400, 2.0**400)


def unit_scale(A: np.ndarray, axis: int | None = -1) -> np.ndarray | None:
    """Exponents e (kept dims) with 2^(e-1) <= max |A| < 2^e over ``axis`` (NaN ignored; 0 where
    no value is nonzero), or None when every such maximum lies within :data:`SAFE_MAGNITUDES`.

    ``np.ldexp(A, -e)`` has its largest magnitudes in [0.5, 1): sums over it neither overflow
    (values near 1e308) nor lose digits to subnormals (values near 1e-300). Scaling by a power
    of two is exact, so a statistic computed on the scaled values is the one of A itself.
    """
    top = np.fmax.reduce(np.abs(A), axis=axis, keepdims=True, initial=0.0)  # fmax skips NaN
    if ((top == 0) | ((top >= SAFE_MAGNITUDES[0]) & (top <= SAFE_MAGNITUDES[1]))).all():
        return None
    return np.frexp(top)[1]


def scaled(A: np.ndarray, e: np.ndarray | None) -> np.ndarray:
    """``A`` times 2^-e (exact); ``A`` itself when e is None (see :func:`unit_scale`)."""
    return A if e is None else np.ldexp(A, -e)


def unscaled(a: np.ndarray, e: np.ndarray | None) -> np.ndarray:
    """Undoes :func:`scaled` on a result ``a`` whose axis the kept dims of e were reduced over."""
    return a if e is None else np.ldexp(a, e[..., 0])


def system_means(X: np.ndarray) -> np.ndarray:
    """Mean over the inputs (last axis) ignoring NaN; NaN for a system without any score.

    Summed in the scale of :func:`unit_scale` (exact), so any finite values have a mean.
    """
    valid = ~np.isnan(X)
    e = unit_scale(X)
    with np.errstate(invalid="ignore", divide="ignore"):
        return unscaled(np.where(valid, scaled(X, e), 0.0).sum(axis=-1) / valid.sum(axis=-1), e)


#: How a system's score aggregates its inputs' cells: the mean (default) or the median.
AGGREGATES: tuple[str, ...] = ("mean", "median")
#: An analysis' ``aggregate`` names the metric's aggregate and, when it is not the mean, the
#: human's after a ``/``: "median" is Graham (2015)'s median variant (the metric's median against
#: the human's mean system score), "median/median" both medians, "mean/median" the human's alone.
AGGREGATE_VALUES: tuple[str, ...] = ("mean", "median", "mean/median", "median/median")


def aggregate_sides(aggregate: str) -> tuple[str, str]:
    """(the metric's, the human's) aggregate of an analysis' ``aggregate`` (:data:`AGGREGATE_VALUES`):
    the human's is the mean unless named after a ``/``."""
    if aggregate not in AGGREGATE_VALUES:
        raise ValueError(f"`aggregate` must be one of {', '.join(AGGREGATE_VALUES)}; got {aggregate!r}.")
    metric, _, human = aggregate.partition("/")
    return metric, human or "mean"


def system_medians(X: np.ndarray) -> np.ndarray:
    """Median over the inputs (last axis) ignoring NaN; NaN for a system without any score.

    Vectorised over any leading axes (resamples x systems): the values sorted (NaN last), the
    middle one of the n valid ones, or the mean of the two middle ones, (a + b) / 2 as
    ``np.median`` takes it. A bootstrap's duplicated inputs count as often as drawn.
    """
    X = np.asarray(X, dtype=float)
    S = np.sort(X, axis=-1)                      # NaN sort last
    n = (~np.isnan(X)).sum(axis=-1)
    lo = np.maximum((n - 1) // 2, 0)[..., None]
    hi = np.maximum(n // 2, 0)[..., None]
    a = np.take_along_axis(S, lo, axis=-1)[..., 0]
    b = np.take_along_axis(S, hi, axis=-1)[..., 0]
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.where(lo[..., 0] == hi[..., 0], a, (a + b) / 2)
    return np.where(n > 0, out, np.nan)


def system_scores(X: np.ndarray, aggregate: str = "mean") -> np.ndarray:
    """Each system's score over its inputs (last axis): :func:`system_means` or :func:`system_medians`."""
    if aggregate == "mean":
        return system_means(X)
    if aggregate == "median":
        return system_medians(X)
    raise ValueError(f"`aggregate` must be one of {', '.join(AGGREGATES)}; got {aggregate!r}.")


def summary_mean(r: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """(Weighted) mean over the last axis of per-input correlations, skipping NaN ones.

    ``weights`` are how often each input was drawn (bootstrap over inputs); NaN if no input
    has a defined correlation.
    """
    r = np.ascontiguousarray(r)  # numpy's summation order depends on the memory layout
    if r.ndim and r.shape[-1] and not np.isnan(r).any():
        # every correlation defined: where(defined, r, 0) * w is r * w (times 1 without
        # weights), the same values in the same layout, summed in the same order
        with np.errstate(invalid="ignore", divide="ignore"):
            if weights is None:
                return r.sum(axis=-1) / r.shape[-1]
            shape = np.broadcast_shapes(r.shape, np.shape(weights))   # where's copy: its shape and layout
            w = np.ascontiguousarray(np.broadcast_to(weights, shape))
            return (r * w).sum(axis=-1) / w.sum(axis=-1)
    defined = ~np.isnan(r)
    w = defined if weights is None else np.where(defined, weights, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (np.where(defined, r, 0.0) * w).sum(axis=-1) / w.sum(axis=-1)
