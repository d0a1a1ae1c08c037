"""Detectors judged on binary labels: ROC-AUC, balanced accuracy at a tuned threshold, their
macro average over groups, percentile bootstrap intervals and paired bootstrap tests.

The factual-consistency benchmarks (SummaC, AggreFact, LLM-AggreFact, ...) judge a metric as a
*detector*: an item (a summary, here a (system, input) cell) is positive ("consistent") or not,
and the metric's score should separate the two. Pure numpy, no database. Throughout, ``scores``
is a vector of n item scores (higher = more likely positive; NaN: the item is left out),
``labels`` a vector of n booleans (or 0/1), the true class of each item.

Definitions (P positives, N negatives among the items used):

- **ROC-AUC** = (1 / (P N)) sum over positive i, negative j of ([s_i > s_j] + 1/2 [s_i = s_j]),
  the Mann-Whitney U statistic over P N -- equal to the area under the trapezoidal ROC curve,
  i.e. to scikit-learn's ``roc_auc_score`` (tested against it). Scores that are all equal give
  0.5 (every pair a tie: the detector does not discriminate; defined, and said so).
- **Balanced accuracy** at threshold t: an item is predicted positive when s > t;
  BA(t) = (TPR + TNR) / 2 = (TP / P + TN / N) / 2 (scikit-learn's ``balanced_accuracy_score``
  of those predictions, ``adjusted=False``).
- **Threshold search** (:func:`best_threshold`): t over the candidates {-inf} and the distinct
  scores (t = -inf predicts everything positive, t = max s everything negative: every split of
  the sorted scores is one candidate), maximising BA(t); among equal balanced accuracies (compared
  exactly, as the integers TP N + TN P) the **smallest** threshold wins.
- **Macro average** over groups (:func:`macro_average`): the unweighted mean of the groups'
  values; NaN when any group's value is (a macro over fewer groups is another number).

Degenerate cases: items of one class only (P = 0 or N = 0): AUC, BA, the threshold and the
tuned BA are NaN; no item at all in a subset: a ValueError (a refusal, never a number).

Why the formulas are written here rather than calling scikit-learn: the bootstrap evaluates
them on k resamples at once, as weighted counts over the sorted distinct scores (a resample of
items is a vector of multiplicities), and scikit-learn's functions take one sample at a time;
the point estimates use the same code with weights 1 (so the interval is about the number
shown), and the tests check both against scikit-learn's ``roc_auc_score`` and
``balanced_accuracy_score`` and a brute-force threshold search.

Bootstrap (:func:`detection`, :func:`paired_detection_test`): items are resampled with
replacement within each stratum -- each group's evaluated items, and separately its tune items
when the threshold is tuned on another subset; when it is tuned on the evaluated items
themselves (no tune subset, no fixed threshold) one draw serves both. **Every resample re-tunes
the threshold** on its resampled tune items (the exact search above) and applies it to its
resampled evaluated items, so the interval covers the variability of the tuning too. Resample b
of a stratum is drawn from ``SeedSequence(seed, spawn_key=(group key, role, b // 256))`` (group
key: the first 4 bytes of the sha256 of the group's label; role 0 evaluated, 1 tune), so the
draws depend on the seed, the group and the stratum's size only: two detectors scored on the
same items get the same resamples (the paired test resamples the items both scored), and a
macro resample b averages the groups' resamples b. Percentile intervals: the alpha/2 and
1 - alpha/2 percentiles (numpy linear interpolation) of the defined resamples (a resample
whose stratum lost a class is undefined, dropped and counted). Paired test of
delta = stat(a) - stat(b) (BA or AUC): p as every paired bootstrap test of the project
(:func:`metaeval.analyses.stats.hypothesis.count_extreme`, "bootstrap";
:func:`~metaeval.analyses.stats.hypothesis.resampling_pvalue` with count / k).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from metaeval.analyses.stats import _engine, resampling
from metaeval.analyses.stats.validation import alpha_iv, alternative_iv, k_iv, seed_iv
from metaeval.analyses.stats.hypothesis import count_extreme, resampling_pvalue, zero_if_rounding
from metaeval.analyses.stats.intervals import rng_description

#: The statistics a detection row holds and a paired test compares.
STATISTICS = ("balanced_accuracy", "roc_auc")
#: The group label of the macro-average row of a grouped analysis (the runs' subset ``attr=*``).
MACRO = "*"
PREDICTION = "an item is predicted positive when its score > threshold"
AUC_DEFINITION = ("Mann-Whitney: (#{positive > negative} + 1/2 #{positive = negative}) / (P N) over the "
                  "positive-negative pairs (= the trapezoidal ROC area, sklearn roc_auc_score); constant scores "
                  "give 0.5 (no discrimination)")
BA_DEFINITION = "(TP / P + TN / N) / 2 (sklearn balanced_accuracy_score, adjusted=False)"
SEARCH = ("exact: the candidates are -inf (everything positive) and each distinct score of the tune items; the "
          "threshold maximising the tune items' balanced accuracy, the smallest among equal ones (compared "
          "exactly as TP N + TN P)")
MACRO_DEFINITION = "unweighted mean over the groups; undefined (NULL) when any group's value is"
DEGENERATE = "one class only among the items: AUC, balanced accuracy and the threshold undefined (NULL)"


# --- validation ----------------------------------------------------------------------------
def _labels_iv(labels: npt.ArrayLike) -> np.ndarray:
    y = np.asarray(labels)
    if y.ndim != 1:
        raise ValueError(f"`labels` must be 1-D; got {y.ndim}-D.")
    if y.dtype == bool:
        return y
    try:
        f = y.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError("`labels` must be booleans or 0/1.") from None
    if not np.isin(f, (0.0, 1.0)).all():
        raise ValueError("`labels` must be booleans or 0/1 (no NaN).")
    return f == 1.0


def _scores_iv(scores: npt.ArrayLike, n: int, name: str = "scores") -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or s.size != n:
        raise ValueError(f"`{name}` must be 1-D with one score per label ({n}); got shape {s.shape}.")
    if np.isinf(s).any():
        raise ValueError(f"`{name}` must be finite (NaN: the item is left out).")
    return s


def _mask_iv(mask: npt.ArrayLike | None, n: int, name: str) -> np.ndarray | None:
    if mask is None:
        return None
    m = np.asarray(mask)
    if m.dtype != bool or m.shape != (n,):
        raise ValueError(f"`{name}` must be a boolean vector of length {n}.")
    return m


def _threshold_iv(threshold: float | None) -> float | None:
    if threshold is None:
        return None
    t = float(threshold)
    if not np.isfinite(t):
        raise ValueError(f"`threshold` must be a finite number; got {threshold!r}.")
    return t


# --- the statistics on weighted counts ------------------------------------------------------
class _Stratum:
    """A set of items sorted once by score: its distinct scores ``values`` (U,), and for any
    weights (B, n) -- a multiplicity per item and resample -- the positive and negative weight
    at each distinct score (B, U)."""

    def __init__(self, scores: np.ndarray, labels: np.ndarray):
        order = np.argsort(scores, kind="stable")
        s = scores[order]
        self.order, self.labels = order, labels[order]
        self.values, self.starts = np.unique(s, return_index=True)
        self.n = scores.size

    def counts(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w = weights[:, self.order]
        pos = np.add.reduceat(np.where(self.labels, w, 0.0), self.starts, axis=1)
        neg = np.add.reduceat(np.where(self.labels, 0.0, w), self.starts, axis=1)
        return pos, neg


def _defined(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    P, N = pos.sum(axis=1), neg.sum(axis=1)
    return P, N, (P > 0) & (N > 0)


def _auc(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """AUC per resample: sum_u pos_u (negatives below u + neg_u / 2) / (P N)."""
    P, N, ok = _defined(pos, neg)
    below = np.cumsum(neg, axis=1) - neg
    wins = (pos * (below + 0.5 * neg)).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok, wins / (P * N), np.nan)


def _search(values: np.ndarray, pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(threshold, balanced accuracy) per resample of the exact search (module docstring).

    Candidate 0 is -inf (TP = P, TN = 0), candidate j + 1 the j-th distinct score
    (TP = P - positives <= u_j, TN = negatives <= u_j); criterion TP N + TN P = 2 P N BA, exact
    for integer weights; argmax takes the first (smallest) of equal maxima. A distinct score
    absent from a resample splits its items as the largest present score below it, which comes
    first: the chosen threshold is always -inf or a score present in the resample."""
    P, N, ok = _defined(pos, neg)
    tp = np.concatenate([P[:, None], P[:, None] - np.cumsum(pos, axis=1)], axis=1)
    tn = np.concatenate([np.zeros((pos.shape[0], 1)), np.cumsum(neg, axis=1)], axis=1)
    criterion = tp * N[:, None] + tn * P[:, None]
    best = np.argmax(criterion, axis=1)
    candidates = np.concatenate([[-np.inf], values])
    with np.errstate(invalid="ignore", divide="ignore"):
        ba = criterion[np.arange(best.size), best] / (2 * P * N)
    return np.where(ok, candidates[best], np.nan), np.where(ok, ba, np.nan)


def _applied(values: np.ndarray, pos: np.ndarray, neg: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Balanced accuracy per resample b at ``thresholds[b]`` (NaN threshold: NaN)."""
    P, N, ok = _defined(pos, neg)
    cpos = np.concatenate([np.zeros((pos.shape[0], 1)), np.cumsum(pos, axis=1)], axis=1)
    cneg = np.concatenate([np.zeros((neg.shape[0], 1)), np.cumsum(neg, axis=1)], axis=1)
    t = np.nan_to_num(thresholds, nan=-np.inf)
    at = np.searchsorted(values, t, side="right")     # distinct scores <= t: predicted negative
    rows = np.arange(at.size)
    tp, tn = P - cpos[rows, at], cneg[rows, at]
    with np.errstate(invalid="ignore", divide="ignore"):
        ba = (tp / P + tn / N) / 2
    return np.where(ok & ~np.isnan(thresholds), ba, np.nan)


# --- point statistics ------------------------------------------------------------------------
def _point(scores, labels) -> tuple[_Stratum, np.ndarray, np.ndarray]:
    y = _labels_iv(labels)
    s = _scores_iv(scores, y.size)
    keep = ~np.isnan(s)
    if not keep.any():
        raise ValueError("no item has a score: the subset is empty")
    stratum = _Stratum(s[keep], y[keep])
    pos, neg = stratum.counts(np.ones((1, stratum.n)))
    return stratum, pos, neg


def roc_auc(scores: npt.ArrayLike, labels: npt.ArrayLike) -> float:
    """ROC-AUC of ``scores`` for ``labels`` (module docstring; NaN scores left out); NaN when
    the items hold one class only."""
    _, pos, neg = _point(scores, labels)
    return float(_auc(pos, neg)[0])


def balanced_accuracy(scores: npt.ArrayLike, labels: npt.ArrayLike, threshold: float) -> float:
    """(TP / P + TN / N) / 2 with an item predicted positive when its score > ``threshold``;
    NaN when the items hold one class only."""
    t = _threshold_iv(threshold)
    if t is None:
        raise ValueError("`threshold` must be a finite number; got None.")
    stratum, pos, neg = _point(scores, labels)
    return float(_applied(stratum.values, pos, neg, np.array([t]))[0])


@dataclass(frozen=True)
class ThresholdSearch:
    """The threshold maximising balanced accuracy (-inf: everything predicted positive; NaN:
    one class only) and that balanced accuracy."""

    threshold: float
    balanced_accuracy: float


def best_threshold(scores: npt.ArrayLike, labels: npt.ArrayLike) -> ThresholdSearch:
    """The exact threshold search of the module docstring (the smallest of equal maxima)."""
    stratum, pos, neg = _point(scores, labels)
    t, ba = _search(stratum.values, pos, neg)
    return ThresholdSearch(float(t[0]), float(ba[0]))


def macro_average(values: npt.ArrayLike) -> float:
    """The unweighted mean of the groups' ``values``; NaN when any is NaN (or there are none)."""
    v = np.asarray(values, dtype=np.float64)
    return float(v.mean()) if v.size and not np.isnan(v).any() else np.nan


# --- groups, strata and resamples --------------------------------------------------------------
def group_key(label: str) -> int:
    """The spawn key of a group's draws: the first 4 bytes (little-endian) of sha256(label)."""
    return int.from_bytes(hashlib.sha256(label.encode()).digest()[:4], "little")


@dataclass(frozen=True)
class _Group:
    label: str
    evaluated: np.ndarray          # item indices
    tune: np.ndarray | None        # item indices; None: a fixed threshold
    shared: bool                   # tune is the evaluated items (one draw serves both)


def _groups(n: int, evaluated, tuned, groups, threshold) -> list[_Group]:
    """The groups' strata over the items 0 .. n-1 that are used (already restricted)."""
    evaluated = np.ones(n, dtype=bool) if evaluated is None else evaluated
    if groups is None:
        labels = np.full(n, "", dtype=object)
        names = [""]
    else:
        labels = np.asarray(groups, dtype=object)
        names = sorted({g for g in labels[evaluated] if g is not None})
        if not names:
            raise ValueError("no evaluated item has a group: the subset to evaluate is empty")
    out = []
    for g in names:
        in_group = labels == g
        ev = np.flatnonzero(evaluated & in_group)
        what = "the evaluated items" + (f" of group {g!r}" if groups is not None else "")
        if ev.size == 0:
            raise ValueError(f"{what} are none: an empty subset has no detection statistics")
        if threshold is not None:
            out.append(_Group(g, ev, None, False))
            continue
        tu = ev if tuned is None else np.flatnonzero(tuned & in_group)
        if tu.size == 0:
            raise ValueError(f"the tune items{'' if groups is None else f' of group {g!r}'} are none: "
                             "no threshold can be tuned on an empty subset")
        out.append(_Group(g, ev, tu, tuned is None or np.array_equal(tu, ev)))
    return out


def _draw(n: int):
    def draw(rng: np.random.Generator, size: int) -> tuple[np.ndarray]:
        return (rng.integers(0, n, size=(size, n), dtype=np.int32),)
    return draw


def _multiplicities(indices: np.ndarray, n: int) -> np.ndarray:
    """(B, n) counts of each item in each resample of ``indices`` (B, n)."""
    B = indices.shape[0]
    flat = (indices + (np.arange(B, dtype=np.int64) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=B * n).reshape(B, n).astype(np.float64)


@dataclass
class _Values:
    """One detector's statistics in one group: point values and k resamples."""

    auc: float
    threshold: float
    ba: float
    tune_ba: float
    auc_samples: np.ndarray
    ba_samples: np.ndarray
    tune_ba_samples: np.ndarray


def _evaluate(detectors: Sequence[np.ndarray], labels: np.ndarray, group: _Group,
              thresholds: Sequence[float | None], k: int, seq: np.random.SeedSequence) -> list[_Values]:
    """Point values and k resamples of every detector in ``group`` (the same draws for all);
    ``thresholds``: each detector's fixed threshold (None: tuned)."""
    key = group_key(group.label)
    ev_stream = resampling.ResampleStream(np.random.SeedSequence(seq.entropy, spawn_key=(key, 0)),
                                          _draw(group.evaluated.size))
    tune_stream = None
    if group.tune is not None and not group.shared:
        tune_stream = resampling.ResampleStream(np.random.SeedSequence(seq.entropy, spawn_key=(key, 1)),
                                                _draw(group.tune.size))
    ev_strata = [_Stratum(s[group.evaluated], labels[group.evaluated]) for s in detectors]
    tune_strata = ([_Stratum(s[group.tune], labels[group.tune]) for s in detectors]
                   if group.tune is not None else [None] * len(detectors))

    def statistics(ev_w: np.ndarray, tune_w: np.ndarray | None):
        out = []
        for ev, tu, threshold in zip(ev_strata, tune_strata, thresholds):
            pos, neg = ev.counts(ev_w)
            if tu is None:
                t, tune_ba = np.full(ev_w.shape[0], threshold), np.full(ev_w.shape[0], np.nan)
            else:
                t, tune_ba = _search(tu.values, *tu.counts(tune_w))
            out.append((_auc(pos, neg), t, _applied(ev.values, pos, neg, t), tune_ba))
        return out

    n_ev = group.evaluated.size
    n_tu = 0 if group.tune is None else group.tune.size
    point = statistics(np.ones((1, n_ev)), None if group.tune is None else np.ones((1, n_tu)))
    samples = [[np.empty(k) for _ in range(3)] for _ in detectors]
    per_item = 24 * (n_ev + n_tu) * max(1, len(detectors))
    batch = max(1, min(k, _engine.MEMORY_BUDGET // per_item))
    for start in range(0, k, batch):
        stop = min(k, start + batch)
        ev_w = _multiplicities(ev_stream.take(start, stop)[0], n_ev)
        if group.tune is None:
            tune_w = None
        elif group.shared:
            tune_w = ev_w
        else:
            tune_w = _multiplicities(tune_stream.take(start, stop)[0], n_tu)
        for d, (auc, _t, ba, tune_ba) in enumerate(statistics(ev_w, tune_w)):
            samples[d][0][start:stop], samples[d][1][start:stop], samples[d][2][start:stop] = auc, ba, tune_ba
    return [_Values(float(auc[0]), float(t[0]), float(ba[0]), float(tune_ba[0]), *s)
            for (auc, t, ba, tune_ba), s in zip(point, samples)]


# --- detection: one detector -------------------------------------------------------------------
@dataclass(frozen=True)
class GroupDetection:
    """One detector in one group (``group`` '' without groups; :data:`MACRO` for the macro
    average, whose ``threshold`` is None: each group has its own). Bounds are the percentile
    interval; ``n_valid`` the resamples with a defined balanced accuracy (AUC's: ``n_valid_auc``)."""

    group: str
    n: int
    n_positive: int
    n_tune: int | None
    n_tune_positive: int | None
    roc_auc: float
    roc_auc_lower: float
    roc_auc_upper: float
    threshold: float | None
    balanced_accuracy: float
    balanced_accuracy_lower: float
    balanced_accuracy_upper: float
    tune_balanced_accuracy: float | None
    n_valid: int
    n_valid_auc: int
    auc_samples: np.ndarray = field(repr=False)
    ba_samples: np.ndarray = field(repr=False)

    @property
    def macro(self) -> bool:
        return self.group == MACRO


@dataclass(frozen=True)
class Detection:
    """A detector's rows: one per group, then (with groups) their macro average."""

    rows: tuple[GroupDetection, ...]
    conventions: dict[str, Any] = field(repr=False)


def _prepare(detectors, labels, evaluated, tuned, groups, threshold):
    y = _labels_iv(labels)
    n = y.size
    scores = [_scores_iv(s, n, "scores" if len(detectors) == 1 else f"scores_{'ab'[i]}")
              for i, s in enumerate(detectors)]
    evaluated, tuned = _mask_iv(evaluated, n, "evaluated"), _mask_iv(tuned, n, "tuned")
    threshold = _threshold_iv(threshold)
    if threshold is not None and tuned is not None:
        raise ValueError("give a fixed `threshold` or a `tuned` subset, not both")
    if groups is not None and len(groups) != n:
        raise ValueError(f"`groups` must hold one label per item ({n}); got {len(groups)}.")
    keep = np.logical_and.reduce([~np.isnan(s) for s in scores])
    if not keep.any():
        raise ValueError("no item has a score: the subset is empty")
    idx = np.flatnonzero(keep)
    sub = (lambda m: None if m is None else m[idx])
    g = None if groups is None else np.asarray(groups, dtype=object)[idx]
    strata = _groups(idx.size, sub(evaluated), sub(tuned), g, threshold)
    return [s[idx] for s in scores], y[idx], strata, threshold, int(n - idx.size)


def _conventions(threshold, tuned, strata, k, alpha, seq, dropped, **extra) -> dict:
    if threshold is not None:
        source = f"fixed: {threshold!r}"
    elif tuned is None:
        source = ("tuned on the evaluated items themselves (in-sample, optimistic: no held-out tune subset)")
    else:
        source = "tuned on the tune subset (per group with groups), applied to the evaluated items"
    overlap = {s.label: int(np.intersect1d(s.evaluated, s.tune).size) for s in strata
               if s.tune is not None and not s.shared and np.intersect1d(s.evaluated, s.tune).size}
    return {"prediction": PREDICTION, "roc_auc": AUC_DEFINITION, "balanced_accuracy": BA_DEFINITION,
            "threshold_source": source, **({} if threshold is not None else {"threshold_search": SEARCH}),
            "macro_average": MACRO_DEFINITION, "degenerate": DEGENERATE,
            "bootstrap": ("percentile, items resampled with replacement within each group's evaluated items and, "
                          "independently, its tune items" + ("" if threshold is not None else
                          "; every resample re-tunes the threshold on its resampled tune items")
                          + (" (in-sample: one draw serves both)" if tuned is None and threshold is None else "")),
            "interval": "percentile (numpy linear interpolation), two-sided; undefined resamples dropped",
            "k": k, "alpha": alpha, "seed": seq.entropy, "rng": rng_description() + "; spawn_key prefixed by "
            "(sha256(group)[:4] little-endian, 0 evaluated | 1 tune)",
            "items_without_score": dropped, **({"tune_evaluated_overlap": overlap} if overlap else {}), **extra}


def detection(scores: npt.ArrayLike, labels: npt.ArrayLike, *, evaluated: npt.ArrayLike | None = None,
              tuned: npt.ArrayLike | None = None, groups: Sequence[str | None] | None = None,
              threshold: float | None = None, k: int = 1000, alpha: float = 0.05, seed: int | None = 0) -> Detection:
    """One detector judged on binary ``labels``: per group (``groups``: a label per item, None
    for items outside every group; None: one group ''), on its ``evaluated`` items (default
    all), ROC-AUC and balanced accuracy at ``threshold`` (fixed) or at the threshold tuned on
    its ``tuned`` items (default: on the evaluated items themselves), with percentile bootstrap
    intervals (k resamples, level 1 - alpha, ``seed``); with groups, a macro-average row too.
    Items whose score is NaN are left out. See the module docstring."""
    k, alpha, seq = k_iv(k), alpha_iv(alpha), seed_iv(seed)
    (s,), y, strata, threshold, dropped = _prepare([scores], labels, evaluated, tuned, groups, threshold)
    rows = []
    for g in strata:
        v, = _evaluate([s], y, g, [threshold], k, seq)
        rows.append(_row(g, y, v, alpha))
    if groups is not None:
        rows.append(_macro(rows, alpha))
    return Detection(tuple(rows), _conventions(threshold, tuned, strata, k, alpha, seq, dropped))


def _row(g: _Group, y: np.ndarray, v: _Values, alpha: float) -> GroupDetection:
    auc_lo, auc_hi, n_auc = resampling.percentile_interval(v.auc_samples, alpha)
    ba_lo, ba_hi, n_ba = resampling.percentile_interval(v.ba_samples, alpha)
    tuned = g.tune is not None
    return GroupDetection(
        g.label, int(g.evaluated.size), int(y[g.evaluated].sum()),
        int(g.tune.size) if tuned else None, int(y[g.tune].sum()) if tuned else None,
        v.auc, auc_lo, auc_hi, v.threshold, v.ba, ba_lo, ba_hi, v.tune_ba if tuned else None, n_ba, n_auc,
        v.auc_samples, v.ba_samples)


def _macro(rows: Sequence[GroupDetection], alpha: float) -> GroupDetection:
    auc = np.mean([r.auc_samples for r in rows], axis=0)    # NaN when any group's resample is
    ba = np.mean([r.ba_samples for r in rows], axis=0)
    auc_lo, auc_hi, n_auc = resampling.percentile_interval(auc, alpha)
    ba_lo, ba_hi, n_ba = resampling.percentile_interval(ba, alpha)
    tuned = rows[0].n_tune is not None
    return GroupDetection(
        MACRO, sum(r.n for r in rows), sum(r.n_positive for r in rows),
        sum(r.n_tune for r in rows) if tuned else None, sum(r.n_tune_positive for r in rows) if tuned else None,
        macro_average([r.roc_auc for r in rows]), auc_lo, auc_hi, None,
        macro_average([r.balanced_accuracy for r in rows]), ba_lo, ba_hi,
        macro_average([r.tune_balanced_accuracy for r in rows]) if tuned else None, n_ba, n_auc, auc, ba)


# --- paired tests between two detectors --------------------------------------------------------
@dataclass(frozen=True)
class DetectionTest:
    """A paired bootstrap test of delta = stat(a) - stat(b) in one group (or the macro
    average), on the ``n`` evaluated items both detectors scored."""

    group: str
    statistic: str              # balanced_accuracy | roc_auc
    value_a: float
    value_b: float
    delta: float
    p_value: float
    n: int
    n_valid: int
    undefined: str | None
    samples: np.ndarray = field(repr=False)


def paired_detection_test(scores_a: npt.ArrayLike, scores_b: npt.ArrayLike, labels: npt.ArrayLike, *,
                          evaluated: npt.ArrayLike | None = None, tuned: npt.ArrayLike | None = None,
                          groups: Sequence[str | None] | None = None,
                          threshold: float | tuple[float, float] | None = None, k: int = 1000, seed: int | None = 0,
                          alternative: str = "two-sided") -> tuple[tuple[DetectionTest, ...], dict[str, Any]]:
    """Paired bootstrap tests of the difference between detectors a and b in balanced accuracy
    and in ROC-AUC, per group and (with groups) of the macro averages, on the items both scored:
    each resample draws the items once for both (and re-tunes each detector's threshold on the
    resampled tune items); delta_b = stat_b(a) - stat_b(b), p as every paired bootstrap test of
    the project (count / k; two-sided count #{|delta_b - delta| >= |delta|}). p is NaN when
    delta is (a group with one class only) or no resample is defined. Returns the tests and
    their conventions. A fixed ``threshold`` is one for both detectors or a pair (a's, b's: two
    scales, e.g. a lower-is-better measure negated)."""
    k, seq, alternative = k_iv(k), seed_iv(seed), alternative_iv(alternative)
    pair = None
    if isinstance(threshold, tuple):
        if len(threshold) != 2 or (threshold[0] is None) != (threshold[1] is None):
            raise ValueError(f"`threshold` must be a number, a pair of numbers or None; got {threshold!r}.")
        pair = (_threshold_iv(threshold[0]), _threshold_iv(threshold[1]))
        threshold = pair[0]
    (a, b), y, strata, threshold, dropped = _prepare([scores_a, scores_b], labels, evaluated, tuned, groups,
                                                     threshold)
    thresholds = (threshold, threshold) if pair is None else pair
    per_group = []
    for g in strata:
        va, vb = _evaluate([a, b], y, g, thresholds, k, seq)
        per_group.append((g.label, int(g.evaluated.size), va, vb))
    values = {lbl: {"balanced_accuracy": (va.ba, vb.ba, va.ba_samples - vb.ba_samples),
                    "roc_auc": (va.auc, vb.auc, va.auc_samples - vb.auc_samples), "n": n}
              for lbl, n, va, vb in per_group}
    if groups is not None:
        values[MACRO] = {
            "balanced_accuracy": (macro_average([va.ba for _, _, va, _ in per_group]),
                                  macro_average([vb.ba for _, _, _, vb in per_group]),
                                  np.mean([va.ba_samples - vb.ba_samples for _, _, va, vb in per_group], axis=0)),
            "roc_auc": (macro_average([va.auc for _, _, va, _ in per_group]),
                        macro_average([vb.auc for _, _, _, vb in per_group]),
                        np.mean([va.auc_samples - vb.auc_samples for _, _, va, vb in per_group], axis=0)),
            "n": sum(n for _, n, _, _ in per_group)}
    tests = []
    for label, stats in values.items():
        for statistic in STATISTICS:
            x, z, samples = stats[statistic]
            delta = float(zero_if_rounding(x - z))
            samples = zero_if_rounding(samples)
            valid = samples[~np.isnan(samples)]
            p = resampling_pvalue(delta, count_extreme(valid, delta, alternative, "bootstrap"), valid.size,
                                  add_one=False)
            undefined = (f"{statistic} undefined for {'a' if np.isnan(x) else 'b'} (one class only)"
                         if np.isnan(delta) else None if valid.size else "no resample has a defined delta_b")
            tests.append(DetectionTest(label, statistic, x, z, delta, float(p), stats["n"], int(valid.size),
                                       undefined, samples))
    conv = _conventions(threshold if thresholds[0] == thresholds[1] else thresholds, tuned, strata, k, None, seq,
                        dropped, alternative=alternative,
                        procedure="paired bootstrap: the items both detectors scored, drawn once for both per "
                                  "resample",
                        pvalue_formula={"two-sided": "count / k; count = #{|delta_b - delta| >= |delta|}",
                                        "greater": "count / k; count = #{delta_b >= 2 delta}",
                                        "less": "count / k; count = #{delta_b <= 2 delta}"}[alternative])
    conv.pop("alpha")
    conv.pop("interval")
    return tuple(tests), conv
