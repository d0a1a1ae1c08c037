"""Does a metric separate systems that are actually close? (Deutsch, Dror & Roth, NAACL 2022)

System-level correlations are dominated by pairs of systems far apart in quality, which any
metric orders. Following "Re-Examining System-Level Correlations of Automatic Summarization
Evaluation Metrics" (§5), the system pairs are split into Q bins by the size of their human
score difference |dz| (quantiles over the pairs), and the pairwise accuracy and Kendall's tau
are computed within each bin: the lowest bin holds the close pairs.

Pure functions on arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from metaeval.analyses.ranking import TIE_RULE, _pair_orders, _tolerance_iv
from metaeval.analyses.stats.validation import matrices_iv
from metaeval.analyses.stats.correlation import system_means


@dataclass(frozen=True)
class DeltaBinsResult:
    """Per bin b (0 = the closest pairs): the |dz| range [low, high], the number of pairs, the
    pairwise accuracy and Kendall's tau over those pairs."""

    low: np.ndarray
    high: np.ndarray
    pairs: np.ndarray
    accuracy: np.ndarray
    kendall: np.ndarray
    conventions: dict[str, Any] = field(default_factory=dict)


def accuracy_by_delta(X: npt.ArrayLike, Z: npt.ArrayLike, bins: int = 4, *, metric_tolerance: float = 0.0,
                      human_tolerance: float = 0.0) -> DeltaBinsResult:
    """Pairwise accuracy and Kendall's tau of metric ``X`` against human ``Z`` (N x M; system
    means, NaN ignored) within ``bins`` quantile bins of the pairs' human difference |dz|.

    Bin edges are the quantiles q_b = quantile(|dz|, b / Q) (numpy's linear interpolation) over
    the N(N-1)/2 pairs with both means defined; a pair belongs to the first bin whose upper edge
    is >= |dz| (bins are closed on the right), so pairs with equal |dz| share a bin and bins can
    differ in size. In each bin, with s_x, s_z the signs of the two differences (0 for a tie,
    within the tolerances as in :func:`metaeval.analyses.ranking.pairwise_accuracy`):

        accuracy = #{s_x == s_z} / n,      tau = sum(s_x * s_z) / n   (tau-a over the bin's pairs)

    A bin without pairs has NaN accuracy and tau.
    """
    X, Z = matrices_iv(X=X, Z=Z)
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"`bins` must be a positive integer; got {bins!r}")
    metric_tolerance = _tolerance_iv(metric_tolerance, "metric_tolerance")
    human_tolerance = _tolerance_iv(human_tolerance, "human_tolerance")
    xm, zm = system_means(X)[:, None], system_means(Z)[:, None]
    sx, sz = _pair_orders(xm, metric_tolerance)[:, 0], _pair_orders(zm, human_tolerance)[:, 0]
    i, k = np.triu_indices(len(zm), 1)
    dz = np.abs(zm[i, 0] - zm[k, 0])
    valid = ~np.isnan(sx) & ~np.isnan(sz)
    sx, sz, dz = sx[valid], sz[valid], dz[valid]
    nan = np.full(bins, np.nan)
    if dz.size == 0:
        return DeltaBinsResult(nan, nan.copy(), np.zeros(bins, dtype=int), nan.copy(), nan.copy(),
                               _conventions(bins, metric_tolerance, human_tolerance))
    edges = np.quantile(dz, np.linspace(0, 1, bins + 1))
    which = np.minimum(np.searchsorted(edges[1:], dz, side="left"), bins - 1)
    pairs = np.bincount(which, minlength=bins)
    agree = np.bincount(which, weights=(sx == sz).astype(float), minlength=bins)
    concord = np.bincount(which, weights=sx * sz, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(pairs > 0, agree / pairs, np.nan)
        kendall = np.where(pairs > 0, concord / pairs, np.nan)
    return DeltaBinsResult(edges[:-1], edges[1:], pairs, accuracy, kendall,
                           _conventions(bins, metric_tolerance, human_tolerance))


def _conventions(bins: int, metric_tolerance: float, human_tolerance: float) -> dict[str, Any]:
    return {"bins": bins, "binning": "quantiles of |human difference| over the system pairs, right-closed",
            "accuracy": "share of the bin's pairs with sign(dx) == sign(dz)",
            "kendall": "tau-a over the bin's pairs: mean of sign(dx) * sign(dz)",
            "ties": TIE_RULE, "metric_tolerance": metric_tolerance, "human_tolerance": human_tolerance,
            "system_scores": "mean over inputs, NaN ignored",
            "reference": "Deutsch, Dror & Roth 2022 (NAACL), section 5"}
