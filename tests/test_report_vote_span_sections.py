"""The report's sections of the newest families (issues 35, 36): leaderboard, lc-winrate, raters,
span-eval. Where the family ran, its section is on the page with its table, a figure whose title
names the correction (or says there is none) and the conclusion layer's verdict; where it did
not, no section (not even an empty one)."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from tests.conftest import ROOT

EXAMPLES = Path("docs") / "examples"
ANCHORS = ("leaderboard", "lc-winrate", "raters", "span-eval")


def run(db, *args):
    result = CliRunner().invoke(main, ["--db", str(db), *map(str, args)], catch_exceptions=False)
    assert result.exit_code == 0, f"{args}: {result.output}"
    return result.output


def page(db, dataset, out) -> str:
    run(db, "report", "--dataset", dataset, "--out", out)
    return html.unescape(out.read_text())


def sections(text: str) -> dict[str, str]:
    found = re.findall(r'<section id="([a-z-]+)"(.*?)</section>', text, flags=re.DOTALL)
    return {anchor: body for anchor, body in found}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("sections") / "wh.duckdb"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        run(path, "ingest", "preferences", EXAMPLES / "preferences.csv", "--dataset", "judges-demo")
        run(path, "ingest", "preferences", EXAMPLES / "alpaca.csv", "--dataset", "alpaca", "--judge", "gpt4")
        run(path, "ingest", "mqm", EXAMPLES / "mqm.tsv", "--dataset", "mqm-demo")
        for judge in ("xcomet", "gemba"):                         # two judges: paired tests between them
            run(path, "ingest", "mqm", EXAMPLES / "mqm-metric.tsv", "--dataset", "mqm-demo", "--judge", judge)
        for dataset in ("judges-demo", "alpaca", "mqm-demo"):       # before any family ran: no section
            assert not set(ANCHORS) & set(sections(page(path, dataset, path.parent / f"{dataset}-0.html")))
        run(path, "leaderboard", "--dataset", "judges-demo", "--k", "50")
        run(path, "lc-winrate", "--dataset", "alpaca", "--baseline", "baseline", "--judge", "gpt4", "--k", "50")
        run(path, "raters", "--dataset", "mqm-demo", "--human", "mqm", "--k", "50")
        run(path, "span-eval", "--dataset", "mqm-demo", "--k", "50")
    return path


def test_each_family_that_ran_has_its_section_and_no_other(db):
    expected = {"judges-demo": {"leaderboard"}, "alpaca": {"lc-winrate"}, "mqm-demo": {"raters", "span-eval"}}
    for dataset, anchors in expected.items():
        shown = sections(page(db, dataset, db.parent / f"{dataset}.html"))
        assert set(ANCHORS) & set(shown) == anchors, (dataset, set(shown))
        for anchor in anchors:
            body = shown[anchor]
            assert "<table" in body and "<figure" in body and "None" not in body and "nan" not in body
            titles = re.findall(r'<img src="[^"]*" alt="([^"]*)"', body)
            assert titles and all("correction" in t for t in titles), titles


def test_the_leaderboard_says_what_the_conclusion_layer_says(db):
    body = sections(page(db, "judges-demo", db.parent / "lb.html"))["leaderboard"]
    # k = 50 cannot resolve ten Holm-corrected tests: no groups, and the page says so
    assert "No groups or ranks" in body and "cannot resolve" in body and "k >= 200" in body
    assert "holm correction" in body and "sys-1" in body and "1521.2 [1461.0, 1638.6]" in body
    assert "Group" in body and re.search(r"Removing at most \d+ of the 540 votes", body)


def test_lc_winrate_orders_by_point_values_without_a_verdict(db):
    body = sections(page(db, "alpaca", db.parent / "lc.html"))["lc-winrate"]
    assert "not a ranking" in body and "no tests between systems" in body and "verbose" in body


def test_raters_and_span_eval_read_their_rows(db):
    shown = sections(page(db, "mqm-demo", db.parent / "mqm.html"))
    assert "Krippendorff" in shown["raters"] and "Kendall τ" in shown["raters"]
    body = shown["span-eval"]
    assert "xcomet" in body and "gemba" in body and "micro" in body and "macro" in body
    assert "p corrected" in body and "holm correction" in body
    assert re.search(r"<td[^>]*>0\.\d{3}</td>|<td[^>]*>&lt;|<td[^>]*><0", body) or "1.000" in body
