"""Inter-metric agreement by score range and per-input agreement against input properties
(Bhandari et al. 2020). The per-input Kendall tau drawn against the properties is not
persisted: it is computed from the stored scores for a few metric pairs (said in the captions)."""

from __future__ import annotations

import glob
import html
import json

import numpy as np
import pandas as pd

from metaeval.errors import WarehouseError
from metaeval.runs.report.cells import slug, table_html
from metaeval.runs.report.context import SUMMARIES, Context, Section

#: Up to this many metric pairs are drawn against each input property (the paper's figure 1).
MAX_PROPERTY_PAIRS = 6
#: The columns of latest_property_agreement shown and written with the figures of tau against properties.
PROPERTY_COLUMNS = ["metric_a", "metric_b", "property", "n_used", "tau_mean", "pearson", "pearson_p", "spearman",
                    "spearman_p", "run_id"]


def agreement(ctx: Context) -> Section:
    from metaeval.present import agreement_plots

    s = Section("Inter-metric agreement by score range (Bhandari et al. 2020)", "agreement")
    rows = ctx.wh.sql("SELECT * FROM latest_score_range_agreement WHERE dataset = ? ORDER BY result_id",
                      [ctx.dataset])
    if rows.empty:
        s.note = f"no agreement results yet: run `{ctx.agreement_hint()}`"
        return s
    s.run_ids |= set(rows["run_id"])
    # one heatmap (and one disagreement figure) per setting of latest_score_range_agreement:
    # never a mix of consensus, normalisation, alpha or significant_only
    keys = ["consensus", "normalisation", "alpha", "significant_only"]
    for n, (key, part) in enumerate(rows.groupby(keys, sort=True)):
        consensus, normalisation, alpha, significant_only = key
        setting = (f"{'significant' if significant_only else 'all'} per-input taus (alpha {alpha}), "
                   f"{normalisation} normalisation, consensus of {len(json.loads(consensus))} metrics")
        s.blocks.append(f"<h3>{html.escape(setting[0].upper() + setting[1:])}</h3>"
                        f"<p>Consensus: {html.escape(', '.join(json.loads(consensus)))}.</p>")
        table = part[["metric_a", "metric_b", "bin", "tau", "n_tau", "n_undefined", "disagreement",
                      "random_disagreement", "run_id"]]
        duplicated = [frozenset(p) in ctx.duplicate_pairs() for p in zip(part["metric_a"], part["metric_b"])]
        if any(duplicated):  # tau = 1 by construction: said, not drawn (the CSV keeps every pair)
            left_out = sorted({" / ".join(sorted(p)) for p, d in zip(zip(part["metric_a"], part["metric_b"]),
                                                                     duplicated) if d})
            s.blocks.append(f"<p class=\"note\">Not drawn: {html.escape(', '.join(left_out))} — one duplicates "
                            "the other (see Dataset), so their tau is 1 in every bin.</p>")
            part = part[[not d for d in duplicated]]
            if part.empty:
                continue
        cells = agreement_plots.tau_heatmap_table(part)
        pairs = part[["metric_a", "metric_b"]].drop_duplicates().shape[0]
        rows_are = ("metric pairs, then their mean" if len(cells) == pairs + 1 else
                    f"each metric's mean over its {len(json.loads(consensus)) - 1} pairs (more than "
                    f"{agreement_plots.MAX_HEATMAP_PAIRS} pairs: every pair is in the CSV), then the mean "
                    f"over all {pairs} pairs")
        caption = (f"τ by bin heatmap: mean over inputs of the per-input Kendall τ between metrics, by bin of "
                   f"the input's score range: L, M, T (non-cumulative thirds), then L+M+T, M+T (cumulative); "
                   f"rows: {rows_are}; n/a: no input with a defined τ. Setting: {setting}.")
        ctx.figure(s, agreement_plots.tau_heatmap(part, setting),
                   slug("agreement-tau", n, normalisation, alpha, significant_only), caption, table)
        s.blocks.append("<details><summary>table: the heatmap's cells</summary>"
                        + table_html(cells.reset_index()) + "</details>")
        ctx.figure(s, agreement_plots.disagreement_by_bin(part), slug("agreement-disagreement", n, normalisation,
                                                                      alpha, significant_only),
                   f"pairwise disagreement by score bin against random scores: {setting}", table)
    props = ctx.wh.sql("SELECT * FROM latest_property_agreement WHERE dataset = ? ORDER BY result_id",
                       [ctx.dataset])
    if not props.empty:
        s.run_ids |= set(props["run_id"])
        s.blocks.append("<h3>Per-input agreement against input properties (the paper's figure 1)</h3>")
        for n, (key, part) in enumerate(props.groupby(["consensus", "alpha", "significant_only"], sort=True)):
            _properties(ctx, s, n, *key, part)
    return s


def _properties(ctx: Context, s: Section, n: int, consensus: str, alpha: float, significant_only: bool,
                part: pd.DataFrame) -> None:
    """Per-input tau against each stored property, for one setting of latest_property_agreement
    (one figure per property). Per-input tau is not persisted: it is computed from the
    warehouse's matrices by agreement_runs.tau_vs_property, for at most MAX_PROPERTY_PAIRS pairs."""
    from metaeval.analyses import agreement
    from metaeval.present import agreement_plots
    from metaeval.runs.agreement import score_ranges as agreement_runs

    metrics = json.loads(consensus)
    setting = (f"{'significant' if significant_only else 'all'} per-input taus (alpha {alpha}), consensus of "
               f"{len(metrics)} metrics")
    s.blocks.append(f"<h4>{html.escape(setting[0].upper() + setting[1:])}</h4>")
    stored = [p for p in agreement.PROPERTIES if p in set(part["property"])]
    if lacking := [p for p in agreement.TEXT_PROPERTIES if p not in stored]:
        s.blocks.append(f'<p class="note">{html.escape(_text_properties_note(ctx, lacking))}</p>')
    pairs = property_pairs(part)
    total = len(part[["metric_a", "metric_b"]].drop_duplicates())
    chosen = (f"all {total} metric pairs" if len(pairs) == total else
              f"{len(pairs)} of the {total} metric pairs, spread evenly from the lowest to the highest mean "
              "per-input τ (every pair's correlations are in the table below)")
    only = f", inputs with p <= {alpha} only" if significant_only else ""
    try:
        scope = agreement_runs.resolve(ctx.wh, ctx.dataset, [glob.escape(m) for m in metrics])
        data = agreement_runs.load(ctx.wh, scope, "input")  # per-input tau ignores the normalisation
        for prop in stored:
            drawn = part[part["property"] == prop].set_index(["metric_a", "metric_b"]).loc[pairs].reset_index()
            window = moving_window(drawn)
            series = {(a, b): agreement_runs.tau_vs_property(ctx.wh, scope, a, b, prop, window=window,
                                                             alpha=alpha, significant_only=significant_only,
                                                             data=data)
                      for a, b in pairs}
            caption = (f"per-input Kendall τ against {agreement_plots.PROPERTY_LABELS[prop]} (the paper's "
                       f"figure 1): each point is an input, its τ over all its complete summaries (bin L+M+T"
                       f"{only}), computed for this figure from the stored scores (per-input τ is not "
                       f"persisted); red: {window}-point moving average; panel titles: the stored correlation "
                       f"over inputs; {chosen}. Setting: {setting}.")
            stale = [f"{r.metric_a} vs {r.metric_b}" for r in drawn.itertuples()
                     if len(series[(r.metric_a, r.metric_b)]) != r.n_used]
            if stale:
                caption += (f" Warning: the stored rows of {', '.join(stale)} count other inputs than drawn (the "
                            f"scores changed since): rerun `{ctx.agreement_hint()}`.")
            ctx.figure(s, agreement_plots.tau_vs_property_pairs(series, prop, drawn, setting),
                       slug("agreement-property", n, prop, alpha, significant_only), caption,
                       drawn[PROPERTY_COLUMNS])
    except WarehouseError as exc:
        s.blocks.append(f'<p class="note">{html.escape(f"per-input τ cannot be drawn: {exc}")}</p>')
    s.blocks.append("<details><summary>table: correlation over inputs of per-input τ with each property, "
                    "every pair</summary>" + table_html(part[PROPERTY_COLUMNS]) + "</details>")


def _text_properties_note(ctx: Context, lacking: list[str]) -> str:
    counts = ctx.wh.con.execute(
        """SELECT (SELECT count(*) FROM documents JOIN inputs USING (input_id) JOIN datasets USING (dataset_id)
                   WHERE datasets.name = $d),
                  (SELECT count(*) FROM "references" JOIN inputs USING (input_id) JOIN datasets USING (dataset_id)
                   WHERE datasets.name = $d)""", {"d": ctx.dataset}).fetchone()
    what = " and ".join(lacking)
    if counts[0] and counts[1]:
        return (f"{what}: not stored for these metrics although the dataset now has documents and references: "
                f"run `{ctx.agreement_hint()}` again")
    return (f"{what} need the source documents and the reference texts; dataset {ctx.dataset!r} stores "
            f"{counts[0]} documents and {counts[1]} reference texts (`{ctx.run(SUMMARIES)}` stores those "
            "its file has), "
            "so only ease of summarisation is drawn")


def property_pairs(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """The metric pairs drawn against the properties: all, or MAX_PROPERTY_PAIRS of them spread
    evenly over the ranking by mean per-input tau (the same pairs for every property)."""
    mean = (rows.groupby(["metric_a", "metric_b"])["tau_mean"].mean().sort_index()
            .sort_values(kind="stable", na_position="last"))
    if len(mean) <= MAX_PROPERTY_PAIRS:
        return sorted(mean.index)
    defined = mean.dropna()
    ranked = defined if len(defined) >= MAX_PROPERTY_PAIRS else mean
    picks = sorted(set(np.round(np.linspace(0, len(ranked) - 1, MAX_PROPERTY_PAIRS)).astype(int)))
    return [ranked.index[i] for i in picks]


def moving_window(rows: pd.DataFrame) -> int:
    """The moving average of tau against a property: the paper's 10 points (TAC, 46 inputs), or
    100 (CNNDM, 11,490) beyond 1,000 inputs; at most a third of the fewest inputs drawn, at least 2."""
    paper = 10 if int(rows["n_inputs"].max()) <= 1000 else 100
    return min(paper, max(2, int(rows["n_used"].min()) // 3))
