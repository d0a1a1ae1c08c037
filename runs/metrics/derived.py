"""What the rankings derived from stored tests share (``winners``, ``replicability``): the latest
``hypothesis_tests`` rows written by ``compare``, checked to be computed on the cells the
warehouse holds now (else an error naming the ``compare`` to run), and the writing of derived
rows whose fingerprint changed, each command one row of ``analysis_runs``."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from metaeval import schema
from metaeval.core import Store
from metaeval.errors import Hint, WarehouseError
from metaeval.runs.engine import bookkeeping
from metaeval.runs.metrics import comparisons
from metaeval.runs.engine.parameters import DEFAULT_AGGREGATE, Params, aggregate_fingerprint
from metaeval.runs.engine.runner import Data, RunSummary, Scope, Task


# --- reading hypothesis tests ----------------------------------------------------------------
def latest_tests(wh: Store, dataset: str, human: str, method: str, alternative: str,
           correction: str | None = None, group: str | None = None, family: str | None = None,
           aggregate: str = DEFAULT_AGGREGATE) -> dict[tuple, dict]:
    rows = wh.con.execute(schema.read("ranking_tests"), {
        "dataset": dataset, "human": human, "method": method, "alternative": alternative, "aggregate": aggregate,
        "correction": correction, "correction_group": group, "family": family, **bookkeeping.version_parameter()}).df()
    return {(r["metric_a"], r["metric_b"], r["level"], r["coefficient"]): r for r in rows.to_dict("records")}


def compare_hint(db, dataset: str, human: str, metrics: Sequence[str], levels: Sequence[str],
                  coefficients: Sequence[str], method: str, alternative: str,
                  correction: str | None = None, group: str | None = None) -> Hint:
    """The ``compare`` (``Warehouse.compare``) producing the tests a ranking reads."""
    arguments = [("dataset", dataset), ("human", human), ("metrics", list(metrics)), ("levels", list(levels)),
                 ("coefficients", list(coefficients)), ("method", method), ("alternative", alternative)]
    if correction is not None:
        arguments += [("correction", correction), ("correction_group", group)]
    return Hint("compare", tuple(arguments), str(db))


def checked_tests(wh: Store, data: Data, scope: Scope, method: str, alternative: str,
                   correction: str | None = None, group: str | None = None,
                   aggregate: str = DEFAULT_AGGREGATE) -> dict[tuple, dict]:
    """The test row of every ordered pair of the scope's metrics at each level and coefficient,
    computed on the cells the warehouse holds now (a system's score their ``aggregate``) -- with
    a correction, corrected within the family of exactly these metrics; else an error naming
    the command to run."""
    family = comparisons.correction_family(scope.metrics, correction) if correction is not None else None
    tests = latest_tests(wh, scope.dataset, scope.human, method, alternative, correction, group, family, aggregate)
    wanted = [(a, b, lv, c) for lv in scope.levels for c in scope.coefficients
              for a in scope.metrics for b in scope.metrics if a != b]
    missing = [key for key in wanted if key not in tests]
    fingerprints: dict[tuple, str] = {}
    stale = []
    for key in wanted:
        if key in tests:
            measures = (key[0], key[1], scope.human)
            if measures not in fingerprints:
                fingerprints[measures] = aggregate_fingerprint(data.fingerprint(measures)[0], aggregate)
            if tests[key]["fingerprint"] != fingerprints[measures]:
                stale.append(key)
    if missing or stale:
        which = "missing" if missing else "computed on other cells than the warehouse now holds"
        example = (missing or stale)[0]
        family = f"`{method}` tests (alternative {alternative}" + (
            f", correction {correction} within each {group})" if correction is not None else ")")
        raise WarehouseError(
            f"{scope.dataset}: {len(missing or stale)} of the {len(wanted)} {family} between the metrics are "
            f"{which} (e.g. {example[0]} vs {example[1]}, {example[2]} level, {example[3]}); produce them with:",
            hint=compare_hint(wh.path, scope.dataset, scope.human, scope.metrics, scope.levels, scope.coefficients,
                               method, alternative, correction, group))
    return {key: tests[key] for key in wanted}


def digest(parts: Sequence) -> str:
    return hashlib.sha256(json.dumps(list(parts), default=str).encode()).hexdigest()


# --- writing derived rows ---------------------------------------------------------------------
def write_new(wh: Store, scope: Scope, command: str, key_columns: Sequence[str], params: Params,
               parameters: dict, data_fingerprint: str, planned: list[tuple[Task, dict]], force: bool) -> RunSummary:
    """Write the planned rows whose fingerprint differs from the latest row of their key (and
    ``params``' columns) into ``params``' table; ``parameters``: the scope the run records."""
    columns = params.columns()
    latest = {} if force else {
        tuple(r[c] for c in key_columns): r["fingerprint"]
        for r in wh.con.execute(
            f"SELECT * FROM {params.view} WHERE dataset = $dataset AND human = $human AND {bookkeeping.THIS_VERSION} AND "
            + " AND ".join(f"{c} = ${c}" for c in columns),
            {"dataset": scope.dataset, "human": scope.human, **columns, **bookkeeping.version_parameter()}
        ).df().to_dict("records")}
    todo = [(t, row) for t, row in planned if latest.get(tuple(t.key.values())) != t.fingerprint]
    if not todo:
        return RunSummary(None, len(planned), 0, 0)
    run_id = bookkeeping.start_run(wh, command, {**parameters, **params.recorded()}, None, data_fingerprint,
                                   len(planned))
    with bookkeeping.finishing(wh, run_id):
        writer = bookkeeping.Writer(wh, params.table, run_id, scope)
        for task, row in todo:
            writer.add(task, row, params)
        writer.flush()
        bookkeeping.finish_run(wh, run_id, "finished", len(todo))
    return RunSummary(run_id, len(planned), len(todo), writer.written)


