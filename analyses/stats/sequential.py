"""Sequential Monte-Carlo p-values for a family of tests: MMCTest (Gandy & Hahn 2014).

A resampling test's p-value is a Monte-Carlo estimate of its *exact* p-value p_i, the
probability that one resample is at least as extreme as the observed statistic (the limit of
the fixed-k p-value as k -> infinity; the p-value of the exact permutation test, or the
bootstrap's). Resample b of test i is an "exceedance" with probability p_i, independently of
the others: after n_i (defined) resamples, the count C_i is Binomial(n_i, p_i).

MMCTest (Gandy & Hahn, "MMCTest -- a safe algorithm for implementing multiple Monte Carlo
tests", Scand. J. Statist. 41 (2014) 1083-1101; the single test: Gandy, JASA 104 (2009) 1504-1511)
draws in rounds j = 1, 2, ... at fixed cumulative resample counts n_1 < n_2 < ... <= k_max
(:func:`look_schedule`). After round j every test still undecided gets a Clopper--Pearson
interval [L_i, U_i] for p_i (:func:`clopper_pearson`) of miscoverage

    delta_j = (eps_j - eps_{j-1}) / m,    eps_j = risk * j / (j + rho)          (:func:`spent`)

(m the tests of the family, ``risk`` the bound, eps_j -> risk: Gandy 2009's spending sequence,
indexed here by round). The correction (Bonferroni, Holm, Benjamini--Hochberg, or none) is
applied once to every test's current upper bound and once to its lower bound
(:func:`decide`): a test rejected even with the upper bounds is decided *significant*; one not
rejected even with the lower bounds is decided *not significant*; it then stops resampling and
keeps its last interval. The others go on, up to k_max, where they are *undecided* (reported as
not significant).

**Bound.** The events "p_i lies outside its interval of round j" have probabilities
<= delta_j (Clopper--Pearson is exact-conservative for every p_i and fixed n_j), so by the union
bound over the m tests and all rounds, with probability >= 1 - sum_j m delta_j >= 1 - ``risk``
every interval ever computed covers its p_i. On that event, since the corrections are monotone
(lowering any p-value never un-rejects a test: Bonferroni, Holm's step-down and BH's step-up
all are), every rejection made with the upper bounds is a rejection with the exact p-values,
and every non-rejection made with the lower bounds is one too. Hence

    P(some decided test's decision differs from the exact p-values' decision) <= risk,

whatever the p_i and their dependence. Assumptions: given the data, resamples are i.i.d.
draws (independent streams of draws per round are not needed: the stream of each test is one
i.i.d. sequence, and the look points n_j do not depend on the data); the exact decision is the
correction applied to the exact p_i at ``alpha`` (``p <= alpha`` adjusted); resamples whose
statistic is undefined are dropped (n_i counts the defined ones: exceedance probabilities are
then conditional on a defined resample). Undecided tests (p_i on or very near a threshold, or
k_max too small) carry no guarantee and are never significant.

Pure numpy/scipy; the resampling itself is the caller's (``extend`` in :func:`mmctest`, or
:class:`MMCTest` driven round by round).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .validation import alpha_iv, correction_iv, k_iv
from .multiple import correct_pvalues, rejects

#: Resamples of each test in the first round; the schedule grows by GROWTH per round. Part of
#: the procedure (the rows of a seed depend on them), recorded in every row's conventions.
FIRST_LOOK = 64
GROWTH = 1.5
#: rho of the spending sequence eps_j = risk * j / (j + rho) (Gandy 2009's form, by round).
SPENDING_RHO = 20

SIGNIFICANT, NOT_SIGNIFICANT, UNDECIDED = "significant", "not significant", "undecided"


def clopper_pearson(count: npt.ArrayLike, n: npt.ArrayLike, miscoverage: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided Clopper--Pearson interval [L, U] for a binomial proportion, each tail
    ``miscoverage / 2``: with C = ``count`` successes in ``n`` trials and d = ``miscoverage``,

        L = B^{-1}(d/2; C, n - C + 1)      (0 when C = 0),
        U = B^{-1}(1 - d/2; C + 1, n - C)  (1 when C = n),

    B^{-1}(q; a, b) the q-quantile of the Beta(a, b) distribution. P(p in [L, U]) >= 1 - d for
    every p. n = 0 gives [0, 1]. Equals ``scipy.stats.binomtest(C, n).proportion_ci(1 - d,
    method="exact")``. Vectorised (arrays broadcast).
    """
    import scipy.stats  # here, not at import time: the command line starts without scipy
    c = np.asarray(count, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    d = np.asarray(miscoverage, dtype=np.float64)
    if np.any(c < 0) or np.any(c > n):
        raise ValueError("`count` must lie in [0, n].")
    if np.any(~((d > 0) & (d < 1))):
        raise ValueError("`miscoverage` must lie in (0, 1).")
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(c > 0, scipy.stats.beta.ppf(d / 2, np.maximum(c, 1), n - c + 1), 0.0)
        upper = np.where(c < n, scipy.stats.beta.ppf(1 - d / 2, c + 1, np.maximum(n - c, 1)), 1.0)
    return lower, upper


def spent(j: npt.ArrayLike, risk: float, rho: float = SPENDING_RHO) -> np.ndarray:
    """eps_j = risk * j / (j + rho): the risk spent after round j (eps_0 = 0, increasing, < risk
    for every j, -> risk): the miscoverage of round j over the family is eps_j - eps_{j-1}
    = risk * rho / ((j + rho)(j + rho - 1)), and these sum to less than ``risk``."""
    j = np.asarray(j, dtype=np.float64)
    return risk * j / (j + rho)


def look_schedule(k_max: int, first: int = FIRST_LOOK, growth: float = GROWTH) -> list[int]:
    """The cumulative resamples per test after each round: n_1 = min(first, k_max),
    n_{j+1} = min(k_max, max(n_j + 1, ceil(growth * n_j))), ending at k_max. It depends on
    neither the data nor the seed (the bound needs fixed look points)."""
    k_max = k_iv(k_max)
    looks = [min(first, k_max)]
    while looks[-1] < k_max:
        looks.append(min(k_max, max(looks[-1] + 1, int(np.ceil(growth * looks[-1])))))
    return looks


def decide(lower: npt.ArrayLike, upper: npt.ArrayLike, alpha: float, correction: str) -> np.ndarray:
    """Per test: "significant" when the correction applied to the upper bounds rejects it
    (adjusted <= alpha), "not significant" when the correction applied to the lower bounds does
    not, "undecided" otherwise (then the lower bounds reject it and the upper ones do not)."""
    lower, upper = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    alpha, correction = alpha_iv(alpha), correction_iv(correction)
    out = np.full(lower.shape, UNDECIDED, dtype=object)
    if lower.size == 0:
        return out
    adjusted_lower, adjusted_upper = correct_pvalues(lower, correction), correct_pvalues(upper, correction)
    out[~np.isnan(adjusted_lower) & ~rejects(adjusted_lower, alpha)] = NOT_SIGNIFICANT   # the layer's rule 0
    out[rejects(adjusted_upper, alpha)] = SIGNIFICANT
    return out


@dataclass(frozen=True)
class SequentialResult:
    """Per test of the family: exceedances ``count`` among ``n_valid`` defined resamples,
    ``k_used`` resamples drawn, the ``decision``, the last interval [``lower``, ``upper``] of its
    exact p-value, and ``rounds`` taken."""

    count: np.ndarray
    n_valid: np.ndarray
    k_used: np.ndarray
    decision: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    rounds: np.ndarray


class MMCTest:
    """MMCTest over a family of ``m`` tests, driven round by round by the caller (so that the
    rounds of several families can share one pool of workers):

        t = MMCTest(m, alpha, "holm", risk=1e-3, k_max=100_000)
        while (todo := t.pending()) is not None:
            tests, stop = todo           # draw resamples n_i .. stop - 1 of each of these tests
            t.record(tests, counts, n_valid)   # their new exceedances and defined resamples
        t.result()

    See the module docstring for the procedure and its bound.
    """

    def __init__(self, m: int, alpha: float, correction: str, risk: float, k_max: int,
                 first: int = FIRST_LOOK, growth: float = GROWTH, rho: float = SPENDING_RHO) -> None:
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 0:
            raise ValueError(f"`m` must be an integer >= 0; got {m!r}.")
        self.m, self.alpha, self.correction = int(m), alpha_iv(alpha), correction_iv(correction)
        self.risk = risk_iv(risk)
        self.k_max, self.rho = k_iv(k_max), rho
        self.looks = look_schedule(self.k_max, first, growth)
        self.count = np.zeros(self.m, dtype=np.int64)
        self.n_valid = np.zeros(self.m, dtype=np.int64)
        self.k_used = np.zeros(self.m, dtype=np.int64)
        self.rounds = np.zeros(self.m, dtype=np.int64)
        self.lower, self.upper = np.zeros(self.m), np.ones(self.m)
        self.decision = np.full(self.m, UNDECIDED, dtype=object)
        self.round = 0   # rounds completed

    def pending(self) -> tuple[np.ndarray, int] | None:
        """(the undecided tests, the resample index to draw them up to) of the next round;
        None when every test is decided or the last round (k_max) is done."""
        undecided = np.flatnonzero(self.decision == UNDECIDED)
        if undecided.size == 0 or self.round == len(self.looks):
            return None
        return undecided, self.looks[self.round]

    def record(self, tests: Sequence[int], counts: npt.ArrayLike, n_valid: npt.ArrayLike) -> None:
        """The new exceedances and defined resamples of ``tests`` (exactly those of
        :meth:`pending`) over their resamples up to this round's look; then the decisions."""
        todo = self.pending()
        if todo is None:
            raise RuntimeError("MMCTest: no round is pending")
        tests = np.asarray(tests, dtype=np.int64)
        if not np.array_equal(np.sort(tests), todo[0]):
            raise ValueError("MMCTest.record: give the tests of pending(), each once")
        self.count[tests] += np.asarray(counts, dtype=np.int64)
        self.n_valid[tests] += np.asarray(n_valid, dtype=np.int64)
        self.k_used[tests] = todo[1]
        self.rounds[tests] += 1
        if np.any(self.count > self.n_valid) or np.any(self.n_valid > self.k_used):
            raise ValueError("MMCTest.record: counts must satisfy count <= n_valid <= resamples drawn")
        self.round += 1
        j = self.round
        miscoverage = float(spent(j, self.risk, self.rho) - spent(j - 1, self.risk, self.rho)) / self.m
        self.lower[tests], self.upper[tests] = clopper_pearson(self.count[tests], self.n_valid[tests], miscoverage)
        now = decide(self.lower, self.upper, self.alpha, self.correction)
        undecided = self.decision == UNDECIDED
        self.decision[undecided] = now[undecided]

    def result(self) -> SequentialResult:
        return SequentialResult(self.count.copy(), self.n_valid.copy(), self.k_used.copy(), self.decision.copy(),
                                self.lower.copy(), self.upper.copy(), self.rounds.copy())

    def conventions(self) -> dict:
        """The procedure, its parameters and bound, for the conventions of every row."""
        return {
            "procedure": "MMCTest (Gandy & Hahn 2014, Scand. J. Statist. 41:1083-1101): rounds at fixed "
                         "resample counts; Clopper-Pearson intervals of each undecided test's exact p-value; the "
                         "correction applied to the upper bounds (rejected: significant) and to the lower bounds "
                         "(not rejected: not significant); the others continue up to k_max (then undecided, "
                         "never significant)",
            "risk": self.risk,
            "bound": "P(some decided test's decision differs from the decision of the exact (k -> infinity) "
                     "p-values) <= risk, for any p-values and dependence between tests (union bound over tests "
                     "and rounds; the corrections are monotone)",
            "k_max": self.k_max,
            "looks": f"n_1 = {self.looks[0]}, n_(j+1) = min(k_max, ceil({GROWTH} n_j)) (rounds: {len(self.looks)})",
            "spending": f"eps_j = risk * j / (j + {self.rho}); round j's interval miscoverage "
                        f"(eps_j - eps_(j-1)) / m, m = {self.m}",
            "interval": "Clopper-Pearson, two-sided, on the exceedances among the defined resamples",
            "correction": self.correction,
            "alpha": self.alpha,
        }


def mmctest(extend: Callable[[np.ndarray, int], tuple[npt.ArrayLike, npt.ArrayLike]], m: int, alpha: float,
            correction: str, risk: float, k_max: int) -> SequentialResult:
    """MMCTest over ``m`` tests. ``extend(tests, stop)`` draws, for each test of ``tests``,
    its resamples from where it stands up to index ``stop`` (exclusive) and returns the new
    exceedances and the new defined resamples, one per test (see :class:`MMCTest`)."""
    t = MMCTest(m, alpha, correction, risk, k_max)
    while (todo := t.pending()) is not None:
        counts, n_valid = extend(*todo)
        t.record(todo[0], counts, n_valid)
    return t.result()


def risk_iv(risk: object) -> float:
    if isinstance(risk, bool) or not isinstance(risk, (int, float, np.floating)) or not 0 < risk < 1:
        raise ValueError(f"`risk` must be a number with 0 < risk < 1; got {risk!r}.")
    return float(risk)
