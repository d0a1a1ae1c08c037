""""How good is my metric?": ingest a new metric's scores and evaluate it in one call.

:func:`evaluate` runs, over one dataset and human judgment, the three persisted analyses of
:mod:`metaeval.runs.engine.api` — correlations (table ``correlations``), confidence intervals
(``confidence_intervals``, Boot-Both by default) and tests of each evaluated metric against
every other metric (``hypothesis_tests``, Perm-Both, two-sided, Holm within each metric's
family by default) — each reused when up to date, so a second call computes nothing. Its
:class:`Evaluation` holds one row per metric, level and coefficient: the correlation and its
CI, the metric's rank and significance cluster (mt-metrics-eval's rule by default, given only
when every pair of metrics was tested and the tests can reach their corrected level), and the
metrics it significantly beats and is beaten by.

The tests are two-sided so that one row per pair (a, b), a the evaluated metric, says both
"a beats b" (significant, delta > 0) and "b beats a" (significant, delta < 0); the family of a
corrected p-value is a's pairs against all other metrics, as ``metaeval compare`` writes it.
Pairs of two metrics that are not evaluated are not tested (``all_pairs=True`` tests them
too): no cluster is given then (a cluster from a partial set of tests could separate two
metrics whose test was not run), only the wins and losses the tests found; ``n_tested`` says
how many tests each row rests on.

``system_inputs`` ("all" by default, or "judged") is the system-score protocol of the three
analyses, as ``metaeval correlate|ci|compare --system-inputs`` (:mod:`metaeval.analyses.stats.protocols`):
the rows equal theirs under the same protocol, and results of one protocol are never reused for
the other (it is a parameter of every row). ``aggregate="median"`` (with ``levels=["system"]``):
a system's score the median over its inputs, as ``correlate|ci|compare --aggregate median``; the
settings, the caption, the conventions and the signature say it (a mean's: as before the option).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from metaeval.analyses import conclusions, ranking, signature
from metaeval.errors import Argument, Message, WarehouseError
from metaeval.analyses.stats import allpairs, vocabulary
from metaeval.runs.engine import analyse as engine
from metaeval.runs.engine import executors, parameters, runner, selection
from metaeval.runs.metrics import comparisons, correlations, intervals, pair_blocks

if TYPE_CHECKING:
    from metaeval.runs.engine.runner import ProgressFactory
    from metaeval.core import Store
    from metaeval.batch import Batch, LoadReport

#: Levels evaluated by default: between systems and between the summaries of each input.
LEVELS = ("system", "summary")
#: Test defaults of an evaluation (see the module docstring).
METHOD, ALTERNATIVE, CORRECTION, CI_METHOD = "perm-both", "two-sided", "holm", "boot-both"
#: The system-score protocol as a caption says it.
SYSTEM_INPUTS_TEXT = {"all": "the metric's mean over every input it scored, the human's over the judged ones",
                      "judged": "means over the inputs the human judged only"}


# --- adding scores --------------------------------------------------------------------------------
def parse_scores(source: str | os.PathLike | pd.DataFrame, *, human: Sequence[str] = (),
                 lower: Sequence[str] = ()) -> Batch:
    """A table of scores (a file or a DataFrame, wide or long) as a :class:`~metaeval.batch.Batch`,
    read by the table ingest's exact reader (:func:`metaeval.ingest.table.parse` /
    :func:`~metaeval.ingest.table.parse_frame`, a DataFrame named ``<DataFrame>`` in messages)."""
    from metaeval.ingest import table

    if isinstance(source, pd.DataFrame):
        return table.parse_frame(source, "<DataFrame>", human=human, lower=lower)
    return table.parse(Path(source), human=human, lower=lower)


def add_scores(wh: Store, dataset: str, sources: str | os.PathLike | pd.DataFrame | Sequence, *,
               human: Sequence[str] = (), lower: Sequence[str] = (), replace: bool = False,
               allow_new: bool = False, command: str | None = None) -> list[LoadReport]:
    """Ingest score tables (paths or DataFrames) into ``dataset`` in one transaction: exactly
    ``metaeval ingest table`` (:func:`metaeval.ingest.table.ingest`; ``allow_new``: see
    :meth:`Store.load`). ``human``: globs of the measures that are human judgments."""
    from metaeval.ingest import table

    if isinstance(sources, (str, os.PathLike, pd.DataFrame)):
        sources = [sources]
    if not len(sources):
        raise WarehouseError("no score table given")
    sources = [s if isinstance(s, pd.DataFrame) else Path(s) for s in sources]
    names = ["<DataFrame>" if isinstance(s, pd.DataFrame) else str(s) for s in sources]
    return table.ingest(wh, dataset, sources, human=human, lower=lower, replace=replace, allow_new=allow_new,
                        command=command, names=names)


def new_metrics(batches_or_reports_measures: Sequence[pd.DataFrame]) -> list[str]:
    """The automatic measures named in parsed batches' ``measures`` frames, in order."""
    names: list[str] = []
    for frame in batches_or_reports_measures:
        for name, kind in zip(frame["name"], frame["kind"]):
            if kind == "automatic" and name not in names:
                names.append(name)
    return names


# --- evaluating ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Evaluation:
    """The outcome of :func:`evaluate` on one dataset: ``table`` (one row per metric, level and
    coefficient), the three analyses' :class:`~metaeval.runs.engine.analyse.Outcome` s, the ingest
    reports, and the metrics left out (``skipped``, with the reason)."""

    dataset: str
    human: str
    metrics: tuple[str, ...]                 # the evaluated metrics
    against: tuple[str, ...]                 # the other metrics of the scope
    settings: dict
    outcomes: dict[str, engine.Outcome] = field(repr=False)
    table: pd.DataFrame = field(repr=False)
    loaded: list = field(default_factory=list, repr=False)
    skipped: dict[str, str] = field(default_factory=dict)
    duplicates: dict[str, tuple[str, str]] = field(default_factory=dict)   # measure -> (duplicate_of, relation)
    #: the human ceiling stored by `metaeval annotators` (leave-one-out), per level and coefficient
    ceiling: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)
    #: the tests of each evaluated metric against each other one (:func:`tests_table`): the other
    #: metric's correlation [CI], delta, p, corrected p, significant, per level and coefficient
    tests: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)

    @property
    def computed(self) -> int:
        """Results computed by this call (0: everything was up to date)."""
        return sum(o.summary.computed for o in self.outcomes.values())

    @property
    def up_to_date(self) -> bool:
        return all(o.summary.up_to_date for o in self.outcomes.values())

    def __repr__(self) -> str:
        state = "up to date, nothing computed" if self.up_to_date else f"computed {self.computed} results"
        return (f"Evaluation({', '.join(self.metrics)} on {self.dataset} against {self.human}: "
                f"{len(self.against)} other metric{'' if len(self.against) == 1 else 's'}, levels {list(self.settings['levels'])}, coefficients "
                f"{list(self.settings['coefficients'])}; {state}; {len(self.table)} rows in .table)")

    def caption(self) -> str:
        """The conventions, for a table caption."""
        s = self.settings
        kendall = " (Kendall's tau-b)" if "kendall" in s["coefficients"] else ""
        return (f"Correlation with {self.human} on {self.dataset}"
                + (f" (the cells of the subset {s['subset']})" if s.get("subset") else "")
                + (" (a system's score: the metric's {} over its inputs, the human's {})".format(
                    *parameters.aggregate_sides(s["aggregate"])) if s.get("aggregate") else "")
                + f": level {', '.join(s['levels'])}; "
                f"coefficient {', '.join(s['coefficients'])}{kendall}; "
                f"{100 * (1 - s['alpha']):g}% CI {s['ci_method']} (k={s['k']}, seed={s['seed']}"
                + ("; each cell's runs of a metric drawn again inside every resample" if s.get("replicates") ==
                   "resample" else "") + "); "
                f"tests {s['method']} ({s['alternative']}, k={s['k']}, seed={s['seed']}), "
                + (f"clusters of inputs ({s['resample_clusters']}) resampled whole, " if s.get("resample_clusters")
                   else "")
                + f"correction {s['correction']} within each metric's family, alpha={s['alpha']:g}; "
                + (f"clusters (cl.): {ranking.CLUSTER_RULE_TEXT[s['cluster_rule']]}, given only when every pair of "
                   f"metrics was tested" if self.clustered else
                   "no significance clusters (given only when every pair of metrics was tested and the tests can "
                   "reach their corrected level)")
                + ("" if s["all_pairs"] or len(self.against) < 2
                   else " (pairs of two metrics not evaluated are untested: --all-pairs)")
                + (f"; system scores: {SYSTEM_INPUTS_TEXT[s['system_inputs']]} (--system-inputs "
                   f"{s['system_inputs']})" if "system" in s["levels"] else "")
                + (f"; signature {common}" if (common := signature.shared(self.table.get("signature", []))) else "")
                + "."
                + (f" Human ceiling (leave-one-out, metaeval annotators): {c}." if (c := self.ceiling_text()) else "")
                + (f" Duplicated measures (the same numbers): {self.duplicates_text()}." if self.duplicates else ""))

    #: the columns :meth:`rows` gives, in order
    ROW_COLUMNS = ("metric", "level", "coefficient", "correlation", "lower", "upper", "rank", "n_metrics", "cluster",
                   "beats", "beaten_by")

    def rows(self, everyone: bool = False) -> pd.DataFrame:
        """The evaluated metrics' rows (``everyone``: every metric's) in the order ``metaeval
        evaluate`` prints them -- per level and coefficient in the order evaluated, by correlation
        descending, undefined last -- with the columns a reader reads (:attr:`ROW_COLUMNS`; every
        column is in :attr:`table`). ``print(ev.rows().to_string(index=False))`` prints them whole."""
        from metaeval.present import ranking_tables

        shown = self.table if everyone else self.table[self.table["evaluated"]]
        return ranking_tables.sort_ranked(shown.reset_index(drop=True))[list(self.ROW_COLUMNS)]

    @property
    def clustered(self) -> bool:
        """Whether some row has a significance cluster (the tables then have a cluster column)."""
        return "cluster" in self.table and bool(self.table["cluster"].notna().any())

    def ceiling_text(self) -> str:
        from metaeval.runs.agreement import annotators

        if self.ceiling.empty:
            return ""
        return annotators.ceiling_text(self.ceiling, self.settings["levels"], self.settings["coefficients"])

    def duplicates_text(self) -> str:
        """``b = a (identical values)``, ... for the scope's duplicated measures."""
        return "; ".join(f"{m} = {d} ({'identical values' if r == 'identical' else 'affine, up to rounding'})"
                         for m, (d, r) in self.duplicates.items())


@dataclass(frozen=True)
class Request:
    """An evaluation asked of one dataset, its names and options checked (:func:`prepare`) and
    its score tables parsed, nothing written yet: what :func:`run_request` ingests and runs."""

    dataset: str
    human: str
    batches: tuple                           # the parsed score tables (Batch)
    named: tuple[str, ...]                   # their automatic measures
    options: dict                            # evaluate's keyword options (see evaluate)
    plan: _Plan | None = field(default=None, repr=False)   # without score tables: planned already


@dataclass(frozen=True)
class _Plan:
    """What the analyses of a request run on: the scope, its data, the metrics left out and why,
    the evaluated metrics, and the three analyses (constructed and planned: their checks passed)."""

    scope: selection.Scope
    data: selection.Data | None
    skipped: dict[str, str]
    focus: list[str]
    analyses: dict[str, runner.Analysis]
    #: ``replicates="resample"``: the data of the intervals, with each metric's runs (the others read ``data``)
    runs: selection.Data | None = None


def prepare(wh: Store, dataset: str, human: str, scores: Sequence = (), *, metrics: Sequence[str] = (),
            against: Sequence[str] = (), levels: Sequence[str] = (), coefficients: Sequence[str] = (),
            method: str = METHOD, correction: str = CORRECTION, ci_method: str = CI_METHOD, k: int = parameters.DEFAULT_K,
            seed: int = parameters.DEFAULT_SEED, alpha: float = 0.05, all_pairs: bool = False,
            system_inputs: str = parameters.DEFAULT_SYSTEM_INPUTS, lower: Sequence[str] = (), replace: bool = False,
            allow_new: bool = False, command: str | None = None,
            cluster_rule: str = parameters.DEFAULT_CLUSTER_RULE, where: Sequence = (),
            control: str | None = None, aggregate: str = parameters.DEFAULT_AGGREGATE,
            resample_clusters: str | None = None, replicates: str = "mean") -> Request:
    """Parse ``scores`` and check every name and option of an evaluation (see :func:`evaluate`)
    against the warehouse and the measures the score tables add, writing nothing. Without score
    tables the data's checks (metrics too sparse to correlate, too few inputs to resample) are
    made too; with them, they need the merged scores and are made inside the ingest's
    transaction, before its commit (:func:`run_request`)."""
    parameters.system_inputs_parameter(system_inputs)
    if replicates not in intervals.REPLICATES:
        raise WarehouseError(Message(Argument("replicates", replicates), f" must be one of "
                                     f"{', '.join(intervals.REPLICATES)}"))
    if control is not None:   # partial correlations: at the global level, NAME[control=...] (as correlate)
        coefficients = selection.with_control(coefficients, control)
    levels = tuple(levels) or (("global",) if control is not None else LEVELS)
    if cluster_rule not in vocabulary.CLUSTER_RULES:
        raise WarehouseError(Message("unknown ", Argument("cluster_rule", cluster_rule),
                                     f"; choose from {', '.join(vocabulary.CLUSTER_RULES)}"))
    options = dict(metrics=tuple(metrics), against=tuple(against), levels=tuple(levels),
                   coefficients=tuple(coefficients), method=method, correction=correction, ci_method=ci_method,
                   k=k, seed=seed, alpha=alpha, all_pairs=all_pairs, system_inputs=system_inputs,
                   replace=replace, allow_new=allow_new, command=command, cluster_rule=cluster_rule,
                   where=selection.parse_where(where), control=control, aggregate=aggregate,
                   resample_clusters=resample_clusters, replicates=replicates)
    if not len(scores):
        request = Request(dataset, human, (), (), options)
        return Request(dataset, human, (), (), options, _plan(wh, request))
    batches = [parse_scores(s, human=[human], lower=lower) for s in scores]
    named = new_metrics([b.measures for b in batches])
    if not named:
        raise WarehouseError(f"the score tables {[b.file for b in batches]} hold no automatic measure")
    request = Request(dataset, human, tuple(batches), tuple(named), options)
    _plan(wh, request, measures=_measures_after(wh, dataset, human, batches))
    return request


def _measures_after(wh: Store, dataset: str, human: str, batches: Sequence[Batch]) -> pd.DataFrame:
    """The measures (measure, kind) ``dataset`` will have once ``batches`` are ingested. A dataset
    the warehouse lacks is refused (unknown dataset) unless the batches give the human judgment."""
    given = pd.concat([b.measures[["name", "kind"]].rename(columns={"name": "measure"}) for b in batches])
    try:
        stored = wh.measure_kinds(dataset)[["measure", "kind"]]
    except WarehouseError:  # no such dataset
        if not ((given["measure"] == human) & (given["kind"] == "human")).any():
            raise
        stored = given.iloc[:0]
    return pd.concat([stored, given], ignore_index=True).drop_duplicates("measure")


def _plan(wh: Store, request: Request, *, measures: pd.DataFrame | None = None) -> _Plan:
    """Resolve the request's scope and construct its analyses. ``measures``: the dataset's
    measures to resolve names against (before an ingest; the data is then neither read nor
    checked); otherwise the warehouse's, and the data is read and checked as the runs will."""
    o, dataset, human = request.options, request.dataset, request.human

    def resolve(globs, levels=(), coefficients=()):
        return selection.resolve_scope(wh, dataset, human, globs, levels, coefficients, measures=measures,
                                       where=o["where"], partial=True)

    evaluated = list(request.named)
    if o["metrics"]:
        evaluated += [m for m in resolve(o["metrics"]).metrics if m not in evaluated]
    if not evaluated:
        raise WarehouseError(Message("nothing to evaluate: give score tables or ", Argument("metrics")))
    others = resolve(o["against"]).metrics if o["against"] else None
    globs = [glob.escape(m) for m in evaluated] + ([glob.escape(m) for m in others] if others is not None else [])
    scope = resolve(globs if others is not None else (), o["levels"], o["coefficients"])
    if others is None:  # every automatic measure, the evaluated ones first
        scope = selection.Scope(dataset, human, (*evaluated, *[m for m in scope.metrics if m not in evaluated]),
                                scope.levels, scope.coefficients, scope.where)
    data, skipped, runs = None, {}, None
    clusters = o.get("resample_clusters")
    resample = "resample" if o.get("replicates", "mean") == "resample" else None
    if measures is None:
        data = selection.load_data(wh, scope, clusters=clusters, runs=resample is not None)
        if resample is not None:   # the runs for the intervals only; correlate and compare read the means
            runs, data = data, replace(data, annotations={})
            _check_paired(data, scope, o["system_inputs"])
        scope, skipped = selection.without_sparse_metrics(data, scope)
    focus = [m for m in evaluated if m in scope.metrics]
    if not focus:
        raise WarehouseError("; ".join(skipped[m] for m in evaluated))
    if len(scope.metrics) < 2:
        raise WarehouseError(f"nothing to compare {focus} with: the dataset has no other metric")
    aggregate = o.get("aggregate", parameters.DEFAULT_AGGREGATE)
    analyses = {
        "correlate": correlations.correlate_analysis(scope, o["system_inputs"], aggregate),
        "ci": intervals.ci_analysis(scope, o["ci_method"], o["k"], o["alpha"], o["seed"], o["system_inputs"],
                                    aggregate=aggregate, resample_clusters=clusters, replicates=resample),
        "compare": comparisons.compare_analysis(scope, o["method"], o["k"], o["alpha"], o["seed"], ALTERNATIVE,
                                           o["correction"], "metric", system_inputs=o["system_inputs"],
                                           focus=None if o["all_pairs"] else focus, aggregate=aggregate,
                                           resample_clusters=clusters),
    }
    if data is not None:
        for name, analysis in analyses.items():
            runner.planned(runs if name == "ci" and runs is not None else data, scope, analysis)  # its checks
    # on workers, in blocks sharing their resamples as one process does (runs/metrics/pair_blocks.py)
    analyses["ci"].units = pair_blocks.chunk_units
    analyses["compare"].units = partial(pair_blocks.pair_units, system_inputs=o["system_inputs"])
    return _Plan(scope, data, skipped, focus, analyses, runs)


def _check_paired(data: selection.Data, scope: selection.Scope, system_inputs: str) -> None:
    """``replicates="resample"`` draws a metric's and the human's inputs together: at the system
    level under "all", a metric scoring inputs the human did not judge is refused before any write."""
    from metaeval.analyses.stats import protocols

    if "system" not in scope.levels or system_inputs != "all":
        return
    for metric in scope.metrics:
        if protocols.unjudged_inputs(data.values[scope.human], data.values[metric]):
            raise WarehouseError(Message(Argument("replicates", "resample"), " draws the metric's and the human's "
                                         f"inputs together; {metric} scores inputs the human did not judge: use ",
                                         Argument("system_inputs", "judged")))


def evaluate(wh: Store, dataset: str, human: str, scores: Sequence = (), *, jobs: int = 1,
             force: bool = False, progress: ProgressFactory | None = None, **options) -> Evaluation:
    """Ingest ``scores`` (paths or DataFrames of score tables; may be empty) into ``dataset``,
    then evaluate the metrics they hold and those matched by ``metrics`` (globs) against the
    ``human`` judgment and against the other metrics (``against`` globs; default every other
    automatic measure of the dataset); ``system_inputs``: the system-score protocol ("all" or
    "judged"). See the module docstring. Options: those of :func:`prepare`.

    One transaction: every name and option is checked before anything is written, and what
    depends on the merged scores is checked before the ingest commits; a failure writes nothing."""
    return run_request(wh, prepare(wh, dataset, human, scores, **options), jobs=jobs, force=force,
                       progress=progress)


def run_request(wh: Store, request: Request, *, jobs: int = 1, force: bool = False,
                progress: ProgressFactory | None = None) -> Evaluation:
    """Ingest the score tables of a request from :func:`prepare` (its plan made and checked on the
    merged scores before the ingest commits), then run its analyses: :func:`evaluate`."""
    o, plan, loaded = request.options, request.plan, []
    if request.batches:
        planned = []
        loaded = wh.load(request.dataset, list(request.batches), replace=o["replace"], command=o["command"],
                         allow_new=o["allow_new"], before_commit=lambda: planned.append(_plan(wh, request)))
        plan = planned[0]
    scope, focus = plan.scope, plan.focus
    with allpairs.sharing() as shared:   # the pairs' common resamples computed once (analyses/stats/allpairs.py)
        if shared is not None and plan.data is not None and jobs == 1 and not executors.of(wh).distributed \
                and o.get("resample_clusters") is None:   # (clustered resamples are never shared)
            _offer(shared, plan, o["system_inputs"])
        outcomes = {name: engine.run_all(wh, scope, [analysis], data=plan.runs if name == "ci" and plan.runs
                                         is not None else plan.data, skipped=plan.skipped, jobs=jobs, force=force,
                                         progress=progress)[0] for name, analysis in plan.analyses.items()}
    settings = {"levels": list(scope.levels), "coefficients": list(scope.coefficients), "method": o["method"],
                "alternative": ALTERNATIVE, "correction": o["correction"], "correction_group": "metric",
                "ci_method": o["ci_method"], "k": o["k"], "seed": o["seed"], "alpha": o["alpha"],
                "all_pairs": o["all_pairs"], "system_inputs": o["system_inputs"], "cluster_rule": o["cluster_rule"]}
    if o.get("aggregate", parameters.DEFAULT_AGGREGATE) != parameters.DEFAULT_AGGREGATE:
        settings["aggregate"] = o["aggregate"]   # (only the median: a mean's settings as before the option)
    if scope.where:    # (not said for every cell: the settings of an evaluation are as before subsets)
        settings["subset"] = scope.subset
    if o.get("resample_clusters") is not None:   # (only when set: an unclustered evaluation's settings as before)
        settings["resample_clusters"] = o["resample_clusters"]
    if o.get("replicates", "mean") != "mean":   # (only when set: the settings of the mean as before the runs)
        settings["replicates"] = o["replicates"]
    from metaeval.runs.agreement import annotators

    ceiling = annotators.ceilings(wh, request.dataset, request.human)
    data = plan.data if plan.data is not None else selection.load_data(wh, scope,
                                                                       clusters=o.get("resample_clusters"))
    tests = current_tests(wh, outcomes, settings, data)
    table = annotators.with_ceilings(evaluation_table(wh, outcomes, focus, settings, data, tests), ceiling)
    dups = wh.duplicates(request.dataset)
    dups = dups[dups["measure"].isin(scope.metrics) & dups["duplicate_of"].isin(scope.metrics)]
    return Evaluation(request.dataset, request.human, tuple(focus), tuple(m for m in scope.metrics if m not in focus),
                      settings, outcomes, table, loaded, plan.skipped,
                      {m: (d, r) for m, d, r in zip(dups["measure"], dups["duplicate_of"], dups["relation"])},
                      ceiling, tests_table(_decided(tests, settings), table))


def _offer(shared: allpairs.Shared, plan: _Plan, system_inputs: str) -> None:
    """Offer the pairs compare tests, as each level's tests read them, to be tested together
    (:meth:`.allpairs.Shared.offer`): a pair whose cells are another grid (a metric without some
    system or input) is not among them and is tested on its own, as every pair is otherwise."""
    compare = plan.analyses["compare"]
    pairs = pair_blocks.tested_pairs(compare.tasks, range(len(compare.tasks)), plan.scope.metrics)
    for Z, metrics, chosen in pair_blocks.offers(pair_blocks.level_matrices(plan.data, plan.scope, system_inputs),
                                                 list(pairs)):
        shared.offer(Z, metrics, chosen)


def evaluation_table(wh: Store, outcomes: dict[str, engine.Outcome], focus: Sequence[str],
                     settings: dict, data: selection.Data | None = None,
                     tests: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per metric of the scope, level and coefficient (see :class:`Evaluation`).

    ``cluster`` is given only where it is a finding: every pair of ranked metrics tested
    (``--all-pairs``, or two metrics), the tests able to reach their corrected level, the
    correlation defined; ``cluster_note`` says why not otherwise. A metric whose correlation is
    undefined has no rank (``status`` "undefined"). Stored tests of pairs this call did not test
    count only when they were computed on the cells ``data`` holds now, within the same
    correction family."""
    from metaeval.runs.metrics import ranking as ranking_runs

    scope = outcomes["correlate"].scope
    corr = outcomes["correlate"].rows(wh).set_index(["metric", "level", "coefficient"])
    cis = outcomes["ci"].rows(wh).set_index(["metric", "level", "coefficient"])
    tests = current_tests(wh, outcomes, settings, data) if tests is None else tests
    metrics = list(scope.metrics)
    index = {m: i for i, m in enumerate(metrics)}
    rows = []
    for lv in scope.levels:
        for c in scope.coefficients:
            part = tests[(tests["level"] == lv) & (tests["coefficient"] == c)
                         & tests["metric_a"].isin(index) & tests["metric_b"].isin(index)]
            scores = np.array([_value(corr, (m, lv, c), "value") for m in metrics], dtype=float)
            read = ranking_runs.stored_tests(part, settings["method"], settings["correction"], "metric",
                                             settings["alternative"])
            unresolved = read.notes(settings["alpha"])
            clusters, beats, tested = conclusions.clusters(
                scores, part["metric_a"].map(index), part["metric_b"].map(index), part["delta"].astype(float),
                read.significant(settings["alpha"]), alternative=settings["alternative"],
                rule=settings["cluster_rule"], names=metrics, note="; ".join(unresolved) or None)
            note = ("; ".join(unresolved) if unresolved
                    else None if clusters.determined
                    else f"no clusters: {clusters.why} (--all-pairs tests every pair)")
            for i, m in enumerate(metrics):
                undefined = bool(clusters.undefined[i])
                rows.append({
                    "dataset": scope.dataset, "human": scope.human, "metric": m, "evaluated": m in focus,
                    "level": lv, "coefficient": c, "correlation": _none(scores[i]),
                    "lower": _none(_value(cis, (m, lv, c), "lower")), "upper": _none(_value(cis, (m, lv, c), "upper")),
                    "rank": None if undefined else int(clusters.rank[i]),
                    "cluster": None if undefined or note else int(clusters.cluster[i]),
                    "n_metrics": int((~clusters.undefined).sum()),
                    "status": "undefined" if undefined else "unresolvable" if unresolved else "ranked",
                    "cluster_note": ranking.UNDEFINED_TEXT if undefined else note,
                    "beats": [metrics[j] for j in np.flatnonzero(beats[i])],
                    "beaten_by": [metrics[j] for j in np.flatnonzero(beats[:, i])],
                    "n_tested": int(tested[i].sum()),
                    "signature": _signature(settings, lv, c, corr, m),
                    "conventions": {**{key: settings[key] for key in ("method", "alternative", "correction",
                                                                       "correction_group", "ci_method", "k", "seed",
                                                                       "alpha", "all_pairs", "system_inputs",
                                                                       "cluster_rule")},
                                    **({"aggregate": settings["aggregate"]} if "aggregate" in settings else {}),
                                    **({"resample_clusters": settings["resample_clusters"]}
                                       if "resample_clusters" in settings else {}),
                                    "level": lv, "coefficient": c, **clusters.conventions,
                                    "unresolvable": unresolved or None},
                })
    return pd.DataFrame(rows)


def tests_table(tests: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The tests of each evaluated metric (``metric``) against each other metric (``against``),
    per level and coefficient, with the other metric's correlation and CI from ``table`` (an
    :func:`evaluation_table`): delta, p, corrected p, significant; the rows of a setting by the
    other metric's correlation, descending (undefined last)."""
    columns = ["metric", "level", "coefficient", "against", "correlation", "lower", "upper", "delta", "p_value",
               "p_adjusted", "significant", "k", "k_used", "n_valid", "family_size", "correction", "alpha"]
    if tests.empty or table.empty:
        return pd.DataFrame(columns=columns)
    focus = set(table.loc[table["evaluated"], "metric"])
    mine = tests[tests["metric_a"].isin(focus)].rename(columns={"metric_a": "metric", "metric_b": "against"})
    other = table[["metric", "level", "coefficient", "correlation", "lower", "upper"]].rename(
        columns={"metric": "against"})
    out = mine.merge(other, on=["against", "level", "coefficient"], how="left")
    order = {(lv, c): i for i, (lv, c) in enumerate(dict.fromkeys(zip(table["level"], table["coefficient"])))}
    out = out.assign(_setting=[order.get(key, len(order)) for key in zip(out["level"], out["coefficient"])],
                     _focus=out["metric"].map({m: i for i, m in enumerate(dict.fromkeys(table["metric"]))}),
                     _r=-out["correlation"].astype(float))
    out = out.sort_values(["_focus", "_setting", "_r", "against"], na_position="last", kind="stable")
    return out[[c for c in columns if c in out.columns]].reset_index(drop=True)


def _decided(tests: pd.DataFrame, settings: dict) -> pd.DataFrame:
    """The tests with ``significant`` as the evaluation reads them (the conclusion layer's verdict at
    its alpha, within each level's and coefficient's family:
    :meth:`metaeval.analyses.stored_tests.StoredTests.significant`)
    and ``alpha`` its alpha."""
    from metaeval.runs.metrics import ranking as ranking_runs

    if tests.empty:
        return tests
    significant = pd.Series(False, index=tests.index)
    for _, part in tests.groupby(["level", "coefficient"], sort=False):
        read = ranking_runs.stored_tests(part, settings["method"], settings["correction"], "metric")
        significant[part.index] = read.significant(settings["alpha"])
    return tests.assign(significant=significant.astype(bool), alpha=settings["alpha"])


def current_tests(wh: Store, outcomes: dict[str, engine.Outcome], settings: dict,
                  data: selection.Data | None = None) -> pd.DataFrame:
    """The stored tests an evaluation reads: the latest rows of its correction (within each metric's
    family) and, given ``data``, only those computed on the cells it holds now and in the family of
    the scope's metrics (a stored row of another family or of other cells is not a test of these)."""
    scope = outcomes["correlate"].scope
    tests = outcomes["compare"].rows(wh)
    tests = tests[(tests["correction"] == settings["correction"]) & (tests["correction_group"] == "metric")
                  & tests["metric_a"].isin(scope.metrics) & tests["metric_b"].isin(scope.metrics)]  # data has no other
    if data is not None:
        family = comparisons.correction_family(scope.metrics, settings["correction"])
        prints: dict[tuple, str] = {}
        aggregate = settings.get("aggregate", parameters.DEFAULT_AGGREGATE)

        def aggregate_print(fingerprint: str) -> str:   # the cells as the tests' aggregate read them
            return parameters.aggregate_fingerprint(fingerprint, aggregate)

        def current(r) -> bool:
            key = (r.metric_a, r.metric_b, scope.human)
            if key not in prints:
                prints[key] = data.fingerprint(key)[0]
            return r.fingerprint == aggregate_print(prints[key]) and (None if pd.isna(r.family) else r.family) == family

        tests = tests[np.array([current(r) for r in tests.itertuples()], dtype=bool)]   # (none: no rows, not no columns)
    return tests


def _signature(settings: dict, level: str, coefficient: str, corr: pd.DataFrame, metric: str) -> str:
    """The row's signature (:mod:`metaeval.analyses.signature`): this version, the CI and test
    settings, and the fingerprint of the metric's and the human's cells."""
    from metaeval import __version__

    try:
        fingerprint = corr.loc[(metric, level, coefficient), "fingerprint"]
    except KeyError:
        fingerprint = None
    return signature.signature(__version__, "evaluate", {
        "level": level, "coefficient": coefficient, "subset": settings.get("subset"),
        "method": "+".join(m for m in (settings.get("ci_method"), settings.get("method")) if m) or None,
        "alternative": settings["alternative"], "k": settings["k"], "seed": settings["seed"],
        "correction": settings["correction"], "correction_group": settings["correction_group"],
        "alpha": settings["alpha"], "system_inputs": settings["system_inputs"],
        "cluster_rule": settings["cluster_rule"], "aggregate": settings.get("aggregate"),
        "resample_clusters": settings.get("resample_clusters"), "replicates": settings.get("replicates"),
        "fingerprint": fingerprint})


def _value(frame: pd.DataFrame, key: tuple, column: str) -> float:
    try:
        v = frame.loc[key, column]
    except KeyError:
        return float("nan")
    return float("nan") if pd.isna(v) else float(v)


def _none(x: float) -> float | None:
    return None if x is None or np.isnan(x) else float(x)
