"""The leaderboard at arena scale (issue 35, item 6), side by side with FastChat's counted
Bradley-Terry bootstrap on the same seeded synthetic votes, in one run.

    python bench/bench_leaderboard.py                          # 200 000 votes, 60 systems, 100 rounds
    python bench/bench_leaderboard.py --repeat 3               # ours and FastChat's alternated, medians
    python bench/bench_leaderboard.py --votes 1000000 --systems 150 --no-fastchat   # the memory case

The votes: ``--systems`` strengths ~ N(0, 1) logits (seeded), each vote a uniformly drawn ordered
pair, a tie with probability 0.2, else a Bradley-Terry draw; written as an arena vote table
(model_a, model_b, winner). FastChat's side is ``compute_bt`` and ``compute_bootstrap_bt`` of
``fastchat/serve/monitor/rating_systems.py`` (lm-sys/FastChat), reimplemented here from reading
it -- counting with ``np.unique`` on (model_a, model_b, outcome), L-BFGS-B on the weighted
log-loss (alpha = ln 10, gtol 1e-6, 100 iterations), multinomial resamples of the counts divided
by the number of votes, a multiprocessing pool of ``os.cpu_count()`` workers; never in the package.

Each side runs as its own process; CPU is user + system time of the process and its children
(``resource.getrusage``), peak memory the largest resident set of any of them. The machine is
shared (2 cores, 8 engineers): CPU time, not wall-clock, is the comparison. Ours is the whole
``metaeval leaderboard --k 100`` command (interpreter start-up, imports, reading the warehouse,
the fit, 100 rounds, the tests, fragility, writing), each run on a new copy of the ingested
warehouse (a second run on the same votes would compute nothing); the ingest is measured
separately. The package's bytecode is written first (``bench_startup.compile_package``, as an
install does; ``--no-compile``: not).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
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


# --- FastChat's counted Bradley-Terry bootstrap, reimplemented for this benchmark only ---------------
def _fastchat(csv: str, rounds: int, out: str, seed: int = 0) -> None:
    import multiprocessing as mp
    from functools import partial

    import numpy as np
    import pandas as pd

    def counted(df):
        codes, models = pd.factorize(pd.concat([df["model_a"], df["model_b"]]))
        n = len(df)
        schedule = np.ones((n, 3), dtype=np.int32)
        schedule[:, 0], schedule[:, 1] = codes[:n], codes[n:]
        schedule[(df["winner"] == "model_a").to_numpy(), 2] = 2
        schedule[(df["winner"] == "model_b").to_numpy(), 2] = 0
        rows, weights = np.unique(schedule, return_counts=True, axis=0)
        return rows[:, :2], rows[:, 2] / 2.0, list(models), weights.astype(float)

    df = pd.read_csv(csv)
    matchups, outcomes, models, weights = counted(df)
    point = fit_bt(matchups, outcomes, weights, len(models), math.log(10.0), 1e-6)
    rng = np.random.default_rng(seed=seed)     # FastChat's seed is 0
    boot = rng.multinomial(n=len(df), pvals=weights / weights.sum(), size=rounds).astype(float) / len(df)
    fn = partial(fit_bt, matchups, outcomes, n_models=len(models), alpha=math.log(10.0), tol=1e-6)
    with mp.Pool(os.cpu_count()) as pool:
        samples = np.array(list(pool.imap_unordered(fn, boot)))
    scale = lambda r: r * 400 + 1000    # noqa: E731 - FastChat's scale_and_offset (no baseline model here)
    lower, upper = np.percentile(scale(samples), [2.5, 97.5], axis=0)
    json.dump({m: [float(scale(point)[i]), float(lower[i]), float(upper[i])] for i, m in enumerate(models)},
              open(out, "w"))


def fit_bt(matchups, outcomes, weights, n_models, alpha, tol):
    import numpy as np
    from scipy.optimize import minimize
    from scipy.special import expit

    def loss_and_grad(r):
        logits = alpha * (r[matchups[:, 0]] - r[matchups[:, 1]])
        p = expit(logits)
        loss = -((np.log(p) * outcomes + np.log(1.0 - p) * (1.0 - outcomes)) * weights).sum()
        g = -alpha * (outcomes - p) * weights
        grad = np.zeros_like(r)
        np.add.at(grad, matchups[:, 0], g)
        np.add.at(grad, matchups[:, 1], -g)
        return loss, grad

    result = minimize(loss_and_grad, np.zeros(n_models), jac=True, method="L-BFGS-B",
                      options={"maxiter": 100, "gtol": tol})
    return result.x


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
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=1,
                        help="Runs of ours and of FastChat's, alternated (the median CPU time of each).")
    parser.add_argument("--no-fastchat", action="store_true", help="Only ours (the memory case).")
    parser.add_argument("--fastchat-only", nargs=4, metavar=("CSV", "ROUNDS", "OUT", "SEED"), help=argparse.SUPPRESS)
    if sys.argv[1:2] == ["--measure"]:
        return _measure(sys.argv[2], sys.argv[4:])
    parser.add_argument("--no-compile", action="store_true",
                        help="Do not write the package's bytecode first (bench_startup.compile_package).")
    args = parser.parse_args()
    if args.fastchat_only:
        csv, rounds, out, seed = args.fastchat_only
        return _fastchat(csv, int(rounds), out, int(seed))
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench-leaderboard-"))
    work.mkdir(parents=True, exist_ok=True)
    if not args.no_compile:
        from bench_startup import compile_package

        compile_package()
    csv, db, ingested = work / "votes.csv", work / "arena.duckdb", work / "ingested.duckdb"
    for f in (db, ingested):
        f.unlink(missing_ok=True)
    synthetic_votes(csv, args.votes, args.systems, args.seed)
    script = str(Path(sys.executable).parent / "metaeval")
    ingest = measured([script, "--db", str(ingested), "ingest", "preferences", str(csv), "--dataset", "arena"])
    out = work / "fastchat.json"
    runs, theirs_runs = [], []
    for _ in range(args.repeat):   # alternated, so that a change in the machine's load touches both alike
        shutil.copyfile(ingested, db)   # a new copy each time: the same command on the same votes computes nothing
        runs.append(measured([script, "--db", str(db), "leaderboard", "--dataset", "arena", "--k", str(args.rounds),
                              "--format", "json"]))
        if not args.no_fastchat:
            theirs_runs.append(measured([sys.executable, __file__, "--fastchat-only", str(csv), str(args.rounds),
                                         str(out), "0"]))
    ours = _median(runs)
    print(f"{args.votes} votes among {args.systems} systems, {args.rounds} rounds "
          f"(CPU = user + sys, children included; median of {args.repeat})")
    print(f"ingest preferences:          CPU {ingest['cpu']:7.2f} s  wall {ingest['wall']:7.2f} s  "
          f"peak {ingest['peak_mb']:7.0f} MB")
    print(f"metaeval leaderboard --k {args.rounds}: CPU {ours['cpu']:7.2f} s  wall {ours['wall']:7.2f} s  "
          f"peak {ours['peak_mb']:7.0f} MB  (runs: {_cpus(runs)})")
    if args.no_fastchat:
        return
    theirs = _median(theirs_runs)
    print(f"FastChat compute_bt + compute_bootstrap_bt: CPU {theirs['cpu']:7.2f} s  wall {theirs['wall']:7.2f} s  "
          f"peak {theirs['peak_mb']:7.0f} MB  (runs: {_cpus(theirs_runs)})")
    compare(json.loads(ours["stdout"]), json.load(open(out)), ours["cpu"] / theirs["cpu"])
    # the Monte Carlo noise of a 100-round percentile interval: FastChat's own, with another seed
    again = work / "fastchat-seed1.json"
    measured([sys.executable, __file__, "--fastchat-only", str(csv), str(args.rounds), str(again), "1"])
    first, second = json.load(open(out)), json.load(open(again))
    ratios = [(second[m][2] - second[m][1]) / (first[m][2] - first[m][1]) for m in first]
    print(f"noise floor, FastChat seed 1 / seed 0 widths: min {min(ratios):.3f}, max {max(ratios):.3f}")


def compare(rows, fastchat: dict, cpu_ratio: float) -> None:
    rating = max(abs(r["rating"] - fastchat[r["system"]][0]) for r in rows)
    widths = [(r["upper"] - r["lower"]) / (fastchat[r["system"]][2] - fastchat[r["system"]][1]) for r in rows]
    print(f"CPU ours / FastChat: {cpu_ratio:.3f} (target <= 0.2)")
    print(f"largest rating difference: {rating:.4f} Elo (target <= 0.01)")
    print(f"interval width ours / FastChat: min {min(widths):.3f}, max {max(widths):.3f} (target within 0.75-1.25)")


if __name__ == "__main__":
    main()
