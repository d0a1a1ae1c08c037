"""Issue 24: conclusions a reader can trust -- k floors, tests that cannot resolve, one set of
defaults, undefined metrics never ranked (the cluster rules themselves: tests/test_ranking.py)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from metaeval.analyses.stats import correct_pvalues
from metaeval.analyses.stats import resolution as res
from tests.conftest import run_cli


# --- pure: floors and resolution ---------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [0.5, 0.1, 0.05, 0.01, 0.001, 0.3])
def test_min_resamples_is_the_smallest_k_meeting_the_rule(alpha):
    for purpose, tails in (("interval", 2), ("test", 1)):
        k = res.min_resamples(alpha, purpose)
        assert (k + 1) * alpha / tails >= 1 - 1e-12               # meets the rule
        assert k == 1 or k * alpha / tails < 1 - 1e-12            # k - 1 does not
    assert res.min_resamples(0.05, "interval") == 39 and res.min_resamples(0.05, "test") == 19


def test_correction_threshold_is_the_largest_p_the_correction_can_reject():
    """By brute force: the largest p such that a family of m p-values all equal to p (the most
    favourable configuration) gets an adjusted p-value <= alpha."""
    for correction in ("none", "bonferroni", "holm", "bh"):
        for m in (1, 2, 7, 40):
            t = res.correction_threshold(correction, m, 0.05)
            assert (correct_pvalues(np.full(m, t), correction) <= 0.05 + 1e-15).all()
            assert not (correct_pvalues(np.full(m, t * 1.001), correction) <= 0.05).any()


def test_family_resolution_the_issue_example():
    r = res.family_resolution("add-one", 1000, "holm", 1190, 0.05)
    assert not r.resolvable and r.smallest_p == 1 / 1001 and r.needed_p == 0.05 / 1190
    assert 1 / (r.k_needed + 1) <= r.needed_p < 1 / r.k_needed          # the smallest k that resolves
    assert "k >= 23799" in r.text() and "holm" in r.text()
    assert res.family_resolution("add-one", 1000, "holm", 34, 0.05).resolvable
    count = res.family_resolution("count", 1000, "bonferroni", 1190, 0.05)
    assert not count.resolvable and 1 / count.k_needed <= count.needed_p < 1 / (count.k_needed - 1)
    assert res.family_resolution("parametric", None, "holm", 10**6, 0.05).resolvable
    with pytest.raises(ValueError):
        res.pvalue_resolution("add-one", 0)


# --- through the CLI ---------------------------------------------------------------------------------
@pytest.fixture
def small(tmp_path):
    db = tmp_path / "w.duckdb"
    run_cli(db, "demo", "--systems", "5", "--inputs", "8", "--k", "40")
    return db


def test_k_below_the_floor_is_refused_in_one_line(small):
    for args, floor in ((["ci", "--k", "1"], 39), (["ci", "--k", "38"], 39), (["ci", "--k", "98", "--alpha", "0.02"], 99),
                        (["compare", "--method", "boot-both", "--k", "1"], 19),
                        (["compare", "--method", "perm-both", "--k", "18"], 19)):
        out = run_cli(small, *args, "--dataset", "demo", "--human", "expert.relevance", ok=False)
        assert out.exit_code != 0 and f"--k {floor} or more" in out.output and "Traceback" not in out.output
        assert len(out.output.strip().splitlines()) == 1
    run_cli(small, "ci", "--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--k", "39")
    run_cli(small, "compare", "--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--k", "19")


def test_demo_checks_k_before_writing(tmp_path):
    db = tmp_path / "w.duckdb"
    out = run_cli(db, "demo", "--k", "5", ok=False)
    assert "--k 39 or more" in out.output and not db.exists()


def test_unresolvable_family_is_said_and_never_significant(small):
    """Holm over all 12 ordered pairs of 4 metrics (group all) needs p <= 0.05/12: k = 40 gives at
    best 1/41 -- nothing can be significant, and compare says so; winners gives no cluster."""
    base = ["--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--coefficient", "pearson",
            "--correction-group", "all"]
    out = run_cli(small, "compare", *base, "--k", "40").output
    assert "not a finding" in out and "k >= 239 resamples would be needed" in out
    from metaeval.core import Store

    with Store(small, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE correction_group = 'all'")
    assert len(rows) == 12 and not rows["significant"].any()
    conv = json.loads(rows["conventions"][0])["resolution"]
    assert conv["resolvable"] is False and conv["k_needed"] == 239 and conv["family_tests"] == 12
    won = run_cli(small, "winners", *base).output
    assert "not a finding" in won
    with Store(small, read_only=True) as wh:
        w = wh.sql("SELECT * FROM latest_winners")
    assert set(w["status"]) == {"unresolvable"} and w["cluster"].isna().all() and w["is_winner"].isna().all()
    # with enough resamples the same family resolves
    out = run_cli(small, "compare", *base, "--k", "239").output
    assert "not a finding" not in out


def test_one_set_of_defaults_compare_then_winners_and_heatmap(small, tmp_path):
    """compare with its defaults writes what winners and plot heatmap read with theirs."""
    base = ["--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--coefficient", "kendall"]
    run_cli(small, "compare", *base, "--k", "40")
    out = run_cli(small, "winners", *base).output
    assert "winners: run" in out
    run_cli(small, "plot", "heatmap", "--dataset", "demo", "--human", "expert.relevance", "--level", "system",
            "--coefficient", "kendall", "--out", tmp_path / "h.png")
    assert (tmp_path / "h.png").exists()
    import click

    from metaeval.cli import main
    from metaeval.cli.commands import report
    from metaeval.runs.engine import parameters

    winners = main.get_command(click.Context(main), "winners")    # its family's generated command
    compare = main.get_command(click.Context(main), "compare")    # its family's generated command

    def default(command, name):
        return next(p.default for p in command.params if p.name == name)

    for command in (compare, winners, report.plot_heatmap):
        assert default(command, "alternative") == parameters.DEFAULT_ALTERNATIVE
        assert default(command, "correction") == parameters.DEFAULT_CORRECTION
        assert default(command, "correction_group") == parameters.DEFAULT_CORRECTION_GROUP
    from metaeval.cli.commands import evaluate

    assert default(evaluate.evaluate, "correction") == parameters.DEFAULT_CORRECTION
    assert default(evaluate.evaluate, "cluster_rule") == default(winners, "cluster_rule") == parameters.DEFAULT_CLUSTER_RULE


def test_evaluate_gives_clusters_only_from_every_pair(small, tmp_path):
    base = ["evaluate", "--metric", "sim-high.f1", "--dataset", "demo", "--human", "expert.relevance",
            "--level", "system", "--coefficient", "kendall", "--k", "100"]   # 1/101 < 0.05/3: resolvable
    rows = pd.DataFrame(json.loads(run_cli(small, *base, "--format", "json").stdout))
    assert rows["cluster"].isna().all() and rows["cluster_note"].str.contains("were not tested").all()
    text = run_cli(small, *base).output
    assert "no clusters" in text and "--all-pairs" in text
    rows = pd.DataFrame(json.loads(run_cli(small, *base, "--all-pairs", "--format", "json").stdout))
    assert rows["cluster"].notna().all() and rows["cluster_note"].isna().all()
    # the clusters evaluate gives with every pair are the ones winners gives
    run_cli(small, "winners", "--dataset", "demo", "--human", "expert.relevance", "--level", "system",
            "--coefficient", "kendall")
    from metaeval.core import Store

    with Store(small, read_only=True) as wh:
        w = wh.sql("SELECT metric, cluster, rank FROM latest_winners").set_index("metric")
    got = rows.set_index("metric")
    assert all(int(got.loc[m, "cluster"]) == int(w.loc[m, "cluster"]) for m in w.index)
    assert all(int(got.loc[m, "rank"]) == int(w.loc[m, "rank"]) for m in w.index)
    assert not math.isnan(float(got["correlation"].iloc[0]))


def test_winners_suggests_only_a_compare_that_works(tmp_path):
    """A metric with fewer than 3 systems in common with the human is skipped by compare: the
    command winners suggests leaves it out, so running it makes winners work (issue 24, 7)."""
    rng = np.random.default_rng(5)
    rows = []
    for s in range(5):
        for i in range(6):
            h = rng.normal()
            rows += [(f"s{s}", f"i{i}", "h", h, "human"), (f"s{s}", f"i{i}", "good", h + rng.normal(0, .3), "automatic"),
                     (f"s{s}", f"i{i}", "noisy", rng.normal(), "automatic")]
            if s < 2:
                rows.append((f"s{s}", f"i{i}", "sparse", rng.normal(), "automatic"))
    path = tmp_path / "scores.jsonl"
    pd.DataFrame(rows, columns=["system", "input", "measure", "value", "kind"]).to_json(path, orient="records",
                                                                                      lines=True)
    db = tmp_path / "w.duckdb"
    run_cli(db, "ingest", "table", path, "--dataset", "d")
    args = ["--dataset", "d", "--human", "h", "--level", "system", "--coefficient", "pearson"]
    out = run_cli(db, "winners", *args, ok=False).output
    hint = next(line.strip() for line in out.splitlines() if line.strip().startswith("metaeval --db"))
    assert "sparse" not in hint and "--metric good" in hint and "--metric noisy" in hint
    import shlex

    from click.testing import CliRunner

    from metaeval.cli import main

    done = CliRunner().invoke(main, [*shlex.split(hint)[1:], "--k", "100"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    won = run_cli(db, "winners", *args).output
    assert "skipped: 'sparse'" in won and "winners: run" in won


def test_significant_at_never_counts_an_uncertified_sequential_row():
    from metaeval.analyses.stored_tests import StoredTests

    def significant_at(rows, alpha):   # a family whose resolution is not known (no k): p and the certificate decide
        return StoredTests.from_frame(rows, formula="add-one", correction="bonferroni").significant(alpha)

    rows = pd.DataFrame({"p_adjusted": [0.01, 0.01, 0.01, 0.2, np.nan],
                         "significant": [True, False, True, False, None],
                         "alpha": [0.05, 0.05, 0.1, 0.05, 0.05],
                         "risk": [None, 1e-3, 1e-3, None, None]})
    # fixed k: p_adjusted <= alpha; sequential: certified at this very alpha only
    assert significant_at(rows, 0.05).tolist() == [True, False, False, False, False]
    assert significant_at(rows.drop(columns="risk"), 0.05).tolist() == [True, True, True, False, False]


def test_a_bootstrap_family_that_cannot_resolve_wins_nothing(tmp_path):
    """A paired bootstrap p of 0 (count / k) only says p < 1/k: Holm over 12 tests at k = 40
    cannot resolve, so its corrected 0 is neither significant nor a win in winners."""
    small = tmp_path / "w.duckdb"
    run_cli(small, "demo", "--k", "40")          # 12 systems x 50 inputs: some pairs far apart
    base = ["--dataset", "demo", "--human", "expert.relevance", "--level", "summary", "--coefficient", "pearson",
            "--method", "boot-both", "--correction-group", "all"]
    run_cli(small, "compare", *base, "--k", "40")
    from metaeval.core import Store

    with Store(small, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE method = 'boot-both'")
    assert (rows["p_adjusted"] <= 0.05).any(), "the case needs a corrected p of 0"   # (would win before)
    assert not rows["significant"].any()
    out = run_cli(small, "winners", *base).output
    assert "not a finding" in out
    with Store(small, read_only=True) as wh:
        w = wh.sql("SELECT * FROM latest_winners WHERE method = 'boot-both'")
    assert (w["n_beaten_by"] == 0).all() and all(json.loads(b) == [] for b in w["beaten_by"])
    assert set(w["status"]) == {"unresolvable"} and w["cluster"].isna().all()
