"""ROUGE-style normalisation, Porter stemming and SMART stopwords.

Tokenisation follows ROUGE-1.5.5 as re-implemented by Google's ``rouge-score``
(``rouge_score.tokenize.tokenize``):

1. lowercase the text;
2. replace every run of characters outside ``[a-z0-9]`` by one space;
3. split on whitespace.

The two optional steps are applied per word *type* (so each distinct word is
stemmed once) and in ROUGE-1.5.5's order:

* stopword removal tests the lowercased, unstemmed word against ROUGE-1.5.5's
  SMART list (``data/smart_common_words.txt``), as ``ROUGE-1.5.5.pl -s`` and
  SacreROUGE's python-rouge do;
* stemming uses ``nltk``'s ``PorterStemmer()`` (NLTK_EXTENSIONS mode, exactly
  what ``rouge-score`` uses) on words longer than 3 characters only.

Sentences are the non-empty lines of a text. :func:`glued_sentence_lengths`
also cuts lines at ``" ."`` directly followed by a letter, a boundary that
joining tokenised sentences without a space loses (the ``resplit`` ROUGE flag).
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from typing import Iterable

_NON_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")
#: A sentence boundary lost when tokenised sentences were joined without a space:
#: `` .`` directly followed by a letter (``"... in kathmandu .the public ..."``).
GLUED_BOUNDARY = re.compile(r"(?<= \.)(?=[A-Za-z])")


# ASCII fast path: every ASCII character outside [a-z0-9] (after lowercasing) -> space, newlines kept
_ASCII_TABLE = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum() and chr(c) != "\n"})


def normalize_words(text: str) -> list[str]:
    """Split ``text`` into ROUGE words: lowercase, non-``[a-z0-9]`` -> space, split."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return _NON_ALPHANUMERIC.sub(" ", text.lower()).split()


def normalize_sentences(text: str) -> list[list[str]]:
    """ROUGE words of each non-empty line of ``text`` (same result as :func:`normalize_words` per line)."""
    lowered = text.lower()
    if lowered.isascii():  # str.translate is much faster than the regex and equivalent on ASCII
        lines = lowered.translate(_ASCII_TABLE).split("\n")
        return [line.split() for raw, line in zip(text.split("\n"), lines) if raw]
    return [normalize_words(line) for line in text.split("\n") if line]


def glued_sentence_lengths(text: str) -> list[int]:
    """Word counts of the sentences of ``text`` when each line is also cut at a :data:`GLUED_BOUNDARY`.

    The cut falls between a ``.`` and a letter, where a word boundary already is, so
    the words are those of :func:`normalize_sentences`, only grouped into more sentences.
    """
    return [len(normalize_words(part)) for line in text.split("\n") if line for part in GLUED_BOUNDARY.split(line)]


@lru_cache(maxsize=1)
def smart_stopwords() -> frozenset[str]:
    """ROUGE-1.5.5's SMART common-word list (header comment lines excluded)."""
    raw = resources.files(__package__).joinpath("data", "smart_common_words.txt").read_text("utf-8")
    return frozenset(line.strip() for line in raw.splitlines() if line.strip() and not line.startswith("#"))


@lru_cache(maxsize=1)
def _porter():
    from nltk.stem import porter

    return porter.PorterStemmer()


def stem_words(words: Iterable[str]) -> list[str]:
    """Porter-stem each word longer than 3 characters (``rouge-score``'s rule); keep others."""
    stemmer = _porter()
    return [stemmer.stem(w) if len(w) > 3 else w for w in words]
