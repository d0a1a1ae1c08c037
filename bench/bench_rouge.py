"""Benchmark: ROUGE-1/2/L (P/R/F1) on all REALSumm summaries, ours vs rouge-score, plus R_k ablation.

Usage: python bench/bench_rouge.py [--data PATH/summaries.jsonl] [--repetitions 100]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metaeval.analyses.text import TextCorpus, read_sacrerouge_jsonl, rouge, rouge1_ablated, variant_grid  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "realsumm" / "summaries.jsonl"
VARIANTS = variant_grid(kinds=("rouge-1", "rouge-2", "rouge-l"), stem=(False,), stop=(False,))


def best_of(fn, runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repetitions", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3, help="best of this many runs for our timings")
    args = parser.parse_args()
    records = read_sacrerouge_jsonl(args.data)

    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=False)

    def ours_from_text():
        return rouge(TextCorpus(records), VARIANTS)

    t_ours_text, scores = best_of(ours_from_text, args.runs)
    corpus = TextCorpus(records)
    t_ours_arrays, _ = best_of(lambda: rouge(corpus, VARIANTS), args.runs)
    summaries, references = corpus.summary_strings(), corpus.reference_strings()
    start = time.perf_counter()
    theirs = [scorer.score(refs[0], s) for s, refs in zip(summaries, references)]
    t_theirs = time.perf_counter() - start
    worst = max(
        abs(scores[f"{k}.{stat}"][i] - getattr(theirs[i][rk], attr))
        for k, rk in (("rouge-1", "rouge1"), ("rouge-2", "rouge2"), ("rouge-l", "rougeL"))
        for stat, attr in (("precision", "precision"), ("recall", "recall"), ("f1", "fmeasure"))
        for i in range(len(corpus))
    )

    proportions = np.round(np.linspace(0.0, 1.0, 11), 2)
    start = time.perf_counter()
    for seed, p in enumerate(proportions):
        rouge1_ablated(corpus, float(p), args.repetitions, seed=seed)
    t_ablation = time.perf_counter() - start

    n = len(corpus)
    print(f"summaries: {n}, references: {len(corpus.ref_text)}, distinct texts: {len(corpus.texts)}")
    print(f"ROUGE-1/2/L P/R/F1, ours incl. tokenisation : {t_ours_text:8.3f} s")
    print(f"ROUGE-1/2/L P/R/F1, ours on cached token ids: {t_ours_arrays:8.3f} s")
    print(f"ROUGE-1/2/L P/R/F1, rouge-score             : {t_theirs:8.3f} s")
    print(f"speed-up incl. tokenisation: {t_theirs / t_ours_text:6.1f}x; on cached ids: {t_theirs / t_ours_arrays:6.1f}x")
    print(f"max |ours - rouge-score| over all 9 scores: {worst:.3g}")
    print(f"R_k ablation, {len(proportions)} proportions x {args.repetitions} repetitions x {n} summaries: {t_ablation:.2f} s")


if __name__ == "__main__":
    main()
