from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval import Store
from metaeval.cli import main

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
TABLES = ["datasets", "systems", "inputs", "documents", '"references"', "summaries",
          "measures", "scores", "judgments", "ingests"]


#: Test functions (all their parameters) measured at 0.5 s or more, one ``file::function`` a
#: line: marked ``slow`` below, with every test that ingests the shared data, so that
#: ``pytest -m "not slow"`` runs in under a minute. Regenerate from
#: ``python -m pytest -q --durations=0`` (sum the call/setup times per function).
SLOW = frozenset(line.strip() for line in (ROOT / "tests" / "slow.txt").read_text().splitlines()
                 if line.strip() and not line.startswith("#"))
#: Fixtures that ingest ../shared/data (seconds before the first test that uses them).
SHARED_DATA_FIXTURES = {"shared_warehouse", "warehouse_copy"}


@pytest.hookimpl(tryfirst=True)  # before -k/-m deselect: every collected test is in items
def pytest_collection_modifyitems(config, items):
    """Mark ``slow`` the tests listed in tests/slow.txt and those that ingest the shared data.
    A listed test that its collected file no longer has (renamed, removed) is an error: it
    would otherwise silently join the quick subset."""
    functions = {item.nodeid.split("[", 1)[0] for item in items}
    files = {f.split("::", 1)[0] for f in functions}
    stale = sorted(f for f in SLOW if f.split("::", 1)[0] in files and f not in functions)
    if stale:
        raise pytest.UsageError(f"tests/slow.txt lists {len(stale)} test(s) their file does not have (renamed?): "
                                f"{', '.join(stale)}")
    for item in items:
        function = item.nodeid.split("[", 1)[0]
        if function in SLOW or SHARED_DATA_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def shared(*parts: str) -> Path:
    """A file under ../shared/data, or skip the test saying it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"needs the shared meta-evaluation data at {path} (absent on this checkout)")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_jsonl(path: Path, objects: list[dict]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects))
    return path


def snapshot(wh: Store) -> dict:
    """Every row of every table, in a canonical order: equal snapshots = unchanged warehouse."""
    out = {}
    for t in TABLES:
        frame = wh.sql(f"SELECT * FROM {t}")
        out[t] = frame.sort_values(list(frame.columns)).reset_index(drop=True)
    return out


def digest(db: Path) -> str:
    """sha256 of everything the warehouse file ``db`` holds: each table's name and rows (ORDER BY
    ALL), each view's and sequence's definition, and each sequence's last value. Equal digests:
    every table byte-identical (a failing command wrote nothing). :func:`snapshot` shows which
    rows differ, for the ingest tables."""
    from metaeval import connection

    h = hashlib.sha256()
    con = connection.duckdb_connect(db, read_only=True)
    try:
        catalog = con.execute(
            """SELECT 'table', table_name, sql FROM duckdb_tables() WHERE NOT internal
               UNION ALL SELECT 'view', view_name, sql FROM duckdb_views() WHERE NOT internal
               UNION ALL SELECT 'sequence', sequence_name, sql || ' last ' || coalesce(last_value, -1)
                         FROM duckdb_sequences() ORDER BY ALL""").fetchall()
        h.update(repr(catalog).encode())
        for kind, name, _ in catalog:
            if kind == "table":
                h.update(repr(con.execute(f'SELECT * FROM "{name}" ORDER BY ALL').fetchall()).encode())
    finally:
        con.close()
    return h.hexdigest()


def assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for t in a:
        assert a[t].equals(b[t]), f"table {t} changed"


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "wh.duckdb"
    Store.create(path).close()
    return path


def run_cli(db: Path, *args, ok: bool = True):
    """Run ``metaeval --db <db> ARGS`` (exceptions propagate); with ``ok``, assert it succeeded.
    Returns the click Result."""
    result = CliRunner().invoke(main, ["--db", str(db), *map(str, args)], catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def cli(db):
    """``run_cli`` on the test's empty warehouse; ``expect_ok`` as run_cli's ``ok``."""
    return lambda *args, expect_ok=True: run_cli(db, *args, ok=expect_ok)


@pytest.fixture
def warehouse_copy(shared_warehouse, tmp_path) -> Path:
    """A private, writable copy of the warehouse holding both shared datasets."""
    path = tmp_path / "copy.duckdb"
    path.write_bytes(shared_warehouse.read_bytes())
    return path


@pytest.fixture(scope="session")
def shared_warehouse(tmp_path_factory) -> Path:
    """Both shared datasets ingested once (read-only use)."""
    path = tmp_path_factory.mktemp("shared") / "wh.duckdb"
    runner = CliRunner()
    summeval = sorted(shared("summeval").glob("*.jsonl"))
    realsumm = shared("realsumm")
    for args in (
        ["ingest", "sacrerouge", *summeval, "--dataset", "summeval", "--human", "expert.*", "--human", "turker.*"],
        ["ingest", "sacrerouge", *sorted(p for p in realsumm.glob("*.jsonl") if p.name != "summaries.jsonl"),
         "--dataset", "realsumm", "--human", "litepyramid.recall"],
        ["ingest", "summaries", realsumm / "summaries.jsonl", "--dataset", "realsumm"],
    ):
        result = runner.invoke(main, ["--db", str(path), *map(str, args)], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    return path
