"""How big must the next study be? The closed forms and resampled estimates of ``metaeval plan``
(issue 45 item 2; the question ``systems`` so far: do two systems differ under the human judgment).

From a pilot's paired differences d_j = z_A(j) - z_B(j) over its inputs j (z a cell's mean over its
r0 ratings), with the ratings' own noise var_e (the pooled within-cell variance of the ratings,
divisor count - 1 per cell), the differences of a study with r ratings per cell have variance

    sd_d(r)^2 = var(d) - 2 var_e / r0 + 2 var_e / r      (at least 0; var(d) with divisor n0 - 1)

and a paired t-test on n inputs at level a (two-sided; the family's corrected level: alpha / m,
the first step of Holm and Bonferroni over m pairs, a lower bound of Holm's power) has

* power(n) = P(|T| > t_{1-a/2, n-1}), T noncentral t with n - 1 degrees of freedom and noncentrality
  delta sqrt(n) / sd_d(r) (:func:`t_power`);
* the minimum detectable effect: the delta whose power is the target (:func:`minimum_effect`);
* the expected width of the 1 - alpha interval of the mean difference, 2 t_{1-alpha/2, n-1} sd_d /
  sqrt(n) (the width at the pilot's sd; :func:`interval_width`);
* the smallest n reaching a power (:func:`inputs_for_power`).

:func:`resampled_power` is the same power by resampling the pilot: n differences drawn with
replacement from the pilot's, shifted to mean delta, the ratings' noise widened or narrowed to r
ratings by a normal term of variance 2 var_e (1/r - 1/r0) when positive (more noise) or the
differences shrunk towards their mean by sqrt(sd_d(r)^2 / sd_d(r0)^2) when negative (less), then
the paired t-test counted over ``trials`` rounds.

The question ``ppi`` (how many human labels PPI++ needs beside a metric, for a paired difference
y = z_A - z_B with the metric's difference f): from the pilot's labelled pairs (y, f), their
variances and covariance (divisor n0 - 1), PPI++'s variance formula (Angelopoulos, Duchi & Zrnic
2023; the conventions of :mod:`.ppi`) on n labelled and N unlabelled inputs is

    lam(n) = clip(cov(y, f) / ((1 + n / N) var(f)), 0, 1)
    se(n)^2 = lam^2 var(f) / N + (var(y) - 2 lam cov(y, f) + lam^2 var(f)) / n

(:func:`ppi_se`); the normal test of the difference at a level has power
Phi(delta / se - z) + Phi(-delta / se - z), z = z_{1-level/2} (:func:`normal_power`), and the
interval width 2 z_{1-alpha/2} se. :func:`resampled_ppi` is the same by resampling the pilot: n
pairs drawn with replacement, y shifted to mean delta, N metric values drawn from every pilot
metric value, and :func:`.ppi.mean` (the estimator ``metaeval ppi`` runs) counted over ``trials``.

The question ``metrics`` (metric A correlates better with the human than metric B): no closed form;
:func:`resampled_metric_power` draws ``n_systems`` systems and ``n_inputs`` inputs of the pilot
without replacement (sizes up to the pilot's: a draw with replacement repeats systems and inputs,
whose cells Perm-Both then swaps independently, a test that rejects too often), runs the Perm-Both
test of Deutsch et al. (TACL 2021, section 5;
:func:`.stats.hypothesis.permutation_test`, ``k`` resamples) on each draw and counts p <= level.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy import optimize, stats

from metaeval.analyses import conclusions


def difference_sd(var_d: float, var_e: float, r0: float, r: float) -> float:
    """sd_d(r): the standard deviation of a paired difference at r ratings per cell (module
    docstring); NaN when var_d is undefined."""
    if not math.isfinite(var_d):
        return math.nan
    return math.sqrt(max(var_d - 2 * var_e / r0 + 2 * var_e / r, 0.0))


def t_power(delta: float, sd: float, n: int, level: float) -> float:
    """The two-sided paired t-test's power on n inputs at ``level`` for a true mean difference
    ``delta`` with sd ``sd`` (noncentral t); NaN for n < 2 or an undefined sd; 1 when sd is 0 and
    delta is not (level when both are)."""
    if n < 2 or not math.isfinite(sd) or not 0 < level < 1:
        return math.nan
    if sd == 0:
        return 1.0 if delta != 0 else level
    df, nc = n - 1, delta * math.sqrt(n) / sd
    c = stats.t.ppf(1 - level / 2, df)
    # P(T > c) + P(T < -c), the second as P(-T > c) (scipy's far lower tail of nct.cdf can be NaN)
    return float(stats.nct.sf(c, df, nc) + stats.nct.sf(c, df, -nc))


def minimum_effect(sd: float, n: int, level: float, power: float) -> float:
    """The smallest |delta| whose :func:`t_power` is ``power`` (brentq on delta); NaN when undefined."""
    if n < 2 or not math.isfinite(sd) or sd <= 0 or not 0 < power < 1 or power <= level:
        return math.nan
    f = lambda d: t_power(d, sd, n, level) - power        # noqa: E731 - increasing in d >= 0
    high = sd
    while f(high) < 0:
        high *= 2
    return float(optimize.brentq(f, 0.0, high, xtol=1e-10 * sd))


def interval_width(sd: float, n: int, alpha: float) -> float:
    """2 t_{1-alpha/2, n-1} sd / sqrt(n): the width of the t interval of the mean difference at sd."""
    if n < 2 or not math.isfinite(sd):
        return math.nan
    return float(2 * stats.t.ppf(1 - alpha / 2, n - 1) * sd / math.sqrt(n))


def inputs_for_power(delta: float, sd: float, level: float, power: float, most: int = 10**7) -> int | None:
    """The smallest n >= 2 with :func:`t_power` >= ``power`` (None: none up to ``most``, or no effect)."""
    if delta == 0 or not math.isfinite(sd) or not 0 < power < 1:
        return None
    if t_power(delta, sd, most, level) < power:
        return None
    lo, hi = 2, 2
    while t_power(delta, sd, hi, level) < power:
        lo, hi = hi, hi * 2
    while lo < hi:                                        # power is increasing in n
        mid = (lo + hi) // 2
        if t_power(delta, sd, mid, level) >= power:
            hi = mid
        else:
            lo = mid + 1
    return lo


def pilot(differences: npt.ArrayLike, within_variances: npt.ArrayLike | None = None,
          ratings: float = 1.0) -> tuple[float, float, float, int]:
    """(mean, var with divisor n0 - 1, var_e, n0) of the pilot's differences; ``within_variances``:
    each cell's variance of its ratings (divisor count - 1; NaN where a cell has one rating), pooled
    as their mean (0 without: the ratings' noise unknown, assumed in the differences)."""
    d = np.asarray(differences, float)
    d = d[~np.isnan(d)]
    if d.size < 2:
        return math.nan, math.nan, math.nan, int(d.size)
    w = np.asarray(within_variances if within_variances is not None else [], float)
    w = w[~np.isnan(w)]
    return float(d.mean()), float(d.var(ddof=1)), float(w.mean()) if w.size else 0.0, int(d.size)


def resampled_power(differences: npt.ArrayLike, delta: float, n: int, level: float, *, var_e: float = 0.0,
                    r0: float = 1.0, r: float = 1.0, trials: int = 2000, seed: int = 0) -> float:
    """The paired t-test's power by resampling the pilot (module docstring); NaN when undefined."""
    d = np.asarray(differences, float)
    d = d[~np.isnan(d)]
    if d.size < 2 or n < 2:
        return math.nan
    rng = np.random.default_rng(seed)
    centred = d - d.mean()
    extra = 2 * var_e * (1 / r - 1 / r0)
    var_d = float(d.var(ddof=1))
    if extra < 0 and var_d > 0:
        centred = centred * math.sqrt(max(var_d + extra, 0.0) / var_d)
    draws = centred[rng.integers(0, d.size, size=(trials, n))] + delta
    if extra > 0:
        draws = draws + rng.normal(0.0, math.sqrt(extra), size=(trials, n))
    mean, sd = draws.mean(axis=1), draws.std(axis=1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / math.sqrt(n))
    p = 2 * stats.t.sf(np.abs(t), n - 1)
    p = np.where(sd > 0, p, np.where(mean != 0, 0.0, 1.0))
    return float(conclusions.rejects(p, level).mean())


def ppi_moments(y: npt.ArrayLike, f: npt.ArrayLike) -> tuple[float, float, float]:
    """(var(y), var(f), cov(y, f)) of the pilot's labelled pairs, divisor n0 - 1 (NaN below 2)."""
    y, f = np.asarray(y, float), np.asarray(f, float)
    if y.size < 2:
        return math.nan, math.nan, math.nan
    c = np.cov(y, f, ddof=1)
    return float(c[0, 0]), float(c[1, 1]), float(c[0, 1])


def ppi_se(var_y: float, var_f: float, cov: float, n: int, N: int, lam: float | None = None) -> tuple[float, float]:
    """(se, lam) of PPI++'s mean on n labelled and N unlabelled inputs (module docstring); ``lam``
    None: the variance-minimising one, clipped to [0, 1] (0 when the metric is constant); NaN when
    undefined (n < 2, N < 1, undefined moments)."""
    if n < 2 or N < 1 or not all(math.isfinite(v) for v in (var_y, var_f, cov)):
        return math.nan, math.nan
    if lam is None:
        lam = float(np.clip(cov / ((1 + n / N) * var_f), 0.0, 1.0)) if var_f > 0 else 0.0
    var = lam ** 2 * var_f / N + (var_y - 2 * lam * cov + lam ** 2 * var_f) / n
    return math.sqrt(max(var, 0.0)), float(lam)


def normal_power(delta: float, se: float, level: float) -> float:
    """The two-sided normal test's power at ``level`` for a true difference ``delta`` and standard
    error ``se``; NaN when se is undefined or 0."""
    if not (math.isfinite(se) and se > 0) or not 0 < level < 1:
        return math.nan
    z = stats.norm.ppf(1 - level / 2)
    return float(stats.norm.cdf(delta / se - z) + stats.norm.cdf(-delta / se - z))


def normal_minimum_effect(se: float, level: float, power: float) -> float:
    """The smallest |delta| whose :func:`normal_power` at ``se`` is ``power`` (brentq); NaN when undefined."""
    if not (math.isfinite(se) and se > 0) or not 0 < power < 1 or power <= level:
        return math.nan
    f = lambda d: normal_power(d, se, level) - power        # noqa: E731 - increasing in d >= 0
    high = se
    while f(high) < 0:
        high *= 2
    return float(optimize.brentq(f, 0.0, high, xtol=1e-10 * se))


def labels_for_power(delta: float, var_y: float, var_f: float, cov: float, N: int, level: float, power: float,
                     most: int = 10**7) -> int | None:
    """The fewest labels n >= 2 whose :func:`normal_power` of PPI++ at N unlabelled inputs reaches
    ``power`` (None: none up to ``most``, or no effect). se(n) falls as n grows (lam optimal)."""
    if delta == 0 or not 0 < power < 1:
        return None

    def reaches(n):
        p = normal_power(delta, ppi_se(var_y, var_f, cov, n, N)[0], level)
        return math.isfinite(p) and p >= power

    if not reaches(most):
        return None
    lo, hi = 2, 2
    while not reaches(hi):
        lo, hi = hi, hi * 2
    while lo < hi:
        mid = (lo + hi) // 2
        if reaches(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def resampled_ppi(y: npt.ArrayLike, f: npt.ArrayLike, f_all: npt.ArrayLike, delta: float, n: int, N: int,
                  level: float, alpha: float, *, trials: int = 1000, seed: int = 0) -> tuple[float, float]:
    """(power, mean width of the 1 - alpha interval) of :func:`.ppi.mean` by resampling the pilot
    (module docstring); NaN when undefined."""
    from metaeval.analyses import ppi

    y, f, f_all = (np.asarray(a, float) for a in (y, f, f_all))
    if y.size < 2 or n < 2 or N < 1 or f_all.size < 1:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    shifted = y - y.mean() + delta
    z_level, z_alpha = stats.norm.ppf(1 - level / 2), stats.norm.ppf(1 - alpha / 2)
    rejected, widths = 0, []
    for _ in range(trials):
        i = rng.integers(0, y.size, n)
        u = f_all[rng.integers(0, f_all.size, N)]
        e = ppi.mean(shifted[i], f[i], u, alpha=alpha)
        if e.se > 0:
            rejected += abs(e.estimate) > z_level * e.se
            widths.append(2 * z_alpha * e.se)
        else:
            rejected += e.estimate != 0
    return rejected / trials, float(np.mean(widths)) if widths else math.nan


def resampled_metric_power(X: npt.ArrayLike, Y: npt.ArrayLike, Z: npt.ArrayLike, n_systems: int, n_inputs: int,
                           level: float, *, correlation_level: str = "system", coefficient: str = "kendall",
                           alternative: str = "two-sided", k: int = 200, trials: int = 200, seed: int = 0,
                           tick=None) -> float:
    """The Perm-Both test's power (p <= ``level``) on draws of n_systems of the pilot's systems and
    n_inputs of its inputs without replacement (module docstring); trials whose p is undefined (a
    constant draw) count as not rejected. ``tick``: called after each trial (progress). NaN when a
    size exceeds the pilot's."""
    from metaeval.analyses.stats import hypothesis

    X, Y, Z = (np.asarray(a, float) for a in (X, Y, Z))
    if not (2 <= n_systems <= Z.shape[0] and 2 <= n_inputs <= Z.shape[1]):
        return math.nan
    seeds = np.random.SeedSequence(seed).spawn(2)
    rng = np.random.default_rng(seeds[0])
    rejected = 0
    for t in range(trials):
        rows = rng.choice(Z.shape[0], n_systems, replace=False)
        cols = rng.choice(Z.shape[1], n_inputs, replace=False)
        pick = np.ix_(rows, cols)
        p = hypothesis.permutation_test(X[pick], Y[pick], Z[pick], correlation_level, coefficient, "both", k,
                                        alternative, seed=int(seeds[1].generate_state(1)[0]) + t).pvalue
        rejected += bool(conclusions.rejects(p, level))
        if tick is not None:
            tick()
    return rejected / trials
