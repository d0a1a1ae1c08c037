"""R_k (ROUGE-1 on a random k% of the candidate's tokens): exactness, seeding, distribution."""

import numpy as np
import pytest

from metaeval.analyses.text import SummaryRecord, TextCorpus, kept_token_counts, rouge, rouge1_ablated


def make_corpus():
    records = [
        # saturating types ("the" x4 vs 1 / 2 in the references), two references
        SummaryRecord("a", "1", "the the the the cat sat on mat the end", ["the cat sat", "on the mat the dog"]),
        SummaryRecord("b", "1", "a b c d e f g", ["a b c x"]),  # linear only
        SummaryRecord("c", "2", "x x y", ["x y y z"]),
        SummaryRecord("d", "2", "short", ["nothing shared"]),
        SummaryRecord("e", "3", "", ["empty candidate"]),
    ]
    return TextCorpus(records)


def test_kept_token_counts_round_half_up():
    lengths = np.array([0, 1, 2, 3, 4, 5, 10, 11])
    assert kept_token_counts(lengths, 0.5).tolist() == [0, 1, 1, 2, 2, 3, 5, 6]
    assert kept_token_counts(lengths, 0.1).tolist() == [0, 0, 0, 0, 0, 1, 1, 1]
    assert kept_token_counts(lengths, 1.0).tolist() == lengths.tolist()
    assert kept_token_counts(lengths, 0.0).tolist() == [0] * 8


@pytest.mark.parametrize("stem,stop", [(False, False), (True, True)])
def test_full_proportion_is_plain_rouge_1(stem, stop):
    corpus = make_corpus()
    flags = ",".join(f for f, on in (("stem", stem), ("stop", stop)) if on)
    suffix = f"[{flags}]" if flags else ""
    plain = rouge(corpus, [f"rouge-1.{s}{suffix}" for s in ("recall", "precision", "f1")])
    ablated = rouge1_ablated(corpus, 1.0, repetitions=4, seed=0, stem=stem, stop=stop)
    for stat in ("recall", "precision", "f1"):
        assert ablated[stat].shape == (4, len(corpus))
        np.testing.assert_allclose(ablated[stat], np.broadcast_to(plain[f"rouge-1.{stat}{suffix}"], (4, len(corpus))))


def test_same_seed_same_output_and_seeds_differ():
    corpus = make_corpus()
    a = rouge1_ablated(corpus, 0.5, 50, seed=123)
    b = rouge1_ablated(corpus, 0.5, 50, seed=123)
    c = rouge1_ablated(corpus, 0.5, 50, seed=124)
    np.testing.assert_array_equal(a["recall"], b["recall"])
    assert not np.array_equal(a["recall"], c["recall"])


def test_precision_uses_the_kept_token_count():
    corpus = make_corpus()
    out = rouge1_ablated(corpus, 0.3, 20, seed=1)
    view = corpus.view()
    kept = kept_token_counts(view.lengths[corpus.summary_text], 0.3)
    ref_total = np.array([sum(len(view.text(t)) for t in corpus.ref_text[corpus.ref_ptr[i] : corpus.ref_ptr[i + 1]]) for i in range(len(corpus))])
    hits_from_recall = out["recall"] * ref_total
    hits_from_precision = out["precision"] * kept * corpus.n_references
    np.testing.assert_allclose(hits_from_recall, hits_from_precision, atol=1e-9)
    np.testing.assert_allclose(hits_from_recall, np.round(hits_from_recall), atol=1e-9)


def brute_force_hits(corpus, proportion, repetitions, rng):
    """Keep a uniformly random subset of round_half_up(p * L) token positions, count pooled clipped hits."""
    view = corpus.view()
    n_units = view.vocab_size
    out = np.zeros((repetitions, len(corpus)))
    for i in range(len(corpus)):
        tokens = view.text(corpus.summary_text[i])
        refs = [np.bincount(view.text(t), minlength=n_units) for t in corpus.ref_text[corpus.ref_ptr[i] : corpus.ref_ptr[i + 1]]]
        m = kept_token_counts(np.array([len(tokens)]), proportion)[0]
        for r in range(repetitions):
            kept = np.bincount(tokens[rng.permutation(len(tokens))[:m]], minlength=n_units)
            out[r, i] = sum(np.minimum(kept, ref).sum() for ref in refs)
    return out


def test_distribution_matches_brute_force_token_masks():
    corpus = make_corpus()
    view = corpus.view()
    ref_total = np.array([view.lengths[corpus.ref_text[corpus.ref_ptr[i] : corpus.ref_ptr[i + 1]]].sum() for i in range(len(corpus))])
    reps = 4000
    ours = rouge1_ablated(corpus, 0.4, reps, seed=7)["recall"] * ref_total
    brute = brute_force_hits(corpus, 0.4, reps, np.random.default_rng(8))
    for i in range(len(corpus)):
        se = np.sqrt(ours[:, i].var() / reps + brute[:, i].var() / reps) + 1e-12
        assert abs(ours[:, i].mean() - brute[:, i].mean()) < 4.5 * se, i
        assert ours[:, i].std() == pytest.approx(brute[:, i].std(), rel=0.15, abs=1e-9)


def test_expected_recall_is_proportional_without_saturation():
    # every candidate type occurs at least as often in the reference: E[hits] = (m / L) * full hits exactly
    corpus = TextCorpus([SummaryRecord("s", "i", "a b c d e f g h i j", ["a b c d e x y z"])])
    full = rouge(corpus, ["rouge-1.recall"])["rouge-1.recall"][0]
    for p in (0.2, 0.5, 0.8):
        recall = rouge1_ablated(corpus, p, 20000, seed=3)["recall"][:, 0]
        m = kept_token_counts(np.array([10]), p)[0]
        assert recall.mean() == pytest.approx(m / 10 * full, abs=4 * recall.std() / np.sqrt(20000))


def test_mean_recall_increases_with_the_proportion():
    corpus = make_corpus()
    means = [rouge1_ablated(corpus, p, 500, seed=0)["recall"].mean() for p in np.linspace(0, 1, 11)]
    assert means[0] == 0.0
    assert np.all(np.diff(means) > -1e-3)


@pytest.mark.parametrize("kwargs", [{"proportion": 1.5}, {"proportion": -0.1}, {"repetitions": 0}, {"proportion": "half"}])
def test_rejects_bad_arguments(kwargs):
    args = {"proportion": 0.5, "repetitions": 2, "seed": 0, **kwargs}
    with pytest.raises(ValueError):
        rouge1_ablated(make_corpus(), **args)
