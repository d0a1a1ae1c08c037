"""Evaluation without references: a summary compared with its input (Louis & Nenkova 2013, §4.2).

Every feature compares the word distribution of a summary with that of its input (the input's
documents, concatenated); as in the paper, both are stopword-filtered and stemmed by default
(the flags ``stem`` / ``stop`` are in each measure's name, as for ROUGE and JS). Unigrams.

Distribution similarity (§4.2.1), with the paper's smoothing (Eq. 3), applied to both
distributions on the union of their words::

    p(w) = (C_w + delta) / (N + delta * B),   delta = 0.0005,  B = 1.5 |V_input|

- ``kl.input-summary``: ``D(P_inp || P_summ) = sum_w P_inp(w) log2(P_inp(w) / P_summ(w))`` (Eq. 2, bits);
- ``kl.summary-input``: ``D(P_summ || P_inp)``. KL is asymmetric; lower is better; ``D(P || P) = 0``.
  (JS divergence, unsmoothed and smoothed, is :mod:`.divergence`.)
- ``cosine.input``: the cosine of the tf-idf vectors of input and summary over all words (Eq. 5),
  ``tf`` the raw count, ``idf(w) = ln(D / df(w))`` over the collection of the dataset's inputs
  (``D`` distinct inputs; ``df(w)`` how many contain ``w``);
- ``cosine-topic.input``: the same with the input's vector restricted to its topic signature words
  (the summary keeps all its words).

Topic signatures (§4.2.3; Lin & Hovy 2000): a word of an input is a topic word when it is more
frequent in the input than in the background corpus (by default: the dataset's other inputs) and
its log-likelihood ratio (Dunning 1993) exceeds ``cutoff`` (default 10, about p < 0.0016 for
chi-square with one degree of freedom)::

    -2 log lambda = 2 [L(p1, k1, n1) + L(p2, k2, n2) - L(p, k1, n1) - L(p, k2, n2)],
    L(p, k, n) = k ln p + (n - k) ln(1 - p),  p1 = k1/n1, p2 = k2/n2, p = (k1 + k2)/(n1 + n2)

(``k1`` of ``n1`` input tokens, ``k2`` of ``n2`` background tokens; the G statistic of the 2 x 2
table). Two features:

- ``topic-fraction.input``: the fraction of the summary's tokens that are topic words of its input;
- ``topic-coverage.input``: the share of the input's topic words that appear in the summary.

Summary likelihood (§4.2.2), as natural-log probabilities (the products underflow), under the
input's smoothed distribution (Eq. 3: a summary word absent from the input has probability
``delta / (N + delta B)``, not 0):

- ``logprob-unigram.input``: ``ln prod_i p_inp(w_i)^{n_i} = sum_i n_i ln p_inp(w_i)`` (Eq. 6);
- ``logprob-multinomial.input``: ``ln [N! / (n_1! ... n_r!)] + sum_i n_i ln p_inp(w_i)`` (Eq. 7),
  ``N = n_1 + ... + n_r``.

An empty summary (after preprocessing) gives NaN for every feature but ``topic-coverage`` (0 when
its input has topic words) and the log-probabilities (0: the empty product); an input with no
topic word gives NaN for the topic features.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from .corpus import TextCorpus

DELTA = 0.0005
VOCABULARY_FACTOR = 1.5
DEFAULT_CUTOFF = 10.0
FEATURES = {
    "kl": ("kl.input-summary", "kl.summary-input"),
    "cosine": ("cosine.input", "cosine-topic.input"),
    "topic": ("topic-fraction.input", "topic-coverage.input"),
    "probability": ("logprob-unigram.input", "logprob-multinomial.input"),
}
LOWER_IS_BETTER = ("kl.",)


def feature_name(base: str, stem: bool, stop: bool, cutoff: float | None = None) -> str:
    """``base`` with its settings, e.g. ``kl.input-summary[stem,stop]``,
    ``topic-fraction.input[stem,stop,cutoff=10]``."""
    flags = [f for f, on in (("stem", stem), ("stop", stop)) if on]
    if cutoff is not None and ("topic" in base):
        flags.append(f"cutoff={cutoff:g}")
    return base + (f"[{','.join(flags)}]" if flags else "")


def llr(k1, n1, k2, n2) -> np.ndarray:
    """Dunning's -2 log lambda of a word seen ``k1`` times in ``n1`` tokens and ``k2`` in ``n2``."""
    k1, n1, k2, n2 = (np.asarray(x, dtype=float) for x in (k1, n1, k2, n2))

    def loglik(p, k, n):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(k > 0, k * np.log(np.where(p > 0, p, 1.0)), 0.0) + np.where(
                n - k > 0, (n - k) * np.log(np.where(p < 1, 1 - p, 1.0)), 0.0)

    p1, p2, p = k1 / n1, k2 / np.maximum(n2, 1), (k1 + k2) / (n1 + n2)
    return 2 * (loglik(p1, k1, n1) + loglik(p2, k2, n2) - loglik(p, k1, n1) - loglik(p, k2, n2))


@dataclass(frozen=True)
class _Inputs:
    """The distinct inputs: their token counts over the vocabulary (dense rows), idf and topic words."""

    index: np.ndarray        # summary -> row of its input
    counts: np.ndarray       # inputs x vocabulary
    idf: np.ndarray          # vocabulary
    topic: np.ndarray        # inputs x vocabulary, bool


def _inputs(corpus: TextCorpus, view, cutoff: float) -> _Inputs:
    texts, index = np.unique(corpus.document_text, return_inverse=True)
    counts = np.zeros((len(texts), max(view.vocab_size, 1)))
    for row, t in enumerate(texts):
        counts[row] = np.bincount(view.text(t), minlength=counts.shape[1])
    df = (counts > 0).sum(axis=0)
    with np.errstate(divide="ignore"):
        idf = np.where(df > 0, np.log(len(texts) / np.maximum(df, 1)), 0.0)
    n1 = counts.sum(axis=1, keepdims=True)
    k2 = counts.sum(axis=0, keepdims=True) - counts            # the background: every other input
    n2 = n1.sum() - n1
    topic = (counts > 0) & (counts / n1 > k2 / np.maximum(n2, 1)) & (llr(counts, n1, k2, n2) > cutoff)
    return _Inputs(index=index.ravel(), counts=counts, idf=idf, topic=topic)


def _smoothed(c: np.ndarray, vocabulary: float) -> np.ndarray:
    return (c + DELTA) / (c.sum() + DELTA * VOCABULARY_FACTOR * vocabulary)


def _kl(p: np.ndarray, q: np.ndarray) -> float:
    return float(np.sum(p * np.log2(p / q)))


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    norm = np.linalg.norm(a) * np.linalg.norm(b)
    return float(a @ b / norm) if norm > 0 else np.nan


def model_free(corpus: TextCorpus, features=tuple(FEATURES), stem: bool = True, stop: bool = True,
               cutoff: float = DEFAULT_CUTOFF) -> dict[str, np.ndarray]:
    """``{name: value per summary}`` of the chosen feature families (keys of :data:`FEATURES`)."""
    unknown = [f for f in features if f not in FEATURES]
    if unknown:
        raise ValueError(f"unknown model-free features {unknown}; choose from {', '.join(FEATURES)}")
    if not corpus.has_documents:
        raise ValueError("model-free evaluation compares a summary with its input: every summary needs its input "
                         "documents")
    if not (np.isfinite(cutoff) and cutoff >= 0):
        raise ValueError(f"the topic-signature cutoff must be a finite number >= 0; got {cutoff}")
    view = corpus.view(stem=stem, stop=stop)
    inputs = _inputs(corpus, view, cutoff)
    names = [n for f in features for n in FEATURES[f]]
    out = {n: np.full(len(corpus), np.nan) for n in names}
    for i, t in enumerate(corpus.summary_text):
        row = inputs.index[i]
        inp = inputs.counts[row]
        summ = np.bincount(view.text(t), minlength=len(inp)).astype(float)
        values = _features(inp, summ, inputs.idf, inputs.topic[row])
        for n in names:
            out[n][i] = values[n]
    return {feature_name(n, stem, stop, cutoff): v for n, v in out.items()}


def _features(inp: np.ndarray, summ: np.ndarray, idf: np.ndarray, topic: np.ndarray) -> dict[str, float]:
    """Every feature of one summary (counts ``summ``) against its input (counts ``inp``)."""
    n_summ, union = summ.sum(), (inp > 0) | (summ > 0)
    vocabulary = float((inp > 0).sum())
    p_inp, p_summ = _smoothed(inp[union], vocabulary), _smoothed(summ[union], vocabulary)
    n_topic = topic.sum()
    out = {"kl.input-summary": _kl(p_inp, p_summ) if n_summ else np.nan,
           "kl.summary-input": _kl(p_summ, p_inp) if n_summ else np.nan,
           "cosine.input": _cosine(inp * idf, summ * idf),
           "cosine-topic.input": _cosine(np.where(topic, inp, 0) * idf, summ * idf) if n_topic else np.nan,
           "topic-fraction.input": float(summ[topic].sum() / n_summ) if n_summ and n_topic else np.nan,
           "topic-coverage.input": float((summ[topic] > 0).sum() / n_topic) if n_topic else np.nan}
    n = summ[union]
    unigram = float(np.sum(n * np.log(p_inp)))
    out["logprob-unigram.input"] = unigram
    out["logprob-multinomial.input"] = float(gammaln(n_summ + 1) - np.sum(gammaln(n + 1))) + unigram
    return out
