"""``-`` as a table file: the command reads its standard input (``metaeval ingest table - ...``,
``metaeval evaluate - ...``).

Standard input is read once, copied to a temporary file (the table readers read a file twice or
more: DuckDB's reader, then the exact reader when it steps aside), which is removed when the
command ends, whatever the outcome. Its format is the ``--format`` / ``--input-format`` hint, else
sniffed from its first bytes: Parquet by its magic number ``PAR1``, JSONL when the first
non-blank character is ``{``, TSV when the first line holds a tab, CSV otherwise. Errors and the
``ingests`` record name the file ``<stdin>``.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from metaeval.errors import WarehouseError

#: The file argument that stands for standard input.
DASH = "-"
#: Standard input's name in messages and in ``ingests.file``.
NAME = "<stdin>"
#: The formats standard input can hold (the hint's choices), as file suffixes.
FORMATS = ("csv", "tsv", "jsonl", "parquet")
#: How many bytes are looked at to tell the format.
SNIFF = 1 << 16


def sniff(head: bytes) -> str:
    """The format of a table that starts with ``head``: parquet, jsonl, tsv or csv."""
    if head.startswith(b"PAR1"):
        return "parquet"
    text = head.removeprefix(b"\xef\xbb\xbf")
    if text.lstrip()[:1] == b"{":
        return "jsonl"
    first = text.split(b"\n", 1)[0]
    return "tsv" if b"\t" in first else "csv"


@contextmanager
def stdin_table(fmt: str | None = None) -> Iterator[Path]:
    """Standard input copied to a temporary file with the suffix of its format (``fmt``, else
    :func:`sniff` ed); removed when the block ends. An error raised in the block that names the
    temporary file names ``<stdin>`` instead."""
    stream = sys.stdin.buffer
    directory = Path(tempfile.mkdtemp(prefix="metaeval-stdin-"))
    try:
        raw = directory / "stdin"
        with open(raw, "wb") as out:
            shutil.copyfileobj(stream, out, 1 << 20)
        with open(raw, "rb") as f:
            head = f.read(SNIFF)
        if not head:
            raise WarehouseError(f"{NAME}: the file is empty (nothing was piped to -); nothing was written")
        path = raw.rename(directory / f"stdin.{fmt or sniff(head)}")
        try:
            yield path
        except WarehouseError as exc:
            message = str(exc)
            if str(path) not in message:
                raise
            raise WarehouseError(message.replace(str(path), NAME)) from None
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def check_dashes(args, option: str) -> int:
    """How many arguments are ``-`` (standard input, read once: more than one is a usage error)."""
    n = sum(1 for a in args if a == DASH)
    if n > 1:
        raise click.UsageError(f"- (standard input) is given {n} times: it can be read once")
    return n


def format_option(name: str = "--format"):
    """The format hint of ``-``."""
    return click.option(name, "input_format", type=click.Choice(FORMATS), default=None,
                        help="The format of the table read from - (standard input). Default: told from its first "
                             "bytes (Parquet, JSONL, TSV when the first line has a tab, else CSV).")
