"""``score --metric sentinel-cand|sentinel-src|sentinel-ref --human H``: one-sided baselines that
check the meta-evaluation itself (Perrella et al. 2024; lightweight stand-ins for the paper's
XLM-R sentinels: :mod:`metaeval.analyses.text.sentinel`).

Each cell is scored by a linear model of the surface features of one text -- the candidate (the
stored summary), the source (the input's documents, joined) or the first reference -- trained on
the human score ``H`` (its annotators' mean, as the ``cells`` view) of the cells of the other
inputs only (leave-input-out, cross-fitted: :func:`metaeval.analyses.text.sentinel.leave_input_out`).
All systems of an input share its fold, so the source and reference sentinels give
them one score, a function of that text alone (leaving the system out too would make the score
depend on the system through its fold).
The features constant over the rated cells are left out (recorded). A cell whose side is
missing, or whose fold does not determine the model (fewer training cells, or for the source and
reference sentinels fewer distinct other inputs, than features + 1), is left out (missing).
The fit on every cell (the model's coefficients, for reading) is recorded in the ingest's options,
key ``sentinels``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError, ingest_hint

SENTINELS = ("sentinel-cand", "sentinel-src", "sentinel-ref")


def side_texts(rows: Sequence[tuple], sentinel: str) -> list[str | None]:
    """The text each sentinel sees per summary row (system, input, summary, references, documents)."""
    if sentinel == "sentinel-cand":
        return [summary for _, _, summary, _, _ in rows]
    if sentinel == "sentinel-src":
        return [None if not docs else "\n".join(docs) for _, _, _, _, docs in rows]
    return [refs[0] if refs else None for _, _, _, refs, _ in rows]


def score(wh: Store, dataset: str, rows: Sequence[tuple], keys: pd.DataFrame, sentinels: Sequence[str],
          human: str | None) -> tuple[dict[str, np.ndarray], dict[str, str], dict]:
    """({measure name: prediction per row}, {name: direction}, the options recorded)."""
    from metaeval.analyses.text import regression, sentinel
    from metaeval.runs.texts import regression as regression_runs

    if not human:
        raise WarehouseError(Message("a sentinel predicts a human score: give ", Argument("human", placeholder="H")))
    y, direction = regression_runs.human_cells(wh, dataset, human, keys)
    scores, directions, options = {}, {}, {}
    for name in dict.fromkeys(sentinels):
        texts = side_texts(rows, name)
        if all(t is None for t in texts):
            side = sentinel.SIDES[name]
            raise WarehouseError(Message(f"{name} reads the {side} of each translation, and {dataset!r} stores none; "
                                         "ingest them with `", ingest_hint("summaries", dataset), "` (its "
                                         + ("documents" if name == "sentinel-src" else "references")
                                         + " field) or `metaeval ingest mtme`"))
        X = sentinel.feature_matrix(texts)
        rated = np.isfinite(y) & np.isfinite(X).all(axis=1)
        keep = [k for k in range(X.shape[1]) if np.unique(X[rated, k]).size > 1]   # a constant is no feature
        if not keep:
            raise WarehouseError(f"{name}: no feature of the {sentinel.SIDES[name]} varies over the rated cells of "
                                 f"{dataset!r}")
        features = [sentinel.FEATURES[k] for k in keep]
        X = X[:, keep]
        predictions = sentinel.leave_input_out(X, y, keys["input"].to_numpy())
        whole = regression.fit(X, y)
        measure = sentinel.sentinel_name(name, human)
        scores[measure], directions[measure] = predictions, direction
        options[measure] = {
            "side": sentinel.SIDES[name], "features": features, "human": human,
            "protocol": "leave-input-out (cross-fitted: no cell of the scored input trains its model)",
            "model": "ordinary least squares with an intercept; a lightweight stand-in for Perrella et al.'s XLM-R "
                     "sentinels (analyses/text/sentinel.py)",
            "terms": [regression.INTERCEPT, *features],
            "coefficients": [float(c) if np.isfinite(c) else None for c in whole.coefficients],
            "n_cells": whole.n, "scored": int(np.isfinite(predictions).sum())}
    return scores, directions, options
