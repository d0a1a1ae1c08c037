"""One transaction per command (issue 24, item 4 and "what to build" 6): a command that fails
leaves every table of the warehouse byte-identical (:func:`tests.conftest.digest`), checks made
on merged scores included; a write that cannot reach the file is one line; a failed command
cleans up what it created even where nothing can be unlinked."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from metaeval import Store, connection
from metaeval.errors import WarehouseError
from metaeval.runs.engine import bookkeeping
from tests.conftest import digest, run_cli

HUMAN = "expert.relevance"


@pytest.fixture(scope="module")
def demo_warehouse(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("demo") / "w.duckdb"
    run_cli(db, "demo", "--dataset", "d", "--systems", "6", "--inputs", "8", "--k", "40")
    return db


@pytest.fixture
def demo(demo_warehouse, tmp_path) -> Path:
    """A private copy of the demo warehouse (dataset d, 6 systems x 8 inputs, 4 metrics)."""
    db = tmp_path / "w.duckdb"
    shutil.copy(demo_warehouse, db)
    return db


def _new_metric(db: Path, path: Path, *, per_system: bool = False) -> Path:
    """A score table of a new metric ``mine``: per cell, or per system (no input column)."""
    with Store(db, read_only=True) as wh:
        frame = wh.matrix("d", HUMAN).frame()
    if per_system:
        table = pd.DataFrame({"system": frame.index, "measure": "mine", "value": frame.mean(axis=1).to_numpy()})
    else:
        table = pd.DataFrame([(s, i, "mine", float(frame.loc[s, i]) + 0.1) for s in frame.index
                              for i in frame.columns if not np.isnan(frame.loc[s, i])],
                             columns=["system", "input", "measure", "value"])
    table.to_csv(path, index=False)
    return path


def _fails_writing_nothing(db: Path, *args, message: str) -> None:
    before = digest(db)
    result = run_cli(db, *args, ok=False)
    assert result.exit_code == 1 and message in result.output, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1, result.output
    assert digest(db) == before


# --- evaluate: every name and option before the first write; the rest before the commit --------------
def test_evaluate_with_an_unknown_human_writes_nothing(demo, tmp_path):
    scores = _new_metric(demo, tmp_path / "mine.csv")
    _fails_writing_nothing(demo, "evaluate", scores, "--dataset", "d", "--human", "nope",
                           message="dataset 'd' has no human judgment 'nope'; its human judgments: expert.relevance")


def test_evaluate_into_an_unknown_dataset_creates_nothing(demo, tmp_path):
    scores = _new_metric(demo, tmp_path / "mine.csv")
    _fails_writing_nothing(demo, "evaluate", scores, "--dataset", "nodata", "--human", HUMAN,
                           message="unknown dataset 'nodata'; the warehouse has: d")


def test_evaluate_checks_on_the_merged_scores_roll_the_ingest_back(demo, tmp_path):
    """A per-system table with --allow-new stores a new input 'all' only inside the ingest's
    transaction: the metric then shares no cell with the judgment, and nothing is committed."""
    scores = _new_metric(demo, tmp_path / "per-system.csv", per_system=True)
    _fails_writing_nothing(demo, "evaluate", scores, "--dataset", "d", "--human", HUMAN, "--allow-new",
                           message="'mine' and 'expert.relevance' have no cell (system, input) in common")


def test_evaluate_bad_metric_glob_writes_nothing(demo, tmp_path):
    scores = _new_metric(demo, tmp_path / "mine.csv")
    _fails_writing_nothing(demo, "evaluate", scores, "--dataset", "d", "--human", HUMAN, "--against", "nomatch*",
                           message="--metric 'nomatch*' matches no automatic measure of 'd'")


def test_evaluate_checks_every_dataset_before_writing_any(demo, tmp_path):
    """With several datasets, the second's bad name fails before the first's scores are ingested."""
    run_cli(demo, "demo", "--dataset", "e", "--systems", "6", "--inputs", "8", "--k", "40")
    scores = _new_metric(demo, tmp_path / "mine.csv")
    _fails_writing_nothing(demo, "evaluate", f"d:{scores}", f"e:{scores}", "--dataset", "d", "--human", HUMAN,
                           "--dataset", "e", "--human", "nope", "--k", "40",
                           message="dataset 'e' has no human judgment 'nope'")


def test_evaluate_still_ingests_and_evaluates(demo, tmp_path):
    scores = _new_metric(demo, tmp_path / "mine.csv")
    out = run_cli(demo, "evaluate", scores, "--dataset", "d", "--human", HUMAN, "--k", "40", "--level", "system",
                  "--coefficient", "kendall").output
    assert "inserted 48" in out and "mine" in out
    with Store(demo, read_only=True) as wh:
        assert "mine" in set(wh.measures("d")["measure"])


def test_before_commit_runs_inside_the_transaction_and_rolls_it_back(demo, tmp_path):
    """``Store.load(before_commit=...)`` sees the merged rows; its exception, unchanged, undoes them."""
    from metaeval.ingest import table

    batch = table.parse(_new_metric(demo, tmp_path / "mine.csv"))
    before = digest(demo)
    seen = []

    class Refused(Exception):
        pass

    def check():
        seen.append(wh.sql("SELECT count(*) AS n FROM measures WHERE name = 'mine'")["n"][0])
        raise Refused("no")

    with Store(demo) as wh, pytest.raises(Refused, match="^no$"):
        wh.load("d", [batch], before_commit=check)
    assert seen == [1] and digest(demo) == before


# --- other commands: no write before a check ------------------------------------------------------------
def test_accuracy_checks_every_analysis_before_the_first_writes(demo, monkeypatch):
    """--delta-bins ran (and wrote) its analysis before a later analysis's options were checked
    (once, a NaN --alpha; the command line now refuses that itself, so a check of the later
    analysis is made to fail here)."""
    from metaeval.errors import WarehouseError
    from metaeval.runs.metrics import ranking as ranking_runs

    def refuse(*args, **kwargs):
        raise WarehouseError("the significance analysis refuses its options")

    monkeypatch.setattr(ranking_runs, "significance_analysis", refuse)
    _fails_writing_nothing(demo, "accuracy", "--dataset", "d", "--human", HUMAN, "--delta-bins", "2",
                           message="the significance analysis refuses its options")


# --- a write that cannot reach the file during a run: one line, what was kept -----------------------------
class _FullDisk:
    """A connection on which the ``fail_at``-th statement starting with ``prefix`` fails as a full
    disk does (``how``: DuckDB's failed autocommit, or a fatal error after which the connection
    refuses everything, as DuckDB invalidates the database)."""

    def __init__(self, con, prefix: str, fail_at: int, how: str):
        self._con, self._prefix, self._left, self._how, self._dead = con, prefix, fail_at, how, False

    def execute(self, sql, *args):
        if self._dead:
            raise duckdb.FatalException("FATAL Error: database has been invalidated because of a previous fatal error")
        if sql.lstrip().startswith(self._prefix):
            self._left -= 1
            if self._left == 0:
                if self._how == "fatal":
                    self._dead = True
                    raise duckdb.FatalException("FATAL Error: Could not write file: No space left on device")
                raise duckdb.TransactionException("TransactionContext Error: Failed to commit: "
                                                  "could not write file: No space left on device")
        return self._con.execute(sql, *args)

    def __getattr__(self, name):
        return getattr(self._con, name)


def _full_disk(monkeypatch, prefix: str, fail_at: int, how: str = "commit") -> None:
    real = connection.connect
    monkeypatch.setattr(connection, "connect",
                        lambda *a, **k: _FullDisk(real(*a, **k), prefix, fail_at, how))


CI = ("ci", "--dataset", "d", "--human", HUMAN, "--k", "50", "--level", "system", "--coefficient", "pearson")


def test_a_full_disk_during_a_run_is_one_line_and_keeps_the_flushed_rows(demo, monkeypatch):
    monkeypatch.setattr(bookkeeping, "FLUSH_SECONDS", -1.0)  # a flush (an INSERT) per row
    _full_disk(monkeypatch, "INSERT INTO confidence_intervals", 3)
    result = run_cli(demo, *CI, ok=False)
    [line] = result.output.splitlines()
    assert result.exit_code == 1 and line.startswith(
        "Error: cannot write to the warehouse (TransactionContext Error: Failed to commit: could not write file: "
        "No space left on device); run "), line
    assert "is marked failed, the rows it wrote before are kept: run the same command again" in line
    monkeypatch.undo()
    with Store(demo, read_only=True) as wh:
        [(run_id, status)] = wh.sql("SELECT run_id, status FROM analysis_runs WHERE command = 'ci' "
                                    "AND status <> 'finished'").values.tolist()
        assert status == "failed" and f"run {run_id} " in line
        assert wh.sql(f"SELECT count(*) AS n FROM confidence_intervals WHERE run_id = {run_id}")["n"][0] == 2
    assert "computed 2 of 4" in run_cli(demo, *CI).output  # the rerun computes the rest


def test_a_fatal_write_error_during_a_run_is_one_line(demo, monkeypatch):
    _full_disk(monkeypatch, "INSERT INTO confidence_intervals", 1, how="fatal")
    result = run_cli(demo, *CI, ok=False)
    [line] = result.output.splitlines()
    assert result.exit_code == 1 and line.startswith(
        "Error: cannot write to the warehouse (FATAL Error: Could not write file: No space left on device); run "), line
    assert "is marked interrupted when the warehouse is next opened for writing" in line


def test_a_full_disk_when_a_run_starts_writes_nothing(demo, monkeypatch):
    before = digest(demo)
    _full_disk(monkeypatch, "INSERT INTO analysis_runs", 1)
    result = run_cli(demo, *CI, ok=False)
    assert result.exit_code == 1 and result.output == (
        "Error: cannot write to the warehouse (TransactionContext Error: Failed to commit: could not write file: "
        "No space left on device); nothing was written\n")
    monkeypatch.undo()
    assert digest(demo) == before


# --- a failed command in a directory where nothing can be unlinked ----------------------------------------
def _read_only_file_system(monkeypatch) -> None:
    """As on a read-only file system: DuckDB cannot create the file, and unlink fails with EROFS
    even for a file that is not there (the mount is checked before the name is looked up)."""
    def cannot_open(path, *, read_only):
        raise WarehouseError(f'cannot open warehouse {path}: IO Error: Cannot open file "{path}": '
                                        "Read-only file system")

    def unlink(self, missing_ok=False):
        raise OSError(errno.EROFS, "Read-only file system", str(self))

    monkeypatch.setattr(connection, "_open", cannot_open)
    monkeypatch.setattr(connection, "_copy_template", lambda path: False)   # nor create it as a copy
    monkeypatch.setattr(Path, "unlink", unlink)


@pytest.mark.parametrize("command", [("init",), ("ingest", "table", "{scores}", "--dataset", "t")])
def test_a_warehouse_in_a_read_only_directory_is_one_line(tmp_path, monkeypatch, command):
    scores = tmp_path / "t.csv"
    scores.write_text("system,input,measure,value\nA,d,m,1\n")
    db = tmp_path / "w.duckdb"
    before = sorted(tmp_path.rglob("*"))
    _read_only_file_system(monkeypatch)
    result = run_cli(db, *(a.format(scores=scores) for a in command), ok=False)
    assert result.exit_code == 1 and result.output == (
        f'Error: cannot open warehouse {db}: IO Error: Cannot open file "{db}": Read-only file system\n')
    monkeypatch.undo()
    assert sorted(tmp_path.rglob("*")) == before


def test_removing_created_files_never_raises(tmp_path, monkeypatch):
    new = connection.NewFiles.before(tmp_path / "sub" / "w.duckdb")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "w.duckdb").write_text("")

    def unlink(self, missing_ok=False):
        raise OSError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(Path, "unlink", unlink)
    new.remove()  # the file stays (it cannot be unlinked), and so does its directory
    monkeypatch.undo()
    assert (tmp_path / "sub" / "w.duckdb").exists()
