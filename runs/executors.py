"""Where the tasks of a run are computed: in this process, in local worker processes
(``--jobs``), or on a Dask distributed cluster (``--scheduler ADDRESS`` / ``$METAEVAL_SCHEDULER``).

A cluster is used through its ``concurrent.futures`` executor (``distributed.Client(address)
.get_executor()``): the same task functions and arguments as the local process pool, so the
results are identical whatever runs them (every task carries its seed). The command still
writes every row itself, in its own process. No scheduler or wire protocol of our own.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any

from metaeval.errors import WarehouseError

ENV_VAR = "METAEVAL_SCHEDULER"

_scheduler: str | None = None
_option_given: str = "--scheduler"  # what errors name as the address's source


def set_scheduler(address: str | None, option: str = "--scheduler") -> None:
    """Use the Dask scheduler at ``address`` for the runs of this process (None: the default,
    ``$METAEVAL_SCHEDULER`` when set, else local); ``option``: where it was given, for errors."""
    global _scheduler, _option_given
    _scheduler, _option_given = address or None, option


@contextmanager
def using(address: str | None) -> Iterator[None]:
    """Runs inside the block use the Dask scheduler at ``address`` (Python API)."""
    before = _scheduler
    set_scheduler(address)
    try:
        yield
    finally:
        set_scheduler(before)


def scheduler() -> str | None:
    """The scheduler address in use: :func:`set_scheduler`'s, else ``$METAEVAL_SCHEDULER``."""
    return _scheduler or os.environ.get(ENV_VAR) or None


def describe(jobs: int) -> dict[str, Any]:
    """What computes the tasks, as recorded in ``analysis_runs.parameters["executor"]``."""
    address = scheduler()
    if address:
        return {"kind": "dask", "scheduler": address}
    return {"kind": "local", "jobs": jobs}


@contextmanager
def executor(jobs: int, *, initializer=None, initargs: tuple = ()) -> Iterator[Executor | None]:
    """A ``concurrent.futures`` executor for the tasks, or None to compute them in this process
    (``jobs == 1`` and no scheduler). ``initializer(*initargs)`` prepares local workers; on a
    cluster, pass what it would set up with each task instead (:func:`shared`)."""
    address = scheduler()
    if address:
        client = _client(address)
        try:
            yield client.get_executor()
        finally:
            client.close()
    elif jobs > 1:
        # forkserver: workers do not inherit the parent's DuckDB threads and locks
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("forkserver"),
                                   initializer=initializer, initargs=initargs)
        try:
            yield pool
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    else:
        yield None


def shared(pool: Executor, value: Any) -> Any:
    """``value`` as an argument for many tasks of ``pool``: on a cluster, sent to the workers
    once (a Dask future, which the workers resolve to the value); locally, the value itself."""
    client = getattr(pool, "_client", None)
    if client is None:
        return value
    return client.scatter(value, broadcast=True, hash=False)


def is_distributed(pool: Executor | None) -> bool:
    return pool is not None and getattr(pool, "_client", None) is not None


#: Seconds a scheduler has to answer (connect, handshake, identity) before ``--scheduler`` fails.
SCHEDULER_TIMEOUT = 10.0
#: The fix every ``--scheduler`` error suggests.
_SCHEDULER_FIX = ("give the address a Dask scheduler prints when it starts (`dask scheduler`: tcp://HOST:8786), "
                  "or leave --scheduler out to compute locally")


def check_address(address: str, option: str | None = None) -> None:
    """Refuse at once, without the network, an address that is not one (``notanaddress``, an
    ``http://`` URL, a port that is not a number): one line naming ``option`` (default: where
    the address came from, ``--scheduler`` or ``$METAEVAL_SCHEDULER``), the value and the fix."""
    try:
        from distributed.comm.addressing import get_address_host
    except ImportError:  # pragma: no cover - distributed is a dependency
        raise WarehouseError(f"{option or _option()} needs the 'distributed' package") from None
    try:
        get_address_host(address)  # the scheme and host:port
    except (ValueError, TypeError) as exc:
        raise WarehouseError(f"{option or _option()} {address!r} is not a scheduler address "
                             f"({' '.join(str(exc).split())}); {_SCHEDULER_FIX}") from None


def _option() -> str:
    return _option_given if _scheduler else f"${ENV_VAR}"


def check_scheduler(address: str, option: str | None = None) -> None:
    """Refuse, in one line naming ``option``, the value and the fix, an address that is not a
    Dask scheduler's: a malformed one at once (:func:`check_address`); otherwise when nothing
    Dask answers within :data:`SCHEDULER_TIMEOUT` seconds. ``distributed.Client(address,
    timeout=...)`` alone does not bound this: its timeout covers the TCP connection, not the
    handshake read after it, so a server that accepts and stays silent (a plain HTTP server)
    hung it for minutes, and a service that answers garbage made it allocate exabytes. The probe
    is distributed's own ``connect`` and ``identity`` call, under one deadline. Called before a
    run is recorded (:func:`metaeval.runs.bookkeeping.start_run`), so a bad scheduler writes nothing."""
    import asyncio
    import threading

    from distributed.comm import connect
    from distributed.core import send_recv
    from distributed.security import Security

    option = option or _option()
    check_address(address, option)
    what = f"{option} {address!r}"
    timeout = SCHEDULER_TIMEOUT

    async def identity():
        comm = await connect(address, timeout=timeout, **Security().get_connection_args("client"))
        try:
            return await send_recv(comm, op="identity")
        finally:
            comm.abort()

    outcome: dict = {}

    def probe():  # in its own thread and event loop: the caller may be running one (Jupyter)
        try:
            outcome["reply"] = asyncio.run(asyncio.wait_for(identity(), timeout))
        except BaseException as exc:  # noqa: BLE001 - reported below, in one line
            outcome["error"] = exc

    thread = threading.Thread(target=probe, name="metaeval-scheduler-probe", daemon=True)
    thread.start()
    thread.join(timeout + 5)
    reply, error = outcome.get("reply"), outcome.get("error")
    if isinstance(reply, dict) and reply.get("type") == "Scheduler":
        return
    if thread.is_alive() or isinstance(error, (TimeoutError, asyncio.TimeoutError, OSError)):
        detail = " ".join(str(error).split()) if error is not None and str(error) else ""
        raise WarehouseError(f"{what}: no Dask scheduler answered within {timeout:g} s"
                             f"{f' ({detail})' if detail else ''}; {_SCHEDULER_FIX}")
    if isinstance(reply, dict) and reply.get("type"):
        got = f"a Dask {reply['type']} answered, not a scheduler"
    else:
        detail = f"{type(error).__name__}: {' '.join(str(error).split())}" if error is not None else repr(reply)
        got = f"what answered is not a Dask scheduler ({detail[:200]})"
    raise WarehouseError(f"{what}: {got}; {_SCHEDULER_FIX}")


def _client(address: str):
    from distributed import Client

    check_scheduler(address)
    try:
        return Client(address, set_as_default=False, timeout=SCHEDULER_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise WarehouseError(f"--scheduler {address!r}: cannot reach the Dask scheduler "
                             f"({' '.join(str(exc).split())}); {_SCHEDULER_FIX}") from None
