"""The warehouse file: a DuckDB file that is not a warehouse is refused, never filled."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from metaeval import ConflictError, Store, WarehouseError, schema
from metaeval.cli import main
from metaeval.connection import duckdb_connect
from metaeval.errors import CommitError
from metaeval.runs import demo
from tests.conftest import assert_same, snapshot, write_jsonl


def _foreign(path, sql="CREATE TABLE orders (id INTEGER, total DOUBLE); INSERT INTO orders VALUES (1, 9.5)"):
    with duckdb_connect(path) as con:
        con.execute(sql)
    return path


def _tables(path) -> list[str]:
    with duckdb_connect(path, read_only=True) as con:
        return sorted(r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall())


def _metaeval(path, *args):
    return CliRunner().invoke(main, ["--db", str(path), *map(str, args)], catch_exceptions=False)


@pytest.mark.parametrize("sql", ids=["table", "other-schema", "view", "schema_info-without-version",
                                     "schema_info-of-other-columns"], argvalues=[
    "CREATE TABLE orders (id INTEGER, total DOUBLE); INSERT INTO orders VALUES (1, 9.5)",
    "CREATE SCHEMA shop; CREATE TABLE shop.orders (id INTEGER)",
    "CREATE VIEW answer AS SELECT 42 AS x",
    "CREATE TABLE schema_info (key VARCHAR, value VARCHAR); INSERT INTO schema_info VALUES ('owner', 'me')",
    "CREATE TABLE schema_info (name VARCHAR)",
])
def test_init_refuses_a_foreign_duckdb_file(tmp_path, sql):
    path = _foreign(tmp_path / "other.duckdb", sql)
    before = _tables(path)
    result = _metaeval(path, "init")
    assert result.exit_code != 0
    assert f"{path} is a DuckDB file but not a metaeval warehouse" in result.output, result.output
    assert "Traceback" not in result.output and "--db" in result.output
    assert _tables(path) == before


@pytest.mark.parametrize("read_only", [True, False])
def test_opening_a_foreign_duckdb_file_is_refused(tmp_path, read_only):
    path = _foreign(tmp_path / "other.duckdb", "CREATE TABLE schema_info (key VARCHAR, value VARCHAR)")
    with pytest.raises(WarehouseError, match="not a metaeval warehouse .its schema_info table has no"):
        Store(path, read_only=read_only)
    result = _metaeval(path, "datasets")
    assert result.exit_code != 0 and "not a metaeval warehouse" in result.output


def test_ingest_into_a_foreign_duckdb_file_is_refused(tmp_path):
    path = _foreign(tmp_path / "other.duckdb")
    table = tmp_path / "t.csv"
    table.write_text("system,input,measure,value\nA,d,m,1\n")
    result = _metaeval(path, "ingest", "table", table, "--dataset", "t")
    assert result.exit_code != 0 and "not a metaeval warehouse" in result.output
    assert _tables(path) == ["orders"]


def test_init_on_an_empty_duckdb_file_and_again(tmp_path):
    path = tmp_path / "empty.duckdb"
    duckdb_connect(path).close()
    assert _metaeval(path, "init").exit_code == 0
    tables = _tables(path)
    assert "schema_info" in tables and "scores" in tables
    result = _metaeval(path, "init")
    assert result.exit_code == 0 and "Checked" in result.output
    assert _tables(path) == tables


# --- the demo's ingest ---------------------------------------------------------------------
def test_demo_conflict_says_what_to_do_without_replace(db, tmp_path):
    with Store(db) as wh:
        first = demo.load(wh, "demo", tmp_path / "a", n_systems=4, n_inputs=5, seed=0)
        assert first.changed and first.contents == "80 scores, 60 judgments"
        assert not demo.load(wh, "demo", tmp_path / "b", n_systems=4, n_inputs=5, seed=0).changed
        before = snapshot(wh)
        with pytest.raises(ConflictError) as caught:
            demo.load(wh, "demo", tmp_path / "c", n_systems=4, n_inputs=5, seed=1)
        assert_same(before, snapshot(wh))
        assert demo.load(wh, "demo-1", tmp_path / "d", n_systems=4, n_inputs=5, seed=1).changed
    message = str(caught.value)
    assert "--replace" not in message and "dataset=NAME" in message and "db=PATH" in message
    from metaeval.cli.app import error_text   # the command line names the flags

    assert "--dataset NAME" in error_text(caught.value) and "--db PATH" in error_text(caught.value)
    assert "<demo seed=1 systems=4 inputs=5>:62: scores system=S00 input=D000 measure=sim-high.f1" in message


def test_ingests_format_comment_lists_the_formats_written(db, tmp_path):
    from metaeval.ingest import attributes, preferences, sacrerouge, summaries, table
    from metaeval.runs.texts.scoring import score_dataset
    from tests.conftest import write_jsonl

    texts = write_jsonl(tmp_path / "s.jsonl", [{"instance_id": f"d{j}", "summarizer_id": f"s{i}",
                                                "summary": "the cat sat .", "references": [{"text": "a cat sat ."}]}
                                               for i in range(2) for j in range(2)])
    metrics = write_jsonl(tmp_path / "m.jsonl", [{"instance_id": "d0", "summarizer_id": "s0", "metrics": {"m": 1}}])
    long = tmp_path / "t.csv"
    long.write_text("system,input,measure,value\ns0,d0,t,1\n")
    with Store(db) as wh:
        wh.load("t", [summaries.parse(texts), sacrerouge.parse(metrics), table.parse(long)])
        score_dataset(wh, "t", ["bleu"])
        demo.load(wh, "demo", tmp_path / "demo", n_systems=3, n_inputs=3)
        (tmp_path / "a.csv").write_text("input,attribute,value\nd0,split,test\n")
        attributes.ingest(wh, "t", tmp_path / "a.csv")
        (tmp_path / "p.csv").write_text("input,system_a,system_b,judge,order,winner\nd0,s0,s1,llm,ab,a\n")
        preferences.ingest(wh, "t", tmp_path / "p.csv")
        written = set(wh.sql("SELECT DISTINCT format FROM ingests")["format"])
    ddl = next(line for line in schema.read("04_ingests").splitlines() if line.strip().startswith("format"))
    documented = {re.sub(r"\(.*\)", "", f).strip() for f in ddl.split("--", 1)[1].split("|")}
    assert documented == written == {"sacrerouge", "summaries", "table", "score", "attributes", "preferences"}


# --- files that are not DuckDB files; no extension is fetched or loaded -------------------------
def _sqlite(path):
    import sqlite3

    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (x)")
    con.close()
    return path


@pytest.mark.parametrize("make", ids=["csv", "sqlite", "empty"], argvalues=[
    lambda p: p.with_suffix(".csv").write_text("system,input,measure,value\nA,d,m,1\n") and p.with_suffix(".csv"),
    lambda p: _sqlite(p.with_suffix(".sqlite")),
    lambda p: p.write_bytes(b"") or p,
])
def test_a_file_that_is_not_a_duckdb_file_is_refused_and_left_as_it_is(tmp_path, make):
    path = make(tmp_path / "not-a-warehouse")
    table = tmp_path / "t.csv"
    table.write_text("system,input,measure,value\nA,d,m,1\n")
    before, files = path.read_bytes(), sorted(tmp_path.iterdir())
    for args in (["init"], ["datasets"], ["ingest", "table", table, "--dataset", "t"], ["sql", "SELECT 1"]):
        result = _metaeval(path, *args)
        assert result.exit_code != 0, (args, result.output)
        assert f"{path} is not a DuckDB file" in result.output, (args, result.output)
        assert "is a DuckDB file" not in result.output and "Traceback" not in result.output
        assert path.read_bytes() == before and sorted(tmp_path.iterdir()) == files
    with pytest.raises(WarehouseError, match="is not a DuckDB file"):
        Store(path, read_only=True)


def test_every_connection_fetches_and_loads_no_extension(tmp_path, monkeypatch):
    """Each connection to a warehouse opened by the commands, the API and the SQLAlchemy engine,
    asked for its settings as it is opened (DuckDB's defaults would be true). (duckdb-engine also
    opens in-memory connections of its own, to list DuckDB's settings: those are left out.)"""
    import duckdb

    settings = []
    real = duckdb.connect

    def spy(database=":memory:", *args, **kwargs):
        con = real(database, *args, **kwargs)
        if str(database) != ":memory:":
            settings.append(con.execute("SELECT current_setting('autoinstall_known_extensions'), "
                                        "current_setting('autoload_known_extensions')").fetchall()[0])
        return con

    monkeypatch.setattr(duckdb, "connect", spy)
    path = tmp_path / "new.duckdb"
    table = tmp_path / "t.csv"
    table.write_text("system,input,measure,value\nA,d,m,1\nB,d,m,2\nC,d,m,3\n")
    for args in (["init"], ["ingest", "table", table, "--dataset", "t"], ["datasets"], ["measures", "t"],
                 ["matrix", "t", "m"], ["sql", "SELECT current_setting('autoload_known_extensions') AS autoload"],
                 ["demo", "--systems", "3", "--inputs", "3", "--k", "40"]):
        result = _metaeval(path, *args)
        assert result.exit_code == 0, (args, result.output)
    with Store(path, read_only=True) as wh:
        assert len(wh.datasets()) == 2
    engine = Store.create(tmp_path / "other.duckdb")
    engine.close()
    engine = engine.engine()
    with engine.connect() as c:
        c.exec_driver_sql("SELECT 1")
    engine.dispose()
    assert len(settings) >= 10
    assert set(settings) == {(False, False)}


# --- a command that fails leaves no warehouse it created ---------------------------------------
def _conflicting_files(tmp_path, command):
    """Two files of one command that disagree: the command fails in the load, after opening."""
    if command == "table":
        a, b = tmp_path / "a.csv", tmp_path / "b.csv"
        a.write_text("system,input,measure,value\nA,d,m,1\n")
        b.write_text("system,input,measure,value\nA,d,m,2\n")
        return [a, b]
    if command == "sacrerouge":
        return [write_jsonl(tmp_path / f"{n}.jsonl", [{"instance_id": "d", "summarizer_id": "A", "metrics": {"m": v}}])
                for n, v in (("a", 1), ("b", 2))]
    return [write_jsonl(tmp_path / f"{n}.jsonl", [{"instance_id": "d", "summarizer_id": "A", "summary": t}])
            for n, t in (("a", "x ."), ("b", "y ."))]


@pytest.mark.parametrize("command", ["table", "sacrerouge", "summaries"])
def test_a_failed_ingest_leaves_no_new_warehouse(tmp_path, command):
    files = _conflicting_files(tmp_path, command)
    path = tmp_path / "new" / "dirs" / "wh.duckdb"
    before = sorted(tmp_path.rglob("*"))
    result = _metaeval(path, "ingest", command, *files, "--dataset", "t")
    assert result.exit_code != 0 and "conflict within the input" in result.output, result.output
    assert sorted(tmp_path.rglob("*")) == before  # no file, no .wal, no directory
    good = files[:1]
    assert _metaeval(path, "ingest", command, *good, "--dataset", "t").exit_code == 0
    assert path.exists()


def test_a_failed_init_leaves_no_new_warehouse(tmp_path, monkeypatch):
    monkeypatch.setattr(schema, "ddl_scripts", lambda: [("99_bad.sql", "CREATE TABLE oops (x NOT_A_TYPE)")])
    path = tmp_path / "sub" / "wh.duckdb"
    result = _metaeval(path, "init")
    assert result.exit_code != 0 and "cannot set up the warehouse" in result.output, result.output
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_demo_ingest_leaves_no_new_warehouse(tmp_path, monkeypatch):
    from metaeval import load as load_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(load_module, "_load_batch", interrupted)
    result = _metaeval(tmp_path / "wh.duckdb", "demo", "--systems", "3", "--inputs", "3", "--k", "40")
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert list(tmp_path.iterdir()) == []


def test_python_api_removes_a_created_warehouse_only_while_nothing_is_committed(tmp_path):
    from metaeval.ingest import table

    a, b = _conflicting_files(tmp_path, "table")
    path = tmp_path / "wh.duckdb"
    with pytest.raises(ConflictError), Store.create(path) as wh:
        wh.load("t", [table.parse(a), table.parse(b)])
    assert not path.exists()
    with pytest.raises(ConflictError), Store.create(path) as wh:
        wh.load("t", [table.parse(a)])
        wh.load("t", [table.parse(b)])  # conflicts with what is committed: that stays
    with Store(path, read_only=True) as wh:
        assert wh.matrix("t", "m").values.tolist() == [[1.0]]
    existing = tmp_path / "existing.duckdb"
    Store.create(existing).close()
    with pytest.raises(ConflictError), Store.create(existing) as wh:
        wh.load("t", [table.parse(a), table.parse(b)])
    assert existing.exists()


# --- a commit that fails or is interrupted: what happened is checked and said ------------------------
INVALIDATED = ("FATAL Error: Failed: database has been invalidated because of a previous fatal error. "
               "The database must be restarted prior to being used again.")


class _FailingCommit:
    """A connection whose commit fails as ``how`` says, as DuckDB's can:
    ``interrupt-after`` commits, then Ctrl-C arrives; ``interrupt-before``: Ctrl-C before it commits;
    ``disk-full``: an I/O error and nothing committed; ``fatal``: nothing committed and the
    connection unusable after (DuckDB invalidates the database after a fatal error);
    ``write-fatal``: the fatal error comes from a write before the commit."""

    def __init__(self, con, how: str):
        self._con, self._how, self._dead = con, how, False

    def commit(self):
        if self._how == "interrupt-after":
            self._con.commit()
            raise KeyboardInterrupt
        if self._how == "interrupt-before":
            raise KeyboardInterrupt
        if self._how == "disk-full":
            raise duckdb.IOException('IO Error: Could not write file "wh.duckdb":\nNo space left on device')
        if self._how == "fatal":
            self._dead = True
            raise duckdb.FatalException("FATAL Error: Failed to create checkpoint because of error: "
                                        "Could not write file: No space left on device")
        return self._con.commit()

    def execute(self, sql, *args):
        if self._how == "write-fatal" and "INSERT INTO ingests" in sql:
            self._dead = True
            raise duckdb.FatalException("FATAL Error: Could not write file: No space left on device")
        return self.__getattr__("execute")(sql, *args)

    def __getattr__(self, name):
        if self._dead:
            def invalidated(*args, **kwargs):
                raise duckdb.FatalException(INVALIDATED)
            return invalidated
        return getattr(self._con, name)


def _failing_commits(monkeypatch, how: str) -> None:
    """Make the commit of every load fail as ``how`` says (not the warehouse's set-up)."""
    from metaeval import load as loading

    real = loading.load
    monkeypatch.setattr(loading, "load", lambda con, *args, **kwargs: real(_FailingCommit(con, how), *args, **kwargs))


def _scores_table(tmp_path, n=3):
    path = tmp_path / "t.csv"
    path.write_text("system,input,measure,value\n" + "".join(f"S{i},d,m,{i}\n" for i in range(n)))
    return path


@pytest.mark.parametrize("how, committed", [("interrupt-after", True), ("interrupt-before", False),
                                            ("disk-full", False), ("fatal", False)])
def test_a_failed_commit_says_whether_it_completed(db, tmp_path, monkeypatch, how, committed):
    path = _scores_table(tmp_path)
    with Store(db, read_only=True) as wh:
        before = snapshot(wh)
    _failing_commits(monkeypatch, how)
    result = _metaeval(db, "ingest", "table", path, "--dataset", "t")
    assert result.exit_code == 1 and "Traceback" not in result.output
    [line] = result.output.splitlines()
    cause = ("the commit was interrupted" if how.startswith("interrupt") else
             'the commit reported an error (IO Error: Could not write file "wh.duckdb": No space left on device)'
             if how == "disk-full" else "the commit reported an error (FATAL Error: Failed to create checkpoint")
    assert line.startswith(f"Error: {cause}"), line
    with Store(db, read_only=True) as wh:
        if committed:
            assert line.endswith(", but it completed (checked in the warehouse): this ingest is stored, "
                                 "3 value(s) inserted; running the same command again changes nothing"), line
            assert wh.matrix("t", "m").values.ravel().tolist() == [0.0, 1.0, 2.0]
            assert wh.sql("SELECT file, inserted FROM ingests").values.tolist() == [[str(path), 3]]
        else:
            assert line.endswith(" and did not complete (checked in the warehouse): nothing was written"), line
            assert_same(before, snapshot(wh))
    monkeypatch.undo()
    again = _metaeval(db, "ingest", "table", path, "--dataset", "t").output
    assert ("nothing changed" if committed else "inserted 3") in again


def test_a_failed_write_before_the_commit_is_one_line(db, tmp_path, monkeypatch):
    path = _scores_table(tmp_path)
    with Store(db, read_only=True) as wh:
        before = snapshot(wh)
    _failing_commits(monkeypatch, "write-fatal")
    result = _metaeval(db, "ingest", "table", path, "--dataset", "t")
    assert result.exit_code == 1 and result.output == (
        "Error: cannot write to the warehouse (FATAL Error: Could not write file: No space left on device); "
        "nothing was written\n")
    with Store(db, read_only=True) as wh:
        assert_same(before, snapshot(wh))


@pytest.mark.parametrize("how, kept", [("interrupt-after", True), ("disk-full", False), ("fatal", False)])
def test_a_failed_commit_into_a_new_warehouse(tmp_path, monkeypatch, how, kept):
    """The new warehouse stays when it holds the ingest, and goes when it does not."""
    path = _scores_table(tmp_path)
    db = tmp_path / "new.duckdb"
    _failing_commits(monkeypatch, how)
    result = _metaeval(db, "ingest", "table", path, "--dataset", "t")
    assert result.exit_code == 1 and ("it completed" in result.output) == kept, result.output
    assert db.exists() == kept and not Path(f"{db}.wal").exists()
    if kept:
        with Store(db, read_only=True) as wh:
            assert wh.matrix("t", "m").values.ravel().tolist() == [0.0, 1.0, 2.0]


def test_a_commit_error_in_python_says_what_happened(db, tmp_path, monkeypatch):
    from metaeval.ingest import table

    _failing_commits(monkeypatch, "interrupt-after")
    with Store(db) as wh:
        with pytest.raises(CommitError) as caught:
            wh.load("t", [table.parse(_scores_table(tmp_path))])
        assert caught.value.committed is True and caught.value.inserted == 3
        assert len(wh.sql("SELECT * FROM ingests")) == 1  # the warehouse stays usable
