"""Benchmark: sequential Monte-Carlo tests (compare --sequential, MMCTest) against a fixed k of
the same resolution, on REALSumm: every ordered pair of its automatic metrics, two-sided
Perm-Both tests of system-level Kendall tau-b against LitePyramid recall, Holm over all the
pairs (``--correction holm --correction-group all``), alpha 0.05, seed 0.

The fixed k of the same resolution is the smallest k whose smallest p-value 1/(k+1) reaches
Holm's first threshold alpha/m (m tests): k = ceil(m/alpha) - 1. Its cost, m * k resamples, is
extrapolated linearly from a measured fixed-k run (``--fixed-k``, default 1000: the per-task
cost is linear in k), as running it would take several times the budget; the sequential run
is measured (``--k-max``, default that same k; ``--risk`` 1e-3). Prints the decisions, the
total resamples (sum of k_used) and wall times of both.

From the repository root, with the project installed:

    python bench/bench_sequential.py                       # ~6 minutes on a shared 2-core machine
    python bench/bench_sequential.py --k-max 400000        # certify every decision (hours)

The warehouse is built under a temporary directory from ../shared/data/realsumm (never copied).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "realsumm"
FILES = ("pyramid.jsonl", "qaeval.jsonl", "meteor.jsonl", "s3.jsonl", "bewte.jsonl", "autosummeng.jsonl")
SETTING = dict(dataset="realsumm", human="litepyramid.recall", levels=["system"], coefficients=["kendall"],
               method="perm-both", alternative="two-sided", correction="holm", correction_group="all",
               alpha=0.05, seed=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fixed-k", type=int, default=1000, help="k of the measured fixed run (extrapolated)")
    ap.add_argument("--k-max", type=int, default=None, help="cap of the sequential run (default: the fixed k "
                                                             "of the same resolution)")
    ap.add_argument("--risk", type=float, default=1e-3)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()

    from metaeval.runs import Warehouse
    from metaeval.runs.engine import api

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "realsumm.duckdb"
        from click.testing import CliRunner

        from metaeval.cli import main as cli

        out = CliRunner().invoke(cli, ["--db", str(db), "ingest", "sacrerouge", *(str(DATA / f) for f in FILES),
                                       "--dataset", "realsumm", "--human", "litepyramid.recall"])
        assert out.exit_code == 0, out.output
        with Warehouse(db) as wh:
            t0 = time.perf_counter()
            fixed = api.compare(wh, **SETTING, k=args.fixed_k, jobs=args.jobs).rows(wh)
            t_fixed = time.perf_counter() - t0
            fixed = fixed[(fixed["correction_group"] == "all") & fixed["risk"].isna()]
            m = int(fixed["p_value"].notna().sum())
            k_res = math.ceil(m / SETTING["alpha"]) - 1
            k_max = args.k_max or k_res
            t0 = time.perf_counter()
            seq = api.compare(wh, **SETTING, sequential=True, k_max=k_max, risk=args.risk, jobs=args.jobs).rows(wh)
            t_seq = time.perf_counter() - t0
            seq = seq[seq["risk"].notna()]
    decisions = seq["conventions"].map(lambda c: json.loads(c).get("sequential", {}).get("decision", "undefined"))
    fixed_cost = m * k_res
    fixed_time = t_fixed * k_res / args.fixed_k
    used = int(seq["k_used"].sum())
    print(f"REALSumm, {len(seq)} ordered pairs of {seq['metric_a'].nunique()} metrics, m = {m} tests; "
          f"system-level Kendall, perm-both, two-sided, Holm over all pairs, alpha 0.05")
    print(f"fixed k = {args.fixed_k}: measured {t_fixed:.1f} s, {int(fixed['significant'].sum())} significant "
          f"(smallest p = 1/(k+1) = {1 / (args.fixed_k + 1):.2g} > alpha/m = {SETTING['alpha'] / m:.2g})")
    print(f"fixed k of the same resolution: k = ceil(m/alpha) - 1 = {k_res}: {fixed_cost} resamples, "
          f"{fixed_time:.0f} s (extrapolated linearly from the k = {args.fixed_k} run)")
    print(f"sequential (MMCTest, risk {args.risk:g}, k_max {k_max}): {used} resamples "
          f"({used / fixed_cost:.2f} of the fixed k's), {t_seq:.1f} s measured; decisions: "
          + ", ".join(f"{n} {d}" for d, n in decisions.value_counts().items()))
    print(f"k_used per pair: min {int(seq['k_used'].min())}, median {int(seq['k_used'].median())}, "
          f"max {int(seq['k_used'].max())}")


if __name__ == "__main__":
    main()
