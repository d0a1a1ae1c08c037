"""Arena votes to a leaderboard (issue 35 item 6, issue 47 item 6), side by side with FastChat's
own Bradley-Terry bootstrap on the same CSV: both sides start from the file, as fresh processes,
alternated.

    python bench/bench_leaderboard.py --fastchat PATH/fastchat/serve/monitor/rating_systems.py
    python bench/bench_leaderboard.py --fastchat ... --votes 1000000 --systems 150 --repeat 3
    python bench/bench_leaderboard.py --votes 1000000 --systems 150 --no-fastchat   # ours alone

What each side does, from the same seeded synthetic CSV (``--systems`` strengths ~ N(0, 1)
logits, each vote a uniformly drawn ordered pair, a tie with probability 0.2, else a
Bradley-Terry draw; columns model_a, model_b, winner):

- **ours**: ``metaeval ingest preferences VOTES.csv`` into a new warehouse (reading, checking and
  storing every vote), then ``metaeval leaderboard --k ROUNDS --format json`` (the fit, ROUNDS
  bootstrap rounds, the tests, fragility, writing the rows): two processes, their CPU added,
  their peak memory the larger.
- **FastChat**: its own code, never in this repository: ``rating_systems.py`` of lm-sys/FastChat
  (``fastchat/serve/monitor/``; bring it with ``git clone``, ``--fastchat`` is its path),
  imported from that path in a process that reads the CSV with ``pandas.read_csv`` and calls
  ``compute_bt(df)`` and ``compute_bootstrap_bt(df, num_round=ROUNDS)`` (its multiprocessing
  pool of ``os.cpu_count()`` workers, its seed 0). It needs numpy, scipy, pandas and tqdm:
  ``--fastchat-python`` names an interpreter that has them (default this one; e.g. a venv
  outside the repository).

And the ingest alone against **DuckDB reading and grouping the same file**: a fresh process
that imports duckdb and counts the CSV's votes by ``model_a, model_b, winner`` with ``read_csv``
(the columns named and typed, as the ingest's reader names them), what a Bradley-Terry fit
needs from the file (issue 47 item 1: the ingest within 3x its CPU, peak memory under 600 MB).

The floor under the ingest, **DuckDB storing the same rows**: a fresh process that opens a
warehouse made empty by ``metaeval init`` (untimed) and, in one transaction, inserts the systems,
the inputs (``vote-<line>``, each vote its own as the ingest stores them) and the preferences
(systems in name order) with three INSERT ... SELECT statements from ``read_csv``, then commits:
what the warehouse's schema (its keys and unique names) costs whoever writes the votes, with no
checks, no messages and no merge.

CPU is user + system time of the process and its children (``resource.getrusage`` of a wrapper),
peak memory the largest resident set of any of them. The machine is shared: CPU time, not
wall-clock, is the comparison, and each round runs ours then FastChat's so that a change in load
touches both alike. The package's bytecode is written first (``bench_startup.compile_package``,
as an install does; ``--no-compile``: not). It times the ``metaeval`` installed beside this
interpreter (``--python`` another one, e.g. another checkout's venv).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def synthetic_votes(path: Path, n_votes: int, n_systems: int, seed: int) -> None:
    import numpy as np

    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, n_systems)
    a = rng.integers(0, n_systems, n_votes)
    b = (a + rng.integers(1, n_systems, n_votes)) % n_systems
    win = rng.random(n_votes) < 1 / (1 + np.exp(-(strength[a] - strength[b])))
    tie = rng.random(n_votes) < 0.2
    winner = np.where(tie, "tie", np.where(win, "model_a", "model_b"))
    names = np.array([f"model-{i:03d}" for i in range(n_systems)])
    with open(path, "w") as f:
        f.write("model_a,model_b,winner\n")
        for i in range(0, n_votes, 100_000):
            block = slice(i, i + 100_000)
            f.write("".join(f"{x},{y},{w}\n" for x, y, w in zip(names[a[block]], names[b[block]], winner[block])))


# --- FastChat's own code, imported from the path given ---------------------------------------------
def _fastchat(path: str, csv: str, rounds: int, out: str) -> None:
    """Read ``csv`` and run FastChat's ``compute_bt`` and ``compute_bootstrap_bt`` (the module at
    ``path``); write {model: [rating, 2.5 %, 97.5 %]} to ``out`` (the percentiles of its bootstrap,
    as its leaderboard's confidence intervals are)."""
    import importlib

    import numpy as np
    import pandas as pd

    sys.path.insert(0, str(Path(path).resolve().parent))    # its pool's workers find fit_bt by module name
    rating_systems = importlib.import_module(Path(path).stem)
    if not hasattr(rating_systems, "compute_bootstrap_bt"):
        sys.exit(f"{path}: not FastChat's rating_systems.py (no compute_bootstrap_bt)")
    df = pd.read_csv(csv)
    point = rating_systems.compute_bt(df)
    boot = rating_systems.compute_bootstrap_bt(df, num_round=rounds)
    lower, upper = np.percentile(boot.to_numpy(), [2.5, 97.5], axis=0)
    bounds = {m: (float(lo), float(hi)) for m, lo, hi in zip(boot.columns, lower, upper)}
    json.dump({m: [float(point[m]), *bounds[m]] for m in point.index}, open(out, "w"))


def _duckdb(csv: str) -> None:
    """DuckDB reading and grouping ``csv``: the votes counted by model_a, model_b, winner."""
    import duckdb

    columns = {"model_a": "VARCHAR", "model_b": "VARCHAR", "winner": "VARCHAR"}
    [(groups, votes)] = duckdb.execute(
        "SELECT count(*), sum(n) FROM (SELECT model_a, model_b, winner, count(*) AS n FROM "
        "read_csv($csv, header = true, auto_detect = false, columns = $columns) GROUP BY ALL)",
        {"csv": csv, "columns": columns}).fetchall()
    print(json.dumps({"groups": groups, "votes": int(votes)}))


def _duckdb_store(csv: str, db: str) -> None:
    """DuckDB storing ``csv``'s votes in the warehouse ``db`` (empty, made by ``metaeval init``)."""
    import duckdb

    con = duckdb.connect(db)
    params = {"csv": csv, "columns": {"model_a": "VARCHAR", "model_b": "VARCHAR", "winner": "VARCHAR"}}
    con.begin()
    con.execute("INSERT INTO datasets (name) VALUES ('arena')")
    con.execute("CREATE TEMP TABLE votes AS SELECT * FROM read_csv($csv, header = true, auto_detect = false, "
                "columns = $columns)", params)
    con.execute("CREATE TEMP VIEW v AS SELECT rowid + 2 AS line, least(model_a, model_b) AS a, "
                "greatest(model_a, model_b) AS b, model_a > model_b AS swapped, winner FROM votes")
    con.execute("INSERT INTO systems (dataset_id, name) SELECT 1, name FROM (SELECT name, min(line) AS line FROM "
                "(SELECT a AS name, line FROM v UNION ALL SELECT b, line FROM v) GROUP BY name) ORDER BY line, name")
    con.execute("INSERT INTO inputs (dataset_id, name) SELECT 1, 'vote-' || line FROM v ORDER BY line")
    con.execute("""INSERT INTO preferences SELECT 1, i.input_id, sa.system_id, sb.system_id, 'arena', 'human',
                       CASE WHEN swapped THEN 'ba' ELSE 'ab' END,
                       CASE WHEN winner LIKE 'tie%' THEN 'tie' WHEN (winner = 'model_a') <> swapped THEN 'a' ELSE 'b' END,
                       NULL, 0
                   FROM v JOIN inputs AS i ON i.dataset_id = 1 AND i.name = 'vote-' || v.line
                   JOIN systems AS sa ON sa.dataset_id = 1 AND sa.name = v.a
                   JOIN systems AS sb ON sb.dataset_id = 1 AND sb.name = v.b""")
    con.commit()


# --- measuring ---------------------------------------------------------------------------------------
def measured(cmd: list[str]) -> dict:
    """Run ``cmd`` under a fresh wrapper process: its CPU seconds (user + sys, its children
    included), its peak RSS (the largest of the processes) and wall-clock seconds."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        report = f.name
    start = time.perf_counter()
    done = subprocess.run([sys.executable, __file__, "--measure", report, "--", *cmd], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}")
    usage = json.load(open(report))
    os.unlink(report)
    return {**usage, "wall": wall, "stdout": done.stdout}


def _median(runs: list[dict]) -> dict:
    """The run of median CPU time (its other figures with it; the lower median of an even number)."""
    return sorted(runs, key=lambda r: r["cpu"])[(len(runs) - 1) // 2]


def _cpus(runs: list[dict]) -> str:
    return ", ".join(f"{r['cpu']:.2f}" for r in runs)


def _measure(report: str, cmd: list[str]) -> None:
    """The wrapper: run ``cmd``, write its children's usage to ``report``."""
    done = subprocess.run(cmd)
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    json.dump({"cpu": u.ru_utime + u.ru_stime, "peak_mb": u.ru_maxrss / 1024}, open(report, "w"))
    sys.exit(done.returncode)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--votes", type=int, default=200_000)
    parser.add_argument("--systems", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0, help="Of the synthetic votes.")
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=1,
                        help="Rounds of ours then FastChat's (the median CPU time of each).")
    parser.add_argument("--fastchat", metavar="RATING_SYSTEMS_PY",
                        help="FastChat's fastchat/serve/monitor/rating_systems.py (lm-sys/FastChat).")
    parser.add_argument("--fastchat-python", default=sys.executable,
                        help="The interpreter FastChat's side runs in (numpy, scipy, pandas, tqdm).")
    parser.add_argument("--python", default=sys.executable, help="The interpreter beside whose metaeval ours runs.")
    parser.add_argument("--no-fastchat", action="store_true", help="Only ours.")
    parser.add_argument("--fastchat-only", nargs=4, metavar=("PATH", "CSV", "ROUNDS", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("--duckdb-only", metavar="CSV", help=argparse.SUPPRESS)
    parser.add_argument("--duckdb-store", nargs=2, metavar=("CSV", "DB"), help=argparse.SUPPRESS)
    if sys.argv[1:2] == ["--measure"]:
        return _measure(sys.argv[2], sys.argv[4:])
    parser.add_argument("--no-compile", action="store_true",
                        help="Do not write the package's bytecode first (bench_startup.compile_package).")
    args = parser.parse_args()
    if args.fastchat_only:
        path, csv, rounds, out = args.fastchat_only
        return _fastchat(path, csv, int(rounds), out)
    if args.duckdb_only:
        return _duckdb(args.duckdb_only)
    if args.duckdb_store:
        return _duckdb_store(*args.duckdb_store)
    if not args.no_fastchat and not (args.fastchat and Path(args.fastchat).is_file()):
        parser.error("--fastchat: the path of FastChat's rating_systems.py (git clone lm-sys/FastChat), "
                     "or --no-fastchat")
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-leaderboard-"))
    work.mkdir(parents=True, exist_ok=True)
    if not args.no_compile:
        from bench_startup import compile_package

        compile_package(args.python)
    csv, db = work / "votes.csv", work / "arena.duckdb"
    synthetic_votes(csv, args.votes, args.systems, args.seed)
    script = str(Path(args.python).parent / "metaeval")
    out = work / "fastchat.json"
    ingests, boards, theirs_runs, duck_runs, stores = [], [], [], [], []
    floor = work / "floor.duckdb"
    for _ in range(args.repeat):   # alternated, so that a change in the machine's load touches both alike
        db.unlink(missing_ok=True)
        duck_runs.append(measured([args.python, __file__, "--duckdb-only", str(csv)]))
        floor.unlink(missing_ok=True)
        subprocess.run([script, "--db", str(floor), "init"], check=True, capture_output=True)
        stores.append(measured([args.python, __file__, "--duckdb-store", str(csv), str(floor)]))
        ingests.append(measured([script, "--db", str(db), "ingest", "preferences", str(csv), "--dataset", "arena"]))
        boards.append(measured([script, "--db", str(db), "leaderboard", "--dataset", "arena", "--k", str(args.rounds),
                                "--format", "json"]))
        if not args.no_fastchat:
            theirs_runs.append(measured([args.fastchat_python, __file__, "--fastchat-only", args.fastchat, str(csv),
                                         str(args.rounds), str(out)]))
    both = [{"cpu": i["cpu"] + b["cpu"], "wall": i["wall"] + b["wall"], "peak_mb": max(i["peak_mb"], b["peak_mb"])}
            for i, b in zip(ingests, boards)]
    ingest, board, ours = _median(ingests), _median(boards), _median(both)
    print(f"{args.votes} votes among {args.systems} systems, {args.rounds} rounds, from the same CSV "
          f"(CPU = user + sys, children included; median of {args.repeat}, alternated)")
    print(f"ours: ingest preferences:            CPU {ingest['cpu']:7.2f} s  wall {ingest['wall']:7.2f} s  "
          f"peak {ingest['peak_mb']:7.0f} MB  (runs: {_cpus(ingests)})")
    print(f"ours: leaderboard --k {args.rounds:<4}:           CPU {board['cpu']:7.2f} s  wall {board['wall']:7.2f} s  "
          f"peak {board['peak_mb']:7.0f} MB  (runs: {_cpus(boards)})")
    print(f"ours: both (CSV to leaderboard):     CPU {ours['cpu']:7.2f} s  wall {ours['wall']:7.2f} s  "
          f"peak {ours['peak_mb']:7.0f} MB  (runs: {_cpus(both)})")
    duck = _median(duck_runs)
    print(f"DuckDB read_csv + GROUP BY model_a, model_b, winner: CPU {duck['cpu']:7.2f} s  wall {duck['wall']:7.2f} s  "
          f"peak {duck['peak_mb']:7.0f} MB  (runs: {_cpus(duck_runs)})")
    store = _median(stores)
    print(f"DuckDB storing the same rows (same schema, 3 INSERT ... SELECT): CPU {store['cpu']:7.2f} s  "
          f"wall {store['wall']:7.2f} s  peak {store['peak_mb']:7.0f} MB  (runs: {_cpus(stores)})")
    print(f"CPU ingest / DuckDB reading and grouping: {ingest['cpu'] / duck['cpu']:.2f} (issue 47 target <= 3); "
          f"/ DuckDB storing the same rows: {ingest['cpu'] / store['cpu']:.2f}; "
          f"ingest peak {ingest['peak_mb']:.0f} MB (target < 600)")
    if args.no_fastchat:
        return
    theirs = _median(theirs_runs)
    print(f"FastChat read_csv + compute_bt + compute_bootstrap_bt (its own rating_systems.py): "
          f"CPU {theirs['cpu']:7.2f} s  wall {theirs['wall']:7.2f} s  peak {theirs['peak_mb']:7.0f} MB  "
          f"(runs: {_cpus(theirs_runs)})")
    print(f"CPU ours / FastChat: CSV to leaderboard {ours['cpu'] / theirs['cpu']:.3f} (issue 47 target <= 0.5); "
          f"leaderboard alone {board['cpu'] / theirs['cpu']:.3f} (target <= 0.2)")
    compare(json.loads(board["stdout"]), json.load(open(out)))


def compare(rows, fastchat: dict) -> None:
    rating = max(abs(r["rating"] - fastchat[r["system"]][0]) for r in rows)
    widths = [(r["upper"] - r["lower"]) / (fastchat[r["system"]][2] - fastchat[r["system"]][1]) for r in rows]
    print(f"largest rating difference: {rating:.4f} Elo (target <= 0.01)")
    print(f"interval width ours / FastChat: min {min(widths):.3f}, max {max(widths):.3f} (target within 0.75-1.25)")


if __name__ == "__main__":
    main()
