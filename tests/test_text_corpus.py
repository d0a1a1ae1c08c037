"""Tokenisation and the corpus' cached id arrays."""

import numpy as np
import pytest

from metaeval.analyses.text import SummaryRecord, TextCorpus
from metaeval.analyses.text.tokenize import normalize_sentences, normalize_words, smart_stopwords, stem_words


def test_normalisation_matches_rouge_score_tokenizer():
    from rouge_score import tokenize

    text = "Mr. O'Neil's 3-D café, costs $4.50!\nNew line\tTAB"
    assert normalize_words(text) == tokenize.tokenize(text, None)


@pytest.mark.parametrize("text", ["A b.\n\nC-d (e)\n  \n", "Ça, ÉTÉ naïve!\nx\u0130y", "", "\n"])
def test_sentence_fast_path_equals_regex_per_line(text):
    assert normalize_sentences(text) == [normalize_words(line) for line in text.split("\n") if line]


def test_stemming_only_words_longer_than_three():
    assert stem_words(["runs", "running", "was", "cats"]) == ["run", "run", "was", "cat"]


def test_smart_list_loaded_without_header():
    words = smart_stopwords()
    assert {"the", "reuters", "n't", "zero"} <= words
    assert not any(w.startswith("#") for w in words)


def test_views_share_ids_and_offsets():
    corpus = TextCorpus(
        [
            SummaryRecord("s1", "i", ["The runners ran .", "They were running"], ["Runners run"]),
            SummaryRecord("s2", "i", "runners", ["Runners run"]),
        ]
    )
    assert len(corpus.texts) == 3  # the shared reference is stored once
    base, stemmed, stopped = corpus.view(), corpus.view(stem=True), corpus.view(stem=True, stop=True)
    words = lambda view, t: [view.vocabulary[i] for i in view.text(t)]  # noqa: E731
    assert words(base, 0) == ["the", "runners", "ran", "they", "were", "running"]
    assert words(stemmed, 0) == ["the", "runner", "ran", "they", "were", "run"]
    assert words(stopped, 0) == ["runner", "ran", "run"]
    assert stopped.sentence_ptr.tolist() == [0, 2, 3, 4]
    assert np.diff(stopped.sentence_offsets).tolist() == [2, 1, 1, 2]  # summaries first, then references
    assert corpus.view(stem=True) is stemmed


def test_rejects_bad_records():
    with pytest.raises(ValueError):
        SummaryRecord("s", "i", "text", [])
    with pytest.raises(ValueError):
        SummaryRecord("s", "i", "text", "a reference string, not a list")
    with pytest.raises(ValueError):
        TextCorpus([])
    with pytest.raises(TypeError):
        TextCorpus([("s", "i", "text", ["ref"])])
