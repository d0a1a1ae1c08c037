"""Writing output files without losing data.

Every file or directory a command writes (``export --out``, ``plot --out``, ``report --out``)
goes through here, so the rules hold everywhere:

- never onto the open warehouse (or its ``.wal``), compared after resolving symlinks, and never
  a directory that holds it;
- an existing file is replaced only when the caller was asked to (``overwrite=True``); an
  existing report directory likewise, and a non-empty directory that is not a report never;
- the output is written beside its destination and moved into place only when complete, so a
  command that fails leaves the file system as it found it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from metaeval.errors import Argument, Message, WarehouseError

#: The parameter naming the output (``out``: ``--out`` on the command line) and the switch that
#: replaces it.
OUT = Argument("out")
OVERWRITE = Argument("overwrite", True)

#: The file that marks a directory as a metaeval report (replaced only with overwrite).
REPORT_MARKER = "index.html"


def _warehouse_files(warehouse: Path | None) -> set[Path]:
    if warehouse is None:
        return set()
    db = Path(warehouse).resolve()
    return {db, db.with_name(db.name + ".wal")}


def check_output_file(path: Path, *, warehouse: Path | None, overwrite: bool, option: str | Argument = OUT) -> None:
    """Refuse ``path`` when it is the warehouse (after following symlinks), a directory, or an
    existing file without ``overwrite``; a WarehouseError says which and what to do."""
    path = Path(path)
    if path.resolve() in _warehouse_files(warehouse):
        raise WarehouseError(Message(option, f" {path} is the warehouse itself ({Path(warehouse).resolve()}); "
                                     "refusing to write onto it: choose another file"))
    if path.is_dir():
        raise WarehouseError(Message(option, f" {path} is a directory; give a file name"))
    if (path.exists() or path.is_symlink()) and not overwrite:
        raise WarehouseError(Message(option, f" {path} already exists; pass ", OVERWRITE, " to replace it"))


@contextmanager
def atomic_file(path: Path, *, warehouse: Path | None, overwrite: bool, option: str | Argument = OUT) -> Iterator[Path]:
    """A temporary path in ``path``'s directory to write to (with ``path``'s suffix, and the
    permissions a new file gets under the umask); moved onto ``path`` when the block ends without
    error, removed otherwise. Checks
    :func:`check_output_file` first, and once more just before the move."""
    path = Path(path)
    check_output_file(path, warehouse=warehouse, overwrite=overwrite, option=option)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".tmp{path.suffix}", dir=path.parent)
    except OSError as exc:
        raise WarehouseError(f"cannot write {path}: {exc.strerror or exc}") from None
    os.close(fd)
    tmp = Path(name)
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(tmp, 0o666 & ~mask)   # the permissions of a new file (umask), not mkstemp's private 0600
    try:
        yield tmp
        check_output_file(path, warehouse=warehouse, overwrite=overwrite, option=option)  # appeared meanwhile?
        os.replace(tmp, path)
    except OSError as exc:
        raise WarehouseError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)


def check_output_directory(path: Path, *, warehouse: Path | None, overwrite: bool, option: str | Argument = OUT,
                           marker: str = REPORT_MARKER, what: str = "report") -> None:
    """Refuse a directory ``path`` that holds the warehouse, is a file, is a report without
    ``overwrite``, or is non-empty without being a report (never replaced: it is someone's).
    Another kind of directory (``what``, e.g. a search index) is recognised by its ``marker`` file."""
    path = Path(path)
    resolved = path.resolve()
    for f in _warehouse_files(warehouse):
        if f == resolved or resolved in f.parents:
            raise WarehouseError(Message(option, f" {path} holds the warehouse {f}; choose another directory"))
    if path.exists() and not path.is_dir():
        raise WarehouseError(Message(option, f" {path} exists and is not a directory"))
    if path.is_dir() and any(path.iterdir()):
        if not (path / marker).is_file():
            raise WarehouseError(Message(option, f" {path} is a non-empty directory that holds no {what}; "
                                         "choose a new or empty directory"))
        if not overwrite:
            raise WarehouseError(Message(option, f" {path} already holds a {what}; pass ", OVERWRITE, " to replace it"))


@contextmanager
def atomic_directory(path: Path, *, warehouse: Path | None, overwrite: bool,
                     option: str | Argument = OUT, marker: str = REPORT_MARKER, what: str = "report") -> Iterator[Path]:
    """A temporary directory beside ``path`` to write into; it replaces ``path`` (a report, with
    ``overwrite``; a ``what`` marked by ``marker``) when the block ends without error and is
    removed otherwise."""
    path = Path(path)
    check = dict(warehouse=warehouse, overwrite=overwrite, option=option, marker=marker, what=what)
    check_output_directory(path, **check)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    except OSError as exc:
        raise WarehouseError(f"cannot create the directory {path}: {exc.strerror or exc}") from None
    old = None
    try:
        yield tmp
        check_output_directory(path, **check)
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".old", dir=path.parent))
            os.replace(path, old / "report")
        os.replace(tmp, path)
    except OSError as exc:
        if old is not None and not path.exists():        # put the previous report back
            os.replace(old / "report", path)
        raise WarehouseError(f"cannot write the directory {path}: {exc.strerror or exc}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
