"""MQM and ESA error spans: weights, scores from spans, span markers and span-level agreement.

**Weighting** (mt-metrics-eval ``converters/score_mqm.py``). A weighting is a list of
``severity[/category[/subcategory]]:weight`` specs; the released default is
:data:`DEFAULT_WEIGHTS`, ``Major:5 Minor:1 Neutral:0 Major/Non-translation!:25
Minor/Fluency/Punctuation:0.1``. An error row takes the weight of the *most specific* spec that is
a prefix of ``[severity] + category.split("/")`` (compared without regard to case, as the issue
asks; the released files spell the categories consistently, so this changes nothing on them);
a row matched by no spec -- ``No-error`` included -- weighs 0. A rater's score of a segment is the
*negated* sum of the weights of its rows (0 for a segment it rated without error), and the
segment's MQM score the mean over its raters (:func:`rater_scores`; the warehouse stores each
rater as one annotator, so its ``cells`` view takes that mean).

**Spans** are ``[start, end)`` character offsets into a segment's text (recovered from the released
files' ``<v>...</v>`` markers by :func:`metaeval.ingest.mqm.strip_markers`).

**Span-level agreement** (a metric's predicted spans against the human ones; after Perrella et al.
2025). Per segment, the characters covered by predicted spans ``P`` and by human spans ``G`` (with
``severity`` matching: a character counts as matched only where a predicted and a human span of the
same severity both cover it). ``precision = |P & G| / |P|``, ``recall = |P & G| / |G|``, ``F1`` their
harmonic mean -- partial overlaps earn partial credit, character by character. *Micro*: the counts
summed over segments first; *macro*: the mean over segments of each segment's value, over the
segments where it is defined (a segment with no predicted character has no precision; with no
human one, no recall). An undefined value is NaN, never 0 or 1.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DEFAULT_WEIGHTS = "Major:5 Minor:1 Neutral:0 Major/Non-translation!:25 Minor/Fluency/Punctuation:0.1"
_SPEC = re.compile(r"^(?P<path>[^:\s]+):(?P<weight>[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)$")


def parse_weights(spec: str) -> dict[tuple[str, ...], float]:
    """``{(severity, category, ...): weight}`` (lower-case keys) from a weighting spec."""
    items = spec.split() if isinstance(spec, str) else []
    if not items:
        raise ValueError("a weighting is one or more 'severity[/category...]:weight' specs, e.g. 'major:5 minor:1'")
    weights: dict[tuple[str, ...], float] = {}
    for item in items:
        match = _SPEC.match(item)
        if not match:
            raise ValueError(f"{item!r} is not 'severity[/category...]:weight' (a number)")
        key = tuple(p.lower() for p in match["path"].split("/"))
        if "" in key or key in weights:
            raise ValueError(f"{item!r}: an empty part, or a spec given twice")
        weights[key] = float(match["weight"])
    return weights


def weighting_name(spec: str) -> str:
    """``mqm`` for the released default weighting; otherwise ``mqm[<specs, lower-case, sorted>]``."""
    weights = parse_weights(spec)
    if weights == parse_weights(DEFAULT_WEIGHTS):
        return "mqm"
    return "mqm[" + ",".join(f"{'/'.join(k)}:{w:g}" for k, w in sorted(weights.items())) + "]"


def error_weight(weights: dict[tuple[str, ...], float], severity: str, category: str) -> float:
    """The weight of the most specific spec that is a prefix of severity/category (0 if none)."""
    items = tuple(p.lower() for p in [severity, *category.split("/")])
    while items:
        if items in weights:
            return weights[items]
        items = items[:-1]
    return 0.0


@dataclass(frozen=True)
class RaterScores:
    """One score per (segment, rater) pair that was rated: ``segment``, ``rater`` (as given, in
    first-seen order) and ``score`` (the negated sum of its rows' weights)."""

    segment: np.ndarray
    rater: np.ndarray
    score: np.ndarray

    def segment_means(self) -> dict:
        """Segment -> the mean over its raters (the segment's MQM score)."""
        out: dict = {}
        for s, v in zip(self.segment, self.score):
            out.setdefault(s, []).append(v)
        return {s: float(np.mean(v)) for s, v in out.items()}


def rater_scores(segments: Sequence, raters: Sequence, severities: Sequence[str], categories: Sequence[str],
                 weights: dict[tuple[str, ...], float]) -> RaterScores:
    """Rows (one per error, or one ``No-error`` row) to each rater's segment score."""
    if not len(segments) == len(raters) == len(severities) == len(categories):
        raise ValueError("segments, raters, severities and categories need one value per row")
    totals: dict[tuple, float] = {}
    for s, r, sev, cat in zip(segments, raters, severities, categories):
        totals[(s, r)] = totals.get((s, r), 0.0) + error_weight(weights, sev, cat)
    keys = list(totals)
    return RaterScores(segment=np.array([k[0] for k in keys], dtype=object),
                       rater=np.array([k[1] for k in keys], dtype=object),
                       score=np.array([-totals[k] if totals[k] else 0.0 for k in keys]))


def _covered(spans, length: int, severities=None, severity=None) -> np.ndarray:
    mask = np.zeros(length, dtype=bool)
    for k, (a, b) in enumerate(spans):
        if not 0 <= a <= b <= length:
            raise ValueError(f"span [{a}, {b}) lies outside a text of {length} characters")
        if severity is None or severities[k].lower() == severity:
            mask[a:b] = True
    return mask


@dataclass(frozen=True)
class SpanScores:
    """Character-level agreement: per segment ``tp``, ``predicted``, ``gold`` counts, and the
    micro and macro precision, recall and F1."""

    tp: np.ndarray
    predicted: np.ndarray
    gold: np.ndarray

    @staticmethod
    def _f1(p, r):
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(p + r > 0, 2 * p * r / (p + r), np.where(np.isnan(p) | np.isnan(r), np.nan, 0.0))

    def micro(self) -> tuple[float, float, float]:
        tp, pred, gold = self.tp.sum(), self.predicted.sum(), self.gold.sum()
        p = tp / pred if pred else float("nan")
        r = tp / gold if gold else float("nan")
        return float(p), float(r), float(self._f1(np.array(p), np.array(r)))

    def macro(self) -> tuple[float, float, float]:
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(self.predicted > 0, self.tp / np.maximum(self.predicted, 1), np.nan)
            r = np.where(self.gold > 0, self.tp / np.maximum(self.gold, 1), np.nan)
        f = self._f1(p, r)

        def mean(x):
            return float(np.nanmean(x)) if np.any(~np.isnan(x)) else float("nan")

        return mean(p), mean(r), mean(f)


def span_scores(lengths: Sequence[int], predicted: Sequence, gold: Sequence, *,
                predicted_severities: Sequence | None = None, gold_severities: Sequence | None = None) -> SpanScores:
    """Character overlap of predicted and human spans per segment (``predicted[i]``, ``gold[i]``:
    lists of ``(start, end)``); with both severity lists, characters match only within one severity."""
    if not len(lengths) == len(predicted) == len(gold):
        raise ValueError("lengths, predicted and gold need one entry per segment")
    matching = predicted_severities is not None and gold_severities is not None
    tp, n_pred, n_gold = (np.zeros(len(lengths), dtype=np.int64) for _ in range(3))
    for i, n in enumerate(lengths):
        P, G = _covered(predicted[i], n), _covered(gold[i], n)
        n_pred[i], n_gold[i] = P.sum(), G.sum()
        if matching:
            levels = {s.lower() for s in (*predicted_severities[i], *gold_severities[i])}
            tp[i] = sum((_covered(predicted[i], n, predicted_severities[i], s)
                         & _covered(gold[i], n, gold_severities[i], s)).sum() for s in levels)
        else:
            tp[i] = (P & G).sum()
    return SpanScores(tp=tp, predicted=n_pred, gold=n_gold)
