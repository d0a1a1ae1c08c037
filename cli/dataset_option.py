"""``--dataset`` beside a positional DATASET (issue 44 item 6): ``metaeval matrix --dataset X
MEASURE`` is ``metaeval matrix X MEASURE``, as 45 other commands take ``--dataset``.

:func:`dataset_argument` declares the positional DATASET and a ``--dataset`` option that is only
its other spelling (shown in ``--help``); :func:`as_positional`, called by every command's
parsing (:class:`metaeval.cli.app.OnceOnly`) before click reads the line, moves the option's
value to the front of the positional arguments. Both given is a usage error of one line.
"""

from __future__ import annotations

import click

HELP = "DATASET as an option: `--dataset X` is the same as giving X as the first argument."


class DatasetOption(click.Option):
    """The ``--dataset`` spelling of a positional DATASET (never given a value by click itself:
    :func:`as_positional` has moved it first)."""


def dataset_argument(f):
    """The positional ``DATASET`` of a command, which ``--dataset DATASET`` gives too."""
    f = click.argument("dataset")(f)
    return click.option("--dataset", "dataset_option", cls=DatasetOption, metavar="DATASET", default=None,
                        expose_value=False, help=HELP)(f)


def _split(args: list[str]) -> tuple[str | None, list[str]]:
    """The value of ``--dataset`` in ``args`` (before a ``--``) and the others; None: not given."""
    value, rest, i = None, [], 0
    while i < len(args):
        arg = args[i]
        if not isinstance(arg, str):     # a value given from Python (click.testing: a Path)
            rest.append(arg)
            i += 1
            continue
        if arg == "--":
            rest += args[i:]
            break
        if arg == "--dataset" and i + 1 < len(args):
            value, i = args[i + 1], i + 2
            continue
        if arg.startswith("--dataset="):
            value, i = arg.split("=", 1)[1], i + 1
            continue
        rest.append(arg)
        i += 1
    return value, rest


def as_positional(command: click.Command, ctx: click.Context, args: list[str]) -> list[str]:
    """``args`` with ``--dataset X`` moved to the front as the positional DATASET (a command
    with a :func:`dataset_argument`); other commands' arguments unchanged."""
    if ctx.resilient_parsing or not any(isinstance(p, DatasetOption) for p in command.params):
        return args
    value, rest = _split(list(args))
    if value is None:
        return list(args)
    ctx.meta["dataset_option"] = value
    return [value, *rest]


def given_twice(ctx: click.Context, error: click.UsageError) -> click.UsageError | None:
    """The one-line error of a DATASET given both as an argument and as ``--dataset`` (click's
    "unexpected extra argument" after :func:`as_positional`), else None."""
    value = ctx.meta.get("dataset_option")
    if value is None or "unexpected extra argument" not in str(error.message):
        return None
    return click.UsageError(f"the dataset is given twice, as --dataset {value!r} and as the first argument: "
                            "give it once", ctx)
