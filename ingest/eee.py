"""Every Eval Ever (``every-eval-ever`` 0.3.0) JSON lines as a dataset: ``metaeval ingest eee``.

Each line is an aggregate record (it has ``evaluation_results``) or an instance-level record (it
has ``sample_id``), as ``metaeval export --format eee`` writes them (:mod:`metaeval.runs.eee`).
Instance records are the values: system = ``model_id``, input = ``sample_id``, measure =
``evaluation_name``, value = ``evaluation.score``; ``metadata.annotator`` makes the value a
human judgment of that annotator. The texts come along when given: ``output.raw`` (one string,
the system's output), ``input.reference`` (ids in ``metadata.reference_ids``), the source
documents (``metadata.documents``, else a non-empty ``input.raw``). Aggregate records give
each measure's direction (``metric_config.lower_is_better``; higher is better when no record
says); those of result tables (``source_metadata.additional_details.metaeval = results``) are
results, not data, and are left out. ``is_correct`` is not read. ``metadata.replicate``: the run of
an automatic score (``scores.replicate``, a non-negative integer; a record without one is run
``--replicate N``, default 0; a human judgment has none), as ``export --format eee`` writes a
score run several times (one record per run).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from metaeval.errors import InputError
from metaeval.ingest.common import (cells_frame, check_name, identifier, jsonl_objects, number, replicate_number,
                                    sha256)
from metaeval.ingest.summaries import _put  # a text given again must be the same
from metaeval.batch import DOCUMENT_COLUMNS, MEASURE_COLUMNS, REFERENCE_COLUMNS, SUMMARY_COLUMNS, Batch

FORMAT = "eee"


def parse(path: Path, *, replicate: int = 0) -> Batch:
    """The file as a batch (module docstring); ``replicate``: the run of the scores whose record
    gives none (``--replicate``)."""
    from metaeval.ingest import run_numbers

    file = str(path)
    rows: list[tuple] = []
    directions: dict[str, tuple[str, int]] = {}
    systems: dict[str, None] = {}
    summaries: dict[tuple[str, str], tuple[str, int]] = {}
    references: dict[tuple[str, str], tuple[str, int]] = {}
    documents: dict[tuple[str, int], tuple[str, int]] = {}
    datasets: dict[str, int] = {}
    for line, obj in jsonl_objects(path):
        if "sample_id" in obj:
            _instance(obj, file, line, rows, systems, summaries, references, documents, datasets)
        elif "evaluation_results" in obj:
            _aggregate(obj, file, line, directions)
        else:
            raise InputError(file, line, None, "neither an aggregate record (evaluation_results) nor an "
                             "instance-level record (sample_id) of Every Eval Ever")
    runs = any(r[-1] is not None for r in rows)   # a record with metadata.replicate: the rows keep their runs
    rows = [r if runs else r[:-1] for r in rows]
    cells = cells_frame(rows, file, field=lambda measure: "evaluation.score", runs=runs)
    human = set(cells.loc[cells["annotator"].notna(), "measure"])
    names = sorted(set(cells["measure"]))
    measures = pd.DataFrame([(m, "human" if m in human else "automatic", directions.get(m, ("higher",))[0])
                             for m in names], columns=MEASURE_COLUMNS)
    batch = Batch(
        file=file, format=FORMAT, sha256=sha256(path), options={},
        systems=pd.DataFrame({"name": list(systems), "type": [None] * len(systems)}),
        measures=measures, cells=cells,
        summaries=pd.DataFrame([(s, i, t, n) for (s, i), (t, n) in summaries.items()], columns=SUMMARY_COLUMNS),
        references=pd.DataFrame([(i, r, t, n) for (i, r), (t, n) in references.items()], columns=REFERENCE_COLUMNS),
        documents=pd.DataFrame([(i, p, t, n) for (i, p), (t, n) in documents.items()], columns=DOCUMENT_COLUMNS),
        runs=runs,
    )
    return run_numbers.given([batch], replicate)[0]


def _field(obj: dict, file: str, line: int, *path: str, kind=dict, required: bool = True):
    """``obj[path[0]][path[1]]...``, of type ``kind``; None when absent and not ``required``."""
    value = obj
    for depth, key in enumerate(path):
        if not isinstance(value, dict) or key not in value or value[key] is None:
            if required:
                raise InputError(file, line, ".".join(path[:depth + 1]), "missing")
            return None
        value = value[key]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise InputError(file, line, ".".join(path), f"expected {getattr(kind, '__name__', kind)}, "
                         f"got {type(value).__name__}")
    return value


def _aggregate(obj: dict, file: str, line: int, directions: dict) -> None:
    details = _field(obj, file, line, "source_metadata", "additional_details", required=False) or {}
    if details.get("metaeval") == "results":
        return
    results = _field(obj, file, line, "evaluation_results", kind=list)
    for position, result in enumerate(results):
        where = f"evaluation_results[{position}]"
        if not isinstance(result, dict):
            raise InputError(file, line, where, "expected an object")
        name = _field(result, file, line, "evaluation_name", kind=str)
        measure = check_name(name, file, line, f"{where}.evaluation_name", "measure name")
        lower = _field(result, file, line, "metric_config", "lower_is_better", kind=bool)
        direction = "lower" if lower else "higher"
        if measure in directions and directions[measure][0] != direction:
            raise InputError(file, line, f"{where}.metric_config.lower_is_better",
                             f"measure {measure!r} is {directions[measure][0]} is better on line "
                             f"{directions[measure][1]}, {direction} here")
        directions.setdefault(measure, (direction, line))


def _instance(obj: dict, file: str, line: int, rows: list, systems: dict, summaries: dict, references: dict,
              documents: dict, datasets: dict) -> None:
    system = identifier(obj.get("model_id"), file, line, "model_id")
    input_ = identifier(obj.get("sample_id"), file, line, "sample_id")
    measure = check_name(_field(obj, file, line, "evaluation_name", kind=str), file, line, "evaluation_name",
                         "measure name")
    value = number(_field(obj, file, line, "evaluation", kind=dict).get("score"), file, line, "evaluation.score")
    metadata = _field(obj, file, line, "metadata", required=False) or {}
    dataset = metadata.get("dataset")
    if isinstance(dataset, str):
        datasets.setdefault(dataset, line)
        if len(datasets) > 1:
            first, at = next(iter(datasets.items()))
            raise InputError(file, line, "metadata.dataset", f"dataset {dataset!r}, but line {at} is of {first!r}: "
                             "one dataset a file (export with --dataset)")
    annotator = metadata.get("annotator")
    if annotator is not None:
        annotator = identifier(annotator, file, line, "metadata.annotator")
    run = replicate_number(metadata.get("replicate"), file, line, "metadata.replicate")
    if run is not None and annotator is not None:
        raise InputError(file, line, "metadata.replicate", "a run number on a human judgment: runs are an automatic "
                         "measure's (a judgment's repeated values are its annotators')")
    systems.setdefault(system, None)
    rows.append((system, input_, measure, annotator, value, line, run))
    outputs = _field(obj, file, line, "output", "raw", kind=list, required=False) or []
    if len(outputs) > 1 or not all(isinstance(t, str) for t in outputs):
        raise InputError(file, line, "output.raw", "expected at most one output text (a string)")
    if outputs:
        _put(summaries, (system, input_), outputs[0], line, file, "output.raw",
             f"output of system={system} input={input_}")
    texts = _field(obj, file, line, "input", "reference", kind=list, required=False) or []
    ids = _json_list(metadata, "reference_ids", file, line) or [str(p) for p in range(len(texts))]
    if len(ids) != len(texts):
        raise InputError(file, line, "metadata.reference_ids", f"{len(ids)} ids for {len(texts)} references")
    for position, (ref, text) in enumerate(zip(ids, texts)):
        if not isinstance(text, str):
            raise InputError(file, line, f"input.reference[{position}]", "expected a string")
        ref = identifier(ref, file, line, f"metadata.reference_ids[{position}]")
        _put(references, (input_, ref), text, line, file, f"input.reference[{position}]",
             f"reference {ref} of input {input_}")
    docs = _json_list(metadata, "documents", file, line)
    if docs is None:
        raw = _field(obj, file, line, "input", "raw", kind=str, required=False)
        docs = [raw] if raw else []
    for position, text in enumerate(docs):
        if not isinstance(text, str):
            raise InputError(file, line, f"metadata.documents[{position}]", "expected a string")
        _put(documents, (input_, position), text, line, file, "metadata.documents",
             f"document {position} of input {input_}")


def _json_list(metadata: dict, key: str, file: str, line: int) -> list | None:
    if key not in metadata:
        return None
    try:
        value = json.loads(metadata[key]) if isinstance(metadata[key], str) else None
    except ValueError:
        value = None
    if not isinstance(value, list):
        raise InputError(file, line, f"metadata.{key}", "expected a JSON list in a string")
    return value

