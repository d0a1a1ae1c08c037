"""Repeated runs of a judge: the same judge asked several times about the same item and order
(``preferences.replicate``, the run number).

The mean over runs is the **soft preference**: the share of the runs preferring system_b, a tie
counting 1/2 (a run with a continuous preference counts its probability), as for a continuous
judge's weighted preference; the verdict analysed is its rounding (> 1/2: b, < 1/2: a, 1/2: tie),
so that a cell judged once keeps its verdict (view ``preference_means``).

:func:`resampled_verdicts` draws each cell's runs with replacement (the second stage of a
bootstrap whose first stage draws the items: intervals that include the judge's run-to-run
noise); :func:`stability` is the judge's agreement with itself: the share of pairs of runs of the
same item and order that gave the same verdict (a, b, tie), NaN without a cell run twice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

A, B, TIE, MISSING = 0, 1, 2, -1     # analyses.preferences' codes (not imported: no circle, a test checks)
#: A verdict's share of preferring system_b.
SOFT = {A: 0.0, B: 1.0, TIE: 0.5}


def rounded(p: np.ndarray) -> np.ndarray:
    """The verdict a soft preference rounds to: b above 1/2, a below, tie at 1/2."""
    p = np.asarray(p, dtype=np.float64)
    return np.where(p > 0.5, B, np.where(p < 0.5, A, TIE)).astype(np.int64)


@dataclass(frozen=True)
class Runs:
    """One judge's runs, cell by cell (an item in one order): ``item`` and ``order`` of each cell,
    where its runs start in ``soft`` / ``label`` and how many (``count``); ``soft``: each run's share
    of preferring system_b, ``label``: its verdict. Cells in (item, order) order, runs in run order."""

    item: np.ndarray
    order: np.ndarray
    start: np.ndarray
    count: np.ndarray
    soft: np.ndarray
    label: np.ndarray

    @classmethod
    def of(cls, item, order, replicate, label, probability) -> Runs:
        """From one row per run: its item index, order (0: ab, 1: ba), run number, verdict code
        and probability (NaN: a verdict only)."""
        item, order = np.asarray(item, np.int64), np.asarray(order, np.int64)
        label = np.asarray(label, np.int64)
        probability = np.asarray(probability, np.float64)
        soft = np.where(np.isnan(probability), np.vectorize(SOFT.get, otypes=[float])(label) if len(label) else 0.0,
                        probability)
        by = np.lexsort((np.asarray(replicate, np.int64), order, item))
        item, order, soft, label = item[by], order[by], soft[by], label[by]
        new = np.ones(len(item), bool)
        new[1:] = (item[1:] != item[:-1]) | (order[1:] != order[:-1])
        start = np.flatnonzero(new)
        count = np.diff(np.append(start, len(item)))
        return cls(item[start], order[start], start, count, soft, label)

    @property
    def most(self) -> int:
        """The most runs of a cell (0: no cell)."""
        return int(self.count.max()) if len(self.count) else 0

    def subset(self, keep: np.ndarray) -> Runs:
        """The cells of the items where ``keep`` is True, items renumbered as ``Data.subset`` does."""
        keep = np.asarray(keep, bool)
        new_index = np.cumsum(keep) - 1
        cells = keep[self.item]
        runs = np.repeat(cells, self.count)
        count = self.count[cells]
        start = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64) if len(count) else count
        return Runs(new_index[self.item[cells]], self.order[cells], start, count, self.soft[runs], self.label[runs])

    def means(self) -> np.ndarray:
        """Each cell's soft preference (the mean of its runs')."""
        return np.add.reduceat(self.soft, self.start) / self.count if len(self.count) else np.zeros(0)


def resampled_verdicts(V: np.ndarray, runs: Runs, rng: np.random.Generator) -> np.ndarray:
    """The verdicts ``V`` (items, 2) with each cell of ``runs`` replaced by the rounding of the mean
    of its runs drawn with replacement (as many as it has): one uniform number per run, in the
    order of the runs, picks run ``floor(u * count)`` of its cell."""
    out = np.array(V, dtype=np.int64, copy=True)
    if not len(runs.count):
        return out
    cell = np.repeat(np.arange(len(runs.count)), runs.count)
    u = rng.random(len(cell))
    picked = runs.start[cell] + np.minimum((u * runs.count[cell]).astype(np.int64), runs.count[cell] - 1)
    mean = np.bincount(cell, weights=runs.soft[picked], minlength=len(runs.count)) / runs.count
    out[runs.item, runs.order] = rounded(mean)
    return out


def stability_terms(runs: Runs, items: int) -> tuple[np.ndarray, np.ndarray]:
    """Per item: the pairs of its runs (in one order) that agree, and all such pairs."""
    agree = np.zeros(items)
    pairs = np.zeros(items)
    if not len(runs.count):
        return agree, pairs
    cell = np.repeat(np.arange(len(runs.count)), runs.count)
    same = np.zeros((len(runs.count), 3))
    np.add.at(same, (cell, runs.label), 1.0)
    np.add.at(agree, runs.item, (same * (same - 1) / 2).sum(axis=1))
    np.add.at(pairs, runs.item, runs.count * (runs.count - 1) / 2)
    return agree, pairs


def stability(runs: Runs, items: int, W: np.ndarray) -> tuple[float, np.ndarray]:
    """The share of agreeing pairs of runs (a ratio of sums over items, NaN without a pair) and its
    value on each item resample of ``W`` (k, items)."""
    agree, pairs = stability_terms(runs, items)
    with np.errstate(invalid="ignore", divide="ignore"):
        point = agree.sum() / pairs.sum() if pairs.sum() else np.nan
        boot = np.where(W @ pairs > 0, (W @ agree) / np.where(W @ pairs > 0, W @ pairs, 1), np.nan)
    return float(point), boot


def second_stage_rng(seed: int) -> np.random.Generator:
    """The generator of the runs' draws: its own stream of ``seed`` (the items' draws unchanged)."""
    return np.random.default_rng(np.random.SeedSequence([int(seed), 45]))
