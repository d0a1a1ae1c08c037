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
#: The flag of a parameter in one command's hints only (the method's name, then the parameter's):
#: a CI method is ``--ci-method`` wherever the same name means a test elsewhere.
COMMAND_FLAGS = {"ci": {"method": "--ci-method"}, "simulate_coverage": {"methods": "--ci-method"}}


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
    ``Warehouse`` method) when it spells it its own way (:data:`COMMAND_FLAGS`)."""
    own = COMMAND_FLAGS.get(command or "", {}).get(name)
    return own or FLAGS.get(name, "--" + name.replace("_", "-"))


def argument_text(argument: Argument) -> str:
    """A parameter named in an error (:class:`metaeval.errors.Argument`) as its flag: ``--k 5``,
    ``--metric 'rouge-*'``, ``--system-inputs``, ``--overwrite`` (True: a switch)."""
    name = flag(argument.name)
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


def error_text(exc: WarehouseError) -> str:
    """The message the command line prints for ``exc``: its parameters as flags, its hint as a
    command line."""
    message = exc.render(argument_text, command_line)
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
