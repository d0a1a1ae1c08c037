"""BLEU and chrF are sacrebleu's sentence-level scores."""

import pytest
import sacrebleu

from metaeval.analyses.text import SummaryRecord, TextCorpus, bleu, chrf

EXAMPLES = [
    (["The cat sat on the mat .", "It purred ."], [["The cat lay on the mat ."], ["A cat sat on a mat and purred ."]]),
    ("completely unrelated", [["nothing shared here at all"]]),
    ("Identical text , really .", [["Identical text , really ."]]),
]


def test_equal_to_sacrebleu_sentence_scores():
    records = [SummaryRecord("s", str(i), s, refs) for i, (s, refs) in enumerate(EXAMPLES)]
    corpus = TextCorpus(records)
    b, c = bleu(corpus)["bleu"], chrf(corpus)["chrf"]
    for i, (summary, refs) in enumerate(EXAMPLES):
        hyp = summary if isinstance(summary, str) else " ".join(summary)
        flat_refs = [" ".join(r) for r in refs]
        assert b[i] == pytest.approx(sacrebleu.sentence_bleu(hyp, flat_refs).score, abs=1e-12)
        assert c[i] == pytest.approx(sacrebleu.sentence_chrf(hyp, flat_refs).score, abs=1e-12)
    assert b[2] == pytest.approx(100.0) and c[2] == pytest.approx(100.0)
