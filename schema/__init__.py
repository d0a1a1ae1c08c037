"""The warehouse's SQL: table definitions and views, applied in file-name order.

Files named ``NN_*.sql`` define the schema (idempotent: ``CREATE ... IF NOT EXISTS`` and
``CREATE OR REPLACE VIEW``); other ``*.sql`` files hold statements the Python layer runs
with bound parameters and reads with :func:`read`.
"""

from __future__ import annotations

import re
from importlib import resources

#: Bumped whenever a table changes shape; a warehouse of another version is refused, except
#: that `metaeval init` upgrades one of a version listed in MIGRATIONS.
SCHEMA_VERSION = 4

#: version -> the script (``schema/<name>.sql``) that brings it to the next version.
MIGRATIONS = {1: "migrate_1", 2: "migrate_2", 3: "migrate_3"}

_DDL = re.compile(r"^\d\d_.*\.sql$")


def read(name: str) -> str:
    """The text of ``schema/<name>.sql``."""
    return resources.files(__package__).joinpath(f"{name}.sql").read_text(encoding="utf-8")


def ddl_scripts() -> list[tuple[str, str]]:
    """``(file name, SQL)`` of every schema script, in the order they are applied."""
    files = sorted(f for f in resources.files(__package__).iterdir() if _DDL.match(f.name))
    return [(f.name, f.read_text(encoding="utf-8")) for f in files]
