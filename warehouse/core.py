"""The Python API: :class:`Warehouse` opens a warehouse file and answers in numpy/pandas."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import numpy as np
import pandas as pd

from metaeval import connection, schema
from metaeval.errors import CommitError, WarehouseError, one_line
from metaeval.load import Batch, LoadReport, committed, load


@dataclass(frozen=True)
class Matrix:
    """Values of one or more measures on the same systems × inputs grid.

    ``values`` is N × M for a single measure and K × N × M for K measures (in the order
    asked); NaN marks a missing cell. ``m[measure]`` is always that measure's N × M array.
    """

    dataset: str
    measures: tuple[str, ...]
    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    values: np.ndarray

    def __getitem__(self, measure: str) -> np.ndarray:
        if measure not in self.measures:
            raise KeyError(f"{measure!r} is not in this matrix (measures: {list(self.measures)})")
        return self.values if self.values.ndim == 2 else self.values[self.measures.index(measure)]

    def frame(self, measure: str | None = None) -> pd.DataFrame:
        """One measure as a DataFrame: systems as the index, inputs as the columns."""
        measure = measure or self.measures[0]
        return pd.DataFrame(self[measure], index=pd.Index(self.systems, name="system"),
                            columns=pd.Index(self.inputs, name="input"))


class Warehouse:
    """A metaeval warehouse file.

    >>> wh = Warehouse.create("warehouse.duckdb")     # or Warehouse("warehouse.duckdb")
    >>> m = wh.matrix("summeval", ["rouge-2.recall", "expert.relevance"])
    """

    #: The files this object created (see :meth:`create`) while nothing is committed to them.
    created: connection.NewFiles | None = None

    def __init__(self, path: str | os.PathLike | None = None, *, read_only: bool = False):
        self.path = connection.resolve_path(path)
        self.read_only = read_only
        self.con = connection.connect(self.path, read_only=read_only)

    @classmethod
    def create(cls, path: str | os.PathLike | None = None) -> Warehouse:
        """Create the warehouse file (or check and update an existing one) and open it.

        A ``with`` block on a warehouse this created that ends with an exception before any
        :meth:`load` committed removes the file (and its .wal) again: a failed command leaves
        no empty warehouse behind.
        """
        self = cls.__new__(cls)
        self.path = connection.resolve_path(path)
        self.read_only = False
        created = connection.NewFiles.before(self.path)
        self.con = connection.create(self.path)
        self.created = created
        return self

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Warehouse:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()
        if exc_type is not None and self.created:
            self.created.remove()

    # --- reading -------------------------------------------------------------------
    def sql(self, query: str, params: Sequence | dict | None = None) -> pd.DataFrame:
        """Run a query with bound parameters; the result as a DataFrame."""
        return self.con.execute(query, params).df()

    def datasets(self) -> pd.DataFrame:
        return self.sql("SELECT * FROM dataset_summary")

    def measures(self, dataset: str, kind: str | None = None) -> pd.DataFrame:
        self.require_dataset(dataset)
        return self.sql("SELECT * FROM measure_summary WHERE dataset = ? AND (? IS NULL OR kind = ?)",
                        [dataset, kind, kind])

    def require_dataset(self, dataset: str) -> None:
        names = [r[0] for r in self.con.execute("SELECT name FROM datasets ORDER BY name").fetchall()]
        if dataset not in names:
            raise WarehouseError(f"unknown dataset {dataset!r}; the warehouse has: {', '.join(names) or 'none'}")

    def require_measures(self, dataset: str, measures: Sequence[str]) -> None:
        known = set(self.measures(dataset)["measure"])
        missing = [m for m in measures if m not in known]
        if missing:
            raise WarehouseError(f"dataset {dataset!r} has no measure {', '.join(map(repr, missing))}; "
                                 f"it has: {', '.join(sorted(known))}")

    def matrix(self, dataset: str, measures: str | Sequence[str], *, join: str = "outer") -> Matrix:
        """The systems × inputs matrix of one measure, or of several aligned on one grid.

        Systems and inputs are those with a value in any of the measures (``join="outer"``)
        or in every one of them (``"inner"``), in the order of the ``system_order`` and
        ``input_order`` views. Missing cells are NaN.
        """
        if join not in ("outer", "inner"):
            raise ValueError(f"join must be 'outer' or 'inner', not {join!r}")
        single = isinstance(measures, str)
        names = (measures,) if single else tuple(measures)
        if not names or len(set(names)) != len(names):
            raise ValueError(f"give one or more distinct measures, not {list(names)}")
        self.require_dataset(dataset)
        self.require_measures(dataset, names)
        sql = schema.read("matrix_cells")
        # the grid first (positions with a value in any / every measure), then one measure at a
        # time into it: memory is the matrix and one measure's cells, never every cell at once
        grid = {}
        for pos in ("sp", "ip"):
            counts = self.con.execute(
                f"SELECT {pos}, count(DISTINCT k) AS n FROM ({sql}) GROUP BY {pos} ORDER BY {pos}",
                {"dataset": dataset, "measures": list(names)}).fetchnumpy()
            keep = counts["n"] == len(names) if join == "inner" else np.ones(len(counts["n"]), dtype=bool)
            grid[pos] = np.asarray(counts[pos], dtype=np.int64)[keep]
        sys_pos, inp_pos = grid["sp"], grid["ip"]
        values = np.full((len(names), len(sys_pos), len(inp_pos)), np.nan)
        for k, name in enumerate(names):
            cells = self.con.execute(sql, {"dataset": dataset, "measures": [name]}).fetchnumpy()
            sp, ip = np.asarray(cells["sp"], dtype=np.int64), np.asarray(cells["ip"], dtype=np.int64)
            row, col = np.searchsorted(sys_pos, sp), np.searchsorted(inp_pos, ip)
            inside = ((row < len(sys_pos)) & (col < len(inp_pos)))
            inside[inside] &= (sys_pos[row[inside]] == sp[inside]) & (inp_pos[col[inside]] == ip[inside])
            values[k, row[inside], col[inside]] = np.asarray(cells["value"], dtype=float)[inside]
        systems = self._names("system_order", "system", dataset, sys_pos)
        inputs = self._names("input_order", "input", dataset, inp_pos)
        return Matrix(dataset, names, systems, inputs, values[0] if single else values)

    def _names(self, view: str, column: str, dataset: str, positions: np.ndarray) -> tuple[str, ...]:
        """The names at ``positions`` of an order view."""
        rows = self.con.execute(f"SELECT position, {column} FROM {view} WHERE dataset = ? ORDER BY position",
                                [dataset]).fetchall()
        by_position = dict(rows)
        return tuple(by_position[int(p)] for p in positions)

    def engine(self):
        """A SQLAlchemy engine on the same file (``duckdb-engine``). Close this warehouse
        first if the engine must write: DuckDB allows one writing process."""
        import sqlalchemy

        return sqlalchemy.create_engine(f"duckdb:///{self.path}", connect_args={"config": dict(connection.CONFIG)})

    # --- writing -------------------------------------------------------------------
    def load(self, dataset: str, batches: list[Batch], *, replace: bool = False,
             command: str | None = None, allow_new: bool = False) -> list[LoadReport]:
        """Merge parsed files into ``dataset`` atomically (see :mod:`warehouse.load`).

        ``allow_new``: let the batches add systems or inputs to a dataset that has some
        (without it, a :class:`~warehouse.errors.NewIdsError` lists them and nothing is written).
        A commit that fails or is interrupted raises a :class:`~warehouse.errors.CommitError`
        saying whether it completed, checked in the warehouse.
        """
        try:
            reports = load(self.con, dataset, batches, replace=replace, command=command, allow_new=allow_new)
        except CommitError as exc:
            if exc.committed is None:
                exc = exc.checked(*self._check_commit(exc.ingest_ids))
            if exc.committed is not False:
                self.created = None
            raise exc from None
        self.created = None
        return reports

    def _check_commit(self, ingest_ids: list[int]) -> tuple[bool | None, str | None]:
        """Whether the ingests ``ingest_ids`` are in the warehouse, asked of a fresh connection
        (the one that failed to commit may be unusable); (None, why) when that cannot be told.
        This warehouse is then open on a fresh connection, if the file can be opened again."""
        try:
            self.con.close()
            con = connection.connect(self.path, read_only=self.read_only)
        except (duckdb.Error, WarehouseError) as exc:
            return None, one_line(exc)
        self.con = con
        try:
            return committed(con, ingest_ids), None
        except duckdb.Error as exc:
            return None, one_line(exc)
