"""Store.matrix, built from a numeric fetch (issue 15.2), equals a pivot of the `cells` view."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metaeval import Store
from metaeval.ingest import table


def _reference(wh: Store, dataset: str, names: list[str], join: str) -> tuple[list, list, np.ndarray]:
    """Systems, inputs and K x N x M values by pivoting the cells view with pandas."""
    cells = wh.sql("SELECT measure, system, input, value FROM cells WHERE dataset = ?", [dataset])
    cells = cells[cells["measure"].isin(names)]
    order_s = wh.sql("SELECT system, position FROM system_order WHERE dataset = ?", [dataset]).set_index("system")
    order_i = wh.sql("SELECT input, position FROM input_order WHERE dataset = ?", [dataset]).set_index("input")
    systems, inputs = set(cells["system"]), set(cells["input"])
    if join == "inner":
        for m in names:
            systems &= set(cells.loc[cells["measure"] == m, "system"])
            inputs &= set(cells.loc[cells["measure"] == m, "input"])
    systems = sorted(systems, key=lambda s: order_s.loc[s, "position"])
    inputs = sorted(inputs, key=lambda i: order_i.loc[i, "position"])
    values = np.full((len(names), len(systems), len(inputs)), np.nan)
    for r in cells.itertuples():
        if r.system in systems and r.input in inputs:
            values[names.index(r.measure), systems.index(r.system), inputs.index(r.input)] = r.value
    return systems, inputs, values


@pytest.mark.parametrize("chunk", [1, 40, 2_000_000])
@pytest.mark.parametrize("join", ["outer", "inner"])
def test_matrix_equals_a_pivot_of_the_cells(db, join, chunk, monkeypatch):
    """Whatever number of measures one query fetches (MATRIX_CHUNK_CELLS: one measure per query,
    two of these 4 x 12 grids, all)."""
    from metaeval import core

    monkeypatch.setattr(core, "MATRIX_CHUNK_CELLS", chunk)
    rng = np.random.default_rng(11)
    rows = [(str(s), f"{i}", m, None, float(rng.normal()))
            for s in (2, 10, 1, 30) for i in range(12) for m in ("a", "b", "c") if rng.random() < 0.7]
    rows += [(str(s), f"{i}", "h", ann, float(rng.integers(1, 6)))
             for s in (2, 10, 1) for i in range(0, 12, 2) for ann in ("x", "y")]
    frame = pd.DataFrame(rows, columns=["system", "input", "measure", "annotator", "value"])
    with Store(db) as wh:
        table.add_scores(wh, "d", frame)
        for names in (["a"], ["b", "a"], ["a", "b", "c", "h"], ["h", "c"]):
            m = wh.matrix("d", names if len(names) > 1 else names[0], join=join)
            systems, inputs, values = _reference(wh, "d", names, join)
            assert list(m.systems) == systems and list(m.inputs) == inputs
            np.testing.assert_array_equal(m.values if len(names) > 1 else m.values[None], values)
        assert wh.matrix("d", ["a", "h"]).systems[:3] == ("1", "2", "10")  # numeric ids in numeric order
