"""Factual consistency: pooled against partial correlations (is the agreement confounded?), the
correlations of each subset of cells, the metrics judged as detectors on binary labels, and the
error categories. Four sections under one heading (one anchor): shown when the dataset has any
of these results or attributes to compute them on, each saying what to run when it has none."""

from __future__ import annotations

import html

import pandas as pd

from metaeval.present import figures, ranking_tables
from metaeval.analyses.stats import vocabulary
from metaeval.errors import Hint
from metaeval.runs.report.answer import CI_PREFERRED, pick
from metaeval.runs.report.cells import (flag_cell, in_order, int_cell, interval_text, missing_value, number, p_cell,
                                        slug, sortable, subset_text, threshold_cell, value_cell)
from metaeval.runs.report.context import Context, Section

TITLE, ANCHOR = "Factual consistency: confounding, subsets, detection, error categories", "factuality"
#: A cell of a statistic that has no stored row ("undefined" is a stored row whose value is NaN).
NOT_COMPUTED = ("not computed", "")


def _partial_rows(corr: pd.DataFrame) -> pd.DataFrame:
    return corr[corr["coefficient"].str.contains("[control=", regex=False)] if not corr.empty else corr


def _subset_rows(corr: pd.DataFrame) -> pd.DataFrame:
    return corr[(corr["subset"] != "") & ~corr["coefficient"].str.contains("[control=", regex=False)] \
        if not corr.empty else corr


def _shown(ctx: Context) -> bool:
    """Whether the factuality heading is on the page: the dataset has partial or per-subset
    correlations, detection results or error categories, or attributes (to suggest them on)."""
    corr = ctx.rows("latest_correlations")
    return not (_partial_rows(corr).empty and _subset_rows(corr).empty and ctx.rows("latest_detection").empty
                and ctx.rows("latest_error_categories").empty and not ctx.wh.attributes(ctx.dataset))


def ci_rows(ctx: Context) -> pd.DataFrame:
    """The intervals of one setting per coefficient and subset: the preferred method and alpha
    (boot-both, 0.05) when stored, else the setting with the most rows."""
    frame = ctx.rows("latest_confidence_intervals")
    if frame.empty:
        return frame
    order = {m: i for i, m in enumerate(vocabulary.CI_METHODS)}
    parts = [pick(part, ["method", "alpha"], CI_PREFERRED, order)[0]
             for _, part in frame.groupby(["coefficient", "subset"], sort=True)]
    return pd.concat(parts, ignore_index=True)


def partial(ctx: Context) -> Section | None:
    """Pooled against partial correlations, side by side (None: no factuality heading)."""
    if not _shown(ctx):
        return None
    s = Section(TITLE, ANCHOR)
    corr = ctx.rows("latest_correlations")
    if (rows := _partial_rows(corr)).empty:
        s.note = ctx.missing("partial correlations", "correlate", first=(("control", "system"), ("levels", ["global"])))
        return s
    s.blocks.append("<h3>Pooled and partial correlations: is the agreement confounded?</h3>")
    s.run_ids |= set(rows["run_id"])
    cis = ci_rows(ctx)
    part = rows.assign(base=rows["coefficient"].str.split("[", n=1).str[0],
                       control=rows["coefficient"].str.extract(r"\[control=([^\]]*)\]")[0])
    for key, group in part.groupby(["human", "subset", "level", "base", "control"], sort=True):
        human, subset, level, base, control = key
        pooled = corr[(corr["human"] == human) & (corr["subset"] == subset) & (corr["level"] == level)
                      & (corr["coefficient"] == base)].set_index("metric")
        s.run_ids |= set(pooled["run_id"])
        ci = cis[(cis["human"] == human) & (cis["subset"] == subset) & (cis["level"] == level)] \
            if not cis.empty else cis
        s.run_ids |= set(ci["run_id"]) if not ci.empty else set()
        s.blocks.append(_partial_block(ctx, key, group, pooled, ci))
    return s


def _partial_block(ctx: Context, key: tuple, rows: pd.DataFrame, pooled: pd.DataFrame, ci: pd.DataFrame) -> str:
    """One human, subset, level, coefficient and control: the pooled and partial correlation of
    each metric, and the fall from one to the other."""
    human, subset, level, base, control = key

    def interval(metric: str, coefficient: str):
        if ci.empty:
            return None
        hit = ci[(ci["metric"] == metric) & (ci["coefficient"] == coefficient)]
        return None if hit.empty else (hit["lower"].iloc[0], hit["upper"].iloc[0])

    table, uncomputed = [], []
    for r in rows.sort_values("value", ascending=False, na_position="last").itertuples():
        partial_cell = value_cell(r.value, interval(r.metric, r.coefficient))
        if r.metric not in pooled.index:   # no stored row: not computed (a stored NaN is undefined)
            uncomputed.append(r.metric)
            table.append([(r.metric, ""), NOT_COMPUTED, partial_cell, NOT_COMPUTED])
            continue
        p = pooled["value"][r.metric]
        table.append([(r.metric, ""), value_cell(p, interval(r.metric, base)), partial_cell,
                      value_cell(p - r.value if not (missing_value(p) or missing_value(r.value)) else None)])
    name = ranking_tables.COEFFICIENT_NAMES.get(base, (base,))[0]
    within = "system" if control == "system" else f"value of {control}"
    answer = _partial_answer(rows, pooled, name, within, control)
    where = f", subset {subset}" if subset else ""
    return (f"<h4>{html.escape(f'{name}, {level} level, against {human}, controlling for {control}{where}')}</h4>"
            + (f'<p class="answer">{html.escape(answer)}</p>' if answer else "")
            + sortable(["Metric", f"Pooled {name} [CI]", f"Partial {name} [CI]", "Pooled − partial"], table)
            + '<p class="caption">' + html.escape(
                f"Partial: each {within}'s mean subtracted from the metric and from the human on the cells "
                "where both are present, then correlated (p-values with n − 2 − (g − 1) degrees of freedom, "
                "in the rows' conventions). A metric whose pooled correlation is high and partial near 0 "
                f"tells the {within}s apart, not the good outputs from the bad within one. "
                + ("CI: " + ", ".join(sorted({f'{1 - a:.0%} {m}' for m, a in zip(ci['method'], ci['alpha'])}))
                   + "; an empty bracket: no interval stored. " if not ci.empty else
                   f"No intervals stored: run `{ctx.run(Hint('ci', (('dataset', ctx.dataset), ('human', human), ('control', control))))}`. ")
                + _pooled_missing(ctx, key, name, uncomputed)
                + "Significance of the partial correlations' differences: the Pairwise significance section "
                  f"(coefficient {base}[control={control}]).") + "</p>")


def _pooled_missing(ctx: Context, key: tuple, name: str, metrics: list[str]) -> str:
    """What to run for the pooled correlations of ``metrics`` that were never computed on these
    cells ("not computed": no stored row; "undefined" is a stored NaN)."""
    if not metrics:
        return ""
    human, subset, level, base, _ = key
    hint = Hint("correlate", (("dataset", ctx.dataset), ("human", human), ("levels", [level]),
                              ("coefficients", [base]), *subset_arguments(subset)))
    return f"Not computed: no pooled {name} of {', '.join(metrics)} is stored for these cells: run `{ctx.run(hint)}`. "


def subset_arguments(subset: str) -> tuple:
    """The ``where`` and ``by`` arguments that compute the results of ``subset`` (its label:
    ``attr=value`` conditions joined with `` & ``; ``attr=*`` the macro average over attr)."""
    from metaeval.runs.engine import selection

    if not subset:
        return ()
    pairs = [c.split("=", 1) for c in subset.split(selection.SUBSET_JOINER)]
    where = [f"{a}={v}" for a, v in pairs if v != selection.MACRO_VALUE]
    by = [a for a, v in pairs if v == selection.MACRO_VALUE]
    return ((("where", where),) if where else ()) + ((("by", by[0]),) if by else ())


def _partial_answer(rows: pd.DataFrame, pooled: pd.DataFrame, name: str, within: str, control: str) -> str:
    """The highest partial correlation, the largest fall from pooled to partial, and whether the
    pooled correlations would rank another metric first."""
    ranked = rows.dropna(subset=["value"]).sort_values("value", ascending=False)
    if ranked.empty:
        return ""
    drops = {m: pooled["value"].get(m, float("nan")) - v for m, v in zip(ranked["metric"], ranked["value"])}
    defined = {m: d for m, d in drops.items() if not missing_value(d)}
    answer = f"Within each {within}, the highest partial {name} is {ranked['metric'].iloc[0]}'s"
    if defined:
        worst = max(defined, key=defined.get)
        answer += (f"; the largest fall from pooled to partial is {worst}'s, "
                   f"{number(pooled['value'][worst])} → {number(ranked.set_index('metric')['value'][worst])}"
                   " (its pooled correlation rests on recognising the "
                   f"{'system' if control == 'system' else control})")
    pooled_top = pooled["value"].dropna().sort_values(ascending=False)
    if not pooled_top.empty and pooled_top.index[0] != ranked["metric"].iloc[0]:
        answer += f"; pooled, {pooled_top.index[0]} would come first"
    return answer + "."


def subsets(ctx: Context) -> Section | None:
    """The correlations of each subset of cells (``where`` / ``by``), with their intervals."""
    if not _shown(ctx):
        return None
    s = Section(TITLE, ANCHOR)
    if (rows := _subset_rows(ctx.rows("latest_correlations"))).empty:
        return s
    cis = ci_rows(ctx)
    s.blocks.append("<h3>Correlations per subset of cells</h3>")
    s.run_ids |= set(rows["run_id"])
    for (human, level, coefficient), part in in_order(rows.groupby(["human", "level", "coefficient"], sort=True),
                                                       ["human", "level", "coefficient"]):
        ci = cis[(cis["human"] == human) & (cis["level"] == level) & (cis["coefficient"] == coefficient)] \
            if not cis.empty else cis
        s.run_ids |= set(ci["run_id"]) if not ci.empty else set()
        table = []
        for r in part.sort_values(["subset", "value"], ascending=[True, False], na_position="last").itertuples():
            hit = ci[(ci["metric"] == r.metric) & (ci["subset"] == r.subset)] if not ci.empty else ci
            bounds = None if hit.empty else (hit["lower"].iloc[0], hit["upper"].iloc[0])
            table.append([(subset_text(r.subset), ""), (r.metric, ""), value_cell(r.value, bounds)])
        s.blocks.append(f"<h4>{html.escape(f'{level} level, {coefficient}, against {human}')}</h4>"
                        + sortable(["Subset", "Metric", "Correlation [CI]"], table)
                        + '<p class="caption">' + html.escape(
                            "Each subset is its own result (the cells whose attributes hold its conditions; "
                            "ATTR=*: the unweighted macro average over the values of ATTR). The ranking above "
                            "reads every cell (subset '').") + "</p>")
    return s


def categories(ctx: Context) -> Section | None:
    """Which errors each metric captures: its correlation with each error category, and the drop
    of its correlation with the human judgment when the category is ignored (FRANK's ablation)."""
    if not _shown(ctx):
        return None
    s = Section(TITLE, ANCHOR)
    if (rows := ctx.rows("latest_error_categories")).empty:
        return s
    s.blocks.append("<h3>Error categories: which errors each metric captures</h3>")
    s.run_ids |= set(rows["run_id"])
    for key, part in in_order(rows.groupby(["human", "level", "coefficient", "system_inputs"], sort=True),
                              ["human", "level", "coefficient", "system_inputs"]):
        human, level, coefficient, _ = key
        table = [[(r.metric, ""), (r.category, ""), value_cell(r.category_correlation),
                  value_cell(r.overall_correlation), value_cell(r.ablated_correlation),
                  value_cell(r.correlation_drop)] for r in part.itertuples()]
        setting = f"{level} level, {coefficient}, against {human}"
        s.blocks.append(f"<h4>{html.escape(setting)}</h4>"
                        + sortable(["Metric", "Category", "r(metric, category)", "r(metric, overall)",
                                    "r(metric, overall without it)", "Drop"], table))
        if part["correlation_drop"].notna().any():
            caption = (f"drop of each metric's correlation with {human} when the category is ignored (FRANK's "
                       f"ablation), {level} level, {coefficient}; > 0: the metric's agreement rests on that "
                       "category; n/a: undefined")
            cols = ["metric", "category", "category_measure", "ablated_measure", "category_correlation",
                    "overall_correlation", "ablated_correlation", "correlation_drop", "run_id"]
            ctx.figure(s, figures.category_drops(part, caption), slug("categories", *key), caption, part[cols])
    return s


def detection(ctx: Context) -> Section | None:
    """The metrics judged as detectors on binary labels: ROC-AUC and balanced accuracy with their
    intervals, per setting, and the paired tests between them."""
    if not _shown(ctx):
        return None
    s = Section(TITLE, ANCHOR)
    if (rows := ctx.rows("latest_detection")).empty:
        s.note = (ctx.missing("detection results (metrics judged on binary labels)", "detection",
                              first=(("positive", 1),))
                  + " (positive: the lowest human value that counts as consistent; 1 for a 0/1 label)")
        return s
    s.blocks.append("<h3>Detection on binary labels: ROC-AUC and balanced accuracy</h3>")
    s.run_ids |= set(rows["run_id"])
    tests = ctx.rows("latest_detection_tests")
    keys = ["human", "positive", "by", "tune", "fixed_threshold", "alpha"]
    for key, part in rows.fillna({"tune": "\0", "fixed_threshold": float("nan")}).groupby(
            keys, sort=True, dropna=False):
        human, positive, by, tune, fixed, alpha = key
        tune = None if tune == "\0" else tune
        s.blocks.append(_detection_block(human, positive, by, tune, fixed, alpha, part))
        t = tests[(tests["human"] == human) & (tests["positive"] == positive) & (tests["by"] == by)
                  & (tests["tune"].isna() if tune is None else tests["tune"] == tune)] if not tests.empty else tests
        if t.empty:
            s.blocks.append('<p class="note">' + html.escape(
                "No paired tests between the detectors are stored for this setting (they need two metrics): "
                f"run `{ctx.run(Hint('detection', (('dataset', ctx.dataset), ('human', human), ('positive', positive))))}`"
                " with the same options.") + "</p>")
            continue
        s.run_ids |= set(t["run_id"])
        s.blocks.append(_detection_tests(t))
    return s


def _detection_block(human, positive, by, tune, fixed, alpha, part: pd.DataFrame) -> str:
    """One setting of the detection rows: the answer, the table of detectors, the caption."""
    table = []
    macro = part[part["group"] == "*"]
    order = part.assign(_macro=part["group"] == "*").sort_values(
        ["subset", "_macro", "group", "roc_auc"], ascending=[True, True, True, False])
    for r in order.itertuples():
        group = "macro average" if r.group == "*" else r.group or "—"
        table.append([(r.metric, ""), (subset_text(r.subset), ""), (group, ""), int_cell(r.n),
                      int_cell(r.n_positive),
                      value_cell(r.roc_auc, (r.roc_auc_lower, r.roc_auc_upper)),
                      threshold_cell(r.threshold, r.group == "*"),
                      value_cell(r.balanced_accuracy, (r.balanced_accuracy_lower, r.balanced_accuracy_upper)),
                      value_cell(r.tune_balanced_accuracy)])
    if tune is None:
        how = f"at the fixed threshold {number(fixed)}"
    elif tune == "":
        how = ("at a threshold tuned on the evaluated cells themselves (optimistic: no held-out tune "
               "subset)")
    else:
        how = f"at a threshold tuned on the cells of {tune}" + (" (per group of " + by + ")" if by else "")
    best = part[part["group"].isin(["*"] if not macro.empty else [""])].dropna(subset=["roc_auc"])
    answer = ""
    if not best.empty:
        top = best.sort_values("roc_auc", ascending=False).iloc[0]
        answer = (f"Highest {'macro-average ' if not macro.empty else ''}ROC-AUC: {top['metric']}, "
                  f"{interval_text(top['roc_auc'], top['roc_auc_lower'], top['roc_auc_upper'])}; its balanced "
                  f"accuracy {interval_text(top['balanced_accuracy'], top['balanced_accuracy_lower'], top['balanced_accuracy_upper'])}.")
    caption = (f"A cell is positive (consistent) when {human} ≥ {float(positive):g}; each metric (lower-is-"
               f"better ones negated) as a detector: ROC-AUC, and the balanced accuracy {how}, a cell "
               "predicted positive when its score > the threshold (−∞: every cell). "
               f"{1 - alpha:.0%} percentile bootstrap intervals over the cells (k = {int(part['k'].max())}, "
               f"seed {int(part['seed'].min())}; every resample re-tunes the threshold). "
               + ("Macro average: the unweighted mean over the groups of " + by + " (undefined when any group "
                  "is). " if by else "")
               + "undefined: one class only among the cells.")
    return (f"<h4>{html.escape(f'against {human}, positive ≥ {float(positive):g}' + (f', by {by}' if by else ''))}</h4>"
            + (f'<p class="answer">{html.escape(answer)}</p>' if answer else "")
            + sortable(["Metric", "Subset", "Group", "n", "Positive", "ROC-AUC [CI]", "Threshold",
                        "Balanced accuracy [CI]", "Tune balanced accuracy"], table)
            + f'<p class="caption">{html.escape(caption)}</p>')


def _detection_tests(t: pd.DataFrame) -> str:
    """The paired bootstrap tests between the detectors of one setting, collapsed."""
    from metaeval.analyses import conclusions

    printed = conclusions.printed_pvalues(t, "count")   # at its resolution, and its side of alpha

    rows_t = [[(r.metric_a, ""), (r.metric_b, ""), (subset_text(r.subset), ""),
               ("macro average" if r.group == "*" else r.group or "—", ""), (r.statistic, ""),
               value_cell(r.delta), p_cell(r.p_value, shown.p_value), p_cell(r.p_adjusted, shown.p_adjusted),
               flag_cell(r.significant)] for r, shown in zip(t.itertuples(), printed.itertuples())]
    first = t.iloc[0]
    return ("<details><summary>" + html.escape(
        f"paired bootstrap tests between the detectors ({len(t)}; "
        f"{figures.correction_phrase(first['correction'], first['correction_group'])}, alpha "
        f"{float(first['alpha']):g}, {first['alternative']})") + "</summary>"
        + sortable(["Metric A", "Metric B", "Subset", "Group", "Statistic", "Δ (A − B)", "p", "p corrected",
                    "Significant"], rows_t)
        + '<p class="caption">' + html.escape(
            "Paired bootstrap over the cells both metrics scored (drawn once for both); p = count / k; a "
            "family that cannot reach its corrected level at k is never significant (no).") + "</p></details>")
