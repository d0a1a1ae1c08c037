"""Repeated runs of a metric (``scores.replicate``, issue 45 item 4) in a bootstrap interval: the
second stage of a two-stage bootstrap, so that the interval of a correlation includes the metric's
own run-to-run noise as well as the sampling of systems and inputs.

Pure functions on ``R``, the metric's runs (N systems, M inputs, K runs), NaN where a cell has
fewer runs; ``X``, the matrix the other analyses read, is each cell's mean over its runs. In each
resample the systems and inputs are drawn as :func:`metaeval.analyses.bootstrap_ci` draws them
(same seed, same draws); then each cell's runs are drawn again with replacement, as many as the
cell has (its own uniform stream, ``SeedSequence(seed, spawn_key=(RUN_STREAM,))``), and the
correlation is that of the drawn runs' means with the human matrix ``Z``. With at most one run
per cell there is nothing to draw: the result is :func:`metaeval.analyses.bootstrap_ci`'s, bit
for bit.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import numpy.typing as npt

from metaeval.analyses.annotators import AnnotatorBootstrapResult, _cell_draws, _compact, _resampled_means
from metaeval.analyses.stats import _engine, batched, resampling
from metaeval.analyses.stats.correlation import level_correlation
from metaeval.analyses.stats.validation import alpha_iv, coefficient_iv, k_iv, level_iv, seed_iv

#: The spawn key of the runs' draws (apart from the systems' and inputs' stream, and the annotators').
RUN_STREAM = 45
RUNS_TEXT = ("each cell's runs (scores.replicate) drawn again with replacement inside every resample "
             "(two-stage bootstrap)")


def run_bootstrap_ci(X: npt.ArrayLike, R: npt.ArrayLike, Z: npt.ArrayLike, level: str, coefficient: str = "pearson",
                     method: str = "both", k: int = 1000, alpha: float = 0.05,
                     seed: int | None = 0) -> AnnotatorBootstrapResult:
    """Bootstrap CI of Corr(X, Z) whose resamples also draw each cell's runs again (module
    docstring); percentile interval over the resamples with a defined correlation. ``X``: the cell
    means of ``R`` as the warehouse reads them (the estimate is Corr(X, Z) to the bit)."""
    from metaeval.analyses.stats import bootstrap_ci
    from metaeval.analyses.stats.validation import matrices_iv, method_iv

    R = np.asarray(R, dtype=float)
    X, Z = matrices_iv(X=X, Z=Z)
    if R.ndim != 3 or R.shape[:2] != X.shape:
        raise ValueError(f"the runs {R.shape} must be (N, M, K) on X's grid {X.shape}")
    level, coef, method = level_iv(level), coefficient_iv(coefficient), method_iv(method)
    k, alpha, seq = k_iv(k), alpha_iv(alpha), seed_iv(seed)
    compact, n = _compact(R)
    if not (n > 1).any():   # one run per cell: the one-stage bootstrap itself
        r = bootstrap_ci(X, Z, level, coefficient, method, k=k, alpha=alpha, seed=seed, paired_inputs=True)
        return AnnotatorBootstrapResult(r.estimate, r.lower, r.upper, r.samples,
                                        conventions={**r.conventions, "replicates": RUNS_TEXT, "most_runs": int(n.max())})
    cells = resampling.ResampleStream(seq, partial(resampling.bootstrap_indices, n_systems=X.shape[0],
                                                   n_inputs=X.shape[1], method=method))
    runs = resampling.ResampleStream(np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, RUN_STREAM)),
                                     partial(_cell_draws, shape=R.shape))
    batch = max(1, _engine.MEMORY_BUDGET // (8 * 6 * R.size))
    samples = np.empty(k)
    for start in range(0, k, batch):
        stop = min(k, start + batch)
        rows, cols = cells.take(start, stop)
        (draws,) = runs.take(start, stop)
        Xb = _resampled_means(compact, n, R, draws, "cells")
        for b in range(stop - start):
            evaluate = batched.bootstrap_evaluator(Xb[b], Z, level, coef)
            samples[start + b] = evaluate(None if rows is None else rows[b:b + 1],
                                          None if cols is None else cols[b:b + 1])[0]
    valid = samples[~np.isnan(samples)]
    lower = upper = float("nan")
    if valid.size:
        lower, upper = (float(v) for v in np.percentile(valid, [100 * alpha / 2, 100 * (1 - alpha / 2)]))
    return AnnotatorBootstrapResult(level_correlation(X, Z, level, coef), lower, upper, samples, conventions={
        "level": level, "coefficient": coef.label, "method": f"bootstrap-{method}", "k": k, "alpha": alpha,
        "seed": seq.entropy, "n_valid_samples": int(valid.size), "replicates": RUNS_TEXT, "most_runs": int(n.max()),
        "interval": "percentile (numpy linear interpolation), two-sided"})
