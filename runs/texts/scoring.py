"""Scoring the texts stored in the warehouse with the metrics of :mod:`analyses.text`
(SERA through a search index recorded in the warehouse: :mod:`metaeval.runs.texts.sera`).

The scores become ordinary automatic measures named by their settings
(``rouge-2.recall[stem,stop]``, ``js-2``, ``bleu``), loaded through the same atomic,
idempotent path as any ingest: scoring twice changes nothing, and a stored value that a
new scoring would change is a conflict (``replace`` overwrites).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from metaeval.analyses import text
from metaeval.core import Store
from metaeval.errors import Argument, ConflictError, Hint, Message, WarehouseError
from metaeval.batch import CELL_COLUMNS, Batch, LoadReport
from metaeval.runs.texts.sera import SERASetting

from typing import TYPE_CHECKING  # noqa: E402

if TYPE_CHECKING:
    from metaeval.runs.engine.runner import ProgressFactory

METRICS = ("rouge", "js", "bleu", "chrf", "corpus-bleu", "sera", "kl", "cosine", "topic", "probability", "regression",
           "sentinel-cand", "sentinel-src", "sentinel-ref")
#: the sentinels (runs/texts/sentinels.py): they predict a human score from one side of a translation
SENTINELS = ("sentinel-cand", "sentinel-src", "sentinel-ref")
#: the model-free families of Louis & Nenkova (2013), against the input (analyses/text/modelfree.py)
MODEL_FREE = ("kl", "cosine", "topic", "probability")
_MODEL_FREE_PREFIXES = ("kl.", "cosine", "topic-", "logprob-", "regression.")
#: ROUGE variants scored when none are named: ROUGE-1, -2, -L x precision, recall, F1.
DEFAULT_ROUGE = tuple(v.name for v in text.variant_grid(kinds=("rouge-1", "rouge-2", "rouge-l"),
                                                        stem=(False,), stop=(False,)))
GRIDS = {
    "default": lambda: list(DEFAULT_ROUGE),
    "graham": lambda: [v.name for v in text.graham_grid()],
    "full": lambda: [v.name for v in text.variant_grid()],
}


@dataclass(frozen=True)
class ModelFreeSetting:
    """The preprocessing of the model-free features (the paper: stemmed, stopwords removed) and
    the topic-signature cutoff (-2 log lambda)."""

    stem: bool = True
    stop: bool = True
    cutoff: float = 10.0


@dataclass(frozen=True)
class JSSetting:
    n: int = 2
    target: str = "reference"
    stem: bool = False
    stop: bool = False
    smoothing: bool = False


def load_corpus(wh: Store, dataset: str) -> tuple[text.TextCorpus, pd.DataFrame]:
    """The dataset's summaries with their references (and documents, concatenated)."""
    return corpus_of(summary_rows(wh, dataset))


def summary_rows(wh: Store, dataset: str, references: bool = True) -> list[tuple]:
    """The dataset's summaries, ordered by system and input: (system, input, summary,
    references, documents) each; an error if there are none or (``references``) one has no
    reference."""
    wh.require_dataset(dataset)
    rows = wh.con.execute("""SELECT system, input, summary, "references", documents FROM summary_texts
                             WHERE dataset = ? ORDER BY system, input""", [dataset]).fetchall()
    if not rows:
        raise WarehouseError(Message(f"dataset {dataset!r} has no summary texts; ingest them with `", Hint(
            "load_summaries", (("dataset", "..."),), positional=("FILE",),
            python="wh.load(..., [metaeval.ingest.summaries.parse(FILE)])"), "`"))
    unreferenced = [(system, input_) for system, input_, _, refs, _ in rows if not refs]
    if unreferenced and references:
        raise WarehouseError(f"{len(unreferenced)} summaries of {dataset!r} have no reference "
                             f"(first: system={unreferenced[0][0]} input={unreferenced[0][1]})")
    return rows


def corpus_of(rows: Sequence[tuple]) -> tuple[text.TextCorpus, pd.DataFrame]:
    """The corpus of :func:`summary_rows` (or some of them, in their order) and its (system,
    input) keys."""
    records = [text.SummaryRecord(system=system, input_id=input_, summary=summary, references=refs,
                                  document=None if docs is None else "\n".join(docs))
               for system, input_, summary, refs, docs in rows]
    keys = pd.DataFrame([(r.system, r.input_id) for r in records], columns=["system", "input"])
    return text.TextCorpus(records), keys


def _keys(rows: Sequence[tuple]) -> pd.DataFrame:
    """The (system, input) keys of :func:`summary_rows`, in their order (as :func:`corpus_of`)."""
    return pd.DataFrame([(system, input_) for system, input_, *_ in rows], columns=["system", "input"])


def score(corpus: text.TextCorpus, metrics: Sequence[str], rouge_variants: Sequence[str] = (),
          js: JSSetting = JSSetting(), model_free: ModelFreeSetting = ModelFreeSetting()) -> dict[str, np.ndarray]:
    """``{measure name: value per summary}`` for the chosen metrics."""
    unknown = [m for m in metrics if m not in METRICS]
    if unknown or not metrics:
        raise WarehouseError(f"choose metrics from {', '.join(METRICS)}, not {list(unknown) or 'none'}")
    if "sera" in metrics:
        raise WarehouseError("SERA searches an index recorded in the warehouse: score it with score_dataset(..., sera=...)")
    if "regression" in metrics or set(SENTINELS) & set(metrics):
        raise WarehouseError("the regression and the sentinels predict a human score stored in the warehouse: score "
                             "them with score_dataset(..., human=...)")
    out: dict[str, np.ndarray] = {}
    for metric in dict.fromkeys(metrics):
        if metric == "rouge":
            try:
                out.update(text.rouge(corpus, list(rouge_variants) or list(DEFAULT_ROUGE)))
            except ValueError as exc:
                raise WarehouseError(str(exc)) from None
        elif metric == "js":
            if js.target == "document" and not corpus.has_documents:
                raise WarehouseError(Message("JS divergence against the input needs the source documents, and this "
                                             "dataset stores none: ingest them with `metaeval ingest summaries` "
                                             "(its documents field), or compare with the references (",
                                             Argument("js_target", placeholder="reference"), ")"))
            out.update(text.js_divergence(corpus, n=js.n, target=js.target, stem=js.stem, stop=js.stop,
                                          smoothing=js.smoothing))
        elif metric in MODEL_FREE or metric == "corpus-bleu":   # (corpus-bleu: statistics, not cells)
            continue
        else:
            out.update(getattr(text, metric)(corpus))
    chosen = [m for m in MODEL_FREE if m in metrics]
    if chosen:
        if not corpus.has_documents:
            raise WarehouseError("the model-free metrics compare a summary with its input: they need the source "
                                 "documents, and this dataset stores none: ingest them with `metaeval ingest "
                                 "summaries` (its documents field)")
        try:
            out.update(text.model_free(corpus, chosen, stem=model_free.stem, stop=model_free.stop,
                                       cutoff=model_free.cutoff))
        except ValueError as exc:
            raise WarehouseError(str(exc)) from None
    return out


def to_batch(dataset: str, keys: pd.DataFrame, scores: dict[str, np.ndarray], options: dict,
             prefix: str = "", directions: dict[str, str] | None = None, *, system_level: Sequence[str] = (),
             statistics: np.ndarray | None = None) -> tuple[Batch, int]:
    """A loadable batch of the scores (NaN scores, e.g. an unsmoothed divergence of an empty
    summary, are left out as missing cells), and how many were left out. ``directions``: of the
    measures whose direction is not in their name (the regression's: its human's).
    ``system_level``: measures without cells (their ``statistics`` are stored by
    :func:`metaeval.runs.engine.system_level.store`; their digest is in the batch's)."""
    directions = directions or {}
    frames, dropped = [], 0
    for name, values in scores.items():
        ok = np.isfinite(values)
        dropped += int((~ok).sum())
        frames.append(pd.DataFrame({"system": keys["system"].to_numpy()[ok], "input": keys["input"].to_numpy()[ok],
                                    "measure": name, "annotator": None, "value": values[ok], "line": 0}))
    if not frames:   # system-level measures only: no cell
        frames.append(pd.DataFrame({"system": [], "input": [], "measure": [], "annotator": [], "value": [], "line": []}))
    cells = pd.concat(frames, ignore_index=True)[CELL_COLUMNS]
    names = [*scores, *system_level]
    measures = pd.DataFrame({"name": names, "kind": "automatic",
                             "direction": [directions.get(n) or text.direction(n.removeprefix(prefix))
                                           for n in names]})
    description = json.dumps({"dataset": dataset, **options}, sort_keys=True)
    digest = hashlib.sha256(description.encode())
    for name in sorted(scores):
        digest.update(name.encode() + np.nan_to_num(scores[name], nan=np.inf).astype("<f8").tobytes())
    for name in system_level:
        digest.update(name.encode() + np.asarray(statistics, dtype="<i8").tobytes())
    batch = Batch(file=f"<score {' '.join(options['metrics'])}>", format="score", sha256=digest.hexdigest(),
                  options=options, systems=pd.DataFrame({"name": keys["system"].unique(), "type": None}),
                  measures=measures, cells=cells)
    return batch, dropped


def score_dataset(wh: Store, dataset: str, metrics: Sequence[str], rouge_variants: Sequence[str] = (),
                  js: JSSetting = JSSetting(), *, sera: SERASetting | None = None, prefix: str = "",
                  model_free: ModelFreeSetting = ModelFreeSetting(), human: str | None = None,
                  predictors: Sequence[str] = (), trained_on: str | None = None,
                  replace: bool = False, command: str | None = None,
                  progress: ProgressFactory | None = None) -> tuple[LoadReport, list[str], int]:
    """Score the stored texts of ``dataset`` and load the scores under ``prefix + name``:
    (report, measure names, NaN cells left out). SERA (``"sera"`` in ``metrics``) needs ``sera``,
    its setting; the index it searched is recorded in the ingest's options. The regression
    (``"regression"``) predicts ``human`` (:mod:`metaeval.runs.texts.regression`); its coefficients are
    recorded in the ingest's options, key ``regression``; ``predictors`` chooses its predictors
    (model-free features by base name and/or stored measures; default the ten features), and
    ``trained_on`` (another dataset) applies the coefficients recorded there instead of fitting."""
    if "sera" in metrics and sera is None:
        raise WarehouseError(Message("SERA needs a search index: give ", Argument("sera", placeholder="NAME"), " (see `",
                                     Hint("build_index", python="metaeval.runs.texts.index.build"), "`)"))
    sentinels = [m for m in metrics if m in SENTINELS]
    rows = summary_rows(wh, dataset, references=len(sentinels) < len(metrics))   # sentinels: none needed
    corpus, keys = corpus_of(rows) if len(sentinels) < len(metrics) else (None, _keys(rows))
    _check_regression(wh, dataset, metrics, sentinels, human, predictors, trained_on)   # before any text is scored
    others = [m for m in metrics if m not in ("sera", "regression", "corpus-bleu", *SENTINELS)]
    scores = {prefix + name: values for name, values in score(corpus, others, rouge_variants, js, model_free).items()} \
        if others else {}
    sera_used, searched = None, []   # SERA's searched lists: cached with the scores, in their transaction
    if "sera" in metrics:
        from metaeval.runs.texts import sera as sera_runs

        sera_scores, sera_used, _ = sera_runs.score(wh, corpus, sera, progress=progress, pending=searched)
        scores.update({prefix + name: values for name, values in sera_scores.items()})
    directions, fitted = {}, None
    if "regression" in metrics:
        from metaeval.runs.texts import regression as regression_runs

        name, values, direction, fitted = regression_runs.score(wh, dataset, corpus, keys, human, model_free.stem,
                                                                model_free.stop, model_free.cutoff, predictors,
                                                                trained_on)
        scores[prefix + name], directions[prefix + name] = values, direction
    if sentinels:
        from metaeval.runs.texts import sentinels as sentinel_runs

        found, found_directions, fitted_sentinels = sentinel_runs.score(wh, dataset, rows, keys, sentinels, human)
        scores.update({prefix + n: v for n, v in found.items()})
        directions.update({prefix + n: d for n, d in found_directions.items()})
    options = {"metrics": list(metrics), "prefix": prefix, "js": js.__dict__ if "js" in metrics else None,
               **({"model_free": model_free.__dict__} if {*MODEL_FREE, "regression"} & set(metrics) else {}),
               "rouge_variants": sorted(n for n in scores if not n.removeprefix(prefix).startswith(("sera", "sentinel-", *_MODEL_FREE_PREFIXES)))
               if "rouge" in metrics else []}
    if sera_used is not None:
        options["sera"] = sera_used
    if fitted is not None:
        options["regression"] = fitted
    if sentinels:
        options["sentinels"] = fitted_sentinels
    statistics = text.bleu_statistics(corpus) if "corpus-bleu" in metrics else None
    batch, dropped = to_batch(dataset, keys, scores, options, prefix, directions,
                              system_level=[prefix + "corpus-bleu"] if statistics is not None else [],
                              statistics=statistics)

    def cache_searched() -> None:
        if searched:
            from metaeval.runs.texts import sera as sera_runs

            sera_runs.cache(wh, searched)
        if statistics is not None:
            from metaeval.runs.engine import system_level

            system_level.store(wh, dataset, prefix + "corpus-bleu", keys, statistics, replace)

    try:
        [report] = wh.load(dataset, [batch], replace=replace, command=command,
                           before_commit=cache_searched)
    except ConflictError as exc:
        raise WarehouseError(Message(exc.args[0], "\nIf these measures came from another source (a dataset's "
                                     "released scores, say), store the computed ones under other names with ",
                                     Argument("prefix"), ", e.g. ", Argument("prefix", "ours:"))) from None
    return report, [*scores, *(batch.measures["name"].iloc[len(scores):])], dropped


def _check_regression(wh: Store, dataset: str, metrics: Sequence[str], sentinels: Sequence[str], human: str | None,
                      predictors: Sequence[str], trained_on: str | None) -> None:
    """The regression's and the sentinels' options, and their human cells, refused in one line when wrong."""
    if (predictors or trained_on is not None) and "regression" not in metrics:
        raise WarehouseError(Message(Argument("predictors" if predictors else "trained_on",
                                              list(predictors) if predictors else trained_on),
                                     " sets the regression: add the metric regression"))
    if "regression" in metrics or sentinels:
        from metaeval.runs.texts import regression as regression_runs

        if not human and "regression" not in metrics:
            raise WarehouseError(Message("a sentinel predicts a human score: give ", Argument("human", placeholder="H")))
        if trained_on is not None and not sentinels:   # the human is the training dataset's
            wh.require_dataset(trained_on)
            regression_runs.human_cells(wh, trained_on, human, pd.DataFrame({"system": [], "input": []}))
        else:
            regression_runs.human_cells(wh, dataset, human, pd.DataFrame({"system": [], "input": []}))
    elif human:
        raise WarehouseError(Message(Argument("human", human), " is the regression's target: add the metric regression"))
