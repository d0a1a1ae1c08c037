"""Jensen-Shannon divergence against scipy, Louis & Nenkova smoothing, REALSumm's js-2."""

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.distance import jensenshannon

from metaeval.analyses.text import SummaryRecord, TextCorpus, js_divergence, read_sacrerouge_jsonl
from metaeval.analyses.text.tokenize import normalize_words

REALSUMM = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "realsumm"


def ngrams(text, n):
    w = normalize_words(text)
    return Counter(tuple(w[i : i + n]) for i in range(len(w) - n + 1))


def scipy_js(summary, targets, n):
    p = ngrams(summary, n)
    q = sum((ngrams(t, n) for t in targets), Counter())
    units = sorted(set(p) | set(q))
    return jensenshannon([p[u] for u in units], [q[u] for u in units], base=2) ** 2


EXAMPLES = [
    ("the cat sat on the mat", ["the cat lay on the mat"]),
    ("a b c d a b", ["a b", "c d e f g"]),
    ("completely different words", ["nothing in common here"]),
    ("same text here", ["same text here"]),
]


@pytest.mark.parametrize("n", [1, 2])
def test_equals_squared_scipy_jensenshannon_base_2(n):
    corpus = TextCorpus([SummaryRecord("s", str(i), s, refs) for i, (s, refs) in enumerate(EXAMPLES)])
    (name, ours), = js_divergence(corpus, n=n).items()
    assert name == f"js-{n}"
    np.testing.assert_allclose(ours, [scipy_js(s, refs, n) for s, refs in EXAMPLES], atol=1e-12)
    assert ours[2] == pytest.approx(1.0) and ours[3] == pytest.approx(0.0, abs=1e-15)


def test_document_target_and_louis_nenkova_smoothing_by_hand():
    corpus = TextCorpus([SummaryRecord("s", "i", "a a b", ["ref"], document="a b b c")])
    (name, value), = js_divergence(corpus, n=1, target="document", smoothing=True).items()
    assert name == "js-1.input[smooth]"
    delta, b = 0.0005, 1.5 * 3  # three distinct input words
    p = {w: (c + delta) / (3 + delta * b) for w, c in {"a": 2, "b": 1, "c": 0}.items()}
    q = {w: (c + delta) / (4 + delta * b) for w, c in {"a": 1, "b": 2, "c": 1}.items()}
    a = {w: (p[w] + q[w]) / 2 for w in p}
    expected = 0.5 * sum(p[w] * np.log2(p[w] / a[w]) + q[w] * np.log2(q[w] / a[w]) for w in p)
    assert value[0] == pytest.approx(expected, abs=1e-15)
    (_, plain), = js_divergence(corpus, n=1, target="document").items()
    assert plain[0] == pytest.approx(scipy_js("a a b", ["a b b c"], 1), abs=1e-12)


def test_empty_distribution_is_nan_and_document_is_required():
    corpus = TextCorpus([SummaryRecord("s", "i", "one", ["two words"])])
    assert np.isnan(js_divergence(corpus, n=2)["js-2"][0])  # a one-word summary has no bigram
    with pytest.raises(ValueError):
        js_divergence(corpus, target="document")
    with pytest.raises(ValueError):
        js_divergence(corpus, target="input")


@pytest.mark.shared_data
@pytest.mark.skipif(not (REALSUMM / "pyramid.jsonl").exists(), reason=f"REALSumm data not found under {REALSUMM}")
def test_realsumm_js2_is_stored_negated_in_nats():
    """pyramid.jsonl's js-2 is -JS in natural log (min -ln 2): ours * -ln 2 tracks it."""
    corpus = TextCorpus(read_sacrerouge_jsonl(REALSUMM / "summaries.jsonl"))
    stored = {}
    with open(REALSUMM / "pyramid.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            stored[(row["instance_id"], row["summarizer_id"])] = row["metrics"]["js-2"]
    theirs = np.array([stored[k] for k in zip(corpus.inputs, corpus.systems)])
    assert theirs.max() <= 0 and theirs.min() >= -np.log(2) - 1e-12
    ours = js_divergence(corpus, n=2, stem=True)["js-2[stem]"]
    assert np.corrcoef(-np.log(2) * ours, theirs)[0, 1] > 0.98
