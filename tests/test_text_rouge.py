"""ROUGE: hand-computed examples, a brute-force reference and rouge-score parity."""

import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from metaeval.analyses.text import SummaryRecord, TextCorpus, Variant, read_sacrerouge_jsonl, rouge, variant_grid
from metaeval.analyses.text.tokenize import normalize_words, smart_stopwords, stem_words
from tests.conftest import read_jsonl, shared

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
REALSUMM = DATA / "realsumm"
needs_realsumm = pytest.mark.skipif(
    not (REALSUMM / "summaries.jsonl").exists(), reason=f"REALSumm data not found under {REALSUMM}"
)


def corpus_of(summary, *references):
    return TextCorpus([SummaryRecord("sys", "in", summary, list(references))])


# ---------------------------------------------------------------- hand-computed


def test_rouge_n_by_hand():
    c = corpus_of("the cat sat on the mat", "the cat lay on the mat today")
    s = rouge(c, ["rouge-1.precision", "rouge-1.recall", "rouge-1.f1", "rouge-2.recall", "rouge-2.precision"])
    # unigram hits: the x2, cat, on, mat = 5 of 6 candidate and 7 reference tokens
    assert s["rouge-1.precision"][0] == pytest.approx(5 / 6)
    assert s["rouge-1.recall"][0] == pytest.approx(5 / 7)
    assert s["rouge-1.f1"][0] == pytest.approx(2 * (5 / 6) * (5 / 7) / (5 / 6 + 5 / 7))
    # bigrams: "the cat", "on the", "the mat" match; 5 candidate, 6 reference bigrams
    assert s["rouge-2.recall"][0] == pytest.approx(3 / 6)
    assert s["rouge-2.precision"][0] == pytest.approx(3 / 5)


def test_rouge_su4_and_s4_by_hand():
    # candidate "a b c", reference "a c b": skip-bigrams (gap <= 4) a-b a-c b-c vs a-c a-b c-b
    c = corpus_of("a b c", "a c b")
    s = rouge(c, ["rouge-s4.recall", "rouge-su4.recall", "rouge-su4.precision"])
    assert s["rouge-s4.recall"][0] == pytest.approx(2 / 3)
    assert s["rouge-su4.recall"][0] == pytest.approx((2 + 3) / (3 + 3))  # plus 3 matching unigrams
    assert s["rouge-su4.precision"][0] == pytest.approx(5 / 6)


def test_skip_distance_is_at_most_four_intervening_words():
    # "x" and "y" are 5 words apart (4 in between) in the candidate, 6 apart in the reference
    c = corpus_of("x 1 2 3 4 y", "x 1 2 3 4 5 y")
    s = rouge(c, ["rouge-s4.precision"])
    cand_pairs = sum(min(5, 6 - 1 - i) for i in range(6))  # pairs with distance 1..5 in 6 tokens
    # every candidate pair except (x, y) is also within distance 5 in the reference; (x, y) is at distance 6 there
    assert s["rouge-s4.precision"][0] == pytest.approx((cand_pairs - 1) / cand_pairs)


def test_stopword_removal_and_stemming_by_hand():
    c = corpus_of("The cats were running", "A cat is running")
    s = rouge(c, ["rouge-1.recall", "rouge-1.recall[stem]", "rouge-1.recall[stop]", "rouge-1.recall[stem,stop]"])
    assert s["rouge-1.recall"][0] == pytest.approx(1 / 4)  # running
    assert s["rouge-1.recall[stem]"][0] == pytest.approx(2 / 4)  # cat, run
    # SMART list drops the/were/a/is -> "cats running" vs "cat running"
    assert s["rouge-1.recall[stop]"][0] == pytest.approx(1 / 2)
    assert s["rouge-1.recall[stem,stop]"][0] == pytest.approx(2 / 2)


def test_multi_reference_pooled_versus_max():
    c = corpus_of("a b c d", "a b x y z", "a b c")
    s = rouge(c, ["rouge-1.recall", "rouge-1.precision", "rouge-1.recall[maxref]", "rouge-1.precision[maxref]"])
    # pooled (ROUGE-1.5.5 -f A): hits 2 + 3 over 5 + 3 reference and 2 * 4 candidate unigrams
    assert s["rouge-1.recall"][0] == pytest.approx(5 / 8)
    assert s["rouge-1.precision"][0] == pytest.approx(5 / 8)
    # max: second reference has the best F1 (P 3/4, R 1)
    assert s["rouge-1.recall[maxref]"][0] == pytest.approx(1.0)
    assert s["rouge-1.precision[maxref]"][0] == pytest.approx(3 / 4)


def test_rouge_l_w_and_lsum_by_hand():
    c = TextCorpus([SummaryRecord("s", "i", ["a b c d", "e f"], [["a x c d e", "f"]])])
    s = rouge(c, ["rouge-l.recall", "rouge-lsum.recall", "rouge-w.recall", "rouge-w.precision"])
    assert s["rouge-l.recall"][0] == pytest.approx(5 / 6)  # a c d e f
    # per reference sentence: "a x c d e" vs {"a b c d", "e f"} -> a c d | e ; "f" -> f
    assert s["rouge-lsum.recall"][0] == pytest.approx(5 / 6)
    # WLCS of "a b c d e f" and "a x c d e f": runs "a" (1) and "c d e f" (4): 1 + 4**1.2
    wlcs = 1 + 4**1.2
    assert s["rouge-w.recall"][0] == pytest.approx((wlcs / 6**1.2) ** (1 / 1.2))
    assert s["rouge-w.precision"][0] == pytest.approx((wlcs / 6**1.2) ** (1 / 1.2))


def test_empty_texts_score_zero():
    c = corpus_of("!!!", "a b")
    s = rouge(c, [v.name for v in variant_grid(statistics=("precision", "recall", "f1"))])
    assert all(v[0] == 0.0 for v in s.values())


# ------------------------------------------------------------------ brute force


def brute_tokens(text, stem, stop):
    words = normalize_words(text)
    if stop:
        words = [w for w in words if w not in smart_stopwords()]
    return stem_words(words) if stem else words


def brute_units(tokens, kind):
    if kind in ("rouge-s4", "rouge-su4"):
        units = Counter((tokens[i], tokens[j]) for i in range(len(tokens)) for j in range(i + 1, min(i + 6, len(tokens))))
        if kind == "rouge-su4":
            units.update((t,) for t in tokens)
        return units
    n = int(kind[-1])
    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def brute_rouge(summary, references, variant: Variant):
    cand = brute_units(brute_tokens(summary, variant.stem, variant.stop), variant.kind)
    hits, ref_total = 0, 0
    for ref in references:
        units = brute_units(brute_tokens(ref, variant.stem, variant.stop), variant.kind)
        hits += sum(min(c, units[u]) for u, c in cand.items())
        ref_total += sum(units.values())
    p = hits / (len(references) * sum(cand.values())) if cand else 0.0
    r = hits / ref_total if ref_total else 0.0
    return {"precision": p, "recall": r, "f1": 2 * p * r / (p + r) if p + r else 0.0}[variant.statistic]


def random_corpus(seed, size=40):
    rng = random.Random(seed)
    words = ["the", "a", "of", "cats", "cat", "running", "runs", "is", "were", "data", "model", "x1", "it", "said"]

    def text():
        return " ".join(rng.choice(words) for _ in range(rng.randint(0, 25))) + rng.choice(["", " .", "!"])

    return [(text(), [text() for _ in range(rng.randint(1, 3))]) for _ in range(size)]


def test_n_grams_skip_bigrams_and_stopwords_match_brute_force():
    pairs = random_corpus(0)
    corpus = TextCorpus([SummaryRecord("s", str(i), s, refs) for i, (s, refs) in enumerate(pairs)])
    variants = variant_grid(kinds=("rouge-1", "rouge-2", "rouge-3", "rouge-4", "rouge-s4", "rouge-su4"))
    scores = rouge(corpus, variants)
    for v in variants:
        expected = [brute_rouge(s, refs, v) for s, refs in pairs]
        np.testing.assert_allclose(scores[v.name], expected, rtol=0, atol=1e-12, err_msg=v.name)


# ---------------------------------------------------------- rouge-score parity

RS_KINDS = {"rouge-1": "rouge1", "rouge-2": "rouge2", "rouge-3": "rouge3", "rouge-4": "rouge4", "rouge-l": "rougeL"}
RS_KINDS_LSUM = {**RS_KINDS, "rouge-lsum": "rougeLsum"}
RS_STATS = {"precision": "precision", "recall": "recall", "f1": "fmeasure"}


@pytest.fixture(scope="module")
def realsumm():
    return TextCorpus(read_sacrerouge_jsonl(REALSUMM / "summaries.jsonl"))


def rouge_score_values(corpus, indices, kinds, stem, max_ref=False):
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(list(kinds.values()), use_stemmer=stem)
    summaries, references = corpus.summary_strings(), corpus.reference_strings()
    if max_ref:
        return [scorer.score_multi(references[i], summaries[i]) for i in indices]
    return [scorer.score(references[i][0], summaries[i]) for i in indices]


def assert_parity(ours, theirs, kinds, stem, flags=""):
    for kind, rs_kind in kinds.items():
        for stat, attr in RS_STATS.items():
            name = f"{kind}.{stat}" + (f"[{flags}]" if flags else "")
            expected = np.array([getattr(t[rs_kind], attr) for t in theirs])
            np.testing.assert_allclose(ours[name], expected, rtol=0, atol=1e-12, err_msg=name)


@needs_realsumm
@pytest.mark.shared_data
@pytest.mark.parametrize("stem", [False, True])
def test_matches_rouge_score_on_realsumm_subset(realsumm, stem):
    indices = np.arange(0, len(realsumm), 6)  # 400 summaries
    scores = rouge(realsumm, variant_grid(kinds=tuple(RS_KINDS_LSUM), stem=(stem,), stop=(False,)))
    ours = {k: v[indices] for k, v in scores.items()}
    assert_parity(ours, rouge_score_values(realsumm, indices, RS_KINDS_LSUM, stem), RS_KINDS_LSUM, stem, "stem" * stem)


@needs_realsumm
@pytest.mark.shared_data
def test_matches_rouge_score_on_all_realsumm_summaries(realsumm):
    kinds = {k: RS_KINDS[k] for k in ("rouge-1", "rouge-2", "rouge-l")}
    scores = rouge(realsumm, variant_grid(kinds=tuple(kinds), stem=(True,), stop=(False,)))
    theirs = rouge_score_values(realsumm, range(len(realsumm)), kinds, stem=True)
    assert_parity(scores, theirs, kinds, True, "stem")


def test_max_reference_matches_rouge_score_score_multi():
    pairs = random_corpus(1, size=60)
    corpus = TextCorpus([SummaryRecord("s", str(i), s, refs) for i, (s, refs) in enumerate(pairs)])
    ours = rouge(corpus, variant_grid(kinds=tuple(RS_KINDS), stem=(False,), stop=(False,), aggregation="max"))
    theirs = rouge_score_values(corpus, range(len(corpus)), RS_KINDS, stem=False, max_ref=True)
    assert_parity(ours, theirs, RS_KINDS, False, "maxref")


POINTER_GENERATOR = "ptr_generator_out_pointer_gen_cov"


@pytest.mark.shared_data
def test_correlates_with_realsumm_stored_rouge():
    """REALSumm's ROUGE recall in pyramid.jsonl (ROUGE-1.5.5 with ``-m``): r > 0.99 for ROUGE-1, -2 and -L.

    Its ROUGE-L is the summary-level union LCS over the sentences of its files.
    summaries.jsonl lost 13 references' sentence boundaries (``"... car .she ..."``),
    which ``resplit`` restores: ``rouge-lsum.recall[stem]`` gives r = 0.964,
    ``rouge-lsum.recall[stem,resplit]`` r = 0.995 on the 23 other systems. The
    pointer-generator's summaries (glued the same way) were scored as one unit
    against the whole reference: whole-text LCS, ``rouge-l.recall[stem]``
    (r = 0.984 within that system, 0.87 for the split kind). Residual differences:
    ROUGE-1.5.5 stems with WordNet's exception lists before Porter (``said`` ->
    ``say``), and a few references were tokenised otherwise there (``don't``).
    """
    corpus = TextCorpus(read_sacrerouge_jsonl(shared("realsumm", "summaries.jsonl")))
    stored = {(row["instance_id"], row["summarizer_id"]): row["metrics"] for row in read_jsonl(shared("realsumm", "pyramid.jsonl"))}
    keys = list(zip(corpus.inputs, corpus.systems))
    names = ["rouge-1.recall[stem]", "rouge-2.recall[stem]", "rouge-l.recall[stem]", "rouge-lsum.recall[stem]",
             "rouge-lsum.recall[stem,resplit]"]
    ours = rouge(corpus, names)
    theirs = {key: np.array([stored[k][key]["recall"] for k in keys]) for key in ("rouge-1", "rouge-2", "rouge-l")}
    r = lambda x, y: np.corrcoef(x, y)[0, 1]  # noqa: E731
    pointer_generator = corpus.systems == POINTER_GENERATOR
    assert pointer_generator.sum() == 100
    rouge_l = np.where(pointer_generator, ours["rouge-l.recall[stem]"], ours["rouge-lsum.recall[stem,resplit]"])
    assert r(ours["rouge-1.recall[stem]"], theirs["rouge-1"]) > 0.99
    assert r(ours["rouge-2.recall[stem]"], theirs["rouge-2"]) > 0.99
    assert r(rouge_l, theirs["rouge-l"]) > 0.99
    others = ~pointer_generator
    assert r(ours["rouge-lsum.recall[stem,resplit]"][others], theirs["rouge-l"][others]) > 0.99
    assert r(ours["rouge-lsum.recall[stem]"], theirs["rouge-l"]) > 0.95  # without resplit
    assert r(ours["rouge-l.recall[stem]"][pointer_generator], theirs["rouge-l"][pointer_generator]) > 0.98
    # the values themselves: most are exact (5 decimals as stored)
    assert np.mean(np.abs(rouge_l - theirs["rouge-l"]) < 1e-4) > 0.7


def test_resplit_cuts_glued_sentences_only_for_lsum():
    # the reference's two sentences glued as "a b .c d"; the candidate has them in the other order
    c = TextCorpus([SummaryRecord("s", "i", "c d a b", ["a b .c d"])])
    s = rouge(c, ["rouge-lsum.recall", "rouge-lsum.recall[resplit]", "rouge-lsum.recall[stem,resplit,maxref]"])
    assert s["rouge-lsum.recall"][0] == pytest.approx(2 / 4)  # one reference sentence: LCS "a b" (or "c d")
    assert s["rouge-lsum.recall[resplit]"][0] == pytest.approx(4 / 4)  # "a b" and "c d" each in the candidate
    assert s["rouge-lsum.recall[stem,resplit,maxref]"][0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="resplit"):
        rouge(c, ["rouge-l.recall[resplit]"])


@pytest.mark.parametrize(
    "text, lengths",
    [
        ("a b .c d", [2, 2]),
        ("A .B", [1, 1]),
        ("u.s. and U.S. .375 ... but .the x", [7, 2]),  # only " ." before a letter cuts
        ("no boundary", [2]),
        (".starts with it", [3]),
        ("a .b .c\n\nd .e", [1, 1, 1, 1, 1]),
        ("é .ça", [1]),
    ],
)
def test_resplit_keeps_every_word(text, lengths):
    corpus = TextCorpus([SummaryRecord("s", "i", text, ["ref"])])
    base, cut = corpus.view(stem=True), corpus.view(stem=True, resplit=True)
    np.testing.assert_array_equal(cut.tokens, base.tokens)
    np.testing.assert_array_equal(cut.offsets, base.offsets)
    assert cut.sentence_ptr.tolist() == [0, len(lengths), len(lengths) + 1]
    assert np.diff(cut.sentence_offsets).tolist() == [*lengths, 1]
    assert corpus.view(stem=True, resplit=True) is cut


def dp_wlcs(x, y, weight):
    """ROUGE-1.5.5's WLCS dynamic programme, cell by cell."""
    c = [[0.0] * (len(y) + 1) for _ in range(len(x) + 1)]
    w = [[0] * (len(y) + 1) for _ in range(len(x) + 1)]
    for i in range(1, len(x) + 1):
        for j in range(1, len(y) + 1):
            if x[i - 1] == y[j - 1]:
                k = w[i - 1][j - 1]
                c[i][j], w[i][j] = c[i - 1][j - 1] + (k + 1) ** weight - k**weight, k + 1
            else:
                c[i][j] = max(c[i - 1][j], c[i][j - 1])
    return c[-1][-1]


def test_lcs_and_wlcs_match_the_cell_by_cell_programme():
    from metaeval.analyses.text.lcs import lcs_lengths, wlcs_scores

    pairs = random_corpus(2, size=50)
    corpus = TextCorpus([SummaryRecord("s", str(i), s, refs) for i, (s, refs) in enumerate(pairs)])
    view = corpus.view()
    _, cand, ref = corpus.reference_pairs()
    seqs = [view.text(t).tolist() for t in range(len(view.offsets) - 1)]
    lcs = lcs_lengths(view, cand, ref)
    wlcs = wlcs_scores(view, cand, ref, chunk=7)
    for p, (a, b) in enumerate(zip(cand, ref)):
        assert lcs[p] == dp_wlcs(seqs[b], seqs[a], 1.0)
        assert wlcs[p] == pytest.approx(dp_wlcs(seqs[b], seqs[a], 1.2), abs=1e-12)
