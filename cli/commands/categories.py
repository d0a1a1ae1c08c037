"""``metaeval categories``: error categories of a human judgment (each metric's correlation with
each category, and the drop of its correlation when the category is ignored); a call of
:meth:`metaeval.runs.engine.api.Warehouse.categories` plus printing."""

from __future__ import annotations

from pathlib import Path

import click

from metaeval.cli.app import (OVERWRITE, Context, fmt_option, interrupted, is_text, layout_option, out_file,
                              report_outcome, show, say)
from metaeval.cli.families import options_of
from metaeval.cli.progress import terminal_progress
from metaeval.cli.renamed import Renamed

#: The columns of the text, markdown and LaTeX tables (json and csv give every column).
SHOWN = {"metric": "metric", "level": "level", "coefficient": "coefficient", "category": "category",
         "category_correlation": "r_category", "overall_correlation": "r_overall",
         "ablated_correlation": "r_without", "correlation_drop": "drop"}


@click.command()
@options_of("categories")
@click.option("--out", "figure", cls=Renamed, renamed_from=("--figure",),
              type=click.Path(dir_okay=False, path_type=Path), default=None,
              callback=out_file(".png", ".svg", ".pdf"),
              help="Also draw the drop per category and metric (one --level and one --coefficient) to this file.")
@OVERWRITE
@fmt_option()
@layout_option
@click.pass_obj
def categories(obj: Context, dataset, human, metrics, levels, coefficients, system_inputs, jobs, force,
               category_measures, ablations, figure, overwrite, fmt, layout):
    """Error categories of the human judgment --human (FRANK's ablation, Pagnoni et al. 2021).

    For each metric, level, coefficient and category: r_category, the correlation with the
    category's measure (--category); r_overall, with --human; r_without, with --human when the
    category is ignored (--ablation); drop = r_overall - r_without (> 0: the metric's agreement
    rests on that category). An undefined correlation (a constant category) is NaN (null), never 0."""
    from metaeval import files
    from metaeval.runs.factuality import categories as family

    if not category_measures and not ablations:
        raise click.UsageError("give at least one --category CATEGORY=MEASURE or --ablation CATEGORY=MEASURE")
    if figure is not None:
        if len(levels) != 1 or len(coefficients) != 1:
            raise click.UsageError("--out draws one setting: give one --level and one --coefficient")
        files.check_output_file(figure, warehouse=obj.path, overwrite=overwrite)
    err = not is_text(fmt)
    with obj.open() as wh:
        try:
            out = family.categories(wh, dataset, human, category_measures, ablations, metrics, levels, coefficients,
                                    system_inputs=system_inputs, jobs=jobs, force=force, progress=terminal_progress())
        except KeyboardInterrupt as exc:
            raise interrupted(exc, "the results finished so far are saved; "
                                   "run the same command again to resume") from None
        report_outcome(out, fmt)
        frame = family.rows(wh, out)
        if fmt in ("markdown", "latex"):
            from metaeval.runs.engine import signatures

            signature = signatures.table_signature(wh, frame)
    if fmt in ("json", "csv"):
        show(frame, fmt)
    elif fmt in ("markdown", "latex"):
        _paper(frame, fmt, layout, human, dataset, signature)
    else:
        show(frame[list(SHOWN)].rename(columns=SHOWN), fmt)
        say("drop = r_overall - r_without: the fall of the correlation with the overall judgment when the "
                   "category is ignored (> 0: the metric's agreement rests on it); empty: undefined (a constant "
                   "judgment) or no such measure given")
    if figure is not None:
        _draw(obj, frame, human, dataset, figure, overwrite, err)


def _paper(frame, fmt: str, layout: str, human: str, dataset: str, signature: str | None) -> None:
    """The paper table: metrics x (r with the overall judgment, then each category's drop, or its
    r where no ablation was given), LaTeX or the markdown that agrees with it."""
    from metaeval.present import paper_tables
    from metaeval.runs.metrics.evaluate import SYSTEM_INPUTS_TEXT

    protocols = sorted(set(frame["system_inputs"].dropna()))
    measures = "; ".join(f"{c}: " + ", ".join(filter(None, (
        f"judgment {cm}" if isinstance(cm, str) else "", f"ablation {am}" if isinstance(am, str) else "")))
        for c, cm, am in frame.drop_duplicates("category")[["category", "category_measure", "ablated_measure"]]
        .itertuples(index=False))
    caption = (f"Error categories of {human} on {dataset} (FRANK's ablation, Pagnoni et al. 2021): each metric's "
               f"correlation with {human} (overall), then per category the drop of that correlation when the category "
               f"is ignored (drop) or, without an ablation, the correlation with the category's judgment ({measures})"
               + (f"; system scores: {SYSTEM_INPUTS_TEXT.get(protocols[0], protocols[0])}"
                  if len(protocols) == 1 and "system" in set(frame["level"]) else "")
               + (f"; signature {signature}" if signature else "") + ".")
    settings = list(dict.fromkeys(zip(frame["level"], frame["coefficient"])))
    for i, (level, coefficient) in enumerate(settings):   # a table per level and coefficient: each fits the page
        part = frame[(frame["level"] == level) & (frame["coefficient"] == coefficient)]
        ranking = paper_tables.categories_ranking(part)
        text = caption if len(settings) == 1 else f"{caption[:-1]}; {level} level, {coefficient}."
        click.echo(("\n" if i else "") + (ranking.latex(text, layout) if fmt == "latex" else ranking.markdown(text)),
                   nl=False)


def _draw(obj: Context, frame, human: str, dataset: str, figure: Path, overwrite: bool, err: bool) -> None:
    import matplotlib.pyplot as plt

    from metaeval import files
    from metaeval.present import figures

    level, coefficient = frame["level"].iloc[0], frame["coefficient"].iloc[0]
    fig = figures.category_drops(frame, f"Drop of each metric's {level}-level {coefficient} correlation with "
                                        f"{human} ({dataset}) when an error category is ignored: "
                                        f"r(metric, overall) - r(metric, overall without the category)")
    try:
        with files.atomic_file(figure, warehouse=obj.path, overwrite=overwrite) as tmp:
            fig.savefig(tmp, dpi=150, format=figure.suffix[1:].lower())
    finally:
        plt.close(fig)
    say(f"wrote {figure}", err=err)


COMMANDS = [categories]
