"""``metaeval error-overlap``: do two metrics err on the same system pairs? (Louis & Nenkova 2013,
Table 4; the statistics: :mod:`metaeval.analyses.error_overlap`).

Each system's score under the human judgment and the two metrics (oriented, on the systems that
have all three; a metric's system score over the inputs ``system_inputs`` says), the 2 x 2 table
of the C(N, 2) system pairs by whether each metric orders them as the human does, and McNemar's
and Fisher's exact tests. One row of ``error_overlap`` per setting, under one run; the same
command on the same cells computes nothing.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import AGGREGATE, DATASET, FORCE, HUMAN, SYSTEM_INPUTS, SYSTEM_TYPE, WHERE, Option

COMMAND, TABLE = "error-overlap", "error_overlap"

PAIR = Option("metrics", multiple=True, required=True, flag="--metric", metavar="MEASURE",
              help="The two metrics compared (measure names). Give exactly two.")


@register
class ErrorOverlap(Family):
    name = COMMAND
    topic = "metrics"
    headline = "Do two metrics err on the same system pairs? (McNemar and Fisher tests)"
    summary = "Do two metrics err on the same system pairs? (Louis & Nenkova 2013, Table 4, with McNemar and Fisher)"
    tables = (TABLE,)
    tests_table = TABLE          # its McNemar and Fisher tests (descriptive: no verdict drawn)
    options = (DATASET, HUMAN, PAIR, SYSTEM_INPUTS, AGGREGATE, WHERE, SYSTEM_TYPE, FORCE)

    def inputs(self, wh, dataset: str, human: str, metrics, *, system_inputs: str = SYSTEM_INPUTS.default,
               aggregate: str = AGGREGATE.default, where=()):
        """Each system's score under the human and the two metrics, on the systems having all three."""
        from metaeval.runs.engine import persist, selection, store

        metrics = tuple(dict.fromkeys(metrics))
        if len(metrics) != 2 or human in metrics:
            raise WarehouseError(Message("give exactly two metrics, other than the human judgment: ",
                                         Argument("metrics", list(metrics))))
        systems, scores, fingerprint, conventions = persist.system_scores(
            wh, dataset, metrics, human, system_inputs=system_inputs, where=where, aggregate=aggregate)
        if len(systems) < 2:
            raise WarehouseError(f"{len(systems)} system(s) of {dataset!r} have a score under {human}, {metrics[0]} "
                                 f"and {metrics[1]}: the pairs of systems need 2 or more")
        subset = selection.subset_label(selection.parse_where(where))
        keys = {"human": human, "metric_a": metrics[0], "metric_b": metrics[1], "system_inputs": system_inputs,
                "aggregate": aggregate}
        return store.Inputs(dataset, fingerprint, keys, subset, (systems, scores, conventions))

    def rows(self, wh, inputs, *, aggregate: str = AGGREGATE.default, where=(), **params):
        """The 2 x 2 table of the system pairs and its two tests: one row."""
        import pandas as pd

        from metaeval.analyses import error_overlap as eo
        from metaeval.runs.engine import bookkeeping, store

        (systems, scores, conventions), keys = inputs.data, dict(inputs.keys)
        setting = {k: keys[k] for k in ("human", "metric_a", "metric_b", "system_inputs")}
        out = eo.error_overlap(scores[keys["human"]], scores[keys["metric_a"]], scores[keys["metric_b"]])
        conventions = {**conventions,
                       "correct": "sign(metric_i - metric_j) == sign(human_i - human_j) over every unordered pair",
                       "mcnemar": "exact, two-sided, on the discordant pairs",
                       "fisher": "exact, one-sided (greater): errors on the same pairs more often than chance",
                       "independence": "pairs share systems: the tests are descriptive"}
        frame = pd.DataFrame([{
            "dataset": inputs.dataset, **setting, "subset": inputs.subset, "n_systems": len(systems),
            "n_pairs": out.n_pairs, "both_correct": int(out.table[0, 0]), "a_only_correct": int(out.table[0, 1]),
            "b_only_correct": int(out.table[1, 0]), "both_wrong": int(out.table[1, 1]),
            "accuracy_a": out.accuracy_a, "accuracy_b": out.accuracy_b,
            "mcnemar_p": bookkeeping.none_if_nan(out.mcnemar_p),
            "fisher_odds_ratio": bookkeeping.none_if_nan(out.fisher_odds_ratio),
            "fisher_p": bookkeeping.none_if_nan(out.fisher_p), "fingerprint": inputs.fingerprint,
            "conventions": bookkeeping.conventions_json(conventions), "aggregate": aggregate}])
        return store.Rows(frame, {"dataset": inputs.dataset, **setting, "where": inputs.subset,
                                  **({"aggregate": aggregate} if aggregate != AGGREGATE.default else {})})

    def present(self, outcome, fmt: str) -> str:
        """Text: each row's 2 x 2 table (Table 4's layout) and its two tests; other formats: the rows."""
        if fmt != "text":
            return super().present(outcome, fmt)
        from metaeval.analyses import conclusions

        out = []
        for r in outcome.to_dict("records"):
            a, b, n = r["metric_a"], r["metric_b"], r["n_pairs"]

            def cell(x):
                return f"{x} ({100 * x / n:.1f}%)"

            def p(x):   # descriptive tests, no verdict: no alpha to show a side of
                return conclusions.p_text(x, latex=False, alpha=None, undefined="undefined")

            width = max(len(a), len(b)) + 10
            out += [f"{r['human']} on {r['dataset']}{' [' + r['subset'] + ']' if r['subset'] else ''}: "
                    f"{r['n_systems']} systems, {n} pairs",
                    f"{'':{width}}{b + ' correct':>24}{b + ' wrong':>24}",
                    f"{a + ' correct':{width}}{cell(r['both_correct']):>24}{cell(r['a_only_correct']):>24}",
                    f"{a + ' wrong':{width}}{cell(r['b_only_correct']):>24}{cell(r['both_wrong']):>24}",
                    f"McNemar (exact: does one err more often?) p = {p(r['mcnemar_p'])}",
                    f"Fisher (one-sided: do they err on the same pairs?) p = {p(r['fisher_p'])}",
                    "(the pairs share systems: the tests are descriptive)", ""]
        return "\n".join(out)
