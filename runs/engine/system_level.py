"""System-level measures: one number per system that is not a mean of its cells (corpus BLEU).

The warehouse's engines read an N systems x M inputs matrix per measure and reduce a metric to a
system score by its mean over the inputs. A corpus BLEU is a function of *summed* statistics
(sacrebleu's ``corpus_score``), so ``score --metric corpus-bleu`` stores each cell's sufficient
statistics (table ``bleu_statistics``: candidate and closest-reference lengths, clipped n-gram
matches and candidate n-grams, n = 1..4) and a ``measures`` row without cells; a measure with
statistics is a system-level measure.

An analysis whose scope names one (:func:`collapse`, called by :func:`metaeval.runs.engine.analyse`
and :func:`metaeval.runs.engine.persist.system_scores`) reads every measure of the scope as its system
scores: the system-level measure's corpus BLEU over the inputs the analysis uses (the subset
``where`` selects; the judged ones under ``system_inputs="judged"``), every other measure's mean
over the same inputs as usual; the engines then see an N x 1 grid, on which the system-level
correlation, Fisher's interval, Williams' test and the resampling of systems are the same
computations as on the cells. The bootstraps over inputs of ``ci`` and ``compare`` (boot-inputs,
boot-both; not sequential) read each
measure's per-cell statistics instead (:class:`SummedData`; :mod:`metaeval.analyses.stats.summed`):
a resample's corpus BLEU is the BLEU of the statistics summed over its drawn inputs, exactly what
rescoring the resampled corpus gives. What needs cells is refused in one line naming what works:
the summary and global levels, the permutation tests (they standardise each metric over its
cells), the families computed from cells (accuracy, ...), the
annotators' resampling and the median aggregation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine.selection import Data

if TYPE_CHECKING:
    from metaeval.core import Store
    from metaeval.runs.engine.selection import Scope

#: The metric of ``score`` that stores BLEU's statistics, and the measure it names.
CORPUS_BLEU = "corpus-bleu"
#: The methods that read a system-level measure: they need its system scores only.
WORKS = {"ci": ("fisher", "boot-systems", "boot-inputs", "boot-both"),
         "compare": ("williams", "boot-systems", "boot-inputs", "boot-both")}
#: The methods that resample inputs: each resample's system scores from its summed statistics.
RESAMPLE_INPUTS = ("boot-inputs", "boot-both")
#: The result tables whose analyses read system scores only at the system level (the others --
#: accuracy with its per-input significance, the agreement of significant pairs -- read cells).
READS_SYSTEM_SCORES = ("correlations", "confidence_intervals", "hypothesis_tests")
#: The input label of the collapsed grid (one column: the system scores).
SYSTEM_SCORES = "*"


def _statement(name: str) -> str:
    from metaeval import schema

    return schema.statements("bleu_statistics")[name]


def measures(wh: Store, dataset: str) -> list[str]:
    """The system-level measures of ``dataset``
    (:func:`metaeval.housekeeping.system_level_measures`)."""
    from metaeval import housekeeping

    return housekeeping.system_level_measures(wh.con, dataset)


def statistics(wh: Store, dataset: str, measure: str) -> pd.DataFrame:
    """The stored statistics of ``measure``: columns system, input and the ten statistics."""
    return wh.con.execute(_statement("cells"), {"dataset": dataset, "measure": measure}).df()


def systems(wh: Store, dataset: str, measure: str) -> tuple[str, ...]:
    """The systems with statistics of ``measure``, in the matrices' order."""
    return tuple(r[0] for r in wh.con.execute(_statement("systems"), {"dataset": dataset, "measure": measure}).fetchall())


def store(wh: Store, dataset: str, measure: str, keys: pd.DataFrame, S: np.ndarray, replace: bool) -> None:
    """Write ``measure``'s statistics ``S`` (one row per (system, input) of ``keys``), inside the
    score's transaction (its ``before_commit``: the measure, systems and inputs exist). Stored
    statistics that differ are a conflict unless ``replace``; the same ones change nothing."""
    from metaeval import schema
    from metaeval.analyses.text.mt import STATISTICS

    schema.ensure_table(wh.con, "bleu_statistics")
    frame = pd.DataFrame(np.asarray(S, dtype=np.int64), columns=list(STATISTICS))
    frame.insert(0, "input", keys["input"].astype(str).to_numpy())
    frame.insert(0, "system", keys["system"].astype(str).to_numpy())
    frame = frame.sort_values(["system", "input"]).reset_index(drop=True)
    stored = statistics(wh, dataset, measure)
    if not stored.empty:
        same = stored.shape == frame.shape and (stored.astype(str).to_numpy() == frame.astype(str).to_numpy()).all()
        if same:
            return
        if not replace:
            raise WarehouseError(Message(f"the stored BLEU statistics of {measure!r} in {dataset!r} differ from these; "
                                         "nothing was written (", Argument("replace", True), " overwrites them)"))
    params = {"dataset": dataset, "measure": measure}
    wh.con.execute(_statement("delete"), params)
    wh.con.register("staged_bleu_statistics", frame)
    try:
        wh.con.execute(schema.statements("bleu_statistics")["insert"], params)
    finally:
        wh.con.unregister("staged_bleu_statistics")


def _refuse_level(measure: str, levels: Sequence[str]) -> None:
    bad = [lv for lv in levels if lv != "system"]
    if bad:
        raise WarehouseError(Message(f"{measure!r} is a system-level measure (a corpus BLEU, not a mean of cells): it "
                                     f"has no {' or '.join(bad)}-level value; choose ", Argument("levels", ["system"])))


def check(measure: str, levels: Sequence[str], params: object | None = None, command: str | None = None) -> None:
    """Refuse, in one line naming what works, what a system-level ``measure`` cannot give."""
    _refuse_level(measure, levels)
    table = getattr(params, "table", None)
    if table is not None and table not in READS_SYSTEM_SCORES:
        raise WarehouseError(f"{measure!r} is a system-level measure (a corpus BLEU, no value per input): "
                             f"{command or table} is computed from cells; correlate, ci and compare at the system "
                             "level read its system scores")
    method = getattr(params, "method", None)
    works = WORKS.get(command or "", ())
    if method is not None and method not in works:
        raise WarehouseError(Message(f"{measure!r} is a system-level measure: {method} needs its cells (it "
                                     "permutes or resamples cells); choose ", *_alternatives(works)) if works else
                             Message(f"{measure!r} is a system-level measure: {method} needs its cells"))
    if method in RESAMPLE_INPUTS and getattr(params, "risk", None) is not None:
        raise WarehouseError(Message(f"{measure!r} is a system-level measure: ", Argument("sequential"),
                                     f" does not draw {method} from summed statistics; leave it out"))
    if getattr(params, "resample_annotators", None) is not None:
        raise WarehouseError(Message(f"{measure!r} is a system-level measure: ", Argument("resample_annotators"),
                                     " redraws cells; leave it out"))
    if getattr(params, "resample_clusters", None) is not None:
        raise WarehouseError(Message(f"{measure!r} is a system-level measure: ", Argument("resample_clusters"),
                                     " draws clusters of cells from its summed statistics' inputs, which it does "
                                     "not offer; leave it out"))


def _alternatives(works: Sequence[str]) -> list:
    parts: list = []
    for i, m in enumerate(works):
        parts += ([", " if i < len(works) - 1 else " or "] if i else []) + [Argument("method", m)]
    return parts


def stats_grid(wh: Store, scope: Scope, measure: str, systems: Sequence[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    """``measure``'s statistics on ``systems`` x its inputs, (N, M', 10) with NaN where missing or
    outside the scope's subset (``where``, the systems' types), and those inputs."""
    frame = statistics(wh, scope.dataset, measure)
    inputs = tuple(sorted(set(frame["input"])))
    S = np.full((len(systems), len(inputs), 10), np.nan)
    row = {s: i for i, s in enumerate(systems)}
    col = {s: j for j, s in enumerate(inputs)}
    known = frame["system"].isin(row)
    frame = frame[known]
    S[frame["system"].map(row).to_numpy(), frame["input"].map(col).to_numpy()] = frame.iloc[:, 2:].to_numpy(float)
    keep = wh.attribute_mask(scope.dataset, scope.where, list(systems), list(inputs))
    return np.where(keep[:, :, None], S, np.nan), inputs


def collapse(wh: Store, scope: Scope, data: Data, system_inputs: str = "all") -> Data:
    """``data`` as the system scores of each measure (an N x 1 grid; see the module docstring):
    the system-level measures' corpus BLEU of their summed statistics, the others' means, over the
    inputs of the scope's subset (only the judged ones when ``system_inputs`` is "judged"); the
    human's mean over its judged inputs."""
    from metaeval.analyses.stats import protocols, reductions
    from metaeval.analyses.text.mt import system_bleu

    system_level = set(measures(wh, scope.dataset))
    human = data.values[scope.human] if scope.human is not None else None
    judged = set() if human is None else {i for i, j in zip(data.inputs, protocols.judged_inputs(human)) if j}
    values = {}
    for m in scope.measures:
        if m in system_level:
            S, inputs = stats_grid(wh, scope, m, data.systems)
            if system_inputs == "judged" and human is not None:
                S = np.where(np.isin(np.asarray(inputs), list(judged))[None, :, None], S, np.nan)
            x = system_bleu(S)
        else:
            X = data.values[m]
            if system_inputs == "judged" and human is not None and m != scope.human:
                X = np.where(np.isin(np.asarray(data.inputs), list(judged))[None, :], X, np.nan)
            x = reductions.system_means(X)
        values[m] = np.ascontiguousarray(x[:, None])
    return Data(data.systems, (SYSTEM_SCORES,), values, dict(data.directions), {}, data.subset, {})


def prepare(wh: Store, scope: Scope, data: Data, build) -> Data:
    """``data`` itself when no measure of ``scope`` is system-level; else, every analysis of
    ``build(scope)`` checked (:func:`check`), the collapsed data (:func:`collapse`)."""
    system_scored = set(measures(wh, scope.dataset))
    found = [m for m in scope.metrics if m in system_scored]
    if not found:
        return data
    analyses = list(build(scope))
    for a in analyses:
        check(found[0], scope.levels, a.params, a.command)
    system_inputs = {getattr(a.params, "system_inputs", "all") for a in analyses}
    protocol = system_inputs.pop() if len(system_inputs) == 1 else "all"
    if any(getattr(a.params, "method", None) in RESAMPLE_INPUTS for a in analyses):
        return summed(wh, scope, data, protocol)
    return collapse(wh, scope, data, protocol)


@dataclass(frozen=True)
class SummedData(Data):
    """The collapsed data (``values``: system scores, N x 1, for the checks) whose tasks read each
    measure's per-cell statistics (:class:`metaeval.analyses.stats.summed.Summed`) on the grid
    ``grid_inputs``, for the bootstraps that resample inputs."""

    summed: dict = field(default_factory=dict)
    grid_inputs: tuple[str, ...] = ()

    def task_arrays(self, measures: Sequence[str], control: str | None = None) -> list:
        return [self.summed[m] for m in measures]

    def fingerprint(self, measures: Sequence[str], control: str | None = None) -> tuple[str, int, int]:
        digest = hashlib.sha256(f"summed\x1f{self.subset}\x1e".encode())
        digest.update("\x1f".join([*self.systems, "\x1e", *self.grid_inputs]).encode())
        for m in measures:
            digest.update(f"\x1e{m}\x1f{self.directions[m]}\x1f{self.summed[m].kind}\x1f".encode())
            digest.update(np.ascontiguousarray(self.summed[m].T, dtype="<f8").tobytes())
        return digest.hexdigest(), len(self.systems), len(self.grid_inputs)


def summed(wh: Store, scope: Scope, data: Data, system_inputs: str) -> SummedData:
    """``data`` as :class:`SummedData`: every measure's statistics on one grid of inputs (the
    data's and the system-level measures'), oriented, restricted to the scope's subset; under
    "judged", to the judged inputs. Inputs a metric scored and the human did not judge are
    refused under "all" (each side would be resampled over its own inputs, nlpstats'
    paired_inputs=False, which the summed statistics do not implement)."""
    from metaeval.analyses.stats.summed import Summed

    system_level = set(measures(wh, scope.dataset))
    grids = {m: stats_grid(wh, scope, m, data.systems) for m in scope.measures if m in system_level}
    inputs = tuple(dict.fromkeys([*data.inputs, *(i for _, ins in grids.values() for i in ins)]))
    col = {i: j for j, i in enumerate(inputs)}
    tensors = {}
    for m in scope.measures:
        if m in grids:
            S, ins = grids[m]
            T = np.full((len(data.systems), len(inputs), S.shape[-1]), np.nan)
            T[:, [col[i] for i in ins]] = S
            tensors[m] = (T, "bleu")
        else:
            X = np.full((len(data.systems), len(inputs)), np.nan)
            X[:, :len(data.inputs)] = data.values[m]
            tensors[m] = (X, "mean")
    judged = ~np.isnan(tensors[scope.human][0]).all(axis=0)
    scored = np.zeros(len(inputs), dtype=bool)
    for m in scope.metrics:
        T = tensors[m][0]
        scored |= ~np.isnan(T if T.ndim == 2 else T[..., 0]).all(axis=0)
    if system_inputs != "judged" and (scored & ~judged).any():
        raise WarehouseError(Message(f"{int((scored & ~judged).sum())} inputs scored by the metrics are not judged: "
                                     "resampling the inputs of a system-level measure pairs them; choose ",
                                     Argument("system_inputs", "judged")))
    out = {}
    for m, (T, kind) in tensors.items():
        T = T[:, judged]
        if kind == "bleu":
            present = ~np.isnan(T).any(axis=-1)
            out[m] = Summed(np.where(present[..., None], T, 0.0), "bleu")
        else:
            out[m] = Summed.of_cells(T)
    values = {m: np.ascontiguousarray(s.scores()[:, None]) for m, s in out.items()}
    return SummedData(data.systems, (SYSTEM_SCORES,), values, dict(data.directions), {}, data.subset, {},
                      summed=out, grid_inputs=tuple(i for i, j in zip(inputs, judged) if j))


def for_stored_tests(wh: Store, scope: Scope, data: Data, method: str) -> Data:
    """``data`` as :func:`prepare` has it for ``compare`` tests of ``method`` (what ``winners``
    checks its stored tests against: the same fingerprints)."""
    from types import SimpleNamespace

    return prepare(wh, scope, data, lambda _: [SimpleNamespace(params=SimpleNamespace(method=method),
                                                               command="compare")])
