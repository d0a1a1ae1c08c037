"""The paper's simulations (Deutsch, Dror & Roth 2021, §5) and normality tests (appendix A).

Pure functions on arrays, no database (:mod:`metaeval.runs.metrics.simulation` runs them over the
warehouse). Matrices are N systems x M inputs, NaN = missing, oriented so higher is better.

- **CI coverage** (§5.1), :func:`coverage_trials`: trial t splits the systems and the inputs at
  random into halves A and B (:func:`split_halves`), computes a 1 - alpha CI on (X_A, Z_A) and
  records whether the held-out correlation r(X_B, Z_B) lies inside it, above it or below it.
- **Power** (§5.2), :func:`power_pvalues`: trial t tests H1: corr(X, Z) > corr(Y_t, Z), X =
  ROUGE-1 and Y_t = R_k, ROUGE-1 on a random share of each candidate's tokens
  (:func:`draw_ablated`); the power is the share of trials with p <= alpha.
- Both take ``system_inputs`` (:mod:`.stats.protocols`): when the metrics scored inputs the
  human did not judge, each trial's interval or test is the one ``metaeval ci|compare
  --system-inputs`` computes on its data ("judged": on the judged inputs only).
- **Normality** (appendix A), :func:`normality`: Shapiro-Wilk on the N system means, and the
  percent of per-input tests with p <= alpha.

Reproducibility: trial t's random numbers depend only on the seed and t, never on how many
trials are run, in which order, in which process, or on the other configurations:

- its split comes from ``default_rng(SeedSequence(seed, spawn_key=(0, t)))``;
- its resamples are those of the statistics core called with ``seed = trial_seed(seed, 1, t)``
  (shared by every level and coefficient, so configurations are compared on the same draws):
  a trial's CI *is* ``bootstrap_ci(X_A, Z_A, ..., seed=trial_seed(seed, 1, t))`` and its
  p-value ``permutation_test(X, Y_t, Z, ..., seed=trial_seed(seed, 1, t))`` (and so on);
- R_k of trials b*TRIAL_BLOCK .. (b+1)*TRIAL_BLOCK - 1 is one ``rouge1_ablated`` call with
  repetitions = TRIAL_BLOCK, seeded with ``SeedSequence(seed, spawn_key=(2, round(1e6 k), b))``.

The resampled statistics are computed in one batch per trial (no loop over resamples): by the
batched evaluators of :mod:`analyses.stats.batched`, or, for summary-level Pearson and
Spearman with resampled systems, by the faster :mod:`analyses.simulation_kernels`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import scipy.stats

from metaeval.analyses import conclusions
from metaeval.analyses import simulation_kernels as kernels
from metaeval.analyses import stats, text
from metaeval.analyses.stats import batched, intervals, protocols, resampling
from metaeval.analyses.stats.validation import alpha_iv, coefficient_iv, k_iv, level_iv, matrices_iv
from metaeval.analyses.stats.hypothesis import count_extreme, resampling_pvalue, standardize, zero_if_rounding

CI_METHODS = ("fisher", "boot-systems", "boot-inputs", "boot-both")
TEST_METHODS = ("williams", "perm-systems", "perm-inputs", "perm-both", "boot-systems", "boot-inputs", "boot-both")
SPLIT_STREAM, RESAMPLE_STREAM, ABLATION_STREAM = 0, 1, 2
#: Trials whose R_k are drawn together; part of the reproducibility contract of the power
#: simulation (changing it changes the numbers a seed gives). Also the unit of persistence.
TRIAL_BLOCK = 50
#: Resamples x cells evaluated at once (bounds memory; depends only on the data's shape).
CHUNK_CELLS = 2**22
NORMALITY_TEST = "shapiro-wilk"

Config = tuple[str, str]  # (level, coefficient)


# --- seeds and splits ----------------------------------------------------------------------
def trial_seed(seed: int, stream: int, trial: int) -> int:
    """The 64-bit integer seed of ``trial`` in ``stream``, from SeedSequence(seed, spawn_key=(stream, trial))."""
    return int(np.random.SeedSequence(_seed(seed), spawn_key=(stream, trial)).generate_state(1, np.uint64)[0])


@dataclass(frozen=True)
class Split:
    """Index arrays (sorted) of the two halves of the systems and of the inputs."""

    systems_a: np.ndarray
    systems_b: np.ndarray
    inputs_a: np.ndarray
    inputs_b: np.ndarray

    def halves(self, A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(A restricted to half A, A restricted to half B)."""
        return A[np.ix_(self.systems_a, self.inputs_a)], A[np.ix_(self.systems_b, self.inputs_b)]


def split_halves(n_systems: int, n_inputs: int, seed: int, trial: int, *, judged: np.ndarray | None = None) -> Split:
    """Trial ``trial``'s random split: systems and inputs each permuted, A = the first
    floor(n / 2), B = the next floor(n / 2) (equal halves; the middle one left out if n is odd).

    ``judged`` (a mask of the inputs the human judged; some not): the judged inputs and the
    others are split separately, each half getting half of each: the systems and the judged
    inputs exactly as ``split_halves(n_systems, n_judged, ...)`` splits data holding only the
    judged inputs, then the other inputs by the next permutation of the same generator."""
    strata = [np.arange(n_inputs)]
    if judged is not None and not np.all(judged):
        judged = np.asarray(judged, dtype=bool)
        if judged.shape != (n_inputs,):
            raise ValueError(f"judged must be a mask of the {n_inputs} inputs; got shape {judged.shape}")
        strata = [np.flatnonzero(judged), np.flatnonzero(~judged)]
    if n_systems < 4 or len(strata[0]) < 2:
        raise ValueError(f"splitting into halves needs at least 4 systems and 2 {'judged ' if len(strata) > 1 else ''}"
                         f"inputs; got {n_systems} x {len(strata[0])}")
    rng = np.random.default_rng(np.random.SeedSequence(_seed(seed), spawn_key=(SPLIT_STREAM, trial)))
    systems, h = rng.permutation(n_systems), n_systems // 2
    a, b = [], []
    for stratum in strata:
        inputs, g = stratum[rng.permutation(len(stratum))], len(stratum) // 2
        a.append(inputs[:g])
        b.append(inputs[g:2 * g])
    return Split(np.sort(systems[:h]), np.sort(systems[h:2 * h]), np.sort(np.concatenate(a)),
                 np.sort(np.concatenate(b)))


# --- coverage ------------------------------------------------------------------------------
@dataclass(frozen=True)
class CoverageCounts:
    """Outcomes of coverage trials; ``coverage`` = contains / defined trials."""

    trials: int
    contains: int
    too_high: int
    too_low: int
    undefined: int

    @property
    def coverage(self) -> float:
        defined = self.trials - self.undefined
        return self.contains / defined if defined else float("nan")

    def __add__(self, other: CoverageCounts) -> CoverageCounts:
        return CoverageCounts(*(a + b for a, b in zip(self._values(), other._values())))

    def _values(self) -> tuple[int, ...]:
        return self.trials, self.contains, self.too_high, self.too_low, self.undefined


@dataclass(frozen=True)
class CoverageTrials:
    """Per trial (in the order asked): the CI on half A and the correlation of half B."""

    trials: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    heldout: np.ndarray

    def counts(self) -> CoverageCounts:
        """contains: lower <= r_B <= upper; too_high: r_B > upper; too_low: r_B < lower;
        undefined: a bound or r_B is NaN."""
        defined = ~(np.isnan(self.lower) | np.isnan(self.upper) | np.isnan(self.heldout))
        high = defined & (self.heldout > self.upper)
        low = defined & (self.heldout < self.lower)
        return CoverageCounts(len(self.trials), int((defined & ~high & ~low).sum()), int(high.sum()),
                              int(low.sum()), int((~defined).sum()))


def coverage_trials(X: np.ndarray, Z: np.ndarray, method: str, configs: Sequence[Config], trials: Sequence[int],
                    *, k: int = 1000, alpha: float = 0.05, seed: int = 0,
                    system_inputs: str = "all") -> dict[Config, CoverageTrials]:
    """Coverage trials of the CI ``method`` for each (level, coefficient) in ``configs``.

    ``system_inputs`` (:mod:`.stats.protocols`): "judged" first restricts X and Z to the inputs
    the human judged (the trials are those of data holding only them); "all" keeps every input
    the metric scored. Trial t: split = :func:`split_halves` (N, M, seed, t) of the systems and
    the inputs, the judged and the unjudged inputs split separately (``judged=``; so the judged
    inputs' halves are those of the data holding only them); the CI is what ``metaeval ci
    --system-inputs P`` computes on half A: ``fisher_ci(X_A, Z_A, level, coefficient, alpha)``
    or ``bootstrap_ci(X_A, Z_A, level, coefficient, how, k, alpha, seed=trial_seed(seed, 1, t),
    paired_inputs=...)`` on the arrays of ``protocols.apply([X_A, Z_A], level, P)`` (at the
    system level under "all", the metric's and the human's inputs of half A are drawn
    independently when they differ; at the other levels the unjudged inputs are left out); the
    held-out value is ``correlate(X_B, Z_B, level, coefficient)`` on the arrays
    ``protocols.apply`` gives half B (what ``correlate --system-inputs P`` computes).
    ``method``: fisher, boot-systems, boot-inputs, boot-both.
    """
    X, Z = matrices_iv(X=X, Z=Z)
    configs = _configs(configs)
    trials = _trials(trials)
    if method not in CI_METHODS:
        raise ValueError(f"unknown CI method {method!r}; choose from {', '.join(CI_METHODS)}")
    k_iv(k)
    alpha_iv(alpha)
    judged = protocols.judged_inputs(Z)
    if protocols.system_inputs_iv(system_inputs) == "judged":
        X, Z = np.ascontiguousarray(X[:, judged]), np.ascontiguousarray(Z[:, judged])
        judged = judged[judged]
    n_sys, n_in = X.shape
    out = {c: np.full((3, len(trials)), np.nan) for c in configs}
    for i, t in enumerate(trials):
        split = split_halves(n_sys, n_in, seed, t, judged=judged)
        (XA, XB), (ZA, ZB) = split.halves(X), split.halves(Z)
        bounds = {}
        for (xa, za), paired, group in _protocol_groups([XA, ZA], configs, system_inputs):
            if method == "fisher":
                bounds.update({c: _bounds(stats.fisher_ci(xa, za, *c, alpha=alpha)) for c in group})
                continue
            how = method.removeprefix("boot-")
            if paired:
                draw = partial(resampling.bootstrap_indices, n_systems=xa.shape[0], n_inputs=xa.shape[1], method=how)
                evaluators = [partial(_bootstrap_statistics, xa, za, *c) for c in group]
            else:  # system level, unpaired inputs: bootstrap_ci(..., paired_inputs=False)
                unpaired = [intervals._unpaired(xa, za, "system", coefficient_iv(c[1]), how) for c in group]
                draw, evaluators = unpaired[0][0], [evaluate for _, evaluate in unpaired]
            samples = _resampled(k, trial_seed(seed, RESAMPLE_STREAM, t), draw, xa.size, evaluators)
            bounds.update({c: resampling.percentile_interval(s, alpha)[:2] for c, s in zip(group, samples)})
        for (xb, zb), _, group in _protocol_groups([XB, ZB], configs, system_inputs):
            for c in group:
                out[c][:, i] = (*bounds[c], stats.correlate(xb, zb, *c))
    return {c: CoverageTrials(trials, *v) for c, v in out.items()}


def _protocol_groups(arrays: Sequence[np.ndarray], configs: Sequence[Config], system_inputs: str):
    """The configs grouped by the arrays ``protocols.apply`` gives their level (metrics..., then
    the human last), and whether their inputs are paired: ``[(arrays, paired, configs)]``. The
    levels whose arrays are the same share one group, so that they share one set of resamples as
    before the protocol (on fully judged data every level has the same arrays)."""
    groups: dict[tuple, tuple] = {}
    for c in configs:
        read, paired, _, kept = protocols.apply(arrays, c[0], system_inputs)
        key = (None if kept is None or kept.all() else kept.tobytes(), paired)
        groups.setdefault(key, (read, paired, []))[2].append(c)
    return list(groups.values())


def _bounds(r) -> tuple[float, float]:
    return r.lower, r.upper


def _bootstrap_statistics(X, Z, level, coefficient, rows, cols) -> np.ndarray:
    """batched.bootstrap_statistics, by the kernels where they are faster (same numbers)."""
    if level == "summary" and coefficient in ("pearson", "spearman") and rows is not None:
        counts = [None if a is None else batched._counts(a, n) for a, n in ((rows, X.shape[0]), (cols, X.shape[1]))]
        return kernels.bootstrap_summary(X, Z, coefficient, *counts)
    return batched.bootstrap_statistics(X, Z, level, coefficient_iv(coefficient), rows, cols)


# --- power ---------------------------------------------------------------------------------
def ablation_seed(seed: int, proportion: float, block: int) -> np.random.SeedSequence:
    """The seed of R_k's draws for trial block ``block`` at ``proportion``."""
    return np.random.SeedSequence(_seed(seed), spawn_key=(ABLATION_STREAM, round(proportion * 1_000_000), block))


def draw_ablated(corpus: text.TextCorpus, proportion: float, block: int, seed: int,
                 variant: str = "recall") -> np.ndarray:
    """R_k (``variant`` of ROUGE-1 on a random ``proportion`` of each candidate's tokens) for the
    TRIAL_BLOCK trials of block ``block``: (TRIAL_BLOCK, summaries), in corpus order."""
    if variant not in ("recall", "precision", "f1"):
        raise ValueError(f"variant must be recall, precision or f1; got {variant!r}")
    return text.rouge1_ablated(corpus, proportion, TRIAL_BLOCK, ablation_seed(seed, proportion, block))[variant]


def power_pvalues(X: np.ndarray, Ys: np.ndarray, Z: np.ndarray, method: str, configs: Sequence[Config],
                  trials: Sequence[int], *, k: int = 1000, seed: int = 0,
                  system_inputs: str = "all") -> dict[Config, np.ndarray]:
    """One-tailed p-values of H1: corr(X, Z) > corr(Ys[i], Z), for trial ``trials[i]``.

    ``method`` as ``metaeval compare --system-inputs P``, on the arrays of
    ``protocols.apply([X, Y, Z], level, P)`` (at the system level under "all" every input the
    metrics scored; otherwise the judged inputs only): williams -> ``williams_test(X, Y, Z,
    level, coefficient, "greater")``; perm-* -> ``permutation_test(..., how, k, "greater",
    seed=trial_seed(seed, 1, t))``; boot-* -> ``paired_bootstrap_test(..., how, k, "greater",
    seed=trial_seed(seed, 1, t), paired_inputs=...)`` (unpaired at the system level under "all" with unjudged inputs; the
    statistics core's p-value conventions; alternative "greater").
    """
    configs = _configs(configs)
    trials = _trials(trials)
    Ys = np.asarray(Ys, dtype=np.float64)
    if Ys.ndim != 3 or len(Ys) != len(trials):
        raise ValueError(f"Ys must be (trials, N, M) with one matrix per trial; got shape {Ys.shape}")
    if method not in TEST_METHODS:
        raise ValueError(f"unknown test {method!r}; choose from {', '.join(TEST_METHODS)}")
    if method != "williams":
        k_iv(k)
    protocols.system_inputs_iv(system_inputs)
    out = {c: np.empty(len(trials)) for c in configs}
    for i, (t, Y) in enumerate(zip(trials, Ys)):
        X, Y, Z = matrices_iv(X=X, Y=Y, Z=Z)
        for (x, y, z), paired, group in _protocol_groups([X, Y, Z], configs, system_inputs):
            if method == "williams":
                for c in group:
                    out[c][i] = _williams_pvalue(x, y, z, *c)
                continue
            family, how = method.split("-")
            n_sys, n_in = x.shape
            if family == "perm":
                A, B = standardize(x), standardize(y)
                draw = partial(resampling.permutation_masks, n_systems=n_sys, n_inputs=n_in, method=how)
                evaluators = [partial(_permutation_statistics, A, B, z, *c) for c in group]
            elif paired:
                A, B = x, y
                draw = partial(resampling.bootstrap_indices, n_systems=n_sys, n_inputs=n_in, method=how)
                evaluators = [partial(_paired_statistics, A, B, z, *c) for c in group]
            else:  # system level, unpaired inputs: paired_bootstrap_test(..., paired_inputs=False)
                A, B = x, y
                draw = intervals._unpaired(x, z, "system", coefficient_iv(group[0][1]), how, y)[0]
                evaluators = [partial(_unpaired_paired_statistics, x, y, z, coefficient_iv(c[1])) for c in group]
            samples = _resampled(k, trial_seed(seed, RESAMPLE_STREAM, t), draw, x.size, evaluators)
            for c, s in zip(group, samples):
                delta = zero_if_rounding(stats.correlate(A, z, *c) - stats.correlate(B, z, *c))
                valid = zero_if_rounding(s[~np.isnan(s)])
                if family == "perm":  # permutation_test, variant "paper" (its count, within ROUNDING)
                    out[c][i] = resampling_pvalue(delta, count_extreme(valid, delta, "greater", "permutation"),
                                                  valid.size, add_one=True)
                else:  # paired_bootstrap_test
                    out[c][i] = resampling_pvalue(delta, count_extreme(valid, delta, "greater", "bootstrap"),
                                                  valid.size, add_one=False)
    return out


def _unpaired_paired_statistics(X, Y, Z, coef, rows, cols_x, cols_z) -> np.ndarray:
    """r(X, Z) - r(Y, Z) of each system-level resample with unpaired inputs (as
    paired_bootstrap_test(..., paired_inputs=False))."""
    return (batched.unpaired_system_evaluator(X, Z, coef)(rows, cols_x, cols_z)
            - batched.unpaired_system_evaluator(Y, Z, coef)(rows, cols_x, cols_z))


def _williams_pvalue(X, Y, Z, level, coefficient) -> float:
    """williams_test's p (t = 0, so p = 1/2, when R_k = ROUGE-1 at proportion 1: r12 = r13)."""
    return stats.williams_test(X, Y, Z, level, coefficient, alternative="greater").pvalue


def _permutation_statistics(X, Y, Z, level, coefficient, mask) -> np.ndarray:
    if level == "summary" and coefficient == "pearson" and np.array_equal(np.isnan(X), np.isnan(Y)):
        return kernels.permutation_summary_pearson(X, Y, Z, mask)
    return batched.permutation_statistics(X, Y, Z, level, coefficient_iv(coefficient), mask)


def _paired_statistics(X, Y, Z, level, coefficient, rows, cols) -> np.ndarray:
    return _bootstrap_statistics(X, Z, level, coefficient, rows, cols) - _bootstrap_statistics(
        Y, Z, level, coefficient, rows, cols)


# --- normality -----------------------------------------------------------------------------
@dataclass(frozen=True)
class NormalityResult:
    """A Shapiro-Wilk diagnostic at one level.

    system: ``statistic`` and ``p_value`` of the test on the system means, ``n`` of them;
    summary: ``percent_significant`` of the ``n`` inputs (with >= 3 values) whose test has
    p <= alpha (the conclusion layer's rule 0, :func:`metaeval.analyses.conclusions.rejects`).
    """

    level: str
    statistic: float
    p_value: float
    percent_significant: float
    n: int
    test: str = NORMALITY_TEST


def normality(A: np.ndarray, alpha: float = 0.05) -> tuple[NormalityResult, NormalityResult]:
    """Shapiro-Wilk (scipy.stats.shapiro) on the system means (NaN ignored; systems without a
    value left out) and on each input's non-NaN values; a level with fewer than 3 values
    (system) or no input with 3 values (summary) gets NaN."""
    (A,) = matrices_iv(A=A)
    alpha_iv(alpha)
    has = ~np.isnan(A)
    means = np.where(has, A, 0.0).sum(axis=1)[has.any(axis=1)] / has.sum(axis=1)[has.any(axis=1)]
    statistic, p = _shapiro(means)
    column_p = np.array([_shapiro(A[has[:, j], j])[1] for j in range(A.shape[1]) if has[:, j].sum() >= 3])
    percent = 100.0 * float(np.mean(conclusions.rejects(column_p, alpha))) if column_p.size else np.nan
    return (NormalityResult("system", statistic, p, np.nan, int(means.size)),
            NormalityResult("summary", np.nan, np.nan, percent, int(column_p.size)))


def _shapiro(x: np.ndarray) -> tuple[float, float]:
    if x.size < 3:
        return np.nan, np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns for constant input (W = 1, p = 1)
        r = scipy.stats.shapiro(x)
    return float(r.statistic), float(r.pvalue)


# --- helpers -----------------------------------------------------------------------------
def _resampled(k: int, seed: int, draw: Callable, cells: int, evaluators: Sequence[Callable]) -> list[np.ndarray]:
    """Each evaluator's statistic on resamples 0..k-1 of ``seed`` (the statistics core's draws),
    in chunks of at most CHUNK_CELLS resampled cells; the draws are shared by the evaluators."""
    sequence = np.random.SeedSequence(seed)
    out = np.empty((len(evaluators), k))
    step = max(1, CHUNK_CELLS // cells)
    for start in range(0, k, step):
        stop = min(k, start + step)
        draws = resampling.draw_range(sequence, start, stop, draw)
        for e, evaluate in enumerate(evaluators):
            out[e, start:stop] = evaluate(*draws)
    return list(out)


def _configs(configs: Sequence[Config]) -> list[Config]:
    out = []
    for level, coefficient in configs:
        level_iv(level)
        coefficient_iv(coefficient)
        out.append((level, coefficient))
    if not out:
        raise ValueError("give at least one (level, coefficient)")
    return out


def _trials(trials: Sequence[int]) -> np.ndarray:
    trials = np.asarray(trials, dtype=np.int64)
    if trials.ndim != 1 or (trials < 0).any():
        raise ValueError("trials must be a sequence of non-negative trial indices")
    return trials


def _seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer; got {seed!r}")
    return int(seed)
