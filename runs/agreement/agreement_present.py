"""What ``metaeval agreement`` and ``metaeval annotators`` print (their families'
:meth:`~metaeval.runs.engine.families.Family.present`: :mod:`metaeval.runs.agreement.agreement_families`): the
runs' lines, the text tables and their notes; the paper tables of ``annotators`` (markdown, LaTeX).

Imported when a command prints, never at start-up.
"""

from __future__ import annotations

from metaeval.runs.engine.family_present import TEXT, prose, run_of

#: Up to this many metrics agreement's tau tables are printed; beyond, a summary line.
MAX_PRINTED_METRICS = 8


# --- annotators -----------------------------------------------------------------------------------
def annotators_notes(outcome, fmt: str) -> list[str]:
    s = run_of(outcome["annotator_agreement"])
    return [] if s is None or fmt in TEXT else s["lines"]


def annotators(outcome, fmt: str, layout: str = "auto") -> str:
    """Text: each human's run, the agreement statistics and the ceilings (every stored row of the
    humans); json / csv: both tables; markdown / latex: the agreement statistics, then the
    ceiling per human and estimator (value [CI]) for each level and coefficient, as a paper shows
    them (json, csv, markdown, latex: the ceilings of the levels and coefficients asked for)."""
    from metaeval.present import tables
    from metaeval.runs.agreement.annotators import IDENTITY_NOTE

    agreement, ceiling, s = outcome["annotator_agreement"], outcome["human_ceiling"], \
        run_of(outcome["annotator_agreement"])
    if fmt not in TEXT:
        if s["levels"]:   # the paper's table: the levels and coefficients asked for (text shows every stored row)
            ceiling = ceiling[ceiling["level"].isin(s["levels"])]
        if s["coefficients"]:
            ceiling = ceiling[ceiling["coefficient"].isin(s["coefficients"])]
        if fmt in ("json", "csv"):
            return tables.render_blocks([("annotator_agreement", agreement), ("human_ceiling", ceiling)], fmt)
        return annotators_paper(agreement, ceiling, s, fmt, layout)
    out = [prose(*s["lines"]), "\n",
           tables.render(agreement[["human", "annotators", "min_per_cell", "median_per_cell", "max_per_cell",
                                    "statistic", "variant", "value", "identity_free"]].round(4), "table"), "\n",
           tables.render(ceiling[["human", "estimator", "level", "coefficient", "value", "lower", "upper",
                                  "identity_free"]].round(4), "table"),
           prose(f"\n{IDENTITY_NOTE}.")]
    positional = sorted(set(agreement.loc[agreement["positional_ids"], "human"]))
    if positional:
        out.append(prose(f"The annotator ids of {', '.join(positional)} are list positions (0, 1, ...): nothing says "
                         "position 0 is the same person in every cell, so read the identity-based rows with care."))
    return "".join(out)


def annotators_paper(agreement, ceiling, s: dict, fmt: str, layout: str) -> str:
    """The agreement statistics, then the ceiling per human and estimator (value [CI]) for each
    level and coefficient (LaTeX, or markdown that agrees with it)."""
    from metaeval.present import ranking_tables, tables
    from metaeval.runs.agreement.annotators import IDENTITY_NOTE

    dataset, k, alpha, splits, seed = s["dataset"], s["k"], s["alpha"], s["splits"], s["seed"]
    shown = agreement.assign(value=[ranking_tables.plain_number(v) for v in agreement["value"]])[
        ["human", "annotators", "median_per_cell", "statistic", "variant", "value"]]
    shown = shown.assign(median_per_cell=[f"{v:g}" for v in shown["median_per_cell"]]).rename(
        columns={"median_per_cell": "per cell (median)"})
    caption = (f"Agreement between the annotators of {dataset}: Krippendorff's alpha (interval, ordinal) and the "
               f"mean pairwise correlation between annotators (level/coefficient).")
    ceiling = ceiling.assign(metric=[f"{h} ({e})" for h, e in zip(ceiling["human"], ceiling["estimator"])],
                             correlation=ceiling["value"])
    ranking = ranking_tables.Ranking(ceiling, bold=False, ceiling=False, confidence=1 - alpha, keep_ci=True,
                                     row_header="Human (estimator)", rows_name="Rows")
    ceiling_caption = (f"Human ceiling of {dataset}: leave-one-annotator-out (mean over annotators of the correlation "
                       f"of one with the mean of the others; {100 * (1 - alpha):g}% Boot-Both CI, k={k}, seed={seed}) "
                       f"and split-half (Spearman-Brown corrected, {splits} random splits). {IDENTITY_NOTE}.")
    if fmt == "latex":
        return tables.render(shown, "latex", caption=caption) + ranking.latex(ceiling_caption, layout)
    return tables.render(shown, "markdown", caption=caption) + "\n" + ranking.markdown(ceiling_caption)


# --- agreement ------------------------------------------------------------------------------------
#: agreement's score_range_agreement columns in markdown and latex (json and csv: every column)
RANGE_COLUMNS = ("metric_a", "metric_b", "bin", "n_inputs", "tau", "disagreement", "random_disagreement")


def agreement_lines(summary) -> list[str]:
    """What a run of agreement did: each table's run (or all up to date), and what the input
    properties lack."""
    s = summary
    if s.up_to_date:
        lines = ["agreement: all results up to date; nothing computed (--force recomputes)"]
    else:
        lines = [f"{table}: {r.tasks} results, " + ("up to date" if r.up_to_date else
                                                    f"run {r.run_id}: computed {r.computed}, wrote {r.written} rows")
                 for table, r in (("score_range_agreement", s.score_ranges), ("property_agreement", s.by_property))]
        p = s.properties
        lines.append(f"input_properties: {'up to date' if p.up_to_date else f'run {p.run_id}: wrote {p.written} rows'}")
    return lines + ([f"note: {s.properties.missing}"] if s.properties.missing else [])


def agreement_notes(outcome, fmt: str) -> list[str]:
    s = run_of(outcome["score_range_agreement"])
    return [] if s is None or fmt in TEXT else s["lines"]


def agreement(outcome, fmt: str) -> str:
    """Text: the runs, the tau tables (up to :data:`MAX_PRINTED_METRICS` metrics), the means by
    bin, the properties, the curves; json, csv, markdown, latex: the latest rows of
    score_range_agreement and property_agreement (and agreement_curves with bins)."""
    from metaeval.present import tables

    rows, s = outcome["score_range_agreement"], run_of(outcome["score_range_agreement"])
    curves = outcome.get("agreement_curves")
    if fmt not in TEXT:
        if fmt not in ("json", "csv"):
            rows = rows[[c for c in RANGE_COLUMNS if c in rows.columns]]
        return tables.render_blocks([("score_range_agreement", rows.reset_index(drop=True)),
                                     ("property_agreement", outcome["property_agreement"]),
                                     *([] if curves is None else [("agreement_curves", curves)])], fmt)
    return prose(*s["lines"]) + agreement_text(rows, outcome["property_agreement"], s) + \
        ("" if curves is None else agreement_curves(curves))


def agreement_text(rows, by_property, s: dict) -> str:
    import shlex

    import pandas as pd

    from metaeval.analyses import agreement
    from metaeval.present import tables

    out = []
    if s["n_metrics"] <= MAX_PRINTED_METRICS:
        for setting in ("non-cumulative", "cumulative"):
            out += [prose(f"\nKendall tau, {setting} bins (mean over inputs):"),
                    tables.render(agreement.tau_matrix(rows, setting).round(3), "text")]
    means = rows.groupby("bin", sort=False)[["tau", "disagreement", "random_disagreement"]].mean()
    out += [prose("\nMean over metric pairs, by bin:"),
            tables.render(means.reindex(pd.Index(list(agreement.BINS), name="bin")).round(3), "text")]
    if not by_property.empty:
        out += [prose("\nPer-input tau (all summaries) against input properties, mean over metric pairs:"),
                tables.render(by_property.groupby("property")[["n_used", "pearson", "spearman"]].mean().round(3),
                              "text")]
    db = ["--db", s["db"]] if s["db"] else []
    out.append(prose("\nEverything is in the warehouse: " + ", ".join(
        f"`{shlex.join(['metaeval', *db, 'results', table, '--dataset', s['dataset']])}`"
        for table in ("score_range_agreement", "input_properties", "property_agreement")) + "."))
    return "".join(out)


def agreement_curves(curves) -> str:
    """Mean over metric pairs of each statistic per bin, one table per protocol and baseline
    (3 decimals, through the text table helper: it fits the terminal)."""
    from metaeval.present import tables

    if curves.empty:
        return ""
    out = []
    for (protocol, baseline), g in curves.groupby(["protocol", "baseline"], sort=False):
        table = g.pivot_table(index=["bin", "lower", "upper"], columns="statistic", values="value", aggfunc="mean")
        scores = "Uniform(0, 1) random scores" if baseline == "random" else "the metrics' scores"
        table.columns.name = None
        out += [prose(f"\n{protocol} bins, {scores} (mean over metric pairs):"),
                tables.render(table.reset_index().round(3), "text")]
    return "".join(out) + prose("(table agreement_curves: per metric pair, with counts)")
