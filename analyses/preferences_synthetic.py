"""A seeded synthetic set of pairwise preferences whose truth is known.

Five named systems with true Bradley-Terry strengths (``TRUE_STRENGTHS``: sys-1 best, sys-5
worst). For each input, ``pairs`` distinct pairs of systems are compared; each comparison has a
latent utility difference u = theta_a - theta_b + e (e ~ N(0, 0.5): how much better system_a's
output is for this input). Three human annotators judge it once, in a random order: u plus their
own noise N(0, 0.5), a tie when within 0.15. Three automatic judges judge it in both orders:

- ``judge-consistent``: u + N(0, 0.4) drawn once per item (both orders get the same verdict),
  a tie when within 0.1: accurate and positionally consistent;
- ``judge-position``: u + N(0, 0.4) per order, plus 1.0 towards the output shown first: a
  position-biased judge (first_position_rate well above 0.5, low consistency);
- ``judge-ties``: u + N(0, 0.4) per item, a tie when within 0.9: a judge that ties often.

:func:`synthetic_preferences` returns the long table ``metaeval ingest preferences`` reads;
``python -m metaeval.analyses.preferences_synthetic FILE`` writes it as CSV (the repository's
``docs/examples/preferences.csv`` is seed 0).
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

TRUE_STRENGTHS = {"sys-1": 1.2, "sys-2": 0.6, "sys-3": 0.0, "sys-4": -0.6, "sys-5": -1.2}
HUMANS = ("annotator-1", "annotator-2", "annotator-3")
JUDGES = ("judge-consistent", "judge-position", "judge-ties")


def _verdict(u: np.ndarray, tie: float) -> np.ndarray:
    return np.where(u > tie, "a", np.where(u < -tie, "b", "tie"))


def synthetic_preferences(seed: int = 0, inputs: int = 60, pairs: int = 3) -> pd.DataFrame:
    """The long table ``input, system_a, system_b, judge, order, winner, kind`` (see the module)."""
    rng = np.random.default_rng(seed)
    names = list(TRUE_STRENGTHS)
    theta = np.array(list(TRUE_STRENGTHS.values()))
    rows = []
    for j in range(inputs):
        chosen: list[tuple[int, int]] = []    # distinct pairs, each in a random orientation
        while len(chosen) < pairs:
            a, b = (int(x) for x in rng.choice(len(names), size=2, replace=False))
            if (a, b) not in chosen and (b, a) not in chosen:
                chosen.append((a, b))
        for a, b in chosen:
            item = dict(input=f"doc-{j + 1:03d}", system_a=names[a], system_b=names[b])
            u = theta[a] - theta[b] + rng.normal(0, 0.5)
            for h in HUMANS:
                order = "ab" if rng.random() < 0.5 else "ba"
                rows.append({**item, "judge": h, "order": order,
                             "winner": _verdict(u + rng.normal(0, 0.5), 0.15).item(), "kind": "human"})
            shared = rng.normal(0, 0.4)
            for order, first in (("ab", 1.0), ("ba", -1.0)):
                rows.append({**item, "judge": "judge-consistent", "order": order,
                             "winner": _verdict(u + shared, 0.1).item(), "kind": "automatic"})
                rows.append({**item, "judge": "judge-position", "order": order,
                             "winner": _verdict(u + rng.normal(0, 0.4) + first, 0.1).item(), "kind": "automatic"})
                rows.append({**item, "judge": "judge-ties", "order": order,
                             "winner": _verdict(u + shared, 0.9).item(), "kind": "automatic"})
    return pd.DataFrame(rows, columns=["input", "system_a", "system_b", "judge", "order", "winner", "kind"])


if __name__ == "__main__":  # pragma: no cover - the documented way to write the file
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m metaeval.analyses.preferences_synthetic FILE.csv")
    synthetic_preferences().to_csv(sys.argv[1], index=False)
