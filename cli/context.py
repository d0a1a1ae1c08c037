"""The state of one ``metaeval`` command: which warehouse (``--db``), what computes its tasks
(``--scheduler``), whether text is printed at full width; and how a command opens its warehouse.

Below every other module of :mod:`metaeval.cli` but :mod:`metaeval.cli.messages`: the options
of ``--db`` and ``--full-width`` (:mod:`metaeval.cli.db_option`) and of ``--scheduler``
(:mod:`metaeval.cli.options`) set it, so that none of them imports the command group.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
from typing import TYPE_CHECKING

from metaeval import connection
from metaeval.cli.messages import command_line

if TYPE_CHECKING:  # annotations only
    from metaeval.core import Store
    from metaeval.errors import Hint


class Context:
    def __init__(self, db: str | None):
        self.db = db                                  # --db as given (None: $METAEVAL_DB or the default)
        self.path = connection.resolve_path(db)
        #: what computes the tasks (a metaeval.runs.engine.executors.Executor), from --scheduler or
        #: $METAEVAL_SCHEDULER (:data:`scheduler_option`); None: $METAEVAL_SCHEDULER, else local
        self.executor = None
        #: --full-width: text output as wide as it is (:func:`width`)
        self.wide = False

    def command(self, *args) -> str:
        """A ``metaeval`` command line for a hint: with this --db when one was given, quoted for
        a POSIX shell, so that it works when copy-pasted."""
        return shlex.join(["metaeval", *(["--db", str(self.db)] if self.db else []), *map(str, args)])

    def hint(self, hint: Hint) -> str:
        """What to run (a :class:`~metaeval.errors.Hint` of ``runs/``) as a command line on this
        warehouse: with this --db when one was given and the hint names none."""
        return command_line(dataclasses.replace(hint, db=str(self.db)) if self.db and hint.db is None else hint)

    def heatmap_command(self, dataset: str, human: str, level: str, coefficient: str, method: str,
                        alternative: str, correction: str, correction_group: str, alpha: float,
                        out: str = "tests.png") -> str:
        """The ``plot heatmap`` command drawing the tests of one ``compare`` setting."""
        return self.command("plot", "heatmap", "--dataset", dataset, "--human", human, "--level", level,
                            "--coefficient", coefficient, "--method", method, "--alternative", alternative,
                            "--correction", correction, "--correction-group", correction_group,
                            "--alpha", alpha, "--out", out)

    def open(self, *, read_only: bool = False, create: bool = False) -> Store:
        from metaeval.core import Store

        wh = Store.create(self.path) if create else Store(self.path, read_only=read_only)
        wh.command_line = _command_line()  # recorded with the runs it starts: runs/ never reads sys.argv
        wh.executor = self.executor if self.executor is not None else _environment_executor()
        return wh


def _command_line() -> str:
    return shlex.join(["metaeval", *sys.argv[1:]])


def _environment_executor():
    """The executor of ``$METAEVAL_SCHEDULER``: what a command without ``--scheduler`` gives the
    runs it starts; None (local, as a Store's default) when it is not set, so that a light
    command does not import the executors (and multiprocessing)."""
    if not os.environ.get("METAEVAL_SCHEDULER"):    # executors.ENV_VAR; unset: local (the Store's None)
        return None
    from metaeval.runs.engine import executors

    return executors.Executor.from_environment()
