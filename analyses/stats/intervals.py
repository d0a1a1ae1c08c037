"""Confidence intervals for a metric's correlation with human judgments."""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _engine, allpairs, batched, resampling, vocabulary
from . import clusters as clustering
from .validation import (
    Coefficient,
    alpha_iv,
    batch_size_iv,
    coefficient_iv,
    k_iv,
    level_iv,
    matrices_iv,
    method_iv,
    seed_iv,
)
from .correlation import level_correlation, pairs_count
from .results import NAN_POLICY, BootstrapResult, FisherResult


def conventions(level: str, coefficient: Coefficient, **extra: Any) -> dict[str, Any]:
    """The conventions record shared by every result."""
    ties = {}
    if coefficient.ties_variant:
        from .kendall_variants import conventions as ties_conventions

        ties = ties_conventions(coefficient)
    elif coefficient.name in vocabulary.LEVEL_COEFFICIENTS:
        from .correlation import level_module

        ties = level_module(coefficient).conventions()
    return {
        "level": level,
        "coefficient": coefficient.name,
        "kendall_variant": coefficient.variant,
        "nan_policy": NAN_POLICY,
        **ties,
        **extra,
    }


def fisher_constants(coefficient: Coefficient, r: float) -> tuple[int, float]:
    """(b, c) of Bonett & Wright (2000): Pearson (3, 1), Spearman (3, sqrt(1 + r^2/2)),
    Kendall (4, sqrt(0.437))."""
    if coefficient.name == "pearson":
        return 3, 1.0
    if coefficient.name == "spearman":
        return 3, float(np.sqrt(1 + r * r / 2))
    return 4, float(np.sqrt(0.437))


def fisher_ci(
    X: npt.ArrayLike, Z: npt.ArrayLike, level: str, coefficient: str = "pearson", alpha: float = 0.05
) -> FisherResult:
    """Two-sided 1 - alpha CI tanh(atanh(r) -/+ z_{1-alpha/2} c / sqrt(n - b)).

    (b, c) from :func:`fisher_constants`; n = #systems (system level), the largest number of
    non-NaN pairs of any input (summary), #non-NaN pairs of cells (global). Undefined (NaN
    bounds) when n <= b or r is NaN. At the summary level the transformation is applied to the
    averaged correlation, as in the paper.
    """
    import scipy.stats  # here, not at import time: the command line starts without scipy
    X, Z = matrices_iv(X=X, Z=Z)
    level, coef, alpha = level_iv(level), coefficient_iv(coefficient), alpha_iv(alpha)
    if not coef.parametric:
        raise ValueError(f"Fisher's interval has no constants for {coef.label}; use a bootstrap interval.")
    r = level_correlation(X, Z, level, coef)
    n = pairs_count(X, Z, level)
    b, c = fisher_constants(coef, r)
    lower = upper = np.nan
    if n > b and not np.isnan(r):
        half = scipy.stats.norm.ppf(1 - alpha / 2) * c / np.sqrt(n - b)
        with np.errstate(divide="ignore"):
            z_r = np.arctanh(r)
        lower, upper = float(np.tanh(z_r - half)), float(np.tanh(z_r + half))
    return FisherResult(
        estimate=r,
        lower=lower,
        upper=upper,
        n=n,
        conventions=conventions(level, coef, method="fisher", alpha=alpha, b=b, c=c, n=n),
    )


def bootstrap_ci(
    X: npt.ArrayLike,
    Z: npt.ArrayLike,
    level: str,
    coefficient: str = "pearson",
    method: str = "both",
    k: int = 1000,
    alpha: float = 0.05,
    seed: int | None = 0,
    *,
    batch_size: int | None = None,
    paired_inputs: bool = True,
    clusters=None,
) -> BootstrapResult:
    """Percentile bootstrap CI: the alpha/2 and 1 - alpha/2 percentiles (numpy's linear
    interpolation) of r over k resamples, resamples with an undefined r dropped.

    ``method``: "systems" (Boot-Systems: rows with replacement), "inputs" (Boot-Inputs:
    columns) or "both" (Boot-Both: rows and columns drawn independently, the sub-matrix).
    ``seed``: an int for reproducible draws (default 0, as the command line); None draws fresh entropy, recorded as
    ``conventions["seed"]`` so the result can be reproduced. ``batch_size``: resamples
    evaluated at once (default: from a memory budget); it never changes the result.

    ``paired_inputs=False`` (system level only): the metric scored inputs the human did not
    judge, and each side's system means average its own inputs -- X's over the columns where X
    has a value, Z's over those where Z has one; in each resample the two sets of inputs are
    drawn independently (the systems stay paired), as nlpstats does with ``paired_inputs=False``.

    ``clusters``: a cluster label per input (:mod:`.clusters`): whole clusters drawn with
    replacement instead of single inputs (Boot-Both: systems x clusters); one input per cluster
    gives the unclustered numbers bit for bit.
    """
    X, Z = matrices_iv(X=X, Z=Z)
    level, coef, method = level_iv(level), coefficient_iv(coefficient), method_iv(method)
    k, alpha, seq, batch_size = k_iv(k), alpha_iv(alpha), seed_iv(seed), batch_size_iv(batch_size)
    n_sys, n_in = X.shape
    groups = clustering.clusters_iv(clusters, n_in)
    if groups is not None and not paired_inputs:
        raise ValueError("clusters: the metric's and the human's inputs are drawn unpaired; clustered resampling "
                         "draws them together (system_inputs judged)")
    if groups is None and paired_inputs and (shared := allpairs.active()) is not None:   # an all-pairs block
        samples = allpairs.bootstrap_samples(shared, X, Z, level, coef, method, k, seq, batch_size).copy()
    else:
        if groups is not None:
            draw = partial(clustering.bootstrap_draws, n_systems=n_sys, clusters=groups, method=method)
            evaluate = clustering.bootstrap_evaluator(batched.bootstrap_evaluator(X, Z, level, coef), groups)
        elif paired_inputs:
            draw = partial(resampling.bootstrap_indices, n_systems=n_sys, n_inputs=n_in, method=method)
            evaluate = batched.bootstrap_evaluator(X, Z, level, coef)
        else:
            draw, evaluate = _unpaired(X, Z, level, coef, method)
        size = batch_size or _engine.default_batch_size(batched.resample_bytes(level, coef, n_sys, n_in))
        samples = _engine.run_resamples(k, seq, draw, evaluate, size)
    lower, upper, n_valid = resampling.percentile_interval(samples, alpha)
    return BootstrapResult(
        estimate=level_correlation(X, Z, level, coef),
        lower=lower,
        upper=upper,
        samples=samples,
        conventions=conventions(
            level,
            coef,
            method=f"boot-{method}",
            procedure=f"percentile bootstrap resampling {method}",
            k=k,
            alpha=alpha,
            interval="percentile (numpy linear interpolation), two-sided",
            seed=seq.entropy,
            rng=rng_description(),
            n_valid_samples=n_valid,
            **({} if paired_inputs else {"paired_inputs": UNPAIRED}),
            **({} if groups is None else groups.conventions()),
        ),
    )


#: How inputs are resampled when the metric and the human cover different inputs.
UNPAIRED = ("false: the metric's inputs and the human's drawn independently in each resample (systems paired), "
            "as nlpstats' paired_inputs=False")


def _unpaired(X: np.ndarray, Z: np.ndarray, level: str, coef, method: str, *metrics: np.ndarray):
    """(draw, evaluate) of a system-level bootstrap with unpaired inputs: the metric's inputs
    (where X, or any of ``metrics``, has a value) and the human's (where Z has one)."""
    if level != "system":
        raise ValueError("paired_inputs=False is a system-level protocol: at the summary and global levels a "
                         "correlation pairs the metric's and the human's values of the same cells")
    if coef.calibrated:
        raise ValueError("paired_inputs=False is not available with a tie-calibrated coefficient")
    x_inputs = np.flatnonzero((~np.isnan(np.stack([X, *metrics]))).any(axis=(0, 1))).astype(np.int32)
    z_inputs = np.flatnonzero((~np.isnan(Z)).any(axis=0)).astype(np.int32)
    draw = partial(resampling.unpaired_bootstrap_indices, n_systems=X.shape[0], x_inputs=x_inputs,
                   z_inputs=z_inputs, method=method)
    return draw, batched.unpaired_system_evaluator(X, Z, coef)


def rng_description() -> str:
    return (
        f"numpy default_rng (PCG64); resample b uses SeedSequence(seed, "
        f"spawn_key=(b // {resampling.RNG_BLOCK},))"
    )
