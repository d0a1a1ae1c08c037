"""Attributes of inputs and of cells (issue 26): the ``attributes`` table, its atomic merge and
what analyses read of it.

An attribute is a named property of an input (``source``: cnndm or xsum; ``split``: validation or
test), stored with system ``''``, or of one cell (system, input), which overrides the input's value
of the same attribute. :func:`load_attributes` merges the rows a file gives in one transaction, as
every ingest does: all checks first (unknown systems and inputs refused naming the file, line and
field; values that differ from stored ones a :class:`ConflictError` unless ``replace``), then the
writes and one ``ingests`` row if anything changed (re-ingesting a file changes nothing).
:func:`labels` and :func:`mask` read them onto a systems x inputs grid.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import duckdb
import numpy as np
import pandas as pd

from metaeval import schema
from metaeval.errors import ConflictError, InputError, WarehouseError, one_line
from metaeval.batch import LoadReport
from metaeval.merge import MAX_CONFLICTS_SHOWN

#: Columns of the rows :func:`load_attributes` takes (``system`` '' for an input-level value).
ROW_COLUMNS = ["system", "input", "attribute", "value", "line"]
FORMAT = "attributes"


#: The attribute reserved by ``--control system`` (the cells' system, never an attribute).
RESERVED_ATTRIBUTE = "system"
#: The condition on the systems' type (``systems.type``, SacreROUGE's summarizer type: peer,
#: reference, oracle, ...), never an attribute: ``system.type=peer`` or several types joined by
#: ``,`` (``oracle,peer``), or ``all``. A system without a stored type (table and mt-metrics-eval
#: ingests) is a ``peer``. Without such a condition, the types of :data:`LEFT_OUT_TYPES` are left out.
SYSTEM_TYPE = "system.type"
UNTYPED = "peer"
ALL_TYPES = "all"
#: The types left out of an analysis unless chosen (human summaries are not systems under evaluation;
#: Louis & Nenkova 2013 remove the two human "oracle" systems).
LEFT_OUT_TYPES = ("human", "oracle", "reference")


def label_problem(attribute: str, value: str) -> tuple[str, str] | None:
    """(field, why) when ``attribute = value`` could not be told apart in a subset label
    (``attr=value`` joined by `` & ``, ``attr=*`` the macro average of ``--by``): an attribute with
    ``=`` or ``&`` (``k=v`` = ``z`` and ``k`` = ``v=z`` are both ``k=v=z``), the attribute
    ``system`` (``--control system`` is the system), a value ``*`` or one holding `` & ``; else None."""
    if "=" in attribute or "&" in attribute:
        return "attribute", (f"attribute name {attribute!r} holds '=' or '&', which mark the conditions of a subset "
                             "label (attr=value joined by ' & '): rename it")
    if attribute in (RESERVED_ATTRIBUTE, SYSTEM_TYPE):
        return "attribute", (f"attribute name {attribute!r} is reserved: --control system groups the cells by their "
                             "system, so an attribute of that name could never be the control; rename it")
    if value == "*" or " & " in value:
        return "value", (f"attribute {attribute!r} has the value {value!r}: '*' marks a --by macro average and "
                         "' & ' joins the conditions of a subset label; change the value")
    return None


def _sql(name: str) -> str:
    return schema.statements("attributes")[name]


def load_attributes(con: duckdb.DuckDBPyConnection, dataset: str, rows: pd.DataFrame, *, file: str, sha256: str,
                    options: dict | None = None, replace: bool = False, command: str | None = None) -> LoadReport:
    """Merge ``rows`` (:data:`ROW_COLUMNS`, each key (system, input, attribute) once) into the
    attributes of ``dataset``, atomically."""
    names = [r[0] for r in con.execute("SELECT name FROM datasets ORDER BY name").fetchall()]
    if dataset not in names:
        raise WarehouseError(f"unknown dataset {dataset!r}; the warehouse has: {', '.join(names) or 'none'} "
                             "(ingest its values before the attributes of its inputs)")
    known = con.execute(_sql("dataset_names"), {"dataset": dataset}).df()
    for column in ("input", "system"):
        have = set(known.loc[known["kind"] == column, "name"])
        given = rows[column] if column == "input" else rows.loc[rows["system"] != "", "system"]
        unknown = ~given.isin(have)
        if unknown.any():
            first = rows.loc[given.index[unknown.to_numpy()]].sort_values("line").iloc[0]
            shown = ", ".join(sorted(have)[:8]) + (", ..." if len(have) > 8 else "")
            raise InputError(file, int(first["line"]), column,
                             f"dataset {dataset!r} has no {column} {first[column]!r} (its {column}s: {shown or 'none'})")
    for line, attribute, value in zip(rows["line"], rows["attribute"], rows["value"]):
        problem = label_problem(str(attribute), str(value))
        if problem:
            raise InputError(file, int(line), problem[0], problem[1])
    staged = rows[ROW_COLUMNS].astype({"system": str, "input": str, "attribute": str, "value": str, "line": "int64"})
    params = {"dataset": dataset}
    con.register("_attributes_frame", staged)
    try:
        con.begin()
        try:
            con.execute("CREATE OR REPLACE TEMP TABLE _staged_attributes AS SELECT * FROM _attributes_frame")
            [(inserted, replaced)] = con.execute(_sql("counts"), params).fetchall()
            if replaced and not replace:
                conflicts = con.execute(_sql("conflicts"), params).fetchall()
                raise ConflictError(
                    [f"{file}:{line}: system={system or '(every system)'} input={input_} attribute={attribute}: "
                     f"warehouse has {stored!r}, file has {given!r}"
                     for line, system, input_, attribute, stored, given in conflicts[:MAX_CONFLICTS_SHOWN]],
                    len(conflicts))
            # every check is done: the writes
            if replaced:
                con.execute(_sql("replace"), params)
            if inserted:
                con.execute(_sql("insert"), params)
            if inserted or replaced:
                con.execute(_sql("ingest"), {**params, "file": file, "sha256": sha256,
                                             "options": json.dumps(options or {}, sort_keys=True), "rows": len(rows),
                                             "inserted": inserted, "replaced": replaced, "command": command})
            con.execute("DROP TABLE IF EXISTS _staged_attributes")
        except BaseException as exc:
            try:
                con.rollback()
            except duckdb.Error:
                pass
            if isinstance(exc, (duckdb.IOException, duckdb.FatalException)):
                raise WarehouseError(f"cannot write to the warehouse ({one_line(exc)}); nothing was written") from None
            raise
        con.commit()
    finally:
        try:
            con.unregister("_attributes_frame")
        except duckdb.Error:
            pass
    n = len(rows)
    return LoadReport(file, n, int(inserted), int(replaced), f"{n} attribute value{'s' if n != 1 else ''}")


def names(con: duckdb.DuckDBPyConnection, dataset: str) -> list[str]:
    """The attributes of ``dataset``, sorted."""
    return [r[0] for r in con.execute(_sql("names"), {"dataset": dataset}).fetchall()]


def require(con: duckdb.DuckDBPyConnection, dataset: str, attribute: str) -> None:
    """A :class:`WarehouseError` naming the dataset's attributes when it has no ``attribute``."""
    have = names(con, dataset)
    if attribute not in have:
        raise WarehouseError(f"dataset {dataset!r} has no attribute {attribute!r}; its attributes: "
                             f"{', '.join(have) or 'none (metaeval ingest attributes adds them)'}")


def system_types(con: duckdb.DuckDBPyConnection, dataset: str) -> dict[str, str]:
    """Each system of ``dataset`` -> its type (:data:`UNTYPED` where none is stored)."""
    return dict(con.execute(_sql("system_types"), {"dataset": dataset, "untyped": UNTYPED}).fetchall())


def type_mask(con: duckdb.DuckDBPyConnection, dataset: str, choice: str | None, systems: Sequence[str]) -> np.ndarray:
    """(N,) bool: the ``systems`` whose type takes part. ``choice``: the value of a
    :data:`SYSTEM_TYPE` condition (types joined by ``,``, or ``all``), each type checked against
    the stored ones; None: every type but :data:`LEFT_OUT_TYPES`."""
    stored = system_types(con, dataset)
    if choice is None:
        return np.array([stored.get(s, UNTYPED) not in LEFT_OUT_TYPES for s in systems], dtype=bool)
    if choice == ALL_TYPES:
        return np.ones(len(systems), dtype=bool)
    chosen = choice.split(",")
    known = sorted(set(stored.values()))
    for t in chosen:
        if t not in known:
            raise WarehouseError(f"dataset {dataset!r} has no system of type {t!r}; its types: {', '.join(known)} "
                                 f"(or {ALL_TYPES})")
    return np.array([stored.get(s, UNTYPED) in chosen for s in systems], dtype=bool)


def values(con: duckdb.DuckDBPyConnection, dataset: str, attribute: str) -> list[str]:
    """The distinct values of ``attribute``, sorted (of :data:`SYSTEM_TYPE`: the stored types)."""
    if attribute == SYSTEM_TYPE:
        return sorted(set(system_types(con, dataset).values()))
    require(con, dataset, attribute)
    return [r[0] for r in con.execute(_sql("values"), {"dataset": dataset, "attribute": attribute}).fetchall()]


def labels(con: duckdb.DuckDBPyConnection, dataset: str, attribute: str, systems: Sequence[str],
           inputs: Sequence[str]) -> np.ndarray:
    """``attribute``'s value of each cell of the ``systems`` x ``inputs`` grid (object array, None
    where the cell has none): the input's value, or the cell's own where it has one (of
    :data:`SYSTEM_TYPE`: the system's type)."""
    if attribute == SYSTEM_TYPE:
        stored = system_types(con, dataset)
        return np.repeat(np.array([[stored.get(s, UNTYPED)] for s in systems], dtype=object), len(inputs), axis=1)
    require(con, dataset, attribute)
    out = np.full((len(systems), len(inputs)), None, dtype=object)
    row = {s: i for i, s in enumerate(systems)}
    col = {s: j for j, s in enumerate(inputs)}
    for system, input_, value in con.execute(_sql("cells"), {"dataset": dataset, "attribute": attribute}).fetchall():
        j = col.get(input_)
        if j is None:
            continue
        if system == "":
            out[:, j] = value
        elif (i := row.get(system)) is not None:
            out[i, j] = value
    return out


def mask(con: duckdb.DuckDBPyConnection, dataset: str, where: Sequence[tuple[str, str]], systems: Sequence[str],
         inputs: Sequence[str]) -> np.ndarray:
    """True on the cells of the grid where every ``(attribute, value)`` of ``where`` holds (AND;
    all True for no condition). A value the attribute never takes is refused (a typo, or an empty
    subset), naming its values. The systems' type (:func:`type_mask`): the :data:`SYSTEM_TYPE`
    condition's, else every type but :data:`LEFT_OUT_TYPES`."""
    choice = dict(where).get(SYSTEM_TYPE)
    out = np.repeat(type_mask(con, dataset, choice, systems)[:, None], len(inputs), axis=1)
    for attribute, value in where:
        if attribute == SYSTEM_TYPE:
            continue
        have = values(con, dataset, attribute)
        if value not in have:
            raise WarehouseError(f"attribute {attribute!r} of dataset {dataset!r} never has the value {value!r}; "
                                 f"its values: {', '.join(have)}")
        out &= labels(con, dataset, attribute, systems, inputs) == value
    return out
