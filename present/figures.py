"""Figures of the persisted results, drawn with matplotlib (headless Agg backend).

Pure functions: each takes the rows of a results table (a DataFrame, as the ``latest_*`` views
return them) and returns a matplotlib Figure; nothing is recomputed. The paper's figures:
Figure 4 (CIs per metric) is :func:`ci_forest`, Figure 5 (pairwise significance) is
:func:`significance_heatmap`, Figure 3 (power curves) is :func:`power_curves`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Patch, Rectangle  # noqa: E402

from metaeval.analyses import conclusions  # noqa: E402

#: What each alternative of a test of the pair (a, b) asks, for titles and captions.
HYPOTHESES = {"greater": "is a better than b? (H1: corr(a) > corr(b))",
              "less": "is a worse than b? (H1: corr(a) < corr(b))",
              "two-sided": "do a and b differ? (H1: corr(a) != corr(b))"}


def hypothesis(alternative: str) -> str:
    """The question a test with ``alternative`` answers about the pair (a, b)."""
    try:
        return HYPOTHESES[alternative]
    except KeyError:
        raise ValueError(f"unknown alternative {alternative!r}; choose from {', '.join(HYPOTHESES)}") from None


def _require(rows: pd.DataFrame, columns: list[str], what: str) -> None:
    if rows.empty:
        raise ValueError(f"no rows to draw {what}")
    missing = [c for c in columns if c not in rows.columns]
    if missing:
        raise ValueError(f"{what} needs columns {missing}")


def _one_setting(rows: pd.DataFrame, key: list[str], settings: list[str], what: str) -> None:
    """One figure draws one setting: refuse rows that differ in any of the ``settings`` columns
    present, or that give a ``key`` twice (rows of several runs mixed)."""
    mixed = [c for c in settings if c in rows.columns and rows[c].nunique(dropna=False) > 1]
    if mixed:
        values = {c: sorted(map(str, rows[c].unique())) for c in mixed}
        raise ValueError(f"{what}: the rows mix settings {values}; select one setting first")
    if rows.duplicated(key).any():
        raise ValueError(f"{what}: several rows for the same {', '.join(key)}; select one run's rows first")


def _wrapped(title: str, width_in: float, fontsize: float) -> str:
    """``title`` broken into lines that fit a figure ``width_in`` inches wide at ``fontsize``
    points (about 0.55 em per character of DejaVu Sans): a title wider than its figure is clipped."""
    return textwrap.fill(title, max(20, int(width_in * 72 / (0.55 * fontsize)) - 4)) if title else ""


def ci_forest(rows: pd.DataFrame, title: str = "", ceiling: tuple[float, float, float] | None = None) -> Figure:
    """Point estimate and interval of each metric, sorted by estimate (best on top); a metric
    whose estimate is undefined is listed at the bottom, marked "undefined", with no interval.

    ``rows``: one level/coefficient/method of ``confidence_intervals`` (metric, estimate,
    lower, upper; alpha and method, when present, name the interval in the legend). ``ceiling``:
    (value, lower, upper) of the human ceiling at the same level and coefficient, drawn as a
    dashed line with its interval shaded. The title is wrapped to the figure's width and the
    legend sits below the axes, so neither is clipped nor hides an interval.
    """
    _require(rows, ["metric", "estimate", "lower", "upper"], "a CI forest plot")
    _one_setting(rows, ["metric"], ["human", "level", "coefficient", "method", "alpha"], "a CI forest plot")
    rows = rows.sort_values("estimate", na_position="first")
    y = np.arange(len(rows))
    width = 6.4
    fig, ax = plt.subplots(figsize=(width, 1.6 + 0.28 * len(rows)), layout="constrained")
    est, lo, hi = (rows[c].to_numpy(dtype=float) for c in ("estimate", "lower", "upper"))
    alpha = float(rows["alpha"].iloc[0]) if "alpha" in rows.columns and pd.notna(rows["alpha"].iloc[0]) else None
    method = f" {rows['method'].iloc[0]}" if "method" in rows.columns else ""
    interval = f"{1 - alpha:.0%}{method} CI" if alpha is not None else f"{method.strip() or 'confidence'} interval"
    ax.hlines(y, lo, hi, color="tab:blue", linewidth=2, label=interval)
    ax.plot(est, y, "o", color="black", markersize=4, label="correlation (point estimate)")
    labels = [m if np.isfinite(e) else f"{m} (undefined)" for m, e in zip(rows["metric"], est)]
    ax.set_yticks(y, labels)
    ax.axvline(0, color="grey", linewidth=0.8, linestyle=":")
    if ceiling is not None and np.isfinite(ceiling[0]):
        value, low, high = ceiling
        ax.axvline(value, color="tab:red", linewidth=1.2, linestyle="--",
                   label=f"human ceiling (leave-one-out) {value:.3f}")
        if np.isfinite(low) and np.isfinite(high):
            ax.axvspan(low, high, color="tab:red", alpha=0.08, label=f"its 95% CI [{low:.3f}, {high:.3f}]")
    fig.legend(loc="outside lower center", ncols=2, fontsize=7, frameon=False)
    ax.set_xlabel("correlation with human judgment")
    if title:   # over the whole figure (the axes are narrower: the metric names take the left)
        fig.suptitle(_wrapped(title, width, 9), fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    return fig


def interval_chart(labels, estimate, lower, upper, *, xlabel: str, point: str, interval: str, title: str = "",
                   groups=None, group_name: str = "group", extra: tuple | None = None) -> Figure:
    """Each row's point estimate and interval on one horizontal line, in the order given (the
    first on top); ``groups`` (optional, one per row; None: none) colour the intervals, each
    group an entry of the legend (``group_name`` 1, 2, ...); ``extra``: (name, values), a second
    marker per row (e.g. the raw rate beside the controlled one). Legend below the axes, title
    wrapped to the figure's width."""
    n = len(labels)
    y = np.arange(n)[::-1]
    width = 6.4
    fig, ax = plt.subplots(figsize=(width, 1.8 + 0.3 * n), layout="constrained")
    est, lo, hi = (np.asarray(v, dtype=float) for v in (estimate, lower, upper))
    groups = [None if pd.isna(g) else int(g) for g in groups] if groups is not None else [None] * n
    if all(g is None for g in groups):
        ax.hlines(y, lo, hi, color="tab:blue", linewidth=2, label=interval)
    else:
        colours = plt.get_cmap("tab10")
        for g in sorted({g for g in groups if g is not None}):
            at = np.array([g2 == g for g2 in groups])
            ax.hlines(y[at], lo[at], hi[at], color=colours((g - 1) % 10), linewidth=2,
                      label=f"{interval}, {group_name} {g}")
        none = np.array([g is None for g in groups])
        if none.any():
            ax.hlines(y[none], lo[none], hi[none], color="grey", linewidth=2, label=f"{interval}, no {group_name}")
    ax.plot(est, y, "o", color="black", markersize=4, label=point)
    if extra is not None:
        ax.plot(np.asarray(extra[1], dtype=float), y, "x", color="tab:red", markersize=5, label=extra[0])
    ax.set_yticks(y, [str(x) for x in labels])
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)
    fig.legend(loc="outside lower center", ncols=2, fontsize=7, frameon=False)
    if title:
        fig.suptitle(_wrapped(title, width, 9), fontsize=9)
    return fig


def correction_phrase(correction: str, group: str | None) -> str:
    """How a family of tests was corrected, for titles and legends."""
    if correction in (None, "none"):
        return "no multiple-comparison correction"
    family = {"metric": "within each metric a's family", "all": "over all pairs"}.get(group or "", "")
    return f"{correction} correction {family}".strip()


def significance_heatmap(rows: pd.DataFrame, alpha: float, title: str = "", alternative: str | None = None,
                         correlations: Mapping[str, float] | None = None) -> Figure:
    """Cell (a, b) filled when the test of the pair rejects H0 at ``alpha`` (raw p): for the
    alternative "greater" it concludes corr(a) > corr(b), "less" corr(a) < corr(b), "two-sided"
    corr(a) != corr(b); outlined when still significant after the multiple-comparison correction
    (with no correction, filled = significant and nothing is outlined); hatched grey when the
    test is undefined (p is NaN: a correlation of the pair is undefined). The title states the
    question and the correction; a legend says what fill, outline and hatching mean.

    ``rows``: one level/coefficient/method/alternative/correction of ``hypothesis_tests``
    (metric_a, metric_b, p_value, significant; alternative, unless given as ``alternative``;
    correction and correction_group when present). ``correlations``: metric -> its correlation
    with the human judgment at the same level and coefficient; the metrics are then ordered by
    it, highest first, as in the paper's Figure 5 (and labelled with it; an undefined one last),
    when it has every metric drawn; otherwise by name (the title names the metrics it lacks).
    """
    _require(rows, ["metric_a", "metric_b", "p_value", "significant"], "a significance heatmap")
    _one_setting(rows, ["metric_a", "metric_b"], ["human", "level", "coefficient", "method", "alternative",
                                                  "correction", "correction_group", "family", "alpha"],
                 "a significance heatmap")
    if alternative is None:
        if "alternative" not in rows.columns:
            raise ValueError("a significance heatmap needs the tests' alternative (column or argument)")
        alternative = rows["alternative"].iloc[0]
    question = hypothesis(alternative)
    correction = rows["correction"].iloc[0] if "correction" in rows.columns else "none"
    group = rows["correction_group"].iloc[0] if "correction_group" in rows.columns else None
    corrected = correction not in (None, "none")
    names = sorted(set(rows["metric_a"]) | set(rows["metric_b"]))
    absent = [m for m in names if correlations is None or m not in correlations]
    if not absent:   # a stored NaN is an undefined correlation: last, and labelled so
        value = {m: float(correlations[m]) if pd.notna(correlations[m]) else -np.inf for m in names}
        metrics = sorted(names, key=lambda m: (-value[m], m))
        labels = [f"{m} ({value[m]:.3f})" if np.isfinite(value[m]) else f"{m} (undefined)" for m in metrics]
        order = "metrics by correlation with the human judgment, highest first"
    else:            # no order by correlation unless every metric drawn has one stored
        metrics, labels, order = names, names, "metrics by name"
        if correlations:
            order += f"; no stored correlation of {', '.join(absent)}"
    index = {m: i for i, m in enumerate(metrics)}
    n = len(metrics)
    raw = np.zeros((n, n))
    side = max(4.5, 2.0 + 0.32 * n)
    fig, ax = plt.subplots(figsize=(side + 1.2, side + 1.0), layout="constrained")
    undefined = []
    for r in rows.itertuples():
        i, j = index[r.metric_a], index[r.metric_b]
        if pd.isna(r.p_value):
            undefined.append((i, j))
        else:
            raw[i, j] = float(conclusions.rejects(r.p_value, alpha))
    ax.imshow(raw, cmap="Blues", vmin=0, vmax=1.4)
    for i, j in undefined:
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor="0.85", hatch="///", edgecolor="0.5",
                               linewidth=0))
    if corrected:
        for r in rows.itertuples():
            if r.significant is True or r.significant == 1:
                i, j = index[r.metric_a], index[r.metric_b]
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="black", linewidth=1.5))
    ax.set_xticks(range(n), labels, rotation=90, fontsize=7)
    ax.set_yticks(range(n), labels, fontsize=7)
    ax.set_xlabel("metric b")
    ax.set_ylabel("metric a")
    blue = plt.get_cmap("Blues")(1 / 1.4)
    handles = [Patch(facecolor=blue, edgecolor="none",
                     label=f"p <= {alpha:g}, uncorrected" if corrected else f"significant, p <= {alpha:g}")]
    if corrected:
        handles.append(Patch(fill=False, edgecolor="black", linewidth=1.5,
                             label=f"significant after {correction_phrase(correction, group)}"))
    if undefined:
        handles.append(Patch(facecolor="0.85", hatch="///", edgecolor="0.5", label="undefined (p is NaN)"))
    fig.legend(handles=handles, loc="outside lower center", fontsize=7, frameon=False)
    head = f"{question}; {correction_phrase(correction, group)}"
    text = f"{head} — {title}" if title else head
    ax.set_title(textwrap.fill(f"{text} ({order})", 70), fontsize=8)
    return fig


def coinciding(rows: pd.DataFrame, by: str, x: str, y: str) -> list[list[str]]:
    """Groups (of two or more) of the ``by`` values whose curves ``y`` against ``x`` are identical
    (the same points, NaN equal to NaN): drawn one over the other, only the last would show."""
    curves: dict[tuple, list[str]] = {}
    for name, part in rows.sort_values(x).groupby(by, sort=True):
        key = tuple((float(a), None if pd.isna(b) else round(float(b), 12)) for a, b in zip(part[x], part[y]))
        curves.setdefault(key, []).append(str(name))
    return [names for names in curves.values() if len(names) > 1]


def never_rejects(rows: pd.DataFrame) -> list[str]:
    """The methods of power rows that rejected H0 in no trial at any proportion (power 0 throughout)."""
    zero = rows.groupby("method")["power"].apply(lambda p: bool(len(p)) and bool((p.fillna(-1) == 0).all()))
    return sorted(str(m) for m, z in zero.items() if z)


#: Line styles and markers cycled over the methods of a power figure, so that a curve drawn over
#: an identical one still shows (a dashed line with a smaller marker over a solid one).
_STYLES = [("-", "o", 7), ("--", "s", 5), (":", "^", 4), ("-.", "D", 3)]


def power_curves(rows: pd.DataFrame, title: str = "") -> Figure:
    """Power of each test against the proportion k of tokens kept in R_k.

    ``rows``: one variant/level/coefficient/alpha of ``power`` (method, proportion, power).
    Each method has its own line style and marker; methods whose curves are identical
    (:func:`coinciding`) say so in the legend ("= perm-both, identical values"), and a method
    that never rejects is labelled "power 0 at every proportion" (the report's caption says why).
    """
    _require(rows, ["method", "proportion", "power"], "power curves")
    _one_setting(rows, ["method", "proportion"], ["human", "variant", "level", "coefficient", "alpha"], "power curves")
    same = {m: [o for o in group if o != m] for group in coinciding(rows, "method", "proportion", "power")
            for m in group}
    zero = set(never_rejects(rows))
    width = 6.4
    fig, ax = plt.subplots(figsize=(width, 4.4), layout="constrained")
    for n, (method, part) in enumerate(rows.sort_values("proportion").groupby("method", sort=True)):
        style, marker, size = _STYLES[n % len(_STYLES)]
        label = str(method)
        if method in same:
            label += f" (= {', '.join(same[method])}: identical values)"
        if method in zero:
            label += " (power 0 at every proportion)"
        ax.plot(part["proportion"], part["power"], linestyle=style, marker=marker, markersize=size, label=label)
    if "alpha" in rows.columns:
        ax.axhline(float(rows["alpha"].iloc[0]), color="grey", linestyle=":", linewidth=0.8,
                   label=f"alpha = {float(rows['alpha'].iloc[0]):g}")
    ax.set_xlabel("proportion of tokens kept in R_k")
    ax.set_ylabel("power (share of trials rejecting H0)")
    ax.set_ylim(-0.02, 1.02)
    fig.legend(loc="outside lower center", ncols=2, fontsize=7, frameon=False)
    if title:
        fig.suptitle(_wrapped(title, width, 9), fontsize=9)
    ax.grid(alpha=0.3)
    return fig


def delta_bin_accuracy(rows: pd.DataFrame, title: str = "") -> Figure:
    """Pairwise accuracy of each metric by bin of the system pairs' human difference, closest
    pairs first (Deutsch, Dror & Roth 2022): does a metric separate systems that are close?

    ``rows``: one setting of ``delta_bin_accuracy`` (metric, bin, accuracy, pairs; bins).
    """
    _require(rows, ["metric", "bin", "accuracy", "pairs"], "a delta-bin accuracy figure")
    _one_setting(rows, ["metric", "bin"], ["human", "bins", "metric_tolerance", "human_tolerance"],
                 "a delta-bin accuracy figure")
    fig, ax = plt.subplots(figsize=(6.4, 4.6), layout="constrained")
    for metric, part in rows.sort_values("bin").groupby("metric", sort=True):
        ax.plot(part["bin"], part["accuracy"], marker="o", label=metric)
    bins = sorted(rows["bin"].unique())
    pairs = rows.drop_duplicates("bin").set_index("bin")["pairs"]
    ax.set_xticks(bins, [f"{b}\n({int(pairs[b])} pairs)" for b in bins], fontsize=7)
    ax.axhline(0.5, color="grey", linestyle=":", linewidth=0.8, label="0.5 (a coin)")
    ax.set_xlabel("bin of |human difference| of the system pairs (0 = the closest pairs)")
    ax.set_ylabel("pairwise accuracy")
    ax.set_ylim(-0.02, 1.02)
    fig.legend(loc="outside lower center", ncols=3, fontsize=7, frameon=False)
    if title:
        fig.suptitle(_wrapped(title, 6.4, 9), fontsize=9)
    ax.grid(alpha=0.3)
    return fig


def category_drops(rows: pd.DataFrame, title: str = "") -> Figure:
    """Error categories (FRANK's ablation, Pagnoni et al. 2021): for each metric, one bar per
    category, the drop of its correlation with the overall judgment when that category is ignored
    (``correlation_drop`` = r(metric, overall) - r(metric, overall without the category)); > 0:
    the metric's agreement rests on the category. An undefined drop is marked "n/a", not drawn as 0.

    ``rows``: one level and coefficient of ``error_categories`` (metric, category, correlation_drop).
    """
    _require(rows, ["metric", "category", "correlation_drop"], "an error-category figure")
    _one_setting(rows, ["metric", "category"], ["human", "level", "coefficient"], "an error-category figure")
    metrics = list(dict.fromkeys(rows["metric"]))
    cats = list(dict.fromkeys(rows["category"]))
    height = 0.8 / max(1, len(cats))
    fig, ax = plt.subplots(figsize=(6.4, max(2.6, 0.9 + 0.28 * len(metrics) * max(1, len(cats)) ** 0.5)),
                           layout="constrained")
    drops = rows.set_index(["metric", "category"])["correlation_drop"]
    colors = plt.get_cmap("tab10")
    for j, cat in enumerate(cats):
        ys = np.arange(len(metrics)) - 0.4 + height * (j + 0.5)
        values = np.array([drops.get((m, cat), np.nan) for m in metrics], dtype=float)
        ax.barh(ys, np.nan_to_num(values), height=height * 0.9, color=colors(j % 10), label=cat)
        for y, v in zip(ys, values):
            if np.isnan(v):
                ax.text(0, y, " n/a", va="center", fontsize=6, color="grey")
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(np.arange(len(metrics)), metrics, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("drop of the correlation when the category is ignored\n"
                  "r(metric, overall) - r(metric, overall without the category)", fontsize=8)
    ax.legend(title="category ignored", fontsize=7, title_fontsize=7, loc="best")
    ax.grid(axis="x", alpha=0.3)
    if title:
        fig.suptitle(_wrapped(title, 6.4, 9), fontsize=9)
    return fig


def measure_scatter(x, y, x_label: str, y_label: str, *, diagonal: bool = False, title: str = "") -> Figure:
    """One point per cell scored by both measures (Graham 2015, Fig. 1: linguistic quality
    against coverage); ``diagonal`` draws y = x (for two measures on one scale: a point above it
    scores higher on y). The title says how many cells are drawn and how many were left out."""
    x, y = np.asarray(x, dtype=float).ravel(), np.asarray(y, dtype=float).ravel()
    both = np.isfinite(x) & np.isfinite(y)
    fig, ax = plt.subplots(figsize=(5.2, 5.0), layout="constrained")
    ax.scatter(x[both], y[both], s=9, alpha=0.45, color="C0", edgecolors="none",
               label=f"a summary (cell): {int(both.sum())}")
    if diagonal and both.any():
        lo, hi = float(min(x[both].min(), y[both].min())), float(max(x[both].max(), y[both].max()))
        ax.plot([lo, hi], [lo, hi], "--", color="0.4", linewidth=1, label="y = x (equal scores)")
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    left = int((np.isfinite(x) | np.isfinite(y)).sum() - both.sum())
    head = f"{y_label} against {x_label}: the {int(both.sum())} cells both score"
    head += f" ({left} scored by one only, not drawn)" if left else ""
    ax.set_title(textwrap.fill(f"{head} — {title}" if title else head, 70), fontsize=8)
    ax.legend(fontsize=7, frameon=False, loc="best")
    return fig


def score_distributions(values: Mapping[str, np.ndarray], *, bins: int = 20, title: str = "") -> Figure:
    """The distribution of each measure's cell scores, one panel per measure (Graham 2015, Fig. 2:
    coverage, linguistic quality and their mean), each a histogram of its cells with its n and
    mean in the legend; missing cells are not counted."""
    if not values:
        raise ValueError("score distributions need one or more measures")
    fig, axes = plt.subplots(len(values), 1, figsize=(5.6, 1.2 + 1.9 * len(values)), layout="constrained",
                             squeeze=False)
    for ax, (name, v) in zip(axes[:, 0], values.items()):
        v = np.asarray(v, dtype=float).ravel()
        v = v[np.isfinite(v)]
        if v.size:
            ax.hist(v, bins=bins, color="C0", alpha=0.8, label=f"cells: {v.size}")
            ax.axvline(float(v.mean()), color="C3", linewidth=1.2, label=f"mean {v.mean():.3g}")
            ax.legend(fontsize=7, frameon=False)
        else:
            ax.text(0.5, 0.5, "no cell", ha="center", va="center", transform=ax.transAxes, color="grey")
        ax.set_xlabel(name, fontsize=8)
        ax.set_ylabel("summaries", fontsize=8)
    head = "Distribution of each measure's scores over the summaries (one histogram per measure)"
    fig.suptitle(textwrap.fill(f"{head} — {title}" if title else head, 80), fontsize=8)
    return fig


def system_distributions(A, systems, measure: str, *, title: str = "") -> Figure:
    """Each system's score distribution over its inputs (rows of ``A``, NaN: no cell) as a box
    (quartiles, whiskers at 1.5 IQR, outliers as points) with its mean, systems ordered by their
    mean, highest first (a "lower is better" measure is drawn as stored: say so in ``measure``)."""
    A = np.asarray(A, dtype=float)
    rows = [(str(s), r[np.isfinite(r)]) for s, r in zip(systems, A)]
    drawn = [(s, r) for s, r in rows if r.size]
    if not drawn:
        raise ValueError("no system has a score")
    drawn.sort(key=lambda t: (-float(t[1].mean()), t[0]))
    fig, ax = plt.subplots(figsize=(max(5.0, 1.5 + 0.35 * len(drawn)), 4.6), layout="constrained")
    ax.boxplot([r for _, r in drawn], showmeans=True, meanprops={"marker": "D", "markerfacecolor": "C3",
                                                                  "markeredgecolor": "C3", "markersize": 4},
               flierprops={"markersize": 3})
    ax.set_xticks(range(1, len(drawn) + 1), [s for s, _ in drawn], rotation=90, fontsize=7)
    ax.set_ylabel(measure)
    handles = [Patch(facecolor="white", edgecolor="black", label="box: quartiles; whiskers: 1.5 IQR"),
               plt.Line2D([], [], color="C1", label="median"),
               plt.Line2D([], [], marker="D", linestyle="none", color="C3", markersize=4, label="mean")]
    ax.legend(handles=handles, fontsize=7, frameon=False, loc="best")
    missing = len(rows) - len(drawn)
    head = (f"{measure}: each system's scores over its inputs, systems by their mean, highest first"
            + (f" ({missing} system(s) without a score not drawn)" if missing else ""))
    ax.set_title(textwrap.fill(f"{head} — {title}" if title else head, 80), fontsize=8)
    return fig


def save(fig: Figure, stem: Path) -> list[Path]:
    """Write ``stem.png`` and ``stem.svg``; close the figure."""
    paths = [stem.parent / f"{stem.name}.png", stem.parent / f"{stem.name}.svg"]
    for p in paths:
        fig.savefig(p, dpi=150 if p.suffix == ".png" else None)
    plt.close(fig)
    return paths


def svg(fig: Figure) -> bytes:
    """The figure as an SVG document (text as paths: it looks the same without the fonts), for
    embedding in a self-contained page; closes the figure."""
    import io

    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    finally:
        plt.close(fig)
    return buffer.getvalue()
