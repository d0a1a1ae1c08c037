"""The ranking analyses (:mod:`analyses.ranking`) over the warehouse, persisted like the others.

- ``accuracy`` (tables ``pairwise_accuracy``, ``input_significance``) and ``systems-agreement``
  (``system_agreement``) are runner :class:`~metaeval.runs.engine.runner.Analysis` objects: one task per
  result key, computed from the metric's and the human's cells, incremental by fingerprint.
- ``winners`` and ``replicability`` compute nothing statistical: they read the latest
  ``hypothesis_tests`` rows written by ``metaeval compare`` (never recomputing a test), check
  they were computed on the cells the warehouse holds now, and derive their rows. A row's
  fingerprint covers the test rows and cells it was derived from; a repeated command whose
  fingerprints equal the latest rows' writes nothing.

Every command is a row of ``analysis_runs``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from metaeval.analyses import close_pairs, conclusions, ranking, stats
from metaeval.analyses.replicability import PC_METHODS, partial_conjunction
from metaeval.analyses import stored_tests as st
from metaeval.analyses.stats.results import NAN_POLICY
from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError
from metaeval.analyses.stats import vocabulary
from metaeval.runs.engine import bookkeeping, parameters, selection, system_level
from metaeval.runs.metrics import comparisons, correlations, derived
from metaeval.runs.engine.parameters import Params, setting
from metaeval.runs.engine.runner import Analysis, RunSummary, Scope, Task

ALTERNATIVES = vocabulary.ALTERNATIVES
#: How the per-input correlations' p-values are computed (accuracy --pvalue): scipy's defaults (t), or
#: R's cor.test for Spearman (as89: exact for n <= 9, Edgeworth series above; Louis & Nenkova used R).
PVALUE_METHODS = ("t", "as89")


# --- argument checks (before anything is written) ---------------------------------------------
def _alpha(alpha: float) -> float:
    if not 0 < alpha < 1:
        raise WarehouseError(Message(Argument("alpha"), f" must lie strictly between 0 and 1; got {alpha}"))
    return float(alpha)


def _choice(value: str, valid: Sequence[str], what: str) -> str:
    if value not in valid:
        raise WarehouseError(f"unknown {what} {value!r}; choose from {', '.join(valid)}")
    return value


# --- accuracy, input significance, system agreement: runner analyses ---------------------------
@dataclass(frozen=True)
class AccuracyParams(Params):
    """Pairwise accuracy (table ``pairwise_accuracy``)."""

    table: ClassVar[str] = "pairwise_accuracy"
    metric_tolerance: float = 0.0
    human_tolerance: float = 0.0
    system_inputs: str = parameters.DEFAULT_SYSTEM_INPUTS
    aggregate: str = parameters.aggregate_setting()


@dataclass(frozen=True)
class DeltaBinParams(Params):
    """Pairwise accuracy and tau within quantile bins of the human difference (table ``delta_bin_accuracy``)."""

    table: ClassVar[str] = "delta_bin_accuracy"
    bins: int
    metric_tolerance: float = 0.0
    human_tolerance: float = 0.0
    system_inputs: str = parameters.DEFAULT_SYSTEM_INPUTS


@dataclass(frozen=True)
class SoftAccuracyParams(Params):
    """Soft pairwise accuracy (table ``soft_pairwise_accuracy``)."""

    table: ClassVar[str] = "soft_pairwise_accuracy"
    k: int
    seed: int
    aggregate: str = parameters.aggregate_setting()


@dataclass(frozen=True)
class SignificanceParams(Params):
    """The inputs whose correlation with the human is significant (table ``input_significance``)."""

    table: ClassVar[str] = "input_significance"
    alpha: float
    alternative: str
    pvalue: str = "t"


# --- winners and replicability: derived from stored tests, written by their own loop (write_new) -----------
@dataclass(frozen=True)
class WinnersParams(Params):
    """Winners and significance clusters (table ``winners``), read from the latest
    ``hypothesis_tests`` of ``method``, ``alternative``, ``correction`` and ``correction_group``."""

    table: ClassVar[str] = "winners"
    method: str
    alternative: str
    correction: str
    correction_group: str
    alpha: float
    cluster_rule: str
    aggregate: str = parameters.aggregate_setting()


@dataclass(frozen=True)
class ReplicabilityParams(Params):
    """Partial-conjunction replicability across datasets (table ``replicability``) of the tests of
    ``method`` and ``alternative``; ``pc_methods`` (each a key of the rows) recorded with the run."""

    table: ClassVar[str] = "replicability"
    method: str
    alternative: str
    alpha: float
    pc_methods: tuple[str, ...] = setting((), column=False, argument=False)


@dataclass(frozen=True)
class SystemAgreementParams(Params):
    """The system pairs significant under the metric and/or the human (table ``system_agreement``);
    ``k`` and ``seed`` None for a parametric test."""

    table: ClassVar[str] = "system_agreement"
    test: str
    alpha: float
    k: int | None
    seed: int | None = setting(None)


def accuracy_analysis(scope: Scope, metric_tolerance: float = 0.0, human_tolerance: float = 0.0,
                      system_inputs: str = parameters.DEFAULT_SYSTEM_INPUTS,
                      aggregate: str = parameters.DEFAULT_AGGREGATE) -> Analysis:
    """Pairwise accuracy of every metric at the scope's levels (system, micro); at the system
    level the system means (``aggregate`` "median": medians, the system level alone) average the
    inputs ``system_inputs`` says (runner's protocol)."""
    for name, value in (("metric_tolerance", metric_tolerance), ("human_tolerance", human_tolerance)):
        if not (math.isfinite(value) and value >= 0):
            raise WarehouseError(Message(Argument(name), f" must be a finite number >= 0; got {value}"))
    params = AccuracyParams(float(metric_tolerance), float(human_tolerance),
                            parameters.check_system_inputs(system_inputs),
                            parameters.check_aggregate(aggregate, scope.levels, ()))
    tasks = [Task({"metric": m, "level": lv}, (m, scope.human)) for m in scope.metrics for lv in scope.levels]
    return Analysis("accuracy", params, ("metric", "level"), tasks, evaluate_accuracy, evaluate_keys=("level",))


def delta_bins_analysis(scope: Scope, bins: int, metric_tolerance: float = 0.0,
                        human_tolerance: float = 0.0, system_inputs: str = parameters.DEFAULT_SYSTEM_INPUTS) -> Analysis:
    """Pairwise accuracy and tau of every metric within ``bins`` quantile bins of the human
    difference of the system pairs (table ``delta_bin_accuracy``, one row per metric and bin)."""
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        raise WarehouseError(Message(Argument("delta_bins"), f" must be a positive integer; got {bins!r}"))
    base = accuracy_analysis(scope, metric_tolerance, human_tolerance, system_inputs).params
    params = DeltaBinParams(bins, base.metric_tolerance, base.human_tolerance, base.system_inputs)
    tasks = [Task({"metric": m, "bin": b}, (m, scope.human)) for m in scope.metrics for b in range(bins)]
    return Analysis("accuracy", params, ("metric", "bin"), tasks, evaluate_delta_bin, evaluate_keys=("bin",))


def evaluate_delta_bin(arrays, bin, bins, metric_tolerance, human_tolerance,  # noqa: A002
                       system_inputs=parameters.DEFAULT_SYSTEM_INPUTS) -> dict:
    (X, Z), _, conv = correlations.protocol(arrays, "system", system_inputs)
    r = close_pairs.accuracy_by_delta(X, Z, bins, metric_tolerance=metric_tolerance, human_tolerance=human_tolerance)
    return {"low": bookkeeping.as_float(r.low[bin]), "high": bookkeeping.as_float(r.high[bin]), "pairs": int(r.pairs[bin]),
            "accuracy": bookkeeping.as_float(r.accuracy[bin]), "kendall": bookkeeping.as_float(r.kendall[bin]),
            "conventions": {**r.conventions, **conv}}


def soft_accuracy_analysis(scope: Scope, k: int = parameters.DEFAULT_K, seed: int = 4,
                           aggregate: str = parameters.DEFAULT_AGGREGATE) -> Analysis:
    """Soft pairwise accuracy of every metric (Thompson et al. 2024; table soft_pairwise_accuracy);
    ``aggregate`` "median": the permutation tests of the systems' medians."""
    if k < 1 or seed < 0:
        raise WarehouseError(Message(Argument("k"), " must be at least 1 and ", Argument("seed"),
                                     f" non-negative; got k={k}, seed={seed}"))
    params = SoftAccuracyParams(int(k), int(seed), parameters.check_aggregate(aggregate, ("system",), ()))
    tasks = [Task({"metric": m}, (m, scope.human)) for m in scope.metrics]
    return Analysis("accuracy", params, ("metric",), tasks, evaluate_soft_accuracy, evaluate_keys=())


def evaluate_soft_accuracy(arrays, k, seed, aggregate=parameters.DEFAULT_AGGREGATE) -> dict:
    from metaeval.analyses import stats

    X, Z = arrays
    r = stats.soft_pairwise_accuracy(X, Z, k=k, seed=seed, aggregate=aggregate)
    n = r.systems.size
    return {"spa": bookkeeping.as_float(r.spa), "pairs": n * (n - 1) // 2, "systems_used": int(n),
            "inputs_used": int(r.inputs.size),
            "conventions": {
                "definition": "SPA = 1 - mean over system pairs i < k of |p_human - p_metric|; p = one-sided "
                              "paired permutation p-value of 'i better than k' over the inputs, "
                              "#{b: sum_j e_bj d_j >= sum_j d_j} / K (no +1), d_j = s_ij - s_kj",
                "permutations": "K sign vectors e_b drawn as mt-metrics-eval pce.compute_pairwise_p_values: "
                                "rint(default_rng(seed).random((K, M), float32)) -> 2m - 1; the same for "
                                "human and metric",
                "arithmetic": "float64 sums of the flipped differences (mt-metrics-eval: float32 sums)",
                "nan_policy": "systems without any pair of values dropped; then inputs where a used system "
                              "lacks a metric or human value dropped",
                "reference": "Thompson et al. 2024 (WMT24 metrics task); mt-metrics-eval stats.PairwiseConfidenceError",
                **_aggregate_convention(aggregate, "the statistic of each pair's test: the difference of the two "
                                                   "systems' {} (metric) or {} (human) over the inputs, the inputs "
                                                   "swapped as flipped".format(
                                                       *(f"{a}s" for a in parameters.aggregate_sides(aggregate)))),
            }}


def _aggregate_convention(aggregate: str, text: str | None = None) -> dict:
    """What a row of a median records (nothing for the mean: its rows as before the option)."""
    if aggregate == parameters.DEFAULT_AGGREGATE:
        return {}
    metric, human = parameters.aggregate_sides(aggregate)
    return {**parameters.aggregate_conventions(aggregate),
            "aggregate_rule": text or f"a system's score: the metric's {metric} over its inputs, the human's {human}"}


def significance_analysis(scope: Scope, alpha: float = 0.05, alternative: str = "two-sided",
                          pvalue: str = "t") -> Analysis:
    """Per metric and coefficient, the inputs whose correlation with the human is significant;
    ``pvalue``: "t" (scipy's), or "as89" (R's cor.test for Spearman, as Louis & Nenkova)."""
    _choice(pvalue, PVALUE_METHODS, "pvalue")
    if pvalue == "as89" and any(c != "spearman" for c in scope.coefficients):
        raise WarehouseError(Message(Argument("pvalue", pvalue), " (R's cor.test, AS 89) is Spearman's p-value: give ",
                                     Argument("coefficients", ["spearman"])))
    params = SignificanceParams(_alpha(alpha), _choice(alternative, ALTERNATIVES, "alternative"), pvalue)
    tasks = [Task({"metric": m, "coefficient": c}, (m, scope.human)) for m in scope.metrics for c in scope.coefficients]
    return Analysis("accuracy", params, ("metric", "coefficient"), tasks, evaluate_significance,
                    evaluate_keys=("coefficient",))


def agreement_analysis(scope: Scope, test: str, alpha: float = 0.05, k: int = parameters.DEFAULT_K, seed: int = parameters.DEFAULT_SEED) -> Analysis:
    """Per metric, the system pairs whose difference is significant under the metric and/or the human."""
    _choice(test, ranking.PAIR_TESTS, "test")
    if k < 1 or seed < 0:
        raise WarehouseError(Message(Argument("k"), " must be at least 1 and ", Argument("seed"),
                                     f" non-negative; got k={k}, seed={seed}"))
    resampled = test == "permutation"
    if resampled:
        parameters.check_k(k, alpha, "test")
    params = SystemAgreementParams(test, _alpha(alpha), k if resampled else None, seed if resampled else None)
    tasks = [Task({"metric": m}, (m, scope.human)) for m in scope.metrics]
    return Analysis("systems-agreement", params, ("metric",), tasks, evaluate_agreement, evaluate_keys=())


def evaluate_accuracy(arrays, level, metric_tolerance, human_tolerance,
                      system_inputs=parameters.DEFAULT_SYSTEM_INPUTS, aggregate=parameters.DEFAULT_AGGREGATE) -> dict:
    (X, Z), _, conv = correlations.protocol(arrays, "system" if level == "system" else level, system_inputs)
    r = ranking.pairwise_accuracy(X, Z, level, metric_tolerance=metric_tolerance, human_tolerance=human_tolerance,
                                  aggregate=aggregate)
    return {"accuracy": bookkeeping.as_float(r.accuracy), "pairs": r.pairs, "agree": r.agree, "disagree": r.disagree,
            "flipped": r.flipped, "metric_ties": r.metric_ties, "human_ties": r.human_ties,
            "both_ties": r.both_ties, "conventions": {**r.conventions, **conv, **_aggregate_convention(aggregate)}}


def evaluate_significance(arrays, coefficient, alpha, alternative, pvalue="t") -> dict:
    X, Z = arrays
    r = ranking.input_significance(X, Z, coefficient, alpha, alternative, pvalue=pvalue)
    return {"n_defined": r.n_defined, "n_significant": r.n_significant,
            "percent_significant": r.percent_significant, "min_significant": bookkeeping.as_float(r.min_significant),
            "max_significant": bookkeeping.as_float(r.max_significant), "conventions": dict(r.conventions)}


def evaluate_agreement(arrays, test, alpha, k, seed) -> dict:
    X, Z = arrays
    r = ranking.system_agreement(X, Z, test, alpha, k=k, seed=seed)
    return {"pairs": r.pairs, "same": r.same, "opposite": r.opposite, "metric_only": r.metric_only,
            "human_only": r.human_only, "neither": r.neither, "agreement": bookkeeping.as_float(r.agreement),
            "metric_significant": r.same + r.opposite + r.metric_only,
            "human_significant": r.same + r.opposite + r.human_only, "conventions": dict(r.conventions)}


# --- winners and significance clusters ------------------------------------------------------------
def stored_tests(rows: pd.DataFrame, method: str, correction: str, group: str,
                 alternative: str | None = None) -> st.StoredTests:
    """The conclusion layer's reading (:class:`metaeval.analyses.stored_tests.StoredTests`) of
    hypothesis_tests rows of one ``method``, ``correction`` and correction ``group``: families of
    one level and coefficient (and one metric_a for the group "metric")."""
    return st.StoredTests.from_frame(rows, formula=st.pvalue_formula(method), correction=correction,
                                     family_keys=st.compare_family_keys(group), alternative=alternative)


def _winners_choices(method: str, alternative: str, correction: str, group: str, cluster_rule: str) -> None:
    for value, choices, what in ((method, vocabulary.TEST_METHODS, "test method"), (alternative, ALTERNATIVES, "alternative"),
                                 (correction, vocabulary.CORRECTIONS, "correction"),
                                 (group, vocabulary.CORRECTION_GROUPS, "correction group"),
                                 (cluster_rule, vocabulary.CLUSTER_RULES, "cluster rule")):
        _choice(value, choices, what)


def run_winners(wh: Store, scope: Scope, method: str = "perm-both", alternative: str = parameters.DEFAULT_ALTERNATIVE,
                correction: str = parameters.DEFAULT_CORRECTION, group: str = parameters.DEFAULT_CORRECTION_GROUP,
                alpha: float = 0.05, force: bool = False,
                cluster_rule: str = parameters.DEFAULT_CLUSTER_RULE,
                aggregate: str = parameters.DEFAULT_AGGREGATE) -> RunSummary:
    """Winners and significance clusters of the scope's metrics at each level and coefficient, from
    the latest ``hypothesis_tests`` rows of ``method``/``alternative``/``correction``/``group`` (and
    ``aggregate``: of a system's mean or median over its inputs).

    Metric a significantly beats b as :func:`analyses.ranking.pairwise_beats` reads the rows
    (p_adjusted <= ``alpha`` in the direction of the alternative; a row with an undefined delta
    or p-value decides nothing; of the two two-sided rows of a pair, the one of the metric with
    the higher correlation). The score that orders the ranking is corr(metric, human);
    ``cluster_rule`` as :func:`analyses.ranking.significance_clusters`. Metrics that cannot be
    correlated with the human (< 3 systems in common) are left out (``skipped``), as compare
    leaves them out. A metric with an undefined correlation gets status "undefined" and no rank,
    cluster or winner status; when a family of tests cannot reach its corrected level
    (:meth:`~metaeval.analyses.stored_tests.StoredTests.notes`), every row of that level and coefficient gets status
    "unresolvable" and no cluster or winner status."""
    _winners_choices(method, alternative, correction, group, cluster_rule)
    params = WinnersParams(method, alternative, correction, group, _alpha(alpha), cluster_rule,
                           parameters.check_aggregate(aggregate, scope.levels, scope.coefficients))
    coefficient_of = {c: correlations.aggregated(c, aggregate)[0] for c in scope.coefficients}
    data = system_level.for_stored_tests(wh, scope, selection.load_data(wh, scope), method)
    scope, skipped = selection.without_sparse_metrics(data, scope)
    if len(scope.metrics) < 2:
        raise WarehouseError(Message(f"ranking metrics needs at least two; the scope has {list(scope.metrics)}: "
                                     "choose two or more with ",
                                     Argument("metrics", placeholder="GLOB"), " (or ingest another metric)")
                             + "".join(f"; {reason}" for reason in skipped.values()))
    tests = derived.checked_tests(wh, data, scope, method, alternative, correction, group, aggregate)
    metrics, n = list(scope.metrics), len(scope.metrics)
    index = {m: i for i, m in enumerate(metrics)}
    frame = pd.DataFrame([{**t, "metric_a": a, "metric_b": b, "level": lv, "coefficient": c}
                          for (a, b, lv, c), t in tests.items()])
    planned = []
    for lv in scope.levels:
        for c in scope.coefficients:
            part = frame[(frame["level"] == lv) & (frame["coefficient"] == c)]
            scores = [stats.correlate(*data.restrict((m, scope.human))[0], lv, coefficient_of[c]) for m in metrics]
            read = stored_tests(part, method, correction, group, alternative)
            unresolved = read.notes(alpha)
            clusters, beats, tested = conclusions.clusters(
                scores, part["metric_a"].map(index), part["metric_b"].map(index), part["delta"].astype(float),
                read.significant(alpha), alternative=alternative,
                rule=cluster_rule, names=metrics, note="; ".join(unresolved) or None)
            fingerprint = derived.digest([lv, c, alpha, cluster_rule,
                                   *[(a, b, t["fingerprint"], t["p_adjusted"], t["delta"])
                                     for (a, b, tl, tc), t in sorted(tests.items(), key=lambda kv: kv[0])
                                     if (tl, tc) == (lv, c)]])
            conventions = _winners_conventions(clusters.conventions, lv, c, method, alternative, correction, group,
                                               metrics, tests, unresolved, skipped)
            for i, m in enumerate(metrics):
                _, n_systems, n_inputs = data.fingerprint((m, scope.human))
                task = Task({"level": lv, "coefficient": c, "metric": m}, (m, scope.human), fingerprint,
                            n_systems, n_inputs)
                undefined = bool(clusters.undefined[i])
                status = "undefined" if undefined else "unresolvable" if unresolved else "ranked"
                finding = status == "ranked"
                planned.append((task, {
                    "correlation": bookkeeping.as_float(scores[i]),
                    "rank": None if undefined else int(clusters.rank[i]),
                    "cluster": int(clusters.cluster[i]) if finding and clusters.determined else None,
                    "is_winner": bool(clusters.is_winner[i]) if finding and clusters.winner_known[i] else None,
                    "n_beaten_by": int(clusters.n_beaten_by[i]),
                    "beaten_by": json.dumps([metrics[j] for j in np.flatnonzero(beats[:, i])]),
                    "n_metrics": n, "status": status, "conventions": conventions}))
    recorded = {"dataset": scope.dataset, "human": scope.human, "metrics": metrics, "levels": list(scope.levels),
                "coefficients": list(scope.coefficients)}
    cells = parameters.aggregate_fingerprint(selection.data_fingerprint(data, [*metrics, scope.human]), aggregate)
    return derived.write_new(wh, scope, "winners", ("level", "coefficient", "metric"), params, recorded, cells,
                             planned, force)


def _winners_conventions(cluster_conventions, lv, c, method, alternative, correction, group, metrics, tests,
                         unresolved, skipped) -> dict:
    """The conventions of run_winners' rows at level ``lv`` and coefficient ``c``."""
    tested_k = sorted({(int(t["k"]), int(t["seed"])) for (_, _, tl, tc), t in tests.items()
                       if (tl, tc) == (lv, c) and not pd.isna(t["k"])})
    conventions = {**cluster_conventions, "level": lv, "coefficient": c, "nan_policy": NAN_POLICY,
                   "score": "corr(metric, human) at this level and coefficient (analyses.correlate)",
                   "tests": f"latest_hypothesis_tests rows of method {method}, alternative {alternative}, "
                            f"correction {correction} within each {group} family, as persisted by compare",
                   "beats": "a beats b when p_adjusted <= alpha in the direction of the alternative (a "
                            "sequential test: when its decision was certified at this alpha); a test with "
                            "a NULL delta or p-value is neither a win nor a loss; of the two two-sided rows "
                            "of a pair, the row of the metric with the higher correlation",
                   "family": comparisons.correction_family(metrics, correction) if correction else None,
                   "family_size": sorted({int(t["family_size"]) for (_, _, tl, tc), t in tests.items()
                                          if (tl, tc) == (lv, c) and not pd.isna(t["family_size"])}),
                   "resamples_k_seed": tested_k,
                   "unresolvable": unresolved or None,
                   "skipped": skipped or None}
    return conventions


# --- replicability across datasets -------------------------------------------------------------------
def run_replicability(wh: Store, on: Sequence[tuple[str, str]], metric_globs: Sequence[str] = (),
                      levels: Sequence[str] = (), coefficients: Sequence[str] = (), method: str = "perm-both",
                      alternative: str = "greater", pc_methods: Sequence[str] = PC_METHODS,
                      alpha: float = 0.05, force: bool = False) -> RunSummary:
    """Partial-conjunction replicability of every ordered pair of metrics over the datasets ``on``
    ((dataset, human) pairs), from the uncorrected p-values of the latest ``hypothesis_tests`` rows
    of ``method``/``alternative`` on each dataset (an undefined p-value counts as 1).

    The metrics are those matching ``metric_globs`` (default: all automatic) in every dataset,
    compared by name.
    """
    _choice(method, vocabulary.TEST_METHODS, "test method")
    _choice(alternative, ALTERNATIVES, "alternative")
    for pc in pc_methods:
        _choice(pc, PC_METHODS, "partial-conjunction method")
    pc_methods = tuple(dict.fromkeys(pc_methods)) or PC_METHODS
    alpha = _alpha(alpha)
    if len(dict(on)) != len(on):
        raise WarehouseError("each dataset may be named once")
    on = sorted(on)
    if len(on) < 2:
        raise WarehouseError(f"replicability needs at least two datasets; got {[d for d, _ in on]}")
    scopes = [selection.resolve_scope(wh, d, h, metric_globs, levels, coefficients) for d, h in on]
    metrics = [m for m in scopes[0].metrics if all(m in s.metrics for s in scopes[1:])]
    if len(metrics) < 2:
        raise WarehouseError("replicability compares metrics present (by name) in every dataset; common to "
                             f"{', '.join(d for d, _ in on)}: {metrics or 'none'}")
    scopes = [Scope(s.dataset, s.human, tuple(metrics), s.levels, s.coefficients) for s in scopes]
    datas = [selection.load_data(wh, s) for s in scopes]
    tests = [derived.checked_tests(wh, data, s, method, alternative) for s, data in zip(scopes, datas)]
    group = Scope("+".join(d for d, _ in on), "+".join(h for _, h in on), tuple(metrics),
                  scopes[0].levels, scopes[0].coefficients)
    planned = []
    for key in tests[0]:
        rows = [t[key] for t in tests]
        p = np.array([1.0 if pd.isna(r["p_value"]) else r["p_value"] for r in rows])
        fingerprint = derived.digest([(d, r["fingerprint"], r["p_value"]) for (d, _), r in zip(on, rows)])
        for pc in pc_methods:
            result = partial_conjunction(p, alpha, pc)
            task = Task({"metric_a": key[0], "metric_b": key[1], "level": key[2], "coefficient": key[3],
                         "pc_method": pc}, key[:2], fingerprint)
            planned.append((task, {
                "n_datasets": len(on), "k_hat": result.k_hat, "pc_pvalues": json.dumps(result.pc_pvalues.tolist()),
                "p_values": json.dumps({d: float(x) for (d, _), x in zip(on, p)}),
                "identified": None if result.identified is None
                else json.dumps([on[i][0] for i in sorted(result.identified)]),
                "conventions": {**result.conventions, "level": key[2], "coefficient": key[3],
                                "pvalues": f"uncorrected p_value of the latest {method} ({alternative}) test of "
                                           "each dataset; an undefined p-value counts as 1",
                                "datasets": dict(on)}}))
    params = ReplicabilityParams(method, alternative, alpha, tuple(pc_methods))
    parameters = {"datasets": [d for d, _ in on], "humans": [h for _, h in on], "metrics": metrics,
                  "levels": list(group.levels), "coefficients": list(group.coefficients)}
    fingerprint = derived.digest([selection.data_fingerprint(data, [*metrics, s.human]) for s, data in zip(scopes, datas)])
    return derived.write_new(wh, group, "replicability", ("metric_a", "metric_b", "level", "coefficient", "pc_method"),
                      params, parameters, fingerprint, planned, force)


# --- the commands' Python API (what `metaeval accuracy|systems-agreement|winners` call) ---------------
#: the levels pairwise accuracy has (system means; pairs within each input, pooled)
ACCURACY_SCOPE_LEVELS = ("system", "micro")


def accuracy(wh: Store, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
             coefficients: Sequence[str] = (), *, alpha: float = 0.05, alternative: str = "two-sided",
             metric_tolerance: float = 0.0, human_tolerance: float = 0.0,
             system_inputs: str = parameters.DEFAULT_SYSTEM_INPUTS, soft: bool = False, delta_bins: int | None = None,
             k: int = parameters.DEFAULT_K, seed: int = 4, pvalue: str = "t",
             aggregate: str = parameters.DEFAULT_AGGREGATE, **run) -> list:
    """Pairwise accuracy (``pairwise_accuracy``) and the inputs with a significant correlation
    (``input_significance``); ``soft``: soft pairwise accuracy instead (``soft_pairwise_accuracy``,
    ``k`` permutations, ``seed``); ``delta_bins``: also the accuracy within that many bins of the
    human difference (``delta_bin_accuracy``). ``aggregate`` "median": a system's score the median
    over its inputs (the system level alone; not with ``delta_bins``); the per-input significance
    has no system score and is the mean's. One :class:`~metaeval.runs.engine.analyse.Outcome` per
    table, in that order (``run``: jobs, force, progress)."""
    from metaeval.runs.engine import analyse as engine

    def build(scope: Scope) -> list[Analysis]:
        analyses = []
        parameters.check_aggregate(aggregate, ("system",) if soft else scope.levels, (), delta_bins=delta_bins)
        if delta_bins is not None:
            analyses.append(delta_bins_analysis(scope, delta_bins, metric_tolerance, human_tolerance, system_inputs))
        if soft:
            return analyses + [soft_accuracy_analysis(scope, k, seed, aggregate)]
        return analyses + [accuracy_analysis(scope, metric_tolerance, human_tolerance, system_inputs, aggregate),
                           significance_analysis(scope, alpha, alternative, pvalue)]

    return engine.analyse(wh, build, dataset, human, metrics, levels, coefficients,
                          valid_levels=ACCURACY_SCOPE_LEVELS, **run)


def systems_agreement(wh: Store, dataset: str, human: str, metrics: Sequence[str] = (),
                      tests: Sequence[str] = (), *, alpha: float = 0.05, k: int = parameters.DEFAULT_K,
                      seed: int = parameters.DEFAULT_SEED, **run) -> list:
    """Per metric and paired test (default all of :data:`analyses.ranking.PAIR_TESTS`), the system
    pairs significant under the metric and/or the human (``system_agreement``); one
    :class:`~metaeval.runs.engine.analyse.Outcome` per test."""
    from metaeval.runs.engine import analyse as engine

    return engine.analyse(wh, lambda scope: [agreement_analysis(scope, t, alpha, k, seed)
                                             for t in (tests or ranking.PAIR_TESTS)],
                          dataset, human, metrics, valid_levels=(), **run)


def winners(wh: Store, dataset: str, human: str, metrics: Sequence[str] = (), levels: Sequence[str] = (),
            coefficients: Sequence[str] = (), *, method: str = "perm-both",
            alternative: str = parameters.DEFAULT_ALTERNATIVE, correction: str = parameters.DEFAULT_CORRECTION,
            correction_group: str = parameters.DEFAULT_CORRECTION_GROUP, alpha: float = 0.05,
            cluster_rule: str = parameters.DEFAULT_CLUSTER_RULE, force: bool = False,
            aggregate: str = parameters.DEFAULT_AGGREGATE) -> tuple[RunSummary, pd.DataFrame]:
    """:func:`run_winners` over the resolved scope, and the latest ``winners`` rows of that
    setting by level, coefficient and rank."""
    from metaeval.runs.engine import analyse as engine

    scope = selection.resolve_scope(wh, dataset, human, metrics, levels, coefficients)
    summary = run_winners(wh, scope, method, alternative, correction, correction_group, alpha, force, cluster_rule,
                          aggregate)
    frame = engine.latest_rows(wh, "winners", dataset, human, level=scope.levels, coefficient=scope.coefficients,
                               method=method, alternative=alternative, correction=correction,
                               correction_group=correction_group, alpha=alpha, cluster_rule=cluster_rule,
                               aggregate=aggregate)
    return summary, frame.sort_values(["level", "coefficient", "rank"], na_position="last")


def replicability(wh: Store, on: Sequence[tuple[str, str]], metrics: Sequence[str] = (),
                  levels: Sequence[str] = (), coefficients: Sequence[str] = (), *, method: str = "perm-both",
                  alternative: str = "greater", pc_methods: Sequence[str] = (), alpha: float = 0.05,
                  force: bool = False) -> tuple[RunSummary, pd.DataFrame]:
    """:func:`run_replicability` over the (dataset, human) pairs ``on``, and the latest
    ``replicability`` rows of that setting (of ``levels`` and ``coefficients`` when given)."""
    from metaeval.runs.engine import analyse as engine

    summary = run_replicability(wh, on, metrics, levels, coefficients, method, alternative, pc_methods, alpha, force)
    on = sorted(on)
    frame = engine.latest_rows(wh, "replicability", "+".join(d for d, _ in on), "+".join(h for _, h in on),
                               method=method, alternative=alternative, alpha=alpha,
                               pc_method=tuple(pc_methods) or PC_METHODS)
    if levels:
        frame = frame[frame["level"].isin(levels)]
    if coefficients:
        frame = frame[frame["coefficient"].isin(coefficients)]
    return summary, frame
