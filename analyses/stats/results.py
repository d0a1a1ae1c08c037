"""Result objects: frozen dataclasses with named fields and the conventions used.

``conventions`` records everything needed to reproduce a number (level, coefficient and
Kendall variant, method, k, alpha, tails, seed, NaN policy, p-value formula...); the
persistence layer stores it next to the values. A result prints as a short summary: its
``samples`` (k resampled values) and ``conventions`` stay out of its repr.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

NAN_POLICY = (
    "pairwise: a (metric, human) cell pair with a NaN on either side is dropped; system means "
    "ignore NaN; an input whose correlation is undefined (< 2 pairs or constant) is left out "
    "of the summary-level mean; resamples whose statistic is undefined are dropped"
)


@dataclass(frozen=True)
class FisherResult:
    """Fisher-transformation CI: tanh(atanh(r) -/+ z_{alpha/2} c / sqrt(n - b))."""

    estimate: float
    lower: float
    upper: float
    n: int
    conventions: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class BootstrapResult:
    """Percentile bootstrap CI; ``samples`` holds all k resampled correlations (NaN if undefined)."""

    estimate: float
    lower: float
    upper: float
    samples: np.ndarray = field(repr=False)
    conventions: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class WilliamsResult:
    """Williams' t for r(X,Z) vs r(Y,Z) with the pairwise correlations it used."""

    statistic: float
    pvalue: float
    df: int
    r12: float
    r13: float
    r23: float
    n: int
    conventions: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class PermutationResult:
    """Permutation test of delta = r(X,Z) - r(Y,Z); ``samples`` are the k permuted deltas."""

    delta: float
    pvalue: float
    samples: np.ndarray = field(repr=False)
    conventions: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class PairedBootstrapResult:
    """Paired bootstrap test of delta = r(X,Z) - r(Y,Z); ``samples`` are the k resampled deltas."""

    delta: float
    pvalue: float
    samples: np.ndarray = field(repr=False)
    conventions: Mapping[str, Any] = field(default_factory=dict, repr=False)
