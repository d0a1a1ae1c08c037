"""Sentence-level BLEU and chrF through ``sacrebleu`` (not re-implemented).

Each summary is scored against all its references with sacrebleu's defaults
for sentence-level use: ``BLEU(effective_order=True).sentence_score`` (13a
tokenisation, exponential smoothing; what ``sacrebleu.sentence_bleu`` does) and
``CHRF().sentence_score`` (character 6-grams, beta 2). Sentences of a text are
joined by single spaces. Scores are on sacrebleu's 0-100 scale; higher is
better.
"""

from __future__ import annotations

import numpy as np

from .corpus import TextCorpus


def _flat(text: str) -> str:
    return " ".join(text.split("\n"))


def _sentence_scores(corpus: TextCorpus, metric) -> np.ndarray:
    summaries = corpus.summary_strings()
    references = corpus.reference_strings()
    return np.array(
        [metric.sentence_score(_flat(s), [_flat(r) for r in refs]).score for s, refs in zip(summaries, references)],
        dtype=np.float64,
    )


def bleu(corpus: TextCorpus) -> dict[str, np.ndarray]:
    """``{"bleu": sentence BLEU per summary}`` (sacrebleu, 0-100)."""
    from sacrebleu.metrics import BLEU

    return {"bleu": _sentence_scores(corpus, BLEU(effective_order=True))}


def chrf(corpus: TextCorpus) -> dict[str, np.ndarray]:
    """``{"chrf": sentence chrF per summary}`` (sacrebleu, 0-100)."""
    from sacrebleu.metrics import CHRF

    return {"chrf": _sentence_scores(corpus, CHRF())}


#: The columns of :func:`bleu_statistics`: sacrebleu's segment statistics, in its order.
STATISTICS = ("hyp_len", "ref_len", "correct_1", "correct_2", "correct_3", "correct_4",
              "total_1", "total_2", "total_3", "total_4")


def bleu_statistics(corpus: TextCorpus) -> np.ndarray:
    """BLEU's sufficient statistics of each summary, ``(len(corpus), 10)`` integers in the order of
    :data:`STATISTICS`: the candidate's length, the length of its closest reference, and the clipped
    n-gram matches and candidate n-grams for n = 1..4 (sacrebleu's ``BLEU()`` segment statistics:
    13a tokenisation, against every reference of the summary). Summed over any set of summaries they
    give that set's corpus BLEU (:func:`bleu_from_statistics`), as ``corpus_score`` does."""
    from sacrebleu.metrics import BLEU

    summaries, references = corpus.summary_strings(), corpus.reference_strings()
    metric = BLEU()
    rows = [metric._extract_corpus_statistics([_flat(s)], [[_flat(r)] for r in refs])[0]
            for s, refs in zip(summaries, references)]
    return np.array(rows, dtype=np.int64).reshape(len(summaries), len(STATISTICS))


def bleu_from_statistics(S) -> np.ndarray:
    """Corpus BLEU (0-100) of summed sufficient statistics ``S`` (..., 10), vectorised over the
    leading axes; sacrebleu's ``BLEU.compute_bleu`` with its corpus defaults (order 4, smoothing
    ``exp``, no effective order):

    BLEU = BP * exp(1/4 sum_n log p_n), BP = 1 if c >= r else exp(1 - r/c) (0 when c = 0),
    p_n = 100 m_n / t_n; an order with m_n = 0 gets p_n = 100 / (2^k t_n), k counting such
    orders so far (NIST's smoothing, mteval-v13a); 0 when no n-gram matches or some t_n = 0."""
    S = np.asarray(S, dtype=np.float64)
    hyp, ref, correct, total = S[..., 0], S[..., 1], S[..., 2:6], S[..., 6:10]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        bp = np.where(hyp >= ref, 1.0, np.where(hyp > 0, np.exp(1 - ref / hyp), 0.0))
        halvings = np.cumsum(correct == 0, axis=-1)
        p = np.where(correct > 0, 100.0 * correct / total, 100.0 / (2.0 ** halvings * total))
        logs = np.log(p)
        score = bp * np.exp((((logs[..., 0] + logs[..., 1]) + logs[..., 2]) + logs[..., 3]) / 4)
    zero = ~(correct > 0).any(axis=-1) | (total == 0).any(axis=-1)
    return np.where(zero, 0.0, score)


def system_bleu(S: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Each system's corpus BLEU from per-cell statistics ``S`` (N, M, 10) (a missing cell: zeros
    or NaN, contributing nothing): (N,) of the statistics summed over the inputs, or, with
    ``weights`` (B, M) -- how often each input was drawn by resample b -- (B, N), each resample's
    corpus BLEU of the summed statistics of its inputs (counted with multiplicity; exactly what
    recomputing BLEU on the resampled corpus gives). NaN for a system without a cell."""
    S = np.asarray(S, dtype=np.float64)
    present = ~np.isnan(S).any(axis=-1)
    S = np.where(present[..., None], S, 0.0)
    if weights is None:
        sums, count = S.sum(axis=1), present.sum(axis=1)
    else:
        w = np.asarray(weights, dtype=np.float64)
        sums, count = np.einsum("bj,ijs->bis", w, S), w @ present.T.astype(np.float64)
    return np.where(count > 0, bleu_from_statistics(sums), np.nan)


def corpus_bleu(corpus: TextCorpus) -> dict[str, float]:
    """``{system: corpus BLEU}`` (sacrebleu's ``BLEU().corpus_score`` over the system's summaries,
    in corpus order, against their references; an input with fewer references than another pads
    its reference streams with None, which sacrebleu skips). A system-level value, not a mean of
    sentence scores: the warehouse stores each cell's sufficient statistics
    (:func:`bleu_statistics`, ``score --metric corpus-bleu``) and sums them; this is the
    independent computation the tests compare them with."""
    from sacrebleu.metrics import BLEU

    summaries, references = corpus.summary_strings(), corpus.reference_strings()
    out = {}
    for system in dict.fromkeys(corpus.systems):
        rows = [k for k, s in enumerate(corpus.systems) if s == system]
        width = max(len(references[k]) for k in rows)
        streams = [[_flat(references[k][j]) if j < len(references[k]) else None for k in rows] for j in range(width)]
        out[str(system)] = float(BLEU().corpus_score([_flat(summaries[k]) for k in rows], streams).score)
    return out
