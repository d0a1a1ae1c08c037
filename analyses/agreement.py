"""Inter-metric agreement by score range and by input properties (Bhandari et al. 2020).

Human-free meta-evaluation: do metrics agree with *each other* when they rank the summaries of
one input, in the low, middle and top of that input's score range, and how does that depend on
properties of the input? Pure functions on arrays and token ids, no database inside.

Scores are a stack ``S`` of K metric matrices (K x N systems x M inputs, NaN = missing),
oriented so that higher is better. A summary (system i, input j) takes part when all K metrics
score it ("complete"); the others are left out everywhere.

Score ranges (paper section 4.1)
--------------------------------
- Normalisation: each metric k is min-max normalised, m'_k = (m_k - min) / (max - min), over
  the complete summaries of each input (``"input"``, the default) or of the whole dataset
  (``"dataset"``); a metric constant over that set gets m' = 0 (it cannot rank them).
- Consensus score c_ij = mean_k m'_k(s_ij) (the paper's "mean score across all metrics").
- Position of a summary in its input's range: p_ij = (c_ij - min_i c_ij) / (max_i c_ij -
  min_i c_ij) in [0, 1]; undefined (no bins) when the input's range is zero.
- Bins, equal thirds of the range, half-open so that they partition the summaries:
  L = p < 1/3, M = 1/3 <= p < 2/3, T = p >= 2/3; cumulative L+M+T = all, M+T = p >= 1/3.
- Per input j and bin B: Kendall tau-b between metrics a and b over the summaries in B, with
  scipy.stats.kendalltau's default two-sided p-value (exact without ties when n <= 33,
  asymptotic with the tie-corrected variance otherwise), computed vectorised here.
- Reported tau(B) = mean over inputs of the per-input tau; an input is left out when tau is
  undefined (< 2 summaries in B, or a or b constant on them: ``n_undefined``) and, with
  ``significant_only`` (the paper's setting: "We only consider statistically significant
  kendall's tau values"), when p > alpha (``n_nonsignificant``).

Pairwise disagreement (paper appendix A)
----------------------------------------
Every pair of complete summaries of one input (all pairs, not a sample) is placed in a bin by its
position (p_ij + p_kj) / 2, with the thirds above. The pair is discordant when
sign(a_i - a_k) sign(b_i - b_k) < 0; ties (either metric) count as not disagreeing, as in the
paper's code. disagreement(B) = discordant / pairs, pooled over inputs.

Random-score baseline: the expected disagreement if, on each input, each metric's scores were
dealt to the input's summaries in an independent uniformly random order (a permutation null
that keeps each metric's values and ties; the pairs of each bin held fixed). A pair of input j
is then discordant with probability (1 - t_aj)(1 - t_bj) / 2, t_xj = the share of input j's
summary pairs that metric x ties, so

    random_disagreement(B) = sum_j P_j(B) (1 - t_aj)(1 - t_bj) / 2 / sum_j P_j(B),

P_j(B) = pairs of input j in B. Without ties it is exactly 1/2. (Analytic, no seed.)

Input properties (paper section 4.2)
------------------------------------
- Ease of summarisation: EoS_j = (1/K) sum_k max_i m'_k(s_ij), with m' normalised over the
  whole dataset: per-input normalisation would make every max 1 and EoS identically 1.
- Abstractiveness of a reference r w.r.t. the document d: 1 - |Voc(d) & Voc(r)| / |Voc(r)|
  (the paper's typeset formula misplaces a parenthesis; this is its code's and its prose's
  meaning), Voc = set of word types.
- Coverage (Grusky et al. 2018): (1/|r|) sum_{f in F(d, r)} |f|, F the greedy extractive
  fragments of r in d: at each position of r, the longest run of tokens matching a run of d.
Words are the warehouse's ROUGE tokens (lowercased [a-z0-9] runs, :mod:`analyses.text`). An
input with several references gets the mean over them; several documents are concatenated.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import scipy.special
import scipy.stats

from metaeval.analyses.conclusions import rejects
from metaeval.analyses.stats.validation import alpha_iv
from metaeval.analyses.stats.correlation import kendall_tau

BINS = ("L", "M", "T", "L+M+T", "M+T")
NON_CUMULATIVE = ("L", "M", "T")
CUMULATIVE = ("L+M+T", "M+T", "T")
NORMALISATIONS = ("input", "dataset")
PROPERTIES = ("ease", "abstractiveness", "coverage")
TEXT_PROPERTIES = ("abstractiveness", "coverage")
#: Largest n for which scipy's default Kendall p-value is exact (without ties).
EXACT_MAX_N = 33
#: Bytes the pairwise (inputs x n x n) temporaries may use at once.
PAIRWISE_BUDGET = 64 * 2**20

CONVENTIONS = {
    "reference": "Bhandari et al. 2020, Metrics also disagree in the low scoring range, sections 4.1-4.2 "
                 "and appendix A",
    "summaries": "a summary takes part when every metric of the consensus scores it",
    "consensus": "mean over the metrics of min-max normalised scores; a metric constant over the "
                 "normalisation set counts 0",
    "bins": "position p = (c - min c) / (max c - min c) over each input's summaries; L: p < 1/3, "
            "M: 1/3 <= p < 2/3, T: p >= 2/3, M+T: p >= 1/3, L+M+T: all; no bins when max c = min c",
    "tau": "Kendall tau-b per input over the bin's summaries; mean over inputs; inputs with < 2 "
           "summaries in the bin or a constant metric are left out (n_undefined)",
    "pvalue": "scipy.stats.kendalltau default: two-sided, exact without ties when n <= 33 (or when "
              "at most one pair is discordant or concordant), else asymptotic with tie-corrected "
              "variance; significant when p <= alpha",
    "disagreement": "all pairs of summaries of one input, binned by the mean position of the pair; "
                    "discordant = opposite strict orders; ties are not disagreement; pooled over inputs",
    "random_baseline": "expected disagreement when each metric's scores are dealt to the input's "
                       "summaries in random order: sum_j P_j (1 - t_aj)(1 - t_bj) / 2 / sum_j P_j, "
                       "t_xj = share of input j's pairs tied by x",
}


# --- validation ------------------------------------------------------------------------------
def _stack_iv(stack: npt.ArrayLike, name: str = "scores") -> np.ndarray:
    S = np.asarray(stack, dtype=np.float64)
    if S.ndim != 3:
        raise ValueError(f"`{name}` must be a K metrics x N systems x M inputs array; got shape {S.shape}.")
    if S.shape[0] < 1 or S.shape[1] < 1 or S.shape[2] < 1:
        raise ValueError(f"`{name}` must have at least one metric, system and input; got shape {S.shape}.")
    if np.isinf(S).any():
        raise ValueError(f"`{name}` contains infinite values; use NaN for missing cells.")
    return S


def _matrix_iv(X: npt.ArrayLike, name: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    A = np.asarray(X, dtype=np.float64)
    if A.ndim != 2:
        raise ValueError(f"`{name}` must be an N systems x M inputs matrix; got shape {A.shape}.")
    if shape is not None and A.shape != shape:
        raise ValueError(f"`{name}` has shape {A.shape}; expected {shape}.")
    if np.isinf(A).any():
        raise ValueError(f"`{name}` contains infinite values; use NaN for missing cells.")
    return A


def _choice_iv(value: object, name: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"`{name}` must be one of {list(choices)}; got {value!r}.")
    return value


# --- consensus score and bins ------------------------------------------------------------------
def normalise(stack: npt.ArrayLike, normalisation: str = "input") -> np.ndarray:
    """Min-max normalised scores (K x N x M) over the complete summaries of each input
    (``"input"``) or of the whole dataset (``"dataset"``); NaN for summaries that are not
    complete; 0 for a metric constant over the normalisation set."""
    S = _stack_iv(stack)
    normalisation = _choice_iv(normalisation, "normalisation", NORMALISATIONS)
    complete = ~np.isnan(S).any(axis=0)
    masked = np.where(complete, S, np.nan)
    axis = 1 if normalisation == "input" else (1, 2)
    with np.errstate(invalid="ignore", divide="ignore"), _quiet_nan_warnings():
        lo = np.nanmin(masked, axis=axis, keepdims=True)
        span = np.nanmax(masked, axis=axis, keepdims=True) - lo
        out = np.where(span > 0, (masked - lo) / span, 0.0)
    return np.where(complete, out, np.nan)


def consensus_scores(stack: npt.ArrayLike, normalisation: str = "input") -> np.ndarray:
    """c_ij = mean over metrics of the normalised scores (N x M); NaN where not complete."""
    return normalise(stack, normalisation).mean(axis=0)


def range_positions(consensus: npt.ArrayLike) -> np.ndarray:
    """p_ij = (c_ij - min_i c_ij) / (max_i c_ij - min_i c_ij): each summary's place in its
    input's score range, in [0, 1]; NaN where c is NaN or the input's range is zero."""
    C = _matrix_iv(consensus, "consensus")
    with np.errstate(invalid="ignore", divide="ignore"), _quiet_nan_warnings():
        lo = np.nanmin(C, axis=0, keepdims=True)
        span = np.nanmax(C, axis=0, keepdims=True) - lo
        return np.where(span > 0, (C - lo) / span, np.nan)


def in_bin(positions: npt.ArrayLike, bin: str) -> np.ndarray:
    """Which positions (any shape, NaN = none) fall in ``bin`` (see the module docstring)."""
    p = np.asarray(positions, dtype=np.float64)
    bin = _choice_iv(bin, "bin", BINS)
    defined = ~np.isnan(p)
    with np.errstate(invalid="ignore"):
        return defined & {
            "L": p < 1 / 3,
            "M": (p >= 1 / 3) & (p < 2 / 3),
            "T": p >= 2 / 3,
            "L+M+T": np.ones_like(defined),
            "M+T": p >= 1 / 3,
        }[bin]


# --- Kendall tau and p-value per input ----------------------------------------------------------
@dataclass(frozen=True)
class KendallTests:
    """Per-input Kendall tau-b, its two-sided p-value and the number of summaries (length M);
    NaN tau and p where undefined."""

    tau: np.ndarray
    pvalue: np.ndarray
    n: np.ndarray


def kendall_per_input(X: npt.ArrayLike, Z: npt.ArrayLike, mask: npt.ArrayLike | None = None) -> KendallTests:
    """For each input (column) j, Kendall tau-b of X[:, j] and Z[:, j] over the systems where
    ``mask`` is true and both are non-NaN, with scipy.stats.kendalltau's default p-value.

    With C, D the concordant and discordant pairs, tot = n(n-1)/2 and tie groups of sizes t:
    tau = (C - D) / sqrt((tot - Tx)(tot - Tz)), Tx = sum t(t-1)/2. p is exact (the Mahonian
    distribution of D) when neither side has ties and n <= 33 or min(C, D) <= 1; otherwise
    z = (C - D) / sqrt(var), var = (v0 - vx - vz)/18 + 2 Tx Tz / m + x0 z0 / (9 m (n-2)) with
    m = n(n-1), v0 = m(2n+5), vx = sum t(t-1)(2t+5), x0 = sum t(t-1)(t-2), and p = 2 Phi(-|z|).
    Undefined (NaN) with fewer than 2 pairs or a constant side, as scipy.
    """
    X = _matrix_iv(X, "X")
    Z = _matrix_iv(Z, "Z", X.shape)
    valid = ~np.isnan(X) & ~np.isnan(Z)
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != X.shape:
            raise ValueError(f"`mask` has shape {mask.shape}; expected {X.shape}.")
        valid &= mask
    n_sys, m = X.shape
    tau, p = np.full(m, np.nan), np.full(m, np.nan)
    step = max(1, PAIRWISE_BUDGET // (8 * 8 * n_sys * n_sys))
    for start in range(0, m, step):
        sl = slice(start, start + step)
        tau[sl], p[sl] = _kendall_block(X[:, sl].T, Z[:, sl].T, valid[:, sl].T)
    return KendallTests(tau, p, valid.sum(axis=0))


def _kendall_block(x: np.ndarray, z: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pair = valid[:, :, None] & valid[:, None, :]
    sx = np.where(pair, np.sign(x[:, :, None] - x[:, None, :]), 0.0)
    sz = np.where(pair, np.sign(z[:, :, None] - z[:, None, :]), 0.0)
    s = (sx * sz).sum(axis=(1, 2))                       # 2 (C - D)
    n = valid.sum(axis=1).astype(np.float64)
    tx = np.where(valid, (pair & (sx == 0)).sum(axis=2), 0).astype(np.float64)   # t of each element's group
    tz = np.where(valid, (pair & (sz == 0)).sum(axis=2), 0).astype(np.float64)
    tau = kendall_tau(s, n, n * n - tx.sum(axis=1), n * n - tz.sum(axis=1), "b")
    with np.errstate(invalid="ignore", divide="ignore"):
        per = lambda t, f: np.where(t > 0, f(t), 0.0).sum(axis=1)   # sum over groups of f(t) = sum_i f(t_i)/t_i
        x_tie, z_tie = per(tx, lambda t: (t - 1) / 2), per(tz, lambda t: (t - 1) / 2)
        x0, z0 = per(tx, lambda t: (t - 1) * (t - 2)), per(tz, lambda t: (t - 1) * (t - 2))
        x1, z1 = per(tx, lambda t: (t - 1) * (2 * t + 5)), per(tz, lambda t: (t - 1) * (2 * t + 5))
        tot = n * (n - 1) / 2
        mm = n * (n - 1)
        var = (mm * (2 * n + 5) - x1 - z1) / 18 + 2 * x_tie * z_tie / mm + x0 * z0 / (9 * mm * (n - 2))
        p_asym = 2 * scipy.special.ndtr(-np.abs((s / 2) / np.sqrt(var)))
    discordant = (tot - s / 2) / 2                       # without ties, C + D = tot
    c = np.rint(np.minimum(discordant, tot - discordant))
    exact = (x_tie == 0) & (z_tie == 0) & ((n <= EXACT_MAX_N) | (c <= 1))
    p_exact = np.array([_exact_pvalue(int(k), int(cc)) if e and not np.isnan(t) else np.nan
                        for k, cc, e, t in zip(n, np.nan_to_num(c), exact, tau)])
    p = np.where(exact, p_exact, p_asym)
    return tau, np.where(np.isnan(tau), np.nan, np.clip(p, 0.0, 1.0))


def _exact_pvalue(n: int, c: int) -> float:
    """Two-sided exact p = min(1, 2 P(D <= c)), D the inversions of a random permutation of n."""
    if n <= EXACT_MAX_N:
        return min(1.0, 2.0 * float(_mahonian_cdf(n)[c]))
    return min(1.0, 2.0 * math.exp(math.log1p(c * (n - 1)) - math.lgamma(n + 1)))   # c <= 1


@lru_cache(maxsize=None)
def _mahonian_cdf(n: int) -> np.ndarray:
    """P(D <= c) for c = 0..n(n-1)/2, D = inversions of a uniformly random permutation of n."""
    counts = [1]
    for j in range(2, n + 1):        # inserting element j adds 0..j-1 inversions
        new = [0] * (len(counts) + j - 1)
        for k, v in enumerate(counts):
            for d in range(j):
                new[k + d] += v
        counts = new
    cum = np.cumsum(np.array(counts, dtype=object))
    return np.array([float(v / math.factorial(n)) for v in cum])


# --- one pair of metrics in one bin --------------------------------------------------------------
@dataclass(frozen=True)
class BinAgreement:
    """Agreement of metrics a and b on the summaries of one bin (see the module docstring).

    ``tau`` = mean of the per-input taus kept (``n_tau`` of them); left out: ``n_undefined``
    inputs (undefined tau) and, with ``significant_only``, ``n_nonsignificant`` (p > alpha).
    ``n_significant`` counts inputs with p <= alpha whatever ``significant_only``.
    ``disagreement`` = discordant / pairs (pairs binned by their mean position);
    ``random_disagreement`` its permutation-null expectation. Per-input arrays: ``taus``,
    ``pvalues``, ``sizes`` (summaries in the bin).
    """

    bin: str
    tau: float
    n_tau: int
    n_undefined: int
    n_nonsignificant: int
    n_significant: int
    mean_summaries: float
    pairs: int
    discordant: int
    tied: int
    disagreement: float
    random_disagreement: float
    taus: np.ndarray = field(repr=False)
    pvalues: np.ndarray = field(repr=False)
    sizes: np.ndarray = field(repr=False)
    conventions: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def row(self) -> dict[str, Any]:
        """The scalar fields, by name (NaN where undefined)."""
        return {f: getattr(self, f) for f in ROW_FIELDS}


ROW_FIELDS = ("bin", "tau", "n_tau", "n_undefined", "n_nonsignificant", "n_significant", "mean_summaries",
              "pairs", "discordant", "tied", "disagreement", "random_disagreement")


def bin_agreement(A: npt.ArrayLike, B: npt.ArrayLike, positions: npt.ArrayLike, bin: str, *,
                  alpha: float = 0.05, significant_only: bool = False) -> BinAgreement:
    """Agreement of metric matrices ``A`` and ``B`` (N x M) in ``bin`` of the range
    ``positions`` (N x M, from :func:`range_positions`; NaN = summary left out)."""
    A = _matrix_iv(A, "A")
    B = _matrix_iv(B, "B", A.shape)
    P = _matrix_iv(positions, "positions", A.shape)
    bin = _choice_iv(bin, "bin", BINS)
    alpha = alpha_iv(alpha)
    if not isinstance(significant_only, (bool, np.bool_)):
        raise ValueError(f"`significant_only` must be a bool; got {significant_only!r}.")
    P = np.where(np.isnan(A) | np.isnan(B), np.nan, P)
    k = kendall_per_input(A, B, in_bin(P, bin))
    defined = ~np.isnan(k.tau)
    significant = defined & rejects(k.pvalue, alpha)
    kept = significant if significant_only else defined
    pairs, discordant, tied, expected = _disagreement(A, B, P, bin)
    return BinAgreement(
        bin=bin,
        tau=float(k.tau[kept].mean()) if kept.any() else np.nan,
        n_tau=int(kept.sum()),
        n_undefined=int((~defined).sum()),
        n_nonsignificant=int((defined & ~significant).sum()) if significant_only else 0,
        n_significant=int(significant.sum()),
        mean_summaries=float(k.n.mean()),
        pairs=pairs, discordant=discordant, tied=tied,
        disagreement=discordant / pairs if pairs else np.nan,
        random_disagreement=expected / pairs if pairs else np.nan,
        taus=k.tau, pvalues=k.pvalue, sizes=k.n,
        conventions={**CONVENTIONS, "alpha": alpha, "significant_only": bool(significant_only), "bin": bin},
    )


def _disagreement(A: np.ndarray, B: np.ndarray, P: np.ndarray, bin: str) -> tuple[int, int, int, float]:
    """(pairs, discordant, tied, expected discordant under the permutation null) of ``bin``."""
    pairs = discordant = tied = 0
    expected = 0.0
    n = A.shape[0]
    step = max(1, PAIRWISE_BUDGET // (8 * 6 * n * n))
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    for start in range(0, A.shape[1], step):
        a, b, p = (X[:, start:start + step].T for X in (A, B, P))
        valid = ~np.isnan(p)
        both = valid[:, :, None] & valid[:, None, :] & upper
        sa = np.sign(a[:, :, None] - a[:, None, :])
        sb = np.sign(b[:, :, None] - b[:, None, :])
        with np.errstate(invalid="ignore"):
            chosen = both & in_bin((p[:, :, None] + p[:, None, :]) / 2, bin)
        per_input = chosen.sum(axis=(1, 2))
        pairs += int(per_input.sum())
        discordant += int((chosen & (sa * sb < 0)).sum())
        tied += int((chosen & ((sa == 0) | (sb == 0))).sum())
        all_pairs = both.sum(axis=(1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            untied_a = np.where(all_pairs > 0, (both & (sa != 0)).sum(axis=(1, 2)) / all_pairs, 0.0)
            untied_b = np.where(all_pairs > 0, (both & (sb != 0)).sum(axis=(1, 2)) / all_pairs, 0.0)
        expected += float((per_input * untied_a * untied_b / 2).sum())
    return pairs, discordant, tied, expected


# --- every pair of metrics, every bin --------------------------------------------------------------
def score_range_agreement(scores: Mapping[str, npt.ArrayLike], *, normalisation: str = "input",
                          alpha: float = 0.05, significant_only: bool = False,
                          bins: Sequence[str] = BINS) -> pd.DataFrame:
    """One row per unordered pair of metrics (in the order given) and bin: the fields of
    :class:`BinAgreement` (without the per-input arrays). ``scores`` maps metric names to
    N x M matrices on one grid, higher is better; the consensus is over all of them."""
    names = list(scores)
    if len(names) < 2:
        raise ValueError(f"agreement needs at least two metrics; got {names}.")
    stack = _stack_iv(np.stack([np.asarray(scores[m], dtype=np.float64) for m in names]))
    positions = range_positions(consensus_scores(stack, normalisation))
    rows = []
    for (i, a), (j, b) in combinations(enumerate(names), 2):
        for bin in bins:
            r = bin_agreement(stack[i], stack[j], positions, bin, alpha=alpha, significant_only=significant_only)
            rows.append({"metric_a": a, "metric_b": b, **r.row()})
    return pd.DataFrame(rows)


def tau_matrix(rows: pd.DataFrame, setting: str = "non-cumulative") -> pd.DataFrame:
    """The paper's Table 1/2 layout from rows of :func:`score_range_agreement` (or of the
    ``score_range_agreement`` table): index (metric_a, bin), one column per metric_b.
    ``setting`` "non-cumulative" (L, M, T) or "cumulative" (L+M+T, M+T, T)."""
    setting = _choice_iv(setting, "setting", ("non-cumulative", "cumulative"))
    order = NON_CUMULATIVE if setting == "non-cumulative" else CUMULATIVE
    sub = rows[rows["bin"].isin(order)]
    wide = sub.pivot_table(index=["metric_a", "bin"], columns="metric_b", values="tau", dropna=False, sort=False)
    metrics_a = list(dict.fromkeys(sub["metric_a"]))
    index = pd.MultiIndex.from_product([metrics_a, list(order)], names=["metric_a", "bin"])
    return wide.reindex(index=index, columns=list(dict.fromkeys(sub["metric_b"])))


# --- input properties ---------------------------------------------------------------------------
def ease_of_summarization(stack: npt.ArrayLike) -> np.ndarray:
    """EoS_j = (1/K) sum_k max_i m'_k(s_ij), m' min-max normalised over the whole dataset's
    complete summaries (length M; NaN for an input without complete summaries)."""
    N = normalise(stack, "dataset")
    with _quiet_nan_warnings():
        return np.nanmax(N, axis=1).mean(axis=0)


def abstractiveness(document: npt.ArrayLike, reference: npt.ArrayLike) -> float:
    """1 - |Voc(d) & Voc(r)| / |Voc(r)| for token sequences (any hashable ids); NaN for an
    empty reference."""
    d, r = np.asarray(document), np.asarray(reference)
    vocab = np.unique(r)
    if vocab.size == 0:
        return np.nan
    return float(1.0 - np.isin(vocab, d).sum() / vocab.size)


def extractive_fragments(document: npt.ArrayLike, reference: npt.ArrayLike) -> list[tuple[int, int]]:
    """Grusky et al.'s greedy fragments F(d, r) as (start in r, length): at each position i of
    r, the longest run r[i:i+l] equal to some d[j:j+l]; then i += max(l, 1)."""
    d, r = np.asarray(document), np.asarray(reference)
    # run[i, j] = length of the common run starting at r[i] and d[j]
    run = np.zeros((len(r) + 1, len(d) + 1), dtype=np.int64)
    for i in range(len(r) - 1, -1, -1):
        run[i, :-1] = np.where(r[i] == d, run[i + 1, 1:] + 1, 0)
    fragments, i = [], 0
    while i < len(r):
        longest = int(run[i].max())
        if longest:
            fragments.append((i, longest))
        i += max(longest, 1)
    return fragments


def coverage(document: npt.ArrayLike, reference: npt.ArrayLike) -> float:
    """Coverage(d, r) = (1/|r|) sum_{f in F(d, r)} |f|; NaN for an empty reference."""
    r = np.asarray(reference)
    if r.size == 0:
        return np.nan
    return sum(length for _, length in extractive_fragments(document, r)) / r.size


def reference_properties(documents: Mapping[str, npt.ArrayLike],
                         references: Mapping[str, Sequence[npt.ArrayLike]]) -> pd.DataFrame:
    """Abstractiveness and coverage of each input: ``documents`` maps an input to its document's
    tokens, ``references`` to its references' tokens; the value is the mean over references.
    Columns input, property, value."""
    missing = [i for i in references if i not in documents]
    if missing:
        raise ValueError(f"{len(missing)} input(s) have references but no document (first: {missing[0]!r}).")
    rows = []
    for input_, refs in references.items():
        if len(refs) == 0:
            raise ValueError(f"input {input_!r} has no reference.")
        for name, fn in (("abstractiveness", abstractiveness), ("coverage", coverage)):
            with _quiet_nan_warnings():
                value = float(np.nanmean([fn(documents[input_], r) for r in refs]))
            rows.append({"input": input_, "property": name, "value": value})
    return pd.DataFrame(rows, columns=["input", "property", "value"])


# --- per-input tau against a property ---------------------------------------------------------------
@dataclass(frozen=True)
class PropertyAgreement:
    """Correlation over inputs between the per-input tau of two metrics and an input property
    (Pearson and Spearman with scipy's two-sided p-values), on ``n_inputs`` inputs where both
    are defined (and, with ``significant_only``, tau's p <= alpha); ``tau_mean`` their mean tau."""

    n_inputs: int
    tau_mean: float
    pearson: float
    pearson_p: float
    spearman: float
    spearman_p: float
    conventions: Mapping[str, Any] = field(default_factory=dict, repr=False)


def property_agreement(taus: npt.ArrayLike, pvalues: npt.ArrayLike, values: npt.ArrayLike, *,
                       alpha: float = 0.05, significant_only: bool = False) -> PropertyAgreement:
    """Pearson and Spearman correlation of per-input ``taus`` with property ``values``."""
    t, p, v = (np.asarray(x, dtype=np.float64).ravel() for x in (taus, pvalues, values))
    if not t.shape == p.shape == v.shape:
        raise ValueError(f"`taus`, `pvalues` and `values` must have the same length; got {t.size}, {p.size}, {v.size}.")
    alpha = alpha_iv(alpha)
    keep = ~np.isnan(t) & ~np.isnan(v)
    if significant_only:
        keep &= rejects(p, alpha)
    t, v = t[keep], v[keep]
    corr = [(np.nan, np.nan)] * 2
    if t.size >= 3 and not _constant(t) and not _constant(v):
        corr = [tuple(map(float, scipy.stats.pearsonr(t, v))), tuple(map(float, scipy.stats.spearmanr(t, v)))]
    return PropertyAgreement(
        n_inputs=int(t.size), tau_mean=float(t.mean()) if t.size else np.nan,
        pearson=corr[0][0], pearson_p=corr[0][1], spearman=corr[1][0], spearman_p=corr[1][1],
        conventions={"tau": "Kendall tau-b per input over all its complete summaries (bin L+M+T)",
                     "correlation": "scipy.stats pearsonr / spearmanr over inputs, two-sided; undefined "
                                    "with < 3 inputs or a side constant up to rounding (range <= 1e-12 (1 + max|x|))",
                     "alpha": alpha, "significant_only": bool(significant_only),
                     "reference": "Bhandari et al. 2020, section 4.2 and figure 1"},
    )


def _constant(x: np.ndarray) -> bool:
    """Constant up to rounding: range <= 1e-12 (1 + max |x|). Per-input tau moves in steps of
    at least ~1/n^2 and the properties are proportions, so a smaller spread is floating-point
    noise (e.g. two identical metrics: tau = 1 for every input, up to 2e-16), whose
    "correlation" would be meaningless."""
    return bool(np.ptp(x) <= 1e-12 * (1 + np.max(np.abs(x))))


def property_series(taus: npt.ArrayLike, values: npt.ArrayLike, window: int = 10,
                    inputs: Sequence[str] | None = None) -> pd.DataFrame:
    """Plotting data for tau against a property (the paper's figure 1): inputs with both
    defined, sorted by the property, with the trailing ``window``-point moving averages of
    both (NaN for the first window - 1 points, as the paper's pandas rolling mean)."""
    t, v = np.asarray(taus, dtype=np.float64).ravel(), np.asarray(values, dtype=np.float64).ravel()
    if t.shape != v.shape:
        raise ValueError(f"`taus` and `values` must have the same length; got {t.size} and {v.size}.")
    if not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"`window` must be a positive integer; got {window!r}.")
    frame = pd.DataFrame({"input": list(inputs) if inputs is not None else np.arange(t.size), "value": v, "tau": t})
    frame = frame.dropna(subset=["value", "tau"]).sort_values("value", kind="stable").reset_index(drop=True)
    frame["value_avg"] = frame["value"].rolling(window).mean()
    frame["tau_avg"] = frame["tau"].rolling(window).mean()
    return frame


@contextmanager
def _quiet_nan_warnings():
    """Silence numpy's 'All-NaN slice' / 'Mean of empty slice' warnings (NaN is the answer)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
