"""The bookkeeping of a run: its row of ``analysis_runs`` (started, finished, or marked failed or
interrupted), the versions whose rows it may reuse, and the writer of its result rows.

- :func:`start_run` records the run: command, parameters (with the executor), seed, data
  fingerprint, version, the command line it was given (None from Python) and its owner process;
- :func:`finishing` marks a run that raises 'failed' or 'interrupted' (Ctrl-C, SIGTERM);
- :class:`Task` is one result row to be (its key, the measures it reads, its fingerprint);
- :class:`Writer` buffers rows and inserts them in small transactions (every
  :data:`FLUSH_SECONDS` at most), so an interrupted run keeps what it finished;
- :data:`THIS_VERSION` / :func:`version_parameter`: a result is reused only if written by a
  version of :data:`SAME_RESULTS_AS`.
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from metaeval import owners
from metaeval.core import Store
from metaeval.errors import WarehouseError, one_line
from metaeval.runs.engine import executors
from metaeval.signals import interruption

if TYPE_CHECKING:
    import pandas as pd

    from metaeval.runs.engine.parameters import Params
    from metaeval.runs.engine.selection import Scope

# --- the rows a run writes ------------------------------------------------------------------
@dataclass(frozen=True)
class Task:
    """One result row to be: its key columns and the measures whose cells it reads (and the
    attribute whose per-cell labels it reads too: ``control``, a partial coefficient's)."""

    key: dict[str, Any]
    measures: tuple[str, ...]
    fingerprint: str = ""
    n_systems: int = 0
    n_inputs: int = 0
    control: str | None = None


FLUSH_SECONDS = 2.0
ORIENTATION = "measures whose direction is 'lower' (lower is better) are negated before analysis"
#: The metaeval versions whose results this one reproduces exactly (same computations and
#: conventions). A release that changes how any result is computed starts a new list; one that
#: does not (docs, speed, CLI) adds itself, so its users keep their results. A test checks that
#: the package version is listed, so every release decides.
#: 0.5.0: a test family that cannot resolve is never significant, clusters follow mt-metrics-eval's rule
#: (winners, rank-tasks), undefined metrics are not ranked: results of 0.4.0 are recomputed
#: 0.6.0: new analyses (subsets, partial correlations, detection, error categories, judges) and
#: schema 5 (a `subset` key column, '' for every cell); the results of 0.5.0 are unchanged
#: (bench/engine_identity.py: identical rows, fingerprints and conventions)
#: 0.7.0: every verdict is drawn by one layer (analyses/conclusions.py), which changes what 0.6.0 stored
#: in rare corners: a judges family that cannot resolve (or a judge pair whose test cannot reach
#: significance on its items) has no clusters or winner (0.6.0 stored cluster 1 for every judge); a judge's
#: Kendall tau from systems it never compared is NULL; a paired bootstrap test whose p counts fewer valid
#: resamples than k must reach the corrected threshold on 1/n_valid (compare's stored `significant`,
#: winners' and evaluate's clusters); the line of a family that cannot resolve says "cannot resolve" (winners'
#: conventions). compare alone would be safe (its raw p-values are unchanged and its corrected values are
#: recomputed and rewritten on every run when they differ), but judges and winners reuse whole stored rows
#: by fingerprint, which would serve 0.6.0's verdicts: results of 0.6.0 may differ, so they are recomputed,
#: not reused. Everywhere else the rows are bit-identical (bench/engine_identity.py --with-examples).
#: 0.8.0: results of 0.7.0 may differ in rare corners, so they are recomputed, not reused: a two-sided
#: permutation count takes a resample within ROUNDING of as extreme as the observed delta (the full swap
#: gives -delta + 2e-16; 0.7.0 missed it, a p a count too small; found against nlpstats; frequent for a
#: discrete statistic: system-level Kendall's p moved, e.g. 0.602 -> 0.667 on SummEval; simulate power and
#: rank-tasks count the same way); rank-tasks draws
#: no clusters from tests that cannot reach alpha at their k; a system never compared has no Bradley-Terry
#: strength or rank (preference_rankings NULL, schema 6); input_significance's conventions add the counts
#: by sign. Elsewhere the rows are bit-identical (bench/engine_identity.py --with-examples; the all-pairs
#: batching of evaluate reproduces the per-pair numbers exactly).
#: 0.9.0: new families and options (schema 8: aggregate on pairwise accuracy), and three changes to what
#: 0.8.0 stored, so its results are recomputed, not reused: the leaderboard's bootstrap rounds start at
#: the observed fit (lower/upper move by at most 9.1e-13 Elo); raters' span agreement leaves out source
#: characters where no rater marks the source (ESA); the "cannot resolve" line of a count p-value says
#: its smallest attainable value is 1 / k (0.8.0 wrote "0 / k = 0.01" in stored conventions); the
#: summary-level bootstrap sums by einsum (the BLAS product's last bit depended on the thread count).
#: 0.10.0: new families (ppi, plan, measure-correlation; push / pull), schema 9 (continuous preferences,
#: AlpacaEval's GLMs in lc_winrates), and changes to what 0.9.0 stored, so its results are recomputed,
#: not reused: --aggregate median is Graham's median (the metric's median against the human's mean;
#: 0.9.0 took the human's median too: every stored row with aggregate 'median'); lc_winrates is
#: AlpacaEval's L1 fit (length_controlled_v1 / _noreg / _minimal), not the unpenalised one;
#: input_significance's min/max_significant keep the sign that counts; the leaderboard's first_share
#: splits exact ties at a round's top, a disconnected comparison graph is rated group by group, and its
#: small solves run on one BLAS thread (last bits, <= 2.3e-13 Elo at 150 systems).
#: 0.11.0: schema 12 (span_tests' resolution as typed columns; the vote families' subset column;
#: preferences' replicate in the key, judge_statistics' repetition stability), and changes to what
#: 0.10.0 stored, so its results are recomputed once, not reused: ppi's Bradley-Terry fit is no fit
#: (NaN) where a coefficient's variance is not finite and positive (0.10.0 stored Newton's last
#: iterate, e.g. -33.7 log-odds, with a NaN interval); stored tests are read by the conclusion layer
#: (verdicts, "cannot resolve" notes). Rows and fingerprints of one run per cell and of every vote
#: ('' subset) are those 0.10.0 computes: a warehouse upgraded by `metaeval init` at 0.11.0 reuses
#: what 0.11.0 stored in it.
#: 0.12.0: schema 13 (scores' replicate in the key, view score_means), the house rearranged (present/,
#: runs/ sub-packages) and faster paths (all pairs, ingest table, arena votes) that store the same rows
#: (bench/engine_identity.py --registry: every stored table identical to 0.11.0's): what 0.11.0 stored is
#: reused; with one run per cell, rows and fingerprints are unchanged.
#: 0.13.0: schema 14 (preferences' key kept by the ingest, not declared: migrate_13 rebuilds the table
#: keeping every row), every small family storing through runs/engine/store.py, faster leaderboard fits
#: and all pairs, --replicates resample on more families (only when asked): every stored table identical
#: to 0.12.0's (engine_identity --registry), so what 0.11.0 and 0.12.0 stored is reused.
SAME_RESULTS_AS = ("0.11.0", "0.12.0", "0.13.0")
#: SQL condition on a results table: the row was written by one of those versions. Results are
#: reused only under it, so an upgrade that changes a computation never serves old numbers.
THIS_VERSION = "run_id IN (SELECT run_id FROM analysis_runs WHERE list_contains($versions, version))"


def version_parameter() -> dict[str, list[str]]:
    """The $versions binding of :data:`THIS_VERSION`."""
    return {"versions": list(SAME_RESULTS_AS)}


def start_run(wh: Store, command: str, parameters: dict, seed: int | None, fingerprint: str,
              n_tasks: int, jobs: int = 1, command_line: str | None = None) -> int:
    """Insert a row of ``analysis_runs`` (status running, owned by this process); its run_id. The
    parameters record what computes the tasks (``executor``: the warehouse's
    :class:`~metaeval.runs.engine.executors.Executor`, local with ``jobs`` or a Dask scheduler, which
    must answer first: :func:`executors.check_scheduler`). ``command_line``: what
    the user typed, as the command line passes it down (None: a Python call); with None, the
    warehouse's own :attr:`~metaeval.core.Store.command_line` if it has one."""
    from metaeval import __version__

    executor = executors.of(wh)
    executor.check()  # a scheduler that does not answer fails here, before the run is recorded
    parameters = {**parameters, "executor": executor.describe(jobs)}
    try:
        return wh.con.execute(
            """INSERT INTO analysis_runs (command, parameters, seed, version, data_fingerprint, tasks, command_line,
                                          owner_pid, owner_host, owner_start)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING run_id""",
            [command, json.dumps(parameters, sort_keys=True), seed, __version__, fingerprint, n_tasks,
             command_line if command_line is not None else wh.command_line, *owners.current_owner()]).fetchall()[0][0]
    except WRITE_ERRORS as exc:
        raise WarehouseError(f"cannot write to the warehouse ({one_line(exc)}); nothing was written") from None


#: What DuckDB raises when a write cannot reach the file (a full disk): the write's IOException,
#: its autocommit's failed commit (TransactionException), or, once DuckDB has invalidated the
#: database after such an error, any statement (FatalException). A run says it in one line
#: (:func:`finishing`), as an ingest does (:func:`metaeval.load.load`).
WRITE_ERRORS = (duckdb.IOException, duckdb.TransactionException, duckdb.FatalException)


@contextmanager
def finishing(wh: Store, run_id: int):
    """Around the work of a run: if it raises, a run still 'running' becomes 'interrupted'
    (Ctrl-C, or SIGTERM in the CLI, which raises a KeyboardInterrupt) or 'failed' (any other
    exception), so no run is left looking alive. Work that records its own partial count
    (:func:`_compute`) has set the status already. A process killed outright marks nothing: the
    next process opening the warehouse for writing does (:mod:`warehouse.owners`). A write that
    cannot reach the file (:data:`WRITE_ERRORS`: a full disk) is a one-line WarehouseError
    saying what was kept."""
    try:
        yield
    except BaseException as exc:
        stop = interruption(exc)
        marked = False
        try:
            wh.con.execute("UPDATE analysis_runs SET status = ? WHERE run_id = ? AND status = 'running'",
                           ["failed" if stop is None else "interrupted", run_id]).fetchall()
            marked = True
        except Exception:  # noqa: BLE001 - never hide the original error behind this one
            pass
        if stop is None and isinstance(exc, WRITE_ERRORS):
            state = ("is marked failed" if marked else
                     "is marked interrupted when the warehouse is next opened for writing")
            raise WarehouseError(f"cannot write to the warehouse ({one_line(exc)}); run {run_id} {state}, "
                                 "the rows it wrote before are kept: run the same command again, once the "
                                 "warehouse can be written, to compute the rest") from None
        reraise(exc, stop)


def reraise(exc: BaseException, stop: KeyboardInterrupt | None):
    """Raise ``exc`` again, or the KeyboardInterrupt it stands for (a query cut short by Ctrl-C
    or SIGTERM raises DuckDB's error), so that callers see an interruption as one."""
    if stop is None or stop is exc:
        raise exc
    raise stop from None


def finish_run(wh: Store, run_id: int, status: str, computed: int) -> None:
    wh.con.execute("""UPDATE analysis_runs SET status = ?, computed = ?,
                      finished_at = CASE WHEN ? = 'finished' THEN current_timestamp END
                      WHERE run_id = ?""", [status, computed, status, run_id]).fetchall()


class Writer:
    """Buffers result rows and inserts them in small transactions (at most every few seconds)."""

    def __init__(self, wh: Store, table: str, run_id: int, scope: Scope, subset: str | None = None):
        """``subset``: the rows' subset when it is not the scope's (a ``--by`` macro average)."""
        self.wh, self.table, self.run_id, self.scope = wh, table, run_id, scope
        self.subset = scope.subset if subset is None else subset
        self.rows: list[dict] = []
        self.written = 0
        self.has_sizes = "n_systems" in _columns(wh, table)
        self.last = time.monotonic()

    def add(self, task: Task, values: dict, params: Params) -> None:
        """The row of ``task``: its scope and key, the parameter columns of ``params``
        (:meth:`Params.columns`), the computed ``values``, fingerprint and sizes."""
        row = {"run_id": self.run_id, "dataset": self.scope.dataset,
               **({"human": self.scope.human} if self.scope.human is not None else {}), **task.key,
               **params.columns(), **values, "fingerprint": task.fingerprint}
        if self.has_sizes:
            row.update(n_systems=task.n_systems, n_inputs=task.n_inputs)
        conventions = row["conventions"]
        if self.subset:
            row["subset"] = self.subset
            conventions = {**conventions, **subset_conventions(self.subset)}
        row["conventions"] = conventions_json(conventions)
        self.add_row(row)

    def add_row(self, row: dict) -> None:
        """A complete row (all columns but result_id)."""
        self.rows.append(row)
        if time.monotonic() - self.last > FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        # out of the buffer before the insert: a Ctrl-C or SIGTERM arriving just after it cannot
        # make the flush of the interrupted run insert them again
        rows, self.rows, self.last = self.rows, [], time.monotonic()
        import pandas as pd

        insert_rows(self.wh, self.table, pd.DataFrame(rows))
        self.written += len(rows)


def insert_rows(wh: Store, table: str, frame: pd.DataFrame | dict) -> None:
    """Insert the rows of ``frame`` into ``table``, by column name (the table's other columns take
    their defaults), in the caller's transaction. ``frame``: a DataFrame, or {column: numpy array}
    (:func:`metaeval.runs.engine.persist.columns`), which DuckDB reads alike without pandas."""
    columns = ", ".join(f'"{c}"' for c in frame)
    wh.con.register("result_rows", frame)
    try:
        wh.con.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM result_rows").fetchall()
    finally:
        wh.con.unregister("result_rows")


#: How a subset of cells is analysed, recorded in the conventions of its rows.
SUBSET_CONVENTION = ("only the cells whose attributes hold every condition of the subset are analysed; the other "
                     "cells are missing (NaN) and each statistic's convention for missing cells applies: a system's "
                     "score is its mean over the subset's inputs, and inputs or systems with no cell in the subset "
                     "are left out")


def subset_conventions(subset: str) -> dict:
    """The conventions of a result on the subset of cells ``subset`` (none for every cell: the
    rows of an unrestricted run are as they were before subsets)."""
    return {"subset": subset, "subset_cells": SUBSET_CONVENTION} if subset else {}


def conventions_json(conventions: dict) -> str:
    """The ``conventions`` column of a result row: the JSON object (keys sorted) with the orientation."""
    return json.dumps({**conventions, "orientation": ORIENTATION}, sort_keys=True, default=jsonable)


def _columns(wh: Store, table: str) -> set[str]:
    return set(wh.con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ?",
                              [table]).df()["column_name"])


def jsonable(x):
    if isinstance(x, np.generic):
        return x.item()
    return str(x)


def as_float(x) -> float | None:
    x = float(x)
    return None if np.isnan(x) else x


def none_if_nan(x):
    """None for SQL NULL as pandas returns it (None, NaN, pd.NA); the value otherwise."""
    if x is None or np.ndim(x) != 0:
        return x
    import pandas as pd

    return None if pd.isna(x) else x
