"""Subsets of cells (attributes, issue 26): :class:`Subset`, the one type of ``where`` from the
command line to the SQL, and its label (the rows' ``subset`` column). Light: the registry's
options make one for every family with a ``where`` (:meth:`metaeval.runs.engine.options.Option.value`)
before anything is read, so this module imports neither numpy nor pandas
(:mod:`metaeval.runs.engine.selection` re-exports it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from metaeval.errors import WarehouseError

#: The ``subset`` of a result computed on every cell.
EVERY_CELL = ""
#: The joiner of the conditions of a subset label, and the value of a ``--by`` macro average.
SUBSET_JOINER = " & "
MACRO_VALUE = "*"


class Subset(tuple):
    """A subset of cells: its canonical conditions ``((attribute, value), ...)`` (sorted,
    deduplicated, combined with AND; ``()`` = every cell), the one type of ``where`` from the
    command line to the SQL. Made (:func:`parse_where`) from ``ATTR=VALUE`` strings (or one
    such string), ``(attribute, value)`` pairs, a mapping ``{attribute: value}`` or another
    Subset; it *is* the tuple of its pairs (equal to it, stored and hashed as it), and its
    :attr:`label` is the ``subset`` column of the rows computed on it."""

    __slots__ = ()

    def __new__(cls, conditions: Iterable[str | tuple[str, str]] | Mapping[str, str] | str = ()):
        if type(conditions) is cls:
            return conditions
        if isinstance(conditions, str):
            conditions = [conditions]
        elif isinstance(conditions, Mapping):
            conditions = list(conditions.items())
        return super().__new__(cls, _canonical(conditions))

    @property
    def label(self) -> str:
        """'' for every cell, else ``attr=value`` joined with `` & `` in canonical order."""
        return SUBSET_JOINER.join(f"{a}={v}" for a, v in self)


def parse_where(conditions: Iterable[str | tuple[str, str]] | Mapping[str, str] | str) -> Subset:
    """``["split=test", "source=xsum"]`` -> ``(("source", "xsum"), ("split", "test"))``: the
    canonical conditions of a subset (:class:`Subset`; sorted, deduplicated; a pair is taken as it
    is). Each is ``ATTR=VALUE`` split at the first ``=`` (a value may hold ``=``), both sides
    stripped and non-empty; one attribute given two values (an empty subset: a cell has one value
    of each attribute) is refused."""
    return Subset(conditions)


def _canonical(conditions: Iterable[str | tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    pairs = set()
    for c in conditions:
        if isinstance(c, str):
            attribute, eq, value = c.partition("=")
            attribute, value = attribute.strip(), value.strip()
            if not eq or not attribute or not value:
                raise WarehouseError(f"a subset condition is ATTR=VALUE (e.g. split=test), not {c!r}")
        else:
            attribute, value = c
            if not isinstance(attribute, str) or not isinstance(value, str) or not attribute or not value:
                raise WarehouseError(f"a subset condition is a pair of non-empty strings (attribute, value), not {c!r}")
        if SUBSET_JOINER.strip() in attribute or MACRO_VALUE == value:
            raise WarehouseError(f"a subset condition cannot use {SUBSET_JOINER.strip()!r} in its attribute nor "
                                 f"the value {MACRO_VALUE!r} (they mark joined conditions and macro averages): {c!r}")
        pairs.add((attribute, value))
    out = tuple(sorted(pairs))
    attributes = [a for a, _ in out]
    twice = sorted({a for a in attributes if attributes.count(a) > 1})
    if twice:
        given = [f"{a}={v}" for a, v in out if a == twice[0]]
        raise WarehouseError(f"attribute {twice[0]!r} is given several values ({', '.join(given)}); the conditions "
                             "are combined with AND and a cell has one value: the subset would be empty")
    return out


def subset_label(where: Iterable[str | tuple[str, str]] | Mapping[str, str] | str) -> str:
    """The ``subset`` column of a result computed on the cells ``where`` selects
    (:attr:`Subset.label`): '' for every cell, else ``attr=value`` joined with `` & ``."""
    return Subset(where).label
