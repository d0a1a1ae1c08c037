"""``score --metric regression --human H``: Louis & Nenkova's (2013, §4.2.4) linear regression of
the model-free features predicting a human score, each cell scored leave-input-and-system-out
(:mod:`metaeval.analyses.text.regression`).

The features are the paper's ten, computed from the texts with the score's model-free setting
(stem, stop, topic cutoff): JS divergence to the input (unigrams, unsmoothed and smoothed), both
KL divergences, both cosines, both topic-word features, both log-probabilities. The human score of
a cell is its annotators' mean (as the ``cells`` view).

Where the coefficients live: in the score ingest's recorded options (``ingests.options``, key
``regression``), as ``derive`` records its formula -- the features in order, the human, the
protocol, the terms (intercept first) and the coefficients of the fit on every cell in their order
(the model the paper carried to another year), and per term the range [min, max] of the per-fold
coefficients. Each fold's own coefficients are a
deterministic function of the stored cells (:func:`metaeval.analyses.text.regression.leave_input_and_system_out`
recomputes them), so they are not stored row by row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metaeval.analyses import text
from metaeval.analyses.text import regression
from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError, ingest_hint


def features(corpus: text.TextCorpus, stem: bool, stop: bool, cutoff: float) -> tuple[list[str], np.ndarray]:
    """The ten features' names (as measures) and values, summaries x features, in
    :data:`~metaeval.analyses.text.regression.FEATURE_BASES` order."""
    values = text.model_free(corpus, tuple(text.MODEL_FREE_FEATURES), stem=stem, stop=stop, cutoff=cutoff)
    for smoothing in (False, True):
        values.update(text.js_divergence(corpus, n=1, target="document", stem=stem, stop=stop, smoothing=smoothing))
    names = []
    for base in regression.FEATURE_BASES:
        if base.startswith("js"):
            names.append(text.js_name(1, "document", stem, stop, smoothing=base == "js-smoothed"))
        else:
            [name] = [n for n in values if n.split("[")[0] == base]
            names.append(name)
    return names, np.column_stack([values[n] for n in names])


def human_cells(wh: Store, dataset: str, human: str | None, keys: pd.DataFrame) -> tuple[np.ndarray, str]:
    """The human score (annotators' mean) of each (system, input) of ``keys`` (NaN: none), and its
    direction; an error naming ``human`` unless it is a human measure of ``dataset``."""
    if not human:
        raise WarehouseError(Message("the regression predicts a human score: give ", Argument("human", placeholder="H")))
    kinds = wh.measure_kinds(dataset)
    row = kinds[kinds["measure"] == human]
    if row.empty or row["kind"].iloc[0] != "human":
        humans = sorted(kinds.loc[kinds["kind"] == "human", "measure"])
        raise WarehouseError(Message(Argument("human", human), f": not a human measure of {dataset!r}; it has: "
                                     f"{', '.join(humans) or 'none'}"))
    m = wh.matrix(dataset, human)
    grid = m[human]
    s_index, i_index = {s: k for k, s in enumerate(m.systems)}, {i: k for k, i in enumerate(m.inputs)}
    y = np.array([grid[s_index[s], i_index[i]] if s in s_index and i in i_index else np.nan
                  for s, i in zip(keys["system"], keys["input"])])
    return y, str(row["direction"].iloc[0])


def score(wh: Store, dataset: str, corpus: text.TextCorpus, keys: pd.DataFrame, human: str | None,
          stem: bool, stop: bool, cutoff: float) -> tuple[str, np.ndarray, str, dict]:
    """(measure name, prediction per summary, direction, the options recorded with it)."""
    y, direction = human_cells(wh, dataset, human, keys)
    if not corpus.has_documents:
        raise WarehouseError(Message("the regression's features compare a summary with its input: they need the "
                                     f"source documents, and {dataset!r} stores none; ingest them with `",
                                     ingest_hint("summaries", dataset), "` (its documents field)"))
    try:
        names, X = features(corpus, stem, stop, cutoff)
    except ValueError as exc:
        raise WarehouseError(str(exc)) from None
    scored = regression.leave_input_and_system_out(X, y, keys["system"].to_numpy(), keys["input"].to_numpy())
    whole = regression.fit(X, y)
    terms = [regression.INTERCEPT, *names]
    folds = np.isfinite(X).all(axis=1)
    defined = folds & np.isfinite(scored.predictions)
    ranges = [[float(np.min(scored.coefficients[defined, k])), float(np.max(scored.coefficients[defined, k]))]
              for k in range(len(terms))] if defined.any() else []
    options = {"human": human, "features": names, "protocol": "leave-input-and-system-out",
               "method": "ordinary least squares with an intercept, per fold (analyses/text/regression.py)",
               "terms": terms, "coefficients": [float(c) if np.isfinite(c) else None for c in whole.coefficients],
               "n_cells": whole.n, "folds": int(folds.sum()), "folds_undefined": int((folds & ~defined).sum()),
               "fold_coefficient_ranges": ranges}
    return regression.regression_name(human, stem, stop, cutoff), scored.predictions, direction, options
