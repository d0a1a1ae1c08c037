"""Ranking metrics over several tasks at once, as the WMT23/24 metrics tasks do.

A task is one correlation setting on one dataset: a human judgment, a level and a coefficient
(and a weight). For metric m and task t with correlation r_t(m) and the coefficient's range
[lo_t, hi_t] ([0, 1] for acc-23, [-1, 1] otherwise), the task score is
s_t(m) = (r_t(m) - lo_t) / (hi_t - lo_t) (mt-metrics-eval ``TaskSet.AverageCorrs``: every
score in [0, 1] before averaging), and the average is A(m) = sum_t w_t s_t(m) with the weights
normalised to sum to 1 (NaN if any task's correlation is undefined).

Significance of A(a) > A(b): a paired permutation test on the average. Per task, the metrics'
scores are standardised over the task's cells and K perm-both swap masks are drawn (the same
masks for every pair of metrics; task t's stream is ``SeedSequence(seed, spawn_key=(t,))``);
delta_b = sum_t w_t (r_t(a'_b) - r_t(b'_b)) / (hi_t - lo_t), and
p = (1 + #{delta_b >= delta}) / (1 + K') over the K' resamples where every task's delta is
defined (NaN if delta is). Metric a beats b when p <= alpha; significance clusters and winners
follow :func:`.ranking.significance_clusters`.

A system-level task of ``aggregate`` "median" (Graham 2015's median variants) takes each system's
median over its inputs instead of its mean, in its correlation and in every resample (the
coefficients computed from two vectors of system scores: pearson, spearman, kendall, kendall-c;
not spa).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from . import conclusions, task_tests
from .ranking import significance_clusters
from .stats import batched, resampling, soft_pairwise
from .stats.validation import aggregate_iv, alpha_iv, coefficient_iv, k_iv, level_iv, seed_iv
from .stats.correlation import level_correlation
from .stats.hypothesis import count_extreme, standardize, zero_if_rounding

#: SPA's inner permutations and their draw (mt-metrics-eval ``pce``: k = 1000, seed 4).
SPA_K = 1000


@dataclass(frozen=True)
class TaskData:
    """One task: ``metrics`` (name -> N x M matrix, oriented higher = better) and the human ``Z``
    on the same grid, its level, coefficient and weight."""

    name: str
    metrics: Mapping[str, np.ndarray]
    Z: np.ndarray
    level: str
    coefficient: str
    weight: float = 1.0
    #: the test between metrics: "perm-both" (cells swapped) or "pairs" (acc-eq's pair
    #: outcomes swapped; :mod:`.task_tests`)
    test: str = "perm-both"
    #: a system's score over its inputs at the system level: "mean" or "median" (module docstring)
    aggregate: str = "mean"

    @property
    def coef(self):
        """The task's coefficient (:class:`.validation.Coefficient`) with its aggregate."""
        if self.aggregate != "mean" and (self.level != "system" or self.coefficient == task_tests.SPA):
            raise ValueError(f"task {self.name!r}: a system's {self.aggregate} is for system-level correlations, "
                             "not spa or another level.")
        return aggregate_iv(self.coefficient, self.aggregate)

    @property
    def wmt_kind(self) -> bool:
        """A task of the kinds :mod:`.task_tests` computes on the common cells (SPA, or the
        test over pairs)."""
        return self.coefficient == task_tests.SPA or self.test == "pairs"


@dataclass(frozen=True)
class TaskRankingResult:
    """Per metric (in ``metrics`` order): per-task correlations (``correlations[t][i]``), the
    average score, the pairwise p-values ``pvalues[a, b]`` of A(a) > A(b), rank, cluster and
    winners."""

    metrics: tuple[str, ...]
    tasks: tuple[str, ...]
    correlations: np.ndarray  # (tasks, metrics)
    average: np.ndarray
    pvalues: np.ndarray
    rank: np.ndarray
    cluster: np.ndarray
    is_winner: np.ndarray
    n_beaten_by: np.ndarray
    conventions: Mapping[str, Any] = field(default_factory=dict)
    #: False where the winner status is not known (an undefined average: no rank, cluster or win)
    winner_known: np.ndarray | None = None


def score_range(coefficient: str) -> tuple[float, float]:
    """The range of a coefficient's values: [0, 1] for acc-23 and SPA, [-1, 1] for the correlations."""
    if coefficient == task_tests.SPA:
        return (0.0, 1.0)
    return (0.0, 1.0) if coefficient_iv(coefficient).variant == "acc23" else (-1.0, 1.0)


def task_correlation(t: TaskData, m: str) -> float:
    """Metric ``m``'s value on task ``t`` (SPA, or the level's coefficient)."""
    if t.coefficient == task_tests.SPA:
        inputs = task_tests.spa_inputs(t.Z)[1]
        return task_tests.spa_value(t.metrics[m], t.Z, soft_pairwise.mtme_permutation_signs(SPA_K, inputs.size))
    return level_correlation(t.metrics[m], t.Z, level_iv(t.level), t.coef)


def _common(t: TaskData) -> TaskData:
    """``t`` on the cells where the human and every metric are present (the WMT24 kinds)."""
    if not t.wmt_kind:
        return t
    if t.test not in task_tests.TESTS or (t.test == "pairs" and t.coefficient != task_tests.ACC_EQ):
        raise ValueError(f"task {t.name!r}: the test over pairs is defined for {task_tests.ACC_EQ} only.")
    if t.coefficient == task_tests.SPA and t.level != "system":
        raise ValueError(f"task {t.name!r}: soft pairwise accuracy is a system-level task.")
    return replace(t, Z=task_tests.common_cells(dict(t.metrics), t.Z))


def rank_tasks(tasks: Sequence[TaskData], k: int = 1000, seed: int | None = 0, alpha: float = 0.05) -> TaskRankingResult:
    """Rank the metrics common to all ``tasks`` by their weighted average score (module docstring)."""
    if not tasks:
        raise ValueError("`tasks` must not be empty.")
    k, alpha, seq = k_iv(k), alpha_iv(alpha), seed_iv(seed)
    names = [m for m in tasks[0].metrics if all(m in t.metrics for t in tasks)]
    if not names:
        raise ValueError("no metric is present in every task.")
    weights = np.array([float(t.weight) for t in tasks])
    if not (np.isfinite(weights).all() and (weights > 0).all()):
        raise ValueError("task weights must be finite and > 0.")
    weights = weights / weights.sum()
    spans = np.array([np.subtract(*score_range(t.coefficient)[::-1]) for t in tasks])
    lows = np.array([score_range(t.coefficient)[0] for t in tasks])
    tasks = [_common(t) for t in tasks]
    corrs = np.array([[task_correlation(t, m) for m in names] for t in tasks])
    average = (weights[:, None] * (corrs - lows[:, None]) / spans[:, None]).sum(axis=0)
    n = len(names)
    deltas = np.zeros((n, n, k))
    observed = np.zeros((n, n))
    for ti, t in enumerate(tasks):
        for a, b, d, obs in _task_deltas(ti, t, names, corrs[ti], k, seq):
            deltas[a, b] += weights[ti] * zero_if_rounding(d) / spans[ti]
            observed[a, b] += weights[ti] * zero_if_rounding(obs) / spans[ti]
    pvalues, n_valid = np.full((n, n), np.nan), np.full((n, n), np.nan)
    for a in range(n):
        for b in range(a + 1, n):
            d, obs = zero_if_rounding(deltas[a, b]), zero_if_rounding(observed[a, b])
            valid = d[~np.isnan(d)]
            if np.isnan(obs) or valid.size == 0:
                continue
            # a' and b' swap roles under the same mask: delta_b(b, a) = -delta_b(a, b)
            pvalues[a, b] = (1 + count_extreme(valid, obs, "greater", "permutation")) / (1 + valid.size)
            pvalues[b, a] = (1 + count_extreme(-valid, -obs, "greater", "permutation")) / (1 + valid.size)
            n_valid[a, b] = n_valid[b, a] = valid.size
    # the conclusion layer decides (uncorrected, as mt-metrics-eval): significant only where the
    # tests can reach alpha at this k (and at each pair's own valid resamples)
    off = ~np.eye(n, dtype=bool)
    verdict = conclusions.decide(pvalues[off], formula="add-one", k=k, correction="none", alpha=alpha,
                                 n_valid=n_valid[off], min_size=1)
    beats = np.zeros((n, n), dtype=bool)
    beats[off] = verdict.significant
    beats &= ~beats.T  # never both ways (p <= alpha both ways needs alpha >= 0.5)
    clusters = significance_clusters(average, beats)
    note = verdict.note("the permutation tests between metrics")
    unresolved = {} if note is None else {"resolution": verdict.resolution.as_dict(), "cannot_resolve": note}
    if note is not None:
        clusters = conclusions.unresolved(clusters, note)
    return TaskRankingResult(
        metrics=tuple(names), tasks=tuple(t.name for t in tasks), correlations=corrs, average=average,
        pvalues=pvalues, rank=clusters.rank, cluster=clusters.cluster, is_winner=clusters.is_winner,
        n_beaten_by=clusters.n_beaten_by, winner_known=clusters.winner_known,
        conventions={
            "average": "sum_t w_t (r_t - lo_t) / (hi_t - lo_t), weights normalised; [lo, hi] = [0, 1] for acc-23, "
                       "[-1, 1] otherwise (mt-metrics-eval TaskSet.AverageCorrs)",
            "weights": dict(zip((t.name for t in tasks), weights.tolist())),
            "test": "paired permutation (perm-both, scores standardised per task) of the weighted average delta; "
                    "p = (1 + #{delta_b >= delta}) / (1 + k'); the same masks for every pair within a task",
            "k": k, "alpha": alpha, "seed": seq.entropy,
            "seeds": "task t: SeedSequence(seed, spawn_key=(t,)), blocks as resampling.ResampleStream",
            **dict(clusters.conventions), **unresolved, **_wmt_conventions(tasks),
            **_aggregate_conventions(tasks),
        },
    )


def _aggregate_conventions(tasks: Sequence[TaskData]) -> dict:
    """What tasks of a system's median record (nothing for the mean's: their rows unchanged): the
    metric's ``aggregate``, the human's when not the mean, and the tasks concerned."""
    from .stats.reductions import aggregate_sides

    median = next((t.aggregate for t in tasks if t.aggregate != "mean"), None)
    if median is None:
        return {}
    metric, human = aggregate_sides(median)
    return {"aggregate": metric, **({"human_aggregate": human} if human != "mean" else {}),
            "median_tasks": [t.name for t in tasks if t.aggregate != "mean"]}


def _wmt_conventions(tasks: Sequence[TaskData]) -> dict:
    """What tasks of the WMT24 kinds record (nothing for the others: their rows unchanged)."""
    if not any(t.wmt_kind for t in tasks):
        return {}
    return {"task_tests": {t.name: t.test for t in tasks},
            "wmt_kinds": "spa and the test over pairs on the cells where the human and every ranked metric are "
                         "present; spa: soft pairwise accuracy with k=1000 inner sign flips, mt-metrics-eval's draw "
                         "for seed 4; pairs: each metric's item-level epsilon calibrated once, the pair outcomes "
                         "swapped (mt-metrics-eval PairwisePermutationSigDiff)"}


def _task_deltas(ti: int, t: TaskData, names: Sequence[str], corrs: np.ndarray, k: int, seq: np.random.SeedSequence):
    """(a, b, delta_b over the k resamples, observed delta) of every pair a < b of metrics on
    task ``t`` under its test; its stream is ``SeedSequence(seed, spawn_key=(ti,))``."""
    n = len(names)
    n_sys, n_in = t.Z.shape
    if t.test == "pairs":
        eps = [task_tests.calibrated_epsilon(t.metrics[m], t.Z) for m in names]
        agree = [task_tests.pair_agreements(t.metrics[m], t.Z, e)[0] for m, e in zip(names, eps)]
        w = task_tests.pair_agreements(t.metrics[names[0]], t.Z, eps[0])[1]
        stream = resampling.ResampleStream(np.random.SeedSequence(seq.entropy, spawn_key=(ti,)),
                                           lambda rng, size, units=w.size: (rng.random((size, units)) < 0.5,))
        (flips,) = stream.take(0, k)
        for a in range(n):
            for b in range(a + 1, n):
                undefined = np.isnan(corrs[a]) or np.isnan(corrs[b])
                d = np.full(k, np.nan) if undefined else task_tests.pairs_deltas(agree[a], agree[b], w, flips)
                yield a, b, d, corrs[a] - corrs[b]
        return
    stream = resampling.ResampleStream(
        np.random.SeedSequence(seq.entropy, spawn_key=(ti,)),
        lambda rng, size, n_sys=n_sys, n_in=n_in: resampling.permutation_masks(rng, size, n_sys, n_in, "both", "paper"))
    (mask,) = stream.take(0, k)
    std = {m: standardize(t.metrics[m]) for m in names}
    if t.coefficient == task_tests.SPA:
        signs = soft_pairwise.mtme_permutation_signs(SPA_K, task_tests.spa_inputs(t.Z)[1].size)
        for a in range(n):
            for b in range(a + 1, n):
                undefined = np.isnan(corrs[a]) or np.isnan(corrs[b])
                d = (np.full(k, np.nan) if undefined
                     else task_tests.spa_deltas(std[names[a]], std[names[b]], t.Z, mask, signs))
                yield a, b, d, corrs[a] - corrs[b]
        return
    level, coef = level_iv(t.level), t.coef
    r_std = {m: level_correlation(std[m], t.Z, level, coef) for m in names}
    for a in range(n):
        for b in range(a + 1, n):
            d = batched.permutation_evaluator(std[names[a]], std[names[b]], t.Z, level, coef)(mask)
            yield a, b, d, r_std[names[a]] - r_std[names[b]]
