"""``metaeval ingest units``: content-unit judgments into pyramid scores (added to the ingest group)."""

from __future__ import annotations

from pathlib import Path

import click

from metaeval.cli.app import Context, _command_line, echo_reports
from metaeval.cli.commands.ingest import ingest


@ingest.command("units", short_help='Content-unit judgments, stored as lite and pyramid human measures.')
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dataset", required=True, help="Dataset to add to (created if new).")
@click.option("--prefix", default="units", show_default=True,
              help="The measures' names: PREFIX.lite (lite recall), PREFIX.pyramid, PREFIX.pyramid-tiered.")
@click.option("--combine", type=click.Choice(["majority", "mean"]), default="majority", show_default=True,
              help="Annotators: a unit is present when more than half mark it (a tie is absent), or each "
                   "annotator's scores stored as theirs (a summary's value is their mean).")
@click.option("--replace", is_flag=True, help="Overwrite stored values that differ, instead of failing.")
@click.option("--allow-new", is_flag=True, help="Let the file add systems or inputs to a dataset that has some.")
@click.pass_obj
def ingest_units(obj: Context, file, dataset, prefix, combine, replace, allow_new):
    """Content-unit judgments (long table: input, system, unit, present[, annotator][, weight]) stored
    as the human measures PREFIX.lite and, with weights, PREFIX.pyramid (Louis & Nenkova Eq. 1) and
    PREFIX.pyramid-tiered (tiers with P_max)."""
    from metaeval.ingest import units_store as units

    with obj.open(create=not obj.path.exists()) as wh:
        report = units.ingest(wh, dataset, file, prefix=prefix, combine=combine, replace=replace,
                              allow_new=allow_new, command=_command_line())
    echo_reports([report])


COMMANDS: list = []   # a subcommand of ``ingest``, added to that group above
