"""``metaeval ingest mqm``: MQM / ESA error spans stored, and their scores as human measures.

The file (:mod:`metaeval.ingest.mqm`) is parsed and checked; in one transaction its texts
without markers (source: the input's document at position 0; target: the system's summary, as
``ingest mtme`` stores them), its spans (table ``error_spans``) and its scores are loaded:

- MQM: each rater's score of a segment under a weighting (:mod:`metaeval.analyses.mqm`: the
  negated sum of its errors' weights, the most specific ``severity[/category...]`` spec of each
  error; 0 for a segment rated without error), stored as that rater's judgment (one annotator),
  so a segment's value -- the ``cells`` view's mean over its annotators -- is the mean over its
  raters, and ``n_annotators`` their number. Measure ``mqm`` for mt-metrics-eval's released
  default, ``mqm[<specs>]`` for another (:func:`metaeval.analyses.mqm.weighting_name`).
  Cells exist only for the segments a rater rated.
- ESA (a ``score`` column): each rater's 0-100 score as the measure ``esa``, the same way.

Both are higher-is-better human measures: every analysis of the warehouse takes them as it
takes any. A metric's predicted spans (``judge``) are stored as that automatic judge's spans,
with no measure.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from metaeval.analyses import mqm
from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError
from metaeval.ingest import mqm as parser
from metaeval.batch import CELL_COLUMNS, Batch, LoadReport

DEFAULT_WEIGHTS = mqm.DEFAULT_WEIGHTS


def rater_cells(spans: parser.Spans, weights: str) -> tuple[str, pd.DataFrame]:
    """(measure name, cells): each judge's score of each segment it rated under ``weights``."""
    try:
        parsed = mqm.parse_weights(weights)
        name = mqm.weighting_name(weights)
    except ValueError as exc:
        raise WarehouseError(Message(Argument("weights", weights), f": {exc}")) from None
    errors = spans.spans.drop_duplicates(["system", "input", "judge", "error"])
    known = mqm.severities(parsed) | {parser.NO_ERROR}
    unknown = ~errors["severity"].str.lower().isin(known)
    if unknown.any():                        # it would weigh 0: one error scored as an error-free segment
        row = errors[unknown].iloc[0]
        raise WarehouseError(Message(
            f"{spans.file}:{int(row['line'])}: field 'severity': {row['severity']!r} is a severity the weighting "
            f"does not name ({', '.join(sorted(mqm.severities(parsed)))}): a typo, or give it a weight with ",
            Argument("weights", f"{weights} {row['severity'].lower()}:WEIGHT")))
    segment = pd.factorize(pd.MultiIndex.from_frame(errors[["system", "input"]]))[0]
    out = mqm.rater_scores(segment, errors["judge"].to_numpy(), errors["severity"].tolist(),
                           errors["category"].tolist(), parsed)
    first = errors.groupby(["system", "input", "judge"], sort=False)["line"].min()
    keys = errors.drop_duplicates(["system", "input"])[["system", "input"]].to_numpy()
    cells = pd.DataFrame({"system": [keys[s][0] for s in out.segment], "input": [keys[s][1] for s in out.segment],
                          "measure": name, "annotator": out.rater, "value": out.score})
    cells["line"] = [int(first[(s, i, r)]) for s, i, r in zip(cells["system"], cells["input"], cells["annotator"])]
    return name, cells[CELL_COLUMNS]


def esa_cells(spans: parser.Spans) -> pd.DataFrame:
    """The ESA scores as cells of the measure ``esa`` (one annotator per rater)."""
    s = spans.scores
    return pd.DataFrame({"system": s["system"], "input": s["input"], "measure": "esa", "annotator": s["judge"],
                         "value": s["score"].astype(float), "line": s["line"]})[CELL_COLUMNS]


def batch(spans: parser.Spans, weights: str = DEFAULT_WEIGHTS, fmt: str = parser.FORMAT,
          extra: dict | None = None) -> Batch:
    """The texts and (for human judges) the scores of a parsed file, as one :class:`Batch`
    (``fmt``: the ingest's format; ``extra``: more options recorded with it)."""
    measures, cells = [], []
    if spans.kind == "human":
        if spans.esa:
            measures, cells = ["esa"], [esa_cells(spans)]
        else:
            name, table = rater_cells(spans, weights)
            measures, cells = [name], [table]
    scored = {"measures": pd.DataFrame({"name": measures, "kind": "human", "direction": "higher"}),
              "cells": pd.concat(cells, ignore_index=True)} if cells else {}   # a judge's spans: no measure
    systems = sorted(set(spans.targets["system"]) | set(spans.spans["system"]))   # ESA's CSV: no texts
    return Batch(file=spans.file, format=fmt, sha256=spans.sha256,
                 options={"weights": None if spans.esa or spans.kind != "human" else weights,
                          "judge": spans.spans["judge"].iloc[0] if spans.kind == "automatic" else None,
                          **(extra or {})},
                 systems=pd.DataFrame({"name": systems, "type": None}),
                 documents=spans.sources.assign(position=0)[["input", "position", "text", "line"]],
                 summaries=spans.targets[["system", "input", "text", "line"]], **scored)


#: the layouts ``ingest mqm`` reads: the MQM/ESA TSV, ESA's released CSV, or either as detected
FORMATS = ("auto", "tsv", "esa-csv")


def ingest(wh: Store, dataset: str, path: Path, *, weights: str = DEFAULT_WEIGHTS, judge: str | None = None,
           replace: bool = False, allow_new: bool = False, command: str | None = None, fmt: str = "auto",
           lp: str | None = None, targets: Path | None = None) -> LoadReport:
    """Parse ``path``, score it and load texts, spans and scores into ``dataset`` (one transaction).
    ``fmt``: tsv, esa-csv (:mod:`metaeval.ingest.esa_csv`, of language pair ``lp``; its target
    texts read from the directory ``targets`` of SYSTEM.txt files, else the dataset's stored
    summaries, every span checked within its text) or auto."""
    from metaeval.ingest import esa_csv
    from metaeval.names import check_option
    from metaeval.schema import ensure_table

    if judge is not None:
        check_option("judge", judge, "judge name")
    if fmt not in FORMATS:
        raise WarehouseError(Message("unknown ", Argument("fmt", fmt), f"; choose from {', '.join(FORMATS)}"))
    csv_layout = fmt == "esa-csv" or (fmt == "auto" and esa_csv.looks_like(Path(path)))
    if not csv_layout and lp is not None:
        raise WarehouseError(Message(Argument("lp", lp), " chooses a language pair of ESA's released CSV; "
                                     f"{path} is read as the MQM/ESA TSV"))
    if not csv_layout and targets is not None:
        raise WarehouseError(Message(Argument("targets", str(targets)), " gives the texts of ESA's released CSV, "
                                     f"which has none; {path} is read as the MQM/ESA TSV, whose texts it holds"))
    if csv_layout and judge is not None:
        raise WarehouseError(Message(Argument("judge", judge), " names a metric's predicted spans; ESA's released "
                                     "CSV holds raters' judgments"))
    extra, untexted = {}, 0
    if csv_layout:
        spans, skipped = esa_csv.parse(Path(path), lp)
        read = {} if targets is None else esa_csv.read_targets(Path(targets), spans)
        spans, untexted = esa_csv.with_targets(spans, read, _stored_targets(wh, dataset))
        extra = {"lp": lp, "skipped": skipped, **({} if targets is None else {"targets": str(targets)})}
    else:
        spans = parser.parse(Path(path), judge=judge)
    if spans.esa and weights != DEFAULT_WEIGHTS:
        raise WarehouseError(Message(Argument("weights", weights), f" weighs MQM errors; {spans.file} has a score "
                                     "column (ESA): its measure is esa, the raters' scores; leave out ",
                                     Argument("weights")))
    loaded = batch(spans, weights, esa_csv.FORMAT if csv_layout else parser.FORMAT, extra)
    ensure_table(wh.con, "error_spans")   # a warehouse made before the table gets it
    written: list[tuple[int, int]] = []
    (report,) = wh.load(dataset, [loaded], replace=replace, allow_new=allow_new, command=command,
                        before_commit=lambda: written.append(parser.store(wh.con, dataset, spans, replace=replace)))
    inserted, replaced = written[0]
    n = len(spans.spans)
    left = f", skipped {sum(extra['skipped'].values())} records ({_counts(extra['skipped'])})" if extra else ""
    if untexted:
        left += (f", {untexted} segment{'s' if untexted != 1 else ''} without a target text (spans stored, left out "
                 "of the character-level statistics)")
    return LoadReport(report.file, report.rows + n, report.inserted + inserted, report.replaced + replaced,
                      f"{report.contents}, {n} error span row{'s' if n != 1 else ''}{left}")


def _stored_targets(wh: Store, dataset: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(system, input) -> (text, where) of the target texts ``dataset`` holds (none: empty)."""
    from metaeval.schema import statements

    rows = wh.con.execute(statements("texts")["summaries"], {"dataset": dataset}).fetchall()
    return {(s, i): (t, f"stored in dataset {dataset}") for s, i, t in rows}


def _counts(counts: dict) -> str:
    return ", ".join(f"{v} {k}" for k, v in counts.items() if v) or "none"

