"""``metaeval derive``: a new human measure from stored ones, by a recorded formula."""

from __future__ import annotations

import click

from metaeval.cli.app import Context, _command_line, echo_reports, say
from metaeval.cli.sections import topic


@topic("ingest")
@click.command()
@click.argument("new")
@click.option("--dataset", required=True, help="Dataset holding the source measures.")
@click.option("--from", "sources", required=True, multiple=True, metavar="MEASURE",
              help="A human measure to derive from. Repeatable, in the formula's order (coverage: matching PUs, "
                   "E, MUs).")
@click.option("--as", "formula", required=True,
              type=click.Choice(["grade", "mean", "geometric", "harmonic", "coverage"]),
              help="grade: A..E stored as 5..1 -> 100/75/50/25/0; mean: arithmetic mean (MLQ over criteria; "
                   "(CS+MLQ)/2); geometric, harmonic: means of values >= 0; coverage: PUs * E / MUs (Graham 2015).")
@click.option("--per", type=click.Choice(["annotator", "cell"]), default="annotator", show_default=True,
              help="annotator: the formula per annotator judging every source (keeps the annotators); cell: each "
                   "source averaged over its annotators first (sources judged by different people).")
@click.pass_obj
def derive(obj: Context, new, dataset, sources, formula, per):
    """Store NEW, a human measure of DATASET computed from stored human measures.

    The formula, its expression, the sources and --per are recorded with the ingest
    (`metaeval sql "SELECT options FROM ingests WHERE format = 'derive'"`); a cell gets a value
    only where every source has one. One transaction: a refusal stores nothing.
    """
    from metaeval.ingest import derive as derived

    with obj.open() as wh:
        report, n = derived.derive(wh, dataset, new, list(sources), formula, per=per, command=_command_line())
    echo_reports([report])
    say(f"{new} = {formula}({', '.join(sources)}) per {per}: {n} values")


COMMANDS = [derive]
