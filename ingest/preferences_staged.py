"""The DuckDB reading of a preference file (:func:`stage`): an arena vote table or a native
preference file in CSV or TSV, read by DuckDB's reader under the table ingest's rule
(:func:`metaeval.ingest.table_staged.text_table`: header, byte order mark, encoding, one record
a line), its names and words checked in Python by the functions the Python reader applies to
every row, but each **distinct** value once, and the rows put in the Python reader's form by SQL
(``schema/preferences_staged.sql``) into the temporary table ``_staged_preferences``; no row
passes through Python, nor pandas. Anything it cannot vouch for is
:class:`~metaeval.ingest.table_staged.Unsure`: then :func:`metaeval.ingest.preferences.parse`,
the Python reader, reads the file and explains what it refuses (one line naming the file, the
line and the field), or reads what was only unusual (quoted fields, blank lines, ids with spaces
around them, a comparison given twice).

AlpacaEval annotations and JSON, JSONL and Parquet files are read by the Python reader.
"""

from __future__ import annotations

from pathlib import Path

from metaeval.errors import InputError
from metaeval.ingest import preferences_formats as formats
from metaeval.ingest.common import identifier
from metaeval.ingest.table_staged import Unsure, text_table
from metaeval.schema import read as read_sql

#: The fields of a preference row (preferences_staged.sql's _preference_given) and the column of
#: each layout that gives it. A field a new column adds (a run's ``replicate``, say) is one more
#: entry in each layout it has, a column of _preference_given, and its check in :func:`_checked`.
FIELDS = ("input", "system_a", "system_b", "judge", "order", "winner", "kind")
COLUMNS = {
    "native": {f: f for f in FIELDS},
    "arena": {"input": "question_id", "system_a": "model_a", "system_b": "model_b", "judge": "judge",
              "winner": "winner"},
}
IDS = ("input", "system_a", "system_b", "judge")
#: Ids DuckDB vouches for without Python: printable ASCII without a space at either end, which
#: :func:`metaeval.names.problem` never refuses and :func:`metaeval.names.strip` leaves as they are.
PLAIN_ID = "[!-~]([ -~]*[!-~])?"
#: The file's rows as DuckDB read them (its columns among COLUMNS' values).
FILE_TABLE = "_preference_file"


def stage(con, path: Path, judge: str | None, check_native_columns) -> tuple[int, str, str, bool]:
    """``path``'s preferences into the temporary table ``_staged_preferences`` of ``con``: its
    rows, its layout (``arena``, ``native``), its sha256 and whether each row is its own input
    (``vote-<line>``: an arena vote table without question_id); :class:`Unsure` if the Python reader
    must read it, an :class:`InputError` for a header the Python reader refuses alike
    (``check_native_columns(file, header, judge)``)."""
    file, found = str(path), {}

    def wanted(header: list[str]) -> list[str]:
        layout = formats.format_of(header)
        if "replicate" in header:
            raise Unsure("a run number column (replicate) is read in Python")
        if layout == "alpaca_eval":
            raise Unsure("AlpacaEval annotations are read in Python")
        if layout == "native":
            check_native_columns(file, header, judge)
        found["layout"] = layout
        found["fields"] = {f: c for f, c in COLUMNS[layout].items()
                           if c in header and not (f == "judge" and judge is not None)}
        return list(found["fields"].values())

    _header, records, digest = text_table(con, path, FILE_TABLE, wanted)
    layout, fields = found["layout"], found["fields"]
    given = ", ".join(f'"{fields[f]}" AS "{f}"' if f in fields else f'CAST(NULL AS VARCHAR) AS "{f}"' for f in FIELDS)
    try:
        if not records:
            raise Unsure("no rows")
        con.execute(f"CREATE OR REPLACE TEMP VIEW _preference_given AS SELECT rowid + 2 AS line, {given} "
                    f"FROM {FILE_TABLE}")
        con.execute(read_sql("preferences_staged_words"), _checked(con, file, layout, fields, judge))
        con.execute(read_sql("preferences_staged"))
        # (each arena vote without a question_id is its own input, judged by the file's one judge or voters
        # of one kind: nothing to doubt)
        doubts = layout == "native" or "input" in fields
        if doubts and any(con.execute(read_sql("preferences_staged_doubts")).fetchall()[0]):
            con.execute("DROP VIEW _staged_preferences")
            raise Unsure("a comparison judged twice, or a judge of two kinds")
    except BaseException:
        drop(con)
        raise
    return records, layout, digest, "input" not in fields


def drop(con) -> None:
    """Drop what :func:`stage` made."""
    for sql in ("DROP VIEW IF EXISTS _staged_preferences", "DROP TABLE IF EXISTS _preference_words",
                "DROP VIEW IF EXISTS _preference_given", f"DROP TABLE IF EXISTS {FILE_TABLE}"):
        con.execute(sql)


def _checked(con, file: str, layout: str, fields: dict, judge: str | None) -> dict:
    """The parameters of preferences_staged.sql for the given fields, every distinct value
    checked once (:class:`Unsure` where the Python reader would refuse or change one)."""
    present = [f for f in FIELDS if f in fields]
    ids = [f for f in IDS if f in fields]
    words = [f for f in ("order", "winner", "kind") if f in fields]
    sql = ", ".join([*(f'count(*) - count("{f}")' for f in present),
                     *(f'list(DISTINCT "{f}") FILTER (WHERE NOT regexp_full_match("{f}", $plain))' for f in ids),
                     *(f'list(DISTINCT "{f}") FILTER (WHERE "{f}" IS NOT NULL)' for f in words),
                     "count(*) FILTER (WHERE system_a = system_b)"])
    row = con.execute(f"SELECT {sql} FROM _preference_given", {"plain": PLAIN_ID}).fetchall()[0]
    nulls = dict(zip(present, row))
    unusual = dict(zip(ids, (n or [] for n in row[len(present):])))
    distinct = dict(zip(words, (w or [] for w in row[len(present) + len(ids):])))
    may_be_empty = {"kind"} | ({"input", "judge"} if layout == "arena" else set())
    if any(n for f, n in nulls.items() if f not in may_be_empty) or row[-1]:
        raise Unsure("an empty field, or a comparison of a system with itself")
    try:
        for field, names in unusual.items():
            if any(identifier(n, file, None, field) != n for n in names):
                raise Unsure(f"{field} ids with spaces around them")
        lists = {f: _words(f, layout, distinct[f], file) for f in words}
    except InputError:
        raise Unsure("a name or a word the Python reader refuses, naming its line") from None
    empty: list[str] = []
    params = {f"{f}s_{end}": lists.get(f, (empty, empty))[i] for f in ("order", "winner", "kind")
              for i, end in enumerate(("from", "to"))}
    automatic = judge is not None or layout == "native"
    return {**params, "judge_given": judge, "judge": formats.ARENA_HUMAN_JUDGE,
            "kind": "automatic" if automatic else "human"}


def _words(field: str, layout: str, values: list[str], file: str) -> tuple[list[str], list[str]]:
    """Each value of a word field and the word it is read as (an InputError for one refused)."""
    if field == "winner" and layout == "arena":
        return values, [formats.arena_winner(v, file, None) for v in values]
    if field == "kind":
        return values, [formats.judge_kind(v, file, None) for v in values]
    choices = formats.PRESENTATION_ORDERS if field == "order" else formats.PREFERENCE_LABELS
    return values, [formats.word(v, choices, file, None, field) for v in values]
