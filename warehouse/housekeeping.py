"""Removing and renaming what was stored by mistake: ``drop measure``, ``rename measure`` and
``drop dataset`` (``Warehouse.drop_measure``, ``Warehouse.rename_measure``, ``Warehouse.drop_dataset``).

Each is one transaction whose checks all run before its first write, so a refused or failing
call leaves every table as it was. Results computed from a measure or dataset (rows of the
result tables) *depend* on it; while any do, the call is refused unless ``cascade``, which
deletes those rows too and reports how many per table.

The result tables are found in the catalog (every base table with ``result_id`` and
``run_id``), and a row depends on measure M of dataset D when

- its ``dataset`` is D (a ``+``-joined group of datasets, in a table with ``n_datasets``, when
  it names D), or, without a ``dataset`` column, one of its ``tasks`` (JSON) is on D; and
- one of ``metric``, ``measure``, ``metric_a``, ``metric_b``, ``human`` is M (in a group, the
  human of D), or M is in its ``consensus`` or ``beaten_by`` (JSON lists of metrics), or one of
  its ``tasks`` has human M;
- a ranking (a table with a ``rank`` column: ``winners``, ``task_rankings``) is one result: its
  rows rank the metrics against each other (rank, cluster, beaten_by), so when one row of a run
  (on a dataset, or a task set) depends, every row of that run there does.

A row depends on dataset D when its dataset (or one of its tasks) is D, as above.

``analysis_runs`` rows are the history of what was run and stay. Duplicates
(``measure_duplicates``) are computed from the stored cells when queried, so they follow a drop or
a rename; a measure's scale is a column of its ``measures`` row, so it goes with a dropped measure
and stays with a renamed one.

Renaming keeps no dependent result: a result row's fingerprint and conventions describe the
cells it was computed from under the old name, and a ranking or test family names its metrics in
JSON, so rewriting names inside stored results would make them claim what was never computed.
With dependent results, ``rename`` is refused unless ``cascade``, which deletes them (to be
recomputed under the new name by the next analysis).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import duckdb

from metaeval import names, schema
from metaeval.errors import WarehouseError, one_line

#: Columns of a result table that name a measure of the row's dataset.
MEASURE_COLUMNS = ("metric", "measure", "metric_a", "metric_b", "human")
#: Columns holding a JSON list of measure names.
MEASURE_LIST_COLUMNS = ("consensus", "beaten_by")
#: Separator of (dataset, human) keys built from ``tasks`` (a control character: never in a name).
_SEP = "chr(31)"
#: How to ask for the cascade, in the refusals.
CASCADE = "--cascade (cascade=True in Python)"


@dataclass(frozen=True)
class Removal:
    """What a drop or rename did: ``data`` rows removed per data table (scores, judgments,
    measures, ...) and ``results`` rows removed per result table (with ``cascade``)."""

    action: str
    data: dict[str, int] = field(default_factory=dict)
    results: dict[str, int] = field(default_factory=dict)

    def __str__(self) -> str:
        parts = [self.action]
        data = counts_text(self.data)
        if data:
            parts.append(f"removed {data}")
        if self.results:
            parts.append(f"removed dependent results: {counts_text(self.results)}")
        return "; ".join(parts)


def counts_text(counts: dict[str, int]) -> str:
    """``{"correlations": 16, "winners": 0}`` -> ``"16 rows of correlations"`` (zeros left out)."""
    items = [(t, n) for t, n in counts.items() if n]
    return ", ".join(f"{n} row{'s' if n != 1 else ''} of {t}" for t, n in items)


_STATEMENTS: dict[str, str] | None = None


def statement(name: str) -> str:
    """The ``-- name:`` section ``name`` of ``schema/housekeeping.sql``."""
    global _STATEMENTS
    if _STATEMENTS is None:
        sections = re.split(r"^-- name: (\w+)\s*$", schema.read("housekeeping"), flags=re.M)
        _STATEMENTS = {sections[i]: sections[i + 1].strip().rstrip(";") for i in range(1, len(sections), 2)}
    return _STATEMENTS[name]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _dependents_query(table: str, columns: list[str], measure: bool) -> str | None:
    """A query of the ``result_id`` s of ``table`` depending on ``$dataset`` (and ``$measure``
    with ``measure``), or None when the table names no dataset."""
    q = _quote
    group = "n_datasets" in columns           # dataset and human are '+'-joined groups
    if "dataset" in columns:
        on_dataset = ("list_contains(string_split(dataset, '+'), $dataset)" if group else "dataset = $dataset")
    elif "tasks" in columns:
        on_dataset = "list_contains(json_extract_string(tasks, '$[*].dataset'), $dataset)"
    else:
        return None
    where = on_dataset
    if measure:
        named = []
        for c in MEASURE_COLUMNS:
            if c not in columns:
                continue
            if c == "human" and group:
                named.append("string_split(human, '+')[list_position(string_split(dataset, '+'), $dataset)]"
                             " = $measure")
            else:
                named.append(f"{q(c)} = $measure")
        named += [f"list_contains(json_extract_string({q(c)}, '$[*]'), $measure)"
                  for c in MEASURE_LIST_COLUMNS if c in columns]
        if "tasks" in columns:
            named.append(f"list_contains(list_transform(json_extract(tasks, '$[*]'), lambda t: "
                         f"json_extract_string(t, '$.dataset') || {_SEP} || json_extract_string(t, '$.human')), "
                         f"$dataset || {_SEP} || $measure)")
        if not named:
            return None
        where = f"({on_dataset}) AND ({' OR '.join(named)})"
    selected = f"SELECT result_id FROM {q(table)} WHERE {where}"
    if "rank" in columns:                      # a ranking: every row of the run (there) goes with one
        key = [c for c in ("run_id", "dataset", "task_set") if c in columns]
        keys = ", ".join(key)
        selected = (f"SELECT result_id FROM {q(table)} WHERE ({keys}) IN "
                    f"(SELECT ({keys}) FROM {q(table)} WHERE {where})" if len(key) > 1 else
                    f"SELECT result_id FROM {q(table)} WHERE run_id IN (SELECT run_id FROM {q(table)} WHERE {where})")
    return selected


def dependents(con: duckdb.DuckDBPyConnection, dataset: str, measure: str | None = None) -> dict[str, str]:
    """Result table -> the query of its rows that depend on ``measure`` of ``dataset`` (on the
    dataset when ``measure`` is None); parameters ``$dataset`` and ``$measure``."""
    out = {}
    for table, columns in con.execute(statement("result_tables")).fetchall():
        query = _dependents_query(table, list(columns), measure is not None)
        if query is not None:
            out[table] = query
    return out


def _params(query: str, dataset: str, measure: str | None) -> dict:
    params = {"dataset": dataset}
    if "$measure" in query:
        params["measure"] = measure
    return params


def count_dependents(con: duckdb.DuckDBPyConnection, dataset: str, measure: str | None = None) -> dict[str, int]:
    """Result table -> rows that depend on ``measure`` of ``dataset`` (or on the dataset); only
    tables with such rows."""
    counts = {}
    for table, query in dependents(con, dataset, measure).items():
        n = con.execute(f"SELECT count(*) FROM ({query})", _params(query, dataset, measure)).fetchall()[0][0]
        if n:
            counts[table] = n
    return counts


def _refuse(what: str, counts: dict[str, int], remedy: str) -> WarehouseError:
    total = sum(counts.values())
    return WarehouseError(f"cannot {what}: {total} result row{'s' if total != 1 else ''} depend on it "
                          f"({counts_text(counts)}); nothing changed: {remedy}")


class _Transaction:
    """One transaction on ``con``: rolled back on any exception; a commit that fails says
    whether it completed, as ``done()`` tells on the warehouse afterwards."""

    def __init__(self, con: duckdb.DuckDBPyConnection, what: str, done):
        self.con, self.what, self.done = con, what, done

    def __enter__(self):
        self.con.begin()
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            try:
                self.con.rollback()
            except duckdb.Error:
                pass
            if isinstance(exc, duckdb.Error):
                raise WarehouseError(f"cannot {self.what}: {one_line(exc)}; nothing changed") from None
            return False
        try:
            self.con.commit()
        except BaseException as error:
            cause = ("interrupted" if isinstance(error, (KeyboardInterrupt, duckdb.InterruptException))
                     else f"reported an error ({one_line(error)})")
            try:
                self.con.rollback()
                completed: bool | None = False
            except duckdb.TransactionException:
                try:
                    completed = self.done()
                except duckdb.Error:
                    completed = None
            except duckdb.Error:
                completed = None
            outcome = {False: "did not complete (checked in the warehouse): nothing changed",
                       True: "but it completed (checked in the warehouse)",
                       None: "and whether it completed could not be checked: look with `metaeval measures`"}
            raise WarehouseError(f"{self.what}: the commit {cause} {outcome[completed]}") from None
        return False


def _measure(con, dataset: str, measure: str) -> tuple[int, str]:
    if not con.execute(statement("dataset"), {"dataset": dataset}).fetchall():
        names = [r[0] for r in con.execute("SELECT name FROM datasets ORDER BY name").fetchall()]
        raise WarehouseError(f"unknown dataset {dataset!r}; the warehouse has: {', '.join(names) or 'none'}")
    found = con.execute(statement("measure"), {"dataset": dataset, "measure": measure}).fetchall()
    if not found:
        known = [r[0] for r in con.execute(
            "SELECT m.name FROM measures AS m JOIN datasets AS d USING (dataset_id) WHERE d.name = ? ORDER BY 1",
            [dataset]).fetchall()]
        raise WarehouseError(f"dataset {dataset!r} has no measure {measure!r}; it has: {', '.join(known) or 'none'}")
    return found[0]


def _delete_dependents(con, dataset: str, measure: str | None) -> dict[str, int]:
    removed = {}
    for table, query in dependents(con, dataset, measure).items():
        params = _params(query, dataset, measure)
        n = con.execute(f"SELECT count(*) FROM ({query})", params).fetchall()[0][0]
        if n:
            con.execute(f"DELETE FROM {_quote(table)} WHERE result_id IN ({query})", params)
            removed[table] = n
    return removed


def has_statistics(con) -> bool:
    """Whether the warehouse has the ``bleu_statistics`` table (one made before it gets it from
    ``metaeval init`` or the first ``score --metric corpus-bleu``)."""
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'bleu_statistics'").fetchall()[0][0])


def system_level_measures(con, dataset: str) -> list[str]:
    """The system-level measures of ``dataset``: those with sufficient statistics (a corpus
    BLEU's), analysed on the system scores they sum to, never cell by cell."""
    if not has_statistics(con):
        return []
    return [r[0] for r in con.execute(schema.statements("bleu_statistics")["measures"], {"dataset": dataset}).fetchall()]


def drop_measure(con: duckdb.DuckDBPyConnection, dataset: str, measure: str, *, cascade: bool = False) -> Removal:
    """Remove ``measure`` of ``dataset``: its scores or judgments and its ``measures`` row (and,
    with ``cascade``, the results that depend on it)."""
    what = f"drop measure {measure!r} of dataset {dataset!r}"
    existed = lambda: bool(con.execute(statement("measure"), {"dataset": dataset, "measure": measure}).fetchall())
    with _Transaction(con, what, lambda: not existed()):
        measure_id, _ = _measure(con, dataset, measure)
        counts = count_dependents(con, dataset, measure)
        if counts and not cascade:
            raise _refuse(what, counts, f"pass {CASCADE} to remove them too")
        n_scores, n_judgments = con.execute(statement("measure_cells"), {"measure_id": measure_id}).fetchall()[0]
        # every check is done: the writes
        results = _delete_dependents(con, dataset, measure) if counts else {}
        con.execute(statement("drop_measure_scores"), {"measure_id": measure_id})
        con.execute(statement("drop_measure_judgments"), {"measure_id": measure_id})
        if has_statistics(con):
            con.execute(statement("drop_measure_statistics"), {"measure_id": measure_id})
        con.execute(statement("drop_measure"), {"measure_id": measure_id})
    return Removal(f"dropped measure {measure!r} of dataset {dataset!r}",
                   {"scores": n_scores, "judgments": n_judgments, "measures": 1}, results)


def rename_measure(con: duckdb.DuckDBPyConnection, dataset: str, old: str, new: str, *, cascade: bool = False) -> Removal:
    """Rename ``old`` of ``dataset`` to ``new`` (its cells, kind, direction and scale stay).
    Refused if ``new`` exists, or while results depend on ``old`` unless ``cascade`` (which
    deletes them: see the module's docstring)."""
    what = f"rename measure {old!r} of dataset {dataset!r} to {new!r}"
    names.check_new(new)
    renamed = lambda: bool(con.execute(statement("measure"), {"dataset": dataset, "measure": new}).fetchall())
    with _Transaction(con, what, renamed):
        measure_id, _ = _measure(con, dataset, old)
        if new == old:
            raise WarehouseError(f"cannot {what}: that is its name already; nothing changed")
        if con.execute(statement("measure"), {"dataset": dataset, "measure": new}).fetchall():
            raise WarehouseError(f"cannot {what}: dataset {dataset!r} has a measure {new!r} already; nothing "
                                 f"changed: choose another name, or drop {new!r} first")
        counts = count_dependents(con, dataset, old)
        stale = count_dependents(con, dataset, new)   # results left under NEW by a measure dropped earlier
        if (counts or stale) and not cascade:
            if counts:
                raise _refuse(what, counts, f"results keep the name they were computed under; pass {CASCADE} "
                                            "to remove them (recompute them after the rename)")
            raise WarehouseError(f"cannot {what}: {sum(stale.values())} result row(s) of an earlier measure "
                                 f"{new!r} remain ({counts_text(stale)}) and would be read as the renamed "
                                 f"measure's; nothing changed: pass {CASCADE} to remove them")
        results = {}
        if counts or stale:
            for source in (old, new):
                for table, n in _delete_dependents(con, dataset, source).items():
                    results[table] = results.get(table, 0) + n
        con.execute(statement("rename_measure"), {"measure_id": measure_id, "new": new})
    return Removal(f"renamed measure {old!r} of dataset {dataset!r} to {new!r}", {}, results)


def drop_dataset(con: duckdb.DuckDBPyConnection, dataset: str, *, cascade: bool = False) -> Removal:
    """Remove ``dataset``: its systems, inputs, texts, measures, scores, judgments, preferences, attributes and
    ingest history (and, with ``cascade``, the results on it).

    Three transactions, because DuckDB refuses to delete a row in the transaction that deleted
    the rows referencing it (its foreign-key limitation): the first checks everything and removes
    every value, text, measure, ingest record and result (atomically: a refusal or failure there
    changes nothing); the second the dataset's systems and inputs, which are then empty ids; the
    third its ``datasets`` row. Stopped after the first, the dataset is listed with no measures and
    the same call finishes it."""
    what = f"drop dataset {dataset!r}"
    exists = lambda: bool(con.execute(statement("dataset"), {"dataset": dataset}).fetchall())
    with _Transaction(con, what, lambda: None):
        found = con.execute(statement("dataset"), {"dataset": dataset}).fetchall()
        if not found:
            names = [r[0] for r in con.execute("SELECT name FROM datasets ORDER BY name").fetchall()]
            raise WarehouseError(f"unknown dataset {dataset!r}; the warehouse has: {', '.join(names) or 'none'}")
        dataset_id = found[0][0]
        counts = count_dependents(con, dataset)
        if counts and not cascade:
            raise _refuse(what, counts, f"pass {CASCADE} to remove them too")
        data = dict(con.execute(statement("dataset_rows"), {"dataset_id": dataset_id}).fetchall())
        statistics = has_statistics(con) and con.execute(statement("dataset_statistics"),
                                                         {"dataset_id": dataset_id}).fetchall()[0][0]
        if statistics:   # (a count only where there are some: the report of a dataset without, as before)
            data = {"bleu_statistics": statistics, **data}
        # every check is done: the writes
        results = _delete_dependents(con, dataset, None) if counts else {}
        if statistics:
            con.execute(statement("drop_dataset_statistics"), {"dataset_id": dataset_id})
        for table in _FIRST:
            con.execute(statement(f"drop_dataset_{table}"), {"dataset_id": dataset_id})
    finish = (f"{what}: its values, texts, measures and results are removed, but not yet its empty systems "
              f"and inputs; run the same command again to finish")
    try:
        with _Transaction(con, what, lambda: None):
            con.execute(statement("drop_dataset_systems"), {"dataset_id": dataset_id})
            con.execute(statement("drop_dataset_inputs"), {"dataset_id": dataset_id})
        with _Transaction(con, what, lambda: not exists()):
            con.execute(statement("drop_dataset"), {"dataset_id": dataset_id})
    except WarehouseError as exc:
        raise WarehouseError(f"{finish} ({exc})") from None
    except KeyboardInterrupt:
        raise WarehouseError(f"interrupted: {finish}") from None
    data["datasets"] = 1
    return Removal(f"dropped dataset {dataset!r}", data, results)


#: What the first transaction of drop_dataset deletes, children first.
_FIRST = ("scores", "judgments", "summaries", "documents", "references", "measures", "preferences", "attributes",
          "ingests")
