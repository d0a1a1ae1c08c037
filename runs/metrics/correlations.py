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
from metaeval.analyses.stats import validation, protocols, vocabulary
from metaeval.analyses.stats.results import NAN_POLICY
from metaeval.runs.engine import bookkeeping
from metaeval.runs.engine.parameters import (DEFAULT_AGGREGATE, DEFAULT_SYSTEM_INPUTS, Params, aggregate_conventions,
                                      aggregate_setting,
                                      check_aggregate, check_system_inputs)
from metaeval.runs.engine.runner import Analysis, Task
from metaeval.runs.engine.selection import Scope, attribute_control, control_of


@dataclass(frozen=True)
class CorrelateParams(Params):
    """correlate: the correlation of each metric with the human (table ``correlations``)."""

    table: ClassVar[str] = "correlations"
    system_inputs: str = DEFAULT_SYSTEM_INPUTS
    aggregate: str = aggregate_setting()


def correlation_tasks(scope: Scope) -> list[Task]:
    """One task per metric, level and coefficient; a partial coefficient controlling for an
    attribute reads its labels too (``Task.control``)."""
    return [Task({"metric": m, "level": lv, "coefficient": c}, (m, scope.human), control=attribute_control(c))
            for m in scope.metrics for lv in scope.levels for c in scope.coefficients]


def correlate_analysis(scope: Scope, system_inputs: str = DEFAULT_SYSTEM_INPUTS,
                       aggregate: str = DEFAULT_AGGREGATE) -> Analysis:
    params = CorrelateParams(check_system_inputs(system_inputs),
                             check_aggregate(aggregate, scope.levels, scope.coefficients))
    return Analysis("correlate", params, ("metric", "level", "coefficient"), correlation_tasks(scope),
                    evaluate_correlation)


# --- evaluation (pure, runs in worker processes) ---------------------------------------------
def protocol(arrays, level: str, system_inputs: str) -> tuple[list[np.ndarray], bool, dict]:
    """The arrays as ``system_inputs`` has them at ``level``, whether a system-level bootstrap
    pairs the inputs, and the conventions to record (:func:`protocols.apply`)."""
    arrays, paired, conv, _ = protocols.apply(arrays, level, system_inputs)
    return arrays, paired, conv


def partial_protocol(arrays, level: str, system_inputs: str, coefficient: str) -> tuple[list[np.ndarray], object, dict]:
    """A partial coefficient's task arrays (metrics..., the human, then the control attribute's
    labels unless it controls for the system) as :func:`protocol` has them, the ``groups``
    argument of :mod:`analyses.stats.partial` (``"system"``, or the labels restricted alike) and
    the conventions to record."""
    from metaeval.analyses.stats import partial

    labels = arrays[-1] if attribute_control(coefficient) is not None else None
    matrices = list(arrays[:-1]) if labels is not None else list(arrays)
    matrices, _, conv, kept = protocols.apply(matrices, level, system_inputs)
    if labels is not None and kept is not None:
        labels = labels[:, kept]
    return matrices, partial.SYSTEM if labels is None else labels, conv


def evaluate_partial_correlation(arrays, level, coefficient, system_inputs) -> dict:
    """correlate's row of a partial coefficient: its value; n, g, df, t and the two-sided p-value
    in the conventions."""
    from metaeval.analyses.stats import partial

    (X, Z), groups, conv = partial_protocol(arrays, level, system_inputs, coefficient)
    r = partial.partial_correlation(X, Z, groups, coefficient)
    return {"value": bookkeeping.as_float(r.value),
            "conventions": {**r.conventions, "coefficient": coefficient, **conv,
                            "t": bookkeeping.as_float(r.statistic), "p_value": bookkeeping.as_float(r.pvalue)}}


def aggregated(coefficient: str, aggregate: str = DEFAULT_AGGREGATE):
    """What the statistics core takes as the coefficient: its label for the mean (as before), the
    :class:`~metaeval.analyses.stats.validation.Coefficient` with ``aggregate`` else; and the
    conventions to record (``aggregate`` when not the mean)."""
    if aggregate == DEFAULT_AGGREGATE:
        return coefficient, {}
    return validation.aggregate_iv(coefficient, aggregate), aggregate_conventions(aggregate)


def evaluate_correlation(arrays, level, coefficient, system_inputs=DEFAULT_SYSTEM_INPUTS,
                         aggregate=DEFAULT_AGGREGATE) -> dict:
    if control_of(coefficient) is not None:
        return evaluate_partial_correlation(arrays, level, coefficient, system_inputs)
    (X, Z), _, conv = protocol(arrays, level, system_inputs)
    coefficient_in, conv_aggregate = aggregated(coefficient, aggregate)
    conventions = {"level": level, "coefficient": coefficient, "nan_policy": NAN_POLICY, **conv, **conv_aggregate}
    coef = validation.coefficient_iv(coefficient)
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
    return {"value": bookkeeping.as_float(stats.correlate(X, Z, level, coefficient_in)), "conventions": conventions}


def calibrated_epsilons(arrays, level, coefficient, names) -> dict:
    """The epsilon calibrated on the data itself (of each metric array against the last, the
    human), recorded with a resampled result of a tie-calibrated coefficient."""
    coef = validation.coefficient_iv(coefficient)
    if not coef.calibrated:
        return {}
    return {name: bookkeeping.as_float(stats.tie_calibration(A, arrays[-1], level, coef.base_label).epsilon)
            for name, A in zip(names, arrays[:-1])}
