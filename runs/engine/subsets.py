"""``--by ATTR`` (issue 26): one result per value of an attribute and their macro average.

:func:`by_attribute` runs ``correlate`` or ``ci`` once per value v of ATTR, on the subset
``ATTR=v`` (with any ``--where``: each group is ``where & ATTR=v``), each an ordinary run with its
own rows (``subset`` = that label), then writes the unweighted macro average over the groups as
rows of the same table with ``subset`` = ``ATTR=*`` (joined with the ``--where`` conditions in
canonical order): for ``correlate`` the mean of the groups' values (NULL if any group's is
undefined), for ``ci`` the mean of their estimates with a percentile interval from resamples drawn
within each group (:func:`metaeval.analyses.stats.macro.macro_bootstrap_ci`). A macro row's
fingerprint is the sha256 of its groups' values and fingerprints: it is rewritten only when a
group's result changes (or ``force``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from metaeval.analyses.stats import validation, macro, protocols
from metaeval.analyses.stats.results import NAN_POLICY
from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine import bookkeeping, analyse as engine, selection
from metaeval.runs.metrics import correlation_runs
from metaeval.runs.engine.runner import RunSummary, Task, has_subset

#: The commands ``--by`` serves, and the analysis each runs per group.
COMMANDS = {"correlate": correlation_runs.correlate, "ci": correlation_runs.ci}
MACRO = "unweighted mean over the groups (the values of the attribute `by`) of each group's result; NULL if any is"


def macro_label(where: Sequence, by: str) -> str:
    """The ``subset`` of the macro rows: ``by=*`` with the ``where`` conditions, in canonical order."""
    pairs = sorted([*selection.parse_where(where), (by, selection.MACRO_VALUE)])
    return selection.SUBSET_JOINER.join(f"{a}={v}" for a, v in pairs)


@dataclass
class ByResult:
    """What :func:`by_attribute` did: the outcome of each group (in the order of ``values``) and
    the macro rows' run (``macro``: up to date when its run_id is None)."""

    command: str
    by: str
    values: list[str]
    outcomes: list[engine.Outcome]
    macro: RunSummary
    macro_subset: str

    def rows(self, wh: Store) -> pd.DataFrame:
        """The latest rows of every group, then the macro average's."""
        frames = [o.rows(wh) for o in self.outcomes]
        first = self.outcomes[0]
        scope, params = first.scope, first.analysis.params.columns()
        frames.append(engine.latest_rows(wh, first.analysis.table, scope.dataset, scope.human, order=scope,
                                         subset=self.macro_subset, metric=scope.metrics, level=scope.levels,
                                         coefficient=scope.coefficients, **params))
        return pd.concat(frames, ignore_index=True)

    def messages(self) -> list[str]:
        out = []
        for value, o in zip(self.values, self.outcomes):
            s = o.summary
            state = "up to date" if s.up_to_date else f"run {s.run_id} computed {s.computed} of {s.tasks}"
            out += [f"skipped ({o.scope.subset}): {r}" for r in o.skipped.values()]
            out.append(f"{o.analysis.table} ({o.scope.subset}): {state}")
        m = self.macro
        state = "up to date" if m.up_to_date else f"run {m.run_id} wrote {m.written} rows"
        out.append(f"{self.outcomes[0].analysis.table} ({self.macro_subset}, macro average of {len(self.values)} "
                   f"groups): {state}")
        return out


def by_attribute(wh: Store, command: str, by: str, where: Sequence = (), *, dataset: str, human: str,
                 force: bool = False, **options) -> ByResult:
    """``command`` (correlate or ci) per value of the attribute ``by`` and their macro average
    (module docstring). Every check runs before the first group's run writes."""
    if command not in COMMANDS:
        raise WarehouseError(Message(Argument("by"), f" is offered by {', '.join(COMMANDS)}, not {command}"))
    if options.get("aggregate", "mean") != "mean":   # the macro average is of the groups' means
        raise WarehouseError(Message(Argument("aggregate", options["aggregate"]), " is not offered with ",
                                     Argument("by", by)))
    where = selection.parse_where(where)
    wh.require_dataset(dataset)
    if by in {a for a, _ in where}:
        raise WarehouseError(Message(Argument("by", by), " and ", Argument("where", placeholder=f"{by}=..."),
                                     " select the same attribute: give one of them"))
    values = wh.attribute_values(dataset, by)
    if len(values) < 2:
        raise WarehouseError(Message(f"attribute {by!r} of dataset {dataset!r} has one value ({', '.join(values)}): "
                                     "there is nothing to average over; use ", Argument("where"), " instead"))
    if command == "ci":
        if options.get("method", "boot-both") == "fisher":
            raise WarehouseError(Message(Argument("by"), " needs a bootstrap ", Argument("method"), " (boot-systems, "
                                         "boot-inputs, boot-both): the macro average's interval comes from resamples "
                                         "drawn within each group"))
        if options.get("resample_annotators"):
            raise WarehouseError(Message(Argument("by"), " does not resample annotators (",
                                         Argument("resample_annotators"), ")"))
        if options.get("resample_clusters"):
            raise WarehouseError(Message(Argument("by"), " does not resample clusters (",
                                         Argument("resample_clusters", options["resample_clusters"]),
                                         "): its macro average's resamples are drawn within each group"))
        if options.get("control") is not None:
            raise WarehouseError(Message(Argument("by"), " does not take a partial coefficient (", Argument("control"),
                                         "): the macro interval's resamples would need re-centring within each "
                                         "group's resampled cells"))
    groups = [(*where, (by, v)) for v in values]
    # the checks of every group (names, subsets, coefficients) before anything is written
    scopes = [selection.resolve_scope(wh, dataset, human, options.get("metrics", ()), options.get("levels", ()),
                                      options.get("coefficients", ()), where=g) for g in groups]
    if command == "ci" and any(validation.coefficient_iv(c).calibrated for c in scopes[0].coefficients):
        raise WarehouseError(Message(Argument("by"), " does not take a tie-calibrated coefficient (the macro interval "
                                     "would need the calibration of every resample of every group)"))
    call = COMMANDS[command]
    outcomes = [call(wh, dataset, human, where=g, force=force, **options) for g in groups]
    summary = _write_macro(wh, command, outcomes, by, where, force)
    return ByResult(command, by, values, outcomes, summary, macro_label(where, by))


def _write_macro(wh: Store, command: str, outcomes: list[engine.Outcome], by: str, where, force: bool
                 ) -> RunSummary:
    first = outcomes[0]
    analysis = first.analysis
    if not has_subset(wh, analysis.table):
        raise WarehouseError(f"{analysis.table} has no subset column")
    label = macro_label(where, by)
    # only the metrics every group could analyse
    metrics = [m for m in first.scope.metrics if all(m in o.scope.metrics for o in outcomes)]
    scope = selection.Scope(first.scope.dataset, first.scope.human, tuple(metrics), first.scope.levels,
                            first.scope.coefficients, tuple(where))
    group_rows = [o.rows(wh).set_index(["metric", "level", "coefficient"]) for o in outcomes]
    value = "estimate" if command == "ci" else "value"
    keys = [(m, lv, c) for m in metrics for lv in scope.levels for c in scope.coefficients]
    params = analysis.params.columns()
    fingerprints = {}
    for key in keys:
        digest = hashlib.sha256(f"macro\x1f{label}\x1e".encode())
        for o, rows in zip(outcomes, group_rows):
            r = rows.loc[key]
            digest.update(f"{o.scope.subset}\x1f{r['fingerprint']}\x1f{r[value]!r}\x1e".encode())
        fingerprints[key] = digest.hexdigest()
    stored = engine.latest_rows(wh, analysis.table, scope.dataset, scope.human, subset=label, **params)
    have = {(r["metric"], r["level"], r["coefficient"]): r["fingerprint"] for r in stored.to_dict("records")}
    todo = [key for key in keys if force or have.get(key) != fingerprints[key]]
    if not todo:
        return RunSummary(None, len(keys), 0, 0)
    data = None
    if command == "ci":
        data = selection.load_data(wh, scope)
        labels = wh.attribute_labels(scope.dataset, by, data.systems, data.inputs)
    parameters = {"dataset": scope.dataset, "human": scope.human, "metrics": list(scope.metrics),
                  "levels": list(scope.levels), "coefficients": list(scope.coefficients), "by": by,
                  "where": [f"{a}={v}" for a, v in scope.where], "subset": label,
                  "groups": [o.scope.subset for o in outcomes], **analysis.params.recorded()}
    fingerprint = hashlib.sha256("".join(fingerprints[k] for k in keys).encode()).hexdigest()
    run_id = bookkeeping.start_run(wh, command, parameters, analysis.seed, fingerprint, len(keys))
    with bookkeeping.finishing(wh, run_id):
        writer = bookkeeping.Writer(wh, analysis.table, run_id, scope, subset=label)
        for key in todo:
            rows = [r.loc[key] for r in group_rows]
            conventions = {**_json(rows[0]["conventions"]), "subset": label, "macro": MACRO, "by": by,
                           "groups": [o.scope.subset for o in outcomes],
                           "n_inputs": "the sum over the groups", "n_systems": "the largest over the groups",
                           "nan_policy": NAN_POLICY}
            values = {value: bookkeeping.as_float(macro.macro_average([r[value] for r in rows]))}
            if command == "ci":
                values.update(_macro_interval(data, labels, by, outcomes, key, params, conventions))
            task = Task(dict(zip(("metric", "level", "coefficient"), key)), (key[0], scope.human), fingerprints[key],
                        max(int(r.get("n_systems", 0)) for r in rows), sum(int(r.get("n_inputs", 0)) for r in rows))
            writer.add(task, {**values, "conventions": conventions}, analysis.params)
        writer.flush()
        bookkeeping.finish_run(wh, run_id, "finished", len(todo))
    return RunSummary(run_id, len(keys), len(todo), writer.written)


def _json(text) -> dict:
    import json

    return json.loads(text) if isinstance(text, str) else dict(text)


def _macro_interval(data: selection.Data, labels: np.ndarray, by: str, outcomes, key, params: dict,
                    conventions: dict) -> dict:
    """The macro interval of one (metric, level, coefficient) from the groups' cells: each group's
    systems and inputs those with a cell (of the metric or the human) in it (as its own run reads
    them), under the system-inputs protocol of the runs; NULL when a group's inputs are not paired."""
    metric, level, coefficient = key
    X_all, Z_all = data.values[metric], data.values[outcomes[0].scope.human]
    present = ~np.isnan(X_all) | ~np.isnan(Z_all)
    groups = []
    for o in outcomes:
        inside = labels == dict(o.scope.where)[by]
        rows, cols = (inside & present).any(axis=1), (inside & present).any(axis=0)
        arrays = [np.where(inside, a, np.nan)[np.ix_(rows, cols)] for a in (X_all, Z_all)]
        (X, Z), paired, _, _ = protocols.apply(arrays, level, params["system_inputs"])
        if not paired:
            conventions["macro_interval"] = ("not computed: in a group the metric scored inputs the human did not "
                                             "judge (the judged system-inputs protocol computes it)")
            return {"lower": None, "upper": None, "n_valid": None}
        groups.append((X, Z))
    r = macro.macro_bootstrap_ci(groups, level, coefficient, params["method"].removeprefix("boot-"), params["k"],
                                 params["alpha"], params["seed"])
    conventions.update({f"macro_{name}": v for name, v in r.conventions.items()})
    return {"lower": bookkeeping.as_float(r.lower), "upper": bookkeeping.as_float(r.upper),
            "n_valid": int(np.count_nonzero(~np.isnan(r.samples)))}
