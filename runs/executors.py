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


def set_scheduler(address: str | None) -> None:
    """Use the Dask scheduler at ``address`` for the runs of this process (None: the default,
    ``$METAEVAL_SCHEDULER`` when set, else local)."""
    global _scheduler
    _scheduler = address or None


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


def _client(address: str):
    try:
        from distributed import Client
    except ImportError:  # pragma: no cover - distributed is a dependency
        raise WarehouseError("--scheduler needs the 'distributed' package") from None
    try:
        return Client(address, set_as_default=False, timeout="20s")
    except (OSError, TimeoutError) as exc:
        raise WarehouseError(f"cannot reach the Dask scheduler at {address}: {' '.join(str(exc).split())}") from None
