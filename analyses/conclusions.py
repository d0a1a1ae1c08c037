"""The one conclusion layer: every verdict drawn from a family of tests, decided here once.

Pure functions, no database. A *family* is the tests one multiple-comparison correction is
applied over (compare: a level and coefficient, and a metric_a with the correction group
"metric"; detection: a group and statistic, and a metric_a; judges: every pair of judges, per
test). Every family -- compare, winners and evaluate, detection, judges, the paper tables --
calls these functions; none writes its own rule. Stored tests, read back from a warehouse, are
read by :mod:`metaeval.analyses.stored_tests` (a typed reading, and these rules at any alpha).

The rules
---------
0. **One test on its own** (:func:`rejects`, :func:`metaeval.analyses.stats.multiple.rejects`,
   below the layer's modules so that :mod:`~metaeval.analyses.ranking` can use it): p defined
   and p <= alpha, for the procedures an anchor defines per test (no family, no correction);
   every other rule builds on it.
1. **Adjusted p** (:func:`decide`): the correction over the family's *defined* p-values
   (:func:`metaeval.analyses.stats.multiple.correct_pvalues`; NaN: undefined, not counted in m).
2. **Resolution** (:func:`decide`): a family of m tests whose p-values take ``formula`` with k
   resamples can reach significance only when its smallest attainable p (1/(k+1) for
   (1 + b)/(k + 1), 1/k for count/k, 0 for an exact test) is at or below the largest raw p the
   correction can declare significant (alpha; alpha/m for Bonferroni and Holm):
   :func:`metaeval.analyses.stats.resolution.family_resolution`. A family that cannot resolve has
   **no** significant test, whatever its p-values say.
3. **A test's own floor** (:func:`pvalue_floor`): a test whose p counts only ``n_valid`` defined
   resamples (p = count / n_valid; (1 + count) / (1 + n_valid)) says no more than its own
   resolution 1/n_valid (1/(n_valid + 1)): it must reach the family's threshold on its own (as
   the family's k must). A test on few observations cannot go below its exact floor
   (``data_floors``: 2^(1-n) for a sign-flip test on n items, :func:`sign_flip_floor`; 2^(1-d)
   for an exact McNemar test with d discordant pairs, :func:`mcnemar_floor`); above the
   threshold of its most favourable position (alpha; alpha/m for Bonferroni) it cannot be
   significant whatever its data. A test is *evidence* when both floors pass.
4. **Significant** (:func:`decide`): adjusted p <= alpha, the family resolvable, the test evidence.
5. **Cannot resolve** (:func:`cannot_resolve`, :func:`stored_note` for stored rows): one line,
   containing ``cannot resolve`` and the ``k >= N`` that would, said in every output format of a
   family that cannot.
6. **Clusters and winners** (:func:`clusters`): mt-metrics-eval's AssignRanks (``any``) or the
   strict partition, by :func:`metaeval.analyses.ranking.pairwise_beats` and
   :func:`~metaeval.analyses.ranking.significance_clusters`, only from a *complete, resolvable*
   family: a family that cannot resolve has no cluster and no winner (NaN / NULL), and a pair
   whose test is not evidence counts as untested (no clusters while one is).
7. **Bold** (:func:`bold_cells`): per column, the top cluster where the column has clusters;
   nothing where its family cannot resolve; elsewhere the highest defined value (every tied one);
   never an undefined value.
9. **Alternative annotator test** (:func:`winning_rate`; Calderon et al. 2025): the winning rate
   omega = the share of the family's defined tests (one per left-out annotator, corrected by
   Benjamini-Yekutieli) that are significant; the judge *passes* when omega >= 1/2; undecided
   (None) when the family cannot resolve or holds no defined test.
8. **Printed p-values** (:func:`p_text`, the one function every output prints a p-value with):
   3 decimals, and as many more as it takes to show which side of alpha p lies on (0.04995 at
   alpha 0.05 is ``0.04995``, never ``0.050`` beside "significant"); never finer than the test's
   resolution: a p below its floor (a count/k p of 0) prints as ``<floor`` (k = 50: ``<0.02``),
   an adjusted one as ``<`` the floor times the correction's factor (m for Bonferroni, Holm and
   BH, capped at 1); below the printing floor 0.001, ``<0.001`` -- only where that floor is at or
   below alpha (it then says the side); at a smaller alpha, two significant digits and the side's
   (alpha 0.0001: 0.00040). Undefined: ``--``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from metaeval.analyses import ranking as rk
from metaeval.analyses.stats.multiple import correct_pvalues, rejects
from metaeval.analyses.stats.resolution import PVALUE_FORMULAS, Resolution, family_resolution, pvalue_resolution
from metaeval.analyses.stats.validation import alpha_iv, correction_iv

if TYPE_CHECKING:
    import pandas as pd   # imported where a DataFrame is made or read: the leaderboard decides without pandas

#: Decimals of a printed p-value.
P_DIGITS = 3
#: The level a printed p-value is shown beside when its caller does not name one (every default's).
DEFAULT_ALPHA = 0.05


# --- one test ---------------------------------------------------------------------------------------
def pvalue_floor(formula: str, k: int | None = None, n_valid: int | None = None, data_floor: float = 0.0) -> float:
    """The smallest p-value this one test could report: its resampling resolution at ``n_valid``
    defined resamples (else at ``k``; :func:`~metaeval.analyses.stats.resolution.pvalue_resolution`),
    or at least ``data_floor`` (the exact floor its observations allow); 0 for an exact test
    without a data floor. No resample (``n_valid`` 0) or no k: infinite (it resolves nothing)."""
    if formula not in PVALUE_FORMULAS:
        raise ValueError(f"`formula` must be one of {list(PVALUE_FORMULAS)}; got {formula!r}.")
    if formula == "parametric":
        own = 0.0
    else:
        drawn = n_valid if n_valid is not None else k
        if drawn is None or _nan(drawn) or int(drawn) < 1:
            return math.inf
        own = pvalue_resolution(formula, int(drawn))
    return max(own, float(data_floor or 0.0))


def sign_flip_floor(n: int) -> float:
    """The exact floor of a two-sided sign-flip test on ``n`` paired observations: the identity
    and the full flip both reach |T|, so p >= 2 / 2^n (1 for n <= 1)."""
    return 1.0 if n <= 1 else min(1.0, 2.0 ** (1 - int(n)))


def mcnemar_floor(discordant: int) -> float:
    """The exact floor of a two-sided exact McNemar test with ``discordant`` = b + c pairs:
    p = min(1, 2 P[Binom(d, 1/2) <= min(b, c)]) >= 2^(1-d) (1 without a discordant pair)."""
    return 1.0 if discordant <= 0 else min(1.0, 2.0 ** (1 - int(discordant)))


# --- a family ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FamilyVerdict:
    """What :func:`decide` concluded of one family (arrays in the tests' order).

    ``adjusted``: corrected p (NaN where p is undefined); ``significant``: rule 4; ``evidence``:
    the test's own floor reaches the threshold (rule 3); ``defined``: p defined; ``size``: the
    defined p-values corrected together; ``resolution``: the family's
    :class:`~metaeval.analyses.stats.resolution.Resolution` (None: no resampling k known, or no
    defined test when ``empty_resolves``)."""

    adjusted: np.ndarray
    significant: np.ndarray
    evidence: np.ndarray
    defined: np.ndarray
    size: int
    resolution: Resolution | None

    @property
    def resolvable(self) -> bool:
        """False only when the family's resolution is known and cannot reach the threshold."""
        return self.resolution is None or self.resolution.resolvable

    def note(self, what: str = "") -> str | None:
        """The one "cannot resolve" line (:func:`cannot_resolve`), None when it can."""
        return None if self.resolvable else cannot_resolve(self.resolution, what)


def decide(pvalues: npt.ArrayLike, *, formula: str, k: int | None, correction: str, alpha: float,
           n_valid: npt.ArrayLike | None = None, data_floors: npt.ArrayLike | None = None,
           min_size: int = 0) -> FamilyVerdict:
    """Rules 1-4 over one family: the raw ``pvalues`` (NaN: undefined) of tests whose p-values
    take ``formula`` (``"add-one"``, ``"count"``, ``"parametric"``) with ``k`` resamples (the
    most any drew), the ``correction`` at level ``alpha``; ``n_valid`` (per test, None or NaN
    entries: all k) and ``data_floors`` (per test) give each test's own floor (:func:`pvalue_floor`).

    The family's resolution is over its m defined tests -- ``max(m, min_size)`` with
    ``min_size`` 1 (a family of none still says whether one test could); with ``min_size`` 0 and
    no defined test, None."""
    p = np.asarray(pvalues, dtype=np.float64).reshape(-1)
    correction, alpha = correction_iv(correction), alpha_iv(alpha)
    if formula not in PVALUE_FORMULAS:
        raise ValueError(f"`formula` must be one of {list(PVALUE_FORMULAS)}; got {formula!r}.")
    for name, values in (("n_valid", n_valid), ("data_floors", data_floors)):
        if values is not None and len(values) != p.size:
            raise ValueError(f"`{name}` must have one entry per p-value ({p.size}); got {len(values)}.")
    defined = ~np.isnan(p)
    m = int(defined.sum())
    adjusted = correct_pvalues(p, correction) if p.size else p.copy()
    size = max(m, int(min_size))
    resolution = None
    if size and (formula == "parametric" or k is not None):
        resolution = family_resolution(formula, None if formula == "parametric" else int(k), correction, size, alpha)
    needed = resolution.needed_p if resolution is not None else None
    nv = [None] * p.size if n_valid is None else list(n_valid)
    own = np.array([pvalue_floor(formula, k, _int_or_none(v)) if formula != "parametric" and k is not None else 0.0
                    for v in nv])
    # a resampling floor must reach the family's threshold (a p of 0 is the family's first rejection);
    # a data floor above the threshold of the most favourable position cannot be significant anyway
    best = alpha / max(size, 1) if correction == "bonferroni" else alpha
    floors = np.zeros(p.size) if data_floors is None else np.asarray(data_floors, dtype=np.float64).reshape(-1)
    evidence = ((own <= needed) if needed is not None else np.ones(p.size, bool)) & (floors <= best)
    resolvable = resolution is None or resolution.resolvable
    significant = defined & rejects(adjusted, alpha) & resolvable & evidence
    return FamilyVerdict(adjusted, significant, evidence, defined, m, resolution)


def cannot_resolve(resolution: Resolution, what: str = "") -> str:
    """The one line a family that cannot resolve says, in every output format
    (:meth:`~metaeval.analyses.stats.resolution.Resolution.text`: it contains ``cannot resolve``
    and the ``k >= N`` that would), after ``what`` (which family, e.g. ``the permutation tests``)."""
    return f"{what}: {resolution.text()}" if what else resolution.text()


def stored_note(conventions: dict | str | None, correction: str, alpha: float, what: str = "") -> str | None:
    """:func:`cannot_resolve` of the resolution a stored test row recorded in its conventions
    (``resolution``: :meth:`Resolution.as_dict`) with the row's ``correction`` and ``alpha``;
    None when it resolves or says nothing."""
    if isinstance(conventions, str):
        import json

        conventions = json.loads(conventions)
    r = (conventions or {}).get("resolution") if isinstance(conventions, dict) else None
    return resolution_note(r, correction, alpha, what)


def resolution_note(r: dict | Resolution | None, correction: str, alpha: float, what: str = "") -> str | None:
    """:func:`cannot_resolve` of a stored resolution (a :class:`Resolution`, or the dict of
    :meth:`Resolution.as_dict`) with the row's ``correction`` and ``alpha``; None when it resolves
    or says nothing."""
    if isinstance(r, Resolution):
        return None if r.resolvable else cannot_resolve(r, what)
    if not r or r.get("resolvable", True):
        return None
    if not {"pvalue_formula", "family_tests", "smallest_p", "needed_p"} <= set(r):
        return f"{what}: " * bool(what) + f"the tests cannot resolve at k={r.get('k')}: no test can be significant"
    res = Resolution(r["pvalue_formula"], r.get("k"), correction, int(r["family_tests"]), float(alpha),
                     float(r["smallest_p"]), float(r["needed_p"]), False, r.get("k_needed"))
    return cannot_resolve(res, what)


def winning_rate(verdict: FamilyVerdict, threshold: float = 0.5) -> tuple[float, bool | None]:
    """(omega, passes) of the alternative annotator test (rule 9): omega the share of the defined
    tests that are significant (NaN without one); passes = omega >= ``threshold``, None when the
    family cannot resolve or has no defined test."""
    m = int(np.count_nonzero(verdict.defined))
    if m == 0:
        return float("nan"), None
    omega = float(np.count_nonzero(verdict.significant & verdict.defined)) / m
    return omega, (omega >= threshold) if verdict.resolvable else None


# --- clusters and winners ---------------------------------------------------------------------------
def clusters(scores: npt.ArrayLike, a: npt.ArrayLike, b: npt.ArrayLike, delta: npt.ArrayLike,
             significant: npt.ArrayLike, *, alternative: str = "two-sided", rule: str = "any",
             names: Sequence[str] | None = None, evidence: npt.ArrayLike | None = None,
             note: str | None = None) -> tuple[rk.ClusterResult, np.ndarray, np.ndarray]:
    """Rule 6: (ClusterResult, beats, tested) of n items scored ``scores`` from their test rows
    (``a[r]``, ``b[r]``: indices; ``delta``, ``significant`` per row), by
    :func:`metaeval.analyses.ranking.pairwise_beats` and
    :func:`~metaeval.analyses.ranking.significance_clusters` (``rule`` ``any``: mt-metrics-eval's
    AssignRanks; ``strict``). A row that is not ``evidence`` (rule 3) counts as untested, so the
    clusters are not given while it is; ``note`` (a family that cannot resolve: :func:`cannot_resolve`)
    gives no cluster and no winner at all, ``why`` saying so."""
    s = np.asarray(scores, dtype=np.float64)
    n = s.size
    a, b = np.asarray(a, int).reshape(-1), np.asarray(b, int).reshape(-1)
    if a.size:
        keep = np.ones(a.size, bool) if evidence is None else np.asarray(evidence, bool).reshape(-1)
        beats, tested = rk.pairwise_beats(n, a[keep], b[keep], np.asarray(delta, float).reshape(-1)[keep],
                                          np.asarray(significant, bool).reshape(-1)[keep], alternative, s)
    else:
        beats, tested = np.zeros((n, n), bool), np.zeros((n, n), bool)
    result = rk.significance_clusters(s, beats, rule=rule, tested=tested, names=names)
    if not result.determined and a.size and not keep.all():
        result = dataclasses.replace(result, why=f"{result.why}: {int((~keep).sum())} of the tests cannot reach "
                                                 "significance on their data (too few observations or valid "
                                                 "resamples) and count as not run")
    if note is not None:
        result = unresolved(result, note)
    return result, beats, tested


def unresolved(result: rk.ClusterResult, note: str) -> rk.ClusterResult:
    """``result`` with no cluster and no winner status (a family that cannot resolve), ``why`` the note."""
    n = result.rank.size
    return rk.ClusterResult(result.rank, np.full(n, np.nan), np.zeros(n, bool), result.n_beaten_by, result.undefined,
                            np.zeros(n, bool), False, note, result.conventions)


# --- bold ---------------------------------------------------------------------------------------------
def bold_cells(frame: pd.DataFrame, keys: Sequence[str] = ("level", "coefficient"), value: str = "correlation",
               cluster: str = "cluster", unresolved: Sequence[tuple] = ()) -> pd.Series:
    """Rule 7: which rows of ``frame`` are bold, per setting (``keys``): the top significance
    cluster (``cluster`` 1) where the setting has clusters; none in a setting of ``unresolved``
    (its family cannot resolve); else the highest ``value`` (every tied one); never an
    undefined value."""
    import pandas as pd

    out = pd.Series(False, index=frame.index)
    blocked = {tuple(s) for s in unresolved}
    groups = frame.groupby(list(keys), sort=False, dropna=False) if keys else [((), frame)]
    for setting, rows in groups:
        setting = setting if isinstance(setting, tuple) else (setting,)
        defined = rows[value].map(defined_value)
        if not defined.any() or tuple(setting) in blocked:
            continue
        if cluster in rows and rows.loc[defined, cluster].map(defined_value).any():
            out[rows.index] = defined & (rows[cluster] == 1)
        else:
            best = rows.loc[defined, value].astype(float).max()
            out[rows.index] = defined & (rows[value] == best)
    return out


def defined_value(x) -> bool:
    """Not None, NaN, NA or NaT."""
    import pandas as pd

    return x is not None and not (isinstance(x, float) and math.isnan(x)) and not pd.isna(x)


# --- printed p-values -----------------------------------------------------------------------------------
def adjusted_floor(floor: float, correction: str, m: int | None) -> float:
    """The floor of a corrected p whose raw p is below ``floor``: ``floor`` times m (Bonferroni,
    Holm, BH: each multiplies a p by at most m), capped at 1; ``floor`` without a correction."""
    if correction == "none" or not m or _nan(m):
        return floor
    return min(1.0, floor * int(m))


def p_text(p, floor: float = 0.0, digits: int = P_DIGITS, *, latex: bool = True, alpha=DEFAULT_ALPHA,
           undefined: str = "--") -> str:
    """Rule 8, the one way a p-value is printed: ``p`` with ``digits`` decimals (3); ``--`` if
    undefined; below its test's ``floor`` (a count/k p of 0 says only p < 1/k) ``<`` the floor,
    rounded up at ``digits`` and without trailing zeros (k = 50: ``<0.02``). Near ``alpha`` (the
    level its verdict compares it with; None: none) it takes the digits that show which side of
    alpha it lies on: 0.04995 is ``0.04995``, never ``0.050`` beside a significant verdict. Below
    what the digits show (0.0005 at 3), ``<0.001`` when 0.001 is at or below ``alpha`` (or no alpha
    is named): p < 0.001 <= alpha says the side (0.000145 prints ``<0.001`` in every output);
    at a smaller alpha, two significant digits or the side's, whichever is finer (``0.00040``)."""
    if not defined_value(p):
        return undefined
    less = "$<$" if latex else "<"
    p, floor = float(p), float(floor or 0.0)
    if math.isfinite(floor) and floor > 0 and p < floor:
        bound = max(math.ceil(floor * 10 ** digits - 1e-9) / 10 ** digits, 10 ** -digits)
        return less + (f"{bound:.{digits}f}".rstrip("0").rstrip(".") if bound < 1 else "1")
    if p < 0.5 * 10 ** -digits:
        if alpha is None or not defined_value(alpha) or 10 ** -digits <= float(alpha):
            return less + f"{10 ** -digits:.{digits}f}"
        two = digits if p <= 0 else 1 - math.floor(math.log10(p))
        return f"{p:.{max(side_digits(p, alpha, digits), two)}f}"
    return f"{p:.{side_digits(p, alpha, digits)}f}"


def side_digits(p: float, alpha, digits: int = P_DIGITS, most: int = 12) -> int:
    """The fewest decimals, at least ``digits``, at which ``p`` printed is not ``alpha`` printed
    (unless p is alpha) and lies on p's side of alpha (``most`` at most: a p within 1e-12 of alpha)."""
    if alpha is None or not defined_value(alpha) or p == alpha:
        return digits
    alpha = float(alpha)
    for d in range(digits, most + 1):
        shown = float(f"{p:.{d}f}")
        if shown != float(f"{alpha:.{d}f}") and (shown <= alpha) == (p <= alpha):
            return d
    return most


def p_floors(formula: str, k, n_valid, correction: str, family_size) -> tuple[np.ndarray, np.ndarray]:
    """Per row of stored tests (``k``, ``n_valid``, ``family_size``: sequences, None/NaN allowed):
    (raw floor, adjusted floor) for :func:`p_text`; 0 for exact tests."""
    raw = np.array([0.0 if formula == "parametric" else
                    pvalue_floor(formula, _int_or_none(kk), _int_or_none(nv)) for kk, nv in zip(k, n_valid)])
    raw = np.where(np.isinf(raw), 0.0, raw)
    adj = np.array([adjusted_floor(f, correction, _int_or_none(m)) for f, m in zip(raw, family_size)])
    return raw, adj


def with_floors(tests: pd.DataFrame, formula: str, n_valid: Sequence | None = None) -> pd.DataFrame:
    """Stored test rows (columns ``k`` or ``k_used``, ``family_size``, ``correction``) with the
    floors their p-values print at (:func:`p_floors`): ``p_floor`` and ``p_adjusted_floor``;
    ``n_valid`` per row (default: the ``n_valid`` column, else every resample valid)."""
    if tests.empty:
        return tests
    k = tests["k_used"] if "k_used" in tests and tests["k_used"].notna().any() else tests.get("k", [None] * len(tests))
    if n_valid is None:
        n_valid = tests["n_valid"] if "n_valid" in tests else [None] * len(tests)
    raw, adjusted = p_floors(formula, list(k), list(n_valid), str(tests["correction"].iloc[0]),
                             list(tests["family_size"]) if "family_size" in tests else [None] * len(tests))
    return tests.assign(p_floor=raw, p_adjusted_floor=adjusted)


def printed_pvalues(tests: pd.DataFrame, formula: str, n_valid: Sequence | None = None, *,
                    latex: bool = False) -> pd.DataFrame:
    """The tests with ``p_value`` and ``p_adjusted`` as printed (:func:`p_text` at the floors of
    :func:`with_floors`), for the text tables."""
    if tests.empty:
        return tests
    floored = with_floors(tests, formula, n_valid)
    alphas = list(tests["alpha"]) if "alpha" in tests else [DEFAULT_ALPHA] * len(tests)
    return tests.assign(
        p_value=[p_text(p, f, latex=latex, alpha=a) for p, f, a in zip(floored["p_value"], floored["p_floor"], alphas)],
        p_adjusted=[p_text(p, f, latex=latex, alpha=a)
                    for p, f, a in zip(floored["p_adjusted"], floored["p_adjusted_floor"], alphas)])


def printed_by(tests: pd.DataFrame, formulas: Mapping[str, str], *, key: str = "method",
               columns: tuple[str, str] = ("p_value", "p_adjusted")) -> pd.DataFrame:
    """:func:`printed_pvalues` of tests of several kinds (``key``: the column naming each row's
    test, ``formulas``: its p-value formula, e.g. ``{"mcnemar": "parametric", "permutation":
    "add-one"}``), whose p-values are in ``columns`` (raw, corrected); a family's size, when no
    ``family_size`` column gives it, is the number of its rows of that kind (and subset)."""
    import pandas as pd

    if tests.empty:
        return tests
    raw, adjusted = columns
    out = tests.rename(columns={raw: "p_value", adjusted: "p_adjusted"})
    if "family_size" not in out:
        by = [key, *(["subset"] if "subset" in out else [])]
        out = out.assign(family_size=out.groupby(by)[key].transform("size"))
    parts = [printed_pvalues(part, formulas[name], None if "n_valid" in part else [None] * len(part))
             for name, part in out.groupby(key, sort=False)]
    printed = pd.concat(parts).reindex(out.index)
    return tests.assign(**{raw: printed["p_value"], adjusted: printed["p_adjusted"]})


def _nan(x) -> bool:
    return x is None or (isinstance(x, (float, np.floating)) and math.isnan(x))


def _int_or_none(x) -> int | None:
    if x is None or _nan(x):
        return None
    if isinstance(x, (int, float, np.integer, np.floating)):      # a number that is not NaN (no pandas needed)
        return int(x)
    import pandas as pd

    return None if pd.isna(x) else int(x)
