"""``metaeval export --format eee``: results and the datasets' items in the Every Eval Ever
schema (``every-eval-ever`` 0.3.0), one JSON object a line.

Two kinds of line, each valid against one of the schemas the 0.3.0 wheel ships:

- an **aggregate** record (``eval.schema.json``; it has ``evaluation_results``), one per
  (dataset, system) of the items — each measure's system mean, with its direction — and one per
  (result table, dataset, evaluated thing) of the results: the metric, judge, system or measure a
  row is about is the record's model; each defined number of the row is one evaluation result,
  its interval (``lower``/``upper``, ``X_lower``/``X_upper``) and confidence level
  (``1 - alpha``) attached, and the row's other columns as strings in ``details``;
- an **instance-level** record (``instance_level_eval.schema.json``; it has ``sample_id``), one
  per stored value: model = system, sample = input, evaluation name = measure, the annotator
  of a human judgment in ``metadata``.

The schema requires ``is_correct``, which a graded value does not have: it is ``false`` on every
record and ``metadata.is_correct`` says ``undefined``. An undefined number (NULL, NaN) is not
written as a score (the schema's score is a number); its column is listed in the row's
``details.undefined``. :mod:`metaeval.ingest.eee` reads the items back.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

from metaeval import __version__, schema
from metaeval.errors import WarehouseError

if TYPE_CHECKING:
    from metaeval.core import Store

SCHEMA_VERSION = "0.3.0"
LIBRARY = "metaeval-warehouse"
#: What a record of items says it is (``source_metadata.additional_details.metaeval``).
ITEMS, RESULTS = "items", "results"
#: Columns that are a row's bookkeeping or settings, never one of its results.
_SETTINGS = {"result_id", "run_id", "k", "seed", "alpha", "k_block", "k_used", "family_size", "n_valid",
             "n_valid_auc", "bins", "bin", "n_bins", "fraction", "ridge", "min_items", "epsilon"}
#: The columns naming what a row evaluates (its "model"), in order of preference.
_SUBJECT = ("metric", "judge", "system", "measure", "metric_a", "judge_a", "system_a", "measure_a", "human",
            "input", "variant", "option")
_NUMERIC = {"DOUBLE", "FLOAT", "REAL", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT",
            "USMALLINT", "UINTEGER", "UBIGINT"}
#: The column whose interval is the row's plain ``lower``/``upper``.
_PRIMARY = ("estimate", "value", "rating", "strength", "lc_winrate", "coefficient", "difference")


def _model(name: str) -> dict:
    return {"name": name, "id": name,
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"}}


def _text(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if value is None:
        return "NULL"
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return json.dumps(value, default=str) if isinstance(value, (list, dict)) else str(value)


def _python(value):
    return value.item() if hasattr(value, "item") and getattr(value, "ndim", 1) == 0 else value


def _number(value) -> float | None:
    """A finite number, else None (undefined); booleans are not numbers."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _lower_is_better(column: str) -> bool:
    name = column.lower()
    return "p_value" in name or "pvalue" in name or name.endswith("_p") or name.startswith("p_") \
        or "brier" in name or name in ("rank", "rank_lower", "rank_upper", "fragility", "disagreement")


def _source(dataset: str, kind: str, **details: str) -> tuple[dict, dict]:
    meta = {"source_name": f"metaeval warehouse, dataset {dataset}", "source_type": "evaluation_run",
            "source_organization_name": "metaeval-warehouse", "evaluator_relationship": "third_party",
            "additional_details": {"metaeval": kind, "dataset": dataset, **details}}
    return meta, {"dataset_name": dataset, "source_type": "other"}


def item_records(wh: Store, dataset: str, stamp: str) -> Iterator[dict]:
    """The aggregate record of each system of ``dataset``, then one instance record per value (a
    score run several times: one per run, ``metadata.replicate`` the run when not the first)."""
    measures = wh.con.execute(
        "SELECT m.name, m.kind, m.direction, m.scale FROM measures m JOIN datasets d USING (dataset_id) "
        "WHERE d.name = ? ORDER BY m.name", [dataset]).fetchall()
    means = wh.con.execute("SELECT system, measure, mean, n_inputs FROM system_means WHERE dataset = ? "
                           "ORDER BY system, measure", [dataset]).fetchall()
    kinds = {m: (kind, direction, scale) for m, kind, direction, scale in measures}
    by_system: dict[str, list] = {}
    for system, measure, mean, n in means:
        by_system.setdefault(system, []).append((measure, mean, n))
    for system, rows in by_system.items():
        meta, source = _source(dataset, ITEMS)
        results = []
        for measure, mean, n in rows:
            kind, direction, scale = kinds[measure]
            low, high = (None, None)
            if scale:
                low, high = (float(x) for x in scale.split(".."))
            details = {"kind": kind, "aggregate": "mean over inputs", "n_inputs": str(n)}
            if scale:
                details["scale"] = scale
            result = {"evaluation_result_id": f"{dataset}/{measure}", "evaluation_name": measure,
                      "source_data": source,
                      "metric_config": {"metric_id": measure, "metric_name": measure,
                                        "lower_is_better": direction == "lower", "score_type": "continuous",
                                        "min_score": low, "max_score": high,
                                        "additional_details": details}}
            value = _number(mean)
            if value is None:
                continue
            result["score_details"] = {"score": value, "uncertainty": {"num_samples": int(n)}}
            results.append(result)
        if results:
            yield {"schema_version": SCHEMA_VERSION, "evaluation_id": f"metaeval/{dataset}/{system}",
                   "retrieved_timestamp": stamp, "source_metadata": meta, "model_info": _model(system),
                   "eval_library": {"name": LIBRARY, "version": __version__}, "evaluation_results": results}
    texts = {}
    for table, sql in (("summaries", "SELECT s.name, i.name, t.text FROM summaries t JOIN systems s USING "
                                     "(system_id) JOIN inputs i USING (input_id) JOIN datasets d ON d.dataset_id = "
                                     "i.dataset_id WHERE d.name = ?"),
                       ("references", "SELECT r.reference_id, i.name, r.text FROM \"references\" r JOIN inputs i "
                                      "USING (input_id) JOIN datasets d USING (dataset_id) WHERE d.name = ? "
                                      "ORDER BY i.name, r.reference_id"),
                       ("documents", "SELECT r.position, i.name, r.text FROM documents r JOIN inputs i "
                                     "USING (input_id) JOIN datasets d USING (dataset_id) WHERE d.name = ? "
                                     "ORDER BY i.name, r.position")):
        texts[table] = wh.con.execute(sql, [dataset]).fetchall()
    summaries = {(s, i): t for s, i, t in texts["summaries"]}
    references: dict[str, list] = {}
    for ref, i, t in texts["references"]:
        references.setdefault(i, []).append((ref, t))
    documents: dict[str, list] = {}
    for _, i, t in texts["documents"]:
        documents.setdefault(i, []).append(t)
    cursor = wh.con.execute(
        "SELECT s.name, i.name, m.name, NULL, v.value, v.replicate FROM scores v JOIN systems s USING (system_id) "
        "JOIN inputs i USING (input_id) JOIN measures m USING (measure_id) JOIN datasets d ON d.dataset_id = "
        "m.dataset_id WHERE d.name = $d "
        "UNION ALL SELECT s.name, i.name, m.name, v.annotator, v.value, NULL FROM judgments v JOIN systems s "
        "USING (system_id) JOIN inputs i USING (input_id) JOIN measures m USING (measure_id) JOIN datasets d "
        "ON d.dataset_id = m.dataset_id WHERE d.name = $d ORDER BY 1, 2, 3, 4, 6", {"d": dataset})
    for row in (row for rows in iter(lambda: cursor.fetchmany(10_000), []) for row in rows):
        yield _instance(dataset, row, kinds, summaries, references, documents)


def _instance(dataset: str, row: tuple, kinds: dict, summaries: dict, references: dict, documents: dict) -> dict:
    """The instance record of one stored value ``row`` (system, input, measure, annotator, value, run)."""
    system, input_, measure, annotator, value, run = row
    refs = references.get(input_, [])
    metadata = {"dataset": dataset, "kind": kinds[measure][0], "is_correct": "undefined"}
    if annotator is not None:
        metadata["annotator"] = annotator
    if run:   # a score's run after the first (scores.replicate): one record per run, read back by ingest eee
        metadata["replicate"] = str(run)
    if refs:
        metadata["reference_ids"] = json.dumps([r for r, _ in refs])
    if input_ in documents:
        metadata["documents"] = json.dumps(documents[input_])
    output = {"raw": [summaries[system, input_]] if (system, input_) in summaries else []}
    return {"schema_version": SCHEMA_VERSION, "evaluation_id": f"metaeval/{dataset}/{system}",
            "model_id": system, "evaluation_name": measure, "evaluation_result_id": f"{dataset}/{measure}",
            "sample_id": input_, "interaction_type": "single_turn",
            "input": {"raw": "\n\n".join(documents.get(input_, [])), "reference": [t for _, t in refs]},
            "output": output, "answer_attribution": [],
            "evaluation": {"score": float(value), "is_correct": False}, "metadata": metadata}


def result_records(wh: Store, table: str, dataset: str | None, stamp: str) -> Iterator[dict]:
    """The latest rows of result ``table`` (of ``dataset``; None: all), as aggregate records: one
    per (dataset, evaluated thing), each defined number of a row one evaluation result."""
    from metaeval.runs.engine import stored

    view = schema.latest_view(table)
    types = {c: t for (c, t, *_) in wh.con.execute(f"DESCRIBE {view}").fetchall()}
    numeric = {c for c, t in types.items() if t in _NUMERIC or t.startswith("DECIMAL")}
    if "dataset" in types:
        frame = stored.table_rows(wh, table, dataset, latest=True, plain=True)
    elif dataset is None:   # task_rankings: over a set of tasks (datasets), no one dataset
        frame = wh.rows(f"SELECT * FROM {view} ORDER BY result_id")
    else:
        return
    columns = list(frame.columns)
    if frame.plain:
        rows = [dict(zip(columns, values)) for values in frame.data]
    else:   # a column without a plain rendering (a list): numpy scalars as Python values
        rows = [{c: _python(v) for c, v in row.items()} for row in frame.frame.to_dict("records")]
    subject = next((c for c in _SUBJECT if c in columns), None)
    groups: dict[tuple[str, str], list] = {}
    for row in rows:
        where = str(row.get("dataset") or row.get("task_set") or "")
        groups.setdefault((where, str(row[subject]) if subject else table), []).append(row)
    bounds = {c for c in columns for p in ("lower", "upper") if c == p or c.endswith("_" + p)}
    for (where, model), members in groups.items():
        meta, source = _source(where, RESULTS, table=table)
        results = []
        for row in members:
            numbers = [c for c in columns if c in numeric and c not in _SETTINGS and c not in bounds and c != subject]
            undefined = [c for c in numbers if _number(row[c]) is None]
            details = {c: _text(row[c]) for c in columns if c not in numbers and c not in bounds
                       and c not in ("conventions", "fingerprint")}
            if undefined:
                details["undefined"] = ",".join(undefined)
            details["fingerprint"] = _text(row.get("fingerprint"))
            for c in numbers:
                value = _number(row[c])
                if value is None:
                    continue
                score = {"score": value, "details": details}
                low, high = _bounds(row, c, columns)
                if low is not None and high is not None:
                    interval = {"lower": low, "upper": high}
                    alpha = _number(row.get("alpha"))
                    if alpha is not None and 0 < alpha < 1:
                        interval["confidence_level"] = 1 - alpha
                    if isinstance(row.get("method"), str) or isinstance(row.get("interval"), str):
                        interval["method"] = row.get("interval") or row.get("method")
                    uncertainty = {"confidence_interval": interval}
                    if isinstance(row.get("k"), int) and row["k"] > 0:
                        uncertainty["num_bootstrap_samples"] = row["k"]
                    score["uncertainty"] = uncertainty
                results.append({
                    "evaluation_result_id": f"{table}/{row['result_id']}/{c}",
                    "evaluation_name": table, "source_data": source,
                    "metric_config": {"metric_id": f"metaeval.{table}.{c}", "metric_name": c,
                                      "lower_is_better": _lower_is_better(c),
                                      "additional_details": {"table": table, "column": c}},
                    "score_details": score})
        if results:
            yield {"schema_version": SCHEMA_VERSION, "evaluation_id": f"metaeval/{table}/{where}/{model}",
                   "retrieved_timestamp": stamp, "source_metadata": meta, "model_info": _model(model),
                   "eval_library": {"name": LIBRARY, "version": __version__}, "evaluation_results": results}


def _bounds(row: dict, column: str, columns: list[str]) -> tuple[float | None, float | None]:
    if f"{column}_lower" in columns:
        return _number(row.get(f"{column}_lower")), _number(row.get(f"{column}_upper"))
    primary = next((c for c in _PRIMARY if c in columns), None)
    if column == primary and "lower" in columns and "upper" in columns:
        return _number(row.get("lower")), _number(row.get("upper"))
    return None, None


def records(wh: Store, tables: list[str], dataset: str | None, stamp: str) -> Iterator[dict]:
    """Every record of an export: the items of ``dataset`` (None: every dataset), then the
    results of ``tables``."""
    if dataset is not None:
        wh.require_dataset(dataset)
    datasets = [dataset] if dataset is not None else \
        [d for (d,) in wh.con.execute("SELECT name FROM datasets ORDER BY name").fetchall()]
    if not datasets:
        raise WarehouseError(f"{wh.path} has no dataset: nothing to export (ingest one first)")
    for d in datasets:
        yield from item_records(wh, d, stamp)
    for table in tables:
        if table != "analysis_runs":
            yield from result_records(wh, table, dataset, stamp)


def result_tables() -> list[str]:
    """The result tables an eee export writes by default (every one; ``analysis_runs`` holds
    runs, not results)."""
    return [t for t in schema.RESULT_TABLES if t != "analysis_runs"]


def write(wh: Store, path, tables: list[str], dataset: str | None) -> dict[str, int]:
    """Write :func:`records` to ``path``, one JSON object a line; how many of each kind."""
    import time

    stamp = str(int(time.time()))
    counts = {"aggregate": 0, "instance": 0}
    with open(path, "w", encoding="utf-8") as f:
        for record in records(wh, tables, dataset, stamp):
            f.write(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")
            counts["instance" if "sample_id" in record else "aggregate"] += 1
    return counts
