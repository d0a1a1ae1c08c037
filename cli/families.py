"""The command line of the registered analysis families (:mod:`metaeval.runs.engine.families`).

:func:`options_of` turns a family's declared options into click options: the flag, the type
(from the option's kind), the default, the help and the choices are read from the declaration,
never restated here. A command keeps its own options that are not parameters of the analysis
(``--format``, ``--layout``, ``--out``, ...). :func:`command_of` generates the whole command
of a family that has no hand-written one: its options, then ``compute``, then ``present``.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING

import click

from metaeval.cli import messages, options
from metaeval.cli.context import Context
from metaeval.errors import WarehouseError

if TYPE_CHECKING:
    from metaeval.runs.engine.families import Family
    from metaeval.runs.engine.options import Option


def _type(option: Option):
    """The click type of ``option``'s kind (None: click's string)."""
    kind = option.kind
    if kind == "int":
        return click.INT if option.minimum is None and option.maximum is None else \
            click.IntRange(option.minimum, option.maximum)
    if kind == "float":
        return options.FiniteFloatRange(option.minimum, option.maximum,
                                        min_open=option.open and option.minimum is not None,
                                        max_open=option.open and option.maximum is not None)
    if kind == "choice":
        if isinstance(option.choices, str):
            return options.LazyChoice(option.choices)
        return click.Choice(option.choices)
    return {"coefficient": options.CoefficientChoice() if kind == "coefficient" else None,
            "resamples": options.RESAMPLES, "seed": options.SEED, "probability": options.ALPHA}.get(kind)


def _as_python(option: Option, value):
    """``value`` (a command-line string) as the Python value ``option`` checks: an int or float
    for the numeric kinds, None when it is not one (click's own conversion then says why)."""
    if option.kind in ("int", "seed", "resamples"):
        try:
            return int(value)
        except (TypeError, ValueError):
            return None
    if option.kind in ("float", "probability"):
        try:
            return float(value)
        except (TypeError, ValueError):
            return None
    return value


def _declared_checks(option: Option, base):
    """``base`` (a click type) checking first as the Python API does: the value refused by the
    declared choices or ``check`` (:meth:`Option.value`) fails with that very WarehouseError's
    text (:func:`metaeval.cli.messages.error_text`), so that the command line and ``wh.<family>(...)``
    refuse a bad seed, k, alpha or choice in the same words."""
    if option.kind not in ("choice", "seed", "resamples", "probability") or base is None:
        return base
    one = option.but(multiple=False, required=False, check=option.check if not option.multiple else None)

    class Checked(type(base)):
        def convert(self, value, param, ctx):
            python = _as_python(option, value) if isinstance(value, str) else value
            if python is not None:
                try:
                    one.value(python)
                except WarehouseError as exc:
                    self.fail(messages.error_text(exc), param, ctx)
            return super().convert(value, param, ctx)

    checked = copy.copy(base)
    checked.__class__ = Checked
    return checked


def _checked(option: Option):
    """A click callback running ``option.check`` (its error as the option's one line)."""
    def callback(ctx, param, value):
        if value is not None and value != ():
            try:
                option.check(value)
            except WarehouseError as exc:
                raise click.BadParameter(messages.error_text(exc), ctx, param) from None
        return value
    return callback


def click_option(option: Option):
    """One click option from its declaration."""
    decls = [f"{option.flag}/--no-{option.flag[2:]}" if option.kind == "switch" else option.flag, option.name]
    kwargs = {"help": option.help, "required": option.required, "multiple": option.multiple,
              "metavar": option.metavar}
    if option.renamed_from:
        from metaeval.cli.renamed import Renamed

        kwargs.update(cls=Renamed, renamed_from=option.renamed_from)
    if option.kind == "flag":
        kwargs["is_flag"] = True
    else:
        kwargs["type"] = _declared_checks(option, _type(option))
    if option.default is not None and option.default is not False or option.kind == "switch":
        kwargs["default"] = option.default
    show = option.show_default
    if show is None:
        show = option.default not in (None, ()) and option.kind != "flag"
    if show:
        kwargs["show_default"] = True
    if option.kind == "where":
        kwargs["callback"] = options._parse_where
    elif option.check is not None and option.kind in ("str", "int", "float"):
        kwargs["callback"] = _checked(option)
    return click.option(*decls, **{k: v for k, v in kwargs.items() if v is not None and v is not False
                                   or k == "default"})


def options_of(family: Family | str, *names: str, skip: tuple[str, ...] = ()):
    """A decorator adding the click options of ``family``'s declared options (a family or its
    name; only ``names`` if given, in that order; none of ``skip``), in the declared order, as
    each declares itself (:func:`option_decorators`; a companion or a subset condition folded into
    the option it joins: :func:`_folded`), never by its name."""
    if isinstance(family, str):
        from metaeval.runs.engine.families import FAMILIES

        family = FAMILIES[family]
    chosen = [family.option(n) for n in names] if names else [o for o in family.options if o.name not in skip]
    declared = {o.name: o for o in family.options}
    decorators, folds = [], []
    for option in chosen:
        decorators += option_decorators(option)
        folds += [(c, option) for c in option.companions]
        if option.role == "subset" and option.into in declared:      # --system-type joins --where
            folds.append((option, declared[option.into]))

    def decorate(f):
        for joining, target in folds:
            f = _folded(f, joining, () if target.multiple else target.default)
        for decorator in reversed(decorators):
            f = decorator(f)
        return f
    return decorate


def option_decorators(option: Option) -> list:
    """The click options of one declared option: its own (with :attr:`~Option.cli_choices` when
    the command line offers fewer), its companions' (``--human-aggregate`` beside ``--aggregate``),
    then the command-line options that follow it (:attr:`~Option.cli_after`: ``--scheduler``)."""
    import importlib

    out = [click_option(option.but(choices=option.cli_choices) if option.cli_choices else option)]
    out += [click_option(c) for c in option.companions]
    for ref in option.cli_after:
        module, attr = ref.split(":")
        out.append(getattr(importlib.import_module(module), attr))
    return out


def aggregate_options(f):
    """``--aggregate`` (the metric's side) and ``--human-aggregate`` of the one AGGREGATE option,
    folded into ``aggregate`` (a hand-written command's; :func:`options_of` does the same)."""
    from metaeval.runs.engine.options import AGGREGATE

    for companion in AGGREGATE.companions:
        f = _folded(f, companion, AGGREGATE.default)
    for decorator in reversed(option_decorators(AGGREGATE)):
        f = decorator(f)
    return f


def _human_in_aggregate(f):
    """``f`` given ``--human-aggregate`` folded into its ``aggregate`` ("metric/human" when not the
    mean: :func:`metaeval.runs.engine.parameters.aggregate_value`)."""
    from metaeval.runs.engine.options import HUMAN_AGGREGATE

    return _folded(f, HUMAN_AGGREGATE, HUMAN_AGGREGATE.default)


def _folded(f, option: Option, target_default):
    """``f`` given ``option``'s value joined into the value of the option it joins
    (:attr:`Option.into`, by :meth:`Option.joined`): ``--human-aggregate`` into ``aggregate``,
    ``--system-type`` into ``where``; a refusal a usage error."""
    import functools

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        own = kwargs.pop(option.name, option.default if not option.multiple else ())
        target = kwargs.pop(option.into, target_default)
        try:
            kwargs[option.into] = option.joined(target, own)
        except WarehouseError as exc:
            raise click.UsageError(messages.error_text(exc)) from None
        return f(*args, **kwargs)
    return wrapper


def command_of(family: Family, name: str | None = None) -> click.Command:
    """The generated command of ``family``: its declared options and ``--format``; it runs
    :meth:`~metaeval.runs.engine.families.Family.run` on the warehouse and prints
    :meth:`~metaeval.runs.engine.families.Family.present` of what it returned, after its
    :meth:`~metaeval.runs.engine.families.Family.notes` on standard error; the options it
    :attr:`~metaeval.runs.engine.families.Family.presented` go to ``notes`` and ``present``, and to
    the family's ``refusal(warehouse path, params, **presented)`` before the run (its text a usage
    error; categories' ``--out`` with two levels) (a family whose run takes
    ``plain`` returns :class:`~metaeval.rows.Rows` for the formats printed without pandas). A
    ``hinted`` family's ``present`` is given how this command line writes a Hint (with its ``--db``:
    :meth:`~metaeval.cli.context.Context.hint`); the family's ``interrupted`` says what a run stopped
    by Ctrl-C keeps; ``figure_only``: no ``--format``; ``format_help``: its own. ``name``: the command's, when not the family's (a subcommand of a group:
    ``simulate coverage``)."""
    @click.pass_obj
    def run(obj: Context, fmt: str = "text", **params):
        shown = {o.name: params.pop(o.name) for o in family.presented}
        said = family.refusal(obj.path, params, **shown)      # what the command line refuses before it runs
        if said is not None:
            raise click.UsageError(messages.error_text(WarehouseError(said), family.python_name))
        hint = {"hint": obj.hint} if family.hinted else {}
        light = {"plain": True} if "plain" in family.run_keywords and options.plain(fmt) else {}
        if family.shows_progress:
            from metaeval.cli.progress import terminal_progress

            light["progress"] = terminal_progress()
        with obj.open() as wh:
            try:
                outcome = family.run(wh, **params, **light)
            except KeyboardInterrupt as exc:
                raise messages.interrupted(exc, family.interrupted) from None
        notes = family.notes(outcome, fmt, **shown)
        if notes:
            from metaeval.runs.engine.family_present import prose

            click.echo(prose(*notes), nl=False, err=True)
        click.echo(family.present(outcome, fmt, **shown, **hint), nl=False)

    doc = (type(family).__doc__ or "").strip()
    text = doc if doc.startswith(family.summary) else f"{family.summary}\n\n{doc}".strip()
    for option in reversed(family.presented):      # listed after --format
        run = click_option(option)(run)
    if not family.figure_only:                     # a family that draws a figure prints no rows (plot ci)
        run = options.fmt_option(help=family.format_help)(run)   # a family's own words for --format
    run = options_of(family)(run)
    return click.command(name or family.name, help=text, short_help=family.headline or family.summary)(run)


def generated_commands(handwritten: set[str]) -> list[click.Command]:
    """The commands of the registered families whose name is not in ``handwritten`` (a nested
    command's path joined by ``-``: ``simulate-coverage``)."""
    from metaeval.runs.engine.families import FAMILIES

    return [command_of(f) for name, f in FAMILIES.items() if name not in handwritten]
