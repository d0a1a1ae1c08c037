"""Tests of rho(X, Z) - rho(Y, Z): H1 != 0 (alternative "two-sided", the default, as the command line), > 0
("greater": H0 <= 0) or < 0 ("less"); seed 0 by default, as the command line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np
import numpy.typing as npt

from . import _engine, allpairs, batched, permuted_sums, resampling
from . import clusters as clustering
from .validation import (
    alternative_iv,
    batch_size_iv,
    coefficient_iv,
    k_iv,
    level_iv,
    matrices_iv,
    method_iv,
    permutation_variant_iv,
    seed_iv,
)
from .correlation import level_correlation, scaled, unit_scale
from .intervals import UNPAIRED, _unpaired, conventions, rng_description
from .results import PairedBootstrapResult, PermutationResult

#: mt-metrics-eval's PermutationSigDiffParams: early stop at a block boundary when the share of
#: resamples as extreme as delta is below early_min or above early_max.
EARLY_STOPPING = {"early_min": 0.02, "early_max": 0.5}

#: Differences of correlations within this of 0 are rounding, not evidence: a metric and a
#: rescaled copy of it (X = c Y) have correlations that differ by ~1e-16, which without this
#: would make Williams' t huge and resampling p-values 0.
ROUNDING = 1e-12


def zero_if_rounding(x):
    """``x`` with the values within :data:`ROUNDING` of 0 set to 0 (scalar or array)."""
    return np.where(np.abs(x) <= ROUNDING, 0.0, x) if np.ndim(x) else (0.0 if abs(x) <= ROUNDING else x)


def resampling_pvalue(delta: float, count: int, n_valid: int, add_one: bool) -> float:
    """p = (1 + count) / (1 + n_valid) (``add_one``) or count / n_valid, ``count`` being the
    resamples at least as extreme as ``delta`` among the ``n_valid`` whose delta_b is defined.

    NaN when delta is NaN -- a comparison that is undefined has no p-value, whatever the
    resamples gave -- or when no resample is defined. Every resampling test's p comes from here.
    """
    if np.isnan(delta) or n_valid == 0:
        return np.nan
    return (int(add_one) + count) / (int(add_one) + n_valid)


def undefined_correlations(level: str, **named: float) -> str | None:
    """Why a comparison of these correlations is undefined: the names of the NaN ones; None if
    all are defined."""
    nan = [name for name, r in named.items() if np.isnan(r)]
    if not nan:
        return None
    return (f"{' and '.join(nan)} undefined at the {level} level (a constant side, or fewer than "
            f"2 pairs)")


def _resampling_undefined(level: str, r_xz: float, r_yz: float, n_valid: int) -> str | None:
    """Why a resampling test's p-value is NaN (None if it is defined)."""
    if reason := undefined_correlations(level, **{"r(X,Z)": r_xz, "r(Y,Z)": r_yz}):
        return f"delta undefined: {reason}"
    return None if n_valid else "no resample has a defined delta_b"


def standardize(A: np.ndarray) -> np.ndarray:
    """(A - mean) / std over all non-NaN cells (ddof 0); all NaN when A is constant.

    Computed on A scaled by a power of two (:func:`.correlation.unit_scale`; exact, the same
    z-scores), so that the mean and std of any finite values (near 1e308) are finite.
    """
    B = scaled(A, unit_scale(A, axis=None))
    with np.errstate(invalid="ignore", divide="ignore"):
        return (B - np.nanmean(B)) / np.nanstd(B)


def permutation_test(
    X: npt.ArrayLike,
    Y: npt.ArrayLike,
    Z: npt.ArrayLike,
    level: str,
    coefficient: str = "pearson",
    method: str = "both",
    k: int = 1000,
    alternative: str = "two-sided",
    seed: int | None = 0,
    *,
    variant: str = "paper",
    batch_size: int | None = None,
    k_block: int | None = None,
    clusters=None,
) -> PermutationResult:
    """Permutation test (approximate randomisation) of delta = r(X,Z) - r(Y,Z).

    ``clusters``: a cluster label per input (:mod:`.clusters`): perm-inputs swaps whole
    clusters, perm-both each system's cells of a cluster together (one coin per system and
    cluster); perm-systems is unchanged. One input per cluster: the unclustered numbers.

    ``k_block``: early stopping as mt-metrics-eval's PermutationSigDiff (block_size, with its
    early_min = 0.02 and early_max = 0.5 of :data:`EARLY_STOPPING`): after every ``k_block``
    resamples, with i resamples drawn so far, stop when #{extreme}/i' < early_min or > early_max
    (i' the defined ones); the p-value is then computed over the i resamples drawn (``samples``
    holds them, ``conventions["k_used"]`` counts them). The first i resamples are those of the
    run without early stopping.

    X and Y are standardised over all their cells (ddof 0); delta and delta_b within
    :data:`ROUNDING` of 0 count as 0. Each resample swaps the X and Y
    values of whole systems ("systems"), whole inputs ("inputs") or single cells ("both") with
    probability 1/2; delta_b = r(X'_b, Z) - r(Y'_b, Z).

    variant "paper" (default; Deutsch et al. 2021 reference code): p = (1 + #{delta_b >= delta})
    / (1 + k') for "greater", delta_b <= delta for "less", |delta_b| >= |delta| for
    "two-sided"; k' = resamples with a defined delta_b (= k unless some are undefined).
    variant "nlpstats": as nlpstats 0.0.1 -- p = #{...} / k', and "both" swaps a cell when its
    row coin XOR its column coin is heads.

    p is NaN when delta is (r(X,Z) or r(Y,Z) undefined: a constant metric, too few pairs) or
    no delta_b is defined; ``conventions["pvalue_undefined"]`` then says why.
    """
    X, Y, Z = matrices_iv(X=X, Y=Y, Z=Z)
    level, coef, method = level_iv(level), coefficient_iv(coefficient), method_iv(method)
    k, alternative, seq = k_iv(k), alternative_iv(alternative), seed_iv(seed)
    variant, batch_size = permutation_variant_iv(variant), batch_size_iv(batch_size)
    if k_block is not None:
        k_block = k_iv(k_block)
    groups = clustering.clusters_iv(clusters, X.shape[1])
    shared = allpairs.active() if k_block is None and groups is None else None
    if shared is not None:   # an all-pairs block: the reverse pair's resamples reused (module allpairs)
        linear = allpairs.linear()
        delta, r_xz, r_yz, samples = shared.permutation(
            (level, repr(coef), method, variant, k, *allpairs.seed_key(seq)), X, Y, Z,
            lambda: _permutation_samples(X, Y, Z, level, coef, method, seq, variant, batch_size, k, None, alternative,
                                         linear=linear),
            partial(_all_pairs_samples, Z=Z, level=level, coef=coef, method=method, seq=seq, variant=variant,
                    batch_size=batch_size, k=k) if linear else None)
    else:
        delta, r_xz, r_yz, samples = _permutation_samples(X, Y, Z, level, coef, method, seq, variant, batch_size, k,
                                                          k_block, alternative, clusters=groups)
    valid = samples[~np.isnan(samples)]
    count = count_extreme(valid, delta, alternative, "permutation")
    pvalue = resampling_pvalue(delta, count, valid.size, add_one=variant == "paper")
    undefined = _resampling_undefined(level, r_xz, r_yz, valid.size)
    conv = _permutation_conventions(level, coef, method, variant, k, alternative, seq, int(samples.size),
                                    int(valid.size), undefined, k_block)
    return PermutationResult(delta=delta, pvalue=pvalue, samples=samples,
                             conventions={**conv, **({} if groups is None else groups.conventions())})


#: The name of mt-metrics-eval's system-level permutation test (:func:`system_scores_permutation_test`)
#: among the test methods: perm-systems with mt-metrics-eval's standardisation and p-value.
MTME_SYSTEMS = "perm-systems-mtme"


def system_scores_permutation_test(
    X: npt.ArrayLike,
    Y: npt.ArrayLike,
    Z: npt.ArrayLike,
    coefficient: str = "pearson",
    k: int = 1000,
    alternative: str = "two-sided",
    seed: int | None = 0,
    *,
    k_block: int | None = None,
    batch_size: int | None = None,
) -> PermutationResult:
    """mt-metrics-eval's system-level ``PermutationSigDiff`` computed from segment-level matrices.

    mt-metrics-eval tests two metrics at the system level on their vectors of N system scores:
    each vector z-scored over the systems (``scipy.stats.zscore``, ddof 0), each resample swaps
    the two metrics' scores of each system with probability 1/2, delta_b = r(x'_b, z) - r(y'_b, z),
    and p = #{delta_b >= delta} / k (no added one; "greater" is its one-sided test of "X
    correlates better", the only one it computes; "less" and "two-sided" take the same draws with
    :func:`count_extreme`'s rule). Here the system scores are the coefficient's aggregate of each
    row of X, Y (the metric's) and Z (the human's); systems whose human score (mt-metrics-eval's
    None gold) or metric scores are undefined are left out before the z-scores, as its
    ``_ReshapeAndFilter`` drops the None gold. The draws are :func:`permutation_test`'s
    perm-systems masks on the N x 1 matrices (the same seed, the same masks), so the two tests
    differ only by what is standardised and swapped (cells of whole rows there, the system scores
    here) and the p-value's formula: Monte-Carlo draws, not mt-metrics-eval's, agreeing with its p
    within the binomial error. ``k_block``: its early stopping (block_size; early_min 0.02,
    early_max 0.5), as :func:`permutation_test`.
    """
    from .reductions import system_scores

    X, Y, Z = matrices_iv(X=X, Y=Y, Z=Z)
    coef = coefficient_iv(coefficient)
    k, alternative, seq = k_iv(k), alternative_iv(alternative), seed_iv(seed)
    if k_block is not None:
        k_block = k_iv(k_block)
    x, y, z = system_scores(X, coef.aggregate), system_scores(Y, coef.aggregate), system_scores(Z, coef.human_aggregate)
    keep = ~(np.isnan(x) | np.isnan(y) | np.isnan(z))
    columns = [a[keep][:, None] for a in (x, y, z)]          # N x 1: one "input", the system score
    plain = replace(coef, aggregate="mean", human_aggregate="mean")
    delta, r_xz, r_yz, samples = _permutation_samples(*columns, "system", plain, "systems", seq, "paper",
                                                      batch_size_iv(batch_size), k, k_block, alternative)
    valid = samples[~np.isnan(samples)]
    count = count_extreme(valid, delta, alternative, "permutation")
    pvalue = resampling_pvalue(delta, count, valid.size, add_one=False)
    undefined = _resampling_undefined("system", r_xz, r_yz, valid.size)
    conv = _permutation_conventions("system", coef, "systems", "paper", k, alternative, seq, int(samples.size),
                                    int(valid.size), undefined, k_block)
    conv.update(
        method=MTME_SYSTEMS,
        procedure="permutation test on the system scores (mt-metrics-eval PermutationSigDiff at the system level): "
                  "each system's two metric scores swapped with probability 1/2",
        variant="mt-metrics-eval",
        pvalue_formula=f"count / k; count = #{_EXTREME_TEXT[alternative]}",
        standardization="each metric's vector of system scores over the systems, ddof 0 (scipy.stats.zscore, as "
                        "mt-metrics-eval); perm-systems standardises X and Y over all cells",
        system_scores=f"each system's {coef.aggregate} over its inputs (the human's: {coef.human_aggregate}); "
                      f"systems without a score left out: {int((~keep).sum())}",
        reference="google-research/mt-metrics-eval stats.PermutationSigDiff (average_by='none', system-level "
                  "Correlation)")
    return PermutationResult(delta=delta, pvalue=pvalue, samples=samples, conventions=conv)


def _permutation_samples(X, Y, Z, level, coef, method, seq, variant, batch_size, k, k_block, alternative,
                         linear: bool = False, clusters=None) -> tuple:
    """(delta, r_xz, r_yz, samples) of :func:`permutation_test` (its early stopping included);
    ``linear``: the resampled deltas from :mod:`.permuted_sums` where it applies."""
    resampler = _permutation_resampler(X, Y, Z, level, coef, method, seq, variant, batch_size, linear, clusters)
    delta, r_xz, r_yz = resampler.delta, resampler.r_xz, resampler.r_yz
    parts, used = [], 0
    while used < k:
        stop = k if k_block is None else min(k, used + k_block)
        parts.append(resampler.samples(used, stop))
        used = stop
        if k_block is not None and used % k_block == 0 and used < k:
            drawn = np.concatenate(parts)
            drawn = drawn[~np.isnan(drawn)]
            share = _extreme(drawn, delta, alternative).sum() / drawn.size if drawn.size else 0.0
            if share < EARLY_STOPPING["early_min"] or share > EARLY_STOPPING["early_max"]:
                break
    return delta, r_xz, r_yz, np.concatenate(parts)


def _all_pairs_samples(metrics: list[np.ndarray], Z, level, coef, method, seq, variant, batch_size, k,
                       pairs: list[tuple[int, int]] | None = None) -> dict:
    """{(i, j): (delta, r_xz, r_yz, samples)} of the permutation test of every pair i < j of
    ``metrics`` (or of ``pairs``) against Z, computed together (:func:`.permuted_sums.pairs_evaluator`:
    the numbers of :func:`_permutation_samples` with ``linear``), :data:`.permuted_sums.PAIR_GROUP`
    pairs at a time (bounded memory; a pair's numbers do not depend on its group); the pairs of a
    group where that does not apply are left out (each is then tested on its own)."""
    import itertools

    standard = [standardize(X) for X in metrics]
    r = [level_correlation(Xs, Z, level, coef) for Xs in standard]
    pairs = list(itertools.combinations(range(len(metrics)), 2)) if pairs is None else list(pairs)
    n_sys, n_in = Z.shape
    stream = resampling.ResampleStream(
        seq, partial(resampling.permutation_masks, n_systems=n_sys, n_inputs=n_in, method=method, variant=variant))
    found = {}
    for first in range(0, len(pairs), permuted_sums.PAIR_GROUP):
        group = pairs[first:first + permuted_sums.PAIR_GROUP]
        used = sorted({i for pair in group for i in pair})
        at = {i: n for n, i in enumerate(used)}
        evaluator = permuted_sums.pairs_evaluator([standard[i] for i in used], Z, level, coef,
                                                  [(at[i], at[j]) for i, j in group])
        if evaluator is None:
            continue
        evaluate, per_resample = evaluator
        size = batch_size or _engine.default_batch_size(per_resample)
        samples = np.empty((len(group), k))
        for start in range(0, k, size):
            stop = min(k, start + size)
            samples[:, start:stop] = zero_if_rounding(evaluate(*stream.take(start, stop)))
        found.update({(i, j): (zero_if_rounding(r[i] - r[j]), r[i], r[j], samples[p])
                      for p, (i, j) in enumerate(group)})
    return found


def _permutation_conventions(level, coef, method, variant, k, alternative, seq, k_used, n_valid, undefined,
                             k_block=None) -> dict:
    """The conventions of a permutation test's result (:func:`permutation_test`)."""
    formula = "(1 + count) / (1 + k)" if variant == "paper" else "count / k"
    return conventions(
        level,
        coef,
        method=f"perm-{method}",
        procedure=f"permutation test: the two metrics' standardized values swapped per {method}",
        variant=variant,
        k=k,
        alternative=alternative,
        pvalue_formula=f"{formula}; count = #{_EXTREME_TEXT[alternative]}",
        standardization="X and Y over all cells, ddof 0",
        k_used=k_used,
        **({"early_stopping": {"k_block": k_block, **EARLY_STOPPING,
                               "rule": "after each k_block resamples, stop when #{extreme}/i < early_min "
                                       "or > early_max (mt-metrics-eval PermutationSigDiff); k in the "
                                       "p-value formula is then k_used"}}
           if k_block is not None else {}),
        **({"epsilon_scale": "the standardized X and Y (as mt-metrics-eval's PermutationSigDiff applies "
                             "KendallVariants' epsilon to z-scores)"} if coef.epsilon else {}),
        seed=seq.entropy,
        rng=rng_description(),
        n_valid_samples=n_valid,
        **({"pvalue_undefined": undefined} if undefined else {}),
    )


@dataclass(frozen=True)
class _Resampler:
    """One test's observed delta (and the correlations it is made of) and its resampled deltas,
    resample b always the same for a seed (:class:`.resampling.ResampleStream`)."""

    delta: float
    r_xz: float
    r_yz: float
    stream: resampling.ResampleStream
    evaluate: Callable[..., np.ndarray]
    batch_size: int

    def samples(self, start: int, stop: int) -> np.ndarray:
        """delta_b of resamples ``start .. stop - 1`` (within :data:`ROUNDING` of 0: 0; NaN if undefined)."""
        return zero_if_rounding(_engine.run_range(self.stream, start, stop, self.evaluate, self.batch_size))


def _permutation_resampler(X, Y, Z, level, coef, method, seq, variant, batch_size, linear=False,
                           clusters=None) -> _Resampler:
    """What :func:`permutation_test` resamples: X and Y standardised, swap masks of ``method``
    (``linear``: evaluated by :mod:`.permuted_sums` where it applies; ``clusters``: one coin per
    cluster, :func:`.clusters.permutation_masks`)."""
    Xs, Ys = standardize(X), standardize(Y)
    r_xz, r_yz = level_correlation(Xs, Z, level, coef), level_correlation(Ys, Z, level, coef)
    n_sys, n_in = X.shape
    masks = (partial(resampling.permutation_masks, n_systems=n_sys, n_inputs=n_in, method=method, variant=variant)
             if clusters is None else
             partial(clustering.permutation_masks, n_systems=n_sys, clusters=clusters, method=method, variant=variant))
    stream = resampling.ResampleStream(seq, masks)
    size = batch_size or _engine.default_batch_size(batched.resample_bytes(level, coef, n_sys, n_in))
    evaluate = permuted_sums.evaluator(Xs, Ys, Z, level, coef) if linear else None
    return _Resampler(zero_if_rounding(r_xz - r_yz), r_xz, r_yz, stream,
                      evaluate or batched.permutation_evaluator(Xs, Ys, Z, level, coef), size)


def _bootstrap_resampler(X, Y, Z, level, coef, method, seq, paired_inputs, batch_size, clusters=None) -> _Resampler:
    """What :func:`paired_bootstrap_test` resamples: X, Y and Z jointly (or the inputs unpaired;
    ``clusters``: whole clusters of inputs, :mod:`.clusters`)."""
    r_xz, r_yz = level_correlation(X, Z, level, coef), level_correlation(Y, Z, level, coef)
    n_sys, n_in = X.shape
    if clusters is not None:
        if not paired_inputs:
            raise ValueError("clusters: the metrics' and the human's inputs are drawn unpaired; clustered "
                             "resampling draws them together (system_inputs judged)")
        draw = partial(clustering.bootstrap_draws, n_systems=n_sys, clusters=clusters, method=method)
        r_x, r_y = (clustering.bootstrap_evaluator(batched.bootstrap_evaluator(A, Z, level, coef), clusters)
                    for A in (X, Y))
    elif paired_inputs:
        draw = partial(resampling.bootstrap_indices, n_systems=n_sys, n_inputs=n_in, method=method)
        r_x, r_y = batched.bootstrap_evaluator(X, Z, level, coef), batched.bootstrap_evaluator(Y, Z, level, coef)
    else:
        draw, r_x = _unpaired(X, Z, level, coef, method, Y)
        r_y = batched.unpaired_system_evaluator(Y, Z, coef)

    def evaluate(*draws: np.ndarray | None) -> np.ndarray:
        return r_x(*draws) - r_y(*draws)

    size = batch_size or _engine.default_batch_size(batched.resample_bytes(level, coef, n_sys, n_in))
    return _Resampler(zero_if_rounding(r_xz - r_yz), r_xz, r_yz, resampling.ResampleStream(seq, draw), evaluate, size)


@dataclass(frozen=True)
class Exceedances:
    """Resamples ``start .. stop - 1`` of a resampling test: its ``delta``, the ``count`` of
    those as extreme as delta among the ``n_valid`` defined ones (:func:`count_extreme`), and
    why its p-value is undefined (None if it is not: r(X,Z) and r(Y,Z) defined)."""

    delta: float
    count: int
    n_valid: int
    start: int
    stop: int
    undefined: str | None
    #: the test's conventions as for k = ``stop`` (a caller summing ranges sets k, k_used, n_valid_samples)
    conventions: dict = field(default_factory=dict, repr=False)


def range_exceedances(
    X: npt.ArrayLike,
    Y: npt.ArrayLike,
    Z: npt.ArrayLike,
    level: str,
    coefficient: str = "pearson",
    test: str = "permutation",
    method: str = "both",
    alternative: str = "two-sided",
    seed: int | None = 0,
    start: int = 0,
    stop: int = 1000,
    *,
    variant: str = "paper",
    paired_inputs: bool = True,
    batch_size: int | None = None,
    clusters=None,
) -> Exceedances:
    """The exceedances of resamples ``start .. stop - 1`` of :func:`permutation_test` (``test``
    "permutation", with ``variant``) or :func:`paired_bootstrap_test` ("bootstrap", with
    ``paired_inputs``) for ``seed``: resample b is resample b of those functions with the same
    arguments, so the counts of 0 .. k - 1 are those of their p-value at k. For sequential
    procedures (:mod:`.sequential`), which draw a test's resamples a range at a time.
    ``stop == start`` computes delta only; ``clusters`` as theirs."""
    X, Y, Z = matrices_iv(X=X, Y=Y, Z=Z)
    groups = clustering.clusters_iv(clusters, X.shape[1])
    level, coef, method = level_iv(level), coefficient_iv(coefficient), method_iv(method)
    alternative, seq, batch_size = alternative_iv(alternative), seed_iv(seed), batch_size_iv(batch_size)
    if isinstance(start, bool) or not isinstance(start, (int, np.integer)) or not 0 <= start <= stop:
        raise ValueError(f"`start` and `stop` must be integers with 0 <= start <= stop; got {start!r}, {stop!r}.")
    if test == "permutation":
        variant = permutation_variant_iv(variant)
        resampler = _permutation_resampler(X, Y, Z, level, coef, method, seq, variant, batch_size, clusters=groups)
    elif test == "bootstrap":
        resampler = _bootstrap_resampler(X, Y, Z, level, coef, method, seq, paired_inputs, batch_size, groups)
    else:
        raise ValueError(f"`test` must be 'permutation' or 'bootstrap'; got {test!r}.")
    samples = resampler.samples(int(start), int(stop)) if stop > start else np.empty(0)
    valid = samples[~np.isnan(samples)]
    undefined = undefined_correlations(level, **{"r(X,Z)": resampler.r_xz, "r(Y,Z)": resampler.r_yz})
    undefined = None if undefined is None else f"delta undefined: {undefined}"
    if test == "permutation":
        conv = _permutation_conventions(level, coef, method, variant, int(stop), alternative, seq, int(stop),
                                        int(valid.size), undefined)
    else:
        conv = _bootstrap_conventions(level, coef, method, int(stop), alternative, seq, int(valid.size), undefined,
                                      **({} if paired_inputs else {"paired_inputs": UNPAIRED}))
    conv.update({} if groups is None else groups.conventions())
    return Exceedances(float(resampler.delta), count_extreme(valid, resampler.delta, alternative, test),
                       int(valid.size), int(start), int(stop), undefined, conv)


_EXTREME_TEXT = {
    "greater": "{delta_b >= delta}",
    "less": "{delta_b <= delta}",
    "two-sided": "{|delta_b| >= |delta|}",
}


_PAIRED_EXTREME_TEXT = {
    "greater": "{delta_b >= 2 delta}",
    "less": "{delta_b <= 2 delta}",
    "two-sided": "{|delta_b - delta| >= |delta|}",
}


def count_extreme(valid: np.ndarray, delta: float, alternative: str, test: str) -> int:
    """The resamples (defined ``valid`` deltas) as extreme as ``delta``: for a "permutation" test
    #{delta_b >= delta} ("greater"), #{delta_b <= delta} ("less"), #{|delta_b| >= |delta|}
    ("two-sided"); for a paired "bootstrap" test #{delta_b >= 2 delta}, #{delta_b <= 2 delta},
    #{|delta_b - delta| >= |delta|}; each comparison within :data:`ROUNDING` (a resample as extreme
    in exact arithmetic counts). The count of every resampling test's p-value."""
    if test == "permutation":
        return int(_extreme(valid, delta, alternative).sum())
    if alternative == "two-sided":
        return int((np.abs(valid - delta) >= abs(delta) - ROUNDING).sum())
    return int(_extreme(valid, 2 * delta, alternative).sum())


def _extreme(samples: np.ndarray, threshold: float, alternative: str) -> np.ndarray:
    """Which resampled statistics are as extreme as ``threshold``, within :data:`ROUNDING`: a
    resample that is exactly as extreme in exact arithmetic counts although its floating-point
    value differs in the last bits (the full swap of a permutation test is -delta exactly, computed
    as -delta + 2e-16)."""
    if alternative == "greater":
        return samples >= threshold - ROUNDING
    if alternative == "less":
        return samples <= threshold + ROUNDING
    return np.abs(samples) >= abs(threshold) - ROUNDING


def paired_bootstrap_test(
    X: npt.ArrayLike,
    Y: npt.ArrayLike,
    Z: npt.ArrayLike,
    level: str,
    coefficient: str = "pearson",
    method: str = "both",
    k: int = 1000,
    alternative: str = "two-sided",
    seed: int | None = 0,
    *,
    batch_size: int | None = None,
    paired_inputs: bool = True,
    clusters=None,
) -> PairedBootstrapResult:
    """Paired bootstrap test (Berg-Kirkpatrick et al. 2012) of delta = r(X,Z) - r(Y,Z).

    X, Y and Z are resampled jointly (same systems / inputs, as :func:`bootstrap_ci`),
    delta_b = r_b(X,Z) - r_b(Y,Z) (within :data:`ROUNDING` of 0: 0, as delta); p = #{delta_b >= 2 delta} / k' ("greater"),
    #{delta_b <= 2 delta} / k' ("less"), #{|delta_b - delta| >= |delta|} / k' ("two-sided"),
    with k' the resamples whose delta_b is defined -- as the paper's reference code
    (sacrerouge.stats.bootstrap_diff_test), ">=" so that identical metrics get p = 1.
    The bootstrap distribution shifted by -delta stands for the null distribution of delta, so
    "greater" counts delta_b - delta >= delta and "two-sided" the same on both tails.
    p is NaN when delta is (even if some resamples are defined) or no delta_b is defined;
    ``conventions["pvalue_undefined"]`` then says why. ``paired_inputs=False`` (system level):
    the metrics' inputs and the human's are drawn independently, as in :func:`bootstrap_ci`;
    ``clusters``: whole clusters of inputs drawn, as there.
    """
    X, Y, Z = matrices_iv(X=X, Y=Y, Z=Z)
    level, coef, method = level_iv(level), coefficient_iv(coefficient), method_iv(method)
    k, alternative, seq, batch_size = k_iv(k), alternative_iv(alternative), seed_iv(seed), batch_size_iv(batch_size)
    groups = clustering.clusters_iv(clusters, X.shape[1])
    shared = allpairs.active() if paired_inputs and groups is None else None
    if shared is not None:   # an all-pairs block: each metric's resampled r computed once (module allpairs)
        r_xz, r_yz = level_correlation(X, Z, level, coef), level_correlation(Y, Z, level, coef)
        delta = zero_if_rounding(r_xz - r_yz)
        r_x, r_y = (allpairs.bootstrap_samples(shared, A, Z, level, coef, method, k, seq, batch_size) for A in (X, Y))
        samples = zero_if_rounding(r_x - r_y)
    else:
        resampler = _bootstrap_resampler(X, Y, Z, level, coef, method, seq, paired_inputs, batch_size, groups)
        delta, r_xz, r_yz = resampler.delta, resampler.r_xz, resampler.r_yz
        samples = resampler.samples(0, k)
    return paired_bootstrap_result(delta, samples, level, coef, method, k, alternative, seq, r_xz, r_yz,
                                   **({} if paired_inputs else {"paired_inputs": UNPAIRED}),
                                   **({} if groups is None else groups.conventions()))


def paired_bootstrap_result(delta: float, samples: np.ndarray, level: str, coef, method: str, k: int,
                            alternative: str, seq: np.random.SeedSequence, r_xz: float, r_yz: float,
                            **extra) -> PairedBootstrapResult:
    """The result of a paired bootstrap test from its resampled deltas (the p-value formula of
    :func:`paired_bootstrap_test`, which other resampling schemes reuse); ``extra`` conventions."""
    valid = samples[~np.isnan(samples)]
    count = count_extreme(valid, delta, alternative, "bootstrap")
    undefined = _resampling_undefined(level, r_xz, r_yz, valid.size)
    return PairedBootstrapResult(
        delta=delta,
        pvalue=resampling_pvalue(delta, count, valid.size, add_one=False),
        samples=samples,
        conventions=_bootstrap_conventions(level, coef, method, k, alternative, seq, int(valid.size), undefined,
                                           **extra),
    )

def _bootstrap_conventions(level, coef, method, k, alternative, seq, n_valid, undefined, **extra) -> dict:
    """The conventions of a paired bootstrap test's result (:func:`paired_bootstrap_result`)."""
    return conventions(
        level,
        coef,
        method=f"boot-{method}",
        procedure=f"paired bootstrap resampling {method}",
        k=k,
        alternative=alternative,
        pvalue_formula=f"count / k; count = #{_PAIRED_EXTREME_TEXT[alternative]}",
        seed=seq.entropy,
        rng=rng_description(),
        n_valid_samples=n_valid,
        **extra,
        **({"pvalue_undefined": undefined} if undefined else {}),
    )
