"""How fast the command line answers (issue 27, item 6), side by side with `python -c 'import duckdb'`.

    python bench/bench_startup.py                    # SummEval from ../shared/data, 7 runs per command
    python bench/bench_startup.py --runs 15 --workdir /tmp/startup
    python bench/bench_startup.py --baseline /work/main/.venv/bin/python   # side by side with another install

Three warehouses: SummEval (42 measures, 16 x 100 cells, from ../shared/data/summeval), the demo's
(`metaeval demo --k 100`: 12 systems x 50 inputs, 5 measures) and one of 20 measures made from a
generated long CSV (``--grid SYSTEMS INPUTS``, default 50 x 1000: 19 metrics and one human
judgment, 1 000 000 cells, values a seeded hash); the light commands are timed on each, the
other commands on SummEval.

Builds a SummEval warehouse (the README's ingest commands) and runs an up-to-date `correlate`
once to store its rows; then times each command as a new process (CPU seconds, user + system,
of the whole process: interpreter start, imports, the query, printing), `--runs` times, each run
alternating with a run of the reference, also a new process (A B A B ...: both sides see the
same load), and reports for both the median and minimum CPU and the median peak resident memory,
and the ratio of the medians. The reference is the interpreter importing DuckDB alone (what both
sides do: start Python, import DuckDB; the command also parses its line, opens the warehouse,
queries and prints): no command can be faster than that. Targets: the light commands (`--help`,
`datasets`, `measures`) within 1.5x the reference's CPU (issue 47 item 5), `results` and `sql` under 0.5 s, an up-to-date
`correlate` under 1 s. Opening a warehouse is DuckDB's own cost too: the line
`python -c 'duckdb.connect(warehouse)'` shows it (DuckDB reading the catalog of the schema's
tables and views), the floor of every command that reads the warehouse.

``--baseline PYTHON``: also time each command with the ``metaeval`` installed beside that
interpreter (another checkout, e.g. the code before a change), each run of one alternating with
a run of the other, so that both see the same load (its bytecode is written first too).

Also lists, for `datasets`, whether scipy, matplotlib or sklearn-like heavy modules were imported
(they must not be on the light path) and the modules it imports beyond `import duckdb` with the
most import time of their own (`python -X importtime`, one run), the stages of `datasets` and
`measures` in one process (import duckdb, opening the warehouse, our imports, the command's own
queries and printing: `_stages`), and times `Store.matrix` of every SummEval measure with
the measures fetched together (the default) and one query per measure (as before), same values.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "summeval"
HUMAN = "expert.relevance"


#: The folders of the package (one import name, a folder per floor: an editable install maps them).
PACKAGES = ("metaeval", "metaeval.schema", "metaeval.ingest", "metaeval.analyses", "metaeval.runs", "metaeval.cli")


def compile_package(python: str | None = None) -> None:
    """Write the package's bytecode (``__pycache__``, as ``pip install`` of a wheel does, or any
    first run without ``PYTHONDONTWRITEBYTECODE``), so that a timed command does not compile its
    modules from source at every start (about 0.2 s of CPU for the leaderboard): the machine's
    shells set ``PYTHONDONTWRITEBYTECODE=1``, which a user's install does not. ``python``: the
    interpreter whose ``metaeval`` is compiled (default this one)."""
    code = ("import compileall, importlib.util\n"
            f"for name in {PACKAGES!r}:\n"
            "    for folder in importlib.util.find_spec(name).submodule_search_locations:\n"
            "        compileall.compile_dir(folder, quiet=2)")
    subprocess.run([python or sys.executable, "-c", code], check=True)


def _metaeval(db: Path, *args: str, python: str | None = None) -> list[str]:
    """The installed ``metaeval`` script (as a user runs it), beside this interpreter (or ``python``)."""
    script = Path(python or sys.executable).parent / "metaeval"
    return [str(script), "--db", str(db), *args]


def _once(cmd: list[str]) -> tuple[float, float]:
    """(CPU seconds, user + system, peak resident MB) of ``cmd`` run as a new process: on a
    loaded machine the wall clock measures the other processes too."""
    with tempfile.TemporaryFile() as err:
        process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed: {err.read().decode().strip()}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024      # ru_maxrss: KiB on Linux


def _time(sides: list[list[str]], runs: int) -> list[tuple[float, float, float]]:
    """(median CPU s, min CPU s, median peak MB) of each command of ``sides``, each a fresh
    process, the sides alternated run by run (A B A B ...) so that they see the same load."""
    cpu, peak = [[] for _ in sides], [[] for _ in sides]
    for _ in range(runs):
        for i, cmd in enumerate(sides):
            c, m = _once(cmd)
            cpu[i].append(c)
            peak[i].append(m)
    return [(statistics.median(c), min(c), statistics.median(m)) for c, m in zip(cpu, peak)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--baseline", default=None, metavar="PYTHON",
                        help="Also time the metaeval installed beside this interpreter, interleaved.")
    parser.add_argument("--grid", type=int, nargs=2, default=(50, 1000), metavar=("SYSTEMS", "INPUTS"),
                        help="The 20-measure warehouse's systems x inputs (default 50 x 1000).")
    parser.add_argument("--only", choices=("summeval", "demo", "m20"), action="append", default=None,
                        help="Only these warehouses (repeatable; default all three).")
    parser.add_argument("--no-compile", action="store_true",
                        help="Do not write the package's bytecode first (compile_package).")
    args = parser.parse_args()
    if not args.no_compile:
        compile_package()
        if args.baseline:
            compile_package(args.baseline)
    if not DATA.is_dir():
        raise SystemExit(f"needs {DATA} (the shared SummEval data)")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="startup-"))
    work.mkdir(parents=True, exist_ok=True)
    only = args.only or ["summeval", "demo", "m20"]
    print(f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}; {args.runs} runs of each side, alternated; "
          "CPU s = user + sys of the whole process, peak = its maximum resident set; both sides start Python and "
          "import DuckDB, the command also parses its line, opens the warehouse, queries, prints and ends")
    head = f"{'command':48} {'CPU med':>7} {'min':>6} {'peak MB':>7} {'ref CPU':>7} {'ref MB':>6} {'x ref':>6}"
    print(head + (f" {'baseline CPU':>12} {'peak MB':>7} {'x ref':>6}" if args.baseline else ""))
    db = work / "summeval.duckdb"
    if "summeval" in only:
        _summeval(db)
        correlate = ("correlate", "--dataset", "summeval", "--human", HUMAN)
        subprocess.run(_metaeval(db, *correlate), check=True, stdout=subprocess.DEVNULL)   # stored: up to date
        _table(db, "summeval", {
            "metaeval --help": ("--help",),
            "metaeval datasets": ("datasets",),
            "metaeval measures summeval": ("measures", "summeval"),
            "metaeval results correlations": ("results", "correlations", "--dataset", "summeval"),
            "metaeval sql 'SELECT 1'": ("sql", "SELECT 1"),
            "metaeval correlate (up to date)": correlate}, args)
    if "demo" in only:
        demo = work / "demo.duckdb"
        if not demo.exists():
            subprocess.run(_metaeval(demo, "demo", "--k", "100"), check=True, stdout=subprocess.DEVNULL)
        _table(demo, "demo", {"metaeval datasets": ("datasets",), "metaeval measures demo": ("measures", "demo")},
               args)
    if "m20" in only:
        systems, inputs = args.grid
        m20 = work / f"m20_{systems}x{inputs}.duckdb"
        if not m20.exists():
            generated = work / f"m20_{systems}x{inputs}.csv"
            generate_m20(generated, systems, inputs)
            subprocess.run(_metaeval(m20, "init"), check=True, stdout=subprocess.DEVNULL)
            subprocess.run(_metaeval(m20, "ingest", "table", str(generated), "--dataset", "m20", "--human", "human"),
                           check=True, stdout=subprocess.DEVNULL)
        _table(m20, f"20 measures, {systems} x {inputs}",
               {"metaeval datasets": ("datasets",), "metaeval measures m20": ("measures", "m20")}, args)
    if "summeval" in only:
        probe = ("import sys\nfrom metaeval.cli import main\n"
                 "try:\n    main(['--db', sys.argv[1], 'datasets'])\nexcept SystemExit:\n    pass\n"
                 "heavy = [m for m in ('pandas', 'numpy', 'scipy', 'matplotlib', 'sklearn', 'rich', 'distributed', "
                 "'nltk', 'sacrebleu') if m in sys.modules]\n"
                 "print('heavy modules imported by datasets:', heavy or 'none', file=sys.stderr)")
        out = subprocess.run([sys.executable, "-c", probe, str(db)], capture_output=True, text=True)
        print(out.stderr.strip().splitlines()[-1])
        _imports(db)
        _stages(db, args.runs)
        _matrix(db, args.runs)


def _summeval(db: Path) -> None:
    """The SummEval warehouse (the README's ingest commands), unless ``db`` exists."""
    if not db.exists():
        files = sorted(str(p) for p in DATA.glob("*.jsonl"))
        subprocess.run(_metaeval(db, "init"), check=True, stdout=subprocess.DEVNULL)
        subprocess.run(_metaeval(db, "ingest", "sacrerouge", *files, "--dataset", "summeval", "--human", "expert.*",
                                 "--human", "turker.*"), check=True, stdout=subprocess.DEVNULL)


def generate_m20(path: Path, systems: int, inputs: int, seed: int = 1) -> None:
    """A seeded long CSV (system, input, measure, value) of ``systems`` x ``inputs`` cells of 20
    measures: ``metric.00`` .. ``metric.18`` and ``human``, each value a hash of (seed, system,
    input, measure) scaled to [0, 1) plus a system effect (bench_ingest.py's values), written by
    DuckDB in a child process (this one stays small)."""
    code = ("import sys, duckdb\n"
            "con = duckdb.connect(config={'autoinstall_known_extensions': False, 'autoload_known_extensions': False})\n"
            "path, s, i, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])\n"
            "names = [f'metric.{k:02d}' for k in range(19)] + ['human']\n"
            "con.execute(f\"\"\"COPY (SELECT 'sys' || a.s AS system, 'in' || b.i AS input, c.m AS measure,\n"
            "    round(a.s / {s} * 0.5 + (hash({seed}, a.s, b.i, c.m) % 1000000) / 2e6, 6) AS value\n"
            "    FROM range({s}) AS a(s), range({i}) AS b(i), unnest({names!r}) AS c(m) ORDER BY 1, 2, 3)\n"
            "    TO '{path}' (HEADER, DELIMITER ',')\"\"\")\n")
    subprocess.run([sys.executable, "-c", code, str(path), str(systems), str(inputs), str(seed)], check=True)


def _table(db: Path, title: str, commands: dict[str, tuple], args) -> None:
    """Time ``commands`` (name -> arguments) on the warehouse ``db``, each against the reference
    (and the baseline's install), alternated; first the opening of ``db`` by DuckDB alone."""
    reference = [sys.executable, "-c", "import duckdb"]
    print(f"-- {title} ({db.name}, {db.stat().st_size / 1e6:.1f} MB)")
    connect = [sys.executable, "-c", f"import duckdb; duckdb.connect({str(db)!r}, read_only=True)"]
    for name, argv in {"python -c 'duckdb.connect(warehouse)'": None, **commands}.items():
        cmd = connect if argv is None else _metaeval(db, *argv)
        base = _metaeval(db, *argv, python=args.baseline) if args.baseline and argv is not None else None
        timed = _time([reference, cmd] + ([base] if base else []), args.runs)
        ref, own = timed[0], timed[1]
        line = (f"{name:48} {own[0]:7.3f} {own[1]:6.3f} {own[2]:7.1f} {ref[0]:7.3f} {ref[2]:6.1f} "
                f"{own[0] / ref[0]:6.2f}")
        if base:
            line += f" {timed[2][0]:12.3f} {timed[2][2]:7.1f} {timed[2][0] / ref[0]:6.2f}"
        light = argv is not None and (argv[0] == "--help" or argv[0] in ("datasets", "measures") and len(argv) <= 2)
        print(line + ("  (target 1.5)" if light else ""))


def _import_times(code: str, *argv: str) -> dict[str, int]:
    """Module -> its own import time in microseconds (``python -X importtime``) of ``code``."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code, *argv], capture_output=True, text=True)
    times = {}
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            own, _, name = line.removeprefix("import time:").split("|")
            times[name.strip()] = int(own)
    return times


def _imports(db: Path, shown: int = 12) -> None:
    """What `metaeval datasets` imports beyond `import duckdb`: the modules with the most import
    time of their own (one run, so a rough guide), with the total."""
    code = ("import sys\nfrom metaeval.cli import main\n"
            "try:\n    main(['--db', sys.argv[1], 'datasets'])\nexcept SystemExit:\n    pass")
    duckdb_alone = _import_times("import duckdb")
    extra = {m: t for m, t in _import_times(code, str(db)).items() if m not in duckdb_alone}
    top = sorted(extra.items(), key=lambda kv: -kv[1])[:shown]
    print(f"imported by datasets beyond import duckdb: {len(extra)} modules, {sum(extra.values()) / 1e3:.0f} ms of "
          "their own; most: " + ", ".join(f"{m} {t / 1e3:.0f}" for m, t in top))


#: One process timing the stages of a light command in turn (CPU seconds, ``time.process_time``):
#: importing DuckDB, importing the command line and the modules the command uses, and the command,
#: of which the time inside ``duckdb.connect`` (opening the warehouse, timed where the command
#: opens it: ``connection.duckdb_connect``).
_STAGES = """import sys, time
t0 = time.process_time()
import duckdb
t1 = time.process_time()
from metaeval import connection
from metaeval.cli import main
import metaeval.cli.commands.warehouse, metaeval.core, metaeval.rows, metaeval.present.plain
t2 = time.process_time()
opening = []
def timed(*args, _connect=connection.duckdb_connect, **kwargs):
    start = time.process_time()
    try:
        return _connect(*args, **kwargs)
    finally:
        opening.append(time.process_time() - start)
connection.duckdb_connect = timed
try:
    main(["--db", sys.argv[1], *sys.argv[2:]])
except SystemExit:
    pass
t3 = time.process_time()
print("STAGES", t1 - t0, sum(opening), t2 - t1, t3 - t2 - sum(opening), file=sys.stderr)
"""


def _stages(db: Path, runs: int) -> None:
    """Where the CPU of `datasets` and `measures` goes beyond starting Python (the median of
    ``runs`` processes each): import duckdb, opening the warehouse (``duckdb.connect``), our
    imports, and the command's own work (parsing its line, the version check, its queries,
    printing and closing: the command minus the opening)."""
    for argv in (("datasets",), ("measures", "summeval")):
        stages = []
        for _ in range(runs):
            done = subprocess.run([sys.executable, "-c", _STAGES, str(db), *argv], capture_output=True, text=True,
                                  check=True)
            line = next(x for x in done.stderr.splitlines() if x.startswith("STAGES "))
            stages.append([float(x) for x in line.split()[1:]])
        duck, connect, ours, command = (statistics.median(s[i] for s in stages) for i in range(4))
        print(f"stages of `metaeval {' '.join(argv)}` (CPU s, medians of {runs}, in one process): import duckdb "
              f"{duck:.3f}, duckdb.connect(warehouse) {connect:.3f}, our imports {ours:.3f}, the command's "
              f"queries, printing and closing {command:.3f}")


def _matrix(db: Path, runs: int) -> None:
    """Store.matrix of every measure: one query for the grids that fit MATRIX_CHUNK_CELLS vs
    one query per measure; the minimum of ``runs`` each, and that both give the same values."""
    import numpy as np

    from metaeval import Store, core

    default = core.MATRIX_CHUNK_CELLS
    with Store(db, read_only=True) as wh:
        names = list(wh.measure_kinds("summeval")["measure"])
        times, values = {}, {}
        for label, cells in (("measures together", default), ("one query per measure", 1)):
            core.MATRIX_CHUNK_CELLS = cells
            best = float("inf")
            for _ in range(runs):
                start = time.perf_counter()
                values[label] = wh.matrix("summeval", names).values
                best = min(best, time.perf_counter() - start)
            times[label] = best
        core.MATRIX_CHUNK_CELLS = default
    same = np.array_equal(*values.values(), equal_nan=True)
    print(f"Store.matrix of {len(names)} measures: "
          + ", ".join(f"{k} {v:.3f} s" for k, v in times.items()) + f" (min of {runs}); same values: {same}")


if __name__ == "__main__":
    main()
