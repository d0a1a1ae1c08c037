"""The ranking commands over the warehouse: persisted rows equal the pure functions, incremental,
clear errors that leave the warehouse unchanged."""

from __future__ import annotations

import itertools
import json
import shlex

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval import Store
from metaeval.analyses import ranking, replicability
from metaeval.cli import main
from tests.conftest import run_cli as _cli

SUMMEVAL = ["--dataset", "summeval", "--human", "expert.relevance"]
REALSUMM = ["--dataset", "realsumm", "--human", "litepyramid.recall"]
COMMON = ["rouge-1.f1", "rouge-2.f1", "bertscore.recall"]     # in both datasets, higher is better


def _metrics(names):
    return [a for m in names for a in ("--metric", m)]


def _sql(db, query, params=None):
    with Store(db, read_only=True) as wh:
        return wh.sql(query, params)


def _counts(db):
    """Rows of analysis_runs and of every ranking table."""
    tables = ["analysis_runs", "pairwise_accuracy", "input_significance", "system_agreement", "winners",
              "replicability"]
    return [len(_sql(db, f"SELECT * FROM {t}")) for t in tables]


@pytest.mark.parametrize("scope, metrics", [(SUMMEVAL, ["rouge-2.f1", "bertscore.f1"]),
                                            (REALSUMM, ["rouge-1.recall", "js-2"])])
def test_accuracy_persisted_equals_pure_function_and_is_incremental(warehouse_copy, scope, metrics):
    dataset, human = scope[1], scope[3]
    out = _cli(warehouse_copy, "accuracy", *scope, *_metrics(metrics), "--coefficient", "spearman").output
    assert "pairwise_accuracy: run" in out and "input_significance: run" in out
    acc = _sql(warehouse_copy, "SELECT * FROM latest_pairwise_accuracy")
    sig = _sql(warehouse_copy, "SELECT * FROM latest_input_significance")
    assert len(acc) == 2 * len(metrics) and len(sig) == len(metrics)
    with Store(warehouse_copy, read_only=True) as wh:
        for row in acc.itertuples():
            m = wh.matrix(dataset, [row.metric, human])
            n, inputs = m[human].shape
            expected = ranking.pairwise_accuracy(m[row.metric], m[human], row.level)
            assert 0 <= row.accuracy <= 1 and row.accuracy == expected.accuracy
            assert (row.pairs, row.agree, row.flipped, row.human_ties) == \
                (expected.pairs, expected.agree, expected.flipped, expected.human_ties)
            assert row.pairs == (n * (n - 1) // 2) * (1 if row.level == "system" else inputs)
            assert (row.n_systems, row.n_inputs) == (n, inputs)
        for row in sig.itertuples():
            m = wh.matrix(dataset, [row.metric, human])
            expected = ranking.input_significance(m[row.metric], m[human], "spearman", 0.05, "two-sided")
            assert (row.n_significant, row.n_defined) == (expected.n_significant, expected.n_defined)
            assert row.percent_significant == pytest.approx(100 * row.n_significant / row.n_inputs)
    conventions = json.loads(acc["conventions"][0])
    assert conventions["metric_tolerance"] == conventions["human_tolerance"] == 0.0 and "tie" in conventions["ties"]
    again = _cli(warehouse_copy, "accuracy", *scope, *_metrics(metrics), "--coefficient", "spearman").output
    assert again.count("up to date; nothing computed") == 2


def test_systems_agreement_persisted_equals_pure_function(warehouse_copy):
    args = ["systems-agreement", *REALSUMM, "--metric", "rouge-2.recall", "--metric", "MoverScore",
            "--test", "ttest", "--test", "permutation", "--k", "200", "--seed", "3"]
    out = _cli(warehouse_copy, *args).output
    assert out.count("system_agreement: run") == 2
    rows = _sql(warehouse_copy, "SELECT * FROM latest_system_agreement ORDER BY metric, test")
    assert len(rows) == 4
    with Store(warehouse_copy, read_only=True) as wh:
        for row in rows.itertuples():
            m = wh.matrix("realsumm", [row.metric, "litepyramid.recall"])
            r = ranking.system_agreement(m[row.metric], m["litepyramid.recall"], row.test, 0.05, k=200, seed=3)
            assert (row.pairs, row.same, row.opposite, row.metric_only, row.human_only, row.neither) == \
                (r.pairs, r.same, r.opposite, r.metric_only, r.human_only, r.neither)
            assert row.pairs == 24 * 23 // 2
            if row.test == "permutation":
                assert (row.k, row.seed) == (200, 3)
            else:
                assert pd.isna(row.k) and pd.isna(row.seed)
    assert "up to date" in _cli(warehouse_copy, *args).output


def _beats_by_hand(tests, metrics, alpha, scores):
    """Two-sided rows: of the rows (a, b) and (b, a), the one whose metric_a has the higher
    correlation decides; significant with delta > 0: a beats b, delta < 0: b beats a."""
    beats = np.zeros((len(metrics), len(metrics)), bool)
    rows = {(t.metric_a, t.metric_b): t for t in tests.itertuples()}
    for i, j in itertools.combinations(range(len(metrics)), 2):
        first, second = (i, j) if scores[i] >= scores[j] else (j, i)
        t = rows[(metrics[first], metrics[second])]
        if t.p_adjusted <= alpha:
            if t.delta > 0:
                beats[first, second] = True
            elif t.delta < 0:
                beats[second, first] = True
    return beats


def test_winners_from_persisted_tests(warehouse_copy, tmp_path):
    metrics = ["rouge-1.f1", "rouge-2.f1", "rouge-l.f1", "bertscore.f1"]
    winners = ["winners", *SUMMEVAL, *_metrics(metrics), "--level", "system", "--coefficient", "pearson",
               "--method", "williams", "--correction", "holm"]
    before = _counts(warehouse_copy)
    result = _cli(warehouse_copy, *winners, ok=False)
    assert result.exit_code != 0 and "12 of the 12 `williams` tests" in result.output
    hint = (f"metaeval --db {warehouse_copy} compare --dataset summeval --human expert.relevance --metric rouge-1.f1 "
            "--metric rouge-2.f1 --metric rouge-l.f1 --metric bertscore.f1 --level system --coefficient pearson "
            "--method williams --alternative two-sided --correction holm --correction-group metric")
    assert hint in result.output
    assert _counts(warehouse_copy) == before
    done = CliRunner().invoke(main, shlex.split(hint)[1:], catch_exceptions=False)  # the hint, as pasted
    assert done.exit_code == 0 and "computed 12 of 12" in done.output, done.output
    out = _cli(warehouse_copy, *winners).output
    assert "winners: run" in out and "computed 4 of 4" in out
    rows = _sql(warehouse_copy, "SELECT * FROM latest_winners ORDER BY rank")
    tests = _sql(warehouse_copy, "SELECT * FROM latest_hypothesis_tests WHERE correction = 'holm'")
    with Store(warehouse_copy, read_only=True) as wh:
        m = wh.matrix("summeval", [*metrics, "expert.relevance"])
        scores = [np.corrcoef(np.nanmean(m[x], 1), np.nanmean(m["expert.relevance"], 1))[0, 1] for x in metrics]
    beats = _beats_by_hand(tests, metrics, 0.05, scores)
    expected = ranking.significance_clusters(scores, beats)
    by_metric = rows.set_index("metric").loc[metrics]
    np.testing.assert_allclose(by_metric["correlation"], scores, rtol=1e-12)
    assert list(by_metric["cluster"]) == list(expected.cluster)
    assert list(by_metric["is_winner"]) == [not beats[:, i].any() for i in range(4)]
    assert list(by_metric["n_beaten_by"]) == list(beats.sum(axis=0))
    assert all(json.loads(b) == [metrics[j] for j in np.flatnonzero(beats[:, i])]
               for i, b in enumerate(by_metric["beaten_by"]))
    assert "up to date; nothing computed" in _cli(warehouse_copy, *winners).output
    assert json.loads(rows["conventions"][0])["family_size"] == [3]
    # fewer metrics: Holm over another family, so the 4-metric tests are not used; the hint's
    # compare corrects within the 3 metrics (reusing the raw tests), then the ranking replaces
    # the latest one as a whole -- and back again
    subset = ["winners", *SUMMEVAL, *_metrics(metrics[:3]), *winners[-8:]]
    result = _cli(warehouse_copy, *subset, ok=False)
    assert "6 of the 6 `williams` tests" in result.output and "missing" in result.output
    hint = next(line.strip() for line in result.output.splitlines() if line.strip().startswith("metaeval --db"))
    assert "computed 0 of 6" in CliRunner().invoke(main, shlex.split(hint)[1:], catch_exceptions=False).output
    assert "computed 3 of 3" in _cli(warehouse_copy, *subset).output
    sub = _sql(warehouse_copy, "SELECT * FROM latest_winners")
    assert len(sub) == 3 and json.loads(sub["conventions"][0])["family_size"] == [2]
    assert "missing" in _cli(warehouse_copy, *winners, ok=False).output
    _cli(warehouse_copy, "compare", *SUMMEVAL, *_metrics(metrics), "--level", "system", "--coefficient", "pearson",
         "--method", "williams", "--correction", "holm")
    assert "computed 4 of 4" in _cli(warehouse_copy, *winners).output
    assert len(_sql(warehouse_copy, "SELECT * FROM latest_winners")) == 4
    # changed cells make the tests stale: winners says so and names the command
    path = tmp_path / "fix.csv"
    path.write_text("system,input,measure,value\nM0,cnn-test-404f859482d47c127868964a9a39d1a7645dd2e9,rouge-1.f1,0\n")
    _cli(warehouse_copy, "ingest", "table", path, "--dataset", "summeval", "--replace")
    result = _cli(warehouse_copy, *winners, ok=False)
    assert "computed on other cells than the warehouse now holds" in result.output
    assert f"metaeval --db {warehouse_copy} compare --dataset summeval" in result.output


def test_replicability_across_datasets(warehouse_copy):
    base = [*_metrics(COMMON), "--level", "system", "--coefficient", "kendall", "--method", "williams",
            "--alternative", "greater"]
    rep = ["replicability", *SUMMEVAL, *REALSUMM, *base]
    _cli(warehouse_copy, "compare", *SUMMEVAL, *base)
    before = _counts(warehouse_copy)
    result = _cli(warehouse_copy, *rep, ok=False)
    assert "realsumm: 6 of the 6 `williams` tests" in result.output
    assert f"metaeval --db {warehouse_copy} compare --dataset realsumm --human litepyramid.recall" in result.output
    assert _counts(warehouse_copy) == before
    _cli(warehouse_copy, "compare", *REALSUMM, *base)
    out = _cli(warehouse_copy, *rep).output
    assert "computed 12 of 12" in out
    rows = _sql(warehouse_copy, "SELECT * FROM latest_replicability")
    tests = _sql(warehouse_copy, "SELECT dataset, metric_a, metric_b, p_value FROM latest_hypothesis_tests")
    assert set(rows["dataset"]) == {"realsumm+summeval"} and set(rows["human"]) == {"litepyramid.recall+expert.relevance"}
    for row in rows.itertuples():
        p = tests[(tests.metric_a == row.metric_a) & (tests.metric_b == row.metric_b)].set_index("dataset")["p_value"]
        assert json.loads(row.p_values) == pytest.approx(p.to_dict())
        lo, hi = sorted(p)
        if row.pc_method == "bonferroni":      # by hand: p^{1/2} = 2 p_(1), p^{2/2} = max(2 p_(1), p_(2))
            pc = [min(1, 2 * lo), max(min(1, 2 * lo), hi)]
            smallest_first = p.sort_values(kind="stable").index.tolist()
            assert json.loads(row.identified) == sorted(smallest_first[:row.k_hat])
        else:
            pc = list(replicability.partial_conjunction(p.to_numpy(), 0.05, "fisher").pc_pvalues)
            assert row.identified is None or pd.isna(row.identified)
        assert json.loads(row.pc_pvalues) == pytest.approx(pc)
        assert row.k_hat == sum(x <= 0.05 for x in pc) and row.n_datasets == 2
    assert "up to date; nothing computed" in _cli(warehouse_copy, *rep).output
    for dataset in ("summeval", "realsumm"):  # the group's rows are found under each of its datasets
        out = _cli(warehouse_copy, "results", "replicability", "--dataset", dataset, "--format", "csv").output
        assert len(out.strip().splitlines()) == 1 + len(rows)
    # a prefix of a dataset's name is no dataset: refused (it matched no group row before)
    assert "unknown dataset 'summ'" in _cli(warehouse_copy, "results", "replicability", "--dataset", "summ", ok=False).output


@pytest.mark.parametrize("args, message", [
    (["accuracy", "--dataset", "nope", "--human", "x"], "unknown dataset 'nope'"),
    (["accuracy", "--dataset", "summeval", "--human", "expert.relevanc"], "its human judgments: expert.coherence"),
    (["systems-agreement", *SUMMEVAL, "--metric", "rouge-9*"], "--metric 'rouge-9*' matches no automatic measure"),
    (["accuracy", *SUMMEVAL, "--metric-tolerance", "-1"], "-1"),
    (["winners", *SUMMEVAL, "--metric", "rouge-1.f1"], "needs at least two"),
    (["replicability", *SUMMEVAL], "at least two datasets"),
    (["replicability", "--dataset", "summeval", "--dataset", "realsumm", "--human", "a", "--human", "b",
      "--human", "c"], "give one per dataset (2), or one for all"),
    (["replicability", *SUMMEVAL, *REALSUMM, "--metric", "rouge-3.f1"], "matches no automatic measure of 'realsumm'"),
])
def test_clear_errors_leave_the_warehouse_unchanged(warehouse_copy, args, message):
    before = _counts(warehouse_copy)
    result = _cli(warehouse_copy, *args, ok=False)
    assert result.exit_code != 0 and message in result.output, result.output
    assert _counts(warehouse_copy) == before


def test_help_results_and_export(warehouse_copy, tmp_path):
    for command in ("accuracy", "systems-agreement", "winners", "replicability"):
        result = CliRunner().invoke(main, [command, "--help"])
        assert result.exit_code == 0 and "Usage:" in result.output, command
    _cli(warehouse_copy, "accuracy", *SUMMEVAL, "--metric", "rouge-2.f1", "--level", "system",
         "--coefficient", "kendall")
    out = _cli(warehouse_copy, "results", "pairwise_accuracy", "--dataset", "summeval", "--format", "csv").output
    assert out.splitlines()[0].startswith("result_id,run_id,dataset,metric,human,level") and len(out.splitlines()) == 2
    target = tmp_path / "sig.parquet"
    _cli(warehouse_copy, "export", "input_significance", "--format", "parquet", "--out", target)
    assert len(pd.read_parquet(target)) == 1


def test_winners_ignore_tests_of_another_version(warehouse_copy):
    args = [*SUMMEVAL, *_metrics(COMMON[:2]), "--level", "system", "--coefficient", "pearson", "--method", "williams"]
    _cli(warehouse_copy, "compare", *args)
    assert "computed 2 of 2" in _cli(warehouse_copy, "winners", *args).output
    with Store(warehouse_copy) as wh:
        wh.con.execute("UPDATE analysis_runs SET version = '0.0.1' WHERE command = 'compare'")
    result = _cli(warehouse_copy, "winners", *args, ok=False)
    assert "2 of the 2 `williams` tests" in result.output and "missing" in result.output


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
def test_winners_with_a_constant_metric_count_its_tests_as_neither_win_nor_loss(db, tmp_path, alternative):
    """A constant metric's tests are undefined (p NULL). They used to be significant in both
    directions, and winners failed with "the tests contradict each other"."""
    rng = np.random.default_rng(2)
    rows = []
    for s in "ABCDEFGH":
        for d in ("d1", "d2", "d3", "d4", "d5", "d6"):
            h = rng.normal()
            rows += [(s, d, "h", h, "human"), (s, d, "good", h + 0.2 * rng.normal(), "automatic"),
                     (s, d, "noisy", rng.normal(), "automatic"), (s, d, "flat", 1.0, "automatic")]
    path = tmp_path / "flat.jsonl"
    pd.DataFrame(rows, columns=["system", "input", "measure", "value", "kind"]).to_json(path, orient="records",
                                                                                      lines=True)
    _cli(db, "ingest", "table", path, "--dataset", "flat")
    metrics = ["good", "noisy", "flat"]
    args = ["--dataset", "flat", "--human", "h", *_metrics(metrics), "--level", "system", "--coefficient",
            "pearson", "--method", "perm-both", "--alternative", alternative]
    _cli(db, "compare", *args, "--k", "100")
    out = _cli(db, "winners", *args).output
    assert "computed 3 of 3" in out
    tests = _sql(db, "SELECT * FROM latest_hypothesis_tests")
    won = {(t.metric_a, t.metric_b) if alternative == "greater" or t.delta > 0 else (t.metric_b, t.metric_a)
           for t in tests.itertuples() if not pd.isna(t.p_adjusted) and t.p_adjusted <= 0.05}
    assert won and all("flat" not in pair for pair in won)
    winners = _sql(db, "SELECT * FROM latest_winners").set_index("metric").loc[metrics]
    assert list(winners["n_beaten_by"]) == [sum(b == m for _, b in won) for m in metrics]
    assert json.loads(winners.loc["flat", "beaten_by"]) == []
    # undefined never wins or ranks (issue 24): no rank, cluster or winner status, listed apart
    flat = winners.loc["flat"]
    assert pd.isna(flat["correlation"]) and flat["status"] == "undefined"
    assert pd.isna(flat["rank"]) and pd.isna(flat["cluster"]) and pd.isna(flat["is_winner"])
    assert sorted(winners["rank"].dropna()) == [1, 2]
    assert "undefined (not ranked): flat" in out
    # rows as stored before the fix (a p-value without a delta) still decide nothing
    with Store(db) as wh:
        wh.con.execute("UPDATE hypothesis_tests SET p_value = 0.001, p_adjusted = 0.001, significant = true "
                       "WHERE delta IS NULL")
    assert "computed 3 of 3" in _cli(db, "winners", *args).output
    again = _sql(db, "SELECT * FROM latest_winners").set_index("metric").loc[metrics]
    assert list(again["n_beaten_by"]) == list(winners["n_beaten_by"]) and json.loads(again.loc["flat", "beaten_by"]) == []
