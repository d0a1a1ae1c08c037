"""Benchmark: the statistics core (analyses.stats) vs nlpstats 0.0.1 on REALSumm (24 x 100), each
side a cold process at the same k (issue 47 item 6).

Boot-Both CIs and Perm-Both tests (two-sided) for summary-level Kendall tau-b and system-level
Pearson; X = ROUGE-2 recall, Y = ROUGE-1 recall, Z = LitePyramid recall. What each side does,
in a new interpreter per run, from the same JSONL file read by the same loader (this file's
``load``):

- **ours**: imports ``metaeval.analyses`` (numpy, scipy) and runs ``bootstrap_ci`` or
  ``permutation_test`` (``variant="nlpstats"``: row XOR column swaps, as nlpstats does) once;
- **nlpstats**: imports ``nlpstats.correlations`` (its own code, from PyPI, in a venv outside the
  repository: ``--nlpstats-python``) and runs ``bootstrap`` or ``permutation_test`` once.

Both at the same k (``--k`` at system level; ``--k-summary`` at summary level, where nlpstats takes
~50-100 ms a resample). The runs alternate (ours, then nlpstats', ``--repeats`` times); each prints
the CPU seconds (user + system) of its whole process (start-up, imports, reading, computing) and
its peak resident memory, the medians and the CPU ratio, and the results (CI bounds, p-value) of
both. Not in-process, not warm, not scaled from another k.

    python3 -m venv /tmp/nlpstats-venv && /tmp/nlpstats-venv/bin/pip install nlpstats==0.0.1
    python bench/bench_stats.py --nlpstats-python /tmp/nlpstats-venv/bin/python

OpenBLAS is limited to one thread on both sides (unless OPENBLAS_NUM_THREADS is set).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "realsumm" / "pyramid.jsonl"
CONFIGS = [("summary", "kendall"), ("system", "pearson")]
METHODS = ("Boot-Both", "Perm-Both")


def load(path: Path, *keys: str) -> list:
    """Matrices (systems x inputs, sorted by id) of the dotted metric ``keys``."""
    import numpy as np

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


def run_side(side: str, level: str, coef: str, method: str, k: int, data: Path) -> dict:
    """One run of ``side`` (in this fresh process): what it computed."""
    X, Y, Z = load(data, "rouge-2.recall", "rouge-1.recall", "litepyramid.recall")
    if side == "ours":
        sys.path.insert(0, str(ROOT))
        from metaeval.analyses import bootstrap_ci, permutation_test

        if method == "Boot-Both":
            res = bootstrap_ci(X, Z, level, coef, "both", k=k, seed=0)
            return {"lower": float(res.lower), "upper": float(res.upper)}
        res = permutation_test(X, Y, Z, level, coef, "both", k=k, alternative="two-sided", seed=0, variant="nlpstats")
        return {"pvalue": float(res.pvalue)}
    import numpy as np
    import nlpstats.correlations as nlp

    np.random.seed(0)
    nlp_level = "input" if level == "summary" else level
    if method == "Boot-Both":
        res = nlp.bootstrap(X, Z, nlp_level, coef, "both", n_resamples=k)
        return {"lower": float(res.lower), "upper": float(res.upper)}
    res = nlp.permutation_test(X, Y, Z, nlp_level, coef, "both", alternative="two-sided", n_resamples=k)
    return {"pvalue": float(res.pvalue)}


def measured(python: str, side: str, level: str, coef: str, method: str, k: int, data: Path) -> dict:
    """``side`` run once in a new ``python`` process: its CPU seconds, peak RSS and result."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [python, __file__, "--side", side, level, coef, method, str(k), str(data), out.name]
        process = subprocess.Popen(cmd, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": ""})
        _, status, usage = os.wait4(process.pid, 0)
        err = process.stderr.read().decode()
        if os.waitstatus_to_exitcode(status):
            sys.exit(f"{' '.join(cmd)} failed:\n{err}")
        result = json.load(open(out.name))
    return {"cpu": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024, "result": result}


def main() -> None:
    if sys.argv[1:2] == ["--side"]:
        side, level, coef, method, k, data, out = sys.argv[2:9]
        json.dump(run_side(side, level, coef, method, int(k), Path(data)), open(out, "w"))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=1000, help="Resamples at system level, both sides.")
    parser.add_argument("--k-summary", type=int, default=200, help="Resamples at summary level, both sides.")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--nlpstats-python", required=True, metavar="PYTHON",
                        help="An interpreter with nlpstats 0.0.1 (a venv outside the repository).")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    print(f"REALSumm ({args.data}); each run a new process (CPU = user + sys of the whole process; "
          f"median of {args.repeats}, ours and nlpstats alternated); OPENBLAS_NUM_THREADS="
          f"{os.environ['OPENBLAS_NUM_THREADS']}")
    for level, coef in CONFIGS:
        k = args.k_summary if level == "summary" else args.k
        for method in METHODS:
            runs = {"ours": [], "nlpstats": []}
            for _ in range(args.repeats):
                runs["ours"].append(measured(sys.executable, "ours", level, coef, method, k, args.data))
                runs["nlpstats"].append(measured(args.nlpstats_python, "nlpstats", level, coef, method, k, args.data))
            cpu = {s: statistics.median(r["cpu"] for r in v) for s, v in runs.items()}
            peak = {s: max(r["peak_mb"] for r in v) for s, v in runs.items()}
            print(f"{level} {coef:8} {method:9} k={k:<5} ours CPU {cpu['ours']:6.2f} s peak {peak['ours']:5.0f} MB | "
                  f"nlpstats CPU {cpu['nlpstats']:7.2f} s peak {peak['nlpstats']:5.0f} MB | "
                  f"nlpstats / ours {cpu['nlpstats'] / cpu['ours']:6.1f}x")
            print(f"    ours {runs['ours'][0]['result']}  nlpstats {runs['nlpstats'][0]['result']}")


if __name__ == "__main__":
    main()
