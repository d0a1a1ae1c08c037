"""Write the documentation's example files of new scores, from seeds (run from the repository's root):

    python docs/examples/mymetric.py

- ``mymetric.csv``: a made-up metric ``mymetric`` for the ``metaeval demo`` dataset: each cell's
  value is the experts' mean relevance of that summary (the demo's seeded judgments) plus
  Gaussian noise of standard deviation 0.6 (seed 1), rounded to 4 decimals;
- ``mymetric-factuality.csv``: ``mymetric`` for ``examples/factuality`` (``human.consistency``
  plus noise of standard deviation 0.15, seed 2, 4 decimals);
- ``my-judge.csv``: a new automatic judge ``my-judge`` of ``preferences.csv``: the verdicts of
  ``judge-consistent``, each replaced with probability 0.2 (seed 3) by a uniform draw of a, b or tie.

The tables are long (system, input, measure, value; the preferences' own columns), as
``ingest table``, ``evaluate`` and ``ingest preferences`` read them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from metaeval.runs import demo

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def demo_metric() -> pd.DataFrame:
    data = demo.generate()
    human = data[data["measure"] == demo.HUMAN].groupby(["system", "input"], sort=True)["value"].mean()
    noise = np.random.default_rng(1).normal(0.0, 0.6, len(human))
    return human.reset_index().assign(measure="mymetric", value=np.round(human.to_numpy() + noise, 4))


def factuality_metric() -> pd.DataFrame:
    scores = pd.read_csv(ROOT / "examples" / "factuality" / "scores.csv")
    noise = np.random.default_rng(2).normal(0.0, 0.15, len(scores))
    return scores[["system", "input"]].assign(measure="mymetric",
                                             value=np.round(scores["human.consistency"] + noise, 4))


def judge() -> pd.DataFrame:
    prefs = pd.read_csv(HERE / "preferences.csv")
    mine = prefs[prefs["judge"] == "judge-consistent"].reset_index(drop=True).assign(judge="my-judge")
    rng = np.random.default_rng(3)
    flip = rng.random(len(mine)) < 0.2
    draws = rng.choice(["a", "b", "tie"], len(mine))
    mine.loc[flip, "winner"] = draws[flip]
    return mine


def main() -> None:
    columns = ["system", "input", "measure", "value"]
    demo_metric()[columns].to_csv(HERE / "mymetric.csv", index=False)
    factuality_metric()[columns].to_csv(HERE / "mymetric-factuality.csv", index=False)
    judge().to_csv(HERE / "my-judge.csv", index=False)


if __name__ == "__main__":
    main()
