"""Louis & Nenkova (2013) model-free features, against independent computations of the paper's
equations (2, 3, 5, 6, 7) and the G test of scipy."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
import scipy.stats
from scipy.special import gammaln

from metaeval.analyses.text import TextCorpus, direction
from metaeval.analyses.text.corpus import SummaryRecord
from metaeval.analyses.text.modelfree import DELTA, feature_name, llr, model_free
from tests.conftest import run_cli

DOCS = {"i1": "the cat sat on the mat . the cat ate the fish . a dog barked at the cat .",
        "i2": "stocks fell sharply as markets reacted to the rate rise . banks led the fall .",
        "i3": "the team won the final after extra time . fans celebrated the win in the city ."}
SUMMARIES = {("a", "i1"): "the cat ate fish .", ("b", "i1"): "a dog barked .",
             ("a", "i2"): "markets fell on the rate rise .", ("b", "i2"): "the cat sat .",
             ("a", "i3"): "the team won the final .", ("b", "i3"): "fans celebrated in the city after the win ."}


def corpus() -> TextCorpus:
    return TextCorpus([SummaryRecord(system=s, input_id=i, summary=text, references=["x"], document=DOCS[i])
                       for (s, i), text in SUMMARIES.items()])


def words(text):
    return [w for w in text.split() if w != "."]


def smoothed(counts: Counter, union, vocabulary):
    n = sum(counts.values())
    return np.array([(counts[w] + DELTA) / (n + DELTA * 1.5 * vocabulary) for w in union])


def test_kl_is_equations_2_and_3_and_asymmetric():
    out = model_free(corpus(), ["kl"], stem=False, stop=False)
    for k, ((s, i), text) in enumerate(SUMMARIES.items()):
        inp, summ = Counter(words(DOCS[i])), Counter(words(text))
        union = sorted(set(inp) | set(summ))
        p, q = smoothed(inp, union, len(inp)), smoothed(summ, union, len(inp))
        assert out["kl.input-summary"][k] == pytest.approx(np.sum(p * np.log2(p / q)), rel=1e-12)
        assert out["kl.summary-input"][k] == pytest.approx(np.sum(q * np.log2(q / p)), rel=1e-12)
        assert out["kl.input-summary"][k] != pytest.approx(out["kl.summary-input"][k])
    assert direction("kl.input-summary[stem,stop]") == "lower"


def test_kl_of_a_summary_equal_to_its_input_is_zero():
    same = TextCorpus([SummaryRecord("s", "i", DOCS["i1"], ["x"], document=DOCS["i1"]),
                       SummaryRecord("s", "j", "a dog .", ["x"], document=DOCS["i2"])])
    out = model_free(same, ["kl"], stem=False, stop=False)
    assert out["kl.input-summary"][0] == 0.0 and out["kl.summary-input"][0] == 0.0


def test_llr_is_the_g_statistic():
    for k1, n1, k2, n2 in ((5, 40, 3, 200), (1, 10, 0, 50), (7, 30, 30, 100)):
        table = np.array([[k1, n1 - k1], [k2, n2 - k2]])
        g, *_ = scipy.stats.chi2_contingency(table, correction=False, lambda_="log-likelihood")
        assert llr(k1, n1, k2, n2) == pytest.approx(g, rel=1e-10)


def topic_words(i, cutoff):
    inp = Counter(words(DOCS[i]))
    back = Counter(w for j in DOCS if j != i for w in words(DOCS[j]))
    n1, n2 = sum(inp.values()), sum(back.values())
    return {w for w, k in inp.items() if k / n1 > back[w] / n2 and llr(k, n1, back[w], n2) > cutoff}


def test_topic_features_cosine_and_probabilities_by_hand():
    cutoff = 2.0
    out = model_free(corpus(), stem=False, stop=False, cutoff=cutoff)
    df = Counter(w for d in DOCS.values() for w in set(words(d)))
    idf = {w: np.log(len(DOCS) / df[w]) for w in df}
    for k, ((s, i), text) in enumerate(SUMMARIES.items()):
        topic, summ, inp = topic_words(i, cutoff), Counter(words(text)), Counter(words(DOCS[i]))
        assert topic, "the toy inputs have topic words at this cutoff"
        n = sum(summ.values())
        assert out["topic-fraction.input[cutoff=2]"][k] == pytest.approx(sum(summ[w] for w in topic) / n)
        assert out["topic-coverage.input[cutoff=2]"][k] == pytest.approx(len(topic & set(summ)) / len(topic))
        vocab = sorted(set(df) | set(summ))
        a = np.array([inp[w] * idf.get(w, 0.0) for w in vocab])
        b = np.array([summ[w] * idf.get(w, 0.0) for w in vocab])
        t = np.array([inp[w] * idf.get(w, 0.0) if w in topic else 0.0 for w in vocab])
        assert out["cosine.input"][k] == pytest.approx(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
        assert out["cosine-topic.input[cutoff=2]"][k] == pytest.approx(t @ b / np.linalg.norm(t) / np.linalg.norm(b))
        union = sorted(set(inp) | set(summ))
        p = dict(zip(union, smoothed(inp, union, len(inp))))
        unigram = sum(c * np.log(p[w]) for w, c in summ.items())                      # Eq. 6, in logs
        assert out["logprob-unigram.input"][k] == pytest.approx(unigram, rel=1e-12)
        multinomial = gammaln(n + 1) - sum(gammaln(c + 1) for c in summ.values()) + unigram   # Eq. 7
        assert out["logprob-multinomial.input"][k] == pytest.approx(multinomial, rel=1e-12)


def test_names_carry_the_settings_and_are_recognised():
    out = model_free(corpus(), cutoff=10)
    assert set(out) == {"kl.input-summary[stem,stop]", "kl.summary-input[stem,stop]", "cosine.input[stem,stop]",
                        "cosine-topic.input[stem,stop,cutoff=10]", "topic-fraction.input[stem,stop,cutoff=10]",
                        "topic-coverage.input[stem,stop,cutoff=10]", "logprob-unigram.input[stem,stop]",
                        "logprob-multinomial.input[stem,stop]"}
    assert {direction(n) for n in out if not n.startswith("kl.")} == {"higher"}
    assert feature_name("kl.input-summary", False, False) == "kl.input-summary"


def test_refusals():
    with pytest.raises(ValueError, match="input documents"):
        model_free(TextCorpus([SummaryRecord("s", "i", "a b", ["x"])]))
    with pytest.raises(ValueError, match="unknown"):
        model_free(corpus(), ["nosuch"])


def test_score_command_stores_them(db, tmp_path):
    path = tmp_path / "summaries.jsonl"
    path.write_text("".join(json.dumps({"instance_id": i, "summarizer_id": s, "summary": {"text": [text]},
                                        "references": [{"text": ["x y"]}], "documents": [{"text": [DOCS[i]]}]}) + "\n"
                            for (s, i), text in SUMMARIES.items()))
    run_cli(db, "ingest", "summaries", path, "--dataset", "toy")
    result = run_cli(db, "score", "toy", "--metric", "kl", "--metric", "topic", "--no-input-stem", "--no-input-stop",
                     "--topic-cutoff", "2")
    assert "scored 4 measure(s)" in result.output
    again = run_cli(db, "score", "toy", "--metric", "kl", "--metric", "topic", "--no-input-stem", "--no-input-stop",
                    "--topic-cutoff", "2")
    assert "nothing changed" in again.output
    import csv
    import io

    rows = {r["measure"]: r for r in csv.DictReader(io.StringIO(run_cli(db, "measures", "toy", "--format", "csv").output))}
    assert rows["kl.input-summary"]["direction"] == "lower" and rows["kl.summary-input"]["direction"] == "lower"
    assert rows["topic-fraction.input[cutoff=2]"]["direction"] == "higher"
    assert {r["kind"] for r in rows.values()} == {"automatic"}


# --- ROUGE-S / ROUGE-SU with an unlimited skip distance (issue 33 item 17) ------------------------
def _skip_bigrams(tokens, unigrams):
    from itertools import combinations

    bag = Counter(combinations(tokens, 2))
    if unigrams:
        bag.update((("<s>", t) for t in tokens))
    return bag


@pytest.mark.parametrize("kind", ["rouge-s", "rouge-su"])
def test_rouge_s_unlimited_against_all_pairs(kind):
    from metaeval.analyses.text import rouge

    texts = [("a b c d e f g h i j", ["a c e g i b d f h j k"]), ("the cat sat on the mat", ["on the mat the cat sat"]),
             ("x y", ["y x"])]
    corpus = TextCorpus([SummaryRecord("s", str(i), c, refs) for i, (c, refs) in enumerate(texts)])
    out = rouge(corpus, [f"{kind}.recall", f"{kind}.precision"])
    for i, (c, refs) in enumerate(texts):
        cb, rb = _skip_bigrams(c.split(), kind == "rouge-su"), _skip_bigrams(refs[0].split(), kind == "rouge-su")
        hit = sum((cb & rb).values())
        assert out[f"{kind}.recall"][i] == pytest.approx(hit / sum(rb.values()))
        assert out[f"{kind}.precision"][i] == pytest.approx(hit / sum(cb.values()))
    # far-apart pairs count: S with an unlimited distance differs from S4 on the long first text
    s4 = rouge(corpus, ["rouge-s4.recall"])["rouge-s4.recall"]
    if kind == "rouge-s":
        assert out["rouge-s.recall"][0] != pytest.approx(s4[0]) and out["rouge-s.recall"][2] == pytest.approx(s4[2])


# --- corpus-level BLEU per system (issue 33 item 12): sacrebleu's corpus_score, not a mean ----------
def test_corpus_bleu_is_sacrebleus_corpus_score_per_system():
    import sacrebleu

    from metaeval.analyses.text.mt import bleu, corpus_bleu

    refs = {"i1": ["the cat sat on the mat .", "a cat was on the mat ."], "i2": ["stocks fell as rates rose ."],
            "i3": ["the team won the final .", "fans cheered the win ."]}
    hyps = {("a", "i1"): "the cat sat on a mat .", ("a", "i2"): "stocks fell .", ("a", "i3"): "the team won .",
            ("b", "i1"): "a dog .", ("b", "i2"): "rates rose as stocks fell .", ("b", "i3"): "fans cheered ."}
    c = TextCorpus([SummaryRecord(system=s, input_id=i, summary=t, references=refs[i]) for (s, i), t in hyps.items()])
    got = corpus_bleu(c)
    for system in ("a", "b"):
        inputs = ["i1", "i2", "i3"]
        streams = [[refs[i][j] if j < len(refs[i]) else None for i in inputs] for j in range(2)]
        expected = sacrebleu.corpus_bleu([hyps[(system, i)] for i in inputs], streams).score
        assert got[system] == pytest.approx(expected)
    sentence = bleu(c)["bleu"]
    assert got["a"] != pytest.approx(float(np.mean(sentence[:3])))    # a corpus score, not a mean of sentences
