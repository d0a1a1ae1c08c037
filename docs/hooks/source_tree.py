"""mkdocs hook: let mkdocstrings read ``metaeval`` from this checkout's folders.

The import name ``metaeval`` is assembled from several folders (``package-dir`` in
pyproject.toml: ``warehouse/`` is ``metaeval``, ``runs/`` is ``metaeval.runs``, ...), which a
static reader of the source tree cannot follow. Before mkdocstrings starts, this hook lays out
a temporary ``metaeval/`` package of symbolic links to those folders (read from pyproject.toml)
and gives it to mkdocstrings' Python handler as its search path; the directory is removed when
the build ends.
"""

from __future__ import annotations

import atexit
import logging
import re
import shutil
import tempfile
import tomllib
from pathlib import Path

from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parents[2]


class _NumpySlices(logging.Filter):
    """Drop autorefs' "could not find cross-reference target" for a target that cannot name
    anything (it holds ``:`` or ``,``): numpy indexing in a docstring, ``X[rows][:, cols]``,
    which Markdown reads as a reference link. Every other unresolved reference still fails
    the strict build."""

    def filter(self, record: logging.LogRecord) -> bool:
        match = re.search(r"Could not find cross-reference target '([^']*)'", record.getMessage())
        return not (match and re.search(r"[:,]", match.group(1)))


@event_priority(100)   # before mkdocstrings' own on_config, which creates the handler
def on_config(config):
    for name in ("mkdocs.plugins.mkdocs_autorefs", "mkdocs.plugins.mkdocs_autorefs._internal.plugin"):
        logging.getLogger(name).addFilter(_NumpySlices())
    package_dirs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    tree = Path(tempfile.mkdtemp(prefix="metaeval-api-"))
    atexit.register(shutil.rmtree, tree, True)
    top = tree / "metaeval"
    top.mkdir()
    for entry in (ROOT / package_dirs["metaeval"]).iterdir():
        (top / entry.name).symlink_to(entry)
    for name, folder in package_dirs.items():
        if name != "metaeval":
            link = tree.joinpath(*name.split("."))
            if not link.exists():
                link.symlink_to(ROOT / folder)
    handlers = config.plugins["mkdocstrings"].config["handlers"]
    handlers.setdefault("python", {})["paths"] = [str(tree)]
    return config
