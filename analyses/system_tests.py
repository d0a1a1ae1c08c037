"""Significance tests between systems under one measure (Graham 2015, section 5 and Fig. 4).

Pure functions on arrays, no database. ``A`` is the N systems x M inputs matrix of one measure
(NaN = missing cell), oriented so that higher is better (the runner negates a "lower is
better" measure first). A pair of systems (a, b) is tested on the inputs both have: with
d_j = A[a, j] - A[b, j] over those n inputs, mean_a and mean_b the two systems' means over them
and delta = mean(d_j) = mean_a - mean_b.

Graham (2015, section 5) tests every pair of systems with the paired t-test, after checking
each system's scores for normality with the Shapiro-Wilk test (Royston 1982), and reports the
systems "not significantly outperformed by any other" with the matrix of pairwise outcomes
(Fig. 4: a coloured cell when the row system's mean is significantly greater than the column
system's). For differences of medians the paper names the Wilcoxon signed-rank test; Rankel et
al. (2011) recommend paired tests; Owczarzak et al. (2012) used the (unpaired) Wilcoxon rank-sum
test; for statistics with no closed form, randomized tests (Koehn 2004's paired bootstrap;
approximate randomization, Riezler & Maxwell 2005, Graham et al. 2014). :data:`METHODS`:

- ``t-test``: scipy.stats.ttest_rel(x_a, x_b): t = mean(d) / (s_d / sqrt(n)), s_d with ddof 1,
  Student's t with n - 1 df;
- ``wilcoxon``: scipy.stats.wilcoxon(d, zero_method="wilcox", correction=False, method="auto"):
  zero differences dropped, the others ranked by |d_j| (average ranks for ties); statistic
  W+ = sum of the ranks of the positive d_j (scipy's statistic for one-sided tests; for
  two-sided ones scipy reports min(W+, W-), and W- = n'(n' + 1)/2 - W+ over the n' nonzero d_j);
- ``rank-sum``: the unpaired Wilcoxon rank-sum (Mann-Whitney) test of the two systems' values on
  the same inputs, scipy.stats.mannwhitneyu(x_a, x_b, use_continuity=True, method="auto"):
  statistic U_a = R_a - n(n + 1)/2 (R_a the rank sum of a's values in the pooled 2n);
- ``bootstrap``: the paired bootstrap (Koehn 2004; Berg-Kirkpatrick et al. 2012): resample b
  draws M inputs with replacement, delta_b = the mean of d over the drawn inputs the pair has
  (NaN when it has none: not a valid resample); as every paired bootstrap test of the project,
  the bootstrap distribution shifted by -delta stands for the null: count = #{delta_b >= 2 delta}
  (greater), #{delta_b <= 2 delta} (less), #{|delta_b - delta| >= |delta|} (two-sided), over the
  n_valid valid resamples;
- ``randomization``: approximate randomization (Riezler & Maxwell 2005): resample b swaps the
  pair's two values of each input with probability 1/2 (d_j -> -d_j), T_b = mean_j s_bj d_j;
  count = #{T_b >= T} (greater), #{T_b <= T} (less), #{|T_b| >= |T|} (two-sided).

Both resampling tests report p = (1 + count) / (1 + n_valid) (Davison & Hinkley 1997, eq. 4.11;
never 0, resolution 1/(k + 1)), comparisons within 1e-12 sum_j |d_j| / n counting as ties (as
extreme: the conservative side). Resample b is the same for every pair and any batching, drawn
from ``SeedSequence(seed, spawn_key=(b // 256,))`` (:class:`.stats.resampling.ResampleStream`):
the inputs by :func:`.stats.resampling.bootstrap_indices` (method "inputs"), the swaps by
:func:`.stats.resampling.permutation_masks` (method "inputs").

Pairs: with a two-sided alternative every unordered pair once (a before b in the systems'
order), and its direction the sign of its statistic; with "greater" (H1: a better than b) or
"less" every ordered pair. A test is undefined (NaN, never significant) when the pair shares
fewer than 2 inputs, and: the t-test when the d_j are constant (s_d = 0, within rounding: the t
is 0/0 or infinite), Wilcoxon when every d_j is 0.

Each method's tests are one family, corrected with :mod:`.stats.multiple` (or each system_a's,
``correction_group="system"``, one-sided alternatives only); a family whose smallest attainable
p cannot reach the corrected threshold at k resamples has no significant test and says so
(:func:`decide`); the systems not significantly outperformed by any other are given only from a
resolvable family (:meth:`PairTests.not_outperformed`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from metaeval.analyses.conclusions import decide
from metaeval.analyses.stats import clusters as clustering
from metaeval.analyses.stats import resampling
from metaeval.analyses.stats.clusters import clusters_iv
from metaeval.analyses.stats.intervals import rng_description
from metaeval.analyses.stats.resolution import Resolution
from metaeval.analyses.stats.validation import alpha_iv, alternative_iv, correction_iv, k_iv, matrices_iv, seed_iv

#: The tests between two systems, in the order they are reported.
METHODS: tuple[str, ...] = ("t-test", "wilcoxon", "rank-sum", "bootstrap", "randomization")
#: How each method's p-value is formed (:data:`.stats.resolution.PVALUE_FORMULAS`).
PVALUE_FORMULA = {"t-test": "parametric", "wilcoxon": "parametric", "rank-sum": "parametric",
                  "bootstrap": "add-one", "randomization": "add-one"}
RESAMPLING_METHODS: tuple[str, ...] = ("bootstrap", "randomization")
#: The normality test of each system's scores (``shapiro=True``), stored beside the pairs.
NORMALITY = "shapiro-wilk"
#: The tests corrected together: every pair of a method, or each system_a's pairs (one-sided).
CORRECTION_GROUPS: tuple[str, ...] = ("all", "system")
#: Relative tolerance of equalities (constant differences, ties of resampled statistics).
ROUNDING = 1e-12
#: Bytes of temporaries per batch of resamples (pairs x resamples floats, a few of them).
MEMORY_BUDGET = 64 * 2**20

_EXTREME = {"bootstrap": {"greater": "#{delta_b >= 2 delta}", "less": "#{delta_b <= 2 delta}",
                          "two-sided": "#{|delta_b - delta| >= |delta|}"},
            "randomization": {"greater": "#{T_b >= T}", "less": "#{T_b <= T}", "two-sided": "#{|T_b| >= |T|}"}}


def _scipy_stats():
    """scipy.stats, imported on first use (the command line starts without scipy)."""
    import scipy.stats

    return scipy.stats


# --- the tests of every pair -----------------------------------------------------------------------
@dataclass(frozen=True)
class PairTests:
    """One method's tests of the pairs (a[r], b[r]) (row indices of ``A``), with each test's
    inputs ``n``, the means over them, ``delta``, ``statistic`` (module docstring), its
    ``direction`` (+1: a better, -1: b better, 0: neither), raw ``p_value`` (NaN: undefined),
    ``n_valid`` (valid resamples; None for a closed-form test), ``p_adjusted``, ``significant``,
    ``family_size``, ``resolution`` (the family's, per test) and ``conventions``."""

    method: str
    alternative: str
    n_systems: int
    a: np.ndarray
    b: np.ndarray
    n: np.ndarray
    mean_a: np.ndarray
    mean_b: np.ndarray
    delta: np.ndarray
    statistic: np.ndarray
    direction: np.ndarray
    p_value: np.ndarray
    n_valid: np.ndarray | None
    p_adjusted: np.ndarray
    significant: np.ndarray
    family_size: np.ndarray
    resolution: tuple[Resolution | None, ...]
    conventions: dict[str, Any] = field(default_factory=dict)

    def beats(self) -> np.ndarray:
        """(N, N) bool: [i, j] when system i is significantly better than system j (Graham's Fig. 4)."""
        return self._matrix(self.significant.astype(float), 0.0).astype(bool)

    def matrix(self) -> np.ndarray:
        """(N, N) adjusted p of the test of "row i better than column j" (NaN: no such test; for
        a two-sided test, the pair's p in the cell its direction points to), for a heatmap."""
        return self._matrix(self.p_adjusted, np.nan)

    def _matrix(self, values: np.ndarray, empty: float) -> np.ndarray:
        out = np.full((self.n_systems, self.n_systems), empty)
        if self.alternative == "two-sided":
            up, down = self.direction > 0, self.direction < 0
            out[self.a[up], self.b[up]] = values[up]
            out[self.b[down], self.a[down]] = values[down]
        elif self.alternative == "greater":
            out[self.a, self.b] = values
        else:
            out[self.b, self.a] = values
        return out

    @property
    def resolvable(self) -> bool:
        return all(r is None or r.resolvable for r in self.resolution)

    def not_outperformed(self) -> tuple[list[int] | None, list[int]]:
        """(the systems not significantly outperformed by any other, those undetermined). The
        first is None when a family cannot resolve (nothing could be significant: "no one is
        outperformed" would be an artefact of k). A system no one beats but with an undefined
        test is undetermined, not in the set."""
        if not self.resolvable:
            return None, []
        beaten = self.beats().any(axis=0)
        undefined = np.zeros(self.n_systems, bool)
        nan = np.isnan(self.p_value)
        undefined[self.a[nan]] = undefined[self.b[nan]] = True
        free = ~beaten
        return np.flatnonzero(free & ~undefined).tolist(), np.flatnonzero(free & undefined).tolist()


def pairs(n_systems: int, alternative: str) -> tuple[np.ndarray, np.ndarray]:
    """The pairs tested: (a, b) with a < b for two-sided tests, every a != b otherwise (row-major)."""
    if alternative == "two-sided":
        return np.triu_indices(n_systems, 1)
    a, b = np.nonzero(~np.eye(n_systems, dtype=bool))
    return a, b


def _constant(D: np.ndarray) -> np.ndarray:
    """Rows whose defined d_j are all equal (within ROUNDING of the largest |d_j|)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        spread = np.nanmax(D, axis=1) - np.nanmin(D, axis=1)
        scale = np.nanmax(np.abs(D), axis=1)
    return ~(spread > ROUNDING * scale)


def _closed_form(method: str, X: np.ndarray, Y: np.ndarray, D: np.ndarray, alternative: str):
    """statistic, p and direction of a closed-form method on the rows of X, Y (NaN where missing)."""
    st = _scipy_stats()
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "t-test":
            r = st.ttest_rel(X, Y, axis=1, nan_policy="omit", alternative=alternative)
            t = np.asarray(r.statistic, float)
            undefined = _constant(D)
            return np.where(undefined, np.nan, t), np.where(undefined, np.nan, r.pvalue), np.sign(np.nan_to_num(t))
        if method == "wilcoxon":
            Dz = np.where(D == 0, np.nan, D)                 # zero_method "wilcox": zeros get no rank
            nonzero = (~np.isnan(Dz)).sum(axis=1)
            ranks = st.rankdata(np.abs(Dz), axis=1, nan_policy="omit")
            w_plus = np.nansum(np.where(Dz > 0, ranks, 0.0), axis=1)
            p = np.full(len(D), np.nan)
            ok = nonzero >= 1
            if ok.any():
                r = st.wilcoxon(D[ok], zero_method="wilcox", correction=False, method="auto",
                                alternative=alternative, axis=1, nan_policy="omit")
                p[ok] = r.pvalue
            centre = nonzero * (nonzero + 1) / 4
            return np.where(ok, w_plus, np.nan), p, np.sign(w_plus - centre)
        r = st.mannwhitneyu(X, Y, alternative=alternative, use_continuity=True, method="auto", axis=1,
                            nan_policy="omit")
        n = (~np.isnan(D)).sum(axis=1)
        u = np.asarray(r.statistic, float)
        return u, np.asarray(r.pvalue, float), np.sign(u - n * n / 2)


def _resampled(method: str, D: np.ndarray, alternative: str, k: int, seq: np.random.SeedSequence, groups=None):
    """(count, n_valid) of the bootstrap or randomization test of each row of D over k resamples;
    ``groups`` (:class:`.stats.clusters.Clusters`): whole clusters of inputs drawn, or swapped."""
    present = ~np.isnan(D)
    d = np.where(present, D, 0.0)
    n = present.sum(axis=1)
    with np.errstate(all="ignore"):
        delta = d.sum(axis=1) / n
        tol = ROUNDING * np.abs(d).sum(axis=1) / n
    P, M = D.shape
    C = M if groups is None else groups.count   # the units drawn: inputs, or clusters of them
    if method == "bootstrap":
        draw = lambda rng, size: resampling.bootstrap_indices(rng, size, 1, C, "inputs")[1:]  # noqa: E731
    elif groups is None:
        draw = lambda rng, size: resampling.permutation_masks(rng, size, 1, M, "inputs")  # noqa: E731
    else:
        draw = lambda rng, size: clustering.permutation_masks(rng, size, 1, groups, "inputs")  # noqa: E731
    stream = resampling.ResampleStream(seq, draw)
    batch = max(1, MEMORY_BUDGET // (8 * 4 * max(P, M)))
    count, valid = np.zeros(P, np.int64), np.zeros(P, np.int64)
    for start in range(0, k, batch):
        (drawn,) = stream.take(start, min(k, start + batch))
        if method == "bootstrap":
            rows = np.arange(len(drawn))[:, None] * C
            times = np.bincount((rows + drawn).ravel(), minlength=len(drawn) * C).reshape(len(drawn), C)
            if groups is not None:   # each input as often as its cluster was drawn
                times = np.ascontiguousarray(times[:, groups.codes])
            with np.errstate(all="ignore"):
                stat = (d @ times.T) / (present @ times.T)    # times: each input's multiplicity; NaN: none of the pair's
            ok = ~np.isnan(stat)
            hit = _extreme(stat, delta, tol, alternative, shifted=True)
        else:
            signs = np.where(drawn[:, 0, :], -1.0, 1.0)                        # a swap flips d_j
            with np.errstate(all="ignore"):
                stat = (d @ signs.T) / n[:, None]
            ok = np.broadcast_to(n[:, None] > 0, stat.shape)
            hit = _extreme(stat, delta, tol, alternative, shifted=False)
        count += (hit & ok).sum(axis=1)
        valid += ok.sum(axis=1)
    return count, valid


def _extreme(stat: np.ndarray, delta: np.ndarray, tol: np.ndarray, alternative: str, shifted: bool) -> np.ndarray:
    """Resampled statistics at least as extreme as the observed ``delta`` (ties within ``tol``)."""
    delta, tol = delta[:, None], tol[:, None]
    if alternative == "two-sided":
        return (np.abs(stat - delta) if shifted else np.abs(stat)) >= np.abs(delta) - tol
    target = 2 * delta if shifted else delta
    return stat >= target - tol if alternative == "greater" else stat <= target + tol


def _randomization_floors(D: np.ndarray, alternative: str) -> np.ndarray:
    """The exact floor of a randomization p on the n' nonzero d_j: the identity (and for a
    two-sided test the full swap) is as extreme as the data, so p >= 2^-n' (2^(1-n'))."""
    nonzero = (np.nan_to_num(D) != 0).sum(axis=1)
    return np.minimum(1.0, 2.0 ** (-nonzero.astype(float) + (1 if alternative == "two-sided" else 0)))


def _families(method: str, a: np.ndarray, correction_group: str) -> list[np.ndarray]:
    """The indices of each family of tests corrected together."""
    if correction_group == "all":
        return [np.arange(a.size)]
    return [np.flatnonzero(a == i) for i in np.unique(a)]


def _setting(alternative: str, alpha: float, correction: str, correction_group: str) -> tuple[str, float, str]:
    """The alternative, alpha and correction checked, and the correction group with them."""
    alternative, alpha, correction = alternative_iv(alternative), alpha_iv(alpha), correction_iv(correction)
    if correction_group not in CORRECTION_GROUPS:
        raise ValueError(f"`correction_group` must be one of {list(CORRECTION_GROUPS)}; got {correction_group!r}.")
    if correction_group == "system" and alternative == "two-sided":
        raise ValueError("`correction_group` 'system' needs a one-sided alternative (every ordered pair tested).")
    return alternative, alpha, correction


def pair_tests(A: npt.ArrayLike, method: str, *, alternative: str = "two-sided", k: int = 1000,
               seed: int | None = 0, alpha: float = 0.05, correction: str = "holm",
               correction_group: str = "all", clusters=None) -> PairTests:
    """``method``'s tests of every pair of systems (rows of ``A``), corrected (module docstring).
    ``clusters`` (a label per input; the resampling methods only): the bootstrap draws whole
    clusters of inputs, the randomization swaps a cluster's d_j together (:mod:`.stats.clusters`);
    one input per cluster gives the unclustered numbers bit for bit."""
    (A,) = matrices_iv(A=A)
    if method not in METHODS:
        raise ValueError(f"`method` must be one of {list(METHODS)}; got {method!r}.")
    groups = clusters_iv(clusters, A.shape[1])
    if groups is not None and method not in RESAMPLING_METHODS:
        raise ValueError(f"clusters: {method} treats the inputs as independent; clustered resampling applies to "
                         f"{', '.join(RESAMPLING_METHODS)}")
    alternative, alpha, correction = _setting(alternative, alpha, correction, correction_group)
    a, b = pairs(A.shape[0], alternative)
    shared = ~np.isnan(A[a]) & ~np.isnan(A[b])
    X, Y = np.where(shared, A[a], np.nan), np.where(shared, A[b], np.nan)
    D = X - Y
    n = shared.sum(axis=1)
    with np.errstate(all="ignore"):
        mean_a, mean_b = np.nansum(X, axis=1) / n, np.nansum(Y, axis=1) / n
        delta = np.nansum(D, axis=1) / n
    formula, n_valid, floors, extra = PVALUE_FORMULA[method], None, None, {}
    if method in RESAMPLING_METHODS:
        k, seq = k_iv(k), seed_iv(seed)
        count, n_valid = _resampled(method, D, alternative, k, seq, groups)
        with np.errstate(all="ignore"):
            p = (1.0 + count) / (1.0 + n_valid)
        p = np.where(n_valid > 0, p, np.nan)
        statistic, direction = delta, np.sign(delta)
        floors = _randomization_floors(D, alternative) if method == "randomization" else None
        extra = {"k": k, "seed": seq.entropy, "rng": rng_description(),
                 "pvalue_formula": f"(1 + count) / (1 + n_valid); count = {_EXTREME[method][alternative]}",
                 **({} if groups is None else groups.conventions())}
    else:
        statistic, p, direction = _closed_form(method, X, Y, D, alternative)
    p = np.where(n >= 2, np.asarray(p, float), np.nan)
    if method not in RESAMPLING_METHODS:
        extra = {"scipy": _scipy_version()}
    conventions = {"method": method, "test": _TESTS[method], "alternative": alternative,
                   "pairs": _PAIRS[alternative], "inputs": "the inputs both systems have (d_j = a_j - b_j)",
                   "undefined": _UNDEFINED[method], **extra}
    return _decided(method, alternative, A.shape[0], a, b, n, mean_a, mean_b, delta, statistic, direction, p, n_valid,
                    floors, k, alpha, correction, correction_group, conventions)


def _decided(method, alternative, n_systems, a, b, n, mean_a, mean_b, delta, statistic, direction, p, n_valid, floors,
             k, alpha, correction, correction_group, conventions) -> PairTests:
    """The :class:`PairTests` of raw p-values, corrected per family and decided (the conclusion layer)."""
    adjusted, significant = np.full(a.size, np.nan), np.zeros(a.size, bool)
    size, res = np.zeros(a.size, np.int64), [None] * a.size
    for members in _families(method, a, correction_group):
        v = decide(p[members], formula=PVALUE_FORMULA[method], k=k if n_valid is not None else None, correction=correction,
                   alpha=alpha, n_valid=None if n_valid is None else n_valid[members],
                   data_floors=None if floors is None else floors[members])
        adjusted[members], significant[members], size[members] = v.adjusted, v.significant, v.size
        for i in members:
            res[i] = v.resolution
    conventions = {**conventions, "correction": correction, "correction_group": correction_group,
                   "family": _FAMILY[correction_group], "alpha": alpha, "pvalue": PVALUE_FORMULA[method],
                   "reference": "Graham 2015, section 5 and Fig. 4"}
    return PairTests(method, alternative, n_systems, a, b, n, mean_a, mean_b, delta, np.asarray(statistic, float),
                     np.asarray(direction, float), p, n_valid, adjusted, significant, size, tuple(res), conventions)


def corpus_pair_tests(S: npt.ArrayLike, method: str, *, alternative: str = "two-sided", k: int = 1000,
                      seed: int | None = 0, alpha: float = 0.05, correction: str = "holm",
                      correction_group: str = "all") -> PairTests:
    """``method``'s tests of every pair of systems under a corpus BLEU, from the per-cell
    sufficient statistics ``S`` (N systems, M inputs, 10; NaN: no cell): the randomised tests
    Graham (2015) says a corpus-level statistic allows (no per-input value, so no t or Wilcoxon).

    A pair (a, b) is tested on the inputs both have, its statistic delta = BLEU_a - BLEU_b of the
    statistics summed over them (:func:`metaeval.analyses.text.mt.bleu_from_statistics`, sacrebleu's
    corpus BLEU), ``mean_a``/``mean_b`` the two BLEUs. Resample b draws what the cell tests draw
    for the seed (the same inputs, the same swaps, for every pair): ``bootstrap`` recomputes both
    BLEUs on the drawn inputs (with multiplicity; delta_b NaN when none of the pair's is drawn)
    and counts as the cell bootstrap (the distribution shifted by -delta); ``randomization``
    exchanges the pair's statistics on each swapped input (sacrebleu's ``paired_ar`` pseudo
    systems) and counts T_b = BLEU_a' - BLEU_b' as the cell test. p = (1 + count) / (1 + n_valid);
    ties within 1e-12 (|BLEU_a| + |BLEU_b|) count as extreme."""
    from metaeval.analyses.text.mt import bleu_from_statistics

    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 3 or S.shape[2] != 10:
        raise ValueError(f"`S` must be (systems, inputs, 10) BLEU statistics; got shape {S.shape}.")
    if method not in RESAMPLING_METHODS:
        raise ValueError(f"`method` must be one of {list(RESAMPLING_METHODS)} for a corpus BLEU; got {method!r}.")
    alternative, alpha, correction = _setting(alternative, alpha, correction, correction_group)
    k, seq = k_iv(k), seed_iv(seed)
    N, M, _ = S.shape
    present = ~np.isnan(S).any(axis=2)
    S0 = np.where(present[..., None], S, 0.0)
    a, b = pairs(N, alternative)
    P = a.size
    shared = present[a] & present[b]                                  # (P, M)
    n = shared.sum(axis=1)
    Sa, Sb = S0[a] * shared[..., None], S0[b] * shared[..., None]     # (P, M, 10)
    with np.errstate(all="ignore"):
        bleu_a, bleu_b = bleu_from_statistics(Sa.sum(axis=1)), bleu_from_statistics(Sb.sum(axis=1))
    bleu_a, bleu_b = np.where(n > 0, bleu_a, np.nan), np.where(n > 0, bleu_b, np.nan)
    delta = bleu_a - bleu_b
    tol = ROUNDING * (np.abs(bleu_a) + np.abs(bleu_b))
    if method == "bootstrap":
        draw = lambda rng, size: resampling.bootstrap_indices(rng, size, 1, M, "inputs")[1:]  # noqa: E731
    else:
        draw = lambda rng, size: resampling.permutation_masks(rng, size, 1, M, "inputs")  # noqa: E731
    stream = resampling.ResampleStream(seq, draw)
    batch = max(1, MEMORY_BUDGET // (8 * 20 * max(P, M, 1)))
    count, valid = np.zeros(P, np.int64), np.zeros(P, np.int64)
    for start in range(0, k, batch):
        (drawn,) = stream.take(start, min(k, start + batch))
        B = len(drawn)
        if method == "bootstrap":
            rows = np.arange(B)[:, None] * M
            w = np.bincount((rows + drawn).ravel(), minlength=B * M).reshape(B, M).astype(np.float64)
            first, second = np.einsum("bj,pjs->pbs", w, Sa), np.einsum("bj,pjs->pbs", w, Sb)
            ok = (shared.astype(np.float64) @ w.T) > 0                    # (P, B)
        else:
            swap = drawn[:, 0, :].astype(np.float64)                       # (B, M): 1 = exchanged
            da, db = np.einsum("bj,pjs->pbs", swap, Sa), np.einsum("bj,pjs->pbs", swap, Sb)
            first = Sa.sum(axis=1)[:, None, :] - da + db                   # a's pseudo system
            second = Sb.sum(axis=1)[:, None, :] - db + da
            ok = np.broadcast_to(n[:, None] > 0, (P, B))
        with np.errstate(all="ignore"):
            stat = bleu_from_statistics(first) - bleu_from_statistics(second)
        hit = _extreme(stat, delta, tol, alternative, shifted=method == "bootstrap")
        count += (hit & ok).sum(axis=1)
        valid += ok.sum(axis=1)
    with np.errstate(all="ignore"):
        p = np.where((valid > 0) & (n >= 2), (1.0 + count) / (1.0 + valid), np.nan)
    floors = None
    if method == "randomization":   # the identity (and the full swap, two-sided) is as extreme as the data
        differ = (shared & (S0[a] != S0[b]).any(axis=2)).sum(axis=1)
        floors = np.minimum(1.0, 2.0 ** (-differ.astype(float) + (1 if alternative == "two-sided" else 0)))
    conventions = {"method": method, "test": _CORPUS_TESTS[method], "alternative": alternative,
                   "pairs": _PAIRS[alternative], "inputs": "the inputs both systems have; their BLEU statistics summed",
                   "undefined": _UNDEFINED[method], "statistic": "corpus BLEU (sacrebleu's, from summed statistics)",
                   "means": "mean_a, mean_b: the two systems' corpus BLEU over the inputs both have (not a mean)",
                   "k": k, "seed": seq.entropy, "rng": rng_description(),
                   "pvalue_formula": f"(1 + count) / (1 + n_valid); count = {_EXTREME[method][alternative]}"}
    return _decided(method, alternative, N, a, b, n, bleu_a, bleu_b, delta, delta, np.sign(np.nan_to_num(delta)), p,
                    valid, floors, k, alpha, correction, correction_group, conventions)


def _scipy_version() -> str:
    import scipy

    return scipy.__version__


_TESTS = {
    "t-test": "paired t-test, scipy.stats.ttest_rel(x_a, x_b) (df = n - 1); statistic t",
    "wilcoxon": "Wilcoxon signed-rank, scipy.stats.wilcoxon(d, zero_method='wilcox', correction=False, "
                "method='auto'); statistic W+ (sum of the ranks of the positive d_j)",
    "rank-sum": "Wilcoxon rank-sum (Mann-Whitney), unpaired, scipy.stats.mannwhitneyu(x_a, x_b, "
                "use_continuity=True, method='auto'); statistic U_a",
    "bootstrap": "paired bootstrap: the inputs drawn with replacement, once for every pair per resample; "
                 "delta_b = mean of d over the drawn inputs the pair has; statistic delta",
    "randomization": "approximate randomization: each input's two values swapped with probability 1/2 "
                     "(d_j -> -d_j), the same swaps for every pair per resample; statistic delta",
}
_CORPUS_TESTS = {
    "bootstrap": "paired bootstrap of a corpus BLEU: the inputs drawn with replacement, once for every pair per "
                 "resample; delta_b = BLEU_a - BLEU_b of the statistics summed over the drawn inputs the pair has",
    "randomization": "approximate randomization of a corpus BLEU: each input's two statistics exchanged with "
                     "probability 1/2, the same swaps for every pair per resample; T_b = BLEU_a' - BLEU_b'",
}
_PAIRS = {"two-sided": "every unordered pair once (system_a before system_b in the systems' order); the "
                       "direction is the sign of the statistic (W+ - W-, U_a - n^2/2 for the rank tests)",
          "greater": "every ordered pair; H1: system_a better than system_b",
          "less": "every ordered pair; H1: system_a worse than system_b"}
_UNDEFINED = {"t-test": "p = NaN with fewer than 2 shared inputs or constant d_j (s_d = 0 within 1e-12 max |d_j|)",
              "wilcoxon": "p = NaN with fewer than 2 shared inputs or every d_j = 0",
              "rank-sum": "p = NaN with fewer than 2 shared inputs",
              "bootstrap": "p = NaN with fewer than 2 shared inputs",
              "randomization": "p = NaN with fewer than 2 shared inputs"}
_FAMILY = {"all": "every pair of the method", "system": "each system_a's pairs of the method"}


# --- normality and the whole analysis -----------------------------------------------------------------
@dataclass(frozen=True)
class Normality:
    """Shapiro-Wilk (Royston 1982; scipy.stats.shapiro) of each system's scores over its inputs:
    ``statistic`` W, ``p_value`` (NaN with fewer than 3 values or constant ones), corrected over
    the systems; ``significant``: significantly non-normal."""

    n: np.ndarray
    mean: np.ndarray
    statistic: np.ndarray
    p_value: np.ndarray
    p_adjusted: np.ndarray
    significant: np.ndarray
    family_size: int
    conventions: dict[str, Any] = field(default_factory=dict)


def normality(A: npt.ArrayLike, *, alpha: float = 0.05, correction: str = "holm") -> Normality:
    """Shapiro-Wilk of each row of ``A`` (its non-NaN values), corrected over the rows."""
    (A,) = matrices_iv(A=A)
    alpha, correction = alpha_iv(alpha), correction_iv(correction)
    st = _scipy_stats()
    n = (~np.isnan(A)).sum(axis=1)
    W, p = np.full(len(A), np.nan), np.full(len(A), np.nan)
    for i, row in enumerate(A):
        x = row[~np.isnan(row)]
        if x.size >= 3 and np.ptp(x) > ROUNDING * np.abs(x).max():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                W[i], p[i] = st.shapiro(x)
    with np.errstate(all="ignore"):
        mean = np.nansum(A, axis=1) / n
    v = decide(p, formula="parametric", k=None, correction=correction, alpha=alpha)
    conventions = {"method": NORMALITY, "test": f"scipy.stats.shapiro (scipy {_scipy_version()}) of each system's "
                   "scores over its inputs; significant: significantly non-normal", "alpha": alpha,
                   "correction": correction, "family": "every system", "reference": "Graham 2015, section 5",
                   "undefined": "p = NaN with fewer than 3 values or constant values"}
    return Normality(n, mean, W, p, v.adjusted, v.significant, v.size, conventions)


@dataclass(frozen=True)
class SystemTests:
    """Every method's :class:`PairTests` (``tests``, in the order asked) and, with ``shapiro``,
    the systems' :class:`Normality`."""

    tests: dict[str, PairTests]
    normality: Normality | None


def system_tests(A: npt.ArrayLike, methods: Sequence[str] = ("t-test",), *, alternative: str = "two-sided",
                 k: int = 1000, seed: int | None = 0, alpha: float = 0.05, correction: str = "holm",
                 correction_group: str = "all", shapiro: bool = False, clusters=None) -> SystemTests:
    """Tests between every pair of systems (rows of ``A``) by each of ``methods``, each method
    its own family (module docstring); with ``shapiro``, each system's Shapiro-Wilk test."""
    unknown = [m for m in methods if m not in METHODS]
    if unknown or not methods:
        raise ValueError(f"`methods` must be one or more of {list(METHODS)}; got {list(methods)!r}.")
    tests = {m: pair_tests(A, m, alternative=alternative, k=k, seed=seed, alpha=alpha, correction=correction,
                           correction_group=correction_group, clusters=clusters) for m in dict.fromkeys(methods)}
    return SystemTests(tests, normality(A, alpha=alpha, correction=correction) if shapiro else None)
