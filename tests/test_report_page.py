"""The report as a reader sees it (issue 27.3): one self-contained HTML file whose first screen
ranks the metrics (intervals, significance clusters, human ceiling), figures whose titles fit and
that all have a legend, notes where a curve hides another or a test cannot apply, and a page
rendered in headless Chromium (skipped, with the reason, where Chromium is absent)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from metaeval import Store
from tests.conftest import run_cli

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="needs Chromium (chromium, chromium-browser or "
                                                              "google-chrome on PATH) to render the report")
#: The only web addresses a report may hold: links to documentation, never something it loads.
DOCUMENTATION = ()


# --- figures: titles inside the figure, a legend on each -------------------------------------------
def _outside(fig) -> list[str]:
    """Where ``fig``'s drawn artists (titles, labels, legends) reach outside the figure: clipped when saved."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    tight = fig.get_tightbbox(canvas.get_renderer())     # inches, of what is drawn
    width, height = fig.get_size_inches()
    tol = 0.02
    return [side for side, over in (("left", tight.x0 < -tol), ("bottom", tight.y0 < -tol),
                                    ("right", tight.x1 > width + tol), ("top", tight.y1 > height + tol)) if over]


def _has_legend(fig) -> bool:
    return bool(fig.legends) or any(ax.get_legend() is not None for ax in fig.axes)


def _ci_rows(n=6, long=False):
    names = [("a-very-long-metric-name.with.parts-" if long else "m") + str(i) for i in range(n)]
    est = np.linspace(-0.2, 0.9, n)
    return pd.DataFrame({"metric": names, "estimate": est, "lower": est - 0.3, "upper": np.minimum(est + 0.2, 1),
                         "alpha": 0.05, "method": "boot-both", "level": "system", "coefficient": "kendall"})


def _power_rows():
    rows = []
    for method, powers in (("williams", [0, 0, 0]), ("boot-both", [0.9, 0.4, 0.05]), ("perm-both", [0.9, 0.4, 0.05])):
        for p, power in zip((0.1, 0.5, 1.0), powers):
            rows.append({"method": method, "proportion": p, "power": power, "alpha": 0.05, "trials": 100,
                         "rejections": int(power * 100), "level": "system", "n_systems": 24,
                         "conventions": json.dumps({"pvalue": "williams_test (Student t, n - 3 df)" if method ==
                                                    "williams" else "permutation", "level": "system",
                                                    "coefficient": "kendall"})})
    return pd.DataFrame(rows)


def test_every_figure_has_a_legend_and_its_title_fits():
    """The system-level CI figure's title was clipped on both sides (issue 27): titles are wrapped
    to the figure, and each figure says what its marks mean."""
    from metaeval.present import agreement_plots, figures

    long = ("95% boot-both CIs, system level, kendall, against expert.relevance; dashed: the human ceiling "
            "(leave-one-out, metaeval annotators) 0.769 [0.503, 0.909] and some more words to be long")
    tests = pd.DataFrame([dict(metric_a=a, metric_b=b, p_value=0.01, significant=a < b, alternative="two-sided",
                               correction="holm", correction_group="metric")
                          for a in "xyz" for b in "xyz" if a != b])
    bins = pd.DataFrame([dict(metric=m, bin=b, accuracy=0.5 + 0.1 * b, pairs=10) for m in "ab" for b in range(3)])
    tau = pd.DataFrame([dict(metric_a="a", metric_b="b", bin=b, tau=0.3, disagreement=0.2, random_disagreement=0.5)
                        for b in ("L", "M", "T", "L+M+T", "M+T")])
    series = {("a", "b"): pd.DataFrame({"value": [1.0, 2, 3], "tau": [0.1, 0.2, 0.3], "value_avg": [1.0, 2, 3],
                                        "tau_avg": [0.1, 0.2, 0.3]})}
    drawn = {
        "ci": figures.ci_forest(_ci_rows(long=True), long),
        "ci with ceiling": figures.ci_forest(_ci_rows(), long, (0.8, 0.7, 0.9)),
        "power": figures.power_curves(_power_rows(), long),
        "close pairs": figures.delta_bin_accuracy(bins, long),
        "heatmap": figures.significance_heatmap(tests, 0.05, long),
        "disagreement": agreement_plots.disagreement_by_bin(tau, "t"),
        "tau vs property": agreement_plots.tau_vs_property_pairs(series, "ease", title=long),
    }
    for name, fig in drawn.items():
        assert _has_legend(fig), name
        assert _outside(fig) == [], name
    tau_heatmap = agreement_plots.tau_heatmap(tau, long)
    assert len(tau_heatmap.axes) == 2 and _outside(tau_heatmap) == []   # its key: the colour bar


def test_power_figure_says_which_curves_coincide_and_which_test_never_rejects():
    from metaeval.present import figures
    from metaeval.runs.report.paper import power_note as _power_note

    rows = _power_rows()
    assert figures.coinciding(rows, "method", "proportion", "power") == [["boot-both", "perm-both"]]
    assert figures.never_rejects(rows) == ["williams"]
    fig = figures.power_curves(rows, "t")
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "boot-both (= perm-both: identical values)" in labels
    assert "perm-both (= boot-both: identical values)" in labels
    assert "williams (power 0 at every proportion)" in labels
    styles = {line.get_label(): (line.get_linestyle(), line.get_marker()) for line in fig.axes[0].get_lines()}
    assert len({styles[lab] for lab in labels if "identical" in lab}) == 2   # told apart where they coincide
    note = _power_note(rows)
    assert "The curves of boot-both and perm-both coincide" in note
    assert "williams rejected H0 in none of the 100 trials at any proportion" in note
    assert "Student t, n - 3 df" in note and "the 24 systems (21 degrees of freedom)" in note
    assert "approximation for kendall" in note
    assert _power_note(rows[rows["method"] == "boot-both"]) == ""


# --- the first screen: the metrics ranked -------------------------------------------------------------
class _Page(HTMLParser):
    """What a reader and a browser get from a page: its text (no script or style), the ids, the
    src/href values, the headings and tables in order."""

    def __init__(self, text: str):
        super().__init__()
        self.text, self.ids, self.links, self.order = [], set(), [], []
        self._skip = 0
        self.feed(text)
        self.text = " ".join(" ".join(self.text).split())

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "style", "title"):
            self._skip += 1
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for a in ("src", "href"):
            if attrs.get(a):
                self.links.append((tag, a, attrs[a]))
        if tag in ("h1", "h2", "h3", "table", "section", "figure"):
            self.order.append((tag, attrs.get("id") or attrs.get("class") or ""))

    def handle_endtag(self, tag):
        if tag in ("script", "style", "title"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


def _ranking_rows(page: str) -> list[list[str]]:
    first = page[page.index('<section id="ranking">'):]
    table = first[first.index("<table"):first.index("</table>")]
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr, re.S)]
            for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)]


def _check_self_contained(parsed: _Page) -> None:
    for tag, attribute, value in parsed.links:
        if value.startswith("#"):
            assert value[1:] in parsed.ids, f"{tag} {attribute}={value}: no such id"
        elif value.startswith("data:"):
            continue
        else:
            assert value.startswith(DOCUMENTATION) and tag == "a" and attribute == "href", (tag, attribute, value[:80])


@pytest.fixture
def demo(db, cli):
    cli("demo", "--systems", "6", "--inputs", "12", "--k", "100")
    return db


def test_first_screen_ranks_the_metrics_as_winners_does(demo, cli, tmp_path):
    """Metrics sorted by correlation with their CI, the clusters of `metaeval winners` (every pair
    tested by the demo), bold = the top cluster, the human ceiling as the table's last row."""
    cli("annotators", "--dataset", "demo", "--k", "50")
    cli("winners", "--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--coefficient",
        "pearson")
    out = tmp_path / "r.html"
    cli("report", "--dataset", "demo", "--out", out)
    page = out.read_text()
    parsed = _Page(page)
    assert parsed.order[0] == ("h1", "") and parsed.order[1] == ("section", "ranking")
    assert [t for t in parsed.order if t[0] == "table"][0] == ("table", "ranking sortable")
    assert "Which metrics agree best with the human judgments?" in parsed.text
    rows = _ranking_rows(page)
    header, body, ceiling = rows[0], rows[1:-1], rows[-1]
    assert header[:5] == ["Rank", "Metric", "Cluster", "Correlation", "95% CI"]
    with Store(demo, read_only=True) as wh:
        winners = wh.sql("SELECT metric, correlation, rank, cluster FROM latest_winners WHERE level = 'system' "
                         "AND coefficient = 'pearson' ORDER BY rank")
        ci = wh.sql("SELECT metric, lower, upper FROM latest_confidence_intervals WHERE level = 'system' AND "
                    "coefficient = 'pearson'").set_index("metric")
        c = wh.sql("SELECT * FROM latest_human_ceiling WHERE level = 'system' AND coefficient = 'pearson' AND "
                   "estimator = 'leave-one-out'").iloc[0]
    assert [r[1] for r in body] == list(winners["metric"])
    for r, w in zip(body, winners.itertuples()):
        assert r[0] == str(w.rank) and r[2] == str(int(w.cluster))
        assert r[3] == f"{w.correlation:.3f}".replace("-", "\u2212")
        lo, hi = ci.loc[w.metric, "lower"], ci.loc[w.metric, "upper"]
        assert r[4] == f"[{lo:.3f}, {hi:.3f}]".replace("-", "\u2212")
    top = set(winners.loc[winners["cluster"] == 1, "metric"])
    bold = set(re.findall(r"<tr><td[^>]*>\d+</td><td>([^<]+)</td><td[^>]*>\d+</td><td[^>]*><b>", page))
    assert bold == top
    assert ceiling[1].startswith("human ceiling") and ceiling[3] == f"{c.value:.3f}"
    assert "top significance cluster is" in parsed.text and "Human ceiling:" in parsed.text
    _check_self_contained(parsed)
    assert not re.search(r"\b(None|nan|NaN)\b", parsed.text)


def _undefined_and_unresolvable(tmp_path, cli):
    """A dataset with a constant metric (undefined correlation, its tests left out of the correction)
    whose tests cannot resolve (k = 19: the smallest p-value 1/20 is above Holm's first threshold
    0.05/2 over each metric's two defined tests)."""
    rng = np.random.default_rng(0)
    rows = []
    for i in range(6):
        for j in range(5):
            h = i + rng.normal()
            rows += [(f"S{i}", f"D{j}", "human", h, "human"), (f"S{i}", f"D{j}", "good", h + rng.normal(), "automatic"),
                     (f"S{i}", f"D{j}", "noisy", rng.normal(), "automatic"),
                     (f"S{i}", f"D{j}", "fair", h + 3 * rng.normal(), "automatic"),
                     (f"S{i}", f"D{j}", "constant", 1.0, "automatic")]
    path = tmp_path / "u.csv"
    pd.DataFrame(rows, columns=["system", "input", "measure", "value", "kind"]).to_csv(path, index=False)
    cli("ingest", "table", path, "--dataset", "u")
    common = ["--dataset", "u", "--human", "human", "--level", "system", "--coefficient", "pearson"]
    cli("correlate", *common)
    cli("ci", *common, "--k", "40")
    cli("compare", *common, "--k", "19")


def test_undefined_never_ranked_and_unresolvable_tests_give_no_clusters(db, cli, tmp_path):
    _undefined_and_unresolvable(tmp_path, cli)
    out = tmp_path / "u.html"
    cli("report", "--dataset", "u", "--out", out)
    page = out.read_text()
    parsed = _Page(page)
    rows = _ranking_rows(page)
    header, body = rows[0], rows[1:-1]
    assert "Cluster" not in header and "Beats" not in header     # no test can be significant: no findings
    assert [r[1] for r in body][-1] == "constant" and len(body) == 4
    assert body[-1][0] == "—" and body[-1][2] == "—"             # undefined: a dash, never a rank
    assert "the correlation of constant is undefined" in parsed.text
    assert "No clusters: system level, pearson: no test of this family can be significant" in parsed.text
    assert rows[-1][1] == "human ceiling" and "one annotator per cell" in rows[-1][2]
    assert not re.search(r"\b(None|nan|NaN)\b", parsed.text)


def test_ranking_without_tests_says_how_to_get_them(db, cli, tmp_path):
    cli("demo", "--systems", "5", "--inputs", "6", "--k", "40")
    with Store(db) as wh:   # the demo wrote tests: without them
        wh.con.execute("DELETE FROM hypothesis_tests")
    out = tmp_path / "r.html"
    cli("report", "--dataset", "demo", "--out", out)
    text = _Page(out.read_text()).text
    assert "no significance tests are stored for this setting: run `metaeval --db" in text
    assert "compare --dataset demo --human expert.relevance --level system --coefficient pearson`" in text
    assert "the highest is" in text and "its interval overlaps those of" in text


# --- rendered in headless Chromium -------------------------------------------------------------------------
def _chromium(tmp_path, page, *flags) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1280,900", *flags,
                           page.as_uri()], capture_output=True, text=True, timeout=120)


def _rendered(tmp_path, page):
    shot = tmp_path / "first-screen.png"
    _chromium(tmp_path, page, f"--screenshot={shot}")
    assert shot.exists(), "Chromium wrote no screenshot"
    import matplotlib.image

    image = matplotlib.image.imread(shot)
    assert image.shape[:2] == (900, 1280) and np.ptp(image) > 0
    dom = _chromium(tmp_path, page, "--dump-dom")
    assert dom.returncode == 0 and "<h1>" in dom.stdout, dom.stderr[-2000:]
    return _Page(dom.stdout), dom.stdout


@needs_chromium
def test_report_in_headless_chromium(demo, cli, tmp_path):
    cli("annotators", "--dataset", "demo", "--k", "50")
    out = tmp_path / "report.html"
    cli("report", "--dataset", "demo", "--out", out)
    parsed, dom = _rendered(tmp_path, out)
    assert parsed.order[0] == ("h1", "") and parsed.order[1] == ("section", "ranking")
    assert parsed.text.startswith("Which metrics agree best with the human judgments? Dataset demo")
    assert "System level, Pearson correlation with expert.relevance: the top significance cluster is" in parsed.text
    rows = _ranking_rows(dom)
    assert rows[0][:4] == ["Rank", "Metric", "Cluster", "Correlation"] and rows[-1][1].startswith("human ceiling")
    _check_self_contained(parsed)
    toc = [v[1:] for tag, a, v in parsed.links if tag == "a" and v.startswith("#") and not v.startswith("#run-")]
    assert {"ranking", "intervals", "tests", "dataset", "provenance"} <= set(toc)
    assert not re.search(r"\b(None|nan|NaN)\b", parsed.text)
    assert len(re.findall(r'<img src="data:image/svg\+xml;base64,', dom)) == 8


@needs_chromium
@pytest.mark.shared_data
def test_summeval_report_in_headless_chromium(warehouse_copy, tmp_path):
    common = ["--dataset", "summeval", "--human", "expert.relevance", "--metric", "rouge-*.f1", "--metric",
              "bertscore.f1", "--level", "system", "--coefficient", "kendall"]
    run_cli(warehouse_copy, "correlate", *common)
    run_cli(warehouse_copy, "ci", *common, "--k", "100")
    run_cli(warehouse_copy, "compare", *common, "--k", "200")   # Holm over 6 tests resolves: 1/201 < 0.05/6
    out = tmp_path / "summeval.html"
    run_cli(warehouse_copy, "report", "--dataset", "summeval", "--out", out)
    parsed, dom = _rendered(tmp_path, out)
    assert parsed.order[1] == ("section", "ranking")
    rows = _ranking_rows(dom)
    assert rows[0][:3] == ["Rank", "Metric", "Cluster"] and len(rows) == 1 + 7 + 1
    values = [float(r[3].replace("\u2212", "-")) for r in rows[1:-1]]
    assert values == sorted(values, reverse=True)
    assert rows[-1][1].startswith("human ceiling")
    _check_self_contained(parsed)
    assert not re.search(r"\b(None|nan|NaN)\b", parsed.text)


def test_the_headline_setting_is_evaluates_first_not_the_surest_stored(db, cli, tmp_path):
    """Issue 48 item 13: the report led with the "surest" stored setting (on SummEval system
    Spearman, the one with clusters) while `evaluate` leads with system Pearson. The headline follows
    evaluate's rule whatever is stored: here system Spearman has every pair tested (clusters) and
    system Pearson correlations only; Pearson leads. A ceiling not computed is a grey row."""
    cli("demo", "--systems", "5", "--inputs", "6", "--k", "40")
    with Store(db) as wh:   # the demo tested pearson and kendall: keep no test of pearson
        wh.con.execute("DELETE FROM hypothesis_tests WHERE coefficient = 'pearson'")
    common = ["--dataset", "demo", "--human", "expert.relevance", "--level", "system"]
    cli("correlate", *common, "--coefficient", "spearman")
    cli("ci", *common, "--coefficient", "spearman", "--k", "40")
    cli("compare", *common, "--coefficient", "spearman", "--k", "40")
    out = tmp_path / "r.html"
    cli("report", "--dataset", "demo", "--out", out)
    page = out.read_text()
    first = page[page.index('<section id="ranking">'):]
    assert first.index('id="ranking-expert-relevance-system-pearson"') < first.index("<details>")
    assert 'class="answer">System level, Pearson' in first
    assert re.search(r'<tr class="ceiling missing">.*?not computed at this level and coefficient: run `metaeval '
                     r'--db \S+ annotators --dataset demo', first, re.S)
    assert "tfoot tr.missing td{color:#888}" in page
