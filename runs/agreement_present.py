"""What ``metaeval agreement`` and ``metaeval annotators`` print (their families'
:meth:`~metaeval.runs.families.Family.present`: :mod:`metaeval.runs.agreement_families`): the
runs' lines, the text tables and their notes; the paper tables of ``annotators`` (markdown, LaTeX).

Imported when a command prints, never at start-up.
"""

from __future__ import annotations

from metaeval.runs.family_present import TEXT, prose, run_of

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
    from metaeval.analyses import tables
    from metaeval.runs.annotators import IDENTITY_NOTE

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
    from metaeval.analyses import ranking_tables, tables
    from metaeval.runs.annotators import IDENTITY_NOTE

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
