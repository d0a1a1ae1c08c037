"""``metaeval rank-change``: how the ranking of systems changes between two measures (Graham 2015,
Table 3; the statistics: :mod:`metaeval.analyses.rank_change`).

The two measures may be any of the dataset's -- two metrics, two variants of one, a metric and a
human judgment, two human judgments: so this is also the system-level metric-vs-metric
correlation (SERA's Table 3) from the command line. Each system's score is its mean over its cells
of the measure (oriented: higher is better), on the systems both measures score. Rows go to
``rank_changes`` (one per system) under one run; the same command on the same cells computes
nothing.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import AGGREGATE, DATASET, FORCE, SYSTEM_TYPE, WHERE, Option

COMMAND, TABLE = "rank-change", "rank_changes"

PAIR = Option("metrics", multiple=True, required=True, flag="--metric", metavar="MEASURE",
              help="The two measures whose system rankings are compared (metrics, variants or human judgments). "
                   "Give exactly two.")


@register
class RankChange(Family):
    name = COMMAND
    topic = "systems"
    headline = "How the ranking of systems changes between two measures (Graham 2015)."
    summary = "How the ranking of systems changes between two measures (Graham 2015, Table 3)."
    tables = (TABLE,)
    options = (DATASET, PAIR, AGGREGATE, WHERE, SYSTEM_TYPE, FORCE)

    def inputs(self, wh, dataset: str, metrics, *, aggregate: str = AGGREGATE.default, where=()):
        """Each system's score under the two measures, on the systems having both."""
        from metaeval.runs.engine import persist, selection, store

        measures = tuple(dict.fromkeys(metrics))   # any measures: metrics, variants or human judgments
        if len(measures) != 2:
            raise WarehouseError(Message("give exactly two measures: ", Argument("metrics", list(measures))))
        systems, scores, fingerprint, conventions = persist.system_scores(wh, dataset, measures, where=where,
                                                                          aggregate=aggregate)
        if len(systems) < 2:
            raise WarehouseError(f"{len(systems)} system(s) of {dataset!r} have a score under both {measures[0]} "
                                 f"and {measures[1]}: a ranking needs 2 or more")
        subset = selection.subset_label(selection.parse_where(where))
        keys = {"aggregate": aggregate, "measure_a": measures[0], "measure_b": measures[1]}
        return store.Inputs(dataset, fingerprint, keys, subset, (systems, scores, conventions))

    def rows(self, wh, inputs, *, aggregate: str = AGGREGATE.default, **params):
        """Each system's positions under the two measures and the two rankings' correlations."""
        import pandas as pd

        from metaeval.analyses import rank_change as rc
        from metaeval.runs.engine import bookkeeping, store

        (systems, scores, conventions), subset = inputs.data, inputs.subset
        setting = {"measure_a": inputs.keys["measure_a"], "measure_b": inputs.keys["measure_b"]}
        a, b = scores[setting["measure_a"]], scores[setting["measure_b"]]
        out = rc.rank_change(a, b)
        conventions = {**conventions,
                       "position": "1 = best; ties share the best position of their group (competition ranking)",
                       "score": f"a system's {aggregate} over its cells of the measure", "kendall": "tau-b (scipy)"}
        frame = pd.DataFrame({"system": systems, "score_a": a, "score_b": b, "position_a": out.position_a,
                              "position_b": out.position_b, "change": out.change}).assign(
            dataset=inputs.dataset, **setting, subset=subset, kendall=bookkeeping.none_if_nan(out.kendall),
            spearman=bookkeeping.none_if_nan(out.spearman), n_systems=len(systems), fingerprint=inputs.fingerprint,
            conventions=bookkeeping.conventions_json(conventions), aggregate=aggregate)
        return store.Rows(frame, {"dataset": inputs.dataset, **setting, "where": subset,
                                  **({"aggregate": aggregate} if aggregate != AGGREGATE.default else {})})

    def outcome(self, stored, inputs, **params):
        """Best system under the first measure first."""
        return stored.sort_values(["position_a", "system"]).reset_index(drop=True)

    def present(self, outcome, fmt: str) -> str:
        if fmt != "text" or outcome.empty:
            return super().present(outcome, fmt)
        r = outcome.iloc[0]
        shown = outcome[["system", "score_a", "score_b", "position_a", "position_b", "change"]].rename(
            columns={"score_a": r["measure_a"], "score_b": r["measure_b"]}).round(4)

        from metaeval.present import plain, tables

        def number(x):
            return plain.number_text(x, 4, undefined="undefined (a constant measure)")

        return (tables.render(shown, "text") + "\n" + plain.wrap(
            f"Kendall tau-b {number(r['kendall'])}, Spearman {number(r['spearman'])} between the two system "
            f"rankings ({r['n_systems']} systems).") + "\n")
