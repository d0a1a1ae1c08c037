"""The report is a list of sections (issue 32, item 3): each a small function of a Context,
registered in one ordered list that a family can extend; sections sharing an anchor are one
section of the page; no module of the package over 600 lines, no function over 80."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval.ingest.table import add_scores
from metaeval.runs import Warehouse, report
from metaeval.runs.report import page
from metaeval.runs.report.context import Section

PACKAGE = Path(report.__file__).parent


@pytest.fixture
def plain(db):
    rng = np.random.default_rng(3)
    rows = [{"system": f"S{i}", "input": f"d{j}", "h": rng.normal(), "m1": rng.normal(), "m2": rng.normal()}
            for i in range(4) for j in range(6)]
    with Warehouse(db) as wh:
        add_scores(wh, "plain", pd.DataFrame(rows), human=["h"])
        wh.correlate("plain", "h")   # 2 metrics x 3 levels x 3 coefficients
    return db


@pytest.fixture
def sections(monkeypatch):
    """SECTIONS restored after the test."""
    monkeypatch.setattr(page, "SECTIONS", list(page.SECTIONS))
    monkeypatch.setattr(page, "_PLACED", dict(page._PLACED))
    return page.SECTIONS


def test_the_sections_in_their_order():
    """The page is assembled from the registry: the answer, every family's sections by its
    report_position, the dataset's."""
    from metaeval.runs.engine.families import FAMILIES

    names = [n for n, _ in page.page_sections()]
    assert names[0] == "answer" and names[-1] == "dataset"
    assert names.index("correlate") < names.index("detection") < names.index("judges") < names.index("ci")
    assert names.index("compare") < names.index("system-tests")   # a family of its own module: after
    assert set(FAMILIES) <= set(names) and len(set(names)) == len(names)
    assert FAMILIES["correlate"].report == ("metaeval.runs.report.factuality:partial",
                                            "metaeval.runs.report.factuality:subsets")


def test_a_registered_section_is_on_the_page(plain, sections):
    def mine(ctx):
        s = Section("My family", "my-family")
        rows = ctx.rows("latest_correlations")
        s.blocks.append(f"<p>{len(rows)} correlations of {ctx.dataset}</p>")
        s.run_ids |= set(rows["run_id"])
        return s

    report.register_section("mine", mine)
    assert [n for n, _ in page.page_sections()][-2:] == ["mine", "dataset"]   # by default: before the dataset's
    report.register_section("nothing", lambda ctx: None, after="answer")
    assert [n for n, _ in page.page_sections()][1] == "nothing"
    with Warehouse(plain, read_only=True) as wh:
        html_page, _ = report.render(wh, "plain")
    order = re.findall(r'<section id="([a-z-]+)">', html_page)
    assert order.index("my-family") < order.index("dataset") and "nothing" not in order
    mine_section = re.search(r'<section id="my-family">(.*?)</section>', html_page, re.S).group(1)
    assert "<p>18 correlations of plain</p>" in mine_section and 'href="#run-1"' in mine_section
    assert 'id="run-1"' in html_page   # its run is in the provenance
    assert 'href="#my-family">My family</a>' in html_page   # and in the contents


def test_register_section_refuses_a_name_twice_or_an_unknown_place(sections):
    with pytest.raises(ValueError, match="already has a section named 'answer'"):
        report.register_section("answer", lambda ctx: None)
    with pytest.raises(ValueError, match="no section named 'nope'"):
        report.register_section("new", lambda ctx: None, after="nope")
    assert "new" not in [n for n, _ in page.page_sections()]


def test_sections_sharing_an_anchor_are_one():
    a = Section("T", "x", blocks=["<p>a</p>"], run_ids={1})
    b = Section("T", "x", note="no b yet: run `b()`")
    c = Section("T", "x", blocks=["<p>c</p>"], run_ids={2}, note="")
    d = Section("U", "y", note="no d yet")
    merged = page.merge([a, b, c, d])
    assert [s.anchor for s in merged] == ["x", "y"] and merged[1] is d
    assert merged[0].blocks == ["<p>a</p>", "<p>c</p>", '<p class="note">No b yet: run `b()`.</p>']
    assert merged[0].run_ids == {1, 2} and merged[0].note == ""
    [only_notes] = page.merge([Section("T", "x", note="no a"), Section("T", "x"), Section("T", "x", note="no b")])
    assert only_notes.note == "no a; no b" and not only_notes.blocks


def test_no_module_over_600_lines_and_no_function_over_80():
    for path in sorted(PACKAGE.glob("*.py")):
        source = path.read_text()
        assert len(source.splitlines()) <= 600, path.name
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert node.end_lineno - node.body[0].lineno + 1 <= 80, f"{path.name}: {node.name}"
