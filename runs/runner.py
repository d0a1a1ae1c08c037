"""Running the statistics over the warehouse and persisting every result.

The statistics (:mod:`analyses.stats`) are pure functions on arrays; this module is the thin
layer around them:

1. **scope** — resolve the dataset, the human judgment and the metric globs to measures;
2. **plan** — one *task* per result key (metric or metric pair × level × coefficient), each
   with the fingerprint of the cells it reads (the outer-aligned matrix of its own measures,
   oriented so that higher is better);
3. **skip** what the warehouse already holds for the same key, parameters and fingerprint
   (``--force`` recomputes);
4. **compute** the rest — in this process or in ``jobs`` worker processes; results do not
   depend on ``jobs`` or on order, since every task uses the seed it is given;
5. **write** results as they complete, in small transactions, so an interrupted run keeps what
   it finished and the same command resumes.

Every run is a row of ``analysis_runs`` (parameters, seed, data fingerprint, version, status).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import shlex
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from metaeval import owners
from metaeval.analyses import annotators, stats
from metaeval.analyses.stats import _validation, protocols
from metaeval.analyses.stats.results import NAN_POLICY
from metaeval.core import Warehouse
from metaeval.errors import WarehouseError
from metaeval.runs import executors
from metaeval.signals import interruption

LEVELS = ("system", "summary", "global")
COEFFICIENTS = ("pearson", "spearman", "kendall")
#: What correlate, ci and compare accept: the default COEFFICIENTS, Kendall's tau-c, and the
#: variants with ties of Deutsch, Foster & Freitag (2023); Kendall a, b, 23 and acc-23 also as
#: ``NAME[eps=E]`` (tie threshold E), 23 and acc-23 as ``NAME[tie-calibrated]`` (tie calibration).
CORRELATION_COEFFICIENTS = (*COEFFICIENTS, "kendall-c", "kendall-a", "kendall-23", "acc-23")
CI_METHODS = ("fisher", "boot-systems", "boot-inputs", "boot-both")
ALTERNATIVES = _validation.ALTERNATIVES
TEST_METHODS = ("williams", "perm-systems", "perm-inputs", "perm-both", "boot-systems", "boot-inputs", "boot-both")
CORRECTIONS = ("none", "bonferroni", "holm", "bh")
CORRECTION_GROUPS = ("metric", "all")
SYSTEM_INPUTS = protocols.SYSTEM_INPUTS
ANNOTATOR_RESAMPLING = annotators.ANNOTATOR_RESAMPLING
#: all: Deutsch, Dror & Roth (2022) recommend scoring the metric on every input it has; and it
#: is what a system mean over the stored cells has always been here (see protocols).
DEFAULT_SYSTEM_INPUTS = "all"
DEFAULT_SEED = 0
FLUSH_SECONDS = 2.0
ORIENTATION = "measures whose direction is 'lower' (lower is better) are negated before analysis"
#: The metaeval versions whose results this one reproduces exactly (same computations and
#: conventions). A release that changes how any result is computed starts a new list; one that
#: does not (docs, speed, CLI) adds itself, so its users keep their results. A test checks that
#: the package version is listed, so every release decides.
SAME_RESULTS_AS = ("0.4.0",)  # 0.4.0: summary/global levels and simulations leave unjudged inputs out
#: SQL condition on a results table: the row was written by one of those versions. Results are
#: reused only under it, so an upgrade that changes a computation never serves old numbers.
THIS_VERSION = "run_id IN (SELECT run_id FROM analysis_runs WHERE list_contains($versions, version))"


def version_parameter() -> dict[str, list[str]]:
    """The $versions binding of :data:`THIS_VERSION`."""
    return {"versions": list(SAME_RESULTS_AS)}


# --- scope ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Scope:
    """What a command analyses: the human judgment and the metrics of one dataset.

    ``human`` is None for human-free analyses (inter-metric agreement): their tables have no
    ``human`` column and their tasks read metrics only.
    """

    dataset: str
    human: str | None
    metrics: tuple[str, ...]
    levels: tuple[str, ...]
    coefficients: tuple[str, ...]

    @property
    def measures(self) -> tuple[str, ...]:
        """The metrics, then the human judgment if any."""
        return (*self.metrics, self.human) if self.human is not None else self.metrics


def resolve_scope(wh: Warehouse, dataset: str, human: str | None, metric_globs: Sequence[str] = (),
                  levels: Sequence[str] = (), coefficients: Sequence[str] = (),
                  valid_levels: Sequence[str] = LEVELS) -> Scope:
    """Check names against the warehouse; the default metrics are all automatic measures and
    the default levels all ``valid_levels`` (analyses with other levels than correlations').
    ``human`` None: a human-free scope (no judgment is checked or read)."""
    measures = wh.measure_kinds(dataset)
    kinds = dict(zip(measures["measure"], measures["kind"]))
    humans = sorted(m for m, k in kinds.items() if k == "human")
    automatic = sorted(m for m, k in kinds.items() if k == "automatic")
    if human is not None and (human not in kinds or kinds[human] != "human"):
        raise WarehouseError(f"dataset {dataset!r} has no human judgment {human!r}; "
                             f"its human judgments: {', '.join(humans) or 'none'}")
    if metric_globs:
        metrics = []
        for g in metric_globs:
            hit = [m for m in automatic if fnmatch.fnmatchcase(m, g)]
            if not hit:
                raise WarehouseError(f"--metric {g!r} matches no automatic measure of {dataset!r}; "
                                     f"it has: {', '.join(automatic)}")
            metrics += [m for m in hit if m not in metrics]
    else:
        metrics = automatic
    if not metrics:
        raise WarehouseError(f"dataset {dataset!r} has no automatic measures to analyse")
    return Scope(dataset, human, tuple(metrics), _choices(levels, valid_levels, "level"),
                 coefficient_choices(coefficients))


def coefficient_choices(given: Sequence[str]) -> tuple[str, ...]:
    """The coefficients of a scope: :data:`COEFFICIENTS` by default; each of
    :data:`CORRELATION_COEFFICIENTS`, or one with a tie threshold (``acc-23[eps=0.01]``,
    ``kendall-23[tie-calibrated]``), with its threshold written canonically (``[eps=0.010]`` is
    ``[eps=0.01]``), so that one setting is one result key."""
    out = []
    for g in dict.fromkeys(given):
        if g in CORRELATION_COEFFICIENTS:
            out.append(g)
            continue
        base = g.partition("[")[0] if isinstance(g, str) else g
        if base not in CORRELATION_COEFFICIENTS:
            raise WarehouseError(f"unknown coefficient {g!r}; choose from {', '.join(CORRELATION_COEFFICIENTS)}")
        try:
            c = _validation.coefficient_iv(g)
            out.append(base + c.label[len(c.base_label):])
        except ValueError as exc:
            raise WarehouseError(str(exc)) from None
    return tuple(dict.fromkeys(out)) or COEFFICIENTS


def with_tie_threshold(coefficients: Sequence[str], epsilon: float | None = None,
                       calibrate: bool = False) -> tuple[str, ...]:
    """``coefficients`` with the tie threshold ``epsilon`` (``NAME[eps=E]``) or tie calibration
    (``NAME[tie-calibrated]``) applied to those that take it (the others unchanged); with
    calibration and no coefficient, acc-23. An error if none takes it."""
    if epsilon is None and not calibrate:
        return tuple(coefficients)
    if epsilon is not None and calibrate:
        raise WarehouseError("give a tie threshold (--epsilon) or --tie-calibration, not both")
    takes = _validation.CALIBRATED_COEFFICIENTS if calibrate else _validation.EPSILON_COEFFICIENTS
    coefficients = tuple(coefficients) or (("acc-23",) if calibrate else ())
    if not any(c in takes for c in coefficients):
        what = "--tie-calibration" if calibrate else "--epsilon"
        raise WarehouseError(f"{what} applies to the coefficients {', '.join(takes)}; "
                             f"got {', '.join(coefficients) or 'the defaults (pearson, spearman, kendall)'}")
    suffix = f"[{_validation.TIE_CALIBRATED}]" if calibrate else f"[eps={_validation.epsilon_iv(epsilon)!r}]"
    return tuple(f"{c}{suffix}" if c in takes else c for c in coefficients)


def _choices(given: Sequence[str], valid: Sequence[str], what: str) -> tuple[str, ...]:
    given = tuple(dict.fromkeys(given)) or tuple(valid)
    bad = [g for g in given if g not in valid]
    if bad:
        raise WarehouseError(f"unknown {what} {bad[0]!r}; choose from {', '.join(valid)}")
    return given


# --- data ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Data:
    """Every measure of a scope on one outer-aligned grid, oriented so higher is better."""

    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    values: dict[str, np.ndarray]
    directions: dict[str, str]
    #: human measure -> every annotator's values, (N, M, K) on the same grid and orientation
    #: (loaded only for the analyses that resample annotators)
    annotations: dict[str, np.ndarray] = field(default_factory=dict)

    def restrict(self, measures: Sequence[str]) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
        """The arrays of ``measures`` on the systems and inputs where any of them has a value
        (what ``Warehouse.matrix`` returns for just these measures), and those row/column masks.

        When they cover the whole grid (the common case), the arrays are read-only views of
        the data, not copies: a task of a 20 x 500 000 grid reads 80 MB per measure, once."""
        arrays = [self.values[m] for m in measures]
        rows, cols = np.zeros(len(self.systems), dtype=bool), np.zeros(len(self.inputs), dtype=bool)
        for a in arrays:
            present = ~np.isnan(a)
            rows |= present.any(axis=1)
            cols |= present.any(axis=0)
        if rows.all() and cols.all():
            return [_read_only(np.ascontiguousarray(a)) for a in arrays], rows, cols
        return [np.ascontiguousarray(a[np.ix_(rows, cols)]) for a in arrays], rows, cols

    def task_arrays(self, measures: Sequence[str]) -> list[np.ndarray]:
        """What a task of ``measures`` computes on: their restricted matrices, then the annotator
        values of those that have them loaded, restricted alike."""
        arrays, rows, cols = self.restrict(measures)
        return [*arrays, *(np.ascontiguousarray(self.annotations[m][np.ix_(rows, cols)])
                           for m in measures if m in self.annotations)]

    def fingerprint(self, measures: Sequence[str]) -> tuple[str, int, int]:
        """sha256 of the restricted cells (labels, measure names, directions, values), and
        the numbers of systems and inputs they cover."""
        arrays, rows, cols = self.restrict(measures)
        digest = hashlib.sha256()
        labels = (*np.asarray(self.systems)[rows], "\x1e", *np.asarray(self.inputs)[cols], "\x1e")
        digest.update(b"".join(label.encode() + b"\x1f" for label in labels))  # = one update per label
        for m, a in zip(measures, arrays):
            digest.update(f"{m}\x1f{self.directions[m]}\x1f".encode())
            digest.update(np.ascontiguousarray(a, dtype="<f8").data)  # the bytes of astype("<f8"), uncopied
            if m in self.annotations:  # the results read every annotator's value, not only the means
                digest.update(np.ascontiguousarray(self.annotations[m][np.ix_(rows, cols)], dtype="<f8").tobytes())
        return digest.hexdigest(), int(rows.sum()), int(cols.sum())


def _read_only(a: np.ndarray) -> np.ndarray:
    """A view of ``a`` that cannot be written (tasks share the data's arrays, uncopied)."""
    view = a.view()
    view.flags.writeable = False
    return view


def load_data(wh: Warehouse, scope: Scope, *, annotations: bool = False) -> Data:
    """The scope's matrices on one grid, oriented; with ``annotations``, also every annotator's
    values of the human judgment (for the analyses that resample annotators)."""
    names = list(scope.measures)
    m = wh.matrix(scope.dataset, names)
    measures = wh.measure_kinds(scope.dataset)
    directions = dict(zip(measures["measure"], measures["direction"]))
    values = {n: (-m[n] if directions[n] == "lower" else m[n]) for n in names}
    tensors = {}
    if annotations:
        a = wh.annotations(scope.dataset, scope.human)
        grid = np.full((len(m.systems), len(m.inputs), len(a.annotators)), np.nan)
        rows = [m.systems.index(s) for s in a.systems]
        cols = [m.inputs.index(i) for i in a.inputs]
        grid[np.ix_(rows, cols)] = a.values
        tensors[scope.human] = -grid if directions[scope.human] == "lower" else grid
    return Data(m.systems, m.inputs, values, {n: directions[n] for n in names}, tensors)


def data_fingerprint(data: Data, measures: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for m in sorted(measures):
        digest.update(data.fingerprint([m])[0].encode())
    return digest.hexdigest()


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
    """How one command maps onto a results table."""

    command: str
    table: str
    key_columns: tuple[str, ...]       # with dataset and human, identify a result
    param_columns: dict[str, Any]      # parameters stored as columns and matched when reusing
    tasks: list[Task]
    evaluate: Callable[..., dict]      # (arrays, **{key: value for key in evaluate_keys}, **params) -> row values
    params: dict[str, Any]             # keyword arguments of evaluate
    seed: int | None = None
    extra_parameters: dict[str, Any] = field(default_factory=dict)
    evaluate_keys: tuple[str, ...] = ("level", "coefficient")   # key columns evaluate receives


def correlation_tasks(scope: Scope) -> list[Task]:
    return [Task({"metric": m, "level": lv, "coefficient": c}, (m, scope.human))
            for m in scope.metrics for lv in scope.levels for c in scope.coefficients]


def comparison_tasks(scope: Scope, focus: Sequence[str] | None = None) -> list[Task]:
    """Every ordered pair (a, b) of the scope's metrics; with ``focus``, only those with a in it."""
    return [Task({"metric_a": a, "metric_b": b, "level": lv, "coefficient": c}, (a, b, scope.human))
            for a in scope.metrics if focus is None or a in focus for b in scope.metrics if a != b
            for lv in scope.levels for c in scope.coefficients]


def _system_inputs(protocol: str) -> dict[str, str]:
    if protocol not in SYSTEM_INPUTS:
        raise WarehouseError(f"unknown --system-inputs {protocol!r}; choose from {', '.join(SYSTEM_INPUTS)}")
    return {"system_inputs": protocol}


def correlate_analysis(scope: Scope, system_inputs: str = DEFAULT_SYSTEM_INPUTS) -> Analysis:
    params = _system_inputs(system_inputs)
    return Analysis("correlate", "correlations", ("metric", "level", "coefficient"), params,
                    correlation_tasks(scope), evaluate_correlation, params)


def ci_analysis(scope: Scope, method: str, k: int, alpha: float, seed: int,
                system_inputs: str = DEFAULT_SYSTEM_INPUTS, resample_annotators: str | None = None) -> Analysis:
    if method not in CI_METHODS:
        raise WarehouseError(f"unknown CI method {method!r}; choose from {', '.join(CI_METHODS)}")
    _check_parametric(scope, method, "fisher", "Fisher's interval has no constants for")
    resampled = method != "fisher"
    if resample_annotators is not None:
        _check_annotator_resampling(scope, resample_annotators, resampled,
                                    "a bootstrap method (boot-systems, boot-inputs, boot-both)")
    params = {"method": method, "alpha": alpha, "k": k if resampled else None, "seed": seed if resampled else None,
              **_system_inputs(system_inputs), "resample_annotators": resample_annotators}
    return Analysis("ci", "confidence_intervals", ("metric", "level", "coefficient"), params,
                    correlation_tasks(scope), evaluate_ci, params, seed=params["seed"])


def compare_analysis(scope: Scope, method: str, k: int, alpha: float, seed: int, alternative: str,
                     correction: str, group: str, k_block: int | None = None,
                     system_inputs: str = DEFAULT_SYSTEM_INPUTS, focus: Sequence[str] | None = None,
                     resample_annotators: str | None = None) -> Analysis:
    """``focus``: test only the pairs (a, b) with a in ``focus`` (against every other metric of the
    scope). Each such row is the row a compare of every pair writes: with the correction group
    "metric", a's family is its pairs against all the scope's metrics either way (group "all"
    would change the family, so it is refused with a focus)."""
    if focus is not None:
        focus = tuple(dict.fromkeys(focus))
        if not focus or any(m not in scope.metrics for m in focus):
            raise WarehouseError(f"the focus metrics {list(focus)} must be metrics of the scope {list(scope.metrics)}")
        if group != "metric":
            raise WarehouseError("comparing only some metrics against the others needs the correction group 'metric'")
    if method not in TEST_METHODS:
        raise WarehouseError(f"unknown test {method!r}; choose from {', '.join(TEST_METHODS)}")
    if correction not in CORRECTIONS or group not in CORRECTION_GROUPS:
        raise WarehouseError(f"correction must be one of {CORRECTIONS} and its group one of {CORRECTION_GROUPS}")
    if len(scope.metrics) < 2:
        raise WarehouseError(f"comparing metrics needs at least two; the scope has {list(scope.metrics)}")
    _check_parametric(scope, method, "williams", "Williams' test is not defined for")
    resampled = method != "williams"
    if k_block is not None and (not method.startswith("perm-") or k_block < 1):
        raise WarehouseError(f"--k-block (early stopping) applies to the permutation tests with a block size >= 1; "
                             f"got method {method!r}, k_block {k_block}")
    if resample_annotators is not None:
        _check_annotator_resampling(scope, resample_annotators, method.startswith("boot-"),
                                    "paired bootstrap tests (boot-systems, boot-inputs, boot-both)")
    params = {"method": method, "alternative": alternative,
              "k": k if resampled else None, "seed": seed if resampled else None, "k_block": k_block,
              **_system_inputs(system_inputs), "resample_annotators": resample_annotators}
    extra = {"alpha": alpha, "correction": correction, "correction_group": group}
    if focus is not None:
        extra["focus"] = list(focus)
    return Analysis("compare", "hypothesis_tests", ("metric_a", "metric_b", "level", "coefficient"), params,
                    comparison_tasks(scope, focus), evaluate_test, params, seed=params["seed"],
                    extra_parameters=extra)


def _check_annotator_resampling(scope: Scope, how: str, method_ok: bool, methods: str) -> None:
    if not method_ok or how not in ANNOTATOR_RESAMPLING:
        raise WarehouseError(f"--resample-annotators needs {methods} and one of {', '.join(ANNOTATOR_RESAMPLING)}")
    if any(_validation.coefficient_iv(c).variant not in (None, "b", "c") or _validation.coefficient_iv(c).epsilon
           for c in scope.coefficients):
        raise WarehouseError("--resample-annotators works with pearson, spearman, kendall and kendall-c "
                             "(without --epsilon or --tie-calibration)")


def _check_parametric(scope: Scope, method: str, parametric: str, message: str) -> None:
    """The Fisher interval and Williams' test have no form for the Kendall variants with ties."""
    bad = [c for c in scope.coefficients if _validation.coefficient_iv(c).ties_variant]
    if method == parametric and bad:
        raise WarehouseError(f"{message} {', '.join(bad)}; use a resampling method")


# --- evaluation (pure, runs in worker processes) ---------------------------------------------
def _protocol(arrays, level: str, system_inputs: str) -> tuple[list[np.ndarray], bool, dict]:
    """The arrays as ``system_inputs`` has them at ``level``, whether a system-level bootstrap
    pairs the inputs, and the conventions to record (:func:`protocols.apply`)."""
    arrays, paired, conv, _ = protocols.apply(arrays, level, system_inputs)
    return arrays, paired, conv


def evaluate_correlation(arrays, level, coefficient, system_inputs=DEFAULT_SYSTEM_INPUTS) -> dict:
    (X, Z), _, conv = _protocol(arrays, level, system_inputs)
    conventions = {"level": level, "coefficient": coefficient, "nan_policy": NAN_POLICY, **conv}
    coef = _validation.coefficient_iv(coefficient)
    if coef.ties_variant:
        from metaeval.analyses.stats import kendall_variants

        conventions.update(kendall_variant=coef.variant, **kendall_variants.conventions(coef))
    if coef.calibrated:
        r = stats.tie_calibration(X, Z, level, coef.base_label)
        conventions["epsilon"] = _float(r.epsilon)
        return {"value": _float(r.value), "conventions": conventions}
    return {"value": _float(stats.correlate(X, Z, level, coefficient)), "conventions": conventions}


def _calibrated_epsilons(arrays, level, coefficient, names) -> dict:
    """The epsilon calibrated on the data itself (of each metric array against the last, the
    human), recorded with a resampled result of a tie-calibrated coefficient."""
    coef = _validation.coefficient_iv(coefficient)
    if not coef.calibrated:
        return {}
    return {name: _float(stats.tie_calibration(A, arrays[-1], level, coef.base_label).epsilon)
            for name, A in zip(names, arrays[:-1])}


def evaluate_ci(arrays, level, coefficient, method, alpha, k, seed, system_inputs=DEFAULT_SYSTEM_INPUTS,
                resample_annotators=None) -> dict:
    if resample_annotators is not None:
        return _evaluate_annotator_ci(arrays, level, coefficient, method, alpha, k, seed, system_inputs,
                                      resample_annotators)
    (X, Z), paired, conv = _protocol(arrays, level, system_inputs)
    if method == "fisher":
        r = stats.fisher_ci(X, Z, level, coefficient, alpha=alpha)
        n_valid = None
    else:
        r = stats.bootstrap_ci(X, Z, level, coefficient, method.removeprefix("boot-"), k=k, alpha=alpha, seed=seed,
                               paired_inputs=paired)
        n_valid = int(np.count_nonzero(~np.isnan(r.samples)))
    return {"estimate": _float(r.estimate), "lower": _float(r.lower), "upper": _float(r.upper),
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
    return {"estimate": _float(r.estimate), "lower": _float(r.lower), "upper": _float(r.upper),
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
    (X, Y, Z), paired, conv = _protocol(arrays, level, system_inputs)
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


#: How the statistics core's X, Y, Z map onto a hypothesis_tests row.
TEST_VARIABLES = "X = metric_a, Y = metric_b, Z = human"


def _test_row(delta, statistic, pvalue, conventions) -> dict:
    """The computed values of a hypothesis_tests row. Without a delta there is no p-value
    (NULL), and a NULL p-value is left out of the correction: ``excluded_from_correction``
    says why."""
    delta, pvalue, conventions = _float(delta), _float(pvalue), dict(conventions)
    if delta is None or pvalue is None:
        pvalue = None
        reason = conventions.get("pvalue_undefined", "delta undefined" if delta is None else "p-value undefined")
        conventions["excluded_from_correction"] = f"{reason}; {TEST_VARIABLES}"
    return {"delta": delta, "statistic": None if statistic is None else _float(statistic), "p_value": pvalue,
            "conventions": conventions}


def _float(x) -> float | None:
    x = float(x)
    return None if np.isnan(x) else x


def _evaluate_chunk(evaluate, params, chunk) -> list[tuple[int, dict]]:
    return [(i, evaluate(arrays, **key, **params)) for i, arrays, key in chunk]


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


def run(wh: Warehouse, scope: Scope, analysis: Analysis, *, jobs: int = 1, force: bool = False,
        progress: bool = False, chunk_size: int = 8, data: Data | None = None) -> RunSummary:
    """Compute what is missing for ``analysis`` over ``scope`` and persist it.

    ``data``: the scope's data when the tasks also read derived matrices (default
    :func:`load_data`)."""
    if jobs < 1:
        raise WarehouseError("--jobs must be at least 1")
    data = load_data(wh, scope) if data is None else data
    tasks = _planned(data, scope, analysis)
    done, latest = ({}, set()) if force else _existing(wh, scope, analysis)
    todo = [i for i, t in enumerate(tasks) if _task_id(t) not in done]
    if analysis.table == "hypothesis_tests":
        return _run_compare(wh, scope, analysis, data, tasks, done, todo, jobs, progress, chunk_size)
    # computed before but not the latest row of its key (the data changed and changed back,
    # or other parameters ran since): copied into this run, so the latest_* views show it
    computing = set(todo)
    stale = [i for i, t in enumerate(tasks)
             if i not in computing and done[_task_id(t)]["result_id"] not in latest]
    if not todo and not stale:
        return RunSummary(None, len(tasks), 0, 0)
    run_id = _start_run(wh, scope, analysis, data, len(tasks), jobs)
    with finishing(wh, run_id):
        writer = _Writer(wh, analysis.table, run_id, scope)
        for i in stale:
            copy = {c: v for c, v in done[_task_id(tasks[i])].items() if c != "result_id"}
            writer.add_row({**copy, "run_id": run_id})
        writer.flush()
        computed = _compute(tasks, todo, data, analysis, jobs, progress, chunk_size,
                            lambda i, row: writer.add(tasks[i], row, analysis.param_columns), writer, wh, run_id)
        writer.flush()
        _finish_run(wh, run_id, "finished", computed)
    return RunSummary(run_id, len(tasks), computed, writer.written)


def _planned(data: Data, scope: Scope, analysis: Analysis) -> list[Task]:
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


def _too_sparse(a: np.ndarray, human: np.ndarray, name: str, human_name: str) -> str | None:
    """Why metric ``a`` cannot be correlated with ``human`` (both on one grid); None if it can."""
    both = ~np.isnan(a) & ~np.isnan(human)
    if not both.any():
        return f"{name!r} and {human_name!r} have no cell (system, input) in common"
    if int(both.any(axis=1).sum()) < 3:
        return f"{name!r} and {human_name!r} share fewer than 3 systems: too few for a correlation between systems"
    return None


def without_sparse_metrics(data: Data, scope: Scope) -> tuple[Scope, dict[str, str]]:
    """The scope without the metrics that cannot be correlated with its human judgment, and
    why each was left out. All left out: a WarehouseError giving the reasons."""
    human = data.values[scope.human]
    reasons = {m: r for m in scope.metrics if (r := _too_sparse(data.values[m], human, m, scope.human))}
    if len(reasons) == len(scope.metrics):
        raise WarehouseError("; ".join(reasons.values()))
    kept = tuple(m for m in scope.metrics if m not in reasons)
    return Scope(scope.dataset, scope.human, kept, scope.levels, scope.coefficients), reasons


def _check_enough(arrays, measures, n_systems, n_inputs, analysis: Analysis) -> None:
    human = arrays[-1]
    for name, a in zip(measures[:-1], arrays[:-1]):
        if reason := _too_sparse(a, human, name, measures[-1]):
            raise WarehouseError(reason)
    method = analysis.params.get("method") or ""
    if method.endswith("inputs") or method.endswith("both"):
        if n_inputs < 2:
            raise WarehouseError(f"method {method!r} resamples inputs but {list(measures)} cover "
                                 f"only {n_inputs} input")


def _task_id(t: Task) -> tuple:
    return (*t.key.values(), t.fingerprint)


def _existing(wh: Warehouse, scope: Scope, analysis: Analysis) -> tuple[dict[tuple, dict], set[int]]:
    """Rows already computed by this version with the same parameters, by (key...,
    fingerprint); and the result_ids the table's ``latest_*`` view shows now."""
    where = " WHERE dataset = $dataset" + (" AND human = $human" if scope.human is not None else "")
    params = {"dataset": scope.dataset, **({"human": scope.human} if scope.human is not None else {})}
    rows = wh.con.execute(f"SELECT * FROM {analysis.table}{where} AND {THIS_VERSION} ORDER BY result_id",
                          {**params, **version_parameter()}).df()
    latest = {int(r) for r in wh.con.execute(f"SELECT result_id FROM latest_{analysis.table}{where}",
                                             params).df()["result_id"]}
    done = {}
    for r in rows.to_dict("records"):
        r = {c: _none_if_nan(v) for c, v in r.items()}
        if all(r[c] == v for c, v in analysis.param_columns.items()):
            done[tuple(r[c] for c in (*analysis.key_columns, "fingerprint"))] = r
    return done, latest


def _start_run(wh: Warehouse, scope: Scope, analysis: Analysis, data: Data, n_tasks: int, jobs: int = 1) -> int:
    parameters = {"dataset": scope.dataset, "human": scope.human, "metrics": list(scope.metrics),
                  "levels": list(scope.levels), "coefficients": list(scope.coefficients)}
    if scope.human is None:  # human-free: no judgment, levels or coefficients to record
        parameters = {"dataset": scope.dataset, "metrics": list(scope.metrics)}
    parameters.update({**analysis.param_columns, **analysis.extra_parameters})
    return start_run(wh, analysis.command, parameters, analysis.seed,
                     data_fingerprint(data, scope.measures), n_tasks, jobs)


def start_run(wh: Warehouse, command: str, parameters: dict, seed: int | None, fingerprint: str,
              n_tasks: int, jobs: int = 1) -> int:
    """Insert a row of ``analysis_runs`` (status running, owned by this process); its run_id. The
    parameters record what computes the tasks (``executor``: local with ``jobs``, or a Dask
    scheduler, which must answer first: :func:`executors.check_scheduler`)."""
    from metaeval import __version__

    if executors.scheduler():  # a scheduler that does not answer fails here, before the run is recorded
        executors.check_scheduler(executors.scheduler())
    parameters = {**parameters, "executor": executors.describe(jobs)}
    return wh.con.execute(
        """INSERT INTO analysis_runs (command, parameters, seed, version, data_fingerprint, tasks, command_line,
                                      owner_pid, owner_host, owner_start)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING run_id""",
        [command, json.dumps(parameters, sort_keys=True), seed, __version__, fingerprint, n_tasks,
         shlex.join(["metaeval", *sys.argv[1:]]), *owners.current_owner()]).fetchall()[0][0]


@contextmanager
def finishing(wh: Warehouse, run_id: int):
    """Around the work of a run: if it raises, a run still 'running' becomes 'interrupted'
    (Ctrl-C, or SIGTERM in the CLI, which raises a KeyboardInterrupt) or 'failed' (any other
    exception), so no run is left looking alive. Work that records its own partial count
    (:func:`_compute`) has set the status already. A process killed outright marks nothing: the
    next process opening the warehouse for writing does (:mod:`warehouse.owners`)."""
    try:
        yield
    except BaseException as exc:
        stop = interruption(exc)
        try:
            wh.con.execute("UPDATE analysis_runs SET status = ? WHERE run_id = ? AND status = 'running'",
                           ["failed" if stop is None else "interrupted", run_id]).fetchall()
        except Exception:  # noqa: BLE001 - never hide the original error behind this one
            pass
        _reraise(exc, stop)


def _reraise(exc: BaseException, stop: KeyboardInterrupt | None):
    """Raise ``exc`` again, or the KeyboardInterrupt it stands for (a query cut short by Ctrl-C
    or SIGTERM raises DuckDB's error), so that callers see an interruption as one."""
    if stop is None or stop is exc:
        raise exc
    raise stop from None


def _finish_run(wh: Warehouse, run_id: int, status: str, computed: int) -> None:
    wh.con.execute("""UPDATE analysis_runs SET status = ?, computed = ?,
                      finished_at = CASE WHEN ? = 'finished' THEN current_timestamp END
                      WHERE run_id = ?""", [status, computed, status, run_id]).fetchall()


def _compute(tasks, todo, data, analysis, jobs, progress, chunk_size, on_result, writer, wh, run_id) -> int:
    """Evaluate tasks ``todo``, handing each result to ``on_result`` as it arrives.

    Ctrl-C (or SIGTERM in the CLI): what has arrived is written, the run is marked interrupted,
    the chunks not started are dropped, and the KeyboardInterrupt propagates; rerunning the
    command resumes. Any other exception: the same, but the run is marked failed.
    """
    chunks = [todo[i:i + chunk_size] for i in range(0, len(todo), chunk_size)]

    def payload(chunk):  # the tasks of one measure set share its arrays (sent once to a worker)
        arrays = {}
        for i in chunk:
            if tasks[i].measures not in arrays:
                arrays[tasks[i].measures] = data.task_arrays(tasks[i].measures)
        return [(i, list(arrays[tasks[i].measures]), {c: tasks[i].key[c] for c in analysis.evaluate_keys})
                for i in chunk]

    computed = 0
    bar = _progress(progress, len(todo), analysis.command)
    before = _rows_of_run(wh, writer.table, run_id)
    try:
        with executors.executor(jobs) as pool:
            if pool is None:
                for chunk in chunks:
                    for i, row in _evaluate_chunk(analysis.evaluate, analysis.params, payload(chunk)):
                        on_result(i, row)
                        computed += 1
                    bar.advance(len(chunk))
            else:
                pending = {pool.submit(_evaluate_chunk, analysis.evaluate, analysis.params, payload(c)) for c in chunks}
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
        writer.flush()
        # counted in the table: the interruption may have come between a row's write and its count
        computed = _rows_of_run(wh, writer.table, run_id) - before
        _finish_run(wh, run_id, "failed" if stop is None else "interrupted", computed)
        bar.close()
        _reraise(exc, stop)
    bar.close()
    return computed


def _rows_of_run(wh: Warehouse, table: str, run_id: int) -> int:
    return wh.con.execute(f"SELECT count(*) FROM {table} WHERE run_id = ?", [run_id]).fetchall()[0][0]


class _Progress:
    def __init__(self, total: int, label: str):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.p = Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(),
                          TimeRemainingColumn(), transient=True)
        self.p.start()
        self.task = self.p.add_task(label, total=total)

    def advance(self, n: int) -> None:
        self.p.advance(self.task, n)

    def close(self) -> None:
        self.p.stop()


class _NoProgress:
    def advance(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(show: bool, total: int, label: str):
    return _Progress(total, label) if show and total else _NoProgress()


class _Writer:
    """Buffers result rows and inserts them in small transactions (at most every few seconds)."""

    def __init__(self, wh: Warehouse, table: str, run_id: int, scope: Scope):
        self.wh, self.table, self.run_id, self.scope = wh, table, run_id, scope
        self.rows: list[dict] = []
        self.written = 0
        self.has_sizes = "n_systems" in _columns(wh, table)
        self.last = time.monotonic()

    def add(self, task: Task, values: dict, params: dict) -> None:
        row = {"run_id": self.run_id, "dataset": self.scope.dataset,
               **({"human": self.scope.human} if self.scope.human is not None else {}), **task.key,
               **params, **values, "fingerprint": task.fingerprint}
        if self.has_sizes:
            row.update(n_systems=task.n_systems, n_inputs=task.n_inputs)
        row["conventions"] = json.dumps({**row["conventions"], "orientation": ORIENTATION},
                                        sort_keys=True, default=_jsonable)
        self.add_row(row)

    def add_row(self, row: dict) -> None:
        """A complete row (all columns but result_id)."""
        self.rows.append(row)
        if time.monotonic() - self.last > FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        # out of the buffer before the insert: a Ctrl-C or SIGTERM arriving just after it cannot
        # make the flush of the interrupted run insert them again
        rows, self.rows, self.last = self.rows, [], time.monotonic()
        frame = pd.DataFrame(rows)
        cols = ", ".join(frame.columns)
        con = self.wh.con
        con.register("result_rows", frame)
        try:
            con.execute(f"INSERT INTO {self.table} ({cols}) SELECT {cols} FROM result_rows").fetchall()
        finally:
            con.unregister("result_rows")
        self.written += len(rows)


def _columns(wh: Warehouse, table: str) -> set[str]:
    return set(wh.con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ?",
                              [table]).df()["column_name"])


def _jsonable(x):
    if isinstance(x, np.generic):
        return x.item()
    return str(x)


# --- comparisons: raw tests, then the family correction ---------------------------------------
def _run_compare(wh, scope, analysis, data, tasks, done, todo, jobs, progress, chunk_size) -> RunSummary:
    """Raw p-values are reused across runs whatever the correction; the correction is then
    applied over each family, and a row is written for every key whose latest corrected row
    differs (a new metric changes its whole family's Bonferroni factor, for example)."""
    extra = analysis.extra_parameters
    raw: dict[int, dict] = {}
    computing = set(todo)
    for i, t in enumerate(tasks):
        if i not in computing:
            prev = done[_task_id(t)]
            raw[i] = {c: _none_if_nan(prev.get(c)) for c in ("delta", "statistic", "p_value", "k_used")}
            raw[i]["conventions"] = json.loads(prev["conventions"])
    latest = _latest_tests(wh, scope, analysis)
    family = correction_family(scope.metrics, extra["correction"])
    if not todo:
        adjusted_now = _adjust(tasks, raw, extra)
        if all(_same_as_latest(latest, tasks[i], raw[i], adjusted_now[i], analysis, family)
               for i in range(len(tasks))):
            return RunSummary(None, len(tasks), 0, 0)
    run_id = _start_run(wh, scope, analysis, data, len(tasks), jobs)
    with finishing(wh, run_id):
        pending = {"correction": extra["correction"], "correction_group": extra["correction_group"],
                   "family": family, "family_size": None, "alpha": extra["alpha"], "p_adjusted": None,
                   "significant": None}
        writer = _Writer(wh, analysis.table, run_id, scope)

        def on_result(i, row):
            raw[i] = row
            writer.add(tasks[i], {**row, **pending}, analysis.param_columns)

        computed = _compute(tasks, todo, data, analysis, jobs, progress, chunk_size, on_result, writer, wh, run_id)
        writer.flush()
        adjusted = _adjust(tasks, raw, extra)
        # rows computed by this run get their corrected values; reused ones a new row if it changed
        update = pd.DataFrame([{"metric_a": tasks[i].key["metric_a"], "metric_b": tasks[i].key["metric_b"],
                                "level": tasks[i].key["level"], "coefficient": tasks[i].key["coefficient"],
                                "p_adjusted": adjusted[i][0], "significant": adjusted[i][1],
                                "family_size": adjusted[i][2]} for i in todo])
        if not update.empty:
            wh.con.register("adjusted_rows", update)
            wh.con.execute("""UPDATE hypothesis_tests AS t
                               SET p_adjusted = u.p_adjusted, significant = u.significant, family_size = u.family_size
                               FROM adjusted_rows u
                               WHERE t.run_id = ? AND t.metric_a = u.metric_a AND t.metric_b = u.metric_b
                                 AND t.level = u.level AND t.coefficient = u.coefficient""", [run_id]).fetchall()
            wh.con.unregister("adjusted_rows")
        for i, t in enumerate(tasks):
            if i not in computing and not _same_as_latest(latest, t, raw[i], adjusted[i], analysis, family):
                writer.add(t, {**raw[i], **pending, "p_adjusted": adjusted[i][0], "significant": adjusted[i][1],
                               "family_size": adjusted[i][2]}, analysis.param_columns)
        writer.flush()
        _finish_run(wh, run_id, "finished", computed)
    return RunSummary(run_id, len(tasks), computed, writer.written)


def _none_if_nan(x):
    """None for SQL NULL as pandas returns it (None, NaN, pd.NA); the value otherwise."""
    return None if x is None or (np.ndim(x) == 0 and pd.isna(x)) else x


def correction_family(metrics: Sequence[str], correction: str) -> str | None:
    """The ``family`` column: sha256 (first 16 hex digits) of the sorted metric names compared
    together; None without a correction (p_adjusted = p_value whatever was compared)."""
    if correction == "none":
        return None
    return hashlib.sha256("\x1f".join(sorted(metrics)).encode()).hexdigest()[:16]


def _adjust(tasks: list[Task], raw: dict[int, dict], extra: dict) -> dict[int, tuple]:
    """(p_adjusted, significant, family_size) per task, the correction applied within each
    family; family_size (the number of defined p-values corrected together) None for "none".
    A NULL p-value (undefined test) is left out of its family: p_adjusted NULL, not significant."""
    families: dict[tuple, list[int]] = {}
    for i, t in enumerate(tasks):
        k = t.key
        family = (k["level"], k["coefficient"]) + ((k["metric_a"],) if extra["correction_group"] == "metric" else ())
        families.setdefault(family, []).append(i)
    out = {}
    for members in families.values():
        defined = [i for i in members if raw[i]["p_value"] is not None]
        adjusted = stats.correct_pvalues([raw[i]["p_value"] for i in defined], extra["correction"]) if defined else []
        size = None if extra["correction"] == "none" else len(defined)
        for i, p in zip(defined, adjusted):
            out[i] = (float(p), bool(p <= extra["alpha"]), size)
        for i in members:
            out.setdefault(i, (None, False, size))
    return out


def _latest_tests(wh: Warehouse, scope: Scope, analysis: Analysis) -> dict[tuple, dict]:
    extra = analysis.extra_parameters
    rows = wh.con.execute(
        """SELECT * FROM latest_hypothesis_tests WHERE dataset = ? AND human = ? AND method = ?
           AND alternative = ? AND correction = ? AND correction_group = ?""",
        [scope.dataset, scope.human, analysis.params["method"], analysis.params["alternative"],
         extra["correction"], extra["correction_group"]]).df()
    return {(r["metric_a"], r["metric_b"], r["level"], r["coefficient"]): r for r in rows.to_dict("records")}


def _same_as_latest(latest: dict, task: Task, raw: dict, adjusted: tuple, analysis: Analysis,
                    family: str | None) -> bool:
    prev = latest.get(tuple(task.key.values()))
    if prev is None:
        return False
    same_params = all(_none_if_nan(prev[c]) == v for c, v in analysis.param_columns.items())
    return (same_params and prev["fingerprint"] == task.fingerprint and _none_if_nan(prev["family"]) == family
            and prev["alpha"] == analysis.extra_parameters["alpha"]
            and _none_if_nan(prev["p_value"]) == raw["p_value"]
            and _none_if_nan(prev["p_adjusted"]) == adjusted[0])
