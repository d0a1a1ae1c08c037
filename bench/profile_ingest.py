"""Where an ingest's time goes: every SQL statement of ``metaeval.ingest.table.ingest`` that
takes over ``--min`` seconds (wall or CPU), with its wall and CPU time (user + sys of every
thread: what a machine shared with other work slows least), on a new warehouse in ``--workdir``.

    python bench/profile_ingest.py /tmp/i15bench/long_50x100000x11.csv --workdir /tmp/i15profile --human human

(The numbers bench/README.md gives per statement come from this script.)
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from metaeval.core import Store
from metaeval.ingest import table


class TimedConnection:
    """A DuckDB connection whose ``execute`` prints the statements that take a while."""

    def __init__(self, con, least: float):
        self._con, self._least = con, least

    def execute(self, sql, *args, **kwargs):
        start, cpu = time.perf_counter(), time.process_time()
        result = self._con.execute(sql, *args, **kwargs)
        spent, used = time.perf_counter() - start, time.process_time() - cpu
        if max(spent, used) >= self._least:
            print(f"{spent:7.2f} s {used:7.2f} s CPU  {' '.join(sql.split())[:130]}", flush=True)
        return result

    def __getattr__(self, name):
        return getattr(self._con, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", type=Path)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/metaeval-profile"))
    parser.add_argument("--human", action="append", default=[])
    parser.add_argument("--min", type=float, default=0.2, help="Seconds from which a statement is printed.")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    db = args.workdir / "warehouse.duckdb"
    db.unlink(missing_ok=True)
    shutil.rmtree(f"{db}.tmp", ignore_errors=True)
    start, cpu = time.perf_counter(), time.process_time()
    wh = Store.create(db)
    print(f"{time.perf_counter() - start:7.2f} s {time.process_time() - cpu:7.2f} s CPU  a new warehouse's schema")
    wh.con = TimedConnection(wh.con, args.min)
    start, cpu = time.perf_counter(), time.process_time()
    reports = table.ingest(wh, "profile", [args.file], human=args.human)
    print(f"{time.perf_counter() - start:7.2f} s {time.process_time() - cpu:7.2f} s CPU  the whole ingest: "
          f"{reports[0].contents}")
    wh.close()


if __name__ == "__main__":
    main()
