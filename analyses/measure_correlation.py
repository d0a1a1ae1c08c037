"""The correlation of two measures with its p-value: two human judgments (Louis & Nenkova 2013,
§2.3: pyramid against responsiveness, Spearman 0.85, p 6.8e-16 over 53 systems), or two metrics
(Cohan & Goharian 2016, Table 3: SERA against ROUGE).

Over the points where both measures have a value: Pearson's r, Spearman's rho or Kendall's tau-b
with the p-value of ``scipy.stats`` (``pearsonr``: the t test on n - 2 degrees of freedom;
``spearmanr``: the same t approximation; ``kendalltau``: exact for small n without ties, the
normal approximation otherwise), for the alternative "two-sided" (default), "greater" (a positive
correlation) or "less". Undefined (NaN value and p) with fewer than 3 points or a constant side.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

COEFFICIENTS: tuple[str, ...] = ("pearson", "spearman", "kendall")
ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")
#: how each coefficient's p-value is computed (recorded with the rows)
PVALUES = {"pearson": "scipy.stats.pearsonr: t test, n - 2 df",
           "spearman": "scipy.stats.spearmanr: t approximation, n - 2 df",
           "kendall": "scipy.stats.kendalltau (tau-b): exact for small n without ties, else the normal approximation"}


@dataclass(frozen=True)
class MeasureCorrelation:
    value: float
    p_value: float
    n: int


def correlation_test(a, b, coefficient: str = "pearson", alternative: str = "two-sided") -> MeasureCorrelation:
    """Corr(a, b) over the positions where both are finite, and its p-value (module docstring)."""
    from scipy import stats

    if coefficient not in COEFFICIENTS:
        raise ValueError(f"`coefficient` must be one of {', '.join(COEFFICIENTS)}; got {coefficient!r}")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"`alternative` must be one of {', '.join(ALTERNATIVES)}; got {alternative!r}")
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError("a and b need the same number of values")
    both = np.isfinite(a) & np.isfinite(b)
    x, y = a[both], b[both]
    n = int(both.sum())
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return MeasureCorrelation(float("nan"), float("nan"), n)
    if coefficient == "pearson":
        res = stats.pearsonr(x, y, alternative=alternative)
    elif coefficient == "spearman":
        res = stats.spearmanr(x, y, alternative=alternative)
    else:
        res = stats.kendalltau(x, y, alternative=alternative, variant="b")
    return MeasureCorrelation(float(res.statistic), float(res.pvalue), n)
