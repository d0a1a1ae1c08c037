"""Do two metrics err on the same system pairs? Louis & Nenkova (2013), Table 4, with two tests.

For N systems with human system scores ``h`` and two metrics' system scores ``a`` and ``b``
(higher is better for all three: a lower-is-better measure is negated first), every unordered
pair ``{i, j}`` of systems is *correct* for a metric when the metric orders it as the human does::

    correct_a(i, j) = sign(a_i - a_j) == sign(h_i - h_j)

(a pair the human ties is correct only where the metric ties it too). The 2 x 2 table counts the
pairs by (A correct?, B correct?); its four cells sum to C(N, 2). The paper reports the table
without a test; two are added:

- **McNemar's exact test** (does one metric err more often than the other?): on the discordant
  cells ``n10`` (A right, B wrong) and ``n01`` (A wrong, B right), ``n10 ~ Binomial(n10 + n01,
  1/2)`` under H0, two-sided (``scipy.stats.binomtest``); undefined (NaN) when no pair is
  discordant;
- **Fisher's exact test** (do they err on the same pairs?): the independence of A's and B's
  correctness over the pairs, one-sided towards association (``alternative="greater"``: errors
  that coincide more often than chance), ``scipy.stats.fisher_exact``; undefined (NaN) when a
  margin of the table is empty (a metric that is always right or always wrong).

The pairs are not independent observations (a system appears in N - 1 of them): the tests are
descriptive, as the paper's table is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class ErrorOverlap:
    """``table[x][y]``: pairs where A is correct (x = 0) or wrong (x = 1) and B correct (y = 0) or
    wrong (y = 1); ``n_pairs`` = C(N, 2); the two tests' p-values (NaN: undefined)."""

    table: np.ndarray
    n_pairs: int
    accuracy_a: float
    accuracy_b: float
    mcnemar_p: float
    fisher_odds_ratio: float
    fisher_p: float

    @property
    def both_correct(self) -> int:
        return int(self.table[0, 0])


def correct_pairs(human, metric) -> np.ndarray:
    """For each unordered pair i < j (``np.triu_indices`` order): whether ``metric`` orders it as
    ``human`` does."""
    h, m = np.asarray(human, dtype=float), np.asarray(metric, dtype=float)
    if h.ndim != 1 or h.shape != m.shape or len(h) < 2:
        raise ValueError("human and metric need one score per system, for at least 2 systems")
    if not (np.all(np.isfinite(h)) and np.all(np.isfinite(m))):
        raise ValueError("every system needs a finite human and metric score")
    i, j = np.triu_indices(len(h), k=1)
    return np.sign(m[i] - m[j]) == np.sign(h[i] - h[j])


def error_overlap(human, a, b) -> ErrorOverlap:
    """Table 4 of Louis & Nenkova (2013) for metrics ``a`` and ``b``, with McNemar and Fisher."""
    ca, cb = correct_pairs(human, a), correct_pairs(human, b)
    table = np.array([[np.sum(ca & cb), np.sum(ca & ~cb)], [np.sum(~ca & cb), np.sum(~ca & ~cb)]], dtype=np.int64)
    n10, n01 = int(table[0, 1]), int(table[1, 0])
    mcnemar = stats.binomtest(n10, n10 + n01, 0.5).pvalue if n10 + n01 else float("nan")
    margins_ok = table.sum(axis=0).all() and table.sum(axis=1).all()
    # errors together: association of "wrong" with "wrong" = of "correct" with "correct"
    odds, fisher = stats.fisher_exact(table, alternative="greater") if margins_ok else (float("nan"), float("nan"))
    return ErrorOverlap(table=table, n_pairs=len(ca), accuracy_a=float(ca.mean()), accuracy_b=float(cb.mean()),
                        mcnemar_p=float(mcnemar), fisher_odds_ratio=float(odds), fisher_p=float(fisher))
