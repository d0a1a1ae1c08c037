"""Reports and figures are drawn from the persisted results, never recomputed."""

from __future__ import annotations

import base64
import fnmatch
import html
import io
import re
import shlex

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from metaeval import Store
from tests.conftest import run_cli, write_jsonl

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def analysed(db, cli):
    cli("demo", "--systems", "6", "--inputs", "12", "--k", "100")
    return db


class _Report:
    """A written report: its page, and the figures (SVG) and tables (CSV) embedded in it, by name."""

    def __init__(self, path):
        self.path = path
        self.page = path.read_text()
        self.svg = {name: base64.b64decode(data) for name, data in
                    re.findall(r'<figure id="fig-([^"]+)"><img src="data:image/svg\+xml;base64,([^"]+)"', self.page)}
        self.csv = {name: pd.read_csv(io.BytesIO(base64.b64decode(data))) for name, data in
                    re.findall(r'download="([^"]+)\.csv" href="data:text/csv;base64,([^"]+)"', self.page)}

    def named(self, pattern: str) -> list[str]:
        return sorted(n for n in self.svg if fnmatch.fnmatchcase(n, pattern))


def _report(cli, tmp_path, *args, name="report.html") -> _Report:
    out = tmp_path / name
    cli("report", *args, "--out", out)
    return _Report(out)


def _valid_svg(data: bytes):
    assert data.lstrip().startswith(b"<?xml") and b"<svg" in data[:2000] and len(data) > 1000


def _valid_png(path):
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 1000, path
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    assert np.ptp(image) > 0, f"{path} is blank"


def test_report_figures_tables_and_provenance(analysed, cli, tmp_path):
    out = tmp_path / "report.html"
    result = cli("report", "--dataset", "demo", "--out", out).output
    assert "with 8 figure(s)" in result  # 4 CI plots (2 levels x 2 coefficients) + 4 heatmaps
    report = _Report(out)
    page = report.page
    assert len(report.svg) == 8 and set(report.csv) == set(report.svg)   # one file: everything inside it
    for data in report.svg.values():
        _valid_svg(data)
    assert all(src.startswith("data:") for src in re.findall(r'src="([^"]+)"', page))
    assert not list(tmp_path.glob("*.png")) and not list(tmp_path.glob("*.csv"))
    with Store(analysed, read_only=True) as wh:
        ci = wh.sql("SELECT * FROM latest_confidence_intervals WHERE level = 'system' AND coefficient = 'kendall'")
        runs = wh.sql("SELECT run_id, data_fingerprint FROM analysis_runs")
    [csv] = report.named("ci-*-system-kendall")
    table = report.csv[csv].sort_values("metric").reset_index(drop=True)
    expected = ci.sort_values("metric").reset_index(drop=True)
    for col in ("estimate", "lower", "upper"):
        np.testing.assert_allclose(table[col], expected[col], rtol=1e-12)
        for value in expected[col]:
            assert f"{value:.4f}".replace("-", "\u2212") in page     # with a true minus
    for fp in runs["data_fingerprint"]:
        assert fp in page, "each result's data fingerprint is shown"
    assert "no power simulations" in page


def test_report_says_what_is_missing(db, cli, tmp_path):
    """Each hint is a command that can run on this warehouse (its --db, real measure names), or
    says what is missing instead (issue 13.11: no `--human H`, no `simulate power` without texts)."""
    # no human judgment: nothing to correlate with, and the hints say so instead of `--human H`
    rows = [f"S{i},D{j},m,{i + j},automatic" for i in range(4) for j in range(3)]
    (tmp_path / "u.csv").write_text("system,input,measure,value,kind\n" + "\n".join(rows) + "\n")
    cli("ingest", "table", tmp_path / "u.csv", "--dataset", "u")
    page = html.unescape(_report(cli, tmp_path, "--dataset", "u", name="u.html").page)
    assert "--human H" not in page
    assert "no confidence intervals: dataset u has no human judgment" in page
    # a human judgment but no summary texts (SummEval's shape): power cannot run there
    cli("ingest", "table", _tiny(tmp_path), "--dataset", "t")
    page = html.unescape(_report(cli, tmp_path, "--dataset", "t", name="t.html").page)
    db_option = shlex.join(["--db", str(db)])
    assert f"no confidence intervals yet: run `metaeval {db_option} ci --dataset t --human h`" in page
    assert "no hypothesis tests: they need two automatic metrics, and dataset t has 1" in page
    assert "simulate power" not in page
    assert "no power simulations: they score the summary texts, and dataset t has none" in page
    assert f"`metaeval {db_option} simulate coverage --dataset t --human h --metric m`" in page
    # from Python, the same hints are Store calls (runs/report.py Words: the CLI gives its command lines)
    from metaeval.runs import report as reporting

    with Store(db, read_only=True) as wh:
        python_page = html.unescape(reporting.render(wh, "t")[0])
    assert "no confidence intervals yet: run `wh.ci(dataset='t', human='h')`" in python_page
    assert "`wh.simulate_coverage(dataset='t', human='h', metrics=['m'])`" in python_page
    # every suggested analysis command parses and runs on this warehouse
    for command in re.findall(r"run `metaeval (?:--db \S+ )?((?:ci|compare|simulate coverage) [^`]*)`", page):
        args = shlex.split(command)
        if args[0] == "simulate":
            args += ["--trials", "2", "--k", "40"]
        else:
            args += ["--k", "40", "--level", "system", "--coefficient", "pearson"]
        cli(*args)


def _tiny(tmp_path):
    path = tmp_path / "tiny.csv"
    rows = [f"S{i},D{j},m,{i + j},automatic" for i in range(4) for j in range(3)]
    rows += [f"S{i},D{j},h,{i * j},human" for i in range(4) for j in range(3)]
    path.write_text("system,input,measure,value,kind\n" + "\n".join(rows) + "\n")
    return path


def test_plot_commands(analysed, cli, tmp_path):
    for args in (["ci", "--ci-method", "boot-both"], ["heatmap", "--correction", "holm"]):
        target = tmp_path / f"{args[0]}.png"
        cli("plot", *args, "--dataset", "demo", "--human", "expert.relevance", "--out", target)
        _valid_png(target)
    result = cli("plot", "ci", "--dataset", "demo", "--human", "expert.relevance", "--ci-method", "fisher",
                 "--out", tmp_path / "x.png", expect_ok=False)
    assert result.exit_code != 0 and ("ci --dataset demo --human expert.relevance --level system --coefficient "
                                      "pearson --ci-method fisher --alpha 0.05` first") in result.output
    result = cli("report", "--dataset", "demo", "--human", "nope", "--out", tmp_path / "r.html", expect_ok=False)
    assert "no human judgment 'nope'" in result.output


def test_power_curves_figure(tmp_path):
    from metaeval.present import figures

    rows = pd.DataFrame([{"method": m, "proportion": p, "power": min(1.0, (1 - p) * s), "alpha": 0.05}
                         for m, s in (("williams", 1.5), ("perm-both", 2.0)) for p in (0.1, 0.5, 1.0)])
    png, svg = figures.save(figures.power_curves(rows, "synthetic"), tmp_path / "power")
    _valid_png(png)
    assert svg.read_text().lstrip().startswith("<?xml")
    with pytest.raises(ValueError, match="no rows"):
        figures.power_curves(rows.iloc[:0])


def _spy_agreement(monkeypatch, name):
    """Capture (positional arguments, returned figure) of each call of ``present.agreement_plots.<name>``."""
    from metaeval.present import agreement_plots

    calls = []
    original = getattr(agreement_plots, name)

    def spy(*args, **kwargs):
        fig = original(*args, **kwargs)
        calls.append((args, fig))
        return fig

    monkeypatch.setattr(agreement_plots, name, spy)
    return calls


def _annotations(fig) -> pd.DataFrame:
    """The values written in a tau heatmap's cells, as a frame labelled like its axes."""
    ax = fig.axes[0]
    rows, columns = [t.get_text() for t in ax.get_yticklabels()], [t.get_text() for t in ax.get_xticklabels()]
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == len(rows) * len(columns)
    return pd.DataFrame(np.array(texts).reshape(len(rows), len(columns)), index=rows, columns=columns)


def _captions(page: str) -> list[str]:
    return [html.unescape(c) for c in re.findall(r"<figcaption>(.*?) — ", page)]


def _html_tables(page: str, summary: str) -> list[list[list[str]]]:
    """The cells (header row first) of each table in a <details> whose summary is ``summary``."""
    tables = re.findall(rf"<details><summary>{re.escape(summary)}</summary>(.*?)</details>", page, re.S)
    return [[[html.unescape(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr, re.S)]
             for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", t, re.S)] for t in tables]


def _panels(fig) -> dict[tuple[str, str], object]:
    """The visible panels of a tau-against-property figure, by metric pair."""
    return {tuple(ax.get_title().split("\n")[0].split(" vs ")): ax for ax in fig.axes if ax.get_visible()}


def _metrics(names):
    return [a for m in names for a in ("--metric", m)]


def test_report_agreement_section(analysed, cli, tmp_path, monkeypatch):
    """Demo data (no texts): a tau-by-bin heatmap whose annotations are the table's values, the
    disagreement figure, per-input tau against ease for every pair, and a plain note that
    abstractiveness and coverage need documents."""
    cli("agreement", "--dataset", "demo")
    heatmaps = _spy_agreement(monkeypatch, "tau_heatmap")
    scatters = _spy_agreement(monkeypatch, "tau_vs_property_pairs")
    out = tmp_path / "r.html"
    assert "with 11 figure(s)" in cli("report", "--dataset", "demo", "--out", out).output  # 8 + 3 agreement
    report = _Report(out)
    page = report.page
    drawn = report.named("agreement-*")
    assert [n.split("-")[1] for n in drawn] == ["disagreement", "property", "tau"]
    for name in drawn:
        _valid_svg(report.svg[name])
    captions = _captions(page)
    assert sum(c.startswith("τ by bin heatmap") for c in captions) == 1
    assert sum(c.startswith("per-input Kendall τ against ease of summarisation") for c in captions) == 1
    assert ("abstractiveness and coverage need the source documents and the reference texts; dataset 'demo' "
            "stores 0 documents and 0 reference texts") in html.unescape(page)
    with Store(analysed, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_score_range_agreement")
        props = wh.sql("SELECT * FROM latest_property_agreement")
    [csv] = report.named("agreement-tau-*")
    table = report.csv[csv]
    assert len(table) == len(rows) == 6 * 5  # 4 metrics: 6 pairs x 5 bins
    merged = table.merge(rows, on=["metric_a", "metric_b", "bin"], suffixes=("", "_sql"))
    np.testing.assert_allclose(merged["tau"], merged["tau_sql"], rtol=1e-12)
    # the heatmap: pairs x (L, M, T, L+M+T, M+T), then the mean over pairs; annotations = the CSV's values
    [(_, fig)] = heatmaps
    shown = _annotations(fig)
    bins = ["L", "M", "T", "L+M+T", "M+T"]
    assert list(shown.columns) == bins
    wide = table.assign(pair=table["metric_a"] + " vs " + table["metric_b"]).pivot(index="pair", columns="bin",
                                                                                  values="tau")
    assert list(shown.index) == sorted(wide.index) + ["mean over 6 pairs"]
    for pair, values in wide.iterrows():
        assert list(shown.loc[pair]) == [f"{values[b]:.2f}" for b in bins]
    assert list(shown.loc["mean over 6 pairs"]) == [f"{wide[b].mean():.2f}" for b in bins]
    image = fig.axes[0].images[0]
    assert image.get_cmap().name.startswith("RdBu") and image.get_clim() == (-1, 1)   # diverging, centred at 0
    # ... and the HTML table of the heatmap's cells (4 decimals) holds the same numbers
    [cells] = _html_tables(page, "table: the heatmap's cells")
    assert cells[0] == ["pair", *bins] and len(cells) == 1 + 6 + 1
    for row in cells[1:-1]:
        assert row[1:] == [f"{wide.loc[row[0], b]:.4f}".replace("-", "\u2212") for b in bins]
    # tau against ease: one panel per pair, one point per input the stored row counts
    [((series, prop, stored, _), fig)] = scatters
    ease = props[props["property"] == "ease"].set_index(["metric_a", "metric_b"])
    panels = _panels(fig)
    assert prop == "ease" and len(panels) == 6 == len(ease) == len(series) == len(stored)
    for pair, ax in panels.items():
        assert len(ax.collections[0].get_offsets()) == ease.loc[pair, "n_used"] > 0
        assert f"Pearson {ease.loc[pair, 'pearson']:.2f}" in ax.get_title()
        assert ax.get_xlabel() == "ease of summarisation" and len(ax.get_lines()) == 2  # moving average, zero
    assert len(report.csv[report.named("agreement-property-*")[0]]) == 6


def test_report_agreement_one_figure_per_setting(analysed, cli, tmp_path, monkeypatch):
    """Settings are never mixed: one heatmap per consensus/normalisation/alpha/significant_only,
    one tau-against-property figure per consensus/alpha/significant_only (tau over all summaries
    does not depend on the normalisation)."""
    cli("agreement", "--dataset", "demo")
    cli("agreement", "--dataset", "demo", "--normalisation", "dataset")
    cli("agreement", "--dataset", "demo", "--significant-only", "--alpha", "0.1")
    cli("agreement", "--dataset", "demo", "--metric", "sim-*.f1")                 # another consensus
    heatmaps = _spy_agreement(monkeypatch, "tau_heatmap")
    scatters = _spy_agreement(monkeypatch, "tau_vs_property_pairs")
    report = _report(cli, tmp_path, "--dataset", "demo")
    with Store(analysed, read_only=True) as wh:
        settings = wh.sql("SELECT DISTINCT consensus, normalisation, alpha, significant_only "
                          "FROM latest_score_range_agreement")
        property_settings = wh.sql("SELECT DISTINCT consensus, alpha, significant_only FROM latest_property_agreement")
    assert len(settings) == 4 and len(property_settings) == 3
    seen = set()
    for (rows, _), fig in heatmaps:
        key = rows[["consensus", "normalisation", "alpha", "significant_only"]].drop_duplicates()
        assert len(key) == 1 and not rows.duplicated(["metric_a", "metric_b", "bin"]).any()
        seen.add(tuple(key.iloc[0]))
        assert len(_annotations(fig)) == len(rows) // 5 + 1
    assert len(seen) == 4
    seen = set()
    for (_, _, stored, _), _ in scatters:
        key = stored[["consensus", "alpha", "significant_only", "property"]].drop_duplicates()
        assert len(key) == 1
        seen.add(tuple(key.iloc[0]))
    assert len(seen) == 3 and len(report.named("agreement-property-*")) == 3
    captions = _captions(report.page)
    assert sum(c.startswith("τ by bin heatmap") for c in captions) == 4
    assert sum("significant per-input taus (alpha 0.1)" in c for c in captions) == 3  # heatmap, disagreement, ease


def test_report_agreement_with_documents(db, cli, tmp_path, monkeypatch):
    """With source documents stored, tau is drawn against ease, abstractiveness and coverage (of
    metrics whose names are not globs of themselves)."""
    rng = np.random.default_rng(1)
    vocabulary = [f"w{i}" for i in range(60)]
    lines, cells = [], []
    for i in range(9):
        document = [" ".join(rng.choice(vocabulary, 12)) + " ." for _ in range(3)]
        reference = [" ".join(rng.choice(vocabulary[: 20 + 4 * i], 8)) + " ."]
        for system in range(5):
            lines.append({"instance_id": str(i), "summarizer_id": f"s{system}", "summarizer_type": "peer",
                          "summary": {"text": document[:1]},
                          "references": [{"summarizer_id": "ref", "text": reference}],
                          "documents": [{"text": document}]})
            cells += [{"system": f"s{system}", "input": str(i), "measure": m, "value": float(rng.random())}
                      for m in ("m1[stem]", "m2", "m3")]       # a glob character in a name
    summaries = write_jsonl(tmp_path / "summaries.jsonl", lines)
    table = tmp_path / "scores.csv"
    pd.DataFrame(cells).to_csv(table, index=False)
    cli("ingest", "table", table, "--dataset", "toy")
    cli("ingest", "summaries", summaries, "--dataset", "toy")
    cli("agreement", "--dataset", "toy")
    scatters = _spy_agreement(monkeypatch, "tau_vs_property_pairs")
    report = _report(cli, tmp_path, "--dataset", "toy")
    page = report.page
    assert "need the source documents" not in page
    drawn = report.named("agreement-property-*")
    assert [n.split("-")[3] for n in drawn] == ["abstractiveness", "coverage", "ease"]
    assert [args[1] for args, _ in scatters] == ["ease", "abstractiveness", "coverage"]
    for (_, prop, stored, _), fig in scatters:
        panels = _panels(fig)
        assert len(panels) == 3                                                  # 3 metrics: 3 pairs
        for pair, ax in panels.items():
            [n_used] = stored[(stored["metric_a"] == pair[0]) & (stored["metric_b"] == pair[1])]["n_used"]
            assert len(ax.collections[0].get_offsets()) == n_used
    captions = _captions(page)
    for label in ("ease of summarisation", "abstractiveness", "coverage"):
        assert sum(c.startswith(f"per-input Kendall τ against {label} ") for c in captions) == 1


@pytest.mark.shared_data
def test_report_agreement_on_realsumm(warehouse_copy, tmp_path, monkeypatch):
    """REALSumm (references, no documents): one row per pair for four metrics (the paper's
    setting: significant taus only); one row per metric beyond 45 pairs; tau against ease, with
    the note that abstractiveness and coverage need documents."""
    four = ["rouge-1.recall", "rouge-2.recall", "bertscore.recall", "js-2"]
    run_cli(warehouse_copy, "agreement", "--dataset", "realsumm", *_metrics(four), "--significant-only")
    run_cli(warehouse_copy, "agreement", "--dataset", "realsumm", *_metrics(["rouge-*", "bertscore.[fr]*"]))
    heatmaps = _spy_agreement(monkeypatch, "tau_heatmap")
    scatters = _spy_agreement(monkeypatch, "tau_vs_property_pairs")
    out = tmp_path / "r.html"
    run_cli(warehouse_copy, "report", "--dataset", "realsumm", "--out", out)
    report = _Report(out)
    page = report.page
    assert len(re.findall(r"<img ", page)) == len(report.svg) == 6    # 2 settings x 3 figures
    captions = _captions(page)
    assert sum(c.startswith("τ by bin heatmap") for c in captions) == 2
    assert sum(c.startswith("per-input Kendall τ against ease of summarisation") for c in captions) == 2
    assert page.count("dataset &#x27;realsumm&#x27; stores 0 documents and 100 reference texts") == 2
    with Store(warehouse_copy, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_score_range_agreement")
        props = wh.sql("SELECT * FROM latest_property_agreement WHERE property = 'ease'")
    assert sorted(len(r) for r in (rows[rows["significant_only"]], rows[~rows["significant_only"]])) == [30, 275]
    by_setting = {bool(args[0]["significant_only"].iloc[0]): _annotations(fig) for args, fig in heatmaps}
    # four metrics: one row per pair, annotations = the stored values
    shown = by_setting[True]
    assert len(shown) == 7
    for r in rows[rows["significant_only"]].itertuples():
        assert shown.loc[f"{r.metric_a} vs {r.metric_b}", r.bin] == f"{r.tau:.2f}"
    # eleven metrics, 55 pairs: one row per metric, the mean of its 10 pairs, then the mean of all 55
    shown, part = by_setting[False], rows[~rows["significant_only"]]
    assert len(shown) == 12 and shown.index[-1] == "mean over 55 pairs"
    mine = part[(part["metric_a"] == "rouge-2.recall") | (part["metric_b"] == "rouge-2.recall")]
    assert len(mine) == 10 * 5
    for b, tau in mine.groupby("bin")["tau"].mean().items():
        assert shown.loc["rouge-2.recall (mean of 10 pairs)", b] == f"{tau:.2f}"
    assert list(shown.iloc[-1]) == [f"{part[part['bin'] == b]['tau'].mean():.2f}" for b in shown.columns]
    # tau against ease: the 6 pairs of the four metrics; 6 of the 55 pairs; n_used points each
    assert len(scatters) == 2
    for (series, prop, stored, _), fig in scatters:
        assert prop == "ease" and len(_panels(fig)) == len(series) == len(stored) == 6
        consensus = stored["consensus"].iloc[0]
        mine = props[props["consensus"] == consensus].set_index(["metric_a", "metric_b"])
        assert len(mine) in (6, 55)
        for pair, ax in _panels(fig).items():
            assert len(ax.collections[0].get_offsets()) == mine.loc[pair, "n_used"] > 0
    [properties] = [t for t in _html_tables(page, "table: correlation over inputs of per-input τ with each "
                                                  "property, every pair") if len(t) == 1 + 55]
    assert properties[0][:3] == ["metric_a", "metric_b", "property"]


def _drawn(monkeypatch, name):
    """Capture the rows handed to ``present.figures.<name>``."""
    from metaeval.present import figures

    calls = []
    original = getattr(figures, name)

    def spy(rows, *args, **kwargs):
        calls.append(rows.copy())
        return original(rows, *args, **kwargs)

    monkeypatch.setattr(figures, name, spy)
    return calls


def test_plot_heatmap_draws_one_setting_only(analysed, cli, tmp_path, monkeypatch):
    """Rows of runs with another alternative, correction group or alpha are never mixed in."""
    base = ["--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--coefficient", "pearson"]
    cli("compare", *base, "--k", "50", "--alternative", "greater", "--correction", "holm")
    cli("compare", *base, "--k", "50", "--correction", "holm", "--correction-group", "all", "--alpha", "0.1")
    calls = _drawn(monkeypatch, "significance_heatmap")
    settings = {(): ("two-sided", "metric", 0.05),          # the demo's tests, with the defaults
                ("--alternative", "greater"): ("greater", "metric", 0.05),
                ("--correction-group", "all", "--alpha", "0.1"): ("two-sided", "all", 0.1)}
    for options, expected in settings.items():
        cli("plot", "heatmap", *base, "--correction", "holm", *options, "--out", tmp_path / "t.png", "--overwrite")
        rows = calls[-1]
        assert len(rows) == 12 and not rows.duplicated(["metric_a", "metric_b"]).any()
        assert {tuple(r) for r in rows[["alternative", "correction_group", "alpha"]].to_numpy()} == {expected}
    result = cli("plot", "heatmap", *base, "--correction", "holm", "--alpha", "0.2", "--out", tmp_path / "t.png",
                 expect_ok=False)
    assert result.exit_code == 1 and "--alpha 0.2" in result.output and "--alpha 0.1" in result.output


def test_plot_ci_draws_one_alpha_only(analysed, cli, tmp_path, monkeypatch):
    cli("ci", "--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--coefficient", "pearson",
        "--k", "50", "--alpha", "0.1")
    calls = _drawn(monkeypatch, "ci_forest")
    for alpha in ("0.05", "0.1"):
        cli("plot", "ci", "--dataset", "demo", "--human", "expert.relevance", "--alpha", alpha, "--out",
            tmp_path / "ci.svg", "--overwrite")
        assert len(calls[-1]) == 4 and set(calls[-1]["alpha"]) == {float(alpha)}


def test_figures_refuse_rows_of_several_settings(analysed):
    from metaeval.present import figures

    with Store(analysed, read_only=True) as wh:
        tests = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE level = 'system' AND coefficient = 'pearson'")
        cis = wh.sql("SELECT * FROM latest_confidence_intervals")
    with pytest.raises(ValueError, match="mix settings"):
        figures.significance_heatmap(pd.concat([tests, tests.assign(alternative="less")]), 0.05)
    with pytest.raises(ValueError, match="mix settings"):
        figures.ci_forest(cis)                     # two levels, two coefficients
    with pytest.raises(ValueError, match="several rows"):
        one = cis[(cis["level"] == "system") & (cis["coefficient"] == "pearson")]
        figures.ci_forest(pd.concat([one, one]))


@pytest.mark.parametrize("alternative, question", [("greater", "is a better than b?"),
                                                   ("less", "is a worse than b?"),
                                                   ("two-sided", "do a and b differ?")])
def test_heatmap_states_the_alternative(analysed, cli, tmp_path, alternative, question):
    from metaeval.present import figures

    if alternative != "two-sided":    # the demo's tests are two-sided
        cli("compare", "--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--coefficient",
            "kendall", "--k", "50", "--alternative", alternative, "--correction", "holm")
    with Store(analysed, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE level = 'system' AND coefficient = 'kendall' "
                      "AND alternative = ?", [alternative])
    fig = figures.significance_heatmap(rows, 0.05, "demo")
    assert fig.axes[0].get_title().replace("\n", " ").startswith(question)
    captions = re.findall(r"<figcaption>(.*?) — ", _report(cli, tmp_path, "--dataset", "demo").page)
    mine = [c for c in captions if f"({alternative}), system level, kendall" in c]
    assert len(mine) == 1 and mine[0].startswith(question)
    others = set(figures.HYPOTHESES.values()) - {figures.HYPOTHESES[alternative]}
    assert not any(html.unescape(mine[0]).startswith(o) for o in others)


def _fake_power(db, variants=("recall", "f1")):
    """Finished power rows of two ROUGE variants (as `simulate power` writes them), without the
    texts a real simulation needs."""
    with Store(db) as wh:
        for variant in variants:
            run_id = wh.con.execute("INSERT INTO analysis_runs (command, parameters, seed, version, data_fingerprint,"
                                    " status) VALUES ('simulate-power', '{}', 0, 'test', 'fp', 'finished')"
                                    " RETURNING run_id").fetchall()[0][0]
            for method, scale in (("williams", 1.0), ("perm-both", 1.5)):
                for p in (0.1, 0.5, 1.0):
                    power = min(1.0, (1 - p) * scale * (1 if variant == "recall" else 0.5))
                    wh.con.execute(
                        "INSERT INTO power (run_id, dataset, human, variant, level, coefficient, method, proportion,"
                        " alpha, k, seed, trials, rejections, power, n_systems, n_inputs, fingerprint, conventions)"
                        " VALUES (?, 'demo', 'expert.relevance', ?, 'system', 'pearson', ?, ?, 0.05, 100, 0, 100,"
                        " ?, ?, 6, 12, 'fp', '{}')", [run_id, variant, method, p, round(power * 100), power])


def test_report_draws_one_power_figure_per_variant(analysed, cli, tmp_path):
    _fake_power(analysed)
    report = _report(cli, tmp_path, "--dataset", "demo")
    drawn = report.named("power-*")
    assert len(drawn) == 2
    for name, variant in zip(drawn, ("f1", "recall")):
        table = report.csv[name]
        assert set(table["variant"]) == {variant} and len(table) == 6
        _valid_svg(report.svg[name])
    page = report.page
    assert "power of ROUGE-1 recall" in page and "power of ROUGE-1 f1" in page


def test_plot_power_draws_one_variant(analysed, cli, tmp_path, monkeypatch):
    _fake_power(analysed)
    calls = _drawn(monkeypatch, "power_curves")
    for variant in ("recall", "f1"):
        cli("plot", "power", "--dataset", "demo", "--human", "expert.relevance", "--rouge-variant", variant,
            "--out", tmp_path / "p.png", "--overwrite")
        assert len(calls[-1]) == 6 and set(calls[-1]["variant"]) == {variant}


# --- issue 13.10: a heatmap states its correction, has a legend, orders metrics as Figure 5 ------
def _tests(correction: str, p: dict, significant: dict) -> pd.DataFrame:
    rows = [dict(metric_a=a, metric_b=b, p_value=p[a, b], significant=significant[a, b], alternative="greater",
                 correction=correction, correction_group="metric", human="h", level="system",
                 coefficient="pearson", method="perm-both", family="f", alpha=0.05)
            for a, b in p]
    return pd.DataFrame(rows)


def test_heatmap_title_and_legend_state_the_correction():
    from metaeval.present import figures

    pairs = [("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")]
    p = dict(zip(pairs, [0.01, 0.9, 0.04, 0.95, float("nan"), float("nan")], strict=True))
    significant = dict(zip(pairs, [True, False, False, False, None, None], strict=True))
    fig = figures.significance_heatmap(_tests("bonferroni", p, significant), 0.05)
    ax = fig.axes[0]
    assert "bonferroni correction within each metric a's family" in ax.get_title().replace("\n", " ")
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert labels == ["p <= 0.05, uncorrected", "significant after bonferroni correction within each metric a's "
                      "family", "undefined (p is NaN)"]
    # no correction: filled = significant, nothing outlined, and the title says so
    fig = figures.significance_heatmap(_tests("none", p, {k: (v <= 0.05) for k, v in p.items()}), 0.05)
    assert "no multiple-comparison correction" in fig.axes[0].get_title().replace("\n", " ")
    assert [t.get_text() for t in fig.legends[0].get_texts()][0] == "significant, p <= 0.05"
    outlines = [r for r in fig.axes[0].patches if not r.get_fill()]
    assert outlines == []


def test_heatmap_orders_metrics_by_their_correlation_with_the_human():
    from metaeval.present import figures

    pairs = [(a, b) for a in "abc" for b in "abc" if a != b]
    p = {k: 0.5 for k in pairs}
    fig = figures.significance_heatmap(_tests("none", p, {k: False for k in pairs}), 0.05,
                                       correlations={"a": 0.1, "b": 0.7, "c": 0.4})
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert ticks == ["b (0.700)", "c (0.400)", "a (0.100)"]
    assert "highest first" in fig.axes[0].get_title().replace("\n", " ")


def test_plot_heatmap_uses_stored_correlations_for_the_order(analysed, cli, tmp_path, monkeypatch):
    calls = []
    from metaeval.present import figures

    original = figures.significance_heatmap
    monkeypatch.setattr(figures, "significance_heatmap",
                        lambda *a, **k: calls.append(k.get("correlations")) or original(*a, **k))
    base = ["--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--coefficient", "pearson"]
    cli("correlate", *base)
    cli("plot", "heatmap", *base, "--correction", "holm", "--out", tmp_path / "t.png")
    with Store(analysed, read_only=True) as wh:
        stored = wh.sql("SELECT metric, value FROM latest_correlations WHERE dataset = 'demo' AND level = 'system' "
                        "AND coefficient = 'pearson'")
    assert calls[-1] == dict(zip(stored["metric"], stored["value"], strict=True)) and len(calls[-1]) == 4


def _toy_table(tmp_path, metrics=("m.a", "m.b", "m.c"), systems=6, inputs=8, seed=0):
    """A small table of one human judgment and ``metrics``, the i-th noisier than the (i-1)-th."""
    rng = np.random.default_rng(seed)
    cells = []
    for s in range(systems):
        for i in range(inputs):
            h = s + rng.normal()
            cells.append({"system": f"s{s}", "input": f"d{i}", "measure": "human.q", "kind": "human", "value": h})
            cells += [{"system": f"s{s}", "input": f"d{i}", "measure": m, "value": h + (j + 1) * rng.normal()}
                      for j, m in enumerate(metrics)]
    path = tmp_path / "toy.csv"
    pd.DataFrame(cells).to_csv(path, index=False)
    return path


@pytest.mark.parametrize("compared, n", [(["m.*"], 3), (["m.b", "m.c"], 2)])
def test_report_with_tests_of_a_metric_not_correlated(db, cli, tmp_path, compared, n):
    """Stored tests naming a metric that no stored correlation names are not of the ranking (it
    raised KeyError: the test's cells were looked up among the correlated metrics' cells), also
    when no stored test is of two ranked metrics."""
    cli("ingest", "table", _toy_table(tmp_path), "--dataset", "toy")
    base = ["--dataset", "toy", "--human", "human.q"]
    cli("compare", *base, *(a for m in compared for a in ("--metric", m)), "--level", "system", "--coefficient",
        "pearson", "--method", "williams")
    cli("correlate", *base, "--metric", "m.a", "--metric", "m.b")
    page = _report(cli, tmp_path, "--dataset", "toy").page
    assert f"compare {n} metrics, not the 2 ranked here" in page   # the ranking says why it has no clusters


def test_heatmap_orders_by_correlation_only_when_every_metric_has_one():
    """A metric without a stored correlation is not "n/a" at the end of an order said to be by
    correlation: the order is by name and the title names what is missing; a stored NaN is an
    undefined correlation, last and labelled so."""
    from metaeval.present import figures

    pairs = [(a, b) for a in "abc" for b in "abc" if a != b]
    rows = _tests("none", {k: 0.5 for k in pairs}, {k: False for k in pairs})

    def drawn(correlations):
        ax = figures.significance_heatmap(rows, 0.05, correlations=correlations).axes[0]
        return [t.get_text() for t in ax.get_yticklabels()], ax.get_title().replace("\n", " ")

    ticks, title = drawn({"c": 0.9, "b": 0.1})
    assert ticks == ["a", "b", "c"] and "metrics by name; no stored correlation of a" in title
    assert "highest first" not in title and "n/a" not in " ".join(ticks)
    for empty in ({}, None):
        ticks, title = drawn(empty)
        assert ticks == ["a", "b", "c"] and title.endswith("(metrics by name)")
    ticks, title = drawn({"a": float("nan"), "b": 0.1, "c": 0.9})
    assert ticks == ["c (0.900)", "b (0.100)", "a (undefined)"] and "highest first" in title


def test_plot_heatmap_of_metrics_partly_correlated(db, cli, tmp_path, monkeypatch):
    from metaeval.present import figures

    cli("ingest", "table", _toy_table(tmp_path), "--dataset", "toy")
    base = ["--dataset", "toy", "--human", "human.q", "--level", "system", "--coefficient", "pearson"]
    cli("compare", *base, "--metric", "m.*", "--method", "williams")
    cli("correlate", *base, "--metric", "m.c", "--metric", "m.b")
    figs = []
    original = figures.significance_heatmap
    monkeypatch.setattr(figures, "significance_heatmap", lambda *a, **k: figs.append(original(*a, **k)) or figs[-1])
    cli("plot", "heatmap", *base, "--method", "williams", "--out", tmp_path / "t.png")
    ax = figs[-1].axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["m.a", "m.b", "m.c"]
    assert "no stored correlation of m.a" in ax.get_title().replace("\n", " ")
