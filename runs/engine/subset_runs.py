"""The subsets :meth:`Family.run <metaeval.runs.engine.families.Family.run>` applies (issue 44 item 4):
``--where`` / ``--by`` of the families reading votes (``leaderboard``, ``lc-winrate``,
``judge-leaderboard``, ``judge-diagnostics``), as FastChat's per-category arena leaderboards.

A family declares them as options of role ``subset`` that restrict a stored table
(:attr:`~metaeval.runs.engine.options.Option.restricts`: :data:`~metaeval.runs.engine.options.VOTES_WHERE`,
:data:`~metaeval.runs.engine.options.VOTES_BY`); its ``compute`` never sees them. :func:`run` checks
every subset first (the attribute and its values known, no subset empty), then runs ``compute``
once per subset with the table restricted to the subset's rows (:func:`restricted`: a temporary
view of the same name over them, so every query of the family reads only them: its rows are those
of a warehouse holding only that subset's votes) and its rows labelled
(:func:`metaeval.runs.engine.persist.of_subset`: the ``subset`` column, the label in the fingerprint, the
signature's ``subset:`` field). An item (input, pair of systems) is in a subset when the cells of
both its systems for its input hold every condition, as ``judges --where`` says
(:func:`metaeval.runs.votes.judges._subsets`); an input-level attribute (a category) holds for every
system's cell. ``--by ATTR``: one subset per value, all in one transaction (a refusal in one
leaves nothing written; an interruption keeps the values finished, each a finished run), and the
correction across the values said (:func:`across`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager

from metaeval.errors import Argument, Message, WarehouseError

#: What the conventions of a subset's rows say of it.
CONVENTION = ("only the votes on the items (input, pair of systems) whose input's cells of both systems hold every "
              "condition of the subset are read: the rows are those of a warehouse holding only these votes")
_ITEMS, _VIEW = "_subset_items", "preferences"


class Subsets(dict):
    """``{subset label: the family's outcome on it}`` (the values of ``by`` in order), what
    ``Family.run`` returns when a subset is given; ``votes``: each subset's stored verdicts (of
    ``total``); ``note``: the correction across the subsets ('' for one)."""

    def __init__(self, parts: dict, *, by: str | None, votes: dict, total: int, note: str):
        super().__init__(parts)
        self.by, self.votes, self.total, self.note = by, votes, total, note


def run(family, wh, params, applied: list[str]):
    """``family.compute`` of ``params`` (its :class:`~metaeval.runs.engine.families.Parameters`) once per
    subset its ``applied`` options give (none given: once on every row, as before); a
    :class:`Subsets` (module docstring)."""
    from metaeval.runs.engine import persist

    where, by = _given(family, params, applied)
    rest = {k: v for k, v in params.keywords().items() if k not in applied}
    if not where and by is None:
        return family.compute(wh, **rest)
    dataset = params["dataset"]
    subsets = _subsets(wh, dataset, where, by)
    items, total = _items(wh, dataset)
    kept = {}
    for subset, keep in zip(subsets, _memberships(wh, dataset, subsets, items)):   # every check before a write
        if not keep.any():
            raise WarehouseError(Message(f"the subset {subset.label} of dataset {dataset!r} holds no vote (no item "
                                         "whose input's cells of both systems hold it): choose another ",
                                         Argument("where" if by is None else "by")))
        kept[subset.label] = [row for row, k in zip(items, keep.tolist()) if k]
    note = across(family, params, by, len(kept))
    said = {"subset_votes": CONVENTION, **({"by": by, "across_subsets": note} if by is not None else {})}
    parts = {}
    one = by is not None and len(kept) > 1
    if one:
        wh.con.begin()
    try:
        for label, rows in kept.items():
            with restricted(wh, rows), persist.of_subset(label, {"subset": label, **said}):
                parts[label] = family.compute(wh, **rest)
        if one:
            wh.con.commit()
    except KeyboardInterrupt:            # the values finished are kept (finished runs), as a run's rows are
        if one:
            _end(wh, commit=True)
        raise
    except BaseException:                # a refusal or an error in one value: nothing of the command is written
        if one:
            _end(wh, commit=False)
        raise
    votes = {label: sum(r[-1] for r in rows) for label, rows in kept.items()}
    return Subsets(parts, by=by, votes=votes, total=total, note=note)


def _given(family, params, applied):
    """(the conditions, the attribute of ``by`` or None) of the applied options."""
    from metaeval.runs.engine.subset import Subset

    where, by = Subset(), None
    for name in applied:
        option = family.option(name)
        if option.kind == "where":
            where = Subset(params[name])
        elif params[name] is not None:
            by = params[name]
    return where, by


def _subsets(wh, dataset: str, where, by: str | None) -> list:
    """The subsets (:class:`~metaeval.runs.engine.subset.Subset`): ``where``, or ``where`` and each
    value of ``by``; an unknown attribute or value refused, naming the dataset's."""
    from metaeval import attributes
    from metaeval.runs.engine.subset import Subset

    wh.require_dataset(dataset)
    if attributes.SYSTEM_TYPE in dict(where) or by == attributes.SYSTEM_TYPE:
        raise WarehouseError(Message(Argument("where", [f"{attributes.SYSTEM_TYPE}=..."]), " is not offered here: a "
                                     "subset of votes is a condition on their inputs' attributes"))
    for attribute, value in where:
        if value not in (values := wh.attribute_values(dataset, attribute)):
            raise WarehouseError(Message(Argument("where", [f"{attribute}={value}"]), f": attribute {attribute!r} of "
                                         f"dataset {dataset!r} never has the value {value!r}; its values: "
                                         f"{', '.join(values)}"))
    if by is None:
        return [where]
    if by in dict(where):
        raise WarehouseError(Message(Argument("by", by), " and ", Argument("where", placeholder=f"{by}=..."),
                                     " select the same attribute: give one of them"))
    return [Subset([*where, (by, v)]) for v in wh.attribute_values(dataset, by)]


def _items(wh, dataset: str) -> tuple[list[tuple], int]:
    """The stored items of ``dataset``'s votes: (input, system_a, system_b, dataset_id, input_id,
    system_a_id, system_b_id, verdicts), and the verdicts in all."""
    from metaeval import schema

    rows = wh.con.execute(schema.statements("subset_votes")["items"], {"dataset": dataset}).fetchall()
    return rows, sum(r[-1] for r in rows)


def _memberships(wh, dataset: str, subsets: list, items: list[tuple]) -> list:
    """For each subset, whether each item is in it (a bool array): the cells of both its systems
    for its input hold every condition (an input-level value holds for every system's cell; a
    cell's own overrides it). Each attribute's values are read once, at the items' cells only."""
    import numpy as np

    systems = sorted({r[1] for r in items} | {r[2] for r in items})
    inputs = sorted({r[0] for r in items})
    row, col = {s: i for i, s in enumerate(systems)}, {x: j for j, x in enumerate(inputs)}
    at = np.array([col[r[0]] for r in items], dtype=np.int64)
    sides = [np.array([row[r[k]] for r in items], dtype=np.int64) for k in (1, 2)]
    values = {}                          # attribute -> (its value at each item's system_a cell, system_b cell)
    for attribute in sorted({a for subset in subsets for a, _ in subset}):
        grid = wh.attribute_labels(dataset, attribute, systems, inputs)
        values[attribute] = [grid[side, at] for side in sides]
    out = []
    for subset in subsets:
        keep = np.ones(len(items), dtype=bool)
        for attribute, value in subset:
            keep &= (values[attribute][0] == value) & (values[attribute][1] == value)
        out.append(keep)
    return out


@contextmanager
def restricted(wh, rows: list[tuple]):
    """Within: the table ``preferences`` of this connection is a temporary view of the stored
    votes of ``rows``' items only (and every other dataset's), which every query naming it reads."""
    from metaeval import schema
    from metaeval.runs.engine import persist

    sql = schema.statements("subset_votes")
    columns = list(zip(*(r[3:7] for r in rows)))
    names = ("dataset_id", "input_id", "system_a_id", "system_b_id")
    import numpy as np

    frame = persist.columns(len(rows), **{n: np.array(c, dtype=np.int64) for n, c in zip(names, columns)})
    wh.con.register("_subset_frame", frame)
    try:
        wh.con.execute(sql["items_table"])
    finally:
        wh.con.unregister("_subset_frame")
    catalog = wh.con.execute("SELECT current_database()").fetchall()[0][0]
    wh.con.execute(sql["restrict"].replace("$stored", f'"{catalog.replace(chr(34), chr(34) * 2)}".main.preferences'))
    try:
        yield
    finally:
        _drop(wh)


def _drop(wh) -> None:
    import duckdb

    try:
        wh.con.execute(f"DROP VIEW IF EXISTS temp.main.{_VIEW}")
        wh.con.execute(f"DROP TABLE IF EXISTS temp.main.{_ITEMS}")
    except duckdb.Error:                     # an aborted transaction: its rollback drops them
        pass


def _end(wh, *, commit: bool) -> None:
    """End the ``--by`` transaction: commit it (else, or when it cannot, roll it back)."""
    import duckdb

    try:
        if commit:
            wh.con.commit()
            return
    except duckdb.Error:
        pass
    try:
        wh.con.rollback()
    except duckdb.Error:
        pass
    _drop(wh)


def across(family, params, by: str | None, n: int) -> str:
    """What a reader of ``n`` tables, one per value of ``by``, must know of the correction across
    them: each table's tests (or intervals) are within it; none is made across the values, and the
    Bonferroni level that would hold across all ``n``. '' for one table."""
    if by is None or n < 2:
        return ""
    alpha = params.get("alpha")
    names = {o.name for o in family.options}
    level = "" if alpha is None else f" (Bonferroni over the {n}: alpha = {alpha / n:.4g})"
    if "correction" in names:
        return (f"{n} tables, one per value of {by}: each table's tests are corrected within it "
                f"({params['correction']} over its own tests, at alpha = {alpha:g}); no correction is made across "
                f"the {n} values, so a group, rank or verdict holds for its value alone; to claim one across the "
                f"values, read them at alpha / {n}{level}.")
    return (f"{n} tables, one per value of {by}: each table's intervals are at 1 - alpha within it, not simultaneous "
            f"across the {n} values: no correction is made across them{level}; no test compares the values.")


def present(outcome: Subsets, fmt: str, shown: Callable[[object, str], str]) -> str:
    """``outcome`` in ``fmt``: json, ``{subset: the family's json}``; csv, the family's tables one
    after the other (their rows carry the ``subset`` column; the header once when the same); the
    other formats each subset's heading (its votes) and table, then the correction across them."""
    import json

    if fmt == "json":
        return json.dumps({label: json.loads(shown(part, fmt)) for label, part in outcome.items()}, indent=1,
                          allow_nan=False) + "\n"
    texts = [shown(part, fmt) for part in outcome.values()]
    if fmt == "csv":
        heads = {t.split("\n", 1)[0] for t in texts}
        if len(heads) == 1:
            return texts[0] + "".join(t.split("\n", 1)[1] for t in texts[1:])
        return "\n".join(texts)
    out = []
    for (label, _), text in zip(outcome.items(), texts):
        out.append(f"Votes on the inputs with {label} ({outcome.votes[label]} of the {outcome.total} stored "
                   f"verdicts):\n{text}")
    if outcome.note:
        from metaeval.present import plain

        out.append(plain.wrap(outcome.note) + "\n")
    return "\n".join(out)
