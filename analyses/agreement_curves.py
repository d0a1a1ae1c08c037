"""Inter-metric agreement in many bins: Peyrard's (2019) protocols as Bhandari et al. (2020,
appendices A and B) replicate and correct them, and their random-score baseline.

Scores are a stack ``S`` of K metric matrices (K x N systems x M inputs, NaN = missing), oriented
so that higher is better; a summary takes part when every metric of the stack scores it.

Bins (``protocol``), n = ``n_bins``, over a value v in [0, 1]:

- ``"cumulative"`` (Peyrard): bin k (k = 0 .. n-1) holds v >= k/n -- every bin reaches the top
  of the range, so bin 0 is everything and the width shrinks as k grows;
- ``"uniform"`` (what Bhandari et al. recommend): bin k holds k/n <= v < (k+1)/n, the last one
  also v = 1 -- every bin has the same width and they partition the summaries.

Disagreement over sampled pairs (appendix A): ``n_pairs`` pairs of distinct complete summaries
drawn uniformly at random from the whole dataset (Peyrard: 100 000 pairs, 15 cumulative bins),
each placed by v = (a'(s_1) + a'(s_2)) / 2, a' metric a min-max normalised over the complete
summaries of the dataset (Peyrard bins by "any one metric": here metric_a); disagreement(k) =
#{pairs in bin k with sign(a_1 - a_2) sign(b_1 - b_2) < 0} / #{pairs in bin k} (ties are not
disagreement).

F/N and F'/N (appendix B, Eqs. 1-2), for the metrics M = {a, b} of a pair, on each input i and
each of its complete summaries s (every summary, not a sample):

    F/N  = |{x in S(d_i) : for all m in M, m(x) > m(s)}| / |{x in S(d_i) : exists m in M, m(x) > m(s)}|
    F'/N = |{x in S(d_i) : for all m in M, m(x) < m(s)}| / |{x in S(d_i) : exists m in M, m(x) < m(s)}|

undefined where the denominator is 0 (no summary is better, resp. worse, under any metric). s
is placed by its position in its input's range of the consensus score (the mean over all the
stack's metrics of the per-input min-max normalised scores, :func:`agreement.range_positions`);
a bin's value is the mean ratio over its summaries with a defined ratio.

Kendall tau in the bins (section 4.1, generalised from thirds): per input, tau-b over the
summaries whose consensus position is in the bin, averaged over the inputs where it is defined;
with 3 bins, the uniform protocol gives the paper's L, M, T and the cumulative one L+M+T, M+T, T.

Random-score baseline (appendix B: "we assign each summary a random number sampled from
Uniform(0, 1)"): :func:`random_stack` replaces every complete cell of every metric by an
independent Uniform(0, 1) draw (seeded), and the same statistics are computed on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metaeval.analyses import agreement

PROTOCOLS = ("cumulative", "uniform")
BASELINES = ("none", "random")
STATISTICS = ("tau", "disagreement", "f_over_n", "f_prime_over_n")
#: Peyrard (2019)'s protocol: pairs sampled and cumulative bins.
PEYRARD_PAIRS, PEYRARD_BINS = 100_000, 15


def bins_of(values: npt.ArrayLike, n_bins: int, protocol: str) -> np.ndarray:
    """(n_bins, *values.shape) membership of each value (NaN: none) in each bin."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"`protocol` must be one of {list(PROTOCOLS)}; got {protocol!r}.")
    if not isinstance(n_bins, (int, np.integer)) or isinstance(n_bins, bool) or n_bins < 1:
        raise ValueError(f"`n_bins` must be a positive integer; got {n_bins!r}.")
    v = np.asarray(values, dtype=np.float64)
    lo = np.arange(n_bins).reshape((-1,) + (1,) * v.ndim) / n_bins
    with np.errstate(invalid="ignore"):
        if protocol == "cumulative":
            return v >= lo
        hi = lo + 1 / n_bins
        last = (np.arange(n_bins) == n_bins - 1).reshape(lo.shape)
        return (v >= lo) & ((v < hi) | (last & (v <= 1)))


def random_stack(stack: npt.ArrayLike, seed: int) -> np.ndarray:
    """The stack with every complete summary's score under every metric replaced by an
    independent Uniform(0, 1) draw (``default_rng(seed)``); NaN elsewhere."""
    S = np.asarray(stack, dtype=np.float64)
    complete = ~np.isnan(S).any(axis=0)
    draws = np.random.default_rng(seed).random(S.shape)
    return np.where(complete, draws, np.nan)


@dataclass(frozen=True)
class Curve:
    """One statistic of one pair of metrics per bin: its value (NaN where undefined) and the
    count it is over (pairs for disagreement, summaries with a defined ratio for F/N)."""

    statistic: str
    protocol: str
    value: np.ndarray
    count: np.ndarray
    lower: np.ndarray      # the bins' lower edges (k / n)
    upper: np.ndarray      # the bins' upper edges (1 for cumulative bins)


def _edges(n_bins: int, protocol: str) -> tuple[np.ndarray, np.ndarray]:
    lower = np.arange(n_bins) / n_bins
    return lower, (np.ones(n_bins) if protocol == "cumulative" else lower + 1 / n_bins)


def sampled_disagreement(a: npt.ArrayLike, b: npt.ArrayLike, n_pairs: int, n_bins: int, protocol: str,
                         seed: int) -> Curve:
    """Appendix A's disagreement of metrics ``a`` and ``b`` (N x M) over ``n_pairs`` pairs of
    distinct complete summaries drawn with ``default_rng(seed)`` (module docstring)."""
    A, B = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    keep = ~np.isnan(A) & ~np.isnan(B)
    x, y = A[keep], B[keep]
    lower, upper = _edges(n_bins, protocol)
    if x.size < 2:
        return Curve("disagreement", protocol, np.full(n_bins, np.nan), np.zeros(n_bins, int), lower, upper)
    rng = np.random.default_rng(seed)
    i = rng.integers(0, x.size, n_pairs)
    j = (i + rng.integers(1, x.size, n_pairs)) % x.size          # a distinct second summary
    span = x.max() - x.min()
    xn = (x - x.min()) / span if span > 0 else np.zeros_like(x)
    member = bins_of((xn[i] + xn[j]) / 2, n_bins, protocol)
    discordant = np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) < 0
    count = member.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        value = np.where(count > 0, (member & discordant).sum(axis=1) / count, np.nan)
    return Curve("disagreement", protocol, value, count, lower, upper)


def fn_ratios(a: npt.ArrayLike, b: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """(F/N, F'/N) of every summary (N x M; NaN where not complete or the denominator is 0),
    comparing it with the other complete summaries of its input (Eqs. 1-2 of appendix B);
    one input at a time (N x N temporaries)."""
    A, B = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    keep = ~np.isnan(A) & ~np.isnan(B)
    f_n, fp_n = np.full(A.shape, np.nan), np.full(A.shape, np.nan)
    for j in range(A.shape[1]):
        x, y = A[keep[:, j], j], B[keep[:, j], j]
        for out, (dx, dy) in ((f_n, (x[:, None] > x, y[:, None] > y)), (fp_n, (x[:, None] < x, y[:, None] < y))):
            f, n = (dx & dy).sum(axis=0), (dx | dy).sum(axis=0)      # [x, s] summed over x
            with np.errstate(invalid="ignore", divide="ignore"):
                out[keep[:, j], j] = np.where(n > 0, f / np.maximum(n, 1), np.nan)
    return f_n, fp_n


def fn_curves(a: npt.ArrayLike, b: npt.ArrayLike, positions: npt.ArrayLike, n_bins: int,
              protocol: str) -> tuple[Curve, Curve]:
    """F/N and F'/N per bin of the summaries' range positions (mean over the bin's summaries
    whose ratio is defined)."""
    P = np.asarray(positions, dtype=np.float64)
    lower, upper = _edges(n_bins, protocol)
    member = bins_of(P, n_bins, protocol)
    out = []
    for name, R in zip(("f_over_n", "f_prime_over_n"), fn_ratios(a, b)):
        ok = member & ~np.isnan(R)
        count = ok.sum(axis=(1, 2))
        with np.errstate(invalid="ignore", divide="ignore"):
            value = np.where(count > 0, np.where(ok, R, 0.0).sum(axis=(1, 2)) / np.maximum(count, 1), np.nan)
        out.append(Curve(name, protocol, value, count, lower, upper))
    return out[0], out[1]


def tau_curve(a: npt.ArrayLike, b: npt.ArrayLike, positions: npt.ArrayLike, n_bins: int, protocol: str) -> Curve:
    """Section 4.1's statistic in any bins: per input, Kendall tau-b of ``a`` and ``b`` over the
    summaries whose range position is in the bin (:func:`agreement.kendall_per_input`), the mean
    over the inputs where it is defined (count). With 3 bins these are the paper's L, M, T
    (uniform) and L+M+T, M+T, T (cumulative)."""
    A, B = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    P = np.where(np.isnan(A) | np.isnan(B), np.nan, np.asarray(positions, dtype=np.float64))
    lower, upper = _edges(n_bins, protocol)
    value, count = np.full(n_bins, np.nan), np.zeros(n_bins, int)
    for k, mask in enumerate(bins_of(P, n_bins, protocol)):
        tau = agreement.kendall_per_input(A, B, mask).tau
        count[k] = int((~np.isnan(tau)).sum())
        value[k] = float(np.nanmean(tau)) if count[k] else np.nan
    return Curve("tau", protocol, value, count, lower, upper)


def pair_curves(stack: npt.ArrayLike, ka: int, kb: int, n_bins: int, protocol: str, n_pairs: int,
                seed: int) -> list[Curve]:
    """The four statistics of metrics ``ka`` and ``kb`` of ``stack`` (positions from the
    consensus of the whole stack, normalised per input), complete summaries only."""
    S = np.asarray(stack, dtype=np.float64)
    complete = ~np.isnan(S).any(axis=0)
    a, b = np.where(complete, S[ka], np.nan), np.where(complete, S[kb], np.nan)
    positions = agreement.range_positions(agreement.consensus_scores(S, "input"))
    return [tau_curve(a, b, positions, n_bins, protocol), sampled_disagreement(a, b, n_pairs, n_bins, protocol, seed),
            *fn_curves(a, b, positions, n_bins, protocol)]


CONVENTIONS = {
    "reference": "Bhandari et al. 2020, section 4.1 and appendices A and B (Peyrard 2019's protocols)",
    "tau": "per input, Kendall tau-b over the summaries whose consensus position is in the bin; mean over the "
           "inputs where it is defined (count); 3 bins: the paper's L, M, T (uniform), L+M+T, M+T, T (cumulative)",
    "bins": "cumulative: bin k holds v >= k/n (Peyrard); uniform: k/n <= v < (k+1)/n, the last also v = 1",
    "disagreement": "pairs of distinct complete summaries drawn uniformly from the whole dataset; v = the mean of "
                    "metric_a min-max normalised over the dataset's complete summaries; discordant = opposite "
                    "strict orders; ties are not disagreement",
    "f_over_n": "per input and summary s: #{x: a(x) > a(s) and b(x) > b(s)} / #{x: a(x) > a(s) or b(x) > b(s)}; "
                "undefined when no summary is better; mean over the bin's summaries",
    "f_prime_over_n": "as f_over_n with < (worse instead of better)",
    "positions": "f_over_n / f_prime_over_n: the summary's position in its input's range of the consensus score "
                 "(mean over all metrics of the per-input min-max normalised scores)",
    "random_baseline": "every complete cell of every metric replaced by an independent Uniform(0, 1) draw (seeded)",
}
