"""The report's factuality and judges sections (issues 26 and 28, item 5): pooled against partial
correlations side by side, the correlations of each subset labelled by it, detection with its
intervals, tune subset and tests, the error categories with their figure; per judge statistics
with intervals, position bias, clusters and the Bradley-Terry rankings -- every number the stored
row's, nothing shown as None/nan, hints where results are missing, and no new section for a
dataset that has none of these data (rendered in headless Chromium where it is installed)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval.ingest.table import add_scores
from metaeval.runs import Warehouse
from metaeval.runs.report import render
from metaeval.runs.report.cells import interval_text as _interval_text, number as _number
from tests.conftest import run_cli
from tests.test_report_page import _check_self_contained, _Page, _rendered, needs_chromium

ROOT = Path(__file__).resolve().parents[1]
FACTUALITY = ROOT / "examples" / "factuality"
PREFERENCES = ROOT / "docs" / "examples" / "preferences.csv"
K = 50


def _section(page: str, anchor: str) -> str:
    m = re.search(rf'<section id="{anchor}">(.*?)</section>', page, re.S)
    return m.group(1) if m else ""


def _text(fragment: str) -> str:
    return _Page(fragment).text


@pytest.fixture
def factual(db):
    """The repository's factuality example with partial, pooled and per-subset correlations and
    intervals, detection by source (tuned on validation, evaluated on test) and its tests."""
    run_cli(db, "ingest", "table", FACTUALITY / "scores.csv", "--dataset", "factuality", "--human", "human.*")
    run_cli(db, "ingest", "attributes", FACTUALITY / "attributes.csv", "--dataset", "factuality")
    with Warehouse(db) as wh:
        common = dict(levels=["global"], coefficients=["pearson"])
        wh.correlate("factuality", "human.consistency", **common)
        wh.correlate("factuality", "human.consistency", control="system", **common)
        wh.ci("factuality", "human.consistency", k=K, **common)
        wh.ci("factuality", "human.consistency", k=K, control="system", **common)
        wh.correlate("factuality", "human.consistency", where=["split=test"], **common)
        wh.detection("factuality", "human.label", positive=1, tune=["split=validation"], where=["split=test"],
                     by="source", k=K)
    return db


def test_factuality_section_shows_the_stored_rows(factual):
    with Warehouse(factual, read_only=True) as wh:
        page, _ = render(wh, "factuality")
        corr = wh.sql("SELECT * FROM latest_correlations WHERE level = 'global'")
        detection = wh.sql("SELECT * FROM latest_detection")
        tests = wh.sql("SELECT * FROM latest_detection_tests")
    anchors = re.findall(r'<section id="([a-z-]+)"', page)
    assert anchors[:2] == ["ranking", "factuality"] and "judges" not in anchors
    section = _section(page, "factuality")
    text = _text(section)
    assert not re.search(r"\b(None|nan|NaN)\b", _Page(page).text)
    # pooled and partial side by side, each the stored value
    for metric in ("system-recognizer", "consistency-detector"):
        pooled = corr[(corr["metric"] == metric) & (corr["coefficient"] == "pearson") & (corr["subset"] == "")]
        partial = corr[(corr["metric"] == metric) & (corr["coefficient"] == "pearson[control=system]")]
        row = re.search(rf"<tr><td>{metric}</td>(.*?)</tr>", section).group(1)
        assert _number(pooled["value"].iloc[0]) in row and _number(partial["value"].iloc[0]) in row
        assert _number(pooled["value"].iloc[0] - partial["value"].iloc[0]) in row
    assert "the largest fall from pooled to partial is system-recognizer's" in text
    # the subset's rows labelled by it
    assert "split=test" in text and "Correlations per subset of cells" in text
    # detection: per group and macro, intervals, the tune subset and the tests
    for r in detection.itertuples():
        assert _interval_text(r.roc_auc, r.roc_auc_lower, r.roc_auc_upper) in text
        assert _interval_text(r.balanced_accuracy, r.balanced_accuracy_lower, r.balanced_accuracy_upper) in text
    assert "macro average" in text and "tuned on the cells of split=validation (per group of source)" in text
    assert len(tests) and f"paired bootstrap tests between the detectors ({len(tests)};" in text


def test_subset_rows_are_never_mixed_in_a_figure(factual):
    """The intervals and tests sections draw one figure per subset (the ranking reads subset '')."""
    with Warehouse(factual) as wh:
        wh.ci("factuality", "human.consistency", levels=["global"], coefficients=["pearson"], k=K,
              where=["split=test"])
        page, _ = render(wh, "factuality")
    captions = re.findall(r"<figcaption>(.*?) — ", _section(page, "intervals"))
    assert any("subset split=test" in c for c in captions) and any("subset" not in c for c in captions)


def test_factuality_hints_and_unchanged_report_without_its_data(db, tmp_path):
    rng = np.random.default_rng(0)
    rows = [{"system": f"S{i}", "input": f"d{j}", "h": rng.normal(), "m1": rng.normal(), "m2": rng.normal()}
            for i in range(4) for j in range(6)]
    with Warehouse(db) as wh:
        add_scores(wh, "plain", pd.DataFrame(rows), human=["h"])
        wh.correlate("plain", "h")
        before, _ = render(wh, "plain")
    assert "factuality" not in re.findall(r'<section id="([a-z-]+)"', before) and "judges" not in before
    (tmp_path / "a.csv").write_text("input,attribute,value\n" + "".join(f"d{j},split,{'a' if j < 3 else 'b'}\n"
                                                                         for j in range(6)))
    run_cli(db, "ingest", "attributes", tmp_path / "a.csv", "--dataset", "plain")
    out = tmp_path / "r.html"
    run_cli(db, "report", "--dataset", "plain", "--out", out)
    text = _text(_section(out.read_text(), "missing"))
    assert "Factual consistency : no partial correlations yet: run `metaeval --db" in text
    assert "correlate --control system --level global --dataset plain --human h`" in text
    assert "detection --positive 1 --dataset plain --human h`" in text


def test_error_categories_table_and_figure(db):
    rng = np.random.default_rng(3)
    rows = []
    for i in range(5):
        for j in range(8):
            entity, predicate = rng.normal(), rng.normal()
            rows.append({"system": f"S{i}", "input": f"d{j}", "h.overall": entity + predicate, "h.entity": entity,
                         "h.predicate": predicate, "h.no_entity": predicate, "h.no_predicate": entity,
                         "m": entity + 0.3 * rng.normal()})
    with Warehouse(db) as wh:
        add_scores(wh, "frank", pd.DataFrame(rows), human=["h.*"])
        stored = wh.categories("frank", "h.overall", {"entity": "h.entity", "predicate": "h.predicate"},
                               {"entity": "h.no_entity", "predicate": "h.no_predicate"}, levels=["global"],
                               coefficients=["pearson"])
        page, figures = render(wh, "frank", "h.overall")
    section = _section(page, "factuality")
    assert "Error categories: which errors each metric captures" in section and figures >= 1
    assert 'id="fig-categories' in section
    text = _text(section)
    for r in stored.itertuples():
        assert _number(r.correlation_drop) in text and _number(r.category_correlation) in text
    drop = stored.set_index("category")["correlation_drop"]
    assert drop["entity"] > 0.5 > drop["predicate"]   # m reads the entity errors


@pytest.fixture
def judged(db):
    run_cli(db, "ingest", "preferences", PREFERENCES, "--dataset", "judges-demo")
    with Warehouse(db) as wh:
        wh.judges("judges-demo", k=K)
    return db


def test_judges_section_first_when_only_preferences(judged):
    with Warehouse(judged, read_only=True) as wh:
        page, _ = render(wh, "judges-demo")
        stats = wh.sql("SELECT * FROM latest_judge_statistics")
        ranks = wh.sql("SELECT * FROM latest_preference_rankings WHERE kind = 'human' ORDER BY rank")
    # preferences and no scores: the judges, the dataset, the provenance; no section of scores
    # with nothing to say (no ranking of metrics, no list of score analyses to run)
    assert re.findall(r'<section id="([a-z-]+)"', page) == ["judges", "dataset", "provenance"]
    assert "<h1>Which judges agree best with the human preferences?" in page
    section = _section(page, "judges")
    text = _text(section)
    assert not re.search(r"\b(None|nan|NaN)\b", _Page(page).text)
    for r in stats.itertuples():
        row = _text(re.search(rf"<tr><td[^>]*>\d+</td><td>{r.judge}</td>(.*?)</tr>", section).group(0))
        assert _interval_text(r.accuracy, r.accuracy_lower, r.accuracy_upper) in row
        assert _interval_text(r.first_position_rate, r.first_position_rate_lower, r.first_position_rate_upper) in row
    best = stats.sort_values("rank").iloc[0]
    assert text.count(f"The most accurate judge is {best['judge']}") == 1
    # only the position-biased judge's first-position interval excludes 0.5
    assert "Position bias (the interval excludes 0.5): judge-position chose the output shown first" in text
    assert "judge-consistent chose" not in text and "judge-ties chose" not in text
    # k = 50 cannot resolve Holm's 0.05/3 (1/51 > 0.0167): no clusters (issue 32), and the caption says so
    assert "Cluster" not in section and "no clusters" in text and "judge-vs-judge tests" in text
    order = re.findall(r"<tr><td>(sys-\d)</td>", section)
    assert order == list(ranks["system"])


def test_judges_hint_before_the_run(db):
    run_cli(db, "ingest", "preferences", PREFERENCES, "--dataset", "judges-demo")
    with Warehouse(db, read_only=True) as wh:
        page, _ = render(wh, "judges-demo")
    assert "LLM judges and pairwise preferences : no judge statistics yet: run `wh.judges(dataset='judges-demo')`" \
        in _Page(page).text


@needs_chromium
def test_factuality_and_judges_in_headless_chromium(factual, tmp_path):
    run_cli(factual, "ingest", "preferences", PREFERENCES, "--dataset", "judges-demo")
    with Warehouse(factual) as wh:
        wh.judges("judges-demo", k=K)
    for dataset, anchor in (("factuality", "factuality"), ("judges-demo", "judges")):
        out = tmp_path / f"{dataset}.html"
        run_cli(factual, "report", "--dataset", dataset, "--out", out)
        parsed, dom = _rendered(tmp_path, out)
        assert ("section", anchor) in parsed.order
        _check_self_contained(parsed)
        assert not re.search(r"\b(None|nan|NaN)\b", parsed.text)
        assert 'table class="data sortable"' in _section(dom, anchor)


NEW_TABLES = ("detection", "detection_tests", "judge_statistics", "judge_tests", "preference_rankings",
              "error_categories")


def test_export_writes_the_new_tables(factual, tmp_path):
    """`export` offers and writes the tables of detection, judges and categories: every row (or
    --latest) of the table, with its columns, in each format."""
    run_cli(factual, "ingest", "preferences", PREFERENCES, "--dataset", "judges-demo")
    with Warehouse(factual) as wh:
        wh.judges("judges-demo", k=K)
        wh.categories("factuality", "human.consistency", {"label": "human.label"}, levels=["global"],
                      coefficients=["pearson"])
    for table in NEW_TABLES:
        with Warehouse(factual, read_only=True) as wh:
            every = wh.sql(f"SELECT * FROM {table} ORDER BY result_id")
            latest = wh.sql(f"SELECT * FROM latest_{table} ORDER BY result_id")
        assert len(every), table
        out = tmp_path / f"{table}.csv"
        result = run_cli(factual, "export", table, "--out", out)
        assert f"wrote {len(every)} rows of {table} to" in result.output
        written = pd.read_csv(out)
        assert list(written.columns) == list(every.columns) and list(written["result_id"]) == list(every["result_id"])
        out = tmp_path / f"{table}.parquet"
        run_cli(factual, "export", table, "--latest", "--dataset", str(latest["dataset"].iloc[0]), "--out", out)
        assert sorted(pd.read_parquet(out)["result_id"]) == sorted(
            latest.loc[latest["dataset"] == latest["dataset"].iloc[0], "result_id"])


def _rows_of(section: str) -> dict[str, list[str]]:
    """The cells of each row of a section's tables, by their first cell."""
    return {cells[0]: cells[1:] for row in re.findall(r"<tr>(.*?)</tr>", section)
            if (cells := re.findall(r"<td[^>]*>(.*?)</td>", row))}


def test_a_pooled_correlation_never_computed_is_not_computed_one_stored_nan_is_undefined(db, tmp_path):
    """issue 32: the factuality walk-through computed pooled correlations only with where/by; the
    report called those of every cell "undefined". No stored row: "not computed", with what to
    run; a stored row whose value is NaN (a constant metric): "undefined" -- in every output."""
    rng = np.random.default_rng(11)
    rows = [{"system": f"S{i}", "input": f"d{j}", "h": rng.normal() + i, "m": rng.normal() + i, "c": 3.0}
            for i in range(4) for j in range(8)]
    common = dict(levels=["global"], coefficients=["pearson"])
    with Warehouse(db) as wh:
        add_scores(wh, "conf", pd.DataFrame(rows), human=["h"])
        wh.correlate("conf", "h", control="system", **common)
        page, _ = render(wh, "conf")
    section = _section(page, "factuality")
    cells = _rows_of(section)
    assert cells["m"][0] == "not computed" and cells["m"][2] == "not computed" and cells["c"][0] == "not computed"
    assert "undefined" not in cells["m"]
    hint = "wh.correlate(dataset='conf', human='h', levels=['global'], coefficients=['pearson'])"
    text = _text(section)
    assert re.search(r"Not computed: no pooled Pearson of (c, m|m, c) is stored for these cells: run `", text)
    assert f"run `{hint}`" in text
    # the command line says it in its words
    out = tmp_path / "r.html"
    run_cli(db, "report", "--dataset", "conf", "--out", out)
    assert "correlate --dataset conf --human h --level global --coefficient pearson`" in _text(
        _section(out.read_text(), "factuality"))
    with Warehouse(db) as wh:
        wh.correlate("conf", "h", **common)   # now stored: m's a number, the constant c's NaN
        pooled = wh.sql("SELECT metric, value FROM latest_correlations WHERE coefficient = 'pearson'")
        page, _ = render(wh, "conf")
    assert np.isnan(pooled.set_index("metric")["value"]["c"])
    cells = _rows_of(_section(page, "factuality"))
    assert cells["c"][0] == "undefined" and cells["c"][2] == "undefined"
    assert cells["m"][0] == _number(pooled.set_index("metric")["value"]["m"])
    assert "not computed" not in _section(page, "factuality").lower()


def test_the_hint_for_a_subset_names_its_where_and_by():
    from metaeval.runs.report.factuality import subset_arguments

    assert subset_arguments("") == ()
    assert subset_arguments("split=test") == (("where", ["split=test"]),)
    assert subset_arguments("source=* & split=test") == (("where", ["split=test"]), ("by", "source"))
