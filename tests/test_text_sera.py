"""SERA scores and the query reformulations (pure; analyses/text/sera.py, retrieval.py)."""

from __future__ import annotations

import math
import random

import pytest

from metaeval.analyses import text
from metaeval.analyses.text import retrieval
from metaeval.analyses.text.sera import sera, sera_dis
from metaeval.analyses.text.tokenize import smart_stopwords


def _dis_by_definition(rc, golds):
    """SERA-DIS written out from the paper's formula: double sum over ranks j, k (from 1), natural
    log, D_max = the pair's score when the longer list meets itself = max(|R_C|, |R_G|) / log 2."""
    total = 0.0
    for rg in golds:
        s = 0.0
        for j in range(1, len(rc) + 1):
            for k in range(1, len(rg) + 1):
                if rc[j - 1] == rg[k - 1]:
                    s += 1 / math.log(abs(j - k) + 2)
        total += s / (max(len(rc), len(rg)) * (1 / math.log(2)))
    return total / len(golds)


def test_paper_worked_example():
    candidate, gold = ["d1", "d2", "d3", "d4"], ["d3", "d2", "d1", "d4"]
    assert sera(candidate, [gold]) == 1.0
    # d1: |1-3| -> 1/log 4; d2: 1/log 2; d3: 1/log 4; d4: 1/log 2; D_max = 4/log 2
    expected = (2 / math.log(4) + 2 / math.log(2)) / (4 / math.log(2))
    assert sera_dis(candidate, [gold]) == pytest.approx(expected, rel=1e-15)
    assert sera_dis(candidate, [gold]) == pytest.approx(0.75, rel=1e-15)
    assert sera_dis(candidate, [gold]) < 1


def test_identical_lists_give_one_and_disjoint_zero():
    docs = [f"d{i}" for i in range(10)]
    assert sera(docs, [docs, docs]) == 1.0 and sera_dis(docs, [docs]) == pytest.approx(1.0, rel=1e-15)
    assert sera(docs[:5], [docs[5:]]) == 0.0 and sera_dis(docs[:5], [docs[5:]]) == 0.0


def test_random_lists_match_the_definition_and_properties():
    rng = random.Random(7)
    for _ in range(300):
        pool = [f"d{i}" for i in range(rng.randint(1, 15))]
        rc = rng.sample(pool, rng.randint(0, len(pool)))
        golds = [rng.sample(pool, rng.randint(1, len(pool))) for _ in range(rng.randint(1, 4))]
        plain = sum(len(set(rc) & set(g)) / max(len(rc), len(g)) for g in golds) / len(golds)
        assert sera(rc, golds) == pytest.approx(plain, rel=1e-12)
        dis = sera_dis(rc, golds)
        assert dis == pytest.approx(_dis_by_definition(rc, golds), rel=1e-12)
        assert 0 <= dis <= sera(rc, golds) + 1e-12 <= 1 + 1e-12


def test_cutoff_and_mean_over_references():
    rc = ["a", "b", "c", "d"]
    assert sera(rc, [["a", "x", "y", "z"], ["b", "a", "q", "r"]], n=2) == pytest.approx((1 / 2 + 2 / 2) / 2)
    assert sera(rc, [["a", "b", "c", "d"]], n=3) == 1.0


def test_undefined_and_invalid():
    assert math.isnan(sera([], [[]])) and math.isnan(sera_dis([], [["a"], []]))
    assert sera([], [["a"]]) == 0.0
    with pytest.raises(ValueError, match="twice"):
        sera(["a", "a"], [["a"]])
    with pytest.raises(ValueError, match="M >= 1"):
        sera(["a"], [])
    with pytest.raises(ValueError, match="cut-off"):
        sera(["a"], [["a"]], n=0)


def test_measure_names_and_direction():
    assert text.sera_name(5) == "sera-5"
    assert text.sera_name(10, discounted=True, query="kw") == "sera-dis-10[kw]"
    assert text.sera_name(5, query="np", model="bm25") == "sera-5[np,bm25]"
    assert text.sera_name(5, mu=2000.0) == "sera-5" and text.sera_name(5, query="kw", mu=500) == "sera-5[kw,mu=500]"
    assert text.sera_name(5, model="bm25", mu=500) == "sera-5[bm25]"
    for name in ("sera-5", "sera-dis-10[kw]", "sera-5[np,bm25]", "sera-5[bm25]", "sera-5[mu=500]", "sera-5[kw,mu=0.5]"):
        assert text.direction(name) == "higher"
    for bad in ("sera-0", "sera-5[]", "sera-5[,bm25]", "sera-dis", "sera-5[bm25,kw]", "sera-5[kw,bm25,mu=1]"):
        with pytest.raises(ValueError):
            text.direction(bad)


# --- query reformulations ------------------------------------------------------------------
def test_plain_query_drops_stopwords_and_numbers_and_stems():
    q = retrieval.plain_query("The 425 young women were sleeping outdoors in 2015 , 2nd night .")
    stop = smart_stopwords()
    assert "425" not in q and "2015" not in q and "2nd" in q
    assert not any(w in stop for w in q)
    assert q == ["young", "women", "sleep", "outdoor", "2nd", "night"]


def test_kw_keeps_exactly_the_terms_above_the_threshold():
    dfs = {"cat": 1, "dog": 3, "mat": 2, "bird": 5, "fish": 4}
    n_docs = 6
    threshold = retrieval.mean_idf(dfs.values(), n_docs)
    doc_freq = lambda e: dfs.get(e[0], 0) if len(e) == 1 else 0  # noqa: E731
    summary = "the cat and a dog sat on the mat ; bird fish cat 12 unknownword"
    q = retrieval.kw_query(summary, doc_freq, n_docs, threshold)
    expected = [w for w in retrieval.plain_query(summary) if w in dfs and math.log(n_docs / dfs[w]) > threshold]
    assert q == expected and set(q) == {"cat", "mat"}  # idf(cat)=log 6, idf(mat)=log 3 > mean


def test_kw_key_phrases_keep_their_terms():
    # "heart" and "attack" are common alone, the phrase is rare: its idf keeps both terms
    dfs = {("heart",): 5, ("attack",): 5, ("heart", "attack"): 1, ("aspirin",): 5}
    doc_freq = lambda e: dfs.get(e, 0)  # noqa: E731
    threshold = retrieval.mean_idf([5, 5, 5], 6)
    assert retrieval.kw_expressions("heart attack . aspirin", doc_freq, 6, threshold) == [("heart", "attack")]
    assert retrieval.kw_query("heart attack . aspirin", doc_freq, 6, threshold) == ["heart", "attack"]
    # a phrase never spans punctuation, a stopword or a number
    assert retrieval.kw_query("heart , attack", doc_freq, 6, threshold) == []
    assert retrieval.kw_query("heart the attack", doc_freq, 6, threshold) == []
    assert retrieval.kw_query("heart 12 attack", doc_freq, 6, threshold) == []
    assert retrieval.kw_query("heart attack", doc_freq, 6, threshold, max_len=1) == []


class _Chunk:
    def __init__(self, text):
        self.text = text


class _FakeNLP:
    """Stands in for a spaCy pipeline: noun chunks are the given spans."""

    def __init__(self, chunks):
        self.chunks = chunks

    def __call__(self, text):
        doc = type("Doc", (), {})()
        doc.noun_chunks = [_Chunk(c) for c in self.chunks if c in text]
        return doc


def test_np_query_keeps_the_noun_phrases_only():
    nlp = _FakeNLP(["The young women", "425 girls", "a rehabilitation center"])
    q = retrieval.np_query("The young women and 425 girls live in a rehabilitation center .", nlp)
    assert q == ["young", "women", "girl", "rehabilit", "center"]


def test_np_without_spacy_says_what_to_install():
    try:
        import spacy  # noqa: F401
        pytest.skip("spaCy is installed here")
    except ImportError:
        pass
    with pytest.raises(ValueError, match="pip install spacy"):
        retrieval.load_spacy()


def test_pattern_np_reads_the_chunk_tags():
    """TextBlob's Pattern parser output (word/TAG/CHUNK/PNP) to spaCy-like noun chunks."""
    parsed = ("The/DT/B-NP/O young/JJ/I-NP/O women/NNS/I-NP/O and/CC/O/O 425/CD/B-NP/O girls/NNS/I-NP/O "
              "live/VBP/B-VP/O in/IN/B-PP/B-PNP a/DT/B-NP/I-PNP 1&slash;2/CD/I-NP/I-PNP center/NN/I-NP/I-PNP ././O/O\n"
              "Homes/NNS/I-NP/O ././O/O")
    nlp = retrieval.PatternNP(lambda text, **kw: parsed)
    assert [c.text for c in nlp("ignored").noun_chunks] == ["The young women", "425 girls", "a 1/2 center", "Homes"]


def test_np_query_with_textblob_found_offline():
    """The np extra: TextBlob's tagger and chunker, whose lexicon ships in its wheel (no download)."""
    pytest.importorskip("textblob", reason="TextBlob (the np extra: pip install 'metaeval-warehouse[np]') is absent")
    nlp = retrieval.load_np_chunker(retrieval.TEXTBLOB_NP_MODEL)
    text = "The young women and 425 girls live in a rehabilitation center ."
    assert [c.text for c in nlp(text).noun_chunks] == ["The young women", "425 girls", "a rehabilitation center"]
    assert retrieval.np_query(text, nlp) == ["young", "women", "girl", "rehabilit", "center"]


def test_textblob_absent_says_what_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "textblob", None)
    monkeypatch.setitem(sys.modules, "textblob.en", None)
    with pytest.raises(ValueError, match=r"metaeval-warehouse\[np\]"):
        retrieval.load_np_chunker("textblob")
