"""A judge's leaderboard against the humans': rank correlations, Arena-Hard's benchmark
meta-evaluation and the Brier score of the judge's pairwise win probabilities (issue 35 item 3).

Votes. Each side (the humans: every verdict of every human judge in every presentation order;
the judge: its verdicts) is a list of votes ``(item, a, b, y)``, ``y`` 1 (a wins), 1/2 (a tie) or
0 (b wins). The ratings of a side are the maximum-likelihood Bradley-Terry strengths of
:func:`metaeval.analyses.leaderboard.fit` on its counted votes (ties half a win each way, no
prior unless ``ridge``): the point ratings ``metaeval leaderboard`` gives with its defaults.

Paired bootstrap. The resampled unit is the *item* (one input and pair of systems): round ``b``
draws the items with replacement (:func:`metaeval.analyses.preferences.bootstrap_weights`, the
item resamples of ``metaeval judges``) and each side's vote counts are the sums over the drawn
items of its votes, so the judge and the humans are resampled together (a round is *valid* when
both sides' votes admit an estimate; the others are left out of every interval). The
``1 - alpha`` percentile interval of each system's rating on the Elo scale (``1000 + 400/ln 10``
per logit, centred: no anchor) is read over the valid rounds.

Statistics (``S`` systems, ``P = S (S - 1) / 2`` pairs ``i < j``):

- ``kendall`` (tau-b) and ``spearman`` between the judge's and the humans' ratings (as
  :func:`metaeval.analyses.stats.correlation.corr`, = scipy's ``kendalltau`` / ``spearmanr``),
  with percentile intervals over the valid rounds (each round's coefficient between that
  round's judge and human ratings).
- ``separability`` (Arena-Hard's "separability with confidence", Li et al. 2024, §3): the share
  of the P pairs whose judge-side intervals do not overlap (``lower_i > upper_j`` or
  ``lower_j > upper_i``); ``human_separability`` the same on the humans' side.
- ``agreement`` (Arena-Hard's "agreement with confidence interval"): with ``s_ij`` = +1 when
  ``lower_i > upper_j``, -1 when ``lower_j > upper_i``, 0 when the intervals overlap, for the
  judge (``s^J``) and the humans (``s^H``),
  ``agreement = (1/P) sum_{i<j} s^J_ij s^H_ij``: +1 for a pair both separate in the same order,
  -1 in opposite orders, 0 when either cannot separate it; in [-1, 1].
  ``agreement_separated`` = ``#{s^J s^H = +1} / #{s^J s^H != 0}``: of the pairs both separate,
  the share ordered the same way (NaN when both separate none); ``agreement_human`` =
  ``sum s^J s^H / #{s^H != 0}``: the same score averaged over the pairs the humans separate only
  (the reading in which the reference leaderboard's confident pairs are the population).
- ``brier`` (Arena-Hard's "pair rank Brier score", here on the human leaderboard's pairwise
  outcomes): ``(1/P') sum_{i<j} (sigma(theta^J_i - theta^J_j) - o_ij)^2`` with
  ``o_ij = 1[r^H_i > r^H_j]``, the pairs whose human ratings are equal left out (P' pairs); the
  judge's probability that i beats j is read from its own Bradley-Terry strengths. 0 is perfect,
  0.25 is a judge that says 1/2 to every pair.
- ``brier_votes``: the same probabilities against every human vote,
  ``sum_v (sigma(theta^J_a - theta^J_b) - y_v)^2 / #votes`` (a tie's ``y`` = 1/2); its floor is
  the humans' own disagreement, so compare judges with each other rather than with 0.

Both Brier scores have percentile intervals over the valid rounds (each round's judge strengths
against that round's human ratings or vote counts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.special import expit

from metaeval.analyses import leaderboard as lb
from metaeval.analyses import preferences as pf
from metaeval.analyses.stats.correlation import corr
from metaeval.analyses.stats.validation import alpha_iv, coefficient_iv
from metaeval.analyses.stats import resampling

STATISTICS = ("kendall", "spearman", "brier", "brier_votes")


@dataclass(frozen=True)
class Votes:
    """One side's votes: ``item`` (index of the item), systems ``a`` and ``b`` (indices) and the
    outcome ``y`` (1: a wins, 1/2: a tie, 0: b wins)."""

    item: np.ndarray
    a: np.ndarray
    b: np.ndarray
    y: np.ndarray


def counted(v: Votes, n_systems: int, n_items: int) -> tuple[lb.Counted, sparse.csr_matrix]:
    """The distinct vote rows (as :func:`metaeval.analyses.leaderboard.count` gives them) and the
    rows x items matrix of how many votes of each row each item holds."""
    a, b, y, item = (np.asarray(x) for x in (v.a, v.b, v.y, v.item))
    c = lb.count(a, b, y, n_systems)
    key = np.column_stack([a, b, (2 * np.asarray(y, float)).astype(np.int64)])
    _, inverse = np.unique(key, axis=0, return_inverse=True)
    M = sparse.csr_matrix((np.ones(len(a)), (np.ravel(inverse), np.asarray(item, np.int64))),
                          shape=(len(c.w), n_items))
    return c, M


def separated(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Per pair i < j (``np.triu_indices``): +1 when i's interval lies above j's, -1 below, 0 when
    they overlap (touching intervals overlap); NaN bounds give 0 (nothing is separated)."""
    i, j = np.triu_indices(len(lower), 1)
    with np.errstate(invalid="ignore"):
        return np.where(lower[i] > upper[j], 1, np.where(lower[j] > upper[i], -1, 0))


def separability(lower: np.ndarray, upper: np.ndarray) -> float:
    """Arena-Hard's separability with confidence: the share of pairs whose intervals do not overlap;
    NaN when an interval is undefined (no valid bootstrap round: nothing is known to overlap)."""
    s = separated(lower, upper)
    return float(np.mean(s != 0)) if len(s) and _defined(lower, upper) else float("nan")


def _defined(*bounds: np.ndarray) -> bool:
    return not any(np.isnan(np.asarray(b, dtype=float)).any() for b in bounds)


def agreement(judge: tuple[np.ndarray, np.ndarray],
              human: tuple[np.ndarray, np.ndarray]) -> tuple[float, float, float, int]:
    """Arena-Hard's agreement with confidence interval, ``(1/P) sum s^J s^H`` (module docstring),
    the share of the pairs both separate that they order alike, the score over the pairs the
    humans separate, and how many pairs both separate."""
    s_h = separated(*human)
    product = separated(*judge) * s_h
    both, by_humans = int(np.count_nonzero(product)), int(np.count_nonzero(s_h))
    if not len(product) or not _defined(*judge, *human):   # an undefined interval separates nothing known
        return float("nan"), float("nan"), float("nan"), 0
    return (float(product.mean()), float(np.mean(product[product != 0] > 0)) if both else float("nan"),
            float(product.sum() / by_humans) if by_humans else float("nan"), both)


def pair_brier(theta_judge: np.ndarray, rating_human: np.ndarray) -> np.ndarray:
    """The Brier score of the judge's pairwise probabilities against the humans' pairwise order
    (module docstring), batched over leading axes; NaN when every pair is tied for the humans or
    a rating of either side is undefined."""
    i, j = np.triu_indices(np.shape(theta_judge)[-1], 1)
    p = expit(theta_judge[..., i] - theta_judge[..., j])
    d = rating_human[..., i] - rating_human[..., j]
    known = d != 0
    undefined = np.isnan(d).any(axis=-1) | np.isnan(p).any(axis=-1)
    loss = np.where(known, (p - (d > 0)) ** 2, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(known.any(axis=-1) & ~undefined, loss / known.sum(axis=-1), np.nan)


def vote_brier(theta_judge: np.ndarray, c: lb.Counted, weights: np.ndarray | None = None) -> np.ndarray:
    """The Brier score of the judge's probabilities against the human votes ``c`` (counts
    ``weights``, rows x rounds, with ``theta_judge`` rounds x systems; default one round)."""
    theta = np.atleast_2d(theta_judge)
    W = (c.w[:, None] if weights is None else weights).T                  # rounds x rows
    p = expit(theta[:, c.a] - theta[:, c.b])
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (W * (p - c.y) ** 2).sum(axis=1) / W.sum(axis=1)
    return out[0] if weights is None else out


@dataclass(frozen=True)
class Result:
    """The statistics of one judge (``value``, ``lower``, ``upper`` keyed by :data:`STATISTICS`),
    the shares of :func:`separability` and :func:`agreement`, the point ratings (Elo, centred)
    and bootstrap intervals of both sides, and the valid rounds."""

    value: dict
    lower: dict
    upper: dict
    separability: float
    human_separability: float
    agreement: float
    agreement_separated: float
    agreement_human: float
    pairs_separated_both: int
    pairs: int
    rating_judge: np.ndarray
    rating_human: np.ndarray
    interval_judge: tuple[np.ndarray, np.ndarray]
    interval_human: tuple[np.ndarray, np.ndarray]
    n_valid: int


def evaluate(human: Votes, judge: Votes, n_systems: int, n_items: int, *, k: int = 1000, seed: int = 0,
             alpha: float = 0.05, ridge: float = 0.0, runs=None) -> Result:
    """Every statistic of the module docstring for one judge against the humans; ``runs``: the
    judge's votes run several times (:class:`metaeval.analyses.vote_runs.VoteRuns` on its counted
    rows), drawn again inside every item resample (:func:`metaeval.analyses.vote_runs.item_stage`)."""
    alpha = alpha_iv(alpha)
    ch, Mh = counted(human, n_systems, n_items)
    cj, Mj = counted(judge, n_systems, n_items)
    th, tj = lb.fit(ch, ridge=ridge), lb.fit(cj, ridge=ridge)
    W = pf.bootstrap_weights(n_items, k, seed).T                        # items x rounds
    Wh, Wj = np.asarray(Mh @ W), np.asarray(Mj @ W)
    cjb = cj
    if runs is not None:
        from metaeval.analyses import replicates, vote_runs

        cjb, Wj = vote_runs.item_stage(runs, W, Wj, replicates.second_stage_rng(seed))
    sh, sj = lb.fit(ch, Wh, ridge=ridge), lb.fit(cjb, Wj, ridge=ridge)
    valid = np.isfinite(sh).all(axis=1) & np.isfinite(sj).all(axis=1)
    sh, sj, Wh = sh[valid], sj[valid], Wh[:, valid]
    rh, rj = lb.elo(th), lb.elo(tj)
    samples_h, samples_j = lb.elo(sh), lb.elo(sj)
    interval = {}
    for side, s in (("human", samples_h), ("judge", samples_j)):
        interval[side] = ((np.percentile(s, 100 * alpha / 2, axis=0), np.percentile(s, 100 * (1 - alpha / 2), axis=0))
                          if len(s) else (np.full(n_systems, np.nan),) * 2)
    point = {"kendall": corr(rj, rh, coefficient_iv("kendall")).item(),
             "spearman": corr(rj, rh, coefficient_iv("spearman")).item(),
             "brier": float(pair_brier(tj, th)), "brier_votes": float(vote_brier(tj, ch))}
    rounds = {"kendall": corr(samples_j, samples_h, coefficient_iv("kendall")),
              "spearman": corr(samples_j, samples_h, coefficient_iv("spearman")),
              "brier": pair_brier(sj, sh), "brier_votes": vote_brier(sj, ch, Wh) if len(sj) else np.array([])}
    lower, upper = {}, {}
    for name in STATISTICS:
        lower[name], upper[name] = _percentile(rounds[name], point[name], alpha)
    agree, agree_both, agree_human, both = agreement(interval["judge"], interval["human"])
    return Result(point, lower, upper, separability(*interval["judge"]), separability(*interval["human"]), agree,
                  agree_both, agree_human, both, n_systems * (n_systems - 1) // 2, rj, rh, interval["judge"], interval["human"],
                  int(valid.sum()))


def _percentile(samples: np.ndarray, point: float, alpha: float) -> tuple[float, float]:
    """The percentile interval of the defined rounds; NaN when the point or every round is undefined."""
    lo, hi, _ = resampling.percentile_interval(samples, alpha)
    return (float("nan"), float("nan")) if np.isnan(point) else (lo, hi)
