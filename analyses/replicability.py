"""Replicability of one comparison across n datasets (Dror, Baumer, Bogomolov & Reichart 2017,
TACL 5): the partial-conjunction p-values and the number of datasets with an effect. Pure
functions on arrays, no database inside.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from metaeval.analyses.stats import correct_pvalues
from metaeval.analyses.stats.multiple import rejects   # the conclusion layer's rule 0
from metaeval.analyses.stats.validation import alpha_iv

#: The partial-conjunction p-values: Bonferroni's (any dependence) or Fisher's (independent datasets).
PC_METHODS = ("bonferroni", "fisher")


@dataclass(frozen=True)
class PartialConjunctionResult:
    """``pc_pvalues[u-1]`` = the step-down partial-conjunction p-value p^{u/n} (u = 1..n);
    ``k_hat`` = max u with p^{u/n} <= alpha; ``order`` = indices of the p-values, ascending;
    ``identified`` = the datasets rejected by Holm's procedure (bonferroni only; None for fisher)."""

    k_hat: int
    pc_pvalues: np.ndarray
    order: np.ndarray
    identified: np.ndarray | None
    conventions: Mapping[str, Any] = field(default_factory=dict)


def partial_conjunction(pvalues: npt.ArrayLike, alpha: float = 0.05, method: str = "bonferroni") -> PartialConjunctionResult:
    """Replicability analysis of one comparison on n datasets (Dror et al. 2017, TACL 5).

    With p_(1) <= ... <= p_(n) the sorted p-values, the partial-conjunction null "fewer than u
    datasets have an effect" has p-value
    - ``"bonferroni"`` (valid under any dependence): p^{u/n} = min(1, (n - u + 1) p_(u));
    - ``"fisher"`` (independent datasets): p^{u/n} = P(chi2_{2(n-u+1)} >= -2 sum_{i>=u} ln p_(i)).
    Step-down monotonicity: p^{u/n} <- max_{v <= u} p^{v/n} (as the authors' code), so
    k_hat = #{u : p^{u/n} <= alpha} is the largest u rejected together with all smaller u.
    Monotone Bonferroni-PC equals Holm's adjusted p-values; the datasets with the k_hat smallest
    p-values (Holm's rejections) are the ones identified.
    """
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1 or p.size < 1:
        raise ValueError(f"`pvalues` must be 1-D with at least one p-value; got shape {p.shape}.")
    if np.isnan(p).any() or ((p < 0) | (p > 1)).any():
        raise ValueError("`pvalues` must lie in [0, 1] (no NaN: every dataset needs its p-value).")
    alpha = alpha_iv(alpha)
    if method not in PC_METHODS:
        raise ValueError(f"`method` must be one of {list(PC_METHODS)}; got {method!r}.")
    order = np.argsort(p, kind="stable")
    n = p.size
    if method == "bonferroni":
        pc = correct_pvalues(p, "holm")[order]
        formula = "p^{u/n} = max_{v<=u} min(1, (n - v + 1) p_(v)) (= Holm's adjusted p-values)"
    else:
        with np.errstate(divide="ignore"):
            tail = np.cumsum(-2 * np.log(p[order])[::-1])[::-1]      # -2 sum_{i>=u} ln p_(i)
        pc = np.maximum.accumulate(_chi2_sf(tail, 2 * (n - np.arange(n))))
        formula = "p^{u/n} = max_{v<=u} P(chi2_{2(n-v+1)} >= -2 sum_{i>=v} ln p_(i))"
    k_hat = int(rejects(pc, alpha).sum())
    return PartialConjunctionResult(k_hat, pc, order, order[:k_hat] if method == "bonferroni" else None, {
        "method": method, "alpha": alpha, "pc_pvalue": formula,
        "k_hat": "number of u with p^{u/n} <= alpha (step-down)",
        "identified": "Holm's procedure: the k_hat datasets with the smallest p-values" if method == "bonferroni"
        else "not defined for fisher",
        "assumption": "any dependence between datasets" if method == "bonferroni" else "independent datasets",
        "reference": "Dror, Baumer, Bogomolov & Reichart 2017, TACL 5:471-486",
    })


def _chi2_sf(x, df):
    import scipy.stats  # on first use: the command line starts without scipy
    return scipy.stats.chi2.sf(x, df)
