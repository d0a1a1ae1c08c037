"""The one way a family's rows are stored (issue 44 item 2): reuse, the table, the run, re-reading.

A family declares its tables (:attr:`~metaeval.runs.engine.families.Family.tables`; the schema
script creating each is found from the table: :func:`metaeval.schema.script_of`) and gives two
things, :meth:`~metaeval.runs.engine.families.Family.inputs` and
:meth:`~metaeval.runs.engine.families.Family.rows`; :func:`run` (what ``Family.run`` calls, through
the default ``compute``) does the rest, the same for every family::

    inputs = family.inputs(wh, **params)           # what the rows are of: dataset, fingerprint, keys
    stored = read(wh, family, inputs)              # this setting's latest rows, if still valid
    if force or stored is None or not family.enough(stored, inputs, **params):
        write(wh, family, inputs, family.rows(wh, inputs, **params))   # one run, every table
        stored = read(wh, family, inputs)
    return family.outcome(stored, inputs, **params)

:class:`Inputs` is what the rows are of, known before computing them (the data's fingerprint, the
key columns that select the setting's rows, the loaded data the computation reads); :class:`Rows`
what one run writes (a frame per table, the run's parameters and seed). Underneath, the
bookkeeping of every run (:mod:`metaeval.runs.engine.bookkeeping`: ``start_run``, ``finishing``,
``insert_rows``, ``finish_run``), which the engine's task-by-task writer
(:mod:`metaeval.runs.engine.runner`) uses too; the subset a run is of (``--where``/``--by`` of the
vote families) is :func:`metaeval.runs.engine.persist.of_subset`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from metaeval.runs.engine import persist

if TYPE_CHECKING:
    from metaeval.core import Store

#: (``family`` below: a :class:`metaeval.runs.engine.families.Family`, which calls this module: not imported here)
Family = Any


@dataclass(frozen=True)
class Inputs:
    """What a family's rows are of, known before they are computed: the ``dataset``, the
    ``fingerprint`` of the cells read (every row of the setting carries it), the ``keys`` (column
    values, None: NULL) that select the setting's rows of the family's first table (``more``: of
    its other tables, ``{table: keys}``; default the same), the ``subset`` they are looked for in
    (:func:`metaeval.runs.engine.persist.reusable`: the current one by default, None: any), and
    ``data``, what :meth:`~metaeval.runs.engine.families.Family.rows` reads (loaded once)."""

    dataset: str
    fingerprint: str
    keys: Mapping[str, Any] = field(default_factory=dict)
    subset: Any = persist.CURRENT
    data: Any = None
    more: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: rows of the first table read of several fingerprints, ``((fingerprint, keys), ...)``
    #: (one run writes the parts: measure-correlation's levels, each on its own cells, or
    #: judge-leaderboard's judges, only those without rows: :func:`missing`); the setting's rows
    #: are theirs, concatenated in order; ``fingerprint`` is then the run's
    parts: tuple = ()

    def keys_of(self, family: Family, table: str) -> Mapping[str, Any]:
        """The keys selecting this setting's rows of ``table``."""
        return self.keys if table == family.tables[0] else self.more.get(table, self.keys)


@dataclass(frozen=True)
class Rows:
    """What one run writes: ``frame``, the rows of the family's first table (a DataFrame or
    :func:`metaeval.runs.engine.persist.columns`; or ``{table: rows}`` for several tables), the
    run's ``parameters`` (recorded in ``analysis_runs``, with the executor) and ``seed``."""

    frame: Any
    parameters: Mapping[str, Any]
    seed: int | None = None
    #: the run's data fingerprint, when not the inputs' (the parts it computed: judge-leaderboard's judges)
    fingerprint: str | None = None


def run(family: Family, wh: Store, *, force: bool = False, progress=None, **params):
    """``family``'s outcome of ``params`` (see the module docstring): the stored rows when up to
    date, else one run computing and writing them, then read back. ``progress``: given to
    :meth:`~metaeval.runs.engine.families.Family.inputs` and ``rows`` of a family that
    ``shows_progress``."""
    shown = {"progress": progress} if family.shows_progress else {}   # (a family showing progress takes it)
    inputs = family.inputs(wh, **shown, **params)
    stored = None if force else read(wh, family, inputs)
    if stored is None or not family.enough(stored, inputs, **params):
        parts = {"missing": missing(wh, family, inputs, force)} if inputs.parts else {}
        computed = family.rows(wh, inputs, **shown, **parts, **params)
        write(wh, family, inputs, computed)
        stored = read(wh, family, inputs)
    return family.outcome(stored, inputs, **params)


def read(wh: Store, family: Family, inputs: Inputs):
    """The latest rows of the setting ``inputs`` selects, when every one was computed on its
    fingerprint by a version giving the same results: a DataFrame, None when there are none or
    not all up to date (compute them); several tables: ``{table: DataFrame or None}`` (a run may
    write no row to one: the family's ``enough`` says whether what is stored will do)."""
    if inputs.parts:
        import pandas as pd

        found = [persist.reusable(wh, family.tables[0], inputs.dataset, fingerprint, subset=inputs.subset, **keys)
                 for fingerprint, keys in inputs.parts]
        return None if any(rows is None for rows in found) else pd.concat(found, ignore_index=True)
    found = {}
    for table in family.tables:
        found[table] = persist.reusable(wh, table, inputs.dataset, inputs.fingerprint, subset=inputs.subset,
                                        **inputs.keys_of(family, table))
    return found[family.tables[0]] if len(found) == 1 else found


def missing(wh: Store, family: Family, inputs: Inputs, force: bool = False) -> tuple[int, ...]:
    """The indices of the :attr:`Inputs.parts` without up-to-date rows (every one with ``force``):
    given to the ``rows`` of a family whose inputs have parts (as ``missing``), which may compute
    only those."""
    if force:
        return tuple(range(len(inputs.parts)))
    return tuple(i for i, (fingerprint, keys) in enumerate(inputs.parts)
                 if persist.reusable(wh, family.tables[0], inputs.dataset, fingerprint, subset=inputs.subset,
                                     **keys) is None)


def write(wh: Store, family: Family, inputs: Inputs, rows: Rows) -> int:
    """One run of ``family`` writing ``rows`` (every table created first when the warehouse
    predates it; checked and computed before: this is the first write); its run id."""
    frames = dict(rows.frame) if isinstance(rows.frame, Mapping) and _by_table(family, rows.frame) \
        else {family.tables[0]: rows.frame}
    first, *others = family.tables
    fingerprint = inputs.fingerprint if rows.fingerprint is None else rows.fingerprint
    return persist.write(wh, family.name, first, frames.pop(first), dict(rows.parameters), fingerprint,
                         rows.seed, more={t: frames[t] for t in others if t in frames} or None)


def _by_table(family: Family, frame: Mapping) -> bool:
    """Whether ``frame`` is ``{table: rows}`` (its keys the family's tables), not a
    :func:`~metaeval.runs.engine.persist.columns` mapping of one table."""
    return bool(frame) and set(frame) <= set(family.tables)
