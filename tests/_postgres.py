"""The PostgreSQL server of the team warehouse's tests (tests/test_team.py, docs/guides/team.md):
``$METAEVAL_TEST_POSTGRES`` when set (``.ci/run`` starts one with ``.ci/postgres``), else the
one ``.ci/postgres`` starts on 127.0.0.1:54329 (Debian's postgresql; initdb + pg_ctl), stopped
again when the tests end. Where it cannot start the tests skip saying why, except under CI
(``$CI`` set), where they fail."""

from __future__ import annotations

import atexit
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: where ``.ci/postgres`` makes its server by default, and the URL it prints
DIRECTORY = Path("/tmp/metaeval-postgres")
URL = "postgresql://metaeval:metaeval@127.0.0.1:54329/metaeval"

_started: list[str] = []


def server_url() -> str:
    """The test server's URL (its password in it: a throw-away server)."""
    url = os.environ.get("METAEVAL_TEST_POSTGRES")
    if url:
        return url
    if _started:
        return _started[0]
    answering = _pg_isready()
    try:
        done = subprocess.run([str(ROOT / ".ci" / "postgres"), str(DIRECTORY), "54329"], capture_output=True,
                              text=True, timeout=180)
    except (OSError, subprocess.TimeoutExpired) as exc:
        done = subprocess.CompletedProcess([], 1, "", str(exc))
    if done.returncode != 0:
        reason = f"no PostgreSQL server for the team warehouse's tests (.ci/postgres: {done.stderr.strip()[-300:]})"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    url = done.stdout.strip().splitlines()[-1]
    _started.append(url)
    if not answering:
        atexit.register(_stop)
    return url


def _bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda p: [int(x) for x in p.parent.name.split(".")
                                                                              if x.isdigit()])
    return found[-1] if found else None


def _pg_isready() -> bool:
    bin_dir = _bin()
    return bool(bin_dir) and subprocess.run([str(bin_dir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", "54329"],
                                            check=False).returncode == 0


def _stop() -> None:
    stop = [str(_bin() / "pg_ctl"), "-D", str(DIRECTORY), "-m", "immediate", "stop"]
    subprocess.run(["runuser", "-u", "postgres", "--", *stop] if os.getuid() == 0 else stop, capture_output=True,
                   check=False)


def admin(url: str):
    """A psycopg connection (autocommit) to the server at ``url``."""
    import psycopg
    from sqlalchemy.engine import make_url

    return psycopg.connect(make_url(url).set(drivername="postgresql").render_as_string(hide_password=False),
                           autocommit=True)
