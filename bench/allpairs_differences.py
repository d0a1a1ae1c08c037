"""How far the linear sums of ``evaluate --all-pairs`` lie from the cell-by-cell evaluators, on the
data of ``bench_allpairs.py`` (REALSumm-shaped, seeded): for every level, coefficient and
permutation method the largest |delta_b - delta_b'| over every pair and resample
(``permuted_sums.pairs_evaluator`` against ``batched.permutation_evaluator``), and for the
summary-level bootstrap the largest |r_b - r_b'| (``drawn_sums`` against the gathered columns)::

    python bench/allpairs_differences.py --metrics 10 --k 1000
"""

from __future__ import annotations

import argparse
import itertools
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from bench_allpairs import generate
from metaeval.analyses.stats import batched, drawn_sums, hypothesis, permuted_sums, resampling
from metaeval.analyses.stats.validation import coefficient_iv


def matrices(metrics: int, seed: int) -> tuple[list[np.ndarray], np.ndarray]:
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "scores.csv"
        generate(csv, 24, 100, metrics, seed)
        frame = pd.read_csv(csv)
    wide = {c: frame.pivot(index="system", columns="input", values=c).to_numpy() for c in frame.columns[2:]}
    return [wide[f"metric.{m:02d}"] for m in range(metrics)], wide["human"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--metrics", type=int, default=10)
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=37)
    args = parser.parse_args()
    permuted_sums.KENDALL_SUMMARY = True   # (off by default; its kernel measured too)
    metrics, Z = matrices(args.metrics, args.seed)
    standard = [hypothesis.standardize(X) for X in metrics]
    rng = np.random.default_rng(0)
    print("| level | coefficient | method | max abs difference |\n|---|---|---|---|")
    for level, name, method in itertools.product(("system", "summary"), ("pearson", "spearman", "kendall"),
                                                 ("both", "systems", "inputs")):
        coef = coefficient_iv(name)
        (mask,) = resampling.permutation_masks(rng, args.k, *Z.shape, method)
        fast = permuted_sums.pairs_evaluator(standard, Z, level, coef)[0](mask)
        worst = 0.0
        for p, (i, j) in enumerate(itertools.combinations(range(len(metrics)), 2)):
            slow = batched.permutation_evaluator(standard[i], standard[j], Z, level, coef)(mask)
            assert np.array_equal(np.isnan(fast[p]), np.isnan(slow))
            worst = max(worst, float(np.nanmax(np.abs(fast[p] - slow), initial=0.0)))
        print(f"| {level} | {name} | perm-{method} | {worst:.3g} |", flush=True)
    for name, method in itertools.product(("pearson", "spearman"), ("both", "systems")):
        rows, cols = resampling.bootstrap_indices(rng, args.k, *Z.shape, method)
        coef = coefficient_iv(name)
        worst = max(float(np.nanmax(np.abs(drawn_sums.bootstrap_evaluator(X, Z, "summary", coef, method)(rows, cols)
                                           - batched.bootstrap_evaluator(X, Z, "summary", coef)(rows, cols))))
                    for X in metrics)
        print(f"| summary | {name} | boot-{method} | {worst:.3g} |", flush=True)


if __name__ == "__main__":
    main()
