"""Human judgments as measured data: agreement between annotators and the human ceiling.

Pure functions on an annotator tensor ``A`` of shape (N systems, M inputs, K annotators), NaN
where an annotator did not judge a cell. The cell value the other analyses use is the mean over
a cell's annotators (``nanmean(A, axis=2)``).

Two kinds of statistics, and what each assumes of annotator ids:

- **identity-free**: Krippendorff's alpha (:func:`krippendorff_alpha`) and the split-half
  reliability (:func:`split_half`) use only the set of values within each cell, so they hold when
  the ids are anonymous list positions (SacreROUGE lists: annotator "0" of one cell need not be
  annotator "0" of another);
- **identity-based**: the mean pairwise correlation between annotators
  (:func:`pairwise_correlation`) and the leave-one-annotator-out ceiling (:func:`leave_one_out`)
  compare annotator a's matrix with the others', so they assume an id names the same person in
  every cell.

The **human ceiling** is how well one human agrees with the rest: a metric correlating with the
mean judgment above it agrees with the humans better than a single human does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt

from metaeval.analyses.stats import _engine, batched, resampling
from metaeval.analyses.stats.validation import (
    alpha_iv,
    coefficient_iv,
    k_iv,
    level_iv,
    seed_iv,
)
from metaeval.analyses.stats.correlation import level_correlation

KRIPPENDORFF_LEVELS = ("interval", "ordinal")


def tensor_iv(A: npt.ArrayLike) -> np.ndarray:
    """``A`` as a float (N, M, K) array with N, M >= 1 and K >= 1; finite or NaN."""
    A = np.asarray(A, dtype=float)
    if A.ndim != 3 or 0 in A.shape:
        raise ValueError(f"annotator values must be a non-empty (systems, inputs, annotators) array; got shape "
                         f"{A.shape}")
    if np.isinf(A).any():
        raise ValueError("annotator values must be finite (NaN marks a missing judgment)")
    return A


def cell_means(A: npt.ArrayLike) -> np.ndarray:
    """The (N, M) matrix of cell values: the mean of each cell's annotators (NaN: none)."""
    A = tensor_iv(A)
    n = (~np.isnan(A)).sum(axis=2)
    total = np.where(np.isnan(A), 0.0, A).sum(axis=2)
    return np.where(n > 0, total / np.maximum(n, 1), np.nan)


@dataclass(frozen=True)
class Counts:
    """Annotators per judged cell (cells with at least one judgment)."""

    minimum: int
    median: float
    maximum: int
    cells: int


def annotator_counts(A: npt.ArrayLike) -> Counts:
    n = (~np.isnan(tensor_iv(A))).sum(axis=2).ravel()
    n = n[n > 0]
    if n.size == 0:
        return Counts(0, float("nan"), 0, 0)
    return Counts(int(n.min()), float(np.median(n)), int(n.max()), int(n.size))


def krippendorff_alpha(A: npt.ArrayLike, level_of_measurement: str = "interval") -> float:
    """Krippendorff's alpha of the judgments, each (system, input) cell a unit, computed by the
    ``krippendorff`` package. Identity-free: a unit's values are pooled whatever their ids.

    alpha = 1 - D_o / D_e, the observed disagreement within units over the disagreement expected
    from all pairable values. NaN when fewer than two units have two or more values, or when all
    values are equal (no disagreement is expected).
    """
    import krippendorff

    if level_of_measurement not in KRIPPENDORFF_LEVELS:
        raise ValueError(f"level_of_measurement must be one of {KRIPPENDORFF_LEVELS}; got {level_of_measurement!r}")
    A = tensor_iv(A)
    data = A.reshape(-1, A.shape[2]).T                                    # coders x units
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    values = data[:, pairable]
    if pairable.sum() < 2 or np.unique(values[~np.isnan(values)]).size < 2:
        return float("nan")
    return float(krippendorff.alpha(reliability_data=values, level_of_measurement=level_of_measurement))


def pairwise_correlation(A: npt.ArrayLike, level: str, coefficient: str = "pearson") -> float:
    """Mean over annotator pairs (a, b) of Corr(A_a, A_b) at ``level`` (pairs whose correlation
    is undefined left out; NaN if none is defined). Identity-based."""
    A, level, coef = tensor_iv(A), level_iv(level), coefficient_iv(coefficient)
    r = [level_correlation(A[:, :, a], A[:, :, b], level, coef) for a, b in combinations(range(A.shape[2]), 2)]
    r = np.array(r, dtype=float)
    return float(np.nanmean(r)) if np.isfinite(r).any() else float("nan")


def _loo_pairs(A: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(A_a, mean of the others' values) for each annotator a; a cell of the second is NaN when
    no other annotator judged it. The others' mean is summed from their values (not the total
    minus a's value), so equal panels give bit-equal means and ties stay ties."""
    pairs = []
    for a in range(A.shape[2]):
        pairs.append((A[:, :, a], cell_means(np.delete(A, a, axis=2))))
    return pairs


@dataclass
class CeilingResult:
    """The human ceiling at one level and coefficient: ``estimate`` and, with a bootstrap, a
    percentile interval [lower, upper]; ``per_annotator`` (leave-one-out) or ``samples``."""

    estimate: float
    lower: float = float("nan")
    upper: float = float("nan")
    per_annotator: np.ndarray | None = None
    samples: np.ndarray | None = field(default=None, repr=False)
    conventions: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return (f"CeilingResult(estimate={self.estimate:.4f}, lower={self.lower:.4f}, upper={self.upper:.4f}, "
                f"estimator={self.conventions.get('estimator')!r})")


def leave_one_out(A: npt.ArrayLike, level: str, coefficient: str = "pearson", *, k: int = 0,
                  alpha: float = 0.05, seed: int | None = 0) -> CeilingResult:
    """Leave-one-annotator-out ceiling: mean over annotators a of Corr(A_a, mean of the other
    annotators' values) at ``level`` (annotators whose correlation is undefined left out).
    Identity-based.

    With ``k`` > 0, a Boot-Both percentile interval: systems and inputs drawn with replacement
    (the same draws for every annotator), the statistic recomputed on each resample (resamples
    where it is undefined dropped) -- the draws of :func:`metaeval.analyses.bootstrap_ci` with
    the same seed.
    """
    A, level, coef = tensor_iv(A), level_iv(level), coefficient_iv(coefficient)
    if A.shape[2] < 2:
        raise ValueError("a leave-one-out ceiling needs at least two annotators")
    pairs = _loo_pairs(A)
    per = np.array([level_correlation(own, others, level, coef) for own, others in pairs])
    estimate = float(np.nanmean(per)) if np.isfinite(per).any() else float("nan")
    conv = {"estimator": "leave-one-out", "level": level, "coefficient": coef.label,
            "annotator_ids": "assumed to name the same person in every cell",
            "definition": "mean over annotators a of Corr(A_a, mean of the others' values per cell)"}
    result = CeilingResult(estimate, per_annotator=per, conventions=conv)
    if k:
        k, alpha, seq = k_iv(k), alpha_iv(alpha), seed_iv(seed)
        evaluators = [batched.bootstrap_evaluator(own, others, level, coef) for own, others in pairs]

        def evaluate(rows, cols):
            stats = np.stack([e(rows, cols) for e in evaluators])      # (K, c)
            defined = np.isfinite(stats)
            return np.where(defined.any(axis=0),
                            np.where(defined, stats, 0.0).sum(axis=0) / np.maximum(defined.sum(axis=0), 1), np.nan)

        n_sys, n_in = A.shape[:2]
        from functools import partial

        samples = _engine.run_resamples(
            k, seq, partial(resampling.bootstrap_indices, n_systems=n_sys, n_inputs=n_in, method="both"), evaluate,
            _engine.default_batch_size(batched.resample_bytes(level, coef, n_sys, n_in) * A.shape[2]))
        lower, upper, n_valid = resampling.percentile_interval(samples, alpha)
        if n_valid:
            result.lower, result.upper = lower, upper
        result.samples = samples
        conv.update(method="bootstrap-both", k=k, alpha=alpha, seed=seq.entropy, n_valid_samples=n_valid,
                    interval="percentile (numpy linear interpolation), two-sided")
    return result


def split_half(A: npt.ArrayLike, level: str, coefficient: str = "pearson", *, splits: int = 100,
               seed: int | None = 0) -> CeilingResult:
    """Split-half reliability, Spearman-Brown corrected: in each of ``splits`` random splits,
    each cell's annotators are shuffled and cut into halves (floor(n/2) and the rest; cells with
    fewer than two annotators are left out), r = Corr(mean of half 1, mean of half 2) at ``level``,
    and the estimate is the mean over splits of 2r / (1 + r). Identity-free.

    The Spearman-Brown step predicts the reliability of the full panel from half of it; it is
    derived for Pearson's r and only an approximation for Spearman and Kendall.
    ``per_annotator`` is None; ``samples`` holds the corrected value of each split.
    """
    A, level, coef = tensor_iv(A), level_iv(level), coefficient_iv(coefficient)
    if splits < 1:
        raise ValueError("splits must be at least 1")
    rng = np.random.default_rng(seed_iv(seed))
    present = ~np.isnan(A)
    n = present.sum(axis=2, keepdims=True)
    usable = n >= 2
    values = np.where(present, A, 0.0)
    out = np.empty(splits)
    for s in range(splits):
        keys = np.where(present, rng.random(A.shape), np.inf)
        rank = keys.argsort(axis=2).argsort(axis=2)                      # position of each value in the shuffle
        first = present & (rank < n // 2) & usable
        second = present & (rank >= n // 2) & usable
        h1 = np.where(first.any(axis=2), (values * first).sum(axis=2) / np.maximum(first.sum(axis=2), 1), np.nan)
        h2 = np.where(second.any(axis=2), (values * second).sum(axis=2) / np.maximum(second.sum(axis=2), 1), np.nan)
        r = level_correlation(h1, h2, level, coef)
        out[s] = 2 * r / (1 + r) if np.isfinite(r) and r > -1 else np.nan
    estimate = float(np.nanmean(out)) if np.isfinite(out).any() else float("nan")
    return CeilingResult(estimate, samples=out, conventions={
        "estimator": "split-half", "level": level, "coefficient": coef.label, "splits": splits,
        "seed": None if seed is None else int(seed),
        "annotator_ids": "not used (identity-free)",
        "definition": "mean over splits of 2r/(1+r), r = Corr(mean of a random half of each cell's annotators, "
                      "mean of the other half)",
        "spearman_brown": "derived for Pearson; an approximation for Spearman and Kendall"})


# --- annotator-aware intervals ------------------------------------------------------------------
#: How the annotators are resampled within a bootstrap resample.
ANNOTATOR_RESAMPLING = ("cells", "panel")
#: Spawn key of the annotator draws: a stream of its own, so the system and input draws of a
#: seed are those of :func:`metaeval.analyses.bootstrap_ci` whatever is done with annotators.
ANNOTATOR_STREAM = 2**31 - 1


@dataclass
class AnnotatorBootstrapResult:
    estimate: float
    lower: float
    upper: float
    samples: np.ndarray = field(repr=False)
    conventions: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"AnnotatorBootstrapResult(estimate={self.estimate:.4f}, lower={self.lower:.4f}, upper={self.upper:.4f})"


def _compact(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each cell's present values first (order kept), NaN after; and the count per cell."""
    present = ~np.isnan(A)
    order = np.argsort(~present, axis=2, kind="stable")
    return np.take_along_axis(A, order, axis=2), present.sum(axis=2)


def _cell_draws(rng: np.random.Generator, size: int, shape: tuple[int, int, int]) -> tuple[np.ndarray]:
    """Uniforms (size, N, M, K): slot s of a cell with n annotators takes its floor(u * n)-th."""
    return (rng.random((size, *shape)),)


def _panel_draws(rng: np.random.Generator, size: int, n_annotators: int) -> tuple[np.ndarray]:
    """(size, K) annotator indices drawn with replacement, once per resample."""
    return (rng.integers(0, n_annotators, size=(size, n_annotators)),)


def _resampled_means(compact: np.ndarray, n: np.ndarray, A: np.ndarray, draws: np.ndarray, how: str) -> np.ndarray:
    """(c, N, M) cell means of the resampled annotators of each resample."""
    if how == "cells":
        slots = np.arange(compact.shape[2])
        idx = np.minimum((draws * n[None, :, :, None]).astype(np.intp), np.maximum(n - 1, 0)[None, :, :, None])
        picked = np.take_along_axis(np.broadcast_to(compact, draws.shape), idx, axis=3)
        used = slots[None, None, None, :] < n[None, :, :, None]
        total = np.where(used, picked, 0.0).sum(axis=3)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, total / n, np.nan)
    picked = A[:, :, draws]                                     # (N, M, c, K)
    present = ~np.isnan(picked)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(present, picked, 0.0).sum(axis=3) / present.sum(axis=3)
    return np.moveaxis(means, 2, 0)


def _resampled_level(X: np.ndarray, Zb: np.ndarray, rows: np.ndarray | None, cols: np.ndarray | None, level: str,
                     coef) -> np.ndarray:
    """The level correlation of each resample b: X and Zb[b] (c, N, M) resampled by rows[b] and
    cols[b], computed as :func:`metaeval.analyses.stats.batched.bootstrap_evaluator` computes it
    (so a Zb[b] equal to Z gives Boot-Both's value to the bit). System means and the summary-level
    Kendall pair counts depend on Zb[b], so those are evaluated one resample at a time; the other
    paths gather the whole batch at once."""
    from metaeval.analyses.stats.correlation import corr, summary_mean

    c, n_sys, n_in = Zb.shape
    if level == "system" or (level == "summary" and coef.name == "kendall"):
        out = np.empty(c)
        for b in range(c):
            evaluate = batched.bootstrap_evaluator(X, Zb[b], level, coef)
            out[b] = evaluate(None if rows is None else rows[b:b + 1], None if cols is None else cols[b:b + 1])[0]
        return out
    r = np.arange(n_sys)[None, :].repeat(c, 0) if rows is None else rows
    b = np.arange(c)[:, None]
    if level == "summary":
        per_input = corr(X[r].transpose(0, 2, 1), Zb[b, r].transpose(0, 2, 1), coef)
        return summary_mean(per_input, None if cols is None else batched._counts(cols, n_in))
    q = np.arange(n_in)[None, :].repeat(c, 0) if cols is None else cols
    xg = X[r[:, :, None], q[:, None, :]].reshape(c, -1)
    zg = Zb[b[:, :, None], r[:, :, None], q[:, None, :]].reshape(c, -1)
    return corr(xg, zg, coef)


def annotator_bootstrap_ci(X: npt.ArrayLike, A: npt.ArrayLike, level: str, coefficient: str = "pearson",
                           method: str = "both", k: int = 1000, alpha: float = 0.05, seed: int | None = 0, *,
                           annotators: str = "cells", Z: npt.ArrayLike | None = None) -> AnnotatorBootstrapResult:
    """Bootstrap CI of Corr(X, Z) with annotation noise: in each resample the systems and inputs
    are drawn as :func:`metaeval.analyses.bootstrap_ci` draws them (same seed, same draws), and
    Z, the human matrix, is rebuilt from resampled annotators before it is averaged --

    - ``annotators="cells"``: each cell's annotators drawn with replacement (as many as it has),
      identity-free;
    - ``"panel"``: K annotator ids drawn with replacement once per resample and used in every
      cell (a cell's mean over the drawn ids it has; NaN if none), for ids that name the same
      person everywhere.

    ``A``: the human judgments, (N, M, K), NaN where missing; the estimate is Corr(X, Z), Z the
    cell means of A unless given (as the warehouse stores them, so that the estimate is
    :func:`metaeval.analyses.correlate`'s to the bit). Percentile interval over the resamples with a defined correlation. With identical
    annotators it equals Boot-Both's; with noisy ones it is, on average, no narrower.
    """

    from metaeval.analyses.stats.validation import matrices_iv, method_iv

    A = tensor_iv(A)
    X, Z = matrices_iv(X=X, Z=cell_means(A) if Z is None else Z)
    if Z.shape != A.shape[:2]:
        raise ValueError(f"Z {Z.shape} and the annotator values {A.shape} must share the systems and inputs")
    level, coef, method = level_iv(level), coefficient_iv(coefficient), method_iv(method)
    k, alpha, seq = k_iv(k), alpha_iv(alpha), seed_iv(seed)
    if annotators not in ANNOTATOR_RESAMPLING:
        raise ValueError(f"annotators must be one of {ANNOTATOR_RESAMPLING}; got {annotators!r}")
    (samples,) = _annotator_samples([X], A, level, coef, method, k, seq, annotators)
    lower, upper, n_valid = resampling.percentile_interval(samples, alpha)
    return AnnotatorBootstrapResult(level_correlation(X, Z, level, coef), lower, upper, samples, conventions={
        "level": level, "coefficient": coef.label, "method": f"bootstrap-{method}", "k": k, "alpha": alpha,
        "seed": seq.entropy, "n_valid_samples": n_valid,
        "annotators": _ANNOTATOR_TEXT[annotators],
        "interval": "percentile (numpy linear interpolation), two-sided"})


def annotator_paired_bootstrap_test(X: npt.ArrayLike, Y: npt.ArrayLike, A: npt.ArrayLike, level: str,
                                    coefficient: str = "pearson", method: str = "both", k: int = 1000,
                                    alternative: str = "greater", seed: int | None = 0, *, annotators: str = "cells",
                                    Z: npt.ArrayLike | None = None):
    """The paired bootstrap test of delta = r(X, Z) - r(Y, Z)
    (:func:`metaeval.analyses.paired_bootstrap_test`: same p-value formula, same system and input
    draws for a seed) with the annotators re-drawn in every resample as in
    :func:`annotator_bootstrap_ci` (both metrics against the same re-drawn Z_b)."""

    from metaeval.analyses.stats.validation import alternative_iv, matrices_iv, method_iv
    from metaeval.analyses.stats.hypothesis import paired_bootstrap_result, zero_if_rounding

    A = tensor_iv(A)
    X, Y, Z = matrices_iv(X=X, Y=Y, Z=cell_means(A) if Z is None else Z)
    if Z.shape != A.shape[:2]:
        raise ValueError(f"Z {Z.shape} and the annotator values {A.shape} must share the systems and inputs")
    level, coef, method = level_iv(level), coefficient_iv(coefficient), method_iv(method)
    k, alternative, seq = k_iv(k), alternative_iv(alternative), seed_iv(seed)
    if annotators not in ANNOTATOR_RESAMPLING:
        raise ValueError(f"annotators must be one of {ANNOTATOR_RESAMPLING}; got {annotators!r}")
    r_xz, r_yz = level_correlation(X, Z, level, coef), level_correlation(Y, Z, level, coef)
    delta = zero_if_rounding(r_xz - r_yz)
    samples = _annotator_samples([X, Y], A, level, coef, method, k, seq, annotators)
    samples = zero_if_rounding(samples[0] - samples[1])
    return paired_bootstrap_result(delta, samples, level, coef, method, k, alternative, seq, r_xz, r_yz,
                                   annotators=_ANNOTATOR_TEXT[annotators])


_ANNOTATOR_TEXT = {"cells": "each cell's annotators drawn with replacement in every resample (identity-free)",
                   "panel": "annotator ids drawn with replacement once per resample (ids = people)"}


def _annotator_samples(metrics: list[np.ndarray], A: np.ndarray, level: str, coef, method: str, k: int,
                       seq: np.random.SeedSequence, annotators: str) -> list[np.ndarray]:
    """For each metric, its k resampled correlations with the re-drawn human matrix (the same
    system, input and annotator draws for every metric)."""
    from functools import partial

    n_sys, n_in, n_ann = A.shape
    compact, n = _compact(A)
    cells = resampling.ResampleStream(
        seq, partial(resampling.bootstrap_indices, n_systems=n_sys, n_inputs=n_in, method=method))
    ann_seed = np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, ANNOTATOR_STREAM))
    who = resampling.ResampleStream(ann_seed, partial(_cell_draws, shape=A.shape) if annotators == "cells"
                                    else partial(_panel_draws, n_annotators=n_ann))
    batch = max(1, _engine.MEMORY_BUDGET // (8 * 6 * n_sys * n_in * n_ann))
    out = [np.empty(k) for _ in metrics]
    for start in range(0, k, batch):
        stop = min(k, start + batch)
        rows, cols = cells.take(start, stop)
        (draws,) = who.take(start, stop)
        Zb = _resampled_means(compact, n, A, draws, annotators)
        for samples, X in zip(out, metrics, strict=True):
            samples[start:stop] = _resampled_level(X, Zb, rows, cols, level, coef)
    return out
