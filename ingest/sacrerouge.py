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

import pandas as pd

from metaeval.errors import InputError
from metaeval.ingest.common import cells_frame, identifier, jsonl_objects, matches, measures_frame, number, sha256
from metaeval.load import Batch

FORMAT = "sacrerouge"


def parse(path: Path, *, human: Sequence[str] = (), lower: Sequence[str] = ()) -> Batch:
    file = str(path)
    rows: list[tuple] = []
    systems: dict[str, str | None] = {}
    for line, obj in jsonl_objects(path):
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
    cells = cells_frame(rows, file, field=lambda measure: f"metrics.{measure}")
    return Batch(
        file=file, format=FORMAT, sha256=sha256(path),
        options={"human": sorted(human), "lower": sorted(lower)},
        systems=pd.DataFrame({"name": list(systems), "type": list(systems.values())}),
        measures=measures_frame(cells, lower),
        cells=cells,
    )


def _flatten(metrics: dict, prefix: str = "", file: str = "", line: int = 0):
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if not key.strip():
            raise InputError(file, line, f"metrics.{name}", f"the metric name {key!r} is empty; give every metric "
                             "(and every level of a nested one) a name")
        if isinstance(value, dict):
            yield from _flatten(value, name + ".", file, line)
        else:
            yield name, value
