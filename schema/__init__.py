"""The warehouse's SQL: table definitions and views, applied in file-name order.

Files named ``NN_*.sql`` define the schema (idempotent: ``CREATE ... IF NOT EXISTS`` and
``CREATE OR REPLACE VIEW``); other ``*.sql`` files hold statements the Python layer runs
with bound parameters and reads with :func:`read`.
"""

from __future__ import annotations

import re
from pathlib import Path

#: Bumped whenever a table changes shape; a warehouse of another version is refused, except
#: that `metaeval init` upgrades one of a version listed in MIGRATIONS.
SCHEMA_VERSION = 14

#: version -> the script (``schema/<name>.sql``) that brings it to the next version.
MIGRATIONS = {1: "migrate_1", 2: "migrate_2", 3: "migrate_3", 4: "migrate_4", 5: "migrate_5", 6: "migrate_6",
              7: "migrate_7", 8: "migrate_8", 9: "migrate_9", 10: "migrate_subsets", 11: "migrate_11",
              12: "migrate_12", 13: "migrate_13"}

#: The patterns below are compiled at their first use (re's cache), not at every import: a light
#: command reads one script and needs none of them (issue 47 item 5).
_LATEST_VIEW = r"^\s*CREATE\s+OR\s+REPLACE\s+VIEW\s+latest_(\w+)\b"


def _result_tables() -> dict[str, str]:
    """Every table ``T`` whose latest rows a schema script defines as the view ``latest_T``, in
    the order of the scripts, and ``analysis_runs`` (itself)."""
    tables = {t: f"latest_{t}" for _, sql in ddl_scripts() for t in re.findall(_LATEST_VIEW, sql, re.I | re.M)}
    return {**tables, "analysis_runs": "analysis_runs"}


_CREATE_TABLE = r"^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)\b"
_SCRIPTS: dict[str, str] = {}


def script_of(table: str) -> str:
    """The schema script (its name without ``.sql``) that creates ``table``: read from the schema
    itself, so that a family names its tables, never the file that makes them."""
    if not _SCRIPTS:
        for name, sql in ddl_scripts():
            for t in re.findall(_CREATE_TABLE, sql, re.I | re.M):
                _SCRIPTS.setdefault(t, name[:-len(".sql")])
    try:
        return _SCRIPTS[table]
    except KeyError:
        raise KeyError(f"no schema script creates the table {table!r}") from None


def ensure_table(con, table: str, script: str | None = None) -> None:
    """Apply the script creating ``table`` (:func:`script_of`, or ``script``; idempotent) on the
    DuckDB connection ``con`` when ``table`` is missing: a warehouse made before the table gets
    it at its first write (or from ``metaeval init``)."""
    if not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [table]).fetchall()[0][0]:
        con.execute(read(script or script_of(table)))


def latest_view(table: str) -> str:
    """The view of ``table``'s latest rows; a KeyError names the registered tables."""
    try:
        return result_tables()[table]
    except KeyError:
        raise KeyError(f"{table!r} is not a registered result table; one of {sorted(result_tables())}") from None


_DDL = r"^\d\d_.*\.sql$"


def read(name: str) -> str:
    """The text of ``schema/<name>.sql``."""
    return Path(__file__).with_name(f"{name}.sql").read_text(encoding="utf-8")   # the package's folder


_SECTIONS: dict[str, dict[str, str]] = {}


def statements(name: str) -> dict[str, str]:
    """The ``-- name: X`` sections of ``schema/<name>.sql``: section name -> statement (without
    its closing semicolon)."""
    if name not in _SECTIONS:
        parts = re.split(r"^-- name: (\w+)\s*$", read(name), flags=re.M)
        _SECTIONS[name] = {parts[i]: parts[i + 1].strip().rstrip(";") for i in range(1, len(parts), 2)}
    return _SECTIONS[name]


def ddl_scripts() -> list[tuple[str, str]]:
    """``(file name, SQL)`` of every schema script, in the order they are applied."""
    files = sorted(f for f in Path(__file__).parent.iterdir() if re.match(_DDL, f.name))
    return [(f.name, f.read_text(encoding="utf-8")) for f in files]


def result_tables() -> dict[str, str]:
    """The result tables and the views of their latest rows: the one registry of table -> view,
    read from the schema itself (a result table is one with a ``latest_<table>`` view; so a new
    analysis family's ``schema/NN_<family>.sql`` registers its tables). ``analysis_runs``: every
    run of every analysis (its own view). :func:`metaeval.runs.engine.analyse.latest_rows` reads through
    it, the ``results`` and ``export`` commands offer exactly these tables, and each (but
    ``analysis_runs``) belongs to exactly one family of ``metaeval.runs.engine.families.FAMILIES``
    (tests/test_families.py). Made at its first use (it reads every schema script, which a command
    that only opens a warehouse, as ``datasets`` or ``measures``, does not need: issue 47 item 5),
    then kept as the module's ``RESULT_TABLES``."""
    if "RESULT_TABLES" not in globals():
        globals()["RESULT_TABLES"] = _result_tables()
    return globals()["RESULT_TABLES"]


def __getattr__(name: str):
    """``RESULT_TABLES`` (:func:`result_tables`), made at its first use."""
    if name == "RESULT_TABLES":
        return result_tables()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
