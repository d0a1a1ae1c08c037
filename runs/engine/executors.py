"""Where the tasks of a run are computed: in this process, in local worker processes
(``jobs``), or on a Dask distributed cluster (an :class:`Executor` with a scheduler address).

The executor is a value: :attr:`metaeval.core.Store.executor` (None: local), which the
runs of that warehouse read (:func:`of`); the command line sets it from ``--scheduler ADDRESS`` /
``$METAEVAL_SCHEDULER``, a Python caller with ``wh.executor = Executor("tcp://host:8786")``.

A cluster is used through its ``concurrent.futures`` executor (``distributed.Client(address)
.get_executor()``): the same task functions and arguments as the local process pool, so the
results are identical whatever runs them (every task carries its seed). The command still
writes every row itself, in its own process. No scheduler or wire protocol of our own.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from metaeval.errors import Argument, Message, WarehouseError

if TYPE_CHECKING:
    from metaeval.core import Store

#: The environment variable the command line reads a scheduler address from (:meth:`Executor.from_environment`).
ENV_VAR = "METAEVAL_SCHEDULER"


@dataclass(frozen=True)
class Executor:
    """What computes the tasks of a run: local worker processes (the run's ``jobs``; 1: this
    process), or the Dask distributed cluster whose scheduler is at ``scheduler``. ``source``:
    where the address was given, as errors name it (None: the parameter ``scheduler``, which the
    command line renders ``--scheduler``; else that text, e.g. ``$METAEVAL_SCHEDULER``)."""

    scheduler: str | None = None
    source: str | None = None

    @classmethod
    def from_environment(cls) -> Executor:
        """The scheduler of ``$METAEVAL_SCHEDULER`` when it is set, else local."""
        return cls(os.environ.get(ENV_VAR) or None, f"${ENV_VAR}")

    @property
    def distributed(self) -> bool:
        return bool(self.scheduler)

    def describe(self, jobs: int) -> dict[str, Any]:
        """What computes the tasks, as recorded in ``analysis_runs.parameters["executor"]``."""
        if self.scheduler:
            return {"kind": "dask", "scheduler": self.scheduler}
        return {"kind": "local", "jobs": jobs}

    def check(self) -> None:
        """Refuse, in one line, a scheduler that does not answer (:func:`check_scheduler`);
        nothing to check locally."""
        if self.scheduler:
            check_scheduler(self.scheduler, self.source)

    @contextmanager
    def pool(self, jobs: int, *, initializer=None, initargs: tuple = ()) -> Iterator[concurrent.futures.Executor | None]:
        """A ``concurrent.futures`` executor for the tasks, or None to compute them in this process
        (``jobs == 1`` and no scheduler). ``initializer(*initargs)`` prepares local workers; on a
        cluster, pass what it would set up with each task instead (:func:`shared`)."""
        if self.scheduler:
            client = _client(self.scheduler, self.source)
            try:
                yield client.get_executor()
            finally:
                client.close()
        elif jobs > 1:
            # forkserver: workers do not inherit the parent's DuckDB threads and locks
            pool = concurrent.futures.ProcessPoolExecutor(
                max_workers=jobs, mp_context=multiprocessing.get_context("forkserver"),
                initializer=initializer, initargs=initargs)
            try:
                yield pool
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
        else:
            yield None


#: This process and local workers.
LOCAL = Executor()


def of(wh: Store) -> Executor:
    """The executor of the runs of ``wh``: its :attr:`~metaeval.core.Store.executor`, else local."""
    executor = getattr(wh, "executor", None)
    return LOCAL if executor is None else executor


def shared(pool: concurrent.futures.Executor, value: Any) -> Any:
    """``value`` as an argument for many tasks of ``pool``: on a cluster, sent to the workers
    once (a Dask future, which the workers resolve to the value); locally, the value itself."""
    client = getattr(pool, "_client", None)
    if client is None:
        return value
    return client.scatter(value, broadcast=True, hash=False)


def is_distributed(pool: concurrent.futures.Executor | None) -> bool:
    return pool is not None and getattr(pool, "_client", None) is not None


#: Seconds a scheduler has to answer (connect, handshake, identity) before the run fails.
SCHEDULER_TIMEOUT = 10.0
#: The fix every scheduler error suggests.
_SCHEDULER_FIX = Message("give the address a Dask scheduler prints when it starts (`dask scheduler`: tcp://HOST:8786), "
                         "or leave ", Argument("scheduler"), " out to compute locally")


def _named(address: str, source: str | None) -> Message:
    """The address as errors name it: ``source`` and the address, or the parameter (``--scheduler``)."""
    return Message(Argument("scheduler", address) if source is None else f"{source} {address!r}")


def check_address(address: str, source: str | None = None) -> None:
    """Refuse at once, without the network, an address that is not one (``notanaddress``, an
    ``http://`` URL, a port that is not a number): one line naming where the address came from
    (``source``, e.g. ``$METAEVAL_SCHEDULER``; None: the parameter ``scheduler``), the value and
    the fix."""
    try:
        from distributed.comm.addressing import get_address_host
    except ImportError:  # pragma: no cover - distributed is a dependency
        raise WarehouseError(Message(_named(address, source), " needs the 'distributed' package")) from None
    try:
        get_address_host(address)  # the scheme and host:port
    except (ValueError, TypeError) as exc:
        raise WarehouseError(Message(_named(address, source), " is not a scheduler address "
                                     f"({' '.join(str(exc).split())}); ", _SCHEDULER_FIX)) from None


def check_scheduler(address: str, source: str | None = None) -> None:
    """Refuse, in one line naming its ``source`` (:func:`check_address`), the value and the fix, an address that is not a
    Dask scheduler's: a malformed one at once (:func:`check_address`); otherwise when nothing
    Dask answers within :data:`SCHEDULER_TIMEOUT` seconds. ``distributed.Client(address,
    timeout=...)`` alone does not bound this: its timeout covers the TCP connection, not the
    handshake read after it, so a server that accepts and stays silent (a plain HTTP server)
    hung it for minutes, and a service that answers garbage made it allocate exabytes. The probe
    is distributed's own ``connect`` and ``identity`` call, under one deadline. Called before a
    run is recorded (:func:`metaeval.runs.engine.bookkeeping.start_run`), so a bad scheduler writes nothing."""
    import asyncio
    import threading

    from distributed.comm import connect
    from distributed.core import send_recv
    from distributed.security import Security

    check_address(address, source)
    what = _named(address, source)
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
        raise WarehouseError(Message(what, f": no Dask scheduler answered within {timeout:g} s"
                                     f"{f' ({detail})' if detail else ''}; ", _SCHEDULER_FIX))
    if isinstance(reply, dict) and reply.get("type"):
        got = f"a Dask {reply['type']} answered, not a scheduler"
    else:
        detail = f"{type(error).__name__}: {' '.join(str(error).split())}" if error is not None else repr(reply)
        got = f"what answered is not a Dask scheduler ({detail[:200]})"
    raise WarehouseError(Message(what, f": {got}; ", _SCHEDULER_FIX))


def _client(address: str, source: str | None = None):
    from distributed import Client

    check_scheduler(address, source)
    try:
        return Client(address, set_as_default=False, timeout=SCHEDULER_TIMEOUT)
    except (OSError, TimeoutError) as exc:
        raise WarehouseError(Message(_named(address, source), ": cannot reach the Dask scheduler "
                                     f"({' '.join(str(exc).split())}); ", _SCHEDULER_FIX)) from None
