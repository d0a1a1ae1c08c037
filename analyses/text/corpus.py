"""A corpus of summaries with their references (and optionally input documents).

:class:`TextCorpus` tokenises every distinct text exactly once into integer
ids over one vocabulary of lowercased words. Stemming and stopword removal are
then per-vocabulary lookup tables applied to the id arrays (a *view*), so each
preprocessing setting costs one array gather, not a re-tokenisation. A view can
also cut sentences at glued boundaries (``resplit``): the same tokens, more
sentences. A view
stores all tokens of all distinct texts in one flat ``int64`` array with CSR
``offsets``; summaries and references point into it by text index, so a
reference shared by 24 systems is counted once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence, Union

import numpy as np

from .tokenize import glued_sentence_lengths, normalize_sentences, smart_stopwords, stem_words

TextLike = Union[str, Sequence[str]]


def join_text(text: TextLike) -> str:
    """A text given as one string or as a list of sentences, sentences joined by newlines."""
    if isinstance(text, str):
        return text
    try:
        return "\n".join(text)
    except TypeError as exc:
        raise TypeError(f"a text must be a str or a sequence of str sentences ({exc})") from None


@dataclass(frozen=True)
class SummaryRecord:
    """One scored summary: who wrote it, for which input, and what to compare it with."""

    system: str
    input_id: str
    summary: TextLike
    references: Sequence[TextLike]
    document: TextLike | None = None

    def __post_init__(self) -> None:
        if isinstance(self.references, str) or len(self.references) == 0:
            raise ValueError(
                f"summary of system {self.system!r} on input {self.input_id!r}: "
                "references must be a non-empty sequence of texts"
            )


@dataclass(frozen=True)
class TokenView:
    """Token ids of every distinct corpus text under one preprocessing setting.

    ``tokens[offsets[t]:offsets[t + 1]]`` are the ids of text ``t``; ids are in
    ``[0, vocab_size)``. Sentence ``s`` spans ``tokens[sentence_offsets[s]:
    sentence_offsets[s + 1]]``; the sentences of text ``t`` are
    ``sentence_ptr[t]:sentence_ptr[t + 1]``.
    """

    tokens: np.ndarray
    offsets: np.ndarray
    sentence_offsets: np.ndarray
    sentence_ptr: np.ndarray
    vocab_size: int
    vocabulary: tuple[str, ...] = field(repr=False)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def text(self, t: int) -> np.ndarray:
        return self.tokens[self.offsets[t] : self.offsets[t + 1]]


class TextCorpus:
    """Summaries, references and documents, tokenised once.

    Attributes (all arrays aligned with the order of ``records``):

    * ``systems``, ``inputs``: object arrays of ids;
    * ``summary_text``: text index of each summary;
    * ``ref_ptr`` / ``ref_text``: the references of summary ``i`` are texts
      ``ref_text[ref_ptr[i]:ref_ptr[i + 1]]``;
    * ``document_text``: text index of each input document, ``-1`` if absent;
    * ``texts``: the distinct raw texts (sentences joined by newlines).
    """

    def __init__(self, records: Sequence[SummaryRecord]) -> None:
        if len(records) == 0:
            raise ValueError("a TextCorpus needs at least one record")
        bad = [i for i, r in enumerate(records) if not isinstance(r, SummaryRecord)]
        if bad:
            raise TypeError(f"records must be SummaryRecord instances; record {bad[0]} is not")
        index: dict[str, int] = {}

        def text_id(text: TextLike) -> int:
            return index.setdefault(join_text(text), len(index))

        self.systems = np.array([r.system for r in records], dtype=object)
        self.inputs = np.array([r.input_id for r in records], dtype=object)
        self.summary_text = np.array([text_id(r.summary) for r in records], dtype=np.int64)
        self.ref_ptr = np.concatenate([[0], np.cumsum([len(r.references) for r in records])]).astype(np.int64)
        self.ref_text = np.array([text_id(t) for r in records for t in r.references], dtype=np.int64)
        self.document_text = np.array(
            [-1 if r.document is None else text_id(r.document) for r in records], dtype=np.int64
        )
        self.texts: tuple[str, ...] = tuple(index)
        self._base = _tokenise(self.texts)
        self._views: dict[tuple[bool, bool, bool], TokenView] = {(False, False, False): self._base}

    def __len__(self) -> int:
        return len(self.summary_text)

    @property
    def n_references(self) -> np.ndarray:
        """Number of references of each summary."""
        return np.diff(self.ref_ptr)

    @property
    def has_documents(self) -> bool:
        return bool(np.all(self.document_text >= 0))

    def summary_strings(self) -> list[str]:
        """Each summary's text, sentences joined by newlines."""
        return [self.texts[t] for t in self.summary_text]

    def reference_strings(self) -> list[list[str]]:
        """Each summary's reference texts, sentences joined by newlines."""
        return [
            [self.texts[t] for t in self.ref_text[self.ref_ptr[i] : self.ref_ptr[i + 1]]] for i in range(len(self))
        ]

    def document_strings(self) -> list[str]:
        """Each summary's input document; raises if any is missing."""
        if not self.has_documents:
            raise ValueError("some records of this corpus have no input document")
        return [self.texts[t] for t in self.document_text]

    def reference_pairs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(summary_index, summary_text, reference_text)`` for every summary-reference pair.

        Pairs are ordered by summary, then by the reference order in the record.
        """
        summary_index = np.repeat(np.arange(len(self)), self.n_references)
        return summary_index, self.summary_text[summary_index], self.ref_text

    def view(self, stem: bool = False, stop: bool = False, resplit: bool = False) -> TokenView:
        """Token ids after optional SMART stopword removal, then optional Porter stemming (cached).

        ``resplit`` also cuts sentences at glued boundaries (:data:`~analyses.text.tokenize.GLUED_BOUNDARY`);
        tokens are unchanged, only ``sentence_offsets`` / ``sentence_ptr`` differ.
        """
        key = (bool(stem), bool(stop), bool(resplit))
        if key not in self._views:
            if key[2] and not (key[0] or key[1]):
                self._views[key] = _resplit_view(self._base, self.texts)
            else:
                self._views[key] = _derive_view(self.view(resplit=key[2]), stem=key[0], stop=key[1])
        return self._views[key]


def _tokenise(texts: Sequence[str]) -> TokenView:
    words: list[str] = []
    sentence_lengths: list[int] = []
    sentences_per_text = np.empty(len(texts), dtype=np.int64)
    for t, text in enumerate(texts):
        sentences = normalize_sentences(text)
        sentences_per_text[t] = len(sentences)
        for sentence_words in sentences:
            sentence_lengths.append(len(sentence_words))
            words.extend(sentence_words)
    vocabulary = tuple(dict.fromkeys(words))  # first-occurrence order
    index = {w: i for i, w in enumerate(vocabulary)}
    ids = np.fromiter(map(index.__getitem__, words), dtype=np.int64, count=len(words))
    sentence_offsets = np.concatenate([[0], np.cumsum(sentence_lengths, dtype=np.int64)]).astype(np.int64)
    sentence_ptr = np.concatenate([[0], np.cumsum(sentences_per_text)]).astype(np.int64)
    return TokenView(
        tokens=ids,
        offsets=sentence_offsets[sentence_ptr],
        sentence_offsets=sentence_offsets,
        sentence_ptr=sentence_ptr,
        vocab_size=len(vocabulary),
        vocabulary=vocabulary,
    )


def _resplit_view(base: TokenView, texts: Sequence[str]) -> TokenView:
    """``base`` with every text's sentences cut at glued boundaries as well."""
    lengths = [glued_sentence_lengths(text) for text in texts]
    sentence_offsets = np.concatenate([[0], np.cumsum([n for ls in lengths for n in ls], dtype=np.int64)]).astype(np.int64)
    sentence_ptr = np.concatenate([[0], np.cumsum([len(ls) for ls in lengths])]).astype(np.int64)
    if not np.array_equal(sentence_offsets[sentence_ptr], base.offsets):  # the cut must never move a word
        raise AssertionError("re-splitting sentences changed the words of a text")
    return TokenView(
        tokens=base.tokens,
        offsets=base.offsets,
        sentence_offsets=sentence_offsets,
        sentence_ptr=sentence_ptr,
        vocab_size=base.vocab_size,
        vocabulary=base.vocabulary,
    )


def _derive_view(base: TokenView, stem: bool, stop: bool) -> TokenView:
    """Map base ids through a per-type table: -1 drops a stopword, stems merge types."""
    words = list(base.vocabulary)
    mapped_words = stem_words(words) if stem else words
    new_vocab: dict[str, int] = {}
    table = np.array([new_vocab.setdefault(w, len(new_vocab)) for w in mapped_words], dtype=np.int64)
    if stop:
        stopwords = smart_stopwords()
        table[np.fromiter((w in stopwords for w in words), dtype=bool, count=len(words))] = -1
    mapped = table[base.tokens] if len(base.tokens) else base.tokens
    keep = mapped >= 0
    kept_before = np.concatenate([[0], np.cumsum(keep)]).astype(np.int64)
    return TokenView(
        tokens=mapped[keep],
        offsets=kept_before[base.offsets],
        sentence_offsets=kept_before[base.sentence_offsets],
        sentence_ptr=base.sentence_ptr,
        vocab_size=len(new_vocab),
        vocabulary=tuple(new_vocab),
    )


def read_sacrerouge_jsonl(path: str | Path) -> list[SummaryRecord]:
    """Records from a SacreROUGE-style JSONL file (REALSumm's ``summaries.jsonl``).

    Each line: ``{"instance_id", "summarizer_id", "summary": {"text": ...},
    "references": [{"text": ...}, ...]}`` with optional ``"documents"``
    (their texts are concatenated into one input document).
    """
    records = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            try:
                documents = row.get("documents")
                document = None if not documents else "\n".join(join_text(d["text"]) for d in documents)
                records.append(
                    SummaryRecord(
                        system=str(row["summarizer_id"]),
                        input_id=str(row["instance_id"]),
                        summary=row["summary"]["text"],
                        references=[r["text"] for r in row["references"]],
                        document=document,
                    )
                )
            except (KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{line_no}: not a SacreROUGE summary record ({exc!r})") from exc
    return records
