"""`metaeval score --metric sera`: SERA measures from a recorded index, with cached retrievals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from metaeval import Store
from metaeval.analyses import text
from metaeval.analyses.text import retrieval
from metaeval.runs.texts import index, scoring
from metaeval.runs.texts import sera as sera_runs
from tests.conftest import digest, write_jsonl

REFS = {
    "i0": ["the heart attack patient was given aspirin", "aspirin dose after a heart attack"],
    "i1": ["the tumor growth slowed in the cancer trial", "cancer cells stopped growing"],
    "i2": ["sleep improves memory in the brain", "memory and sleep are linked"],
}
SUMMARIES = {
    ("s1", "i0"): "aspirin helps after a heart attack", ("s2", "i0"): "sleep and memory",
    ("s1", "i1"): "cancer trial shows tumor growth slowed", ("s2", "i1"): "the the the",
    ("s1", "i2"): "brain memory sleep", ("s2", "i2"): "heart attack aspirin",
}


@pytest.fixture
def toy(db, cli, tmp_path):
    lines = [{"instance_id": i, "summarizer_id": s, "summary": {"text": [t]},
              "references": [{"summarizer_id": f"r{k}", "text": [r]} for k, r in enumerate(REFS[i])]}
             for (s, i), t in SUMMARIES.items()]
    cli("ingest", "summaries", write_jsonl(tmp_path / "s.jsonl", lines), "--dataset", "toy")
    cli("index", "build", "refs", "--dataset", "toy")
    return db


def _expected(wh, query: str, model: str, n: int, discounted: bool) -> dict[tuple[str, str], float]:
    search = index.SearchIndex.open(wh, "refs")
    reform = {"plain": retrieval.plain_query,
              "kw": lambda t: retrieval.kw_query(t, search.doc_freq, search.n_docs, search.info.mean_idf)}[query]
    run = lambda t: search.retrieve(reform(t), model, n, 2000.0)  # noqa: E731
    f = text.sera_dis if discounted else text.sera
    return {key: f(run(t), [run(r) for r in REFS[key[1]]], n) for key, t in SUMMARIES.items()}


def test_sera_measures_equal_the_pure_scores_and_record_the_index(toy, cli):
    out = cli("score", "toy", "--metric", "sera", "--index", "refs", "--query", "plain,kw", "--cutoff", "1,3").output
    assert "scored 8 measure(s)" in out
    with Store(toy) as wh:
        names = set(wh.measures("toy")["measure"])
        assert names == {"sera-1", "sera-3", "sera-dis-1", "sera-dis-3",
                         "sera-1[kw]", "sera-3[kw]", "sera-dis-1[kw]", "sera-dis-3[kw]"}
        for query in ("plain", "kw"):
            for n in (1, 3):
                for discounted in (False, True):
                    name = text.sera_name(n, discounted=discounted, query=query)
                    m = wh.matrix("toy", name)
                    for (s, i), value in _expected(wh, query, "lm-dirichlet", n, discounted).items():
                        assert m[name][m.systems.index(s), m.inputs.index(i)] == pytest.approx(value, abs=0), name
        assert set(wh.sql("SELECT direction FROM measures")["direction"]) == {"higher"}
        [options] = wh.sql("SELECT options FROM ingests WHERE format = 'score'")["options"]
        used = json.loads(options)["sera"]
        info = index.SearchIndex.open(wh, "refs").info
        assert used["index"] == "refs" and used["build_id"] == info.build_id
        assert used["corpus_sha256"] == info.corpus_sha256 and used["model"] == "lm-dirichlet(mu=2000)"
        # a summary of stopwords retrieves nothing, its references something: SERA 0, not undefined
        assert wh.matrix("toy", "sera-3")["sera-3"][1, 1] == 0.0


def test_rescoring_reads_the_cache(toy, cli):
    cli("score", "toy", "--metric", "sera", "--index", "refs", "--cutoff", "2,4")
    with Store(toy) as wh:
        cached = wh.sql("SELECT count(*) AS n FROM retrievals")["n"][0]
        assert cached == len(set(SUMMARIES.values()) | {r for rs in REFS.values() for r in rs})
        corpus, _ = scoring.load_corpus(wh, "toy")
        first, _, searched = sera_runs.score(wh, corpus, sera_runs.SERASetting("refs", cutoffs=(2, 3)))
        assert searched == {"plain": 0}                                # shallower cut-offs: from the cache
        _, _, deeper = sera_runs.score(wh, corpus, sera_runs.SERASetting("refs", cutoffs=(6,)))
        assert deeper == {"plain": cached}                            # deeper: searched again, then cached
        again, _, none = sera_runs.score(wh, corpus, sera_runs.SERASetting("refs", cutoffs=(2, 3)))
        assert none == {"plain": 0} and all(np.array_equal(first[k], again[k]) for k in first)
        # lists cached by another version of the query code are not reused
        wh.con.execute("UPDATE retrievals SET query = 'plain@q0'")
        _, _, older = sera_runs.score(wh, corpus, sera_runs.SERASetting("refs", cutoffs=(2, 3)))
        assert older == {"plain": cached}
        wh.con.execute("DELETE FROM retrievals WHERE query = 'plain@q0'")
    assert "nothing changed" in cli("score", "toy", "--metric", "sera", "--index", "refs", "--cutoff", "2,4").output
    # rebuilding the index drops its cached lists
    cli("index", "build", "refs", "--dataset", "toy", "--overwrite")
    with Store(toy, read_only=True) as wh:
        assert wh.sql("SELECT count(*) AS n FROM retrievals")["n"][0] == 0


def test_bm25_measures_are_named_by_the_model(toy, cli):
    cli("score", "toy", "--metric", "sera", "--index", "refs", "--model", "bm25", "--cutoff", "2")
    with Store(toy) as wh:
        assert set(wh.measures("toy")["measure"]) == {"sera-2[bm25]", "sera-dis-2[bm25]"}
        m = wh.matrix("toy", "sera-2[bm25]")
        for (s, i), value in _expected(wh, "plain", "bm25", 2, False).items():
            assert m["sera-2[bm25]"][m.systems.index(s), m.inputs.index(i)] == value


def test_sera_option_errors(toy, cli):
    r = cli("score", "toy", "--metric", "sera", expect_ok=False)
    assert r.exit_code != 0 and "--index" in r.output
    r = cli("score", "toy", "--metric", "bleu", "--cutoff", "5", expect_ok=False)
    assert r.exit_code != 0 and "--metric sera" in r.output
    r = cli("score", "toy", "--metric", "sera", "--index", "nope", expect_ok=False)
    assert r.exit_code != 0 and "no index 'nope'" in r.output
    r = cli("score", "toy", "--metric", "sera", "--index", "refs", "--query", "plain,xx", expect_ok=False)
    assert r.exit_code != 0 and "xx" in r.output
    r = cli("score", "toy", "--metric", "sera", "--index", "refs", "--cutoff", "0", expect_ok=False)
    assert r.exit_code != 0


def test_np_queries_with_textblob_score_and_record_the_chunker(toy, cli):
    pytest.importorskip("textblob", reason="TextBlob (the np extra: pip install 'metaeval-warehouse[np]') is absent")
    cli("score", "toy", "--metric", "sera", "--index", "refs", "--query", "np", "--cutoff", "2", "--np-model", "textblob")
    with Store(toy) as wh:
        search = index.SearchIndex.open(wh, "refs")
        nlp = retrieval.load_np_chunker("textblob")
        run = lambda t: search.retrieve(retrieval.np_query(t, nlp), "lm-dirichlet", 2, 2000.0)  # noqa: E731
        m = wh.matrix("toy", "sera-2[np]")
        for (s, i), t in SUMMARIES.items():
            expected = text.sera(run(t), [run(r) for r in REFS[i]], 2)
            assert m["sera-2[np]"][m.systems.index(s), m.inputs.index(i)] == pytest.approx(expected, abs=0)
        [options] = wh.sql("SELECT options FROM ingests WHERE format = 'score'")["options"]
        assert json.loads(options)["sera"]["np_model"] == "textblob"


def test_np_without_spacy_is_one_clear_line(toy, cli):
    try:
        import spacy  # noqa: F401
        pytest.skip("spaCy is installed here")
    except ImportError:
        pass
    r = cli("score", "toy", "--metric", "sera", "--index", "refs", "--query", "np", expect_ok=False)
    assert r.exit_code != 0 and "pip install spacy" in r.output and "Traceback" not in r.output
    with Store(toy, read_only=True) as wh:
        assert wh.measures("toy").empty


def test_np_without_spacy_after_plain_caches_nothing(toy, cli):
    """The plain queries' lists are cached only once every query has run: a failing np query
    leaves the retrievals (and every other table) as they were."""
    try:
        import spacy  # noqa: F401
        pytest.skip("spaCy is installed here")
    except ImportError:
        pass
    before = digest(toy)
    r = cli("score", "toy", "--metric", "sera", "--index", "refs", "--query", "plain,np", expect_ok=False)
    assert r.exit_code != 0 and "pip install spacy" in r.output and "Traceback" not in r.output
    assert digest(toy) == before


def test_a_scores_conflict_caches_no_retrieval(toy, cli, tmp_path):
    """The searched lists are cached in the scores' transaction: a conflict writes neither."""
    scores = tmp_path / "released.csv"
    scores.write_text("system,input,measure,value\n" + "".join(f"{s},{i},sera-2,0.123\n" for s, i in SUMMARIES))
    cli("ingest", "table", scores, "--dataset", "toy")
    before = digest(toy)
    r = cli("score", "toy", "--metric", "sera", "--index", "refs", "--cutoff", "2", expect_ok=False)
    assert r.exit_code != 0 and "conflict with the warehouse" in r.output and "--prefix" in r.output
    assert digest(toy) == before
    cli("score", "toy", "--metric", "sera", "--index", "refs", "--cutoff", "2", "--prefix", "ours:")
    with Store(toy, read_only=True) as wh:
        assert wh.sql("SELECT count(*) AS n FROM retrievals")["n"][0] > 0


def test_a_non_default_mu_is_in_the_name(toy, cli):
    cli("score", "toy", "--metric", "sera", "--index", "refs", "--mu", "10", "--cutoff", "2")
    with Store(toy) as wh:
        assert set(wh.measures("toy")["measure"]) == {"sera-2[mu=10]", "sera-dis-2[mu=10]"}
        [options] = wh.sql("SELECT options FROM ingests WHERE format = 'score'")["options"]
        assert json.loads(options)["sera"]["model"] == "lm-dirichlet(mu=10)"


def test_the_defaults_the_help_states_are_the_modules_own():
    from click.testing import CliRunner

    from metaeval.cli import main

    def default(path, name):
        command = main
        for p in path:
            command = command.commands[p]
        return next(p for p in command.params if p.name == name).default

    assert default(["index", "build"], "mu") == retrieval.DEFAULT_MU
    assert default(["score"], "np_model") == retrieval.DEFAULT_NP_MODEL
    setting = sera_runs.SERASetting("x")
    assert setting.queries == ("plain",) and setting.cutoffs == sera_runs.DEFAULT_CUTOFFS == (5, 10)
    text = CliRunner().invoke(main, ["score", "--help"], terminal_width=1000).output
    assert "[default: plain]" in text and "[default: 5,10]" in text
