"""How a ranking of systems changes between two metrics or variants (Graham 2015, Table 3).

For N systems scored by metrics A and B (higher is better for both), each system's position under
each (1 = best; ties share the best position of their group, "competition" ranking: 1, 2, 2, 4),
its change ``position_B - position_A`` (negative: B ranks it higher), and the agreement of the two
rankings: Kendall's tau-b and Spearman's rho between the system scores (``scipy.stats``; with no
ties tau-b is tau-a). Undefined (NaN) when a metric gives every system the same score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class RankChange:
    position_a: np.ndarray
    position_b: np.ndarray
    change: np.ndarray
    kendall: float
    spearman: float


def positions(scores) -> np.ndarray:
    """1 = the highest score; tied systems share the best position of their group."""
    s = np.asarray(scores, dtype=float)
    return stats.rankdata(-s, method="min").astype(np.int64)


def rank_change(a, b) -> RankChange:
    """Positions of the systems under ``a`` and ``b``, the change, Kendall tau-b and Spearman."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape or len(a) < 2:
        raise ValueError("a and b need one score per system, for at least 2 systems")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("every system needs a finite score under both metrics")
    pa, pb = positions(a), positions(b)
    constant = np.ptp(a) == 0 or np.ptp(b) == 0
    kendall = float("nan") if constant else float(stats.kendalltau(a, b).statistic)
    spearman = float("nan") if constant else float(stats.spearmanr(a, b).statistic)
    return RankChange(position_a=pa, position_b=pb, change=pb - pa, kendall=kendall, spearman=spearman)
