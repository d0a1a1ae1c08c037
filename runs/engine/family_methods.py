"""The ``Warehouse`` method of a registered family, generated from its declaration
(:mod:`metaeval.runs.engine.families`): :meth:`~metaeval.runs.engine.families.Family.run` on the warehouse,
with a real :class:`inspect.Signature` (``help(wh.ci)`` lists its keywords and defaults) and a
docstring naming every option, its flag, default and help. :mod:`metaeval.runs.engine.api` installs one
per family on :class:`~metaeval.runs.engine.api.Warehouse`.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from metaeval.runs.engine.families import Family
    from metaeval.runs.engine.options import Option


def signature(family: Family) -> inspect.Signature:
    """The ``inspect.Signature`` of ``family``'s ``Warehouse`` method (``self`` first): the options
    of its ``positional_names()`` by position or keyword, every other option keyword-only, each
    with its default (a repeatable option's ``()``; a required one none), then the options'
    companions (``human_aggregate`` beside ``aggregate``) and the run keywords (``progress``)."""
    P = inspect.Parameter
    by_position = family.positional_names()

    def parameter(option: Option, kind) -> inspect.Parameter:
        default = P.empty if option.required else (tuple(option.default or ()) if option.multiple
                                                   else option.default)
        return P(option.name, kind, default=default)

    out = [P("self", P.POSITIONAL_OR_KEYWORD)]
    out += [parameter(family.option(n), P.POSITIONAL_OR_KEYWORD) for n in by_position]
    out += [parameter(o, P.KEYWORD_ONLY) for o in family.options if o.name not in by_position]
    out += [P(c.name, P.KEYWORD_ONLY, default=None) for o in family.options for c in o.companions]
    out += [P(k, P.KEYWORD_ONLY, default=None) for k in family.run_keywords]
    return inspect.Signature(out)


def method(family: Family):
    """The ``Warehouse`` method of ``family`` (its ``run`` on the warehouse), with its
    :func:`signature` and a docstring naming every option, its default and help."""
    def method(wh, *args, **given):
        return family.run(wh, *args, **given)

    method.__name__ = method.__qualname__ = family.python_name
    method.__module__ = type(family).__module__
    method.__signature__ = signature(family)
    lines = [family.summary, "", f"The ``metaeval {family.name}`` command's run (the same options, defaults and "
             "checks), returning its latest rows (several tables: ``{table: rows}``).", "", "Options:"]
    for o in family.options:
        lines.append(f"    {o.name} ({o.flag}{', required' if o.required else ''}"
                     f"{'' if o.required or o.default in (None, ()) else f', default {o.default!r}'}): "
                     f"{o.help or ''}")
    method.__doc__ = "\n".join(lines)
    return method
