"""SERA (Cohan & Goharian, LREC 2016, §3): content relevance from overlapping search results.

The candidate summary C and each of its M gold summaries G_i are queries to one search
index; ``R_C`` and ``R_Gi`` are their ranked result lists cut at rank ``n``. Both scores
compare the lists, never the texts:

.. math::

    \\mathrm{SERA} = \\frac{1}{M} \\sum_{i=1}^{M} \\frac{|R_C \\cap R_{G_i}|}{|R_C|}

    \\mathrm{SERA\\text{-}DIS} = \\frac{1}{M} \\sum_{i=1}^{M} \\frac{1}{D_{\\max}}
        \\sum_{j=1}^{|R_C|} \\sum_{k=1}^{|R_{G_i}|} [R_C^{(j)} = R_{G_i}^{(k)}] \\frac{1}{\\log(|j-k|+2)}

The paper assumes ``|R_C| >= |R_Gi|`` "without loss of generality"; lists can be shorter than
``n`` when fewer documents match a query, so here the denominator of a pair is the longer of
its two lists, ``max(|R_C|, |R_Gi|)`` (``= |R_C|`` under the paper's assumption), which keeps
both scores symmetric and in [0, 1]. ``D_max`` is the maximum attainable discounted score of the
pair: every document of the longer list matched at the same rank, ``max(|R_C|, |R_Gi|) / log 2``
(the paper's single ``D_max`` when every list holds n documents, as with any index of at least n
documents that match). The base of the logarithm cancels: each match weighs
``log 2 / log(|j-k|+2) = 1 / log2(|j-k|+2)``, 1 at equal ranks. So SERA-DIS <= SERA, with
equality exactly when every shared document is at the same rank in both lists.

A pair whose two lists are both empty (neither query matched any document) has no defined
score (0/0): the score of the candidate is then NaN, never a number.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

LN2 = math.log(2.0)


def _ranked(results: Sequence[Hashable], n: int | None, what: str) -> list:
    if isinstance(results, (str, bytes)):
        raise TypeError(f"{what} must be a sequence of document ids, not a string")
    ranked = list(results) if n is None else list(results)[:n]
    if len(set(ranked)) != len(ranked):
        seen: set = set()
        dup = next(d for d in ranked if d in seen or seen.add(d))
        raise ValueError(f"{what} lists document {dup!r} twice; a ranked result list holds distinct documents")
    return ranked


def _check(candidate, golds, n) -> tuple[list, list[list]]:
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ValueError(f"the cut-off n must be a positive integer, got {n!r}")
    if isinstance(golds, (str, bytes)) or len(golds) == 0:
        raise ValueError("SERA needs at least one gold result list (M >= 1)")
    return (_ranked(candidate, n, "the candidate's result list"),
            [_ranked(g, n, f"gold result list {i + 1}") for i, g in enumerate(golds)])


def _mean_over_golds(candidate, golds, n, overlap) -> float:
    """``(1/M) sum_i overlap(R_C, R_Gi) / max(|R_C|, |R_Gi|)`` over the lists cut at ``n``; NaN
    when a pair of lists is empty."""
    rc, gs = _check(candidate, golds, n)
    total = 0.0
    for rg in gs:
        longest = max(len(rc), len(rg))
        if longest == 0:
            return math.nan
        total += overlap(rc, rg) / longest
    return total / len(gs)


def sera(candidate: Sequence[Hashable], golds: Sequence[Sequence[Hashable]], n: int | None = None) -> float:
    """SERA of a candidate's result list against the gold summaries' result lists, each cut at ``n``.

    ``(1/M) sum_i |R_C ∩ R_Gi| / max(|R_C|, |R_Gi|)``; NaN when a pair of lists is empty.

    >>> sera(["d1", "d2", "d3", "d4"], [["d3", "d2", "d1", "d4"]])
    1.0
    """
    return _mean_over_golds(candidate, golds, n, lambda rc, rg: len(set(rc) & set(rg)))


def discounted_overlap(candidate: Sequence[Hashable], gold: Sequence[Hashable]) -> float:
    """``sum_j sum_k [R_C(j) = R_G(k)] / log(|j-k|+2)`` (natural log; ranks from 1) of two
    ranked lists of distinct documents."""
    rank = {d: k for k, d in enumerate(gold)}
    return sum(1.0 / math.log(abs(j - rank[d]) + 2) for j, d in enumerate(candidate) if d in rank)


def sera_dis(candidate: Sequence[Hashable], golds: Sequence[Sequence[Hashable]], n: int | None = None) -> float:
    """SERA-DIS: the rank-discounted overlap, normalised by the maximum attainable score.

    ``(1/M) sum_i discounted_overlap(R_C, R_Gi) / (max(|R_C|, |R_Gi|) / log 2)``; NaN when a
    pair of lists is empty.

    >>> round(sera_dis(["d1", "d2", "d3", "d4"], [["d3", "d2", "d1", "d4"]]), 12)
    0.75
    """
    return _mean_over_golds(candidate, golds, n, lambda rc, rg: discounted_overlap(rc, rg) * LN2)


def sera_name(n: int, *, discounted: bool = False, query: str = "plain", model: str = "lm-dirichlet",
              mu: float | None = None) -> str:
    """The measure name of a SERA setting: ``sera-5``, ``sera-dis-10[kw]``, ``sera-5[np,bm25]``,
    ``sera-5[mu=500]`` (the defaults, plain queries and lm-dirichlet retrieval with mu = 2000, are
    not written; mu only for lm-dirichlet)."""
    from .retrieval import DEFAULT_MU

    flags = [query] if query != "plain" else []
    if model != "lm-dirichlet":
        flags.append(model)
    elif mu is not None and mu != DEFAULT_MU:
        flags.append(f"mu={mu:g}")
    return f"sera{'-dis' if discounted else ''}-{n}" + (f"[{','.join(flags)}]" if flags else "")
