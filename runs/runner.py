"""The run loop, and the correlate / ci / compare analyses that run on it.

The statistics (:mod:`analyses.stats`) are pure functions on arrays; a run is the thin layer
around them, built from the engine's parts:

1. **scope and data** (:mod:`.selection`) — resolve the dataset, the human judgment and the
   metric globs to measures, and load their matrices on one grid;
2. **plan** — one :class:`Task` per result key (metric or metric pair × level × coefficient),
   each with the fingerprint of the cells it reads;
3. **skip** what the warehouse already holds for the same key, parameters and fingerprint
   (``force`` recomputes);
4. **compute** the rest — in this process, in ``jobs`` worker processes or on a Dask cluster
   (:mod:`.executors`); results do not depend on ``jobs`` or on order, since every task uses the
   seed it is given;
5. **write** results as they complete (:class:`.bookkeeping.Writer`), in small transactions, so
   an interrupted run keeps what it finished and the same command resumes.

Every run is a row of ``analysis_runs`` (:mod:`.bookkeeping`). Progress is reported to a
``progress`` factory the caller gives (the command line draws a bar; see :class:`Progress`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np
import pandas as pd

from metaeval.analyses import annotators, stats
from metaeval.analyses.stats import _validation, hypothesis, protocols, resolution, sequential, vocabulary
from metaeval.analyses.stats.results import NAN_POLICY
from metaeval.core import Warehouse
from metaeval.errors import WarehouseError
from metaeval.runs import bookkeeping, executors
from metaeval.runs.selection import Data, Scope, data_fingerprint, load_data, too_sparse
from metaeval.signals import interruption

from metaeval.runs.parameters import (DEFAULT_ALTERNATIVE, DEFAULT_CLUSTER_RULE, DEFAULT_CORRECTION,  # noqa: F401
                                     DEFAULT_CORRECTION_GROUP, DEFAULT_K_MAX, DEFAULT_RISK, DEFAULT_SEED,
                                     DEFAULT_SYSTEM_INPUTS, Params, check_annotator_resampling, check_k,
                                     check_parametric, check_system_inputs, setting, system_inputs_parameter)


# --- tasks -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Task:
    """One result row to be: its key columns and the measures whose cells it reads."""

    key: dict[str, Any]
    measures: tuple[str, ...]
    fingerprint: str = ""
    n_systems: int = 0
    n_inputs: int = 0


@dataclass
class Analysis:
    """How one command maps onto a results table: its typed parameters (which name the table),
    the key columns that with dataset and human identify a result, the tasks, the ``evaluate``
    function run in the workers (``evaluate(arrays, **{key: value for key in evaluate_keys},
    **arguments)`` -> the row's values) and, when storing the missing rows is not enough, the
    ``flow`` that runs it instead (:func:`run` hands it a :class:`Plan`)."""

    command: str
    params: Params
    key_columns: tuple[str, ...]
    tasks: list[Task]
    evaluate: Callable[..., dict] | None
    evaluate_keys: tuple[str, ...] = ("level", "coefficient")   # key columns evaluate receives
    flow: Callable[[Plan], RunSummary] | None = None
    arguments: dict[str, Any] = field(default=None)             # default params.arguments()

    def __post_init__(self):
        if self.arguments is None:
            self.arguments = self.params.arguments()

    @property
    def table(self) -> str:
        return self.params.table

    @property
    def seed(self) -> int | None:
        return self.params.run_seed()


def correlation_tasks(scope: Scope) -> list[Task]:
    return [Task({"metric": m, "level": lv, "coefficient": c}, (m, scope.human))
            for m in scope.metrics for lv in scope.levels for c in scope.coefficients]


def comparison_tasks(scope: Scope, focus: Sequence[str] | None = None) -> list[Task]:
    """Every ordered pair (a, b) of the scope's metrics; with ``focus``, only those with a in it."""
    return [Task({"metric_a": a, "metric_b": b, "level": lv, "coefficient": c}, (a, b, scope.human))
            for a in scope.metrics if focus is None or a in focus for b in scope.metrics if a != b
            for lv in scope.levels for c in scope.coefficients]


#: How each test method forms its p-value (analyses.stats.resolution.PVALUE_FORMULAS).
def pvalue_formula(method: str) -> str:
    return "parametric" if method == "williams" else "add-one" if method.startswith("perm-") else "count"


def test_resolution(method: str, k: int | None, correction: str, family_size: int | None,
                    alpha: float) -> resolution.Resolution | None:
    """Whether a family of ``family_size`` tests of ``method`` with ``k`` resamples (the most any
    of them drew) can reach significance under ``correction``; None without a defined test."""
    if not family_size and correction != "none":
        return None
    formula = pvalue_formula(method)
    if formula != "parametric" and not k:
        return None
    return resolution.family_resolution(formula, k if formula != "parametric" else None, correction,
                                        int(family_size or 1), alpha)


@dataclass(frozen=True)
class CorrelateParams(Params):
    """correlate: the correlation of each metric with the human (table ``correlations``)."""

    table: ClassVar[str] = "correlations"
    system_inputs: str = DEFAULT_SYSTEM_INPUTS


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


@dataclass(frozen=True)
class TestParams(Params):
    """compare: a test of each ordered metric pair (table ``hypothesis_tests``). The correction,
    its group, alpha and the focus are applied after the raw tests are stored, so they are
    recorded with the run but not matched when reusing rows -- except with sequential tests
    (``risk`` set), where they decide how many resamples a pair draws."""

    __test__: ClassVar[bool] = False   # not a pytest class
    table: ClassVar[str] = "hypothesis_tests"
    method: str
    alternative: str
    k: int | None
    seed: int | None
    k_block: int | None = None
    system_inputs: str = DEFAULT_SYSTEM_INPUTS
    resample_annotators: str | None = None
    risk: float | None = setting(None, argument=False)
    alpha: float = setting(0.05, column=False, argument=False)
    correction: str = setting(DEFAULT_CORRECTION, column=False, argument=False)
    correction_group: str = setting(DEFAULT_CORRECTION_GROUP, column=False, argument=False)
    focus: tuple[str, ...] | None = setting(None, column=False, argument=False)

    @property
    def sequential(self) -> bool:
        return self.risk is not None

    def columns(self) -> dict[str, Any]:
        columns = super().columns()
        if self.sequential:
            columns.update(correction=self.correction, correction_group=self.correction_group, alpha=self.alpha)
        return columns

    def arguments(self) -> dict[str, Any]:
        if self.sequential:
            return {"method": self.method, "alternative": self.alternative, "seed": self.seed,
                    "system_inputs": self.system_inputs}
        return super().arguments()

    def recorded(self) -> dict[str, Any]:
        recorded = super().recorded()
        if self.focus is not None:
            recorded["focus"] = list(self.focus)
        return recorded


def correlate_analysis(scope: Scope, system_inputs: str = DEFAULT_SYSTEM_INPUTS) -> Analysis:
    params = CorrelateParams(check_system_inputs(system_inputs))
    return Analysis("correlate", params, ("metric", "level", "coefficient"), correlation_tasks(scope),
                    evaluate_correlation)


def ci_analysis(scope: Scope, method: str, k: int, alpha: float, seed: int,
                system_inputs: str = DEFAULT_SYSTEM_INPUTS, resample_annotators: str | None = None) -> Analysis:
    if method not in vocabulary.CI_METHODS:
        raise WarehouseError(f"unknown CI method {method!r}; choose from {', '.join(vocabulary.CI_METHODS)}")
    check_parametric(scope.coefficients, method, "fisher", "Fisher's interval has no constants for")
    resampled = method != "fisher"
    if resampled:
        check_k(k, alpha, "interval")
    if resample_annotators is not None:
        check_annotator_resampling(scope.coefficients, resample_annotators, resampled,
                                   "a bootstrap method (boot-systems, boot-inputs, boot-both)")
    params = IntervalParams(method, alpha, k if resampled else None, seed if resampled else None,
                            check_system_inputs(system_inputs), resample_annotators)
    return Analysis("ci", params, ("metric", "level", "coefficient"), correlation_tasks(scope), evaluate_ci)


def compare_analysis(scope: Scope, method: str, k: int, alpha: float, seed: int, alternative: str,
                     correction: str, group: str, k_block: int | None = None,
                     system_inputs: str = DEFAULT_SYSTEM_INPUTS, focus: Sequence[str] | None = None,
                     resample_annotators: str | None = None, risk: float | None = None) -> Analysis:
    """``risk``: sequential tests (MMCTest, :mod:`analyses.stats.sequential`), each pair resampled
    only while its decision at the corrected level is uncertain, up to ``k`` (k_max) resamples, with
    P(any decision differs from the exact p-values') <= ``risk``; None: every pair draws ``k``.
    ``focus``: test only the pairs (a, b) with a in ``focus`` (against every other metric of the
    scope). Each such row is the row a compare of every pair writes: with the correction group
    "metric", a's family is its pairs against all the scope's metrics either way (group "all"
    would change the family, so it is refused with a focus)."""
    if focus is not None:
        focus = tuple(dict.fromkeys(focus))
        if not focus or any(m not in scope.metrics for m in focus):
            raise WarehouseError(f"the focus metrics {list(focus)} must be metrics of the scope {list(scope.metrics)}")
        if group != "metric":
            raise WarehouseError("comparing only some metrics against the others needs the correction group 'metric'")
    if method not in vocabulary.TEST_METHODS:
        raise WarehouseError(f"unknown test {method!r}; choose from {', '.join(vocabulary.TEST_METHODS)}")
    if correction not in vocabulary.CORRECTIONS or group not in vocabulary.CORRECTION_GROUPS:
        raise WarehouseError(f"correction must be one of {vocabulary.CORRECTIONS} and its group one of {vocabulary.CORRECTION_GROUPS}")
    if len(scope.metrics) < 2:
        raise WarehouseError(f"comparing metrics needs at least two; the scope has {list(scope.metrics)}")
    check_parametric(scope.coefficients, method, "williams", "Williams' test is not defined for")
    resampled = method != "williams"
    if resampled:
        check_k(k, alpha, "test")
    if k_block is not None and (not method.startswith("perm-") or k_block < 1):
        raise WarehouseError(f"--k-block (early stopping) applies to the permutation tests with a block size >= 1; "
                             f"got method {method!r}, k_block {k_block}")
    if resample_annotators is not None:
        check_annotator_resampling(scope.coefficients, resample_annotators, method.startswith("boot-"),
                                   "paired bootstrap tests (boot-systems, boot-inputs, boot-both)")
    params = TestParams(method, alternative, k if resampled else None, seed if resampled else None, k_block,
                        check_system_inputs(system_inputs), resample_annotators, risk, alpha, correction, group, focus)
    if risk is not None:
        return _sequential_analysis(params, scope, focus, k_block)
    return Analysis("compare", params, ("metric_a", "metric_b", "level", "coefficient"),
                    comparison_tasks(scope, focus), evaluate_test, flow=_run_compare)


def _sequential_analysis(params: TestParams, scope: Scope, focus, k_block) -> Analysis:
    """compare_analysis with sequential tests: the correction, its group and alpha decide how many
    resamples a pair draws, so they are parameters of the rows (matched when reusing them)."""
    if not params.method.startswith(("perm-", "boot-")):
        raise WarehouseError(f"--sequential applies to the resampling tests (perm-*, boot-*); got {params.method!r}")
    if k_block is not None:
        raise WarehouseError("--sequential and --k-block are two ways of stopping early; give one (--k-block is "
                             "mt-metrics-eval's rule, --sequential the one with a bound on the resampling risk)")
    if params.resample_annotators is not None:
        raise WarehouseError("--sequential does not re-draw annotators; leave out --resample-annotators")
    try:
        sequential.risk_iv(params.risk)
    except ValueError:
        raise WarehouseError(f"--risk must lie strictly between 0 and 1; got {params.risk!r}") from None
    return Analysis("compare", params, ("metric_a", "metric_b", "level", "coefficient"),
                    comparison_tasks(scope, focus), evaluate_test_range,
                    evaluate_keys=("level", "coefficient", "start", "stop"), flow=_run_sequential_compare)


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


def _calibrated_epsilons(arrays, level, coefficient, names) -> dict:
    """The epsilon calibrated on the data itself (of each metric array against the last, the
    human), recorded with a resampled result of a tie-calibrated coefficient."""
    coef = _validation.coefficient_iv(coefficient)
    if not coef.calibrated:
        return {}
    return {name: bookkeeping.as_float(stats.tie_calibration(A, arrays[-1], level, coef.base_label).epsilon)
            for name, A in zip(names, arrays[:-1])}


def evaluate_ci(arrays, level, coefficient, method, alpha, k, seed, system_inputs=DEFAULT_SYSTEM_INPUTS,
                resample_annotators=None) -> dict:
    if resample_annotators is not None:
        return _evaluate_annotator_ci(arrays, level, coefficient, method, alpha, k, seed, system_inputs,
                                      resample_annotators)
    (X, Z), paired, conv = protocol(arrays, level, system_inputs)
    if method == "fisher":
        r = stats.fisher_ci(X, Z, level, coefficient, alpha=alpha)
        n_valid = None
    else:
        r = stats.bootstrap_ci(X, Z, level, coefficient, method.removeprefix("boot-"), k=k, alpha=alpha, seed=seed,
                               paired_inputs=paired)
        n_valid = int(np.count_nonzero(~np.isnan(r.samples)))
    return {"estimate": bookkeeping.as_float(r.estimate), "lower": bookkeeping.as_float(r.lower), "upper": bookkeeping.as_float(r.upper),
            "n_valid": n_valid,
            "conventions": {**r.conventions, **conv, **_calibrated_epsilons([X, Z], level, coefficient, ["epsilon"])}}


def _evaluate_annotator_ci(arrays, level, coefficient, method, alpha, k, seed, system_inputs, how) -> dict:
    """A bootstrap CI whose resamples also re-draw the annotators (analyses.annotators)."""
    X, Z, A = arrays
    (X, Z), paired, conv, kept = protocols.apply([X, Z], level, system_inputs)
    if kept is not None:
        A = A[:, kept]
    if not paired:
        raise ValueError("--resample-annotators draws the metric's and the human's inputs together; with inputs "
                         "the human did not judge, use --system-inputs judged")
    r = annotators.annotator_bootstrap_ci(X, A, level, coefficient, method.removeprefix("boot-"), k=k, alpha=alpha,
                                          seed=seed, annotators=how, Z=Z)
    return {"estimate": bookkeeping.as_float(r.estimate), "lower": bookkeeping.as_float(r.lower), "upper": bookkeeping.as_float(r.upper),
            "n_valid": int(np.count_nonzero(~np.isnan(r.samples))), "conventions": {**r.conventions, **conv}}



def evaluate_test(arrays, level, coefficient, method, alternative, k, seed, k_block=None,
                  system_inputs=DEFAULT_SYSTEM_INPUTS, resample_annotators=None) -> dict:
    if resample_annotators is not None:
        X, Y, Z, A = arrays
        (X, Y, Z), paired, conv, kept = protocols.apply([X, Y, Z], level, system_inputs)
        if kept is not None:
            A = A[:, kept]
        if not paired:
            raise ValueError("--resample-annotators draws the metrics' and the human's inputs together; with inputs "
                             "the human did not judge, use --system-inputs judged")
        r = annotators.annotator_paired_bootstrap_test(X, Y, A, level, coefficient, method.removeprefix("boot-"),
                                                       k=k, alternative=alternative, seed=seed,
                                                       annotators=resample_annotators, Z=Z)
        return {**_test_row(r.delta, None, r.pvalue, {**r.conventions, **conv}), "k_used": int(r.samples.size)}
    (X, Y, Z), paired, conv = protocol(arrays, level, system_inputs)
    if method == "williams":
        r = stats.williams_test(X, Y, Z, level, coefficient, alternative=alternative)
        return _test_row(r.r12 - r.r13, r.statistic, r.pvalue, {**r.conventions, **conv})
    family, how = method.split("-")
    if family == "perm":
        r = stats.permutation_test(X, Y, Z, level, coefficient, how, k=k, alternative=alternative, seed=seed,
                                   k_block=k_block)
    else:
        r = stats.paired_bootstrap_test(X, Y, Z, level, coefficient, how, k=k, alternative=alternative, seed=seed,
                                        paired_inputs=paired)
    calibrated = _calibrated_epsilons([X, Y, Z], level, coefficient, ["epsilon_a", "epsilon_b"])
    return {**_test_row(r.delta, None, r.pvalue, {**r.conventions, **conv, **calibrated}),
            "k_used": int(r.samples.size)}


def evaluate_test_range(arrays, level, coefficient, method, alternative, seed, start, stop,
                        system_inputs=DEFAULT_SYSTEM_INPUTS) -> dict:
    """Resamples ``start .. stop - 1`` of the test :func:`evaluate_test` computes (the same
    resamples for the same seed): delta, the exceedances ``count`` among the ``n_valid`` defined
    ones, and the test's conventions (for the sequential tests, which draw in rounds)."""
    (X, Y, Z), paired, conv = protocol(arrays, level, system_inputs)
    family, how = method.split("-")
    r = hypothesis.range_exceedances(X, Y, Z, level, coefficient, "permutation" if family == "perm" else "bootstrap",
                                           how, alternative, seed, start, stop, paired_inputs=paired)
    calibrated = _calibrated_epsilons([X, Y, Z], level, coefficient, ["epsilon_a", "epsilon_b"]) if stop == start else {}
    return {"delta": r.delta, "count": r.count, "n_valid": r.n_valid, "undefined": r.undefined,
            "conventions": {**r.conventions, **conv, **calibrated}}


#: How the statistics core's X, Y, Z map onto a hypothesis_tests row.
TEST_VARIABLES = "X = metric_a, Y = metric_b, Z = human"


def _test_row(delta, statistic, pvalue, conventions) -> dict:
    """The computed values of a hypothesis_tests row. Without a delta there is no p-value
    (NULL), and a NULL p-value is left out of the correction: ``excluded_from_correction``
    says why."""
    delta, pvalue, conventions = bookkeeping.as_float(delta), bookkeeping.as_float(pvalue), dict(conventions)
    if delta is None or pvalue is None:
        pvalue = None
        reason = conventions.get("pvalue_undefined", "delta undefined" if delta is None else "p-value undefined")
        conventions["excluded_from_correction"] = f"{reason}; {TEST_VARIABLES}"
    return {"delta": delta, "statistic": None if statistic is None else bookkeeping.as_float(statistic), "p_value": pvalue,
            "conventions": conventions}


def evaluate_chunk(evaluate, arguments, chunk) -> list[tuple[int, dict]]:
    return [(i, evaluate(arrays, **key, **arguments)) for i, arrays, key in chunk]


# --- running ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunSummary:
    run_id: int | None
    tasks: int
    computed: int
    written: int

    @property
    def up_to_date(self) -> bool:
        return self.run_id is None


@dataclass(frozen=True)
class Plan:
    """What :func:`run` hands an analysis' flow: the planned ``tasks`` (with fingerprints), the
    rows this version already ``done`` with the same parameters (by :func:`task_id`), the
    result ids the latest view shows (``latest``), the indices of the tasks to compute
    (``todo``) and the run options."""

    wh: Warehouse
    scope: Scope
    analysis: Analysis
    data: Data
    tasks: list[Task]
    done: dict[tuple, dict]
    latest: set[int]
    todo: list[int]
    jobs: int
    progress: ProgressFactory | None
    chunk_size: int


def run(wh: Warehouse, scope: Scope, analysis: Analysis, *, jobs: int = 1, force: bool = False,
        progress: ProgressFactory | None = None, chunk_size: int = 8, data: Data | None = None) -> RunSummary:
    """Compute what is missing for ``analysis`` over ``scope`` and persist it: by the analysis'
    ``flow`` if it has one, else :func:`store_missing`.

    ``data``: the scope's data when the tasks also read derived matrices (default
    :func:`load_data`)."""
    if jobs < 1:
        raise WarehouseError("--jobs must be at least 1")
    data = load_data(wh, scope) if data is None else data
    tasks = planned(data, scope, analysis)
    done, latest = ({}, set()) if force else existing(wh, scope, analysis)
    todo = [i for i, t in enumerate(tasks) if task_id(t) not in done]
    plan = Plan(wh, scope, analysis, data, tasks, done, latest, todo, jobs, progress, chunk_size)
    return (analysis.flow or store_missing)(plan)


def store_missing(plan: Plan) -> RunSummary:
    """The flow of most analyses: compute the missing rows and write them as they arrive."""
    wh, scope, analysis, tasks, done, todo = plan.wh, plan.scope, plan.analysis, plan.tasks, plan.done, plan.todo
    # computed before but not the latest row of its key (the data changed and changed back,
    # or other parameters ran since): copied into this run, so the latest_* views show it
    computing = set(todo)
    stale = [i for i, t in enumerate(tasks)
             if i not in computing and done[task_id(t)]["result_id"] not in plan.latest]
    if not todo and not stale:
        return RunSummary(None, len(tasks), 0, 0)
    run_id = start_analysis_run(wh, scope, analysis, plan.data, len(tasks), plan.jobs)
    columns = analysis.params.columns()
    with bookkeeping.finishing(wh, run_id):
        writer = bookkeeping.Writer(wh, analysis.table, run_id, scope)
        for i in stale:
            copy = {c: v for c, v in done[task_id(tasks[i])].items() if c != "result_id"}
            writer.add_row({**copy, "run_id": run_id})
        writer.flush()
        computed = compute(plan, todo, lambda i, row: writer.add(tasks[i], row, columns), writer, run_id)
        writer.flush()
        bookkeeping.finish_run(wh, run_id, "finished", computed)
    return RunSummary(run_id, len(tasks), computed, writer.written)


def planned(data: Data, scope: Scope, analysis: Analysis) -> list[Task]:
    planned = []
    cache: dict[tuple[str, ...], tuple] = {}
    for t in analysis.tasks:
        if t.measures not in cache:
            cache[t.measures] = data.fingerprint(t.measures)
            if scope.human is not None:
                _check_enough(data.restrict(t.measures)[0], t.measures, *cache[t.measures][1:], analysis)
        fp, n, m = cache[t.measures]
        planned.append(Task(t.key, t.measures, fp, n, m))
    return planned


def _check_enough(arrays, measures, n_systems, n_inputs, analysis: Analysis) -> None:
    human = arrays[-1]
    for name, a in zip(measures[:-1], arrays[:-1]):
        if reason := too_sparse(a, human, name, measures[-1]):
            raise WarehouseError(reason)
    method = getattr(analysis.params, "method", None) or ""
    if method.endswith("inputs") or method.endswith("both"):
        if n_inputs < 2:
            raise WarehouseError(f"method {method!r} resamples inputs but {list(measures)} cover "
                                 f"only {n_inputs} input")


def task_id(t: Task) -> tuple:
    return (*t.key.values(), t.fingerprint)


def existing(wh: Warehouse, scope: Scope, analysis: Analysis) -> tuple[dict[tuple, dict], set[int]]:
    """Rows already computed by this version with the same parameters, by (key...,
    fingerprint); and the result_ids the table's ``latest_*`` view shows now."""
    where = " WHERE dataset = $dataset" + (" AND human = $human" if scope.human is not None else "")
    params = {"dataset": scope.dataset, **({"human": scope.human} if scope.human is not None else {})}
    rows = wh.con.execute(f"SELECT * FROM {analysis.table}{where} AND {bookkeeping.THIS_VERSION} ORDER BY result_id",
                          {**params, **bookkeeping.version_parameter()}).df()
    latest = {int(r) for r in wh.con.execute(f"SELECT result_id FROM latest_{analysis.table}{where}",
                                             params).df()["result_id"]}
    done = {}
    columns = analysis.params.columns()
    for r in rows.to_dict("records"):
        r = {c: bookkeeping.none_if_nan(v) for c, v in r.items()}
        if all(r[c] == v for c, v in columns.items()):
            done[tuple(r[c] for c in (*analysis.key_columns, "fingerprint"))] = r
    return done, latest


def start_analysis_run(wh: Warehouse, scope: Scope, analysis: Analysis, data: Data, n_tasks: int,
                       jobs: int = 1) -> int:
    """Start the run of ``analysis`` (:func:`bookkeeping.start_run`), recording its scope and
    parameters (:meth:`Params.recorded`)."""
    parameters = {"dataset": scope.dataset, "human": scope.human, "metrics": list(scope.metrics),
                  "levels": list(scope.levels), "coefficients": list(scope.coefficients)}
    if scope.human is None:  # human-free: no judgment, levels or coefficients to record
        parameters = {"dataset": scope.dataset, "metrics": list(scope.metrics)}
    parameters.update(analysis.params.recorded())
    return bookkeeping.start_run(wh, analysis.command, parameters, analysis.seed,
                     data_fingerprint(data, scope.measures), n_tasks, jobs)


def compute(plan: Plan, todo: list[int], on_result: Callable[[int, dict], None], writer: bookkeeping.Writer,
            run_id: int) -> int:
    """Evaluate the plan's tasks ``todo``, handing each result to ``on_result`` as it arrives;
    the number computed.

    Ctrl-C (or SIGTERM in the CLI): what has arrived is written, the run is marked interrupted,
    the chunks not started are dropped, and the KeyboardInterrupt propagates; rerunning the
    command resumes. Any other exception: the same, but the run is marked failed.
    """
    tasks, data, analysis, wh, chunk_size = plan.tasks, plan.data, plan.analysis, plan.wh, plan.chunk_size
    chunks = [todo[i:i + chunk_size] for i in range(0, len(todo), chunk_size)]

    def payload(chunk):  # the tasks of one measure set share its arrays (sent once to a worker)
        arrays = {}
        for i in chunk:
            if tasks[i].measures not in arrays:
                arrays[tasks[i].measures] = data.task_arrays(tasks[i].measures)
        return [(i, list(arrays[tasks[i].measures]), {c: tasks[i].key[c] for c in analysis.evaluate_keys})
                for i in chunk]

    computed = 0
    bar = progress_bar(plan.progress, len(todo), analysis.command)
    before = _rows_of_run(wh, writer.table, run_id)
    try:
        with executors.executor(plan.jobs) as pool:
            if pool is None:
                for chunk in chunks:
                    for i, row in evaluate_chunk(analysis.evaluate, analysis.arguments, payload(chunk)):
                        on_result(i, row)
                        computed += 1
                    bar.advance(len(chunk))
            else:
                pending = {pool.submit(evaluate_chunk, analysis.evaluate, analysis.arguments, payload(c)) for c in chunks}
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        results = future.result()
                        for i, row in results:
                            on_result(i, row)
                            computed += 1
                        bar.advance(len(results))
    except BaseException as exc:  # (a stopped pool drops its queued chunks: executors.executor)
        stop = interruption(exc)
        try:
            writer.flush()
            # counted in the table: the interruption may have come between a row's write and its count
            computed = _rows_of_run(wh, writer.table, run_id) - before
            bookkeeping.finish_run(wh, run_id, "failed" if stop is None else "interrupted", computed)
        except bookkeeping.WRITE_ERRORS:  # the warehouse cannot be written (a full disk): the first error says so
            pass
        bar.close()
        bookkeeping.reraise(exc, stop)
    bar.close()
    return computed


class Progress(Protocol):
    """A progress display: ``advance(n)`` as n more tasks are done, ``close()`` at the end. The
    ``progress`` argument of a run is a factory ``progress(total, label) -> Progress`` (None:
    nothing is shown); the command line gives one that draws a bar on a terminal."""

    def advance(self, n: int) -> None: ...

    def close(self) -> None: ...


#: A ``progress`` argument: (total tasks, label) -> a :class:`Progress`.
ProgressFactory = Callable[[int, str], Progress]


class _NoProgress:
    def advance(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(progress: ProgressFactory | None, total: int, label: str) -> Progress:
    """The display of ``total`` tasks labelled ``label``: ``progress``'s, or none (no factory, or
    nothing to do)."""
    return progress(total, label) if callable(progress) and total else _NoProgress()


def _rows_of_run(wh: Warehouse, table: str, run_id: int) -> int:
    return wh.con.execute(f"SELECT count(*) FROM {table} WHERE run_id = ?", [run_id]).fetchall()[0][0]


# --- comparisons: raw tests, then the family correction ---------------------------------------
def _run_compare(plan: Plan) -> RunSummary:
    """Raw p-values are reused across runs whatever the correction; the correction is then
    applied over each family, and a row is written for every key whose latest corrected row
    differs (a new metric changes its whole family's Bonferroni factor, for example)."""
    wh, scope, analysis, tasks, done, todo = plan.wh, plan.scope, plan.analysis, plan.tasks, plan.done, plan.todo
    params: TestParams = analysis.params
    columns = params.columns()
    raw: dict[int, dict] = {}
    computing = set(todo)
    for i, t in enumerate(tasks):
        if i not in computing:
            prev = done[task_id(t)]
            raw[i] = {c: bookkeeping.none_if_nan(prev.get(c)) for c in ("delta", "statistic", "p_value", "k_used")}
            raw[i]["conventions"] = json.loads(prev["conventions"])
    latest = _latest_tests(wh, scope, params)
    family = correction_family(scope.metrics, params.correction)
    if not todo:
        adjusted_now = _adjust(tasks, raw, params)
        if all(_same_as_latest(latest, tasks[i], raw[i], adjusted_now[i], analysis, family)
               for i in range(len(tasks))):
            return RunSummary(None, len(tasks), 0, 0)
    run_id = start_analysis_run(wh, scope, analysis, plan.data, len(tasks), plan.jobs)
    with bookkeeping.finishing(wh, run_id):
        pending = {"correction": params.correction, "correction_group": params.correction_group,
                   "family": family, "family_size": None, "alpha": params.alpha, "p_adjusted": None,
                   "significant": None}
        writer = bookkeeping.Writer(wh, analysis.table, run_id, scope)

        def on_result(i, row):
            raw[i] = row
            writer.add(tasks[i], {**row, **pending}, columns)

        computed = compute(plan, todo, on_result, writer, run_id)
        writer.flush()
        adjusted = _adjust(tasks, raw, params)
        # rows computed by this run get their corrected values; reused ones a new row if it changed
        update = pd.DataFrame([{"metric_a": tasks[i].key["metric_a"], "metric_b": tasks[i].key["metric_b"],
                                "level": tasks[i].key["level"], "coefficient": tasks[i].key["coefficient"],
                                "p_adjusted": adjusted[i][0], "significant": adjusted[i][1],
                                "family_size": adjusted[i][2],
                                "conventions": bookkeeping.conventions_json({**raw[i]["conventions"], "resolution": adjusted[i][3]})}
                               for i in todo])
        if not update.empty:
            wh.con.register("adjusted_rows", update)
            wh.con.execute("""UPDATE hypothesis_tests AS t
                               SET p_adjusted = u.p_adjusted, significant = u.significant, family_size = u.family_size,
                                   conventions = u.conventions::JSON
                               FROM adjusted_rows u
                               WHERE t.run_id = ? AND t.metric_a = u.metric_a AND t.metric_b = u.metric_b
                                 AND t.level = u.level AND t.coefficient = u.coefficient""", [run_id]).fetchall()
            wh.con.unregister("adjusted_rows")
        for i, t in enumerate(tasks):
            if i not in computing and not _same_as_latest(latest, t, raw[i], adjusted[i], analysis, family):
                writer.add(t, {**raw[i], **pending, "p_adjusted": adjusted[i][0], "significant": adjusted[i][1],
                               "family_size": adjusted[i][2],
                               "conventions": {**raw[i]["conventions"], "resolution": adjusted[i][3]}},
                           columns)
        writer.flush()
        bookkeeping.finish_run(wh, run_id, "finished", computed)
    return RunSummary(run_id, len(tasks), computed, writer.written)


def _run_sequential_compare(plan: Plan) -> RunSummary:
    """Sequential tests (MMCTest): the families of the correction resampled together, in rounds.

    A family is reused when every pair has a row of these parameters (the correction, its group
    and alpha included) for the current data and the same family of metrics; otherwise the whole
    family is recomputed (its decisions depend on all its pairs). The rounds of all the
    families computed run in lockstep, each round's resample ranges spread over the workers
    (``jobs`` or a Dask scheduler), whose results do not depend on them. Rows are written when
    their family is decided (an interrupted run keeps the families it finished)."""
    wh, scope, analysis, tasks, done, latest = plan.wh, plan.scope, plan.analysis, plan.tasks, plan.done, plan.latest
    params: TestParams = analysis.params
    family = correction_family(scope.metrics, params.correction)
    groups = _families(tasks, params.correction_group)
    fresh, stale = [], []
    for members in groups:
        rows = [done.get(task_id(tasks[i])) for i in members]
        if all(r is not None and r["family"] == family for r in rows):
            stale += [r for r in rows if r["result_id"] not in latest]
        else:
            fresh.append(members)
    if not fresh and not stale:
        return RunSummary(None, len(tasks), 0, 0)
    run_id = start_analysis_run(wh, scope, analysis, plan.data, len(tasks), plan.jobs)
    with bookkeeping.finishing(wh, run_id):
        writer = bookkeeping.Writer(wh, analysis.table, run_id, scope)
        for r in stale:
            writer.add_row({**{c: v for c, v in r.items() if c != "result_id"}, "run_id": run_id})
        bar = progress_bar(plan.progress, sum(len(m) for m in fresh), "compare")
        try:
            computed = _sequential_families(plan, fresh, family, writer, bar)
        finally:
            writer.flush()
            bar.close()
        bookkeeping.finish_run(wh, run_id, "finished", computed)
    return RunSummary(run_id, len(tasks), computed, writer.written)


def _sequential_families(plan: Plan, fresh, family, writer, bar) -> int:
    """Run MMCTest over each family of ``fresh`` (lists of task indices), writing its rows when
    it is decided; the number of rows computed."""
    tasks, data, analysis, chunk_size = plan.tasks, plan.data, plan.analysis, plan.chunk_size
    params: TestParams = analysis.params
    k_max = params.k
    computed = 0
    with executors.executor(plan.jobs) as pool:
        def evaluate(units):  # [(task, start, stop)] -> {task: row}
            payload, arrays = [], {}
            for i, start, stop in units:
                if tasks[i].measures not in arrays:
                    arrays[tasks[i].measures] = data.task_arrays(tasks[i].measures)
                payload.append((i, list(arrays[tasks[i].measures]),
                                {"level": tasks[i].key["level"], "coefficient": tasks[i].key["coefficient"],
                                 "start": start, "stop": stop}))
            chunks = [payload[j:j + chunk_size] for j in range(0, len(payload), chunk_size)]
            if pool is None:
                return dict(r for c in chunks for r in evaluate_chunk(analysis.evaluate, analysis.arguments, c))
            futures = [pool.submit(evaluate_chunk, analysis.evaluate, analysis.arguments, c) for c in chunks]
            return dict(r for f in futures for r in f.result())

        first = evaluate([(i, 0, 0) for members in fresh for i in members])   # delta, conventions
        states = []
        for members in fresh:
            defined = [i for i in members if first[i]["delta"] is not None and not np.isnan(first[i]["delta"])
                       and first[i]["undefined"] is None]
            states.append((members, defined, sequential.MMCTest(len(defined), params.alpha, params.correction,
                                                                params.risk, k_max)))
        while states:
            todo = {}
            for n, (members, defined, test) in enumerate(states):
                if (pending := test.pending()) is not None:
                    todo[n] = pending
            drawn = evaluate([(states[n][1][t], int(test_used), stop) for n, (tests, stop) in todo.items()
                              for t, test_used in zip(tests, states[n][2].k_used[tests])])
            for n, (tests, stop) in todo.items():
                defined = states[n][1]
                states[n][2].record(tests, [drawn[defined[t]]["count"] for t in tests],
                                    [drawn[defined[t]]["n_valid"] for t in tests])
            for members, defined, test in [s for s in states if s[2].pending() is None]:
                _write_sequential(tasks, members, defined, test, first, analysis, family, writer)
                computed += len(members)
                bar.advance(len(members))
            states = [s for s in states if s[2].pending() is not None]
    return computed


def _write_sequential(tasks, members, defined, test, first, analysis, family, writer) -> None:
    """The rows of one decided family: p_value the estimate at stop (the fixed test's formula),
    p_adjusted the correction of those estimates, significant the certified decision."""
    params: TestParams = analysis.params
    r = test.result()
    add_one = params.method.startswith("perm-")
    pvalues = [hypothesis.resampling_pvalue(first[i]["delta"], int(r.count[t]), int(r.n_valid[t]), add_one)
               for t, i in enumerate(defined)]
    adjusted = stats.correct_pvalues(pvalues, params.correction) if defined else []
    size = None if params.correction == "none" else len(defined)
    procedure = test.conventions()
    position = {i: t for t, i in enumerate(defined)}
    for i in members:
        conv = dict(first[i]["conventions"])
        t = position.get(i)
        if t is None:
            row = {**_test_row(first[i]["delta"], None, np.nan, conv), "k_used": 0}
            row.update(p_adjusted=None, significant=False)
        else:
            conv.update(k=params.k, k_used=int(r.k_used[t]), n_valid_samples=int(r.n_valid[t]),
                        sequential={**procedure, "decision": str(r.decision[t]),
                                    "state": (f"decided at k_used = {int(r.k_used[t])}" if r.decision[t] !=
                                              sequential.UNDECIDED else f"undecided at k_max = {params.k}"),
                                    "p_interval": [float(r.lower[t]), float(r.upper[t])],
                                    "p_adjusted": "the correction applied to the p-values at stop; "
                                                  "significant is the certified decision"})
            conv["pvalue_formula"] = conv["pvalue_formula"].replace("k)", "k_used)").replace("/ k;", "/ k_used;")
            row = {**_test_row(first[i]["delta"], None, pvalues[t], conv), "k_used": int(r.k_used[t])}
            p_adj = bookkeeping.as_float(adjusted[t])
            row.update(p_adjusted=p_adj, significant=bool(r.decision[t] == sequential.SIGNIFICANT and
                                                          p_adj is not None))
        writer.add(tasks[i], {**row, "family": family, "family_size": size}, params.columns())


def correction_family(metrics: Sequence[str], correction: str) -> str | None:
    """The ``family`` column: sha256 (first 16 hex digits) of the sorted metric names compared
    together; None without a correction (p_adjusted = p_value whatever was compared)."""
    if correction == "none":
        return None
    return hashlib.sha256("\x1f".join(sorted(metrics)).encode()).hexdigest()[:16]


def _families(tasks: list[Task], group: str) -> list[list[int]]:
    """The tasks corrected together: per level and coefficient, and per metric_a with the group
    "metric"."""
    families: dict[tuple, list[int]] = {}
    for i, t in enumerate(tasks):
        k = t.key
        family = (k["level"], k["coefficient"]) + ((k["metric_a"],) if group == "metric" else ())
        families.setdefault(family, []).append(i)
    return list(families.values())


def _adjust(tasks: list[Task], raw: dict[int, dict], params: TestParams) -> dict[int, tuple]:
    """(p_adjusted, significant, family_size, resolution) per task, the correction applied within
    each family; family_size (the number of defined p-values corrected together) None for
    "none". A NULL p-value (undefined test) is left out of its family: p_adjusted NULL, not
    significant. ``resolution`` (a dict for the row's conventions, or None) says whether the
    family can reach significance at all with the resamples its tests drew
    (:func:`test_resolution`); in a family that cannot, no test is significant -- a
    ``count / k`` p-value of 0 only says p < 1/k, not that p is below the corrected threshold."""
    out = {}
    method, correction, alpha = params.method, params.correction, params.alpha
    for members in _families(tasks, params.correction_group):
        defined = [i for i in members if raw[i]["p_value"] is not None]
        adjusted = stats.correct_pvalues([raw[i]["p_value"] for i in defined], correction) if defined else []
        size = None if correction == "none" else len(defined)
        drawn = [int(raw[i]["k_used"]) for i in defined if raw[i].get("k_used") is not None]
        res = (test_resolution(method, max(drawn, default=None), correction, len(defined), alpha)
               if method is not None and defined else None)
        resolvable = res is None or res.resolvable
        note = None if res is None else res.as_dict()
        for i, p in zip(defined, adjusted):
            out[i] = (float(p), bool(p <= alpha) and resolvable, size, note)
        for i in members:
            out.setdefault(i, (None, False, size, note))
    return out


def _latest_tests(wh: Warehouse, scope: Scope, params: TestParams) -> dict[tuple, dict]:
    rows = wh.con.execute(
        """SELECT * FROM latest_hypothesis_tests WHERE dataset = ? AND human = ? AND method = ?
           AND alternative = ? AND correction = ? AND correction_group = ?""",
        [scope.dataset, scope.human, params.method, params.alternative,
         params.correction, params.correction_group]).df()
    return {(r["metric_a"], r["metric_b"], r["level"], r["coefficient"]): r for r in rows.to_dict("records")}


def _same_as_latest(latest: dict, task: Task, raw: dict, adjusted: tuple, analysis: Analysis,
                    family: str | None) -> bool:
    prev = latest.get(tuple(task.key.values()))
    if prev is None:
        return False
    same_params = all(bookkeeping.none_if_nan(prev[c]) == v for c, v in analysis.params.columns().items())
    return (same_params and prev["fingerprint"] == task.fingerprint and bookkeeping.none_if_nan(prev["family"]) == family
            and prev["alpha"] == analysis.params.alpha
            and bookkeeping.none_if_nan(prev["p_value"]) == raw["p_value"]
            and bookkeeping.none_if_nan(prev["p_adjusted"]) == adjusted[0]
            and bool(bookkeeping.none_if_nan(prev["significant"]) or False) == adjusted[1]
            and json.loads(prev["conventions"]).get("resolution") == adjusted[3])
