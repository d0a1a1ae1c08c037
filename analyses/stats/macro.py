"""The unweighted macro average of a correlation over groups of inputs (``--by ATTR``), and its
percentile bootstrap interval from resamples drawn within each group.

Each group g has its matrices ``X_g, Z_g`` (N_g systems x M_g inputs: the systems and inputs with
a cell in the group). The macro average is ``mean_g r(X_g, Z_g)``; it is undefined (NaN) when any
group's correlation is. A resample is stratified by group: it draws each group's systems
(``systems``, ``both``) and inputs (``inputs``, ``both``) with replacement from that group's own,
independently of the other groups (so each group keeps its size, and groups with different
systems -- CNN/DM and XSum systems -- never borrow each other's), evaluates each group's
correlation on its resample and averages them; resamples with an undefined average are dropped,
and the interval is the alpha/2, 1 - alpha/2 percentiles (numpy's linear interpolation), as
:func:`.intervals.bootstrap_ci`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import _engine, batched, resampling
from .validation import alpha_iv, coefficient_iv, k_iv, level_iv, matrices_iv, method_iv, seed_iv
from .correlation import level_correlation
from .results import BootstrapResult

PROCEDURE = ("percentile bootstrap of the unweighted mean over the groups, stratified: each group's systems and/or "
             "inputs (as the method says) drawn with replacement from that group's own, independently per group; "
             "resamples with an undefined mean dropped")


def macro_average(values: Sequence[float]) -> float:
    """The unweighted mean of the groups' values; NaN if any is NaN (or there is none)."""
    v = np.asarray(values, dtype=float)
    return float(v.mean()) if v.size and not np.isnan(v).any() else float("nan")


def macro_bootstrap_ci(groups: Sequence[tuple[np.ndarray, np.ndarray]], level: str, coefficient: str = "pearson",
                       method: str = "both", k: int = 1000, alpha: float = 0.05,
                       seed: int | None = 0) -> BootstrapResult:
    """The macro average of ``r(X_g, Z_g)`` over ``groups`` and its percentile bootstrap interval
    (module docstring)."""
    if not groups:
        raise ValueError("macro_bootstrap_ci needs at least one group")
    pairs = [matrices_iv(X=X, Z=Z) for X, Z in groups]
    level, coef, method = level_iv(level), coefficient_iv(coefficient), method_iv(method)
    k, alpha, seq = k_iv(k), alpha_iv(alpha), seed_iv(seed)
    shapes = [X.shape for X, _ in pairs]
    evaluators = [batched.bootstrap_evaluator(X, Z, level, coef) for X, Z in pairs]

    def draw(rng: np.random.Generator, size: int):
        out = []
        for n, m in shapes:  # group by group: its systems, then its inputs
            out.append(rng.integers(0, n, size=(size, n), dtype=np.int32) if method != "inputs" else None)
            out.append(rng.integers(0, m, size=(size, m), dtype=np.int32) if method != "systems" else None)
        return tuple(out)

    def evaluate(*indices) -> np.ndarray:
        return np.mean([ev(indices[2 * g], indices[2 * g + 1]) for g, ev in enumerate(evaluators)], axis=0)

    budget = sum(batched.resample_bytes(level, coef, n, m) for n, m in shapes)
    samples = _engine.run_resamples(k, seq, draw, evaluate, _engine.default_batch_size(budget))
    lower, upper, n_valid = resampling.percentile_interval(samples, alpha)
    estimate = macro_average([level_correlation(X, Z, level, coef) for X, Z in pairs])
    return BootstrapResult(estimate=estimate, lower=lower, upper=upper, samples=samples, conventions={
        "method": f"boot-{method}", "procedure": PROCEDURE, "k": k, "alpha": alpha,
        "interval": "percentile (numpy linear interpolation), two-sided", "seed": seq.entropy,
        "groups": len(pairs), "n_valid_samples": n_valid})
