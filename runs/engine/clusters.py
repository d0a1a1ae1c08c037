"""``--resample-clusters ATTR``: the clusters of inputs an input attribute names, read for the
families that resample inputs (issue 45 item 3; the statistics: :mod:`metaeval.analyses.stats.clusters`).

An input's cluster is its value of the attribute (``metaeval ingest attributes``: a document
for its segments, a passage for its questions). Checked before anything is written, each a
one-line refusal: an attribute the dataset does not have (naming those it has), inputs without
a value (how many, and one of them), an input whose cells carry different values (a cluster is
a set of inputs), and a single cluster (nothing to resample). With one input per cluster the
rows are the unclustered ones bit for bit; the clustering is in the rows' conventions
(``resample_clusters``, ``clusters``), their fingerprint (so a clustered result is never reused
for an unclustered one) and the run's parameters.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from metaeval.errors import Argument, Message, WarehouseError

#: The conventions key naming the attribute whose clusters were resampled.
KEY = "resample_clusters"


def split(arrays: Sequence, resample_clusters: str | None) -> tuple[list, np.ndarray | None]:
    """A task's arrays without the clusters' labels the data append last when resampling
    clusters (:meth:`metaeval.runs.engine.selection.Data.task_arrays`), and those labels (None if not)."""
    arrays = list(arrays)
    if resample_clusters is None:
        return arrays, None
    return arrays[:-1], np.asarray(arrays[-1], dtype=object)


def kept(labels: np.ndarray | None, columns: np.ndarray | None) -> list | None:
    """The labels of the inputs a protocol kept (``columns``: a mask, None: all), as a list."""
    if labels is None:
        return None
    return list(labels if columns is None else labels[columns])


def conventions(resample_clusters: str | None) -> dict:
    """What the rows record of the clustering (the statistics add how many clusters)."""
    return {} if resample_clusters is None else {KEY: resample_clusters}


def refuse_with(resample_clusters: str | None, what: Message | str, *others) -> None:
    """A one-line refusal of clustered resampling combined with ``what`` (an option or method
    whose resamples do not draw inputs the way clusters are drawn)."""
    if resample_clusters is not None:
        raise WarehouseError(Message(Argument(KEY, resample_clusters), " is not available with ", what, *others))


def check_clustered(resample_clusters: str | None, method: str, resample_annotators: str | None,
                    coefficients) -> None:
    """ci and compare: the settings clustered resampling is refused with, in one line each --
    a method that resamples nothing (Fisher's interval, Williams' test), annotators re-drawn,
    partial coefficients."""
    if resample_clusters is None:
        return
    if method in ("fisher", "williams"):
        refuse_with(resample_clusters, Argument("method", method),
                    " (it resamples nothing); choose a resampling method")
    if resample_annotators is not None:
        refuse_with(resample_clusters, Argument("resample_annotators", resample_annotators))
    from metaeval.runs.engine.selection import control_of

    if any(control_of(c) is not None for c in coefficients):
        refuse_with(resample_clusters, "a partial correlation (", Argument("control"), ")")


def widening(wh, outcome) -> list[str]:
    """What a clustered ci says (``outcome``: its :class:`~metaeval.runs.engine.analyse.Outcome`): for
    each interval, its width beside the width of the same setting computed on single inputs when
    that is stored (the same cells: the fingerprint without the clusters), else that it is
    clustered and nothing unclustered is stored to compare. [] for an unclustered ci."""
    if getattr(outcome.analysis.params, "resample_clusters", None) is None:
        return []
    scope = outcome.scope
    return widening_lines(wh, outcome.rows(wh), scope.dataset, scope.human, scope.where)


def widening_lines(wh, rows, dataset: str, human: str, where=()) -> list[str]:
    """:func:`widening` of stored ``confidence_intervals`` rows of one dataset, human and subset
    (``where``; the rows' own settings: method, alpha, k, seed, aggregate, system inputs); the
    rows without clusters are passed over."""
    from metaeval import schema
    from metaeval.runs.engine import selection
    from metaeval.runs.engine.parameters import aggregate_fingerprint

    clustered = [r for r in rows.to_dict("records") if json_get(r["conventions"], KEY)]
    if not clustered:
        return []
    scope = selection.Scope(dataset, human, tuple(dict.fromkeys(r["metric"] for r in clustered)), (), (),
                            selection.Subset(where))
    plain = selection.load_data(wh, scope)   # the same cells, unclustered
    lines = []
    for r in clustered:
        attribute, count = json_get(r["conventions"], KEY), json_get(r["conventions"], "clusters")
        fingerprint = aggregate_fingerprint(plain.fingerprint((r["metric"], human))[0], r["aggregate"])
        found = wh.con.execute(schema.statements("clusters")["unclustered_interval"], {
            **{c: r[c] for c in ("dataset", "human", "metric", "level", "coefficient", "method", "alpha", "k",
                                 "seed", "subset", "aggregate", "system_inputs")},
            "fingerprint": fingerprint}).fetchall()
        width = r["upper"] - r["lower"] if _known(r["upper"]) and _known(r["lower"]) else float("nan")
        head = f"{r['metric']} {r['level']} {r['coefficient']}: {width:.3f} wide clustered by {attribute} ({count} clusters)"
        if not found or not _known(found[0][0]) or not _known(found[0][1]):
            lines.append(f"{head}; no unclustered interval of this setting is stored to compare (run the same ci "
                         "without clustering)")
            continue
        before = found[0][1] - found[0][0]
        ratio = f"x{width / before:.2f}" if before > 0 else "unclustered width 0"
        verdict = "widened" if width > before else "not widened"
        lines.append(f"{head}, {before:.3f} unclustered (run {found[0][2]}): {verdict} ({ratio})")
    return lines


def _known(x) -> bool:
    return x is not None and x == x


def json_get(conventions, key: str):
    """``key`` of a row's conventions (a JSON text or a mapping), None if absent."""
    import json

    if isinstance(conventions, str):
        conventions = json.loads(conventions)
    return (conventions or {}).get(key)
