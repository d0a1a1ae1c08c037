"""Ctrl-C and SIGTERM in the CLI: both stop a command as a KeyboardInterrupt (SIGTERM as its
subclass :class:`~warehouse.errors.Terminated`), so that a run is marked interrupted and keeps
the rows it wrote.

A signal that arrives while DuckDB executes a query interrupts the query, and DuckDB raises its
own error instead of the KeyboardInterrupt (a RuntimeError 'Query interrupted', or a
duckdb.Error quoting it; the statement is rolled back). The handlers of :func:`install` record
the signal, so that :func:`interruption` tells such an error for what it is.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

from metaeval.errors import Terminated

_received: list[int] = []   # the signals received since install()


def _handle(signum, frame) -> None:
    _received.append(signum)
    if signum == signal.SIGTERM:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)   # a second SIGTERM kills at once
        raise Terminated()
    raise KeyboardInterrupt


def install() -> Callable[[], None]:
    """Handle SIGINT and SIGTERM as above until the function returned is called, which restores
    the previous handlers. Outside the main thread (where Python cannot set handlers) nothing
    changes."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    _received.clear()
    previous = {s: signal.signal(s, _handle) for s in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for s, handler in previous.items():
            signal.signal(s, handler)
        _received.clear()

    return restore


def interruption(exc: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt ``exc`` stands for: ``exc`` itself if it is one; after a signal
    handled by :func:`install`, a :class:`~warehouse.errors.Terminated` (SIGTERM) or a
    KeyboardInterrupt (Ctrl-C), whatever ``exc`` is (the error of a query the signal cut short);
    otherwise None."""
    if isinstance(exc, KeyboardInterrupt):
        return exc
    if not _received:
        return None
    return Terminated() if signal.SIGTERM in _received else KeyboardInterrupt()
