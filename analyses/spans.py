"""Span-level meta-evaluation: a metric's predicted error spans against the human ones, character
by character (after Perrella et al. 2025, span-level MT meta-evaluation).

A segment's texts (source, then target) are one string of characters; a span ``(start, end,
severity)`` covers the characters ``start .. end - 1`` of it (:func:`flatten` places a side's
offsets). Per segment, with ``P`` the characters covered by a predicted span and ``G`` those
covered by a human span (the union over the human raters)::

    tp = |{c in P & G}|              (severity matching: and the severities covering c in the
                                      prediction and in the human spans share one, without case)
    precision = tp / |P|,  recall = tp / |G|,  F1 = 2 P R / (P + R)

so a partial overlap earns partial credit. *Micro*: ``tp``, ``|P|`` and ``|G|`` summed over the
segments first; *macro*: the mean over segments of each segment's value, over the segments where
it is defined (no predicted character: no precision; no human one: no recall; F1 needs both,
and is 0 when both are defined and tp is 0). An undefined value is NaN, never 0 or 1.

Bootstrap (:func:`bootstrap`): ``k`` resamples of the segments with replacement
(``numpy.random.default_rng(seed)``), each statistic recomputed on each; the percentile interval
``[alpha/2, 1 - alpha/2]`` of the defined resampled values (NaN when none is).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

SIDES = ("source", "target")


def flatten(lengths: dict, spans: Sequence) -> tuple[int, list[tuple[int, int, str]]]:
    """(the segment's number of characters, its spans ``(start, end, severity)`` in the one string
    of its sides in :data:`SIDES` order) from side lengths and spans ``(side, start, end, severity)``."""
    offset, at = {}, 0
    for side in SIDES:
        offset[side], at = at, at + int(lengths.get(side, 0))
    out = []
    for side, a, b, severity in spans:
        if side not in offset or not 0 <= a <= b <= lengths.get(side, 0):
            raise ValueError(f"span [{a}, {b}) lies outside the {side} of {lengths.get(side, 0)} characters")
        out.append((offset[side] + a, offset[side] + b, severity))
    return at, out


def _cover(n: int, spans) -> list[set]:
    cover = [set() for _ in range(n)]
    for a, b, severity in spans:
        if not 0 <= a <= b <= n:
            raise ValueError(f"span [{a}, {b}) lies outside a text of {n} characters")
        for c in range(a, b):
            cover[c].add(str(severity).lower())
    return cover


@dataclass(frozen=True)
class SpanCounts:
    """Per segment: ``tp`` (matched characters), ``predicted`` (|P|) and ``gold`` (|G|)."""

    tp: np.ndarray
    predicted: np.ndarray
    gold: np.ndarray

    def micro(self) -> tuple[float, float, float]:
        """(precision, recall, F1) of the counts summed over the segments."""
        p, r, f = _prf(self.tp.sum(axis=-1), self.predicted.sum(axis=-1), self.gold.sum(axis=-1))
        return float(p), float(r), float(f)

    def macro(self) -> tuple[float, float, float]:
        """(precision, recall, F1): each the mean over the segments where it is defined."""
        p, r, f = _prf(self.tp, self.predicted, self.gold)
        return tuple(_nanmean(x) for x in (p, r, f))


def _prf(tp, predicted, gold):
    tp, predicted, gold = (np.asarray(x, dtype=float) for x in (tp, predicted, gold))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(predicted > 0, tp / np.where(predicted > 0, predicted, 1), np.nan)
        r = np.where(gold > 0, tp / np.where(gold > 0, gold, 1), np.nan)
        f = np.where(np.isnan(p) | np.isnan(r), np.nan, np.where(p + r > 0, 2 * p * r / (p + r), 0.0))
    return p, r, f


def _nanmean(x, axis=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # no defined value: NaN
        out = np.nanmean(x, axis=axis)
    return float(out) if axis is None else out


def span_counts(lengths: Sequence[int], predicted: Sequence, gold: Sequence, *, severity: bool = False) -> SpanCounts:
    """The character counts of each segment (``predicted[i]``, ``gold[i]``: its spans ``(start,
    end, severity)`` in a text of ``lengths[i]`` characters)."""
    if not len(lengths) == len(predicted) == len(gold):
        raise ValueError("lengths, predicted and gold need one entry per segment")
    tp, n_pred, n_gold = (np.zeros(len(lengths), dtype=np.int64) for _ in range(3))
    for i, n in enumerate(lengths):
        P, G = _cover(n, predicted[i]), _cover(n, gold[i])
        n_pred[i] = sum(1 for s in P if s)
        n_gold[i] = sum(1 for s in G if s)
        tp[i] = sum(1 for p, g in zip(P, G) if p and g and (not severity or p & g))
    return SpanCounts(tp=tp, predicted=n_pred, gold=n_gold)


STATISTICS = ("precision", "recall", "f1")


def bootstrap(counts: SpanCounts, k: int, seed: int, alpha: float = 0.05) -> dict:
    """``{(averaging, statistic): (value, lower, upper)}`` for averaging micro and macro: the value
    on every segment and the percentile interval over ``k`` resamples of the segments."""
    if k < 1 or not 0 < alpha < 1:
        raise ValueError("k must be 1 or more and alpha in (0, 1)")
    n = len(counts.tp)
    if n == 0:
        raise ValueError("no segment to evaluate")
    draws = np.random.default_rng(seed).integers(0, n, size=(k, n))
    micro = _prf(counts.tp[draws].sum(axis=1), counts.predicted[draws].sum(axis=1), counts.gold[draws].sum(axis=1))
    per_segment = _prf(counts.tp, counts.predicted, counts.gold)
    macro = [_nanmean(x[draws], axis=1) for x in per_segment]
    out = {}
    for averaging, point, resampled in (("micro", counts.micro(), micro), ("macro", counts.macro(), macro)):
        for name, value, values in zip(STATISTICS, point, resampled):
            defined = values[~np.isnan(values)]
            lo, hi = (np.quantile(defined, [alpha / 2, 1 - alpha / 2]) if len(defined) else (np.nan, np.nan))
            out[(averaging, name)] = (float(value), float(lo), float(hi))
    return out


@dataclass(frozen=True)
class PairedTest:
    """Metric a against metric b on the same segments: ``delta`` = micro F1(a) - micro F1(b),
    the two-sided permutation ``pvalue`` ``(1 + #{|delta*| >= |delta|}) / (1 + n_valid)`` over the
    ``n_valid`` resamples whose delta* is defined (NaN when delta is undefined)."""

    delta: float
    pvalue: float
    n_valid: int


def _micro_f1(tp, predicted, gold):
    return _prf(tp.sum(axis=-1), predicted.sum(axis=-1), gold.sum(axis=-1))[2]


def paired_test(a: SpanCounts, b: SpanCounts, k: int, seed: int) -> PairedTest:
    """Paired permutation test of micro F1 over segments: under the null the two metrics'
    predictions of a segment are exchangeable, so each resample swaps the counts (tp, |P|) of a
    and b on each segment with probability 1/2 (``numpy.random.default_rng(seed)``); the human
    spans (|G|) are the segments' own."""
    if not np.array_equal(a.gold, b.gold):
        raise ValueError("a paired test needs both metrics on the same segments (the same human counts)")
    if k < 1:
        raise ValueError("k must be 1 or more")
    delta = float(_micro_f1(a.tp, a.predicted, a.gold) - _micro_f1(b.tp, b.predicted, b.gold))
    if np.isnan(delta):
        return PairedTest(delta=delta, pvalue=float("nan"), n_valid=0)
    swap = np.random.default_rng(seed).random((k, len(a.tp))) < 0.5
    tp_a, tp_b = np.where(swap, b.tp, a.tp), np.where(swap, a.tp, b.tp)
    pr_a, pr_b = np.where(swap, b.predicted, a.predicted), np.where(swap, a.predicted, b.predicted)
    gold = np.broadcast_to(a.gold, swap.shape)
    null = _micro_f1(tp_a, pr_a, gold) - _micro_f1(tp_b, pr_b, gold)
    valid = ~np.isnan(null)
    count = int((np.abs(null[valid]) >= abs(delta) - 1e-12).sum())
    return PairedTest(delta=delta, pvalue=(1 + count) / (1 + int(valid.sum())), n_valid=int(valid.sum()))
