"""``metaeval lc-winrate``: every system's win rate and AlpacaEval 2.0's length-controlled win
rate against one baseline, from the stored pairwise preferences (issue 35 item 2; the statistic:
:mod:`metaeval.analyses.length_control`).

The items are the verdicts between a system and the baseline (every human judge's by default, or
one automatic judge's), each in each presentation order; the outputs' lengths are the cell
attribute ``output_length`` (``ingest preferences`` stores it from an AlpacaEval annotations
file's texts or lengths; ``ingest attributes`` from any table). An item without both lengths is
left out, and said. Intervals: percentile bootstrap over the items, ``k`` rounds, each system's
rounds from ``SeedSequence(seed, spawn_key=(i,))`` for its place i among the systems. One run
writes the rows of ``lc_winrates``; the same command on the same items computes nothing.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.families import ALPHA, DATASET, FORCE, K, SEED, Family, Option, register

COMMAND, TABLE = "lc-winrate", "lc_winrates"


@register
class LengthControlledWinrate(Family):
    name = COMMAND
    summary = ("Win rates against a baseline, raw and length-controlled (AlpacaEval 2.0's GLM), from pairwise "
               "preferences with the outputs' lengths.")
    tables = (TABLE,)
    report = ("metaeval.runs.report.votes:lc_winrate",)
    report_position = 44
    options = (DATASET, Option("baseline", required=True, metavar="SYSTEM",
                               help="The system every other is compared with (AlpacaEval's reference model)."),
               Option("judge", metavar="JUDGE", help="This automatic judge's preferences. Default: the human ones."),
               K.but(help="Bootstrap rounds over the items."), SEED, ALPHA, FORCE)

    def compute(self, wh, **params):
        return lc_winrates(wh, **params)

    def present(self, outcome, fmt: str) -> str:
        if fmt != "text" or outcome.empty:
            return super().present(outcome, fmt)
        from metaeval.analyses import plain, tables

        r = outcome.iloc[0]

        def one(x):
            return "" if x is None or x != x else f"{x:.1f}"

        shown = outcome.assign(**{"win rate": outcome["winrate"].map(one),
                                  "LC win rate": outcome["lc_winrate"].map(one),
                                  "interval": [f"[{one(lo)}, {one(hi)}]" if lo == lo and lo is not None else ""
                                               for lo, hi in zip(outcome["lower"], outcome["upper"])],
                                  "length coef.": outcome["length_coefficient"].map(
                                      lambda x: "" if x is None or x != x else f"{x:.3f}")})
        who = f"judge {r['judge']}" if r["judge"] else "the human judges"
        caption = (f"Win rates (%) against {r['baseline']} from {who}, raw and length-controlled (AlpacaEval 2.0's "
                   f"GLM), {100 * (1 - r['alpha']):g}% percentile bootstrap intervals over the items (k={r['k']}, "
                   f"seed={r['seed']}):")
        table = tables.render(shown[["system", "n_items", "win rate", "LC win rate", "interval", "length coef."]],
                              "text")
        return plain.wrap(caption) + "\n" + table.rstrip("\n") + "\n"


def _items(wh, dataset: str, baseline: str, judge: str | None):
    """The items (a DataFrame: system, input, preference, the two lengths) and their fingerprint."""
    import hashlib

    from metaeval import schema

    wh.require_dataset(dataset)
    items = wh.con.execute(schema.read("lc_winrate_items"),
                           {"dataset": dataset, "baseline": baseline, "judge": judge}).df()
    if items.empty:
        raise WarehouseError(Message(f"{dataset!r} has no {'human ' if judge is None else ''}preferences between ",
                                     Argument("baseline", baseline), " and another system"
                                     + ("" if judge is None else f" by judge {judge!r}")))
    digest = hashlib.sha256(items.to_csv(index=False).encode())
    return items, digest.hexdigest()


def lc_winrates(wh, dataset: str, baseline: str, judge: str | None = None, *, k: int = K.default,
                seed: int = SEED.default, alpha: float = ALPHA.default, force: bool = False, progress=None):
    """The latest ``lc_winrates`` rows of these preferences and settings (best first), computed
    unless up to date."""
    import numpy as np
    import pandas as pd

    from metaeval.analyses import length_control as lc
    from metaeval.runs import parameters, persist

    parameters.check_k(k, alpha, "interval")
    items, fingerprint = _items(wh, dataset, baseline, judge)
    setting = {"judge": judge or "", "baseline": baseline, "k": int(k), "seed": int(seed), "alpha": float(alpha)}
    if not force and (rows := persist.reusable(wh, TABLE, dataset, fingerprint, **setting)) is not None:
        return _best_first(rows)
    rows = []
    for i, (system, part) in enumerate(items.groupby("system", sort=True)):
        part = part.dropna(subset=["length_system", "length_baseline"])
        y, lm, lb = (part[c].to_numpy(float) for c in ("preference", "length_system", "length_baseline"))
        r = lc.length_controlled_winrate(y, lm, lb)
        child = int(np.random.SeedSequence(seed, spawn_key=(i,)).generate_state(1, np.uint64)[0])
        lower, upper, n_valid = lc.bootstrap_interval(y, lm, lb, k, child, alpha) if r.converged else (None, None, 0)
        rows.append({"system": system, "n_items": int(r.n), "winrate": _value(r.winrate),
                     "lc_winrate": _value(r.lc_winrate), "lower": _value(lower), "upper": _value(upper),
                     "length_coefficient": _value(r.phi), "n_valid": n_valid})
    dropped = int(len(items) - sum(r["n_items"] for r in rows))
    conventions = {"model": "logit P(system preferred) = theta + phi tanh(delta / sd(delta)); delta = the length "
                            "difference in characters, sd with ddof 1 (AlpacaEval 2.0, GLM length_controlled_v1)",
                   "lc_winrate": "100 mean_i s(theta): the win rate at no length difference",
                   "estimator": "maximum likelihood with soft labels (tie 0.5), Newton's method; no fit (NULL) when "
                                "the verdicts are separated",
                   "not_reproduced": "AlpacaEval's instruction-difficulty term (its released per-instruction values), "
                                     "its L1 penalty with cross-validated C and its regularisation towards gamed "
                                     "baselines",
                   "interval": f"{100 * (1 - alpha):g}% percentile bootstrap over the items, k={k}; system i's rounds "
                               "from SeedSequence(seed, spawn_key=(i,))",
                   "items_without_lengths": dropped}
    frame = pd.DataFrame(rows).assign(dataset=dataset, fingerprint=fingerprint, **setting,
                                      conventions=_json(conventions))
    persist.ensure_table(wh, TABLE, "88_lc_winrates")
    persist.write(wh, COMMAND, TABLE, frame, {"dataset": dataset, **setting}, fingerprint, seed)
    return _best_first(persist.reusable(wh, TABLE, dataset, fingerprint, **setting))


def _value(x):
    import math

    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _json(conventions: dict) -> str:
    from metaeval.runs import bookkeeping

    return bookkeeping.conventions_json(conventions)


def _best_first(rows):
    return rows.sort_values(["lc_winrate", "system"], ascending=[False, True], na_position="last").reset_index(drop=True)
