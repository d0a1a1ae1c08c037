"""``metaeval derive``: a new human measure computed from stored ones, by a recorded formula.

The arithmetic is :mod:`metaeval.analyses.derived` (grade, mean, geometric, harmonic, coverage);
this module reads the sources' judgments, combines them and loads the result as one ingest of
format ``derive`` (its ``options`` hold the formula, its expression, the sources and how
annotators were combined), so the new measure is stored, fingerprinted and dropped like any
judgment -- one transaction; every check (sources are human measures of the dataset, the new
name is free, the values lie in the formula's domain) before the first write.

Two ways to combine annotators (``per``):

- ``"annotator"`` (default): the formula per annotator, on the cells where that annotator (the
  same id) judged every source -- the mean linguistic quality over criteria of one assessor, as
  DUC's MLQ. The new measure keeps the annotators.
- ``"cell"``: each source first averaged over its annotators on the cell, then combined -- for
  sources judged by different people (Graham's coverage and linguistic quality). The new
  measure has one value per cell, under the annotator ``"mean"``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import numpy as np
import pandas as pd

from metaeval.analyses import derived
from metaeval.core import Store
from metaeval.errors import Argument, Hint, Message, WarehouseError, measures_hint, no_human_judgment
from metaeval.batch import CELL_COLUMNS, Batch, LoadReport

PER = ("annotator", "cell")
CELL_ANNOTATOR = "mean"


def _sources(wh: Store, dataset: str, new: str, sources: Sequence[str], formula: str, per: str):
    from metaeval.names import check_new

    check_new(new)   # the one rule for a name (as rename: no control character, ...)
    wh.require_dataset(dataset)
    if per not in PER:
        raise WarehouseError(Message("unknown ", Argument("per", per), f"; choose from {', '.join(PER)}"))
    try:
        derived.check_sources(formula, len(sources))
    except ValueError as exc:
        raise WarehouseError(Message(Argument("formula", formula), f": {exc}")) from None
    if len(set(sources)) != len(sources):
        raise WarehouseError(Message(Argument("sources", list(sources)), " names a measure twice"))
    catalog = wh.sql("SELECT measure, kind, direction FROM measure_summary WHERE dataset = ?", [dataset])
    kinds = dict(zip(catalog["measure"], catalog["kind"]))
    directions = dict(zip(catalog["measure"], catalog["direction"]))
    if new in kinds:
        raise WarehouseError(Message(f"{dataset} already has a measure {new!r}: choose another name (or drop it "
                                     "first: `", Hint("drop_measure", positional=(dataset, new)), "`)"))
    for m in sources:
        if m not in kinds:
            raise WarehouseError(Message(Argument("sources", m), f": no measure {m!r} in {dataset} (`",
                                         measures_hint(dataset), "` lists them)"))
        if kinds[m] != "human":
            raise WarehouseError(Message(Argument("sources", m), ": ", no_human_judgment(
                dataset, m, [h for h, k in kinds.items() if k == "human"], [a for a, k in kinds.items() if k != "human"]
            ).args[0], "; derive combines human judgments"))
        if directions[m] != "higher":
            raise WarehouseError(Message(Argument("sources", m), f": {m!r} is lower-is-better; the formulas "
                                         "combine higher-is-better judgments"))
    return [wh.annotations(dataset, m) for m in sources]


def _aligned(notes, per: str):
    """The sources on one grid: (systems, inputs, annotators, stack S x N x M x K)."""
    systems = sorted(set.intersection(*(set(a.systems) for a in notes)))
    inputs = sorted(set.intersection(*(set(a.inputs) for a in notes)))
    if per == "annotator":
        annotators = sorted(set.intersection(*(set(a.annotators) for a in notes)))
    else:
        annotators = [CELL_ANNOTATOR]
    stack = np.full((len(notes), len(systems), len(inputs), len(annotators)), np.nan)
    for s, a in enumerate(notes):
        si = [a.systems.index(x) for x in systems]
        ii = [a.inputs.index(x) for x in inputs]
        values = a.values[np.ix_(si, ii)]
        if per == "annotator":
            stack[s] = values[:, :, [a.annotators.index(x) for x in annotators]]
        else:
            with np.errstate(invalid="ignore"):
                count = (~np.isnan(values)).sum(axis=2)
                stack[s, :, :, 0] = np.where(count > 0, np.nansum(values, axis=2) / np.maximum(count, 1), np.nan)
    return systems, inputs, annotators, stack


def derive(wh: Store, dataset: str, new: str, sources: Sequence[str], formula: str, *, per: str = "annotator",
           command: str | None = None) -> tuple[LoadReport, int]:
    """Store ``formula`` of the human measures ``sources`` as the human measure ``new`` of
    ``dataset`` (higher is better); returns the load report and the number of values derived."""
    notes = _sources(wh, dataset, new, sources, formula, per)
    systems, inputs, annotators, stack = _aligned(notes, per)
    try:
        out = derived.derive(formula, stack)
    except derived.DomainError as exc:
        s, i, k = exc.index
        raise WarehouseError(Message(f"{sources[exc.source]} (system {systems[s]!r}, input {inputs[i]!r}"
                                     + (f", annotator {annotators[k]!r}" if per == "annotator" else "")
                                     + f"): {exc}")) from None
    ok = ~np.isnan(out.values)
    if not ok.any():
        raise WarehouseError(Message(f"no cell of {dataset} has every source ({', '.join(sources)})"
                                     + (" judged by the same annotator: try " if per == "annotator" else ""),
                                     *( [Argument("per", "cell")] if per == "annotator" else [])))
    s, i, k = np.nonzero(ok)
    cells = pd.DataFrame({"system": np.asarray(systems, dtype=object)[s], "input": np.asarray(inputs, dtype=object)[i],
                          "measure": new, "annotator": np.asarray(annotators, dtype=object)[k],
                          "value": out.values[ok], "line": 0})[CELL_COLUMNS]
    options = {"formula": formula, "expression": out.expression, "sources": list(sources), "per": per}
    digest = hashlib.sha256(json.dumps({"dataset": dataset, "measure": new, **options}, sort_keys=True).encode())
    digest.update(out.values.astype("<f8").tobytes())
    batch = Batch(file=f"<derive {new}>", format="derive", sha256=digest.hexdigest(), options=options,
                  measures=pd.DataFrame({"name": [new], "kind": ["human"], "direction": ["higher"]}), cells=cells)
    (report,) = wh.load(dataset, [batch], command=command)
    return report, int(ok.sum())
