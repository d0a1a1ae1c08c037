"""``metaeval held-out-ties``: acc-eq (or tau-23) with its tie threshold chosen on held-out data
(Perrella et al., ACL 2024), table ``held_out_ties`` (the statistics:
:mod:`metaeval.analyses.held_out_ties`).

The calibration part is a seeded share of the dataset's inputs (``fraction``, ``seed``) or a
whole second dataset (``calibration_dataset``: the same metric and human names); epsilon is
chosen there, per metric and level, and the coefficient reported on the rest (the whole dataset
with a calibration dataset) beside the value tuned on the evaluation part itself. The split, its
seed and the calibration dataset are columns and parameters of the run.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import DATASET, FORCE, HUMAN, METRICS, SEED, Option

COMMAND, TABLE = "held-out-ties", "held_out_ties"
SPLIT = "split"


@register
class HeldOutTies(Family):
    name = COMMAND
    topic = "metrics"
    headline = "acc-eq with its tie threshold chosen on held-out data."
    summary = ("acc-eq with its tie threshold chosen on held-out data (a seeded split of the inputs, or a second "
               "dataset), beside the value tuned on the test itself (table held_out_ties).")
    tables = (TABLE,)
    options = (DATASET, HUMAN, METRICS,
               Option("levels", kind="choice", choices=("summary", "global", "system"), multiple=True, flag="--level",
                      help="Level(s). Default: summary (items grouped, as WMT's acc-eq)."),
               Option("coefficient", default="acc-23", kind="choice", choices=("acc-23", "kendall-23"),
                      help="The coefficient whose threshold is calibrated."),
               Option("fraction", default=0.5, kind="float", minimum=0.0, maximum=1.0, open=True,
                      help="Share of the inputs that calibrate (the rest evaluate); ignored with "
                           "--calibration-dataset."),
               SEED.but(help="Seed of the split of the inputs."),
               Option("calibration_dataset", metavar="D",
                      help="Choose epsilon on this whole dataset instead (same metric and human names) and evaluate "
                           "on every input of --dataset."),
               FORCE)

    def inputs(self, wh, **params):
        return _inputs(wh, **params)

    def rows(self, wh, inputs, **params):
        return _rows(inputs)

    def enough(self, stored, inputs, **params) -> bool:
        """The stored rows cover every metric and level asked."""
        scope, levels = inputs.data[0], inputs.data[-1]
        return {(r.metric, r.level) for r in stored.itertuples()} >= {(m, lv) for m in scope.metrics for lv in levels}

    def outcome(self, stored, inputs, **params):
        """The rows of the metrics and levels asked."""
        scope, levels = inputs.data[0], inputs.data[-1]
        return stored[stored["metric"].isin(scope.metrics) & stored["level"].isin(levels)].reset_index(drop=True)

    def present(self, outcome, fmt: str) -> str:
        if fmt != "text" or outcome.empty:
            return super().present(outcome, fmt)
        from metaeval.present import plain, tables

        outcome = outcome.sort_values(["metric", "level"]).reset_index(drop=True)
        r = outcome.iloc[0]
        where = (f"a split of the inputs (fraction {r['fraction']:g}, seed {int(r['seed'])}: {int(r['n_calibration'])} "
                 f"calibrate, {int(r['n_evaluation'])} evaluate)" if r["calibration"] == SPLIT
                 else f"dataset {r['calibration']} ({int(r['n_calibration'])} inputs; {int(r['n_evaluation'])} evaluate)")
        caption = (f"{r['coefficient']} of each metric with {r['human']} on {r['dataset']}, epsilon chosen on {where}: "
                   "the held-out value, the value with epsilon tuned on the evaluation part itself (optimistic) "
                   "and the gain of that tuning; untied: epsilon 0.")

        def num(x, digits=4):
            return plain.number_text(x, digits)

        shown = outcome.assign(**{"held out": outcome["value"].map(num), "eps": outcome["epsilon"].map(num),
                                  "tuned on test": outcome["value_on_test"].map(num),
                                  "eps (test)": outcome["epsilon_on_test"].map(num),
                                  "gain": [num(None if None in (t, v) else t - v)
                                           for t, v in zip(outcome["value_on_test"], outcome["value"])],
                                  "untied": outcome["value_untied"].map(num)})
        table = tables.render(shown[["metric", "level", "held out", "eps", "tuned on test", "eps (test)", "gain",
                                     "untied"]], "text")
        return plain.wrap(caption) + "\n" + table.rstrip("\n") + "\n"


def _matrices(wh, dataset: str, human: str, metrics, levels):
    """The scope's metrics, levels, their oriented matrices and the human's, and a fingerprint."""
    from metaeval.runs.engine import selection

    scope = selection.resolve_scope(wh, dataset, human, metrics, levels, ["acc-23"])
    data = selection.load_data(wh, scope)
    scope, _ = selection.without_sparse_metrics(data, scope)
    return scope, data, selection.data_fingerprint(data, scope.measures)


def _inputs(wh, dataset: str, human: str, metrics=(), levels=(), coefficient: str = "acc-23",
            fraction: float = 0.5, seed: int = SEED.default, calibration_dataset: str | None = None):
    """What the ``held_out_ties`` rows of this setting are of: the matrices (of the calibration
    dataset too), their fingerprint and the setting's keys."""
    import hashlib

    from metaeval.runs.engine import store

    levels = tuple(dict.fromkeys(levels)) or ("summary",)
    scope, data, fingerprint = _matrices(wh, dataset, human, metrics, levels)
    if calibration_dataset is not None:
        if calibration_dataset == dataset:
            raise WarehouseError(Message(Argument("calibration_dataset", calibration_dataset),
                                         " is the evaluated dataset: give another, or a split (", Argument("fraction"), ")"))
        cal_scope, cal_data, cal_fp = _matrices(wh, calibration_dataset, human, scope.metrics, levels)
        missing = sorted(set(scope.metrics) - set(cal_scope.metrics))
        if missing:
            raise WarehouseError(Message(Argument("calibration_dataset", calibration_dataset),
                                         f" lacks the metrics {', '.join(missing)}"))
        fingerprint = hashlib.sha256(f"{fingerprint}\x1e{cal_fp}".encode()).hexdigest()
        fraction = seed = None
    elif len(data.inputs) < 2:
        raise WarehouseError(Message(Argument("dataset", dataset), " has fewer than 2 inputs: nothing to split"))
    calibration = SPLIT if calibration_dataset is None else calibration_dataset
    setting = {"human": human, "coefficient": coefficient, "calibration": calibration, "fraction": fraction,
               "seed": seed}
    calibrating = (cal_scope, cal_data) if calibration_dataset is not None else None
    return store.Inputs(dataset, fingerprint, setting, None, (scope, data, calibrating, levels))


def _rows(inputs):
    """Each metric's held-out tie threshold and value at each level."""
    import pandas as pd

    from metaeval.analyses import held_out_ties as analysis
    from metaeval.runs.engine import bookkeeping, store

    scope, data, calibrating, levels = inputs.data      # calibrating: another dataset's (scope, data), or None
    dataset, fingerprint, setting = inputs.dataset, inputs.fingerprint, dict(inputs.keys)
    human, coefficient, fraction, seed = setting["human"], setting["coefficient"], setting["fraction"], setting["seed"]
    calibration_dataset = None if calibrating is None else setting["calibration"]
    cal_data = None if calibrating is None else calibrating[1]
    variant = "acc23" if coefficient == "acc-23" else "23"
    Zall = data.values[human]
    if calibration_dataset is None:
        cal, ev = analysis.split_inputs(len(data.inputs), fraction, seed)
        parts = {m: (data.values[m][:, cal], Zall[:, cal], data.values[m][:, ev], Zall[:, ev]) for m in scope.metrics}
        n_cal, n_ev = len(cal), len(ev)
    else:
        Zc = cal_data.values[human]
        parts = {m: (cal_data.values[m], Zc, data.values[m], Zall) for m in scope.metrics}
        n_cal, n_ev = len(cal_data.inputs), len(data.inputs)
    conventions = bookkeeping.conventions_json({**analysis.conventions(variant), "orientation": bookkeeping.ORIENTATION})
    out = []
    for m in scope.metrics:
        for level in levels:
            r = analysis.held_out(*parts[m], level, variant)
            out.append({"dataset": dataset, **setting, "metric": m, "level": level, "n_calibration": n_cal,
                        "n_evaluation": n_ev, "epsilon": r.epsilon, "value": r.value,
                        "epsilon_on_test": r.epsilon_on_test, "value_on_test": r.value_on_test,
                        "value_untied": r.value_untied, "fingerprint": fingerprint, "conventions": conventions})
    frame = pd.DataFrame(out)
    for column in ("epsilon", "value", "epsilon_on_test", "value_on_test", "value_untied"):
        frame[column] = frame[column].astype(object).map(bookkeeping.none_if_nan)
    parameters = {**setting, "dataset": dataset, "metrics": list(scope.metrics), "levels": list(levels)}
    return store.Rows(frame, parameters, seed)
