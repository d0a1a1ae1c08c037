"""How :func:`metaeval.load.load` compares staged rows (ids resolved) with each other and with the
warehouse, and merges them: the key and value of each target table, cells given twice, values
that conflict (with the warehouse, or within the input), and the set-based merge."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from metaeval.errors import ConflictError, DuplicateCellsError

if TYPE_CHECKING:
    import duckdb

    from metaeval.batch import Batch

MAX_CONFLICTS_SHOWN = 20

# table -> (key columns, value column) of what is compared and replaced as one value. For
# judgments the key is the cell's and the value its annotators' values (see _comparable);
# ROW_KEYS are the stored rows' keys where they differ from that.
TARGETS = {
    "scores": (["system_id", "input_id", "measure_id", "replicate"], "value"),  # a run (replicate) is a value
    "judgments": (["system_id", "input_id", "measure_id"], "value"),
    "summaries": (["system_id", "input_id"], "text"),
    '"references"': (["input_id", "reference_id"], "text"),
    "documents": (["input_id", "position"], "text"),
}
ROW_KEYS = {"judgments": ["system_id", "input_id", "measure_id", "annotator"]}


def row_keys(table: str) -> list[str]:
    """The key of one value as the input gives it: a judgment's includes the annotator."""
    return ROW_KEYS.get(table, TARGETS[table][0])


#: The most keys a duplicate check counts in a bitmap (128 MiB), and the most annotators it
#: numbers; beyond, DuckDB's DISTINCT.
BITMAP_KEYS = 1 << 30
BITMAP_ANNOTATORS = 1000


def check_duplicates(con, table: str, relation: str, file: str, where: str = "", params: list | None = None,
                     bounds: tuple[int, ...] | None = None) -> None:
    """Keys (of one value: a judgment's includes its annotator) that rows of ``relation`` give
    more than once: a :class:`DuplicateCellsError` naming ``file``.

    A key is three integer ids (and a judgment's annotator, numbered by its position ``a`` among
    the K distinct ones): each row is numbered in the box of their ranges,
    ``(((s - s0) * I + (i - i0)) * M + (m - m0)) * K + a``, and ``bitstring_agg`` sets one bit per
    number, so the distinct keys are the bits set (exact, one bit per possible key: 0.36 s against
    4.3 s for a DISTINCT over the 50M keys of bench_ingest.py's 55M-row file, which spills; see
    bench/profile_ingest.py). A score's run (replicate) is not counted: a batch whose cells give runs
    is checked by its reader (``Batch.runs``, :func:`metaeval.load.load` refuses it otherwise), and
    the others give one run. A box of over :data:`BITMAP_KEYS` keys (or over
    :data:`BITMAP_ANNOTATORS` annotators) is counted with ``count(DISTINCT key)``. ``bounds``:
    ``(s0, s1, i0, i1, m0, m1)`` known to hold every id of the rows (else read from them)."""
    params = params or []
    if bounds is None:
        [(rows, *bounds)] = con.execute(
            f"SELECT count(*), min(system_id), max(system_id), min(input_id), max(input_id), min(measure_id), "
            f"max(measure_id) FROM {relation} {where}", params).fetchall()
        if not rows:
            return
    s0, s1, i0, i1, m0, m1 = bounds
    if s0 is None or i0 is None or m0 is None:
        return   # (no system, input or measure: no row)
    annotators = [None]
    if table == "judgments":
        annotators = [r[0] for r in con.execute(f"SELECT DISTINCT annotator FROM {relation} {where} "
                                                f"LIMIT {BITMAP_ANNOTATORS + 1}", params).fetchall()]
    inputs, measures, k = i1 - i0 + 1, m1 - m0 + 1, len(annotators)
    keys = (s1 - s0 + 1) * inputs * measures * k
    if keys <= BITMAP_KEYS and k <= BITMAP_ANNOTATORS:
        position = "0" if table == "scores" else f"list_position(${len(params) + 1}, annotator) - 1"
        count = (f"bit_count(bitstring_agg((((system_id - {int(s0)}) * {int(inputs)} + (input_id - {int(i0)})) "
                 f"* {int(measures)} + (measure_id - {int(m0)})) * {int(k)} + {position}, 0, {int(keys) - 1}))")
        if table == "judgments":
            params = [*params, annotators]
    else:
        count = f"count(DISTINCT ({', '.join(k for k in row_keys(table) if k != 'replicate')}))"   # (runs not counted)
    [(duplicates,)] = con.execute(f"SELECT count(*) - {count} FROM {relation} {where}", params).fetchall()
    if duplicates:
        raise DuplicateCellsError(file, duplicates)


def check_fresh_duplicates(con, table: str, dataset_id: int, batch: Batch) -> None:
    """After a batch's values of new measures went straight into ``table`` (no staged copy to
    check first): its duplicates, found there (every value of those measures is the batch's);
    the transaction is rolled back on the error."""
    names = [str(m) for m in batch.measures["name"]]
    # the id ranges of the dataset's systems and inputs and of these measures hold every id of
    # their rows: no scan of the rows for them
    [bounds] = con.execute(
        "SELECT (SELECT min(system_id) FROM systems WHERE dataset_id = $1), "
        "(SELECT max(system_id) FROM systems WHERE dataset_id = $1), "
        "(SELECT min(input_id) FROM inputs WHERE dataset_id = $1), "
        "(SELECT max(input_id) FROM inputs WHERE dataset_id = $1), "
        "min(measure_id), max(measure_id) FROM measures WHERE dataset_id = $1 AND list_contains($2, name)",
        [dataset_id, names]).fetchall()
    check_duplicates(con, table, table, batch.file,
                      "WHERE measure_id IN (SELECT measure_id FROM measures WHERE dataset_id = $1 "
                      "AND list_contains($2, name))", [dataset_id, names], bounds)


def stored_measures(con, table: str, dataset_id: int, batch: Batch) -> bool:
    """Whether ``table`` holds values of any of the batch's measures."""
    return con.execute(f"SELECT EXISTS (SELECT 1 FROM {table} WHERE measure_id IN (SELECT measure_id FROM measures "
                       "WHERE dataset_id = ? AND list_contains(?, name)))",
                       [dataset_id, [str(m) for m in batch.measures["name"]]]).fetchall()[0][0]


def _overlaps(con, table: str, relation: str, fresh: set[str] = frozenset()) -> bool:
    """Whether ``table`` may hold rows with keys of ``relation``: for scores and judgments,
    whether it holds any value of their measures (a new measure, the common case of a large
    ingest, needs no comparison with stored values). ``fresh``: relations known to have none."""
    if table not in ("scores", "judgments"):
        return True
    if relation in fresh:
        return False
    return con.execute(f"SELECT EXISTS (SELECT 1 FROM {table} WHERE measure_id IN "
                       f"(SELECT DISTINCT measure_id FROM {relation}))").fetchall()[0][0]


def _comparable(table: str, relation: str, extra: tuple[str, ...] = (), *, per_row: bool = False) -> str:
    """SQL for the rows of ``relation`` as ``table`` compares them: its key columns, a
    ``value`` column and the ``extra`` columns. A judgment cell is one row whose value is
    the list of its annotators' values, in annotator order (extra columns: their least);
    with ``per_row``, each annotator's value is compared on its own."""
    keys, value = TARGETS[table]
    if table != "judgments" or per_row:
        return f"SELECT {', '.join([*row_keys(table), f'{value} AS value', *extra])} FROM {relation}"
    firsts = "".join(f", min({c}) AS {c}" for c in extra)
    return (f"SELECT {', '.join(keys)}, list({{'annotator': annotator, 'value': value}} ORDER BY annotator) "
            f"AS value{firsts} FROM {relation} GROUP BY {', '.join(keys)}")


def _stored(table: str, relation: str) -> str:
    """The rows of ``table`` whose key is among the rows of ``relation``."""
    keys, _ = TARGETS[table]
    on = " AND ".join(f"t.{k} = r.{k}" for k in keys)
    return f"(SELECT t.* FROM {table} t WHERE EXISTS (SELECT 1 FROM {relation} r WHERE {on}))"


def _differences_sql(table: str, relation: str, other: str, extra: tuple[str, ...] = (), *,
                     per_row: bool = False) -> tuple[str, list[str]]:
    """SQL of ``line, key columns, other's extra columns..., old value, new value`` for each key of
    ``relation`` that ``other`` (SQL of rows of ``table``) holds with another value, and the key
    columns; ``per_row`` as :func:`_comparable` says."""
    keys = row_keys(table) if per_row else TARGETS[table][0]
    on = " AND ".join(f"o.{k} = r.{k}" for k in keys)
    sql = (f"""WITH r AS ({_comparable(table, relation, ('line',), per_row=per_row)}),
                    o AS ({_comparable(table, other, extra, per_row=per_row)})
               SELECT r.line, {', '.join('r.' + k for k in keys)}{''.join(', o.' + c for c in extra)},
                      o.value AS old_value, r.value AS new_value
               FROM r JOIN o ON {on}
               WHERE o.value IS DISTINCT FROM r.value""")
    return sql, keys


def _differences(con, table: str, relation: str, other: str, extra: tuple[str, ...] = (), *,
                 per_row: bool = False) -> tuple[int, list[tuple]]:
    """How many keys of ``relation`` ``other`` holds with another value, and the first
    :data:`MAX_CONFLICTS_SHOWN` of them by line as ``(line, key, other's extra columns...,
    other's value, staged value)``."""
    sql, keys = _differences_sql(table, relation, other, extra, per_row=per_row)
    rows = con.execute(f"SELECT *, count(*) OVER () FROM ({sql}) ORDER BY line LIMIT {MAX_CONFLICTS_SHOWN}").fetchall()
    total = rows[0][-1] if rows else 0
    return total, [(line, dict(zip(keys, rest[:len(keys)])), *rest[len(keys):-1]) for line, *rest in rows]


def check_conflicts(con, staged: dict[str, str | None], file: str, files: list[str],
                     fresh: set[str] = frozenset()) -> None:
    """Values of the batch that the warehouse holds otherwise: a :class:`ConflictError`.
    A judgment cell given by several files of the call is compared as the union of their
    annotators, and its message names the other files."""
    total, shown, judgments = 0, [], 0
    for table, relation in staged.items():
        if relation is None or not _overlaps(con, table, relation, fresh):
            continue
        count, rows = _differences(con, table, relation, _stored(table, relation))
        total += count
        if table == "judgments":
            judgments += count
        for line, key, old, new in rows[:MAX_CONFLICTS_SHOWN - len(shown)]:
            given = f"file has {_short(new)}"
            if table == "judgments":
                where = " AND ".join(f"{k} = ${k}" for k in key)
                others = list(dict.fromkeys(files[r[0]] for r in con.execute(
                    f"SELECT DISTINCT origin FROM {relation} WHERE line IS NULL AND {where} ORDER BY origin",
                    key).fetchall()))
                if others:
                    given = f"this ingest has {_short(new)} (from this file and {', '.join(others)})"
            shown.append(f"{file}:{line}: {_what(con, table, key)}: warehouse has {_short(old)}, {given}")
    if total:
        headline = None
        if judgments:
            headline = (f"{total} value(s) conflict with the warehouse; nothing was written (use --replace to "
                        "overwrite them). A judgment cell's value is its whole set of annotators: --replace leaves "
                        "exactly the annotators this command gives, so to add annotators to stored cells, ingest "
                        "the files of all the cells' annotators together, in one command")
        raise ConflictError(shown, total, headline=headline)


def check_input_conflicts(con, staged: dict[str, str | None], file: str, loaded: Loaded) -> None:
    """Values of the batch that an earlier batch of the same call gave otherwise: an error
    naming both places, whatever ``replace`` says."""
    total, shown = 0, []
    for table, relation in staged.items():
        if relation is None or table not in loaded.rows:
            continue
        count, rows = _differences(con, table, relation, loaded.rows[table], ("origin", "line"), per_row=True)
        total += count
        for line, key, other, other_line, old, new in rows[:MAX_CONFLICTS_SHOWN - len(shown)]:
            shown.append(f"{file}:{line}: {_what(con, table, key)}: {_short(new)} here, "
                         f"{_short(old)} in {loaded.files[other]}:{other_line}")
    if total:
        raise ConflictError(shown, total, headline=(
            f"{total} value(s) conflict within the input: files of this ingest give the same score, text or "
            "annotator's judgment different values (files may give a judgment cell different annotators); "
            "nothing was written. Fix or leave out one of the files"))


def _what(con, table: str, key: dict) -> str:
    """The table and the names of a key's internal ids (only for error messages)."""
    parts = []
    for col, names, label in (("system_id", "systems", "system"), ("input_id", "inputs", "input"),
                              ("measure_id", "measures", "measure")):
        if col in key:
            name = con.execute(f"SELECT name FROM {names} WHERE {col} = ?", [key[col]]).fetchall()[0][0]
            parts.append(f"{label}={name}")
    parts += [f"{k}={v}" for k, v in key.items() if (not k.endswith("_id") or k == "reference_id")
              and not (k == "replicate" and v == 0)]   # run 0 (every score of a file without runs): unsaid
    return f"{table.strip(chr(34))} " + " ".join(parts)


def _short(value) -> str:
    """A value for a message; a judgment cell as ``{annotator: value, ...}``."""
    if isinstance(value, list):
        text = "{" + ", ".join(f"{a['annotator']}: {a['value']!r}" for a in value) + "}"
    else:
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def merge(con, table: str, relation: str, fresh: set[str] = frozenset()) -> tuple[int, int]:
    """Insert rows new to ``table`` (not judgments: :func:`merge_judgments`); overwrite those
    whose value differs. (inserted, replaced)."""
    keys, value = TARGETS[table]
    on = " AND ".join(f"t.{k} = r.{k}" for k in keys)
    cols = ", ".join(keys + [value])
    empty = (not _overlaps(con, table, relation, fresh)
             or not con.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchall()[0][0])
    replaced = 0 if empty else con.execute(
        f"""UPDATE {table} AS t SET {value} = r.{value} FROM {relation} r
            WHERE {on} AND t.{value} IS DISTINCT FROM r.{value}""").fetchall()[0][0]
    new = f"SELECT {', '.join('r.' + c for c in keys + [value])} FROM {relation} r"
    inserted = con.execute(
        f"INSERT INTO {table} ({cols}) {new}" if empty else
        f"INSERT INTO {table} ({cols}) {new} WHERE NOT EXISTS (SELECT 1 FROM {table} t WHERE {on})").fetchall()[0][0]
    return inserted, replaced


def merge_judgments(con, relation: str, fresh: set[str] = frozenset()) -> dict[int, tuple[int, int]]:
    """Insert new judgment cells; leave each stored cell whose annotators or values differ
    with exactly the staged annotators and values. By the ``origin`` of the staged rows:
    (rows in new cells, rows in replaced cells)."""
    cell, row = TARGETS["judgments"][0], ROW_KEYS["judgments"]
    if relation in fresh:  # new cells, all of one batch
        [(origin,)] = con.execute(f"SELECT origin FROM {relation} LIMIT 1").fetchall()
        [(inserted,)] = con.execute(f"INSERT INTO judgments ({', '.join(row)}, value) "
                                    f"SELECT {', '.join(row)}, value FROM {relation}").fetchall()
        return {origin: (inserted, 0)}
    if not _overlaps(con, "judgments", relation, fresh):  # all new cells
        counts = con.execute(f"SELECT origin, count(*) FROM {relation} GROUP BY origin").fetchall()
        con.execute(f"INSERT INTO judgments ({', '.join(row)}, value) SELECT {', '.join(row)}, value FROM {relation}")
        return {origin: (inserted, 0) for origin, inserted in counts}
    changed, _ = _differences_sql("judgments", relation, _stored("judgments", relation))
    con.execute(f"CREATE OR REPLACE TEMP TABLE changed_cells AS SELECT DISTINCT {', '.join(cell)} FROM ({changed})")
    same_cell = " AND ".join(f"{{a}}.{k} = {{b}}.{k}" for k in cell).format
    same_row = " AND ".join(f"r.{k} = t.{k}" for k in row)
    counts = con.execute(
        f"""SELECT origin,
                   count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM judgments t WHERE {same_cell(a='t', b='r')})),
                   count(*) FILTER (WHERE EXISTS (SELECT 1 FROM changed_cells c WHERE {same_cell(a='c', b='r')}))
            FROM {relation} r GROUP BY origin""").fetchall()
    con.execute(
        f"""DELETE FROM judgments t
            WHERE EXISTS (SELECT 1 FROM changed_cells c WHERE {same_cell(a='c', b='t')})
              AND NOT EXISTS (SELECT 1 FROM {relation} r WHERE {same_row})""")
    con.execute(
        f"""UPDATE judgments AS t SET value = r.value FROM {relation} r
            WHERE {same_row} AND t.value IS DISTINCT FROM r.value""")
    con.execute(
        f"""INSERT INTO judgments ({', '.join(row)}, value)
            SELECT {', '.join('r.' + c for c in row)}, r.value FROM {relation} r
            WHERE NOT EXISTS (SELECT 1 FROM judgments t WHERE {same_row})""")
    con.execute("DROP TABLE changed_cells")
    return {origin: (inserted, replaced) for origin, inserted, replaced in counts}


@dataclass
class Loaded:
    """What the earlier batches of one :func:`load` call gave: to tell a conflict inside
    the input (naming both files) from a conflict with the warehouse, and to gather each
    judgment cell's annotators over the batches. Rows are kept in temporary tables of the
    connection (``_loaded_<table>``), never in Python."""

    con: duckdb.DuckDBPyConnection
    measures: dict[str, str] = field(default_factory=dict)         # name -> first file giving it
    rows: dict[str, str] = field(default_factory=dict)             # table -> temp table of rows with file, origin
    ingest_ids: list[int] = field(default_factory=list)            # the ingests rows written
    temp: list[str] = field(default_factory=list)                  # temp tables and views to drop at the end
    files: list[str] = field(default_factory=list)                 # origin -> file
    single: bool = False                                           # one batch: no other batch to check against
    fresh: set[str] = field(default_factory=set)                   # staged views of values of new measures

    def remember(self, table: str, relation: str) -> None:
        """Keep the rows of ``relation`` (staged rows with their file and origin) whose key no
        earlier batch gave."""
        name = f"_loaded_{table.strip(chr(34))}"
        if table not in self.rows:
            self.con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS SELECT * FROM {relation}")
            self.temp.append(name)
            self.rows[table] = name
            return
        on = " AND ".join(f"e.{k} = r.{k}" for k in row_keys(table))
        self.con.execute(f"INSERT INTO {name} SELECT * FROM {relation} r "
                         f"WHERE NOT EXISTS (SELECT 1 FROM {name} e WHERE {on})")

    def judgment_cells(self, origin: int, own: str) -> str:
        """The judgment rows, from every batch, of the cells that batch ``origin`` is the
        first to give (``own``, its staged judgments, when no batch gives any); ``line`` is
        null on the rows of other batches, so that a cell is named by its first batch's line."""
        union = self.rows.get("judgments")
        if union is None:
            return own
        name = f"_cells_of_{origin}"
        cell = ", ".join(TARGETS["judgments"][0])
        self.con.execute(
            f"""CREATE OR REPLACE TEMP TABLE {name} AS
                SELECT * REPLACE (CASE WHEN origin = {int(origin)} THEN line END AS line)
                FROM (SELECT *, min(origin) OVER (PARTITION BY {cell}) AS _first FROM {union})
                WHERE _first = {int(origin)} ORDER BY origin""")
        self.con.execute(f"ALTER TABLE {name} DROP COLUMN _first")
        self.temp.append(name)
        return name
