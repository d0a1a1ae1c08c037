"""``metaeval measure-correlation``: the correlation of two measures, with its p-value -- two human
judgments (Louis & Nenkova 2013, §2.3: pyramid against responsiveness), two metrics (Cohan &
Goharian 2016, Table 3: SERA against ROUGE), or one of each (the statistics:
:mod:`metaeval.analyses.measure_correlation`).

``correlate`` correlates metrics with one human judgment; ``rank-change`` gives two measures'
Kendall and Spearman without p. Here the two measures are any of the dataset's, oriented (higher
is better for both), at the system level (each measure's system scores over its own cells, the
``aggregate`` over the inputs, on the systems both score) and/or the global level (every cell
both score). One row per level and coefficient under one run; the same command on the same cells
computes nothing. No verdict is stored: the p-value is read by the conclusion layer.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import AGGREGATE, ALTERNATIVE, DATASET, FORCE, SYSTEM_TYPE, WHERE, Option

COMMAND, TABLE = "measure-correlation", "measure_correlations"
LEVELS = ("system", "global")

PAIR = Option("measures", multiple=True, required=True, flag="--measure", metavar="MEASURE",
              help="The two measures correlated (human judgments or metrics, by name). Give exactly two.")
MEASURE_LEVELS = Option("levels", kind="choice", choices=LEVELS, multiple=True, flag="--level",
                        help="system (the measures' system scores) and/or global (every cell both score). "
                             "Default: system.")
MEASURE_COEFFICIENTS = Option("coefficients", kind="choice", choices="metaeval.analyses.measure_correlation:COEFFICIENTS",
                              multiple=True, flag="--coefficient",
                              help="pearson, spearman and/or kendall (tau-b). Default: pearson.")
MEASURE_ALTERNATIVE = ALTERNATIVE.but(help="H1 of the p-value: the correlation is != 0 (two-sided), > 0 (greater) "
                                           "or < 0 (less).")


@register
class MeasureCorrelation(Family):
    name = COMMAND
    topic = "metrics"
    headline = "The correlation of two measures (human or metric) with its p-value."
    summary = ("The correlation of two measures (two human judgments, two metrics) with its p-value "
               "(Louis & Nenkova 2013, §2.3; SERA's Table 3).")
    tables = (TABLE,)
    options = (DATASET, PAIR, MEASURE_LEVELS, MEASURE_COEFFICIENTS, MEASURE_ALTERNATIVE, AGGREGATE, WHERE,
               SYSTEM_TYPE, FORCE)

    def inputs(self, wh, **params):
        return _inputs(wh, **params)

    def rows(self, wh, inputs, **params):
        return _rows(inputs)

    def enough(self, stored, inputs, **params) -> bool:
        """Every level stored has every coefficient asked."""
        coefficients = inputs.data[2]
        return all(set(coefficients) <= set(part["coefficient"]) for _, part in stored.groupby("level", sort=False))

    def outcome(self, stored, inputs, **params):
        """Levels, then coefficients, in the order given."""
        import numpy as np

        _, levels, coefficients, _ = inputs.data
        rows = stored[stored["coefficient"].isin(coefficients)]
        key = {(lv, c): i for i, (lv, c) in enumerate((lv, c) for lv in levels for c in coefficients)}
        return rows.iloc[np.argsort([key[(r.level, r.coefficient)] for r in rows.itertuples()], kind="stable")
                         ].reset_index(drop=True)


def _inputs(wh, dataset: str, measures, *, levels=(), coefficients=(), alternative: str = ALTERNATIVE.default,
            aggregate: str = AGGREGATE.default, where=()):
    """What the ``measure_correlations`` rows of this setting are of: each level's points (the
    systems' scores, or every cell both measures score) and their fingerprints."""
    import numpy as np

    from metaeval.runs.engine import persist, selection, store, system_level

    pair = tuple(dict.fromkeys(measures))
    if len(pair) != 2:
        raise WarehouseError(Message("give exactly two measures: ", Argument("measures", list(pair))))
    levels = tuple(dict.fromkeys(levels or ("system",)))
    coefficients = tuple(dict.fromkeys(coefficients or ("pearson",)))
    wh.require_dataset(dataset)
    wh.require_measures(dataset, list(pair))
    subset = selection.subset_label(selection.parse_where(where))
    if "global" in levels:   # checks before anything is read or written
        if aggregate != AGGREGATE.default:
            raise WarehouseError(Message("the global level correlates cells, not system scores: ",
                                         Argument("aggregate", aggregate), " is for the system level alone; choose ",
                                         Argument("levels", ["system"])))
        if found := [m for m in pair if m in set(system_level.measures(wh, dataset))]:
            raise WarehouseError(Message(f"{found[0]!r} is a system-level measure (no cell scores): choose ",
                                         Argument("levels", ["system"])))
    points = {}
    if "system" in levels:
        systems, scores, fingerprint, conventions = persist.system_scores(wh, dataset, pair, where=where,
                                                                          aggregate=aggregate)
        conventions["score"] = f"a system's {aggregate} over its cells of each measure"
        points["system"] = (scores[pair[0]], scores[pair[1]], fingerprint, conventions, len(systems), None)
    if "global" in levels:
        data = selection.load_data(wh, selection.Scope(dataset, None, pair, ("global",), (),
                                                       selection.parse_where(where)))
        (a, b), _, _ = data.restrict(list(pair))
        both = ~np.isnan(a) & ~np.isnan(b)
        points["global"] = (np.where(both, a, np.nan), np.where(both, b, np.nan), data.fingerprint(list(pair))[0],
                            {"orientation": "lower-is-better measures negated: higher is better",
                             "points": "every cell (system, input) both measures score", **(
                                 {"subset": data.subset} if data.subset else {})},
                            int(both.any(axis=1).sum()), int(both.any(axis=0).sum()))
    setting = {"measure_a": pair[0], "measure_b": pair[1], "alternative": alternative, "aggregate": aggregate}

    parts = tuple((points[lv][2], {"level": lv, **setting}) for lv in levels)
    return store.Inputs(dataset, points[levels[0]][2], setting, subset, (points, levels, coefficients, pair), parts=parts)


def _rows(inputs):
    """Each level's correlation under each coefficient, with its p-value."""
    import pandas as pd

    from metaeval.analyses import measure_correlation as mc
    from metaeval.runs.engine import bookkeeping, store

    (points, levels, coefficients, pair), setting = inputs.data, dict(inputs.keys)
    dataset, subset, alternative, aggregate = inputs.dataset, inputs.subset, setting["alternative"], setting["aggregate"]
    records = []
    for lv in levels:
        a, b, fingerprint, conventions, n_systems, n_inputs = points[lv]
        for c in coefficients:
            r = mc.correlation_test(a, b, c, alternative)
            records.append({"dataset": dataset, **setting, "subset": subset, "level": lv, "coefficient": c,
                            "value": bookkeeping.as_float(r.value), "p_value": bookkeeping.as_float(r.p_value),
                            "n": r.n, "n_systems": n_systems, "n_inputs": n_inputs, "fingerprint": fingerprint,
                            "conventions": bookkeeping.conventions_json(
                                {**conventions, "pvalue": mc.PVALUES[c], "alternative": alternative,
                                 "undefined": "fewer than 3 points or a constant measure: value and p NULL"})})
    frame = pd.DataFrame(records)
    frame["n_inputs"] = frame["n_inputs"].astype("Int64")
    return store.Rows(frame, {"dataset": dataset, "measures": list(pair), "levels": list(levels),
                              "coefficients": list(coefficients), "alternative": alternative, "where": subset,
                              **({"aggregate": aggregate} if aggregate != AGGREGATE.default else {})})
