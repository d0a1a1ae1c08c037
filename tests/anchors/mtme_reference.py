"""An independent restatement of Google's mt-metrics-eval statistics, for the equivalence tests.

mt-metrics-eval (github.com/google-research/mt-metrics-eval) is not installable here (the PyPI
package of that name is not Google's), so the functions that docs/guides/mt.md's equivalence
table names are rewritten below from its source, statement by statement, keeping its names,
argument order (gold first, metric second), its None filtering, its z-scoring and its p-value
count / i. Sources read (commit 0b82d96b9a75ac392ddc44587fff2acae2c3c63e unless said):

- ``mt_metrics_eval/stats.py``: ``AverageCorrelation.Corr`` (None filtering, NaN dropping,
  the 0 returned when nothing is defined), ``Agreement``, ``_MatrixSufficientStatistics``,
  ``KendallVariants``, ``_Reshape``, ``_ReshapeAndFilter``, ``PermutationSigDiffParams``,
  ``PermutationSigDiff`` (its loop: ``w1 = np.random.binomial(1, 0.5, n)``, count of
  ``_Corr(m2) - _Corr(m1) >= delta``, early stop at block boundaries, p = count / i),
  ``WilliamsSigDiff`` and ``WilliamsTest``; ``KendallWithTiesOpt`` with
  ``mt_metrics_eval/tau_optimization.py``'s ``tau_optimization`` (``_RankedPair``,
  ``_enumerate_pairs``; ``sample_rate=1``: every pair);
- ``mt_metrics_eval/data.py`` (commit 6bc577f7...; ``tasks.py`` calls them): ``ComputeSigMatrix``
  (``sig_matrix[i, j] = PermutationSigDiff(corr[m_j], corr[m_i], ...)`` over metrics sorted by
  decreasing correlation) and ``AssignRanks``.

Nothing here imports metaeval: the tests compare what this module concludes with what the
project's commands conclude on the same data.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.special
import scipy.stats


# --- stats.Correlation / AverageCorrelation ----------------------------------------------------
def reshape(vector, num_sys: int, average_by: str) -> np.ndarray:
    """stats._Reshape: a packed system-major vector as rows to average over."""
    if average_by == "none":
        return np.asarray(vector, dtype=object).reshape(1, -1)
    if average_by == "sys":
        return np.asarray(vector, dtype=object).reshape(num_sys, -1)
    if average_by == "item":
        return np.asarray(vector, dtype=object).reshape(num_sys, -1).transpose()
    raise ValueError(f"Unknown averaging option: {average_by}")


def average_correlation(corr_fcn: Callable, gold: Sequence, metric: Sequence, num_sys: int = 0,
                        average_by: str = "none", replace_nans_with_zeros: bool = False,
                        **corr_fcn_args) -> tuple[float, float, int]:
    """stats.AverageCorrelation(...).Corr (macro=True): per row, drop the pairs whose gold is
    None, skip rows with fewer than 2, average the non-NaN correlations (NaN ones count as 0
    with ``replace_nans_with_zeros``); (0, 0, 0) when nothing is averaged."""
    tot_corr, tot_pval, n = 0.0, 0.0, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r1, r2 in zip(reshape(gold, num_sys, average_by), reshape(metric, num_sys, average_by)):
            filt = [(v1, v2) for v1, v2 in zip(r1, r2) if v1 is not None]
            if len(filt) < 2:
                continue
            g, m = zip(*filt)
            ret = corr_fcn(np.asarray(g, float), np.asarray(m, float), **corr_fcn_args)
            if not math.isnan(ret[0]):
                tot_corr += ret[0]
                tot_pval += ret[1]
                n += 1
            elif replace_nans_with_zeros:
                n += 1
    return (tot_corr / n, tot_pval / n, n) if n else (0, 0, 0)


def pearson(gold, metric):
    """scipy.stats.pearsonr, mt-metrics-eval's Correlation.Pearson."""
    return scipy.stats.pearsonr(gold, metric)


def quick_pearson(gold, metric):
    """Pearson's r as (r, 0) by its formula (the value of scipy.stats.pearsonr up to rounding,
    without its p-value): PermutationSigDiff takes any corr_fcn returning (r, ...), and this one
    keeps thousands of resamples quick."""
    g, m = np.asarray(gold, float), np.asarray(metric, float)
    g, m = g - g.mean(), m - m.mean()
    den = math.sqrt(float(g @ g) * float(m @ m))
    return (float(g @ m) / den if den > 0 else math.nan), 0


def agreement(gold, metric) -> tuple[int, int]:
    """stats.Agreement: pairs (gold not None) whose signs of difference are equal, and pairs."""
    agree, num_pairs = 0, 0
    for a, b in itertools.combinations(zip(gold, metric), 2):
        if a[0] is None or b[0] is None:
            continue
        agree += int(np.sign(a[0] - b[0]) == np.sign(a[1] - b[1]))
        num_pairs += 1
    return agree, num_pairs


# --- stats.KendallVariants ---------------------------------------------------------------------
def matrix_sufficient_statistics(x, y, epsilon: float) -> tuple[int, int, int, int, int]:
    """stats._MatrixSufficientStatistics: x the metric (|dx| <= epsilon a tie), y the gold;
    (con, dis, ties x only, ties y only, ties both). At epsilon 0 the Fenwick-tree version
    mt-metrics-eval uses gives the same counts."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    x1, x2 = np.meshgrid(x, x.T)
    x_diffs = x1 - x2
    x_is_tie = np.abs(x_diffs) <= epsilon
    x_diffs[x_is_tie] = 0.0
    y1, y2 = np.meshgrid(y, y.T)
    y_diffs = y1 - y2
    y_is_tie = y_diffs == 0.0
    n = len(x)
    num_pairs = int(scipy.special.comb(n, 2))
    con = int((((x_diffs > 0) & (y_diffs > 0)) | ((x_diffs < 0) & (y_diffs < 0))).sum() / 2)
    t_x = int((x_is_tie & ~y_is_tie).sum() / 2)
    t_y = int((~x_is_tie & y_is_tie).sum() / 2)
    t_xy = int(((x_is_tie & y_is_tie).sum() - n) / 2)
    return con, num_pairs - (con + t_x + t_y + t_xy), t_x, t_y, t_xy


def kendall_variants(gold, metric, variant: str = "b", epsilon: float = 0.0) -> tuple[float, int]:
    """stats.KendallVariants: tau-b, tau-c, tau-23 or acc-23 (metric ties within epsilon)."""
    if epsilon < 0:
        raise ValueError("Epsilon must be non-negative.")
    if epsilon > 0 and variant == "c":
        raise ValueError("Non-zero epsilon with tau-c not supported.")
    x, y = np.asarray(metric, float), np.asarray(gold, float)
    con, dis, xtie_only, ytie_only, tie_both = matrix_sufficient_statistics(x, y, epsilon)
    xtie, ytie = xtie_only + tie_both, ytie_only + tie_both
    tot = con + dis + xtie_only + ytie_only + tie_both
    if variant in ("b", "c") and (xtie == tot or ytie == tot):
        return np.nan, 0
    if variant == "b":
        return (con - dis) / np.sqrt(tot - xtie) / np.sqrt(tot - ytie), 0
    if variant == "c":
        minclasses = min(len(set(x)), len(set(y)))
        return 2 * (con - dis) / (x.size ** 2 * (minclasses - 1) / minclasses), 0
    if variant == "23":
        return (con + tie_both - dis - xtie_only - ytie_only) / tot, 0
    if variant == "acc23":
        return (con + tie_both) / tot, 0
    raise ValueError(f"Unknown variant {variant}")


# --- stats.KendallWithTiesOpt / tau_optimization.tau_optimization (sample_rate = 1) ---------------
def _pair_stats(h1, h2, m1, m2) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """tau_optimization._RankedPair: (con, dis, ties_human, ties_metric, ties_both) of the pair as
    it is, and as it is once the metric ties it."""
    if h1 == h2 and m1 == m2:
        stats = (0, 0, 0, 0, 1)
    elif h1 == h2:
        stats = (0, 0, 1, 0, 0)
    elif m1 == m2:
        stats = (0, 0, 0, 1, 0)
    elif (h1 > h2 and m1 > m2) or (h1 < h2 and m1 < m2):
        stats = (1, 0, 0, 0, 0)
    else:
        stats = (0, 1, 0, 0, 0)
    return stats, ((0, 0, 0, 0, 1) if h1 == h2 else (0, 0, 0, 1, 0))


def _tau(stats, variant: str) -> float:
    """TauSufficientStats.tau_23 / acc_23."""
    con, dis, th, tm, tb = stats
    n = sum(stats)
    return (con + tb - dis - th - tm) / n if variant == "23" else (con + tb) / n


def tau_optimization(metric_rows, human_rows, variant: str = "acc23") -> tuple[float, float]:
    """tau_optimization.tau_optimization with sample_rate 1: rows of paired (metric, human)
    scores, None dropped; every pair sorted by its metric difference is turned into a tie in
    turn, the average over rows of the tau after each distinct threshold kept; the first maximum
    (np.nanargmax): (best tau, best threshold)."""
    pairs, rows = [], {}
    for row, (r2, r1) in enumerate(zip(metric_rows, human_rows)):
        filt = [(v1, v2) for v1, v2 in zip(r1, r2) if v1 is not None and v2 is not None]
        for i in range(len(filt)):
            for j in range(i + 1, len(filt)):
                stats, tie = _pair_stats(filt[i][0], filt[j][0], filt[i][1], filt[j][1])
                pairs.append((abs(filt[i][1] - filt[j][1]), row, stats, tie))
                rows[row] = tuple(a + b for a, b in zip(rows.get(row, (0,) * 5), stats))
    total = sum(_tau(st, variant) for st in rows.values())
    thresholds, taus = [0.0], [total / len(rows)]
    for diff, row, stats, tie in sorted(pairs, key=lambda p: p[0]):
        total -= _tau(rows[row], variant)
        rows[row] = tuple(a - b + c for a, b, c in zip(rows[row], stats, tie))
        total += _tau(rows[row], variant)
        if thresholds[-1] == diff:
            taus[-1] = total / len(rows)
        else:
            thresholds.append(diff)
            taus.append(total / len(rows))
    best = int(np.nanargmax(taus))
    return taus[best], thresholds[best]


def kendall_with_ties_opt(gold, metric, variant: str = "acc23", num_sys: int = 1,
                          average_by: str = "none") -> tuple[float, float]:
    """stats.KendallWithTiesOpt(sample_rate=1.0): (tau, epsilon) over the rows of the averaging."""
    return tau_optimization(reshape(metric, num_sys, average_by), reshape(gold, num_sys, average_by), variant)


def permutation_sig_diff_ties_opt(gold, scores1, scores2, num_sys: int, variant: str = "acc23",
                                  average_by: str = "none", k: int = 1000, draw=None) -> tuple[float, float, int]:
    """stats.PermutationSigDiff(corr_fcn=KendallWithTiesOpt): the unfiltered vectors z-scored,
    the calibrated tau recomputed (re-calibrated) on every resample; no early stopping."""
    draw = draw or (lambda n: np.random.binomial(1, 0.5, n))
    m1 = scipy.stats.zscore(np.asarray(scores1, float))
    m2 = scipy.stats.zscore(np.asarray(scores2, float))

    def corr(ms):
        return kendall_with_ties_opt(gold, list(ms), variant, num_sys, average_by)[0]

    delta = corr(m2) - corr(m1)
    count = 0
    for _ in range(k):
        w1 = np.asarray(draw(len(m1)))
        if corr((1 - w1) * m1 + w1 * m2) - corr(w1 * m1 + (1 - w1) * m2) >= delta:
            count += 1
    return count / k, delta, k


# --- stats.PermutationSigDiff ------------------------------------------------------------------
@dataclass
class PermutationSigDiffParams:
    """stats.PermutationSigDiffParams."""

    block_size: int = 1000
    early_min: float = 0.02
    early_max: float = 0.5


def reshape_and_filter(gold, scores1, scores2, num_sys: int, average_by: str):
    """stats._ReshapeAndFilter: rows of the averaging, gold None dropped, packed flat."""
    g = reshape(gold, num_sys, average_by)
    s1, s2 = reshape(scores1, num_sys, average_by), reshape(scores2, num_sys, average_by)
    lens, gf, f1, f2 = [], [], [], []
    okay = np.vectorize(lambda v: v is not None, otypes=[bool])(g)
    for ok, gr, a, b in zip(okay, g, s1, s2):
        if ok.sum():
            lens.append(int(ok.sum()))
            gf.extend(gr[ok])
            f1.extend(a[ok])
            f2.extend(b[ok])
    return lens, np.asarray(gf, float), np.asarray(f1, float), np.asarray(f2, float)


def permutation_sig_diff(gold, scores1, scores2, num_sys: int, corr_fcn: Callable, average_by: str = "none",
                         k: int = 1000, params: PermutationSigDiffParams = PermutationSigDiffParams(),
                         replace_nans_with_zeros: bool = False, draw: Callable[[int], np.ndarray] | None = None,
                         **corr_fcn_args) -> tuple[float, float, int]:
    """stats.PermutationSigDiff(corr1, corr2, ...): the p-value that metric 2 (``scores2``)
    correlates better than metric 1, delta = corr(2) - corr(1), and the resamples used.

    Both metrics are z-scored over their filtered cells; each resample swaps cell t between
    them when ``w1[t] = 1``; count #{corr(m2) - corr(m1) >= delta}; after each ``block_size``
    resamples stop when count / i < early_min or > early_max; p = count / i. ``draw(n)`` gives
    ``w1`` (default ``np.random.binomial(1, 0.5, n)`` on numpy's global generator, as there)."""
    draw = draw or (lambda n: np.random.binomial(1, 0.5, n))
    lens, gold_f, m1, m2 = reshape_and_filter(gold, scores1, scores2, num_sys, average_by)
    m1, m2 = scipy.stats.zscore(m1), scipy.stats.zscore(m2)
    starts = np.r_[0, np.cumsum(lens)]
    bounds = list(zip(starts[:-1], starts[1:]))

    def corr(ms):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            vals = [corr_fcn(gold_f[b:e], ms[b:e], **corr_fcn_args)[0] for b, e in bounds]
        vals = np.nan_to_num(vals) if replace_nans_with_zeros else np.asarray(vals)[~np.isnan(vals)]
        return np.average(vals) if len(vals) else 0

    delta = corr(m2) - corr(m1)
    i, large_delta_count = 1, 0
    for i in range(1, k + 1):
        w1 = np.asarray(draw(len(m1)))
        w2 = 1 - w1
        s1, s2 = w1 * m1 + w2 * m2, w2 * m1 + w1 * m2
        if corr(s2) - corr(s1) >= delta:
            large_delta_count += 1
        if i % params.block_size == 0:
            pval = large_delta_count / i
            if pval < params.early_min or pval > params.early_max:
                break
    return large_delta_count / i, delta, i


def williams_test(r12: float, r13: float, r23: float, n: int, one_sided: bool = True) -> float:
    """stats.WilliamsTest (r12, r13 the two metrics' correlations with gold, r23 between them)."""
    k = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r23 * r13
    rbar = (r12 + r13) / 2
    tnum = (r12 - r13) * np.sqrt((n - 1) * (1 + r23))
    tden = np.sqrt(2 * (n - 1) / (n - 3) * k + rbar ** 2 * (1 - r23) ** 3)
    p = scipy.stats.t.sf(np.abs(tnum / tden), n - 3)
    return p if one_sided else 2 * p


def williams_sig_diff(gold, scores1, scores2, corr_fcn: Callable = pearson, one_sided: bool = True):
    """stats.WilliamsSigDiff: (p, r1, r2); the test is symmetrical (|t|)."""
    r1 = corr_fcn(gold, scores1)[0]
    r2 = corr_fcn(gold, scores2)[0]
    r12 = corr_fcn(scores1, scores2)[0]
    return williams_test(r1, r2, r12, len(gold), one_sided), r1, r2


# --- data.ComputeSigMatrix / AssignRanks (what tasks.py ranks metrics with) ---------------------
def assign_ranks(sig_matrix: np.ndarray, pval: float) -> list[int]:
    """data.AssignRanks: metric i (sorted by decreasing correlation) opens a new rank when a
    metric of the current rank has p <= pval against it."""
    n = sig_matrix.shape[0]
    ranks, current_rank, start_index = [0] * n, 1, 0
    for i in range(n):
        if any(sig_matrix[:, i][start_index:i] <= pval):
            current_rank += 1
            start_index = i
        ranks[i] = current_rank
    return ranks


def metric_ranks(gold, metrics: dict[str, Sequence], num_sys: int, corr_fcn: Callable = pearson,
                 average_by: str = "none", k: int = 1000, pval: float = 0.05,
                 params: PermutationSigDiffParams = PermutationSigDiffParams(), draw=None,
                 **corr_fcn_args) -> dict[str, tuple[float, int]]:
    """The metrics' (correlation, rank) as tasks.py's Task.Run computes them: correlations by
    AverageCorrelation, sorted decreasing, sig_matrix by ComputeSigMatrix, ranks by AssignRanks."""
    corrs = {m: average_correlation(corr_fcn, gold, s, num_sys, average_by, **corr_fcn_args)[0]
             for m, s in metrics.items()}
    order = sorted(corrs, key=lambda m: -corrs[m])
    n = len(order)
    sig = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            sig[i, j] = permutation_sig_diff(gold, metrics[order[j]], metrics[order[i]], num_sys, corr_fcn,
                                             average_by, k, params, draw=draw, **corr_fcn_args)[0]
    return {m: (corrs[m], r) for m, r in zip(order, assign_ranks(sig, pval))}
