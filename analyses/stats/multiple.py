"""Multiple-comparison corrections of p-values (closed forms, no statsmodels), and the one test
of a p-value against its level (:func:`rejects`: the conclusion layer's rule 0,
:mod:`metaeval.analyses.conclusions`)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .validation import correction_iv


def rejects(pvalues: npt.ArrayLike, alpha: float) -> np.ndarray:
    """One test on its own: p defined and p <= ``alpha``, nothing corrected (the conclusion
    layer's rule 0, :func:`metaeval.analyses.conclusions.rejects`). For the procedures an anchor
    defines per test rather than per family (a power simulation's rejections, the per-input
    significance of Louis & Nenkova, a significant-only filter, a count of significant system
    pairs); the layer's family rules build on it. NaN never rejects."""
    p = np.asarray(pvalues, dtype=np.float64)
    return ~np.isnan(p) & (np.nan_to_num(p, nan=np.inf) <= alpha)


def correct_pvalues(pvalues: npt.ArrayLike, method: str) -> np.ndarray:
    """Adjusted p-values, same order as given; NaN entries stay NaN and are not counted in m.

    With p_(1) <= ... <= p_(m) sorted:
    - "bonferroni": min(1, m p_i);
    - "holm": step-down, p~_(i) = max_{j <= i} min(1, (m - j + 1) p_(j));
    - "bh" (Benjamini-Hochberg): step-up, p~_(i) = min_{j >= i} min(1, m p_(j) / j);
    - "by" (Benjamini-Yekutieli, any dependence): BH's with m c(m) in place of m, c(m) = sum_{i<=m} 1/i
      (scipy.stats.false_discovery_control(method="by"));
    - "none": unchanged.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"`pvalues` must be 1-D; got {p.ndim}-D.")
    if ((p < 0) | (p > 1)).any():
        raise ValueError("`pvalues` must lie in [0, 1] (NaN allowed).")
    method = correction_iv(method)
    out = p.copy()
    defined = np.flatnonzero(~np.isnan(p))
    m = defined.size
    if method == "none" or m == 0:
        return out
    order = defined[np.argsort(p[defined], kind="stable")]
    ranked = p[order]
    j = np.arange(1, m + 1)
    if method == "bonferroni":
        adjusted = m * ranked
    elif method == "holm":
        adjusted = np.maximum.accumulate((m - j + 1) * ranked)
    else:
        scale = m * (np.sum(1.0 / j) if method == "by" else 1.0)
        adjusted = np.minimum.accumulate((scale * ranked / j)[::-1])[::-1]
    out[order] = np.minimum(1.0, adjusted)
    return out

