"""Stored rows of `ingest table` identical between two installs (e.g. main's and a branch's).

Each install's ``metaeval`` ingests the same files, in order, into a new warehouse of its own
(``--dataset d --human 'human*' --allow-new``; a ``+`` joins files of one command), then the two
warehouses' rows are compared with ``EXCEPT ALL`` both ways, ids resolved to names: datasets,
systems, inputs, measures, scores, judgments, and ingests but their time and command line. The
commands' exit codes and messages are printed for both.

    python bench/ingest_identity.py --base /tmp/base/.venv/bin/metaeval --workdir /tmp/identity FILE...
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

QUERIES = {
    "datasets": "SELECT name FROM {d}.datasets",
    "systems": "SELECT d.name, s.name, s.type FROM {d}.systems s JOIN {d}.datasets d USING (dataset_id)",
    "inputs": "SELECT d.name, i.name FROM {d}.inputs i JOIN {d}.datasets d USING (dataset_id)",
    "measures": "SELECT d.name, m.name, m.kind, m.direction FROM {d}.measures m JOIN {d}.datasets d USING (dataset_id)",
    "scores": "SELECT s.name, i.name, m.name, v.value FROM {d}.scores v JOIN {d}.systems s USING (system_id) "
              "JOIN {d}.inputs i USING (input_id) JOIN {d}.measures m USING (measure_id)",
    "judgments": "SELECT s.name, i.name, m.name, v.annotator, v.value FROM {d}.judgments v JOIN {d}.systems s "
                 "USING (system_id) JOIN {d}.inputs i USING (input_id) JOIN {d}.measures m USING (measure_id)",
    "ingests": "SELECT format, file, sha256, options, rows, inserted, replaced FROM {d}.ingests",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--base", required=True, help="The other install's metaeval script.")
    parser.add_argument("--mine", default=str(Path(sys.executable).parent / "metaeval"))
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/metaeval-identity"))
    args = parser.parse_args()
    import duckdb

    args.workdir.mkdir(parents=True, exist_ok=True)
    dbs = []
    for tag, exe in (("base", args.base), ("mine", args.mine)):
        db = args.workdir / f"{tag}.duckdb"
        for p in (db, Path(f"{db}.wal")):
            p.unlink(missing_ok=True)
        for files in args.files:
            done = subprocess.run([exe, "--db", str(db), "ingest", "table", *files.split("+"), "--dataset", "d",
                                   "--human", "human*", "--allow-new"], capture_output=True, text=True)
            print(tag, done.returncode, (done.stdout + done.stderr).strip()[-300:])
        dbs.append(db)
    con = duckdb.connect()
    con.execute(f"ATTACH '{dbs[0]}' AS a (READ_ONLY); ATTACH '{dbs[1]}' AS b (READ_ONLY)")
    same = True
    for name, sql in QUERIES.items():
        n = [con.execute(f"SELECT count(*) FROM ({sql.format(d=x)})").fetchone()[0] for x in "ab"]
        diff = [con.execute(f"SELECT count(*) FROM ({sql.format(d=x)} EXCEPT ALL {sql.format(d=y)})").fetchone()[0]
                for x, y in ("ab", "ba")]
        print(f"{name}: rows {n[0]} / {n[1]}, base-mine {diff[0]}, mine-base {diff[1]}")
        same = same and n[0] == n[1] and diff == [0, 0]
    print("IDENTICAL" if same else "DIFFERENT")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
