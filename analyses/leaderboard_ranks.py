"""What a leaderboard says about order: rank intervals, pairwise tests for the conclusion layer,
and fragility.

Rank intervals. In each valid bootstrap round a system's rank is 1 + the number of systems rated
strictly higher in that round; ``rank_lower``/``rank_upper`` are the floor/ceiling of the
``alpha/2`` and ``1 - alpha/2`` percentiles of those ranks (a descriptive interval, as the
arena's rating intervals are).

Pairwise tests. For every pair (i, j), i < j: the two-sided bootstrap p-value
``min(1, 2 min(#{d <= 0}, #{d >= 0}) / n_valid)`` of the difference ``d`` of their strengths over
the valid rounds (the count/k formula: the percentile interval of ``d`` excludes 0 exactly when
p <= alpha), or, with sandwich intervals, the z-test ``2 (1 - Phi(|d| / se))`` with
``se^2 = V_ii + V_jj - 2 V_ij``. Which differences are significant, whether the family can
resolve, and the groups of systems that cannot be separated are decided by
:mod:`metaeval.analyses.conclusions` (never here).

Fragility. The fewest votes whose removal changes the leader: after removing them the refitted
ratings are defined and some other system is rated at least as high as the leader (within
``1e-9`` logits). Removals after which the votes admit no estimate do not count. :func:`fragility`
searches every multiset of removed votes by increasing size (exact) while the candidates stay
within a budget; beyond it, a greedy search guided by each vote's influence on the leader's
margin (``-(e_L - e_C)' H^+ s_r``, the one-step change of the refit) gives a verified upper
bound, said so (``exact`` False).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from metaeval.analyses import leaderboard as lb

#: Another system within this many logits of the leader's strength ties it (the leader changes).
LEADER_TIE = 1e-9


def round_ranks(samples: np.ndarray) -> np.ndarray:
    """Per round (row) the competition rank of each system: 1 + systems rated strictly higher."""
    s = np.asarray(samples, dtype=float)
    return 1 + (s[:, None, :] > s[:, :, None]).sum(axis=2)


def rank_interval(samples: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(rank_lower, rank_upper) over the valid rounds (rows without NaN); NaN when there are none."""
    valid = samples[~np.isnan(samples).any(axis=1)]
    if not len(valid):
        nan = np.full(samples.shape[1], np.nan)
        return nan, nan
    ranks = round_ranks(valid)
    lo, hi = np.percentile(ranks, [100 * alpha / 2, 100 * (1 - alpha / 2)], axis=0)
    return np.floor(lo), np.ceil(hi)


@dataclass(frozen=True)
class PairTests:
    """One row per pair (a < b): the point difference ``delta`` = rating_a - rating_b, the raw
    two-sided p (NaN: undefined), and the valid rounds behind it (None: a closed form)."""

    a: np.ndarray
    b: np.ndarray
    delta: np.ndarray
    pvalue: np.ndarray
    n_valid: int | None
    formula: str


def pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.triu_indices(n, 1)
    return a, b


def bootstrap_tests(point: np.ndarray, samples: np.ndarray) -> PairTests:
    """The bootstrap tests of every pair from the rounds' ratings (rows: rounds)."""
    a, b = pairs(len(point))
    valid = samples[~np.isnan(samples).any(axis=1)]
    if not len(valid):
        return PairTests(a, b, point[a] - point[b], np.full(len(a), np.nan), 0, "count")
    d = valid[:, a] - valid[:, b]
    low, high = (d <= 0).sum(axis=0), (d >= 0).sum(axis=0)
    p = np.minimum(1.0, 2 * np.minimum(low, high) / len(valid))
    return PairTests(a, b, point[a] - point[b], p, len(valid), "count")


def sandwich_tests(point: np.ndarray, cov: np.ndarray, per_unit: float = 1.0) -> PairTests:
    """The z-tests of every pair from the covariance of the strengths (``per_unit``: rating units
    per logit)."""
    from scipy.special import ndtr           # here: the bootstrap's leaderboard starts without scipy (0.3 s)

    a, b = pairs(len(point))
    se = np.sqrt(np.clip(cov[a, a] + cov[b, b] - 2 * cov[a, b], 0, None)) * per_unit
    delta = point[a] - point[b]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(se > 0, 2 * ndtr(-np.abs(delta) / se), np.nan)     # scipy.stats.norm.sf
    return PairTests(a, b, delta, p, None, "parametric")


# --- fragility ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Fragility:
    """``votes``: the fewest removed votes found that change the leader (None: no removal does);
    ``exact``: the search was exhaustive; ``challenger``: the system that reaches the leader."""

    votes: int | None
    exact: bool
    challenger: int | None


def _changed(theta: np.ndarray, leader: int) -> np.ndarray:
    """Per round: defined, and another system at least as high as the leader."""
    others = theta.copy()
    others[:, leader] = -np.inf
    return np.isfinite(theta).all(axis=1) & (others.max(axis=1) >= theta[:, leader] - LEADER_TIE)


def _challenger(theta: np.ndarray, leader: int) -> int:
    others = theta.copy()
    others[leader] = -np.inf
    return int(np.argmax(others))


def fragility(c: lb.Counted, fit: Callable[[np.ndarray], np.ndarray], *, budget: int = 2000,
              batch: int = 2000) -> Fragility:
    """The fewest votes whose removal changes the leader of ``fit`` (counts rows x rounds ->
    strengths rounds x systems); exact while the multisets of each size fit in ``budget``."""
    point = fit(c.w[:, None])[0]
    if not np.isfinite(point).all():
        return Fragility(None, False, None)
    leader = int(np.argmax(point))
    if _changed(point[None, :], leader)[0]:                 # another system already ties the leader
        return Fragility(0, True, _challenger(point, leader))
    w = c.w.astype(int)
    tried = 0
    for m in range(1, int(w.sum()) + 1):
        count = math.comb(len(w) + m - 1, m)
        if tried + count > budget:
            return _greedy(c, fit, point, leader)
        tried += count
        combos = (k for k in itertools.combinations_with_replacement(range(len(w)), m)
                  if all(k.count(r) <= w[r] for r in set(k)))
        while chunk := list(itertools.islice(combos, batch)):
            removed = np.zeros((len(w), len(chunk)))
            for j, k in enumerate(chunk):
                np.add.at(removed[:, j], list(k), 1)
            theta = fit(c.w[:, None] - removed)
            hit = np.flatnonzero(_changed(theta, leader))
            if len(hit):
                return Fragility(m, True, _challenger(theta[hit[0]], leader))
    return Fragility(None, True, None)


def _influence(c: lb.Counted, w: np.ndarray, theta: np.ndarray, leader: int, rival: int) -> np.ndarray:
    """Per distinct row: the one-step change of theta_leader - theta_rival when one of its votes is
    removed (half-a-win scores; a guide for the search, every removal is verified by a refit)."""
    S = c.n_systems
    p = lb.expit(theta[c.a] - theta[c.b])
    curvature = w * p * (1 - p)
    H = np.bincount(c.a * S + c.b, -curvature, S * S).reshape(S, S)
    H += H.T
    H[np.arange(S), np.arange(S)] = -H.sum(axis=1)
    e = np.zeros(S)
    e[leader], e[rival] = 1.0, -1.0
    direction = np.linalg.solve(H + 1.0 / S, e)          # = H^+ e: e sums to 0 (no SVD: 60x60 SVDs are slow)
    return -((c.y - p) * (direction[c.a] - direction[c.b]))


def _greedy(c, fit, point, leader, rivals: int = 5, rounds: int = 200) -> Fragility:
    """The greedy upper bound: per rival (the closest few), remove the most influential votes in
    steps predicted to close half the gap (at most half a row's votes each), refitting after each
    step, until the leader changes."""
    best: tuple[int, int] | None = None
    order = [int(j) for j in np.argsort(-point) if j != leader][:rivals]
    for rival in order:
        w, removed, theta = c.w.copy(), 0, point
        for _ in range(rounds):
            gap = theta[leader] - theta[rival]
            effect = _influence(c, w, theta, leader, rival)
            effect[w <= 0] = 0
            rows = np.argsort(effect)
            take, predicted = np.zeros_like(w), 0.0
            need = gap / 2                 # half the predicted gap per step: the prediction is linear
            for r in rows:
                if effect[r] >= 0 or predicted <= -need or effect[r] > effect[rows[0]] / 2:   # only the strong
                    break
                n = min(math.ceil(w[r] / 2), max(1.0, math.ceil((need + predicted) / -effect[r])))
                take[r], predicted = n, predicted + n * effect[r]
            if not take.any() or (best is not None and removed + take.sum() >= best[0]):
                break
            trial = fit((w - take)[:, None])[0]
            while not np.isfinite(trial).all() and take.sum() > 1:      # too many at once: no estimate
                take = np.floor(take / 2)
                trial = fit((w - take)[:, None])[0] if take.any() else trial
            if not take.any() or not np.isfinite(trial).all():
                break
            w, removed, theta = w - take, removed + int(take.sum()), trial
            if _changed(theta[None, :], leader)[0]:
                if best is None or removed < best[0]:
                    best = (removed, _challenger(theta, leader))
                break
    return Fragility(best[0], False, best[1]) if best else Fragility(None, False, None)
