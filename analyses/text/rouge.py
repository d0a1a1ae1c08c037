"""ROUGE for every summary of a :class:`TextCorpus`, vectorised over summaries.

For a candidate ``c`` and reference ``r`` a counting method gives a *hit*
count and two totals:

* ``rouge-n``: hit = clipped n-gram overlap ``sum_g min(#_c(g), #_r(g))``;
  totals = numbers of n-grams in ``r`` and ``c``;
* ``rouge-s4`` / ``rouge-su4``: the same over skip-bigrams with at most 4
  intervening words (plus unigrams for SU); ``rouge-s`` / ``rouge-su``: every ordered pair of
  a text's tokens, an unlimited skip distance (ROUGE-1.5.5 ``-2 -1``);
* ``rouge-l``: hit = LCS(c, r) over the whole token sequences (``rouge-score``'s
  ``rougeL``, no sentence splitting); totals = ``|r|``, ``|c|``;
* ``rouge-lsum``: hit = summary-level union LCS over sentences (ROUGE-1.5.5's
  ROUGE-L, ``rouge-score``'s ``rougeLsum``); totals = ``|r|``, ``|c|``;
  sentences are the lines of a text, also cut at glued boundaries with the
  ``resplit`` flag;
* ``rouge-w``: hit = WLCS(c, r) with ``f(k) = k**1.2``; totals = ``f(|r|)``,
  ``f(|c|)``; precision and recall are mapped back by ``f^-1(x) = x**(1/1.2)``.

Then ``recall = hit / total_r``, ``precision = hit / total_c`` (0 when a
denominator is 0) and ``f1 = 2PR / (P + R)`` (0 when ``P + R = 0``).

Several references (``aggregation``):

* ``"pooled"`` (default; ROUGE-1.5.5 ``-f A``, SacreROUGE): sum hits and totals
  over the references, ``R = sum hit / sum total_r``,
  ``P = sum hit / (k * total_c)``, F1 from these P and R;
* ``"max"`` (``rouge-score``'s ``score_multi``): score against each reference
  and keep the precision, recall and F1 of the reference with the highest F1
  (the first one on ties).

Both coincide with a single reference. No jackknifing.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

import numpy as np

from .corpus import TextCorpus
from .lcs import lcs_lengths, union_lcs_hits, wlcs_scores
from .ngrams import clipped_overlap, count_bags, ngram_units, skip_bigram_units
from .variants import Variant, as_variant

ROUGE_W_WEIGHT = 1.2
SKIP_GAP = 4


def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0)


def f1_score(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """Harmonic mean ``2PR / (P + R)``, 0 where ``P + R = 0``."""
    return _divide(2.0 * precision * recall, precision + recall)


def pair_counts(
    corpus: TextCorpus, kind: str, stem: bool, stop: bool, resplit: bool = False
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(hit, candidate_total, reference_total)`` per summary-reference pair (see module doc)."""
    view = corpus.view(stem=stem, stop=stop, resplit=resplit)
    _, cand, ref = corpus.reference_pairs()
    n_texts = len(view.offsets) - 1
    if kind in ("rouge-l", "rouge-lsum", "rouge-w"):
        lengths = view.lengths.astype(np.float64)
        if kind == "rouge-l":
            return lcs_lengths(view, cand, ref).astype(np.float64), lengths[cand], lengths[ref]
        if kind == "rouge-lsum":
            return union_lcs_hits(view, cand, ref), lengths[cand], lengths[ref]
        hits = wlcs_scores(view, cand, ref, weight=ROUGE_W_WEIGHT)
        return hits, lengths[cand] ** ROUGE_W_WEIGHT, lengths[ref] ** ROUGE_W_WEIGHT
    if kind in ("rouge-s4", "rouge-su4"):
        units = skip_bigram_units(view, max_gap=SKIP_GAP, unigrams=kind == "rouge-su4")
    elif kind in ("rouge-s", "rouge-su"):
        scored = np.unique(np.concatenate([cand, ref]))   # unlimited: the longest compared text's every pair
        longest = int(view.lengths[scored].max()) if len(scored) else 0
        units = skip_bigram_units(view, max_gap=max(longest - 2, 0), unigrams=kind == "rouge-su")
    else:
        units = ngram_units(view, int(kind[len("rouge-") :]))
    bags = count_bags(*units, n_texts=n_texts)
    totals = bags.totals.astype(np.float64)
    return clipped_overlap(bags, cand, ref), totals[cand], totals[ref]


def _aggregate(
    corpus: TextCorpus, hit: np.ndarray, cand_total: np.ndarray, ref_total: np.ndarray, aggregation: str, power: float
) -> dict[str, np.ndarray]:
    summary_index, _, _ = corpus.reference_pairs()
    n = len(corpus)
    if aggregation == "pooled":
        total_hit = np.bincount(summary_index, weights=hit, minlength=n)
        precision = _divide(total_hit, np.bincount(summary_index, weights=cand_total, minlength=n)) ** power
        recall = _divide(total_hit, np.bincount(summary_index, weights=ref_total, minlength=n)) ** power
        return {"precision": precision, "recall": recall, "f1": f1_score(precision, recall)}
    precision = _divide(hit, cand_total) ** power
    recall = _divide(hit, ref_total) ** power
    f1 = f1_score(precision, recall)
    # best pair per summary: sort by summary, then F1 descending, then reference order
    order = np.lexsort((np.arange(len(f1)), -f1, summary_index))
    best = order[np.searchsorted(summary_index[order], np.arange(n))]
    return {"precision": precision[best], "recall": recall[best], "f1": f1[best]}


def rouge(corpus: TextCorpus, variants: Iterable[Variant | str]) -> dict[str, np.ndarray]:
    """Score every summary of ``corpus`` under each variant.

    Returns ``{variant.name: array of len(corpus)}`` in corpus order; counts are
    computed once per (kind, stem, stop, resplit) and shared by the statistics
    and aggregations that need them.
    """
    wanted = [as_variant(v) for v in variants]
    groups: dict[tuple[str, bool, bool, bool], list[Variant]] = defaultdict(list)
    for v in wanted:
        groups[(v.kind, v.stem, v.stop, v.resplit)].append(v)
    out: dict[str, np.ndarray] = {}
    for (kind, stem, stop, resplit), members in groups.items():
        counts = pair_counts(corpus, kind, stem, stop, resplit)
        power = 1.0 / ROUGE_W_WEIGHT if kind == "rouge-w" else 1.0
        for aggregation in sorted({v.aggregation for v in members}):
            stats = _aggregate(corpus, *counts, aggregation=aggregation, power=power)
            for v in members:
                if v.aggregation == aggregation:
                    out[v.name] = stats[v.statistic]
    return {v.name: out[v.name] for v in wanted}
