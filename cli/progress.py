"""The progress bar the command line gives the runs (``progress=terminal_progress()``).

The runs report progress to a factory ``progress(total, label)`` returning an object with
``advance(n)`` and ``close()`` (:class:`metaeval.runs.engine.runner.Progress`); they import no display
library. Here that factory draws a transient rich bar on standard error, when it is a terminal.
"""

from __future__ import annotations

import sys


class RichBar:
    """A transient rich progress bar of ``total`` steps labelled ``label``."""

    def __init__(self, total: int, label: str):
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.p = Progress(TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(),
                          TimeRemainingColumn(), transient=True)
        self.p.start()
        self.task = self.p.add_task(label, total=total)

    def advance(self, n: int) -> None:
        self.p.advance(self.task, n)

    def close(self) -> None:
        self.p.stop()


def terminal_progress():
    """:class:`RichBar` when standard error is a terminal, else None (nothing drawn)."""
    return RichBar if sys.stderr.isatty() else None
