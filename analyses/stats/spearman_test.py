"""The p-value of Spearman's rho as R's ``cor.test(method = "spearman")`` gives it by default,
which Louis & Nenkova (2013, footnote 4) used: "significance values ... produced using the AS 89
algorithm (Best and Roberts 1975)".

With ``S = sum_i (rank(x_i) - rank(y_i))^2 = (n^3 - n)(1 - rho) / 6`` (no ties), AS 89 gives
``Pr[S >= s]`` and R's ``pspearman`` uses it as

- "greater" (positive association): ``Pr[S <= round(q)]``  (the lower tail of S),
- "less": ``Pr[S >= round(q)]``,
- "two-sided": ``min(1, 2 p)`` with ``p`` the tail on the side of ``q`` relative to its null
  mean ``(n^3 - n)/6`` (the upper tail when ``q`` exceeds it),

where for ``n <= 9`` the null distribution of S is enumerated over all ``n!`` permutations
(exact), and for ``10 <= n <= 1290`` AS 89's Edgeworth series is used::

    x = (6 (s - 1) / (n (n^2 - 1)) - 1) sqrt(n - 1)
    u = x b [c1 + b (c2 + c3 b) + x^2 (-c4 + b (c5 + c6 b) - x^2 b (c7 + c8 b - x^2 (c9 - c10 b + x^2 b (c11 - c12 x^2))))]
    Pr[S >= s] ~= u exp(-x^2 / 2) + (1 - Phi(x)),  b = 1/n, clipped to [0, 1]

(c1..c12 = .2274 .2531 .1745 .0758 .1033 .3932 .0879 .0151 .0072 .0831 .0131 .00046). With ties
(or ``n > 1290``) R falls back to the t approximation ``t = r sqrt((n - 2)/(1 - r^2))`` on
``n - 2`` degrees of freedom -- scipy's ``spearmanr`` p-value -- and so does this module.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import permutations

import numpy as np
from scipy import stats

METHODS = ("t", "as89")
EXACT_UP_TO = 9
_C = (.2274, .2531, .1745, .0758, .1033, .3932, .0879, .0151, .0072, .0831, .0131, 4.6e-4)


@lru_cache(maxsize=None)
def _null_s(n: int) -> np.ndarray:
    """S over all n! permutations of 1..n (sorted)."""
    ranks = np.arange(1, n + 1)
    return np.sort(np.array([int(((ranks - np.array(p)) ** 2).sum()) for p in permutations(ranks)]))


def upper_tail(s: float, n: int) -> float:
    """AS 89's ``Pr[S >= s]`` under independence (exact for n <= 9, Edgeworth above)."""
    if s <= 0:
        return 1.0
    if s > n * (n * n - 1) / 3:
        return 0.0
    if n <= EXACT_UP_TO:
        null = _null_s(n)
        return float((null >= s).sum() / null.size)
    c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12 = _C
    b = 1.0 / n
    x = (6.0 * (s - 1) * b / (n * n - 1.0) - 1.0) * np.sqrt(n - 1.0)
    y = x * x
    u = x * b * (c1 + b * (c2 + c3 * b) + y * (-c4 + b * (c5 + c6 * b)
                                               - y * b * (c7 + c8 * b - y * (c9 - c10 * b + y * b * (c11 - c12 * y)))))
    return float(min(1.0, max(0.0, u / np.exp(y / 2.0) + stats.norm.sf(x))))


def _lower_tail(s: float, n: int) -> float:
    """``Pr[S < s]``."""
    return 1.0 - upper_tail(s, n)


def spearman_pvalue(x, y, alternative: str = "two-sided", method: str = "as89") -> tuple[float, float, str]:
    """(rho, p, the method actually used) of Spearman's test of ``x`` and ``y``: ``method`` "t"
    (scipy's ``spearmanr``) or "as89" (R's ``cor.test`` default; the t approximation with ties or
    n > 1290, as R). NaN rho and p for fewer than 3 pairs or a constant side."""
    if method not in METHODS:
        raise ValueError(f"the Spearman p-value method must be one of {', '.join(METHODS)}; got {method!r}")
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    n = x.size
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return np.nan, np.nan, method
    rho, p_t = stats.spearmanr(x, y, alternative=alternative)
    ties = np.unique(x).size < n or np.unique(y).size < n
    if method == "t" or ties or n > 1290:
        return float(rho), float(p_t), "t"
    q = (n ** 3 - n) * (1 - rho) / 6
    greater = _lower_tail(round(q) + 2, n)        # Pr[S <= round(q)]: S is even without ties
    less = upper_tail(round(q), n)
    if alternative == "greater":
        return float(rho), greater, "as89"
    if alternative == "less":
        return float(rho), less, "as89"
    return float(rho), min(1.0, 2 * (less if q > (n ** 3 - n) / 6 else greater)), "as89"
