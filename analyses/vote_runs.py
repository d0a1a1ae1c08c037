"""A judge's repeated runs (``preferences.replicate``) in a leaderboard's bootstrap over votes: the
second stage of a two-stage bootstrap (``leaderboard --judge J --replicates resample``), so that
the ratings' intervals include the judge's run-to-run noise.

The leaderboard counts a judge's votes by (system_a, system_b, outcome), a vote being one item in
one presentation order with the mean over its runs as its verdict (view ``preference_means``),
and its first stage draws the counts multinomially (:func:`metaeval.analyses.leaderboard.bootstrap_counts`,
unchanged here). A round's draws of a counted row are draws of the row's votes, each equally
likely; the second stage draws each drawn vote's runs again with replacement (as many as it has)
and moves the vote to the row of the verdict their mean rounds to
(:func:`metaeval.analyses.replicates.rounded`: share of the runs preferring system_b above 1/2,
b; below, a; 1/2, a tie). Only the votes run several times can move: per round and row, how
many draws land on them is binomial (their share of the row's votes), which of them uniform;
then one uniform number per run picks the run ``floor(u * count)`` of its vote. The numbers come
from their own stream (:func:`metaeval.analyses.replicates.second_stage_rng`), in that order per
round. The counted rows gain, after the stored ones, zero-count rows for the outcomes a pair's
resampled runs may reach. Without a vote run twice nothing is drawn: the rows and counts are the
first stage's, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaeval.analyses import replicates as rp
from metaeval.analyses.leaderboard import Counted

#: A verdict code (:mod:`metaeval.analyses.replicates`) as the leaderboard's outcome (1: a wins).
OUTCOME = {rp.A: 1.0, rp.B: 0.0, rp.TIE: 0.5}
RUNS_TEXT = ("each vote's runs (preferences.replicate) drawn again with replacement inside every round, the vote "
             "then counted as the verdict their mean rounds to (two-stage bootstrap)")


@dataclass(frozen=True)
class VoteRuns:
    """The votes run several times, by counted row: ``row`` (sorted), their runs in ``soft`` from
    ``start`` (``count`` of them), and ``target`` (votes x 3): the row of the extended
    :attr:`counted` for the verdicts a, b, tie of the vote's pair."""

    counted: Counted
    item: np.ndarray
    row: np.ndarray
    start: np.ndarray
    count: np.ndarray
    soft: np.ndarray
    target: np.ndarray

    @property
    def most(self) -> int:
        return int(self.count.max()) if len(self.count) else 1


def of(counted: Counted, a, b, outcome, vote, soft, item=None) -> VoteRuns:
    """From one row per run of the votes run several times: systems ``a``, ``b`` (indices as in
    ``counted``), the vote's counted ``outcome`` (its mean's verdict), a vote key ``vote`` (an
    integer per vote), the run's share of preferring system_b ``soft`` and the vote's ``item``
    (an index; for :func:`item_stage`)."""
    item = np.zeros(len(vote), np.int64) if item is None else np.asarray(item, np.int64)
    a, b, vote = (np.asarray(x, np.int64) for x in (a, b, vote))
    outcome, soft = np.asarray(outcome, float), np.asarray(soft, float)
    key = {(int(x), int(y), float(z)): i for i, (x, y, z) in enumerate(zip(counted.a, counted.b, counted.y))}
    extra = []
    for pair in dict.fromkeys(zip(a.tolist(), b.tolist())):
        extra += [(*pair, y) for y in (1.0, 0.0, 0.5) if (*pair, y) not in key]
    for n, k in enumerate(extra):
        key[k] = len(counted.a) + n
    more = np.array(extra, dtype=float).reshape(-1, 3)
    ext = Counted(a=np.concatenate([counted.a, more[:, 0].astype(np.int64)]),
                  b=np.concatenate([counted.b, more[:, 1].astype(np.int64)]),
                  y=np.concatenate([counted.y, more[:, 2]]), w=np.concatenate([counted.w, np.zeros(len(extra))]),
                  n_systems=counted.n_systems)
    by = np.lexsort((vote, np.array([key[(int(x), int(y), float(z))] for x, y, z in zip(a, b, outcome)], np.int64)))
    a, b, outcome, vote, soft, item = a[by], b[by], outcome[by], vote[by], soft[by], item[by]
    new = np.ones(len(vote), bool)
    new[1:] = vote[1:] != vote[:-1]
    start = np.flatnonzero(new)
    count = np.diff(np.append(start, len(vote)))
    first = [(int(x), int(y)) for x, y in zip(a[start], b[start])]
    target = np.array([[key[(*p, OUTCOME[code])] for code in (rp.A, rp.B, rp.TIE)] for p in first],
                      np.int64).reshape(-1, 3)
    rows = np.array([key[(*p, float(z))] for p, z in zip(first, outcome[start])], np.int64)
    return VoteRuns(ext, item[start], rows, start, count, soft, target)


def second_stage(runs: VoteRuns, W: np.ndarray, rng: np.random.Generator) -> tuple[Counted, np.ndarray]:
    """The extended counted rows and the round counts ``W`` (stored rows x rounds, the first
    stage's) with every drawn vote of ``runs`` counted as its resampled runs' verdict (module
    docstring). Without a vote run twice: ``runs.counted`` and ``W`` as they are."""
    if runs.most < 2:
        return runs.counted, W
    rows = len(W)
    multi = np.bincount(runs.row, minlength=rows)
    first = np.concatenate([[0], np.cumsum(multi)[:-1]]).astype(np.int64)
    share = multi / np.where(runs.counted.w[:rows] > 0, runs.counted.w[:rows], 1)
    out = np.zeros((len(runs.counted.a), W.shape[1]))
    out[:rows] = W
    for b in range(W.shape[1]):
        hits = rng.binomial(W[:, b].astype(np.int64), share)
        row = np.repeat(np.arange(rows), hits)
        picked = first[row] + np.minimum((rng.random(len(row)) * multi[row]).astype(np.int64), multi[row] - 1)
        out[:, b] += _moved(runs, picked, rng, len(out))
    return runs.counted, out


def item_stage(runs: VoteRuns, W: np.ndarray, stored: np.ndarray, rng: np.random.Generator) -> tuple[Counted, np.ndarray]:
    """A bootstrap over items (``W``: items x rounds, how many times each item is drawn; ``stored``:
    the counted rows x rounds it gives) with each drawn copy of a vote of ``runs`` counted as its
    resampled runs' verdict: per round the copies of the votes by counted row, then vote (as many
    as their item's draws), each copy's runs drawn as :func:`second_stage` draws them. Without a vote run
    twice: ``runs.counted`` and ``stored`` as they are."""
    if runs.most < 2:
        return runs.counted, stored
    out = np.zeros((len(runs.counted.a), W.shape[1]))
    out[:len(stored)] = stored
    for b in range(W.shape[1]):
        picked = np.repeat(np.arange(len(runs.item)), W[runs.item, b].astype(np.int64))
        out[:, b] += _moved(runs, picked, rng, len(out))
    return runs.counted, out


def _moved(runs: VoteRuns, picked: np.ndarray, rng: np.random.Generator, rows: int) -> np.ndarray:
    """The change of a round's counts when the drawn votes ``picked`` (one entry per draw) are
    counted as the verdicts of their runs drawn again: one uniform per run, in order."""
    count = runs.count[picked]
    draw = np.repeat(np.arange(len(picked)), count)
    u = rng.random(len(draw))
    run = runs.start[picked][draw] + np.minimum((u * count[draw]).astype(np.int64), count[draw] - 1)
    mean = np.bincount(draw, weights=runs.soft[run], minlength=len(picked)) / np.maximum(count, 1)
    to = runs.target[picked, rp.rounded(mean)]
    return np.bincount(to, minlength=rows) - np.bincount(runs.row[picked], minlength=rows)
