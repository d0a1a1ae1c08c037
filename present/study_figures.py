"""Figures of the analyses' results: the plan's power curves, Graham's significance heatmap and
SERA's cut-off sweep (matplotlib, Agg; pure functions of rows or arrays, no database).

The floor of presentation: :mod:`metaeval.analyses` computes, this draws what it computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import pandas as pd


def power_figure(rows, target: float, title: str = "", xlabel: str = "inputs",
                 ylabel: str = "power of the paired t-test at the corrected level"):
    """The power curves of the closed form (solid; none for the metrics question) and the resampled
    power (dashed, markers)
    against the inputs, one colour per (systems, ratings), the target power marked: a matplotlib
    Figure of the rows of ``plan_sizes`` (a DataFrame)."""
    import matplotlib
    import pandas as pd

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, ax = plt.subplots(figsize=(6.4, 4.4), layout="constrained")
    groups = rows.sort_values("n_inputs").groupby(["n_systems", "ratings"], dropna=False)
    for k, ((systems, ratings), part) in enumerate(groups):
        colour = f"C{k % 10}"
        label = f"{systems} systems" + ("" if pd.isna(ratings) else
                                        f", {ratings} rating{'s' if ratings != 1 else ''}")
        if part["power"].notna().any():
            ax.plot(part["n_inputs"], part["power"].astype(float), color=colour, label=label + " (closed form)")
        ax.plot(part["n_inputs"], part["power_resampled"].astype(float), color=colour, linestyle="--", marker="o",
                markersize=3,
                label=label + " (resampled)")
    ax.axhline(target, color="grey", linestyle=":", linewidth=1.0, label=f"target power {target:g}")
    ax.set_xscale("log")
    ax.set_xticks(sorted({int(n) for n in rows["n_inputs"]}))
    ax.xaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    fig.legend(loc="outside lower center", ncols=2, fontsize=7, frameon=False)
    if title:
        fig.suptitle(title, fontsize=9)
    return fig


def heatmap(p: npt.ArrayLike, significant: npt.ArrayLike, names: Sequence[str], *, undefined: npt.ArrayLike | None = None,
            title: str = ""):
    """Graham (2015) Fig. 4 as a matplotlib Figure: cell (i, j) coloured when system i (row) is
    significantly better than system j (column), darker for a smaller adjusted ``p`` (N x N, as
    :meth:`PairTests.matrix`); ``undefined`` (N x N bool) cells hatched grey (no defined test of
    the pair). Systems in the order given (Graham: by score, best first)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    p, sig = np.asarray(p, dtype=np.float64), np.asarray(significant, dtype=bool)
    n = len(names)
    with np.errstate(all="ignore"):
        shade = np.where(sig, 0.45 + 0.55 * np.clip(-np.log10(np.nan_to_num(p, nan=1.0)) / 4, 0, 1), 0.0)
    side = max(4.0, 1.5 + 0.35 * n)
    fig, ax = plt.subplots(figsize=(side + 1, side + 0.8), layout="constrained")
    ax.imshow(shade, cmap="Greens", vmin=0, vmax=1)
    for i, j in zip(*np.nonzero(np.zeros((n, n), bool) if undefined is None else np.asarray(undefined, bool))):
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="0.85", hatch="///", edgecolor="0.5", linewidth=0))
    ax.set_xticks(range(n), names, rotation=90, fontsize=7)
    ax.set_yticks(range(n), names, fontsize=7)
    ax.set_xlabel("system j")
    ax.set_ylabel("system i")
    handles = [Patch(facecolor=plt.get_cmap("Greens")(0.75), label="i significantly better than j (darker: smaller p)")]
    if undefined is not None and np.asarray(undefined).any():
        handles.append(Patch(facecolor="0.85", hatch="///", edgecolor="0.5", label="undefined test"))
    fig.legend(handles=handles, loc="outside lower center", fontsize=7, frameon=False)
    if title:
        ax.set_title(title, fontsize=8, wrap=True)
    return fig


def cutoff_figure(frame: pd.DataFrame, human: str, level: str, title: str = ""):
    """Correlation against cut-off: one line (with markers) per variant x coefficient, a legend,
    the axes labelled; at least two cut-offs make a sweep."""
    from metaeval.present.figures import plt

    if frame.empty or frame["cutoff"].nunique() < 2:
        raise ValueError("a cut-off sweep needs at least two cut-offs")
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    variants = sorted(frame["variant"].unique())
    coefficients = sorted(frame["coefficient"].unique())
    styles, markers = ("-", "--", ":", "-."), ("o", "s", "^", "D", "v")
    for (variant, coefficient), group in frame.groupby(["variant", "coefficient"], sort=True):
        v, c = variants.index(variant), coefficients.index(coefficient)   # a variant's style, a coefficient's colour
        ax.plot(group["cutoff"], group["value"].astype(float), linestyle=styles[v % 4], marker=markers[v % 5],
                color=f"C{c}", label=f"{variant}, {coefficient}")
    ax.set_xlabel("rank cut-off n (documents retrieved per query)")
    ax.set_ylabel(f"{level}-level correlation with {human}")
    ax.set_xticks(sorted(frame["cutoff"].unique()))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, title="SERA variant, coefficient", title_fontsize=8)
    ax.set_title(title or "SERA against its cut-off (Cohan & Goharian 2016, Fig. 1)", fontsize=9)
    fig.tight_layout()
    return fig
