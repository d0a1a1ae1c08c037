"""ci: a confidence interval of each correlation (table ``confidence_intervals``).

The analysis (:func:`ci_analysis`), its parameters (:class:`IntervalParams`) and the function
the workers run (:func:`evaluate_ci`: Fisher's interval, a bootstrap, or a bootstrap that also
re-draws the annotators).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from metaeval.analyses import annotators, stats
from metaeval.analyses.stats import protocols, vocabulary
from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine import bookkeeping
from metaeval.runs.engine import clusters as clustering
from metaeval.runs.metrics.correlations import aggregated, calibrated_epsilons, correlation_tasks, partial_protocol
from metaeval.runs.engine.parameters import (DEFAULT_AGGREGATE, DEFAULT_SYSTEM_INPUTS, Params, aggregate_setting,
                                      check_aggregate, check_annotator_resampling, check_k, check_parametric,
                                      check_partial, check_system_inputs, clusters_setting)
from metaeval.runs.engine.selection import control_of
from metaeval.runs.engine.runner import Analysis
from metaeval.runs.engine.selection import Scope


@dataclass(frozen=True)
class IntervalParams(Params):
    """ci: a confidence interval of each correlation (table ``confidence_intervals``); ``k`` and
    ``seed`` None for Fisher's interval."""

    table: ClassVar[str] = "confidence_intervals"
    method: str
    alpha: float
    k: int | None
    seed: int | None
    system_inputs: str = DEFAULT_SYSTEM_INPUTS
    resample_annotators: str | None = None
    aggregate: str = aggregate_setting()
    resample_clusters: str | None = clusters_setting()
    #: ``--replicates resample`` (None: the mean over a metric's runs, recorded as before the runs)
    replicates: str | None = clusters_setting()


def ci_analysis(scope: Scope, method: str, k: int, alpha: float, seed: int,
                system_inputs: str = DEFAULT_SYSTEM_INPUTS, resample_annotators: str | None = None,
                aggregate: str = DEFAULT_AGGREGATE, resample_clusters: str | None = None,
                replicates: str | None = None) -> Analysis:
    """The ci analysis; ``resample_clusters``: the bootstrap draws the clusters of inputs that
    attribute names (:mod:`metaeval.analyses.stats.clusters`), not single inputs; ``replicates``
    "resample": each cell's runs of the metric drawn again in every resample
    (:mod:`metaeval.analyses.score_runs`; None: the mean over the runs)."""
    if replicates is not None:
        _check_replicates(scope, method, resample_annotators, aggregate, resample_clusters)
    if method not in vocabulary.CI_METHODS:
        raise WarehouseError(f"unknown CI method {method!r}; choose from {', '.join(vocabulary.CI_METHODS)}")
    check_parametric(scope.coefficients, method, "fisher", "Fisher's interval has no constants for")
    resampled = method != "fisher"
    if resampled:
        check_k(k, alpha, "interval")
    if resample_annotators is not None:
        check_annotator_resampling(scope.coefficients, resample_annotators, resampled,
                                   "a bootstrap method (boot-systems, boot-inputs, boot-both)")
    check_partial(scope.coefficients, resample_annotators=resample_annotators)
    check_aggregate(aggregate, scope.levels, scope.coefficients, resample_annotators=resample_annotators)
    clustering.check_clustered(resample_clusters, method, resample_annotators, scope.coefficients)
    params = IntervalParams(method, alpha, k if resampled else None, seed if resampled else None,
                            check_system_inputs(system_inputs), resample_annotators, aggregate, resample_clusters,
                            replicates)
    return Analysis("ci", params, ("metric", "level", "coefficient"), correlation_tasks(scope), evaluate_ci)


# --- evaluation (pure, runs in worker processes) ---------------------------------------------
def evaluate_ci(arrays, level, coefficient, method, alpha, k, seed, system_inputs=DEFAULT_SYSTEM_INPUTS,
                resample_annotators=None, aggregate=DEFAULT_AGGREGATE, resample_clusters=None, replicates=None) -> dict:
    from metaeval.analyses.stats import summed

    arrays, labels = clustering.split(arrays, resample_clusters)
    if replicates is not None:
        return _evaluate_runs_ci(arrays, level, coefficient, method, alpha, k, seed, system_inputs)
    if isinstance(arrays[0], summed.Summed):   # a system-level measure's statistics (runs/engine/system_level.py)
        r = summed.bootstrap_ci(*arrays, coefficient, method.removeprefix("boot-"), k=k, alpha=alpha, seed=seed)
        return {"estimate": bookkeeping.as_float(r.estimate), "lower": bookkeeping.as_float(r.lower),
                "upper": bookkeeping.as_float(r.upper), "n_valid": int(np.count_nonzero(~np.isnan(r.samples))),
                "conventions": {**r.conventions, "system_inputs": system_inputs}}
    if resample_annotators is not None:
        return _evaluate_annotator_ci(arrays, level, coefficient, method, alpha, k, seed, system_inputs,
                                      resample_annotators)
    if control_of(coefficient) is not None:
        return _evaluate_partial_ci(arrays, level, coefficient, method, alpha, k, seed, system_inputs)
    (X, Z), paired, conv, kept = protocols.apply(arrays, level, system_inputs)
    coef, conv_aggregate = aggregated(coefficient, aggregate)
    if method == "fisher":
        r = stats.fisher_ci(X, Z, level, coef, alpha=alpha)
        n_valid = None
    else:
        if labels is not None and not paired:
            raise WarehouseError(Message(Argument("resample_clusters", resample_clusters), " draws the metric's and "
                                         "the human's inputs together; with inputs the human did not judge, use ",
                                         Argument("system_inputs", "judged")))
        r = stats.bootstrap_ci(X, Z, level, coef, method.removeprefix("boot-"), k=k, alpha=alpha, seed=seed,
                               paired_inputs=paired, clusters=clustering.kept(labels, kept))
        n_valid = int(np.count_nonzero(~np.isnan(r.samples)))
    return {"estimate": bookkeeping.as_float(r.estimate), "lower": bookkeeping.as_float(r.lower), "upper": bookkeeping.as_float(r.upper),
            "n_valid": n_valid,
            "conventions": {**r.conventions, **conv, **conv_aggregate, **clustering.conventions(resample_clusters),
                            **calibrated_epsilons([X, Z], level, coefficient, ["epsilon"])}}


def _evaluate_partial_ci(arrays, level, coefficient, method, alpha, k, seed, system_inputs) -> dict:
    """The interval of a partial coefficient (analyses.stats.partial): Fisher's with n reduced by
    g - 1, or a bootstrap re-centring every resample within its groups."""
    from metaeval.analyses.stats import partial

    (X, Z), groups, conv = partial_protocol(arrays, level, system_inputs, coefficient)
    if method == "fisher":
        r = partial.partial_fisher_ci(X, Z, groups, coefficient, alpha=alpha)
        n_valid = None
    else:
        r = partial.partial_bootstrap_ci(X, Z, groups, coefficient, method.removeprefix("boot-"), k=k, alpha=alpha,
                                         seed=seed)
        n_valid = int(np.count_nonzero(~np.isnan(r.samples)))
    return {"estimate": bookkeeping.as_float(r.estimate), "lower": bookkeeping.as_float(r.lower),
            "upper": bookkeeping.as_float(r.upper), "n_valid": n_valid,
            "conventions": {**r.conventions, "coefficient": coefficient, **conv}}


REPLICATES = ("mean", "resample")


def _check_replicates(scope: Scope, method: str, resample_annotators, aggregate, resample_clusters) -> None:
    """``--replicates resample``: a bootstrap of plain coefficients, alone of the second stages."""
    option = Argument("replicates", "resample")
    if method == "fisher":
        raise WarehouseError(Message(option, " draws the runs inside the resamples: choose a bootstrap ",
                                     Argument("method", "boot-both")))
    for name, value, default in (("resample_annotators", resample_annotators, None), ("aggregate", aggregate,
                                 DEFAULT_AGGREGATE), ("resample_clusters", resample_clusters, None)):
        if value != default:
            raise WarehouseError(Message(option, " and ", Argument(name, value), " cannot be combined"))
    if partial := [c for c in scope.coefficients if control_of(c) is not None]:
        raise WarehouseError(Message(option, f" applies to plain coefficients, not the partial {partial[0]}"))


def _evaluate_runs_ci(arrays, level, coefficient, method, alpha, k, seed, system_inputs) -> dict:
    """A bootstrap CI whose resamples also draw each cell's runs of the metric again."""
    from metaeval.analyses import score_runs
    from metaeval.analyses.stats import summed

    if isinstance(arrays[0], summed.Summed) or len(arrays) != 3:
        raise WarehouseError(Message(Argument("replicates", "resample"), " draws a metric's runs per cell; a "
                                     "system-level measure has none"))
    X, Z, R = arrays
    (X, Z), paired, conv, kept = protocols.apply([X, Z], level, system_inputs)
    if kept is not None:
        R = R[:, kept]
    if not paired:
        raise WarehouseError(Message(Argument("replicates", "resample"), " draws the metric's and the human's "
                                     "inputs together; with inputs the human did not judge, use ",
                                     Argument("system_inputs", "judged")))
    r = score_runs.run_bootstrap_ci(X, R, Z, level, coefficient, method.removeprefix("boot-"), k=k, alpha=alpha,
                                    seed=seed)
    return {"estimate": bookkeeping.as_float(r.estimate), "lower": bookkeeping.as_float(r.lower),
            "upper": bookkeeping.as_float(r.upper), "n_valid": int(np.count_nonzero(~np.isnan(r.samples))),
            "conventions": {**r.conventions, **conv}}


def _evaluate_annotator_ci(arrays, level, coefficient, method, alpha, k, seed, system_inputs, how) -> dict:
    """A bootstrap CI whose resamples also re-draw the annotators (analyses.annotators)."""
    X, Z, A = arrays
    (X, Z), paired, conv, kept = protocols.apply([X, Z], level, system_inputs)
    if kept is not None:
        A = A[:, kept]
    if not paired:
        raise ValueError(Message(Argument("resample_annotators"), " draws the metric's and the human's inputs "
                                 "together; with inputs the human did not judge, use ",
                                 Argument("system_inputs", "judged")))
    r = annotators.annotator_bootstrap_ci(X, A, level, coefficient, method.removeprefix("boot-"), k=k, alpha=alpha,
                                          seed=seed, annotators=how, Z=Z)
    return {"estimate": bookkeeping.as_float(r.estimate), "lower": bookkeeping.as_float(r.lower), "upper": bookkeeping.as_float(r.upper),
            "n_valid": int(np.count_nonzero(~np.isnan(r.samples))), "conventions": {**r.conventions, **conv}}


#: The coefficients whose interval reads as a share of pairs ranked wrongly, D / P = (1 - tau) / 2
#: (exact for Kendall's tau-a and tau-b without ties; with ties approximate).
PAIRS_WRONG_COEFFICIENTS = ("kendall", "kendall-a")


def with_pairs_wrong(frame):
    """``frame`` (rows of ``confidence_intervals``) with ``pairs_wrong_lower`` /
    ``pairs_wrong_upper``: a Kendall interval [l, u] read as the interval [(1 - u) / 2, (1 - l) / 2]
    of the share of pairs (of systems, at the system level) ranked otherwise than by the humans
    (Deutsch, Dror & Roth 2021, section 6: "9-54%"); NaN for the other coefficients or an
    undefined bound. Computed when shown, not stored."""
    from metaeval.analyses.stats import proportions

    if frame.empty or not {"coefficient", "lower", "upper"} <= set(frame.columns):
        return frame
    bounds = [proportions.pairs_wrong(lo, up) if c in PAIRS_WRONG_COEFFICIENTS and lo == lo and up == up
              else (np.nan, np.nan)
              for c, lo, up in zip(frame["coefficient"], frame["lower"].astype(float), frame["upper"].astype(float))]
    return frame.assign(pairs_wrong_lower=[b[0] for b in bounds], pairs_wrong_upper=[b[1] for b in bounds])
