"""``metaeval init``, and looking at what the warehouse holds: ``datasets``, ``measures``,
``matrix``, ``sql``."""

from __future__ import annotations

import click

from metaeval import connection, schema
from metaeval.cli.app import Context, fmt_option, plain, show, say
from metaeval.cli.sections import topic
from metaeval.cli.dataset_option import dataset_argument
from metaeval.errors import WarehouseError


@topic("storage")
@click.command(short_help='Create the warehouse file, or upgrade an older one in place.')
@click.pass_obj
def init(obj: Context):
    """Create the warehouse file (harmless if it exists; upgrades an older schema in place)."""
    before = connection.stored_version(obj.path)
    existed = obj.path.exists()
    obj.open(create=True).close()
    if before is not None and before != str(schema.SCHEMA_VERSION):
        click.echo(f"Upgraded warehouse {obj.path} from schema {before} to {schema.SCHEMA_VERSION}, keeping every "
                   "row; results of earlier metaeval versions are recomputed when their commands run again")
    else:
        say(f"{'Checked' if existed else 'Created'} warehouse {obj.path}")


@topic("storage")
@click.command()
@fmt_option()
@click.option("--from", "url", metavar="URL", default=None,
              help="The datasets of the team warehouse at URL (postgresql://...; see `metaeval push`) instead.")
@click.pass_obj
def datasets(obj, fmt, url):
    """The datasets in the warehouse, with their sizes."""
    if url is not None:
        from metaeval import team_pull

        rows = team_pull.team_datasets(url)
        if not plain(fmt):
            import pandas as pd

            rows = pd.DataFrame(list(rows.data), columns=list(rows.columns))
        show(rows, fmt)
        return
    with obj.open(read_only=True) as wh:
        show(wh.datasets(plain=plain(fmt)), fmt)


@topic("storage")
@click.command(short_help='The measures of DATASET: kind, direction, scale, coverage, duplicates.')
@dataset_argument
@click.option("--kind", type=click.Choice(["automatic", "human"]), default=None)
@fmt_option()
@click.pass_obj
def measures(obj, dataset, kind, fmt):
    """The measures of DATASET: kind, direction, scale, coverage, and duplicate_of.

    A measure with a duplicate_of has the same value as that measure in every cell they share
    (relation identical) or is a positive affine transform of it (affine): every correlation,
    CI and test gives both the same numbers."""
    with obj.open(read_only=True) as wh:
        show(wh.measures(dataset, kind, duplicates=True, plain=plain(fmt)), fmt)


@topic("storage")
@click.command(short_help='Record the scale (range) of MEASURES of DATASET.')
@dataset_argument
@click.argument("measures", nargs=-1, required=True)
@click.option("--range", "range_", metavar="LOW..HIGH", default=None,
              help="The measures' declared range, e.g. 0..1 or 0..100.")
@click.option("--unknown", is_flag=True, help="Forget the recorded scale.")
@click.pass_obj
def scale(obj, dataset, measures, range_, unknown):
    """Record the scale (range) of MEASURES of DATASET: measures.scale, shown by `measures`.

    Refused, changing nothing, if a stored value lies outside the range."""
    if (range_ is None) == (not unknown):
        raise click.UsageError("give --range LOW..HIGH or --unknown")
    bounds = None
    if range_ is not None:
        try:
            low, high = (float(x) for x in range_.split(".."))
        except ValueError:
            raise click.BadParameter(f"{range_!r}: expected LOW..HIGH, e.g. 0..1", param_hint="--range") from None
        bounds = (low, high)
    with obj.open() as wh:
        wh.set_scale(dataset, measures, bounds)
        shown = wh.measures(dataset)
    shown = shown[shown["measure"].isin(measures)]
    say("; ".join(f"{m}: {s if isinstance(s, str) else 'unknown'}" for m, s in zip(shown["measure"], shown["scale"])))


@topic("storage")
@click.command()
@dataset_argument
@click.argument("measure")
@click.option("--format", "fmt", type=click.Choice(["table", "csv"]), default="table",
              help="csv: one row per system (first column the system id), one column per input.")
@click.pass_obj
def matrix(obj, dataset, measure, fmt):
    """The systems x inputs matrix of MEASURE in DATASET."""
    import pandas as pd

    with obj.open(read_only=True) as wh:
        frame = wh.matrix(dataset, measure).frame()
    if fmt == "csv":
        click.echo(frame.to_csv(na_rep=""), nl=False)
    else:
        show(frame, "text")
        say(f"[{frame.shape[0]} systems x {frame.shape[1]} inputs]")


@topic("storage")
@click.command()
@click.argument("query")
@fmt_option()
@click.pass_obj
def sql(obj, query, fmt):
    """Run a read-only SQL QUERY on the warehouse.

    The warehouse is opened read-only and without access to anything outside it: statements
    that write (INSERT, COPY ... TO), read other files (read_csv, ATTACH) or load extensions
    are refused. To save a result, use --format csv and redirect it.
    """
    with obj.open(read_only=True) as wh:
        frame = wh.user_query(query, plain=plain(fmt))
    if frame is None:
        raise WarehouseError(f"no SQL statement given: QUERY {query!r} holds none; give one, e.g. "
                             f"{obj.command('sql', 'SELECT * FROM dataset_summary')}")
    show(frame, fmt)


COMMANDS = [init, datasets, measures, scale, matrix, sql]
