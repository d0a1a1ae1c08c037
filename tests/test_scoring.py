"""`metaeval score`: text metrics computed from the stored texts, stored as measures."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval import Store
from metaeval.analyses import text
from metaeval.runs.texts import scoring
from tests.conftest import assert_same, shared, snapshot, write_jsonl

SUMMARIES = [
    ("a", "d0", ["the cat sat on the mat ."], ["a cat sat on a mat .", "the cat was on the mat ."]),
    ("b", "d0", ["dogs bark loudly ."], ["a cat sat on a mat .", "the cat was on the mat ."]),
    ("a", "d1", ["stocks fell sharply on monday ."], ["shares fell on monday ."]),
    ("b", "d1", ["markets rose ."], ["shares fell on monday ."]),
    ("c", "d0", ["the mat had a cat ."], ["a cat sat on a mat .", "the cat was on the mat ."]),
    ("c", "d1", ["shares fell monday ."], ["shares fell on monday ."]),
]


@pytest.fixture
def with_texts(db, cli, tmp_path):
    lines = [{"instance_id": i, "summarizer_id": s, "summary": {"text": summ},
              "references": [{"summarizer_id": f"ref{k}", "text": r} for k, r in enumerate(refs)]}
             for s, i, summ, refs in SUMMARIES]
    cli("ingest", "summaries", write_jsonl(tmp_path / "s.jsonl", lines), "--dataset", "toy")
    return db


def test_scores_equal_the_text_library_and_rescoring_is_a_noop(with_texts, cli):
    out = cli("score", "toy", "--metric", "rouge", "--metric", "js", "--metric", "bleu",
              "--variant", "rouge-2.recall[stem,stop]").output
    assert "scored 3 measure(s)" in out and "inserted 18" in out
    records = [text.SummaryRecord(s, i, summ, refs) for s, i, summ, refs in sorted(SUMMARIES)]
    corpus = text.TextCorpus(records)
    expected = {**text.rouge(corpus, ["rouge-2.recall[stem,stop]"]),
                **text.js_divergence(corpus), **text.bleu(corpus)}
    with Store(with_texts, read_only=True) as wh:
        for name, values in expected.items():
            m = wh.matrix("toy", name)
            got = [m[name][m.systems.index(r.system), m.inputs.index(r.input_id)] for r in records]
            np.testing.assert_allclose(got, values, rtol=1e-15, err_msg=name)
        directions = dict(wh.sql("SELECT name, direction FROM measures").values)
        before = snapshot(wh)
    assert directions["js-2"] == "lower" and directions["rouge-2.recall[stem,stop]"] == "higher"
    assert set(directions) == {"rouge-2.recall[stem,stop]", "js-2", "bleu"}
    again = cli("score", "toy", "--metric", "rouge", "--metric", "js", "--metric", "bleu",
                "--variant", "rouge-2.recall[stem,stop]").output
    assert "nothing changed" in again
    with Store(with_texts, read_only=True) as wh:
        assert_same(before, snapshot(wh))


def test_default_rouge_variants(with_texts, cli):
    assert "scored 9 measure(s) on toy: 54 values" in cli("score", "toy", "--metric", "rouge").output
    with Store(with_texts, read_only=True) as wh:
        assert set(wh.measures("toy")["measure"]) == set(scoring.DEFAULT_ROUGE)


def test_name_clash_with_released_scores_suggests_prefix(with_texts, cli, tmp_path):
    path = tmp_path / "released.csv"
    path.write_text("system,input,measure,value\na,d0,rouge-1.recall,0.5\n")
    cli("ingest", "table", path, "--dataset", "toy")
    result = cli("score", "toy", "--metric", "rouge", "--variant", "rouge-1.recall", expect_ok=False)
    assert result.exit_code != 0 and "--prefix" in result.output and "rouge-1.recall" in result.output
    out = cli("score", "toy", "--metric", "rouge", "--variant", "rouge-1.recall", "--prefix", "ours:").output
    assert "inserted 6" in out


def test_errors(db, cli, with_texts):
    assert "unknown ROUGE kind" in cli("score", "toy", "--metric", "rouge", "--variant", "rouge-9.recall",
                                       expect_ok=False).output
    assert "add --metric rouge" in cli("score", "toy", "--metric", "bleu", "--grid", "graham", expect_ok=False).output
    assert "stores none" in cli("score", "toy", "--metric", "js", "--js-target", "document", expect_ok=False).output
    cli("demo", "--k", "40")
    assert "has no summary texts" in cli("score", "demo", "--metric", "bleu", expect_ok=False).output


def test_graham_grid_is_one_command(with_texts, cli):
    out = cli("score", "toy", "--metric", "rouge", "--grid", "graham").output
    assert "scored 96 measure(s)" in out
    with Store(with_texts, read_only=True) as wh:
        names = set(wh.measures("toy")["measure"])
    assert {v.name for v in text.graham_grid()} == names


def test_realsumm_rouge_agrees_with_released_scores(shared_warehouse, tmp_path):
    shared("realsumm", "summaries.jsonl")
    db = tmp_path / "r.duckdb"
    db.write_bytes(shared_warehouse.read_bytes())
    with Store(db) as wh:
        report, names, dropped = scoring.score_dataset(wh, "realsumm", ["rouge"], ["rouge-2.recall[stem]"],
                                                       prefix="ours:")
        m = wh.matrix("realsumm", ["ours:rouge-2.recall[stem]", "rouge-2.recall"])
    assert report.inserted == 2400 and dropped == 0 and m.values.shape == (2, 24, 100)
    r = np.corrcoef(m.values[0].ravel(), m.values[1].ravel())[0, 1]
    assert r > 0.99
