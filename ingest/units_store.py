"""``metaeval ingest units``: pyramid scores from content-unit judgments, stored as human measures.

The file (:mod:`metaeval.ingest.units`) is parsed and checked; the scores of each summary are
computed by :mod:`metaeval.analyses.pyramid` and loaded in one transaction as the human measures

- ``PREFIX.lite`` -- the unweighted lite recall (REALSumm's LitePyramid);
- ``PREFIX.pyramid`` -- the pyramid score (Louis & Nenkova 2013 Eq. 1), when the file has weights;
- ``PREFIX.pyramid-tiered`` -- the tiered form with P_max (Cohan & Goharian 2016 §4.2), when the
  weights are integers (tiers).

``combine="majority"`` (default): a unit is present when strictly more than half of its
annotators mark it (a tie is absent), one value per summary under the annotator ``"majority"``;
``combine="mean"``: each annotator's scores are stored as that annotator's judgments, so a
summary's value (the mean over its annotators, as for every human measure) is their mean. The
systems and inputs are created from the file (a new dataset, or new ids in an existing one).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from metaeval.analyses import pyramid
from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError
from metaeval.ingest import units as parser
from metaeval.batch import CELL_COLUMNS, Batch, LoadReport

COMBINE = ("majority", "mean")


def scores(units: parser.Units, combine: str = "majority") -> pd.DataFrame:
    """One row per (system, input, annotator) with ``lite`` and, with weights, ``pyramid`` and
    ``pyramid-tiered``."""
    if combine not in COMBINE:
        raise WarehouseError(Message("unknown ", Argument("combine", combine), f"; choose from {', '.join(COMBINE)}"))
    rows = units.rows.sort_values(["input", "unit"], kind="stable")
    out = []
    for (input_, system), summary in rows.groupby(["input", "system"], sort=True):
        marks = summary.pivot(index="annotator", columns="unit", values="present")
        weight = summary.groupby("unit")["weight"].first().reindex(marks.columns).to_numpy()
        if combine == "majority":
            marks = pd.DataFrame([pyramid.majority(marks.to_numpy())], index=["majority"], columns=marks.columns)
        for annotator, present in marks.iterrows():
            row = {"system": system, "input": input_, "annotator": annotator,
                   "lite": pyramid.lite_recall(present.to_numpy())}
            if units.weighted:
                row["pyramid"] = pyramid.pyramid_score(present.to_numpy(), weight)
                row["pyramid-tiered"] = pyramid.tiered_score(present.to_numpy(), weight)
            out.append(row)
    return pd.DataFrame(out)


def ingest(wh: Store, dataset: str, path: Path, *, prefix: str = "units", combine: str = "majority",
           replace: bool = False, allow_new: bool = False, command: str | None = None) -> LoadReport:
    """Parse, score and load ``path`` into ``dataset`` (one transaction)."""
    from metaeval.names import check_new

    check_new(prefix, "measure prefix")   # the one rule for a name
    units = parser.parse(Path(path))
    table = scores(units, combine)
    measures = [m for m in ("lite", "pyramid", "pyramid-tiered") if m in table
                and not (m == "pyramid-tiered" and table[m].isna().all())]
    cells = pd.concat([pd.DataFrame({"system": table["system"], "input": table["input"],
                                     "measure": f"{prefix}.{m}", "annotator": table["annotator"],
                                     "value": table[m], "line": 0})
                       for m in measures], ignore_index=True)
    cells = cells[np.isfinite(cells["value"].to_numpy(dtype=float))][CELL_COLUMNS]
    batch = Batch(file=units.file, format=parser.FORMAT, sha256=units.sha256,
                  options={"prefix": prefix, "combine": combine},
                  systems=pd.DataFrame({"name": sorted(table["system"].unique()), "type": None}),
                  measures=pd.DataFrame({"name": [f"{prefix}.{m}" for m in measures], "kind": "human",
                                         "direction": "higher"}),
                  cells=cells)
    (report,) = wh.load(dataset, [batch], replace=replace, allow_new=allow_new, command=command)
    return report
