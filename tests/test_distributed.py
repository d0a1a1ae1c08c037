"""--scheduler / $METAEVAL_SCHEDULER: the tasks of ci, compare and simulate computed on a Dask
distributed cluster give the very rows of a --jobs 1 run, and the run records its executor."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from metaeval.runs import Warehouse
from tests.conftest import run_cli as _cli

distributed = pytest.importorskip("distributed")

VOLATILE = ["result_id", "run_id"]
COMMON = ["--dataset", "realsumm", "--human", "litepyramid.recall", "--metric", "rouge-*.recall",
          "--level", "system", "--level", "summary", "--coefficient", "pearson", "--coefficient", "kendall",
          "--k", "100", "--seed", "7"]
COVERAGE = ["simulate", "coverage", "--dataset", "realsumm", "--human", "litepyramid.recall", "--metric", "qa-eval.f1",
            "--coefficient", "pearson", "--ci-method", "boot-both", "--trials", 60, "--k", 40, "--seed", 3]
POWER = ["simulate", "power", "--dataset", "realsumm", "--human", "litepyramid.recall", "--proportions", "0.1,1",
         "--method", "perm-both", "--trials", 8, "--k", 40, "--seed", 3]


@pytest.fixture(scope="module")
def scheduler():
    """A one-worker cluster on 127.0.0.1 whose worker is another process (tasks are pickled)."""
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def _rows(db, table):
    with Warehouse(db, read_only=True) as wh:
        frame = wh.sql(f"SELECT * FROM {table}").drop(columns=VOLATILE)
    key = [c for c in ("metric", "metric_a", "metric_b", "level", "coefficient", "method", "proportion", "block")
           if c in frame.columns]
    return frame.sort_values(key).reset_index(drop=True)


def _executors(db) -> list[dict]:
    with Warehouse(db, read_only=True) as wh:
        return [json.loads(p)["executor"] for p in wh.sql("SELECT parameters FROM analysis_runs")["parameters"]]


def _copy(shared_warehouse, path):
    path.write_bytes(shared_warehouse.read_bytes())
    return path


def test_ci_and_compare_on_a_cluster_equal_a_local_run(shared_warehouse, tmp_path, scheduler):
    tables = {}
    for name, extra in (("local", ["--jobs", 1]), ("dask", ["--scheduler", scheduler])):
        db = _copy(shared_warehouse, tmp_path / f"{name}.duckdb")
        _cli(db, "ci", *COMMON, "--ci-method", "boot-both", *extra)
        _cli(db, "compare", *COMMON, "--method", "perm-both", "--correction", "holm", *extra)
        tables[name] = {t: _rows(db, t) for t in ("confidence_intervals", "hypothesis_tests")}
        tables[name]["executors"] = _executors(db)
    assert len(tables["local"]["confidence_intervals"]) == 3 * 4 and len(tables["local"]["hypothesis_tests"]) == 6 * 4
    for t in ("confidence_intervals", "hypothesis_tests"):
        pd.testing.assert_frame_equal(tables["local"][t], tables["dask"][t])
    assert tables["local"]["executors"] == [{"kind": "local", "jobs": 1}] * 2
    assert tables["dask"]["executors"] == [{"kind": "dask", "scheduler": scheduler}] * 2


def test_simulations_on_a_cluster_from_the_environment_equal_a_local_run(shared_warehouse, tmp_path, scheduler,
                                                                         monkeypatch):
    tables = {}
    for name in ("local", "dask"):
        db = _copy(shared_warehouse, tmp_path / f"{name}.duckdb")
        if name == "dask":
            monkeypatch.setenv("METAEVAL_SCHEDULER", scheduler)
        _cli(db, *COVERAGE)
        _cli(db, *POWER)
        tables[name] = {t: _rows(db, t) for t in ("ci_coverage", "ci_coverage_blocks", "power", "power_blocks")}
        tables[name]["executors"] = _executors(db)
    for t in ("ci_coverage", "ci_coverage_blocks", "power", "power_blocks"):
        assert len(tables["local"][t]) > 0
        pd.testing.assert_frame_equal(tables["local"][t], tables["dask"][t])
    assert {e["kind"] for e in tables["local"]["executors"]} == {"local"}
    assert tables["dask"]["executors"] == [{"kind": "dask", "scheduler": scheduler}] * 2


def test_the_scheduler_option_holds_for_its_command_only(db, scheduler):
    """The executor is a value (runs/engine/executors.py Executor) the warehouse of one command carries:
    the next command, without --scheduler, computes locally; from Python, ``wh.executor``."""
    from metaeval.runs.engine import executors

    ci = ["ci", "--dataset", "demo", "--human", "expert.relevance", "--k", 40, "--force"]
    _cli(db, "demo", "--systems", 3, "--inputs", 3, "--k", 40)
    _cli(db, *ci, "--scheduler", scheduler)
    _cli(db, *ci, "--jobs", 2)
    assert _executors(db)[-2:] == [{"kind": "dask", "scheduler": scheduler}, {"kind": "local", "jobs": 2}]
    executor = executors.Executor(scheduler)
    assert executor.describe(2) == {"kind": "dask", "scheduler": scheduler}
    assert executors.LOCAL.describe(2) == {"kind": "local", "jobs": 2}
    with Warehouse(db) as wh:
        assert wh.executor is None and executors.of(wh) == executors.LOCAL
        wh.executor = executor
        assert executors.of(wh) is executor
        wh.ci("demo", "expert.relevance", k=40, force=True)
    assert _executors(db)[-1] == {"kind": "dask", "scheduler": scheduler}


# --- issue 24.8: --scheduler where nothing Dask answers fails fast, in one line ------------------
@pytest.fixture
def silent_http_server():
    """A plain HTTP server (python's http.server) on a free port: it accepts the connection and
    waits for a request line that Dask's handshake never sends."""
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # not onto the command's stderr
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    server.daemon_threads = True  # closing does not wait for the handler the client left waiting
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def junk_server():
    """A TCP service on a free port that answers every connection with bytes that are not Dask's
    (read as a frame header, they announced a 3 EiB message)."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve():
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                try:
                    conn.sendall(b"\xff" * 64 + b"HTTP/1.0 400 Bad Request\r\n\r\n")
                    conn.recv(1 << 16)
                except OSError:
                    pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    listener.close()


def _within(seconds: float, args: list, env: dict | None = None):
    """``metaeval ARGS`` in-process, failing the test (not hanging it) if it has not returned
    within ``seconds``; its click Result and how long it took."""
    import threading
    import time

    from click.testing import CliRunner

    from metaeval.cli import main

    out = {}

    def run():
        out["result"] = CliRunner().invoke(main, [str(a) for a in args], env=env)

    start = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"metaeval {' '.join(map(str, args))} still running after {seconds} s"
    return out["result"], time.monotonic() - start


def _one_line(result, *expected: str) -> None:
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert result.output.count("\n") == 1 and result.output.startswith("Error: "), result.output
    for text in expected:
        assert text in result.output, (text, result.output)


@pytest.mark.parametrize("server, answers", [
    # http.server waits for a line (usually: the handshake has no newline) or answers 400 to one
    ("silent_http_server", ("no Dask scheduler answered within 0.2 s", "what answered is not a Dask scheduler")),
    ("junk_server", ("what answered is not a Dask scheduler",))])
def test_a_scheduler_address_where_nothing_dask_answers_fails_in_one_line(request, monkeypatch, server, answers):
    """An HTTP server hung `--scheduler` 150 s and ended in a traceback; a service answering
    garbage ended in a 3 EiB allocation error. Now one line (option, value, fix) within the
    probe's deadline (SCHEDULER_TIMEOUT, 0.2 s here; a whole command: the slow test below)."""
    import threading
    import time

    from metaeval.cli.app import error_text
    from metaeval.errors import WarehouseError
    from metaeval.runs.engine import executors

    monkeypatch.setattr(executors, "SCHEDULER_TIMEOUT", 0.2)
    address = request.getfixturevalue(server)
    outcome = {}

    def probe():
        try:
            executors.check_scheduler(address, "--scheduler")
        except WarehouseError as exc:
            outcome["error"] = error_text(exc)   # as the command line prints it (Python: scheduler=...)

    start = time.monotonic()
    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(30)
    assert not thread.is_alive() and time.monotonic() - start < 10, "the probe did not return"
    message = outcome["error"]
    assert message.startswith(f"--scheduler '{address}': ") and "\n" not in message, message
    assert any(answer in message for answer in answers) and message.endswith("or leave --scheduler out to compute "
                                                                             "locally"), message


@pytest.mark.parametrize("address", ["notanaddress", "http://127.0.0.1:8786", "tcp://host:port", "tcp://[::1"])
def test_a_malformed_scheduler_address_is_one_line_at_once(tmp_path, address):
    """`--scheduler notanaddress` was a ValueError traceback after waiting 40 s more."""
    result, took = _within(30, ["--db", tmp_path / "db.duckdb", "simulate", "power", "--dataset", "demo", "--human",
                                "h", "--scheduler", address])
    _one_line(result, f"--scheduler '{address}' is not a scheduler address", "leave --scheduler out")
    assert took < 5


def test_a_bad_scheduler_from_the_environment_names_the_variable(tmp_path):
    result, _ = _within(30, ["--db", tmp_path / "db.duckdb", "compare", "--dataset", "demo", "--human", "h"],
                        env={"METAEVAL_SCHEDULER": "notanaddress"})
    _one_line(result, "$METAEVAL_SCHEDULER 'notanaddress' is not a scheduler address")


def test_only_a_dask_scheduler_passes_the_probe():
    """The probe accepts a scheduler and refuses a Dask worker's address (not a scheduler)."""
    from metaeval.errors import WarehouseError
    from metaeval.runs.engine import executors

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=":0") as cluster:
        executors.check_scheduler(cluster.scheduler_address)
        worker = next(iter(cluster.workers.values())).address
        with pytest.raises(WarehouseError, match="a Dask Worker answered, not a scheduler"):
            executors.check_scheduler(worker)


@pytest.mark.parametrize("server", ["silent_http_server", "junk_server"])
def test_the_default_deadline_fails_a_real_command_under_30_s(request, tmp_path, server):
    """The issue's bound with the real SCHEDULER_TIMEOUT, on a warehouse with a dataset, in a
    process of its own: one line within 30 s, and no run recorded."""
    import time

    address = request.getfixturevalue(server)
    db = tmp_path / "db.duckdb"
    _cli(db, "demo", "--systems", 3, "--inputs", 3, "--k", 40)
    with Warehouse(db, read_only=True) as wh:
        runs = len(wh.sql("SELECT * FROM analysis_runs"))
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", "from metaeval.cli import main; main()", "--db", str(db), "ci",
                           "--dataset", "demo", "--human", "expert.relevance", "--k", "40", "--force",
                           "--scheduler", address], capture_output=True, text=True, timeout=60)
    took = time.monotonic() - start
    assert proc.returncode == 1 and f"--scheduler '{address}'" in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr and took < 30, (took, proc.stderr)
    with Warehouse(db, read_only=True) as wh:
        assert len(wh.sql("SELECT * FROM analysis_runs")) == runs


def test_a_malformed_address_from_python_names_the_parameter():
    """runs/ names the Python parameter (scheduler=...); the command line renders --scheduler."""
    from metaeval.cli.app import error_text
    from metaeval.errors import WarehouseError
    from metaeval.runs.engine import executors

    with pytest.raises(WarehouseError) as caught:
        executors.Executor("notanaddress").check()
    assert str(caught.value).startswith("scheduler='notanaddress' is not a scheduler address")
    assert str(caught.value).endswith("or leave scheduler out to compute locally")
    assert error_text(caught.value).startswith("--scheduler 'notanaddress' is not a scheduler address")
    with pytest.raises(WarehouseError, match=r"^\$METAEVAL_SCHEDULER 'x' is not a scheduler address"):
        executors.Executor("x", "$METAEVAL_SCHEDULER").check()
