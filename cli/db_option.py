"""``--db`` (and ``--full-width``) at any position: ``metaeval datasets --db w.duckdb`` means ``metaeval --db w.duckdb
datasets``.

Every command and group below ``metaeval`` gets its own ``--db`` (:func:`attach`), eager so that
it is read before the command's other options, which sets the :class:`~metaeval.cli.context.Context`
as the top-level ``--db`` does: it wins over ``$METAEVAL_DB``, and hints (``Context.command``)
repeat it. Given at two positions, it must name the same file (compared after resolving
symlinks and relative paths); two different files are a usage error naming both.
"""

from __future__ import annotations

from pathlib import Path

import click

from metaeval import connection
from metaeval.cli.context import Context

HELP = (f"Warehouse file, as `metaeval --db PATH` (before or after the command). "
        f"Default: ${connection.ENV_VAR}, else ./{connection.DEFAULT_PATH}.")


class DbOption(click.Option):
    """The ``--db`` of a subcommand (a class of its own, so that :func:`attach` adds it once)."""


def _same(a: str, b: str) -> bool:
    return a == b or Path(a).resolve() == Path(b).resolve()


def _set_db(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    if value is None:
        return
    obj = ctx.find_object(Context)
    if obj is None:                      # the command run on its own (no `metaeval` group above it)
        ctx.obj = Context(value)
        return
    if obj.db is not None and not _same(str(obj.db), value):
        raise click.UsageError(f"--db is given twice with different warehouses, {str(obj.db)!r} and {value!r}: "
                               "give it once, before or after the command", ctx)
    if obj.db is None:
        obj.db = value
        obj.path = connection.resolve_path(value)


class WideOption(click.Option):
    """``--full-width`` (before or after the command): text output as wide as it is, not fitted to
    :data:`metaeval.present.plain.WIDTH` columns. It was ``--wide``, still accepted in this
    release (:mod:`metaeval.cli.renamed`): "wide" is the shape of a table (one column per measure,
    as ``ingest table`` reads one, or per setting, as ``--layout wide`` prints one)."""

    renamed_from = ("--wide",)


WIDE_HELP = "Print text as wide as it is (tables, captions, notes): by default a line has at most 100 characters."


def _set_wide(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if not value:
        return
    from metaeval.present.plain import display_width

    obj = ctx.find_object(Context)
    if obj is None:                      # the command run on its own (no `metaeval` group above it)
        obj = ctx.obj = Context(None)
    obj.wide = True
    ctx.with_resource(display_width(None))   # until the command (or the group) ends


def wide_option(f):
    """``--full-width`` of the ``metaeval`` group (:func:`attach` gives every command its own)."""
    return click.option("--full-width", "wide", cls=WideOption, is_flag=True, default=False, is_eager=True,
                        expose_value=False, callback=_set_wide, help=WIDE_HELP)(f)


def attach(command: click.Command) -> click.Command:
    """Give ``command`` (and, for a group, every command below it) a ``--db`` and a ``--full-width`` of
    its own; idempotent."""
    if not any(isinstance(p, DbOption) or p.name == "db" for p in command.params):
        command.params.append(DbOption(["--db"], type=click.Path(dir_okay=False), default=None, is_eager=True,
                                       expose_value=False, callback=_set_db, help=HELP))
    if not any(isinstance(p, WideOption) or p.name == "wide" for p in command.params):
        command.params.append(WideOption(["--full-width", "wide"], is_flag=True, default=False, is_eager=True,
                                         expose_value=False, callback=_set_wide, help=WIDE_HELP))
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            attach(sub)
    return command
