"""What a Monte-Carlo procedure with k resamples can resolve: a floor on k, and whether a
family of corrected tests can reach significance at all.

A resampling p-value is a multiple of 1/(k+1) (``(1 + count) / (1 + k)``, the permutation tests)
or of 1/k (``count / k``, the paired bootstrap tests): no test can report a p-value below its
*resolution* (for ``count / k`` a p of 0 only says p < 1/k, and is read so here). A multiple-
comparison correction needs a raw p-value at or below a *threshold* for any rejection; when the
resolution is above it, nothing in the family can be significant whatever the data, and a
result that says "no metric beats another" is an artefact of k, not a finding.

- :func:`min_resamples` -- the floor on k for an interval or a test at level alpha;
- :func:`pvalue_resolution` -- the smallest positive p-value of a method at k resamples;
- :func:`correction_threshold` -- the largest raw p-value a correction can declare
  significant in the most favourable family of m tests;
- :func:`family_resolution` -- both together, with the k that would resolve the family.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .validation import alpha_iv, correction_iv

PURPOSES = ("interval", "test")
#: How a method's p-value is formed from its resamples.
PVALUE_FORMULAS = {"add-one": "(1 + count) / (1 + k)", "count": "count / k", "parametric": "closed form"}

#: The smallest attainable p-value of each formula, written out: add-one's with a count of 0; a
#: count's 0 means "below 1/k", so its resolution is 1/k (:func:`pvalue_resolution`).
_SMALLEST = {"add-one": "(1 + 0) / (1 + k)", "count": "1 / k"}

#: Relative slack for the floating-point quotients below (2 / 0.05 = 40 must give 40, not 41).
_SLACK = 1e-9


def min_resamples(alpha: float, purpose: str) -> int:
    """The smallest k a resampling ``purpose`` accepts at level ``alpha``.

    - ``"interval"`` (a percentile interval of coverage 1 - alpha): each tail must hold at least
      one resample beyond the endpoint, (k + 1) alpha / 2 >= 1, so k >= 2/alpha - 1
      (39 at alpha = 0.05; Davison & Hinkley 1997, section 5.2.3 choose k with (k + 1) alpha / 2
      an integer);
    - ``"test"``: the smallest p-value 1/(k + 1) must reach alpha, (k + 1) alpha >= 1, so
      k >= 1/alpha - 1 (19 at alpha = 0.05).

    Below the floor an interval is made of the extreme resamples (it can exclude its own point
    estimate) and a test cannot be significant, or is significant by the granularity of its
    p-value alone.
    """
    alpha = alpha_iv(alpha)
    if purpose not in PURPOSES:
        raise ValueError(f"`purpose` must be one of {list(PURPOSES)}; got {purpose!r}.")
    tails = 2.0 if purpose == "interval" else 1.0
    return max(1, math.ceil(tails / alpha * (1 - _SLACK)) - 1)


def pvalue_resolution(formula: str, k: int | None) -> float:
    """The smallest positive p-value a method reports with ``k`` resamples: 1/(k + 1) for
    ``"add-one"``, 1/k for ``"count"`` (its 0 means "below 1/k"), 0 for ``"parametric"``."""
    if formula not in PVALUE_FORMULAS:
        raise ValueError(f"`formula` must be one of {list(PVALUE_FORMULAS)}; got {formula!r}.")
    if formula == "parametric":
        return 0.0
    if k is None or isinstance(k, bool) or int(k) < 1:
        raise ValueError(f"`k` must be an integer >= 1 for a resampling p-value; got {k!r}.")
    return 1.0 / (int(k) + 1) if formula == "add-one" else 1.0 / int(k)


def correction_threshold(correction: str, m: int, alpha: float) -> float:
    """The largest raw p-value that ``correction`` can declare significant in a family of ``m``
    tests, in the most favourable case:

    - ``"none"``: alpha;
    - ``"bonferroni"`` and ``"holm"``: alpha / m (Holm's first step is Bonferroni's);
    - ``"bh"`` (Benjamini-Hochberg): alpha (reached when all m p-values are that small:
      p_(m) <= m alpha / m);
    - ``"by"`` (Benjamini-Yekutieli): alpha / c(m), c(m) = sum_{i <= m} 1/i.
    """
    correction, alpha = correction_iv(correction), alpha_iv(alpha)
    if isinstance(m, bool) or int(m) < 1:
        raise ValueError(f"`m` must be an integer >= 1; got {m!r}.")
    if correction == "by":
        return alpha / sum(1.0 / i for i in range(1, int(m) + 1))
    return alpha / int(m) if correction in ("bonferroni", "holm") else alpha


@dataclass(frozen=True)
class Resolution:
    """Can a family of ``m`` tests with ``k`` resamples each reach significance?

    ``smallest_p``: the tests' resolution (:func:`pvalue_resolution`); ``needed_p``: the
    correction's threshold (:func:`correction_threshold`); ``resolvable``: smallest_p <=
    needed_p; ``k_needed``: the smallest k that resolves the family (None for a parametric
    test, which needs none).
    """

    formula: str
    k: int | None
    correction: str
    m: int
    alpha: float
    smallest_p: float
    needed_p: float
    resolvable: bool
    k_needed: int | None

    def text(self) -> str:
        """One line: why nothing can be significant, and the k that would change that."""
        if self.resolvable:
            return (f"resolvable: the smallest attainable p-value {self.smallest_p:.3g} is at or below the "
                    f"{self.correction} threshold {self.needed_p:.3g} ({self.m} tests, alpha {self.alpha:g})")
        return (f"no test of this family can be significant (it cannot resolve at k = {self.k}): its smallest "
                f"attainable p-value "
                f"{_SMALLEST[self.formula]} = {self.smallest_p:.3g} (k = {self.k}) is above "
                f"the {self.correction} threshold {self.needed_p:.3g} (alpha {self.alpha:g}, {self.m} tests); "
                f"k >= {self.k_needed} resamples would be needed")

    def as_dict(self) -> dict:
        return {"smallest_p": self.smallest_p, "needed_p": self.needed_p, "resolvable": self.resolvable,
                "k": self.k, "k_needed": self.k_needed, "family_tests": self.m, "pvalue_formula": self.formula,
                "rule": "resolvable when the smallest attainable p-value is at or below the largest raw p-value "
                        "the correction can declare significant (none, bh: alpha; bonferroni, holm: alpha/m)"}


def family_resolution(formula: str, k: int | None, correction: str, m: int, alpha: float) -> Resolution:
    """:class:`Resolution` of a family of ``m`` tests whose p-values take ``formula`` with ``k``
    resamples (for tests that drew different numbers, the largest: the family is resolvable
    when any of its tests can reach the threshold)."""
    smallest = pvalue_resolution(formula, k)
    needed = correction_threshold(correction, m, alpha)
    if formula == "parametric":
        k_needed = None
    else:
        # smallest k with resolution <= needed: add-one 1/(k+1) <= t  <=>  k >= 1/t - 1; count: k >= 1/t
        k_needed = max(1, math.ceil(1.0 / needed * (1 - _SLACK)) - (1 if formula == "add-one" else 0))
        while pvalue_resolution(formula, k_needed) > needed:   # the slack never undershoots
            k_needed += 1
    return Resolution(formula, None if k is None else int(k), correction, int(m), float(alpha), smallest, needed,
                      bool(smallest <= needed), k_needed)
