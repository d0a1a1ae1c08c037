"""``metaeval optimal-set``: the share of the optimal set of ROUGE variants with each value of each
configuration option (Graham 2015, Table 2; the arithmetic: :mod:`metaeval.analyses.optimal_set`).

Read from the latest ``winners`` rows of one level, coefficient and test method (``metaeval
winners``: a metric beaten by no other is optimal); one block of shares per stored winners
setting (alternative, correction, its group, alpha, cluster rule). The options come from the
measure names (``rouge-2.precision[stem,stop]``); the system-level aggregation from the winners
rows' ``aggregate`` (``winners --aggregate median``: a system's median over its inputs). A mean's
and a median's rankings are two blocks: compare tests the variants within one aggregate, so each
block's ``aggregate`` share is 1 for its own value -- Graham's pooled share of mean against median
would need tests between a mean and a median variant, which no family runs. Rows go to
``optimal_set_shares``; the same command on the same winners rows computes nothing.
"""

from __future__ import annotations

import json

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.families import DATASET, FORCE, HUMAN, Family, Option, register

COMMAND, TABLE = "optimal-set", "optimal_set_shares"
#: the winners columns that name one ranking (besides dataset and human)
SETTING = ("level", "coefficient", "method", "alternative", "correction", "correction_group", "alpha",
           "cluster_rule", "aggregate")
#: how each aggregate makes a system's score, recorded in the conventions
AGGREGATE_TEXT = {"mean": "mean: each system's score is its mean over its inputs",
                  "median": "median: each system's score is its median over its inputs (Graham 2015's median variants)"}


@register
class OptimalSet(Family):
    name = COMMAND
    summary = "The optimal ROUGE variants' share per configuration option (Graham 2015, Table 2), from winners."
    tables = (TABLE,)
    options = (DATASET, HUMAN,
               Option("level", default="system", kind="choice", choices="metaeval.analyses.stats.vocabulary:LEVELS",
                      help="The level of the winners rows read."),
               Option("coefficient", default="pearson", help="The coefficient of the winners rows read."),
               Option("method", default="perm-both", kind="choice",
                      choices="metaeval.analyses.stats.vocabulary:TEST_METHODS",
                      help="The test method of the winners rows read (Graham: williams)."),
               FORCE)

    def compute(self, wh, **params):
        return optimal_set(wh, **params)

    def present(self, outcome, fmt: str) -> str:
        """Text: per winners ranking, its setting and each option's values with their shares (%);
        other formats: the rows."""
        if fmt != "text" or outcome.empty:
            return super().present(outcome, fmt)
        from metaeval.analyses import plain, tables

        out = []
        for key, rows in outcome.groupby(list(SETTING), dropna=False, sort=False):
            n_set = json.loads(rows["conventions"].iloc[0]).get("n_optimal_set")
            shown = rows[["option", "value", "n_optimal", "share", "n_variants"]].assign(
                share=[("undefined" if s is None or s != s else f"{100 * s:.1f}") for s in rows["share"]])
            out += [plain.wrap(f"{rows['human'].iloc[0]} on {rows['dataset'].iloc[0]}: "
                               + ", ".join(f"{c} {v}" for c, v in zip(SETTING, key))
                               + f"; optimal ROUGE variants: {'undetermined' if n_set is None else n_set}"),
                    tables.text(shown.rename(columns={"share": "share %"}))]
        return "\n".join(out)


def _fingerprint(rows) -> str:
    import hashlib

    text = "\x1e".join(f"{r.metric}\x1f{r.is_winner}\x1f{r.fingerprint}"
                       for r in rows.sort_values("metric").itertuples())
    return hashlib.sha256(text.encode()).hexdigest()


def _block(dataset: str, human: str, setting: dict, rows):
    """The share rows of one winners ranking (a DataFrame), and its fingerprint."""
    import pandas as pd

    from metaeval.analyses import optimal_set as osa
    from metaeval.runs import bookkeeping

    optimal = {r.metric: (None if pd.isna(r.is_winner) else bool(r.is_winner)) for r in rows.itertuples()}
    aggregate = setting["aggregate"]
    try:
        shares = osa.shares(optimal, {m: aggregate for m in optimal})
    except ValueError as exc:
        raise WarehouseError(f"{dataset}/{human}: {exc}") from None
    undetermined = any(v is None for m, v in optimal.items() if osa.settings(m) is not None)
    fingerprint = _fingerprint(rows)
    conventions = {"optimal": "is_winner of the winners row: significantly beaten by no other metric",
                   "share": "optimal ROUGE variants with the value / optimal ROUGE variants (per option, sums to 1)",
                   "counted": "ROUGE variants only (canonical names rouge-N.statistic[flags]); other metrics left out",
                   "aggregate": AGGREGATE_TEXT[aggregate],
                   "n_optimal_set": None if undetermined else sum(bool(v) for m, v in optimal.items()
                                                                   if osa.settings(m) is not None)}
    if undetermined:
        conventions["undetermined"] = "a winner of the ranking is undefined (status): no optimal set, no shares"
    frame = pd.DataFrame(osa.shares_table(shares)).assign(
        dataset=dataset, human=human, **setting, fingerprint=fingerprint,
        conventions=bookkeeping.conventions_json(conventions))
    frame["share"] = frame["share"].map(bookkeeping.none_if_nan).astype(object)
    frame["n_optimal"] = frame["n_optimal"].astype("Int64")
    return frame, fingerprint


def optimal_set(wh, dataset: str, human: str, *, level: str = "system", coefficient: str = "pearson",
                method: str = "perm-both", force: bool = False, progress=None):
    """The latest ``optimal_set_shares`` rows of every stored winners ranking of this level,
    coefficient and method, computed unless up to date."""
    import hashlib

    import pandas as pd

    from metaeval.runs import engine, persist

    wh.require_dataset(dataset)
    persist.ensure_table(wh, TABLE, "86_optimal_set")
    winners = engine.latest_rows(wh, "winners", dataset, human, level=level, coefficient=coefficient, method=method)
    if winners.empty:
        raise WarehouseError(Message(f"no winners rows of {dataset}/{human} at the {level} level with {coefficient} "
                                     f"and {method}: run winners first with the same ", Argument("level", level),
                                     ", ", Argument("coefficient", coefficient), " and ", Argument("method", method)))
    blocks, out = [], []
    for key, rows in winners.groupby(list(SETTING[3:]), dropna=False, sort=True):
        setting = {"level": level, "coefficient": coefficient, "method": method, **dict(zip(SETTING[3:], key))}
        blocks.append((setting, *_block(dataset, human, setting, rows)))   # every block checked before a write
    todo = [(setting, frame, fp) for setting, frame, fp in blocks
            if force or persist.reusable(wh, TABLE, dataset, fp, subset=None, human=human, **setting) is None]
    if todo:   # one run, one transaction, for every ranking that needs its rows
        fingerprint = hashlib.sha256("\x1e".join(fp for _, _, fp in todo).encode()).hexdigest()
        persist.write(wh, COMMAND, TABLE, pd.concat([f for _, f, _ in todo], ignore_index=True),
                      {"dataset": dataset, "human": human, "level": level, "coefficient": coefficient, "method": method},
                      fingerprint)
    for setting, _, fp in blocks:
        out.append(persist.reusable(wh, TABLE, dataset, fp, subset=None, human=human, **setting))
    return pd.concat(out, ignore_index=True).drop(columns=["result_id", "run_id"])
