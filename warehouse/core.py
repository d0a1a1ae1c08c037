"""The Python API: :class:`Store` opens a warehouse file and answers in numpy/pandas.

numpy and pandas are imported where they are used, not with this module: the light commands
(``datasets``, ``measures``, ``results``, ``sql``) ask for :class:`~warehouse.rows.Rows`
(``plain=True``) and print them without either (0.3 s of a command's start-up)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb

from metaeval import connection, owners, schema
from metaeval.errors import CommitError, WarehouseError, no_human_judgment, one_line
from metaeval.rows import Rows, fetch_rows, left_join

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from metaeval.batch import Batch, LoadReport   # the ingest path imports metaeval.load: a read does not


#: Pairs of cells of the same kind (about) from which ``Store.measures`` settles most pairs of
#: measures from a sketch of each (``schema/measure_duplicates_sketched.sql``) rather than by the
#: self-join of every cell (``measure_duplicates_of.sql``): the same rows; below it the sketch's
#: longer plan costs more than the join it saves (issue 47 item 5).
SKETCH_PAIRS = 1_000_000


def duplicates_script(kinds: Sequence[str], cells: Sequence[int]) -> str:
    """The script finding the duplicates of measures of ``kinds`` with ``cells`` cells each: the
    sketched one when their pairs of the same kind share about :data:`SKETCH_PAIRS` cells or more."""
    pairs = 0
    for kind in set(kinds):
        counts = [int(n) for k, n in zip(kinds, cells) if k == kind]
        pairs += sum(counts) * (len(counts) - 1) // 2
    return "measure_duplicates_sketched" if pairs >= SKETCH_PAIRS else "measure_duplicates_of"


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
        import pandas as pd

        measure = measure or self.measures[0]
        return pd.DataFrame(self[measure], index=pd.Index(self.systems, name="system"),
                            columns=pd.Index(self.inputs, name="input"))


@dataclass(frozen=True)
class Annotations:
    """Every annotator's judgments of one human measure: ``values`` is N systems × M inputs × K
    annotators, NaN where an annotator did not judge a cell; systems and inputs on the grid of
    ``Store.matrix(dataset, measure)``, annotators sorted by id (numerically when numbers).
    ``positional``: the ids are list positions "0".."K-1" (as SacreROUGE lists are stored), so
    an id need not name the same person in every cell."""

    dataset: str
    measure: str
    systems: tuple[str, ...]
    inputs: tuple[str, ...]
    annotators: tuple[str, ...]
    values: np.ndarray

    @property
    def positional(self) -> bool:
        return self.annotators == tuple(str(i) for i in range(len(self.annotators)))


#: Cells of the grids of the measures :meth:`Store.matrix` reads in one query (memory: the
#: fetched cells, at most this many, beside the matrix).
MATRIX_CHUNK_CELLS = 2_000_000


class Store:
    """A metaeval warehouse file.

    >>> wh = Store.create("warehouse.duckdb")     # or Store("warehouse.duckdb")
    >>> m = wh.matrix("summeval", ["rouge-2.recall", "expert.relevance"])
    """

    #: The files this object created (see :meth:`create`) while nothing is committed to them.
    created: connection.NewFiles | None = None

    #: The command line that opened this warehouse, set by the ``metaeval`` command line and
    #: recorded with every analysis run it starts (``analysis_runs.command_line``); None from Python.
    command_line: str | None = None

    #: What computes the tasks of the analysis runs it starts: a
    #: :class:`metaeval.runs.engine.executors.Executor` (a Dask scheduler's address), set by the command
    #: line from ``--scheduler`` / ``$METAEVAL_SCHEDULER`` or by a Python caller
    #: (``wh.executor = Executor("tcp://host:8786")``); None: this process and local workers
    #: (the runs' ``jobs``). Recorded with every run (``analysis_runs.parameters["executor"]``).
    executor: Any = None

    def __init__(self, path: str | os.PathLike | None = None, *, read_only: bool = False):
        self.path = connection.resolve_path(path)
        self.read_only = read_only
        self.con = connection.connect(self.path, read_only=read_only)
        if not read_only:
            self._reap()

    @classmethod
    def create(cls, path: str | os.PathLike | None = None) -> Store:
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
        self._reap()
        return self

    def _reap(self) -> None:
        """Opened for writing: runs left 'running' by a process of this host that is gone
        (killed) become 'interrupted' (:func:`warehouse.owners.reap_orphaned_runs`)."""
        try:
            owners.reap_orphaned_runs(self.con)
        except duckdb.Error as exc:
            self.con.close()
            raise WarehouseError(f"cannot check the runs of {self.path} for killed processes: {exc}") from None
        except BaseException:
            self.con.close()
            raise

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()
        if exc_type is not None and self.created:
            self.created.remove()

    # --- reading -------------------------------------------------------------------
    def sql(self, query: str, params: Sequence | dict | None = None) -> pd.DataFrame:
        """Run a query with bound parameters; the result as a DataFrame."""
        return self.con.execute(query, params).df()

    def rows(self, query: str, params: Sequence | dict | None = None) -> Rows:
        """Run a query with bound parameters; the result as :class:`~warehouse.rows.Rows`
        (tuples and column names, no pandas), printed as :meth:`sql`'s DataFrame would be."""
        return fetch_rows(self.con.execute(query, params))

    def user_query(self, query: str, *, plain: bool = False) -> pd.DataFrame | Rows | None:
        """A user's SQL ``query`` with no access to anything outside the warehouse (DuckDB's
        ``enable_external_access`` off, which the query cannot switch back on while the database
        is open): no other files read or written, no extensions loaded. None when ``query`` holds
        no statement ('', ';', comments only: DuckDB would run nothing); a DuckDB error is a
        :class:`WarehouseError` in one line. ``plain``: :class:`~warehouse.rows.Rows` (with
        the DataFrame inside when a column's type has no plain rendering)."""
        try:
            self.con.execute("SET enable_external_access = false")
            if not self.con.extract_statements(query):
                return None
            return self.rows(query) if plain else self.sql(query)
        except duckdb.Error as exc:
            raise WarehouseError(f"SQL error: {one_line(exc)}") from None

    def datasets(self, *, plain: bool = False) -> pd.DataFrame | Rows:
        """The datasets with their sizes (``plain``: as :class:`~warehouse.rows.Rows`)."""
        return (self.rows if plain else self.sql)(schema.read("dataset_sizes"))

    def measures(self, dataset: str, kind: str | None = None, *, duplicates: bool = False,
                 plain: bool = False) -> pd.DataFrame | Rows:
        """The measures of ``dataset`` (``kind``: automatic or human only): kind, direction,
        scale, coverage. ``duplicates``: with ``duplicate_of`` and ``relation`` (see :meth:`duplicates`).
        ``plain``: as :class:`~warehouse.rows.Rows`, the same table."""
        self.require_dataset(dataset)
        read = self.rows if plain else self.sql
        frame = read(schema.read("measure_coverage"), {"dataset": dataset, "kind": kind})
        if duplicates:
            cells = frame.column("n_cells") if plain else list(frame["n_cells"])
            kinds = frame.column("kind") if plain else list(frame["kind"])
            dups = read(schema.read(duplicates_script(kinds, cells)), {"dataset": dataset})
            if plain:
                return left_join(frame, dups, "measure", ["duplicate_of", "relation"])
            frame = frame.merge(dups[["measure", "duplicate_of", "relation"]], on="measure", how="left")
        return frame

    def measure_kinds(self, dataset: str) -> pd.DataFrame:
        """The measures of ``dataset`` with their kind, direction and scale: :meth:`measures`
        without the coverage counts, which read every cell (seconds on 100M cells)."""
        self.require_dataset(dataset)
        return self.con.execute(schema.read("measure_kinds"), {"dataset": dataset}).df()

    def duplicates(self, dataset: str) -> pd.DataFrame:
        """The measures of ``dataset`` that duplicate another (view ``measure_duplicates``):
        the same value in every shared cell (relation ``identical``) or a positive affine
        transform of it once oriented, up to rounding (``affine``: Pearson r >= 1 - 1e-9), so that
        every correlation, CI and test gives both the same numbers; ``duplicate_of`` is the first such measure by name."""
        self.require_dataset(dataset)
        return self.sql(schema.read("measure_duplicates_of"), {"dataset": dataset})

    def set_scale(self, dataset: str, measures: Sequence[str], scale: tuple[float, float] | None) -> None:
        """Record the range ``(low, high)`` of ``measures`` (``measures.scale`` = 'low..high'),
        or forget it (None). Refused, changing nothing, if a stored value lies outside it."""
        self.require_dataset(dataset)
        self.require_measures(dataset, measures)
        text = None
        if scale is not None:
            low, high = (float(x) for x in scale)
            if not (math.isfinite(low) and math.isfinite(high) and low < high):
                raise WarehouseError(f"a scale needs finite low < high; got {low}..{high}")
            text = f"{low:g}..{high:g}"
            outside = self.con.execute(  # every stored value: each annotator's, not only their mean
                """SELECT m.name, s.name, i.name, v.value
                   FROM (SELECT system_id, input_id, measure_id, value FROM scores
                         UNION ALL SELECT system_id, input_id, measure_id, value FROM judgments) AS v
                   JOIN measures AS m USING (measure_id) JOIN datasets AS d USING (dataset_id)
                   JOIN systems AS s ON s.system_id = v.system_id JOIN inputs AS i ON i.input_id = v.input_id
                   WHERE d.name = ? AND list_contains(?, m.name) AND (v.value < ? OR v.value > ?)
                   ORDER BY m.name, s.name, i.name LIMIT 1""",
                [dataset, list(measures), low, high]).fetchall()
            if outside:
                m, system, input_, value = outside[0]
                raise WarehouseError(f"{dataset}: {m!r} has {value!r} (system {system!r}, input {input_!r}) "
                                     f"outside the scale {text}; nothing changed")
        self.con.execute("""UPDATE measures SET scale = ? WHERE name IN (SELECT unnest(?))
                            AND dataset_id = (SELECT dataset_id FROM datasets WHERE name = ?)""",
                         [text, list(measures), dataset])

    def drop_measure(self, dataset: str, measure: str, *, cascade: bool = False):
        """Remove ``measure`` of ``dataset`` (scores or judgments, and the measure), atomically.
        Refused while results depend on it unless ``cascade``, which removes them too; returns a
        :class:`~warehouse.housekeeping.Removal` (rows removed per table). See
        :mod:`warehouse.housekeeping`."""
        from metaeval import housekeeping

        return self._housekeeping(housekeeping.drop_measure, dataset, measure, cascade=cascade)

    def rename_measure(self, dataset: str, old: str, new: str, *, cascade: bool = False):
        """Rename measure ``old`` of ``dataset`` to ``new``, atomically; refused if ``new``
        exists, and while results depend on ``old`` unless ``cascade``, which removes them (a
        result keeps the name it was computed under)."""
        from metaeval import housekeeping

        return self._housekeeping(housekeeping.rename_measure, dataset, old, new, cascade=cascade)

    def drop_dataset(self, dataset: str, *, cascade: bool = False):
        """Remove ``dataset`` and everything stored for it, atomically; refused while results
        are on it unless ``cascade``, which removes them too."""
        from metaeval import housekeeping

        return self._housekeeping(housekeeping.drop_dataset, dataset, cascade=cascade)

    def _housekeeping(self, action, *args, cascade: bool):
        if self.read_only:
            raise WarehouseError(f"{self.path} is open read-only: open it with read_only=False to change it")
        return action(self.con, *args, cascade=cascade)

    def require_dataset(self, dataset: str) -> None:
        names = [r[0] for r in self.con.execute("SELECT name FROM datasets ORDER BY name").fetchall()]
        if dataset not in names:
            raise WarehouseError(f"unknown dataset {dataset!r}; the warehouse has: {', '.join(names) or 'none'}")

    def require_measures(self, dataset: str, measures: Sequence[str]) -> None:
        known = set(self.measure_kinds(dataset)["measure"])
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
        import numpy as np

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
        # measures fetched together while their grids hold at most MATRIX_CHUNK_CELLS cells (a
        # query per measure costs ~10 ms: 40 measures of a small dataset in one query instead)
        step = max(1, MATRIX_CHUNK_CELLS // max(1, len(sys_pos) * len(inp_pos)))
        for first in range(0, len(names), step):
            chunk = list(names[first:first + step])
            cells = self.con.execute(sql, {"dataset": dataset, "measures": chunk}).fetchnumpy()
            k = first + np.asarray(cells["k"], dtype=np.int64)
            sp, ip = np.asarray(cells["sp"], dtype=np.int64), np.asarray(cells["ip"], dtype=np.int64)
            row, col = np.searchsorted(sys_pos, sp), np.searchsorted(inp_pos, ip)
            inside = ((row < len(sys_pos)) & (col < len(inp_pos)))
            inside[inside] &= (sys_pos[row[inside]] == sp[inside]) & (inp_pos[col[inside]] == ip[inside])
            values[k[inside], row[inside], col[inside]] = np.asarray(cells["value"], dtype=float)[inside]
        systems = self._names("system_order", "system", dataset, sys_pos)
        inputs = self._names("input_order", "input", dataset, inp_pos)
        return Matrix(dataset, names, systems, inputs, values[0] if single else values)

    def _names(self, view: str, column: str, dataset: str, positions: np.ndarray) -> tuple[str, ...]:
        """The names at ``positions`` of an order view."""
        rows = self.con.execute(f"SELECT position, {column} FROM {view} WHERE dataset = ? ORDER BY position",
                                [dataset]).fetchall()
        by_position = dict(rows)
        return tuple(by_position[int(p)] for p in positions)

    def annotations(self, dataset: str, measure: str) -> Annotations:
        """Every annotator's judgment of the human ``measure`` of ``dataset`` (:class:`Annotations`)."""
        import numpy as np

        from metaeval import schema

        self.require_dataset(dataset)
        catalog = self.measure_kinds(dataset)
        kinds = catalog.loc[catalog["kind"] == "human", "measure"].tolist()
        if measure not in kinds:
            raise no_human_judgment(dataset, measure, kinds, catalog.loc[catalog["kind"] == "automatic", "measure"])
        rows = self.con.execute(schema.read("annotations"), {"dataset": dataset, "measure": measure}).df()
        sys_pos, row = np.unique(rows["sp"].to_numpy(), return_inverse=True)
        inp_pos, col = np.unique(rows["ip"].to_numpy(), return_inverse=True)
        ids = sorted(rows["annotator"].unique(), key=lambda a: (not a.isdigit(), int(a) if a.isdigit() else 0, a))
        k = rows["annotator"].map({a: i for i, a in enumerate(ids)}).to_numpy()
        values = np.full((len(sys_pos), len(inp_pos), len(ids)), np.nan)
        values[row, col, k] = rows["value"].to_numpy(dtype=float)
        systems = rows.drop_duplicates("sp").set_index("sp").loc[sys_pos, "system"]
        inputs = rows.drop_duplicates("ip").set_index("ip").loc[inp_pos, "input"]
        return Annotations(dataset, measure, tuple(systems), tuple(inputs), tuple(ids), values)

    # --- attributes of inputs and cells (warehouse/attributes.py) -------------------------
    def attributes(self, dataset: str) -> list[str]:
        """The attributes of ``dataset`` (``metaeval ingest attributes``), sorted."""
        from metaeval import attributes

        self.require_dataset(dataset)
        return attributes.names(self.con, dataset)

    def attribute_values(self, dataset: str, attribute: str) -> list[str]:
        """The distinct values of ``attribute`` in ``dataset``, sorted; an unknown attribute is a
        :class:`WarehouseError` naming the dataset's attributes."""
        from metaeval import attributes

        self.require_dataset(dataset)
        return attributes.values(self.con, dataset, attribute)

    def attribute_labels(self, dataset: str, attribute: str, systems: Sequence[str],
                         inputs: Sequence[str]) -> np.ndarray:
        """(N, M) object array: ``attribute``'s value of each cell of the ``systems`` x ``inputs``
        grid, None where the cell has none (an input-level value applies to every system's cell of
        the input; a cell-level value overrides it)."""
        from metaeval import attributes

        self.require_dataset(dataset)
        return attributes.labels(self.con, dataset, attribute, systems, inputs)

    def attribute_mask(self, dataset: str, where: Sequence[tuple[str, str]], systems: Sequence[str],
                       inputs: Sequence[str]) -> np.ndarray:
        """(N, M) bool: True on the cells where every ``(attribute, value)`` pair of ``where`` holds
        (AND; every cell for no pair). A value the attribute never takes is refused, naming its values."""
        from metaeval import attributes

        self.require_dataset(dataset)
        return attributes.mask(self.con, dataset, where, systems, inputs)

    def load_attributes(self, dataset: str, rows: pd.DataFrame, *, file: str, sha256: str,
                        options: dict | None = None, replace: bool = False, command: str | None = None) -> LoadReport:
        """Merge attribute rows (columns system ('' = input-level), input, attribute, value, line)
        into ``dataset`` atomically (see :func:`warehouse.attributes.load_attributes`)."""
        from metaeval import attributes

        if self.read_only:
            raise WarehouseError(f"{self.path} is open read-only: open it with read_only=False to change it")
        report = attributes.load_attributes(self.con, dataset, rows, file=file, sha256=sha256, options=options,
                                            replace=replace, command=command)
        self.created = None
        return report

    def engine(self):
        """A SQLAlchemy engine on the same file (``duckdb-engine``). Close this warehouse
        first if the engine must write: DuckDB allows one writing process."""
        import sqlalchemy

        return sqlalchemy.create_engine(f"duckdb:///{self.path}", connect_args={"config": dict(connection.CONFIG)})

    # --- writing -------------------------------------------------------------------
    def load(self, dataset: str, batches: list[Batch], *, replace: bool = False,
             command: str | None = None, allow_new: bool = False,
             before_commit: Callable[[], object] | None = None) -> list[LoadReport]:
        """Merge parsed files into ``dataset`` atomically (see :mod:`warehouse.load`).

        ``allow_new``: let the batches add systems or inputs to a dataset that has some
        (without it, a :class:`~warehouse.errors.NewIdsError` lists them and nothing is written).
        A commit that fails or is interrupted raises a :class:`~warehouse.errors.CommitError`
        saying whether it completed, checked in the warehouse. ``before_commit``: checks run on
        this connection after the merge, before the commit; if one raises, nothing is written and
        its exception propagates unchanged.
        """
        from metaeval import load as loading

        try:
            reports = loading.load(self.con, dataset, batches, replace=replace, command=command, allow_new=allow_new,
                           before_commit=before_commit)
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
        from metaeval.load import committed

        try:
            return committed(con, ingest_ids), None
        except duckdb.Error as exc:
            return None, one_line(exc)
