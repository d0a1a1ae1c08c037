"""``metaeval annotators``: agreement between annotators and the human ceiling, persisted.

For each human measure: the annotators per cell, Krippendorff's alpha (interval and ordinal),
the mean pairwise correlation between annotators, and the human ceiling -- leave-one-annotator-
out with a Boot-Both interval, and the split-half estimate -- at each level and coefficient
(:mod:`metaeval.analyses.annotators`). Rows go to ``annotator_agreement`` and ``human_ceiling``
under one run per measure; a repeated command with the same judgments and parameters computes
nothing.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd

from metaeval import schema
from metaeval.analyses import annotators as an
from metaeval.core import Annotations, Store
from metaeval.errors import Argument, Message, WarehouseError, ingest_hint
from metaeval.analyses.stats import vocabulary
from metaeval.runs.engine import bookkeeping, parameters, selection
from metaeval.runs.engine.parameters import Params, setting

ESTIMATORS = ("leave-one-out", "split-half")
DEFAULT_SPLITS = 100
IDENTITY_NOTE = ("identity-free (use only the values within each cell): Krippendorff's alpha, split-half; "
                 "identity-based (assume an annotator id is the same person in every cell): pairwise "
                 "correlation, leave-one-out")


@dataclass(frozen=True)
class Summary:
    human: str
    run_id: int | None          # None: up to date, nothing computed
    rows: int


def fingerprint(a: Annotations, subset: str = "") -> str:
    """sha256 of every annotator's values on the grid, with the ids of systems, inputs, annotators
    (and the subset of cells, when not every cell)."""
    digest = hashlib.sha256()
    if subset:
        digest.update(f"subset\x1f{subset}\x1e".encode())
    for ids in (a.systems, a.inputs, a.annotators):
        digest.update(json.dumps(list(ids)).encode())
    digest.update(np.ascontiguousarray(a.values, dtype="<f8").tobytes())
    return digest.hexdigest()


def resolve_humans(wh: Store, dataset: str, globs: Sequence[str]) -> list[str]:
    humans = sorted(wh.measures(dataset, "human")["measure"])
    if not humans:
        raise WarehouseError(Message(f"dataset {dataset!r} has no human judgment; ingest one with `",
                                     ingest_hint("table", dataset, ("humans", ["GLOB"])), "`"))
    chosen: list[str] = []
    for g in globs or ("*",):
        hit = [h for h in humans if fnmatch.fnmatchcase(h, g)]
        if not hit:
            raise WarehouseError(Message(Argument("humans", [g]), f" matches no human judgment of {dataset!r}; "
                                         f"it has: {', '.join(humans)}"))
        chosen += [h for h in hit if h not in chosen]
    return chosen


@dataclass(frozen=True)
class AnnotatorsParams(Params):
    """The annotator statistics of a human measure (tables ``annotator_agreement`` and
    ``human_ceiling``, written by :func:`annotators`, not the run loop). Recorded with the run and
    matched when reusing it; not columns as such: a ``human_ceiling`` row holds ``alpha``, ``seed``
    and in ``k`` the resamples (leave-one-out) or the ``splits`` (split-half)."""

    table: ClassVar[str] = "human_ceiling"
    k: int = setting(column=False, argument=False)
    alpha: float = setting(column=False, argument=False)
    seed: int = setting(column=False, argument=False)
    splits: int = setting(column=False, argument=False)


def annotators(wh: Store, dataset: str, humans: Sequence[str] = (), levels: Sequence[str] = (),
               coefficients: Sequence[str] = (), *, k: int = parameters.DEFAULT_K, alpha: float = 0.05,
               seed: int = parameters.DEFAULT_SEED, splits: int = DEFAULT_SPLITS, force: bool = False,
               where: Sequence = ()) -> list[Summary]:
    """Compute and persist the annotator statistics of the human measures matching ``humans``
    (globs; default all) of ``dataset``; one :class:`Summary` per measure. ``where``: only the
    cells of that subset (the others missing; :func:`metaeval.runs.engine.selection.parse_where`)."""
    levels = selection.choices(levels, vocabulary.LEVELS, "level")
    coefficients = selection.choices(coefficients, vocabulary.COEFFICIENTS, "coefficient")
    where = selection.parse_where(where)
    subset = selection.subset_label(where)
    params = AnnotatorsParams(k, alpha, seed, splits)
    out = []
    for human in resolve_humans(wh, dataset, humans):
        a = wh.annotations(dataset, human)
        if where:
            keep = wh.attribute_mask(dataset, where, a.systems, a.inputs)
            if not (keep[:, :, None] & ~np.isnan(a.values)).any():
                raise WarehouseError(f"{human!r} has no judgment in the subset {subset}")
            a = Annotations(a.dataset, a.measure, a.systems, a.inputs, a.annotators,
                            np.where(keep[:, :, None], a.values, np.nan))
        fp = fingerprint(a, subset)
        parameters = {"dataset": dataset, "human": human, "levels": list(levels), "coefficients": list(coefficients),
                      **params.recorded()}
        if where:  # (not recorded for every cell: such runs' parameters are as before subsets)
            parameters.update(where=[f"{x}={v}" for x, v in where], subset=subset)
        done = wh.con.execute(schema.read("annotators_done"),
                              {"dataset": dataset, "human": human, **bookkeeping.version_parameter()}).fetchall()
        # (start_run adds what computed the tasks, `executor`, which does not change the results)
        if not force and any(f == fp and {k: v for k, v in json.loads(p).items() if k != "executor"} == parameters
                             for f, p in done):
            out.append(Summary(human, None, 0))
            continue
        agreement, ceiling = compute(a, levels, coefficients, k=params.k, alpha=params.alpha, seed=params.seed,
                                     splits=params.splits)
        run_id = bookkeeping.start_run(wh, "annotators", parameters, params.run_seed(), fp, len(agreement) + len(ceiling))
        with bookkeeping.finishing(wh, run_id):
            for table, rows in (("annotator_agreement", agreement), ("human_ceiling", ceiling)):
                frame = pd.DataFrame(rows).assign(run_id=run_id, fingerprint=fp)
                if subset:
                    frame = frame.assign(subset=subset, conventions=[
                        json.dumps({**json.loads(c), **bookkeeping.subset_conventions(subset)}, sort_keys=True)
                        for c in frame["conventions"]])
                bookkeeping.insert_rows(wh, table, frame)
            bookkeeping.finish_run(wh, run_id, "finished", len(agreement) + len(ceiling))
        out.append(Summary(human, run_id, len(agreement) + len(ceiling)))
    return out


def compute(a: Annotations, levels: Sequence[str], coefficients: Sequence[str], *, k: int, alpha: float,
            seed: int, splits: int) -> tuple[list[dict], list[dict]]:
    """The rows of ``annotator_agreement`` and ``human_ceiling`` for one measure (no run id)."""
    A = a.values
    counts = an.annotator_counts(A)
    common = {"dataset": a.dataset, "human": a.measure, "positional_ids": a.positional}
    panel = {"annotators": len(a.annotators), "min_per_cell": counts.minimum, "median_per_cell": counts.median,
             "max_per_cell": counts.maximum, "cells": counts.cells}
    agreement = []
    for variant in an.KRIPPENDORFF_LEVELS:
        agreement.append({**common, **panel, "statistic": "krippendorff-alpha", "variant": variant,
                          "value": _none_if_nan(an.krippendorff_alpha(A, variant)), "identity_free": True,
                          "conventions": json.dumps({"package": "krippendorff", "unit": "a (system, input) cell",
                                                     "level_of_measurement": variant}, sort_keys=True)})
    for level in levels:
        for coefficient in coefficients:
            agreement.append({**common, **panel, "statistic": "pairwise-correlation",
                              "variant": f"{level}/{coefficient}",
                              "value": _none_if_nan(an.pairwise_correlation(A, level, coefficient)),
                              "identity_free": False,
                              "conventions": json.dumps({"definition": "mean over annotator pairs (a, b) of "
                                                         "Corr(A_a, A_b); undefined pairs left out",
                                                         "level": level, "coefficient": coefficient}, sort_keys=True)})
    ceiling = []
    for level in levels:
        for coefficient in coefficients:
            if A.shape[2] < 2 or counts.maximum < 2:
                reason = "fewer than two annotators per cell: no ceiling can be estimated"
                for estimator in ESTIMATORS:
                    ceiling.append({**common, "level": level, "coefficient": coefficient, "estimator": estimator,
                                    "value": None, "lower": None, "upper": None, "alpha": alpha, "k": None,
                                    "seed": seed, "identity_free": estimator == "split-half",
                                    "conventions": json.dumps({"undefined": reason}, sort_keys=True)})
                continue
            loo = an.leave_one_out(A, level, coefficient, k=k, alpha=alpha, seed=seed)
            loo.conventions["per_annotator"] = [_none_if_nan(r) for r in loo.per_annotator]
            ceiling.append({**common, "level": level, "coefficient": coefficient, "estimator": "leave-one-out",
                            "value": _none_if_nan(loo.estimate), "lower": _none_if_nan(loo.lower),
                            "upper": _none_if_nan(loo.upper), "alpha": alpha, "k": k, "seed": seed,
                            "identity_free": False, "conventions": json.dumps(loo.conventions, sort_keys=True)})
            half = an.split_half(A, level, coefficient, splits=splits, seed=seed)
            ceiling.append({**common, "level": level, "coefficient": coefficient, "estimator": "split-half",
                            "value": _none_if_nan(half.estimate), "lower": None, "upper": None, "alpha": None,
                            "k": splits, "seed": seed, "identity_free": True,
                            "conventions": json.dumps(half.conventions, sort_keys=True)})
    return agreement, ceiling


def latest(wh: Store, dataset: str, humans: Sequence[str], subset: str = "") -> tuple[pd.DataFrame, pd.DataFrame]:
    """The latest ``annotator_agreement`` rows (by human, statistic, variant) and
    ``human_ceiling`` rows (by human, estimator, level, coefficient) of ``humans`` on the cells
    ``subset`` (default every cell)."""
    humans = list(humans)
    agreement = wh.sql("SELECT * FROM latest_annotator_agreement WHERE dataset = ? AND list_contains(?, human) "
                       "AND subset = ? ORDER BY human, statistic, variant", [dataset, humans, subset])
    ceiling = wh.sql("SELECT * FROM latest_human_ceiling WHERE dataset = ? AND list_contains(?, human) "
                     "AND subset = ? ORDER BY human, estimator, level, coefficient", [dataset, humans, subset])
    return agreement, ceiling


def ceilings(wh: Store, dataset: str, human: str, subset: str = "") -> pd.DataFrame:
    """The latest leave-one-annotator-out ceilings of ``human`` on the cells ``subset`` (default every
    cell) stored by ``metaeval annotators``: level, coefficient, human_ceiling, human_ceiling_lower,
    human_ceiling_upper (no rows when it has not run)."""
    return wh.sql("SELECT level, coefficient, value AS human_ceiling, lower AS human_ceiling_lower, "
                  "upper AS human_ceiling_upper FROM latest_human_ceiling WHERE dataset = ? AND human = ? "
                  "AND estimator = 'leave-one-out' AND subset = ? ORDER BY level, coefficient",
                  [dataset, human, subset])


def with_ceilings(frame: pd.DataFrame, ceiling: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (rows with level and coefficient) with the ceiling columns of its level and
    coefficient (NULL where none is stored)."""
    return frame.merge(ceiling, on=["level", "coefficient"], how="left")


def ceiling_text(ceiling: pd.DataFrame, levels=None, coefficients=None) -> str:
    """``system/kendall 0.769 [0.504, 0.901]; ...`` of the stored ceilings (of those levels and
    coefficients), or an empty string."""
    rows = ceiling
    if levels is not None:
        rows = rows[rows["level"].isin(list(levels)) & rows["coefficient"].isin(list(coefficients))]
    return "; ".join(f"{r.level}/{r.coefficient} {r.human_ceiling:.3f} [{r.human_ceiling_lower:.3f}, "
                     f"{r.human_ceiling_upper:.3f}]" for r in rows.itertuples() if pd.notna(r.human_ceiling))


def _none_if_nan(x: float) -> float | None:
    return None if x is None or np.isnan(x) else float(x)
