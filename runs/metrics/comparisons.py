"""compare: a test of each ordered pair of metrics (table ``hypothesis_tests``).

The analysis (:func:`compare_analysis`), its parameters (:class:`TestParams`), the functions the
workers run (:func:`evaluate_test`; :func:`evaluate_test_range` for the sequential tests) and the
two flows the analysis gives :func:`metaeval.runs.engine.runner.run` (``Analysis.flow``):

- :func:`run_compare`: the raw tests are stored and reused whatever the correction; the
  correction is then applied over each family (:func:`correction_family`, :func:`families`) and
  a row written for every key whose corrected values changed;
- :func:`run_sequential_compare`: the sequential tests (MMCTest), whose families are resampled
  together in rounds until each decision at the corrected level is certain.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from metaeval.analyses import annotators, conclusions, stats, stored_tests
from metaeval.analyses.stats import hypothesis, protocols, resolution, sequential, vocabulary
from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine import bookkeeping, executors
from metaeval.runs.engine import clusters as clustering
from metaeval.runs.metrics.correlations import aggregated, calibrated_epsilons, partial_protocol
from metaeval.runs.engine.parameters import (DEFAULT_AGGREGATE, DEFAULT_CORRECTION, DEFAULT_CORRECTION_GROUP, DEFAULT_K_MAX,
                                      DEFAULT_RISK, DEFAULT_SYSTEM_INPUTS, Params, aggregate_setting, check_aggregate,
                                      check_annotator_resampling, check_k, check_parametric, check_partial,
                                      check_system_inputs, clusters_setting, setting)
from metaeval.runs.engine.runner import (Analysis, Plan, RunSummary, Task, compute, evaluate_chunk, progress_bar,
                                  start_analysis_run, task_id)
from metaeval.runs.engine.selection import Scope, attribute_control, control_of


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
    aggregate: str = aggregate_setting()
    resample_clusters: str | None = clusters_setting()

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
                    "system_inputs": self.system_inputs, "aggregate": self.aggregate,
                    **({} if self.resample_clusters is None else {"resample_clusters": self.resample_clusters})}
        return super().arguments()

    def recorded(self) -> dict[str, Any]:
        recorded = super().recorded()
        if self.focus is not None:
            recorded["focus"] = list(self.focus)
        return recorded


def comparison_tasks(scope: Scope, focus: Sequence[str] | None = None) -> list[Task]:
    """Every ordered pair (a, b) of the scope's metrics; with ``focus``, only those with a in it."""
    return [Task({"metric_a": a, "metric_b": b, "level": lv, "coefficient": c}, (a, b, scope.human),
                 control=attribute_control(c))
            for a in scope.metrics if focus is None or a in focus for b in scope.metrics if a != b
            for lv in scope.levels for c in scope.coefficients]


#: How each test method forms its p-value: the conclusion layer's (analyses.stored_tests.pvalue_formula).
pvalue_formula = stored_tests.pvalue_formula


def analysis_of(scope: Scope, p) -> Analysis:
    """The compare analysis of ``scope`` under the ``compare`` family's
    :class:`~metaeval.runs.engine.families.Parameters` ``p`` (the command line's and the Python API's
    one object): :func:`compare_analysis` with ``k_max`` as k when ``p.sequential``. ``k_max``
    and ``risk`` are options of ``sequential`` (None: their defaults)."""
    if not p.sequential and (p.k_max is not None or p.risk is not None):
        raise WarehouseError(Message(Argument("k_max"), " and ", Argument("risk"), " are options of ",
                                     Argument("sequential")))
    k_max = DEFAULT_K_MAX if p.k_max is None else p.k_max
    risk = DEFAULT_RISK if p.risk is None else p.risk
    return compare_analysis(scope, p.method, k_max if p.sequential else p.k, p.alpha, p.seed, p.alternative,
                            p.correction, p.correction_group, p.k_block, p.system_inputs,
                            resample_annotators=p.resample_annotators, risk=risk if p.sequential else None,
                            aggregate=p.aggregate, resample_clusters=p.resample_clusters)


def compare_analysis(scope: Scope, method: str, k: int, alpha: float, seed: int, alternative: str,
                     correction: str, group: str, k_block: int | None = None,
                     system_inputs: str = DEFAULT_SYSTEM_INPUTS, focus: Sequence[str] | None = None,
                     resample_annotators: str | None = None, risk: float | None = None,
                     aggregate: str = DEFAULT_AGGREGATE, resample_clusters: str | None = None) -> Analysis:
    """``risk``: sequential tests (MMCTest, :mod:`analyses.stats.sequential`), each pair resampled
    only while its decision at the corrected level is uncertain, up to ``k`` (k_max) resamples, with
    P(any decision differs from the exact p-values') <= ``risk``; None: every pair draws ``k``.
    ``focus``: test only the pairs (a, b) with a in ``focus`` (against every other metric of the
    scope). Each such row is the row a compare of every pair writes: with the correction group
    "metric", a's family is its pairs against all the scope's metrics either way (group "all"
    would change the family, so it is refused with a focus). ``resample_clusters``: the
    resampling tests draw (bootstrap) or swap (permutation) whole clusters of inputs
    (:mod:`metaeval.analyses.stats.clusters`)."""
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
        raise WarehouseError(Message(f"comparing metrics needs at least two; the scope has {list(scope.metrics)}: "
                                     "choose two or more with ",
                                     Argument("metrics", placeholder="GLOB"), " (or ingest another metric)"))
    check_parametric(scope.coefficients, method, "williams", "Williams' test is not defined for")
    resampled = method != "williams"
    if resampled:
        check_k(k, alpha, "test", "k" if risk is None else "k_max")
    if k_block is not None and (not method.startswith("perm-") or k_block < 1):
        raise WarehouseError(Message(Argument("k_block"), " (early stopping) applies to the permutation tests with a "
                                     f"block size >= 1; got method {method!r}, k_block {k_block}"))
    if resample_annotators is not None:
        check_annotator_resampling(scope.coefficients, resample_annotators, method.startswith("boot-"),
                                   "paired bootstrap tests (boot-systems, boot-inputs, boot-both)")
    check_partial(scope.coefficients, resample_annotators=resample_annotators, k_block=k_block,
                  sequential=risk is not None)
    check_aggregate(aggregate, scope.levels, scope.coefficients, resample_annotators=resample_annotators)
    if method == hypothesis.MTME_SYSTEMS:
        _check_mtme_systems(scope, risk)
    clustering.check_clustered(resample_clusters, method, resample_annotators, scope.coefficients)
    params = TestParams(method, alternative, k if resampled else None, seed if resampled else None, k_block,
                        check_system_inputs(system_inputs), resample_annotators, risk, alpha, correction, group, focus,
                        aggregate, resample_clusters)
    if risk is not None:
        return _sequential_analysis(params, scope, focus, k_block)
    return Analysis("compare", params, ("metric_a", "metric_b", "level", "coefficient"),
                    comparison_tasks(scope, focus), evaluate_test, flow=run_compare)


def _check_mtme_systems(scope: Scope, risk) -> None:
    """mt-metrics-eval's system-level permutation (perm-systems-mtme) tests system scores: the
    system level alone, no partial coefficient, no sequential rounds."""
    method = Argument("method", hypothesis.MTME_SYSTEMS)
    if tuple(scope.levels) != ("system",):
        raise WarehouseError(Message(method, " is mt-metrics-eval's system-level test: give ",
                                     Argument("levels", ["system"]), f"; got {', '.join(scope.levels)}"))
    if any(control_of(c) is not None for c in scope.coefficients):
        raise WarehouseError(Message(method, " tests system scores, not a partial correlation: give a plain ",
                                     Argument("coefficients", placeholder="COEFFICIENT")))
    if risk is not None:
        raise WarehouseError(Message(Argument("sequential"), " is not offered with ", method,
                                     " (its early stopping is ", Argument("k_block"), ")"))


def _sequential_analysis(params: TestParams, scope: Scope, focus, k_block) -> Analysis:
    """compare_analysis with sequential tests: the correction, its group and alpha decide how many
    resamples a pair draws, so they are parameters of the rows (matched when reusing them)."""
    if not params.method.startswith(("perm-", "boot-")):
        raise WarehouseError(Message(Argument("sequential"),
                                     f" applies to the resampling tests (perm-*, boot-*); got {params.method!r}"))
    if k_block is not None:
        raise WarehouseError(Message(Argument("sequential"), " and ", Argument("k_block"), " are two ways of stopping "
                                     "early; give one (", Argument("k_block"), " is mt-metrics-eval's rule, ",
                                     Argument("sequential"), " the one with a bound on the resampling risk)"))
    if params.resample_annotators is not None:
        raise WarehouseError(Message(Argument("sequential"), " does not re-draw annotators; leave out ",
                                     Argument("resample_annotators")))
    try:
        sequential.risk_iv(params.risk)
    except ValueError:
        raise WarehouseError(Message(Argument("risk"), f" must lie strictly between 0 and 1; got {params.risk!r}")) from None
    return Analysis("compare", params, ("metric_a", "metric_b", "level", "coefficient"),
                    comparison_tasks(scope, focus), evaluate_test_range,
                    evaluate_keys=("level", "coefficient", "start", "stop"), flow=run_sequential_compare)


# --- evaluation (pure, runs in worker processes) ---------------------------------------------
def evaluate_test(arrays, level, coefficient, method, alternative, k, seed, k_block=None,
                  system_inputs=DEFAULT_SYSTEM_INPUTS, resample_annotators=None, aggregate=DEFAULT_AGGREGATE,
                  resample_clusters=None) -> dict:
    from metaeval.analyses.stats import summed

    arrays, labels = clustering.split(arrays, resample_clusters)
    if isinstance(arrays[0], summed.Summed):   # a system-level measure's statistics (runs/engine/system_level.py)
        r = summed.paired_bootstrap_test(*arrays, coefficient, method.removeprefix("boot-"), k=k,
                                         alternative=alternative, seed=seed)
        return {**_test_row(r.delta, None, r.pvalue, {**r.conventions, "system_inputs": system_inputs}),
                "k_used": int(r.samples.size)}
    if resample_annotators is not None:
        X, Y, Z, A = arrays
        (X, Y, Z), paired, conv, kept = protocols.apply([X, Y, Z], level, system_inputs)
        if kept is not None:
            A = A[:, kept]
        if not paired:
            raise ValueError(Message(Argument("resample_annotators"), " draws the metrics' and the human's inputs "
                                     "together; with inputs the human did not judge, use ",
                                     Argument("system_inputs", "judged")))
        r = annotators.annotator_paired_bootstrap_test(X, Y, A, level, coefficient, method.removeprefix("boot-"),
                                                       k=k, alternative=alternative, seed=seed,
                                                       annotators=resample_annotators, Z=Z)
        return {**_test_row(r.delta, None, r.pvalue, {**r.conventions, **conv}), "k_used": int(r.samples.size)}
    if control_of(coefficient) is not None:
        return _evaluate_partial_test(arrays, level, coefficient, method, alternative, k, seed, system_inputs)
    (X, Y, Z), paired, conv, kept = protocols.apply(arrays, level, system_inputs)
    coef, conv_aggregate = aggregated(coefficient, aggregate)
    conv = {**conv, **conv_aggregate, **clustering.conventions(resample_clusters)}
    groups = _clusters_of(labels, kept, paired, resample_clusters)
    if method == "williams":
        r = stats.williams_test(X, Y, Z, level, coef, alternative=alternative)
        return _test_row(r.r12 - r.r13, r.statistic, r.pvalue, {**r.conventions, **conv})
    if method == hypothesis.MTME_SYSTEMS:
        r = hypothesis.system_scores_permutation_test(X, Y, Z, coef, k=k, alternative=alternative, seed=seed,
                                                      k_block=k_block)
        return {**_test_row(r.delta, None, r.pvalue, {**r.conventions, **conv}), "k_used": int(r.samples.size)}
    family, how = method.split("-")
    if family == "perm":
        r = stats.permutation_test(X, Y, Z, level, coef, how, k=k, alternative=alternative, seed=seed,
                                   k_block=k_block, clusters=groups)
    else:
        r = stats.paired_bootstrap_test(X, Y, Z, level, coef, how, k=k, alternative=alternative, seed=seed,
                                        paired_inputs=paired, clusters=groups)
    calibrated = calibrated_epsilons([X, Y, Z], level, coefficient, ["epsilon_a", "epsilon_b"])
    return {**_test_row(r.delta, None, r.pvalue, {**r.conventions, **conv, **calibrated}),
            "k_used": int(r.samples.size)}


def _evaluate_partial_test(arrays, level, coefficient, method, alternative, k, seed, system_inputs) -> dict:
    """The test of a partial coefficient (analyses.stats.partial): Williams' t on the three partial
    correlations with n reduced by g - 1, the permutation test on residuals, or the paired
    bootstrap re-centring every resample."""
    from metaeval.analyses.stats import partial

    (X, Y, Z), groups, conv = partial_protocol(arrays, level, system_inputs, coefficient)
    if method == "williams":
        r = partial.partial_williams_test(X, Y, Z, groups, coefficient, alternative=alternative)
        return _test_row(r.r12 - r.r13, r.statistic, r.pvalue, {**r.conventions, "coefficient": coefficient, **conv})
    family, how = method.split("-")
    if family == "perm":
        r = partial.partial_permutation_test(X, Y, Z, groups, coefficient, how, k=k, alternative=alternative, seed=seed)
    else:
        r = partial.partial_paired_bootstrap_test(X, Y, Z, groups, coefficient, how, k=k, alternative=alternative,
                                                  seed=seed)
    return {**_test_row(r.delta, None, r.pvalue, {**r.conventions, "coefficient": coefficient, **conv}),
            "k_used": int(r.samples.size)}


def evaluate_test_range(arrays, level, coefficient, method, alternative, seed, start, stop,
                        system_inputs=DEFAULT_SYSTEM_INPUTS, aggregate=DEFAULT_AGGREGATE,
                        resample_clusters=None) -> dict:
    """Resamples ``start .. stop - 1`` of the test :func:`evaluate_test` computes (the same
    resamples for the same seed): delta, the exceedances ``count`` among the ``n_valid`` defined
    ones, and the test's conventions (for the sequential tests, which draw in rounds)."""
    arrays, labels = clustering.split(arrays, resample_clusters)
    (X, Y, Z), paired, conv, kept = protocols.apply(arrays, level, system_inputs)
    coef, conv_aggregate = aggregated(coefficient, aggregate)
    conv = {**conv, **conv_aggregate, **clustering.conventions(resample_clusters)}
    family, how = method.split("-")
    r = hypothesis.range_exceedances(X, Y, Z, level, coef, "permutation" if family == "perm" else "bootstrap",
                                     how, alternative, seed, start, stop, paired_inputs=paired,
                                     clusters=_clusters_of(labels, kept, paired, resample_clusters))
    calibrated = calibrated_epsilons([X, Y, Z], level, coefficient, ["epsilon_a", "epsilon_b"]) if stop == start else {}
    return {"delta": r.delta, "count": r.count, "n_valid": r.n_valid, "undefined": r.undefined,
            "conventions": {**r.conventions, **conv, **calibrated}}


def _clusters_of(labels, kept, paired: bool, resample_clusters: str | None) -> list | None:
    """The cluster labels of the inputs a test reads (None: unclustered); refused where the
    metrics' and the human's inputs are drawn unpaired."""
    if labels is not None and not paired:
        raise WarehouseError(Message(Argument("resample_clusters", resample_clusters), " draws the metrics' and "
                                     "the human's inputs together; with inputs the human did not judge, use ",
                                     Argument("system_inputs", "judged")))
    return clustering.kept(labels, kept)


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


# --- comparisons: raw tests, then the family correction ---------------------------------------
def run_compare(plan: Plan) -> RunSummary:
    """Raw p-values are reused across runs whatever the correction; the correction is then
    applied over each family, and a row is written for every key whose latest corrected row
    differs (a new metric changes its whole family's Bonferroni factor, for example)."""
    wh, scope, analysis, tasks, done, todo = plan.wh, plan.scope, plan.analysis, plan.tasks, plan.done, plan.todo
    params: TestParams = analysis.params
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
            writer.add(tasks[i], {**row, **pending}, params)

        computed = compute(plan, todo, on_result, writer, run_id)
        writer.flush()
        adjusted = _adjust(tasks, raw, params)
        # rows computed by this run get their corrected values; reused ones a new row if it changed
        update = pd.DataFrame([{"metric_a": tasks[i].key["metric_a"], "metric_b": tasks[i].key["metric_b"],
                                "level": tasks[i].key["level"], "coefficient": tasks[i].key["coefficient"],
                                "p_adjusted": adjusted[i][0], "significant": adjusted[i][1],
                                "family_size": adjusted[i][2],
                                "conventions": bookkeeping.conventions_json({**raw[i]["conventions"], "resolution": adjusted[i][3],
                                                                        **bookkeeping.subset_conventions(scope.subset)})}
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
                           params)
        writer.flush()
        bookkeeping.finish_run(wh, run_id, "finished", computed)
    return RunSummary(run_id, len(tasks), computed, writer.written)


def run_sequential_compare(plan: Plan) -> RunSummary:
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
    groups = families(tasks, params.correction_group)
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
    with executors.of(plan.wh).pool(plan.jobs) as pool:
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
        writer.add(tasks[i], {**row, "family": family, "family_size": size}, params)


def correction_family(metrics: Sequence[str], correction: str) -> str | None:
    """The ``family`` column: sha256 (first 16 hex digits) of the sorted metric names compared
    together; None without a correction (p_adjusted = p_value whatever was compared)."""
    if correction == "none":
        return None
    return hashlib.sha256("\x1f".join(sorted(metrics)).encode()).hexdigest()[:16]


def families(tasks: list[Task], group: str) -> list[list[int]]:
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
    each family by :func:`metaeval.analyses.conclusions.decide`; family_size (the number of
    defined p-values corrected together) None for "none". A NULL p-value (undefined test) is left
    out of its family: p_adjusted NULL, not significant. ``resolution`` (a dict for the row's
    conventions, or None) says whether the family can reach significance at all with the
    resamples its tests drew (:func:`metaeval.analyses.stored_tests.resolution_of`); in a family that cannot, no test is
    significant -- a ``count / k`` p-value of 0 only says p < 1/k, not that p is below the
    corrected threshold -- nor a test whose p counts fewer valid resamples (``n_valid_samples``)
    than its own resolution needs to reach the threshold (p = count / n_valid says only p < 1/n_valid)."""
    out = {}
    method, correction, alpha = params.method, params.correction, params.alpha
    for members in families(tasks, params.correction_group):
        defined = [i for i in members if raw[i]["p_value"] is not None]
        size = None if correction == "none" else len(defined)
        drawn = [int(raw[i]["k_used"]) for i in defined if raw[i].get("k_used") is not None]
        k = max(drawn, default=None)
        formula = pvalue_formula(method) if method is not None else "parametric"
        verdict = conclusions.decide([raw[i]["p_value"] for i in defined], formula=formula,
                                     k=None if formula == "parametric" else (k or None), correction=correction,
                                     alpha=alpha, n_valid=_n_valid(formula, [raw[i] for i in defined]))
        res = (stored_tests.resolution_of(formula, k, correction, len(defined), alpha)
               if method is not None and defined else None)
        note = None if res is None else res.as_dict()
        for i, p, significant in zip(defined, verdict.adjusted, verdict.significant):
            out[i] = (float(p), bool(significant) and (res is None or res.resolvable), size, note)
        for i in members:
            out.setdefault(i, (None, False, size, note))
    return out


def _n_valid(formula: str, rows: list[dict]) -> list | None:
    """The valid resamples of each paired bootstrap test (p = count / n_valid: its own resolution
    1/n_valid); None for the other tests (a permutation test that stopped early, ``k_block``, drew
    fewer resamples by design: mt-metrics-eval's rule, decided on the family's k as before)."""
    if formula != "count":
        return None
    return [(r.get("conventions") or {}).get("n_valid_samples") for r in rows]


def _latest_tests(wh: Store, scope: Scope, params: TestParams) -> dict[tuple, dict]:
    rows = wh.con.execute(
        """SELECT * FROM latest_hypothesis_tests WHERE dataset = ? AND human = ? AND method = ?
           AND alternative = ? AND correction = ? AND correction_group = ? AND subset = ? AND aggregate = ?""",
        [scope.dataset, scope.human, params.method, params.alternative,
         params.correction, params.correction_group, scope.subset, params.aggregate]).df()
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
