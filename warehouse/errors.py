"""Errors a user can act on. The CLI prints their message and exits non-zero."""

from __future__ import annotations


class WarehouseError(Exception):
    """Something about the warehouse or a request to it is wrong; the message says what."""


class InputError(WarehouseError):
    """Bad content in an input file, located by file, line and field."""

    def __init__(self, file: str, line: int | None, field: str | None, message: str):
        self.file, self.line, self.field = file, line, field
        where = str(file) + (f":{line}" if line is not None else "")
        what = f" field {field!r}:" if field else ""
        super().__init__(f"{where}:{what} {message}")


class ConflictError(WarehouseError):
    """An ingest gives a different value for something the warehouse already holds (or two
    files of one ingest disagree). ``headline`` says what to do; the default suggests
    ``--replace``, so conflicts that replacing does not resolve, or where it is not offered,
    give their own."""

    def __init__(self, conflicts: list[str], total: int, headline: str | None = None):
        self.conflicts, self.total = conflicts, total
        headline = headline or (f"{total} value(s) conflict with the warehouse; nothing was written "
                                "(use --replace to overwrite them)")
        more = f"\n  ... and {total - len(conflicts)} more" if total > len(conflicts) else ""
        super().__init__(f"{headline}:\n  " + "\n  ".join(conflicts) + more)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised by the CLI's handler: a KeyboardInterrupt, so that it stops a command as
    Ctrl-C does (the run is marked interrupted and keeps the rows written so far)."""
