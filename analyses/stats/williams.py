"""Williams' test of two dependent correlations sharing one variable (Williams 1959; Steiger 1980;
Graham & Baldwin 2014, the WMT metrics tasks' test): does X correlate better with Z than Y does,
given r(X, Y)?
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import numpy.typing as npt

from .correlation import level_correlation, pairs_count
from .hypothesis import ROUNDING, undefined_correlations
from .intervals import conventions
from .results import WilliamsResult
from .validation import alternative_iv, coefficient_iv, level_iv, matrices_iv


def williams_t(r12: float, r13: float, r23: float, n: int) -> float:
    """Williams' t (Graham & Baldwin 2014; psych::r.test), df = n - 3.

    det = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23, rbar = (r12 + r13) / 2,
    t = (r12 - r13) sqrt((n - 1)(1 + r23) / (2 (n - 1)/(n - 3) det + rbar^2 (1 - r23)^3)).
    NaN when n <= 3 or any r is NaN; 0 when r12 = r13 or r23 = 1 up to :data:`ROUNDING`
    (X = Y or X = c Y, where det = 0 and the formula is 0/0 or rounding noise over ~0); NaN when
    the denominator is not positive otherwise.
    """
    r12, r13, r23 = float(r12), float(r13), float(r23)
    if n <= 3 or np.isnan([r12, r13, r23]).any():
        return np.nan
    if abs(r12 - r13) <= ROUNDING or r23 >= 1 - ROUNDING:
        return 0.0
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    denom = 2 * (n - 1) / (n - 3) * det + rbar**2 * (1 - r23) ** 3
    if not denom > 0:
        return np.nan
    return float((r12 - r13) * np.sqrt((n - 1) * (1 + r23) / denom))


def williams_test(
    X: npt.ArrayLike,
    Y: npt.ArrayLike,
    Z: npt.ArrayLike,
    level: str,
    coefficient: str = "pearson",
    alternative: str = "two-sided",
) -> WilliamsResult:
    """Williams' test with r12 = |r(X,Z)|, r13 = |r(Y,Z)|, r23 = |r(X,Y)| at ``level``.

    n as for :func:`fisher_ci` (counted on X and Z); p from Student's t with n - 3 df:
    greater P(T >= t), less P(T <= t), two-sided 2 P(T >= |t|).

    Absolute correlations follow Graham & Baldwin (2014) and the reference paper, where the sign
    only reflects a metric's direction. A metric that correlates *negatively* with Z after its
    direction is accounted for is then treated as if its agreement were positive; the result's
    conventions name such correlations under ``negative_correlations``. The test is derived for
    Pearson's r; with Spearman or Kendall it is the usual approximation (recorded too).
    p is NaN when t is (an undefined correlation, n <= 3, a non-positive denominator);
    ``conventions["pvalue_undefined"]`` then says why.
    """
    import scipy.stats  # here, not at import time: the command line starts without scipy
    X, Y, Z = matrices_iv(X=X, Y=Y, Z=Z)
    level, coef, alternative = level_iv(level), coefficient_iv(coefficient), alternative_iv(alternative)
    if not coef.parametric:
        raise ValueError(f"Williams' test is not defined for {coef.label}; use a permutation or bootstrap test.")
    # r(X, Y) correlates two metrics: both sides take the metric's aggregate (coef.human_aggregate is Z's)
    between = replace(coef, human_aggregate=coef.aggregate)
    signed = {name: level_correlation(A, B, level, c)
              for name, A, B, c in (("r(X,Z)", X, Z, coef), ("r(Y,Z)", Y, Z, coef), ("r(X,Y)", X, Y, between))}
    r12, r13, r23 = (abs(r) for r in signed.values())
    negative = [name for name, r in signed.items() if r < 0]
    n = pairs_count(X, Z, level)
    t = williams_t(r12, r13, r23, n)
    df = n - 3
    if alternative == "greater":
        p = scipy.stats.t.sf(t, df)
    elif alternative == "less":
        p = scipy.stats.t.cdf(t, df)
    else:
        p = 2 * scipy.stats.t.sf(abs(t), df)
    undefined = _williams_undefined(level, signed, n, t)
    return WilliamsResult(
        statistic=t,
        pvalue=np.nan if undefined else float(p),
        df=df,
        r12=r12,
        r13=r13,
        r23=r23,
        n=n,
        conventions=conventions(
            level,
            coef,
            method="williams",
            alternative=alternative,
            n=n,
            correlations="absolute values (Graham & Baldwin 2014)",
            negative_correlations=negative,
            **({} if coef.name == "pearson" else {"approximation": f"Williams' t derived for Pearson, applied to {coef.name}"}),
            **({"pvalue_undefined": undefined} if undefined else {}),
        ),
    )


def _williams_undefined(level: str, signed: dict[str, float], n: int, t: float) -> str | None:
    """Why Williams' p-value is NaN (None if it is defined)."""
    delta = {name: signed[name] for name in ("r(X,Z)", "r(Y,Z)")}
    if reason := undefined_correlations(level, **delta):
        return f"delta undefined: {reason}"
    if reason := undefined_correlations(level, **{"r(X,Y)": signed["r(X,Y)"]}):
        return f"Williams' t undefined: {reason}"
    if n <= 3:
        return f"Williams' t undefined: n = {n} pairs, the test needs n > 3 (df = n - 3)"
    if np.isnan(t):
        return "Williams' t undefined: its denominator is not positive"
    return None
