"""Reports and figures are drawn from the persisted results, never recomputed."""

from __future__ import annotations

import html
import re

import matplotlib.image
import numpy as np
import pandas as pd
import pytest

from warehouse import Warehouse

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def analysed(db, cli):
    cli("demo", "--systems", "6", "--inputs", "12", "--k", "100")
    return db


def _valid_png(path):
    data = path.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 1000, path
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    assert np.ptp(image) > 0, f"{path} is blank"


def test_report_figures_tables_and_provenance(analysed, cli, tmp_path):
    out = tmp_path / "report"
    result = cli("report", "--dataset", "demo", "--out", out).output
    assert "with 8 figure(s)" in result  # 4 CI plots (2 levels x 2 coefficients) + 4 heatmaps
    page = (out / "index.html").read_text()
    images = sorted(p.name for p in out.glob("*.png"))
    assert len(images) == 8 and len(list(out.glob("*.svg"))) == 8
    for name in images:
        _valid_png(out / name)
        assert f'src="{name}"' in page
    referenced = set(re.findall(r'src="([^"]+)"', page))
    assert referenced == set(images)
    with Warehouse(analysed, read_only=True) as wh:
        ci = wh.sql("SELECT * FROM latest_confidence_intervals WHERE level = 'system' AND coefficient = 'kendall'")
        runs = wh.sql("SELECT run_id, data_fingerprint FROM analysis_runs")
    [csv] = out.glob("ci-*-system-kendall.csv")
    table = pd.read_csv(csv).sort_values("metric").reset_index(drop=True)
    expected = ci.sort_values("metric").reset_index(drop=True)
    for col in ("estimate", "lower", "upper"):
        np.testing.assert_allclose(table[col], expected[col], rtol=1e-12)
        for value in expected[col]:
            assert f"{value:.4f}" in page
    for fp in runs["data_fingerprint"]:
        assert fp in page, "each result's data fingerprint is shown"
    assert "no power simulations yet" in page or "Statistical power" in page


def test_report_says_what_is_missing(db, cli, tmp_path):
    cli("ingest", "table", _tiny(tmp_path), "--dataset", "t")
    cli("report", "--dataset", "t", "--out", tmp_path / "r")
    page = (tmp_path / "r" / "index.html").read_text()
    assert "no confidence intervals yet: run `metaeval ci --dataset t --human H`" in page
    assert "no hypothesis tests yet: run `metaeval compare" in page


def _tiny(tmp_path):
    path = tmp_path / "tiny.csv"
    rows = [f"S{i},D{j},m,{i + j},automatic" for i in range(4) for j in range(3)]
    rows += [f"S{i},D{j},h,{i * j},human" for i in range(4) for j in range(3)]
    path.write_text("system,input,measure,value,kind\n" + "\n".join(rows) + "\n")
    return path


def test_plot_commands(analysed, cli, tmp_path):
    for args in (["ci", "--method", "boot-both"], ["heatmap", "--correction", "holm"]):
        target = tmp_path / f"{args[0]}.png"
        cli("plot", *args, "--dataset", "demo", "--human", "expert.relevance", "--out", target)
        _valid_png(target)
    result = cli("plot", "ci", "--dataset", "demo", "--human", "expert.relevance", "--method", "fisher",
                 "--out", tmp_path / "x.png", expect_ok=False)
    assert result.exit_code != 0 and ("ci --dataset demo --human expert.relevance --level system --coefficient "
                                      "pearson --method fisher --alpha 0.05` first") in result.output
    result = cli("report", "--dataset", "demo", "--human", "nope", "--out", tmp_path / "r", expect_ok=False)
    assert "no human judgment 'nope'" in result.output


def test_power_curves_figure(tmp_path):
    from analyses import figures

    rows = pd.DataFrame([{"method": m, "proportion": p, "power": min(1.0, (1 - p) * s), "alpha": 0.05}
                         for m, s in (("williams", 1.5), ("perm-both", 2.0)) for p in (0.1, 0.5, 1.0)])
    png, svg = figures.save(figures.power_curves(rows, "synthetic"), tmp_path / "power")
    _valid_png(png)
    assert svg.read_text().lstrip().startswith("<?xml")
    with pytest.raises(ValueError, match="no rows"):
        figures.power_curves(rows.iloc[:0])


def test_report_agreement_section(analysed, cli, tmp_path):
    cli("agreement", "--dataset", "demo")
    out = tmp_path / "r"
    cli("report", "--dataset", "demo", "--out", out)
    page = (out / "index.html").read_text()
    drawn = sorted(p.name for p in out.glob("agreement-*.png"))
    assert len(drawn) == 2
    for name in drawn:
        _valid_png(out / name)
        assert f'src="{name}"' in page
    with Warehouse(analysed, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_score_range_agreement")
    [csv] = out.glob("agreement-tau-*.csv")
    table = pd.read_csv(csv)
    assert len(table) == len(rows) == 6 * 5  # 4 metrics: 6 pairs x 5 bins
    merged = table.merge(rows, on=["metric_a", "metric_b", "bin"], suffixes=("", "_sql"))
    np.testing.assert_allclose(merged["tau"], merged["tau_sql"], rtol=1e-12)


def _drawn(monkeypatch, name):
    """Capture the rows handed to ``analyses.figures.<name>``."""
    from analyses import figures

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
    cli("compare", *base, "--k", "50", "--alternative", "two-sided", "--correction", "holm")
    cli("compare", *base, "--k", "50", "--correction", "holm", "--correction-group", "all", "--alpha", "0.1")
    calls = _drawn(monkeypatch, "significance_heatmap")
    settings = {(): ("greater", "metric", 0.05),
                ("--alternative", "two-sided"): ("two-sided", "metric", 0.05),
                ("--correction-group", "all", "--alpha", "0.1"): ("greater", "all", 0.1)}
    for options, expected in settings.items():
        cli("plot", "heatmap", *base, "--correction", "holm", *options, "--out", tmp_path / "t.png")
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
            tmp_path / "ci.svg")
        assert len(calls[-1]) == 4 and set(calls[-1]["alpha"]) == {float(alpha)}


def test_figures_refuse_rows_of_several_settings(analysed):
    from analyses import figures

    with Warehouse(analysed, read_only=True) as wh:
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
    from analyses import figures

    if alternative != "greater":
        cli("compare", "--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--coefficient",
            "kendall", "--k", "50", "--alternative", alternative, "--correction", "holm")
    with Warehouse(analysed, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE level = 'system' AND coefficient = 'kendall' "
                      "AND alternative = ?", [alternative])
    fig = figures.significance_heatmap(rows, 0.05, "demo")
    assert fig.axes[0].get_title().replace("\n", " ").startswith(question)
    out = tmp_path / "r"
    cli("report", "--dataset", "demo", "--out", out)
    captions = re.findall(r"<figcaption>(.*?) — ", (out / "index.html").read_text())
    mine = [c for c in captions if f"({alternative}), system level, kendall" in c]
    assert len(mine) == 1 and mine[0].startswith(question)
    others = set(figures.HYPOTHESES.values()) - {figures.HYPOTHESES[alternative]}
    assert not any(html.unescape(mine[0]).startswith(o) for o in others)


def _fake_power(db, variants=("recall", "f1")):
    """Finished power rows of two ROUGE variants (as `simulate power` writes them), without the
    texts a real simulation needs."""
    with Warehouse(db) as wh:
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
    out = tmp_path / "r"
    cli("report", "--dataset", "demo", "--out", out)
    drawn = sorted(out.glob("power-*.csv"))
    assert len(drawn) == 2
    for path, variant in zip(drawn, ("f1", "recall")):
        table = pd.read_csv(path)
        assert set(table["variant"]) == {variant} and len(table) == 6
        _valid_png(path.with_suffix(".png"))
    page = (out / "index.html").read_text()
    assert "power of ROUGE-1 recall" in page and "power of ROUGE-1 f1" in page


def test_plot_power_draws_one_variant(analysed, cli, tmp_path, monkeypatch):
    _fake_power(analysed)
    calls = _drawn(monkeypatch, "power_curves")
    for variant in ("recall", "f1"):
        cli("plot", "power", "--dataset", "demo", "--human", "expert.relevance", "--rouge-variant", variant,
            "--out", tmp_path / "p.png")
        assert len(calls[-1]) == 6 and set(calls[-1]["variant"]) == {variant}
