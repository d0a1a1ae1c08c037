"""What the one way to store (:mod:`metaeval.runs.engine.store`) is built on: a table in a
warehouse made before it, the stored rows that may be reused, and the one run that writes new ones
(every table of it, the bookkeeping underneath). The families giving their inputs and rows
(``error-overlap``, ``rank-change``, ...) reach these through :func:`metaeval.runs.engine.store.run`;
those still calling them directly: ``optimal-set``, ``system-tests`` (its write), ``leaderboard``
and the agreement family's curves.

Without pandas (a command that must start at once: ``leaderboard``): the rows to write as
:func:`columns` (numpy arrays, which DuckDB reads as it reads a DataFrame's), the stored ones as
:class:`~metaeval.rows.Rows` (:func:`reusable_rows`, :func:`sorted_rows`).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine import parameters

if TYPE_CHECKING:
    import pandas as pd

    from metaeval.core import Store
    from metaeval.rows import Rows


#: The subset of what the family reads that the rows written and reused now are of (its label, ''
#: for every row, and what its rows' conventions say of it), set by :func:`of_subset`.
_SUBSET: ContextVar[tuple[str, dict]] = ContextVar("subset", default=("", {}))
#: :func:`reusable`'s ``subset`` when not given: the current one
CURRENT = object()


@contextmanager
def of_subset(label: str, conventions: dict | None = None):
    """Within: the rows :func:`write` stores are of the subset ``label`` (its ``subset`` column;
    the label folded into their fingerprints (:func:`subset_fingerprint`) and recorded in the run's
    parameters; ``conventions`` added to theirs), and :func:`reusable` and :func:`reusable_rows`
    look for that subset's rows (:func:`metaeval.runs.engine.subset_runs.run` sets it)."""
    token = _SUBSET.set((label, dict(conventions or {})))
    try:
        yield
    finally:
        _SUBSET.reset(token)


def subset_fingerprint(fingerprint: str, label: str | None = None) -> str:
    """``fingerprint`` of data read in the subset ``label`` (default the current one): the same for
    every row (''), else the sha256 of it and the label (a subset of the same data is another
    result, as :meth:`metaeval.runs.engine.selection.Data.fingerprint` says)."""
    import hashlib

    label = _SUBSET.get()[0] if label is None else label
    if not label:
        return fingerprint
    return hashlib.sha256(f"{fingerprint}\x1esubset\x1f{label}\x1e".encode()).hexdigest()


def _in_subset(wh: Store, table: str, rows):
    """``rows`` (a DataFrame or :func:`columns`) of the current subset: its label in the ``subset``
    column, folded into the fingerprints, its conventions added (every row: as they are)."""
    import json

    label, said = _SUBSET.get()
    if not label:
        return rows
    if not _has_subset(wh, table):
        raise WarehouseError(f"{table} has no subset column: run `metaeval init` to upgrade the warehouse")
    n = len(next(iter(rows.values()))) if isinstance(rows, dict) else len(rows)

    def conventions(c):
        c = json.loads(c) if isinstance(c, str) else dict(c)
        return json.dumps({**c, **said}, sort_keys=True)

    changed = {"subset": [label] * n, "fingerprint": [subset_fingerprint(f, label) for f in rows["fingerprint"]]}
    if "conventions" in rows and said:
        changed["conventions"] = [conventions(c) for c in rows["conventions"]]
    if isinstance(rows, dict):               # text as objects (a numpy str array is stored as a JSON string)
        import numpy as np

        return {**rows, **{c: np.array(v, dtype=object) for c, v in changed.items()}}
    return rows.assign(**changed)


def _has_subset(wh: Store, table: str) -> bool:
    """Whether ``table`` has the ``subset`` column (:func:`metaeval.runs.engine.runner.has_subset`, which
    this module does not import: it loads pandas, which the leaderboard's ``plain`` start does not)."""
    return bool(wh.con.execute("SELECT count(*) FROM information_schema.columns WHERE table_name = ? "
                               "AND column_name = 'subset'", [table]).fetchall()[0][0])


def ensure_table(wh: Store, table: str, script: str | None = None) -> None:
    """Apply the schema script creating ``table`` (:func:`metaeval.schema.script_of`; idempotent)
    when ``table`` is missing: a warehouse created before the family gets its table at its first
    write (:func:`write` does it; or from ``metaeval init``). ``script``: an older spelling, the
    same script."""
    from metaeval import schema

    schema.ensure_table(wh.con, table, script)


def reusable(wh: Store, table: str, dataset: str, fingerprint: str, *, subset: Any = CURRENT,
             **filters: Any) -> pd.DataFrame | None:
    """The latest rows of ``table`` for this setting (``filters``: column values; ``subset``: of
    that subset, None: of any, default the current one (:func:`of_subset`; every row: '')) when every one of them
    was computed on cells of ``fingerprint`` (in that subset: :func:`subset_fingerprint`) by a
    version giving the same results (:data:`metaeval.runs.engine.bookkeeping.SAME_RESULTS_AS`); None:
    compute them."""
    from metaeval import schema
    from metaeval.runs.engine import bookkeeping, analyse as engine

    view = schema.latest_view(table)
    if not wh.con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [view]).fetchall()[0][0]:
        return None
    if subset is CURRENT:
        subset = _SUBSET.get()[0]
        fingerprint = subset_fingerprint(fingerprint, subset)
    rows = engine.latest_rows(wh, table, dataset, subset=subset, **filters)
    if rows.empty or set(rows["fingerprint"]) != {fingerprint}:
        return None
    runs = wh.con.execute(schema.read("run_versions"), {"runs": sorted(int(r) for r in set(rows["run_id"]))}).df()
    return rows if set(runs["version"]) <= set(bookkeeping.SAME_RESULTS_AS) else None


def write(wh: Store, command: str, table: str, frame: pd.DataFrame | dict, parameters: dict, fingerprint: str,
          seed: int | None = None, more: dict[str, pd.DataFrame | dict] | None = None) -> int:
    """One run of ``command`` writing ``frame`` to ``table`` (and each frame of ``more`` to its
    table, created first when the warehouse predates it; checked and computed before: this is
    the first write); its run id. A frame is a DataFrame or :func:`columns`: the one way a
    family's rows are stored (the engine's :mod:`~metaeval.runs.engine.bookkeeping` writer underneath)."""
    from metaeval.runs.engine import bookkeeping

    frames = {table: frame, **(more or {})}
    for name in frames:                  # a warehouse made before the family: its tables at the first write
        ensure_table(wh, name)
    if label := _SUBSET.get()[0]:        # the rows of a subset (of_subset): its label, fingerprints, conventions
        frames = {name: _in_subset(wh, name, rows) for name, rows in frames.items()}
        parameters, fingerprint = {**parameters, "subset": label}, subset_fingerprint(fingerprint, label)
    lengths = {name: len(next(iter(f.values()))) if isinstance(f, dict) else len(f) for name, f in frames.items()}
    n_rows = sum(lengths.values())
    run_id = bookkeeping.start_run(wh, command, parameters, seed, fingerprint, n_rows)
    with bookkeeping.finishing(wh, run_id):
        for name, rows in frames.items():
            if lengths[name]:            # (no rows: nothing to insert, e.g. the tests of one judge)
                bookkeeping.insert_rows(wh, name, {**rows, **columns(lengths[name], run_id=run_id)}
                                        if isinstance(rows, dict) else rows.assign(run_id=run_id))
        bookkeeping.finish_run(wh, run_id, "finished", n_rows)
    return run_id


def nan_as_null(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its float columns as objects, NaN as None (stored NULL whatever the
    column's type in the table)."""
    from metaeval.runs.engine import bookkeeping

    for column in frame.columns:
        if frame[column].dtype == float:
            frame[column] = frame[column].astype(object).map(bookkeeping.none_if_nan)
    return frame


def columns(n: int, **values: Any) -> dict:
    """Rows to write without pandas: {column: a numpy array of ``n`` values}; an array as it is, a
    list as objects (ints with None: DuckDB's integers with NULL, as a DataFrame's), one value
    repeated (text or None as objects). DuckDB reads a float's NaN as NULL, as in a DataFrame."""
    import numpy as np

    out = {}
    for name, v in values.items():
        if isinstance(v, np.ndarray):
            out[name] = v
        elif isinstance(v, (list, tuple)):
            out[name] = np.array(v, dtype=object) if any(x is None for x in v) or not v else np.array(v)
        else:
            out[name] = np.array([v] * n, dtype=object) if v is None or isinstance(v, str) else np.full(n, v)
        if len(out[name]) != n:
            raise ValueError(f"column {name!r} has {len(out[name])} values, not {n}")
    return out


def reusable_rows(wh: Store, table: str, dataset: str, fingerprint: str, **filters: Any) -> Rows | None:
    """:func:`reusable` as :class:`~metaeval.rows.Rows` (by result id; no pandas): the latest rows
    of this setting (``filters``: column values, None: NULL; of the current subset in a table with
    subsets) when every one was computed on cells of ``fingerprint`` by a version giving the same
    results."""
    from metaeval import schema
    from metaeval.runs.engine import bookkeeping

    view = schema.latest_view(table)
    if not wh.con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [view]).fetchall()[0][0]:
        return None
    if "subset" not in filters and _has_subset(wh, table):
        filters = {**filters, "subset": _SUBSET.get()[0]}
        fingerprint = subset_fingerprint(fingerprint)
    where = ["dataset = ?", *(f'"{c}" IS NULL' if v is None else f'"{c}" = ?' for c, v in filters.items())]
    rows = wh.rows(f"SELECT * FROM {view} WHERE {' AND '.join(where)} ORDER BY result_id",
                   [dataset, *(v for v in filters.values() if v is not None)])
    if not len(rows) or not rows.plain or set(rows.column("fingerprint")) != {fingerprint}:
        return None
    runs = sorted({int(r) for r in rows.column("run_id")})
    versions = {version for _, _, version, _ in wh.con.execute(schema.read("run_versions"), {"runs": runs}).fetchall()}
    return rows if versions <= set(bookkeeping.SAME_RESULTS_AS) else None


def sorted_rows(rows: Rows, column: str, *, ascending: bool = True) -> Rows:
    """``rows`` ordered by ``column`` (no NULL) as pandas' ``sort_values(column)`` orders the
    DataFrame of the same rows (its quicksort, equal values included: ``nargsort``)."""
    import dataclasses

    import numpy as np

    values, index = np.asarray(rows.column(column)), np.arange(len(rows))
    if not ascending:
        values, index = values[::-1], index[::-1]
    order = index[values.argsort(kind="quicksort")]
    order = order if ascending else order[::-1]
    return dataclasses.replace(rows, data=tuple(rows.data[i] for i in order))


def system_scores(wh: Store, dataset: str, measures, human: str | None = None, *, system_inputs: str = "all",
                  where=(), aggregate: str = "mean") -> tuple[tuple[str, ...], dict, str, dict]:
    """Each system's score under each of ``measures`` (and ``human``, last), oriented so that
    higher is better, on the systems that have all of them: (systems, {measure: scores}, the
    fingerprint of the cells read, conventions). With ``human``, a metric's system score averages
    the inputs ``system_inputs`` says (:mod:`metaeval.analyses.stats.protocols`); without, each
    measure's own cells. ``where``: only the cells of that subset (and of the systems' types:
    :func:`metaeval.runs.engine.selection.load_data`). ``aggregate``: the system score is the ``mean`` or
    the ``median`` over its inputs of each cell's value (a human cell: the annotators' mean; Graham
    2015's median variants); a median is recorded in the fingerprint and the conventions (the mean:
    as before)."""
    import numpy as np

    from metaeval.analyses.stats import protocols, reductions
    from metaeval.runs.engine import selection, system_level

    names = tuple(dict.fromkeys([*measures, *([human] if human else [])]))
    wh.require_dataset(dataset)
    wh.require_measures(dataset, list(names))
    scope = selection.Scope(dataset, human, tuple(m for m in names if m != human), ("system",), (),
                            selection.parse_where(where))
    data = selection.load_data(wh, scope)
    system_scored = set(system_level.measures(wh, dataset))
    if found := [m for m in names if m in system_scored]:   # corpus BLEU: system scores
        if aggregate != parameters.DEFAULT_AGGREGATE:
            raise WarehouseError(Message(f"{found[0]!r} is a system-level measure: its score is not an aggregate of "
                                         "cells; choose ", Argument("aggregate", parameters.DEFAULT_AGGREGATE)))
        data = system_level.collapse(wh, scope, data, system_inputs)
    arrays, rows, _ = data.restrict(list(names))
    conventions = {"orientation": "lower-is-better measures negated: higher is better"}
    if human:
        arrays, _, extra, _ = protocols.apply(arrays, "system", system_inputs)
        conventions.update(extra)
    if aggregate not in parameters.AGGREGATE_VALUES:
        raise WarehouseError(Message("unknown ", Argument("aggregate", aggregate),
                                     f"; choose from {', '.join(parameters.AGGREGATES)}"))
    sides = reductions.aggregate_sides(aggregate)   # the metrics' aggregate, the human's
    if not human and sides[1] != parameters.DEFAULT_AGGREGATE:
        raise WarehouseError(Message(Argument("human_aggregate", sides[1]), " is the human judgment's system score: "
                                     "these system scores have no human; leave it out"))
    scores = np.array([reductions.system_scores(a, sides[1] if human and n == human else sides[0])
                       for n, a in zip(names, arrays)])
    keep = ~np.isnan(scores).any(axis=0)
    systems = tuple(str(s) for s, r in zip(np.asarray(data.systems)[rows], keep) if r)
    conventions["systems_left_out"] = int((~keep).sum())
    if scope.subset:
        conventions["subset"] = scope.subset
    fingerprint = data.fingerprint(list(names))[0]
    conventions.update(parameters.aggregate_conventions(aggregate))
    fingerprint = parameters.aggregate_fingerprint(fingerprint, aggregate)
    return systems, {n: scores[i][keep] for i, n in enumerate(names)}, fingerprint, conventions


def system_medians(A):
    """Each row's median over its non-NaN cells (NaN for a row without any): a system's median
    score over its inputs (:func:`metaeval.analyses.stats.reductions.system_medians`)."""
    from metaeval.analyses.stats import reductions

    return reductions.system_medians(A)
