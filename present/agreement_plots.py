"""Figures of inter-metric agreement (Bhandari et al. 2020), drawn from persisted rows.

Like :mod:`present.figures`: pure functions taking the rows of a results table (or the series of
:func:`metaeval.runs.agreement.score_ranges.tau_vs_property`) and returning a matplotlib Figure (Agg backend).
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from metaeval.analyses.agreement import BINS, CUMULATIVE, NON_CUMULATIVE
from metaeval.present.figures import _one_setting, _require, _wrapped
from metaeval.present.plain import number_text

#: Up to this many metric pairs the tau heatmap has one row per pair; beyond (more than 10
#: metrics), one row per metric: the mean over the pairs it belongs to.
MAX_HEATMAP_PAIRS = 45
#: The columns of the tau heatmap: the non-cumulative bins L, M, T, then the cumulative L+M+T,
#: M+T (the last cumulative bin, T, is the non-cumulative T).
HEATMAP_BINS = BINS
#: The columns that define one setting of ``score_range_agreement`` rows (one figure each).
SCORE_RANGE_SETTING = ["dataset", "consensus", "normalisation", "alpha", "significant_only"]
#: The same for ``property_agreement`` rows (tau over all summaries: no normalisation).
PROPERTY_SETTING = ["dataset", "consensus", "alpha", "significant_only", "property"]
PROPERTY_LABELS = {"ease": "ease of summarisation", "abstractiveness": "abstractiveness", "coverage": "coverage"}
HEATMAP_DECIMALS = 2


def _by_bin(ax, rows: pd.DataFrame, bins: tuple[str, ...], value: str) -> None:
    wide = rows.pivot_table(index=["metric_a", "metric_b"], columns="bin", values=value).reindex(columns=list(bins))
    for _, series in wide.iterrows():
        ax.plot(bins, series.to_numpy(), color="0.6", linewidth=0.8, alpha=0.6)
    ax.plot(bins, wide.mean().to_numpy(), color="C0", linewidth=2.5, marker="o", label="mean over pairs")


def tau_by_bin(rows: pd.DataFrame, title: str = "") -> Figure:
    """Kendall tau of every metric pair (grey) and their mean (blue) by bin: non-cumulative
    (L, M, T) left, cumulative (L+M+T, M+T, T) right -- the paper's Tables 1-2 as a figure.
    ``rows``: ``score_range_agreement`` rows of one consensus and parameter setting."""
    _require(rows, ["metric_a", "metric_b", "bin", "tau"], "tau by bin")
    fig = Figure(figsize=(9, 3.8))
    axes = fig.subplots(1, 2, sharey=True)
    for ax, bins, name in ((axes[0], NON_CUMULATIVE, "non-cumulative"), (axes[1], CUMULATIVE, "cumulative")):
        _by_bin(ax, rows, bins, "tau")
        ax.set_title(name)
        ax.axhline(0, color="black", linewidth=0.5)
    axes[0].set_ylabel("Kendall's tau (mean over inputs)")
    axes[1].legend(loc="lower left")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def tau_heatmap_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The cells of :func:`tau_heatmap`: one row per metric pair ("a vs b", sorted by metric_a,
    metric_b) -- or, beyond :data:`MAX_HEATMAP_PAIRS` pairs, one row per metric, the mean
    of the pairs it belongs to -- then a last row, the mean over all pairs; columns
    :data:`HEATMAP_BINS`. Means skip pairs whose tau is undefined (NULL) in a bin.
    ``rows``: ``score_range_agreement`` rows of one setting (checked)."""
    _require(rows, ["metric_a", "metric_b", "bin", "tau"], "a tau heatmap")
    _one_setting(rows, ["metric_a", "metric_b", "bin"], SCORE_RANGE_SETTING, "a tau heatmap")
    tau = rows.assign(tau=pd.to_numeric(rows["tau"], errors="coerce"))
    wide = tau.set_index(["metric_a", "metric_b", "bin"])["tau"].unstack("bin").reindex(columns=list(HEATMAP_BINS))
    wide = wide.sort_index()
    wide.columns.name = None
    if len(wide) <= MAX_HEATMAP_PAIRS:
        cells = wide.set_axis([f"{a} vs {b}" for a, b in wide.index], axis=0)
    else:
        metrics = sorted(set(wide.index.get_level_values(0)) | set(wide.index.get_level_values(1)))
        a, b = wide.index.get_level_values(0), wide.index.get_level_values(1)
        cells = pd.DataFrame([wide[(a == m) | (b == m)].mean() for m in metrics],
                             index=[f"{m} (mean of {len(metrics) - 1} pairs)" for m in metrics])
    cells.loc[f"mean over {len(wide)} pairs"] = wide.mean()
    cells.index.name = "pair"
    return cells


def _annotation(value: float) -> str:
    return number_text(value, HEATMAP_DECIMALS, undefined="n/a")


def tau_heatmap(rows: pd.DataFrame, title: str = "") -> Figure:
    """Mean per-input Kendall tau by bin (the paper's Tables 1-2 as one heatmap): rows of
    :func:`tau_heatmap_table` (metric pairs, then their mean), columns L, M, T (non-cumulative)
    then L+M+T, M+T (cumulative); a diverging colormap centred at 0 on the whole tau scale
    [-1, 1] (comparable across figures), each cell annotated with its value (2 decimals; "n/a"
    where no input has a defined tau). ``rows``: ``score_range_agreement`` rows of one setting."""
    cells = tau_heatmap_table(rows)
    values = cells.to_numpy(dtype=float)
    n_rows, n_cols = values.shape
    # fixed margins in inches (labels at 7 points), not a layout engine: several times faster to save
    left, cell_w, cell_h, right = 0.3 + 0.055 * max(map(len, cells.index)), 0.75, 0.24, 1.1
    top, bottom = (0.85 if title else 0.6), 0.15
    width, height = left + cell_w * n_cols + right, top + cell_h * n_rows + bottom
    fig = Figure(figsize=(width, height))
    ax = fig.add_axes((left / width, bottom / height, cell_w * n_cols / width, cell_h * n_rows / height))
    bar = fig.add_axes(((left + cell_w * n_cols + 0.15) / width, bottom / height, 0.15 / width,
                        cell_h * n_rows / height))
    image = ax.imshow(np.ma.masked_invalid(values), cmap=_cmap(), vmin=-1, vmax=1, aspect="auto",
                      interpolation="nearest")
    for i in range(n_rows):
        for j in range(n_cols):
            v = values[i, j]
            ax.text(j, i, _annotation(v), ha="center", va="center", fontsize=7,
                    color="white" if not np.isnan(v) and abs(v) > 0.55 else "black")
    ax.axvline(len(NON_CUMULATIVE) - 0.5, color="black", linewidth=1.5)
    ax.axhline(n_rows - 1.5, color="black", linewidth=1.5)            # above the mean row
    ax.set_xticks(range(n_cols), list(cells.columns), fontsize=8)
    ax.set_yticks(range(n_rows), list(cells.index), fontsize=7)
    ax.xaxis.tick_top()
    ax.set_xlabel("non-cumulative bins  |  cumulative bins", fontsize=8)
    ax.xaxis.set_label_position("top")
    colorbar = fig.colorbar(image, cax=bar)
    colorbar.set_label("Kendall's tau", fontsize=8)
    colorbar.ax.tick_params(labelsize=7)
    if title:
        fig.suptitle(textwrap.fill(title, int(width * 14)), fontsize=8, y=1 - 0.08 / height, va="top")
    return fig


def _cmap():
    from matplotlib import colormaps

    return colormaps["RdBu"].with_extremes(bad="0.85")


def disagreement_by_bin(rows: pd.DataFrame, title: str = "") -> Figure:
    """Pairwise disagreement by non-cumulative bin (pairs grey, mean blue) against the
    random-score baseline (dashed, mean over pairs) -- the paper's appendix A figure."""
    _require(rows, ["metric_a", "metric_b", "bin", "disagreement", "random_disagreement"], "disagreement by bin")
    fig = Figure(figsize=(5, 3.8))
    ax = fig.subplots()
    _by_bin(ax, rows, NON_CUMULATIVE, "disagreement")
    baseline = rows.groupby("bin")["random_disagreement"].mean().reindex(list(NON_CUMULATIVE))
    ax.plot(NON_CUMULATIVE, baseline.to_numpy(), color="C3", linestyle="--", label="random scores")
    ax.set_ylim(0, max(0.55, float(rows["disagreement"].max()) + 0.05))
    ax.set_ylabel("share of summary pairs ordered oppositely")
    ax.legend(loc="lower right")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def _tau_vs_property(ax, series: pd.DataFrame, prop: str) -> None:
    ax.scatter(series["value"], series["tau"], s=6, color="C0")
    ax.plot(series["value_avg"], series["tau_avg"], color="red", linewidth=2)
    ax.set_xlabel(PROPERTY_LABELS.get(prop, prop))


def tau_vs_property(series: pd.DataFrame, prop: str, title: str = "") -> Figure:
    """Per-input tau against an input property, with the moving average in red (the paper's
    figure 1). ``series``: columns value, tau, value_avg, tau_avg."""
    _require(series, ["value", "tau", "value_avg", "tau_avg"], "tau against a property")
    fig = Figure(figsize=(4.5, 3.8))
    ax = fig.subplots()
    _tau_vs_property(ax, series, prop)
    ax.set_xlabel(prop)
    ax.set_ylabel("Kendall's tau")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def tau_vs_property_pairs(series: Mapping[tuple[str, str], pd.DataFrame], prop: str,
                          stored: pd.DataFrame | None = None, title: str = "") -> Figure:
    """The paper's figure 1 (appendix figures 5-10) for several metric pairs: one panel per pair
    (``series``: (metric_a, metric_b) -> the frame of :func:`metaeval.runs.agreement.score_ranges.tau_vs_property`),
    per-input tau against property ``prop``, moving average in red. ``stored``: the pairs'
    ``property_agreement`` rows of this property and setting (checked), whose Pearson and
    Spearman correlations and n are written in each panel's title."""
    if not series:
        raise ValueError("no metric pairs to draw tau against a property")
    for frame in series.values():
        missing = [c for c in ("value", "tau", "value_avg", "tau_avg") if c not in frame.columns]
        if missing:
            raise ValueError(f"tau against a property needs columns {missing}")
    found = {}
    if stored is not None:
        _require(stored, ["metric_a", "metric_b", "property", "n_used", "pearson", "spearman"],
                 "tau against a property")
        _one_setting(stored, ["metric_a", "metric_b"], PROPERTY_SETTING, "tau against a property")
        if set(stored["property"]) != {prop}:
            raise ValueError(f"tau against {prop}: the stored rows are of {sorted(set(stored['property']))}")
        found = {(r.metric_a, r.metric_b): r for r in stored.itertuples()}
    n = len(series)
    ncols = min(3, n)
    nrows = -(-n // ncols)
    # fixed margins (in inches), not a layout engine: several times faster to save
    panel, gap, top, bottom = 2.0, 0.95, (0.8 if title else 0.55), 0.8
    width, height = 0.9 + 3.2 * ncols, top + nrows * panel + (nrows - 1) * gap + bottom
    fig = Figure(figsize=(width, height))
    fig.subplots_adjust(left=0.75 / width, right=1 - 0.15 / width, bottom=bottom / height, top=1 - top / height,
                        wspace=0.08, hspace=gap / panel)
    axes = fig.subplots(nrows, ncols, sharex=True, sharey=True, squeeze=False).ravel()
    for ax, ((a, b), frame) in zip(axes, series.items()):
        _tau_vs_property(ax, frame, prop)
        ax.axhline(0, color="black", linewidth=0.5)
        if frame.empty:
            ax.text(0.5, 0.5, "no input to draw (n = 0)", transform=ax.transAxes, ha="center", fontsize=8)
        label = f"{a} vs {b}"
        if (a, b) in found:
            r = found[(a, b)]
            label += f"\nPearson {_fmt(r.pearson)}, Spearman {_fmt(r.spearman)}, n = {r.n_used}"
        ax.set_title(label, fontsize=8)
    for ax in axes[:: ncols]:
        ax.set_ylabel("Kendall's tau (per input)")
    for ax in axes[n:]:
        ax.set_visible(False)
    fig.legend(handles=[Line2D([], [], marker="o", linestyle="none", markersize=3, color="C0",
                               label="an input: its Kendall tau between the two metrics"),
                        Line2D([], [], color="red", linewidth=2, label="moving average")],
               loc="lower center", ncols=2, fontsize=7, frameon=False, bbox_to_anchor=(0.5, 0.0))
    if title:
        fig.suptitle(_wrapped(title, width, 8), fontsize=8, y=1 - 0.08 / height, va="top")
    return fig


def _fmt(value) -> str:
    return number_text(value, 2, undefined="n/a")
