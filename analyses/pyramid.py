"""Pyramid scores from content-unit judgments (Louis & Nenkova 2013 Eq. 1; Cohan & Goharian
2016 §4.2, the SERA paper; the lite recall of REALSumm, Bhandari et al. 2020).

For one summary, ``present[u]`` says whether it expresses the content unit ``u`` of its input's
pyramid, and ``weight[u]`` is the unit's weight (for a pyramid: the number of model summaries that
express it). With ``X = sum_u present[u]`` units expressed:

- **lite recall**: ``X / U``, the share of the input's ``U`` units present (unweighted);
- **pyramid score** (001, Eq. 1): ``sum_u weight[u] present[u]`` divided by the weight of an
  ideal summary with the same number of units: the sum of the ``X`` largest weights of the
  input's pyramid. An ideal summary scores 1; a summary expressing no unit scores 0 (no content);
- **tiered pyramid score** (002 §4.2): with tiers ``T_i`` (units of integer weight ``i``) and ``N_i``
  of them present, ``P = sum_i i N_i / P_max``, ``P_max = sum_{i=j+1}^{n} i |T_i| + j (X -
  sum_{i=j+1}^{n} |T_i|)``, ``j = max { i : sum_{t=i}^{n} |T_t| >= X }``. It equals the pyramid
  score whenever the weights are tier numbers (the ideal fills the top tiers first); it is
  defined for positive integer weights only (NaN otherwise).

Annotators: :func:`majority` combines several annotators' marks of one unit: present when
strictly more than half mark it (a tie is absent).
"""

from __future__ import annotations

import numpy as np


def majority(marks) -> np.ndarray:
    """Strict majority over annotators (axis 0): present when more than half mark the unit."""
    marks = np.asarray(marks, dtype=float)
    return (2 * marks.sum(axis=0) > marks.shape[0]).astype(float)


def lite_recall(present) -> float:
    """``X / U``: the share of the input's units the summary expresses."""
    present = np.asarray(present, dtype=float)
    if present.size == 0:
        raise ValueError("an input needs at least one content unit")
    return float(present.sum() / present.size)


def pyramid_score(present, weight) -> float:
    """Eq. 1: the weight expressed over the weight of an ideal summary with as many units."""
    present, weight = np.asarray(present, dtype=float), np.asarray(weight, dtype=float)
    _check(present, weight)
    x = int(round(present.sum()))
    if x == 0:
        return 0.0
    ideal = np.sort(weight)[::-1][:x].sum()
    return float((weight * present).sum() / ideal)


def tiered_score(present, weight) -> float:
    """002 §4.2's P / P_max with tiers ``i = weight`` (positive integers; NaN otherwise)."""
    present, weight = np.asarray(present, dtype=float), np.asarray(weight, dtype=float)
    _check(present, weight)
    if not np.all(weight == np.round(weight)):
        return float("nan")
    x = int(round(present.sum()))
    if x == 0:
        return 0.0
    n = int(weight.max())
    size = np.array([0] + [int((weight == i).sum()) for i in range(1, n + 1)])      # |T_i|, i = 1..n
    above = np.array([size[i:].sum() for i in range(n + 1)] + [0])                 # sum_{t>=i} |T_t|
    j = max(i for i in range(1, n + 1) if above[i] >= x)
    p_max = sum(i * size[i] for i in range(j + 1, n + 1)) + j * (x - above[j + 1])
    return float(sum(i * (present[weight == i]).sum() for i in range(1, n + 1)) / p_max)


def _check(present: np.ndarray, weight: np.ndarray) -> None:
    if present.shape != weight.shape or present.size == 0:
        raise ValueError("present and weight need one value per unit, and at least one unit")
    if not np.all(np.isin(present, (0.0, 1.0))):
        raise ValueError("present must be 0 or 1")
    if not np.all(np.isfinite(weight) & (weight > 0)):
        raise ValueError("weights must be finite and > 0")
