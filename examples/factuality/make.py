"""A small synthetic factual-consistency benchmark (issue 26 item 6), generated from a seed.

    python examples/factuality/make.py            # writes scores.csv and attributes.csv here

Two source datasets, as in the factuality benchmarks (FRANK, SummaC): ``cnndm`` and ``xsum``, each
with 40 inputs summarised by its own 4 systems (xsum's systems hallucinate more: lower quality).
Each input's first 20 are the ``validation`` split, the last 20 the ``test`` split (attributes
``source`` and ``split``, input-level, in attributes.csv). Per cell (system s, input i), a latent
consistency ``t = q_s + e_si`` (q_s the system's quality, e_si ~ N(0, 1) the summary's own):

- ``human.consistency``: the human judgment, sigmoid(t) in (0, 1), rounded to 3 decimals;
- ``human.label``: the binary label, 1 (consistent) when t > 0, else 0;
- ``system-recognizer``: q_s + N(0, 0.15): a metric that only recognises which system wrote the
  summary. Its pooled correlation with the human is high (the systems differ), its partial
  correlation with the system as control variable near zero (it knows nothing of e_si);
- ``consistency-detector``: t + N(0, 0.7): a metric that reads the summary itself; high pooled
  and partial correlations.

The outputs are committed (small, and so the README's walk-through needs no script); the script
regenerates them byte for byte (a fixed seed, numpy's PCG64).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

SEED = 26
SOURCES = {"cnndm": (1.5, 0.8, 0.2, -0.4), "xsum": (0.4, -0.3, -0.9, -1.6)}   # system qualities q_s
INPUTS_PER_SOURCE = 40
VALIDATION = 20      # the first inputs of each source; the rest are the test split
RECOGNIZER_NOISE = 0.15
DETECTOR_NOISE = 0.7


def generate(seed: int = SEED) -> tuple[list[dict], list[dict]]:
    """The score rows (system, input, and one column per measure) and the attribute rows."""
    rng = np.random.default_rng(seed)
    scores, attributes = [], []
    for source, qualities in SOURCES.items():
        inputs = [f"{source}-{i:02d}" for i in range(INPUTS_PER_SOURCE)]
        for n, input_ in enumerate(inputs):
            attributes.append({"input": input_, "attribute": "source", "value": source})
            attributes.append({"input": input_, "attribute": "split",
                               "value": "validation" if n < VALIDATION else "test"})
        for s, q in enumerate(qualities):
            system = f"{source}-sys{s + 1}"
            e = rng.standard_normal(len(inputs))
            recognizer = q + RECOGNIZER_NOISE * rng.standard_normal(len(inputs))
            detector = q + e + DETECTOR_NOISE * rng.standard_normal(len(inputs))
            for i, input_ in enumerate(inputs):
                t = q + e[i]
                scores.append({"system": system, "input": input_,
                               "human.consistency": round(float(1 / (1 + np.exp(-t))), 3),
                               "human.label": int(t > 0),
                               "system-recognizer": round(float(recognizer[i]), 4),
                               "consistency-detector": round(float(detector[i]), 4)})
    return scores, attributes


def write(directory: Path, seed: int = SEED) -> tuple[Path, Path]:
    import csv

    scores, attributes = generate(seed)
    paths = directory / "scores.csv", directory / "attributes.csv"
    for path, rows in zip(paths, (scores, attributes)):
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
    return paths


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    p.add_argument("--seed", type=int, default=SEED)
    a = p.parse_args()
    for path in write(a.out, a.seed):
        print(path)
