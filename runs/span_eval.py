"""``metaeval span-eval``: metrics' predicted error spans against the human ones (the statistics:
:mod:`metaeval.analyses.spans`).

A metric's spans are ingested with ``ingest mqm FILE --judge NAME`` (an automatic judge of
``error_spans``). On the segments (system x input) the judge and at least one human rater rated,
the human spans are the union over the raters; each judge's character-level precision, recall
and F1 (partial overlaps earn partial credit), without and with severity matching, micro and
macro over the segments, with percentile bootstrap intervals over segments. One run writes the
rows of every judge; the same command on the same spans computes nothing.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.families import ALPHA, DATASET, FORCE, K, SEED, Family, Option, register

COMMAND, TABLE = "span-eval", "span_evaluation"

JUDGES = Option("judges", multiple=True, flag="--judge", metavar="NAME",
                help="The automatic judges (metrics' predicted spans) evaluated; default: every one. Repeatable.")


@register
class SpanEval(Family):
    name = COMMAND
    summary = "Metrics' predicted error spans against the human ones: character precision, recall, F1"
    tables = (TABLE,)
    options = (DATASET, JUDGES, K.but(help="Bootstrap resamples of the segments."), SEED, ALPHA, FORCE)

    def compute(self, wh, **params):
        return span_eval(wh, **params)


def _segments(rows) -> dict:
    """(system, input) -> (characters, {judge: flattened spans}) of the given span rows."""
    from metaeval.analyses import spans

    out = {}
    for (system, input_), seg in rows.groupby(["system", "input"], sort=True):
        lengths = {"source": int(seg["source_length"].iloc[0]), "target": int(seg["target_length"].iloc[0])}
        judged = {}
        for judge, g in seg.groupby("judge", sort=True):
            marked = [(r.side, int(r.span_start), int(r.span_end), r.severity) for r in g.itertuples()
                      if isinstance(r.side, str)]
            judged[judge] = spans.flatten(lengths, marked)[1]
        out[(system, input_)] = (sum(lengths.values()), judged)
    return out


def _evaluate(judge: str, human: dict, predicted: dict, k: int, seed: int, alpha: float) -> list[dict]:
    from metaeval.analyses import spans

    keys = sorted(set(human) & set(predicted))
    if not keys:
        raise WarehouseError(Message("the judge ", Argument("judges", [judge]), " rated no segment a human rated"))
    lengths = [human[key][0] for key in keys]
    gold = [[s for marks in human[key][1].values() for s in marks] for key in keys]
    pred = [predicted[key][1][judge] for key in keys]
    rows = []
    for matching in (False, True):
        out = spans.bootstrap(spans.span_counts(lengths, pred, gold, severity=matching), k, seed, alpha)
        for averaging in ("micro", "macro"):
            row = {"judge": judge, "severity_matching": matching, "averaging": averaging, "n_segments": len(keys)}
            for statistic in spans.STATISTICS:
                value, lower, upper = out[(averaging, statistic)]
                row.update({statistic: value, f"{statistic}_lower": lower, f"{statistic}_upper": upper})
            rows.append(row)
    return rows


def span_eval(wh, dataset: str, judges=(), *, k: int = K.default, seed: int = SEED.default,
              alpha: float = ALPHA.default, force: bool = False, progress=None):
    """The latest ``span_evaluation`` rows of this setting, computed unless up to date."""
    import hashlib

    import pandas as pd

    from metaeval.runs import bookkeeping, persist
    from metaeval.schema import statements

    wh.require_dataset(dataset)
    exists = wh.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'error_spans'").fetchall()[0][0]
    rows = wh.con.execute(statements("error_spans")["rated"], {"dataset": dataset}).df() if exists else None
    automatic = sorted(rows.loc[rows["kind"] == "automatic", "judge"].unique()) if rows is not None else []
    judges = tuple(dict.fromkeys(judges)) or tuple(automatic)
    unknown = [j for j in judges if j not in automatic]
    if not judges or unknown:
        raise WarehouseError(Message(f"dataset {dataset!r} has no predicted spans of ", Argument("judges", unknown or
                                     ["NAME"]), f"; its automatic judges: {', '.join(automatic) or 'none'}"))
    if not (rows["kind"] == "human").any():
        raise WarehouseError(f"dataset {dataset!r} has no human error spans to evaluate against")
    used = rows[(rows["kind"] == "human") | rows["judge"].isin(judges)]
    fingerprint = hashlib.sha256(used.to_csv(index=False).encode()).hexdigest()
    setting = {"k": k, "seed": seed, "alpha": alpha, "judge": judges}
    if not force and (stored := persist.reusable(wh, TABLE, dataset, fingerprint, **setting)) is not None \
            and set(stored["judge"]) == set(judges):
        return stored
    human = _segments(used[used["kind"] == "human"])
    predicted = _segments(used[used["kind"] == "automatic"])
    conventions = {"gold": "the union of the human raters' spans", "units": "characters of source and target",
                   "matching": "severity_matching: a severity covering the character in both (case-folded)",
                   "macro": "mean over the segments where the value is defined",
                   "bootstrap": "segments with replacement, numpy default_rng(seed); percentile interval"}
    frame = pd.DataFrame([{"dataset": dataset, "subset": "", **row, "k": k, "seed": seed, "alpha": alpha,
                           "fingerprint": fingerprint, "conventions": bookkeeping.conventions_json(conventions)}
                          for judge in judges for row in _evaluate(judge, human, predicted, k, seed, alpha)])
    for column in frame.columns:
        if frame[column].dtype == float:
            frame[column] = frame[column].astype(object).map(bookkeeping.none_if_nan)
    persist.ensure_table(wh, TABLE, "87_mqm_results")
    persist.write(wh, COMMAND, TABLE, frame, {"dataset": dataset, "judges": list(judges), "k": k, "alpha": alpha},
                  fingerprint, seed)
    return persist.reusable(wh, TABLE, dataset, fingerprint, **setting)
