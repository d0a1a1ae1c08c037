"""``metaeval ppi``: prediction-powered estimates of what the humans would give on every cell, from
a human measure on some cells and a metric (or an automatic judge) on all of them (issue 45 item 1;
the statistics: :mod:`metaeval.analyses.ppi`, PPI++ in the conventions of ``ppi_py``).

Two estimands:

* ``human`` and ``metric`` given: each system's mean human score over its inputs (labelled cells:
  both measures; unlabelled: the metric only), and the difference between every two systems,
  paired on inputs (labelled: the inputs where both systems have both measures; unlabelled: where
  both have the metric and not both the human measure). The differences are two-sided normal tests
  corrected together (``correction``) by the conclusion layer, whose clusters are the rank groups.
* ``judge`` and ``baseline`` given: each system's win rate against the baseline (the share of
  items preferring it, a tie 1/2) from the human votes on some items (their mean over the human
  verdicts of an item) and the judge's verdict on every item; without ``baseline``, the
  Bradley-Terry leaderboard (PPI for the logistic M-estimator, Boyeau et al. 2024), the first
  system by name as the reference with score 0, an item's mean verdicts as soft labels.

``labelled_share`` draws a uniform share of the inputs from fully labelled data and keeps the human
measure there only (for studies and guides; ``label_seed``); the cells are unlabelled elsewhere.
Every interval assumes the labelled cells are a uniform random sample (said in every output). One
run writes the rows of ``ppi_estimates``; the same command on the same cells computes nothing.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import ALPHA, CORRECTION, DATASET, FORCE, HUMAN, RESAMPLE_CLUSTERS, Option
from metaeval.runs.studies.ppi_present import TITLES, caption, notes, shown

COMMAND, TABLE = "ppi", "ppi_estimates"


def _check_lam(lam) -> None:
    if lam is not None and (isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0 <= lam <= 1):
        raise WarehouseError(Message(Argument("lam", lam), " must be a number from 0 (classical) to 1 (plain PPI)"))


def _check_share(share) -> None:
    if share is not None and (isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 < share < 1):
        raise WarehouseError(Message(Argument("labelled_share", share), " must be a number with 0 < share < 1"))


def _check_label_seed(seed) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= 2**63 - 1:
        raise WarehouseError(Message(Argument("label_seed", seed), " must be an integer from 0 to 2**63 - 1"))


@register
class PredictionPowered(Family):
    name = COMMAND
    topic = "systems"
    headline = "Systems' human scores estimated with PPI++ from a metric and a few humans."
    summary = ("Prediction-powered estimates (PPI++) of the human scores of every system, their differences, win "
               "rates or Bradley-Terry scores, from a metric or judge on every cell and humans on some.")
    tables = (TABLE,)
    tests_table = TABLE
    options = (DATASET,
               HUMAN.but(required=False, help="The human judgment (with --metric), e.g. expert.relevance."),
               Option("metric", metavar="MEASURE", help="The metric scoring every cell (with --human)."),
               Option("judge", metavar="JUDGE",
                      help="The automatic judge whose pairwise verdicts cover every item (instead of --human and "
                           "--metric): win rates against --baseline, or without it the Bradley-Terry leaderboard."),
               Option("baseline", metavar="SYSTEM", help="With --judge: win rates against this system."),
               Option("lam", kind="float", minimum=0, maximum=1, metavar="LAMBDA", check=_check_lam,
                      help="PPI++'s lambda: 1 plain PPI, 0 the classical estimate from the humans alone. "
                           "Default: estimated from the data to minimise the variance."),
               ALPHA,
               Option("labelled_share", kind="float", minimum=0, maximum=1, open=True, metavar="SHARE",
                      check=_check_share,
                      help="Keep the human measure on this uniform share of the inputs only (drawn with "
                           "--label-seed), from fully labelled data. Default: the labels as stored."),
               Option("label_seed", default=0, kind="seed", check=_check_label_seed,
                      help="Seed of the --labelled-share draw."),
               CORRECTION, FORCE,
               RESAMPLE_CLUSTERS.but(help="Clustered cells: the cluster-robust (sandwich, CR0) standard errors over "
                                          "the clusters of inputs the input attribute ATTR names (a cell's or an "
                                          "item's cluster: its input's value), labelled and unlabelled cells of "
                                          "one cluster summed together (the Bradley-Terry fit's gradients "
                                          "likewise). In the rows' conventions and fingerprint."))

    def inputs(self, wh, **params):
        return _inputs(wh, **params)

    def rows(self, wh, inputs, **params):
        """The estimates (computed with the inputs: the estimands they give are keys of the setting)."""
        from metaeval.runs.engine import store

        frame, conventions, parameters = inputs.data
        setting = {k: v for k, v in inputs.keys.items() if k != "estimand"}   # (the estimands: the frame's own)
        frame = frame.assign(dataset=inputs.dataset, **setting, fingerprint=inputs.fingerprint,
                             conventions=_json(conventions))
        return store.Rows(frame, parameters, parameters["label_seed"])

    def outcome(self, stored, inputs, **params):
        return _ordered(stored)

    def present(self, outcome, fmt: str) -> str:
        if outcome.empty:
            return super().present(outcome, fmt)
        if fmt in ("markdown", "latex"):       # json and csv carry the assumption in each row's conventions
            said = notes(outcome)
            text = super().present(outcome, fmt)
            return text + ("".join(f"\n{line}\n" for line in said) if fmt == "markdown"
                           else "".join(f"% {line}\n" for line in said))
        if fmt not in ("text", "table"):
            return super().present(outcome, fmt)
        from metaeval.present import plain, tables

        parts = [plain.wrap(caption(outcome))]
        for estimand in dict.fromkeys(outcome["estimand"]):
            part = outcome[outcome["estimand"] == estimand]
            parts.append(f"{TITLES[estimand]}:\n" + tables.render(shown(part), "text").rstrip("\n"))
        return "\n".join(parts) + "\n" + "".join(plain.wrap(line) + "\n" for line in notes(outcome))


def _oriented(wh, dataset: str, metric: str, human: str):
    """(metric, human) matrices of the systems with a human cell, the human measure in its own scale
    and the metric negated when its direction is not the human's (so that lambda >= 0 can use it);
    the systems, the inputs and the human's direction."""
    import numpy as np

    m = wh.matrix(dataset, [metric, human])
    kinds = wh.measure_kinds(dataset)
    direction = dict(zip(kinds["measure"], kinds["direction"]))
    X = (-m[metric] if direction[metric] != direction[human] else m[metric]).astype(float)
    Z = m[human].astype(float)
    keep = wh.attribute_mask(dataset, (), m.systems, m.inputs)    # reference, oracle and human systems out
    X, Z = np.where(keep, X, np.nan), np.where(keep, Z, np.nan)
    present = ~np.isnan(Z).all(axis=1)
    return X[present], Z[present], tuple(str(s) for s, p in zip(m.systems, present) if p), tuple(m.inputs), \
        direction[human]


def _draw_inputs(n_inputs: int, share: float, seed: int):
    """The inputs kept labelled: a uniform draw of round(share x inputs) (at least 2) without
    replacement (numpy's default_rng(seed).choice)."""
    import numpy as np

    count = min(n_inputs, max(2, int(round(share * n_inputs))))
    keep = np.zeros(n_inputs, bool)
    keep[np.random.default_rng(seed).choice(n_inputs, size=count, replace=False)] = True
    return keep


def _fingerprint(*parts) -> str:
    import hashlib

    digest = hashlib.sha256()
    for p in parts:
        digest.update(repr(p).encode() if not hasattr(p, "tobytes") else p.tobytes())
        digest.update(b"\x1e")
    return digest.hexdigest()


def _check_mode(human, metric, judge, baseline) -> str:
    if judge is not None:
        if human is not None or metric is not None:
            raise WarehouseError(Message(Argument("judge", judge), " predicts pairwise votes; give it without ",
                                         Argument("human", human or metric)))
        return "winrate" if baseline is not None else "bradley-terry"
    if baseline is not None:
        raise WarehouseError(Message(Argument("baseline", baseline), " is for win rates: give ",
                                     Argument("judge", placeholder="JUDGE"), " too"))
    if human is None or metric is None:
        missing = "human" if human is None else "metric"
        raise WarehouseError(Message(Argument(missing, placeholder="MEASURE"), " is required (or ",
                                     Argument("judge", placeholder="JUDGE"), " for pairwise votes)"))
    return "means"


def _inputs(wh, dataset: str, human: str | None = None, metric: str | None = None, judge: str | None = None,
            baseline: str | None = None, *, lam: float | None = None, alpha: float = ALPHA.default,
            labelled_share: float | None = None, label_seed: int = 0, correction: str = CORRECTION.default,
            resample_clusters: str | None = None):
    """What the ``ppi_estimates`` rows of this setting are (module docstring): the estimates
    computed with their fingerprint and keys (the estimands among them). Every check is made
    before the one run that writes."""
    from metaeval.runs.engine import store

    mode = _check_mode(human, metric, judge, baseline)
    wh.require_dataset(dataset)
    lam = None if lam is None else float(lam)
    share = None if labelled_share is None else float(labelled_share)
    if mode == "means":
        if human == metric:
            raise WarehouseError(Message(Argument("metric", metric), " is the human measure itself; choose a metric"))
        wh.require_measures(dataset, [human, metric])
        frame, fingerprint, conventions = _means(wh, dataset, human, metric, lam, alpha, share, label_seed, correction,
                                                 resample_clusters)
    else:
        frame, fingerprint, conventions = _votes(wh, dataset, judge, baseline, mode, lam, alpha, share, label_seed,
                                                 correction, resample_clusters)
    setting = {"estimand": tuple(sorted(set(frame["estimand"]))), "human": human or "",
               "predictor": metric or judge, "lam_given": lam, "labelled_share": share,
               "label_seed": int(label_seed), "alpha": float(alpha), "correction": correction}
    parameters = {"dataset": dataset, "human": human, "metric": metric, "judge": judge, "baseline": baseline,
                  "lam": lam, "alpha": float(alpha), "labelled_share": share, "label_seed": int(label_seed),
                  "correction": correction,
                  **({} if resample_clusters is None else {"resample_clusters": resample_clusters})}
    return store.Inputs(dataset, fingerprint, setting, None, (frame, conventions, parameters))


def _labels(Z, share, label_seed):
    """The human matrix, kept on a drawn share of the inputs when asked."""
    import numpy as np

    if share is None:
        return Z
    keep = _draw_inputs(Z.shape[1], share, label_seed)
    return np.where(keep[None, :], Z, np.nan)


def _refuse_coverage(n_both: int, n_metric_only: int, what: str, metric_name: str) -> None:
    if n_both == 0:
        raise WarehouseError(f"no {what} has both the human measure and {metric_name}: prediction-powered inference "
                             "needs some labelled cells")
    if n_metric_only == 0:
        raise WarehouseError(Message(f"every {what} with {metric_name} has the human measure too: there is nothing "
                                     "to predict, and the classical estimate from the human labels is the answer "
                                     "(or keep a share of them as labelled: ",
                                     Argument("labelled_share", placeholder="SHARE"), ")"))


def _means(wh, dataset, human, metric, lam, alpha, share, label_seed, correction, resample_clusters=None):
    import numpy as np
    import pandas as pd

    from metaeval.analyses import ppi as stat

    X, Z, systems, inputs, direction = _oriented(wh, dataset, metric, human)
    sign = -1.0 if direction == "lower" else 1.0          # the groups and verdicts: higher is better
    if share is not None and np.isnan(Z[~np.isnan(X)]).all():
        raise WarehouseError(Message("no cell has both ", Argument("human", human), " and ", Argument("metric", metric),
                                     ": nothing to draw a labelled share from"))
    Z = _labels(Z, share, label_seed)
    labelled, metric_only = ~np.isnan(X) & ~np.isnan(Z), ~np.isnan(X) & np.isnan(Z)
    _refuse_coverage(int(labelled.sum()), int(metric_only.sum()), "cell", repr(metric))
    labels = _input_clusters(wh, dataset, resample_clusters, systems, inputs, ~np.isnan(X).all(axis=0))

    def of(*masks):   # the (labelled, unlabelled) cells' clusters, None unclustered
        return None if labels is None else tuple(labels[m] for m in masks)

    rows = []
    means = []
    for i, s in enumerate(systems):
        e = stat.mean(Z[i, labelled[i]], X[i, labelled[i]], X[i, metric_only[i]], lam=lam, alpha=alpha,
                      clusters=of(labelled[i], metric_only[i]))
        means.append(e.estimate)
        rows.append(_row("mean", s, "", e))
    a_idx, b_idx, diffs = [], [], []
    for a in range(len(systems)):
        for b in range(a + 1, len(systems)):
            both_metric = ~np.isnan(X[a]) & ~np.isnan(X[b])
            lab = both_metric & labelled[a] & labelled[b]
            unl = both_metric & ~lab
            e = stat.mean(Z[a, lab] - Z[b, lab], X[a, lab] - X[b, lab], X[a, unl] - X[b, unl], lam=lam, alpha=alpha,
                          clusters=of(lab, unl))
            a_idx.append(a), b_idx.append(b), diffs.append(e)
            rows.append(_row("difference", systems[a], systems[b], e))
    result = _conclude(rows[:len(systems)], rows[len(systems):], sign * np.array(means, float), diffs, a_idx, b_idx,
                       systems, correction, alpha, sign)
    frame = pd.DataFrame(rows)
    conventions = {
        "estimator": "PPI++ (Angelopoulos, Duchi & Zrnic 2023) in ppi_py's conventions: " + _LAM_TEXT,
        "interval": f"{100 * (1 - alpha):g}% normal interval; variances with divisor n (ddof 0)",
        "assumption": stat.ASSUMPTION,
        "cells": "labelled: both measures; unlabelled: the metric only; a cell with the human measure only is left "
                 f"out ({int((np.isnan(X) & ~np.isnan(Z)).sum())} here)",
        "differences": "paired on inputs: labelled the inputs where both systems have both measures, unlabelled "
                       "where both have the metric and not both the human measure",
        "scale": f"the human measure in its own scale ({direction} is better); the metric negated when its "
                       "direction is not the human's",
        "human_direction": direction,
        "tests": f"differences: two-sided normal p of the PPI estimate, {correction} over every pair",
        "groups": ("Groups: mt-metrics-eval's AssignRanks over the corrected tests of the differences."
                   if result.determined else f"No groups: {result.why or 'a difference is undefined'}."),
    }
    if share is not None:
        conventions["labelled_share"] = (f"the human measure kept on a uniform {share:g} of the inputs "
                                         f"(numpy default_rng({label_seed}).choice without replacement)")
    fingerprint = _fingerprint(systems, inputs, X, Z, human, metric,
                               *(() if labels is None else (resample_clusters, list(labels))))
    conventions.update(_clustered_text(resample_clusters, labels))
    return frame, fingerprint, conventions


def _input_clusters(wh, dataset, attribute, systems, inputs, used):
    """``--resample-clusters``: each input's cluster label (checked: every used input has one, two
    or more clusters), None without the option."""
    if attribute is None:
        return None
    from metaeval.runs.engine import selection

    return selection.cluster_labels(wh, dataset, attribute, systems, inputs, used)


def _clustered_text(attribute, labels) -> dict:
    """The conventions of cluster-robust standard errors (none without them)."""
    if attribute is None:
        return {}
    return {"resample_clusters": attribute, "clusters": len({v for v in labels if v is not None}),
            "clustered_variance": "cluster-robust (sandwich, CR0) standard errors: the squared sums over each "
                                  "cluster of the cells' centred contributions, labelled and unlabelled cells of a "
                                  "cluster together; lambda estimated as without clusters"}


_LAM_TEXT = ("lambda = cov(y, yhat) / ((1 + n/N) var(yhat, yhat_u)), covariance with divisor n, the pooled variance "
             "with divisor n + N - 1, clipped to [0, 1]; lambda 1 plain PPI, 0 classical")


def _votes(wh, dataset, judge, baseline, mode, lam, alpha, share, label_seed, correction, resample_clusters=None):
    import numpy as np
    import pandas as pd

    from metaeval import schema
    from metaeval.analyses import ppi as stat

    items = wh.con.execute(schema.read("ppi_preferences"), {"dataset": dataset, "judge": judge}).df()
    if items.empty:
        raise WarehouseError(Message(f"{dataset!r} has no verdict of ", Argument("judge", judge)))
    systems = sorted(set(items["system_a"]) | set(items["system_b"]))
    inputs = sorted(set(items["input"]))
    human = items["human"].to_numpy(float)
    if share is not None:
        keep = _draw_inputs(len(inputs), share, label_seed)
        kept = {x for x, k in zip(inputs, keep) if k}
        human = np.where(items["input"].isin(kept).to_numpy(), human, np.nan)
    judged = items["judged"].to_numpy(float)
    conventions = {"estimator": "PPI++ (Angelopoulos, Duchi & Zrnic 2023) in ppi_py's conventions",
                   "assumption": stat.ASSUMPTION,
                   "items": "an item is (input, system_a, system_b); its human label the mean over the human "
                            "verdicts (either order; a tie 1/2), its prediction the judge's mean over its verdicts"}
    if share is not None:
        conventions["labelled_share"] = (f"the human votes kept on a uniform {share:g} of the inputs "
                                         f"(numpy default_rng({label_seed}).choice without replacement)")
    by_input = _input_clusters(wh, dataset, resample_clusters, systems, inputs, None)
    labels = None if by_input is None else items["input"].map(dict(zip(inputs, by_input))).to_numpy(object)
    fingerprint = _fingerprint(mode, baseline, items.to_csv(index=False), human,
                               *(() if labels is None else (resample_clusters, list(labels))))
    conventions.update(_clustered_text(resample_clusters, labels))
    if mode == "winrate":
        rows = _vote_winrates(items, systems, human, judged, labels, dataset, judge, baseline, lam, alpha, correction,
                              conventions)
    else:
        rows = _vote_bradley_terry(items, systems, human, judged, labels, judge, lam, alpha, correction, conventions)
    return pd.DataFrame(rows), fingerprint, conventions


def _vote_winrates(items, systems, human, judged, labels, dataset, judge, baseline, lam, alpha, correction,
                   conventions) -> list[dict]:
    """Each system's PPI++ win rate against ``baseline``, tested against 1/2 (``_votes``'s win rates)."""
    import numpy as np

    from metaeval.analyses import conclusions
    from metaeval.analyses import ppi as stat

    if baseline not in systems:
        raise WarehouseError(Message(Argument("baseline", baseline), f" has no verdict of judge {judge!r} in "
                                     f"{dataset!r}"))
    on = (items["system_a"] == baseline) | (items["system_b"] == baseline)
    if not on.any():
        raise WarehouseError(Message(Argument("baseline", baseline), " is compared with no system"))
    labelled = on.to_numpy() & ~np.isnan(human)
    _refuse_coverage(int(labelled.sum()), int((on.to_numpy() & np.isnan(human)).sum()),
                     f"comparison with {baseline!r}", f"judge {judge!r}'s verdict")
    flip = (items["system_b"] == baseline).to_numpy()        # the preference for the other system
    y, yhat = np.where(flip, 1 - human, human), np.where(flip, 1 - judged, judged)
    other = np.where(flip, items["system_a"], items["system_b"])
    rows = []
    for s in systems:
        if s == baseline:
            continue
        mine = on.to_numpy() & (other == s)
        lab, unl = mine & ~np.isnan(human), mine & np.isnan(human)
        rows.append(_row("winrate", s, baseline, stat.mean(
            y[lab], yhat[lab], yhat[unl], lam=lam, alpha=alpha,
            clusters=None if labels is None else (labels[lab], labels[unl]))))
    # better or worse than the baseline: the two-sided normal test of a win rate of 1/2, corrected over systems
    p = np.array([_half_p(r) for r in rows])
    verdict = conclusions.decide(p, formula="parametric", k=None, correction=correction, alpha=alpha)
    for r, adj, sig, defined in zip(rows, verdict.adjusted, verdict.significant, verdict.defined):
        r.update(p_value=_none(r["_p"]), p_adjusted=_none(adj), significant=bool(sig) if defined else None)
        del r["_p"]
    conventions["tests"] = f"win rate = 1/2: two-sided normal p, {correction} over the systems"
    conventions["interval"] = (f"{100 * (1 - alpha):g}% normal interval, not clipped to [0, 1] (as ppi_py's); "
                               "variances with divisor n (ddof 0)")
    conventions["lambda"] = _LAM_TEXT
    return rows


def _vote_bradley_terry(items, systems, human, judged, labels, judge, lam, alpha, correction,
                        conventions) -> list[dict]:
    """The PPI++ Bradley-Terry scores and every pair's difference (``_votes``'s Bradley-Terry)."""
    import numpy as np
    from scipy import stats

    from metaeval.analyses import ppi as stat

    lab, unl = ~np.isnan(human), np.isnan(human)
    _refuse_coverage(int(lab.sum()), int(unl.sum()), "comparison", f"judge {judge!r}'s verdict")
    index = {s: i for i, s in enumerate(systems)}
    a = items["system_a"].map(index).to_numpy()
    b = items["system_b"].map(index).to_numpy()
    X = stat.design(b, a, len(systems))    # y is the preference for system_b: b first
    fit = stat.bradley_terry(X[lab], human[lab], judged[lab], X[unl], judged[unl], lam=lam, alpha=alpha,
                             clusters=None if labels is None else (labels[lab], labels[unl]))
    reference = systems[0]
    rows = [_bt_row(reference, reference, fit, None)] + [_bt_row(s, reference, fit, j) for j, s in enumerate(systems[1:])]
    # every pair's difference of scores (the covariance of the fit), for the conclusion layer's groups
    z = float(stats.norm.ppf(1 - alpha / 2))
    diffs, diff_rows, a_idx, b_idx = [], [], [], []
    position = [None, *range(len(systems) - 1)]       # the reference has no coefficient
    for i in range(len(systems)):
        for j in range(i + 1, len(systems)):
            est, se = fit.difference(position[i], position[j])
            cest, cse = fit.difference(position[i], position[j], classical=True)
            e = stat.Estimate(est, se, *_pair(est, se, z), fit.lam, cest, cse, *_pair(cest, cse, z), fit.n, fit.N,
                              stat.effective_labels(fit.n, cse, se))
            diffs.append(e), a_idx.append(i), b_idx.append(j)
            diff_rows.append(_row("bradley-terry-difference", systems[i], systems[j], e))
    scores = [np.nan if r["estimate"] is None else r["estimate"] for r in rows]
    result = _conclude(rows, diff_rows, scores, diffs, a_idx, b_idx, systems, correction, alpha)
    rows += diff_rows
    conventions["groups"] = ("Groups: mt-metrics-eval's AssignRanks over the corrected tests of the score differences."
                             if result.determined else f"No groups: {result.why or 'a difference is undefined'}.")
    conventions["tests"] = (f"score differences: two-sided normal p from the fit's covariance, {correction} over "
                            "every pair")
    conventions.update({
        "model": "Bradley-Terry: logit P(i preferred to j) = theta_i - theta_j, the reference (first system by name) "
                 "at 0; PPI++ for the logistic M-estimator (Boyeau et al. 2024)",
        "ties": "an item's human label is the mean of its human verdicts (a tie 1/2), the judge's its mean verdict: "
                "soft labels of the logistic loss (ppi_py's start, scikit-learn's logistic fit, takes 0/1 labels only; "
                "ours starts from the classical fit)",
        "interval": f"{100 * (1 - alpha):g}% normal interval from the sandwich covariance, covariances with divisor "
                    "count - 1 (ppi_py's logistic conventions)" + (
                        "" if labels is None else "; clustered: the CR0 sandwich over the clusters (each cluster's "
                        "summed centred gradients, no count - 1 divisor) unless every cluster is one comparison"),
        "lambda": "tr(H^-1 C H^-1) / (2 (1 + n/N) tr(H^-1 V H^-1)) clipped to [0, 1], estimated twice as ppi_py does",
        "converged": bool(fit.converged)})
    return rows


def _half_p(row) -> float:
    """The two-sided normal p of a win rate of 1/2 (kept on the row as ``_p``); NaN when undefined."""
    import math

    from scipy import stats

    est, se = row["estimate"], row["se"]
    row["_p"] = math.nan if est is None or se is None or not se > 0 else \
        float(2 * stats.norm.sf(abs(est - 0.5) / se))
    return row["_p"]


def _pair(estimate: float, se: float, z: float) -> tuple[float, float]:
    import math

    return (math.nan, math.nan) if not se > 0 or math.isnan(estimate) else (estimate - z * se, estimate + z * se)


def _conclude(score_rows, diff_rows, scores, diffs, a_idx, b_idx, systems, correction, alpha, sign=1.0):
    """The conclusion layer on the differences (two-sided normal p, ``correction`` over every pair):
    each difference's adjusted p and verdict, each system's rank group (None when not determined);
    the clusters' result. ``scores`` are oriented higher-is-better; ``sign`` orients the differences."""
    import numpy as np

    from metaeval.analyses import conclusions

    p = np.array([e.pvalue for e in diffs])
    verdict = conclusions.decide(p, formula="parametric", k=None, correction=correction, alpha=alpha)
    delta = sign * np.array([e.estimate for e in diffs])
    result, _, _ = conclusions.clusters(np.array(scores, float), a_idx, b_idx, np.nan_to_num(delta),
                                        verdict.significant, names=systems, evidence=verdict.defined,
                                        note=verdict.note())
    for r, e, adj, sig, defined in zip(diff_rows, diffs, verdict.adjusted, verdict.significant, verdict.defined):
        r.update(p_value=_none(e.pvalue), p_adjusted=_none(adj), significant=bool(sig) if defined else None)
    for r, c in zip(score_rows, result.cluster):
        r["cluster"] = _none(c)
    return result


def _row(estimand: str, system: str, other: str, e) -> dict:
    return {"estimand": estimand, "system": system, "other": other, "estimate": _none(e.estimate),
            "se": _none(e.se), "lower": _none(e.lower), "upper": _none(e.upper), "classical": _none(e.classical),
            "classical_lower": _none(e.classical_lower), "classical_upper": _none(e.classical_upper),
            "lam": _none(e.lam), "n_labelled": int(e.n), "n_unlabelled": int(e.N),
            "effective_labels": _none(e.effective_labels), "p_value": None, "p_adjusted": None, "significant": None,
            "cluster": None}


def _bt_row(system, reference, fit, j) -> dict:
    def at(values, reference_value=None):     # the reference: 0 by definition, no interval
        return None if not fit.converged else reference_value if j is None else _none(values[j])

    return {"estimand": "bradley-terry", "system": system, "other": reference, "estimate": at(fit.estimate, 0.0),
            "se": at(fit.se), "lower": at(fit.lower), "upper": at(fit.upper),
            "classical": at(fit.classical, 0.0), "classical_lower": at(fit.classical_lower),
            "classical_upper": at(fit.classical_upper),
            "lam": _none(fit.lam), "n_labelled": int(fit.n), "n_unlabelled": int(fit.N),
            "effective_labels": None if j is None else _none(fit.effective_labels[j]),
            "p_value": None, "p_adjusted": None, "significant": None, "cluster": None}


def _none(x):
    import math

    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _json(conventions: dict) -> str:
    from metaeval.runs.engine import bookkeeping

    return bookkeeping.conventions_json(conventions)


def _ordered(rows):
    order = {"mean": 0, "winrate": 0, "bradley-terry": 0, "difference": 1, "bradley-terry-difference": 1}
    return rows.assign(_o=rows["estimand"].map(order)).sort_values(["_o", "result_id"]).drop(columns="_o") \
        .reset_index(drop=True)
