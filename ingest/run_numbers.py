"""``--replicate N`` of the ingests whose files carry no run column of their own (``ingest
sacrerouge``, ``ingest mtme``; ``ingest eee`` also reads a record's ``metadata.replicate``): the
run (``scores.replicate``) of the automatic scores a file gives, checked as ``ingest table``
checks it (:func:`metaeval.ingest.table.run_option`: a non-negative integer, else one line naming
the option, before anything is made; a run on a file with human judgments refused). The same run
given again with other values is the merge's conflict, named ``replicate=N``; with the same
values it changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from metaeval.batch import Batch


def given(batches: Sequence[Batch], replicate: int, *, judgments: str = "refuse") -> list[Batch]:
    """``batches`` with their scores' run ``replicate`` (and in their recorded options when not
    0). ``judgments``: "refuse" a run for a file with human judgments (as ``ingest table``), or
    "skip" such files (``ingest mtme``: the set's human scores are ingested as they are, the run
    being its metrics')."""
    from metaeval.ingest.table import _check_replicate, run_option

    replicate = run_option(replicate, [b.file for b in batches])
    if judgments == "refuse":
        _check_replicate(batches, replicate)
    for b in batches:
        if replicate and not (judgments == "skip" and b.counts[1]):
            b.replicate = replicate
            b.options = {**b.options, "replicate": replicate}
    return list(batches)
