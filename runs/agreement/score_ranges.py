"""Inter-metric agreement over the warehouse (``metaeval agreement``), persisted like the other
analyses: provenance in ``analysis_runs``, fingerprints, incremental, ``--jobs``, resumable.

Three steps, each skipped when the warehouse already holds its results:

1. ``score_range_agreement`` -- a runner :class:`~metaeval.runs.engine.runner.Analysis` with one task per
   unordered pair of metrics (a < b by name) and bin. Every task reads a, b and the summaries'
   positions in their input's score range, which the consensus of *all* metrics in scope
   defines: the positions are a derived N x M matrix in :class:`~metaeval.runs.engine.selection.Data`, so a
   task's fingerprint changes whenever any metric of the consensus changes;
2. ``input_properties`` -- ease of summarisation from the scores, abstractiveness and coverage
   from the stored reference and document texts (when the dataset stores documents; otherwise
   no rows, and :attr:`AgreementSummary.missing` says what is missing);
3. ``property_agreement`` -- a runner analysis with one task per pair of metrics and property:
   the correlation over inputs of the per-input tau with the property (stored in ``Data`` as an
   N x M matrix constant down each input's column).

The formulas are in :mod:`analyses.agreement`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import ClassVar
from itertools import combinations

import numpy as np
import pandas as pd

from metaeval.analyses import agreement, conclusions
from metaeval.analyses.text.tokenize import normalize_words
from metaeval.core import Store
from metaeval.errors import Argument, Hint, Message, WarehouseError
from metaeval.runs.engine import bookkeeping, runner, selection
from metaeval.runs.engine.parameters import Params, setting
from metaeval.runs.engine.runner import Analysis, Data, RunSummary, Scope, Task

from typing import TYPE_CHECKING  # noqa: E402

if TYPE_CHECKING:
    from metaeval.runs.engine.runner import ProgressFactory

#: Names of derived matrices in Data (cannot clash with measure names: they start with \x1e).
POSITIONS = "\x1erange-position"
PROPERTY = "\x1eproperty:"
TEXTS_NEEDED = {"abstractiveness": "documents and references", "coverage": "documents and references"}


# --- scope and data ------------------------------------------------------------------------------
def resolve(wh: Store, dataset: str, metric_globs: Sequence[str] = ()) -> Scope:
    """The automatic measures of ``dataset`` matched by the globs (default all): a human-free scope."""
    scope = selection.resolve_scope(wh, dataset, None, metric_globs)
    if len(scope.metrics) < 2:
        raise WarehouseError(Message(f"inter-metric agreement needs at least two metrics; the scope has {list(scope.metrics)}: "
                                     "choose two or more with ",
                                     Argument("metrics", placeholder="GLOB"), " (or ingest another metric)"))
    return scope


def consensus_label(scope: Scope) -> str:
    """The ``consensus`` key column: JSON list of the scope's metrics, sorted."""
    return json.dumps(sorted(scope.metrics))


def load(wh: Store, scope: Scope, normalisation: str) -> Data:
    """The scope's metrics (higher is better) and the summaries' range positions."""
    data = selection.load_data(wh, scope)
    stack = np.stack([data.values[m] for m in scope.metrics])
    positions = agreement.range_positions(agreement.consensus_scores(stack, normalisation))
    return replace(data, values={**data.values, POSITIONS: positions},
                   directions={**data.directions, POSITIONS: "higher"})


def _pairs(scope: Scope) -> list[tuple[str, str]]:
    return list(combinations(sorted(scope.metrics), 2))


# --- 1. score ranges ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ScoreRangeParams(Params):
    """Agreement of metric pairs per score range (table ``score_range_agreement``); ``consensus``
    names the ranking the ranges are read on (a column, not an argument)."""

    table: ClassVar[str] = "score_range_agreement"
    normalisation: str = setting(argument=False)
    alpha: float = setting()
    significant_only: bool = setting()
    consensus: str = setting(argument=False)


@dataclass(frozen=True)
class PropertyAgreementParams(Params):
    """Agreement of metric pairs per input property (table ``property_agreement``)."""

    table: ClassVar[str] = "property_agreement"
    alpha: float
    significant_only: bool
    consensus: str = setting(argument=False)


@dataclass(frozen=True)
class InputPropertiesParams(Params):
    """A property of an input (table ``input_properties``, written by :func:`run_properties`, not
    the run loop); ``consensus`` names the ranking ease is read on ('[]' for the text properties)."""

    table: ClassVar[str] = "input_properties"
    consensus: str


def score_range_analysis(scope: Scope, normalisation: str = "input", alpha: float = 0.05,
                         significant_only: bool = False) -> Analysis:
    _check(normalisation, alpha)
    params = ScoreRangeParams(normalisation, float(alpha), bool(significant_only), consensus_label(scope))
    tasks = [Task({"metric_a": a, "metric_b": b, "bin": bin}, (a, b, POSITIONS))
             for a, b in _pairs(scope) for bin in agreement.BINS]
    return Analysis("agreement", params, ("metric_a", "metric_b", "bin"), tasks, evaluate_score_range,
                    evaluate_keys=("bin",))


def evaluate_score_range(arrays, bin, alpha, significant_only) -> dict:
    A, B, P = arrays
    r = agreement.bin_agreement(A, B, P, bin, alpha=alpha, significant_only=significant_only)
    out = {k: (bookkeeping.as_float(v) if isinstance(v, float) else v) for k, v in r.row().items() if k != "bin"}
    return {**out, "conventions": dict(r.conventions)}


def _check(normalisation: str, alpha: float) -> None:
    if normalisation not in agreement.NORMALISATIONS:
        raise WarehouseError(f"unknown normalisation {normalisation!r}; choose from {', '.join(agreement.NORMALISATIONS)}")
    if not 0 < alpha < 1:
        raise WarehouseError(Message(Argument("alpha"), f" must lie strictly between 0 and 1; got {alpha}"))


# --- 2. input properties ----------------------------------------------------------------------------
@dataclass(frozen=True)
class PropertiesSummary:
    run_id: int | None
    properties: tuple[str, ...]     # the properties the dataset allows
    written: int
    missing: str | None             # why the text properties are absent, if they are

    @property
    def up_to_date(self) -> bool:
        return self.run_id is None


def _texts(wh: Store, dataset: str) -> tuple[dict[str, list[str]], dict[str, str], str | None]:
    """References and (concatenated) documents by input, and what is missing, if anything."""
    rows = wh.con.execute(
        """SELECT i.name AS input, list(r.text ORDER BY r.reference_id) AS refs
           FROM "references" r JOIN inputs i USING (input_id) JOIN datasets d USING (dataset_id)
           WHERE d.name = ? GROUP BY i.name""", [dataset]).fetchall()
    docs = wh.con.execute(
        """SELECT i.name AS input, string_agg(doc.text, chr(10) ORDER BY doc.position)
           FROM documents doc JOIN inputs i USING (input_id) JOIN datasets d USING (dataset_id)
           WHERE d.name = ? GROUP BY i.name""", [dataset]).fetchall()
    references, documents = dict(rows), dict(docs)
    needed = ", ".join(agreement.TEXT_PROPERTIES)
    if not references:
        return {}, {}, (f"{needed} need the reference texts and the input documents; dataset {dataset!r} stores "
                        "no reference texts (`metaeval ingest summaries` stores them)")
    if not documents:
        return {}, {}, (f"{needed} need the input documents; dataset {dataset!r} stores references but no source "
                        "documents, so only ease of summarisation is computed")
    lacking = [i for i in references if i not in documents]
    if lacking:
        return {}, {}, (f"{needed} need the input documents; {len(lacking)} of the {len(references)} inputs of "
                        f"{dataset!r} with references have none (first: {lacking[0]!r})")
    return references, documents, None


def _digest(*parts: str) -> str:
    digest = hashlib.sha256()
    for p in parts:
        digest.update(p.encode() + b"\x1f")
    return digest.hexdigest()


def run_properties(wh: Store, scope: Scope, data: Data, *, force: bool = False) -> PropertiesSummary:
    """Compute and persist the input properties that are missing or out of date."""
    consensus = consensus_label(scope)
    references, documents, missing = _texts(wh, scope.dataset)
    ease_fp = selection.data_fingerprint(data, scope.metrics)
    planned = [(i, "ease", consensus, ease_fp) for i in data.inputs]
    text_properties = () if missing else agreement.TEXT_PROPERTIES
    for i in ([] if missing else sorted(references)):
        fp = _digest(*references[i], "\x1e", documents[i])
        planned += [(i, p, "[]", fp) for p in text_properties]
    latest = {} if force else {
        (r["input"], r["property"], r["consensus"]): r["fingerprint"]
        for r in wh.con.execute("SELECT input, property, consensus, fingerprint FROM latest_input_properties "
                                f"WHERE dataset = $dataset AND {bookkeeping.THIS_VERSION}",
                                {"dataset": scope.dataset, **bookkeeping.version_parameter()}).df().to_dict("records")}
    todo = [t for t in planned if latest.get(t[:3]) != t[3]]
    available = ("ease", *text_properties)
    if not todo:
        return PropertiesSummary(None, available, 0, missing)
    parameters = {"dataset": scope.dataset, "metrics": list(scope.metrics), "properties": list(available)}
    run_id = bookkeeping.start_run(wh, "agreement-properties", parameters, None,
                              _digest(ease_fp, *(t[3] for t in planned)), len(planned))
    with bookkeeping.finishing(wh, run_id):
        writer = bookkeeping.Writer(wh, "input_properties", run_id, scope)
        values = _property_values(data, scope, references, documents, {t[1] for t in todo})
        for input_, prop, label, fp in todo:
            writer.add(Task({"input": input_, "property": prop}, (), fp),
                       {"value": bookkeeping.as_float(values[prop][input_]), "conventions": PROPERTY_CONVENTIONS[prop]},
                       InputPropertiesParams(label))
        writer.flush()
        bookkeeping.finish_run(wh, run_id, "finished", len(todo))
    return PropertiesSummary(run_id, available, writer.written, missing)


PROPERTY_CONVENTIONS = {
    "ease": {"formula": "EoS_j = mean over the consensus metrics of max over input j's complete summaries of the "
                        "score min-max normalised over the whole dataset", "reference": "Bhandari et al. 2020, 4.2"},
    "abstractiveness": {"formula": "1 - |Voc(d) & Voc(r)| / |Voc(r)|, mean over the input's references; "
                                   "documents concatenated", "tokens": "ROUGE tokens (lowercased [a-z0-9] runs)",
                        "reference": "Bhandari et al. 2020, 4.2"},
    "coverage": {"formula": "(1/|r|) sum of the lengths of the greedy extractive fragments of r in d, mean over "
                            "the input's references; documents concatenated",
                 "tokens": "ROUGE tokens (lowercased [a-z0-9] runs)", "reference": "Grusky et al. 2018"},
}


def _property_values(data: Data, scope: Scope, references: dict, documents: dict,
                     wanted: set[str]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    if "ease" in wanted:
        ease = agreement.ease_of_summarization(np.stack([data.values[m] for m in scope.metrics]))
        out["ease"] = dict(zip(data.inputs, ease))
    if wanted & set(agreement.TEXT_PROPERTIES):
        frame = agreement.reference_properties(
            {i: normalize_words(d) for i, d in documents.items() if i in references},
            {i: [normalize_words(r) for r in refs] for i, refs in references.items()})
        for prop, group in frame.groupby("property"):
            out[prop] = dict(zip(group["input"], group["value"]))
    return out


def property_values(wh: Store, scope: Scope) -> dict[str, dict[str, float]]:
    """The latest stored value of each property by input, for the scope's consensus."""
    frame = wh.sql("""SELECT input, property, value FROM latest_input_properties
                      WHERE dataset = ? AND consensus IN (?, '[]')""", [scope.dataset, consensus_label(scope)])
    return {p: dict(zip(g["input"], g["value"])) for p, g in frame.groupby("property")}


# --- 3. tau against properties ------------------------------------------------------------------------
def with_properties(data: Data, values: dict[str, dict[str, float]]) -> Data:
    """``data`` plus one N x M matrix per property, constant down each input's column."""
    extra = {PROPERTY + p: np.broadcast_to(np.array([v.get(i, np.nan) for i in data.inputs], dtype=np.float64),
                                            (len(data.systems), len(data.inputs))).copy()
             for p, v in values.items()}
    return replace(data, values={**data.values, **extra},
                   directions={**data.directions, **{k: "higher" for k in extra}})


def property_analysis(scope: Scope, properties: Sequence[str], alpha: float = 0.05,
                      significant_only: bool = False) -> Analysis:
    _check("input", alpha)
    params = PropertyAgreementParams(float(alpha), bool(significant_only), consensus_label(scope))
    tasks = [Task({"metric_a": a, "metric_b": b, "property": p}, (a, b, POSITIONS, PROPERTY + p))
             for a, b in _pairs(scope) for p in properties]
    return Analysis("agreement-by-property", params, ("metric_a", "metric_b", "property"), tasks, evaluate_property,
                    evaluate_keys=())


def evaluate_property(arrays, alpha, significant_only) -> dict:
    A, B, P, V = arrays
    k = agreement.kendall_per_input(A, B, agreement.in_bin(P, "L+M+T"))
    r = agreement.property_agreement(k.tau, k.pvalue, V[0], alpha=alpha, significant_only=significant_only)
    return {"n_used": r.n_inputs, "tau_mean": bookkeeping.as_float(r.tau_mean), "pearson": bookkeeping.as_float(r.pearson),
            "pearson_p": bookkeeping.as_float(r.pearson_p), "spearman": bookkeeping.as_float(r.spearman),
            "spearman_p": bookkeeping.as_float(r.spearman_p), "conventions": dict(r.conventions)}


# --- the whole command ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class AgreementSummary:
    score_ranges: RunSummary
    properties: PropertiesSummary
    by_property: RunSummary
    curves: pd.DataFrame | None = None      # agreement_curves rows of the setting (with bins)

    @property
    def up_to_date(self) -> bool:
        return self.score_ranges.up_to_date and self.properties.up_to_date and self.by_property.up_to_date


def run_agreement(wh: Store, scope: Scope, *, normalisation: str = "input", alpha: float = 0.05,
                  significant_only: bool = False, jobs: int = 1, force: bool = False,
                  progress: ProgressFactory | None = None, **curve_options) -> AgreementSummary:
    """Steps 1-3 of the module docstring; each computes only what is missing. With ``bins``
    (> 0; ``curve_options`` are :func:`metaeval.runs.agreement.agreement_curves.run_curves`'), also the
    curves of many bins and their random-score baseline."""
    analysis = score_range_analysis(scope, normalisation, alpha, significant_only)
    data = load(wh, scope, normalisation)
    ranges = runner.run(wh, scope, analysis, jobs=jobs, force=force, progress=progress, data=data)
    props = run_properties(wh, scope, data, force=force)
    values = property_values(wh, scope)
    by_property = property_analysis(scope, props.properties, alpha, significant_only)
    # tau over all complete summaries does not depend on the normalisation: always read the
    # positions of the default one, so that both share their property_agreement rows
    base = data if normalisation == "input" else load(wh, scope, "input")
    summary = runner.run(wh, scope, by_property, jobs=jobs, force=force, progress=progress,
                         data=with_properties(base, {p: values.get(p, {}) for p in props.properties}))
    curves = None
    if curve_options.get("bins"):
        from metaeval.runs.agreement import agreement_curves
        curves = agreement_curves.run_curves(wh, scope, data, consensus_label(scope), force=force, **curve_options)
    return AgreementSummary(ranges, props, summary, curves)


# --- plotting-ready data ---------------------------------------------------------------------------------
def latest_rows(wh: Store, scope: Scope, normalisation: str = "input", alpha: float = 0.05,
                significant_only: bool = False) -> pd.DataFrame:
    """The latest ``score_range_agreement`` rows of the scope and parameters."""
    return wh.sql("""SELECT * FROM latest_score_range_agreement WHERE dataset = ? AND consensus = ?
                     AND normalisation = ? AND alpha = ? AND significant_only = ?
                     ORDER BY metric_a, metric_b, bin""",
                  [scope.dataset, consensus_label(scope), normalisation, alpha, significant_only])


def latest_property_rows(wh: Store, scope: Scope, alpha: float = 0.05,
                         significant_only: bool = False) -> pd.DataFrame:
    """The latest ``property_agreement`` rows of the scope and parameters: metric_a, metric_b,
    property, n_used, pearson, spearman."""
    return wh.sql("""SELECT metric_a, metric_b, property, n_used, pearson, spearman
                     FROM latest_property_agreement WHERE dataset = ? AND consensus = ?
                     AND alpha = ? AND significant_only = ? ORDER BY property, metric_a, metric_b""",
                  [scope.dataset, consensus_label(scope), alpha, significant_only])


def tau_vs_property(wh: Store, scope: Scope, metric_a: str, metric_b: str, prop: str, *,
                    window: int = 10, alpha: float = 0.05, significant_only: bool = False,
                    data: Data | None = None) -> pd.DataFrame:
    """The points of the paper's figure 1 for one pair of metrics and a stored property: per
    input, the property and the tau over all complete summaries, sorted by the property, with
    ``window``-point moving averages (:func:`analyses.agreement.property_series`). ``data``:
    ``load(wh, scope, "input")`` when the caller draws several pairs (loaded once)."""
    for m in (metric_a, metric_b):
        if m not in scope.metrics:
            raise WarehouseError(f"{m!r} is not a metric of the scope {list(scope.metrics)}")
    values = property_values(wh, scope).get(prop)
    if not values:
        raise WarehouseError(Message(f"no stored {prop!r} for dataset {scope.dataset!r} and these metrics: run `",
                                     Hint("agreement", (("dataset", scope.dataset), ("metrics", list(scope.metrics)))),
                                     "` first"))
    data = load(wh, scope, "input") if data is None else data
    k = agreement.kendall_per_input(data.values[metric_a], data.values[metric_b],
                                    agreement.in_bin(data.values[POSITIONS], "L+M+T"))
    tau = np.where(conclusions.rejects(k.pvalue, alpha), k.tau, np.nan) if significant_only else k.tau
    v = np.array([values.get(i, np.nan) for i in data.inputs], dtype=np.float64)
    return agreement.property_series(tau, v, window=window, inputs=data.inputs)
