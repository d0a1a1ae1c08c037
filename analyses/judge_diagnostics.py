"""Judge diagnostics beyond accuracy (issue 35 item 4): length preference, self-preference, bias
and variance, and the alternative annotator test.

Data (as :mod:`metaeval.analyses.preferences`): items ``i`` (an input and a pair of systems
``a < b``), a judge's verdicts ``V[i, o]`` in each presentation order ``o`` (codes ``A`` = 0,
``B`` = 1, ``TIE`` = 2, ``MISSING`` = -1) and the human annotators' ``H[r, i, o]``. Intervals are
percentile intervals over item resamples ``W`` (rounds x items multiplicities,
:func:`metaeval.analyses.preferences.bootstrap_weights`; the same draws for the judge and the
humans: paired); every test's verdict is drawn by :mod:`metaeval.analyses.conclusions`.

- :func:`length_preference` (AlpacaEval's "probability of preferring the longer output"): the
  share of the judge's decisive verdicts (not ties; each order one) that chose the longer output,
  over the items whose two outputs' lengths are known and differ, beside the share of the human
  decisive verdicts on the same items (the items the judge decided); ``difference`` = judge -
  humans with its paired interval, and the exact McNemar test on the (item, order) verdicts
  whose human majority label is decisive: ``b`` = the judge chose the longer output and the
  majority the shorter, ``c`` the reverse.
- :func:`self_preference` (a judge that is also one of the systems): the judge's win rate of that
  system (a tie half a win) over its verdicts on the items where the system is compared, beside
  the humans' win rate of the system on the same items (every human verdict one);
  ``difference`` with its paired interval and the two-sided bootstrap p
  ``min(1, 2 min(#{d_b <= 0}, #{d_b >= 0}) / n_valid)`` over the rounds ``d_b`` defined.
- :func:`bias_variance` (AlpacaEval's evaluator leaderboard): ``bias`` = 1 - the share of items
  whose judge mode (the unique most frequent label among its verdicts on the item; items without
  a unique one left out) equals the human majority label (items with a tied majority left out);
  ``variance`` = the expected leave-one-out disagreement of one of the judge's verdicts with the
  mode of its other verdicts on the item (with two orders: 1 - position consistency), averaged
  over the items with at least two verdicts. Both with intervals; neither is a test.
- :func:`alt_test` (Calderon, Reichart & Dror, ACL 2025, "The Alternative Annotator Test for
  LLM-as-a-Judge"): for each annotator ``j``, on the items ``I_j`` that ``j``, the judge and at
  least one other annotator judged, the alignment of a set of verdicts ``X`` with the others'
  ``R`` (every verdict of every other annotator, in every order, one vote) is the accuracy
  ``S(X, R) = mean_{x in X, r in R} 1[x = r]``;
  ``W^f_i = 1[S(V_i, R_i) >= S(H_j,i, R_i)]``, ``W^h_i = 1[S(H_j,i, R_i) >= S(V_i, R_i)]``,
  ``rho^f_j = mean W^f``, ``rho^h_j = mean W^h``; H0_j: ``rho^f_j <= rho^h_j - epsilon`` against
  H1_j: ``rho^f_j > rho^h_j - epsilon``, by the one-sided paired t-test on ``d_i = W^f_i - W^h_i``:
  ``t = (mean d + epsilon) / (sd(d) / sqrt(n))`` (ddof 1), ``p = P[T_{n-1} >= t]``
  (= scipy.stats.ttest_1samp(d, -epsilon, alternative="greater")); the p-values of the
  annotators corrected by Benjamini-Yekutieli at ``alpha``; the winning rate
  ``omega`` = share of the annotators whose H0_j is rejected, the judge passes when
  ``omega >= 1/2`` (:func:`metaeval.analyses.conclusions.winning_rate`); the average advantage
  probability ``rho = mean_j rho^f_j``. As the authors' implementation (nitaytech/AltTest), an
  annotator with fewer than ``min_items`` items (30) is not tested and counts in neither omega
  nor rho. ``epsilon`` is the paper's cost-benefit margin (0.2 when the annotators are experts,
  0.15 skilled, 0.1 crowd workers).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from metaeval.analyses import conclusions
from metaeval.analyses import preferences as pf
from metaeval.analyses.stats import resampling

A, B, TIE, MISSING = pf.A, pf.B, pf.TIE, pf.MISSING
#: The cost-benefit margin epsilon of the alternative annotator test (Calderon et al. 2025, for experts).
DEFAULT_EPSILON = 0.2
#: Annotators with fewer items are not tested (the authors' implementation's min_instances_per_human).
DEFAULT_MIN_ITEMS = 30


@dataclass(frozen=True)
class Comparison:
    """A judge's statistic beside the humans' on the same items: ``n`` items, ``judge`` and
    ``human`` values, their ``difference`` with its percentile interval (``lower``, ``upper``),
    the raw two-sided ``pvalue`` (NaN: undefined) and what the conclusion layer needs of it."""

    n: int
    verdicts: int
    judge: float
    human: float
    difference: float
    lower: float
    upper: float
    pvalue: float
    formula: str
    n_valid: int | None = None
    data_floor: float = 0.0


def _ratio(num, den):
    num, den = np.asarray(num, float), np.asarray(den, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _interval(samples: np.ndarray, point: float, alpha: float) -> tuple[float, float, int]:
    """Percentile interval of the defined rounds (NaN when the point or every round is undefined)."""
    lo, hi, n_valid = resampling.percentile_interval(samples, alpha)
    return (float("nan"), float("nan"), n_valid) if np.isnan(point) else (lo, hi, n_valid)


def _paired(jn, jd, hn, hd, W, alpha):
    """Point values, the difference and its interval from per-item numerators and denominators."""
    judge, human = _ratio(jn.sum(), jd.sum()).item(), _ratio(hn.sum(), hd.sum()).item()
    rounds = _ratio(W @ jn, W @ jd) - _ratio(W @ hn, W @ hd)
    lo, hi, n_valid = _interval(rounds, judge - human, alpha)
    return judge, human, judge - human, lo, hi, rounds, n_valid


def length_preference(V, H, length_a, length_b, W, *, alpha: float = 0.05) -> Comparison:
    """The judge's and the humans' shares of decisive verdicts for the longer output (module docstring)."""
    V, H = np.asarray(V), np.asarray(H)
    la, lb = np.asarray(length_a, float), np.asarray(length_b, float)
    with np.errstate(invalid="ignore"):
        longer = np.where(la > lb, A, np.where(lb > la, B, MISSING))        # NaN lengths compare False
    known = (longer >= 0)[:, None]
    judge_decisive = known & ((V == A) | (V == B))
    jd = judge_decisive.sum(axis=1).astype(float)
    jn = (judge_decisive & (V == longer[:, None])).sum(axis=1).astype(float)
    same = (jd > 0)[None, :, None]
    human_decisive = same & known[None] & ((H == A) | (H == B))
    hd = human_decisive.sum(axis=(0, 2)).astype(float)
    hn = (human_decisive & (H == longer[None, :, None])).sum(axis=(0, 2)).astype(float)
    judge, human, diff, lo, hi, _, _ = _paired(jn, jd, hn, hd, W, alpha)
    label = pf.human_majority(H).label
    both = judge_decisive & ((label == A) | (label == B))[:, None]
    b = int((both & (V == longer[:, None]) & (label != longer)[:, None]).sum())
    c = int((both & (V != longer[:, None]) & (label == longer)[:, None]).sum())
    p = pf.mcnemar_exact(b, c) if both.any() else float("nan")
    return Comparison(int((jd > 0).sum()), int(jd.sum()), judge, human, diff, lo, hi, p, "parametric",
                      data_floor=conclusions.mcnemar_floor(b + c))


def self_preference(V, H, system_a, system_b, system: int, W, *, alpha: float = 0.05) -> Comparison:
    """The judge's and the humans' win rates of ``system`` on the same items (module docstring)."""
    V, H = np.asarray(V), np.asarray(H)
    sa, sb = np.asarray(system_a), np.asarray(system_b)
    involved = (sa == system) | (sb == system)
    mine = np.where(sa == system, A, B)[:, None]                             # the verdict for the system

    def score(X):
        return np.where(X == mine, 1.0, np.where(X == TIE, 0.5, 0.0))

    judged = involved[:, None] & (V >= 0)
    jd = judged.sum(axis=1).astype(float)
    jn = np.where(judged, score(V), 0.0).sum(axis=1)
    hj = (jd > 0)[None, :, None] & (H >= 0)
    hd = hj.sum(axis=(0, 2)).astype(float)
    hn = np.where(hj, np.stack([score(h) for h in H]), 0.0).sum(axis=(0, 2))
    judge, human, diff, lo, hi, rounds, n_valid = _paired(jn, jd, hn, hd, W, alpha)
    defined = rounds[~np.isnan(rounds)]
    p = (float(min(1.0, 2 * min((defined <= 0).sum(), (defined >= 0).sum()) / defined.size))
         if defined.size and not np.isnan(diff) else float("nan"))
    return Comparison(int((jd > 0).sum()), int(jd.sum()), judge, human, diff, lo, hi, p, "count", n_valid=n_valid)


def _modes(X: np.ndarray) -> np.ndarray:
    """Per row of verdicts (-1 missing): the unique most frequent label, else -1."""
    counts = np.stack([(X == c).sum(axis=-1) for c in (A, B, TIE)], axis=-1)
    top = counts.max(axis=-1)
    unique = (counts == top[..., None]).sum(axis=-1) == 1
    return np.where((top > 0) & unique, counts.argmax(axis=-1), MISSING)


@dataclass(frozen=True)
class BiasVariance:
    """AlpacaEval's bias and variance of a judge (module docstring), each with its interval and the
    items behind it."""

    bias: float
    bias_lower: float
    bias_upper: float
    n_bias: int
    variance: float
    variance_lower: float
    variance_upper: float
    n_variance: int


def bias_variance(V, H, W, *, alpha: float = 0.05) -> BiasVariance:
    """1 - mode agreement with the human majority, and the leave-one-out disagreement of the judge
    with itself (module docstring)."""
    V = np.asarray(V)
    label = pf.human_majority(H).label
    mode = _modes(V)
    has = (mode >= 0) & (label >= 0)
    wrong = (has & (mode != label)).astype(float)
    bias = _ratio(wrong.sum(), has.sum()).item()
    b_lo, b_hi, _ = _interval(_ratio(W @ wrong, W @ has.astype(float)), bias, alpha)
    # leave one verdict out: the mode of the others (one other: itself), disagreement when it differs
    per_item = np.full(len(V), np.nan)
    for i, row in enumerate(V):
        given = row[row >= 0]
        if len(given) < 2:
            continue
        others = [_modes(np.delete(given, t)[None, :])[0] for t in range(len(given))]
        scored = [float(v != m) for v, m in zip(given, others) if m >= 0]
        per_item[i] = np.mean(scored) if scored else np.nan
    ok = ~np.isnan(per_item)
    variance = float(per_item[ok].mean()) if ok.any() else float("nan")
    v_lo, v_hi, _ = _interval(_ratio(W @ np.where(ok, per_item, 0.0), W @ ok.astype(float)), variance, alpha)
    return BiasVariance(bias, b_lo, b_hi, int(has.sum()), variance, v_lo, v_hi, int(ok.sum()))


@dataclass(frozen=True)
class AltTest:
    """The alternative annotator test of one judge: per annotator (in the order of ``H``) ``n``
    items, ``rho_judge`` (rho^f_j), ``rho_human`` (rho^h_j), the t statistic and one-sided
    ``pvalue`` (NaN: not tested, fewer than ``min_items`` items); the Benjamini-Yekutieli verdict
    over the tested annotators, ``omega``, ``passes`` and ``rho`` (over the tested annotators)."""

    n: np.ndarray
    rho_judge: np.ndarray
    rho_human: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    verdict: conclusions.FamilyVerdict
    omega: float
    passes: bool | None
    rho: float
    epsilon: float
    min_items: int


def _alignment(X: np.ndarray, R: np.ndarray) -> np.ndarray:
    """Per item: mean over (x in X, r in R), both given, of 1[x == r] (NaN without a pair)."""
    x, r = X[:, :, None], R[:, None, :]
    pairs = ((x >= 0) & (r >= 0)).sum(axis=(1, 2))
    same = ((x == r) & (x >= 0)).sum(axis=(1, 2))
    return _ratio(same, pairs)


def alt_test(V, H, *, epsilon: float = DEFAULT_EPSILON, alpha: float = 0.05,
             min_items: int = DEFAULT_MIN_ITEMS) -> AltTest:
    """Calderon et al.'s alternative annotator test of the judge ``V`` against the annotators ``H``
    (module docstring)."""
    V, H = np.asarray(V), np.asarray(H)
    if not 0 <= epsilon < 1:
        raise ValueError(f"`epsilon` must be in [0, 1); got {epsilon!r}")
    m = len(H)
    n, rho_f, rho_h, t, p = (np.full(m, np.nan) for _ in range(5))
    for j in range(m):
        others = np.concatenate([H[r] for r in range(m) if r != j], axis=1) if m > 1 else np.full((H.shape[1], 0), -1)
        s_f, s_h = _alignment(V, others), _alignment(H[j], others)
        keep = ~np.isnan(s_f) & ~np.isnan(s_h)
        n[j] = keep.sum()
        if not keep.any():
            continue
        wf, wh = (s_f[keep] >= s_h[keep]).astype(float), (s_h[keep] >= s_f[keep]).astype(float)
        rho_f[j], rho_h[j] = wf.mean(), wh.mean()
        if keep.sum() >= max(2, min_items):
            d = wf - wh
            with np.errstate(invalid="ignore", divide="ignore"):
                t[j] = (d.mean() + epsilon) / (d.std(ddof=1) / np.sqrt(len(d)))
            p[j] = stats.t.sf(t[j], len(d) - 1)
    verdict = conclusions.decide(p, formula="parametric", k=None, correction="by", alpha=alpha, min_size=1)
    omega, passes = conclusions.winning_rate(verdict)
    tested = ~np.isnan(p)
    rho = float(rho_f[tested].mean()) if tested.any() else float("nan")
    return AltTest(n.astype(int), rho_f, rho_h, t, p, verdict, omega, passes, rho, float(epsilon), int(min_items))
