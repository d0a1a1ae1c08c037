"""Retrieval math for SERA (pure: no search library, no database).

**Analyzer** (:data:`ANALYZER`), used both to index documents and to turn queries into terms:
ROUGE words (:func:`~.tokenize.normalize_words`: lowercase, runs outside ``[a-z0-9]`` are
separators), minus ROUGE-1.5.5's SMART stopwords, Porter-stemmed (words longer than 3
characters, as ``rouge-score``); the paper computes SERA "with stopwords removed and with
stemming".

**Query reformulations** (Cohan & Goharian §3), each a list of analyzed terms:

* *plain* — the whole summary without stopwords and numbers (words made only of digits);
* *KW* — the keywords and key phrases of up to 3 terms: every expression of 1 to ``max_len``
  consecutive content words (inside one segment: no stopword, number or punctuation mark
  between them) whose idf on the index is above a threshold, by default the mean idf of the
  index's vocabulary (its non-stopword terms: the analyzer keeps no stopword). The query keeps
  each word occurrence that lies inside at least one kept expression (once), in order;
* *NP* — the words of the summary's noun phrases (a spaCy pipeline's ``noun_chunks``, or the NP
  chunks of TextBlob's Pattern parser, ``np_model="textblob"``: a Brill tagger and a rule chunker
  whose lexicon ships in the package), analyzed as plain queries are.

``idf(e) = log(N / df(e))`` with N the index's documents and ``df(e)`` the documents holding
the term, or the phrase at consecutive positions; an expression no document holds has no idf
and is never kept.

**Query likelihood with Dirichlet smoothing** (Zhai & Lafferty 2001), for a document d of
length ``|d|``, collection C of ``|C|`` term occurrences, query term counts ``c(w, q)``:

.. math::

    \\log p(q \\mid d) = \\sum_{w \\in q} c(w, q) \\,
        \\log \\frac{tf(w, d) + \\mu \\, cf(w) / |C|}{|d| + \\mu}

Query terms the collection never holds (``cf = 0``) make every document's likelihood 0 and are
left out. The ranked documents are the candidates that hold at least one query term (as a
search engine's disjunctive query matches them), sorted by decreasing score, ties broken by the
order in which documents were indexed.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence

from .tokenize import normalize_words, smart_stopwords, stem_words

#: The analyzer's name, recorded with every index built with it.
ANALYZER = "rouge-words,smart-stopwords,porter"
#: The query reformulations.
QUERIES = ("plain", "kw", "np")
#: Key phrases of KW queries are at most this many terms long (the paper's 3).
KW_MAX_LEN = 3
#: Dirichlet prior of the query likelihood (the paper's, Elasticsearch's and Lucene's default).
DEFAULT_MU = 2000.0
#: A spaCy English pipeline for NP queries (``--np-model``).
DEFAULT_NP_MODEL = "en_core_web_sm"
#: The NP chunker that installs from the package index with its model (the ``np`` extra):
#: TextBlob's Pattern parser (CLiPS Pattern's tagger and chunker; lexicon in the wheel).
TEXTBLOB_NP_MODEL = "textblob"

_SEGMENT_BREAK = re.compile(r"[\n.,;:!?()\[\]{}\"]+")


def analyze(text: str) -> list[str]:
    """The index terms of ``text``: ROUGE words, SMART stopwords removed, Porter-stemmed."""
    stop = smart_stopwords()
    return stem_words(w for w in normalize_words(text) if w not in stop)


def is_number(word: str) -> bool:
    """A numeric value (a ROUGE word made only of digits, e.g. ``425``; ``2nd`` is a word)."""
    return word.isdigit()


def plain_query(text: str) -> list[str]:
    """The *plain* query: ``text`` without stopwords and numbers, analyzed."""
    stop = smart_stopwords()
    return stem_words(w for w in normalize_words(text) if w not in stop and not is_number(w))


def content_segments(text: str) -> list[list[str]]:
    """Runs of consecutive content words of ``text`` (analyzed terms): cut at punctuation marks,
    line breaks, stopwords and numbers, so that no key phrase spans them."""
    stop = smart_stopwords()
    out = []
    for part in _SEGMENT_BREAK.split(text):
        run: list[str] = []
        for w in normalize_words(part):
            if w in stop or is_number(w):
                if run:
                    out.append(run)
                run = []
            else:
                run.append(w)
        if run:
            out.append(run)
    return [stem_words(run) for run in out]


def idf(df: int, n_docs: int) -> float:
    """``log(N / df)``; NaN when ``df`` is 0 (no document holds the expression)."""
    if n_docs < 1 or df < 0 or df > n_docs:
        raise ValueError(f"need 0 <= df <= N and N >= 1, got df={df}, N={n_docs}")
    return math.log(n_docs / df) if df else math.nan


def mean_idf(doc_freqs: Iterable[int], n_docs: int) -> float:
    """The mean idf of a vocabulary (the documents holding each term): KW's default threshold."""
    values = [idf(df, n_docs) for df in doc_freqs]
    if not values:
        raise ValueError("the index holds no term: no idf threshold")
    return math.fsum(values) / len(values)


def kw_expressions(text: str, doc_freq: Callable[[tuple[str, ...]], int], n_docs: int, threshold: float,
                   max_len: int = KW_MAX_LEN) -> list[tuple[str, ...]]:
    """The keywords and key phrases of ``text``: expressions of 1..``max_len`` consecutive content
    terms (see :func:`content_segments`) with ``idf > threshold``, in order of appearance
    (repeats kept). ``doc_freq(expression)`` is the index's document frequency of the term or phrase."""
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")
    kept = []
    for run in content_segments(text):
        for start in range(len(run)):
            for length in range(1, min(max_len, len(run) - start) + 1):
                expression = tuple(run[start:start + length])
                value = idf(doc_freq(expression), n_docs)
                if value > threshold:  # NaN (df = 0) is never above
                    kept.append(expression)
    return kept


def kw_query(text: str, doc_freq: Callable[[tuple[str, ...]], int], n_docs: int, threshold: float,
             max_len: int = KW_MAX_LEN) -> list[str]:
    """The *KW* query: every word occurrence of ``text`` inside at least one kept expression
    (:func:`kw_expressions`), once, in order."""
    if max_len < 1:
        raise ValueError(f"max_len must be >= 1, got {max_len}")
    query = []
    for run in content_segments(text):
        covered = [False] * len(run)
        for start in range(len(run)):
            for length in range(1, min(max_len, len(run) - start) + 1):
                if idf(doc_freq(tuple(run[start:start + length])), n_docs) > threshold:
                    covered[start:start + length] = [True] * length
        query += [t for t, c in zip(run, covered) if c]
    return query


def load_spacy(name: str = DEFAULT_NP_MODEL):
    """The spaCy pipeline ``name`` (for NP queries), or a ValueError saying what to install."""
    try:
        import spacy
    except ImportError:
        raise ValueError(f"NP queries need spaCy and an English pipeline: pip install spacy && "
                         f"python -m spacy download {name}, which fetches the pipeline from GitHub, not the package "
                         f"index; offline, --np-model textblob (pip install textblob) finds noun phrases, or use "
                         f"the plain or kw queries") from None
    try:
        return spacy.load(name)
    except OSError:
        raise ValueError(f"NP queries need the spaCy pipeline {name!r}, which is not installed: "
                         f"python -m spacy download {name} fetches it from GitHub, not the package index; offline, "
                         f"--np-model textblob (pip install textblob) finds noun phrases") from None


def load_np_chunker(name: str = DEFAULT_NP_MODEL):
    """What finds noun phrases for NP queries: TextBlob's Pattern parser for ``"textblob"``
    (:func:`load_textblob`), else the spaCy pipeline ``name`` (:func:`load_spacy`)."""
    return load_textblob() if name == TEXTBLOB_NP_MODEL else load_spacy(name)


class _Chunk:
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


class _Chunks:
    __slots__ = ("noun_chunks",)

    def __init__(self, chunks: list[_Chunk]):
        self.noun_chunks = chunks


class PatternNP:
    """A callable giving ``.noun_chunks`` (each with ``.text``) as a spaCy pipeline does, from
    TextBlob's Pattern parser: the tokens tagged ``B-NP`` start a noun phrase, ``I-NP`` continue
    it (``word/TAG/CHUNK/PNP`` per token, sentences on lines, ``/`` in a word as ``&slash;``)."""

    def __init__(self, parse: Callable):
        self._parse = parse

    def __call__(self, text: str) -> _Chunks:
        chunks: list[list[str]] = []
        for sentence in self._parse(text, tokenize=True, tags=True, chunks=True, relations=False,
                                    lemmata=False).split("\n"):
            inside = False
            for token in sentence.split(" "):
                parts = token.rsplit("/", 3)
                if len(parts) < 4:
                    inside = False
                    continue
                word, chunk = parts[0].replace("&slash;", "/"), parts[2]
                if chunk == "B-NP" or (chunk == "I-NP" and not inside):
                    chunks.append([word])
                elif chunk == "I-NP":
                    chunks[-1].append(word)
                inside = chunk in ("B-NP", "I-NP")
        return _Chunks([_Chunk(" ".join(c)) for c in chunks])


def load_textblob() -> PatternNP:
    """TextBlob's Pattern parser as an NP chunker, or a ValueError saying what to install."""
    try:
        from textblob.en import parse
    except ImportError:
        raise ValueError("NP queries with the np_model 'textblob' need TextBlob (its tagger and chunker ship in "
                         "the package): pip install 'metaeval-warehouse[np]' or pip install textblob") from None
    return PatternNP(parse)


def np_query(text: str, nlp: Callable) -> list[str]:
    """The *NP* query: the words of the noun phrases ``nlp(text).noun_chunks`` (a spaCy pipeline
    or anything alike), in order, as a plain query (no stopwords, no numbers, stemmed)."""
    return [t for chunk in nlp(text).noun_chunks for t in plain_query(chunk.text)]


def lm_dirichlet(query: Sequence[str], postings: Mapping[str, Mapping[Hashable, int]],
                 doc_length: Mapping[Hashable, int], collection_length: int,
                 mu: float = DEFAULT_MU) -> dict[Hashable, float]:
    """``{document: log p(q | d)}`` over the documents that hold a query term.

    ``postings[w]`` maps every document holding ``w`` to ``tf(w, d)`` (all of them: ``cf(w)``
    is their sum), ``doc_length[d]`` is ``|d|``, ``collection_length`` is ``|C|``.
    """
    if not mu > 0:
        raise ValueError(f"mu must be positive, got {mu}")
    if collection_length < 1:
        raise ValueError("the collection is empty")
    counts = Counter(query)
    cf = {w: sum(postings.get(w, {}).values()) for w in counts}
    terms = [w for w in counts if cf[w] > 0]
    candidates = {d for w in terms for d in postings[w]}
    scores = {}
    for d in candidates:
        norm = math.log(doc_length[d] + mu)
        scores[d] = sum(counts[w] * (math.log(postings[w].get(d, 0) + mu * cf[w] / collection_length) - norm)
                        for w in terms)
    return scores


def rank(scores: Mapping[Hashable, float], order: Mapping[Hashable, int], depth: int | None = None) -> list:
    """The documents by decreasing score, ties broken by ``order`` (indexing order), first ``depth``."""
    ranked = sorted(scores, key=lambda d: (-scores[d], order[d]))
    return ranked if depth is None else ranked[:depth]
