"""``metaeval annotators``: agreement between annotators and the human ceiling."""

from __future__ import annotations

import click

from metaeval.cli.app import Context, fmt_option, is_text, layout_option, show, say
from metaeval.cli.families import options_of



@click.command()
@options_of("annotators")
@fmt_option()
@layout_option
@click.pass_obj
def annotators(obj: Context, dataset, humans, levels, coefficients, k, alpha, splits, seed, force, where, fmt, layout):
    """How much the annotators agree, and the human ceiling.

    Per human measure: annotators per cell, Krippendorff's alpha (interval, ordinal), the mean
    pairwise correlation between annotators, and the ceiling -- the leave-one-annotator-out
    correlation (mean over annotators of Corr(one, mean of the others), with a Boot-Both CI) and
    the split-half estimate (Spearman-Brown corrected) -- at each level and coefficient. Tables
    annotator_agreement and human_ceiling.
    """
    from metaeval.runs.agreement import annotators as runs

    with obj.open() as wh:
        summaries = runs.annotators(wh, dataset, humans, levels, coefficients, k=k, alpha=alpha, seed=seed,
                                    splits=splits, force=force, where=where)
        for s in summaries:
            state = "up to date; nothing computed" if s.run_id is None else f"run {s.run_id}: wrote {s.rows} rows"
            say(f"{s.human}: {state}", err=not is_text(fmt))
        chosen = [s.human for s in summaries]
        from metaeval.runs.engine import selection

        agreement, ceiling = runs.latest(wh, dataset, chosen, selection.subset_label(where))
    if not is_text(fmt):
        if levels:   # the paper's table: the levels and coefficients asked for (text shows every stored row)
            ceiling = ceiling[ceiling["level"].isin(levels)]
        if coefficients:
            ceiling = ceiling[ceiling["coefficient"].isin(coefficients)]
        _formats(agreement, ceiling, dataset, k, alpha, splits, seed, fmt, layout)
        return
    click.echo()
    show(agreement[["human", "annotators", "min_per_cell", "median_per_cell", "max_per_cell", "statistic",
                    "variant", "value", "identity_free"]].round(4), "table")
    click.echo()
    show(ceiling[["human", "estimator", "level", "coefficient", "value", "lower", "upper",
                  "identity_free"]].round(4), "table")
    say(f"\n{runs.IDENTITY_NOTE}.")
    positional = sorted(set(agreement.loc[agreement["positional_ids"], "human"]))
    if positional:
        say(f"The annotator ids of {', '.join(positional)} are list positions (0, 1, ...): nothing says "
                   "position 0 is the same person in every cell, so read the identity-based rows with care.")


def _formats(agreement, ceiling, dataset, k, alpha, splits, seed, fmt, layout) -> None:
    """json / csv: both tables' rows; markdown / latex: the agreement statistics, then the ceiling
    per human and estimator (value [CI]) for each level and coefficient, as a paper shows them."""
    from metaeval.present import ranking_tables, tables
    from metaeval.runs.agreement import annotators as runs

    if fmt in ("json", "csv"):
        click.echo(tables.render_blocks([("annotator_agreement", agreement), ("human_ceiling", ceiling)], fmt), nl=False)
        return
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
                       f"and split-half (Spearman-Brown corrected, {splits} random splits). {runs.IDENTITY_NOTE}.")
    if fmt == "latex":
        click.echo(tables.render(shown, "latex", caption=caption), nl=False)
        click.echo(ranking.latex(ceiling_caption, layout), nl=False)
    else:
        click.echo(tables.render(shown, "markdown", caption=caption))
        click.echo(ranking.markdown(ceiling_caption), nl=False)


COMMANDS = [annotators]
