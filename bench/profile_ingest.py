"""Where an ingest's time goes: every SQL statement of ``metaeval.ingest.table.ingest`` that
takes over ``--min`` seconds, with its time, on a new warehouse in ``--workdir``.

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
        start = time.perf_counter()
        result = self._con.execute(sql, *args, **kwargs)
        spent = time.perf_counter() - start
        if spent >= self._least:
            print(f"{spent:7.2f} s  {' '.join(sql.split())[:140]}", flush=True)
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
    wh = Store.create(db)
    wh.con = TimedConnection(wh.con, args.min)
    start = time.perf_counter()
    reports = table.ingest(wh, "profile", [args.file], human=args.human)
    print(f"{time.perf_counter() - start:7.2f} s  the whole ingest: {reports[0].contents}")
    wh.close()


if __name__ == "__main__":
    main()
