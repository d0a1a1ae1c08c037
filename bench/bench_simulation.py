"""Simulations on REALSumm (24 systems x 100 inputs): the full grids, and the paper's approach.

    python bench/bench_simulation.py --what paper              # per-trial ratio vs a scipy loop (~1 min)
    python bench/bench_simulation.py --what coverage --jobs 2  # 3 coefficients x 2 levels x 4 methods x 1000 trials
    python bench/bench_simulation.py --what power --jobs 2     # 11 proportions x 3 tests x 2 levels x 1000 trials

Grids run through ``metaeval.runs.metrics.simulation`` into a fresh warehouse (k = 1000 resamples per
CI/test; QAEval-F1 for coverage, ROUGE-1 recall vs R_k for power, against LitePyramid recall).
"The paper's approach" is its reference code's shape: a Python loop over trials and over
resamples, scipy.stats.pearsonr per resampled input; timed on a few trials, per trial, against
this package on the same trials (one configuration each).
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.stats
from click.testing import CliRunner

from metaeval import Store
from metaeval.analyses import simulation as sim
from metaeval.cli import main
from metaeval.runs.metrics import simulation as simulation_runs
from metaeval.runs.texts.scoring import load_corpus

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "realsumm"
HUMAN, METRIC = "litepyramid.recall", "qa-eval.f1"


def build(path: Path) -> None:
    files = sorted(p for p in DATA.glob("*.jsonl") if p.name != "summaries.jsonl")
    for args in (["ingest", "sacrerouge", *files, "--dataset", "realsumm", "--human", HUMAN],
                 ["ingest", "summaries", DATA / "summaries.jsonl", "--dataset", "realsumm"]):
        result = CliRunner().invoke(main, ["--db", str(path), *map(str, args)])
        assert result.exit_code == 0, result.output


# --- the paper's approach: loops over trials and resamples, scipy per resample ---------------
def warnings_off(f):
    def quiet(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # constant resampled columns
            return f(*args)
    return quiet


@warnings_off
def paper_summary_pearson(X, Z):
    rs = [scipy.stats.pearsonr(X[:, j], Z[:, j]).statistic for j in range(X.shape[1])]
    return np.nanmean(rs)


def paper_coverage_trial(X, Z, rng, k):
    n, m = X.shape
    systems, inputs = rng.permutation(n), rng.permutation(m)
    a_s, b_s, a_i, b_i = systems[: n // 2], systems[n // 2:], inputs[: m // 2], inputs[m // 2:]
    XA, ZA = X[np.ix_(a_s, a_i)], Z[np.ix_(a_s, a_i)]
    samples = []
    for _ in range(k):  # Boot-Both
        rows = rng.choice(len(a_s), len(a_s))
        cols = rng.choice(len(a_i), len(a_i))
        samples.append(paper_summary_pearson(XA[np.ix_(rows, cols)], ZA[np.ix_(rows, cols)]))
    lower, upper = np.nanpercentile(samples, [2.5, 97.5])
    return lower <= paper_summary_pearson(X[np.ix_(b_s, b_i)], Z[np.ix_(b_s, b_i)]) <= upper


def paper_power_trial(X, Y, Z, rng, k):
    def std(A):
        return (A - A.mean()) / A.std()
    X, Y = std(X), std(Y)
    delta = paper_summary_pearson(X, Z) - paper_summary_pearson(Y, Z)
    count = 0
    for _ in range(k):  # Perm-Both
        swap = rng.random(X.shape) < 0.5
        count += paper_summary_pearson(np.where(swap, Y, X), Z) - paper_summary_pearson(np.where(swap, X, Y), Z) >= delta
    return (count + 1) / (k + 1) <= 0.05


def bench_paper(db: Path, trials: int, k: int) -> None:
    with Store(db, read_only=True) as wh:
        m = wh.matrix("realsumm", [METRIC, HUMAN])
        X, Z = m[METRIC], m[HUMAN]
        corpus, keys = load_corpus(wh, "realsumm")
        ours_rouge = wh.matrix("realsumm", "rouge-1.recall")
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for _ in range(trials):
        paper_coverage_trial(X, Z, rng, k)
    paper = (time.perf_counter() - t0) / trials
    t0 = time.perf_counter()
    sim.coverage_trials(X, Z, "boot-both", [("summary", "pearson")], range(trials), k=k)
    ours = (time.perf_counter() - t0) / trials
    print(f"coverage, Boot-Both summary Pearson, per trial: paper-style {paper:.2f} s, ours {ours * 1000:.1f} ms, "
          f"ratio {paper / ours:.0f}x")
    # power: R_k at 50%, placed on the grid as simulation_runs does
    X1 = ours_rouge["rouge-1.recall"]
    rows = pd.Index(ours_rouge.systems).get_indexer(keys["system"])
    cols = pd.Index(ours_rouge.inputs).get_indexer(keys["input"])
    Ys = simulation_runs._grid(sim.draw_ablated(corpus, 0.5, 0, 0)[:trials], (rows, cols, (rows >= 0) & (cols >= 0)),
                               X1.shape)
    t0 = time.perf_counter()
    for i in range(trials):
        paper_power_trial(X1, Ys[i], Z, rng, k)
    paper = (time.perf_counter() - t0) / trials
    t0 = time.perf_counter()
    sim.power_pvalues(X1, Ys, Z, "perm-both", [("summary", "pearson")], range(trials), k=k)
    ours = (time.perf_counter() - t0) / trials
    print(f"power, Perm-Both summary Pearson, per trial: paper-style {paper:.2f} s, ours {ours * 1000:.1f} ms, "
          f"ratio {paper / ours:.0f}x")


def bench_grid(db: Path, what: str, trials: int, k: int, jobs: int) -> None:
    with Store(db) as wh:
        t0 = time.perf_counter()
        if what == "coverage":
            s = simulation_runs.simulate_coverage(wh, "realsumm", HUMAN, [METRIC], trials=trials, k=k, jobs=jobs,
                                                  progress=True)
        else:
            s = simulation_runs.simulate_power(wh, "realsumm", HUMAN, trials=trials, k=k, jobs=jobs, progress=True)
        elapsed = time.perf_counter() - t0
        table = "ci_coverage" if what == "coverage" else "power"
        frame = wh.sql(f"SELECT * FROM latest_{table}")
    print(f"{what} grid: {s.results} results x {trials} trials, k = {k}, jobs = {jobs}: {elapsed:.0f} s")
    cols = ["level", "coefficient", "method", "coverage"] if what == "coverage" else [
        "level", "method", "proportion", "power"]
    print(frame[cols].round(3).to_string(index=False))


def main_() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--what", choices=["paper", "coverage", "power"], required=True)
    parser.add_argument("--trials", type=int, default=None, help="default: 3 (paper), 1000 (grids)")
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        build(db)
        if args.what == "paper":
            bench_paper(db, args.trials or 3, args.k)
        else:
            bench_grid(db, args.what, args.trials or 1000, args.k, args.jobs)


if __name__ == "__main__":
    main_()
