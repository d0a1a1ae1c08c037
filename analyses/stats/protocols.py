"""Which inputs a system score averages (Deutsch, Dror & Roth, NAACL 2022).

A system's score is the mean of its cells. When the metric scored inputs the human did not
judge (a metric is cheap to run on the whole test set, humans judge a subset), two protocols
differ:

- ``"judged"``: the metric's system score averages only the inputs the human judged, so both
  sides average the same inputs (paired); the metric's other scores are not used;
- ``"all"``: the metric's system score averages every input it scored, the human's the judged
  ones; a bootstrap then draws the two sets of inputs independently (nlpstats'
  ``paired_inputs=False``).

When every input the metric scored is judged, the two are the same computation. Only the
system level depends on the protocol: summary- and global-level correlations pair the two
sides' values of the same cells.
"""

from __future__ import annotations

import numpy as np

SYSTEM_INPUTS = ("all", "judged")
DESCRIPTIONS = {
    "all": "a metric's system score averages every input it scored, the human's the inputs judged; "
           "bootstraps draw the two sets of inputs independently when they differ (nlpstats paired_inputs=False)",
    "judged": "a metric's system score averages only the inputs the human judged (paired with the human's)",
}


def system_inputs_iv(protocol: object) -> str:
    if protocol not in SYSTEM_INPUTS:
        raise ValueError(f"`system_inputs` must be one of {list(SYSTEM_INPUTS)}; got {protocol!r}.")
    return str(protocol)


def judged_inputs(Z: np.ndarray) -> np.ndarray:
    """The columns (inputs) where the human matrix ``Z`` has a value."""
    return (~np.isnan(Z)).any(axis=0)


def unjudged_inputs(Z: np.ndarray, *metrics: np.ndarray) -> int:
    """How many inputs the metrics scored that the human did not judge at all."""
    scored = np.zeros(Z.shape[1], dtype=bool)
    for m in metrics:
        scored |= (~np.isnan(m)).any(axis=0)
    return int((scored & ~(~np.isnan(Z)).any(axis=0)).sum())
