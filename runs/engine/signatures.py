"""Signatures of persisted results (:mod:`metaeval.analyses.signature`): the version and the
command come from each row's run (``analysis_runs``), the settings and the data fingerprint from
the row itself."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from metaeval import schema
from metaeval.analyses import signature as sig

if TYPE_CHECKING:
    import pandas as pd

    from metaeval.core import Store


def _runs(wh: Store, frame: pd.DataFrame) -> dict[int, tuple[str, str]]:
    ids = sorted({int(r) for r in frame["run_id"].dropna()}) if "run_id" in frame.columns else []
    rows = wh.con.execute(schema.read("run_versions"), {"runs": ids}).fetchall() if ids else []
    return {int(run_id): (command, version) for run_id, command, version, _ in rows}


def _settings(row: dict) -> dict:
    """A row with the settings its conventions record and it has no column for (``aggregate``:
    a system's median over its inputs; absent for the mean)."""
    if "aggregate" in row or not isinstance(row.get("conventions"), str) or '"aggregate"' not in row["conventions"]:
        return row
    conventions = json.loads(row["conventions"])
    metric, human = conventions.get("aggregate"), conventions.get("human_aggregate")
    return {**row, "aggregate": metric if human in (None, "mean") else f"{metric}/{human}"}


def with_signatures(wh: Store, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (rows of a results table, with ``run_id``) with a ``signature`` column."""
    runs = _runs(wh, frame)
    out = frame.copy()
    out["signature"] = [sig.signature(runs[int(r["run_id"])][1], runs[int(r["run_id"])][0], _settings(r))
                        if int(r["run_id"]) in runs else None for r in frame.to_dict("records")]
    return out


def table_signature(wh: Store, frame: pd.DataFrame) -> str | None:
    """The signature every row of ``frame`` shares (a caption's), or None without rows."""
    if frame.empty or "run_id" not in frame.columns:
        return None
    runs = _runs(wh, frame)
    commands = sorted({c for c, _ in runs.values()})
    return sig.common([v for _, v in runs.values()], "+".join(commands), [_settings(r) for r in frame.to_dict("records")])
