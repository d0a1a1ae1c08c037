"""Partial correlations: a metric's correlation with the human judgment once a grouping of the
cells (the system that wrote each summary, or an attribute such as the source dataset) is
controlled for -- the convention of the factual-consistency benchmarks, where a metric that only
recognises which system wrote a summary gets a high pooled correlation.

Global level only (every cell a point). ``groups`` is an (N, M) array of labels, one per cell
(None or NaN: the cell has no group and is left out), or ``"system"``: each system's cells are
one group. On the cells where the metric and the human are both present (and have a group):

    x~_c = x_c - mean{x_c' : g(c') = g(c)},   z~_c likewise,

which equals the residuals of the least-squares regression of x (and of z) on the g group
indicators. Then

- ``pearson``:  r = Pearson(x~, z~);
- ``spearman``: Pearson of the average ranks of the residuals;
- ``kendall``:  Kendall tau-b of the residuals (scipy's, ties in the residuals counted as such).

With n cells and g groups, df = n - 2 - (g - 1) (the g - 1 group indicators besides the
intercept used up); t = r sqrt(df / (1 - r^2)) and p from Student's t with df degrees of freedom
(two-sided 2 P(T >= |t|); greater P(T >= t); less P(T <= t)). For Spearman and Kendall the same
t approximation is used (it is exact for none of the rank coefficients; recorded as such).

Degenerate cases: a group with a single cell has residual 0 on both sides (the regression fits it
exactly: it adds nothing to the correlation but still counts in n and g, so its degree of freedom
is used up); a side constant within a group has residuals exactly 0 there (set so, not left to
the rounding of x - mean). The coefficient is NaN, never a number, when fewer than two degrees of
freedom remain (g >= n - 2) or a side's residuals are constant (all 0: every group a single cell,
or a side constant within every group).

Intervals and tests:

- :func:`partial_fisher_ci`: Fisher's z with n reduced by g - 1 (Bonett & Wright's constants b, c
  as :func:`.intervals.fisher_ci`): tanh(atanh r -/+ z_{1-alpha/2} c / sqrt(n - (g - 1) - b));
- :func:`partial_bootstrap_ci`: percentile bootstrap drawing systems, inputs or both
  (:func:`.resampling.bootstrap_indices`); each resample re-centres within its own resampled
  cells (the group means of the resample, a drawn-twice cell counted twice; a system drawn twice
  keeps its group, so with ``"system"`` its copies share one mean) before correlating, vectorised
  over the resamples; a resample with fewer than two degrees of freedom is undefined (dropped);
- :func:`partial_williams_test`: Williams' t (:func:`.williams.williams_t`) on the three partial
  correlations r(X~, Z~), r(Y~, Z~), r(X~, Y~) with n reduced by g - 1 (df = n - (g - 1) - 3);
- :func:`partial_permutation_test`: X, Y and Z residualised; the residuals of X and of Y divided by
  their standard deviation (ddof 0); each resample swaps the two metrics' standardised *residuals*
  per system, input or cell (:func:`.resampling.permutation_masks`), re-centres the swapped
  residuals within the groups (a swap moves a group's mean off 0) and takes
  delta_b = r(X'~_b, Z~) - r(Y'~_b, Z~); p-value as :func:`.hypothesis.permutation_test`;
- :func:`partial_paired_bootstrap_test`: X, Y and Z resampled jointly, each resample re-centred,
  p-value as :func:`.hypothesis.paired_bootstrap_test`.

A test of metrics a and b uses the cells where a, b and the human are all present (and have a
group): the three correlations, and delta, are over the same cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Mapping

import numpy as np
import numpy.typing as npt

from . import _engine, resampling
from .batched import gather
from .validation import (
    Coefficient,
    alpha_iv,
    alternative_iv,
    batch_size_iv,
    coefficient_iv,
    k_iv,
    matrices_iv,
    method_iv,
    permutation_variant_iv,
    seed_iv,
)
from .correlation import corr
from .reductions import scaled, unit_scale
from .results import NAN_POLICY, BootstrapResult, FisherResult, PairedBootstrapResult, PermutationResult, WilliamsResult

#: ``groups`` value: every system's cells one group.
SYSTEM = "system"
#: Bytes of temporaries per resample and matrix cell of the vectorised bootstrap / permutation.
BYTES_PER_CELL = 160

CENTRING = ("on the cells where the correlated sides are both present (and have a group), each group's mean "
            "subtracted from each side (= the residuals of the least-squares regression on the group indicators); "
            "a group of one cell has residual 0; a side constant within a group has residuals exactly 0 there")
COEFFICIENTS_RULE = ("pearson: Pearson of the residuals; spearman: Pearson of the ranks of the residuals; "
                     "kendall: Kendall tau-b of the residuals")
PVALUE_RULE = ("t = r sqrt(df / (1 - r^2)), Student's t with df = n - 2 - (g - 1) (g groups); for spearman and "
               "kendall the same t approximation")
UNDEFINED_RULE = "NaN when df < 2 (g >= n - 2) or a side's residuals are constant"


@dataclass(frozen=True)
class PartialCorrelationResult:
    """A partial correlation, its t statistic and p-value (df = n - 2 - (g - 1))."""

    value: float
    statistic: float
    pvalue: float
    n: int
    groups: int
    df: int
    conventions: Mapping[str, Any] = field(default_factory=dict, repr=False)


# --- groups and residuals ----------------------------------------------------------------------
def group_codes(groups: object, shape: tuple[int, int]) -> tuple[np.ndarray, int]:
    """(N, M) int64 codes of the cells' groups (-1: no group) and the number of codes.

    ``"system"``: code = the row. Otherwise an (N, M) array of labels; None and NaN are no group;
    codes follow the sorted order of the distinct labels (as strings)."""
    if isinstance(groups, str):
        if groups != SYSTEM:
            raise ValueError(f"`groups` must be {SYSTEM!r} or an (N, M) array of labels; got {groups!r}.")
        return np.repeat(np.arange(shape[0], dtype=np.int64)[:, None], shape[1], axis=1), shape[0]
    labels = np.asarray(groups, dtype=object)
    if labels.shape != tuple(shape):
        raise ValueError(f"`groups` must have the matrices' shape {tuple(shape)}; got {labels.shape}.")
    flat = labels.ravel()
    missing = np.array([v is None or (isinstance(v, float) and np.isnan(v)) for v in flat], dtype=bool)
    names = np.array([str(v) for v in flat[~missing]], dtype=object)
    distinct, inverse = np.unique(names.astype(str), return_inverse=True) if names.size else (np.empty(0), np.empty(0))
    codes = np.full(flat.shape, -1, dtype=np.int64)
    codes[~missing] = inverse
    return codes.reshape(shape), int(len(distinct))


def centre(values: list[np.ndarray], codes: np.ndarray, valid: np.ndarray, n_codes: int
           ) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Each (c, n) array of ``values`` minus its group's mean over the ``valid`` cells of its row
    (NaN elsewhere; exactly 0 where the side is constant within the group), vectorised over the c
    rows (resamples); and each row's number of valid cells n and of groups g among them."""
    c = codes.shape[0]
    keys = (codes + n_codes * np.arange(c, dtype=np.int64)[:, None])[valid]
    counts = np.bincount(keys, minlength=c * n_codes)
    n = valid.sum(axis=1)
    g = (counts.reshape(c, n_codes) > 0).sum(axis=1)
    out = []
    for v in values:
        x = v[valid]
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.bincount(keys, weights=x, minlength=c * n_codes) / counts
        low = np.full(c * n_codes, np.inf)
        high = np.full(c * n_codes, -np.inf)
        np.minimum.at(low, keys, x)
        np.maximum.at(high, keys, x)
        resid = np.where(low[keys] == high[keys], 0.0, x - means[keys])
        full = np.full(v.shape, np.nan)
        full[valid] = resid
        out.append(full)
    return out, n, g


def _scaled(A: np.ndarray) -> np.ndarray:
    """A times a power of two (exact) so that its group sums neither overflow nor lose digits."""
    return scaled(A, unit_scale(A, axis=None))


def _valid(codes: np.ndarray, *arrays: np.ndarray) -> np.ndarray:
    valid = codes >= 0
    for a in arrays:
        valid = valid & ~np.isnan(a)
    return valid


def _base(coefficient: object) -> Coefficient:
    """The plain coefficient correlating the residuals (pearson, spearman or kendall tau-b)."""
    coef = coefficient_iv(coefficient)
    if coef.name not in ("pearson", "spearman", "kendall") or coef.variant not in (None, "b") or coef.epsilon \
            or coef.calibrated:
        raise ValueError(f"a partial correlation is defined for pearson, spearman and kendall (tau-b); got {coef.label}.")
    return replace(coef, control=None)


def _defined(r: np.ndarray, n: np.ndarray, g: np.ndarray) -> np.ndarray:
    """r where at least two degrees of freedom remain (n - 2 - (g - 1) >= 2), NaN elsewhere."""
    return np.where(n - g - 1 >= 2, r, np.nan)


def _statistic(X: np.ndarray, Z: np.ndarray, codes: np.ndarray, n_codes: int, base: Coefficient
               ) -> tuple[float, int, int]:
    """(r, n, g) of the partial coefficient on the cells where X and Z are present."""
    valid = _valid(codes, X, Z)
    (rx, rz), n, g = centre([_scaled(X)[None].reshape(1, -1), _scaled(Z)[None].reshape(1, -1)],
                            codes.reshape(1, -1), valid.reshape(1, -1), n_codes)
    return float(_defined(corr(rx, rz, base), n, g)[0]), int(n[0]), int(g[0])


def residuals(X: npt.ArrayLike, Z: npt.ArrayLike, groups: object) -> tuple[np.ndarray, np.ndarray]:
    """The residuals x~ and z~ as (N, M) matrices (NaN where a side is missing or the cell has no
    group), in the values' own scale."""
    X, Z = matrices_iv(X=X, Z=Z)
    codes, n_codes = group_codes(groups, X.shape)
    valid = _valid(codes, X, Z)
    (rx, rz), _, _ = centre([X.reshape(1, -1), Z.reshape(1, -1)], codes.reshape(1, -1), valid.reshape(1, -1),
                            n_codes)
    return rx.reshape(X.shape), rz.reshape(Z.shape)


def conventions(coefficient: Coefficient, grouping: object, **extra: Any) -> dict[str, Any]:
    """What a partial result records (besides its numbers); ``grouping`` the ``groups`` argument."""
    control = SYSTEM if isinstance(grouping, str) else coefficient.control
    return {"level": "global", "coefficient": coefficient.name,
            "kendall_variant": coefficient.variant, "nan_policy": NAN_POLICY, "partial": {
                "control": control, "groups": ("each system's cells" if control == SYSTEM
                                               else f"the cells of each value of the attribute {control!r}"
                                               + "; cells without a value left out"),
                "centring": CENTRING, "coefficients": COEFFICIENTS_RULE, "pvalue": PVALUE_RULE,
                "undefined": UNDEFINED_RULE}, **extra}


def _pvalue(t: float, df: int, alternative: str) -> float:
    import scipy.stats  # here, not at import time: the command line starts without scipy
    if np.isnan(t):
        return np.nan
    if alternative == "greater":
        return float(scipy.stats.t.sf(t, df))
    if alternative == "less":
        return float(scipy.stats.t.cdf(t, df))
    return float(min(1.0, 2 * scipy.stats.t.sf(abs(t), df)))


def t_statistic(r: float, df: int) -> float:
    """t = r sqrt(df / (1 - r^2)) (+-inf for |r| = 1; NaN for NaN r or df < 1)."""
    if np.isnan(r) or df < 1:
        return np.nan
    with np.errstate(divide="ignore"):
        return float(r * np.sqrt(df / (1 - r * r))) if abs(r) < 1 else float(np.copysign(np.inf, r))


def partial_correlation(X: npt.ArrayLike, Z: npt.ArrayLike, groups: object, coefficient: str = "pearson",
                        alternative: str = "two-sided") -> PartialCorrelationResult:
    """The partial correlation of ``X`` and ``Z`` (N x M, NaN = missing) controlling for ``groups``,
    its t statistic and p-value (see the module docstring)."""
    X, Z = matrices_iv(X=X, Z=Z)
    coef, alternative = coefficient_iv(coefficient), alternative_iv(alternative)
    base = _base(coef)
    codes, n_codes = group_codes(groups, X.shape)
    r, n, g = _statistic(X, Z, codes, n_codes, base)
    df = n - 2 - (g - 1)
    t = t_statistic(r, df)
    p = _pvalue(t, df, alternative)
    return PartialCorrelationResult(r, t, p, n, g, df, conventions(
        coef, groups, n=n, groups=g, df=df, alternative=alternative,
        **({"approximation": f"the t distribution of Pearson's r applied to {base.name}"}
           if base.name != "pearson" else {})))


def partial_fisher_ci(X: npt.ArrayLike, Z: npt.ArrayLike, groups: object, coefficient: str = "pearson",
                      alpha: float = 0.05) -> FisherResult:
    """Fisher's interval of the partial coefficient with n reduced by g - 1:
    tanh(atanh r -/+ z_{1-alpha/2} c / sqrt(n - (g - 1) - b)), (b, c) of Bonett & Wright
    (:func:`.intervals.fisher_constants`); NaN bounds when r is NaN or n - (g - 1) <= b."""
    import scipy.stats  # here, not at import time: the command line starts without scipy

    from .intervals import fisher_constants
    X, Z = matrices_iv(X=X, Z=Z)
    coef, alpha = coefficient_iv(coefficient), alpha_iv(alpha)
    base = _base(coef)
    codes, n_codes = group_codes(groups, X.shape)
    r, n, g = _statistic(X, Z, codes, n_codes, base)
    n_eff = n - (g - 1)
    b, c = fisher_constants(base, r)
    lower = upper = np.nan
    if n_eff > b and not np.isnan(r):
        half = scipy.stats.norm.ppf(1 - alpha / 2) * c / np.sqrt(n_eff - b)
        with np.errstate(divide="ignore"):
            z_r = np.arctanh(r)
        lower, upper = float(np.tanh(z_r - half)), float(np.tanh(z_r + half))
    return FisherResult(r, lower, upper, n_eff, conventions(coef, groups, method="fisher", alpha=alpha, b=b, c=c,
                                                            n=n, groups=g, n_reduced=n_eff,
                                                            fisher="n reduced by g - 1 (one per group indicator)"))


# --- resampling ----------------------------------------------------------------------------------


def _bootstrap_evaluator(arrays: list[np.ndarray], codes: np.ndarray, n_codes: int, base: Coefficient):
    """``evaluate(rows, cols)``: for each resample, the arrays (the human last) gathered,
    re-centred within the resample's groups on the cells where all are present, and the partial
    coefficient of each metric with the human (a (c,) array for one metric, else (metrics, c))."""
    arrays = [_scaled(A) for A in arrays]

    def evaluate(rows: np.ndarray | None, cols: np.ndarray | None) -> np.ndarray:
        gathered = [gather(A, rows, cols) for A in arrays]
        gcodes = gather(codes, rows, cols)
        valid = _valid(gcodes, *gathered)
        resid, n, g = centre(gathered, gcodes, valid, n_codes)
        out = np.stack([_defined(corr(r, resid[-1], base), n, g) for r in resid[:-1]])
        return out[0] if len(resid) == 2 else out

    return evaluate


def _batch_size(batch_size: int | None, shape: tuple[int, int]) -> int:
    return batch_size or _engine.default_batch_size(BYTES_PER_CELL * shape[0] * shape[1])


def rng_description() -> str:
    from .intervals import rng_description as description

    return description()


def partial_bootstrap_ci(X: npt.ArrayLike, Z: npt.ArrayLike, groups: object, coefficient: str = "pearson",
                         method: str = "both", k: int = 1000, alpha: float = 0.05, seed: int | None = 0, *,
                         batch_size: int | None = None) -> BootstrapResult:
    """Percentile bootstrap interval of the partial coefficient: systems, inputs or both drawn as
    :func:`.intervals.bootstrap_ci` draws them (the same resamples for a seed), each resample
    re-centred within its own groups; resamples with an undefined value dropped."""
    X, Z = matrices_iv(X=X, Z=Z)
    coef, method, k, alpha = coefficient_iv(coefficient), method_iv(method), k_iv(k), alpha_iv(alpha)
    seq, batch_size, base = seed_iv(seed), batch_size_iv(batch_size), _base(coef)
    codes, n_codes = group_codes(groups, X.shape)
    draw = partial(resampling.bootstrap_indices, n_systems=X.shape[0], n_inputs=X.shape[1], method=method)
    samples = _engine.run_resamples(k, seq, draw, _bootstrap_evaluator([X, Z], codes, n_codes, base),
                                    _batch_size(batch_size, X.shape))
    lower, upper, n_valid = resampling.percentile_interval(samples, alpha)
    r, n, g = _statistic(X, Z, codes, n_codes, base)
    return BootstrapResult(r, lower, upper, samples, conventions(
        coef, groups, method=f"boot-{method}", procedure=f"percentile bootstrap resampling {method}; each resample "
        "re-centred within its own groups (its group means over its drawn cells, duplicates included)",
        k=k, alpha=alpha, interval="percentile (numpy linear interpolation), two-sided", n=n, groups=g,
        seed=seq.entropy, rng=rng_description(), n_valid_samples=n_valid))


def _common(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, ...]:
    """X, Y and Z with NaN wherever any of them is missing or the cell has no group."""
    valid = _valid(codes, X, Y, Z)
    return tuple(np.where(valid, A, np.nan) for A in (X, Y, Z))


def partial_williams_test(X: npt.ArrayLike, Y: npt.ArrayLike, Z: npt.ArrayLike, groups: object,
                          coefficient: str = "pearson", alternative: str = "two-sided") -> WilliamsResult:
    """Williams' t on the partial correlations r12 = |r(X~, Z~)|, r13 = |r(Y~, Z~)|, r23 =
    |r(X~, Y~)| (absolute values as :func:`.williams.williams_test`) over the cells where X, Y and
    Z are present, with n reduced by g - 1: df = n - (g - 1) - 3."""
    from .williams import _williams_undefined, williams_t
    X, Y, Z = matrices_iv(X=X, Y=Y, Z=Z)
    coef, alternative = coefficient_iv(coefficient), alternative_iv(alternative)
    base = _base(coef)
    codes, n_codes = group_codes(groups, X.shape)
    X, Y, Z = _common(X, Y, Z, codes)
    stats = {name: _statistic(A, B, codes, n_codes, base) for name, A, B in
             (("r(X,Z)", X, Z), ("r(Y,Z)", Y, Z), ("r(X,Y)", X, Y))}
    signed = {name: s[0] for name, s in stats.items()}
    _, n, g = stats["r(X,Z)"]
    n_eff = n - (g - 1)
    r12, r13, r23 = (abs(r) for r in signed.values())
    t = williams_t(r12, r13, r23, n_eff)
    df = n_eff - 3
    undefined = _williams_undefined("global", signed, n_eff, t)
    p = np.nan if undefined else _pvalue(t, df, alternative)
    return WilliamsResult(t, p, df, r12, r13, r23, n_eff, conventions(
        coef, groups, method="williams", alternative=alternative, n=n, groups=g, n_reduced=n_eff,
        cells="where metric a, metric b and the human are all present",
        correlations="absolute values (Graham & Baldwin 2014) of the three partial correlations",
        williams_n="n reduced by g - 1 (one per group indicator); df = n - (g - 1) - 3",
        negative_correlations=[name for name, r in signed.items() if r < 0],
        **({} if base.name == "pearson" else {"approximation": f"Williams' t derived for Pearson, applied to {base.name}"}),
        **({"pvalue_undefined": undefined} if undefined else {})))


def _permutation_evaluator(Xs: np.ndarray, Ys: np.ndarray, Zr: np.ndarray, codes: np.ndarray, n_codes: int,
                           base: Coefficient):
    """``evaluate(mask)``: delta_b = r(X'~_b, Z~) - r(Y'~_b, Z~), X'_b = where(mask_b, Ys, Xs),
    Y'_b = where(mask_b, Xs, Ys), each re-centred within the groups (Z~ already is)."""
    n_cells = Xs.size
    valid = _valid(codes, Xs, Ys, Zr).reshape(1, -1)
    z = Zr.reshape(1, -1)
    flat_codes = codes.reshape(1, -1)

    def evaluate(mask: np.ndarray) -> np.ndarray:
        c = mask.shape[0]
        shape = (c, n_cells)
        xp = np.where(mask, Ys, Xs).reshape(shape)
        yp = np.where(mask, Xs, Ys).reshape(shape)
        cb = np.broadcast_to(flat_codes, shape)
        vb = np.broadcast_to(valid, shape)
        (rx, ry), n, g = centre([xp, yp], cb, vb, n_codes)
        zb = np.broadcast_to(z, shape)
        return _defined(corr(rx, zb, base) - corr(ry, zb, base), n, g)

    return evaluate


def _standardised_residuals(X, Y, Z, codes, n_codes):
    """The residuals of X, Y and Z on their common cells, X~ and Y~ divided by their std (ddof 0;
    all NaN when constant)."""
    valid = _valid(codes, X, Y, Z)
    (rx, ry, rz), _, _ = centre([_scaled(A).reshape(1, -1) for A in (X, Y, Z)], codes.reshape(1, -1),
                                valid.reshape(1, -1), n_codes)
    with np.errstate(invalid="ignore", divide="ignore"):
        rx, ry = rx / np.nanstd(rx), ry / np.nanstd(ry)
    return rx.reshape(X.shape), ry.reshape(X.shape), rz.reshape(X.shape)


def partial_permutation_test(X: npt.ArrayLike, Y: npt.ArrayLike, Z: npt.ArrayLike, groups: object,
                             coefficient: str = "pearson", method: str = "both", k: int = 1000,
                             alternative: str = "two-sided", seed: int | None = 0, *, variant: str = "paper",
                             batch_size: int | None = None) -> PermutationResult:
    """Permutation test of delta = r(X~, Z~) - r(Y~, Z~) on the residuals (module docstring): the
    swap masks and p-value formula of :func:`.hypothesis.permutation_test` (``variant``)."""
    from .hypothesis import (_EXTREME_TEXT, _resampling_undefined, count_extreme, resampling_pvalue,
                             zero_if_rounding)
    X, Y, Z = matrices_iv(X=X, Y=Y, Z=Z)
    coef, method, k, alternative = coefficient_iv(coefficient), method_iv(method), k_iv(k), alternative_iv(alternative)
    seq, variant, batch_size, base = seed_iv(seed), permutation_variant_iv(variant), batch_size_iv(batch_size), _base(coef)
    codes, n_codes = group_codes(groups, X.shape)
    X, Y, Z = _common(X, Y, Z, codes)
    Xs, Ys, Zr = _standardised_residuals(X, Y, Z, codes, n_codes)
    r_xz, n, g = _statistic(X, Z, codes, n_codes, base)
    r_yz = _statistic(Y, Z, codes, n_codes, base)[0]
    delta = zero_if_rounding(r_xz - r_yz)
    draw = partial(resampling.permutation_masks, n_systems=X.shape[0], n_inputs=X.shape[1], method=method,
                   variant=variant)
    samples = zero_if_rounding(_engine.run_resamples(k, seq, draw, _permutation_evaluator(Xs, Ys, Zr, codes, n_codes,
                                                                                          base),
                                                     _batch_size(batch_size, X.shape)))
    valid = samples[~np.isnan(samples)]
    pvalue = resampling_pvalue(delta, count_extreme(valid, delta, alternative, "permutation"), valid.size,
                               add_one=variant == "paper")
    undefined = _resampling_undefined("global", r_xz, r_yz, valid.size)
    formula = "(1 + count) / (1 + k)" if variant == "paper" else "count / k"
    return PermutationResult(delta, pvalue, samples, conventions(
        coef, groups, method=f"perm-{method}", cells="where metric a, metric b and the human are all present",
        procedure=f"permutation test on residuals: the two metrics' standardised residuals swapped per {method}, "
                  "each swapped residual matrix re-centred within the groups",
        standardization="the residuals of X and of Y divided by their std over the common cells (ddof 0)",
        variant=variant, k=k, alternative=alternative, n=n, groups=g,
        pvalue_formula=f"{formula}; count = #{_EXTREME_TEXT[alternative]}", k_used=int(samples.size),
        seed=seq.entropy, rng=rng_description(), n_valid_samples=int(valid.size),
        **({"pvalue_undefined": undefined} if undefined else {})))


def partial_paired_bootstrap_test(X: npt.ArrayLike, Y: npt.ArrayLike, Z: npt.ArrayLike, groups: object,
                                  coefficient: str = "pearson", method: str = "both", k: int = 1000,
                                  alternative: str = "two-sided", seed: int | None = 0, *,
                                  batch_size: int | None = None) -> PairedBootstrapResult:
    """Paired bootstrap test of delta = r(X~, Z~) - r(Y~, Z~): X, Y, Z (and the groups) resampled
    jointly as :func:`.hypothesis.paired_bootstrap_test`, each resample re-centred within its groups
    on its cells where all three are present; its p-value formula."""
    from .hypothesis import paired_bootstrap_result, zero_if_rounding
    X, Y, Z = matrices_iv(X=X, Y=Y, Z=Z)
    coef, method, k, alternative = coefficient_iv(coefficient), method_iv(method), k_iv(k), alternative_iv(alternative)
    seq, batch_size, base = seed_iv(seed), batch_size_iv(batch_size), _base(coef)
    codes, n_codes = group_codes(groups, X.shape)
    X, Y, Z = _common(X, Y, Z, codes)
    r_xz, n, g = _statistic(X, Z, codes, n_codes, base)
    r_yz = _statistic(Y, Z, codes, n_codes, base)[0]
    both = _bootstrap_evaluator([X, Y, Z], codes, n_codes, base)
    draw = partial(resampling.bootstrap_indices, n_systems=X.shape[0], n_inputs=X.shape[1], method=method)
    samples = zero_if_rounding(_engine.run_resamples(k, seq, draw, lambda rows, cols: np.subtract(*both(rows, cols)),
                                                     _batch_size(batch_size, X.shape)))
    result = paired_bootstrap_result(zero_if_rounding(r_xz - r_yz), samples, "global", base, method, k, alternative,
                                     seq, r_xz, r_yz)
    conv = {**result.conventions, **conventions(coef, groups, n=n, groups=g,
                                                cells="where metric a, metric b and the human are all present"),
            "procedure": f"paired bootstrap resampling {method}; each resample re-centred within its own groups"}
    return replace(result, conventions=conv)
