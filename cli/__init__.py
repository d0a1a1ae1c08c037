"""The ``metaeval`` command line: the roof of the house.

:mod:`metaeval.cli.app` holds the click group and the helpers every command uses (options,
``Context``, output); each module of :mod:`metaeval.cli.commands` defines the commands of one
area and lists them in ``COMMANDS``. A command parses its options, calls the Python API of the
floors below (:mod:`metaeval`, :mod:`metaeval.ingest`, :mod:`metaeval.runs`) and prints.
"""

from metaeval.cli.app import main

__all__ = ["main"]
