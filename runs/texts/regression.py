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


def features(corpus: text.TextCorpus, stem: bool, stop: bool, cutoff: float,
             bases=regression.FEATURE_BASES) -> tuple[list[str], np.ndarray]:
    """The features' names (as measures) and values, summaries x features, in ``bases`` order
    (default the ten of :data:`~metaeval.analyses.text.regression.FEATURE_BASES`)."""
    values = text.model_free(corpus, tuple(text.MODEL_FREE_FEATURES), stem=stem, stop=stop, cutoff=cutoff)
    for smoothing in (False, True):
        values.update(text.js_divergence(corpus, n=1, target="document", stem=stem, stop=stop, smoothing=smoothing))
    names = []
    for base in bases:
        if base.startswith("js"):
            names.append(text.js_name(1, "document", stem, stop, smoothing=base == "js-smoothed"))
        else:
            [name] = [n for n in values if n.split("[")[0] == base]
            names.append(name)
    return names, np.column_stack([values[n] for n in names])


def predictors(wh: Store, dataset: str, corpus: text.TextCorpus, keys: pd.DataFrame, chosen, human: str | None,
               stem: bool, stop: bool, cutoff: float) -> tuple[list[str], np.ndarray]:
    """The regression's predictors' names and values (summaries x predictors), in the order
    ``chosen`` gives them: a model-free feature named by its base (``js``, ``kl.summary-input``,
    ...: computed from the texts), or a stored measure of ``dataset`` (its cells as stored, the
    annotators' mean for a human one; NaN where it has none). Default: the ten features."""
    chosen = tuple(dict.fromkeys(chosen or regression.FEATURE_BASES))
    bases = [c for c in chosen if c in regression.FEATURE_BASES]
    stored = [c for c in chosen if c not in regression.FEATURE_BASES]
    if human is not None and human in stored:
        raise WarehouseError(Message(Argument("predictors", human), " is the regression's target, not a predictor"))
    if stored:
        known = set(wh.measure_kinds(dataset)["measure"])
        if missing := [m for m in stored if m not in known]:
            raise WarehouseError(Message(Argument("predictors", missing[0]), f": neither a model-free feature "
                                         f"({', '.join(regression.FEATURE_BASES)}) nor a measure of {dataset!r}"))
    columns = {}
    if bases:
        if not corpus.has_documents:
            raise WarehouseError(Message("the regression's features compare a summary with its input: they need the "
                                         f"source documents, and {dataset!r} stores none; ingest them with `",
                                         ingest_hint("summaries", dataset), "` (its documents field)"))
        try:
            names, X = features(corpus, stem, stop, cutoff, bases)
        except ValueError as exc:
            raise WarehouseError(str(exc)) from None
        columns.update({b: (n, X[:, k]) for k, (b, n) in enumerate(zip(bases, names))})
    for m in stored:
        columns[m] = (m, _cells(wh, dataset, m, keys))
    return [columns[c][0] for c in chosen], np.column_stack([columns[c][1] for c in chosen])


def _cells(wh: Store, dataset: str, measure: str, keys: pd.DataFrame) -> np.ndarray:
    """The stored value of ``measure`` on each (system, input) of ``keys`` (NaN: none)."""
    m = wh.matrix(dataset, measure)
    grid = m[measure]
    s_index, i_index = {s: k for k, s in enumerate(m.systems)}, {i: k for k, i in enumerate(m.inputs)}
    return np.array([grid[s_index[s], i_index[i]] if s in s_index and i in i_index else np.nan
                     for s, i in zip(keys["system"], keys["input"])], dtype=float)


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
    return _cells(wh, dataset, human, keys), str(row["direction"].iloc[0])


def trained(wh: Store, dataset: str, human: str, names: list[str], stem: bool, stop: bool,
            cutoff: float) -> tuple[dict, int]:
    """The regression recorded by ``dataset``'s latest score ingest that fitted ``human`` on the
    predictors ``names`` with this model-free setting, and that ingest's id; an error naming
    ``trained_on`` when there is none, or when its fit on every cell is undetermined."""
    import json

    from metaeval import schema

    setting = {"stem": stem, "stop": stop, "cutoff": cutoff}
    for ingest_id, options in wh.con.execute(schema.statements("regression")["fits"], {"dataset": dataset}).fetchall():
        options = json.loads(options)
        fitted, model_free = options.get("regression") or {}, options.get("model_free") or {}
        if (fitted.get("human") == human and fitted.get("features") == names and "trained_on" not in fitted
                and {k: model_free.get(k) for k in setting} == setting):
            if any(c is None for c in fitted["coefficients"]):
                raise WarehouseError(Message(Argument("trained_on", dataset), f": its regression of {human} is "
                                             "undetermined (its cells do not determine the coefficients)"))
            return fitted, int(ingest_id)
    raise WarehouseError(Message(Argument("trained_on", dataset), f" has no regression of {human} on "
                                 f"{', '.join(names)} with this setting (stem {stem}, stop {stop}, cutoff {cutoff:g}): "
                                 "score it there first"))


def score(wh: Store, dataset: str, corpus: text.TextCorpus, keys: pd.DataFrame, human: str | None,
          stem: bool, stop: bool, cutoff: float, chosen=(), trained_on: str | None = None
          ) -> tuple[str, np.ndarray, str, dict]:
    """(measure name, prediction per summary, direction, the options recorded with it). With
    ``trained_on`` (another dataset), the coefficients its regression recorded (its fit on every
    cell) applied to this dataset's predictors, which need no human score here."""
    if trained_on is not None:
        if trained_on == dataset:
            raise WarehouseError(Message(Argument("trained_on", trained_on), " is the dataset scored: its "
                                         "regression is scored leave-input-and-system-out without it"))
        wh.require_dataset(trained_on)
        _, direction = human_cells(wh, trained_on, human, keys.iloc[:0])
        names, X = predictors(wh, dataset, corpus, keys, chosen, human, stem, stop, cutoff)
        fitted, ingest_id = trained(wh, trained_on, human, names, stem, stop, cutoff)
        options = {"human": human, "features": names, "trained_on": trained_on, "trained_ingest": ingest_id,
                   "protocol": f"the coefficients of the fit on every cell of {trained_on!r}, applied",
                   "terms": fitted["terms"], "coefficients": fitted["coefficients"], "n_cells": fitted.get("n_cells")}
        predicted = regression.apply(fitted["coefficients"], X)
        return (regression.regression_name(human, stem, stop, cutoff, tuple(dict.fromkeys(chosen)), trained_on),
                predicted, direction, options)
    y, direction = human_cells(wh, dataset, human, keys)
    names, X = predictors(wh, dataset, corpus, keys, chosen, human, stem, stop, cutoff)
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
    return (regression.regression_name(human, stem, stop, cutoff, tuple(dict.fromkeys(chosen))), scored.predictions,
            direction, options)
