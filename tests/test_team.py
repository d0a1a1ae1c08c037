"""A team warehouse on a real PostgreSQL server (issue 46): push, pull into a fresh warehouse
and every row compared, a second push that sends nothing, two pushes at once, a push killed
with SIGKILL, conflicts refused both ways, and the connection errors in one line.

The server: tests/_postgres.py (``$METAEVAL_TEST_POSTGRES``, or one ``.ci/postgres`` starts);
each test has a database of its own on it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pandas as pd
import pytest

from metaeval import Store, team, team_server
from metaeval.ingest.table import add_scores
from metaeval.ingest import preferences
from tests import _postgres
from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def server_url() -> str:
    return _postgres.server_url()


_admin = _postgres.admin


@pytest.fixture
def url(server_url) -> str:
    """A database of its own on the test server, for one test."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    with _admin(server_url) as con:
        con.execute(f'CREATE DATABASE "{name}"')
    base = team_server._url(server_url).set(drivername="postgresql", database=name)
    yield base.render_as_string(hide_password=False)
    _drop_database(server_url, name)


def _drop_database(server_url: str, name: str, tries: int = 20) -> None:
    """Drop a test's database. FORCE ends the test's own sessions, but not an autovacuum worker that
    happens to be on it (a superuser's process the test role may not end): wait for it, a few times,
    then leave the database on the throw-away server (a warning, not a failed teardown)."""
    import warnings

    import psycopg

    for _ in range(tries):
        try:
            with _admin(server_url) as con:
                con.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
            return
        except psycopg.errors.InsufficientPrivilege:
            time.sleep(0.25)
    warnings.warn(f"test database {name} left on the test server (a process of another role stayed on it)")


SYSTEMS = ("A", "B", "C", "D")
INPUTS = tuple(f"d{i}" for i in range(6))


def _warehouse(path: Path, *, shift: float = 0.0, results: bool = True) -> Path:
    """Scores, one annotator's and two annotators' judgments, texts, attributes, preferences, and
    the results of correlate and ci."""
    rows = [{"system": s, "input": i, "m1": float(k), "m2": float((k * 7) % 5) + shift, "h": float(k % 4)}
            for k, (s, i) in enumerate((s, i) for s in SYSTEMS for i in INPUTS)]
    with Store.create(path) as wh:
        add_scores(wh, "tiny", pd.DataFrame(rows), human=["h"])
        add_scores(wh, "other", pd.DataFrame(rows).assign(m1=lambda f: f["m1"] * 2), human=["h"])
    attributes = path.parent / "attributes.csv"
    attributes.write_text("input,attribute,value\n" + "".join(f"{i},split,{'a' if n % 2 else 'b'}\n"
                                                            for n, i in enumerate(INPUTS)))
    run_cli(path, "ingest", "attributes", attributes, "--dataset", "tiny")
    prefs = path.parent / "prefs.csv"
    prefs.write_text("input,system_a,system_b,judge,order,winner\nd0,A,B,g,ab,a\nd1,A,C,g,ab,tie\nd2,B,C,g,ba,b\n")
    with Store(path) as wh:
        preferences.ingest(wh, "tiny", prefs)
    if results:
        run_cli(path, "correlate", "--dataset", "tiny", "--human", "h")
        run_cli(path, "ci", "--dataset", "tiny", "--human", "h", "--metric", "m1", "--level", "system",
                "--ci-method", "boot-inputs", "--k", "50")
    return path


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """The warehouses of :func:`_warehouse`, built once: ``built(path, results=..., shift=...)``
    copies one to ``path``."""
    made: dict[tuple, Path] = {}

    def copy(path: Path, *, results: bool = True, shift: float = 0.0) -> Path:
        key = (results, shift)
        if key not in made:
            made[key] = _warehouse(tmp_path_factory.mktemp("built") / "wh.duckdb", results=results, shift=shift)
        path.write_bytes(made[key].read_bytes())
        return path
    return copy


def _named(path: Path) -> dict[str, list]:
    """Every row of the tables a push copies, with names for the internal ids (a run's and a
    result's ids left out: each warehouse numbers its own), sorted."""
    out = {}
    with Store(path, read_only=True) as wh:
        con = wh.con
        for t in (*team_server.DATA_TABLES, "analysis_runs", *team_server.result_tables()):
            columns = team_server._columns(con, t)
            select, joins = [], []
            for c in columns:
                entity = team_server.REFERENCES.get(c)
                if c in ("result_id", "run_id") or (t in team_server.ENTITIES and c == team_server.ENTITIES[t][0]):
                    continue
                if entity in team_server.ENTITIES:
                    joins.append(f'JOIN {entity} n_{c} ON n_{c}.{team_server.ENTITIES[entity][0]} = t."{c}"')
                    select.append(f"n_{c}.name")
                elif c == "created_at" or t == "analysis_runs" and c in ("owner_pid", "owner_host", "owner_start"):
                    continue
                else:
                    select.append(f'CAST(t."{c}" AS VARCHAR)')
            if "run_id" in columns and t != "analysis_runs":
                joins.append("JOIN analysis_runs r USING (run_id)")
                select.append("CAST(r.started_at AS VARCHAR)")
            out[t] = sorted(con.execute(f'SELECT {", ".join(select)} FROM "{t}" t {" ".join(joins)}').fetchall(),
                            key=repr)
    return out


def _server_counts(url: str) -> dict[str, int]:
    with _admin(url) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables "
                                            "WHERE table_schema = 'metaeval' AND table_type = 'BASE TABLE'")]
        return {t: con.execute(f'SELECT count(*) FROM metaeval."{t}"').fetchone()[0] for t in sorted(tables)}


def test_push_then_pull_into_a_fresh_warehouse_gives_every_row(tmp_path, url, built):
    a = built(tmp_path / "a.duckdb")
    with Store(a) as wh:   # an undefined value (NaN) and a missing one (NULL) stay what they are
        wh.con.execute("UPDATE correlations SET value = 'nan' WHERE result_id = (SELECT min(result_id) FROM correlations)")
        wh.con.execute("UPDATE correlations SET value = NULL WHERE result_id = (SELECT max(result_id) FROM correlations)")
    out = run_cli(a, "push", url).output
    assert "Pushed to postgresql://metaeval:***@" in out and "metaeval:metaeval" not in out
    b = tmp_path / "b.duckdb"
    out = run_cli(b, "pull", url).output
    assert "Pulled from" in out, out
    mine, theirs = _named(a), _named(b)
    assert {t: len(r) for t, r in mine.items()} == {t: len(r) for t, r in theirs.items()}
    assert sum(len(r) for r in mine.values()) > 150 and mine["attributes"] and mine["preferences"]
    assert mine == theirs
    with Store(b, read_only=True) as wh:   # the pull's ingest row: the URL masked
        assert ":metaeval@" not in repr(wh.con.execute("SELECT * FROM ingests").fetchall())
    assert ("nan",) in {r[5:6] for r in theirs["correlations"]} and (None,) in {r[5:6] for r in theirs["correlations"]}
    # the pulled warehouse's latest rows are the server's views' rows and the local ones
    with Store(a, read_only=True) as wh:
        local = sorted(map(repr, wh.con.execute("SELECT metric, level, coefficient, value FROM latest_correlations")
                           .fetchall()))
        intervals = wh.con.execute("SELECT count(*) FROM latest_confidence_intervals").fetchone()[0]
    with _admin(url) as con:
        served = sorted(repr(tuple(r)) for r in con.execute("SELECT metric, level, coefficient, value "
                                                            "FROM metaeval.latest_correlations"))
        assert con.execute("SELECT count(*) FROM metaeval.latest_confidence_intervals").fetchone()[0] == intervals > 0
    assert served == local and any("nan" in r for r in local) and any("None" in r for r in local)
    # pulling again, or pushing back what was pulled, adds nothing
    before = _named(b)
    assert "Nothing to pull" in run_cli(b, "pull", url).output
    assert _named(b) == before
    counts = _server_counts(url)
    run_cli(b, "push", url)
    assert {t: n for t, n in _server_counts(url).items() if not t.startswith("push")} == \
        {t: n for t, n in counts.items() if not t.startswith("push")}
    listed = run_cli(a, "datasets", "--from", url).output
    assert "tiny" in listed and "other" in listed and "metaeval:metaeval" not in listed


def test_a_second_push_sends_nothing_and_says_so(tmp_path, url, built):
    a = built(tmp_path / "a.duckdb", results=False)
    run_cli(a, "push", url, "--dataset", "tiny")
    counts = _server_counts(url)
    assert counts["scores"] == 2 * len(SYSTEMS) * len(INPUTS) and counts["pushes"] == 1
    out = run_cli(a, "push", url, "--dataset", "tiny").output
    assert out.startswith("Nothing to push") and "tiny" in out
    assert _server_counts(url) == counts
    # the other dataset, then both: only what is new is sent
    run_cli(a, "push", url)
    assert _server_counts(url)["scores"] == 2 * counts["scores"]
    assert "Nothing to push" in run_cli(a, "push", url).output
    with _admin(url) as con:
        [(user, datasets)] = con.execute("SELECT server_user, datasets FROM metaeval.pushes WHERE push_id = 1")
    assert user == "metaeval" and datasets == ["tiny"]


def test_two_pushes_at_once_store_everything_once(tmp_path, url, built):
    a = built(tmp_path / "a.duckdb")
    b = tmp_path / "b.duckdb"
    b.write_bytes(a.read_bytes())
    errors = []

    def push(path):
        try:
            with Store(path, read_only=True) as wh:
                team.push(wh.con, url)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=push, args=(p,)) for p in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    both = _server_counts(url)
    fresh = tmp_path / "fresh.duckdb"
    run_cli(fresh, "pull", url)
    assert _named(fresh) == _named(a)
    assert both["scores"] == 2 * len(SYSTEMS) * len(INPUTS) * 2 and both["analysis_runs"] == 2


def _big(path: Path, n_inputs: int = 4000) -> Path:
    rows = pd.DataFrame([{"system": f"S{s}", "input": f"i{i}", **{f"m{k}": float(s * i + k) for k in range(8)}}
                         for s in range(8) for i in range(n_inputs)])
    with Store.create(path) as wh:
        add_scores(wh, "big", rows)
    return path


def test_a_push_killed_half_way_leaves_the_server_as_it_was(tmp_path, url, built):
    small = built(tmp_path / "small.duckdb", results=False)
    run_cli(small, "push", url, "--dataset", "other")
    before = _server_counts(url)
    big = _big(tmp_path / "big.duckdb")
    proc = subprocess.Popen([str(Path(sys.executable).parent / "metaeval"), "--db", str(big), "push", url],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        with _admin(url) as con:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:   # killed once it holds the push lock and is copying rows
                busy = con.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'metaeval push' "
                                   "AND query ILIKE 'COPY%'").fetchone()[0]
                if busy or proc.poll() is not None:
                    break
                time.sleep(0.005)
            assert proc.poll() is None, "the push ended before it could be killed"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            while con.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'metaeval push'"
                              ).fetchone()[0]:
                time.sleep(0.01)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert _server_counts(url) == before
    run_cli(big, "push", url)
    assert _server_counts(url)["scores"] == before["scores"] + 8 * 8 * 4000


def test_conflicting_rows_are_refused_both_ways_and_nothing_is_written(tmp_path, url, built):
    a = built(tmp_path / "a.duckdb", results=False)
    run_cli(a, "push", url, "--dataset", "tiny")
    before = _server_counts(url)
    b = built(tmp_path / "b.duckdb", shift=0.5, results=False)
    out = run_cli(b, "push", url, "--dataset", "tiny", ok=False).output
    assert "conflict with the team warehouse; nothing was written" in out, out
    assert "scores system=A input=d0 measure=m2: the team warehouse has 0.0, this warehouse has 0.5" in out
    assert "Traceback" not in out and _server_counts(url) == before
    local = _named(b)
    out = run_cli(b, "pull", url, ok=False).output
    assert "conflict with this warehouse; nothing of 'tiny' was written" in out, out
    assert "scores system=A input=d0 measure=m2: warehouse has 0.5, file has 0.0" in out and "Traceback" not in out
    assert _named(b) == local


def test_a_refused_connection_in_one_line(tmp_path, db, built):
    for command in ("pull", "push"):
        path = built(tmp_path / "a.duckdb", results=False) if command == "push" else db
        out = run_cli(path, command, "postgresql://me:secret@127.0.0.1:1/team", ok=False).output
        assert out.startswith("Error: cannot connect to postgresql://me:***@127.0.0.1:1/team: "), out
        assert out.count("\n") == 1 and "secret" not in out and "Traceback" not in out


def test_a_wrong_password_in_one_line(url, db):
    wrong = team_server._url(url).set(drivername="postgresql", password="not-the-password").render_as_string(
        hide_password=False)
    for args in (["datasets", "--from", wrong], ["pull", wrong]):
        out = run_cli(db, *args, ok=False).output
        assert "password authentication failed" in out and out.count("\n") == 1, out
        assert "not-the-password" not in out and "***" in out


def test_a_server_below_the_floor_in_one_line(url, db, monkeypatch):
    monkeypatch.setattr(team_server, "server_version_num", lambda raw: 130016)
    out = run_cli(db, "pull", url, ok=False).output
    assert out.startswith("Error: postgresql://metaeval:***@") and out.count("\n") == 1
    assert "is PostgreSQL 13.16; a team warehouse needs PostgreSQL 14 or later" in out


def test_every_latest_view_translates_and_hides_no_column():
    views = [m.group(0) for _, sql in team_server.schema.ddl_scripts() for m in team_server._VIEW.finditer(sql)]
    assert len(views) == len(team_server.result_tables())
    for sql in views:
        translated = team_server.postgres_view(sql, ["a", "b"])
        assert "EXCLUDE" not in translated.upper() and translated.count("(") == translated.count(")")


def test_summeval_with_its_results_and_realsumm_push_in_30_seconds_each(warehouse_copy, url, tmp_path):
    run_cli(warehouse_copy, "correlate", "--dataset", "summeval", "--human", "expert.relevance")
    for dataset in ("summeval", "realsumm"):
        start = time.perf_counter()
        out = run_cli(warehouse_copy, "push", url, "--dataset", dataset).output
        took = time.perf_counter() - start
        assert took <= 30, f"pushing {dataset} took {took:.1f} s"
        assert f"{dataset}:" in out
    counts = _server_counts(url)
    with Store(warehouse_copy, read_only=True) as wh:
        assert counts["scores"] == wh.con.execute("SELECT count(*) FROM scores").fetchone()[0]
        assert counts["judgments"] == wh.con.execute("SELECT count(*) FROM judgments").fetchone()[0]
        assert counts["summaries"] == wh.con.execute("SELECT count(*) FROM summaries").fetchone()[0] > 0
        assert counts["correlations"] == wh.con.execute("SELECT count(*) FROM correlations").fetchone()[0] > 0


def test_refusals_before_anything_is_sent_each_in_one_line(tmp_path, url, built, db):
    a = built(tmp_path / "a.duckdb", results=False)
    out = run_cli(a, "push", url, "--dataset", "nope", ok=False).output
    assert out == "Error: unknown dataset 'nope'; the warehouse has: other, tiny\n"
    out = run_cli(db, "datasets", "--from", url, ok=False).output
    assert "has no team warehouse yet" in out and out.count("\n") == 1 and ":metaeval@" not in out
    run_cli(a, "push", url, "--dataset", "tiny")
    out = run_cli(db, "pull", url, "--dataset", "nope", ok=False).output
    assert "has no dataset 'nope'; it has: tiny" in out and out.count("\n") == 1
    with _admin(url) as con:   # a team warehouse of another schema version
        con.execute("UPDATE metaeval.schema_info SET value = '7' WHERE key = 'version'")
    for args in (["push", url], ["pull", url]):
        out = run_cli(a if args[0] == "push" else db, *args, ok=False).output
        assert "has schema version 7, this metaeval uses" in out and out.count("\n") == 1, out
    assert run_cli(a, "push", "mysql://me@host/db", ok=False).output == \
        "Error: mysql://me@host/db is not a PostgreSQL URL: give postgresql://USER@HOST[:PORT]/DATABASE\n"
