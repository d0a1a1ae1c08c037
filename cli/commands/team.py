"""``metaeval push URL`` and ``metaeval pull URL``: a team warehouse on a PostgreSQL server
(:mod:`metaeval.team`)."""

from __future__ import annotations

import click

import shlex
import sys

from metaeval.cli.app import Context, say
from metaeval.cli.sections import topic

_URL = click.argument("url", metavar="URL")
_DATASETS = click.option("--dataset", "datasets", multiple=True, metavar="NAME",
                         help="A dataset (repeatable). Default: every dataset.")


def _added(rows: dict[str, dict[str, int]]) -> list[str]:
    return [f"  {d}: " + ", ".join(f"{n} {t}" for t, n in tables.items() if n) for d, tables in rows.items()
            if any(tables.values())]


@topic("storage")
@click.command(short_help='Copy datasets and their results to the team warehouse at URL.')
@_URL
@_DATASETS
@click.pass_obj
def push(obj: Context, url, datasets):
    """Copy datasets (entities, texts, scores, judgments, preferences, spans, attributes) and
    their results, runs, fingerprints and conventions to the team warehouse at URL
    (postgresql://USER@HOST[:PORT]/DATABASE; the password from the URL, $PGPASSWORD or
    ~/.pgpass), in one server transaction. Rows the server has are not sent again; a row it
    holds with another value is refused, and nothing is written."""
    from metaeval import team

    with obj.open(read_only=True) as wh:
        report = team.push(wh.con, url, list(datasets), warehouse=str(obj.path))
    if not report.push_id:
        say(f"Nothing to push: {report.url} has {', '.join(report.datasets)} (data and results) as this "
            "warehouse has them")
        return
    if not report.added:
        say(f"Pushed nothing new to {report.url} (push {report.push_id}): it had every row")
        return
    say(f"Pushed to {report.url} (push {report.push_id}):")
    for line in _added(report.rows):
        click.echo(line)


@topic("storage")
@click.command(short_help='Bring datasets and their results from the team warehouse at URL.')
@_URL
@_DATASETS
@click.pass_obj
def pull(obj: Context, url, datasets):
    """Bring datasets (all by default) of the team warehouse at URL, with their results, into
    this warehouse, under the ingest's rules: new rows added, identical rows skipped, a
    conflicting row refused (naming it) and nothing of its dataset written."""
    from metaeval import team_pull, team_server

    # recorded with the ingest: the URL masked (a password is never stored)
    command = shlex.join(["metaeval", *(team_server.mask(a) if a == url else a for a in sys.argv[1:])])
    with obj.open(create=True) as wh:
        wh.command_line = command
        report = team_pull.pull(wh.con, url, list(datasets), command=command)
    if not report.added:
        say(f"Nothing to pull: this warehouse has every row of {', '.join(report.rows) or 'the team'}"
            f" from {report.url}")
        return
    say(f"Pulled from {report.url}:")
    for line in _added(report.rows):
        click.echo(line)


COMMANDS = [push, pull]
