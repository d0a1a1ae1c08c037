"""SERA's correlation with a human score against its rank cut-off n (Cohan & Goharian 2016,
Fig. 1: "as the search cut-off point increases, the correlation with pyramid scores decreases").

:func:`sweep_frame` reads the cut-off and the variant (SERA or SERA-DIS, with its query and
retrieval flags) out of each SERA measure name of the correlation rows;
:func:`metaeval.present.study_figures.cutoff_figure` draws one line per variant and coefficient: the correlation (y) against the cut-off (x). Pure:
the rows are the stored correlations, nothing is recomputed. An undefined correlation (NULL) is a
gap in its line, never a point.
"""

from __future__ import annotations

import re

import pandas as pd

_NAME = re.compile(r"(?P<kind>sera(?:-dis)?)-(?P<cutoff>[1-9][0-9]*)(?P<flags>\[[^]]*\])?")


def parse(name: str) -> tuple[str, int]:
    """(variant, cut-off) of a SERA measure name: ``sera-dis-10[kw]`` -> (``sera-dis[kw]``, 10);
    a ValueError for another name."""
    match = _NAME.fullmatch(name)
    if not match:
        raise ValueError(f"not a SERA measure name: {name!r}")
    return match["kind"] + (match["flags"] or ""), int(match["cutoff"])


def sweep_frame(rows: pd.DataFrame, prefix: str = "") -> pd.DataFrame:
    """The correlation rows (columns ``metric``, ``coefficient``, ``value``, ...) of SERA
    measures (named ``prefix`` + a SERA name) with their ``variant`` and ``cutoff``, sorted."""
    if rows.empty:
        return rows.assign(variant=[], cutoff=[])
    parsed = [parse(m.removeprefix(prefix)) for m in rows["metric"]]
    out = rows.assign(variant=[v for v, _ in parsed], cutoff=[n for _, n in parsed])
    return out.sort_values(["variant", "coefficient", "cutoff"]).reset_index(drop=True)
