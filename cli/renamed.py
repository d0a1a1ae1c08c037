"""Old spellings of renamed options (issue 44 item 6: one meaning per option name), accepted for
this release with a one-line note on standard error naming the new one.

An option declares the flags it was once spelled with (:class:`Renamed`'s ``renamed_from``; a
family's :class:`~metaeval.runs.engine.options.Option` says ``renamed_from`` too, and
:func:`metaeval.cli.families.click_option` passes it on). Before click reads a command line,
:func:`respell` (called by every command's parsing: :class:`metaeval.cli.app.OnceOnly`)
replaces each old flag by its new one and says so. Only the spelling changes: the parameter's
name, and so what a run stores and its fingerprint, stay as they were.
"""

from __future__ import annotations

import click


class Renamed(click.Option):
    """A click option that was once spelled ``renamed_from`` (old flags, still accepted)."""

    def __init__(self, *args, renamed_from: tuple[str, ...] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.renamed_from = tuple(renamed_from)


def spellings(command: click.Command) -> dict[str, str]:
    """Old flag -> its new one, for the options of ``command``."""
    found = {}
    for param in command.params:
        new = max((o for o in param.opts if o.startswith("--")), key=len, default=None)
        for old in getattr(param, "renamed_from", ()):
            found[old] = new
    return found


def note(command_path: str, old: str, new: str) -> str:
    """The one line said when ``old`` is given (``command_path`` as click has it: its first word,
    the program's name, said ``metaeval``)."""
    words = ["metaeval", *command_path.split()[1:]]
    return f"note: {old} of `{' '.join(words)}` is now spelled {new}; {old} is accepted in this release only"


def respell(command: click.Command, ctx: click.Context, args: list[str]) -> list[str]:
    """``args`` with every old flag of ``command`` (before a ``--``) in its new spelling, each
    said once on standard error."""
    renamed = spellings(command)
    if not renamed:
        return args
    valued = {o for p in command.params if isinstance(p, click.Option) and not p.is_flag and not p.count
              for o in p.opts}
    out, said, skip = [], set(), False
    for i, arg in enumerate(args):
        if not isinstance(arg, str):     # a value given from Python (click.testing: a Path)
            out.append(arg)
            skip = False
            continue
        if arg == "--" or (isinstance(command, click.Group) and not skip and not arg.startswith("-")):
            out += args[i:]              # a group's own options end at its command's name
            break
        skip = arg in valued             # the next word is this option's value
        flag, eq, value = arg.partition("=")
        if flag in renamed:
            if flag not in said and not ctx.resilient_parsing:
                click.echo(note(ctx.command_path, flag, renamed[flag]), err=True)
                said.add(flag)
            arg = renamed[flag] + eq + value
        out.append(arg)
    return out
