"""Query results without pandas: :class:`Rows` (column names, tuples, and what pandas would make
of each column), for the light commands, which print a table and must start at once.

Importing pandas (and pyarrow, numpy with it) costs ~0.3 s, more than the rest of a light command
(``datasets``, ``measures``, ``results``, ``sql``). Those commands fetch :class:`Rows` instead of
a DataFrame and print them with :mod:`metaeval.present.plain`, exactly as
:func:`metaeval.present.tables.render` prints the DataFrame DuckDB's ``.df()`` gives for the same
query. That needs each column's *kind*: the pandas dtype ``.df()`` gives it, which depends on the
SQL type and on the values (a VARCHAR column is pandas' ``str`` unless every value is NULL, then
``object``; an integer column with a NULL is the nullable ``Int64``):

=========== ============================================ ===============================
kind        SQL type                                     pandas dtype of ``.df()``
=========== ============================================ ===============================
``str``     VARCHAR, JSON with a non-NULL value          ``str`` (missing: NaN)
``object``  VARCHAR, JSON, every value NULL or no rows   ``object`` (missing: None)
``int``     (U)TINYINT ... BIGINT, no NULL               ``int8`` ... ``uint64``
``Int``     the same with a NULL                         ``Int8`` ... ``UInt64`` (``<NA>``)
``float``   DOUBLE                                       ``float64`` (NULL: NaN)
``bool``    BOOLEAN, no NULL                             ``bool``
``Bool``    BOOLEAN with a NULL                          ``boolean`` (``<NA>``)
``datetimetz`` TIMESTAMP WITH TIME ZONE                  ``datetime64[us, tz]`` (NaT)
=========== ============================================ ===============================

A result with a column of any other type (DATE, DECIMAL, FLOAT, HUGEINT, lists, ...) or with
two columns of one name is fetched as a DataFrame (:attr:`Rows.frame`) and printed by pandas.
``tests/test_plain_tables.py`` checks that both print the same, column kind by column kind.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

_INTEGERS = frozenset({"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"})
_TEXT = frozenset({"VARCHAR", "JSON"})
#: SQL type -> its kind when no value is NULL (see the module docstring).
_KINDS = {**dict.fromkeys(_INTEGERS, "int"), **dict.fromkeys(_TEXT, "str"), "DOUBLE": "float", "BOOLEAN": "bool",
          "TIMESTAMP WITH TIME ZONE": "datetimetz"}
#: kind without a NULL -> kind with one
_WITH_NULL = {"int": "Int", "bool": "Bool"}
KINDS = ("str", "object", "int", "Int", "float", "bool", "Bool", "datetimetz")


@dataclass(frozen=True)
class Rows:
    """A query's result: ``columns``, one kind per column (module docstring) and the rows as
    tuples of Python values; or, when a column has no plain rendering, ``frame``, the DataFrame
    (and no kinds or data)."""

    columns: tuple[str, ...]
    kinds: tuple[str, ...] = ()
    data: tuple[tuple, ...] = ()
    frame: Any = None

    @property
    def plain(self) -> bool:
        """Whether these rows print without pandas."""
        return self.frame is None

    def __len__(self) -> int:
        return len(self.data) if self.plain else len(self.frame)

    def column(self, name: str) -> list:
        at = self.columns.index(name)
        return [row[at] for row in self.data]

    def where(self, keep: Sequence[bool]) -> Rows:
        """The rows where ``keep`` is true (the kinds stay: pandas keeps a column's dtype when rows are dropped)."""
        return replace(self, data=tuple(row for row, k in zip(self.data, keep, strict=True) if k))

    def without(self, columns: Sequence[str]) -> Rows:
        """These rows without ``columns`` (those it has)."""
        at = [i for i, c in enumerate(self.columns) if c not in columns]
        return Rows(tuple(self.columns[i] for i in at), tuple(self.kinds[i] for i in at),
                    tuple(tuple(row[i] for i in at) for row in self.data))


def fetch_rows(result) -> Rows:
    """The rows of an executed DuckDB ``result`` (a connection after ``execute``)."""
    description = result.description or []
    columns = tuple(d[0] for d in description)
    types = [str(d[1]) for d in description]
    if len(set(columns)) != len(columns) or any(t not in _KINDS for t in types):
        return Rows(columns, frame=result.df())
    data = tuple(result.fetchall())
    kinds = []
    for at, sql_type in enumerate(types):
        kind = _KINDS[sql_type]
        nulls = any(row[at] is None for row in data)
        if kind == "str" and (not data or all(row[at] is None for row in data)):
            kind = "object"
        elif nulls:
            kind = _WITH_NULL.get(kind, kind)
        kinds.append(kind)
    return Rows(columns, tuple(kinds), data)


def left_join(left: Rows, right: Rows, on: str, columns: Sequence[str]) -> Rows:
    """``left`` with ``columns`` of ``right`` (text columns) matched on ``on``, as pandas'
    ``left.merge(right[[on, *columns]], on=on, how="left")`` (``right``'s values of ``on`` are
    unique): a row without a match gets NaN in them, and they keep ``right``'s kinds."""
    if not (left.plain and right.plain):
        raise ValueError("left_join joins plain rows (tables of text and numbers)")
    at = [right.columns.index(c) for c in columns]
    if any(right.kinds[i] not in ("str", "object") for i in at):
        raise ValueError(f"left_join adds text columns only, not {[right.kinds[i] for i in at]}")
    key = right.columns.index(on)
    found = {row[key]: tuple(row[i] for i in at) for row in right.data}
    missing = tuple(math.nan for _ in at)
    where = left.columns.index(on)
    data = tuple(row + found.get(row[where], missing) for row in left.data)
    return Rows(left.columns + tuple(columns), left.kinds + tuple(right.kinds[i] for i in at), data)
