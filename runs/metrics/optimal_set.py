"""``metaeval optimal-set``: the share of the optimal set of ROUGE variants with each value of each
configuration option (Graham 2015, Table 2; the arithmetic: :mod:`metaeval.analyses.optimal_set`).

Read from the latest ``winners`` rows of one level, coefficient and test method (``metaeval
winners``: a metric beaten by no other is optimal); one block of shares per stored winners
setting (alternative, correction, its group, alpha, cluster rule). The options come from the
measure names (``rouge-2.precision[stem,stop]``); the system-level aggregation from the winners
rows' ``aggregate`` (``winners --aggregate median``: a system's median over its inputs). A mean's
and a median's rankings are two blocks: compare tests the variants within one aggregate, so each
block's ``aggregate`` share is 1 for its own value. ``pooled``: Graham's pooled Table 2 -- the
mean and the median variant of every metric compete in one ranking, tested against each other by
paired bootstraps on shared draws (:func:`metaeval.analyses.optimal_set.pooled_ranking`), its
block's ``aggregate`` column ``pooled`` and its ``aggregate`` option the share of mean and median
among the optimal variants. Rows go to ``optimal_set_shares``; the same command on the same winners
rows (or, pooled, the same cells and parameters) computes nothing.
"""

from __future__ import annotations

import json

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine import parameters
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import ALPHA, DATASET, FORCE, HUMAN, K, METRICS, SEED, Option

COMMAND, TABLE = "optimal-set", "optimal_set_shares"
#: the winners columns that name one ranking (besides dataset and human)
SETTING = ("level", "coefficient", "method", "alternative", "correction", "correction_group", "alpha",
           "cluster_rule", "aggregate")
#: how each aggregate makes a system's score, recorded in the conventions
AGGREGATE_TEXT = {"mean": "mean: each system's score is its mean over its inputs",
                  "median": "median: each metric's system score is its median over its inputs, the human's its mean "
                            "(Graham 2015's median variants)",
                  "median/median": "median/median: each system's score is its median over its inputs, the human's too",
                  "mean/median": "mean/median: each metric's system score is its mean over its inputs, the human's "
                                 "its median"}


@register
class OptimalSet(Family):
    name = COMMAND
    topic = "metrics"
    headline = "The optimal ROUGE variants' share per configuration option (Graham 2015)."
    summary = "The optimal ROUGE variants' share per configuration option (Graham 2015, Table 2), from winners."
    tables = (TABLE,)
    options = (DATASET, HUMAN,
               Option("level", default="system", kind="choice", choices="metaeval.analyses.stats.vocabulary:LEVELS",
                      help="The level of the winners rows read."),
               Option("coefficient", default="pearson", help="The coefficient of the winners rows read."),
               Option("method", default="perm-both", kind="choice",
                      choices="metaeval.analyses.stats.vocabulary:TEST_METHODS",
                      help="The test method of the winners rows read (Graham: williams); --pooled: the paired "
                           "bootstrap of the pooled tests (boot-systems, boot-inputs or boot-both)."),
               Option("pooled", default=False, kind="flag",
                      help="Graham's pooled Table 2: each metric's mean and median variants compete in one ranking, "
                           "tested against each other (paired bootstraps, the same draws for every variant; Holm "
                           "within each variant's tests, two-sided), the optimal set's share of mean and median "
                           "among the options (aggregate 'pooled'). Computed here, not read from winners."),
               METRICS.but(help="--pooled: the metrics whose variants compete (globs). Default: all."),
               K.but(help="--pooled: bootstrap resamples."), SEED.but(help="--pooled: seed of the draws."),
               ALPHA.but(help="--pooled: the tests' level."), FORCE)

    def inputs(self, wh, **params):
        return _inputs(wh, **params)

    def rows(self, wh, inputs, *, missing=(), **params):
        """The pooled ranking's shares; else the shares of the winners rankings without rows."""
        import hashlib

        import pandas as pd

        from metaeval.runs.engine import store

        kind, *data = inputs.data
        if kind == "pooled":
            return _pooled_rows(inputs, *data)
        blocks, recorded = data
        todo = [blocks[i] for i in missing]      # one run, one transaction, for every ranking that needs its rows
        fingerprint = hashlib.sha256("\x1e".join(fp for _, _, fp in todo).encode()).hexdigest()
        return store.Rows(pd.concat([f for _, f, _ in todo], ignore_index=True), recorded, None, fingerprint)

    def outcome(self, stored, inputs, **params):
        return stored.drop(columns=["result_id", "run_id"])

    def present(self, outcome, fmt: str) -> str:
        """Text: per winners ranking, its setting and each option's values with their shares (%);
        other formats: the rows."""
        if fmt != "text" or outcome.empty:
            return super().present(outcome, fmt)
        from metaeval.present import plain, tables

        out = []
        for key, rows in outcome.groupby(list(SETTING), dropna=False, sort=False):
            n_set = json.loads(rows["conventions"].iloc[0]).get("n_optimal_set")
            shown = rows[["option", "value", "n_optimal", "share", "n_variants"]].assign(
                share=[plain.number_text(s if s is None else 100 * s, 1) for s in rows["share"]])
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

    optimal = {r.metric: (None if pd.isna(r.is_winner) else bool(r.is_winner)) for r in rows.itertuples()}
    aggregate = setting["aggregate"]
    fingerprint = _fingerprint(rows)
    return _frame(dataset, human, setting, optimal, {m: aggregate for m in optimal}, fingerprint,
                  {"optimal": "is_winner of the winners row: significantly beaten by no other metric",
                   "aggregate": AGGREGATE_TEXT[aggregate]}), fingerprint


def _frame(dataset: str, human: str, setting: dict, optimal: dict, aggregates: dict | None, fingerprint: str,
           described: dict):
    """The share rows of one ranking's ``optimal`` variants (a DataFrame; conventions ``described``)."""
    import pandas as pd

    from metaeval.analyses import optimal_set as osa
    from metaeval.runs.engine import bookkeeping

    def rouge(m) -> bool:
        return (osa.settings(*m) if isinstance(m, tuple) else osa.settings(m)) is not None

    try:
        shares = osa.shares(optimal, aggregates)
    except ValueError as exc:
        raise WarehouseError(f"{dataset}/{human}: {exc}") from None
    undetermined = any(v is None for m, v in optimal.items() if rouge(m))
    conventions = {**described,
                   "share": "optimal ROUGE variants with the value / optimal ROUGE variants (per option, sums to 1)",
                   "counted": "ROUGE variants only (canonical names rouge-N.statistic[flags], after any prefix of score); other metrics left out",
                   "n_optimal_set": None if undetermined else sum(bool(v) for m, v in optimal.items() if rouge(m))}
    if undetermined:
        conventions["undetermined"] = "a winner of the ranking is undefined (status): no optimal set, no shares"
    frame = pd.DataFrame(osa.shares_table(shares)).assign(
        dataset=dataset, human=human, **setting, fingerprint=fingerprint,
        conventions=bookkeeping.conventions_json(conventions))
    frame["share"] = frame["share"].map(bookkeeping.none_if_nan).astype(object)
    frame["n_optimal"] = frame["n_optimal"].astype("Int64")
    return frame


def _inputs(wh, dataset: str, human: str, *, level: str = "system", coefficient: str = "pearson",
            method: str = "perm-both", pooled: bool = False, metrics=(), k: int = parameters.DEFAULT_K,
            seed: int = parameters.DEFAULT_SEED, alpha: float = parameters.DEFAULT_ALPHA):
    """What the ``optimal_set_shares`` rows of every stored winners ranking of this level,
    coefficient and method are of (a part per ranking, its shares computed here: every block
    checked before a write); ``pooled``: the pooled ranking of the mean and median variants of
    ``metrics`` (:func:`pooled_set`)."""
    from metaeval.runs.engine import analyse as engine, store

    wh.require_dataset(dataset)
    if pooled:
        return pooled_set(wh, dataset, human, level=level, coefficient=coefficient, method=method, metrics=metrics,
                          k=k, seed=seed, alpha=alpha)
    if metrics:
        raise WarehouseError(Message(Argument("metrics", list(metrics)), " choose the variants of a pooled ranking: "
                                     "add ", Argument("pooled", True), " (otherwise the winners rows say which)"))
    winners = engine.latest_rows(wh, "winners", dataset, human, level=level, coefficient=coefficient, method=method)
    if winners.empty:
        raise WarehouseError(Message(f"no winners rows of {dataset}/{human} at the {level} level with {coefficient} "
                                     f"and {method}: run winners first with the same ", Argument("level", level),
                                     ", ", Argument("coefficient", coefficient), " and ", Argument("method", method)))
    blocks = []
    for key, rows in winners.groupby(list(SETTING[3:]), dropna=False, sort=True):
        setting = {"level": level, "coefficient": coefficient, "method": method, **dict(zip(SETTING[3:], key))}
        blocks.append((setting, *_block(dataset, human, setting, rows)))   # every block checked before a write
    recorded = {"dataset": dataset, "human": human, "level": level, "coefficient": coefficient, "method": method}
    return store.Inputs(dataset, "", {"human": human}, None, ("blocks", blocks, recorded),
                        parts=tuple((fp, {"human": human, **setting}) for setting, _, fp in blocks))


def pooled_set(wh, dataset: str, human: str, *, level: str, coefficient: str, method: str, metrics=(),
               k: int = parameters.DEFAULT_K, seed: int = parameters.DEFAULT_SEED,
               alpha: float = parameters.DEFAULT_ALPHA):
    """What the shares of Graham's pooled ranking are of (the module docstring): its block
    (aggregate ``pooled``) of these cells, metrics and parameters."""
    import hashlib

    from metaeval.runs.engine import selection, store

    _check_pooled(level, coefficient, method, k, alpha)
    scope = selection.resolve_scope(wh, dataset, human, metrics, ["system"], [coefficient])
    data = selection.load_data(wh, scope)
    scope, skipped = selection.without_sparse_metrics(data, scope)
    if not scope.metrics:
        raise WarehouseError("nothing to rank: " + "; ".join(skipped.values()))
    setting = {"level": "system", "coefficient": coefficient, "method": method,
               "alternative": parameters.DEFAULT_ALTERNATIVE, "correction": parameters.DEFAULT_CORRECTION,
               "correction_group": "metric", "alpha": alpha, "cluster_rule": parameters.DEFAULT_CLUSTER_RULE,
               "aggregate": "pooled"}
    cells = selection.data_fingerprint(data, [*scope.metrics, human])
    if method == "williams":   # nothing drawn: no k, no seed
        k, seed = None, None
    fingerprint = hashlib.sha256(f"{cells}\x1epooled\x1f{k}\x1f{seed}\x1f{method}\x1f{alpha}".encode()).hexdigest()
    return store.Inputs(dataset, fingerprint, {"human": human, **setting}, None,
                        ("pooled", scope, data, skipped, setting, coefficient, method, k, seed, alpha))


def _pooled_rows(inputs, scope, data, skipped, setting, coefficient, method, k, seed, alpha):
    """The pooled ranking's shares."""
    from metaeval.analyses import optimal_set as osa
    from metaeval.runs.metrics import correlations
    from metaeval.runs.engine import store

    dataset, human, fingerprint = inputs.dataset, inputs.keys["human"], inputs.fingerprint
    arrays, paired, _ = correlations.protocol(data.task_arrays((*scope.metrics, human)), "system",
                                              parameters.DEFAULT_SYSTEM_INPUTS)
    how = method if method == "williams" else method.removeprefix("boot-")
    r = osa.pooled_ranking(dict(zip(scope.metrics, arrays[:-1])), arrays[-1], coefficient, how,
                           k, seed, alternative=setting["alternative"], correction=setting["correction"], alpha=alpha,
                           rule=setting["cluster_rule"], paired_inputs=paired)
    described = {"optimal": "beaten by no other variant in the pooled tests (metaeval.analyses.optimal_set."
                            "pooled_ranking)", "aggregate": "pooled: each metric's mean and median variants compete",
                 **r.conventions, "k": k, "seed": seed, "metrics": list(scope.metrics),
                 "optimal_variants": [f"{m} ({a})" for (m, a), v in r.optimal.items() if v],
                 "beaten_by": {name: b for name, b in r.beaten_by.items() if b},
                 "unresolvable": r.note, "skipped": skipped or None}
    frame = _frame(dataset, human, setting, r.optimal, None, fingerprint, described)
    return store.Rows(frame, {"dataset": dataset, "human": human, "pooled": True, "metrics": list(scope.metrics),
                              "coefficient": coefficient, "method": method, "k": k, "alpha": alpha}, seed)


def _check_pooled(level: str, coefficient: str, method: str, k: int, alpha: float) -> None:
    """The pooled ranking's refusals, each naming the fix (before anything is read or written)."""
    from metaeval.analyses.stats import validation

    if level != "system":
        raise WarehouseError(Message(Argument("pooled", True), " ranks the system-level variants (mean, median): give ",
                                     Argument("level", "system")))
    if not method.startswith("boot-") and method != "williams":
        raise WarehouseError(Message(Argument("pooled", True), " tests by Williams' test (Graham's Table 1) or paired "
                                     "bootstrap (a permutation swaps nothing between two aggregates of one metric): "
                                     "give ", Argument("method", "williams"),
                                     ", boot-inputs, boot-systems or boot-both"))
    try:
        validation.aggregate_iv(coefficient, "median")
    except ValueError as exc:
        raise WarehouseError(Message(Argument("coefficient", coefficient), f": {exc}")) from None
    if method == "williams":
        parameters.check_parametric([coefficient], method, "williams", "Williams' test is not defined for")
    else:
        parameters.check_k(k, alpha, "test")
