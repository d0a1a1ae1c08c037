"""What a run reads: its scope (dataset, human judgment, metrics, levels, coefficients) and
its data (every measure of the scope on one outer-aligned grid, oriented so that higher is
better), with the fingerprints that decide whether a stored result still holds.

- :func:`resolve_scope` checks names against the warehouse (metric globs, levels,
  coefficients with their tie thresholds written canonically);
- :func:`load_data` reads the matrices (and, for the analyses that resample annotators, every
  annotator's values);
- :meth:`Data.fingerprint` is the sha256 of the cells a task reads (labels, measure names,
  directions, values); :func:`data_fingerprint` the run's, over all its measures;
- :func:`without_sparse_metrics` leaves out the metrics that share too few cells with the human.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from metaeval.analyses.stats import validation, vocabulary
from metaeval.attributes import ALL_TYPES, LEFT_OUT_TYPES, SYSTEM_TYPE
from metaeval.core import Store
from metaeval.errors import Argument, Hint, Message, WarehouseError, ingest_hint, no_human_judgment
# re-exported: the callers of selection.parse_where, .Subset, .subset_label, ... (one definition, light)
from metaeval.runs.engine.subset import (EVERY_CELL, MACRO_VALUE, SUBSET_JOINER, Subset, parse_where,  # noqa: F401
                                  subset_label)


# --- subsets of cells (attributes, issue 26): Subset, parse_where, subset_label in runs/engine/subset.py --


def with_system_types(where: Iterable[str | tuple[str, str]] | Mapping[str, str] | str,
                      system_types: Iterable[str] = ()) -> Subset:
    """``where`` with the condition that only systems of ``system_types`` take part (the
    ``system.type`` condition of :mod:`metaeval.attributes`: the types sorted and joined by ``,``,
    or ``all``); no types: ``where`` as it is (every type but reference, oracle and human take
    part). So the choice is the rows' subset label: in their key, fingerprint and signature."""
    where = Subset(where)
    types = sorted({t.strip() for t in ([system_types] if isinstance(system_types, str) else system_types)})
    if not types:
        return where
    if any(not t or "," in t for t in types) or (ALL_TYPES in types and len(types) > 1):
        raise WarehouseError(Message(Argument("system_types", types), f" must be system types (no ','), or "
                                     f"{ALL_TYPES!r} alone"))
    if SYSTEM_TYPE in dict(where):
        raise WarehouseError(Message("give the system types once: ", Argument("system_types", types), " and ",
                                     Argument("where", [f"{SYSTEM_TYPE}={dict(where)[SYSTEM_TYPE]}"])))
    return Subset([*where, (SYSTEM_TYPE, ",".join(types))])


# --- scope ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Scope:
    """What a command analyses: the human judgment and the metrics of one dataset.

    ``human`` is None for human-free analyses (inter-metric agreement): their tables have no
    ``human`` column and their tasks read metrics only.
    """

    dataset: str
    human: str | None
    metrics: tuple[str, ...]
    levels: tuple[str, ...]
    coefficients: tuple[str, ...]
    #: the cells analysed: those whose attributes hold every (attribute, value) pair
    #: (:class:`Subset`, canonical); () = every cell
    where: Subset = Subset()

    @property
    def subset(self) -> str:
        """The ``subset`` column of the rows this scope writes (:func:`subset_label`)."""
        return subset_label(self.where)

    def with_metrics(self, metrics: Sequence[str]) -> Scope:
        """This scope with other metrics (same dataset, human, levels, coefficients and subset)."""
        return Scope(self.dataset, self.human, tuple(metrics), self.levels, self.coefficients, self.where)

    def restricted(self, where: Iterable[str | tuple[str, str]]) -> Scope:
        """This scope on the cells ``where`` selects (canonical)."""
        return Scope(self.dataset, self.human, self.metrics, self.levels, self.coefficients, parse_where(where))

    @property
    def measures(self) -> tuple[str, ...]:
        """The metrics, then the human judgment if any."""
        return (*self.metrics, self.human) if self.human is not None else self.metrics


def resolve_scope(wh: Store, dataset: str, human: str | None, metric_globs: Sequence[str] = (),
                  levels: Sequence[str] = (), coefficients: Sequence[str] = (),
                  valid_levels: Sequence[str] = vocabulary.LEVELS, measures: pd.DataFrame | None = None,
                  where: Iterable[str | tuple[str, str]] = (), partial: bool = False) -> Scope:
    """Check names against the warehouse; the default metrics are all automatic measures and
    the default levels all ``valid_levels`` (analyses with other levels than correlations').
    ``human`` None: a human-free scope (no judgment is checked or read). ``measures``: the
    dataset's measures (columns measure, kind) to check against instead of the stored ones
    (those it will have once files are ingested, say). ``where``: the subset of cells
    (:func:`parse_where`; each attribute and value checked against the stored attributes).
    ``partial``: the analyses accept partial coefficients (``NAME[control=GROUPS]``, global level
    only; correlate, ci and compare)."""
    where = parse_where(where)
    for attribute, value in where:
        if attribute == SYSTEM_TYPE:   # the chosen types checked against the stored ones
            wh.attribute_mask(dataset, [(attribute, value)], [], [])
            continue
        values = wh.attribute_values(dataset, attribute)
        if value not in values:
            raise WarehouseError(f"attribute {attribute!r} of dataset {dataset!r} never has the value {value!r}; "
                                 f"its values: {', '.join(values)}")
    measures = wh.measure_kinds(dataset) if measures is None else measures
    kinds = dict(zip(measures["measure"], measures["kind"]))
    humans = sorted(m for m, k in kinds.items() if k == "human")
    automatic = sorted(m for m, k in kinds.items() if k == "automatic")
    if human is not None and (human not in kinds or kinds[human] != "human"):
        raise no_human_judgment(dataset, human, humans, automatic)
    if metric_globs:
        metrics = []
        for g in metric_globs:
            hit = [m for m in automatic if fnmatch.fnmatchcase(m, g)]
            if not hit:
                judged = [m for m in humans if fnmatch.fnmatchcase(m, g)]
                raise WarehouseError(Message(Argument("metrics", [g]), f" matches no automatic measure of {dataset!r}"
                                             + (f" ({judged[0]!r} is a human judgment: two measures of any kind are "
                                                "correlated, with p, by `" if judged else ""),
                                             *((Hint("measure_correlation", (("dataset", dataset), ("measures",
                                                                                                   [judged[0], "OTHER"]))),
                                                "`)") if judged else ()),
                                             f"; it has: {', '.join(automatic)}"))
            metrics += [m for m in hit if m not in metrics]
    else:   # by default the measures with cells (a system-level one is analysed when named)
        from metaeval import housekeeping

        system_scored = set(housekeeping.system_level_measures(wh.con, dataset)) if automatic else set()
        metrics = [m for m in automatic if m not in system_scored]
    if not metrics:
        raise WarehouseError(Message(f"dataset {dataset!r} has no automatic measures to analyse"
                                     + (f" but system-level ones, analysed when named ({', '.join(automatic)})"
                                        if automatic else "") + "; ingest a metric's scores with `",
                                     ingest_hint("table", dataset), "`"))
    scope = Scope(dataset, human, tuple(metrics), choices(levels, valid_levels, "level"),
                  coefficient_choices(coefficients), where)
    check_controls(wh, scope, partial)
    for c in scope.coefficients:
        defined = vocabulary.COEFFICIENT_LEVELS.get(c.partition("[")[0])
        if defined is not None and (bad := [lv for lv in scope.levels if lv not in defined]):
            raise WarehouseError(f"the coefficient {c} is defined at the {' and '.join(defined)} levels, not at the "
                                 f"{' and '.join(bad)} level; choose the levels {', '.join(defined)}")
    return scope


def coefficient_choices(given: Sequence[str]) -> tuple[str, ...]:
    """The coefficients of a scope: :data:`vocabulary.COEFFICIENTS` by default; each of
    :data:`vocabulary.CORRELATION_COEFFICIENTS`, or one with a tie threshold (``acc-23[eps=0.01]``,
    ``kendall-23[tie-calibrated]``), with its threshold written canonically (``[eps=0.010]`` is
    ``[eps=0.01]``), so that one setting is one result key."""
    out = []
    for g in dict.fromkeys(given):
        if g in vocabulary.CORRELATION_COEFFICIENTS:
            out.append(g)
            continue
        base = g.partition("[")[0] if isinstance(g, str) else g
        if base not in vocabulary.CORRELATION_COEFFICIENTS:
            raise WarehouseError(f"unknown coefficient {g!r}; choose from {', '.join(vocabulary.CORRELATION_COEFFICIENTS)}")
        try:
            c = validation.coefficient_iv(g)
            out.append(base + c.label[len(c.base_label):])
        except ValueError as exc:
            raise WarehouseError(str(exc)) from None
    return tuple(dict.fromkeys(out)) or vocabulary.COEFFICIENTS


def control_of(coefficient: str) -> str | None:
    """What a coefficient label controls for (``"system"``, an attribute's name), None if it is
    not a partial coefficient."""
    return validation.coefficient_iv(coefficient).control if validation.CONTROL in coefficient else None


def attribute_control(coefficient: str) -> str | None:
    """The attribute whose per-cell labels a coefficient reads (its control, unless "system")."""
    control = control_of(coefficient)
    return None if control in (None, PARTIAL_SYSTEM) else control


#: The control of a partial coefficient that groups the cells by their system.
PARTIAL_SYSTEM = "system"


def check_controls(wh: Store, scope: Scope, partial: bool) -> None:
    """Partial coefficients only where ``partial`` (correlate, ci, compare), at the global level,
    and controlling for the system or an attribute of the dataset."""
    controlled = [c for c in scope.coefficients if control_of(c) is not None]
    if not controlled:
        return
    if not partial:
        raise WarehouseError(f"the partial coefficient {controlled[0]} is computed by correlate, ci and compare "
                             f"only")
    if bad := [lv for lv in scope.levels if lv != "global"]:
        raise WarehouseError(Message("a partial correlation (", Argument("control"), ") is defined at the global "
                                     f"level only, not at the {' and '.join(bad)} level; choose ",
                                     Argument("levels", ["global"])))
    for attribute in dict.fromkeys(attribute_control(c) for c in controlled):
        if attribute is not None:   # an unknown attribute: attribute_values' error names the known ones
            wh.attribute_values(scope.dataset, attribute)


def with_control(coefficients: Sequence[str], control: str | None) -> tuple[str, ...]:
    """``coefficients`` (default pearson, spearman, kendall) as partial coefficients controlling for
    ``control`` (``NAME[control=system]``); an error for one without a partial form."""
    if control is None:
        return tuple(coefficients)
    try:
        control = validation.control_iv(control)
    except ValueError as exc:
        raise WarehouseError(str(exc)) from None
    coefficients = tuple(coefficients) or vocabulary.COEFFICIENTS
    if bad := [c for c in coefficients if c not in validation.CONTROL_COEFFICIENTS]:
        raise WarehouseError(Message(Argument("control"), " applies to the coefficients "
                                     f"{', '.join(validation.CONTROL_COEFFICIENTS)} (without a tie threshold); "
                                     f"got {', '.join(bad)}"))
    return tuple(f"{c}[{validation.CONTROL}{control}]" for c in coefficients)


def with_tie_threshold(coefficients: Sequence[str], epsilon: float | None = None,
                       calibrate: bool = False) -> tuple[str, ...]:
    """``coefficients`` with the tie threshold ``epsilon`` (``NAME[eps=E]``) or tie calibration
    (``NAME[tie-calibrated]``) applied to those that take it (the others unchanged); with
    calibration and no coefficient, acc-23. An error if none takes it."""
    if epsilon is None and not calibrate:
        return tuple(coefficients)
    if epsilon is not None and calibrate:
        raise WarehouseError(Message("give a tie threshold (", Argument("epsilon"), ") or ", Argument("calibrate"),
                                     ", not both"))
    takes = validation.CALIBRATED_COEFFICIENTS if calibrate else validation.EPSILON_COEFFICIENTS
    coefficients = tuple(coefficients) or (("acc-23",) if calibrate else ())
    if not any(c in takes for c in coefficients):
        what = Argument("calibrate") if calibrate else Argument("epsilon")
        raise WarehouseError(Message(what, f" applies to the coefficients {', '.join(takes)}; "
                                     f"got {', '.join(coefficients) or 'the defaults (pearson, spearman, kendall)'}"))
    suffix = f"[{validation.TIE_CALIBRATED}]" if calibrate else f"[eps={validation.epsilon_iv(epsilon)!r}]"
    return tuple(f"{c}{suffix}" if c in takes else c for c in coefficients)


def choices(given: Sequence[str], valid: Sequence[str], what: str) -> tuple[str, ...]:
    given = tuple(dict.fromkeys(given)) or tuple(valid)
    bad = [g for g in given if g not in valid]
    if bad:
        raise WarehouseError(f"unknown {what} {bad[0]!r}; choose from {', '.join(valid)}")
    return given


# --- data ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Data:
    """Every measure of a scope on one outer-aligned grid, oriented so higher is better."""

    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    values: dict[str, np.ndarray]
    directions: dict[str, str]
    #: human measure -> every annotator's values, (N, M, K) on the same grid and orientation
    #: (loaded only for the analyses that resample annotators)
    annotations: dict[str, np.ndarray] = field(default_factory=dict)
    #: the subset of cells kept (:func:`subset_label`; the others are NaN); '' = every cell
    subset: str = EVERY_CELL
    #: attribute -> its value per cell, (N, M) object array on the same grid (None: no value), for
    #: the partial coefficients controlling for it
    controls: dict[str, np.ndarray] = field(default_factory=dict)
    #: ``--resample-clusters``: (attribute, each grid input's cluster label, (M,) object array);
    #: every task's arrays then end with its inputs' labels, and its fingerprint covers them
    clusters: tuple[str, np.ndarray] | None = None

    def restrict(self, measures: Sequence[str]) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
        """The arrays of ``measures`` on the systems and inputs where any of them has a value
        (what ``Store.matrix`` returns for just these measures), and those row/column masks.

        When they cover the whole grid (the common case), the arrays are read-only views of
        the data, not copies: a task of a 20 x 500 000 grid reads 80 MB per measure, once."""
        arrays = [self.values[m] for m in measures]
        rows, cols = np.zeros(len(self.systems), dtype=bool), np.zeros(len(self.inputs), dtype=bool)
        for a in arrays:
            present = ~np.isnan(a)
            rows |= present.any(axis=1)
            cols |= present.any(axis=0)
        if rows.all() and cols.all():
            return [_read_only(np.ascontiguousarray(a)) for a in arrays], rows, cols
        return [np.ascontiguousarray(a[np.ix_(rows, cols)]) for a in arrays], rows, cols

    def task_arrays(self, measures: Sequence[str], control: str | None = None) -> list[np.ndarray]:
        """What a task of ``measures`` computes on: their restricted matrices, then the annotator
        values of those that have them loaded, restricted alike; with ``control`` (an attribute),
        then its labels per cell, restricted alike."""
        arrays, rows, cols = self.restrict(measures)
        return [*arrays, *(np.ascontiguousarray(self.annotations[m][np.ix_(rows, cols)])
                           for m in measures if m in self.annotations),
                *([self.controls[control][np.ix_(rows, cols)]] if control is not None else []),
                *([self.clusters[1][cols]] if self.clusters is not None else [])]

    def fingerprint(self, measures: Sequence[str], control: str | None = None) -> tuple[str, int, int]:
        """sha256 of the restricted cells (labels, measure names, directions, values), and
        the numbers of systems and inputs they cover; with ``control`` (an attribute), of its
        per-cell labels too; resampling clusters, of the attribute and its inputs' labels."""
        if self.clusters is not None:
            digest, n, m = replace(self, clusters=None).fingerprint(measures, control)
            _, _, cols = self.restrict(measures)
            judged = cols & (~np.isnan(self.values[measures[-1]])).any(axis=0)   # a task's: the human's inputs
            if len(measures) > 1 and len(set(self.clusters[1][judged])) < 2:   # (when planning: before any write)
                raise WarehouseError(Message(Argument("resample_clusters", self.clusters[0]), f": the inputs "
                                             f"{measures[-1]} judged are in one cluster; resampling clusters needs "
                                             "two or more"))
            text = f"{digest}\x1eclusters\x1f{self.clusters[0]}\x1e" + "\x1f".join(map(str, self.clusters[1][cols]))
            return hashlib.sha256(text.encode()).hexdigest(), n, m
        if control is not None:
            digest, n, m = self.fingerprint(measures)
            _, rows, cols = self.restrict(measures)
            labels = self.controls[control][np.ix_(rows, cols)].ravel()
            text = f"{digest}\x1e{control}\x1e" + "\x1f".join("\x00" if v is None else str(v) for v in labels)
            return hashlib.sha256(text.encode()).hexdigest(), n, m
        arrays, rows, cols = self.restrict(measures)
        digest = hashlib.sha256()
        if self.subset:  # a subset of the same cells is another result (every cell: as before subsets)
            digest.update(f"subset\x1f{self.subset}\x1e".encode())
        labels = (*np.asarray(self.systems)[rows], "\x1e", *np.asarray(self.inputs)[cols], "\x1e")
        digest.update(b"".join(label.encode() + b"\x1f" for label in labels))  # = one update per label
        for m, a in zip(measures, arrays):
            digest.update(f"{m}\x1f{self.directions[m]}\x1f".encode())
            digest.update(np.ascontiguousarray(a, dtype="<f8").data)  # the bytes of astype("<f8"), uncopied
            if m in self.annotations:  # the results read every annotator's value, not only the means
                digest.update(np.ascontiguousarray(self.annotations[m][np.ix_(rows, cols)], dtype="<f8").tobytes())
        return digest.hexdigest(), int(rows.sum()), int(cols.sum())


def _read_only(a: np.ndarray) -> np.ndarray:
    """A view of ``a`` that cannot be written (tasks share the data's arrays, uncopied)."""
    view = a.view()
    view.flags.writeable = False
    return view


def load_data(wh: Store, scope: Scope, *, annotations: bool = False, clusters: str | None = None,
              runs: bool = False) -> Data:
    """The scope's matrices on one grid, oriented; with ``annotations``, also every annotator's
    values of the human judgment (for the analyses that resample annotators). A scope with a
    subset (``where``): the cells outside it are NaN (missing), so every statistic's conventions for
    missing cells apply (a system's score is its mean over the subset's inputs). The systems of a
    type that does not take part (the scope's ``system.type`` condition; by default reference,
    oracle and human systems) are NaN alike: where none is left out, the data are as before.
    ``clusters``: the input attribute whose clusters are resampled (:mod:`metaeval.runs.engine.clusters`),
    checked on the inputs with a value. ``runs``: also each metric's runs (``scores.replicate``), (N, M, K)
    in ``annotations`` on the same grid and orientation (``ci --replicates resample``)."""
    names = list(scope.measures)
    m = wh.matrix(scope.dataset, names)
    measures = wh.measure_kinds(scope.dataset)
    directions = dict(zip(measures["measure"], measures["direction"]))
    values = {n: (-m[n] if directions[n] == "lower" else m[n]) for n in names}
    tensors = {}
    if annotations:
        a = wh.annotations(scope.dataset, scope.human)
        grid = np.full((len(m.systems), len(m.inputs), len(a.annotators)), np.nan)
        rows = [m.systems.index(s) for s in a.systems]
        cols = [m.inputs.index(i) for i in a.inputs]
        grid[np.ix_(rows, cols)] = a.values
        tensors[scope.human] = -grid if directions[scope.human] == "lower" else grid
    if runs:
        tensors.update({metric: _runs(wh, scope.dataset, metric, m.systems, m.inputs, directions[metric])
                        for metric in scope.metrics})
    keep = wh.attribute_mask(scope.dataset, scope.where, m.systems, m.inputs)
    if not keep.all():
        if not keep.any() and not scope.where:
            raise WarehouseError(Message(f"no system of dataset {scope.dataset!r} takes part: all are of the types "
                                         f"{', '.join(LEFT_OUT_TYPES)}, left out unless chosen (",
                                         Argument("system_types", [ALL_TYPES]), ")"))
        if not keep.any():
            raise WarehouseError(Message(f"no cell of dataset {scope.dataset!r} is in the subset {scope.subset}; "
                                         "choose another ", Argument("where")))
        values = {n: np.where(keep, v, np.nan) for n, v in values.items()}
        tensors = {n: np.where(keep[:, :, None], t, np.nan) for n, t in tensors.items()}
    attributes = dict.fromkeys(attribute_control(c) for c in scope.coefficients)
    controls = {a: np.asarray(wh.attribute_labels(scope.dataset, a, list(m.systems), list(m.inputs)), dtype=object)
                for a in attributes if a is not None}
    grouped = None
    if clusters is not None:
        used = np.any([(~np.isnan(v)).any(axis=0) for v in values.values()], axis=0)
        grouped = (clusters, cluster_labels(wh, scope.dataset, clusters, m.systems, m.inputs, used))
    return Data(m.systems, m.inputs, values, {n: directions[n] for n in names}, tensors, scope.subset, controls,
                grouped)


def _runs(wh: Store, dataset: str, metric: str, systems, inputs, direction: str) -> np.ndarray:
    """(N, M, K) the runs of ``metric`` on the grid (NaN where a cell has fewer), oriented; K the
    most runs of a cell (the runs placed in replicate order)."""
    from metaeval import schema

    rows = wh.con.execute(schema.read("score_runs"), {"dataset": dataset, "measure": metric}).df()
    row = pd.Index(systems).get_indexer(rows["system"])
    col = pd.Index(inputs).get_indexer(rows["input"])
    rows = rows.assign(row=row, col=col).sort_values(["row", "col", "replicate"])
    slot = rows.groupby(["row", "col"]).cumcount().to_numpy()
    grid = np.full((len(systems), len(inputs), int(slot.max(initial=0)) + 1), np.nan)
    grid[rows["row"].to_numpy(), rows["col"].to_numpy(), slot] = rows["value"].to_numpy(dtype=float)
    return -grid if direction == "lower" else grid


def cluster_labels(wh, dataset: str, attribute: str, systems: Sequence[str], inputs: Sequence[str],
                 used: np.ndarray | None = None) -> np.ndarray:
    """(M,) object array: each input's value of ``attribute`` (its cluster), checked on the inputs
    ``used`` (a mask; default all): every one has a value, one value per input, two or more
    clusters -- else a WarehouseError in one line naming the option (``--resample-clusters``,
    :mod:`metaeval.runs.engine.clusters`)."""
    from metaeval import attributes

    option = Argument("resample_clusters", attribute)
    if attribute not in attributes.names(wh.con, dataset):
        have = attributes.names(wh.con, dataset)
        raise WarehouseError(Message(option, f": dataset {dataset!r} has no attribute {attribute!r}; its attributes: "
                                     f"{', '.join(have) or 'none (metaeval ingest attributes adds them)'}"))
    cells = wh.attribute_labels(dataset, attribute, list(systems), list(inputs))
    used = np.ones(len(inputs), dtype=bool) if used is None else np.asarray(used, dtype=bool)
    labels = np.full(len(inputs), None, dtype=object)
    missing, mixed = [], []
    for j in np.flatnonzero(used):
        values = {v for v in cells[:, j] if v is not None}
        if not values:
            missing.append(inputs[j])
        elif len(values) > 1:
            mixed.append((inputs[j], sorted(values)))
        else:
            labels[j] = values.pop()
    if missing:
        raise WarehouseError(Message(option, f": {len(missing)} of the {int(used.sum())} inputs have no value of "
                                     f"{attribute!r} (e.g. input {missing[0]!r}); give every input one with metaeval "
                                     "ingest attributes"))
    if mixed:
        name, values = mixed[0]
        raise WarehouseError(Message(option, f": input {name!r} has several values of {attribute!r} on its cells "
                                     f"({', '.join(map(repr, values[:3]))}); a cluster is a set of inputs: one value "
                                     "per input"))
    count = len(set(labels[used]))
    if count < 2:
        raise WarehouseError(Message(option, f": every input of dataset {dataset!r} is in one cluster "
                                     f"({attribute}={next(iter(set(labels[used])), None)!r}); resampling clusters "
                                     "needs two or more"))
    return labels


def data_fingerprint(data: Data, measures: Iterable[str]) -> str:
    digest = hashlib.sha256()
    for m in sorted(measures):
        digest.update(data.fingerprint([m])[0].encode())
    return digest.hexdigest()


def too_sparse(a: np.ndarray, human: np.ndarray, name: str, human_name: str) -> str | None:
    """Why metric ``a`` cannot be correlated with ``human`` (both on one grid); None if it can."""
    both = ~np.isnan(a) & ~np.isnan(human)
    if not both.any():
        return f"{name!r} and {human_name!r} have no cell (system, input) in common"
    if int(both.any(axis=1).sum()) < 3:
        return f"{name!r} and {human_name!r} share fewer than 3 systems: too few for a correlation between systems"
    return None


def without_sparse_metrics(data: Data, scope: Scope) -> tuple[Scope, dict[str, str]]:
    """The scope without the metrics that cannot be correlated with its human judgment, and
    why each was left out. All left out: a WarehouseError giving the reasons."""
    human = data.values[scope.human]
    reasons = {m: r for m in scope.metrics if (r := too_sparse(data.values[m], human, m, scope.human))}
    if len(reasons) == len(scope.metrics):
        raise WarehouseError("; ".join(reasons.values()))
    kept = tuple(m for m in scope.metrics if m not in reasons)
    return scope.with_metrics(kept), reasons
