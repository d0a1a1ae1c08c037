"""Kendall variants with ties (Deutsch, Foster & Freitag 2023, "Ties Matter") and tie calibration.

The conventions are those of google-research/mt-metrics-eval (``stats.KendallVariants``,
``stats.KendallWithTiesOpt``, ``tau_optimization.tau_optimization``). Over the n valid pairs
(x_i, z_i) -- x the metric, z the human judgment, NaN on either side dropped -- every unordered
pair i < j is exactly one of:

- ``ties_both``: |x_i - x_j| <= epsilon and z_i = z_j;
- ``ties_metric``: |x_i - x_j| <= epsilon, z_i != z_j (tied by the metric only);
- ``ties_human``: z_i = z_j, |x_i - x_j| > epsilon (tied by the human only);
- ``con`` / ``dis``: neither tied, sign(x_i - x_j) = / != sign(z_i - z_j).

With P = n (n - 1) / 2, Tx = ties_metric + ties_both, Tz = ties_human + ties_both:

- tau-a  = (con - dis) / P
- tau-b  = (con - dis) / sqrt(P - Tx) / sqrt(P - Tz)  (NaN when Tx = P or Tz = P)
- tau-c  = 2 (con - dis) / (n^2 (m - 1) / m), m the smaller number of distinct values
  (epsilon must be 0, as in mt-metrics-eval: tau-c has no definition with a tie threshold)
- tau-23 = (con + ties_both - dis - ties_metric - ties_human) / P
- acc-23 = (con + ties_both) / P

All are NaN when P = 0 (fewer than 2 valid pairs). The tie threshold epsilon applies to the
metric's differences only (a metric pair within epsilon is a tie); epsilon = 0 means exact ties.

Tie calibration (:func:`tie_calibration`) chooses the epsilon that maximises the level's
tau-23 or acc-23 among the candidates {0} U {|x_i - x_j|} of the pairs it is computed over, as
``tau_optimization`` does with ``sample_rate=1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .reductions import summary_mean, system_means

#: Bytes of (..., n, n) temporaries one block of the pairwise counts may use.
PAIRWISE_BUDGET = 64 * 2**20
#: Variants computed from the pair counts (tau-c is computed by :mod:`.correlation`).
COUNT_VARIANTS = ("a", "b", "23", "acc23")
#: Variants whose epsilon can be calibrated.
CALIBRATED_VARIANTS = ("23", "acc23")
#: Calibrated values within this of the maximum count as ties of the maximum; the smallest of
#: their thresholds is chosen (mt-metrics-eval takes the first maximum of running float sums).
CALIBRATION_TOLERANCE = 1e-12


@dataclass(frozen=True)
class PairCounts:
    """Counts of unordered valid pairs (arrays of the leading shape); see the module docstring."""

    con: np.ndarray
    dis: np.ndarray
    ties_metric: np.ndarray
    ties_human: np.ndarray
    ties_both: np.ndarray
    n: np.ndarray

    @property
    def pairs(self) -> np.ndarray:
        return self.n * (self.n - 1) / 2


def pair_counts(x: np.ndarray, z: np.ndarray, epsilon: float = 0.0) -> PairCounts:
    """:class:`PairCounts` of metric ``x`` and human ``z`` along the last axis (leading axes a
    batch); pairs with a NaN on either side are dropped."""
    x, z = np.asarray(x, dtype=np.float64), np.asarray(z, dtype=np.float64)
    lead, n = x.shape[:-1], x.shape[-1]
    x2, z2 = x.reshape(-1, n), z.reshape(-1, n)
    out = np.zeros((5, x2.shape[0]))
    if n <= 1024:
        step = max(1, PAIRWISE_BUDGET // (8 * 8 * n * n))
        for start in range(0, x2.shape[0], step):
            sl = slice(start, start + step)
            out[:, sl] = _counts_block(x2[sl, :, None], x2[sl, None, :], z2[sl, :, None], z2[sl, None, :],
                                       epsilon, ~np.eye(n, dtype=bool)) / 2
    else:  # long vectors (global level): blocks of rows against the later columns, one vector at a time
        rows = max(1, PAIRWISE_BUDGET // (8 * 8 * n))
        for b in range(x2.shape[0]):
            for start in range(0, n, rows):
                i = np.arange(start, min(n, start + rows))
                later = i[:, None] < np.arange(n)[None, :]
                out[:, b] += _counts_block(x2[b, i][None, :, None], x2[b][None, None, :], z2[b, i][None, :, None],
                                           z2[b][None, None, :], epsilon, later)[:, 0]
    valid = (~np.isnan(x2) & ~np.isnan(z2)).sum(axis=-1).astype(np.float64)
    return PairCounts(*(a.reshape(lead) for a in out), n=valid.reshape(lead))


def _counts_block(xi, xj, zi, zj, epsilon, select) -> np.ndarray:
    """(5, batch) counts (con, dis, ties_metric, ties_human, ties_both) of the ordered pairs
    (i, j) of a block that ``select`` keeps and where all four values are non-NaN."""
    pair = ~np.isnan(xi) & ~np.isnan(zi) & ~np.isnan(xj) & ~np.isnan(zj) & select
    with np.errstate(over="ignore", invalid="ignore"):  # beyond 1e308 the difference is +-inf: same sign
        dx = xi - xj
        dz = zi - zj
    tx = np.abs(dx) <= epsilon
    tz = dz == 0
    neither = pair & ~tx & ~tz
    same = np.sign(dx) == np.sign(dz)
    return np.stack([
        (neither & same).sum(axis=(-2, -1)),
        (neither & ~same).sum(axis=(-2, -1)),
        (pair & tx & ~tz).sum(axis=(-2, -1)),
        (pair & ~tx & tz).sum(axis=(-2, -1)),
        (pair & tx & tz).sum(axis=(-2, -1)),
    ]).astype(np.float64)


def variant_value(c: PairCounts, variant: str) -> np.ndarray:
    """tau-a, tau-b, tau-23 or acc-23 from the pair counts (formulas in the module docstring)."""
    P = c.pairs
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "a":
            v = (c.con - c.dis) / P
        elif variant == "b":
            tx, tz = c.ties_metric + c.ties_both, c.ties_human + c.ties_both
            v = (c.con - c.dis) / np.sqrt(P - tx) / np.sqrt(P - tz)
            v = np.where((tx == P) | (tz == P), np.nan, v)
        elif variant == "23":
            v = (c.con + c.ties_both - c.dis - c.ties_metric - c.ties_human) / P
        elif variant == "acc23":
            v = (c.con + c.ties_both) / P
        else:
            raise ValueError(f"unknown Kendall variant {variant!r}; choose from {list(COUNT_VARIANTS)}")
    return np.where(P > 0, v, np.nan)


def kendall_variant(x: np.ndarray, z: np.ndarray, variant: str, epsilon: float = 0.0) -> np.ndarray:
    """Kendall ``variant`` (a, b, 23, acc23) of metric ``x`` against human ``z`` along the last
    axis, with tie threshold ``epsilon`` on the metric's differences."""
    return variant_value(pair_counts(x, z, epsilon), variant)


# --- tie calibration ------------------------------------------------------------------------
@dataclass(frozen=True)
class CalibrationResult:
    """The calibrated value, its threshold epsilon, and every candidate with its value."""

    value: float
    epsilon: float
    thresholds: np.ndarray
    values: np.ndarray


def level_rows(X: np.ndarray, Z: np.ndarray, level: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The vectors a level's value averages over: system -> [(system means)], summary -> one
    per input (over the systems), global -> [(all cells)]."""

    if level == "system":
        return [(system_means(X), system_means(Z))]
    if level == "summary":
        return [(X[:, j], Z[:, j]) for j in range(X.shape[1])]
    return [(X.ravel(), Z.ravel())]


def tie_calibration(X, Z, level: str, coefficient: str = "acc-23") -> CalibrationResult:
    """Tie calibration of ``coefficient`` (``"acc-23"`` or ``"kendall-23"``) for metric ``X`` and
    human ``Z`` (N systems x M inputs, NaN = missing) at ``level`` (system, summary, global):
    see :func:`calibrate`."""
    from .validation import CALIBRATED_COEFFICIENTS, _choice_iv, coefficient_iv, level_iv, matrices_iv

    X, Z = matrices_iv(X=X, Z=Z)
    variant = coefficient_iv(_choice_iv(coefficient, "coefficient", CALIBRATED_COEFFICIENTS)).variant
    return calibrate(X, Z, level_iv(level), variant)


def calibrate(X: np.ndarray, Z: np.ndarray, level: str, variant: str = "acc23") -> CalibrationResult:
    """The epsilon maximising the level's ``variant`` (``"23"`` or ``"acc23"``) and its value.

    The level's value at threshold t is the mean, over its vectors r with at least one valid
    pair (R of them), of variant_r(t); a pair p of vector r with |x_i - x_j| = d_p counts as
    a metric tie once t >= d_p, changing the mean by w_p = (tied_p - normal_p) / (P_r R), with
    tied_p / normal_p its numerator contribution as a tie / as it is (acc-23: 1 when human-tied
    / when concordant or tied in both; tau-23: +1 or -1 likewise). The candidates are t = 0 and
    every distinct d_p; value(t) = value(0) + sum_{d_p <= t} w_p. The chosen epsilon is the
    smallest candidate whose value is within :data:`CALIBRATION_TOLERANCE` of the maximum, and
    the returned value is recomputed directly at that epsilon (:func:`kendall_variant`).
    NaN value and epsilon when no vector has a valid pair.
    """
    if variant not in CALIBRATED_VARIANTS:
        raise ValueError(f"tie calibration is defined for the variants {list(CALIBRATED_VARIANTS)}; got {variant!r}")
    diffs, weights, base = [], [], []
    rows = level_rows(X, Z, level)
    for x, z in rows:
        keep = ~np.isnan(x) & ~np.isnan(z)
        x, z = x[keep], z[keep]
        n = x.size
        if n < 2:
            continue
        i, j = np.triu_indices(n, 1)
        with np.errstate(over="ignore"):
            dx = x[i] - x[j]
        dz = z[i] - z[j]
        d = np.abs(dx)
        tx, tz = dx == 0, dz == 0
        concordant = ~tx & ~tz & (np.sign(dx) == np.sign(dz))
        if variant == "acc23":
            normal = (concordant | (tx & tz)).astype(np.float64)
            tied = tz.astype(np.float64)
        else:
            normal = np.where(concordant | (tx & tz), 1.0, -1.0)
            tied = np.where(tz, 1.0, -1.0)
        P = n * (n - 1) / 2
        base.append(normal.sum() / P)
        diffs.append(d)
        weights.append((tied - normal) / P)
    if not base:
        return CalibrationResult(np.nan, np.nan, np.zeros(0), np.zeros(0))
    R = len(base)
    d = np.concatenate(diffs)
    w = np.concatenate(weights) / R
    order = np.argsort(d, kind="stable")
    d, w = d[order], w[order]
    last = np.r_[d[1:] != d[:-1], True]  # the last pair of each distinct difference
    start = float(np.sum(base)) / R
    values = np.r_[start, start + np.cumsum(w)[last]]
    thresholds = np.r_[0.0, d[last]]
    if thresholds.size > 1 and thresholds[1] == 0.0:  # exact metric ties: w = 0, same as t = 0
        values, thresholds = np.r_[values[0], values[2:]], np.r_[0.0, thresholds[2:]]
    best = int(np.flatnonzero(values >= values.max() - CALIBRATION_TOLERANCE)[0])
    epsilon = float(thresholds[best])
    value = level_value(X, Z, level, variant, epsilon)
    return CalibrationResult(value, epsilon, thresholds, values)


def level_value(X: np.ndarray, Z: np.ndarray, level: str, variant: str, epsilon: float = 0.0) -> float:
    """The level's ``variant`` at threshold ``epsilon``: over the system means, the mean over
    inputs of the per-input values (undefined ones left out), or over all cells."""

    if level == "summary":
        return float(summary_mean(kendall_variant(X.T, Z.T, variant, epsilon)))
    (x, z), = level_rows(X, Z, level)
    return float(kendall_variant(x, z, variant, epsilon))


def conventions(coefficient) -> dict:
    """What a result of a Kendall variant with ties records about them (``coefficient`` a
    :class:`.validation.Coefficient` with ``ties_variant``)."""
    out = {
        "kendall_definition": "Deutsch, Foster & Freitag (2023); mt-metrics-eval stats.KendallVariants",
        "tie_threshold_on": "the metric's differences: |x_i - x_j| <= epsilon is a metric tie",
    }
    if coefficient.calibrated:
        out["tie_calibration"] = (f"epsilon maximising {coefficient.base_label} over {{0}} U {{|x_i - x_j|}} of the "
                                  "level's pairs (mt-metrics-eval KendallWithTiesOpt, sample_rate=1); smallest "
                                  f"epsilon within {CALIBRATION_TOLERANCE} of the maximum; resamples re-calibrate")
    else:
        out["epsilon"] = coefficient.epsilon
    return out
