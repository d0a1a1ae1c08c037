"""``metaeval detection``: metrics judged as detectors on binary labels, persisted.

The items are the cells (system, input) where the metric and the human judgment are both
present; a cell is positive ("consistent") when its human value is >= ``positive``. For each
metric (lower-is-better measures negated first, by :func:`metaeval.runs.engine.selection.load_data`):
ROC-AUC and balanced accuracy at a threshold tuned on the ``tune`` subset (``--tune ATTR=VALUE``;
default: on the evaluated cells themselves) or fixed (``--threshold``), on the cells ``where``
selects (``--where``), per value of ``by`` (a threshold tuned per group on that group's tune
cells) with their unweighted macro average; percentile bootstrap intervals (every resample
re-tunes the threshold) and paired bootstrap tests between the metrics of the difference in
balanced accuracy and in ROC-AUC, corrected within each family as ``compare`` does
(:mod:`metaeval.analyses.detection` holds the statistics).

Rows go to ``detection`` and ``detection_tests`` under one run (a row of ``analysis_runs`` with
the parameters, seed and data fingerprint); every check is made before that run is written, and
a repeated command on the same cells and parameters computes nothing.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from metaeval import schema
from metaeval.analyses import conclusions
from metaeval.analyses import detection as det
from metaeval.analyses.stats import vocabulary
from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine import bookkeeping, analyse as engine, parameters, selection
from metaeval.runs.engine.parameters import Params, setting

COMMAND = "detection"


@dataclass(frozen=True)
class DetectionParams(Params):
    """The parameters of a detection row (table ``detection``); ``where`` (the --where label,
    recorded with the run) and ``tests`` are run-only."""

    table: ClassVar[str] = "detection"
    positive: float
    by: str
    tune: str | None
    fixed_threshold: float | None
    k: int
    alpha: float
    seed: int
    where: str = setting("", column=False, argument=False)


@dataclass(frozen=True)
class DetectionTestParams(Params):
    """The parameters of a paired test row (table ``detection_tests``)."""

    table: ClassVar[str] = "detection_tests"
    positive: float
    by: str
    tune: str | None
    fixed_threshold: float | None
    alternative: str
    k: int
    seed: int
    correction: str
    correction_group: str
    alpha: float


@dataclass(frozen=True)
class DetectionOutcome:
    """What ``detection`` did: its run (None: up to date, nothing computed), the latest rows of
    its setting (``rows``, ``tests``) and the parameters."""

    run_id: int | None
    rows: pd.DataFrame
    tests: pd.DataFrame
    params: DetectionParams
    test_params: DetectionTestParams | None


def _check(positive, threshold, k, alpha, alternative, correction, correction_group, tune, where):
    if not (isinstance(positive, (int, float)) and math.isfinite(positive)):
        raise WarehouseError(Message(Argument("positive"), f" must be a finite number; got {positive!r}"))
    if threshold is not None and not math.isfinite(threshold):
        raise WarehouseError(Message(Argument("threshold"), f" must be a finite number; got {threshold!r}"))
    if threshold is not None and tune:
        raise WarehouseError(Message("give ", Argument("threshold"), " (a fixed threshold) or ", Argument("tune"),
                                     " (a subset to tune it on), not both"))
    if not 0 < alpha < 1:
        raise WarehouseError(Message(Argument("alpha"), f" must lie strictly between 0 and 1; got {alpha}"))
    for value, valid, what in ((alternative, vocabulary.ALTERNATIVES, "alternative"),
                               (correction, vocabulary.CORRECTIONS, "correction"),
                               (correction_group, vocabulary.CORRECTION_GROUPS, "correction group")):
        if value not in valid:
            raise WarehouseError(f"unknown {what} {value!r}; choose from {', '.join(valid)}")
    parameters.check_k(k, alpha, "interval")
    if tune and where and dict(tune).items() <= dict(where).items():
        raise WarehouseError(Message(Argument("tune", _conditions(tune)), " holds every evaluated cell (",
                                     Argument("where", _conditions(where)), "): tune on a held-out subset, or leave ",
                                     Argument("tune"), " out to tune on the evaluated cells themselves"))


def _conditions(pairs) -> list[str]:
    """Canonical subset conditions as the ``ATTR=VALUE`` strings a caller gives (an error's value)."""
    return [f"{a}={v}" for a, v in pairs]


def detection(wh: Store, dataset: str, human: str, metrics: Sequence[str] = (), *, positive: float,
              where: Sequence[str | tuple[str, str]] = (), tune: Sequence[str | tuple[str, str]] = (),
              by: str | None = None, threshold: float | None = None, k: int = parameters.DEFAULT_K, alpha: float = 0.05,
              seed: int = parameters.DEFAULT_SEED, alternative: str = parameters.DEFAULT_ALTERNATIVE,
              correction: str = parameters.DEFAULT_CORRECTION,
              correction_group: str = parameters.DEFAULT_CORRECTION_GROUP, tests: bool = True,
              force: bool = False) -> DetectionOutcome:
    """Judge the metrics matching ``metrics`` (globs; default all) of ``dataset`` as detectors of
    the cells whose ``human`` value is >= ``positive`` and persist the rows (module docstring)."""
    where, tune = selection.parse_where(where), selection.parse_where(tune)
    threshold = None if threshold is None else float(threshold)
    _check(positive, threshold, k, alpha, alternative, correction, correction_group, tune, where)
    scope = selection.resolve_scope(wh, dataset, human, metrics)
    data = selection.load_data(wh, scope)
    params = DetectionParams(float(positive), by or "", None if threshold is not None else selection.subset_label(tune),
                             threshold, int(k), float(alpha), int(seed), selection.subset_label(where))
    test_params = (DetectionTestParams(params.positive, params.by, params.tune, threshold, alternative, int(k),
                                       int(seed), correction, correction_group, float(alpha))
                   if tests and len(scope.metrics) > 1 else None)
    if test_params is not None:
        parameters.check_k(k, alpha, "test")

    cells, labels, evaluated, tuned, groups, subsets = _cells(wh, dataset, human, data, positive, where, tune, by)
    human_lower = data.directions[human] == "lower"

    def fingerprint(*measures: str) -> str:
        return hashlib.sha256((data.fingerprint([*measures, human])[0] + subsets).encode()).hexdigest()

    def scores(metric: str) -> np.ndarray:
        return data.values[metric].ravel()[cells]

    def oriented(metric: str) -> float | None:
        """The fixed threshold on the metric's oriented (negated if lower-is-better) scores."""
        return None if threshold is None else -threshold if data.directions[metric] == "lower" else threshold

    common = {"evaluated": evaluated, "tuned": tuned, "groups": groups, "k": k, "seed": seed}
    positive_rule = f"human {'<=' if human_lower else '>='} {float(positive)!r}" + (
        " (a lower-is-better judgment, in its own scale)" if human_lower else "")
    run_parameters = {"dataset": dataset, "human": human, "metrics": list(scope.metrics), "where": params.where,
                      **params.recorded(), "tests": test_params is not None,
                      **({} if test_params is None else {"alternative": alternative, "correction": correction,
                                                         "correction_group": correction_group})}
    run_fp = hashlib.sha256((selection.data_fingerprint(data, scope.measures) + subsets).encode()).hexdigest()
    if not force and _done(wh, dataset, human, run_parameters, run_fp):
        stored = _outcome(wh, None, dataset, human, scope.metrics, where, params, test_params)
        # the latest rows of this setting are of this k and seed (another run's since replace them)
        if set(stored.rows["metric"]) == set(scope.metrics) and (test_params is None or not stored.tests.empty):
            return stored

    # every computation before the first write: a refusal (an empty subset) writes nothing
    rows = []
    for m in scope.metrics:
        try:
            result = det.detection(scores(m), labels, alpha=alpha, threshold=oriented(m), **common)
        except ValueError as exc:
            raise WarehouseError(f"{m}: {exc}") from None
        fp = fingerprint(m)
        for r in result.rows:
            rows.append(_row(params, where, m, r, fp, result.conventions, data.directions[m] == "lower",
                             positive_rule))
    test_rows = [] if test_params is None else _pair_tests(scope.metrics, scores, oriented, labels, common, fingerprint,
                                                           test_params, where, positive_rule)

    n = len(rows) + len(test_rows)
    run_id = bookkeeping.start_run(wh, COMMAND, run_parameters, int(seed), run_fp, n)
    with bookkeeping.finishing(wh, run_id):
        for table, frame in ((params.table, rows), (DetectionTestParams.table, test_rows)):
            if frame:
                bookkeeping.insert_rows(wh, table, pd.DataFrame(frame).assign(run_id=run_id, dataset=dataset, human=human))
        bookkeeping.finish_run(wh, run_id, "finished", n)
    return _outcome(wh, run_id, dataset, human, scope.metrics, where, params, test_params)


def _pair_tests(metrics, scores, oriented, labels, common, fingerprint, test_params, where, positive_rule) -> list[dict]:
    """Every ordered pair of metrics' paired detection test, corrected (:func:`_correct`)."""
    test_rows = []
    for a in metrics:
        for b in metrics:
            if a == b:
                continue
            try:
                found, conv = det.paired_detection_test(scores(a), scores(b), labels, alternative=test_params.alternative,
                                                        threshold=(oriented(a), oriented(b)), **common)
            except ValueError as exc:
                raise WarehouseError(f"{a} vs {b}: {exc}") from None
            fp = fingerprint(a, b)
            test_rows += [_test_row(test_params, where, a, b, t, fp, conv, positive_rule) for t in found]
    _correct(test_rows, test_params)
    return test_rows


def _cells(wh: Store, dataset: str, human: str, data, positive: float, where, tune, by):
    """The items of a detection run: every grid cell the human judged (flat indices), their
    labels, the evaluated / tune masks and the ``by`` groups (from the attributes), and the
    digest of all that (part of every fingerprint)."""
    human_values = data.values[human]
    judged = ~np.isnan(human_values)
    if not judged.any():
        raise WarehouseError(f"{human!r} judges no cell of {dataset!r}")
    cells = np.flatnonzero(judged.ravel())
    # positive in the human's own scale: >= positive, or <= positive for a lower-is-better judgment
    # (load_data negated it: -value >= -positive)
    human_lower = data.directions[human] == "lower"
    labels = human_values.ravel()[cells] >= (-positive if human_lower else positive)
    evaluated = (wh.attribute_mask(dataset, where, data.systems, data.inputs).ravel()[cells] if where else None)
    tuned = wh.attribute_mask(dataset, tune, data.systems, data.inputs).ravel()[cells] if tune else None
    groups = None
    if by:
        if by in dict(where) or by in dict(tune):
            raise WarehouseError(Message(Argument("by", by), " is also a ", Argument("where"), " or ", Argument("tune"),
                                         " condition: its groups would be one value"))
        groups = wh.attribute_labels(dataset, by, data.systems, data.inputs).ravel()[cells]
    subsets = hashlib.sha256()
    for name, part in (("cells", cells), ("evaluated", evaluated), ("tuned", tuned)):
        subsets.update(name.encode() + (b"-" if part is None else np.ascontiguousarray(part).tobytes()))
    subsets.update(json.dumps(None if groups is None else list(groups)).encode())
    return cells, labels, evaluated, tuned, groups, subsets.hexdigest()


def _subset(where: tuple[tuple[str, str], ...], by: str, group: str) -> str:
    """The ``subset`` of a row: the --where conditions and by=group (by=* the macro row), in
    canonical order (:func:`metaeval.runs.engine.selection.subset_label`)."""
    pairs = [*where, *([(by, group)] if by else [])]
    return selection.SUBSET_JOINER.join(f"{a}={v}" for a, v in sorted(pairs))


#: How a lower-is-better measure's cells are predicted (its threshold in its own scale).
LOWER_PREDICTION = ("a lower-is-better measure: an item is predicted positive when its score < threshold (the "
                    "threshold in the measure's own scale; the statistics ran on the negated scores, -score > "
                    "-threshold)")


def _fixed_source(threshold: float) -> str:
    return (f"fixed: {threshold!r} in each measure's own scale (predicted positive when score > {threshold!r}; "
            f"score < {threshold!r} for a lower-is-better measure)")


def _float(x) -> float | None:
    """None for NaN (and None); the float otherwise (-inf kept: a threshold predicting every cell positive)."""
    return None if x is None or np.isnan(x) else float(x)


def _row(params: DetectionParams, where, metric: str, r: det.GroupDetection, fp: str, conventions: dict,
         lower: bool, positive_rule: str) -> dict:
    """A detection row; a lower-is-better metric's threshold in its own scale (the statistics ran on
    its negated scores: -score > t, i.e. score < -t)."""
    threshold = r.threshold
    if lower:
        threshold = None if threshold is None else -threshold
        conventions = {**conventions, "prediction": LOWER_PREDICTION}
    if params.fixed_threshold is not None:
        conventions = {**conventions, "threshold_source": _fixed_source(params.fixed_threshold)}
    return {"metric": metric, "subset": _subset(where, params.by, r.group), "group": r.group, **params.columns(),
            "n": r.n, "n_positive": r.n_positive, "n_tune": r.n_tune, "n_tune_positive": r.n_tune_positive,
            "roc_auc": _float(r.roc_auc), "roc_auc_lower": _float(r.roc_auc_lower),
            "roc_auc_upper": _float(r.roc_auc_upper), "threshold": _float(threshold),
            "balanced_accuracy": _float(r.balanced_accuracy),
            "balanced_accuracy_lower": _float(r.balanced_accuracy_lower),
            "balanced_accuracy_upper": _float(r.balanced_accuracy_upper),
            "tune_balanced_accuracy": _float(r.tune_balanced_accuracy), "n_valid": r.n_valid,
            "n_valid_auc": r.n_valid_auc, "fingerprint": fp,
            "conventions": bookkeeping.conventions_json({**conventions, "positive": positive_rule,
                                                         "items": "cells (system, input) where metric and human "
                                                                  "are both present"})}


def _test_row(params: DetectionTestParams, where, a: str, b: str, t: det.DetectionTest, fp: str,
              conventions: dict, positive_rule: str) -> dict:
    if params.fixed_threshold is not None:
        conventions = {**conventions, "threshold_source": _fixed_source(params.fixed_threshold)}
    extra = {"pvalue_undefined": t.undefined} if t.undefined else {}
    return {"metric_a": a, "metric_b": b, "subset": _subset(where, params.by, t.group), "group": t.group, "statistic": t.statistic,
            **params.columns(), "value_a": _float(t.value_a), "value_b": _float(t.value_b), "delta": _float(t.delta),
            "p_value": _float(t.p_value), "n": t.n, "n_valid": t.n_valid, "family_size": None, "p_adjusted": None,
            "significant": None, "fingerprint": fp,
            "conventions": {**conventions, **extra, "positive": positive_rule}}


def _correct(rows: list[dict], params: DetectionTestParams) -> None:
    """p_adjusted, significant and family_size within each family (group and statistic, and
    metric_a for correction group 'metric'), decided by :func:`metaeval.analyses.conclusions.decide`:
    in a family whose k cannot reach the corrected threshold nothing is significant, nor a test
    whose valid resamples are too few to reach it on its own (p = count / n_valid)."""
    families: dict[tuple, list[dict]] = {}
    for r in rows:
        key = (r["group"], r["statistic"]) + ((r["metric_a"],) if params.correction_group == "metric" else ())
        families.setdefault(key, []).append(r)
    for members in families.values():
        defined = [r for r in members if r["p_value"] is not None]
        verdict = conclusions.decide([r["p_value"] for r in defined], formula="count", k=params.k,
                                     correction=params.correction, alpha=params.alpha,
                                     n_valid=[r.get("n_valid") or 0 for r in defined])
        for r in members:
            r["family_size"] = None if params.correction == "none" else len(defined)
            r["significant"] = False
            if verdict.resolution is not None:
                r["conventions"]["resolution"] = verdict.resolution.as_dict()
        for r, p, significant in zip(defined, verdict.adjusted, verdict.significant):
            r["p_adjusted"] = float(p)
            r["significant"] = bool(significant)
    for r in rows:
        r["conventions"] = bookkeeping.conventions_json(r["conventions"])


def _done(wh: Store, dataset: str, human: str, run_parameters: dict, fingerprint: str) -> bool:
    """Whether a finished run of this version computed the same setting on the same cells."""
    done = wh.con.execute(schema.read("detection_done"),
                          {"dataset": dataset, "human": human, **bookkeeping.version_parameter()}).fetchall()
    return any(f == fingerprint and {k: v for k, v in json.loads(p).items() if k != "executor"} == run_parameters
               for f, p in done)


def _outcome(wh: Store, run_id, dataset, human, metrics, where, params, test_params) -> DetectionOutcome:
    columns = params.columns()
    rows = engine.latest_rows(wh, params.table, dataset, human, metric=tuple(metrics), subset=None, **columns)
    rows = rows[rows["subset"].isin(_subsets(rows, where, params.by))]
    tests = pd.DataFrame()
    if test_params is not None:
        tcols = test_params.columns()
        tests = engine.latest_rows(wh, test_params.table, dataset, human, metric_a=tuple(metrics),
                                   metric_b=tuple(metrics), subset=None, **tcols)
        tests = tests[tests["subset"].isin(_subsets(tests, where, params.by))]
    order = {m: i for i, m in enumerate(metrics)}
    rows = rows.assign(_m=rows["metric"].map(order), _g=rows["group"] == det.MACRO).sort_values(
        ["_m", "_g", "group"]).drop(columns=["_m", "_g"]).reset_index(drop=True)
    if not tests.empty:
        tests = tests.assign(_a=tests["metric_a"].map(order), _b=tests["metric_b"].map(order),
                             _g=tests["group"] == det.MACRO).sort_values(
            ["statistic", "_g", "group", "_a", "_b"]).drop(columns=["_a", "_b", "_g"]).reset_index(drop=True)
    return DetectionOutcome(run_id, rows, tests, params, test_params)


def _subsets(frame: pd.DataFrame, where, by: str) -> set[str]:
    """The subsets of this setting among ``frame``'s: the --where label, or its by=value ones."""
    return {s for s, g in zip(frame["subset"], frame["group"]) if s == _subset(where, by, g)}
