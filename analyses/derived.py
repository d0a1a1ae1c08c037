"""Human scores derived from stored ones: the formulas of the seed papers, on arrays.

``metaeval derive`` (:mod:`metaeval.ingest.derived`) stores the result as a new human measure;
this module is the arithmetic only. Every function takes the sources stacked on axis 0 (one
row per source measure, any shape after it), returns the derived values with NaN wherever a
source is NaN, and refuses a value outside the formula's domain (:class:`DomainError`, whose
``index`` locates the first offending value so the caller can name its cell).

- ``grade`` (Graham 2015, §2): DUC's linguistic-quality ratings A..E, stored as 5..1 (5 = A, the
  best), as percentages: A = 100, B = 75, C = 50, D = 25, E = 0, i.e. ``25 (v - 1)``.
- ``mean``: the arithmetic mean of the sources, ``(x_1 + ... + x_n) / n`` -- the mean linguistic
  quality (MLQ) over the criteria, or Graham's "Human Assessment Score" ``(CS + MLQ) / 2``.
- ``geometric``: ``(x_1 ... x_n)^(1/n)``, for values >= 0 (Graham 2015, Table 4).
- ``harmonic``: ``n / (1/x_1 + ... + 1/x_n)``, for values >= 0; 0 when any source is 0 (its
  limit) (Graham 2015, Table 4). For values >= 0: harmonic <= geometric <= arithmetic.
- ``coverage`` (Graham 2015, Eq. 1; DUC-2004): ``CS = |matching PUs| * E / |MUs|`` from three
  sources in that order: the number of matching peer units, the annotator's coverage estimate E,
  and the number of model units (> 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: formula -> (number of sources: an int, or None for two or more), what it computes
FORMULAS: dict[str, tuple[int | None, str]] = {
    "grade": (1, "25 * (v - 1): A..E stored as 5..1 -> 100, 75, 50, 25, 0"),
    "mean": (None, "(x_1 + ... + x_n) / n"),
    "geometric": (None, "(x_1 * ... * x_n) ** (1 / n), x >= 0"),
    "harmonic": (None, "n / (1/x_1 + ... + 1/x_n), x >= 0 (0 if any x is 0)"),
    "coverage": (3, "matching_PUs * E / MUs (Graham 2015 Eq. 1), MUs > 0"),
}
GRADES = (1.0, 2.0, 3.0, 4.0, 5.0)


class DomainError(ValueError):
    """A source value outside the formula's domain: ``source`` (its position among the sources),
    ``index`` (its position in the source's array) and ``value``."""

    def __init__(self, message: str, source: int, index: tuple[int, ...], value: float):
        super().__init__(message)
        self.source, self.index, self.value = source, index, value


@dataclass(frozen=True)
class Derived:
    """The derived values and the formula that made them (as recorded with the new measure)."""

    values: np.ndarray
    formula: str
    expression: str


def check_sources(formula: str, n_sources: int) -> None:
    """Refuse an unknown formula or a wrong number of sources (ValueError)."""
    if formula not in FORMULAS:
        raise ValueError(f"unknown formula {formula!r}; choose from {', '.join(FORMULAS)}")
    wanted = FORMULAS[formula][0]
    if wanted is None and n_sources < 2:
        raise ValueError(f"{formula} combines two or more measures; got {n_sources}")
    if wanted is not None and n_sources != wanted:
        raise ValueError(f"{formula} takes exactly {wanted} measure{'s' if wanted > 1 else ''}; got {n_sources}")


def _first_bad(stack: np.ndarray, bad: np.ndarray, what: str, formula: str) -> None:
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        value = float(stack[where])
        raise DomainError(f"{formula} needs {what}; got {value:g}", where[0], where[1:], value)


def derive(formula: str, sources) -> Derived:
    """The ``formula`` of the ``sources`` (stacked on axis 0), NaN where any source is NaN."""
    stack = np.asarray(sources, dtype=float)
    check_sources(formula, stack.shape[0])
    present = ~np.isnan(stack)
    with np.errstate(invalid="ignore", divide="ignore"):
        if formula == "grade":
            _first_bad(stack, present & ~np.isin(stack, GRADES), "a grade stored as 1..5 (E..A)", formula)
            values = 25.0 * (stack[0] - 1.0)
        elif formula == "mean":
            values = stack.mean(axis=0)
        elif formula in ("geometric", "harmonic"):
            _first_bad(stack, present & (stack < 0), "values >= 0", formula)
            if formula == "geometric":
                values = np.exp(np.log(stack).mean(axis=0))
            else:
                values = np.where((stack == 0).any(axis=0), 0.0, stack.shape[0] / (1.0 / stack).sum(axis=0))
        else:  # coverage
            _first_bad(stack, present & (np.arange(3)[:, None] == 2).reshape((3,) + (1,) * (stack.ndim - 1))
                       & (stack <= 0), "a number of model units > 0", formula)
            values = stack[0] * stack[1] / stack[2]
    values = np.where(present.all(axis=0), values, np.nan)
    return Derived(values=values, formula=formula, expression=FORMULAS[formula][1])
