"""How the ``metaeval`` process ends after a light command (issue 47 item 5).

A process that has only read ends with :func:`os._exit` once its output is flushed, instead of
Python's shutdown: that shutdown (destroying every module and object, DuckDB's own exit handlers)
costs about 0.04 s of CPU with DuckDB imported, a fifth of ``python -c 'import duckdb'`` and as
much as the rest of ``metaeval datasets`` beyond opening the warehouse. It is done only

- when ``metaeval`` runs as the process's entry point (the console script calls ``main()`` with no
  arguments; ``main([...])`` from Python, as the tests call it, returns or raises as before),
- after a command of :data:`LIGHT` (read-only: its warehouse, opened read-only, is closed at the
  end of its ``with`` block before this point) or when no command ran (``--help``, ``--version``, a
  usage error of the group itself),
- and when flushing standard output and error succeeds and the exit code is an integer (or
  None): otherwise the exit is Python's, which reports a broken pipe as it always did.

The exit status and every byte printed are the same as with Python's shutdown
(tests/test_cli_imports.py).
"""

from __future__ import annotations

import os
import sys

#: The commands after which the process ends without Python's shutdown: they only read.
LIGHT = frozenset({"datasets", "measures"})


def end_now(code: object) -> None:
    """End the process with ``code`` (a :class:`SystemExit`'s) without Python's shutdown, once
    stdout and stderr are flushed; return (doing nothing) when they cannot be flushed or ``code``
    is not an exit status, so that the caller re-raises and Python ends the process as usual."""
    if code is None:
        code = 0
    if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= 255:
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except BaseException:       # a closed pipe, say: Python's shutdown reports it as before
        return
    os._exit(code)
