"""``metaeval evaluate`` and its Python API (issue 16, items 1 and 4)."""

from __future__ import annotations

import io
import json
import shutil

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats as scipy_stats

from metaeval.runs import Warehouse
from metaeval.cli import main
from tests.conftest import shared, snapshot
from tests.test_formats import compile_latex

HUMAN = "expert.relevance"


def _run(db, *args, ok=True):
    result = CliRunner().invoke(main, ["--db", str(db), *map(str, args)], catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def _scores_csv(db, dataset, human, path, name="mymetric", seed=0, noise=0.3, base=None, wide=False):
    """A long score table of a new metric: the human judgment (or ``base``) plus noise; with
    ``wide``, the spreadsheet form `system,input,<name>`."""
    with Warehouse(db, read_only=True) as wh:
        frame = wh.matrix(dataset, base or human).frame()
    rng = np.random.default_rng(seed)
    rows = [(s, i, name, float(frame.loc[s, i]) + rng.normal(0, noise))
            for s in frame.index for i in frame.columns if not np.isnan(frame.loc[s, i])]
    table = pd.DataFrame(rows, columns=["system", "input", "measure", "value"])
    if wide:
        table = table.rename(columns={"value": name}).drop(columns="measure")
    table.to_csv(path, index=False)
    return path


@pytest.fixture
def demo(tmp_path):
    db = tmp_path / "w.duckdb"
    _run(db, "demo", "--dataset", "d", "--systems", "6", "--inputs", "8", "--k", "40")
    return db, _scores_csv(db, "d", HUMAN, tmp_path / "mine.csv")


def scipy_kendall(X, Z, level):
    """Kendall tau-b by scipy: of system means (system level), or the mean over inputs of the
    per-input tau over systems, NaN cells dropped pairwise, undefined inputs left out."""
    if level == "system":
        return scipy_stats.kendalltau(np.nanmean(X, axis=1), np.nanmean(Z, axis=1)).statistic
    taus = []
    for j in range(X.shape[1]):
        ok = ~np.isnan(X[:, j]) & ~np.isnan(Z[:, j])
        if ok.sum() >= 2:
            t = scipy_stats.kendalltau(X[ok, j], Z[ok, j]).statistic
            if not np.isnan(t):
                taus.append(t)
    return float(np.mean(taus))


def check_rows(db, dataset, human, rows, metric="mymetric"):
    """The evaluated metric's JSON rows against independent computations and the stored tests."""
    mine = [r for r in rows if r["metric"] == metric and r["dataset"] == dataset]
    assert {(r["level"], r["coefficient"]) for r in mine} == {("system", "kendall"), ("summary", "kendall")}
    with Warehouse(db, read_only=True) as wh:
        m = wh.matrix(dataset, [metric, human])
        others = set(wh.measures(dataset, "automatic")["measure"]) - {metric}
        tests = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE dataset = ? AND human = ? AND metric_a = ? "
                       "AND method = 'perm-both' AND alternative = 'two-sided' AND correction = 'holm'",
                       [dataset, human, metric])
    for r in mine:
        assert r["evaluated"] is True and isinstance(r["conventions"], dict)
        assert r["correlation"] == pytest.approx(scipy_kendall(m[metric], m[human], r["level"]), abs=1e-12)
        assert r["lower"] <= r["correlation"] <= r["upper"]
        mine_tests = tests[(tests["level"] == r["level"]) & (tests["coefficient"] == "kendall")]
        assert set(mine_tests["metric_b"]) == others and r["n_tested"] == len(others)
        significant = mine_tests[mine_tests["p_adjusted"] <= 0.05]
        assert sorted(r["beats"]) == sorted(significant.loc[significant["delta"] > 0, "metric_b"])
        assert sorted(r["beaten_by"]) == sorted(significant.loc[significant["delta"] < 0, "metric_b"])
        assert 1 <= r["rank"] <= r["n_metrics"] == len(others) + 1
    return mine


def test_evaluate_json_rows_and_a_second_run_computes_nothing(demo):
    db, scores = demo
    args = ["evaluate", scores, "--dataset", "d", "--human", HUMAN, "--coefficient", "kendall", "--k", "50",
            "--format", "json"]
    first = _run(db, *args)
    rows = json.loads(first.stdout)          # status lines on stderr, only the rows on stdout
    assert "inserted" in first.stderr
    check_rows(db, "d", HUMAN, rows)
    assert {r["metric"] for r in rows} == {"mymetric", "sim-divergence", "sim-high.f1", "sim-low.f1", "sim-medium.f1"}
    with Warehouse(db, read_only=True) as wh:
        before = snapshot(wh), wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0]
    second = _run(db, *args)
    assert json.loads(second.stdout) == rows
    assert second.stderr.count("nothing computed") == 3 and "nothing changed" in second.stderr
    with Warehouse(db, read_only=True) as wh:
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == before[1]


def test_focused_tests_are_the_rows_a_full_compare_writes(demo):
    """Testing only the new metric's pairs gives the rows (and families) of a compare of every pair."""
    db, scores = demo
    _run(db, "evaluate", scores, "--dataset", "d", "--human", HUMAN, "--level", "system", "--coefficient",
         "pearson", "--k", "40")
    query = ("SELECT result_id, metric_b, p_value, p_adjusted, family, family_size FROM latest_hypothesis_tests "
             "WHERE metric_a = 'mymetric' ORDER BY metric_b")
    with Warehouse(db, read_only=True) as wh:
        focused = wh.sql(query)
    _run(db, "compare", "--dataset", "d", "--human", HUMAN, "--level", "system", "--coefficient", "pearson",
         "--k", "40", "--alternative", "two-sided", "--correction", "holm")
    with Warehouse(db, read_only=True) as wh:
        full = wh.sql(query)
    pd.testing.assert_frame_equal(focused, full)   # same rows, not even rewritten
    assert (full["family_size"] == 4).all()


def test_all_pairs_clusters_equal_winners(demo):
    db, scores = demo
    base = ["--dataset", "d", "--human", HUMAN, "--level", "summary", "--coefficient", "pearson"]
    rows = json.loads(_run(db, "evaluate", scores, *base, "--k", "50", "--all-pairs", "--format", "json").stdout)
    assert all(r["n_tested"] == 4 for r in rows)
    winners = json.loads(_run(db, "winners", *base, "--alternative", "two-sided", "--correction", "holm",
                              "--format", "json").stdout)
    assert {r["metric"]: (r["rank"], r["cluster"]) for r in rows} == \
        {w["metric"]: (w["rank"], w["cluster"]) for w in winners}


def test_new_systems_are_refused_unless_allow_new(demo, tmp_path):
    db, scores = demo
    frame = pd.read_csv(scores)
    frame.loc[0, "system"] = "typo-system"
    frame.to_csv(tmp_path / "typo.csv", index=False)
    with Warehouse(db, read_only=True) as wh:
        before = snapshot(wh)
    result = _run(db, "evaluate", tmp_path / "typo.csv", "--dataset", "d", "--human", HUMAN, ok=False)
    assert result.exit_code != 0 and "typo-system" in result.output and "Traceback" not in result.output
    with Warehouse(db, read_only=True) as wh:
        after = snapshot(wh)
    assert all(before[t].equals(after[t]) for t in before)


def test_several_datasets_one_block_each(tmp_path):
    db = tmp_path / "w.duckdb"
    for name, seed in (("d", 0), ("e", 1)):
        _run(db, "demo", "--dataset", name, "--systems", "5", "--inputs", "6", "--k", "40", "--seed", seed)
    d = _scores_csv(db, "d", HUMAN, tmp_path / "d.csv")
    e = _scores_csv(db, "e", HUMAN, tmp_path / "e.csv", seed=1)
    args = ["evaluate", f"d:{d}", f"e:{e}", "--dataset", "d", "--dataset", "e", "--human", HUMAN,
            "--level", "system", "--coefficient", "kendall", "--k", "40"]
    rows = json.loads(_run(db, *args, "--format", "json").stdout)
    assert {r["dataset"] for r in rows if r["metric"] == "mymetric"} == {"d", "e"}
    text = _run(db, *args).stdout
    assert "d / expert.relevance: mymetric" in text and "e / expert.relevance: mymetric" in text
    bad = _run(db, "evaluate", d, "--dataset", "d", "--dataset", "e", "--human", HUMAN, ok=False)
    assert bad.exit_code != 0 and "DATASET:FILE" in bad.output


def test_latex_table(demo, tmp_path):
    db, scores = demo
    out = _run(db, "evaluate", scores, "--dataset", "d", "--human", HUMAN, "--k", "40", "--coefficient", "kendall",
               "--format", "latex").stdout
    assert out.count(r"\begin{tabular}") == 1 and r"\toprule" in out and r"\bottomrule" in out
    assert "perm-both" in out and "holm" in out and "k=40" in out and "seed=0" in out
    assert "level system, summary" in out and "coefficient kendall" in out
    # k = 40 cannot reach Holm's threshold: no bold (issue 32), and the caption says why
    assert r"\textbf{" not in out and "cannot resolve" in out
    if shutil.which("pdflatex"):
        compile_latex(tmp_path, out)


def test_csv_and_markdown(demo):
    db, scores = demo
    base = ["evaluate", scores, "--dataset", "d", "--human", HUMAN, "--k", "40", "--level", "system",
            "--coefficient", "pearson", "--format"]
    rows = json.loads(_run(db, *base, "json").stdout)
    frame = pd.read_csv(io.StringIO(_run(db, *base, "csv").stdout))
    assert frame["metric"].tolist() == [r["metric"] for r in rows]
    assert [json.loads(b) for b in frame["beaten_by"]] == [r["beaten_by"] for r in rows]
    assert [json.loads(c) for c in frame["conventions"]] == [r["conventions"] for r in rows]
    md = _run(db, *base, "markdown").stdout.splitlines()
    # the caption (cut to three lines, the rest in an HTML comment) and a blank line, then the table
    h = next(i for i, line in enumerate(md) if line.startswith("| metric"))
    assert h >= 2 and md[h - 1] == ""
    assert md[h].startswith("| metric | level | coefficient | correlation | rank |") and len(md) == h + 2 + len(rows)


def test_python_api(demo):
    db, scores = demo
    frame = pd.read_csv(scores).assign(measure="framemetric")
    with Warehouse(db) as wh:
        reports = wh.add_scores("d", frame)
        assert reports[0].inserted == len(frame) and reports[0].file == "<DataFrame>"
        ev = wh.evaluate("d", HUMAN, metrics=["framemetric"], levels=["system"], coefficients=["spearman"], k=40)
        text = repr(ev)
        assert "framemetric" in text and len(text) < 400 and "computed" in text
        assert ev.metrics == ("framemetric",) and not ev.up_to_date
        again = wh.evaluate("d", HUMAN, metrics=["framemetric"], levels=["system"], coefficients=["spearman"], k=40)
        assert again.up_to_date and again.computed == 0
        pd.testing.assert_frame_equal(again.table, ev.table)
        cis = wh.ci("d", HUMAN, metrics=["framemetric"], levels=["system"], coefficients=["spearman"], k=40)
        row = ev.table[ev.table["metric"] == "framemetric"].iloc[0]
        assert cis["lower"].iloc[0] == row["lower"] and cis["upper"].iloc[0] == row["upper"]
        assert len(wh.correlate("d", HUMAN, levels=["system"])) == 5 * 3


@pytest.mark.shared_data
def test_realsumm_done_when(warehouse_copy, tmp_path):
    """The issue's "done when": a new metric's scores for REALSumm, evaluated in one command."""
    shared("realsumm")
    db = warehouse_copy
    scores = _scores_csv(db, "realsumm", "litepyramid.recall", tmp_path / "mymetric.csv", base="rouge-2.recall",
                         noise=0.02, wide=True)                       # system,input,mymetric
    assert open(scores).readline().strip() == "system,input,mymetric"
    args = ["evaluate", scores, "--dataset", "realsumm", "--human", "litepyramid.recall", "--coefficient", "kendall",
            "--k", "200", "--format", "json"]
    rows = json.loads(_run(db, *args).stdout)
    check_rows(db, "realsumm", "litepyramid.recall", rows)
    second = _run(db, *args)
    assert json.loads(second.stdout) == rows and second.stderr.count("nothing computed") == 3
    latex = _run(db, *args[:-1], "latex")
    assert "nothing computed" in latex.stderr and latex.stdout.count(r" \\") == 27 + 2
    assert "bertscore.precision = bertscore.f1 (identical values)" in latex.stdout
    if shutil.which("pdflatex"):
        compile_latex(tmp_path, latex.stdout)


def test_text_shows_each_test_with_its_p_and_the_other_metrics_correlations(demo):
    """Issue 48 item 17: evaluate showed no p-values and not the other metrics' own correlations (a
    newcomer needed `compare`). Its text adds one row per test: the other metric's correlation
    [CI], delta and p (raw, corrected) as the stored rows and the JSON say them, within 100 columns;
    one other metric is "1 other metric"."""
    from metaeval.analyses import conclusions

    db, scores = demo
    base = ["evaluate", scores, "--dataset", "d", "--human", HUMAN, "--coefficient", "kendall", "--k", "50"]
    text = _run(db, *base).stdout
    assert max(map(len, text.splitlines())) <= 100 and "against 4 other metrics" in text
    rows = {(r["metric"], r["level"]): r for r in json.loads(_run(db, *base, "--format", "json").stdout)}
    with Warehouse(db, read_only=True) as wh:
        tests = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE metric_a = 'mymetric' AND coefficient = 'kendall' "
                       "AND method = 'perm-both' AND correction = 'holm'")
    assert len(tests) == 8
    lines = text.split("Tests of mymetric against each other metric")[1].splitlines()
    for t in tests.itertuples():
        line = next(x for x in lines if x.split()[:4] == ["mymetric", t.level, "kendall", t.metric_b])
        other = rows[(t.metric_b, t.level)]
        floor = 1 / (t.k + 1)
        p, p_adj = conclusions.p_text(t.p_value, floor, latex=False), conclusions.p_text(
            t.p_adjusted, conclusions.adjusted_floor(floor, "holm", t.family_size), latex=False)
        assert line.split()[4:] == [f"{other['correlation']:.3f}", f"[{other['lower']:.3f},", f"{other['upper']:.3f}]",
                                    f"{t.delta:.3f}", p, p_adj + ("*" if t.p_adjusted <= 0.05 else "")], line
    # in each setting, by the other metric's correlation
    for level in ("system", "summary"):
        shown = [x.split()[4] for x in lines if x.split()[1:3] == [level, "kendall"]]
        assert shown == sorted(shown, key=float, reverse=True)
    one = _run(db, *base, "--against", "sim-low.f1", "--level", "system").stdout
    assert "against 1 other metric\n" in one


def test_rows_are_the_asked_metrics_as_the_command_sorts_them_readable_in_a_script(demo):
    """Issue 48 item 14: README's example printed ev.table (all five metrics, in alphabetical order,
    `correlation` cut to "..." by pandas in a script). Evaluation.rows() is the evaluated metrics'
    rows in the command's order (per setting, by correlation, undefined last), printed whole."""
    db, scores = demo
    with Warehouse(db) as wh:
        wh.add_scores("d", scores)
        ev = wh.evaluate("d", HUMAN, metrics=["mymetric", "sim-low.f1"], levels=["system", "summary"],
                         coefficients=["pearson", "kendall"], k=40)
    rows = ev.rows()
    assert set(rows["metric"]) == {"mymetric", "sim-low.f1"} and list(rows.columns) == list(ev.ROW_COLUMNS)
    settings = list(dict.fromkeys(zip(rows["level"], rows["coefficient"])))
    assert settings == [("system", "pearson"), ("system", "kendall"), ("summary", "pearson"), ("summary", "kendall")]
    for level, coefficient in settings:
        r = rows[(rows["level"] == level) & (rows["coefficient"] == coefficient)]["correlation"].tolist()
        assert r == sorted(r, reverse=True)
    text = rows.to_string(index=False)
    assert "..." not in text and "\u2026" not in text and f"{rows['correlation'].iloc[0]:.6f}"[:5] in text
    everyone = ev.rows(everyone=True)
    assert len(everyone) == 5 * 4 and everyone.iloc[0]["correlation"] == max(
        everyone[(everyone["level"] == "system") & (everyone["coefficient"] == "pearson")]["correlation"])
