"""``metaeval agreement --bins N``: inter-metric disagreement over sampled summary pairs and the
F/N and F'/N ratios in N bins, cumulative (Peyrard 2019) and of uniform width (Bhandari et al.
2020), on the metrics' scores and on the Uniform(0, 1) random-score baseline (``baseline``).
The formulas: :mod:`metaeval.analyses.agreement_curves`. One run writes every row of a setting to
``agreement_curves``; the same setting on the same cells computes nothing.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine.options import Option

#: agreement --bins: Bhandari et al. 2020, appendices A and B (options of the ``agreement`` family,
#: :mod:`metaeval.runs.agreement.agreement_families`).
BINS = Option("bins", default=0, kind="int", minimum=0,
              help="Also the disagreement over sampled summary pairs and the F/N and F'/N ratios in this many "
                   "bins (Peyrard 2019: 15; table agreement_curves). Default 0: only the three thirds.")
PROTOCOL = Option("protocol", default=("cumulative", "uniform"), kind="choice", multiple=True,
                  choices="metaeval.analyses.agreement_curves:PROTOCOLS",
                  help="--bins: cumulative bins (v >= k/n, Peyrard's) or bins of uniform width (Bhandari et "
                       "al.'s). Default: both. Repeatable.")
PAIRS = Option("pairs", default=100_000, kind="int", minimum=1,
               help="--bins: summary pairs sampled for the disagreement (Peyrard: 100000).")
BASELINE = Option("baseline", default="none", kind="choice", choices="metaeval.analyses.agreement_curves:BASELINES",
                  help="--bins: random also computes every statistic on Uniform(0, 1) random scores (seeded), "
                       "besides the metrics' (Bhandari et al., appendix B).")

TABLE = "agreement_curves"

def run_curves(wh, scope, data, consensus: str, *, bins: int, protocol=PROTOCOL.default, pairs: int = PAIRS.default,
               baseline: str = BASELINE.default, seed: int = 0, force: bool = False):
    """The latest ``agreement_curves`` rows of this setting (``consensus``: the label of the
    metrics' consensus score, :func:`metaeval.runs.agreement.score_ranges.consensus_label`), computed unless up
    to date."""
    import numpy as np
    import pandas as pd

    from metaeval.analyses import agreement_curves as ac
    from metaeval.runs.engine import bookkeeping, persist, selection

    protocols = tuple(dict.fromkeys(protocol))
    if bins < 1:
        raise WarehouseError(Message(Argument("bins", bins), " must be 1 or more"))
    fingerprint = selection.data_fingerprint(data, scope.metrics)
    setting = {"consensus": consensus, "n_bins": int(bins), "n_pairs": int(pairs), "seed": int(seed)}
    baselines = ("none",) if baseline == "none" else ("none", "random")
    wanted = [(b, p) for b in baselines for p in protocols]
    if not force and all(persist.reusable(wh, TABLE, scope.dataset, fingerprint, subset=None, baseline=b,
                                          protocol=p, **setting) is not None for b, p in wanted):
        return latest_rows(wh, scope.dataset, wanted, setting)
    stack = np.stack([data.values[m] for m in scope.metrics])
    metrics = list(scope.metrics)
    records = []
    for b, p in wanted:
        S = stack if b == "none" else ac.random_stack(stack, seed)
        for ka, kb in [(x, y) for x in range(len(metrics)) for y in range(len(metrics)) if x != y]:
            for curve in ac.pair_curves(S, ka, kb, bins, p, pairs, seed):
                if curve.statistic != "disagreement" and ka > kb:
                    continue            # tau and F/N are symmetric in the pair: one row per unordered pair
                records += [{"dataset": scope.dataset, "metric_a": metrics[ka], "metric_b": metrics[kb],
                             "statistic": curve.statistic, "protocol": p, "baseline": b, **setting, "bin": k,
                             "lower": float(curve.lower[k]), "upper": float(curve.upper[k]),
                             "count": int(curve.count[k]), "value": bookkeeping.none_if_nan(float(curve.value[k])),
                             "n_systems": len(data.systems), "n_inputs": len(data.inputs),
                             "fingerprint": fingerprint, "conventions": bookkeeping.conventions_json(ac.CONVENTIONS)}
                            for k in range(bins)]
    persist.write(wh, "agreement-curves", TABLE, pd.DataFrame(records),
                  {"dataset": scope.dataset, "metrics": metrics, "protocols": list(protocols),
                   "baseline": baseline, **setting}, fingerprint, seed=int(seed))
    return latest_rows(wh, scope.dataset, wanted, setting)


def latest_rows(wh, dataset: str, wanted, setting: dict):
    """The latest rows of the setting, in the order metric pair, statistic, protocol, baseline, bin."""
    import pandas as pd

    from metaeval.runs.engine import analyse as engine

    frames = [engine.latest_rows(wh, TABLE, dataset, subset=None, baseline=b, protocol=p, **setting) for b, p in wanted]
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if rows.empty:
        return rows
    return rows.sort_values(["metric_a", "metric_b", "statistic", "protocol", "baseline", "bin"], ignore_index=True)

