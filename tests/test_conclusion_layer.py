"""Issue 32 item 2: one conclusion layer (analyses/conclusions.py) -- its rules checked against
independent computations, and the defects found under hostile input, each reproduced through
the command line: clusters and bold from a judges family that cannot resolve, a bootstrap p of 0
printed finer than k resolves, a one-item judge clustered and given a Kendall tau, and compare's
bootstrap tests decided on k where only n_valid resamples were defined."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval.analyses import conclusions as cl
from metaeval.analyses.stats import correct_pvalues
from metaeval.cli import main
from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]
PREFERENCES = ROOT / "docs" / "examples" / "preferences.csv"
FACTUALITY = ROOT / "examples" / "factuality"


# --- pure rules -------------------------------------------------------------------------------------
def test_decide_adjusts_and_vetoes_as_the_rules_say():
    p = np.array([0.0, 0.01, np.nan, 0.2])
    v = cl.decide(p, formula="count", k=1000, correction="holm", alpha=0.05)
    expected = correct_pvalues(p, "holm")
    assert np.array_equal(np.isnan(v.adjusted), np.isnan(expected))
    assert np.allclose(v.adjusted[~np.isnan(p)], expected[~np.isnan(p)])
    assert v.size == 3 and v.resolvable and list(v.significant) == [True, True, False, False]
    # k = 50 with Holm over 3 tests: 1/50 > 0.05/3, nothing can be significant, and it says so
    v = cl.decide(p, formula="count", k=50, correction="holm", alpha=0.05)
    assert not v.resolvable and not v.significant.any()
    note = v.note("the tests")
    assert "cannot resolve" in note and "k >= 60" in note and "\n" not in note
    # a test whose p counts 10 valid resamples of 1000: p = 0 says only p < 1/10
    v = cl.decide([0.0, 0.0], formula="count", k=1000, correction="none", alpha=0.05, n_valid=[10, 1000])
    assert list(v.significant) == [False, True] and list(v.evidence) == [False, True]
    # an exact test has no resampling floor; a data floor above alpha is never significant anyway
    v = cl.decide([1e-9, 0.5], formula="parametric", k=None, correction="holm", alpha=0.05, data_floors=[0.0, 1.0])
    assert v.resolvable and list(v.significant) == [True, False] and list(v.evidence) == [True, False]


def test_floors_are_the_smallest_attainable_p_values():
    """sign flips of n nonzero differences: the exact p is >= 2/2^n (enumerated); exact McNemar
    with d discordant pairs: >= 2^(1-d) (scipy's binomial test)."""
    from itertools import product

    from scipy.stats import binomtest

    for n in (1, 2, 3, 5):
        d = np.arange(1, n + 1, dtype=float)
        T = abs(d.sum())
        p = np.mean([abs((np.array(s) * d).sum()) >= T - 1e-12 for s in product((-1, 1), repeat=n)])
        assert p >= cl.sign_flip_floor(n) - 1e-12
    for d in (1, 2, 6):
        assert binomtest(0, d, 0.5).pvalue == pytest.approx(cl.mcnemar_floor(d))
    assert cl.pvalue_floor("add-one", 50) == 1 / 51 and cl.pvalue_floor("count", 1000, 10) == 0.1
    assert cl.pvalue_floor("parametric") == 0.0 and cl.pvalue_floor("count", 1000, 0) == np.inf


def test_p_text_shows_which_side_of_alpha_a_p_lies_on():
    """Issue 48 item 15: a p of 0.04995 printed "0.050" beside a significant verdict. Near alpha, p
    takes the digits that show its side; elsewhere, three."""
    import random

    assert cl.p_text(0.04995, latex=False) == "0.04995" and cl.p_text(0.05004, latex=False) == "0.05004"
    assert cl.p_text(0.0505, latex=False) == "0.051"                # its side shown at three decimals
    assert cl.p_text(0.05, latex=False) == "0.050" and cl.p_text(0.0496, latex=False) == "0.0496"
    assert cl.p_text(0.04995, latex=False, alpha=None) == "0.050"                  # no level: three decimals
    assert cl.p_text(0.00995, latex=False, alpha=0.01) == "0.00995" and cl.p_text(0.04995, alpha=0.01) == "0.050"
    assert cl.p_text(50 / 1001, latex=False) == "0.04995"            # a count p of k = 1000 just below 0.05
    rng = random.Random(0)
    for p in [0.05 + rng.uniform(-1e-3, 1e-3) for _ in range(500)] + [0.05 + d for d in (1e-9, -1e-9, 0.0)]:
        for alpha in (0.05, 0.01, 0.1):
            shown = float(cl.p_text(p, latex=False, alpha=alpha))
            assert (shown <= alpha) == (p <= alpha) and (shown != alpha or p == alpha), (p, alpha, shown)
    # the tables print it so (the compare family's text, a family's present, LaTeX)
    import pandas as pd

    tests = pd.DataFrame({"p_value": [50 / 1001], "p_adjusted": [50 / 1001], "k": [1000], "correction": ["none"],
                          "family_size": [1], "alpha": [0.05]})
    printed = cl.printed_pvalues(tests, "add-one")
    assert printed["p_value"].iloc[0] == "0.04995" and printed["p_adjusted"].iloc[0] == "0.04995"


def test_p_text_is_never_finer_than_the_resolution():
    assert cl.p_text(0.0, 1 / 50) == "$<$0.02" and cl.p_text(0.0, 1 / 50, latex=False) == "<0.02"
    assert cl.p_text(0.0, 1 / 1000, latex=False) == "<0.001"
    assert cl.p_text(0.0, 1 / 3, latex=False) == "<0.334"          # rounded up: p < 1/3 stays true
    assert cl.p_text(0.04, 1 / 50, latex=False) == "0.040"         # at or above the floor: as it is
    assert cl.p_text(1e-7, 0.0, latex=False) == "<0.001"           # an exact test: three decimals
    assert cl.p_text(float("nan")) == "--"
    assert cl.adjusted_floor(0.02, "holm", 3) == pytest.approx(0.06) and cl.adjusted_floor(0.5, "bh", 4) == 1.0
    assert cl.adjusted_floor(0.02, "none", 3) == 0.02


def test_clusters_only_from_a_complete_resolvable_family():
    scores = [0.9, 0.8, 0.5]
    a, b = [0, 0, 1], [1, 2, 2]
    delta = [0.1, 0.4, 0.3]
    sig = [False, True, True]
    r, beats, _ = cl.clusters(scores, a, b, delta, sig)
    assert list(r.cluster) == [1, 1, 2] and r.determined and beats[0, 2]          # AssignRanks ('any')
    r, _, _ = cl.clusters(scores, a, b, delta, sig, note="cannot resolve at k=50; k >= 60 would")
    assert np.isnan(r.cluster).all() and not r.is_winner.any() and not r.winner_known.any()
    assert "cannot resolve" in r.why and list(r.rank) == [1, 2, 3]
    r, _, _ = cl.clusters(scores, a, b, delta, sig, evidence=[True, False, True])   # one test cannot decide
    assert np.isnan(r.cluster).all() and "count as not run" in r.why


def test_bold_is_the_top_cluster_none_where_unresolved_else_the_best():
    frame = pd.DataFrame({"s": ["x", "x", "y", "y", "z", "z"], "correlation": [0.9, 0.8, 0.7, np.nan, 0.5, 0.6],
                          "cluster": [1, 1, np.nan, np.nan, np.nan, np.nan]})
    bold = cl.bold_cells(frame, ("s",), unresolved=[("z",)])
    assert list(bold) == [True, True, True, False, False, False]


# --- the defects, through the command line -----------------------------------------------------------
@pytest.fixture(scope="module")
def judges_demo(tmp_path_factory):
    db = tmp_path_factory.mktemp("judges") / "w.duckdb"
    run_cli(db, "ingest", "preferences", PREFERENCES, "--dataset", "judges-demo")
    return db


def test_judges_family_that_cannot_resolve_has_no_cluster_no_bold_and_says_so(judges_demo):
    """k = 50 and Holm over 3 pairs: 1/51 = 0.0196 > 0.0167 -- no cluster (NULL in JSON), no
    winner, no bold accuracy, one "cannot resolve ... k >= 59" line in every format."""
    args = ["judges", "--dataset", "judges-demo", "--k", "50"]
    text = run_cli(judges_demo, "--full-width", *args).output      # the line whole (by default wrapped at 100 columns)
    assert len(re.findall(r"cannot resolve.*k >= 59", text)) == 1
    result = CliRunner().invoke(main, ["--db", str(judges_demo), *args, "--format", "json"])
    assert result.exit_code == 0
    rows = json.loads(result.stdout)["judge_statistics"]
    assert all(r["cluster"] is None and r["is_winner"] is None for r in rows)
    assert "cannot resolve" in result.stderr and "k >= 59" in result.stderr
    markdown = run_cli(judges_demo, *args, "--format", "markdown").output
    shown = re.sub(r"<!--.*?-->", "", markdown, flags=re.DOTALL)        # the conventions: in a comment
    assert len(re.findall(r"cannot resolve.*k >= 59", shown)) == 1
    latex = run_cli(judges_demo, *args, "--format", "latex", "--layout", "long").output   # auto: compact (36 rows)
    caption = latex[latex.index(r"\caption"):]
    assert "cannot resolve" in caption and "k \\textgreater{}= 59" in caption
    accuracy = latex[latex.index(r"\emph{Accuracy}"):latex.index(r"\emph{Acc.\ ab}")]
    assert r"\textbf" not in accuracy
    # the exact McNemar tests of the same run are still decided (and the permutation rows say why not)
    tests = json.loads(result.stdout)["judge_tests"]
    assert all(t["significant"] for t in tests if t["test"] == "mcnemar")
    assert all(t["significant"] is False and t["resolvable"] is False for t in tests if t["test"] == "permutation")


def test_judges_clusters_stay_where_the_family_resolves(judges_demo):
    rows = json.loads(CliRunner().invoke(
        main, ["--db", str(judges_demo), "judges", "--dataset", "judges-demo", "--k", "200", "--format", "json"]).stdout)
    assert [r["cluster"] for r in rows["judge_statistics"]] == [1, 2, 3]


def test_a_one_item_judge_gets_no_kendall_and_no_clusters(tmp_path):
    db = tmp_path / "w.duckdb"
    run_cli(db, "ingest", "preferences", PREFERENCES, "--dataset", "judges-demo")
    one = tmp_path / "one.csv"
    one.write_text("input,system_a,system_b,judge,order,winner\ndoc-001,sys-4,sys-5,my-judge,ab,a\n")
    out = run_cli(db, "evaluate", "--dataset", "judges-demo", "--preferences", one, "--k", "200").output
    assert "Clusters not determined" in out
    result = CliRunner().invoke(main, ["--db", str(db), "evaluate", "--dataset", "judges-demo",
                                                       "--preferences", one, "--k", "200", "--format", "json"])
    stats = {r["judge"]: r for r in json.loads(result.stdout)["judge_statistics"]}
    mine = stats["my-judge"]
    assert mine["kendall"] is None and mine["kendall_lower"] is None and mine["kendall_upper"] is None
    assert "never compared" in mine["conventions"]["undefined_resamples"]["kendall"]
    assert all(r["cluster"] is None for r in stats.values())
    assert stats["judge-consistent"]["kendall"] == 1.0                # judges that compared every system keep theirs


def test_detection_prints_a_bootstrap_p_of_zero_at_its_resolution(tmp_path):
    db = tmp_path / "w.duckdb"
    run_cli(db, "ingest", "table", FACTUALITY / "scores.csv", "--dataset", "factuality", "--human", "human.*")
    args = ["detection", "--dataset", "factuality", "--human", "human.label", "--positive", "1", "--k", "50"]
    latex = run_cli(db, *args, "--format", "latex").output
    assert re.search(r"\$<\$0\.(\}\\rlap\{\\textbf\{)?02", latex) and "$<$0.001" not in latex   # bold splits the digits
    markdown = run_cli(db, *args, "--format", "markdown").output
    assert "<0.02" in markdown and "<0.001" not in markdown
    text = run_cli(db, *args).output
    assert "<0.02" in text
    result = CliRunner().invoke(main, ["--db", str(db), *args, "--format", "json"])
    assert 0.0 in [t["p_value"] for t in json.loads(result.stdout)["detection_tests"]]   # stored as it is


def test_compare_decides_a_bootstrap_test_on_its_valid_resamples():
    """count / n_valid with n_valid < k: the test must reach the family's threshold on 1/n_valid
    (as detection does); with every resample valid the decision is k's, as before."""
    from metaeval.runs.metrics.comparisons import TestParams, _adjust
    from metaeval.runs.engine.runner import Task

    params = TestParams("boot-inputs", "two-sided", 1000, 0, correction="none", alpha=0.05)
    tasks = [Task({"metric_a": "a", "metric_b": b, "level": "system", "coefficient": "pearson"}, ("a", b, "h"))
             for b in ("b", "c")]
    raw = {0: {"p_value": 0.0, "k_used": 1000, "conventions": {"n_valid_samples": 10}},
           1: {"p_value": 0.0, "k_used": 1000, "conventions": {"n_valid_samples": 1000}}}
    adjusted = _adjust(tasks, raw, params)
    assert adjusted[0][1] is False and adjusted[1][1] is True
    # winners and evaluate read the stored rows again, at their own alpha: the same rule
    from metaeval.runs.metrics.ranking import stored_tests

    rows = pd.DataFrame({"p_adjusted": [0.0, 0.0], "family_size": [None, None], "k_used": [1000, 1000],
                         "n_valid": [10, 1000], "level": "system", "coefficient": "pearson", "metric_a": "a"})
    assert list(stored_tests(rows, "boot-inputs", "none", "metric").significant(0.05)) == [False, True]


def test_decide_validates_its_inputs():
    with pytest.raises(ValueError, match="formula"):
        cl.decide([0.1], formula="exact", k=None, correction="holm", alpha=0.05)
    with pytest.raises(ValueError, match="n_valid"):
        cl.decide([0.1, 0.2], formula="count", k=100, correction="holm", alpha=0.05, n_valid=[10])
    with pytest.raises(ValueError):
        cl.decide([0.1], formula="count", k=100, correction="sidak", alpha=0.05)


def test_stored_tests_read_back_decide_as_the_fresh_family_did():
    """A family decided by :func:`decide` and stored (p, p_adjusted, k, family size) is read back by
    :class:`StoredTests` to the same verdicts, at its alpha, for every correction and k (resolvable
    or not), and a family that cannot resolve says it once."""
    from metaeval.analyses.stored_tests import StoredTests

    rng = np.random.default_rng(0)
    for k in (9, 19, 50, 1000):
        for correction in ("none", "bonferroni", "holm", "bh"):
            p = (1 + rng.integers(0, k, 6)) / (k + 1)
            p[rng.random(6) < 0.2] = np.nan
            verdict = cl.decide(p, formula="add-one", k=k, correction=correction, alpha=0.05)
            rows = pd.DataFrame({"p_value": p, "p_adjusted": verdict.adjusted, "k": k, "level": "system",
                                 "coefficient": "kendall", "correction": correction,
                                 "family_size": None if correction == "none" else verdict.size})
            read = StoredTests.from_frame(rows, formula="add-one", family_keys=("level", "coefficient"))
            assert read.significant(0.05).tolist() == verdict.significant.tolist(), (k, correction)
            assert len(read.notes(0.05)) == (0 if verdict.resolvable else 1)


def test_p_text_below_the_printing_floor_still_says_the_side_of_alpha():
    """``<0.001`` only where 0.001 is at or below alpha; at a smaller alpha the digits show the side."""
    assert cl.p_text(0.000145, latex=False) == "<0.001" and cl.p_text(0.000145, latex=False, alpha=None) == "<0.001"
    for alpha in (1e-4, 2.5e-4, 1e-3, 0.01, 0.05):
        for p in np.concatenate([np.geomspace(1e-7, 0.2, 400), [alpha, alpha * (1 - 1e-6), alpha * (1 + 1e-6)]]):
            printed = cl.p_text(p, latex=False, alpha=alpha)
            if printed.startswith("<"):
                assert p < float(printed[1:]) <= alpha, (p, alpha, printed)
            else:
                shown = float(printed)
                assert (shown <= alpha) == (p <= alpha) and shown > 0, (p, alpha, printed)


def test_number_text_is_the_one_nan_formatter():
    from metaeval.present.plain import number_text

    for missing in (None, float("nan"), np.nan, pd.NA, np.float64("nan")):
        assert number_text(missing) == "undefined" and number_text(missing, undefined="") == ""
    assert number_text(-0.0004) == "0.000" and number_text(-0.0006) == "-0.001" and number_text(1, 2) == "1.00"
    for x in np.random.default_rng(1).normal(0, 3, 200):
        assert number_text(x, 4) == f"{x:.4f}" or float(f"{x:.4f}") == 0
