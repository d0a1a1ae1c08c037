"""plot scatter and plot distribution (issue 43: Graham 2015, Figs. 1-2): the stored cells drawn,
each point, bar and box checked against the cells themselves."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.image import imread

from metaeval.present import figures


def _grid(seed=0):
    rng = np.random.default_rng(seed)
    coverage = rng.uniform(0, 1, size=(5, 8))
    quality = np.clip(coverage + rng.uniform(0, 0.5, size=coverage.shape), 0, 1)
    coverage[0, 0], quality[1, 1] = np.nan, np.nan
    quality[4] = np.nan                                     # a system without a quality score
    return coverage, quality


def test_scatter_draws_the_cells_both_measures_score():
    coverage, quality = _grid()
    fig = figures.measure_scatter(coverage, quality, "coverage", "quality", diagonal=True)
    ax = fig.axes[0]
    both = np.isfinite(coverage) & np.isfinite(quality)
    points = ax.collections[0].get_offsets()
    np.testing.assert_array_equal(points, np.column_stack([coverage[both], quality[both]]))
    title = ax.get_title().replace("\n", " ")
    assert f"the {both.sum()} cells both score" in title and f"({(np.isfinite(coverage) ^ np.isfinite(quality)).sum()} scored by one only" in title
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == [f"a summary (cell): {both.sum()}", "y = x (equal scores)"]
    line = ax.get_lines()[0].get_xydata()
    assert (line[:, 0] == line[:, 1]).all()
    assert not figures.measure_scatter(coverage, quality, "c", "q").axes[0].get_lines()   # no diagonal asked


def test_distributions_count_every_cell_once():
    coverage, quality = _grid()
    fig = figures.score_distributions({"coverage": coverage, "quality": quality}, bins=10)
    for ax, v in zip(fig.axes, (coverage, quality)):
        v = v[np.isfinite(v)]
        heights = [p.get_height() for p in ax.patches]
        assert sum(heights) == v.size
        expected, _ = np.histogram(v, bins=10)
        assert heights == list(expected)
        assert f"mean {v.mean():.3g}" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_system_boxes_are_each_systems_scores_ordered_by_mean():
    _, quality = _grid()
    systems = [f"s{k}" for k in range(5)]
    fig = figures.system_distributions(quality, systems, "quality")
    ax = fig.axes[0]
    means = {s: np.nanmean(r) for s, r in zip(systems[:4], quality[:4])}
    order = sorted(means, key=lambda s: -means[s])
    assert [t.get_text() for t in ax.get_xticklabels()] == order
    medians = [line.get_ydata()[0] for line in ax.lines if line.get_color() == "C1"]
    assert medians == pytest.approx([np.nanmedian(quality[systems.index(s)]) for s in order])
    assert "1 system(s) without a score not drawn" in ax.get_title().replace("\n", " ")


def test_plot_scatter_and_distribution_commands(db, cli, tmp_path):
    coverage, quality = _grid(1)
    cells = [{"system": f"s{i}", "input": f"d{j}", "measure": name, "value": v[i, j], "kind": "human"}
             for name, v in (("coverage", coverage), ("quality", quality)) for i in range(5) for j in range(8)
             if np.isfinite(v[i, j])]
    pd.DataFrame(cells).to_csv(tmp_path / "c.csv", index=False)
    cli("ingest", "table", tmp_path / "c.csv", "--dataset", "g")
    for args in (["scatter", "--x", "coverage", "--y", "quality", "--diagonal"],
                 ["distribution", "--measure", "coverage", "--measure", "quality"],
                 ["distribution", "--measure", "quality", "--by-system"]):
        out = tmp_path / f"{args[0]}-{len(args)}.png"
        cli("plot", *args, "--dataset", "g", "--out", out)
        image = imread(out)
        assert image.shape[0] > 100 and np.ptp(image) > 0
    refused = cli("plot", "distribution", "--dataset", "g", "--measure", "coverage", "--measure", "quality",
                  "--by-system", "--out", tmp_path / "x.png", expect_ok=False)
    assert refused.exit_code != 0 and "--by-system draws one measure" in refused.output
    assert len(refused.output.strip().splitlines()) == 1 and not (tmp_path / "x.png").exists()
