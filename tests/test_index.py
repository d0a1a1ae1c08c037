"""Search indexes on tantivy (runs/texts/index.py, `metaeval index`): statistics, rankings, files."""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metaeval import Store
from metaeval.analyses.text import retrieval
from metaeval.runs.texts import index
from tests.conftest import write_jsonl

WORDS = ["heart", "attack", "aspirin", "dose", "trial", "patient", "cancer", "tumor", "growth", "cell",
         "gene", "protein", "brain", "memory", "sleep"]


def _corpus(seed: int = 3, n: int = 40) -> list[dict]:
    rng = random.Random(seed)
    return [{"id": f"d{i}", "text": " ".join(rng.choices(WORDS[: rng.randint(5, len(WORDS))], k=rng.randint(1, 30)))}
            for i in range(n)]


@pytest.fixture
def toy(db, tmp_path):
    docs = _corpus()
    with Store(db) as wh:
        info = index.build(wh, "toy", [write_jsonl(tmp_path / "c.jsonl", docs)])
        yield wh, info, docs


def _brute_force_ql(docs: list[dict], query: list[str], mu: float) -> list[str]:
    """Query likelihood with Dirichlet smoothing, from scratch: p(q|d) = prod over the query's
    term occurrences of (tf + mu cf/|C|) / (|d| + mu), over the documents holding a query term
    (terms absent from the collection left out), best first, ties in corpus order."""
    bags = [Counter(retrieval.analyze(d["text"])) for d in docs]
    cf = sum(bags, Counter())
    total = sum(cf.values())
    scores = {}
    for i, bag in enumerate(bags):
        if not any(bag[w] for w in query):
            continue
        length = sum(bag.values())
        scores[i] = math.log(math.prod((bag[w] + mu * cf[w] / total) / (length + mu) for w in query if cf[w]))
    return [docs[i]["id"] for i in sorted(scores, key=lambda i: (-scores[i], i))]


@pytest.mark.parametrize("mu", [2000.0, 10.0, 0.5])
def test_dirichlet_ranking_equals_brute_force_query_likelihood(toy, mu):
    wh, info, docs = toy
    search = index.SearchIndex.open(wh, "toy")
    rng = random.Random(11)
    for _ in range(40):
        query = retrieval.analyze(" ".join(rng.choices(WORDS + ["unseenword"], k=rng.randint(1, 8))))
        expected = _brute_force_ql(docs, query, mu)
        assert search.lm_dirichlet(query, len(docs), mu) == expected
        assert search.lm_dirichlet(query, 5, mu) == expected[:5]


def test_term_statistics_are_the_corpus_counts(toy):
    wh, info, docs = toy
    search = index.SearchIndex.open(wh, "toy")
    bags = [Counter(retrieval.analyze(d["text"])) for d in docs]
    assert info.documents == search.n_docs == len(docs)
    assert info.terms == sum(sum(b.values()) for b in bags)
    for w in WORDS:
        t = retrieval.analyze(w)[0]
        assert search.postings(t) == {i: b[t] for i, b in enumerate(bags) if b[t]}
        assert search.doc_freq((t,)) == sum(1 for b in bags if b[t])
    phrase = tuple(retrieval.analyze("heart attack"))
    assert search.doc_freq(phrase) == sum(1 for d in docs if " ".join(phrase) in " ".join(retrieval.analyze(d["text"])))


def test_kw_keeps_exactly_the_terms_above_the_index_idf_threshold(toy):
    wh, info, docs = toy
    search = index.SearchIndex.open(wh, "toy")
    bags = [set(retrieval.analyze(d["text"])) for d in docs]
    vocabulary = set().union(*bags)
    idf = {t: math.log(len(docs) / sum(1 for b in bags if t in b)) for t in vocabulary}
    assert info.mean_idf == pytest.approx(sum(idf.values()) / len(idf), rel=1e-12)
    summary = "The heart , attack of 12 patients ; aspirin dose trial cancer gene memory sleep unseenword"
    q = retrieval.kw_query(summary, search.doc_freq, search.n_docs, info.mean_idf, max_len=1)
    expected = [t for t in retrieval.plain_query(summary) if t in idf and idf[t] > info.mean_idf]
    assert q == expected and 0 < len(q) < len(retrieval.plain_query(summary))


def test_bm25_is_tantivys_formula(toy):
    wh, info, docs = toy
    search = index.SearchIndex.open(wh, "toy")
    bags = [Counter(retrieval.analyze(d["text"])) for d in docs]
    n, avgdl = len(docs), info.terms / len(docs)

    def bm25(bag, query):
        dl = sum(bag.values())
        out = 0.0
        for w in query:
            df = sum(1 for b in bags if b[w])
            if bag[w]:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                out += idf * 2.2 * bag[w] / (bag[w] + 1.2 * (1 - 0.75 + 0.75 * dl / avgdl))
        return out

    rng = random.Random(5)
    for _ in range(20):
        query = retrieval.analyze(" ".join(rng.choices(WORDS, k=rng.randint(1, 6))))
        ranked = search.bm25(query, 10)
        scores = {d["id"]: bm25(b, query) for d, b in zip(docs, bags)}
        matching = [d for d, s in scores.items() if s > 0]
        assert len(ranked) == min(10, len(matching))
        got = [scores[d] for d in ranked]
        assert all(a >= b - 1e-5 for a, b in zip(got, got[1:]))          # f32 scores: tolerance
        best = sorted(scores.values(), reverse=True)[: len(ranked)]
        assert got == pytest.approx(best, abs=1e-5)


def test_parquet_and_jsonl_corpora_index_the_same_documents(db, tmp_path):
    docs = _corpus(seed=9, n=12)
    pq.write_table(pa.table({"id": [d["id"] for d in docs], "text": [d["text"] for d in docs]}), tmp_path / "c.parquet")
    with Store(db) as wh:
        a = index.build(wh, "a", [write_jsonl(tmp_path / "c.jsonl", docs)])
        b = index.build(wh, "b", [tmp_path / "c.parquet"])
    assert (a.corpus_sha256, a.documents, a.terms, a.vocabulary) == (b.corpus_sha256, b.documents, b.terms,
                                                                        b.vocabulary)


def test_cli_build_list_and_no_silent_overwrite(db, cli, tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", _corpus(n=5))
    out = cli("index", "build", "toy", corpus).output
    assert "indexed 5 document(s)" in out
    path = tmp_path / "wh.duckdb.indexes" / "toy"
    assert (path / index.MARKER).is_file()
    listed = cli("index", "list", "--format", "json").output
    row = json.loads(listed)[0]
    assert row["name"] == "toy" and row["documents"] == 5 and row["analyzer"] == retrieval.ANALYZER
    assert row["retrieval_model"] == "lm-dirichlet" and row["library"].startswith("tantivy")
    again = cli("index", "build", "toy", corpus, expect_ok=False)
    assert again.exit_code != 0 and "--overwrite" in again.output
    before = json.loads((path / index.MARKER).read_text())["build_id"]
    cli("index", "build", "toy", corpus, "--overwrite", "--model", "bm25")
    after = json.loads((path / index.MARKER).read_text())
    assert after["build_id"] != before and after["retrieval_model"] == "bm25"
    # a directory that is not an index is never replaced, even with --overwrite
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep me")
    refused = cli("index", "build", "other", corpus, "--dir", other, "--overwrite", expect_ok=False)
    assert refused.exit_code != 0 and "holds no metaeval index" in refused.output
    assert (other / "notes.txt").read_text() == "keep me"


def test_a_failed_build_leaves_nothing(db, cli, tmp_path):
    lines = [json.dumps(d) for d in _corpus(n=4)] + ['{"id": "d9", "text": 5}']
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    result = cli("index", "build", "toy", bad, expect_ok=False)
    assert result.exit_code != 0
    assert "bad.jsonl:5: field 'text'" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "wh.duckdb.indexes").exists()
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT count(*) AS n FROM indexes")["n"][0] == 0
    dup = write_jsonl(tmp_path / "dup.jsonl", [{"id": "x", "text": "a"}, {"id": "x", "text": "b"}])
    assert "dup.jsonl:2: field 'id'" in cli("index", "build", "toy", dup, expect_ok=False).output
    assert not (tmp_path / "wh.duckdb.indexes").exists()


def test_dataset_texts_are_the_default_corpus(db, cli, tmp_path):
    lines = [{"instance_id": "i0", "summarizer_id": "s", "summary": {"text": ["a cat sat"]},
              "references": [{"summarizer_id": "r0", "text": ["the cat sat on the mat"]},
                             {"summarizer_id": "r1", "text": ["a dog barked"]}]},
             {"instance_id": "i1", "summarizer_id": "s", "summary": {"text": ["heart attack"]},
              "references": [{"summarizer_id": "r0", "text": ["aspirin after a heart attack"]}]}]
    cli("ingest", "summaries", write_jsonl(tmp_path / "s.jsonl", lines), "--dataset", "toy")
    assert "indexed 3 document(s)" in cli("index", "build", "refs", "--dataset", "toy").output
    with Store(db) as wh:
        search = index.SearchIndex.open(wh, "refs")
        assert search.lm_dirichlet(["heart"], 5, 2000) == ["ref:i1:r0"]
    usage = cli("index", "build", "refs2", expect_ok=False)
    assert usage.exit_code != 0 and "--dataset" in usage.output


def test_a_warehouse_without_the_index_tables_is_told_to_init(db, cli, tmp_path):
    with Store(db) as wh:
        wh.con.execute("DROP TABLE retrievals")
        wh.con.execute("DROP TABLE indexes")
    corpus = write_jsonl(tmp_path / "c.jsonl", _corpus(n=3))
    r = cli("index", "build", "toy", corpus, expect_ok=False)
    assert r.exit_code != 0 and "init" in r.output and not (tmp_path / "wh.duckdb.indexes").exists()
    cli("init")
    assert "indexed 3 document(s)" in cli("index", "build", "toy", corpus).output


def test_another_indexs_directory_is_refused(db, cli, tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", _corpus(n=3))
    cli("index", "build", "a", corpus)
    r = cli("index", "build", "b", corpus, "--dir", tmp_path / "wh.duckdb.indexes" / "a", "--overwrite",
            expect_ok=False)
    assert r.exit_code != 0 and "holds the index 'a'" in r.output
