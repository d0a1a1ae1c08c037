"""``metaeval drop measure|dataset`` and ``metaeval rename measure``: removing or renaming what
was stored by mistake, atomically (see :mod:`warehouse.housekeeping`)."""

from __future__ import annotations

import click

from metaeval.cli.app import Context, Group, say
from metaeval.cli.sections import topic
from metaeval.cli.dataset_option import dataset_argument

_CASCADE = click.option(
    "--cascade", is_flag=True,
    help="Also remove the results (correlations, intervals, tests, rankings, ...) that depend on it; "
         "without it, the command refuses while any do and says which.")


@topic("storage")
@click.group(cls=Group, short_help='Remove a measure or a dataset (refused while results depend on it).')
def drop():
    """Remove a measure or a dataset (atomic; refused while results depend on it, unless --cascade)."""


@drop.command("measure", short_help='Remove measure NAME of DATASET: its values and the measure.')
@dataset_argument
@click.argument("name")
@_CASCADE
@click.pass_obj
def drop_measure(obj: Context, dataset, name, cascade):
    """Remove measure NAME of DATASET: its scores or judgments and the measure itself.

    Refused, changing nothing, while results depend on it (rows of any result table naming it as
    metric, human or measure on DATASET), unless --cascade, which removes those rows too and
    says how many per table."""
    with obj.open() as wh:
        say(str(wh.drop_measure(dataset, name, cascade=cascade)))


@drop.command("dataset", short_help='Remove DATASET and everything it holds.')
@dataset_argument
@_CASCADE
@click.pass_obj
def drop_dataset(obj: Context, dataset, cascade):
    """Remove DATASET: its systems, inputs, texts, measures, values and ingest history.

    Refused, changing nothing, while results are on it, unless --cascade, which removes them
    too and says how many per table."""
    with obj.open() as wh:
        say(str(wh.drop_dataset(dataset, cascade=cascade)))


@topic("storage")
@click.group(cls=Group)
def rename():
    """Rename a measure (atomic)."""


@rename.command("measure", short_help='Rename measure OLD of DATASET to NEW.')
@dataset_argument
@click.argument("old")
@click.argument("new")
@_CASCADE
@click.pass_obj
def rename_measure(obj: Context, dataset, old, new, cascade):
    """Rename measure OLD of DATASET to NEW (its values, kind, direction and scale stay).

    Refused if DATASET has a measure NEW. Results keep the name they were computed under (their
    fingerprints and conventions describe those cells), so while results depend on OLD the
    rename is refused, unless --cascade, which removes them (the next analysis recomputes them
    under NEW)."""
    with obj.open() as wh:
        say(str(wh.rename_measure(dataset, old, new, cascade=cascade)))


COMMANDS = [drop, rename]
