"""Pairwise preferences — CSV, TSV, Parquet or JSONL — one judgment a row::

    input,system_a,system_b,judge,order,winner[,kind][,replicate]

``order`` is the presentation order (``ab``: system_a's output shown first; ``ba``: swapped);
``winner`` is ``a``, ``b`` or ``tie`` and names the *system*, not the position; ``kind`` is
``human`` or ``automatic`` (default automatic; several human annotators are several human
judges); ``replicate`` is the run (a non-negative integer, default 0, or ``--replicate N`` for a
file's every row that gives none): the same judge asked again on the same item and order is run
1, 2, ..., and the analyses read the mean over the runs (view ``preference_means``). A row is stored with its systems in name order (a row ``B,A,ab,a`` is stored as
``A,B,ba,b``, the same judgment), so the same comparison given either way round is one item.

The ingest is one transaction: every row is checked first (errors name the file, line and
field), then systems and inputs new to a dataset that has some are refused unless
``allow_new`` (often typos), a judge given another kind than the one stored is refused, a
winner that differs from the stored one is a conflict unless ``replace``; re-ingesting the same
file changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from metaeval.schema import read as read_sql, statements
from metaeval.core import Store
from metaeval.errors import ConflictError, InputError, NewIdsError, WarehouseError
from metaeval.ingest.common import identifiers, replicate_number, sha256
from metaeval.ingest.preferences_formats import PREFERENCE_LABELS, PRESENTATION_ORDERS, judge_kind, word
from metaeval.ingest.table_files import stream_rows
from metaeval.batch import LoadReport
from metaeval.names import check_option

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "preferences"
REQUIRED = ("input", "system_a", "system_b", "judge", "order", "winner")
OPTIONAL = ("kind", "replicate")
COLUMNS = ["line", "input", "system_a", "system_b", "judge", "kind", "presentation", "winner", "probability",
           "replicate"]
_SWAP_ORDER = {"ab": "ba", "ba": "ab"}
_SWAP_WINNER = {"a": "b", "b": "a", "tie": "tie"}


def parse(path: Path, judge: str | None = None) -> pd.DataFrame:
    """The rows of a preference file (:data:`COLUMNS`, systems in name order), or an
    :class:`InputError` naming the file, line and field of the first problem. Arena vote tables
    and AlpacaEval annotations are read too (:mod:`metaeval.ingest.preferences_formats`; ``judge``:
    whose votes they are); the outputs' lengths and instruction places an AlpacaEval file gives are in
    ``.attrs["lengths"]``, the lines of its null preferences (left out) in ``.attrs["left_out"]``.
    ``probability``: P(system_b preferred) of a continuous judge (AlpacaEval's), else None."""
    from metaeval.ingest import preferences_formats as formats

    file = str(path)
    columns, records, _typed = stream_rows(path)
    kind = formats.format_of(columns)
    lengths: list = []
    left_out: list = []
    if kind == "arena":
        tuples = formats.arena_rows(file, columns, records, judge)
    elif kind == "alpaca_eval":
        tuples = formats.alpaca_rows(file, columns, records, judge, lengths, left_out)
    else:
        _check_native_columns(file, columns, judge)
        tuples = _native_rows(file, records)
    frame = _normalised(file, tuples)
    frame.attrs["lengths"] = lengths
    frame.attrs["left_out"] = left_out
    frame.attrs["format"] = kind
    return frame


def _check_native_columns(file: str, columns, judge: str | None) -> None:
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise InputError(file, None, missing[0], f"missing column(s) {missing}; a preference file has the columns "
                         f"{', '.join(REQUIRED)}[, kind] (or is an arena vote table: model_a, model_b, winner; "
                         "or AlpacaEval annotations: generator_1, generator_2, preference)")
    unknown = [c for c in columns if c not in REQUIRED + OPTIONAL]
    if unknown:
        raise InputError(file, None, unknown[0], f"unknown column(s) {unknown}; a preference file has the columns "
                         f"{', '.join(REQUIRED)}[, kind][, replicate]")
    if judge is not None:
        raise InputError(file, None, "judge", "this file names its judges in its judge column: a judge name is "
                         "given only with arena vote tables and AlpacaEval annotations")


def _native_rows(file: str, records):
    identifier = identifiers(file)
    for line, rec in records:
        ids = {c: identifier(rec.get(c), line, c) for c in ("input", "system_a", "system_b", "judge")}
        order = word(rec.get("order"), PRESENTATION_ORDERS, file, line, "order")
        winner = word(rec.get("winner"), PREFERENCE_LABELS, file, line, "winner")
        kind = judge_kind(rec.get("kind"), file, line)
        run = replicate_number(rec.get("replicate"), file, line)
        yield line, ids["input"], ids["system_a"], ids["system_b"], ids["judge"], kind, order, winner, None, run


def _normalised(file: str, tuples) -> pd.DataFrame:
    """The rows with their systems in name order, checked: two different systems, one kind per
    judge, one verdict per judge, item and order."""
    import pandas as pd

    rows, seen, kinds = [], {}, {}
    for line, item, a, b, judge, kind, order, winner, probability, *run in tuples:
        run = run[0] if run else None
        if a == b:
            raise InputError(file, line, "system_b", f"system_a and system_b are both {a!r}: a preference compares "
                             "two different systems")
        if a > b:
            a, b, order, winner = b, a, _SWAP_ORDER[order], _SWAP_WINNER[winner]
            probability = None if probability is None else 1.0 - probability
        if kinds.setdefault(judge, (kind, line))[0] != kind:
            raise InputError(file, line, "kind", f"judge {judge!r} is {kind} here but {kinds[judge][0]} on line "
                             f"{kinds[judge][1]}: a judge is a model or a person, not both")
        key = (item, a, b, judge, order, run)
        if key in seen:
            raise InputError(file, line, "winner", f"judge {judge!r} already judged input {item!r}, "
                             f"{a} vs {b}, with {_shown_first(a, b, order)} shown first, on line {seen[key]}"
                             + ("" if run is None else f" (run {run})"))
        seen[key] = line
        rows.append((line, item, a, b, judge, kind, order, winner, probability, run))
    if not rows:
        raise InputError(file, None, None, "the file has no rows")
    return pd.DataFrame(rows, columns=COLUMNS)


def _shown_first(a: str, b: str, order: str) -> str:
    return a if order == "ab" else b


def ingest(wh: Store, dataset: str, path: Path, *, replace: bool = False, allow_new: bool = False,
           command: str | None = None, before_commit: Callable[[], object] | None = None,
           judge: str | None = None, replicate: int = 0) -> LoadReport:
    """Merge the preferences of ``path`` into ``dataset`` (created if new) in one transaction;
    ``before_commit`` runs inside it, on the merged preferences, just before the commit (an error
    it raises rolls everything back: ``evaluate`` computes its judges there). ``judge``: whose
    votes an arena vote table or AlpacaEval annotations are (an automatic judge's name).
    ``replicate``: the run of the rows that give none (a non-negative integer)."""
    if not dataset or not dataset.strip():
        raise WarehouseError("the dataset name must not be empty")
    if judge is not None:                    # the names rule of the files ('' is the human votes' key)
        check_option("judge", judge, "judge name")
    path, con = Path(path), wh.con
    file = str(path)
    if replicate_number(replicate, file, None, "--replicate") is None:
        raise InputError(file, None, "--replicate", f"the run number must be a non-negative integer; got {replicate!r}")
    replicate = int(replicate)
    read = _staged(con, path, judge, replicate)
    con.begin()
    try:
        con.execute("INSERT INTO datasets (name) SELECT $name WHERE NOT EXISTS "      # no sequence value burnt
                    "(SELECT 1 FROM datasets WHERE name = $name)", {"name": dataset})
        [(dataset_id,)] = con.execute("SELECT dataset_id FROM datasets WHERE name = ?", [dataset]).fetchall()
        [(systems, inputs)] = con.execute("SELECT (SELECT count(*) FROM systems WHERE dataset_id = $d), "
                                          "(SELECT count(*) FROM inputs WHERE dataset_id = $d)", {"d": dataset_id}).fetchall()
        new = (systems or inputs) and not allow_new and con.execute(read_sql("preferences_new_ids"),
                                                       {"dataset_id": dataset_id}).fetchall()
        if new:
            raise NewIdsError(dataset, [(n, f"{file}:{line}") for part, n, line in new if part == "system"],
                              [(n, f"{file}:{line}") for part, n, line in new if part == "input"])
        con.execute(statements("preferences_votes")["systems"] if read.sha256 else    # (read by DuckDB)
                    read_sql("preferences_insert_systems"), {"dataset_id": dataset_id})
        if read.own_inputs and not inputs:      # every vote its own input, none stored: nothing to merge
            inserted, replaced = _insert_votes(con, dataset_id, read.rows, replicate)
        else:
            con.execute(read_sql("preferences_insert_inputs"), {"dataset_id": dataset_id})
            inserted, replaced = _merge(con, dataset_id, file, replace, read.rows, replicate)
        attributes_changed = bool(read.lengths) and _store_lengths(con, dataset, read.lengths, file, replace)
        left_out = read.left_out
        report = LoadReport(file, read.rows, inserted, replaced, f"{read.rows} preferences" + (
            f"; {len(left_out)} null preference(s) left out (line {left_out[0]}"
            + (f" and {len(left_out) - 1} more)" if len(left_out) > 1 else ")") if left_out else ""))
        if report.changed or attributes_changed:
            con.execute("INSERT INTO ingests (dataset_id, format, file, sha256, options, rows, inserted, replaced, "
                        "command) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        [dataset_id, FORMAT, file, read.sha256 or sha256(path),
                         json.dumps(_options(read.layout, judge, replicate)), read.rows, inserted, replaced,
                         command if command is not None else wh.command_line])
        if before_commit is not None:
            before_commit()
        con.commit()
    except BaseException:
        try:
            con.rollback()
        except Exception:  # noqa: BLE001 - never hide the original error behind this one
            pass
        raise
    finally:
        if read.sha256:
            from metaeval.ingest import preferences_staged

            preferences_staged.drop(con)
        else:
            con.unregister("_staged_preferences")
    return report


@dataclass
class _Read:
    """A file's preferences staged as ``_staged_preferences``: how many, their layout, the file's
    sha256 (None: not computed, read by the Python reader), an AlpacaEval file's lengths and the
    lines of its null preferences; ``own_inputs``: every row its own input, ``vote-<line>``, on
    consecutive lines (an arena vote table without question_id, read by DuckDB)."""
    rows: int
    layout: str
    sha256: str | None = None
    lengths: list = field(default_factory=list)
    left_out: list = field(default_factory=list)
    own_inputs: bool = False


def _staged(con, path: Path, judge: str | None, replicate: int = 0) -> _Read:
    """``path``'s preferences as the view or table ``_staged_preferences`` of ``con``: read by
    DuckDB where it vouches for the file (:mod:`metaeval.ingest.preferences_staged`), else by
    :func:`parse`, whose errors name the file, line and field (and :func:`_check_runs`'s, once the
    rows without a run number are given ``replicate``)."""
    from metaeval.ingest import preferences_staged
    from metaeval.ingest.table_staged import Unsure

    try:
        rows, layout, digest, own_inputs = preferences_staged.stage(con, path, judge, _check_native_columns)
        return _Read(rows, layout, digest, own_inputs=own_inputs)
    except Unsure:
        pass
    rows = parse(path, judge)
    _check_runs(str(path), rows, replicate)
    con.register("_staged_preferences", rows)
    return _Read(len(rows), rows.attrs["format"], None, rows.attrs["lengths"], rows.attrs["left_out"])


def _check_runs(file: str, rows, replicate: int) -> None:
    """A row without a run number is run ``replicate`` (``--replicate``, default 0): refused, naming
    both lines, when the file gives that run of the same judge, item and order explicitly too (the
    reader's own check, before the default, sees two different keys)."""
    runs = rows["replicate"]
    if runs.isna().all() or runs.notna().all():
        return
    key = ["input", "system_a", "system_b", "judge", "presentation", "run"]
    keyed = rows.assign(run=runs.fillna(replicate).astype("int64"))
    again = keyed[keyed.duplicated(key, keep="first")]
    if len(again):
        second = again.iloc[0]
        first = keyed[(keyed[key] == second[key]).all(axis=1)].iloc[0]
        raise InputError(file, int(second["line"]), "replicate", f"judge {second['judge']!r} already judged input "
                         f"{second['input']!r}, {second['system_a']} vs {second['system_b']}, with "
                         f"{_shown_first(second['system_a'], second['system_b'], second['presentation'])} shown "
                         f"first, on line {int(first['line'])} (run {int(second['run'])}: a row that gives no run "
                         f"number is run {replicate}, --replicate)")


def _insert_votes(con, dataset_id: int, rows: int, replicate: int) -> tuple[int, int]:
    """The staged votes, each its own input (:attr:`_Read.own_inputs`), into a dataset with no inputs:
    the inputs and preferences :func:`_merge` would store, with the same ids
    (schema/preferences_votes.sql); every vote inserted, none replaced."""
    sql = statements("preferences_votes")
    [(base,)] = con.execute(sql["base"], {"n": rows}).fetchall()
    params = {"dataset_id": dataset_id, "base": base}
    con.execute(sql["inputs"], params)
    con.execute(sql["preferences"], {**params, "replicate": replicate})
    return rows, 0


def _merge(con, dataset_id: int, file: str, replace: bool, rows: int, replicate: int = 0) -> tuple[int, int]:
    """The staged preferences merged into the dataset's (whose systems and inputs are stored):
    how many inserted, how many replaced; the errors of :func:`_check_stored`."""
    params = {"dataset_id": dataset_id}
    if not con.execute("SELECT EXISTS (SELECT 1 FROM preferences WHERE dataset_id = $dataset_id)",
                       params).fetchall()[0][0]:
        con.execute(read_sql("preferences_insert_first"), {**params, "replicate": replicate})
        return rows, 0
    con.execute(read_sql("preferences_resolved"), {**params, "replicate": replicate})
    _check_stored(con, file, replace)
    [(inserted, replaced)] = con.execute(
        "SELECT count(*) FILTER (WHERE stored_winner IS NULL), count(*) FILTER (WHERE changed) "
        "FROM _resolved_preferences").fetchall()
    con.execute(read_sql("preferences_replace"), params)
    con.execute(read_sql("preferences_insert"), params)
    con.execute("DROP TABLE _resolved_preferences")
    return inserted, replaced


def _check_stored(con, file: str, replace: bool) -> None:
    """A judge stored with another kind (never replaced), and, without ``replace``, winners that
    differ from the stored ones: errors naming the line."""
    kind = con.execute("SELECT line, judge, kind, stored_kind FROM _resolved_preferences "
                       "WHERE stored_kind IS NOT NULL AND stored_kind <> kind ORDER BY line LIMIT 1").fetchall()
    if kind:
        line, judge, given, stored = kind[0]
        raise InputError(file, int(line), "kind", f"judge {judge!r} is stored as {stored}, given here as {given}; "
                         "nothing was written (a judge is a model or a person: rename one of them)")
    if replace:
        return
    rows = con.execute("SELECT line, judge, i.name, sa.name, sb.name, presentation, winner, stored_winner, "
                       "probability, stored_probability FROM _resolved_preferences AS r "
                       "JOIN inputs AS i ON i.input_id = r.input_id JOIN systems AS sa ON sa.system_id = r.system_a_id "
                       "JOIN systems AS sb ON sb.system_id = r.system_b_id WHERE conflict ORDER BY line").fetchall()
    if rows:
        raise ConflictError([f"{file}:{line}: judge {j} input {i} {a} vs {b} ({o}): "
                             + (f"winner {w}, stored {s}" if w != s else f"probability {p:.12g}, stored {q:.12g}")
                             for line, j, i, a, b, o, w, s, p, q in rows[:10]], len(rows))


def _options(kind: str, judge: str | None, replicate: int = 0) -> dict:
    """The ingest's recorded options: none for a native file of run 0 (as before the other formats)."""
    run = {"replicate": replicate} if replicate else {}
    return run if kind == "native" and judge is None else {"format": kind, **({"judge": judge} if judge else {}), **run}


def _store_lengths(con, dataset: str, given: list, file: str, replace: bool) -> bool:
    """The outputs' lengths as the cell attribute ``output_length`` and the instructions' places as
    the input attribute ``instruction_index`` (an AlpacaEval file's); a stored value that differs
    is an error naming the line unless ``replace``. Whether any row changed."""
    import pandas as pd

    lengths = pd.DataFrame(given, columns=["system", "input", "value", "line", "attribute"])
    if lengths.empty:
        return False
    keys = ["system", "input", "attribute"]
    first = lengths.drop_duplicates(keys, keep="first")
    clash = lengths.merge(first, on=keys, suffixes=("", "_first"))
    clash = clash[clash["value"] != clash["value_first"]]
    if len(clash):
        r = clash.iloc[0]
        what = (f"{r['system']}'s output for input {r['input']} is {r['value']} long"
                if r["attribute"] == "output_length" else f"input {r['input']} is record {r['value']} of its pair")
        raise InputError(file, int(r["line"]), r["attribute"], f"{what} here but {r['value_first']} on line "
                         f"{int(r['line_first'])}")
    staged = first.assign(value=first["value"].astype(str))[["system", "input", "value", "line", "attribute"]]
    con.register("_staged_lengths", staged)
    try:
        params = {"dataset": dataset}
        stored = con.execute(read_sql("preferences_lengths_clash"), params).fetchall()
        if stored and not replace:
            line, system, item, value, old, attribute = stored[0]
            raise ConflictError([f"{file}:{line}: {attribute} of {system or 'the input'} on {item}: {value}, "
                                 f"stored {old}"], len(stored))
        changed = len(con.execute(read_sql("preferences_lengths_store"), params).fetchall())
    finally:
        con.unregister("_staged_lengths")
    return changed > 0
