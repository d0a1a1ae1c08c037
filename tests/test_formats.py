"""Output formats (issue 16, item 3): one DataFrame rendered as text, JSON, CSV, markdown and
LaTeX, and the --format option of the commands that print results."""

from __future__ import annotations

import io
import json
import math
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval.present import ranking_tables, tables
from metaeval.cli import main

FRAME = pd.DataFrame({
    "metric": ["rouge_2 & co", "b|c"],
    "value": [0.5, np.nan],
    "n": np.array([3, 4], dtype=np.int64),
    "significant": [True, False],
    "when": pd.to_datetime(["2026-01-02T03:04:05", None]),
    "conventions": ['{"level": "system", "k": 10}', '{"nested": {"a": [1, 2]}}'],
})


def test_json_rows_are_typed_nested_and_nan_is_null():
    rows = json.loads(tables.render(FRAME, "json"))
    assert rows[0] == {"metric": "rouge_2 & co", "value": 0.5, "n": 3, "significant": True,
                       "when": "2026-01-02T03:04:05", "conventions": {"level": "system", "k": 10}}
    assert rows[1]["value"] is None and rows[1]["when"] is None
    assert rows[1]["conventions"] == {"nested": {"a": [1, 2]}}
    assert isinstance(rows[1]["n"], int) and rows[1]["significant"] is False


def test_json_has_no_nan_or_infinity_tokens():
    out = tables.render(pd.DataFrame({"x": [np.inf, -np.inf, np.nan, 1.0]}), "json")
    assert json.loads(out) == [{"x": None}, {"x": None}, {"x": None}, {"x": 1.0}]
    json.loads(out, parse_constant=lambda c: pytest.fail(f"non-standard JSON token {c}"))


def test_csv_round_trips():
    back = pd.read_csv(io.StringIO(tables.render(FRAME, "csv")))
    assert list(back.columns) == list(FRAME.columns)
    assert back["metric"].tolist() == FRAME["metric"].tolist()
    assert back["value"].iloc[0] == 0.5 and math.isnan(back["value"].iloc[1])


def test_markdown_is_a_pipe_table_with_escaped_bars():
    lines = tables.render(FRAME[["metric", "value", "n"]], "markdown").splitlines()
    assert lines[0] == "| metric | value | n |" and lines[1] == "|---|---:|---:|"
    assert lines[3] == r"| b\|c |  | 4 |"
    assert len(lines) == 2 + len(FRAME)


def test_latex_is_booktabs_with_escaped_specials_and_a_caption():
    out = tables.render(FRAME[["metric", "value"]], "latex", caption="100% of x_y")
    assert r"\begin{tabular}{lr}" in out and r"\toprule" in out and r"\bottomrule" in out
    assert r"rouge\_2 \& co & 0.5000 \\" in out
    assert r"\caption{100\% of x\_y}" in out and out.startswith(r"\begin{table}")


def test_small_values_keep_significant_digits():
    assert tables.cell_text(0.00001234) == "1.234e-05"
    assert tables.cell_text(0.25) == "0.2500" and tables.cell_text(None) == ""


def test_table_is_an_alias_of_text_and_unknown_formats_are_refused():
    assert tables.render(FRAME, "table") == tables.render(FRAME, "text")
    with pytest.raises(ValueError, match="unknown format"):
        tables.render(FRAME, "html")


def _ranked():
    rows = []
    for metric, r, cluster in (("m1", 0.8, 1), ("m2", 0.9, 1), ("m_3", 0.1, 2)):
        rows.append({"metric": metric, "level": "system", "coefficient": "kendall", "correlation": r,
                     "lower": r - 0.1, "upper": r + 0.05, "cluster": cluster})
    return pd.DataFrame(rows)


def test_ranked_latex_orders_by_correlation_and_bolds_the_top_cluster():
    # issue 27 changed: cluster 1 is bold (it was the single best value), the CI has its own column
    out = ranking_tables.ranked_latex(_ranked(), caption="conventions here", layout="wide")
    body = [line for line in out.splitlines() if line.startswith(("m1", "m2", r"m\_3"))]
    assert [line.split(" & ")[0] for line in body] == ["m2", "m1", r"m\_3"]
    assert r"\textbf{0.}\rlap{\textbf{900}}\phantom{900} & [0.800, 0.950]" in body[0]
    assert r"\textbf{0.}\rlap{\textbf{800}}" in body[1] and r"\textbf" not in body[2]
    assert body[2].split(" & ")[1] == "2"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="needs pdflatex (apt-get install texlive-latex-base "
                                                              "texlive-latex-recommended)")
def test_latex_outputs_compile(tmp_path):
    body = ranking_tables.ranked_latex(_ranked(), caption="x_y 95% & more") + tables.render(FRAME, "latex", caption="t")
    compile_latex(tmp_path, body)


#: A two-column page of ACL's widths (\\textwidth 16 cm, \\columnwidth 7.7 cm).
PREAMBLE = ("\\documentclass[twocolumn]{article}\n\\usepackage[textwidth=16cm,columnsep=0.6cm]{geometry}\n"
            "\\usepackage{booktabs}\n")


def compile_latex(folder, body: str, name: str = "t") -> str:
    """Compile ``body`` in a two-column article of ACL's widths with booktabs; fail with the log's
    error if it does not compile, or on any overfull box (a table wider than its column or page).
    Returns the log."""
    doc = PREAMBLE + "\\begin{document}\n" + body + "\\end{document}\n"
    (folder / f"{name}.tex").write_text(doc)
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"], cwd=folder,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
    assert (folder / f"{name}.pdf").stat().st_size > 0
    log = (folder / f"{name}.log").read_text(errors="replace")
    assert "Overfull \\hbox" not in log, log[log.index("Overfull"):][:800]
    return log


# --- the commands ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("formats") / "w.duckdb"
    result = CliRunner().invoke(main, ["--db", str(db), "demo", "--dataset", "d", "--systems", "5", "--inputs", "6",
                                       "--k", "40"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return db


def _run(db, *args):
    result = CliRunner().invoke(main, ["--db", str(db), *map(str, args)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_correlate_json_is_the_latest_rows_with_nested_conventions(demo_db):
    result = _run(demo_db, "correlate", "--dataset", "d", "--human", "expert.relevance", "--format", "json")
    rows = json.loads(result.stdout)  # the status line went to stderr
    assert result.stderr.startswith("correlations: ")
    assert len(rows) == 4 * 3 * 3 and all(isinstance(r["conventions"], dict) for r in rows)
    from metaeval import Store
    with Store(demo_db, read_only=True) as wh:
        stored = wh.sql("SELECT metric, level, coefficient, value FROM latest_correlations WHERE dataset = 'd'")
    stored = {(r.metric, r.level, r.coefficient): r.value for r in stored.itertuples()}
    for r in rows:
        want = stored[(r["metric"], r["level"], r["coefficient"])]
        assert (r["value"] is None and math.isnan(want)) or r["value"] == want


@pytest.mark.parametrize("command", [
    ["ci", "--k", "40"], ["compare", "--k", "40"], ["correlate"], ["accuracy"],
    ["systems-agreement", "--test", "ttest"],
    ["winners", "--level", "system", "--coefficient", "pearson", "--correction", "holm"],
])
@pytest.mark.parametrize("fmt", ["json", "csv", "markdown", "latex"])
def test_every_result_command_prints_each_format(demo_db, command, fmt):
    result = _run(demo_db, *command, "--dataset", "d", "--human", "expert.relevance", "--format", fmt)
    out = result.stdout
    if fmt == "json":
        parsed = json.loads(out)
        rows = parsed if isinstance(parsed, list) else [r for v in parsed.values() for r in v]
        assert rows and all(isinstance(r, dict) for r in rows)
    elif fmt == "csv":
        text = out if not out.startswith("# ") else out.split("\n\n")[0].split("\n", 1)[1]
        assert len(pd.read_csv(io.StringIO(text))) > 0
    elif fmt == "markdown":
        assert "|---" in out
    else:
        assert r"\begin{tabular}" in out and r"\bottomrule" in out


def test_agreement_json_has_both_tables(demo_db):
    out = _run(demo_db, "agreement", "--dataset", "d", "--format", "json").stdout
    parsed = json.loads(out)
    assert set(parsed) == {"score_range_agreement", "property_agreement"} and parsed["score_range_agreement"]


def test_replicability_prints_formats(demo_db):
    _run(demo_db, "demo", "--dataset", "e", "--systems", "5", "--inputs", "6", "--k", "40", "--seed", "1")
    for dataset in ("d", "e"):
        _run(demo_db, "compare", "--dataset", dataset, "--human", "expert.relevance", "--level", "system",
             "--coefficient", "pearson", "--k", "40", "--alternative", "greater")   # replicability reads one-sided
    out = _run(demo_db, "replicability", "--dataset", "d", "--human", "expert.relevance", "--dataset", "e",
               "--level", "system", "--coefficient", "pearson", "--format", "json")
    rows = json.loads(out.stdout)
    assert rows and {"metric_a", "metric_b", "k_hat"} <= set(rows[0])


def test_results_filters(demo_db):
    _run(demo_db, "ci", "--dataset", "d", "--human", "expert.relevance", "--k", "40", "--ci-method", "fisher")
    base = ["results", "confidence_intervals", "--dataset", "d", "--format", "json"]
    every = json.loads(_run(demo_db, *base).stdout)
    some = json.loads(_run(demo_db, *base, "--metric", "sim-*.f1", "--level", "system", "--coefficient", "kendall",
                           "--method", "fisher", "--human", "expert.relevance").stdout)
    want = [r for r in every if r["metric"].startswith("sim-") and r["metric"].endswith(".f1")
            and r["level"] == "system" and r["coefficient"] == "kendall" and r["method"] == "fisher"]
    assert some == want and len(want) == 3
    tests = json.loads(_run(demo_db, "results", "hypothesis_tests", "--format", "json", "--metric", "sim-low.f1").stdout)
    assert tests and all("sim-low.f1" in (r["metric_a"], r["metric_b"]) for r in tests)
    bad = CliRunner().invoke(main, ["--db", str(demo_db), "results", "analysis_runs", "--level", "system"])
    assert bad.exit_code != 0 and "has no column 'level'" in bad.output


def test_old_table_format_still_works(demo_db):
    assert _run(demo_db, "results", "correlations", "--format", "table").stdout == \
        _run(demo_db, "results", "correlations", "--format", "text").stdout
    assert "sim-high.f1" in _run(demo_db, "measures", "d", "--format", "table").stdout


def test_a_pivots_levels_head_its_columns_in_text():
    """A pivot's columns of several levels (simulate power: level, coefficient, test) are headed
    by their names joined by spaces in text, not by a Python tuple."""
    rows = pd.DataFrame({"proportion": [0.1, 0.1, 0.5, 0.5], "level": ["system", "summary"] * 2,
                         "coefficient": ["pearson"] * 4, "method": ["perm-both"] * 4, "power": [0.1, 0.2, 0.5, 0.6]})
    wide = rows.pivot_table(index="proportion", columns=["level", "coefficient", "method"], values="power")
    header, first, second = tables.text(wide).splitlines()
    assert header.split() == ["proportion", *"summary pearson perm-both".split(), *"system pearson perm-both".split()]
    assert "(" not in header and first.split() == ["0.1", "0.2", "0.1"] and second.split() == ["0.5", "0.6", "0.5"]
