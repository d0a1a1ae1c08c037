"""``metaeval raters``: how far the raters of MQM / ESA judgments agree, and how many ratings per
segment a stable system ranking needs (the statistics: :mod:`metaeval.analyses.mqm`).

Agreement (table ``rater_agreement``): Krippendorff's alpha (interval) on the raters' segment
scores of the human measure (each rater one annotator: ``ingest mqm`` stores them so), and, on
the dataset's human error spans (``error_spans``), character-level agreement: every character of
a segment's source and target rated by two or more raters is a unit, labelled by whether the
rater's spans cover it (nominal alpha), or by the set of severities covering it, and the pairwise
character F1 of two raters' marked characters (mean over pairs, and pooled).

Stability (table ``rating_stability``): for each number r of ratings per segment, from 1 to the
most any segment has, ``k`` draws of r raters per segment (seeded); each draw's system scores
against those on every rating, by Kendall tau-b: the mean, the percentile interval, and how often
the best system stays best. One run writes both tables; the same command on the same data
computes nothing.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import ALPHA, DATASET, FORCE, HUMAN, K, SEED

COMMAND, AGREEMENT, STABILITY = "raters", "rater_agreement", "rating_stability"


@register
class Raters(Family):
    name = COMMAND
    topic = "mt"
    headline = "Agreement between raters on scores and spans, and the ranking's stability."
    summary = "Agreement between raters on scores and spans, and the ranking's stability vs ratings per segment"
    tables = (AGREEMENT, STABILITY)
    report = ("metaeval.runs.report.spans:raters",)
    report_position = 46
    options = (DATASET, HUMAN.but(help="The human measure whose raters are compared, e.g. mqm."),
               K.but(help="Draws of raters per number of ratings."), SEED, ALPHA, FORCE)

    def inputs(self, wh, dataset: str, human: str, *, k: int = K.default, seed: int = SEED.default,
               alpha: float = ALPHA.default):
        """The ratings and the spans (both in the fingerprint); the keys of each table."""
        import hashlib

        import numpy as np

        from metaeval.runs.engine import store

        annotations = wh.annotations(dataset, human)
        spans = _spans(wh, dataset)
        fingerprint = hashlib.sha256(np.ascontiguousarray(annotations.values).tobytes() + repr(
            (annotations.systems, annotations.inputs, annotations.annotators)).encode() + spans[2].encode()).hexdigest()
        return store.Inputs(dataset, fingerprint, {"human": human}, data=(annotations, spans),
                            more={STABILITY: {"human": human, "k": k, "seed": seed, "alpha": alpha}})

    def rows(self, wh, inputs, *, k: int = K.default, seed: int = SEED.default, alpha: float = ALPHA.default,
             **params):
        return _rows(wh, inputs, k, seed, alpha)

    def outcome(self, stored, inputs, **params):
        return ordered(stored)


def rated_rows(wh, dataset: str):
    """The ``rated`` rows of the dataset's spans (error_spans.sql), each span checked within the
    stored text it points into: a text stored after its spans (ESA's CSV ingested before the
    system outputs) may be shorter, and is then a :class:`WarehouseError` naming the span."""
    from metaeval.schema import statements

    rows = wh.con.execute(statements("error_spans")["rated"], {"dataset": dataset}).df()
    length = rows["source_length"].where(rows["side"] == "source", rows["target_length"])
    beyond = rows[rows["side"].notna() & (rows["span_end"] > length)]
    if len(beyond):
        r, n = beyond.iloc[0], int(length[beyond.index[0]])
        raise WarehouseError(Message(
            f"dataset {dataset!r}: judge {r.judge}'s span [{int(r.span_start)}, {int(r.span_end)}) on system "
            f"{r.system}, segment {r.input} lies beyond the {n} characters of the stored {r.side} ({len(beyond)} "
            "span(s) so): the texts were stored after the spans and are not theirs; ingest the right texts, or the "
            "spans again, with ", Argument("replace", True)))
    return rows


def _spans(wh, dataset: str):
    """The rated segments of the dataset's human spans, the raters, the rows as text (for the
    fingerprint), and whether stored sources were left out: raters who mark no source span (ESA
    marks targets only) could not mark their characters, which are then no units."""
    from metaeval.analyses import mqm

    if not wh.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'error_spans'").fetchall()[0][0]:
        return [], [], "", False
    rows = rated_rows(wh, dataset)
    rows = rows[rows["kind"] == "human"]
    unmarked = not (rows["side"] == "source").any() and bool((rows["source_length"] > 0).any())
    if unmarked:   # raters who mark only targets (ESA): the sources' characters are no units
        rows = rows.assign(source_length=0)
    segments = []
    for _, seg in rows.groupby(["system", "input"], sort=True):
        lengths = {"source": int(seg["source_length"].iloc[0]), "target": int(seg["target_length"].iloc[0])}
        spans = {j: [(r.side, int(r.span_start), int(r.span_end), r.severity)
                     for r in g.itertuples() if isinstance(r.side, str)] for j, g in seg.groupby("judge", sort=True)}
        segments.append(mqm.RatedSegment(lengths=lengths, spans=spans))
    return segments, sorted(rows["judge"].unique()), rows.to_csv(index=False), unmarked


def _agreement(annotations, segments, raters) -> list[dict]:
    import numpy as np

    from metaeval.analyses import mqm

    values = annotations.values.reshape(-1, annotations.values.shape[2]).T      # raters x cells
    rows = [{"statistic": "score_alpha", "value": mqm.score_alpha(values), "n_raters": values.shape[0],
             "n_units": int(((~np.isnan(values)).sum(axis=0) >= 2).sum())}]
    plain = mqm.character_labels(segments, raters)
    severity = mqm.character_labels(segments, raters, severity=True)
    n_chars = int(((~np.isnan(plain)).sum(axis=0) >= 2).sum())
    f1_mean, f1_pooled = mqm.pairwise_span_f1(plain)
    for statistic, value in (("span_alpha", mqm.label_alpha(plain)), ("span_alpha_severity", mqm.label_alpha(severity)),
                             ("span_f1_mean", f1_mean), ("span_f1_pooled", f1_pooled)):
        rows.append({"statistic": statistic, "value": value, "n_raters": len(raters), "n_units": n_chars})
    return rows


def _rows(wh, inputs, k: int, seed: int, alpha: float):
    """The ``rater_agreement`` and ``rating_stability`` rows of these ratings (``{table: rows}``)."""
    import numpy as np
    import pandas as pd

    from metaeval.analyses import mqm
    from metaeval.runs.engine import bookkeeping, persist, store

    (annotations, (segments, judges, span_text, unmarked)), setting = inputs.data, dict(inputs.keys)
    dataset, fingerprint, human = inputs.dataset, inputs.fingerprint, setting["human"]
    most = int((~np.isnan(annotations.values)).sum(axis=2).max()) if annotations.values.size else 0
    if most < 1:
        raise WarehouseError(f"{human!r} of {dataset!r} has no rating")
    conventions = {"score_alpha": "Krippendorff interval alpha (krippendorff package), raters x cells",
                   "span_units": "every character of source and target of a segment two or more raters rated"
                   if not unmarked else "every character of the target of a segment two or more raters rated (they "
                   "mark no source span, as ESA's raters: the source's characters are no unit)",
                   "span_alpha": "nominal; label 1 inside a span of the rater, 0 outside",
                   "span_alpha_severity": "nominal; label the set of severities (case-folded) covering it",
                   "span_f1": "2|A & B| / (|A| + |B|) on the characters both raters rated"}
    base = {"dataset": dataset, **setting, "subset": "", "fingerprint": fingerprint}
    agreement = pd.DataFrame([{**base, **row, "conventions": bookkeeping.conventions_json(conventions)}
                              for row in _agreement(annotations, segments, judges)])
    stab_conv = {"system_score": "mean over rated inputs of the mean over the drawn raters",
                 "draw": "r raters per cell without replacement (all when fewer); numpy default_rng([seed, r])",
                 "coefficient": "Kendall tau-b (scipy) against the scores on every rating", "interval": "percentile"}
    kinds = wh.measure_kinds(dataset)
    lower = (kinds.loc[kinds["measure"] == human, "direction"] == "lower").any()
    oriented = -annotations.values if lower else annotations.values     # the best system: the highest
    stability = []
    for r in range(1, most + 1):
        s = mqm.rating_stability(oriented, r, k, seed, alpha)
        stability.append({**base, "ratings": r, "n_systems": len(annotations.systems), "short_cells": s.short_cells,
                          "kendall_mean": s.mean, "kendall_lower": s.lower, "kendall_upper": s.upper,
                          "top_kept": s.top_kept, "k": k, "seed": seed, "alpha": alpha,
                          "conventions": bookkeeping.conventions_json(stab_conv)})
    frames = {AGREEMENT: agreement, STABILITY: pd.DataFrame(stability)}
    return store.Rows({t: persist.nan_as_null(f) for t, f in frames.items()},
                      {**setting, "dataset": dataset, "k": k, "alpha": alpha}, seed)




#: The order of rater_agreement's statistics as printed (the scores', then the spans').
STATISTICS = ("score_alpha", "span_alpha", "span_alpha_severity", "span_f1_mean", "span_f1_pooled")


def ordered(tables: dict) -> dict:
    """The rows in an order that is the same on every dataset (not the store's): the agreement's
    statistics in :data:`STATISTICS` order, the stability's by number of ratings, ascending."""
    out = dict(tables)
    agreement, stability = out.get(AGREEMENT), out.get(STABILITY)
    if agreement is not None and len(agreement):
        rank = {name: i for i, name in enumerate(STATISTICS)}
        out[AGREEMENT] = agreement.assign(_s=agreement["statistic"].map(lambda x: rank.get(x, len(rank)))) \
            .sort_values(["subset", "_s", "statistic"], kind="stable").drop(columns="_s").reset_index(drop=True)
    if stability is not None and len(stability):
        out[STABILITY] = stability.sort_values(["subset", "ratings"], kind="stable").reset_index(drop=True)
    return out
