"""The figures of stored cells (``metaeval plot scatter`` / ``plot distribution``; Graham 2015,
Figs. 1-2): each measure's values as stored, per (system, input), for the pure figures of
:mod:`metaeval.present.figures` (:func:`~metaeval.present.figures.measure_scatter`,
:func:`~metaeval.present.figures.score_distributions`,
:func:`~metaeval.present.figures.system_distributions`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError


@dataclass(frozen=True)
class Cells:
    """Each measure's (systems x inputs) values as stored (NaN: no cell), on one grid, with its
    direction and declared scale (None: none declared)."""

    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    values: dict[str, np.ndarray]
    directions: dict[str, str]
    scales: dict[str, str | None]

    def label(self, measure: str) -> str:
        """The axis label: the name, and "(lower is better)" for a divergence."""
        return measure + (" (lower is better)" if self.directions[measure] == "lower" else "")


def cells(wh: Store, dataset: str, measures: Sequence[str]) -> Cells:
    """The stored cells of ``measures`` of ``dataset`` (a system-level measure, with no cell, is
    refused naming it)."""
    from metaeval.runs.engine import system_level

    measures = list(dict.fromkeys(measures))
    if not measures:
        raise WarehouseError(Message("give one or more ", Argument("measures", placeholder="MEASURE")))
    wh.require_dataset(dataset)
    wh.require_measures(dataset, measures)
    if found := [m for m in measures if m in set(system_level.measures(wh, dataset))]:
        raise WarehouseError(Message(f"{found[0]!r} is a system-level measure (a corpus BLEU): it has no cell to "
                                     "draw; choose another ", Argument("measures", found[0])))
    m = wh.matrix(dataset, measures)
    kinds = wh.measure_kinds(dataset).set_index("measure")
    scales = {name: (None if kinds.loc[name, "scale"] is None or kinds.loc[name, "scale"] != kinds.loc[name, "scale"]
                     else str(kinds.loc[name, "scale"])) for name in measures}
    return Cells(tuple(m.systems), tuple(m.inputs), {n: np.asarray(m[n], dtype=float) for n in measures},
                 {n: str(kinds.loc[n, "direction"]) for n in measures}, scales)
