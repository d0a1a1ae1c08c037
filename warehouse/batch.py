"""What one parsed file contributes to :func:`metaeval.load.load` (:class:`Batch`, plain
DataFrames of names and values, each row remembering its line, or lists of them,
:class:`Columns`, for a file staged in DuckDB) and what loading it did
(:class:`LoadReport`). Its own module so that the merge step (:mod:`metaeval.merge`) and the
ingest parsers name these types without importing the loader."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

CELL_COLUMNS = ["system", "input", "measure", "annotator", "value", "line"]
MEASURE_COLUMNS = ["name", "kind", "direction"]
SUMMARY_COLUMNS = ["system", "input", "text", "line"]
REFERENCE_COLUMNS = ["input", "reference_id", "text", "line"]
DOCUMENT_COLUMNS = ["input", "position", "text", "line"]


def _frame(columns: list[str]) -> pd.DataFrame:
    import pandas as pd  # here: importing the core must not import pandas (the light commands)

    return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})


class Columns:
    """Named columns of equal length, as lists: a :class:`Batch`'s systems, measures and (empty)
    texts built without pandas, as :func:`metaeval.ingest.table.stage` builds them (importing
    pandas costs ~0.5 s of CPU, a tenth of ingesting 5.5M cells; bench/README.md). What
    :func:`metaeval.load.load` reads of a DataFrame there: ``frame[column]`` (iterated),
    ``len``, ``empty`` and ``columns``."""

    def __init__(self, columns: dict[str, list]):
        self._data = {name: list(values) for name, values in columns.items()}
        if len({len(v) for v in self._data.values()}) > 1:
            raise ValueError("columns of different lengths")

    @classmethod
    def empty_of(cls, columns: list[str]) -> Columns:
        return cls({c: [] for c in columns})

    @property
    def columns(self) -> list[str]:
        return list(self._data)

    def __getitem__(self, column: str) -> list:
        return self._data[column]

    def __len__(self) -> int:
        return len(next(iter(self._data.values()), []))

    @property
    def empty(self) -> bool:
        return len(self) == 0


@dataclass
class Batch:
    """What one file contributes. ``cells.annotator`` is None for automatic scores. Each table
    is a DataFrame, or :class:`Columns` (a staged batch: cells in ``cells_table``)."""

    file: str
    format: str
    sha256: str
    options: dict
    systems: pd.DataFrame = field(default_factory=lambda: _frame(["name", "type"]))
    measures: pd.DataFrame = field(default_factory=lambda: _frame(MEASURE_COLUMNS))
    cells: pd.DataFrame = field(default_factory=lambda: _frame(CELL_COLUMNS))
    summaries: pd.DataFrame = field(default_factory=lambda: _frame(SUMMARY_COLUMNS))
    references: pd.DataFrame = field(default_factory=lambda: _frame(REFERENCE_COLUMNS))
    documents: pd.DataFrame = field(default_factory=lambda: _frame(DOCUMENT_COLUMNS))
    #: When the cells were staged inside DuckDB instead (see :mod:`ingest.table`): the temporary
    #: table of the warehouse connection holding them (columns as ``cells``, ``line`` may be
    #: null), and how many of them are (scores, judgments). ``cells`` is then empty.
    cells_table: str | None = None
    cell_counts: tuple[int, int] | None = None
    #: Whether ``cells_table`` is known to give each cell (system, input, measure, annotator)
    #: once. When not, :func:`load` checks it on the resolved ids (:func:`check_duplicates`, far
    #: cheaper than on the names) and raises :class:`DuplicateCellsError`; cells in ``cells`` are
    #: checked always.
    unique_cells: bool = True
    #: For cells read through a view of a file (not copied): raises if the file changed since it
    #: was staged; :func:`load` calls it before committing, after the last read.
    unchanged: Callable[[], None] | None = None
    #: The distinct inputs of ``cells_table`` when its staging found them (its checks read every
    #: id): :func:`load` then adds the new ones from this list instead of reading the cells again.
    cell_inputs: list[str] | None = None
    #: The run (``scores.replicate``) of the automatic scores that give none: ``--replicate N`` at
    #: ingest, 0 by default (a file's first and only run). ``runs``: the cells (``cells`` or
    #: ``cells_table``) have a ``replicate`` column (an integer, or null for this default), which
    #: joins a score's key; their reader has checked that no (cell, replicate) is given twice.
    replicate: int = 0
    runs: bool = False

    @property
    def counts(self) -> tuple[int, int]:
        """(scores, judgments) given."""
        if self.cell_counts is not None:
            return self.cell_counts
        human = int(self.cells["annotator"].notna().sum())
        return len(self.cells) - human, human

    @property
    def rows(self) -> int:
        return sum(self.counts) + len(self.summaries) + len(self.references) + len(self.documents)

    @property
    def contents(self) -> str:
        """What the file gave, e.g. ``"2400 summaries, 100 references, 0 documents"``: the
        kinds of values it has, and all three kinds of text if it has any text."""
        scores, human = self.counts
        values = [(scores, "score", "scores"), (human, "judgment", "judgments")]
        texts = [(len(self.summaries), "summary", "summaries"), (len(self.references), "reference", "references"),
                 (len(self.documents), "document", "documents")]
        shown = [v for v in values if v[0]] + (texts if any(n for n, _, _ in texts) else [])
        return ", ".join(_count(*v) for v in shown) or "nothing"


def _count(n: int, singular: str, plural: str) -> str:
    return f"{n} {singular if n == 1 else plural}"


@dataclass(frozen=True)
class LoadReport:
    file: str
    rows: int
    inserted: int
    replaced: int
    contents: str = ""  # what was read, as Batch.contents says it

    @property
    def changed(self) -> bool:
        return bool(self.inserted or self.replaced)
