"""The sections of the figures and tables of Deutsch, Dror & Roth 2021 (and 2022's accuracy by
human difference): confidence intervals, pairwise significance, close systems, power, coverage,
normality. Each draws one figure per setting of its latest rows, never a mix of settings."""

from __future__ import annotations

import json

import pandas as pd

from metaeval.analyses import conclusions, stored_tests
from metaeval.present import figures
from metaeval.core import Store
from metaeval.errors import Hint
from metaeval.runs.agreement import annotators
from metaeval.runs.report.cells import in_order, missing_value, number, slug, table_html
from metaeval.runs.report.context import Context, Section


def correlations(wh: Store, dataset: str, human: str, level: str, coefficient: str,
                 subset: str = "", aggregate: str = "mean") -> dict[str, float]:
    """metric -> its latest correlation with ``human`` at ``level`` and ``coefficient`` on the
    cells of ``subset``, a system's score its ``aggregate`` over the inputs (the order of a
    significance heatmap's metrics); empty when ``correlate`` has not run."""
    rows = wh.sql("SELECT metric, value FROM latest_correlations WHERE dataset = ? AND human = ? AND level = ? "
                  "AND coefficient = ? AND subset = ? AND aggregate = ?",
                  [dataset, human, level, coefficient, subset, aggregate])
    return dict(zip(rows["metric"], rows["value"], strict=True))


def intervals(ctx: Context) -> Section:
    s = Section("Confidence intervals (the paper's Figure 4)", "intervals")
    rows = ctx.rows("latest_confidence_intervals")
    if rows.empty:
        s.note = ctx.missing("confidence intervals", "ci")
        return s
    s.run_ids |= set(rows["run_id"])
    keys = ["human", "method", "alpha", "level", "coefficient", "subset"]
    for key, part in in_order(rows.groupby(keys, sort=True), keys):
        human, method, alpha, level, coefficient, subset = key
        caption = (f"{1 - alpha:.0%} {method} CIs, {level} level, {coefficient}, against {human}"
                   + (f", subset {subset}" if subset else ""))
        table = part[["metric", "estimate", "lower", "upper", "k", "seed", "run_id"]]
        ceiling = annotators.ceilings(ctx.wh, ctx.dataset, human)
        ceiling = ceiling[(ceiling["level"] == level) & (ceiling["coefficient"] == coefficient)]
        line = None
        if not ceiling.empty and pd.notna(ceiling["human_ceiling"].iloc[0]):
            line = tuple(float(ceiling[c].iloc[0]) for c in ("human_ceiling", "human_ceiling_lower",
                                                              "human_ceiling_upper"))
            interval = ("" if any(map(missing_value, line[1:]))
                        else f" [{number(line[1])}, {number(line[2])}]")
            caption += f"; dashed: the human ceiling (leave-one-out, metaeval annotators) {number(line[0])}{interval}"
        ctx.figure(s, figures.ci_forest(part, caption, line), slug("ci", *key), caption, table)
        s.blocks.append(f"<details><summary>table</summary>{table_html(table)}</details>")
        s.blocks.extend(_clustered(ctx, part, human, subset))
    return s


def _clustered(ctx: Context, part: pd.DataFrame, human: str, subset: str) -> list[str]:
    """Where ``--resample-clusters`` widened an interval: each clustered interval's width beside
    the one on single inputs when stored (every cell; for a subset, only that it is clustered)."""
    import html

    from metaeval.runs.engine import clusters

    attributes = {clusters.json_get(c, clusters.KEY) for c in part["conventions"]} - {None}
    if not attributes:
        return []
    if subset:
        return [f"<p>Clusters of inputs resampled whole ({html.escape(', '.join(sorted(attributes)))}).</p>"]
    lines = clusters.widening_lines(ctx.wh, part, ctx.dataset, human)
    return ["<p>Clusters of inputs resampled whole: " + "; ".join(html.escape(x) for x in lines) + ".</p>"]


def tests(ctx: Context) -> Section:
    s = Section("Pairwise significance (the paper's Figure 5)", "tests")
    rows = ctx.rows("latest_hypothesis_tests")
    if rows.empty:
        s.note = ctx.missing("hypothesis tests", "compare", needs_pair=True)
        return s
    s.run_ids |= set(rows["run_id"])
    keys = ["human", "method", "alternative", "correction", "correction_group", "alpha", "level", "coefficient",
            "subset"]
    for key, part in in_order(rows.groupby(keys, sort=True), keys):
        human, method, alternative, correction, group, alpha, level, coefficient, subset = key
        setting = (f"{method} ({alternative}), {level} level, {coefficient}, against {human}"
                   + (f", subset {subset}" if subset else ""))
        phrase = figures.correction_phrase(correction, group)
        shading = (f"filled = p <= {alpha} before correction, outlined = significant after {phrase}"
                   if correction != "none" else f"filled = significant at alpha {alpha} ({phrase})")
        caption = (f"{figures.hypothesis(alternative)} {setting}: {shading}; metrics ordered by their "
                   "correlation with the human judgment (in brackets) when it is stored")
        table = part[["metric_a", "metric_b", "delta", "statistic", "p_value", "p_adjusted", "significant",
                      "k", "seed", "run_id"]]
        order = correlations(ctx.wh, ctx.dataset, human, level, coefficient, subset)
        ctx.figure(s, figures.significance_heatmap(part, alpha, setting, alternative, order or None),
                   slug("tests", *key), caption, table)
        shown = conclusions.printed_pvalues(part, stored_tests.pvalue_formula(method),
                                            stored_tests.conventions_n_valid(part))   # at their resolution
        printed = {c: list(shown[c]) for c in ("p_value", "p_adjusted")}
        s.blocks.append(f"<details><summary>table</summary>{table_html(table, printed=printed)}</details>")
    return s


def close_pairs(ctx: Context) -> Section:
    s = Section("Close systems: accuracy by human difference (Deutsch, Dror & Roth 2022)", "close-pairs")
    rows = ctx.rows("latest_delta_bin_accuracy")
    if rows.empty:
        s.note = ctx.missing("accuracy by bin of human difference", "accuracy", first=(("delta_bins", 4),))
        return s
    s.run_ids |= set(rows["run_id"])
    for key, part in rows.groupby(["human", "bins", "metric_tolerance", "human_tolerance"], sort=True):
        human, bins = key[0], key[1]
        caption = (f"pairwise accuracy within {bins} quantile bins of the system pairs' |human difference| "
                   f"(bin 0 = the closest pairs), against {human}")
        table = part[["metric", "bin", "low", "high", "pairs", "accuracy", "kendall", "run_id"]]
        ctx.figure(s, figures.delta_bin_accuracy(part, caption), slug("close", *key), caption, table)
        s.blocks.append(f"<details><summary>table</summary>{table_html(table)}</details>")
    return s


def power(ctx: Context) -> Section:
    s = Section("Statistical power (the paper's Figure 3)", "power")
    if (rows := ctx.rows("latest_power")).empty:
        s.note = ctx.missing("power simulations", "simulate_power", needs_texts=True)
        return s
    s.run_ids |= set(rows["run_id"])
    # one figure per latest_power partition (all but method and proportion): never mix variants
    for key, part in rows.groupby(["human", "variant", "alpha", "level", "coefficient"], sort=True):
        human, variant, alpha, level, coefficient = key
        caption = (f"power of ROUGE-1 {variant} > R_k against the proportion of tokens kept, alpha {alpha}, "
                   f"{level} level, {coefficient}, against {human}")
        table = part[["variant", "method", "proportion", "trials", "rejections", "power", "alpha", "k", "seed",
                      "run_id"]]
        ctx.figure(s, figures.power_curves(part, caption), slug("power", *key), caption, table,
                   note=power_note(part))
        s.blocks.append(f"<details><summary>table</summary>{table_html(table)}</details>")
    return s


def power_note(rows: pd.DataFrame) -> str:
    """What a reader of a power figure must be told: which curves coincide (drawn one over the
    other), and why a test that never rejects cannot, from its rows' conventions."""
    notes = []
    for group in figures.coinciding(rows, "method", "proportion", "power"):
        notes.append(f"The curves of {' and '.join(group)} coincide (the same power at every proportion): they are "
                     "drawn one over the other, told apart by their line styles and markers.")
    for method in figures.never_rejects(rows):
        part = rows[rows["method"] == method]
        conventions = part["conventions"].iloc[0] if "conventions" in part else None
        conventions = json.loads(conventions) if isinstance(conventions, str) else conventions or {}
        trials = int(part["trials"].max())
        level = conventions.get("level", part["level"].iloc[0] if "level" in part else "")
        why = [f"its p-value is {conventions['pvalue']}"] if conventions.get("pvalue") else []
        if method == "williams":
            n = int(part["n_systems"].max()) if level == "system" and "n_systems" in part else None
            if n is not None:
                why.append(f"at the system level n is the {n} systems ({n - 3} degrees of freedom): it sees the "
                           "system means only, not the variation over inputs that the resampling tests draw on")
            coefficient = conventions.get("coefficient", "")
            if coefficient and coefficient != "pearson":
                why.append(f"the test is derived for Pearson's r and is only an approximation for {coefficient}")
        notes.append(f"{method} rejected H0 in none of the {trials} trials at any proportion (power 0 throughout)"
                     + (": " + "; ".join(why) if why else "") + ". Its line lies on the x-axis.")
    return " ".join(notes)


def coverage(ctx: Context) -> Section:
    s = Section("CI coverage of held-out correlations (the paper's Table 1)", "coverage")
    if (rows := ctx.rows("latest_ci_coverage")).empty:
        s.note = ctx.missing("coverage simulations", "simulate_coverage", needs_metric=True)
        return s
    s.run_ids |= set(rows["run_id"])
    s.blocks.append(table_html(rows[["metric", "human", "level", "coefficient", "method", "alpha", "k", "trials",
                                     "contains", "too_high", "too_low", "coverage", "seed", "run_id"]]))
    return s


def normality(ctx: Context) -> Section:
    s = Section("Normality of the scores (the paper's appendix A)", "normality")
    rows = ctx.wh.sql("SELECT * FROM latest_normality WHERE dataset = ? ORDER BY measure, level", [ctx.dataset])
    if rows.empty:
        s.note = f"no normality results: run `{ctx.run(Hint('normality', (('dataset', ctx.dataset),)))}`"
        return s
    s.run_ids |= set(rows["run_id"])
    s.blocks.append(table_html(rows.drop(columns=[c for c in ("result_id", "dataset", "fingerprint", "conventions")
                                                  if c in rows.columns])))
    return s
