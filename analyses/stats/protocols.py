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
sides' values of the same cells, so an input the human did not judge holds no pair there and is
left out under either protocol (:func:`apply`) -- else a bootstrap over inputs would draw such
empty inputs and its interval would depend on how many the metric happened to score.
"""

from __future__ import annotations

from collections.abc import Sequence

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


def apply(arrays: Sequence[np.ndarray], level: str, system_inputs: str
          ) -> tuple[list[np.ndarray], bool, dict, np.ndarray | None]:
    """The matrices ``arrays`` (metrics..., then the human Z, on one grid) as a ``level``
    analysis under ``system_inputs`` reads them.

    Returns ``(arrays, paired, conventions, kept)``: the arrays restricted to the judged inputs
    (``kept``, a column mask; None when nothing is restricted: the system level under "all");
    ``paired``, whether a bootstrap draws the metric's and the human's inputs together (False
    only at the system level under "all" with unjudged inputs: nlpstats' paired_inputs=False);
    and the conventions to record (``system_inputs``, its rule, ``unjudged_inputs``: inputs a
    metric scored that the human did not judge).
    """
    system_inputs = system_inputs_iv(system_inputs)
    *metrics, Z = arrays
    unjudged = unjudged_inputs(Z, *metrics)
    kept = None
    if system_inputs == "judged" or level != "system":   # the grid of the judged inputs
        kept = judged_inputs(Z)
        if not kept.all():  # (every input judged: the arrays as they are, not a copy of them)
            # C order, as the warehouse's arrays: sums then add up in the order they would on data
            # holding only these inputs (a boolean column index may return another memory order)
            metrics, Z = [np.ascontiguousarray(m[:, kept]) for m in metrics], np.ascontiguousarray(Z[:, kept])
    paired = kept is not None or unjudged == 0
    conventions = {"system_inputs": system_inputs if level == "system"
                   else f"{system_inputs} (no effect at this level)", "system_inputs_rule": DESCRIPTIONS[system_inputs], "unjudged_inputs": unjudged}
    return [*metrics, Z], paired, conventions, kept
