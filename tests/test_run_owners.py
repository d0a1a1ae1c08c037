"""Runs whose process is killed: each run records its owner process, a run left 'running' by a
process that is gone is marked 'interrupted' when the warehouse is next opened for writing, and
SIGTERM stops a command as Ctrl-C does."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from metaeval import Store, owners
from metaeval.runs import demo
from metaeval.runs.engine import bookkeeping, runner, selection
from metaeval.runs.metrics import comparisons, correlations
from tests.conftest import ROOT, run_cli

LINUX_PROC = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
POSIX = pytest.mark.skipif(os.name != "posix", reason="needs POSIX signals")

#: `metaeval compare` run by a child process that prints "written N" after each write of result
#: rows (written at once: FLUSH_SECONDS 0), so that a test knows when to kill it
CHILD = """
import sys
from metaeval.runs.engine import bookkeeping
from metaeval.cli.app import main

bookkeeping.FLUSH_SECONDS = 0.0
flush = bookkeeping.Writer.flush

def reporting_flush(self):
    n = len(self.rows)
    flush(self)
    if n:
        print(f"written {self.written}", flush=True)

bookkeeping.Writer.flush = reporting_flush
main(sys.argv[1:], prog_name="metaeval")
"""
#: The same, but the first write of rows runs first a DuckDB query that lasts until the signal
#: argv[1] (sent by the child itself) cuts it short: DuckDB then raises its own error, not the
#: KeyboardInterrupt (on one thread, DuckDB checks for signals between its tasks, so the
#: handler surely runs inside the query)
CHILD_SIGNALLED_IN_QUERY = """
import os, sys, threading
from metaeval.runs.engine import bookkeeping
from metaeval.cli.app import main

bookkeeping.FLUSH_SECONDS = 0.0
flush = bookkeeping.Writer.flush
signalled = []

def flush_after_a_long_query(self):
    if self.rows and not signalled:
        signalled.append(True)
        self.wh.con.execute("SET threads = 1")
        threading.Timer(0.3, os.kill, (os.getpid(), int(sys.argv[1]))).start()
        self.wh.con.execute("SELECT count(*) FROM range(1000000000000)").fetchall()
    flush(self)

bookkeeping.Writer.flush = flush_after_a_long_query
main(sys.argv[2:], prog_name="metaeval")
"""
#: 24 perm-both tests of about 0.05 s each (chunks of 8): killed after the first chunk, 2 are left
COMPARE = ["compare", "--dataset", "demo", "--human", demo.HUMAN, "--method", "perm-both", "--k", "500",
           "--level", "summary", "--coefficient", "pearson", "--coefficient", "spearman", "--correction", "holm"]
TASKS = 4 * 3 * 2


@pytest.fixture
def demo_db(tmp_path) -> Path:
    path = tmp_path / "demo.duckdb"
    with Store.create(path) as wh:
        demo.load(wh, "demo", tmp_path / "demo-data", n_systems=12, n_inputs=50)
    return path


def _start(db: Path, *args) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, "-c", CHILD, "--db", str(db), *map(str, args)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_rows(proc: subprocess.Popen) -> int:
    """Block until the child has written result rows; how many."""
    watchdog = threading.Timer(120, proc.kill)
    watchdog.start()
    try:
        for line in proc.stdout:
            if line.startswith("written "):
                return int(line.split()[1])
    finally:
        watchdog.cancel()
    raise AssertionError(f"the command ended (exit {proc.wait()}) before writing a row: {proc.stderr.read()}")


def _run(db: Path, run_id: int) -> tuple[pd.Series, int]:
    """Run ``run_id``'s row of analysis_runs and its number of hypothesis_tests rows."""
    with Store(db, read_only=True) as wh:
        run = wh.sql("SELECT * FROM analysis_runs WHERE run_id = ?", [run_id]).iloc[0]
        rows = wh.sql("SELECT count(*) AS n FROM hypothesis_tests WHERE run_id = ?", [run_id])["n"][0]
    return run, int(rows)


def _latest_tests(db: Path) -> pd.DataFrame:
    with Store(db, read_only=True) as wh:
        frame = wh.sql("SELECT * FROM latest_hypothesis_tests")
    keys = ["metric_a", "metric_b", "level", "coefficient"]
    values = ["delta", "statistic", "p_value", "p_adjusted", "significant", "family", "family_size", "fingerprint",
              "k", "seed", "conventions"]
    return frame.sort_values(keys).reset_index(drop=True)[keys + values]


@POSIX
@LINUX_PROC
def test_a_killed_compare_is_marked_interrupted_and_resumes_to_the_rows_of_an_uninterrupted_one(demo_db, tmp_path):
    fresh = tmp_path / "fresh.duckdb"
    shutil.copyfile(demo_db, fresh)
    proc = _start(demo_db, *COMPARE)
    written = _wait_for_rows(proc)
    proc.kill()                                # SIGKILL: the process marks nothing
    assert proc.wait() == -signal.SIGKILL
    run, rows = _run(demo_db, 1)               # opened read-only: nothing is marked
    assert run["status"] == "running" and run["command"] == "compare" and pd.isna(run["finished_at"])
    assert (run["owner_pid"], run["owner_host"]) == (proc.pid, socket.gethostname())
    assert 0 < written <= rows < TASKS

    run_cli(demo_db, "init")                   # the next command opening the warehouse for writing
    run, kept = _run(demo_db, 1)
    assert run["status"] == "interrupted" and kept == rows
    # what a reader of those rows sees (docs/reference/conventions.md, "Run states"): raw p-values, their
    # family not corrected (p_adjusted, significant, family_size NULL), in hypothesis_tests only
    with Store(demo_db, read_only=True) as wh:
        partial = wh.sql("SELECT * FROM hypothesis_tests WHERE run_id = 1")
        assert wh.sql("SELECT count(*) AS n FROM latest_hypothesis_tests")["n"][0] == 0
    assert partial["p_value"].notna().all() and partial[["p_adjusted", "significant", "family_size"]].isna().all().all()

    resumed = run_cli(demo_db, *COMPARE).output
    assert f"run 2: computed {TASKS - rows} of {TASKS}" in resumed, resumed
    assert f"run 1: computed {TASKS} of {TASKS}" in run_cli(fresh, *COMPARE).output
    pd.testing.assert_frame_equal(_latest_tests(demo_db), _latest_tests(fresh), check_exact=True)
    assert _run(demo_db, 1)[0]["status"] == "interrupted" and _run(demo_db, 2)[0]["status"] == "finished"


@POSIX
@LINUX_PROC
def test_sigterm_stops_a_compare_as_ctrl_c_does(demo_db):
    proc = _start(demo_db, *COMPARE)
    _wait_for_rows(proc)
    proc.terminate()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert err.splitlines() == ["Error: terminated (SIGTERM): the results finished so far are saved; "
                                "run the same command again to resume"]
    run, rows = _run(demo_db, 1)               # marked by the command itself, rows kept
    assert run["status"] == "interrupted" and run["computed"] == rows and 0 < rows < TASKS


@POSIX
@pytest.mark.parametrize("signum, code, message", [
    (signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_a_signal_during_a_query_stops_the_run_as_interrupted(demo_db, signum, code, message):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", CHILD_SIGNALLED_IN_QUERY, str(int(signum)), "--db", str(demo_db),
                           *COMPARE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == code, proc.stderr
    assert proc.stderr.splitlines() == [f"Error: {message}: the results finished so far are saved; "
                                        "run the same command again to resume"]
    run, rows = _run(demo_db, 1)   # the row that was to be written when the signal came is written
    assert run["status"] == "interrupted" and run["computed"] == rows and 0 < rows < TASKS


def test_ctrl_c_exits_130_with_one_line(demo_db, tmp_path, monkeypatch):
    from metaeval import load as loading

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(comparisons, "evaluate_test", interrupt)
    result = run_cli(demo_db, *COMPARE, ok=False)
    assert result.exit_code == 130 and result.output.splitlines() == [
        "Error: interrupted: the results finished so far are saved; run the same command again to resume"]
    assert _run(demo_db, 1)[0]["status"] == "interrupted"
    monkeypatch.setattr(loading, "load", interrupt)  # a command without its own message: the same exit
    table = tmp_path / "t.csv"
    table.write_text("system,input,measure,value\ns,i,m,1\n")
    result = run_cli(demo_db, "ingest", "table", table, "--dataset", "t", ok=False)
    assert result.exit_code == 130 and result.output.splitlines() == ["Error: interrupted"]


def _log_and_correlate(arrays, level, coefficient, log):
    """correlations.evaluate_correlation, slowly, appending a line to ``log`` (in the worker process)."""
    with open(log, "a") as f:
        f.write(f"{level} {coefficient}\n")
    time.sleep(0.1)
    return correlations.evaluate_correlation(arrays, level, coefficient)


def test_a_parallel_run_stopped_does_not_compute_its_queued_chunks(demo_db, tmp_path, monkeypatch):
    """SIGTERM reaches the main process only (Ctrl-C reaches the workers too): the chunks
    still queued are dropped, not computed before the command can exit."""
    log = tmp_path / "evaluated.log"
    add = bookkeeping.Writer.add

    def stop_at_first(self, *args):
        add(self, *args)
        raise KeyboardInterrupt

    monkeypatch.setattr(bookkeeping.Writer, "add", stop_at_first)
    with Store(demo_db) as wh:
        scope = selection.resolve_scope(wh, "demo", demo.HUMAN)
        analysis = correlations.correlate_analysis(scope)
        analysis.evaluate, analysis.arguments = _log_and_correlate, {"log": str(log)}
        with pytest.raises(KeyboardInterrupt):
            runner.run(wh, scope, analysis, jobs=2, chunk_size=1)
        status = wh.sql("SELECT status, computed FROM analysis_runs")
    evaluated = len(log.read_text().splitlines())
    # a few: those done, the 2 running and the 3 the pool hands to its workers in advance
    # (max_workers + 1, beyond cancelling); not the 36 of the whole run
    assert len(analysis.tasks) == 36 and evaluated <= 12, evaluated
    assert list(status["status"]) == ["interrupted"]


# --- who owns a run, and which runs are orphaned ------------------------------------------------
def _insert_run(wh: Store, status: str, pid: int | None, host: str | None, start: str | None) -> int:
    return wh.con.execute(
        """INSERT INTO analysis_runs (command, parameters, version, data_fingerprint, status,
                                      owner_pid, owner_host, owner_start)
           VALUES ('correlate', '{}', '0.2.0', 'x', ?, ?, ?, ?) RETURNING run_id""",
        [status, pid, host, start]).fetchall()[0][0]


def _exited_child() -> int:
    """The pid of a child process that has exited and been waited for."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@LINUX_PROC
def test_opening_for_writing_marks_the_runs_of_gone_processes_of_this_host_only(db):
    pid, host, start = owners.current_owner()
    boot, ticks = start.rsplit(":", 1)
    with Store(db) as wh:
        cases = {
            "this process": (_insert_run(wh, "running", pid, host, start), "running"),
            "pid reused by this process": (_insert_run(wh, "running", pid, host, f"{boot}:{int(ticks) - 1}"),
                                           "interrupted"),
            "pid of an earlier boot": (_insert_run(wh, "running", pid, host, f"another-boot:{ticks}"), "interrupted"),
            "exited process": (_insert_run(wh, "running", _exited_child(), host, start), "interrupted"),
            "another host": (_insert_run(wh, "running", _exited_child(), host + "-other", start), "running"),
            "no owner recorded (schema 2)": (_insert_run(wh, "running", None, None, None), "running"),
            "finished": (_insert_run(wh, "finished", _exited_child(), host, start), "finished"),
            "failed": (_insert_run(wh, "failed", _exited_child(), host, start), "failed"),
        }
    with Store(db, read_only=True) as wh:   # reading marks nothing
        assert set(wh.sql("SELECT status FROM analysis_runs")["status"]) == {"running", "finished", "failed"}
    Store(db).close()
    with Store(db, read_only=True) as wh:
        status = dict(wh.sql("SELECT run_id, status FROM analysis_runs").itertuples(index=False))
    assert {case: status[run_id] for case, (run_id, _) in cases.items()} == {
        case: expected for case, (_, expected) in cases.items()}


@LINUX_PROC
def test_a_process_start_is_field_22_of_its_stat_and_a_zombie_has_none():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        fields = Path(f"/proc/{child.pid}/stat").read_text().split()  # the command name has no spaces
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        assert owners.process_start(child.pid) == f"{boot}:{fields[21]}"
        assert owners.process_start(child.pid) != owners.process_start(os.getpid())
        assert owners.owner_alive(child.pid, owners.process_start(child.pid))
        start = owners.process_start(child.pid)
        child.kill()
        deadline = time.monotonic() + 10           # killed, not yet waited for: a zombie
        while Path(f"/proc/{child.pid}/stat").read_text().split()[2] != "Z" and time.monotonic() < deadline:
            time.sleep(0.01)
        assert owners.process_start(child.pid) is None and not owners.owner_alive(child.pid, start)
    finally:
        child.kill()
        child.wait()
    assert owners.process_start(child.pid) is None
