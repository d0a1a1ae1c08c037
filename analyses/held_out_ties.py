"""Tie calibration with its threshold chosen on held-out data (Perrella et al., ACL 2024,
"Guardians of the machine translation meta-evaluation: sentinel metrics fall in!", on tie
calibration tuned on the test set).

Tie calibration (Deutsch, Foster & Freitag 2023; :func:`.stats.kendall_variants.calibrate`)
picks the metric's tie threshold epsilon that maximises acc-eq (or tau-23) on the very data the
value is then reported on. A metric with continuous scores offers a candidate threshold per pair
of scores and so gains more from that search than one with few distinct values: Perrella et al.
show the tuning favours continuous metrics. Here epsilon is chosen on a **calibration part**
and the coefficient reported on the **evaluation part** with that epsilon:

* a seeded split of the inputs (items): a random permutation of the M inputs by
  ``numpy.random.default_rng(seed)``, the first round(fraction M) (at least 1, at most M - 1)
  for calibration, the rest for evaluation (:func:`split_inputs`);
* or a whole second evaluation set (another dataset), the evaluation part being every input.

Reported beside it, on the evaluation part: the value with epsilon tuned on the evaluation part
itself (``value_on_test``, the usual protocol) and with no tie threshold (``value_untied``).
``value_on_test - value`` is what the tuning on the test adds. Undefined (NaN) when no pair of the
part is valid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .stats import kendall_variants


@dataclass(frozen=True)
class HeldOutResult:
    """epsilon chosen on the calibration part and the value on the evaluation part with it; the
    epsilon and value tuned on the evaluation part; the value with epsilon 0 there."""

    epsilon: float
    value: float
    epsilon_on_test: float
    value_on_test: float
    value_untied: float


def split_inputs(n_inputs: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(calibration, evaluation) input indices, each sorted (module docstring)."""
    if n_inputs < 2:
        raise ValueError(f"a split needs at least 2 inputs; got {n_inputs}.")
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"`fraction` must be in (0, 1); got {fraction!r}.")
    order = np.random.default_rng(seed).permutation(n_inputs)
    n_cal = min(max(int(round(fraction * n_inputs)), 1), n_inputs - 1)
    return np.sort(order[:n_cal]), np.sort(order[n_cal:])


def held_out(Xc: np.ndarray, Zc: np.ndarray, Xe: np.ndarray, Ze: np.ndarray, level: str,
             variant: str = "acc23") -> HeldOutResult:
    """epsilon calibrated on (``Xc``, ``Zc``), the ``level``'s ``variant`` on (``Xe``, ``Ze``)
    with it; and the value tuned on (``Xe``, ``Ze``) itself, and at epsilon 0 there."""
    epsilon = kendall_variants.calibrate(Xc, Zc, level, variant).epsilon
    value = np.nan if np.isnan(epsilon) else kendall_variants.level_value(Xe, Ze, level, variant, epsilon)
    on_test = kendall_variants.calibrate(Xe, Ze, level, variant)
    untied = kendall_variants.level_value(Xe, Ze, level, variant, 0.0)
    return HeldOutResult(float(epsilon), float(value), float(on_test.epsilon), float(on_test.value), float(untied))


def conventions(variant: str) -> dict:
    """What a row records about the protocol."""
    return {"calibration": "epsilon maximising the coefficient on the calibration part over {0} U {|x_i - x_j|} "
                           "(every pair; the smallest of equal maxima), then the coefficient on the evaluation part "
                           "with that epsilon (Perrella et al. 2024: tuning on the test favours continuous metrics)",
            "split": "numpy default_rng(seed).permutation of the inputs; the first round(fraction M) calibrate",
            "value_on_test": "epsilon tuned on the evaluation part itself (the usual, optimistic protocol)",
            "variant": variant}
