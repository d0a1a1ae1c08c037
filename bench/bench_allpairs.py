"""``metaeval evaluate --all-pairs`` on REALSumm-shaped data: CPU against the arithmetic floor.

What it compares: our own command against (1) the **arithmetic floor** -- the count of the
operations the tests and intervals need, times the elementwise throughput numpy reaches on this
machine, measured in the same run -- and optionally (2) **our own older code** (``--baseline``:
another checkout's ``metaeval``, e.g. main's in a venv under /tmp; or ``--shared``: this checkout's
cell-by-cell evaluators, ``METAEVAL_ALLPAIRS=shared``). It does not run an outside tool:
mt-metrics-eval needs ~464 s for system-level Pearson alone at 40 metrics (issue 47), which is not
the same work and is not timed here.

Generates (seeded) a wide score table of S systems x N inputs (REALSumm: 24 x 100) with a human
judgment ``human`` and K metrics ``metric.00`` .. (the human plus noise of growing size, every
third metric rounded to tenths so that Kendall and Spearman see ties), ingests it into a new
warehouse per run (``metaeval ingest table``, not timed) and times, in a fresh child process each
(``/usr/bin/time -v``: user + sys CPU seconds of the whole command, wall seconds, peak RSS; the
load average before and after)::

    metaeval evaluate --dataset bench --human human --metric 'metric.*' --all-pairs --k K

with evaluate's defaults otherwise (system and summary levels, Pearson, Spearman and Kendall,
tests perm-both two-sided with Holm, intervals boot-both, seed 0). With a baseline the two
sides alternate per metric count and what they stored in hypothesis_tests and
confidence_intervals is compared (identical, or the largest absolute differences)::

    python bench/bench_allpairs.py                                   # 5, 10, 20, 40 metrics
    python bench/bench_allpairs.py --baseline /tmp/allpairs-base/.venv/bin/metaeval

The floor (:func:`floor_flops`): per resample and pair of metrics, at each level, the swaps
(x', y': 2 N M selections), then at the system level the permuted row sums (2 N M) and the
coefficients' updates on the N means (Pearson ~10 N; Spearman's and Kendall's N (N - 1) / 2
comparisons for each of X' and Y'), at the summary level per input Pearson's three sums for X'
and Y' (12 N), Spearman's and Kendall's N (N - 1) / 2 comparisons for each of X' and Y'; the
intervals per metric and resample likewise (the drawn sums, 5 sums for Pearson, N (N - 1) / 2
comparisons for each rank coefficient); each operation counted as one flop, at the
throughput of ``a * b + c`` on cache-resident float64 arrays (``out=`` buffers, one thread:
:func:`throughput`). It is a floor for the computation as the tests define it (no method
that skips resamples or comparisons), not a bound any code must reach.

``--local-cluster 2`` runs the default path in one process and then with its tasks on a Dask
LocalCluster of 2 worker processes (the command's CPU and its workers' are reported; the workers
compute blocks of 128 pairs batched, runs/metrics/pair_blocks.py), and compares what they stored::

    python bench/bench_allpairs.py --metrics 100 --k 100 --local-cluster 2
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def generate(path: Path, systems: int, inputs: int, metrics: int, seed: int) -> None:
    """A seeded wide table system,input,human,metric.00,...: human = system effect + noise."""
    rng = np.random.default_rng(seed)
    human = rng.normal(0, 1, (systems, 1)) + rng.normal(0, 1, (systems, inputs))
    frame = pd.DataFrame({"system": np.repeat([f"sys{i:02d}" for i in range(systems)], inputs),
                          "input": np.tile([f"in{j:03d}" for j in range(inputs)], systems),
                          "human": human.ravel()})
    for m in range(metrics):
        values = human + rng.normal(0, 0.5 + m / 10, human.shape)
        frame[f"metric.{m:02d}"] = (np.round(values, 1) if m % 3 == 2 else values).ravel()
    frame.to_csv(path, index=False)


def floor_flops(metrics: int, systems: int, inputs: int, k: int) -> float:
    """The operations evaluate --all-pairs' defaults need (module docstring): every pair's
    permutation tests and every metric's bootstrap intervals, k resamples each, both levels,
    Pearson, Spearman and Kendall."""
    n, m = systems, inputs
    pairs = metrics * (metrics - 1) // 2
    comparisons = n * (n - 1) // 2
    swaps = 2 * n * m
    system_test = swaps + 2 * n * m + 10 * n + 2 * comparisons + 2 * comparisons
    summary_test = swaps + m * (12 * n + 2 * comparisons + 2 * comparisons)
    system_interval = n * m + 10 * n + comparisons + comparisons
    summary_interval = m * (10 * n + comparisons + comparisons)
    return float(k * (pairs * (system_test + summary_test) + metrics * (system_interval + summary_interval)))


def throughput(seconds: float = 1.0) -> float:
    """Flops per CPU-second of numpy's elementwise ``a * b + c`` (two flops an element) on
    float64 arrays that stay in the CPU's cache (2^15 elements, ``out=`` buffers), measured here."""
    import time

    rng = np.random.default_rng(0)
    a, b, c = (rng.random(2**15) for _ in range(3))
    t = np.empty_like(a)
    done, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        for _ in range(200):
            np.multiply(a, b, out=t)
            np.add(t, c, out=t)
        done += 200
    return 2 * done * a.size / (time.process_time() - start)


def timed(command: list[str], env: dict) -> dict:
    """CPU (user + sys), wall and peak RSS of ``command`` (``/usr/bin/time -v``)."""
    result = subprocess.run(["/usr/bin/time", "-v", *command], capture_output=True, text=True, env=env)
    if result.returncode:
        sys.exit(f"{' '.join(command)} failed:\n{result.stderr[-2000:]}")
    field = {name: re.search(rf"{re.escape(name)}: (.+)", result.stderr).group(1)
             for name in ("User time (seconds)", "System time (seconds)", "Elapsed (wall clock) time (h:mm:ss or m:ss)",
                          "Maximum resident set size (kbytes)")}
    wall = 0.0
    for part in field["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":"):
        wall = 60 * wall + float(part)
    return {"cpu": float(field["User time (seconds)"]) + float(field["System time (seconds)"]), "wall": wall,
            "sys": float(field["System time (seconds)"]),
            "rss_gb": int(field["Maximum resident set size (kbytes)"]) / 2**20, "load": os.getloadavg()[0]}


def stored(db: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The computed values of the run's tests and intervals, sorted (for the identity check)."""
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        tests = con.sql("SELECT metric_a, metric_b, level, coefficient, delta, p_value, p_adjusted FROM "
                        "hypothesis_tests ORDER BY ALL").df()
        cis = con.sql("SELECT metric, level, coefficient, estimate, lower, upper, n_valid FROM confidence_intervals "
                      "ORDER BY ALL").df()
    return tests, cis


def differences(a: tuple, b: tuple) -> str:
    """How two runs' stored tests and intervals differ: identical, or the largest differences."""
    if all(x.equals(y) for x, y in zip(a, b)):
        return "identical"
    (ta, ca), (tb, cb) = a, b
    worst = {f"{name} {col}": float(np.nanmax(np.abs(x[col].astype(float) - y[col].astype(float))))
             for name, x, y, cols in (("tests", ta, tb, ("delta", "p_value", "p_adjusted")),
                                      ("intervals", ca, cb, ("estimate", "lower", "upper")))
             for col in cols}
    return "max abs difference " + ", ".join(f"{k} {v:.3g}" for k, v in worst.items())


def run(metaeval: str, workdir: Path, csv: Path, name: str, k: int, env: dict) -> tuple[dict, tuple]:
    db = workdir / f"{name}.duckdb"
    db.unlink(missing_ok=True)
    for command in (["init"], ["ingest", "table", str(csv), "--dataset", "bench", "--human", "human"]):
        subprocess.run([metaeval, "--db", str(db), *command], check=True, capture_output=True, env=env)
    figures = timed([metaeval, "--db", str(db), "evaluate", "--dataset", "bench", "--human", "human",
                     "--metric", "metric.*", "--all-pairs", "--k", str(k), "--format", "csv"], env)
    return figures, stored(db)


def dask_run(args, metaeval: str, csv: Path, metrics: int) -> tuple:
    """The default path with its tasks on a LocalCluster (``$METAEVAL_SCHEDULER``): the command's
    CPU, wall and RSS, and the CPU seconds its workers spent (psutil, before and after); the
    stored rows."""
    from distributed import Client, LocalCluster

    def worker_cpu() -> float:
        import psutil

        times = psutil.Process().cpu_times()
        return times.user + times.system

    with LocalCluster(n_workers=args.local_cluster, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        before = sum(client.run(worker_cpu).values())
        env = {**os.environ, "METAEVAL_ALLPAIRS": "", "METAEVAL_SCHEDULER": cluster.scheduler_address}
        figures, rows = run(metaeval, args.workdir, csv, f"dask-{metrics}", args.k, env)
        workers = sum(client.run(worker_cpu).values()) - before
    print(f"| {metrics} | {metrics * (metrics - 1) // 2} | {args.k} | dask x{args.local_cluster} | "
          f"{figures['cpu']:.1f} + workers {workers:.1f} = {figures['cpu'] + workers:.1f} | {figures['wall']:.1f} | "
          f"{figures['rss_gb']:.2f} |", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/metaeval-bench-allpairs"))
    parser.add_argument("--metrics", type=int, action="append", help="metrics K (repeatable; default 5, 10, 20, 40)")
    parser.add_argument("--systems", type=int, default=24)
    parser.add_argument("--inputs", type=int, default=100)
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--baseline", default=None,
                        help="the metaeval executable of older code (another checkout's venv), run alternately")
    parser.add_argument("--shared", action="store_true",
                        help="time this checkout's cell-by-cell evaluators too (METAEVAL_ALLPAIRS=shared)")
    parser.add_argument("--per-pair", action="store_true", help="time the per-pair path too")
    parser.add_argument("--local-cluster", type=int, default=0, metavar="WORKERS",
                        help="run the default path's tasks on a Dask LocalCluster of WORKERS processes "
                             "(--scheduler; the workers' CPU seconds are reported too)")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    mine = str(Path(sys.executable).parent / "metaeval")
    rate = throughput()
    print(f"Compared with the arithmetic floor (operations counted x numpy's elementwise a*b+c throughput "
          f"measured now: {rate / 1e9:.2f} GFLOP per CPU-second) and, if given, with our own older code; "
          f"not with an outside tool.\n")
    print("| metrics | pairs | k | path | CPU s (user+sys) | sys s | wall s | peak RSS GB | load | floor CPU s | "
          "CPU / floor |\n|---|---|---|---|---|---|---|---|---|---|---|")
    for metrics in args.metrics or [5, 10, 20, 40]:
        csv = args.workdir / f"scores-{metrics}.csv"
        generate(csv, args.systems, args.inputs, metrics, args.seed)
        floor = floor_flops(metrics, args.systems, args.inputs, args.k) / rate
        paths = [("this checkout", mine, {**os.environ, "METAEVAL_ALLPAIRS": ""})]
        if args.local_cluster:
            figures, local = run(mine, args.workdir, csv, f"linear-{metrics}", args.k, paths[0][2])
            print(f"| {metrics} | {metrics * (metrics - 1) // 2} | {args.k} | linear, one process | "
                  f"{figures['cpu']:.1f} | {figures['sys']:.1f} | {figures['wall']:.1f} | {figures['rss_gb']:.2f} | "
                  f"{figures['load']:.1f} | {floor:.1f} | {figures['cpu'] / floor:.2f} |", flush=True)
            rows = dask_run(args, mine, csv, metrics)
            print(f"|   | stored values on dask: {differences(local, rows)} | | | | | | | | | |", flush=True)
            continue
        if args.baseline:
            paths.append(("older code (--baseline)", args.baseline, {**os.environ, "METAEVAL_ALLPAIRS": ""}))
        if args.shared:
            paths.append(("cell by cell (shared)", mine, {**os.environ, "METAEVAL_ALLPAIRS": "shared"}))
        if args.per_pair:
            paths.append(("per-pair", mine, {**os.environ, "METAEVAL_ALLPAIRS": "per-pair"}))
        values = []
        for n, (label, metaeval, env) in enumerate(paths):
            figures, rows = run(metaeval, args.workdir, csv, f"path{n}-{metrics}", args.k, env)
            values.append(rows)
            print(f"| {metrics} | {metrics * (metrics - 1) // 2} | {args.k} | {label} | {figures['cpu']:.1f} | "
                  f"{figures['sys']:.1f} | {figures['wall']:.1f} | {figures['rss_gb']:.2f} | {figures['load']:.1f} | "
                  f"{floor:.1f} | {figures['cpu'] / floor:.2f} |", flush=True)
        for (label, *_), other in zip(paths[1:], values[1:]):
            print(f"|   | stored values as {label}'s: {differences(values[0], other)} | | | | | | | | | |", flush=True)


if __name__ == "__main__":
    main()
