"""correlate: the correlation of each metric with the human judgment (table ``correlations``).

The analysis (:func:`correlate_analysis`), its parameters (:class:`CorrelateParams`) and the
function the workers run (:func:`evaluate_correlation`); also the evaluation helpers the other
correlation families share (:func:`protocol`, :func:`calibrated_epsilons`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from metaeval.analyses import stats
from metaeval.analyses.stats import _validation, protocols, vocabulary
from metaeval.analyses.stats.results import NAN_POLICY
from metaeval.runs import bookkeeping
from metaeval.runs.parameters import DEFAULT_SYSTEM_INPUTS, Params, check_system_inputs
from metaeval.runs.runner import Analysis, Task
from metaeval.runs.selection import Scope


@dataclass(frozen=True)
class CorrelateParams(Params):
    """correlate: the correlation of each metric with the human (table ``correlations``)."""

    table: ClassVar[str] = "correlations"
    system_inputs: str = DEFAULT_SYSTEM_INPUTS


def correlation_tasks(scope: Scope) -> list[Task]:
    return [Task({"metric": m, "level": lv, "coefficient": c}, (m, scope.human))
            for m in scope.metrics for lv in scope.levels for c in scope.coefficients]


def correlate_analysis(scope: Scope, system_inputs: str = DEFAULT_SYSTEM_INPUTS) -> Analysis:
    params = CorrelateParams(check_system_inputs(system_inputs))
    return Analysis("correlate", params, ("metric", "level", "coefficient"), correlation_tasks(scope),
                    evaluate_correlation)


# --- evaluation (pure, runs in worker processes) ---------------------------------------------
def protocol(arrays, level: str, system_inputs: str) -> tuple[list[np.ndarray], bool, dict]:
    """The arrays as ``system_inputs`` has them at ``level``, whether a system-level bootstrap
    pairs the inputs, and the conventions to record (:func:`protocols.apply`)."""
    arrays, paired, conv, _ = protocols.apply(arrays, level, system_inputs)
    return arrays, paired, conv


def evaluate_correlation(arrays, level, coefficient, system_inputs=DEFAULT_SYSTEM_INPUTS) -> dict:
    (X, Z), _, conv = protocol(arrays, level, system_inputs)
    conventions = {"level": level, "coefficient": coefficient, "nan_policy": NAN_POLICY, **conv}
    coef = _validation.coefficient_iv(coefficient)
    if coef.ties_variant:
        from metaeval.analyses.stats import kendall_variants

        conventions.update(kendall_variant=coef.variant, **kendall_variants.conventions(coef))
    elif coef.name in vocabulary.LEVEL_COEFFICIENTS:
        from metaeval.analyses.stats.correlation import level_module

        conventions.update(level_module(coef).conventions())
    if coef.calibrated:
        r = stats.tie_calibration(X, Z, level, coef.base_label)
        conventions["epsilon"] = bookkeeping.as_float(r.epsilon)
        return {"value": bookkeeping.as_float(r.value), "conventions": conventions}
    return {"value": bookkeeping.as_float(stats.correlate(X, Z, level, coefficient)), "conventions": conventions}


def calibrated_epsilons(arrays, level, coefficient, names) -> dict:
    """The epsilon calibrated on the data itself (of each metric array against the last, the
    human), recorded with a resampled result of a tie-calibrated coefficient."""
    coef = _validation.coefficient_iv(coefficient)
    if not coef.calibrated:
        return {}
    return {name: bookkeeping.as_float(stats.tie_calibration(A, arrays[-1], level, coef.base_label).epsilon)
            for name, A in zip(names, arrays[:-1])}
