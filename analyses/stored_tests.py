"""The conclusion layer on stored tests: a typed reading of test rows read back from a warehouse,
and every verdict drawn from them at any alpha -- by winners, evaluate, compare, the report and
every family's ``present``. The rules are :mod:`metaeval.analyses.conclusions`'; this module reads
stored rows into the quantities those rules take, so no caller reads a p-value against alpha or a
resolution out of a conventions JSON on its own. Pure (no database): the rows come from ``runs/``
(:func:`metaeval.runs.stored_tests.latest`, which finds a family's tests through its
``tests_table``).

- :class:`StoredTests`: per row, p and p_adjusted, k (the resamples drawn), n_valid (the valid
  ones), the family key and size, the stored alpha, whether the row is sequential and its stored
  (certified) decision; for the set, the p-value ``formula``, the ``correction`` and the
  ``alternative``. :meth:`StoredTests.resolutions` (rule 2 per family), :meth:`StoredTests.notes`
  (rule 5), :meth:`StoredTests.significant` (rules 2-4 at any alpha), :meth:`StoredTests.floors`
  (rule 8's floors).
- :func:`pvalue_formula`: how each test method of ``compare`` forms its p-value.
- :func:`row_resolution`: the :class:`~metaeval.analyses.stats.resolution.Resolution` a stored row
  records (typed columns, or a conventions dict), :func:`row_note` its line, and :func:`recorded_unresolvable` /
  :func:`not_a_finding`: the lines a stored ranking recorded and the one way they are said.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from metaeval.analyses import conclusions
from metaeval.analyses.stats.resolution import Resolution, correction_threshold, family_resolution

if TYPE_CHECKING:
    import pandas as pd

#: mt-metrics-eval's permutation of system scores (its p = count / k): analyses.stats.hypothesis.MTME_SYSTEMS
_MTME_SYSTEMS = "perm-systems-mtme"
#: How the judges' tests (judge_tests.test) form their p-values: an exact McNemar test, a paired permutation.
JUDGE_TEST_FORMULAS = {"mcnemar": "parametric", "permutation": "add-one"}
#: The columns a family of compare's rows is keyed by, per correction group (``metric``: one per metric_a).
COMPARE_FAMILY = ("level", "coefficient")


def pvalue_formula(method: str) -> str:
    """How a ``compare`` test method forms its p-value (``analyses.stats.resolution.PVALUE_FORMULAS``):
    ``parametric`` (williams), ``add-one`` (the ``perm-*`` permutation tests), ``count`` (the paired
    bootstrap tests and mt-metrics-eval's permutation of system scores, count / k)."""
    if method == _MTME_SYSTEMS:
        return "count"
    return "parametric" if method == "williams" else "add-one" if method.startswith("perm-") else "count"


def compare_family_keys(group: str) -> tuple[str, ...]:
    """The columns of a compare correction family: level and coefficient, and metric_a for the group ``metric``."""
    return COMPARE_FAMILY + (("metric_a",) if group == "metric" else ())


@dataclass(frozen=True)
class StoredTests:
    """Stored test rows as the conclusion layer reads them (arrays in the rows' order).

    ``p``, ``p_adjusted``: NaN where undefined; ``k``: the resamples each drew (NaN: unknown or an
    exact test); ``n_valid``: the valid ones (NaN: every one, or not said); ``family``: each row's
    family key (the values of ``family_keys``); ``family_size``: the defined tests corrected
    together (NaN: not said, e.g. correction none); ``alpha``: the level the row was stored at;
    ``sequential``: a sequential test (its decision certified by its own procedure);
    ``certified``: its stored decision."""

    p: np.ndarray
    p_adjusted: np.ndarray
    k: np.ndarray
    n_valid: np.ndarray
    family: tuple[tuple, ...]
    family_size: np.ndarray
    alpha: np.ndarray
    sequential: np.ndarray
    certified: np.ndarray
    formula: str
    correction: str
    family_keys: tuple[str, ...] = ()
    alternative: str | None = None

    @classmethod
    def from_frame(cls, rows: pd.DataFrame, *, formula: str, correction: str | None = None,
                   family_keys: Sequence[str] = (), alternative: str | None = None,
                   columns: tuple[str, str] = ("p_value", "p_adjusted"),
                   n_valid: Sequence | None = None) -> StoredTests:
        """The reading of ``rows`` (a stored table's rows): ``columns`` the raw and corrected p;
        k from ``k_used`` where any row says it, else ``k``; n_valid from ``n_valid`` (given, else the
        column, else the conventions' ``n_valid_samples``); ``correction`` (None: the rows' column,
        its first value); the family of each row the values of ``family_keys``."""
        n = len(rows)
        raw, adjusted = columns
        kcol = "k_used" if "k_used" in rows and rows["k_used"].notna().any() else "k"
        if n_valid is None:
            n_valid = list(rows["n_valid"]) if "n_valid" in rows else conventions_n_valid(rows)
        if correction is None:
            correction = str(rows["correction"].iloc[0]) if "correction" in rows and n else "none"
        keys = tuple(family_keys)
        family = tuple(zip(*(rows[c] for c in keys))) if keys and n else ((),) * n
        sequential = rows["risk"].notna().to_numpy() if "risk" in rows else np.zeros(n, bool)
        certified = (rows["significant"].fillna(False).astype(bool).to_numpy() if "significant" in rows
                     else np.zeros(n, bool))
        return cls(p=_floats(rows[raw] if raw in rows else None, n),
                   p_adjusted=_floats(rows[adjusted] if adjusted in rows else None, n),
                   k=_floats(rows[kcol] if kcol in rows else None, n), n_valid=_floats(n_valid, n), family=family,
                   family_size=_floats(rows["family_size"] if "family_size" in rows else None, n),
                   alpha=_floats(rows["alpha"] if "alpha" in rows else None, n), sequential=sequential,
                   certified=certified, formula=formula, correction=correction, family_keys=keys,
                   alternative=alternative)

    def __len__(self) -> int:
        return self.p.size

    def families(self) -> dict[tuple, np.ndarray]:
        """Family key -> the positions of its rows, in the order the families first appear."""
        out: dict[tuple, list[int]] = {}
        for i, key in enumerate(self.family):
            out.setdefault(tuple(key), []).append(i)
        return {key: np.array(rows, dtype=int) for key, rows in out.items()}

    def resolutions(self, alpha: float) -> list[tuple[tuple, np.ndarray, Resolution | None]]:
        """Rule 2 per family: (key, positions, Resolution) with the most resamples any of its tests
        drew and its largest recorded size; None when the family says nothing to decide on (no
        defined test under a correction, or a resampling test without k)."""
        out = []
        for key, where in self.families().items():
            k, size = _max_or_none(self.k[where]), _max_or_none(self.family_size[where])
            out.append((key, where, resolution_of(self.formula, k, self.correction, size, alpha)))
        return out

    def unresolvable(self, alpha: float) -> list[tuple[tuple, np.ndarray, Resolution]]:
        """The families of :meth:`resolutions` that cannot reach significance at ``alpha``."""
        return [(key, where, r) for key, where, r in self.resolutions(alpha) if r is not None and not r.resolvable]

    def notes(self, alpha: float) -> list[str]:
        """Rule 5: one line per family that cannot resolve, each once (``system level, kendall: ...``
        for a compare family keyed by level and coefficient)."""
        lines: list[str] = []
        for key, _, r in self.unresolvable(alpha):
            where = (f"{key[0]} level, {key[1]}" if self.family_keys[:2] == COMPARE_FAMILY
                     else ", ".join(map(str, key)))
            line = f"{where}: {r.text()}" if where else r.text()
            if line not in lines:
                lines.append(line)
        return lines

    def own_floor_reaches(self, alpha: float) -> np.ndarray:
        """Rule 3 on the stored rows (a ``count`` p = count / n_valid says no more than 1/n_valid):
        whether each test's own floor reaches its family's threshold; every row passes for the other
        formulas, where n_valid is not said, and a sequential row (certified by its own procedure)."""
        if self.formula != "count":
            return np.ones(len(self), bool)
        out = np.ones(len(self), bool)
        for i, (nv, m) in enumerate(zip(self.n_valid, self.family_size)):
            if not np.isnan(nv):
                size = 1 if np.isnan(m) else max(int(m), 1)
                out[i] = conclusions.pvalue_floor(self.formula, None, int(nv)) <= correction_threshold(
                    self.correction, size, alpha)
        return out | self.sequential

    def significant(self, alpha: float) -> np.ndarray:
        """Rules 2-4 at ``alpha`` (stored rows read again at another level, as winners does): p_adjusted
        <= alpha for a fixed-k test; a sequential test only when its certified decision was made at
        this alpha (an undecided row can show p_adjusted <= alpha and is not significant); never in a
        family that cannot resolve at ``alpha``, nor a test whose own floor cannot reach its
        threshold (a paired bootstrap p of 0 says only p < 1/k)."""
        decided = conclusions.rejects(self.p_adjusted, alpha)
        at_alpha = np.isclose(self.alpha, alpha, rtol=0, atol=1e-12)
        decided = np.where(self.sequential, self.certified & at_alpha, decided)
        for _, where, _ in self.unresolvable(alpha):
            decided[where] = False
        return decided & self.own_floor_reaches(alpha)

    def floors(self) -> tuple[np.ndarray, np.ndarray]:
        """Rule 8's floors per row: (raw floor, adjusted floor) at which :func:`conclusions.p_text`
        prints p and p_adjusted (0 for exact tests and where k is unknown)."""
        return conclusions.p_floors(self.formula, list(_none_for_nan(self.k)), list(_none_for_nan(self.n_valid)),
                                    self.correction, list(_none_for_nan(self.family_size)))


def resolution_of(formula: str, k: int | None, correction: str, family_size: int | None,
                  alpha: float) -> Resolution | None:
    """Rule 2 of a family of ``family_size`` tests whose p-values take ``formula`` with ``k``
    resamples (the most any of them drew) under ``correction``; None without a defined test
    (no size under a correction) or, for a resampling test, without k."""
    if not family_size and correction != "none":
        return None
    if formula != "parametric" and not k:
        return None
    return family_resolution(formula, k if formula != "parametric" else None, correction, int(family_size or 1), alpha)


def row_resolution(row, correction: str | None = None, alpha: float | None = None) -> Resolution | dict | None:
    """The resolution a stored test row records: its typed columns (``pvalue_formula``,
    ``family_tests``, ``smallest_p``, ``needed_p``, ``resolvable``, ``k``, ``k_needed``; span-eval's)
    as a :class:`Resolution`, else its conventions' ``resolution`` (a dict, as
    :meth:`Resolution.as_dict` wrote it); None when it records none."""
    get = row.get if hasattr(row, "get") else (lambda c, d=None: getattr(row, c, d))
    formula = get("pvalue_formula")
    if isinstance(formula, str) and conclusions.defined_value(get("needed_p")):
        corr = correction if correction is not None else str(get("correction"))
        level = float(alpha if alpha is not None else get("alpha"))
        k, needed = get("k"), get("k_needed")
        return Resolution(formula, None if not conclusions.defined_value(k) else int(k), corr, int(get("family_tests")),
                          level, float(get("smallest_p")), float(get("needed_p")), bool(get("resolvable")),
                          None if not conclusions.defined_value(needed) else int(needed))
    conventions = get("conventions")
    if isinstance(conventions, str):
        conventions = json.loads(conventions)
    return (conventions or {}).get("resolution") if isinstance(conventions, dict) else None


def row_note(row, correction: str | None = None, alpha: float | None = None, what: str = "") -> str | None:
    """The one "cannot resolve" line (:func:`conclusions.resolution_note`) of the resolution a
    stored test row records (:func:`row_resolution`), at the row's ``correction`` and ``alpha``
    unless given; None when it resolves or records none."""
    get = row.get if hasattr(row, "get") else (lambda c, d=None: getattr(row, c, d))
    corr = correction if correction is not None else str(get("correction"))
    level = float(alpha if alpha is not None else get("alpha", conclusions.DEFAULT_ALPHA))
    return conclusions.resolution_note(row_resolution(row, corr, level), corr, level, what)


def recorded_unresolvable(conventions: Iterable) -> list[str]:
    """The "cannot resolve" lines stored rankings recorded (their conventions' ``unresolvable``,
    written by winners and evaluate from :meth:`StoredTests.notes`), each once, in order."""
    lines: list[str] = []
    for c in conventions:
        c = json.loads(c) if isinstance(c, str) else (c or {})
        for line in c.get("unresolvable") or []:
            if line not in lines:
                lines.append(line)
    return lines


def not_a_finding(line: str, consequence: str = "") -> str:
    """The one way a family that cannot resolve is said beside a table (``not a finding: ...``)."""
    return f"not a finding: {line}" + (f"; {consequence}" if consequence else "")


def _floats(values, n: int) -> np.ndarray:
    if values is None:
        return np.full(n, np.nan)
    return np.array([float(v) if conclusions.defined_value(v) else np.nan for v in values], dtype=np.float64)


def _none_for_nan(values: np.ndarray) -> list:
    return [None if np.isnan(v) else v for v in values]


def _max_or_none(values: np.ndarray) -> int | None:
    known = values[~np.isnan(values)]
    return int(known.max()) if known.size else None


def conventions_n_valid(rows) -> list:
    """Each stored row's valid resamples as its conventions say (``n_valid_samples``; None if not said)."""
    if "conventions" not in rows:
        return [None] * len(rows)
    return [(json.loads(c) if isinstance(c, str) else (c or {})).get("n_valid_samples") for c in rows["conventions"]]
