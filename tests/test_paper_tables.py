"""Tables for papers (issue 27, items 1-2): booktabs LaTeX that fits an ACL two-column page, with a
true minus, decimal alignment, the top significance cluster in bold and the human ceiling as a row;
markdown and text in the same order with the same bold. Each command's LaTeX is compiled with
pdflatex in a two-column document of ACL's widths and must have no overfull box."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval.present import paper_tables, ranking_tables, tables
from metaeval.analyses.preferences_synthetic import synthetic_preferences
from metaeval.cli import main
from tests.test_formats import compile_latex

needs_pdflatex = pytest.mark.skipif(shutil.which("pdflatex") is None,
                                    reason="needs pdflatex (apt-get install texlive-latex-recommended)")
HUMAN = "expert.relevance"


def _frame(metrics=("m1", "m2", "m_3"), values=(0.8, 0.9, -0.1), clusters=(1, 1, 2), settings=(("system", "kendall"),),
           ci=0.1):
    rows = []
    for level, coefficient in settings:
        for m, r, c in zip(metrics, values, clusters):
            rows.append({"metric": m, "level": level, "coefficient": coefficient, "correlation": r,
                         "lower": r - ci if r == r else np.nan, "upper": min(r + ci, 1.0) if r == r else np.nan,
                         "cluster": c})
    return pd.DataFrame(rows)


def _body(latex: str, names) -> list[str]:
    return [line for line in latex.splitlines() if line.split(" & ")[0] in names]


# --- the pure renderers --------------------------------------------------------------------------------
def test_numbers_have_a_true_minus_and_fixed_digits():
    assert ranking_tables.latex_number(-0.1234) == "$-$0.123" and ranking_tables.latex_number(0.5) == "0.500"
    assert ranking_tables.latex_number(-0.0004) == "0.000"                     # no "-0.000"
    assert ranking_tables.latex_number(0.5, pad=True) == r"\phantom{$-$}0.500"
    assert ranking_tables.latex_number(float("nan")) == "--" and ranking_tables.plain_number(None) == "undefined"
    assert ranking_tables.plain_number(-0.25) == "-0.250"
    # bold keeps the decimal point where the regular number has it: the decimals overprint their width
    assert ranking_tables.latex_bold("$-$0.123") == r"\textbf{$-$0.}\rlap{\textbf{123}}\phantom{123}"


def test_ci_bounds_align_with_a_phantom_minus_where_signs_differ():
    out = ranking_tables.ranked_latex(_frame(), caption="c", layout="wide")
    cells = [line.split(" & ")[-1] for line in _body(out, {"m1", "m2", r"m\_3"})]
    # m_3's lower bound is negative: the other lower bounds get a phantom minus; no upper bound is negative
    assert cells[0] == r"[\phantom{$-$}0.800, 1.000] \\" and cells[2] == r"[$-$0.200, 0.000] \\"
    assert r"\begin{tabular}{lrrr}" in out                        # right-aligned numbers, fixed digits


def test_bold_is_the_top_cluster_only_never_undefined():
    frame = _frame(("a", "b", "c", "d"), (0.9, 0.85, 0.5, np.nan), (1, 1, 2, np.nan))
    bold = ranking_tables.bold_ranked(frame)
    assert bold.tolist() == [True, True, False, False]
    # no clusters (no tests run): the single best value; an undefined one never
    frame = _frame(("a", "b", "d"), (0.9, 0.85, np.nan), (np.nan, np.nan, np.nan))
    assert ranking_tables.bold_ranked(frame).tolist() == [True, False, False]
    assert not ranking_tables.bold_ranked(_frame(("d",), (np.nan,), (np.nan,))).any()
    out = ranking_tables.ranked_latex(frame, caption="c")
    assert out.count(r"\textbf") == 2 and "(no significance clusters)" in out   # 0.9 (two \textbf: "0." and "900")
    line = _body(out, {"d"})[0]
    assert "--" in line and r"\textbf" not in line


def test_rows_are_sorted_by_correlation_undefined_last():
    frame = _frame(("low", "undef", "high", "mid"), (0.1, np.nan, 0.9, 0.5), (2, np.nan, 1, 1))
    out = ranking_tables.ranked_latex(frame, caption="c")
    assert [line.split(" & ")[0] for line in _body(out, {"low", "undef", "high", "mid"})] == \
        ["high", "mid", "low", "undef"]
    assert "undefined last" in out
    ranking = ranking_tables.Ranking(frame)
    md = ranking.markdown("caption").splitlines()
    assert md[0].startswith("caption Metrics sorted by their system kendall correlation")
    assert [row.split(" | ")[0].strip("| ") for row in md[4:]] == ["high", "mid", "low", "undef"]
    assert "**0.900**" in md[4] and "**0.500**" in md[5] and "**" not in md[6] + md[7]
    assert "undefined" in md[7]
    text = ranking.text("caption").splitlines()
    assert [t.split()[0] for t in text[1:5]] == ["high", "mid", "low", "undef"] and "0.900*" in text[1]


def test_the_human_ceiling_is_a_row():
    frame = _frame().assign(human_ceiling=0.7, human_ceiling_lower=-0.05, human_ceiling_upper=0.9)
    out = ranking_tables.ranked_latex(frame, caption="c", layout="wide")
    lines = out.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith(r"\emph{Human ceiling}"))
    assert lines[i - 1] == r"\midrule" and lines[i + 1] == r"\bottomrule"
    assert lines[i].endswith(r"0.700 & [$-$0.050, \phantom{$-$}0.900] \\") is False  # upper bounds never negative
    assert r"0.700 & [$-$0.050, 0.900]" in lines[i] and r"\textbf" not in lines[i]
    assert "(human ceiling)" in ranking_tables.Ranking(frame).markdown(None)


def _realsumm_like():
    """35 metrics x 6 settings (two levels, three coefficients) with clusters and CIs, names as long
    as REALSumm's."""
    rng = np.random.default_rng(0)
    names = [f"{b}.{v}" for b in ("rouge-1", "rouge-2", "rouge-l", "bertscore", "BEwTE", "qa-eval", "s3")
             for v in ("precision", "recall", "f1", "lerc", "resp")]
    settings = [(lv, c) for lv in ("system", "summary") for c in ("pearson", "spearman", "kendall")]
    return pd.concat([_frame(names, rng.uniform(-0.3, 0.95, len(names)), rng.integers(1, 4, len(names)), [s], 0.15)
                      for s in settings], ignore_index=True)


def test_layout_choice_on_a_wide_realsumm_like_frame():
    frame = _realsumm_like()
    ranking = ranking_tables.Ranking(frame)
    tabs = ranking.tabulars()
    assert tabs["wide"].width() > tables.TEXT_WIDTH_PT                       # 6 x (cl., r, CI): not even table*
    assert tables.COLUMN_WIDTH_PT < tabs["compact"].width() <= tables.TEXT_WIDTH_PT
    assert tables.choose_layout(tabs) == ("compact", "table*")
    out = ranking.latex("c")
    assert out.startswith(r"\begin{table*}") and "Confidence intervals: in the wide and long layouts" in out
    # one setting without CIs fits a column as the wide layout
    one = frame[(frame.level == "system") & (frame.coefficient == "kendall")].drop(columns=["lower", "upper"])
    assert ranking_tables.Ranking(one).latex_layout() == ("wide", "table")
    # a table of CIs never drops them by itself
    assert ranking_tables.Ranking(frame, keep_ci=True).latex_layout()[0] != "compact"
    assert tables.choose_layout(tabs, "long")[0] == "long"
    with pytest.raises(ValueError, match="unknown layout"):
        tables.choose_layout(tabs, "tall")


def test_width_estimate_is_stated_and_bounds_long_names():
    assert tables.latex_width("0.123") == 4 * tables.CHAR_PT + tables.NARROW_PT
    assert tables.latex_width("$-$0.123") == tables.MINUS_PT + tables.latex_width("0.123")
    assert tables.latex_width(ranking_tables.latex_bold("0.123")) == tables.latex_width("0.123")
    assert tables.latex_width(r"rouge\_2") == 7 * tables.CHAR_PT


@needs_pdflatex
def test_every_layout_compiles_without_an_overfull_box(tmp_path):
    frame = _realsumm_like().assign(human_ceiling=0.8, human_ceiling_lower=0.1, human_ceiling_upper=0.95)
    frame.loc[frame["metric"] == "s3.resp", ["correlation", "lower", "upper", "cluster"]] = np.nan   # undefined
    one = frame[frame.coefficient == "kendall"]
    body = ranking_tables.ranked_latex(frame, caption="REALSumm-like 35 x 6 (auto)")
    body += ranking_tables.ranked_latex(frame[frame.level == "system"].iloc[:60], caption="compact", layout="compact")
    body += ranking_tables.ranked_latex(one[one.level == "system"], caption="one setting, long", layout="long")
    body += ranking_tables.ranked_latex(one[one.level == "system"], caption="one setting (auto) x_y 95% & more")
    assert "\u2013: undefined correlation" in body and "s3.resp & -- &" in body
    compile_latex(tmp_path, body)


# --- the commands ---------------------------------------------------------------------------------------
def _frank_table(path):
    """A FRANK-like table: an overall judgment, two error categories, the overall judgment with each
    ignored, three metrics (one with a constant category judgment: an undefined r)."""
    rng = np.random.default_rng(3)
    shape = (6, 5)
    entity, predicate = rng.integers(0, 4, size=shape).astype(float), rng.integers(0, 3, size=shape).astype(float)
    noise = rng.normal(size=shape)
    values = {"human.entity": entity, "human.predicate": predicate, "human.overall": entity + predicate + 0.5 * noise,
              "human.no_entity": predicate + 0.5 * noise, "human.no_predicate": entity + 0.5 * noise,
              "human.constant": np.full(shape, 2.0),
              "bertscore_f1": entity + 0.3 * rng.normal(size=shape), "qags": predicate + rng.normal(size=shape),
              "rouge_l": -entity + rng.normal(size=shape)}
    lines = ["system,input,measure,value"] + [f"s{i},d{j},{name},{float(v[i, j])!r}" for name, v in values.items()
                                              for i in range(shape[0]) for j in range(shape[1])]
    path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("paper")
    db = folder / "w.duckdb"
    synthetic_preferences(seed=1, inputs=40).to_csv(folder / "p.csv", index=False)
    (folder / "a.csv").write_text("input,attribute,value\n" + "".join(f"D{j:03d},half,{'first' if j < 4 else 'second'}\n"
                                                                      for j in range(8)))
    _frank_table(folder / "t.csv")
    for args in (["demo", "--dataset", "d", "--systems", "6", "--inputs", "8", "--k", "60"],
                 ["annotators", "--dataset", "d", "--human", HUMAN, "--k", "40", "--splits", "3"],
                 ["ingest", "attributes", folder / "a.csv", "--dataset", "d"],
                 ["ingest", "preferences", folder / "p.csv", "--dataset", "prefs"],
                 ["ingest", "table", folder / "t.csv", "--dataset", "frank", "--human", "human.*"]):
        result = CliRunner().invoke(main, ["--db", str(db), *map(str, args)], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return db


def _run(db, *args):
    result = CliRunner().invoke(main, ["--db", str(db), *map(str, args)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.stdout


SCOPE = ["--dataset", "d", "--human", HUMAN]
COMMANDS = {
    "evaluate": ["evaluate", "--metric", "sim-high.f1", *SCOPE, "--k", "60"],
    "evaluate-all-pairs": ["evaluate", "--metric", "sim-high.f1", *SCOPE, "--k", "60", "--all-pairs"],
    "correlate": ["correlate", *SCOPE],
    "ci": ["ci", *SCOPE, "--k", "60"],
    "compare": ["compare", *SCOPE, "--k", "60", "--level", "system"],
    "winners": ["winners", *SCOPE, "--level", "system"],
    "rank-tasks": ["rank-tasks", "--task", f"d:{HUMAN}:system:kendall", "--task", f"d:{HUMAN}:summary:pearson:2",
                   "--k", "60"],
    "annotators": ["annotators", "--dataset", "d", "--human", HUMAN, "--k", "40", "--splits", "3"],
    "detection": ["detection", *SCOPE, "--positive", "3", "--k", "60"],
    "detection-by": ["detection", *SCOPE, "--positive", "3", "--k", "60", "--by", "half"],
    "judges": ["judges", "--dataset", "prefs", "--k", "60"],
    "categories": ["categories", "--dataset", "frank", "--human", "human.overall", "--level", "system",
                   "--coefficient", "kendall", "--category", "entity=human.entity", "--ablation",
                   "entity=human.no_entity", "--ablation", "predicate=human.no_predicate", "--category",
                   "constant=human.constant"],
}
#: The commands whose tables have no --level / --coefficient to narrow them for the layouts asked for.
NO_SETTING = {"rank-tasks", "detection", "detection-by", "judges", "categories"}
#: The layouts asked for of the tables whose wide layout cannot fit a page (detection with three groups x two
#: statistics x cluster, value and CI; judges' nine statistics with theirs): auto chooses long for them.
ASKED = {"detection-by": ("compact", "long"), "judges": ("compact", "long")}


@needs_pdflatex
@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_commands_latex_compiles_in_two_columns(db, tmp_path, name):
    out = _run(db, *COMMANDS[name], "--format", "latex")
    assert r"\toprule" in out and r"\caption{" in out and r"\hline" not in out
    assert "n\\_systems" not in out and "alpha 0.0500" not in out and ":system:kendall &" not in out
    typeset = "\n".join(x for x in out.split(r"\caption")[0].splitlines() if not x.startswith("%"))  # not comments
    assert not re.search(r"(?<![$\w])-\d", typeset.replace("--", "")), "a hyphen as minus"
    compile_latex(tmp_path, out)
    # a layout asked for (not chosen to fit) on one setting; only annotators' agreement table has no layout
    one = [] if name in NO_SETTING else ["--level", "system", "--coefficient", "kendall"]
    for layout in ASKED.get(name, ("wide", "compact", "long")):
        compile_latex(tmp_path, _run(db, *COMMANDS[name], *one, "--format", "latex", "--layout", layout), layout)


def test_evaluate_latex_markdown_and_text_agree(db):
    args = [*COMMANDS["evaluate-all-pairs"], "--coefficient", "kendall"]
    latex = _run(db, *args, "--format", "latex", "--layout", "wide")
    md = _run(db, *args, "--format", "markdown").splitlines()
    assert "Best correlation in bold" not in latex + "\n".join(md)
    order = [line.split(" & ")[0] for line in latex.splitlines() if line.startswith("sim-")]
    system = [row.split(" | ")[0].strip("| ") for row in md[4:] if "| system |" in row]
    assert system == [m.replace(r"\_", "_") for m in order]
    bold_latex = {line.split(" & ")[0] for line in latex.splitlines() if line.startswith("sim-")
                  and r"\textbf" in line.split(" & ")[2]}
    bold_md = {row.split(" | ")[0].strip("| ") for row in md[4:] if "| system |" in row and "**" in row}
    assert bold_latex == bold_md and bold_latex
    assert ("top significance cluster" in md[0]) == ("top significance cluster" in latex)
    assert r"\emph{Human ceiling}" in latex


def _comment(latex: str) -> str:
    return " ".join(line[2:] for line in latex.splitlines() if line.startswith("% "))


def _header(latex: str) -> str:
    return next(line for line in latex.splitlines() if line.startswith("Metric &"))


def test_evaluate_latex_keeps_its_intervals_and_says_only_the_columns_it_has(tmp_path):
    """Issue 48 item 11: the default --layout auto dropped the intervals of evaluate's six settings
    (the compact layout), and its comment described a clusters column that was not there. auto keeps
    the CIs (and the clusters where computed): wide where it fits, else long; compact only when asked."""
    db = tmp_path / "w.duckdb"    # (the module's warehouse and the demo have every pair tested: clusters)
    rng = np.random.default_rng(5)
    human = rng.normal(size=(6, 8))
    lines = ["system,input,measure,value"] + [
        f"s{i},d{j},{name},{float(v)!r}" for name, noise in ((HUMAN, 0), ("m.a", 0.5), ("m.b", 1.0), ("m.c", 2.0))
        for i in range(6) for j in range(8) for v in [human[i, j] + noise * rng.normal()]]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    _run(db, "ingest", "table", tmp_path / "t.csv", "--dataset", "d", "--human", HUMAN)
    latex = _run(db, "evaluate", "--metric", "m.a", *SCOPE, "--k", "60", "--format", "latex")
    assert r"95\% CI" in _header(latex) and "cl." not in _header(latex)
    assert "clusters (cl.)" not in _comment(latex) and "no significance clusters" in _comment(latex)
    assert "Confidence intervals: in the wide and long layouts" not in latex
    clustered = _run(db, "evaluate", "--metric", "m.a", *SCOPE, "--k", "60", "--all-pairs", "--format", "latex")
    assert r"95\% CI" in _header(clustered) and "cl." in _header(clustered)
    assert "clusters (cl.)" in _comment(clustered)
    one = _run(db, "evaluate", "--metric", "m.a", *SCOPE, "--k", "60", "--all-pairs", "--level", "system", "--coefficient", "kendall", "--format", "latex")
    assert _header(one).split(" & ")[1:] == ["cl.", r"Kendall $\tau$", r"95\% CI \\"]   # wide: it fits a column
    compact = _run(db, "evaluate", "--metric", "m.a", *SCOPE, "--k", "60", "--format", "latex", "--layout", "compact")
    assert "CI" not in _header(compact) and "Confidence intervals: in the wide and long layouts" in compact
    if shutil.which("pdflatex"):
        compile_latex(tmp_path, latex + clustered)


def test_correlate_text_and_markdown_follow_the_latex_order(db):
    latex = _run(db, "correlate", *SCOPE, "--level", "system", "--format", "latex")
    order = [line.split(" & ")[0] for line in latex.splitlines() if line.startswith("sim-")]
    md = _run(db, "correlate", *SCOPE, "--level", "system", "--format", "markdown").splitlines()
    assert [row.split(" | ")[0].strip("| ") for row in md[4:] if row.startswith("| sim-")] == order
    text = _run(db, "correlate", *SCOPE, "--level", "system").splitlines()
    assert [line.split()[0] for line in text if line.strip().startswith("sim-")] == order
    assert "Bold: the highest correlation" in md[0] and "*: the highest correlation" in "\n".join(text)


# --- detection, judges and categories (issue 27 items 1-2 for the issue 26 / 28 families) ------------------
def _rows_and_bold(latex: str, md: str, names) -> tuple[list, list, set, set]:
    """The row order and the bold rows of the wide LaTeX and of the markdown of one table."""
    lines = [line for line in latex.splitlines() if line.split(" & ")[0].replace(r"\_", "_") in names]
    rows = [row for row in md.splitlines() if row.startswith("| ") and row.split(" | ")[0].strip("| ") in names]
    cells = lambda line, sep: [(i, c) for i, c in enumerate(line.split(sep)[1:])]  # noqa: E731
    bold_latex = {(line.split(" & ")[0].replace(r"\_", "_"), sum(r"\textbf" in c for _, c in cells(line, " & ")))
                  for line in lines}
    bold_md = {(row.split(" | ")[0].strip("| "), sum("**" in c for _, c in cells(row, " | "))) for row in rows}
    return ([line.split(" & ")[0].replace(r"\_", "_") for line in lines], [row.split(" | ")[0].strip("| ") for row in rows],
            bold_latex, bold_md)


@pytest.mark.parametrize("name", ["detection", "judges", "categories"])
def test_family_latex_and_markdown_agree(db, name):
    latex = _run(db, *COMMANDS[name], "--format", "latex", "--layout", "wide")
    md = _run(db, *COMMANDS[name], "--format", "markdown")
    names = {"detection": {"sim-high.f1", "sim-medium.f1", "sim-low.f1", "sim-divergence"},
             "judges": {"judge-consistent", "judge-position", "judge-ties"},
             "categories": {"bertscore_f1", "qags", "rouge_l"}}[name]
    latex, md = latex.split(r"\end{table")[0], md.split("\n\n")[1]      # the first table (detection's tests follow)
    order_latex, order_md, bold_latex, bold_md = _rows_and_bold(latex, md, names)
    assert order_latex == order_md and set(order_latex) == names
    assert bold_latex == bold_md and any(n for _, n in bold_latex)
    assert "signature metaeval:" in latex and r"\begin{tabular}" in latex and "$-$" in latex + "$-$"
    assert "nan" not in latex.lower().replace("financ", "") and "None" not in latex


def test_detection_clusters_follow_the_paired_tests():
    """Three metrics, A > B > C on ROC-AUC: A beats C significantly, nothing else: mt-metrics-eval's
    rule gives A, B in cluster 1 (B is beaten by no one of A's cluster) and C in cluster 2; an
    unresolvable family gives no clusters and no bold."""
    rows = pd.DataFrame({"metric": ["A", "B", "C"], "group": "", "roc_auc": [0.9, 0.8, 0.6],
                         "roc_auc_lower": [0.8, 0.7, 0.5], "roc_auc_upper": [1.0, 0.9, 0.7],
                         "balanced_accuracy": [0.7, np.nan, 0.65], "balanced_accuracy_lower": [0.6, np.nan, 0.5],
                         "balanced_accuracy_upper": [0.8, np.nan, 0.8]})
    pairs = [("A", "B"), ("A", "C"), ("B", "C"), ("B", "A"), ("C", "A"), ("C", "B")]
    value = dict(zip(rows["metric"], rows["roc_auc"]))
    conv = '{"resolution": {"resolvable": true}}'
    tests = pd.DataFrame([{"metric_a": a, "metric_b": b, "group": "", "statistic": "roc_auc",
                           "delta": value[a] - value[b], "significant": {a, b} == {"A", "C"}, "conventions": conv}
                          for a, b in pairs])
    clusters = paper_tables.detection_clusters(rows, tests)
    assert dict(zip(clusters["metric"], clusters["cluster"])) == {"A": 1, "B": 1, "C": 2}
    ranking = paper_tables.detection_ranking(rows, tests)
    assert ranking.metrics == ["A", "B", "C"]
    auc, ba = ("", "roc_auc"), ("", "balanced_accuracy")
    assert {m for m, s in ranking.bold if s == auc} == {"A", "B"}
    assert {m for m, s in ranking.bold if s == ba} == {"A"}           # no tests: the best value, never the NaN
    md = ranking.markdown("c")
    assert "undefined" in md and "**0.700**" in md and "**undefined" not in md
    unresolvable = tests.assign(conventions='{"resolution": {"resolvable": false}}')
    assert paper_tables.detection_clusters(rows, unresolvable)["cluster"].isna().all()
    unresolved = paper_tables.detection_ranking(rows, unresolvable)     # issue 32: no bold, and it says why
    assert {m for m, s in unresolved.bold if s == auc} == set() and {m for m, s in unresolved.bold if s == ba} == {"A"}
    assert "cannot resolve" in unresolved.notes("wide") and "cannot resolve" in unresolved.latex("c")


def test_judges_bold_only_where_higher_is_better():
    stats = pd.DataFrame([{"judge": j, "cluster": c, **{f"{s}{x}": v + d for s in paper_tables.JUDGE_STATISTICS
                                                        for x, d in (("", 0), ("_lower", -0.1), ("_upper", 0.1))}}
                          for j, c, v in (("good", 1, 0.9), ("bad", 2, 0.4))])
    ranking = paper_tables.judges_ranking(stats)
    bold_columns = {s[0] for _, s in ranking.bold}
    assert "first_position_rate" not in bold_columns and "tie_rate" not in bold_columns
    assert ("good", ("accuracy",)) in ranking.bold and ("bad", ("accuracy",)) not in ranking.bold
    assert "No bold in first-position rate and tie rate" in ranking.notes("wide")


def test_categories_never_bold_a_drop():
    frame = pd.DataFrame([{"metric": m, "level": "system", "coefficient": "kendall", "category": c,
                           "category_measure": None, "ablated_measure": "h.no", "overall_correlation": r,
                           "correlation_drop": d, "category_correlation": None}
                          for m, r in (("m1", 0.5), ("m2", -0.2)) for c, d in (("entity", 0.9), ("predicate", -0.1))])
    ranking = paper_tables.categories_ranking(frame)
    assert ranking.metrics == ["m1", "m2"]
    assert ranking.bold == {("m1", ("system", "kendall", ""))}
    out = ranking.latex("c", "wide")
    assert r"$\Delta$ entity" in out and "$-$0.200" in out and "no bold among the drops" in out
