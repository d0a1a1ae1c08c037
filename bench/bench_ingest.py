"""Ingest and correlate at scale, side by side with DuckDB's own CSV reader, in one run.

Generates (seeded, deterministic) a long CSV ``system,input,measure,value`` of S systems ×
N inputs × 11 measures (10 metrics ``metric.00``..``metric.09`` and one human judgment
``human``; with ``--kind`` also a fifth column ``kind``, ``automatic`` or ``human``, as in
shared/docs/performance-notes.md's file), then measures, each side a fresh process started from
the same input file (CPU time, user + sys of the whole process and its threads, and peak RSS,
``ru_maxrss``, both from ``os.wait4``; CPU rather than wall time, which a machine shared with
other work inflates far more; the load average is printed before each pair of runs):

1. DuckDB alone: a new Python process that imports ``duckdb``, runs
   ``CREATE TABLE t AS SELECT * FROM read_csv(file)`` (DuckDB's own sniffing and types) into a
   new database file and closes it — it parses and stores the rows, no more;
2. ``metaeval ingest table FILE --dataset bench --human human`` into a new warehouse (the CLI
   script, as a user runs it: it parses the file, hashes it, checks every value, id and cell
   given twice, assigns the ids and stores scores, judgments, systems, inputs, measures and
   the ingest's record in one transaction); 1 and 2
   ``--repeat`` times each (default 3), alternated, each reported as the median of its runs;
3. ``metaeval correlate --dataset bench --human human`` (all metrics, 3 levels × 3 coefficients);
4. with ``--jsonl``: the same rows as a JSONL file (DuckDB ``COPY ... (FORMAT json)``), DuckDB alone
   (``CREATE TABLE t AS SELECT * FROM read_json(file)``) and ``metaeval ingest table`` on it;
5. with ``--bad``: ``metaeval ingest table`` of a copy of the CSV with one bad value on an extra
   last line, which DuckDB's reading steps aside for: the exact reader's diagnosis (it must fail
   naming that line, in bounded memory).

    python bench/bench_ingest.py --workdir /tmp/metaeval-bench --scale 1 --scale 4 --no-correlate

Scale 1 is 50 × 10 000 × 11 = 5.5M rows; scale 4 has 4× the inputs (22M rows), scale 10 10× (55M).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


MEASURES = [f"metric.{i:02d}" for i in range(10)] + ["human"]


def generate(path: Path, systems: int, inputs: int, seed: int, kind: bool = False) -> None:
    """A seeded long CSV: values are a hash of (seed, system, input, measure) scaled to [0, 1),
    the human judgment plus a system effect so that metrics correlate with something; ``kind``:
    with a column ``kind`` (``human`` for the measure ``human``, else ``automatic``)."""
    import duckdb  # here, not in the bench's own process (see in_child)

    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    measures = "[" + ", ".join(f"'{m}'" for m in MEASURES) + "]"
    con.execute(f"""
        COPY (
            SELECT 'sys' || s AS system, 'in' || i AS input, m AS measure,
                   round(s / {systems} * 0.5 + (hash({seed}, s, i, m) % 1000000) / 2e6, 6) AS value
                   {", CASE WHEN m = 'human' THEN 'human' ELSE 'automatic' END AS kind" if kind else ""}
            FROM range({systems}) AS a(s), range({inputs}) AS b(i), unnest({measures}) AS c(m)
            ORDER BY s, i, m
        ) TO '{path}' (HEADER, DELIMITER ',')""")
    con.close()


def to_jsonl(csv: str, jsonl: str) -> None:
    """The rows of ``csv`` as a JSONL file ``jsonl``."""
    import duckdb  # here, not in the bench's own process (see in_child)

    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    con.execute(f"COPY (SELECT * FROM read_csv('{csv}')) TO '{jsonl}' (FORMAT json)")
    con.close()


def in_child(function: str, *args) -> None:
    """``function(*args)`` of this module in a child process: this process must stay small, as a
    child's ``ru_maxrss`` is at least its parent's peak when it was started (Linux copies the
    high-water mark at fork and exec), so generating a file here would inflate both sides' peaks."""
    code = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_ingest; "
            f"bench_ingest.{function}(*{[str(a) if isinstance(a, Path) else a for a in args]!r})")
    subprocess.run([sys.executable, "-c", code], check=True)


def run(command: list[str]) -> tuple[int, str, float, float]:
    """(exit code, its output and errors, CPU seconds, peak RSS in GB) of ``command`` as a new
    process: the CPU time is user + sys of the whole process (every thread), from ``os.wait4``,
    which a machine shared with other work slows far less than the wall time; the peak RSS its
    ``ru_maxrss``."""
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(process.pid, 0)
        out.seek(0)
        text = out.read().decode(errors="replace")
    return (os.waitstatus_to_exitcode(status), text, usage.ru_utime + usage.ru_stime,
            usage.ru_maxrss / 1024 / 1024)


def timed(command: list[str], before=None) -> tuple[float, float]:
    """(CPU seconds, peak RSS in GB) of ``command`` as a new process (:func:`run`), which must
    succeed. ``before``: called before the command (to remove the database file it writes)."""
    if before is not None:
        before()
    code, text, cpu, rss = run(command)
    if code != 0:
        sys.exit(f"failed: {' '.join(command)}\n{text[-4000:]}")
    return cpu, rss


def repeated(command: list[str], times: int, before) -> tuple[float, float]:
    """The median CPU seconds and the largest peak RSS (GB) of ``times`` runs of ``command``."""
    runs = [timed(command, before) for _ in range(times)]
    return statistics.median(c for c, _ in runs), max(m for _, m in runs)


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/metaeval-bench"))
    parser.add_argument("--scale", type=int, action="append", help="Inputs × 10 000 (repeatable). Default: 1.")
    parser.add_argument("--systems", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kind", action="store_true",
                        help="Files with a fifth column kind (automatic / human), as performance-notes.md's.")
    parser.add_argument("--repeat", type=int, default=3,
                        help="Runs of DuckDB's read_csv and of the ingest each, alternated (median CPU time).")
    parser.add_argument("--no-correlate", action="store_true")
    parser.add_argument("--jsonl", action="store_true", help="Also time the same rows as a JSONL table.")
    parser.add_argument("--bad", action="store_true", help="Also time the diagnosis of a file with a bad last line.")
    parser.add_argument("--baseline", default=None, metavar="METAEVAL",
                        help="Also time this metaeval executable's ingest (e.g. another checkout's venv), in the "
                             "same alternation: before and after a change under the same load.")
    parser.add_argument("--no-compile", action="store_true",
                        help="Do not write the package's bytecode first (bench_startup.compile_package).")
    args = parser.parse_args()
    if not args.no_compile:
        from bench_startup import compile_package

        compile_package()
    scales = args.scale or [1]
    metaeval = str(Path(sys.executable).parent / "metaeval")
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for scale in scales:
        inputs = 10_000 * scale
        csv = args.workdir / f"long_{args.systems}x{inputs}x{len(MEASURES)}{'_kind' if args.kind else ''}.csv"
        if not csv.exists():
            in_child("generate", csv, args.systems, inputs, args.seed, args.kind)
        n = args.systems * inputs * len(MEASURES)
        size = csv.stat().st_size / 1e6
        plain = args.workdir / "plain.duckdb"
        warehouse = args.workdir / "warehouse.duckdb"

        def fresh() -> None:
            for f in (plain, warehouse):
                f.unlink(missing_ok=True)
                Path(f"{f}.wal").unlink(missing_ok=True)
                shutil.rmtree(f"{f}.tmp", ignore_errors=True)

        code = (f"import duckdb; con = duckdb.connect({str(plain)!r}); "
                f"con.execute(\"CREATE TABLE t AS SELECT * FROM read_csv('{csv}')\"); con.close()")
        ingest = [metaeval, "--db", str(warehouse), "ingest", "table", str(csv), "--dataset", "bench", "--human", "human"]
        duck_runs, ingest_runs, base_runs = [], [], []
        print(f"{csv.name}: {n:,} cells, {size:.0f} MB; DuckDB side: python -c {code!r}; "
              f"ingest side: {' '.join(ingest)}", flush=True)
        for _ in range(args.repeat):  # alternated, so that a change in the machine's load touches both alike
            print(f"  load average {load_average()}", flush=True)
            duck_runs.append(timed([sys.executable, "-c", code], fresh))
            ingest_runs.append(timed(ingest, fresh))
            if args.baseline:
                base_runs.append(timed([args.baseline, *ingest[1:]], fresh))
        t_duck, m_duck = statistics.median(c for c, _ in duck_runs), max(m for _, m in duck_runs)
        t_ing, m_ing = statistics.median(c for c, _ in ingest_runs), max(m for _, m in ingest_runs)
        line = {"rows": n, "MB": size, "duckdb_s": t_duck, "duckdb_gb": m_duck, "ingest_s": t_ing, "ingest_gb": m_ing,
                "duckdb_all": [c for c, _ in duck_runs], "ingest_all": [c for c, _ in ingest_runs]}
        if base_runs:
            t_base = statistics.median(c for c, _ in base_runs)
            print(f"{n:,} rows: baseline ingest table {t_base:.2f} s {max(m for _, m in base_runs):.2f} GB "
                  f"({t_base / t_duck:.2f}× the CPU time; runs {', '.join(f'{c:.2f}' for c, _ in base_runs)})",
                  flush=True)
        if not args.no_correlate:
            line["correlate_s"], line["correlate_gb"] = timed(
                [metaeval, "--db", str(warehouse), "correlate", "--dataset", "bench", "--human", "human"])
        if args.jsonl:
            jsonl = csv.with_suffix(".jsonl")
            if not jsonl.exists():
                in_child("to_jsonl", csv, jsonl)
            fresh()
            code = (f"import duckdb; con = duckdb.connect({str(plain)!r}); "
                    f"con.execute(\"CREATE TABLE t AS SELECT * FROM read_json('{jsonl}')\"); con.close()")
            line["json_duckdb_s"], _ = timed([sys.executable, "-c", code])
            line["json_s"], line["json_gb"] = timed([metaeval, "--db", str(warehouse), "ingest", "table", str(jsonl),
                                                     "--dataset", "bench", "--human", "human"])
        if args.bad:
            bad = args.workdir / f"bad_{csv.name}"
            shutil.copyfile(csv, bad)
            with bad.open("a") as f:
                f.write("sys0,in0,metric.00,not-a-number" + (",automatic\n" if args.kind else "\n"))
            fresh()
            rc, text, line["bad_s"], line["bad_gb"] = run([metaeval, "--db", str(warehouse), "ingest", "table",
                                                             str(bad), "--dataset", "bench", "--human", "human"])
            expected = f"{bad}:{n + 2}: field 'value': expected a number"
            if rc == 0 or expected not in text:
                sys.exit(f"the bad file's ingest did not fail as expected ({expected!r}):\n{text[-2000:]}")
            bad.unlink()
        rows.append(line)
        print(f"{n:,} rows ({size:.0f} MB): DuckDB read_csv {t_duck:.2f} s {m_duck:.2f} GB | "
              f"metaeval ingest table {t_ing:.2f} s {m_ing:.2f} GB ({t_ing / t_duck:.2f}× the CPU time; runs: DuckDB "
              f"{', '.join(f'{c:.2f}' for c in line['duckdb_all'])}, ingest {', '.join(f'{c:.2f}' for c in line['ingest_all'])})"
              + (f" | correlate {line['correlate_s']:.1f} s {line['correlate_gb']:.2f} GB" if "correlate_s" in line
                 else "")
              + (f" | JSONL: DuckDB read_json {line['json_duckdb_s']:.2f} s, ingest {line['json_s']:.2f} s "
                 f"{line['json_gb']:.2f} GB" if "json_s" in line else "")
              + (f" | bad last line diagnosed in {line['bad_s']:.1f} s {line['bad_gb']:.2f} GB" if "bad_s" in line
                 else ""), flush=True)
    print("\n| rows | CSV | DuckDB read_csv | metaeval ingest table | ratio | correlate | bad last line diagnosed |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        corr = f"{r['correlate_s']:.1f} s, {r['correlate_gb']:.2f} GB" if "correlate_s" in r else "—"
        bad = f"{r['bad_s']:.1f} s, {r['bad_gb']:.2f} GB" if "bad_s" in r else "—"
        print(f"| {r['rows']:,} | {r['MB']:.0f} MB | {r['duckdb_s']:.2f} s, {r['duckdb_gb']:.2f} GB | "
              f"{r['ingest_s']:.2f} s, {r['ingest_gb']:.2f} GB | {r['ingest_s'] / r['duckdb_s']:.2f}× | {corr} | {bad} |")


if __name__ == "__main__":
    main()
