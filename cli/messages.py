"""What the command line says of an error: a parameter as its flag, a hint as a command line, an
interrupted command as one line with the shell's exit status. Imports nothing of the command line."""

from __future__ import annotations

import shlex
import signal

import click

from metaeval.errors import NO_VALUE, Argument, Hint, Terminated, WarehouseError


#: The flag of a parameter whose name is not its flag's (a list parameter: its repeated flag).
#: Every other parameter ``name`` is the flag ``--name`` with ``_`` as ``-`` (:func:`flag`).
FLAGS = {"metrics": "--metric", "levels": "--level", "coefficients": "--coefficient", "humans": "--human",
         "datasets": "--dataset", "methods": "--method", "tasks": "--task", "measures": "--measure",
         "directory": "--dir", "calibrate": "--tie-calibration", "n_systems": "--systems", "n_inputs": "--inputs",
         "sera": "--index", "judges": "--judge", "categories": "--category", "ablations": "--ablation",
         "system_types": "--system-type", "formula": "--as", "sources": "--from", "fmt": "--format",
         "predictors": "--predictor", "correlation_level": "--level"}


#: The command of a ``Warehouse`` method (a :class:`~metaeval.errors.Hint`'s ``command``) whose
#: name is not the command's; every other method is the command of its name.
COMMANDS = {"simulate_coverage": "simulate coverage", "simulate_power": "simulate power",
            "rank_tasks": "rank-tasks", "load_summaries": "ingest summaries", "build_index": "index build",
            "create": "init", "heatmap": "plot heatmap", "drop_measure": "drop measure",
            "load_table": "ingest table", "load_mqm": "ingest mqm", "load_preferences": "ingest preferences",
            "measure_correlation": "measure-correlation"}


def flag(name: str, command: str | None = None) -> str:
    """The command-line flag of the Python parameter ``name`` (``k`` -> ``--k``,
    ``system_inputs`` -> ``--system-inputs``, ``metrics`` -> ``--metric``); of ``command`` (a
    ``Warehouse`` method) as its family declares it where it spells it its own way (``ci``'s
    ``method`` is ``--ci-method``: :attr:`metaeval.runs.engine.options.Option.flag`)."""
    return _declared_flag(name, command) or FLAGS.get(name, "--" + name.replace("_", "-"))


def _declared_flag(name: str, command: str | None) -> str | None:
    """The flag the family of the ``Warehouse`` method ``command`` declares for ``name``, None
    where ``command`` is not a family's or the family has no such option."""
    if not command:
        return None
    from metaeval.runs.engine.families import FAMILIES

    family = next((f for f in FAMILIES.values() if f.python_name == command), None)
    option = None if family is None else next((o for o in (*family.options, *family.presented) if o.name == name), None)
    return None if option is None else option.flag


def command_of(path: str) -> str:
    """The ``Warehouse`` method of the command line words ``path`` (``simulate coverage`` ->
    ``simulate_coverage``; the inverse of :data:`COMMANDS`)."""
    return next((method for method, words in COMMANDS.items() if words == path), path.replace("-", "_"))


def argument_text(argument: Argument, command: str | None = None) -> str:
    """A parameter named in an error (:class:`metaeval.errors.Argument`) as its flag: ``--k 5``,
    ``--metric 'rouge-*'``, ``--system-inputs``, ``--overwrite`` (True: a switch); of ``command``
    (a ``Warehouse`` method) as :func:`flag` gives it."""
    name = flag(argument.name, command)
    if argument.placeholder is not None:
        return f"{name} {argument.placeholder}"
    if argument.value is NO_VALUE or argument.value is True:
        return name
    values = argument.value if isinstance(argument.value, (list, tuple)) else [argument.value]
    return " ".join(f"{name} {v!r}" for v in values)


def command_line(hint: Hint) -> str:
    """A :class:`metaeval.errors.Hint` as a ``metaeval`` command line, quoted for a POSIX shell:
    the command of its method (:data:`COMMANDS`), each parameter its flag (:func:`flag`), a
    list's values each after the flag, a True flag alone (``--overwrite``)."""
    args = ["metaeval", *(["--db", hint.db] if hint.db else []), *COMMANDS.get(hint.command, hint.command).split(),
            *map(str, hint.positional)]
    for name, value in hint.arguments:
        if value is True:
            args.append(flag(name, hint.command))
            continue
        for v in (value if isinstance(value, (list, tuple)) else [value]):
            args += [flag(name, hint.command), str(v)]
    return shlex.join(args)


def error_text(exc: WarehouseError, command: str | None = None) -> str:
    """The message the command line prints for ``exc``: its parameters as flags (of ``command``,
    the ``Warehouse`` method of the command that refused, when known), its hint as a command line."""
    message = exc.render(lambda argument: argument_text(argument, command), command_line)
    return message if exc.hint is None else f"{message}\n  {command_line(exc.hint)}"


def interrupted(exc: KeyboardInterrupt, saved: str | None = None) -> click.ClickException:
    """The one-line error of a command stopped by Ctrl-C or SIGTERM (``saved``: what is kept).
    It exits as a shell reports a process killed by that signal: 128 + 2 = 130 for Ctrl-C
    (SIGINT), 128 + 15 = 143 for SIGTERM."""
    term = isinstance(exc, Terminated)
    what = "terminated (SIGTERM)" if term else "interrupted"
    error = click.ClickException(f"{what}: {saved}" if saved else what)
    error.exit_code = 128 + (signal.SIGTERM if term else signal.SIGINT)
    return error
