"""Opening the warehouse file: path resolution, schema creation and version check."""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb

from metaeval import schema
from metaeval.errors import WarehouseError, one_line

DEFAULT_PATH = "warehouse.duckdb"
ENV_VAR = "METAEVAL_DB"
#: The directory of the schema templates (:func:`template`); default ``$XDG_CACHE_HOME/metaeval``
#: (``~/.cache/metaeval``). A directory that cannot be written: no template, the scripts each time.
CACHE_VAR = "METAEVAL_CACHE"
#: Every connection the project opens: DuckDB neither downloads nor loads extensions on its own
#: (it would fetch ``sqlite_scanner`` to open a SQLite file given as the warehouse, say).
CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
#: A DuckDB database file has these bytes after the 8-byte checksum that opens its header.
MAGIC = b"DUCK"


def resolve_path(path: str | os.PathLike | None = None) -> Path:
    """``path`` if given, else ``$METAEVAL_DB``, else ``./warehouse.duckdb``."""
    return Path(path or os.environ.get(ENV_VAR) or DEFAULT_PATH)


def connect(path: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection to an existing warehouse, with its schema version checked."""
    if not path.exists():
        raise WarehouseError(f"no warehouse at {path}: create it with `{init_command(path)}`")
    con = _open(path, read_only=read_only)
    try:
        check_version(con, path)
    except BaseException:
        con.close()
        raise
    return con


def create(path: Path) -> duckdb.DuckDBPyConnection:
    """Create the warehouse at ``path``, or bring an existing one up to date: its views, and
    its tables if it has an older schema version that can be migrated (``schema.MIGRATIONS``).

    Idempotent: every script is ``IF NOT EXISTS`` / ``OR REPLACE``, in one transaction.
    An existing DuckDB file with tables of its own but no warehouse schema version is
    refused, not filled with the warehouse's tables. If it fails, what it created (the file,
    its .wal, missing directories) is removed. A new file is a copy of :func:`template` (the
    same scripts' result, byte for byte) when the cache directory has or can take one.
    """
    new = NewFiles.before(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        copied = new is not None and _copy_template(path)
        con = _open(path, read_only=False)
    except BaseException:
        if new:
            new.remove()
        raise
    try:
        version = None
        if _has_schema_info(con):
            version = _version(con, path)
            if version not in _upgradable():
                check_version(con, path)
        elif foreign := _objects(con):
            shown = ", ".join(foreign[:10]) + (f" and {len(foreign) - 10} more" if len(foreign) > 10 else "")
            raise _not_a_warehouse(path, f"it holds {shown}, and no warehouse schema version")
        if not copied:          # a copy of the template is the scripts' result already
            con.begin()
            if version in _upgradable():
                for v in range(int(version), schema.SCHEMA_VERSION):
                    con.execute(schema.read(schema.MIGRATIONS[v]))
            _apply_scripts(con)
            con.commit()
    except duckdb.Error as exc:
        _close_and_remove(con, new)
        raise WarehouseError(f"cannot set up the warehouse {path} (it is left as it was): {one_line(exc)}") from None
    except BaseException:
        _close_and_remove(con, new)
        raise
    return con


def _apply_scripts(con: duckdb.DuckDBPyConnection) -> None:
    """Every schema script (``schema.ddl_scripts``) and the schema version, in the open transaction."""
    for _name, sql in schema.ddl_scripts():
        con.execute(sql)
    con.execute(
        "INSERT INTO schema_info VALUES ('version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [str(schema.SCHEMA_VERSION)],
    )


def cache_directory() -> Path | None:
    """The directory of what is made once and kept (:data:`CACHE_VAR`; the schema templates, the
    command line's index of its commands); None without a home directory."""
    try:
        return Path(os.environ.get(CACHE_VAR) or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
                    / "metaeval")
    except RuntimeError:                    # no home directory
        return None


def template() -> Path | None:
    """An empty warehouse file as :func:`create` makes one (every schema script applied), kept in
    the cache directory (:data:`CACHE_VAR`) under a digest of the scripts, the schema version and
    DuckDB's version, and made there at its first use. A new warehouse is a copy of it: DuckDB
    executes each of the schema's ~1 400 statements (tables, views and a ``COMMENT ON`` per column)
    in about 0.2-0.3 ms of CPU whatever their batching, about 0.4 s for every new warehouse, while
    copying the file takes a few milliseconds. None when the directory cannot be written (then
    :func:`create` applies the scripts itself)."""
    import hashlib                          # here: a command that opens a warehouse needs no OpenSSL

    scripts = schema.ddl_scripts()
    digest = hashlib.sha256(f"{schema.SCHEMA_VERSION}\x1e{duckdb.__version__}".encode())
    for name, sql in scripts:
        digest.update(f"\x1e{name}\x1f{sql}".encode())
    cache = cache_directory()
    if cache is None:
        return None
    target = cache / f"schema-{schema.SCHEMA_VERSION}-{digest.hexdigest()[:24]}.duckdb"
    if target.is_file():
        return target
    building = cache / f".{target.stem}.{os.getpid()}.building"
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with duckdb_connect(building) as con:
            con.begin()
            _apply_scripts(con)
            con.commit()
        if wal_path(building).exists():     # not all in the file: not a template
            return None
        os.replace(building, target)        # whole or not at all, even with another process making it too
        return target
    except (OSError, duckdb.Error):
        return None
    finally:
        for leftover in (building, wal_path(building)):
            try:
                leftover.unlink(missing_ok=True)
            except OSError:
                pass


def _copy_template(path: Path) -> bool:
    """Make the new warehouse ``path`` a copy of :func:`template`; False (nothing written) when there
    is none, or ``path`` cannot be created or appeared meanwhile (then :func:`_open` says why, or
    opens it as it is)."""
    source = template()
    if source is None:
        return False
    try:
        src = open(source, "rb")
    except OSError:
        return False
    with src:
        try:
            dst = open(path, "xb")          # never over a file made meanwhile
        except OSError:
            return False
        with dst:
            try:
                shutil.copyfileobj(src, dst)
            except OSError as exc:          # a full disk, say: the caller removes the new file
                raise WarehouseError(f"cannot create the warehouse {path}: {exc}") from None
    return True


@dataclass(frozen=True)
class NewFiles:
    """What creating a warehouse at ``path`` adds to the file system: the file, its .wal
    (unless one was there) and the missing directories above it, to be removed again when
    the command that created them fails."""

    path: Path
    wal: bool           # the .wal is new too
    directories: tuple[Path, ...]

    @classmethod
    def before(cls, path: Path) -> NewFiles | None:
        """Taken before creating ``path``; None when it exists (nothing to remove, ever)."""
        if path.exists():
            return None
        missing = tuple(d for d in path.parents if not d.exists())
        return cls(path, not wal_path(path).exists(), missing)

    def remove(self) -> None:
        """Remove the new files (their connections closed) and the directories they left empty.
        Never raises: it runs while another error is on its way to the user. A file that cannot be
        unlinked (a read-only file system refuses even to unlink a file that is not there) is
        left to that error."""
        for file in (self.path, *([wal_path(self.path)] if self.wal else [])):
            try:
                file.unlink(missing_ok=True)
            except OSError:
                pass
        for directory in self.directories:  # deepest first
            try:
                directory.rmdir()
            except OSError:
                break  # not empty (something else was put there): keep it and those above it


def wal_path(path: Path) -> Path:
    """DuckDB's write-ahead log of the database file ``path``."""
    return path.with_name(path.name + ".wal")


def duckdb_connect(database: str | os.PathLike = ":memory:", *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect`` as the project opens every connection: with :data:`CONFIG`."""
    return duckdb.connect(str(database), read_only=read_only, config=CONFIG)


def _close_and_remove(con: duckdb.DuckDBPyConnection, new: NewFiles | None) -> None:
    con.close()
    if new:
        new.remove()


def check_version(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    version = _version(con, path)
    if version in _upgradable():
        raise WarehouseError(
            f"{path} has warehouse schema version {version}, this metaeval uses version "
            f"{schema.SCHEMA_VERSION}: upgrade it with `{init_command(path)}` (keeps every row)"
        )
    if version != str(schema.SCHEMA_VERSION):
        raise WarehouseError(
            f"{path} has warehouse schema version {version}, this metaeval uses version "
            f"{schema.SCHEMA_VERSION}; use a metaeval release of that version or re-create the warehouse"
        )


def init_command(path: Path) -> str:
    """The `metaeval init` command line for ``path``, quoted for a shell."""
    return shlex.join(["metaeval", "--db", str(path), "init"])


def stored_version(path: Path) -> str | None:
    """The schema version recorded in the warehouse file at ``path``; None when there is no
    file or it records none."""
    if not path.exists():
        return None
    con = _open(path, read_only=True)
    try:
        return _stored(con)[1]
    finally:
        con.close()


def _version(con: duckdb.DuckDBPyConnection, path: Path) -> str:
    """The schema version recorded in the file; not a warehouse: a WarehouseError."""
    has_table, version = _stored(con)
    if not has_table:
        raise _not_a_warehouse(path, "no schema_info table")
    if version is None:
        raise _not_a_warehouse(path, "its schema_info table has no warehouse schema version")
    return version


def _stored(con: duckdb.DuckDBPyConnection) -> tuple[bool, str | None]:
    """(whether the file has the table ``main.schema_info``, the version it records or None), in
    one query on the table (a catalog error: no such table): asking ``information_schema.tables``
    first cost ~10 ms of CPU, a twentieth of a light command (issue 47 item 5)."""
    try:
        rows = con.execute(schema.read("schema_version")).fetchall()
    except duckdb.CatalogException:
        return False, None
    except duckdb.Error:            # a schema_info without the columns key and value
        return True, None
    return True, (rows[0][0] if rows else None)


def _upgradable() -> set[str]:
    """Versions `init` can migrate to this one: each step from there on has a script."""
    out, v = set(), schema.SCHEMA_VERSION - 1
    while v in schema.MIGRATIONS:
        out.add(str(v))
        v -= 1
    return out


def _not_a_warehouse(path: Path, why: str) -> WarehouseError:
    return WarehouseError(
        f"{path} is a DuckDB file but not a metaeval warehouse ({why}); it is left as it is: "
        f"give another warehouse file with --db PATH (or ${ENV_VAR})"
    )


def _objects(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The tables, views and sequences of the open database file, as ``schema.name``."""
    return [r[0] for r in con.execute(
        """SELECT schema_name || '.' || table_name FROM duckdb_tables()
               WHERE database_name = current_database() AND NOT internal
           UNION ALL
           SELECT schema_name || '.' || view_name FROM duckdb_views()
               WHERE database_name = current_database() AND NOT internal
           UNION ALL
           SELECT schema_name || '.' || sequence_name FROM duckdb_sequences()
               WHERE database_name = current_database()
           ORDER BY 1""").fetchall()]


def _has_schema_info(con: duckdb.DuckDBPyConnection) -> bool:
    return _stored(con)[0]


def _open(path: Path, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    if path.is_file() and not _is_duckdb_file(path):
        raise _not_duckdb(path)
    try:
        return duckdb_connect(path, read_only=read_only)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise WarehouseError(
                f"warehouse {path} is locked by another process; wait for it to finish "
                f"and try again ({exc})"
            ) from None
        if "not a valid DuckDB database file" in str(exc):
            raise _not_duckdb(path) from None
        raise WarehouseError(f"cannot open warehouse {path}: {exc}") from None
    except duckdb.Error as exc:
        raise WarehouseError(f"cannot open warehouse {path}: {exc}") from None


def _is_duckdb_file(path: Path) -> bool:
    """Whether the file starts as a DuckDB database does. (DuckDB itself opens a CSV file as an
    in-memory database with a view of it, and a SQLite file through an extension.)"""
    try:
        with open(path, "rb") as f:
            header = f.read(len(MAGIC) + 8)
    except OSError:
        return True  # let DuckDB say what is wrong with it
    return header[8:] == MAGIC


def _not_duckdb(path: Path) -> WarehouseError:
    return WarehouseError(
        f"{path} is not a DuckDB file, so not a metaeval warehouse; it is left as it is: "
        f"give a warehouse file with --db PATH (or ${ENV_VAR})"
    )
