"""Corpus-level BLEU as a system-level measure (issue 33 item 12): each cell's sufficient statistics
stored, a system's corpus BLEU the BLEU of their sums (sacrebleu's corpus_score), against sacrebleu,
a hand-worked example, scipy and brute-force resampling loops."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats as sps

from metaeval import Store
from metaeval.analyses.text import SummaryRecord, TextCorpus, bleu_statistics
from metaeval.analyses.text.mt import bleu_from_statistics, corpus_bleu, system_bleu
from tests.conftest import run_cli

sacrebleu = pytest.importorskip("sacrebleu", reason="sacrebleu (a dependency) is needed for BLEU's statistics")

# Two systems x three segments whose n-gram counts are worked out by hand below.
HAND = {
    "A": [("the cat sat on the mat", "the cat sat on the mat"),
          ("a dog ran", "a dog ran away"),
          ("hello world", "hello there world")],
    "B": [("the dog sat", "the cat sat on the mat"),
          ("a dog ran away", "a dog ran away"),
          ("hello there world", "hello there world")],
}
#: (hyp_len, ref_len, correct_1..4, total_1..4) of each segment, counted by hand
HAND_STATS = {
    "A": [(6, 6, 6, 5, 4, 3, 6, 5, 4, 3), (3, 4, 3, 2, 1, 0, 3, 2, 1, 0), (2, 3, 2, 0, 0, 0, 2, 1, 0, 0)],
    "B": [(3, 6, 2, 0, 0, 0, 3, 2, 1, 0), (4, 4, 4, 3, 2, 1, 4, 3, 2, 1), (3, 3, 3, 2, 1, 0, 3, 2, 1, 0)],
}


def _corpus(texts: dict[str, list[tuple[str, str | list[str]]]]) -> TextCorpus:
    return TextCorpus([SummaryRecord(system, f"d{j}", hyp, [refs] if isinstance(refs, str) else refs)
                       for system, rows in texts.items() for j, (hyp, refs) in enumerate(rows)])


def test_hand_worked_statistics_and_corpus_bleu():
    S = bleu_statistics(_corpus(HAND))
    assert S.tolist() == [list(r) for s in "AB" for r in HAND_STATS[s]]
    # A: c = 11, r = 13, p = 11/11, 7/8, 5/5, 3/3; B: c = 10, r = 13, p = 9/10, 5/7, 3/4, 1/1
    a = math.exp(1 - 13 / 11) * 100 * (7 / 8) ** 0.25
    b = math.exp(1 - 13 / 10) * 100 * (0.9 * 5 / 7 * 0.75 * 1.0) ** 0.25
    by_system = system_bleu(S.reshape(2, 3, 10))
    assert by_system == pytest.approx([a, b], rel=1e-12)
    assert corpus_bleu(_corpus(HAND)) == pytest.approx({"A": a, "B": b}, rel=1e-12)   # sacrebleu's corpus_score


def _fabricated(seed: int, n_systems: int = 4, n_inputs: int = 6) -> dict[str, list[tuple[str, list[str]]]]:
    rng = np.random.default_rng(seed)
    words = "the a cat dog sat ran on mat away home fast slow red , .".split()
    refs = [[" ".join(rng.choice(words, rng.integers(4, 12))) for _ in range(1 + j % 2)] for j in range(n_inputs)]
    return {f"s{s}": [(" ".join(rng.choice(words, rng.integers(1, 12))), refs[j]) for j in range(n_inputs)]
            for s in range(n_systems)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_summed_statistics_equal_sacrebleu_corpus_score(seed):
    texts = _fabricated(seed)
    corpus = _corpus(texts)
    S = bleu_statistics(corpus).reshape(len(texts), -1, 10)
    expected = corpus_bleu(corpus)
    assert system_bleu(S) == pytest.approx([expected[s] for s in texts], rel=1e-12, abs=1e-12)


def test_bleu_from_statistics_equals_sacrebleu_compute_bleu_with_smoothing():
    metric = sacrebleu.metrics.BLEU()
    rng = np.random.default_rng(5)
    S = rng.integers(0, 5, size=(500, 10))
    S[:, 2:6] = np.minimum(S[:, 2:6], S[:, 6:])   # matches never exceed the candidate's n-grams
    expected = [metric._compute_score_from_stats(list(row)).score for row in S]
    assert bleu_from_statistics(S) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_input_resampling_equals_recomputing_corpus_bleu_per_resample():
    texts = _fabricated(3, n_systems=3, n_inputs=5)
    S = bleu_statistics(_corpus(texts)).reshape(3, 5, 10)
    rng = np.random.default_rng(0)
    draws = rng.integers(0, 5, size=(40, 5))
    weights = np.stack([np.bincount(d, minlength=5) for d in draws])
    got = system_bleu(S, weights)
    for b, d in enumerate(draws):   # the resampled corpus scored again by sacrebleu
        resampled = {s: [texts[s][j] for j in d] for s in texts}
        again = corpus_bleu(_corpus(resampled))
        assert got[b] == pytest.approx([again[s] for s in texts], rel=1e-12, abs=1e-12)


# --- in the warehouse -------------------------------------------------------------------------
def _files(tmp_path, texts):
    """The texts as SacreROUGE JSONL and a human score per cell as a table: their paths and values."""
    lines = []
    for system, rows in texts.items():
        for j, (hyp, refs) in enumerate(rows):
            lines.append(json.dumps({"instance_id": f"d{j}", "summarizer_id": system, "summarizer_type": "peer",
                                     "summary": {"text": [hyp]},
                                     "references": [{"summarizer_id": f"r{k}", "text": [r]} for k, r in enumerate(refs)]}))
    (tmp_path / "texts.jsonl").write_text("\n".join(lines) + "\n")
    rng = np.random.default_rng(1)
    human = {(s, f"d{j}"): float(rng.normal()) for s in texts for j in range(len(rows))}
    (tmp_path / "human.csv").write_text("system,input,human\n" + "".join(
        f"{s},{i},{v!r}\n" for (s, i), v in human.items()))
    return tmp_path / "texts.jsonl", tmp_path / "human.csv", human


def test_a_warehouse_made_before_the_table_works_and_gets_it(tmp_path):
    """A schema-6 warehouse made before bleu_statistics: every command works without it, and
    the first corpus-bleu score creates it (as `metaeval init` would)."""
    jsonl, table, _ = _files(tmp_path, _fabricated(2, n_systems=3, n_inputs=3))
    db = tmp_path / "old.duckdb"
    with Store.create(db) as wh:
        wh.con.execute("DROP TABLE bleu_statistics")
    run_cli(db, "ingest", "table", table, "--dataset", "d", "--human", "human")
    run_cli(db, "ingest", "summaries", jsonl, "--dataset", "d")
    run_cli(db, "score", "d", "--metric", "bleu")
    run_cli(db, "correlate", "--dataset", "d", "--human", "human", "--level", "system")
    run_cli(db, "drop", "measure", "d", "bleu", "--cascade")
    run_cli(db, "score", "d", "--metric", "corpus-bleu")
    run_cli(db, "correlate", "--dataset", "d", "--human", "human", "--metric", "corpus-bleu", "--level", "system")
    run_cli(db, "drop", "dataset", "d", "--cascade")
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT count(*) AS n FROM bleu_statistics")["n"][0] == 0


@pytest.fixture
def scored(tmp_path):
    """4 systems x 6 inputs with texts, a human score, sentence BLEU and corpus BLEU scored."""
    texts = _fabricated(7)
    jsonl, table, human = _files(tmp_path, texts)
    db = tmp_path / "w.duckdb"
    Store.create(db).close()
    run_cli(db, "ingest", "table", table, "--dataset", "d", "--human", "human")
    run_cli(db, "ingest", "summaries", jsonl, "--dataset", "d")
    run_cli(db, "score", "d", "--metric", "corpus-bleu", "--metric", "bleu")
    expected = corpus_bleu(_corpus(texts))
    means = {s: np.mean([human[(s, f"d{j}")] for j in range(6)]) for s in texts}
    return db, texts, expected, means


def test_score_stores_statistics_and_a_measure_without_cells(scored):
    db, texts, expected, _ = scored
    with Store(db, read_only=True) as wh:
        from metaeval.runs.engine import system_level

        assert system_level.measures(wh, "d") == ["corpus-bleu"]
        n_cells = wh.sql("SELECT count(*) AS n FROM scores JOIN measures USING (measure_id) "
                         "WHERE name = 'corpus-bleu'")["n"][0]
        frame = system_level.statistics(wh, "d", "corpus-bleu")
    assert n_cells == 0 and len(frame) == 24
    S = frame.iloc[:, 2:].to_numpy().reshape(4, 6, 10)
    assert system_bleu(S) == pytest.approx([expected[s] for s in sorted(texts)], rel=1e-12)
    out = run_cli(db, "score", "d", "--metric", "corpus-bleu").output   # again: nothing changes
    assert "inserted 0" in out or "unchanged" in out or "0 values" in out, out


def test_system_level_correlation_equals_scipy(scored):
    db, texts, expected, means = scored
    run_cli(db, "correlate", "--dataset", "d", "--human", "human", "--metric", "corpus-bleu", "--level", "system")
    x = [expected[s] for s in sorted(texts)]
    z = [means[s] for s in sorted(texts)]
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT coefficient, value FROM latest_correlations WHERE metric = 'corpus-bleu'")
    got = dict(zip(rows["coefficient"], rows["value"]))
    assert got["pearson"] == pytest.approx(sps.pearsonr(x, z)[0], abs=1e-12)
    assert got["spearman"] == pytest.approx(sps.spearmanr(x, z)[0], abs=1e-12)
    assert got["kendall"] == pytest.approx(sps.kendalltau(x, z)[0], abs=1e-12)


def test_sentence_bleu_in_the_same_scope_keeps_its_system_values(scored):
    """A scope naming corpus-bleu reads every measure as system scores: the other metrics'
    system-level correlations and boot-systems intervals are the ones computed on their cells."""
    db, *_ = scored
    query = ("SELECT coefficient, estimate, lower, upper FROM latest_confidence_intervals "
             "WHERE metric = 'bleu' ORDER BY coefficient")
    ci = ("ci", "--dataset", "d", "--human", "human", "--level", "system", "--ci-method", "boot-systems", "--k", "50")
    run_cli(db, "correlate", "--dataset", "d", "--human", "human", "--metric", "bleu", "--level", "system")
    run_cli(db, *ci, "--metric", "bleu")
    with Store(db, read_only=True) as wh:
        alone = wh.sql("SELECT coefficient, value FROM latest_correlations ORDER BY coefficient")
        alone_ci = wh.sql(query)
    run_cli(db, "correlate", "--dataset", "d", "--human", "human", "--metric", "bleu", "--metric", "corpus-bleu",
            "--level", "system")
    run_cli(db, *ci, "--metric", "bleu", "--metric", "corpus-bleu")
    with Store(db, read_only=True) as wh:
        both = wh.sql("SELECT coefficient, value FROM latest_correlations WHERE metric = 'bleu' ORDER BY coefficient")
        both_ci = wh.sql(query)
    assert both["value"].tolist() == pytest.approx(alone["value"].tolist(), abs=1e-12)
    assert both_ci.to_numpy().tolist() == alone_ci.to_numpy().tolist()


@pytest.mark.parametrize("args, words", [
    (("correlate", "--level", "summary"), "--level 'system'"),
    (("ci", "--level", "summary", "--ci-method", "boot-inputs"), "--level 'system'"),
    (("compare", "--level", "system", "--method", "perm-both", "--metric", "bleu"), "--method 'williams'"),
])
def test_what_needs_cells_is_refused_in_one_line(scored, args, words):
    db, *_ = scored
    result = run_cli(db, args[0], "--dataset", "d", "--human", "human", "--metric", "corpus-bleu", *args[1:], ok=False)
    assert result.exit_code != 0 and words in result.output and "system-level" in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


def test_other_commands_refuse_or_use_system_scores(scored):
    db, texts, expected, _ = scored
    out = run_cli(db, "system-tests", "--dataset", "d", "--measure", "corpus-bleu", "--method", "t-test", ok=False)
    assert "system-level" in out.output and len(out.output.strip().splitlines()) == 1
    out = run_cli(db, "rank-change", "--dataset", "d", "--metric", "corpus-bleu", "--metric", "bleu",
                  "--aggregate", "median", ok=False)
    assert "--aggregate 'mean'" in out.output
    run_cli(db, "rank-change", "--dataset", "d", "--metric", "corpus-bleu", "--metric", "bleu")
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT system, score_a FROM latest_rank_changes WHERE measure_a = 'corpus-bleu'")
    assert dict(zip(rows["system"], rows["score_a"])) == pytest.approx(expected, rel=1e-12)
    out = run_cli(db, "accuracy", "--dataset", "d", "--human", "human", "--metric", "corpus-bleu", "--level", "system",
                  ok=False)
    assert "system-level" in out.output and len(out.output.strip().splitlines()) == 1
    run_cli(db, "correlate", "--dataset", "d", "--human", "human", "--level", "system")   # by default: with cells
    with Store(db, read_only=True) as wh:
        assert set(wh.sql("SELECT DISTINCT metric FROM latest_correlations")["metric"]) == {"bleu"}
    run_cli(db, "ci", "--dataset", "d", "--human", "human", "--metric", "corpus-bleu", "--level", "system",
            "--ci-method", "boot-systems", "--k", "50")


def test_drop_measure_removes_its_statistics(scored):
    db, *_ = scored
    run_cli(db, "drop", "measure", "d", "corpus-bleu")
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT count(*) AS n FROM bleu_statistics")["n"][0] == 0


@pytest.mark.parametrize("method", ["inputs", "both"])
def test_input_resampling_ci_equals_a_brute_loop_rescoring_each_resample(scored, method):
    """ci boot-inputs / boot-both of corpus-bleu: each resample's corpus BLEU is sacrebleu's
    corpus_score of the resampled corpus (the drawn inputs, with multiplicity), the human's system
    score its mean over them; the same draws as every bootstrap of this seed."""
    from functools import partial

    from metaeval.analyses.stats import resampling

    db, texts, _, _ = scored
    k = 40
    run_cli(db, "ci", "--dataset", "d", "--human", "human", "--metric", "corpus-bleu", "--level", "system",
            "--coefficient", "pearson", "--ci-method", f"boot-{method}", "--k", k, "--seed", 3)
    with Store(db, read_only=True) as wh:
        row = wh.sql("SELECT lower, upper, n_valid FROM latest_confidence_intervals WHERE metric = 'corpus-bleu' "
                     f"AND method = 'boot-{method}'").iloc[0]
        human = wh.matrix("d", "human")
    systems = sorted(texts)
    assert list(human.systems) == systems and list(human.inputs) == [f"d{j}" for j in range(6)]
    Z = human["human"]
    draw = partial(resampling.bootstrap_indices, n_systems=4, n_inputs=6, method=method)
    rows, cols = resampling.ResampleStream(np.random.SeedSequence(3), draw).take(0, k)
    samples = []
    for b in range(k):
        who = [systems[i] for i in (rows[b] if rows is not None else range(4))]
        again = corpus_bleu(_corpus({s: [texts[s][j] for j in cols[b]] for s in systems}))
        x = [again[s] for s in who]
        z = [Z[systems.index(s), cols[b]].mean() for s in who]
        samples.append(sps.pearsonr(x, z)[0] if np.ptp(x) > 0 and np.ptp(z) > 0 else np.nan)
    samples = np.array(samples)
    valid = samples[~np.isnan(samples)]
    assert row["n_valid"] == len(valid)
    assert [row["lower"], row["upper"]] == pytest.approx(list(np.percentile(valid, [2.5, 97.5])), abs=1e-12)


def test_input_resampling_of_a_metric_with_cells_is_unchanged_beside_corpus_bleu(scored):
    db, *_ = scored
    ci = ("ci", "--dataset", "d", "--human", "human", "--level", "system", "--ci-method", "boot-both", "--k", "50")
    query = "SELECT coefficient, lower, upper FROM latest_confidence_intervals WHERE metric = 'bleu' ORDER BY 1"
    run_cli(db, *ci, "--metric", "bleu")
    with Store(db, read_only=True) as wh:
        alone = wh.sql(query)
    run_cli(db, *ci, "--metric", "bleu", "--metric", "corpus-bleu")
    with Store(db, read_only=True) as wh:
        both = wh.sql(query)
    assert both[["lower", "upper"]].to_numpy() == pytest.approx(alone[["lower", "upper"]].to_numpy(), abs=1e-12)


def test_paired_bootstrap_over_inputs_equals_a_brute_loop(scored):
    """compare boot-inputs, corpus-bleu vs bleu: delta_b = r_b(corpus BLEU, human) - r_b(mean
    sentence BLEU, human) with each resample rescored by sacrebleu; two-sided p =
    #{|delta_b - delta| >= |delta|} / k'."""
    from functools import partial

    from metaeval.analyses.stats import resampling

    db, texts, expected, means = scored
    k = 40
    run_cli(db, "compare", "--dataset", "d", "--human", "human", "--metric", "corpus-bleu", "--metric", "bleu",
            "--level", "system", "--coefficient", "pearson", "--method", "boot-inputs", "--k", k, "--seed", 5)
    with Store(db, read_only=True) as wh:
        row = wh.sql("SELECT delta, p_value FROM latest_hypothesis_tests WHERE metric_a = 'corpus-bleu'").iloc[0]
        m = wh.matrix("d", ["human", "bleu"])
    systems = sorted(texts)
    Z, B = m["human"], m["bleu"]
    x0 = [expected[s] for s in systems]
    delta = sps.pearsonr(x0, [means[s] for s in systems])[0] - sps.pearsonr(B.mean(axis=1), Z.mean(axis=1))[0]
    assert row["delta"] == pytest.approx(delta, abs=1e-12)
    draw = partial(resampling.bootstrap_indices, n_systems=4, n_inputs=6, method="inputs")
    _, cols = resampling.ResampleStream(np.random.SeedSequence(5), draw).take(0, k)
    deltas = []
    for c in cols:
        again = corpus_bleu(_corpus({s: [texts[s][j] for j in c] for s in systems}))
        z = Z[:, c].mean(axis=1)
        deltas.append(sps.pearsonr([again[s] for s in systems], z)[0] - sps.pearsonr(B[:, c].mean(axis=1), z)[0])
    deltas = np.array(deltas)
    assert row["p_value"] == pytest.approx(np.mean(np.abs(deltas - delta) >= abs(delta) - 1e-12), abs=1e-12)


def _references(texts, systems):
    """sacrebleu's reference streams of the fabricated corpus (an input's missing reference: None)."""
    refs = [texts[systems[0]][j][1] for j in range(len(texts[systems[0]]))]
    return [[r[k] if k < len(r) else None for r in refs] for k in range(max(map(len, refs)))]


@pytest.mark.parametrize("method", ["bootstrap", "randomization"])
def test_randomised_tests_of_corpus_bleu_equal_a_brute_loop(scored, method):
    """system-tests of a corpus BLEU (Graham 2015: randomised tests only): each resample's corpus
    BLEU of both systems rescored by sacrebleu on the resampled (or exchanged) corpus, with the
    draws of the seed; the p of the cell tests' formulas."""
    from functools import partial

    from metaeval.analyses.stats import resampling

    db, texts, expected, _ = scored
    k = 60
    run_cli(db, "system-tests", "--dataset", "d", "--measure", "corpus-bleu", "--method", method, "--k", k,
            "--seed", 3)
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_system_tests WHERE measure = 'corpus-bleu'")
    systems = sorted(texts)
    assert len(rows) == 6 and set(rows["method"]) == {method}
    draw = (partial(resampling.bootstrap_indices, n_systems=1, n_inputs=6, method="inputs") if method == "bootstrap"
            else partial(resampling.permutation_masks, n_systems=1, n_inputs=6, method="inputs"))
    drawn = resampling.ResampleStream(np.random.SeedSequence(3), draw).take(0, k)[-1]
    refs = _references(texts, systems)

    def bleu(hyps, inputs):
        return sacrebleu.corpus_bleu(hyps, [[stream[j] for j in inputs] for stream in refs]).score

    for r in rows.itertuples():
        a, b = [h for h, _ in texts[r.system_a]], [h for h, _ in texts[r.system_b]]
        assert (r.mean_a, r.mean_b) == pytest.approx((expected[r.system_a], expected[r.system_b]), abs=1e-9)
        delta = expected[r.system_a] - expected[r.system_b]
        stats = []
        for d in drawn:
            if method == "bootstrap":
                stats.append(bleu([a[j] for j in d], d) - bleu([b[j] for j in d], d))
            else:
                swap = d[0]
                first = [b[j] if swap[j] else a[j] for j in range(6)]
                second = [a[j] if swap[j] else b[j] for j in range(6)]
                stats.append(bleu(first, range(6)) - bleu(second, range(6)))
        stats = np.array(stats)
        tol = 1e-9
        extreme = (np.abs(stats - delta) if method == "bootstrap" else np.abs(stats)) >= abs(delta) - tol
        assert r.delta == pytest.approx(delta, abs=1e-9) and r.n == 6 and r.n_valid == k
        assert r.p_value == pytest.approx((1 + extreme.sum()) / (1 + k), abs=1e-12), (r.system_a, r.system_b)


def test_approximate_randomization_of_corpus_bleu_agrees_with_sacrebleu_paired_ar(tmp_path):
    """sacrebleu's own paired AR test (two-sided, p = (1 + #{|T_b| > |T|}) / (1 + k), its own
    random swaps) against ours on the same corpus: equal within Monte-Carlo error. (Where T_b
    ties |T| -- two systems of equal BLEU, a tiny corpus -- ours counts the tie as extreme, the
    conservative side, and sacrebleu does not: 40 inputs here make ties rare.)"""
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    texts = _fabricated(11, n_inputs=40)
    texts["s3"] = [(refs[0] if j % 4 == 0 else hyp, refs) for j, (hyp, refs) in enumerate(texts["s3"])]  # better
    jsonl, table, _ = _files(tmp_path, texts)
    db = tmp_path / "ar.duckdb"
    Store.create(db).close()
    run_cli(db, "ingest", "table", table, "--dataset", "d", "--human", "human")
    run_cli(db, "ingest", "summaries", jsonl, "--dataset", "d")
    run_cli(db, "score", "d", "--metric", "corpus-bleu")
    k = 2000
    run_cli(db, "system-tests", "--dataset", "d", "--measure", "corpus-bleu", "--method", "randomization",
            "--k", k)
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_system_tests WHERE measure = 'corpus-bleu'")
    systems = sorted(texts)
    refs = _references(texts, systems)
    named = [(s, [h for h, _ in texts[s]]) for s in systems]
    _, scores = PairedTest(named, {"BLEU": BLEU()}, refs, test_type="ar", n_samples=k)()
    theirs = {systems[0]: None, **{s: res.p_value for s, res in zip(systems[1:], scores["BLEU"][1:])}}
    compared = 0
    for r in rows[rows["system_a"] == systems[0]].itertuples():
        p = theirs[r.system_b]
        sd = math.sqrt(max(p * (1 - p), 1e-4) / k)
        assert abs(r.p_value - p) <= 4 * sd + 2 / k, (r.system_b, r.p_value, p)
        compared += 1
    assert compared == 3 and theirs["s3"] < 0.01


def test_system_tests_of_corpus_bleu_refuse_what_needs_cells_writing_nothing(scored):
    from tests.conftest import digest

    db, *_ = scored
    before = digest(db)
    for extra, words in ((["--method", "wilcoxon"], "--method 'wilcoxon' pairs per-input values; choose --method"),
                         (["--method", "bootstrap", "--shapiro"], "leave out --shapiro")):
        out = run_cli(db, "system-tests", "--dataset", "d", "--measure", "corpus-bleu", *extra, ok=False)
        assert out.exit_code != 0 and words in out.output and len(out.output.strip().splitlines()) == 1, out.output
    assert digest(db) == before
    text = run_cli(db, "system-tests", "--dataset", "d", "--measure", "corpus-bleu", "--method", "bootstrap",
                   "--k", "50").output
    again = run_cli(db, "system-tests", "--dataset", "d", "--measure", "corpus-bleu", "--method", "bootstrap",
                    "--k", "50").output
    assert text == again
    with Store(db, read_only=True) as wh:
        assert len(wh.sql("SELECT * FROM analysis_runs WHERE command = 'system-tests'")) == 1   # reused
