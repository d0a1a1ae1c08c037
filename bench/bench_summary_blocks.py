"""Summary-level resampling on many inputs: the evaluator (blocks of inputs, systems first) vs
the row-wise computation it replaced, side by side in one run.

For S systems × M inputs of seeded uniform data (Z = X + noise), the same Boot-Both draws
(``bootstrap_indices``, seed 1) and the same Perm-Both masks are evaluated by

- ``blocked``: :func:`metaeval.analyses.stats.batched.bootstrap_evaluator` /
  ``permutation_evaluator`` (what ``ci`` and ``compare`` run), at the default batch size of
  :func:`metaeval.analyses.stats.batched.resample_bytes`;
- ``row-wise``: the previous implementation, written out here -- the resampled matrices
  gathered whole as (c, M, N) and each input's r taken along its row by
  :func:`metaeval.analyses.stats.correlation.corr`, at the batch size its 96 bytes per cell
  gave (1 resample per batch from M ~ 140 000 on at S = 20).

It checks that both give the same numbers (bit for bit) and prints ms per resample (untraced) and
the peak of numpy's allocations while evaluating one batch (tracemalloc) of each. From the repository root:

    .venv/bin/python bench/bench_summary_blocks.py --inputs 100000 --k 20
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metaeval.analyses.stats import _engine, batched, resampling  # noqa: E402
from metaeval.analyses.stats.validation import coefficient_iv  # noqa: E402
from metaeval.analyses.stats.correlation import corr, summary_mean  # noqa: E402


def row_wise_boot(X, Z, coef, rows, cols):
    """Boot-Both as before: X[rows] gathered whole, r along the rows of (c, M, N)."""
    r = corr(X[rows].transpose(0, 2, 1), Z[rows].transpose(0, 2, 1), coef)
    return summary_mean(r, batched._counts(cols, X.shape[1]))


def row_wise_perm(X, Y, Z, coef, mask):
    """Perm-Both as before: X' and Y' built whole, r along the rows of (c, M, N)."""
    xp, yp = np.where(mask, Y, X), np.where(mask, X, Y)
    zt = np.broadcast_to(Z, xp.shape).transpose(0, 2, 1)
    return summary_mean(corr(xp.transpose(0, 2, 1), zt, coef)) - summary_mean(corr(yp.transpose(0, 2, 1), zt, coef))


def measure(evaluate, draws, size):
    """(ms per resample, peak MiB of numpy's allocations in one batch, statistics): the draws
    evaluated in batches of ``size``, timed untraced; the peak traced on the first batch alone."""
    k = draws[0].shape[0]
    out = np.empty(k)
    start = time.perf_counter()
    for a in range(0, k, size):
        out[a:a + size] = evaluate(*(d[a:a + size] for d in draws))
    seconds = time.perf_counter() - start
    tracemalloc.start()
    evaluate(*(d[:size] for d in draws))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return 1e3 * seconds / k, peak / 2**20, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--k", type=int, default=20, help="Resamples per method.")
    parser.add_argument("--coefficient", default="pearson")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    shape = (args.systems, args.inputs)
    X = rng.random(shape)
    Y = X + 2 * rng.random(shape)
    Z = X + rng.random(shape)
    coef = coefficient_iv(args.coefficient)
    new_size = _engine.default_batch_size(batched.resample_bytes("summary", coef, *shape))
    old_size = max(1, _engine.MEMORY_BUDGET // (batched.bytes_per_cell("summary", coef) * args.systems * args.inputs))
    boot = resampling.bootstrap_indices(np.random.default_rng(1), args.k, *shape, "both")
    perm = resampling.permutation_masks(np.random.default_rng(1), args.k, *shape, "both")
    cases = [
        ("Boot-Both", boot, batched.bootstrap_evaluator(X, Z, "summary", coef),
         lambda rows, cols: row_wise_boot(X, Z, coef, rows, cols)),
        ("Perm-Both", perm, batched.permutation_evaluator(X, Y, Z, "summary", coef),
         lambda mask: row_wise_perm(X, Y, Z, coef, mask)),
    ]
    print(f"{args.systems} systems × {args.inputs:,} inputs, summary {coef.label}, k = {args.k}; "
          f"batch sizes: blocked {new_size}, row-wise {old_size}\n")
    print("| method | blocked ms/resample | row-wise ms/resample | speed-up | blocked peak | row-wise peak | same numbers |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for label, draws, blocked, row_wise in cases:
        t_new, m_new, s_new = measure(blocked, draws, new_size)
        t_old, m_old, s_old = measure(row_wise, draws, old_size)
        same = np.array_equal(s_new, s_old, equal_nan=True)
        print(f"| {label} | {t_new:.1f} | {t_old:.1f} | ×{t_old / t_new:.1f} | {m_new:.0f} MiB | {m_old:.0f} MiB "
              f"| {'bit-identical' if same else 'DIFFERENT'} |", flush=True)


if __name__ == "__main__":
    main()
