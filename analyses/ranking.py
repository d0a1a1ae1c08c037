"""Ranking and agreement analyses: pure functions on arrays, no database inside.

Matrices are N systems x M inputs, NaN = missing, oriented so that higher is better (the runner
negates "lower is better" measures before calling these functions).

- :func:`pairwise_accuracy` -- share of system pairs ordered as the humans order them (Louis &
  Nenkova 2013, section 3.1), at the system level (macro) or pooled within inputs (micro);
- :func:`input_significance` -- how many inputs have a significant per-input correlation (their
  Table 3);
- :func:`system_pair_tests`, :func:`system_agreement` -- every pair of systems tested under a
  metric and under the human judgment; do they reach the same significance conclusions? (the
  significance agreement of metric and human over system pairs; not Louis & Nenkova's Table 4,
  which counts which pairs two metrics order correctly: :mod:`metaeval.analyses.error_overlap`);
- :func:`significance_clusters` -- the winners (metrics not significantly beaten by any other,
  Graham 2015) and the ranking into significance clusters (mt-metrics-eval's rule, or the
  strict partition), from :func:`pairwise_beats` of the stored tests.

Replicability across datasets (Dror et al. 2017): :mod:`metaeval.analyses.replicability`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from metaeval.analyses.stats.multiple import rejects   # the conclusion layer's rule 0 (conclusions imports this module)
from metaeval.analyses.stats.validation import alpha_iv, alternative_iv, coefficient_iv, k_iv, matrices_iv, seed_iv
from metaeval.analyses.stats.reductions import AGGREGATE_VALUES, aggregate_sides, system_scores
from metaeval.analyses.stats.vocabulary import CLUSTER_RULES

ACCURACY_LEVELS = ("system", "micro")


def _scipy_stats():
    """scipy.stats, imported on first use (the command line starts without scipy)."""
    import scipy.stats

    return scipy.stats


def _scipy_version() -> str:
    import scipy

    return scipy.__version__

PAIR_TESTS = ("ttest", "wilcoxon", "permutation")
#: Differences within this relative distance of zero are exact ties: two means of the same
#: values summed in another order differ in the last bits only.
ROUNDING = 1e-12
#: Bytes the permutation test's (pairs x resamples) statistics may use at once.
PERMUTATION_BUDGET = 64 * 2**20

TIE_RULE = ("a pair's order is sign(a_i - a_k) in {-1, 0, +1}; 0 (a tie) when |a_i - a_k| <= "
            "tolerance or <= 1e-12 max(|a_i|, |a_k|) (equal up to floating-point rounding)")


# --- pairwise accuracy ------------------------------------------------------------------------
@dataclass(frozen=True)
class PairwiseAccuracyResult:
    """Pairwise accuracy = agree / pairs (NaN without pairs).

    ``agree`` counts pairs ordered the same way (both ties included); the others are
    ``flipped`` (opposite strict orders), ``metric_ties`` (metric tied, human not) and
    ``human_ties`` (human tied, metric not); ``both_ties`` is the part of ``agree`` where both
    tie.
    """

    accuracy: float
    pairs: int
    agree: int
    flipped: int
    metric_ties: int
    human_ties: int
    both_ties: int
    conventions: Mapping[str, Any] = field(default_factory=dict)

    @property
    def disagree(self) -> int:
        return self.pairs - self.agree


def pairwise_accuracy(X: npt.ArrayLike, Z: npt.ArrayLike, level: str = "system", *,
                      metric_tolerance: float = 0.0, human_tolerance: float = 0.0,
                      aggregate: str = "mean") -> PairwiseAccuracyResult:
    """Share of system pairs that metric ``X`` orders as human ``Z`` does, ties being an order.

    A pair (i, k) agrees when sign(dx) == sign(dz), with sign 0 for a tie: |d| <= tolerance
    (``metric_tolerance`` for X, ``human_tolerance`` for Z; absolute, in each measure's unit;
    0 by default: exact ties only) or |d| <= 1e-12 max(|a_i|, |a_k|) (equal up to rounding).

    - ``"system"`` (macro): d = difference of the system means (NaN ignored; ``aggregate``
      "median": medians, Graham 2015) over the N(N-1)/2 pairs of systems whose two are defined;
    - ``"micro"``: for each input j, the pairs of systems with all four cells defined;
      d = x_ij - x_kj; the pairs of all inputs pooled (at most M N(N-1)/2).
    """
    X, Z = matrices_iv(X=X, Z=Z)
    if level not in ACCURACY_LEVELS:
        raise ValueError(f"`level` must be one of {list(ACCURACY_LEVELS)}; got {level!r}.")
    metric_tolerance = _tolerance_iv(metric_tolerance, "metric_tolerance")
    human_tolerance = _tolerance_iv(human_tolerance, "human_tolerance")
    if aggregate not in AGGREGATE_VALUES or (aggregate != "mean" and level != "system"):
        raise ValueError(f"`aggregate` must be one of {list(AGGREGATE_VALUES)} (median: system level); "
                         f"got {aggregate!r}.")
    if level == "system":
        metric_side, human_side = aggregate_sides(aggregate)
        X, Z = system_scores(X, metric_side)[:, None], system_scores(Z, human_side)[:, None]
    sx, sz = _pair_orders(X, metric_tolerance), _pair_orders(Z, human_tolerance)
    valid = ~np.isnan(sx) & ~np.isnan(sz)
    sx, sz = sx[valid], sz[valid]
    pairs, agree = int(valid.sum()), int((sx == sz).sum())
    return PairwiseAccuracyResult(
        accuracy=agree / pairs if pairs else np.nan,
        pairs=pairs,
        agree=agree,
        flipped=int((sx * sz < 0).sum()),
        metric_ties=int(((sx == 0) & (sz != 0)).sum()),
        human_ties=int(((sz == 0) & (sx != 0)).sum()),
        both_ties=int(((sx == 0) & (sz == 0)).sum()),
        conventions={
            "level": ("system (macro): pairs of system means" if aggregate == "mean" else
                      "system (macro): pairs of system {}s (metric), {}s (human)".format(*aggregate_sides(aggregate)))
            if level == "system"
            else "micro: pairs of systems within each input, all inputs pooled",
            "agreement": "sign(metric difference) == sign(human difference); tied pairs agree only with ties",
            "ties": TIE_RULE, "metric_tolerance": metric_tolerance, "human_tolerance": human_tolerance,
            "nan_policy": "pairs with a missing value (or undefined system mean) on either side are left out",
            "reference": "Louis & Nenkova 2013, Computational Linguistics 39(2), section 3.1",
        },
    )


def _tolerance_iv(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not np.isfinite(value) or value < 0:
        raise ValueError(f"`{name}` must be a finite number >= 0; got {value!r}.")
    return float(value)


def _pair_orders(A: np.ndarray, tolerance: float) -> np.ndarray:
    """sign(A[i] - A[k]) for every pair i < k of rows, per column: (N(N-1)/2, M), NaN if missing."""
    i, k = np.triu_indices(A.shape[0], 1)
    d = A[i] - A[k]
    scale = np.maximum(np.abs(A[i]), np.abs(A[k]))
    tied = (np.abs(d) <= tolerance) | (np.abs(d) <= ROUNDING * scale)
    return np.where(tied, 0.0, np.sign(d))


# --- per-input significance -------------------------------------------------------------------
@dataclass(frozen=True)
class InputSignificanceResult:
    """Per-input correlations and their p-values, and how many are significant.

    ``percent_significant`` = 100 n_significant / n_inputs (all inputs, as Louis & Nenkova's
    Table 3); ``min_significant``/``max_significant`` are the smallest and largest significant
    correlations in the direction that counts: positive (the metric agrees with the humans; the
    measures are oriented so higher is better) for "two-sided" and "greater", negative for "less";
    NaN when no input is significant in that direction (a significant disagreement is counted in
    ``n_negative``, never reported as the table's minimum: Table 3's minima are all positive).
    ``n_significant``: either sign (the paper's count, stored); ``n_positive`` / ``n_negative`` by sign.
    """

    n_inputs: int
    n_defined: int
    n_significant: int
    percent_significant: float
    min_significant: float
    max_significant: float
    correlations: np.ndarray
    pvalues: np.ndarray
    conventions: Mapping[str, Any] = field(default_factory=dict)
    n_positive: int = 0
    n_negative: int = 0


_SCIPY_TESTS = {
    "pearson": lambda x, z, alt: _scipy_stats().pearsonr(x, z, alternative=alt),
    "spearman": lambda x, z, alt: _scipy_stats().spearmanr(x, z, alternative=alt),
    "kendall-b": lambda x, z, alt: _scipy_stats().kendalltau(x, z, alternative=alt, variant="b"),
}


def input_significance(X: npt.ArrayLike, Z: npt.ArrayLike, coefficient: str = "spearman",
                       alpha: float = 0.05, alternative: str = "two-sided",
                       pvalue: str = "t") -> InputSignificanceResult:
    """For each input j, Corr(X[:, j], Z[:, j]) over the systems with both values and its
    p-value from scipy (``pearsonr``, ``spearmanr``, ``kendalltau`` tau-b, with their default
    methods); an input is significant when p <= ``alpha``.

    An input with fewer than 3 pairs or a constant side has no correlation (NaN): it counts
    in ``n_inputs`` but not in ``n_defined`` and is never significant. ``alternative``
    "two-sided" (default, as R's cor.test used by Louis & Nenkova) or "greater" (positive
    correlation) or "less". ``pvalue``: "t" (scipy's), or for Spearman "as89" (R's cor.test, as the
    paper: :mod:`metaeval.analyses.stats.spearman_test`).
    """
    X, Z = matrices_iv(X=X, Z=Z)
    coef = coefficient_iv(coefficient)
    if coef.label not in _SCIPY_TESTS:
        raise ValueError(f"`coefficient` must be one of pearson, spearman, kendall (tau-b); got {coefficient!r}.")
    from metaeval.analyses.stats import spearman_test

    alpha, alternative = alpha_iv(alpha), alternative_iv(alternative)
    if pvalue not in spearman_test.METHODS or (pvalue != "t" and coef.label != "spearman"):
        raise ValueError(f"`pvalue` is t, or as89 for spearman only; got {pvalue!r} for {coef.label}.")
    m = X.shape[1]
    r, p = np.full(m, np.nan), np.full(m, np.nan)
    test = _SCIPY_TESTS[coef.label] if pvalue == "t" else lambda x, z, a: spearman_test.spearman_pvalue(x, z, a)[:2]
    for j in range(m):
        both = ~np.isnan(X[:, j]) & ~np.isnan(Z[:, j])
        x, z = X[both, j], Z[both, j]
        if x.size >= 3 and np.ptp(x) > 0 and np.ptp(z) > 0:
            r[j], p[j] = test(x, z, alternative)
    significant = rejects(p, alpha)
    positive, negative = int((significant & (r > 0)).sum()), int((significant & (r < 0)).sum())
    counted = r[significant & ((r < 0) if alternative == "less" else (r > 0))]
    return InputSignificanceResult(
        n_inputs=m,
        n_defined=int((~np.isnan(r)).sum()),
        n_significant=int(significant.sum()),
        percent_significant=100.0 * significant.sum() / m,
        min_significant=float(counted.min()) if counted.size else np.nan,
        max_significant=float(counted.max()) if counted.size else np.nan,
        correlations=r,
        pvalues=p,
        n_positive=positive, n_negative=negative, conventions={
            "level": "micro: one correlation per input over its systems",
            "coefficient": coef.label, "alpha": alpha, "alternative": alternative,
            "pvalue": (f"scipy.stats {'kendalltau (tau-b)' if coef.name == 'kendall' else coef.name + 'r'} "
                       f"defaults (scipy {_scipy_version()}); significant when p <= alpha") if pvalue == "t" else
                      "R cor.test's AS 89 (exact n <= 9, Edgeworth above, t with ties); significant when p <= alpha",
            "n_significant_positive": positive, "n_significant_negative": negative,
            "counted": "n_significant: either sign (the paper's count); by sign in n_significant_positive/negative",
            "extremes": ("min/max_significant: of the significant correlations of the sign that counts "
                         f"({'negative' if alternative == 'less' else 'positive'}: agreement with the humans)"),
            "nan_policy": "pairs with a NaN dropped; inputs with < 3 pairs or a constant side are "
                          "undefined and not significant; percent over all inputs",
            "reference": "Louis & Nenkova 2013, Table 3",
        },
    )


# --- tests of system pairs ----------------------------------------------------------------------
@dataclass(frozen=True)
class PairTestsResult:
    """Paired tests of every pair (first[p], second[p]), first < second, over the inputs.

    ``difference`` is the mean of d_j = a_first,j - a_second,j, ``direction`` the sign of
    the test's statistic (mean difference; W+ - W- for Wilcoxon), ``n`` the inputs used.
    """

    first: np.ndarray
    second: np.ndarray
    n: np.ndarray
    difference: np.ndarray
    direction: np.ndarray
    pvalue: np.ndarray
    conventions: Mapping[str, Any] = field(default_factory=dict)


def system_pair_tests(A: npt.ArrayLike, test: str = "ttest", *, k: int | None = 1000, seed: int | None = None,
                      mask: npt.ArrayLike | None = None) -> PairTestsResult:
    """Two-sided paired tests of every pair of systems (rows of ``A``) over the inputs.

    For the pair (i, k), d_j = A[i, j] - A[k, j] over the inputs where both are defined (and,
    if given, ``mask`` -- shape (N(N-1)/2, M), pairs in ``np.triu_indices`` order -- is True).

    - ``"ttest"``: scipy.stats.ttest_1samp(d, 0) (= ttest_rel);
    - ``"wilcoxon"``: scipy.stats.wilcoxon(d) (zero differences dropped, method "auto");
    - ``"permutation"``: sign flips of the d_j (swapping the two systems' values on input j),
      T = sum_j d_j, p = (1 + #{|T_b| >= |T|}) / (1 + k), with |T_b| and |T| compared with a
      tolerance of 1e-12 sum_j |d_j|; the same k flip patterns (numpy default_rng(seed))
      for every pair.

    p = NaN for a pair with fewer than 2 inputs, and where the statistic is undefined (t-test
    and Wilcoxon when every d_j is 0).
    """
    (A,) = matrices_iv(A=A)
    if test not in PAIR_TESTS:
        raise ValueError(f"`test` must be one of {list(PAIR_TESTS)}; got {test!r}.")
    first, second = np.triu_indices(A.shape[0], 1)
    D = A[first] - A[second]
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != D.shape:
            raise ValueError(f"`mask` must have shape {D.shape} (pairs x inputs); got {mask.shape}.")
        D = np.where(mask, D, np.nan)
    n = (~np.isnan(D)).sum(axis=1)
    conventions: dict[str, Any] = {"alternative": "two-sided", "pairs": "every pair of systems, first < second",
                                   "difference": "d_j = a_first,j - a_second,j over the inputs both have"}
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        difference = np.nanmean(D, axis=1)
        if test == "ttest":
            r = _scipy_stats().ttest_1samp(D, 0.0, axis=1, nan_policy="omit")
            pvalue, direction = np.asarray(r.pvalue, float), np.sign(difference)
            conventions["test"] = "scipy.stats.ttest_1samp(d, 0) = paired t-test, df = n - 1"
        elif test == "wilcoxon":
            r = _scipy_stats().wilcoxon(D, axis=1, nan_policy="omit")
            pvalue = np.asarray(r.pvalue, float)
            Dw = np.where(D == 0, np.nan, D)   # zero_method "wilcox": zero differences get no rank
            ranks = _scipy_stats().rankdata(np.abs(Dw), axis=1, nan_policy="omit")
            direction = np.sign(np.nansum(np.sign(Dw) * ranks, axis=1))
            conventions["test"] = ("scipy.stats.wilcoxon(d, zero_method='wilcox', correction=False, "
                                   "method='auto'); direction = sign(W+ - W-)")
        else:
            pvalue, direction, extra = sign_flip_test(D, k_iv(k), seed)
            conventions.update(extra)
    pvalue = np.where(n >= 2, pvalue, np.nan)
    conventions["undefined"] = "p = NaN for pairs with < 2 inputs or an undefined statistic"
    return PairTestsResult(first, second, n, difference, direction, pvalue, conventions)


def sign_flip_test(D: np.ndarray, k: int, seed: int | None, clusters=None) -> tuple[np.ndarray, np.ndarray, dict]:
    """``clusters`` (a label per column): one sign per cluster, ``integers(0, 2, size=(k, C))``,
    shared by its columns (one column per cluster: the same flips)."""
    seq = seed_iv(seed)
    codes = None
    if clusters is not None:   # numbered by first appearance (a single cluster flips every column together)
        number: dict = {}
        codes = np.array([number.setdefault(v, len(number)) for v in clusters], dtype=np.int64)
    units = D.shape[1] if codes is None else int(codes.max(initial=-1)) + 1
    signs = np.where(np.random.default_rng(seq).integers(0, 2, size=(k, units)) == 1, -1.0, 1.0)
    if codes is not None:
        signs = np.ascontiguousarray(signs[:, codes])
    d = np.nan_to_num(D)                                    # a missing input contributes 0 to any T_b
    T = d.sum(axis=1)
    threshold = np.abs(T) - ROUNDING * np.abs(d).sum(axis=1)
    count = np.zeros(len(d), dtype=np.int64)
    batch = max(1, PERMUTATION_BUDGET // (8 * max(1, len(d))))
    for start in range(0, k, batch):
        count += (np.abs(d @ signs[start:start + batch].T) >= threshold[:, None]).sum(axis=1)
    extra = {"test": "paired permutation (sign flip of d_j with probability 1/2), statistic T = sum_j d_j",
             "pvalue_formula": "(1 + #{|T_b| >= |T|}) / (1 + k)", "k": k, "seed": seq.entropy,
             "rng": "numpy default_rng(SeedSequence(seed)).integers(0, 2, size=(k, M)): 1 flips the sign",
             "flips": "the same k flip patterns for every pair"}
    return (1 + count) / (1 + k), np.sign(T), extra


@dataclass(frozen=True)
class SystemAgreementResult:
    """Do metric and human reach the same conclusion about each pair of systems?

    Over the ``pairs`` tested: ``same`` (both significant, same direction), ``opposite`` (both
    significant, opposite directions), ``metric_only``, ``human_only`` (only one significant),
    ``neither``; ``agreement`` = (same + neither) / pairs. ``metric``/``human`` hold the two
    tests of every pair.
    """

    pairs: int
    same: int
    opposite: int
    metric_only: int
    human_only: int
    neither: int
    metric: PairTestsResult
    human: PairTestsResult
    conventions: Mapping[str, Any] = field(default_factory=dict)

    @property
    def agreement(self) -> float:
        return (self.same + self.neither) / self.pairs if self.pairs else np.nan


def system_agreement(X: npt.ArrayLike, Z: npt.ArrayLike, test: str = "ttest", alpha: float = 0.05, *,
                     k: int | None = 1000, seed: int | None = None) -> SystemAgreementResult:
    """Test every pair of systems under metric ``X`` and under human ``Z`` (:func:`system_pair_tests`,
    both on the inputs where all four cells are defined) and count the outcomes.

    A test is significant when p <= ``alpha`` (NaN p: not significant); its direction is the
    sign of its statistic. Pairs with fewer than 2 common inputs are left out of ``pairs``.
    """
    X, Z = matrices_iv(X=X, Z=Z)
    alpha = alpha_iv(alpha)
    first, second = np.triu_indices(X.shape[0], 1)
    common = ~np.isnan(X[first] - X[second]) & ~np.isnan(Z[first] - Z[second])
    mt = system_pair_tests(X, test, k=k, seed=seed, mask=common)
    ht = system_pair_tests(Z, test, k=k, seed=seed, mask=common)
    tested = common.sum(axis=1) >= 2
    sm, sh = rejects(mt.pvalue, alpha)[tested], rejects(ht.pvalue, alpha)[tested]
    same_dir = (mt.direction == ht.direction)[tested]
    return SystemAgreementResult(
        pairs=int(tested.sum()),
        same=int((sm & sh & same_dir).sum()),
        opposite=int((sm & sh & ~same_dir).sum()),
        metric_only=int((sm & ~sh).sum()),
        human_only=int((~sm & sh).sum()),
        neither=int((~sm & ~sh).sum()),
        metric=mt,
        human=ht,
        conventions={**mt.conventions, "alpha": alpha,
                     "inputs": "each pair on the inputs where metric and human have both systems' cells",
                     "significant": "p <= alpha; NaN p not significant; pairs with < 2 inputs left out",
                     "agreement": "(same + neither) / pairs",
                     "reference": "significance agreement of metric and human over system pairs (Louis & Nenkova 2013's "
                                  "Table 4 is error-overlap: which pairs two metrics order correctly)"},
    )


# --- winners and significance clusters ----------------------------------------------------------
#: What each rule says, for conventions and captions.
CLUSTER_RULE_TEXT = {
    "any": "sorted by correlation, descending; a new cluster starts at the first metric significantly "
           "outperformed by any metric of the current cluster (mt-metrics-eval AssignRanks)",
    "strict": "sorted by correlation, descending; a new cluster starts after position i only when every metric "
              "up to i significantly beats every metric after i (strict partition)",
}
UNDEFINED_TEXT = "undefined: the metric's correlation is undefined (e.g. the metric is constant on these inputs)"


@dataclass(frozen=True)
class ClusterResult:
    """Per metric (input order): ``rank`` (1 = highest score), ``cluster`` (1 = best),
    ``is_winner`` (beaten by no other), ``n_beaten_by`` (how many beat it).

    A metric whose score is undefined (``undefined``) has no rank, cluster or winner status
    (NaN, and ``is_winner`` False with ``winner_known`` False). ``determined`` is False when the
    clusters depend on a test that was not run (``tested``): every cluster is then NaN and
    ``why`` names the missing test. ``winner_known[i]`` is False where a winner status would
    rest on a test that was not run.
    """

    rank: np.ndarray
    cluster: np.ndarray
    is_winner: np.ndarray
    n_beaten_by: np.ndarray
    undefined: np.ndarray
    winner_known: np.ndarray
    determined: bool
    why: str | None
    conventions: Mapping[str, Any] = field(default_factory=dict)


def significance_clusters(scores: npt.ArrayLike, beats: npt.ArrayLike, *, rule: str = "any",
                          tested: npt.ArrayLike | None = None, names: Sequence[str] | None = None) -> ClusterResult:
    """Winners and significance clusters of n metrics.

    ``beats[a, b]`` is True when metric a is significantly better than metric b; ``tested[a, b]``
    (symmetric; default: every pair) when the pair was tested at all. Clusters rest on complete
    evidence: when a pair of ranked metrics was not tested, the clusters are not given
    (``determined`` False, ``why`` says which pair), as a cluster boundary could otherwise
    separate two metrics whose test was not run.

    Metrics with an undefined (NaN) score are set apart: no rank, cluster or winner status, and
    their entries of ``beats`` are ignored. The others are sorted by score, descending (ties by
    input order), and:

    - winners (Graham 2015, Table 1): the metrics that no other metric significantly beats;
    - ``rule="any"`` (default; mt-metrics-eval ``AssignRanks``, the ranks of the WMT metrics
      tasks): walking down the sorted list, metric i starts a new cluster when some metric of
      the current cluster (from its first member to i - 1) significantly beats it;
    - ``rule="strict"``: a boundary falls between positions i and i + 1 exactly when every
      metric at positions <= i significantly beats every metric at positions > i (each cluster
      beats every lower one, member by member); with many metrics this rarely separates.

    Under ``strict`` every winner is in cluster 1; under ``any`` a winner can sit in a lower
    cluster (sorted A, B, C: A beats B, so B opens cluster 2, and C, beaten by nobody, joins it).
    """
    s = np.asarray(scores, dtype=np.float64)
    B = np.asarray(beats)
    if s.ndim != 1 or s.size < 1:
        raise ValueError(f"`scores` must be 1-D with at least one metric; got shape {s.shape}.")
    n = s.size
    if B.dtype != bool or B.shape != (n, n):
        raise ValueError(f"`beats` must be a boolean array of shape {(n, n)}; got {B.dtype} {B.shape}.")
    if np.diag(B).any() or (B & B.T).any():
        raise ValueError("`beats` must be irreflexive and antisymmetric (no metric beats itself, "
                         "no two metrics beat each other).")
    if rule not in CLUSTER_RULES:
        raise ValueError(f"`rule` must be one of {list(CLUSTER_RULES)}; got {rule!r}.")
    T = np.ones((n, n), bool) if tested is None else np.asarray(tested)
    if T.dtype != bool or T.shape != (n, n) or (T != T.T).any():
        raise ValueError(f"`tested` must be a symmetric boolean array of shape {(n, n)}.")
    names = [f"metric {i}" for i in range(n)] if names is None else list(names)
    undefined = np.isnan(s)
    defined = ~undefined
    B = B & defined[:, None] & defined[None, :]
    T = T | np.eye(n, dtype=bool)
    order = [i for i in np.lexsort((np.arange(n), np.where(undefined, np.inf, -s))) if defined[i]]
    sorted_cluster, why = _clusters(order, B, T, rule, names)
    rank, cluster = np.full(n, np.nan), np.full(n, np.nan)
    rank[order] = np.arange(1, len(order) + 1)
    if why is None:
        cluster[order] = sorted_cluster
    n_beaten_by = B.sum(axis=0)
    others = defined[:, None] & ~np.eye(n, dtype=bool)
    # unbeaten is known only when every test against it was run; beaten is known from one test
    winner_known = defined & ((n_beaten_by > 0) | ~(others & ~T).any(axis=0))
    is_winner = winner_known & (n_beaten_by == 0)
    return ClusterResult(rank, cluster, is_winner, n_beaten_by, undefined, winner_known, why is None, why, {
        "winners": "metrics not significantly beaten by any other (Graham 2015); unknown where a test against "
                   "the metric was not run",
        "clusters": CLUSTER_RULE_TEXT[rule], "cluster_rule": rule,
        "undefined": UNDEFINED_TEXT + "; it has no rank, cluster or winner status",
        "untested_pairs": "not evidence: clusters are given only when every pair of ranked metrics was tested",
    })


def _clusters(order: list[int], B: np.ndarray, T: np.ndarray, rule: str,
              names: Sequence[str]) -> tuple[list[int], str | None]:
    """The cluster of each metric of ``order`` (sorted), or why the tests run do not decide
    them: clusters rest on complete evidence, every pair of the ranked metrics tested (else a
    cluster could separate two metrics whose test was not run, through the others)."""
    untested = [(i, j) for x, i in enumerate(order) for j in order[x + 1:] if not T[i, j]]
    if untested:
        i, j = untested[0]
        return [], (f"{len(untested)} of the {len(order) * (len(order) - 1) // 2} pairs of ranked metrics were not "
                    f"tested (e.g. {names[i]} vs {names[j]})")
    clusters: list[int] = []
    current, start = 1, 0
    for pos, i in enumerate(order):
        if pos:
            if rule == "any":
                opens = bool(B[order[start:pos], i].any())
            else:
                opens = bool(B[np.ix_(order[:pos], order[pos:])].all())
            if opens:
                current, start = current + 1, pos
        clusters.append(current)
    return clusters, None


def pairwise_beats(n: int, a: npt.ArrayLike, b: npt.ArrayLike, delta: npt.ArrayLike, significant: npt.ArrayLike,
                   alternative: str, scores: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``beats`` and ``tested`` (n x n) from test rows (a[r], b[r]: metric indices; one row per
    ordered pair at most) of one level and coefficient.

    ``significant[r]``: the row's decision (its corrected p-value at the level, the family able
    to resolve, a sequential decision certified); a NaN delta is a test that ran and decided
    nothing, whatever ``significant`` says. A significant row's direction: ``"greater"`` says
    a > b, ``"less"`` b > a, ``"two-sided"`` the sign of delta. With one-sided alternatives each
    row is its own hypothesis; two-sided rows (a, b) and (b, a) test the same one, and the row
    whose metric_a has the higher score (ties: the lower index) decides the pair -- the family
    of that metric's claims --, the other only when it is the one run.
    """
    alternative = alternative_iv(alternative)
    a, b = np.asarray(a, int), np.asarray(b, int)
    delta = np.asarray(delta, float)
    s = np.asarray(scores, float)
    beats, tested = np.zeros((n, n), bool), np.zeros((n, n), bool)
    tested[a, b] = tested[b, a] = True
    significant = ~np.isnan(delta) & np.asarray(significant, bool)
    if alternative != "two-sided":
        win = (a, b) if alternative == "greater" else (b, a)
        beats[win[0][significant], win[1][significant]] = True
        return beats & ~beats.T, tested   # two one-sided wins in opposite directions contradict: neither
    present = set(zip(a.tolist(), b.tolist()))
    key = np.where(np.isnan(s), -np.inf, s)
    for r in np.flatnonzero(significant):
        i, j = int(a[r]), int(b[r])
        claimant_first = key[i] > key[j] or (key[i] == key[j] and i < j)
        if not claimant_first and (j, i) in present:
            continue                        # the row (j, i) decides this pair
        if delta[r] > 0:
            beats[i, j] = True
        elif delta[r] < 0:
            beats[j, i] = True
    return beats, tested
