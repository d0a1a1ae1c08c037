"""Which process owns a run, and marking the runs whose process is gone.

A run is a row of ``analysis_runs`` with status ``running`` until its command marks it
``finished``, ``failed`` or ``interrupted``. A process killed outright (``kill -9``, out of
memory, power loss) marks nothing, so every run records its owner: the process id, the host
name and when that process started (so that a later process given the same pid is not taken for
the owner). Opening the warehouse for writing marks ``interrupted`` every run still ``running``
whose owner on this host no longer runs (:func:`reap_orphaned_runs`).

A run owned by another host is left as it is: from here we cannot tell whether its process
still runs. Nor are runs recorded before schema 3, which have no owner.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import duckdb

_PROC = Path("/proc")


def current_owner() -> tuple[int, str, str | None]:
    """(pid, host, start) of this process: the owner columns of the runs it starts."""
    pid = os.getpid()
    return pid, socket.gethostname(), process_start(pid)


def process_start(pid: int) -> str | None:
    """When process ``pid`` started, as a token that differs for a later process given the same
    pid: on Linux the boot id and the start time in clock ticks since boot (field 22 of
    ``/proc/<pid>/stat``). None when no process ``pid`` runs (a zombie, which has exited but not
    been waited for, does not) or, without ``/proc``, when the platform cannot tell."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces or ')': split after it
    fields = stat[stat.rindex(")") + 2:].split()
    state, start_ticks = fields[0], fields[19]          # fields 3 and 22
    if state in ("Z", "X", "x"):
        return None
    try:
        boot = (_PROC / "sys" / "kernel" / "random" / "boot_id").read_text().strip()
    except OSError:
        boot = ""
    return f"{boot}:{start_ticks}"


def owner_alive(pid: int, start: str | None) -> bool:
    """Whether the process that recorded (``pid``, ``start``) on this host still runs.

    With ``/proc``: process ``pid`` runs and started at ``start`` (when ``start`` is None,
    recorded where the start could not be read: that ``pid`` runs). Without ``/proc``: on POSIX,
    that ``pid`` runs (a reused pid then counts as alive, so a run is never marked interrupted
    while it may still be writing); elsewhere we cannot tell, and say alive.
    """
    if (_PROC / "self" / "stat").exists():
        now = process_start(pid)
        return now is not None and (start is None or now == start)
    if os.name != "posix":   # Windows: os.kill(pid, 0) would send CTRL_C_EVENT, not probe
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:          # EPERM: it runs, as another user
        return True
    return True


def reap_orphaned_runs(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Mark ``interrupted`` the runs still ``running`` whose owner process on this host is
    gone; their run_ids. Their rows stay, so the same command resumes them. Runs of other hosts
    and runs without a recorded owner are left alone: we cannot know whether they still run."""
    running = con.execute(
        "SELECT run_id, owner_pid, owner_start FROM analysis_runs "
        "WHERE status = 'running' AND owner_host = ? AND owner_pid IS NOT NULL ORDER BY run_id",
        [socket.gethostname()]).fetchall()
    gone = [run_id for run_id, pid, start in running if not owner_alive(pid, start)]
    if gone:
        con.execute("UPDATE analysis_runs SET status = 'interrupted' "
                    "WHERE list_contains(?, run_id) AND status = 'running'", [gone]).fetchall()
    return gone
