"""Pairwise preferences: an LLM judge (or any automatic judge) against the human preference.

Data. An *item* is one comparison of two systems' outputs for one input. A judge gives a verdict
in each presentation order it was shown: ``V[i, 0]`` (order ab: system_a's output first) and
``V[i, 1]`` (order ba: swapped), coded :data:`A` = 0 (system_a wins), :data:`B` = 1 (system_b
wins), :data:`TIE` = 2, and :data:`MISSING` = -1 (not judged in that order). A verdict names the
*system*, not the position. Human annotators are judges too: ``H[r, i, o]``.

- :func:`human_majority` -- the human label of each item: the label with the most human votes
  (every annotator's verdict in every order is one vote); an item whose top count is shared by
  two labels has a *tied majority*: it is left out (label :data:`MISSING`) and counted.
- :func:`judge_statistics` -- per judge against that label, over the items that have one and
  that the judge judged: n, accuracy_ab, accuracy_ba, accuracy, both_correct,
  position_consistency, first_position_rate, tie_rate and Cohen's kappa (:data:`STATISTICS`),
  each with a percentile bootstrap interval over items, vectorised over the resamples.
- :func:`mcnemar_exact`, :func:`judge_pair_tests` -- judge vs judge on the same items.
- :func:`bradley_terry`, :func:`preference_ranking`, :func:`kendall_tau_b` -- system strengths
  from preferences (ties as half a win to each side, a stated ridge prior), bootstrap intervals,
  and the Kendall correlation of a judge's ranking with the human one.

Everything is a pure computation on arrays (no database), seeded where random.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import stats

from metaeval.analyses.stats.validation import alpha_iv, seed_iv

A, B, TIE, MISSING = 0, 1, 2, -1
LABELS = 3

#: The statistics of a judge against the human preference, in the order of the result columns.
STATISTICS: tuple[str, ...] = ("accuracy_ab", "accuracy_ba", "accuracy", "both_correct", "position_consistency",
                               "first_position_rate", "tie_rate", "kappa")

DEFINITIONS: dict[str, str] = {
    "accuracy_ab": "share of items judged in order ab whose verdict equals the human label (a judge's tie is "
                   "wrong unless the human label is a tie)",
    "accuracy_ba": "the same in order ba (system_b's output shown first)",
    "accuracy": "mean of accuracy_ab and accuracy_ba; the one defined when only one order was judged",
    "both_correct": "share of the items judged in both orders whose two verdicts both equal the human label",
    "position_consistency": "share of the items judged in both orders given the same verdict in both "
                            "(tie counts as a verdict)",
    "first_position_rate": "share of the non-tie verdicts (both orders) that chose the output shown first: "
                           "a in order ab, b in order ba; 0.5 is no position bias",
    "tie_rate": "share of the verdicts (both orders) that are ties",
    "kappa": "Cohen's kappa between the judge's verdicts (both orders) and the human label of their item, "
             "over the labels a, b, tie: (p_o - p_e) / (1 - p_e); NaN when p_e = 1 (one class on both sides)",
}


def _labels_iv(V: npt.ArrayLike, name: str, ndim: int) -> np.ndarray:
    V = np.asarray(V)
    if V.ndim != ndim or V.shape[-1] != 2:
        raise ValueError(f"`{name}` must be {ndim}-D with a last axis of 2 (orders ab, ba); got shape {V.shape}.")
    if V.size and (not np.issubdtype(V.dtype, np.integer) or V.min() < MISSING or V.max() > TIE):
        raise ValueError(f"`{name}` must hold the codes -1 (missing), 0 (a), 1 (b), 2 (tie).")
    return V.astype(np.int64)


@dataclass(frozen=True)
class Majority:
    """``label[i]``: the human label of item i (-1: none); ``tied[i]``: its top vote count is
    shared by two labels (left out); ``votes[i, c]``: the human votes for label c."""

    label: np.ndarray
    tied: np.ndarray
    votes: np.ndarray


def human_majority(H: npt.ArrayLike) -> Majority:
    """The majority over human votes of each item.

    ``H`` (annotators, items, 2): every verdict of every annotator in every order is one vote;
    label(i) = argmax_c votes(i, c) when that maximum is reached by one label only; with two or
    more labels at the maximum the majority is tied (no label, ``tied``); an item nobody judged
    has no label and is not tied.
    """
    H = _labels_iv(H, "H", 3)
    votes = np.stack([(H == c).sum(axis=(0, 2)) for c in range(LABELS)], axis=1)
    top = votes.max(axis=1)
    at_top = (votes == top[:, None]).sum(axis=1)
    judged = top > 0
    tied = judged & (at_top > 1)
    label = np.where(judged & ~tied, votes.argmax(axis=1), MISSING)
    return Majority(label, tied, votes)


def cohen_kappa(x: npt.ArrayLike, y: npt.ArrayLike, labels: int = LABELS) -> float:
    """Cohen's kappa of two label vectors (codes 0..labels-1): (p_o - p_e) / (1 - p_e) with
    p_o = mean(x == y), p_e = sum_c p_x(c) p_y(c); NaN when empty or p_e = 1 (both raters used
    one and the same class: agreement beyond chance is undefined)."""
    x, y = np.asarray(x, np.int64), np.asarray(y, np.int64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("`x` and `y` must be 1-D of the same length.")
    if x.size == 0:
        return float("nan")
    po = float(np.mean(x == y))
    pe = float(np.sum(np.bincount(x, minlength=labels) * np.bincount(y, minlength=labels))) / x.size ** 2
    return _kappa(np.array(po), np.array(pe)).item()


def _kappa(po: np.ndarray, pe: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(pe < 1 - 1e-12, (po - pe) / (1 - pe), np.nan)


def _item_features(V: np.ndarray, h: np.ndarray) -> dict[str, np.ndarray]:
    """Per item, the counts every statistic is a ratio of sums of (items without a human label
    or without a verdict contribute zeros)."""
    has = (h >= 0)[:, None] & (V >= 0)
    correct = has & (V == h[:, None])
    both = has.all(axis=1)
    f = {
        "ab_judged": has[:, 0], "ab_correct": correct[:, 0],
        "ba_judged": has[:, 1], "ba_correct": correct[:, 1],
        "both_judged": both, "both_correct": both & correct.all(axis=1),
        "consistent": both & (V[:, 0] == V[:, 1]),
        "verdicts": has.sum(axis=1), "ties": (has & (V == TIE)).sum(axis=1),
        "first": (has[:, 0] & (V[:, 0] == A)).astype(int) + (has[:, 1] & (V[:, 1] == B)),
        "agree": correct.sum(axis=1),
    }
    f["non_tie"] = f["verdicts"] - f["ties"]
    for c in range(LABELS):
        f[f"judge_{c}"] = (has & (V == c)).sum(axis=1)
        f[f"human_{c}"] = f["verdicts"] * (h == c)
    return {k: v.astype(np.float64) for k, v in f.items()}


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _statistics(S: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The statistics from summed features (arrays of any shape: one sum, or one per resample)."""
    out = {
        "accuracy_ab": _ratio(S["ab_correct"], S["ab_judged"]),
        "accuracy_ba": _ratio(S["ba_correct"], S["ba_judged"]),
        "both_correct": _ratio(S["both_correct"], S["both_judged"]),
        "position_consistency": _ratio(S["consistent"], S["both_judged"]),
        "first_position_rate": _ratio(S["first"], S["non_tie"]),
        "tie_rate": _ratio(S["ties"], S["verdicts"]),
    }
    ab, ba = out["accuracy_ab"], out["accuracy_ba"]
    out["accuracy"] = np.where(np.isnan(ab), ba, np.where(np.isnan(ba), ab, (ab + ba) / 2))
    n = S["verdicts"]
    po = _ratio(S["agree"], n)
    pe = sum(_ratio(S[f"judge_{c}"], n) * _ratio(S[f"human_{c}"], n) for c in range(LABELS))
    out["kappa"] = np.where(n > 0, _kappa(np.nan_to_num(po), np.nan_to_num(pe, nan=1.0)), np.nan)
    return {name: out[name] for name in STATISTICS}


@dataclass(frozen=True)
class JudgeStatistics:
    """One judge against the human label: ``n`` (items with a human label judged in at least one
    order), ``counts`` (denominators: items judged in ab / ba / both, verdicts, non-tie verdicts),
    and per statistic of :data:`STATISTICS` its ``value`` and percentile interval
    ``lower``/``upper`` (NaN where undefined), ``undefined_resamples`` (resamples where the
    statistic was undefined, left out of its interval)."""

    n: int
    counts: dict[str, int]
    value: dict[str, float]
    lower: dict[str, float]
    upper: dict[str, float]
    undefined_resamples: dict[str, int]
    conventions: dict[str, Any] = field(default_factory=dict)


def bootstrap_weights(n: int, k: int, seed: int | None, clusters=None) -> np.ndarray:
    """(k, n) multiplicities of ``k`` bootstrap resamples of n items: row b counts how often
    each item is drawn in ``rng.integers(0, n, size=(k, n))[b]`` with
    ``rng = default_rng(SeedSequence(seed))``; every statistic that is a ratio of item sums is
    then ``W @ feature`` ratios (vectorised over resamples). ``clusters`` (a label per item, e.g.
    the document of its input): the C clusters are drawn instead, ``rng.integers(0, C, size=(k,
    C))``, each item as often as its cluster (:mod:`.stats.clusters`; one item per cluster: the
    same weights)."""
    from metaeval.analyses.stats.clusters import clusters_iv

    groups = clusters_iv(clusters, n)
    units = n if groups is None else groups.count
    rng = np.random.default_rng(seed_iv(seed))
    idx = rng.integers(0, units, size=(k, units)) if units else np.zeros((k, 0), np.int64)
    W = np.zeros((k, units), np.float64)
    np.add.at(W, (np.repeat(np.arange(k), units), idx.ravel()), 1.0)
    return W if groups is None else np.ascontiguousarray(W[:, groups.codes])


def _percentile(samples: np.ndarray, point: float, alpha: float) -> tuple[float, float, int]:
    undefined = int(np.isnan(samples).sum())
    defined = samples[~np.isnan(samples)]
    if np.isnan(point) or defined.size == 0:
        return float("nan"), float("nan"), undefined
    lo, hi = np.quantile(defined, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi), undefined


def judge_statistics(V: npt.ArrayLike, h: npt.ArrayLike, *, k: int = 1000, alpha: float = 0.05,
                     seed: int | None = 0, W: np.ndarray | None = None, resampled=None) -> JudgeStatistics:
    """:data:`STATISTICS` of a judge's verdicts ``V`` (items, 2) against the human labels ``h``
    (items; -1: none) with percentile bootstrap intervals over items.

    Each statistic is a ratio of sums over items (:data:`DEFINITIONS`); the bootstrap draws the
    items with replacement (:func:`bootstrap_weights`, or the given multiplicities ``W``, so that
    several judges share the resamples) and recomputes every ratio per resample; the interval is
    the (alpha/2, 1 - alpha/2) quantiles of the resamples where the statistic is defined. Items
    without a human label or verdict are carried along with zero weight in every sum.
    ``resampled``: a function giving, for resample ``b``, the verdicts to weigh by ``W[b]`` (the
    second stage of a two-stage bootstrap: a judge's runs drawn again, :mod:`metaeval.analyses.replicates`).
    """
    V = _labels_iv(V, "V", 2)
    h = np.asarray(h, np.int64)
    if h.shape != (V.shape[0],):
        raise ValueError(f"`h` must have one label per item ({V.shape[0]}); got shape {h.shape}.")
    alpha = alpha_iv(alpha)
    F = _item_features(V, h)
    point = _statistics({name: f.sum() for name, f in F.items()})
    if W is None:
        W = bootstrap_weights(V.shape[0], k, seed)
    if resampled is None:
        boot = _statistics({name: W @ f for name, f in F.items()})
    else:
        sums = {name: np.empty(W.shape[0]) for name in F}
        for b in range(W.shape[0]):
            for name, f in _item_features(_labels_iv(resampled(b), "V", 2), h).items():
                sums[name][b] = W[b] @ f
        boot = _statistics(sums)
    lower, upper, undefined = {}, {}, {}
    for name in STATISTICS:
        lower[name], upper[name], undefined[name] = _percentile(boot[name], float(point[name]), alpha)
    counts = {"ab": int(F["ab_judged"].sum()), "ba": int(F["ba_judged"].sum()), "both": int(F["both_judged"].sum()),
              "verdicts": int(F["verdicts"].sum()), "non_tie": int(F["non_tie"].sum())}
    return JudgeStatistics(int((F["verdicts"] > 0).sum()), counts, {n: float(point[n]) for n in STATISTICS},
                           lower, upper, undefined, {
                               "definitions": DEFINITIONS, "interval": "percentile bootstrap over items",
                               "k": int(W.shape[0]), "alpha": alpha,
                               "undefined": "a statistic with a zero denominator is NaN (e.g. first_position_rate "
                                            "of a judge that only ties, position_consistency without items judged "
                                            "in both orders); resamples where it is undefined are left out of its "
                                            "interval and counted"})


# --- judge vs judge ---------------------------------------------------------------------------
def mcnemar_exact(b: int, c: int) -> float:
    """Exact (binomial) McNemar p-value, two-sided: with b = #(first right, second wrong) and
    c = #(first wrong, second right), p = min(1, 2 * P[Binom(b + c, 1/2) <= min(b, c)]);
    1 without discordant pairs (no evidence either way)."""
    b, c = int(b), int(c)
    if b < 0 or c < 0:
        raise ValueError("`b` and `c` must be non-negative counts.")
    if b + c == 0:
        return 1.0
    return float(min(1.0, 2 * stats.binom.cdf(min(b, c), b + c, 0.5)))


@dataclass(frozen=True)
class PairTest:
    """Judge ``first`` vs ``second`` on the items with a human label both judged, in the
    orders both judged. ``n``: those items; ``verdicts``: those (item, order) pairs;
    ``delta``: accuracy(first) - accuracy(second) over them (item-level mean of the per-item
    accuracy difference); ``discordant``: (b, c) of McNemar; ``pvalue``: per test."""

    n: int
    verdicts: int
    delta: float
    discordant: tuple[int, int]
    pvalue: dict[str, float]


def judge_pair_test(V1: npt.ArrayLike, V2: npt.ArrayLike, h: npt.ArrayLike, *, k: int = 1000,
                    seed: int | None = 0, clusters=None) -> PairTest:
    """Paired tests of two judges' correctness on the same items.

    Common verdicts: (item, order) where the item has a human label and both judges gave a
    verdict in that order. Per item i, d_i = mean over its common orders of
    (correct_1 - correct_2).

    - ``"mcnemar"``: :func:`mcnemar_exact` on the common verdicts (each presentation order of
      an item is one trial: the two orders of an item are not independent, which this test
      ignores);
    - ``"permutation"``: the sign of each item's d_i flipped with probability 1/2 (whole items:
      the orders of an item stay together), T = sum_i d_i, p = (1 + #{|T_b| >= |T|}) / (1 + k)
      (``sign_flip_test`` of :mod:`metaeval.analyses.ranking`).

    No common verdict: delta and both p-values NaN (nothing was compared). ``clusters`` (a label
    per item): the permutation flips the items of a cluster together (one sign per cluster of the
    compared items; McNemar treats its trials as independent and is unchanged).
    """
    from metaeval.analyses.ranking import sign_flip_test

    V1, V2 = _labels_iv(V1, "V1", 2), _labels_iv(V2, "V2", 2)
    h = np.asarray(h, np.int64)
    common = (h >= 0)[:, None] & (V1 >= 0) & (V2 >= 0)
    c1, c2 = common & (V1 == h[:, None]), common & (V2 == h[:, None])
    orders = common.sum(axis=1)
    items = orders > 0
    n, verdicts = int(items.sum()), int(common.sum())
    if n == 0:
        return PairTest(0, 0, float("nan"), (0, 0), {"mcnemar": float("nan"), "permutation": float("nan")})
    d = (c1.sum(axis=1) - c2.sum(axis=1))[items] / orders[items]
    b, c = int((c1 & ~c2).sum()), int((~c1 & c2 & common).sum())
    groups = None if clusters is None else [v for v, kept in zip(clusters, items) if kept]
    perm, _, _ = sign_flip_test(d[None, :].astype(np.float64), k, seed, clusters=groups)
    return PairTest(n, verdicts, float(d.mean()), (b, c), {"mcnemar": mcnemar_exact(b, c), "permutation": float(perm[0])})


# --- Bradley-Terry ------------------------------------------------------------------------------
#: The default ridge: the penalty (ridge / 2) * sum_s theta_s^2, a Gaussian prior N(0, 1/ridge)
#: on each log-strength; it keeps the strengths finite when a system wins (or loses) every comparison.
DEFAULT_RIDGE = 0.01


def win_matrices(system_a: npt.ArrayLike, system_b: npt.ArrayLike, V: npt.ArrayLike, n_systems: int) -> np.ndarray:
    """(items, S, S) wins per item: ``C[i, s, t]`` = wins of s over t in item i's verdicts (both
    orders); a tie is half a win to each side."""
    sa, sb = np.asarray(system_a, np.int64), np.asarray(system_b, np.int64)
    V = _labels_iv(V, "V", 2)
    n = V.shape[0]
    C = np.zeros((n, n_systems, n_systems))
    i = np.arange(n)
    for o in range(2):
        v = V[:, o]
        np.add.at(C, (i, sa, sb), (v == A) + 0.5 * (v == TIE))
        np.add.at(C, (i, sb, sa), (v == B) + 0.5 * (v == TIE))
    return C


def bradley_terry(C: npt.ArrayLike, ridge: float = DEFAULT_RIDGE, *, tol: float = 1e-10,
                  max_iter: int = 200) -> np.ndarray:
    """Bradley-Terry log-strengths maximising the penalised log-likelihood

        l(theta) = sum_{s != t} C[s, t] log sigma(theta_s - theta_t) - (ridge / 2) sum_s theta_s^2

    (``C[s, t]``: wins of s over t, fractional for ties; P(s beats t) = sigma(theta_s - theta_t)),
    for one (S, S) matrix or a batch (..., S, S), by damped Newton steps (every row of a batch at
    once; step halving until the objective does not decrease). ``ridge`` > 0 makes the optimum
    unique and finite (a Gaussian prior N(0, 1/ridge) on each theta_s); at the optimum
    sum_s theta_s = 0. A system with no comparison gets theta_s = 0."""
    C = np.asarray(C, np.float64)
    if C.ndim < 2 or C.shape[-1] != C.shape[-2]:
        raise ValueError(f"`C` must be (..., S, S); got shape {C.shape}.")
    if not ridge > 0:
        raise ValueError(f"`ridge` must be > 0 (without a prior the strengths of a system that wins every "
                         f"comparison are infinite); got {ridge!r}.")
    shape = C.shape
    C = C.reshape(-1, shape[-1], shape[-1])
    N = C + np.swapaxes(C, 1, 2)
    wins = C.sum(axis=2)
    theta = np.zeros(C.shape[:2])
    eye, diag = np.eye(shape[-1]), np.arange(shape[-1])

    def objective(t):
        diff = t[:, :, None] - t[:, None, :]
        return -(C * -np.logaddexp(0, -diff)).sum(axis=(1, 2)) + ridge / 2 * (t ** 2).sum(axis=1)

    f = objective(theta)
    for _ in range(max_iter):
        P = 1 / (1 + np.exp(-(theta[:, :, None] - theta[:, None, :])))
        grad = -(wins - (N * P).sum(axis=2)) + ridge * theta
        if np.abs(grad).max() < tol:
            break
        Wt = N * P * (1 - P)
        Hs = -Wt + ridge * eye
        Hs[:, diag, diag] += Wt.sum(axis=2)
        step = np.linalg.solve(Hs, grad[:, :, None])[:, :, 0]
        t = np.ones(len(theta))
        new = theta - step
        fn = objective(new)
        for _ in range(40):
            worse = fn > f + 1e-15 * np.abs(f)
            if not worse.any():
                break
            t = np.where(worse, t / 2, t)
            new = np.where(worse[:, None], theta - t[:, None] * step, new)
            fn = np.where(worse, objective(new), fn)
        theta, f = new, fn
    return theta.reshape(shape[:-1])


def kendall_tau_b(x: npt.ArrayLike, z: npt.ArrayLike) -> np.ndarray:
    """Kendall's tau-b between the last axes of ``x`` and ``z`` (batched): sum_{s<t} sign(x_s - x_t)
    sign(z_s - z_t) / sqrt(n_x n_z), n_x the pairs not tied in x; NaN when either has no untied
    pair (scipy.stats.kendalltau's tau-b)."""
    x, z = np.asarray(x, np.float64), np.asarray(z, np.float64)
    s, t = np.triu_indices(x.shape[-1], 1)
    sx, sz = np.sign(x[..., s] - x[..., t]), np.sign(z[..., s] - z[..., t])
    den = np.sqrt((sx != 0).sum(axis=-1) * (sz != 0).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (sx * sz).sum(axis=-1) / np.where(den > 0, den, 1), np.nan)


@dataclass(frozen=True)
class Ranking:
    """Bradley-Terry log-strengths per system (``strength``, mean 0), their percentile bootstrap
    intervals, ``rank`` (1 = strongest; ties share the lower rank; NaN for a system never compared,
    whose strength is only the ridge prior's), ``comparisons`` (verdicts involving the system), and
    ``samples`` (k, S) of the resampled strengths."""

    strength: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    rank: np.ndarray
    comparisons: np.ndarray
    samples: np.ndarray


def preference_ranking(C: npt.ArrayLike, W: np.ndarray, *, ridge: float = DEFAULT_RIDGE,
                       alpha: float = 0.05) -> Ranking:
    """Bradley-Terry strengths of per-item wins ``C`` (items, S, S) (:func:`win_matrices`), and
    their percentile intervals over the item resamples ``W`` (k, items)
    (:func:`bootstrap_weights`): each resample's win matrix is sum_i W[b, i] C[i]."""
    C = np.asarray(C, np.float64)
    alpha = alpha_iv(alpha)
    total = C.sum(axis=0)
    theta = bradley_terry(total, ridge)
    S = C.shape[1]
    boot = bradley_terry((W @ C.reshape(C.shape[0], -1)).reshape(-1, S, S), ridge)
    lower, upper = np.quantile(boot, [alpha / 2, 1 - alpha / 2], axis=0) if len(boot) else (np.full(S, np.nan),) * 2
    comparisons = (total + total.T).sum(axis=1)
    # a system never compared has the ridge prior's strength, not evidence: no rank (NaN), and
    # the others ranked among themselves
    compared = comparisons > 0
    rank = np.full(S, np.nan)
    rank[compared] = stats.rankdata(-theta[compared], method="min")
    return Ranking(theta, lower, upper, rank, comparisons, boot)


def bt_conventions(ridge: float) -> dict[str, Any]:
    return {"model": "Bradley-Terry: P(s beats t) = 1 / (1 + exp(theta_t - theta_s)), strengths theta on the "
                     "log scale, sum 0",
            "ties": "half a win to each side", "ridge": ridge,
            "regularisation": f"penalised maximum likelihood: l(theta) - ({ridge:g} / 2) sum theta^2 (a Gaussian "
                              f"prior N(0, 1/{ridge:g}) on each theta)",
            "estimator": "damped Newton on the penalised log-likelihood (metaeval.analyses.preferences."
                         "bradley_terry); equal to choix.opt_pairwise on the comparisons entered twice "
                         "(a tie once each way) with alpha = ridge, checked in the tests",
            "why_not_choix": "choix's opt_pairwise takes one row per comparison and no weights (a Python loop over "
                             "all comparisons for each of the k bootstrap fits), and its dense ILSR regularises "
                             "by adding alpha to Markov-chain rates, not a stated prior on the strengths",
            "interval": "percentile bootstrap over items (the same resamples for every judge and the humans)"}


def ranking_agreement(judge: np.ndarray, human: np.ndarray, judge_samples: np.ndarray, human_samples: np.ndarray,
                      alpha: float = 0.05) -> tuple[float, float, float, int]:
    """Kendall tau-b between a judge's and the humans' strengths, and its percentile interval
    from the paired resamples (the same items drawn for both); (tau, lower, upper, undefined
    resamples)."""
    tau = float(kendall_tau_b(judge, human))
    lo, hi, undefined = _percentile(kendall_tau_b(judge_samples, human_samples), tau, alpha_iv(alpha))
    return tau, lo, hi, undefined

