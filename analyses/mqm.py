"""MQM and ESA error spans: weights, scores from spans, span markers and span-level agreement.

**Weighting** (mt-metrics-eval ``converters/score_mqm.py``). A weighting is a list of
``severity[/category[/subcategory]]:weight`` specs; the released default is
:data:`DEFAULT_WEIGHTS`, ``Major:5 Minor:1 Neutral:0 Major/Non-translation!:25
Minor/Fluency/Punctuation:0.1``. An error row takes the weight of the *most specific* spec that is
a prefix of ``[severity] + category.split("/")`` (compared without regard to case, as the issue
asks; the released files spell the categories consistently, so this changes nothing on them);
a row matched by no spec -- ``No-error`` included -- weighs 0, and ``ingest mqm`` refuses an
error whose severity no spec names (:func:`severities`: a typo such as ``Majr`` would weigh 0).
Weights are penalties, >= 0, and a worse severity weighs at least a milder one
(:data:`SEVERITY_ORDER`): otherwise an error would score above an error-free segment. A rater's score of a segment is the
*negated* sum of the weights of its rows (0 for a segment it rated without error), and the
segment's MQM score the mean over its raters (:func:`rater_scores`; the warehouse stores each
rater as one annotator, so its ``cells`` view takes that mean).

**Spans** are ``[start, end)`` character offsets into a segment's text (recovered from the released
files' ``<v>...</v>`` markers by :func:`metaeval.ingest.mqm.strip_markers`).

**Raters** (:func:`score_alpha`, :func:`character_labels`, :func:`label_alpha`,
:func:`pairwise_span_f1`, :func:`rating_stability`): agreement on scores and spans and the
ranking's stability vs ratings per segment; a metric's spans against the human ones:
:mod:`metaeval.analyses.spans`.
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
        if weights[key] < 0:
            raise ValueError(f"{item!r}: a negative weight scores an error above an error-free segment "
                             "(a weight is the penalty of an error, >= 0)")
    given = [(s, weights[(s,)]) for s in SEVERITY_ORDER if (s,) in weights]
    for (milder, w1), (worse, w2) in zip(given, given[1:]):
        if w2 < w1:
            raise ValueError(f"{worse}:{w2:g} weighs less than {milder}:{w1:g}, inverting the severity order "
                             f"({' < '.join(SEVERITY_ORDER)})")
    return weights


#: MQM's severities from the mildest (Lommel et al.'s typology): a weighting gives a worse one at
#: least the weight of a milder one.
SEVERITY_ORDER = ("neutral", "minor", "major", "critical")


def severities(weights: dict[tuple[str, ...], float]) -> set[str]:
    """The severities (lower-case) a weighting names: an error of another severity has no weight."""
    return {key[0] for key in weights}


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


# --- raters: agreement on scores and spans, and the ranking's stability vs ratings per segment ---

def score_alpha(values: np.ndarray) -> float:
    """Krippendorff's alpha (interval) of a raters x items matrix of scores (NaN: not rated), by
    the ``krippendorff`` package; NaN when no item has two ratings or every rating is equal (the
    expected disagreement is 0)."""
    import krippendorff

    values = np.asarray(values, dtype=float)
    pairable = (~np.isnan(values)).sum(axis=0) >= 2
    data = values[:, pairable]
    if data.size == 0 or len(np.unique(data[~np.isnan(data)])) < 2:
        return float("nan")
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))


@dataclass(frozen=True)
class RatedSegment:
    """One segment as its raters marked it: ``lengths`` of its texts by side (``{"target": 20,
    "source": 12}``) and, per rater who rated it, its spans ``(side, start, end, severity)``."""

    lengths: dict
    spans: dict


def character_labels(segments: Sequence[RatedSegment], raters: Sequence, severity: bool = False) -> np.ndarray:
    """The raters x characters matrix of character-level labels over the segments rated by two or
    more raters: 0 outside every span of the rater, 1 inside one (``severity``: a code per set of
    severities covering the character, compared without case); NaN where the rater did not rate
    the segment. Every character of every side is one unit."""
    from metaeval.analyses.spans import flatten

    codes: dict = {(): 0}
    blocks = []
    for seg in segments:
        if len(seg.spans) < 2:
            continue
        n = sum(seg.lengths.values())
        block = np.full((len(raters), n), np.nan)
        for i, rater in enumerate(raters):
            if rater not in seg.spans:
                continue
            cover = [set() for _ in range(n)]
            for a, b, sev in flatten(seg.lengths, seg.spans[rater])[1]:
                for c in range(a, b):
                    cover[c].add(sev.lower() if severity else "error")
            block[i] = [codes.setdefault(tuple(sorted(s)), len(codes)) for s in cover]
        blocks.append(block)
    return np.concatenate(blocks, axis=1) if blocks else np.empty((len(raters), 0))


def label_alpha(labels: np.ndarray) -> float:
    """Krippendorff's alpha (nominal) of character labels (:func:`character_labels`); NaN when
    undefined (no pairable unit, or a single label used)."""
    import krippendorff

    pairable = (~np.isnan(labels)).sum(axis=0) >= 2
    data = labels[:, pairable]
    if data.size == 0 or len(np.unique(data[~np.isnan(data)])) < 2:
        return float("nan")
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"))


def pairwise_span_f1(labels: np.ndarray) -> tuple[float, float]:
    """Character overlap between every two raters on the characters both rated: per pair the F1
    (Dice) ``2|A & B| / (|A| + |B|)`` of their marked characters (A, B: label > 0), symmetric;
    returns (the mean over the pairs where it is defined, the pooled ``2 sum|A & B| / sum(|A| +
    |B|)``); NaN when no pair marked a character."""
    per_pair, inter, total = [], 0, 0
    for i in range(len(labels)):
        for j in range(i + 1, len(labels)):
            both = ~np.isnan(labels[i]) & ~np.isnan(labels[j])
            a, b = labels[i][both] > 0, labels[j][both] > 0
            n = int(a.sum() + b.sum())
            if n:
                per_pair.append(2 * int((a & b).sum()) / n)
                inter, total = inter + int((a & b).sum()), total + n
    mean = float(np.mean(per_pair)) if per_pair else float("nan")
    return mean, (2 * inter / total if total else float("nan"))


@dataclass(frozen=True)
class Stability:
    """The system ranking with ``ratings`` raters drawn per segment against the ranking on every
    rating: Kendall tau-b per resample (``taus``; NaN where undefined), their mean and the
    percentile interval, the share of resamples that keep the best system (NaN when the full
    ranking's best is tied), and the cells with fewer raters than ``ratings`` (all of theirs used)."""

    ratings: int
    taus: np.ndarray
    mean: float
    lower: float
    upper: float
    top_kept: float
    short_cells: int


def system_scores(values: np.ndarray) -> np.ndarray:
    """Each system's score from a systems x inputs x raters array: the mean over its rated inputs
    of the mean over each input's raters (the warehouse's cells, then system means); NaN for a
    system with no rated input."""
    n = (~np.isnan(values)).sum(axis=2)
    cell = np.where(n > 0, np.nansum(values, axis=2) / np.maximum(n, 1), 0.0)
    m = (n > 0).sum(axis=1)
    return np.where(m > 0, cell.sum(axis=1) / np.maximum(m, 1), np.nan)


def rating_stability(values: np.ndarray, ratings: int, k: int, seed: int, alpha: float = 0.05) -> Stability:
    """Draw ``ratings`` raters per cell without replacement (all of a cell's raters when it has
    fewer), ``k`` times with the generator ``default_rng([seed, ratings])``; each draw's system
    scores (:func:`system_scores`) against those on every rating, by Kendall tau-b."""
    from scipy.stats import kendalltau

    values = np.asarray(values, dtype=float)
    if ratings < 1 or k < 1:
        raise ValueError("ratings and k must be 1 or more")
    full = system_scores(values)
    rated = ~np.isnan(values)
    rng = np.random.default_rng([seed, ratings])
    taus = np.empty(k)
    best = np.flatnonzero(full == np.nanmax(full)) if np.any(~np.isnan(full)) else np.array([])
    kept = []
    for t in range(k):
        keys = np.where(rated, rng.random(values.shape), np.inf)
        order = np.argsort(np.argsort(keys, axis=2, kind="stable"), axis=2, kind="stable")
        drawn = system_scores(np.where(rated & (order < ratings), values, np.nan))
        ok = ~np.isnan(full) & ~np.isnan(drawn)
        taus[t] = kendalltau(full[ok], drawn[ok]).statistic if ok.sum() >= 2 else np.nan
        if len(best) == 1:
            kept.append(bool(np.nanargmax(drawn) == best[0]) and np.sum(drawn == np.nanmax(drawn)) == 1)
    defined = taus[~np.isnan(taus)]
    nan = float("nan")
    return Stability(ratings=ratings, taus=taus, mean=float(defined.mean()) if len(defined) else nan,
                     lower=float(np.quantile(defined, alpha / 2)) if len(defined) else nan,
                     upper=float(np.quantile(defined, 1 - alpha / 2)) if len(defined) else nan,
                     top_kept=float(np.mean(kept)) if kept else nan,
                     short_cells=int(((rated.sum(axis=2) > 0) & (rated.sum(axis=2) < ratings)).sum()))
