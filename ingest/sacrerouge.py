"""SacreROUGE metrics jsonl: one object per summary,
``{"instance_id", "summarizer_id", "summarizer_type", "metrics": {nested}}``.

Measure names are the nested keys joined by ``.`` (``rouge-2.recall``); a measure named
twice on a line (``{"rouge-2": {"f1": ..}, "rouge-2.f1": ..}``) is an error. Keys matched by a
``human`` glob are human judgments: a list is one value per annotator (annotator = its
position, "0", "1", ...), a number is a single annotator "0". Other keys are automatic
scores. Values must be JSON numbers: a string that spells one (``"0.5"``) or a boolean is
an error naming the line and the metric.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb
import pandas as pd

from metaeval.core import Store
from metaeval.errors import InputError
from metaeval.ingest.common import (
    CHUNK,
    cells_frame,
    check_globs_used,
    check_name,
    check_staged_cells,
    identifier,
    jsonl_objects,
    matches,
    measures_frame,
    number,
    sha256,
    stage_rows,
)
from metaeval.batch import MEASURE_COLUMNS, Batch, LoadReport

FORMAT = "sacrerouge"


def parse(path: Path, *, human: Sequence[str] = (), lower: Sequence[str] = ()) -> Batch:
    file = str(path)
    rows: list[tuple] = []
    systems: dict[str, str | None] = {}
    for chunk in _rows(path, human, systems, chunk=None):
        rows.extend(chunk)
    cells = cells_frame(rows, file, field=lambda measure: f"metrics.{measure}")
    return Batch(
        file=file, format=FORMAT, sha256=sha256(path),
        options={"human": sorted(human), "lower": sorted(lower)},
        systems=pd.DataFrame({"name": list(systems), "type": list(systems.values())}),
        measures=measures_frame(cells, lower),
        cells=cells,
    )


def stage(con: duckdb.DuckDBPyConnection, path: Path, *, human: Sequence[str] = (), lower: Sequence[str] = (),
          origin: int = 0) -> Batch:
    """As :func:`parse`, but the cells go to a temporary table of ``con`` in chunks of
    :data:`CHUNK` (memory bounded whatever the file's size): a :class:`Batch` whose
    ``cells_table`` holds them. A cell given twice is the error :func:`parse` gives."""
    file = str(path)
    systems: dict[str, str | None] = {}
    name = f"_cells_{origin}"
    try:
        rows = stage_rows(con, name, (row for chunk in _rows(path, human, systems, chunk=CHUNK) for row in chunk))
        check_staged_cells(con, name, file, field=lambda measure: f"metrics.{measure}")  # parse's errors
        [(judgments,)] = con.execute(f"SELECT count(annotator) FROM {name}").fetchall()
        kinds = con.execute(f"SELECT measure, bool_or(annotator IS NOT NULL) FROM {name} GROUP BY measure "
                            "ORDER BY measure").fetchall()
    except BaseException:
        con.execute(f"DROP TABLE IF EXISTS {name}")
        raise
    return Batch(
        file=file, format=FORMAT, sha256=sha256(path),
        options={"human": sorted(human), "lower": sorted(lower)},
        systems=pd.DataFrame({"name": list(systems), "type": list(systems.values())}),
        measures=pd.DataFrame({"name": [m for m, _ in kinds], "kind": ["human" if h else "automatic" for _, h in kinds],
                               "direction": ["lower" if matches(m, lower) else "higher" for m, _ in kinds]},
                              columns=MEASURE_COLUMNS),
        cells_table=name, cell_counts=(rows - judgments, judgments),
    )


def _rows(path: Path, human: Sequence[str], systems: dict[str, str | None], chunk: int | None):
    """Lists of cell rows ``(system, input, measure, annotator, value, line)``, of about
    ``chunk`` rows each (all in one list when None); ``systems`` gathers the systems' types."""
    file = str(path)
    rows: list[tuple] = []
    for line, obj in jsonl_objects(path):
        if chunk is not None and len(rows) >= chunk:
            yield rows
            rows = []
        system = identifier(obj.get("summarizer_id"), file, line, "summarizer_id")
        input_ = identifier(obj.get("instance_id"), file, line, "instance_id")
        systems.setdefault(system, obj.get("summarizer_type"))
        metrics = obj.get("metrics")
        if not isinstance(metrics, dict) or not metrics:
            raise InputError(file, line, "metrics", "expected a non-empty object of metric values")
        given: set[str] = set()
        for measure, value in _flatten(metrics, file=file, line=line):
            field = f"metrics.{measure}"
            if measure in given:
                raise InputError(file, line, field, f"measure {measure!r} is given twice on this line: nested keys "
                                 "and a key with a dot in it name the same measure; keep one")
            given.add(measure)
            if matches(measure, human):
                values = value if isinstance(value, list) else [value]
                if not values:
                    raise InputError(file, line, field, "an empty list of annotator values")
                for a, v in enumerate(values):
                    rows.append((system, input_, measure, str(a), number(v, file, line, f"{field}[{a}]"), line))
            elif isinstance(value, list):
                raise InputError(file, line, field,
                                 "a list of values (one per annotator?) for a measure not marked human; "
                                 f"pass --human {measure!r}")
            else:
                rows.append((system, input_, measure, None, number(value, file, line, field), line))
    yield rows


def _flatten(metrics: dict, prefix: str = "", file: str = "", line: int = 0):
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if not key.strip():
            raise InputError(file, line, f"metrics.{name}", f"the metric name {key!r} is empty; give every metric "
                             "(and every level of a nested one) a name")
        if isinstance(value, dict):
            yield from _flatten(value, name + ".", file, line)
        else:
            yield check_name(name, file, line, f"metrics.{name}", "metric name"), value


def ingest(wh: Store, dataset: str, paths: Sequence[Path], *, human: Sequence[str] = (),
           lower: Sequence[str] = (), replace: bool = False, allow_new: bool = False,
           command: str | None = None, replicate: int = 0) -> list[LoadReport]:
    """SacreROUGE metrics files into ``dataset`` of ``wh`` in one transaction, as
    ``metaeval ingest sacrerouge`` does: each streamed into DuckDB by :func:`stage`. ``replicate``:
    the run of their scores (``--replicate``; :mod:`metaeval.ingest.run_numbers`)."""
    from metaeval.ingest import run_numbers
    from metaeval.ingest.table import run_option

    run_option(replicate, [str(p) for p in paths])   # before anything is staged
    batches: list[Batch] = []
    try:
        for i, path in enumerate(paths):
            batches.append(stage(wh.con, Path(path), human=human, lower=lower, origin=i))
        measures = [m for b in batches for m in b.measures["name"]]
        files = [b.file for b in batches]
        check_globs_used(human, measures, "--human", files)
        check_globs_used(lower, measures, "--lower", files)
        run_numbers.given(batches, replicate)
        return wh.load(dataset, batches, replace=replace, command=command, allow_new=allow_new)
    finally:
        for b in batches:
            try:
                wh.con.execute(f"DROP TABLE IF EXISTS {b.cells_table}")
            except duckdb.Error:
                pass
