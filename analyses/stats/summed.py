"""System scores that are functions of statistics summed over inputs, and their bootstrap.

A measure's system score is usually the mean of its cells; a corpus BLEU is the BLEU of its cells'
summed sufficient statistics (sacrebleu's ``corpus_score``). Both are ``reduce(sum_j w_j T_ij)``
of per-cell statistics T (N systems, M inputs, K) with input weights w (1 each; how often a
bootstrap resample drew input j):

- ``"mean"``: T = (x_ij, 1) where the cell has a value, (0, 0) where not; reduce = a / b
  (NaN when b = 0), the system mean over the drawn inputs, counted with multiplicity;
- ``"bleu"``: T = BLEU's ten statistics (:data:`metaeval.analyses.text.mt.STATISTICS`); reduce =
  :func:`metaeval.analyses.text.mt.bleu_from_statistics` (NaN for a system without a cell).

:func:`bootstrap_ci` is the system-level percentile bootstrap of
:func:`metaeval.analyses.stats.intervals.bootstrap_ci` on such scores: the same draws for a seed
(:func:`.resampling.bootstrap_indices`, resample b from ``SeedSequence(seed, spawn_key=(b //
RNG_BLOCK,))``), each resample's system scores recomputed exactly from the summed statistics of
its drawn inputs (so a resample's corpus BLEU is the one sacrebleu gives the resampled corpus),
undefined resamples dropped, numpy's linear-interpolation percentiles.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from . import _engine, resampling
from .correlation import corr
from .results import BootstrapResult
from .validation import alpha_iv, coefficient_iv, k_iv, method_iv, seed_iv

KINDS = ("mean", "bleu")


@dataclass(frozen=True)
class Summed:
    """Per-cell statistics ``T`` (N, M, K) of one measure and how their sums make a system score."""

    T: np.ndarray
    kind: str

    @classmethod
    def of_cells(cls, X: np.ndarray) -> Summed:
        """A measure's cells (N, M; NaN missing) as the statistics of their mean."""
        X = np.asarray(X, dtype=np.float64)
        present = ~np.isnan(X)
        return cls(np.stack([np.where(present, X, 0.0), present.astype(np.float64)], axis=-1), "mean")

    def scores(self, weights: np.ndarray | None = None) -> np.ndarray:
        """(N,) system scores, or (B, N) under input ``weights`` (B, M)."""
        if self.kind == "bleu":
            from metaeval.analyses.text.mt import system_bleu

            return system_bleu(self.T, weights)
        sums = self.T.sum(axis=1) if weights is None else np.einsum("bj,ijk->bik", weights, self.T)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(sums[..., 1] > 0, sums[..., 0] / sums[..., 1], np.nan)


def _resampled_scores(summed: tuple[Summed, ...], rows: np.ndarray | None, cols: np.ndarray | None) -> list:
    """Each measure's system scores in each resample of a batch: (c, N), or (N,) with no draws."""
    n_in = summed[0].T.shape[1]
    w = None if cols is None else np.stack([np.bincount(c, minlength=n_in) for c in cols]).astype(np.float64)
    scores = [s.scores(w) for s in summed]
    if rows is not None:
        scores = [np.take_along_axis(np.broadcast_to(m, rows.shape), rows, axis=1) for m in scores]
    return scores


def _checked(*summed: Summed) -> None:
    if any(s.kind not in KINDS or s.T.shape[:2] != summed[0].T.shape[:2] for s in summed):
        raise ValueError("the measures must be Summed statistics of the same systems and inputs")


def bootstrap_ci(X: Summed, Z: Summed, coefficient: str = "pearson", method: str = "both", k: int = 1000,
                 alpha: float = 0.05, seed: int | None = 0, batch_size: int = 256) -> BootstrapResult:
    """Percentile bootstrap CI of the system-level correlation of ``X``'s and ``Z``'s system
    scores, resampling systems, inputs or both (see the module docstring)."""
    from .intervals import conventions, rng_description

    _checked(X, Z)
    coef, method = coefficient_iv(coefficient), method_iv(method)
    k, alpha, seq = k_iv(k), alpha_iv(alpha), seed_iv(seed)
    n_sys, n_in = X.T.shape[:2]

    def evaluate(rows: np.ndarray | None, cols: np.ndarray | None) -> np.ndarray:
        return corr(*_resampled_scores((X, Z), rows, cols), coef)

    draw = partial(resampling.bootstrap_indices, n_systems=n_sys, n_inputs=n_in, method=method)
    samples = _engine.run_resamples(k, seq, draw, evaluate, batch_size)
    lower, upper, n_valid = resampling.percentile_interval(samples, alpha)
    estimate = float(corr(X.scores(), Z.scores(), coef))
    return BootstrapResult(estimate, lower, upper, samples, conventions(
        "system", coef, method=f"boot-{method}", procedure=f"percentile bootstrap resampling {method}",
        k=k, alpha=alpha, interval="percentile (numpy linear interpolation), two-sided", seed=seq.entropy,
        rng=rng_description(), n_valid_samples=n_valid,
        system_scores="the statistics summed over each resample's drawn inputs (mean, or corpus BLEU)"))


def paired_bootstrap_test(X: Summed, Y: Summed, Z: Summed, coefficient: str = "pearson", method: str = "both",
                          k: int = 1000, alternative: str = "two-sided", seed: int | None = 0,
                          batch_size: int = 256):
    """The paired bootstrap test of :func:`metaeval.analyses.stats.hypothesis.paired_bootstrap_test`
    (delta = r(X,Z) - r(Y,Z) at the system level; its p-value formula, through
    ``paired_bootstrap_result``) on system scores of summed statistics: the same draws for a seed,
    each resample's scores recomputed from its drawn systems and inputs."""
    from .hypothesis import paired_bootstrap_result, zero_if_rounding
    from .validation import alternative_iv

    _checked(X, Y, Z)
    coef, method = coefficient_iv(coefficient), method_iv(method)
    k, alternative, seq = k_iv(k), alternative_iv(alternative), seed_iv(seed)
    n_sys, n_in = X.T.shape[:2]

    def evaluate(rows: np.ndarray | None, cols: np.ndarray | None) -> np.ndarray:
        xm, ym, zm = _resampled_scores((X, Y, Z), rows, cols)
        return corr(xm, zm, coef) - corr(ym, zm, coef)

    draw = partial(resampling.bootstrap_indices, n_systems=n_sys, n_inputs=n_in, method=method)
    samples = zero_if_rounding(_engine.run_resamples(k, seq, draw, evaluate, batch_size))
    r_xz, r_yz = (float(corr(A.scores(), Z.scores(), coef)) for A in (X, Y))
    return paired_bootstrap_result(zero_if_rounding(r_xz - r_yz), samples, "system", coef, method, k, alternative,
                                   seq, r_xz, r_yz, system_scores="the statistics summed over each resample's drawn "
                                   "inputs (mean, or corpus BLEU)")
