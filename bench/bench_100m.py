"""A WMT-sized dataset of more than 100M cells on this machine (issue 15, item 3).

Generates (seeded, deterministic: values are a hash of seed, system, input, measure, as in
``bench_ingest.py``) a long Parquet file ``system,input,measure,value`` of S systems × N inputs
× 11 measures (10 metrics ``metric.00``..``metric.09`` and one human judgment ``human``);
the default 20 × 500 000 × 11 = 110M cells. Then, each step in its own child process (wall time
and peak RSS from ``/usr/bin/time -v``):

0. DuckDB alone, ``CREATE TABLE t AS SELECT * FROM read_parquet(FILE)`` into a new database file
   (the reference the ingest's time is compared with, side by side in the same run);
1. ``metaeval ingest table FILE --dataset big --human human`` into a new warehouse;
2. ``metaeval correlate --dataset big --human human`` (10 metrics × 3 levels × 3 coefficients);
3. ``metaeval ci --dataset big --human human --metric metric.00 --metric metric.01
   --level summary --method boot-both --coefficient pearson --k K`` (two metrics; K = 1000,
   the command's default, unless ``--k`` says otherwise).

    python bench/bench_100m.py --workdir /tmp/metaeval-100m
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).parent))
from bench_ingest import MEASURES, timed  # noqa: E402


def generate(path: Path, systems: int, inputs: int, seed: int) -> None:
    """The seeded long Parquet file: a hash of (seed, system, input, measure) scaled to [0, 0.5),
    plus a system effect so that metrics correlate with the human judgment."""
    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    measures = "[" + ", ".join(f"'{m}'" for m in MEASURES) + "]"
    tmp = path.with_suffix(".parquet.part")
    con.execute(f"""
        COPY (
            SELECT 'sys' || s AS system, 'in' || i AS input, m AS measure,
                   round(s / {systems} * 0.5 + (hash({seed}, s, i, m) % 1000000) / 2e6, 6) AS value
            FROM range({systems}) AS a(s), range({inputs}) AS b(i), unnest({measures}) AS c(m)
        ) TO '{tmp}' (FORMAT parquet)""")
    con.close()
    tmp.rename(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/metaeval-100m"))
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--inputs", type=int, default=500_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--k", type=int, default=1000, help="Bootstrap resamples of the ci step (ci's default).")
    args = parser.parse_args()
    metaeval = str(Path(sys.executable).parent / "metaeval")
    args.workdir.mkdir(parents=True, exist_ok=True)
    cells = args.systems * args.inputs * len(MEASURES)
    data = args.workdir / f"long_{args.systems}x{args.inputs}x{len(MEASURES)}.parquet"
    if not data.exists():
        t_gen, m_gen = timed([sys.executable, "-c",
                              f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
                              f"from pathlib import Path; from bench_100m import generate; "
                              f"generate(Path({str(data)!r}), {args.systems}, {args.inputs}, {args.seed})"])
        print(f"generated {cells:,} cells in {t_gen:.1f} s ({m_gen:.2f} GB)", flush=True)
    warehouse, plain = args.workdir / "warehouse.duckdb", args.workdir / "plain.duckdb"
    for f in (warehouse, plain):
        f.unlink(missing_ok=True)
        shutil.rmtree(f"{f}.tmp", ignore_errors=True)
    base = [metaeval, "--db", str(warehouse)]
    reference = (f"import duckdb; con = duckdb.connect({str(plain)!r}); "
                 f"con.execute(\"CREATE TABLE t AS SELECT * FROM read_parquet('{data}')\"); con.close()")
    steps = [
        ("DuckDB alone: CREATE TABLE t AS SELECT * FROM read_parquet(file)", [sys.executable, "-c", reference]),
        ("ingest table", [*base, "ingest", "table", str(data), "--dataset", "big", "--human", "human"]),
        ("correlate", [*base, "correlate", "--dataset", "big", "--human", "human"]),
        (f"ci boot-both summary pearson, 2 metrics, k={args.k}",
         [*base, "ci", "--dataset", "big", "--human", "human", "--metric", "metric.00", "--metric", "metric.01",
          "--level", "summary", "--method", "boot-both", "--coefficient", "pearson", "--k", str(args.k)]),
    ]
    print(f"\n{cells:,} cells ({data.stat().st_size / 1e6:.0f} MB of Parquet), {args.systems} systems × "
          f"{args.inputs:,} inputs × {len(MEASURES)} measures\n\n| step | time | peak RSS |\n| --- | --- | --- |",
          flush=True)
    times = {}
    for label, command in steps:
        t, m = timed(command)
        times[label] = t
        ratio = f" ({t / times[steps[0][0]]:.1f}× DuckDB alone)" if label == "ingest table" else ""
        print(f"| `{label}` | {t:.1f} s{ratio} | {m:.2f} GB |", flush=True)
    plain.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
