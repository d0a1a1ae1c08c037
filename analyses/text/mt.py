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


def corpus_bleu(corpus: TextCorpus) -> dict[str, float]:
    """``{system: corpus BLEU}`` (sacrebleu's ``BLEU().corpus_score`` over the system's summaries,
    in corpus order, against their references; an input with fewer references than another pads
    its reference streams with None, which sacrebleu skips). A system-level value, not a mean of
    sentence scores: the warehouse stores cells only (one value per system and input), so no
    command stores it yet (issue 33 item 12)."""
    from sacrebleu.metrics import BLEU

    summaries, references = corpus.summary_strings(), corpus.reference_strings()
    out = {}
    for system in dict.fromkeys(corpus.systems):
        rows = [k for k, s in enumerate(corpus.systems) if s == system]
        width = max(len(references[k]) for k in rows)
        streams = [[_flat(references[k][j]) if j < len(references[k]) else None for k in rows] for j in range(width)]
        out[str(system)] = float(BLEU().corpus_score([_flat(summaries[k]) for k in rows], streams).score)
    return out
