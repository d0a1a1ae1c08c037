"""Two readings of proportions in Deutsch, Dror & Roth (2021): a Kendall interval as the share of
system pairs ranked wrongly (§6), and the difference-of-proportions z-test between coverage rates
(Table 1).

**Pairs ranked wrongly.** Kendall's tau over P pairs without ties is ``tau = (C - D) / P`` with
``C + D = P``, so the share of discordant pairs is ``D / P = (1 - tau) / 2``: an interval
``[l, u]`` of tau is the interval ``[(1 - u) / 2, (1 - l) / 2]`` of the share of system pairs the
metric orders otherwise than the humans ("ROUGE-2 ... incorrectly ranks systems ... 9-54% of the
time"). With ties (tau-b) the reading is approximate: tied pairs are neither concordant nor
discordant.

**Coverage rates.** Two methods' coverage rates ``p1 = x1 / n1`` and ``p2 = x2 / n2`` (the share of
n trials whose interval covered the held-out correlation) are compared with the pooled two-sample
z statistic ``z = (p1 - p2) / sqrt(p (1 - p) (1/n1 + 1/n2))``, ``p = (x1 + x2) / (n1 + n2)``, and its
normal p-value (one-sided ``greater``/``less``, as the paper's Table 1, or two-sided). Undefined
(NaN) when ``p`` is 0 or 1 (every trial covered, or none, in both).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def pairs_wrong(lower: float, upper: float) -> tuple[float, float]:
    """The interval of the share of pairs ranked wrongly from a Kendall interval ``[lower, upper]``
    (NaN stays NaN)."""
    lower, upper = float(lower), float(upper)
    if not (math.isnan(lower) or math.isnan(upper)) and not -1 <= lower <= upper <= 1:
        raise ValueError(f"a Kendall interval lies within [-1, 1] with lower <= upper; got [{lower}, {upper}]")
    return (1 - upper) / 2, (1 - lower) / 2


def proportions_z_test(x1: int, n1: int, x2: int, n2: int, alternative: str = "two-sided") -> tuple[float, float]:
    """``(z, p)`` of the pooled difference-of-proportions test of ``x1/n1`` against ``x2/n2``."""
    for name, value in (("n1", n1), ("n2", n2)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer; got {value}")
    if not (0 <= x1 <= n1 and 0 <= x2 <= n2):
        raise ValueError(f"counts must lie in 0..n; got {x1}/{n1}, {x2}/{n2}")
    if alternative not in ("two-sided", "greater", "less"):
        raise ValueError(f"alternative must be two-sided, greater or less; got {alternative!r}")
    pooled = (x1 + x2) / (n1 + n2)
    if pooled in (0.0, 1.0):
        return float("nan"), float("nan")
    z = (x1 / n1 - x2 / n2) / math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    p = {"greater": stats.norm.sf(z), "less": stats.norm.cdf(z), "two-sided": 2 * stats.norm.sf(abs(z))}[alternative]
    return float(z), float(np.clip(p, 0.0, 1.0))


def closest_coverage(contains, n, target: float = 0.95) -> dict[str, np.ndarray]:
    """Table 1's bold: among methods with coverage ``contains[i] / n[i]``, the one closest to
    ``target`` and below 1.0 (ties: the first), and a one-tailed difference-of-proportions z-test
    of it against each other method, in the direction of their difference (``greater`` when the
    closest covers more). Returns ``closest`` (bool per method; none when no method covers less
    than always), ``z`` and ``p`` (NaN for the closest itself, a method with n = 0, or an
    undefined test). Whether the closest is significantly different from every other (Table 1's
    bold) is the caller's verdict, through :mod:`metaeval.analyses.conclusions`."""
    x, m = np.asarray(contains, dtype=np.int64), np.asarray(n, dtype=np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(m > 0, x / np.maximum(m, 1), np.nan)
    eligible = ~np.isnan(rate) & (rate < 1.0)
    closest = np.zeros(x.size, bool)
    z, p = np.full(x.size, np.nan), np.full(x.size, np.nan)
    if eligible.any():
        best = int(np.flatnonzero(eligible)[np.argmin(np.abs(rate[eligible] - target))])
        closest[best] = True
        for i in range(x.size):
            if i != best and m[i] > 0:
                side = "greater" if rate[best] >= rate[i] else "less"
                z[i], p[i] = proportions_z_test(int(x[best]), int(m[best]), int(x[i]), int(m[i]), side)
    return {"closest": closest, "z": z, "p": p}
