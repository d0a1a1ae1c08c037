"""Benchmark: the statistics core (analyses.stats) vs nlpstats 0.0.1 on REALSumm (24 x 100).

Boot-Both CIs and Perm-Both tests (two-sided), k = 1000, for summary-level Kendall tau-b and
system-level Pearson; X = ROUGE-2 recall, Y = ROUGE-1 recall, Z = LitePyramid recall.
Reports wall times (best of --repeats, ours and nlpstats interleaved; nlpstats on summary-level
Kendall: one run), speed ratios, peak memory of ours (tracemalloc, separate run), the point
estimates, CIs / p-values with their Monte-Carlo standard errors and a two-sample KS test of
the resampled values (ours vs nlpstats); then ours at k = 10 000. Perm-Both is timed with our
``variant="nlpstats"`` (row XOR column swaps, as nlpstats) and with the default paper variant.

Run it with a Python that has nlpstats (a separate venv, not a project dependency), from the
repository root:

    python -m venv /work/benchvenv && /work/benchvenv/bin/pip install nlpstats==0.0.1
    /work/benchvenv/bin/python bench/bench_stats.py

nlpstats is slow on summary-level Kendall (~50-100 ms per resample), so it runs
--nlpstats-k-summary resamples there and its time is extrapolated linearly to k (stated in the
output). OpenBLAS is limited to one thread (unless OPENBLAS_NUM_THREADS is set): on a shared
2-core machine its threading slows the small matrix products down.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.stats  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metaeval.analyses import bootstrap_ci, correlate, permutation_test  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "realsumm" / "pyramid.jsonl"
CONFIGS = [("summary", "kendall"), ("system", "pearson")]


def load(path: Path, *keys: str) -> list[np.ndarray]:
    """Matrices (systems x inputs, sorted by id) of the dotted metric ``keys``."""
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    systems = sorted({r["summarizer_id"] for r in records})
    inputs = sorted({r["instance_id"] for r in records})
    out = [np.full((len(systems), len(inputs)), np.nan) for _ in keys]
    for r in records:
        i, j = systems.index(r["summarizer_id"]), inputs.index(r["instance_id"])
        for matrix, key in zip(out, keys):
            value = r["metrics"]
            for part in key.split("."):
                value = value[part]
            matrix[i, j] = value
    return out


def best_time(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    result, best = None, np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def peak_memory(fn: Callable[[], object]) -> float:
    """Peak traced allocation (MiB) while running ``fn`` (numpy reports to tracemalloc)."""
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", type=int, default=1000)
    parser.add_argument("--k-large", type=int, default=10_000)
    parser.add_argument("--nlpstats-k-summary", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, default=ROOT / "bench" / "results" / "stats.json")
    args = parser.parse_args()

    import nlpstats.correlations as nlp

    X, Y, Z = load(DATA, "rouge-2.recall", "rouge-1.recall", "litepyramid.recall")
    k = args.k
    print(f"REALSumm {X.shape[0]} systems x {X.shape[1]} inputs; k = {k}; "
          f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}; numpy {np.__version__}")
    rows = []
    for level, coef in CONFIGS:
        nlp_level = "input" if level == "summary" else level
        nlp_k = args.nlpstats_k_summary if level == "summary" else k
        np.random.seed(0)
        nlp_est = nlp.correlate(X, Z, nlp_level, coef)

        ours = {
            "Boot-Both": lambda: bootstrap_ci(X, Z, level, coef, "both", k=k, seed=0),
            "Perm-Both": lambda: permutation_test(
                X, Y, Z, level, coef, "both", k=k, alternative="two-sided", seed=0, variant="nlpstats"
            ),
            "Perm-Both (paper)": lambda: permutation_test(
                X, Y, Z, level, coef, "both", k=k, alternative="two-sided", seed=0
            ),
        }
        theirs = {
            "Boot-Both": lambda: nlp.bootstrap(X, Z, nlp_level, coef, "both", n_resamples=nlp_k),
            "Perm-Both": lambda: nlp.permutation_test(
                X, Y, Z, nlp_level, coef, "both", alternative="two-sided", n_resamples=nlp_k
            ),
        }
        for name, run in ours.items():
            run()  # warm-up
            t_ours, res = best_time(run, args.repeats)
            if name in theirs and level == "system":
                # interleave with nlpstats' runs too, so load changes hit both alike
                t_theirs, other = np.inf, None
                for _ in range(args.repeats):
                    t_theirs, other = min((t_theirs, other), best_time(theirs[name], 1), key=lambda p: p[0])
                    t_ours = min(t_ours, best_time(run, 1)[0])
            elif name in theirs:
                t_theirs, other = best_time(theirs[name], 1)
            row = {
                "config": f"{level} {coef}",
                "method": name,
                "k": k,
                "ours_s": t_ours,
                "ours_peak_mib": peak_memory(run),
                "estimate_ours": correlate(X, Z, level, coef),
                "estimate_nlpstats": float(nlp_est),
            }
            if name == "Boot-Both":
                row |= {"ours": [res.lower, res.upper]}
            else:
                row |= {"ours": res.pvalue, "delta": res.delta}
            if name in theirs:
                row |= {"nlpstats_k": nlp_k, "nlpstats_s_at_k": t_theirs * k / nlp_k,
                        "speedup": t_theirs * k / nlp_k / t_ours}
                if name == "Boot-Both":
                    row["nlpstats"] = [float(other.lower), float(other.upper)]
                    # s.e. of a 2.5% sample quantile: sqrt(p (1 - p) / k) / density there
                    row["mc_se"] = float(np.sqrt(0.025 * 0.975 * (1 / k + 1 / nlp_k)) / _density_at_tail(res.samples))
                    theirs_samples = np.asarray(other.samples)
                else:
                    row["nlpstats"] = float(other.pvalue)
                    theirs_samples = np.asarray(other.samples)
                    p = (res.pvalue + other.pvalue) / 2
                    row["mc_se"] = float(np.sqrt(p * (1 - p) / k + p * (1 - p) / nlp_k))
                ours_samples = res.samples[~np.isnan(res.samples)]
                row["ks_pvalue"] = float(scipy.stats.ks_2samp(ours_samples, theirs_samples).pvalue)
            rows.append(row)
            _print_row(row)

    print(f"\nOurs at k = {args.k_large}:")
    for level, coef in CONFIGS:
        for name, run in {
            "Boot-Both": lambda: bootstrap_ci(X, Z, level, coef, "both", k=args.k_large, seed=0),
            "Perm-Both (paper)": lambda: permutation_test(X, Y, Z, level, coef, "both", k=args.k_large, seed=0),
        }.items():
            t, _ = best_time(run, 1)
            row = {"config": f"{level} {coef}", "method": name, "k": args.k_large, "ours_s": t,
                   "ours_peak_mib": peak_memory(run)}
            rows.append(row)
            print(f"  {row['config']:16} {name:18} {t * 1000:9.1f} ms  peak {row['ours_peak_mib']:.1f} MiB")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(rows, indent=2))
    print(f"\nwrote {args.json}")


def _density_at_tail(samples: np.ndarray) -> float:
    """Rough density of the bootstrap distribution near its 2.5% quantile (for an MC s.e.)."""
    q = np.percentile(samples[~np.isnan(samples)], [1.5, 3.5])
    return 0.02 / max(q[1] - q[0], 1e-12)


def _print_row(row: dict) -> None:
    head = f"{row['config']:16} {row['method']:18}"
    ours = f"ours {row['ours_s'] * 1000:8.1f} ms (peak {row['ours_peak_mib']:.1f} MiB)"
    line = f"{head} {ours}"
    if "nlpstats_s_at_k" in row:
        extrap = "" if row["nlpstats_k"] == row["k"] else f", extrapolated from k={row['nlpstats_k']}"
        line += f" | nlpstats {row['nlpstats_s_at_k']:8.2f} s{extrap} | x{row['speedup']:.0f}"
    print(line)
    fmt = (lambda v: f"[{v[0]:.4f}, {v[1]:.4f}]") if isinstance(row["ours"], list) else (lambda v: f"p={v:.4f}")
    detail = f"    estimate ours {row['estimate_ours']!r} nlpstats {row['estimate_nlpstats']!r}; ours {fmt(row['ours'])}"
    if "nlpstats" in row:
        detail += (f" nlpstats {fmt(row['nlpstats'])} (MC s.e. ~{row['mc_se']:.4f}; "
                   f"KS test ours vs nlpstats resampled values: p={row['ks_pvalue']:.2f})")
    print(detail)


if __name__ == "__main__":
    main()
