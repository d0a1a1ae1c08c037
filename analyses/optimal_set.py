"""The optimal set's share per configuration option (Graham 2015, Table 2).

Graham calls *optimal* a variant of ROUGE not significantly outperformed by any other variant
(``metaeval winners``: ``is_winner``). Table 2 gives, for each configuration option of ROUGE, the
share of the optimal variants with each of its values::

    share(option = v) = |{m in O : option(m) = v}| / |O|

where O is the set of optimal ROUGE variants (metrics that are not ROUGE variants, BLEU in the
paper, are not counted). The options are read from the canonical measure names
(:mod:`metaeval.analyses.text.variants`: ``rouge-2.precision[stem,stop]``): the counting method
(``ngram``: rouge-1 .. rouge-4, rouge-l, rouge-w, rouge-s4, rouge-su4, ...), ``stemming``,
``stopwords`` (removed or not), the summary-level statistic (``statistic``: precision, recall,
f1) and the system-level aggregation (``aggregate``: mean, median; given by the caller, the
measure names do not carry it). For each option the shares of its values sum to 1. Each value
also says how many variants of the ranking have it (``n_variants``): a value can only be
optimal as often as it was tried.

No optimal set, no shares: when the ranking's tests cannot decide (a winner undefined), every
share is undefined (NaN), never a proportion of an unknown set.

**Pooled over the aggregates** (:func:`pooled_ranking`; Graham's 192 = 96 variants x {mean,
median}): each (metric, aggregate) is one competitor, r_v = r(agg_v(X_m), mean(Z)) its
correlation as ``correlate --aggregate agg_v`` stores it -- Graham's median variant is the median
of the metric's summary scores against the human's one system score, so every variant is
correlated with the same human vector -- and every ordered pair (u, v) is tested by Williams'
test on the three system-level vectors (Graham's Table 1: r12 = |r(x_u, z)|, r13 = |r(x_v, z)|,
r23 = |r(x_u, x_v)|, n the systems, :func:`.stats.williams.williams_test`), or by the paired
bootstrap of :func:`.stats.hypothesis.paired_bootstrap_test`: the same k draws of systems and/or
inputs for every variant (:func:`.stats.intervals.bootstrap_ci`'s resamples for the seed),
delta_b = r_u,b - r_v,b, p by its formula (:func:`.stats.hypothesis.paired_bootstrap_result`).
Two variants of one aggregate get the numbers ``compare --method williams`` or ``boot-*`` gives
them. A permutation test would swap cells between the two sides, which changes nothing between
the mean and the median of one metric (p = 1 whatever the data): it is not offered. The
correction is applied within each variant's tests against all the others (the group "metric"),
the verdicts, clusters and winners come from :mod:`metaeval.analyses.conclusions`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from metaeval.analyses.text.variants import Variant

#: the configuration options, in Table 2's order
OPTIONS: tuple[str, ...] = ("ngram", "stemming", "stopwords", "statistic", "aggregate")


def settings(measure: str, aggregate: str = "mean") -> dict[str, str] | None:
    """The configuration of a ROUGE variant's measure name (``rouge-2.precision[stem,stop]`` ->
    ngram rouge-2, stemming stemmed, stopwords removed, statistic precision), with its system-level
    ``aggregate``; None for a measure that is not a ROUGE variant (BLEU, a model metric). A name
    scored with a prefix (``score --prefix 'ours:'``: ``ours:rouge-2.recall[stem]``) is read after
    it: the prefix is the text before a canonical variant name that starts after a character
    other than a letter or digit."""
    v = _variant(measure)
    if v is None:
        return None
    return {"ngram": v.kind, "stemming": "stemmed" if v.stem else "not stemmed",
            "stopwords": "removed" if v.stop else "kept", "statistic": v.statistic, "aggregate": aggregate}


def _variant(measure: str) -> Variant | None:
    """The ROUGE variant a measure name is, whole or after a prefix (:func:`settings`)."""
    if not isinstance(measure, str):
        return None
    starts = [0] + [i for i in range(1, len(measure)) if not measure[i - 1].isalnum() and measure.startswith("rouge-", i)]
    for i in starts:
        try:
            return Variant.parse(measure[i:])
        except ValueError:
            continue
    return None


@dataclass(frozen=True)
class Share:
    """One value of one option: how many optimal variants have it (``n_optimal``), their share of
    the optimal set (NaN when the set is undetermined), and how many ranked variants have it."""

    option: str
    value: str
    n_optimal: int | None
    share: float
    n_variants: int


def shares(optimal: Mapping, aggregates: Mapping[str, str] | None = None) -> list[Share]:
    """The optimal set's share per value of each option (module docstring).

    ``optimal``: each ranked metric -> whether it is optimal (None: undetermined, which makes every
    share NaN); ``aggregates``: a metric's system-level aggregation (default mean). A key may also
    be a (metric, aggregate) pair, a variant of a pooled ranking (:func:`pooled_ranking`). Metrics
    that are not ROUGE variants are left out. Values in order of first appearance among the ranked
    variants, per option in :data:`OPTIONS` order. An error when no ranked metric is a ROUGE variant."""
    aggregates = aggregates or {}
    configured = {m: s for m in optimal if (s := (settings(*m) if isinstance(m, tuple)
                                                   else settings(m, aggregates.get(m, "mean")))) is not None}
    if not configured:
        raise ValueError("no ranked metric is a ROUGE variant (rouge-N.statistic[flags]): no option to share")
    decided = all(optimal[m] is not None for m in configured)
    chosen = [m for m in configured if optimal[m]]
    out = []
    for option in OPTIONS:
        values = list(dict.fromkeys(s[option] for s in configured.values()))
        for value in values:
            n_opt = sum(configured[m][option] == value for m in chosen)
            n_all = sum(s[option] == value for s in configured.values())
            share = n_opt / len(chosen) if decided and chosen else np.nan
            out.append(Share(option, value, n_opt if decided else None, share, n_all))
    return out


def shares_table(rows: Sequence[Share]) -> list[dict]:
    """The shares as records (option, value, n_optimal, share, n_variants)."""
    return [{"option": r.option, "value": r.value, "n_optimal": r.n_optimal, "share": r.share,
             "n_variants": r.n_variants} for r in rows]


@dataclass(frozen=True)
class PooledRanking:
    """The ranking of the (metric, aggregate) variants (:func:`pooled_ranking`), in ``variants``
    order: correlations, the (n, n) deltas r_u - r_v, raw and corrected p-values and significance
    of u against v (NaN / False on the diagonal), each variant's optimality (None: undetermined)
    and the variants that beat it; ``note``: why no winner is given (tests that cannot resolve)."""

    variants: tuple[tuple[str, str], ...]
    scores: np.ndarray
    delta: np.ndarray
    pvalues: np.ndarray
    adjusted: np.ndarray
    significant: np.ndarray
    optimal: dict
    beaten_by: dict
    note: str | None
    conventions: dict


def pooled_ranking(matrices: Mapping[str, np.ndarray], Z: np.ndarray, coefficient: str = "pearson",
                   method: str = "inputs", k: int = 1000, seed: int = 0, *, alternative: str = "two-sided",
                   correction: str = "holm", alpha: float = 0.05, rule: str = "any",
                   aggregates: Sequence[str] = ("mean", "median"), paired_inputs: bool = True) -> PooledRanking:
    """The system-level ranking of every (metric, aggregate) variant of ``matrices`` (N systems x
    M inputs each, on one grid with the human ``Z``) by Williams' test (``method`` "williams") or
    paired bootstraps on shared draws (module docstring; ``method`` systems, inputs or both)."""
    from metaeval.analyses import conclusions
    from metaeval.analyses.stats import hypothesis, intervals, williams
    from metaeval.analyses.stats.reductions import system_scores
    from metaeval.analyses.stats.validation import aggregate_iv, coefficient_iv, seed_iv

    variants = tuple((m, a) for a in aggregates for m in matrices)
    coefs = {v: aggregate_iv(coefficient, v[1]) for v in variants}
    n = len(variants)
    delta, p, n_valid = (np.full((n, n), np.nan) for _ in range(3))
    if method == "williams":
        z = system_scores(Z, "mean")[:, None]     # the one human vector of every variant
        x = {v: system_scores(matrices[v[0]], v[1])[:, None] for v in variants}
        plain = coefficient_iv(coefficient)          # on the variants' system scores, each its own column
        scores = np.array([hypothesis.level_correlation(x[v], z, "system", plain) for v in variants], dtype=float)
        for i, j in ((i, j) for i in range(n) for j in range(n) if i != j):
            r = williams.williams_test(x[variants[i]], x[variants[j]], z, "system", coefficient, alternative)
            delta[i, j], p[i, j] = hypothesis.zero_if_rounding(scores[i] - scores[j]), r.pvalue
        formula, k_used, tests = "parametric", None, "Williams' tests"
    else:
        boots = {v: intervals.bootstrap_ci(matrices[v[0]], Z, "system", coefs[v], method, k=k, seed=seed,
                                           paired_inputs=paired_inputs) for v in variants}
        scores = np.array([boots[v].estimate for v in variants], dtype=float)
        for i, j in ((i, j) for i in range(n) for j in range(n) if i != j):
            u, v = variants[i], variants[j]
            samples = hypothesis.zero_if_rounding(boots[u].samples - boots[v].samples)
            r = hypothesis.paired_bootstrap_result(hypothesis.zero_if_rounding(scores[i] - scores[j]), samples,
                                                   "system", coefs[u], method, k, alternative, seed_iv(seed),
                                                   scores[i], scores[j])
            delta[i, j], p[i, j], n_valid[i, j] = r.delta, r.pvalue, np.count_nonzero(~np.isnan(samples))
        formula, k_used, tests = "count", k, "paired bootstrap tests"
    adjusted, significant, evidence = np.full((n, n), np.nan), np.zeros((n, n), bool), np.ones((n, n), bool)
    notes = []
    for i in range(n):   # each variant's family: its tests against every other variant
        others = [j for j in range(n) if j != i]
        verdict = conclusions.decide(p[i, others], formula=formula, k=k_used, correction=correction, alpha=alpha,
                                     n_valid=None if k_used is None else n_valid[i, others])
        adjusted[i, others], significant[i, others] = verdict.adjusted, verdict.significant
        evidence[i, others] = verdict.evidence
        notes.append(verdict.note(f"the pooled {tests}"))
    note = next((x for x in notes if x is not None), None)
    a, b = np.nonzero(~np.eye(n, dtype=bool))
    names = [f"{m} ({agg})" for m, agg in variants]
    clusters, beats, _ = conclusions.clusters(scores, a, b, delta[a, b], significant[a, b], alternative=alternative,
                                              rule=rule, names=names, note=note, evidence=evidence[a, b])
    optimal = {v: (bool(clusters.is_winner[i]) if clusters.winner_known[i] else None) for i, v in enumerate(variants)}
    beaten_by = {names[i]: [names[j] for j in np.flatnonzero(beats[:, i])] for i in range(n)}
    conventions = {"variants": "(metric, aggregate): r(agg(X), mean(Z)) at the system level (Graham 2015: the "
                               "median of the metric's scores against the human's one system score)",
                   "tests": (f"Williams' test (Graham 2015, Table 1), r12 = |r(x_u, z)|, r13 = |r(x_v, z)|, "
                             f"r23 = |r(x_u, x_v)| over the systems, df = n - 3, {alternative}"
                             if method == "williams" else
                             f"paired bootstrap ({method}), the same k={k} draws for every variant (seed {seed}), "
                             f"{alternative}; p = count / k' (paired_bootstrap_test)"),
                   "correction": f"{correction} within each variant's tests against all the others",
                   **dict(clusters.conventions)}
    return PooledRanking(variants, scores, delta, p, adjusted, significant, optimal, beaten_by, note, conventions)
