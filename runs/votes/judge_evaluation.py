"""How good is my judge? ``evaluate --preferences FILE`` (issue 28 item 5): a new automatic judge's
preference file ingested and judged, with every stored automatic judge, against the stored human
judges (:func:`metaeval.runs.votes.judges.judges`), in the ingest's transaction.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from metaeval.errors import WarehouseError
from metaeval.runs.engine import parameters, selection

if TYPE_CHECKING:
    from metaeval.core import Store


@dataclass(frozen=True)
class JudgeEvaluation:
    """The outcome of :func:`evaluate_judge`: the judges the preference file holds (``judges``),
    the ingest's report, the :func:`metaeval.runs.votes.judges.judges` summary (``run_id`` None: up to
    date) and the latest rows of its three tables (``rows``: judge_statistics, judge_tests,
    preference_rankings) over every automatic judge of the dataset."""

    dataset: str
    human: str                              # the human judges, comma-joined (as stored)
    judges: tuple[str, ...]
    loaded: object = field(repr=False)
    summary: object = field(repr=False)
    rows: dict = field(repr=False)

    @property
    def computed(self) -> int:
        return self.summary.rows


def evaluate_judge(wh: Store, dataset: str, preferences: str | os.PathLike, *, humans: Sequence[str] = (),
                   k: int = parameters.DEFAULT_K, alpha: float = 0.05, seed: int = parameters.DEFAULT_SEED,
                   test: str = "permutation", correction: str = "holm", cluster_rule: str = "any",
                   where: Sequence = (), replace: bool = False, allow_new: bool = False,
                   command: str | None = None, force: bool = False,
                   resample_clusters: str | None = None, replicates: str = "mean",
                   replicate: int = 0) -> JudgeEvaluation:
    """How good is my judge? Ingest a preference file of automatic judges into ``dataset``
    (:func:`metaeval.ingest.preferences.ingest`: atomic, idempotent, conflicts need ``replace``)
    and judge it, with every stored automatic judge, against the majority of the stored human
    judges (``humans`` globs; default all): :func:`metaeval.runs.votes.judges.judges`'s statistics,
    intervals, judge-vs-judge tests and clusters, and Bradley-Terry rankings. ``replicate``: the run
    number of the file's rows that give none (as ``ingest preferences --replicate``); ``replicates``:
    as :func:`~metaeval.runs.votes.judges.judges`' (``resample``: the judges' runs drawn again inside
    the item resamples).

    Everything that can be checked is checked before the ingest writes: the options, the file
    (every row parsed; its judges automatic: human verdicts are the reference, ingested with
    ``ingest preferences``), the dataset's human judges and the ``where`` subset's attributes; the
    judges' statistics are computed inside the ingest's transaction, so that a refusal they raise
    (a subset without an item, say) leaves the preferences unstored."""
    from metaeval import schema
    from metaeval.ingest import preferences as ingest_preferences
    from metaeval.runs.votes import judges as judges_runs

    judges_runs.check_options(k=k, alpha=alpha, test=test, correction=correction, cluster_rule=cluster_rule,
                              ridge=judges_runs.pf.DEFAULT_RIDGE)
    wh.require_dataset(dataset)
    path = Path(preferences)
    if not path.is_file():
        raise WarehouseError(f"{str(path)!r}: no such file")
    rows = ingest_preferences.parse(path)
    human_rows = rows[rows["kind"] == "human"]
    if len(human_rows):
        r = human_rows.iloc[0]
        raise WarehouseError(f"{path}:{int(r['line'])}: judge {r['judge']!r} is of kind human; the preference file "
                             "evaluated is an automatic judge's (the human verdicts are the reference: ingest them "
                             "on their own)")
    stored = wh.con.execute(schema.read("preferences_of"), {"dataset": dataset}).df()
    kinds = stored.drop_duplicates("judge").set_index("judge")["kind"]
    human_judges = judges_runs.choose(sorted(kinds.index[kinds == "human"]), humans, "human", "humans", dataset)
    for attribute, value in selection.parse_where(where):
        if value not in (values := wh.attribute_values(dataset, attribute)):
            raise WarehouseError(f"attribute {attribute!r} of dataset {dataset!r} never has the value {value!r}; "
                                 f"its values: {', '.join(values)}")
    prepared = []   # the judges computed on the merged preferences, inside the ingest's transaction
    loaded = ingest_preferences.ingest(
        wh, dataset, path, replace=replace, allow_new=allow_new, command=command, replicate=replicate,
        before_commit=lambda: prepared.append(judges_runs.prepare(
            wh, dataset, human_judges, (), k=k, alpha=alpha, seed=seed, test=test, correction=correction,
            cluster_rule=cluster_rule, where=where, force=force, resample_clusters=resample_clusters,
            replicates=replicates)))
    summary = judges_runs.write(wh, prepared[0])
    latest = judges_runs.latest(wh, dataset, summary.human, list(summary.tied_majority))
    return JudgeEvaluation(dataset, summary.human, tuple(dict.fromkeys(rows["judge"])), loaded, summary, latest)
