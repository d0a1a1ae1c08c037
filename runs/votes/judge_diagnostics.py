"""``metaeval judge-diagnostics``: automatic judges examined for their biases against the humans
(issue 35 item 4; the statistics: :mod:`metaeval.analyses.judge_diagnostics`).

Per chosen automatic judge of a dataset's preferences: its length preference beside the humans'
on the same items (the outputs' lengths are the cell attribute ``output_length``; without them
the rows say so with NULLs), its self-preference when its name is a system's, AlpacaEval's bias
and variance against the human majority, and Calderon et al.'s alternative annotator test (one
row per left-out annotator and one for the judge). Intervals: percentile bootstrap over items
(``k``, ``seed``; the item resamples of ``metaeval judges``, the same for the judge and the
humans). Tests: exact McNemar (length), bootstrap (self-preference), each corrected over the
judges by ``correction``; the alternative annotator test's one-sided t-tests by
Benjamini-Yekutieli over the annotators; every verdict from the conclusion layer. Position bias
is ``metaeval judges``' (``first_position_rate``). One run writes the rows of ``judge_diagnostics``.
"""

from __future__ import annotations

from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import (ALPHA, CORRECTION, DATASET, FORCE, JUDGE_GLOBS, K, SEED, VOTES_BY,
                                          VOTES_WHERE, Option)

COMMAND, TABLE = "judge-diagnostics", "judge_diagnostics"


@register
class JudgeDiagnostics(Family):
    name = COMMAND
    topic = "votes"
    headline = "Judges' biases: length, self-preference, bias and variance vs the humans."
    summary = ("Judges examined for their biases: length preference, self-preference, bias and variance against the "
               "human majority, and the alternative annotator test.")
    tables = (TABLE,)
    tests_table = TABLE          # its length, self-preference and alternative annotator tests
    options = (DATASET,
               Option("humans", multiple=True, flag="--human", metavar="GLOB",
                      help="Human judges (annotators; globs). Default: every human judge. Repeatable."),
               JUDGE_GLOBS,
               K.but(help="Bootstrap rounds over the items (the same for the judge and the humans)."), SEED, ALPHA,
               Option("epsilon", default=0.2, kind="float", minimum=0, maximum=1, open=False,
                      help="The alternative annotator test's cost-benefit margin (Calderon et al.: 0.2 for experts, "
                           "0.15 skilled annotators, 0.1 crowd workers)."),
               Option("min_items", default=30, kind="int", minimum=2,
                      help="The alternative annotator test leaves out annotators with fewer items (the authors' 30)."),
               CORRECTION.but(help="Correction over the judges of the length and self-preference tests."),
               VOTES_WHERE, VOTES_BY, FORCE)

    def inputs(self, wh, **params):
        return _inputs(wh, **params)

    def rows(self, wh, inputs, **params):
        """Every diagnostic of every chosen judge."""
        import pandas as pd

        from metaeval.runs.engine import store

        data, la, lb = inputs.data
        setting = {k: v for k, v in inputs.keys.items() if k != "judge"}
        frame = pd.DataFrame(_rows(data, la, lb, setting)).assign(dataset=inputs.dataset,
                                                                  fingerprint=inputs.fingerprint, **setting)
        return store.Rows(frame, {"dataset": inputs.dataset, "humans": data.humans, "judges": list(data.judges),
                                  **setting}, setting["seed"])

    def outcome(self, stored, inputs, **params):
        return _ordered(stored)

    def present(self, outcome, fmt: str) -> str:
        if fmt != "text" or outcome.empty:
            return super().present(outcome, fmt)
        from metaeval.analyses import conclusions
        from metaeval.present import plain, tables

        def num(x):
            return plain.number_text(x, 3, undefined="")

        def row(r):
            if r["diagnostic"] == "alt_test":
                what = ("undecided" if r["passes"] is None or r["passes"] != r["passes"] else
                        "passes" if r["passes"] else "fails")
                return f"omega {num(r['omega'])}, rho {num(r['rho'])}: {what}"
            value = (f"{num(r['judge_value'])} vs {num(r['human_value'])}" if r["human_value"] == r["human_value"]
                     and r["human_value"] is not None else num(r["judge_value"]) or "undefined")
            interval = f" [{num(r['lower'])}, {num(r['upper'])}]" if num(r["lower"]) else ""
            floor = (conclusions.adjusted_floor(conclusions.pvalue_floor("count", r["k"]), r["correction"], self_tests)
                     if r["diagnostic"] == "self_preference" else 0.0)     # a bootstrap p says no more than 1/k
            p = "" if r["pvalue_adjusted"] is None or r["pvalue_adjusted"] != r["pvalue_adjusted"] else (
                f", adj. p {conclusions.p_text(r['pvalue_adjusted'], floor, latex=False)}"
                + (" *" if r["significant"] is True else ""))
            return value + interval + p

        self_tests = int((outcome["diagnostic"] == "self_preference").sum())
        shown = outcome.assign(who=[a or s for a, s in zip(outcome["annotator"], outcome["system"])],
                               result=[row(r) for _, r in outcome.iterrows()])
        r = outcome.iloc[0]
        caption = (f"Judge diagnostics against the humans ({100 * (1 - r['alpha']):g}% percentile intervals over "
                   f"k={r['k']} paired item resamples, seed={r['seed']}; length and self-preference: judge vs humans, "
                   f"interval of the difference, {r['correction']} over the judges; alternative annotator test: "
                   f"epsilon={r['epsilon']:g}, Benjamini-Yekutieli over the annotators; * significant):")
        return plain.wrap(caption) + "\n" + tables.render(
            shown[["judge", "diagnostic", "who", "n", "result"]], "text").rstrip("\n") + "\n"


def _lengths(wh, dataset: str, items, systems):
    """Per item, the two outputs' lengths (NaN where the cell attribute output_length is missing)."""
    import numpy as np

    from metaeval import schema

    stored = {(s, i): v for s, i, v in wh.con.execute(schema.read("judge_lengths"), {"dataset": dataset}).fetchall()
              if v is not None}
    la = np.array([stored.get((a, i), np.nan) for i, a, _ in items], float)
    lb = np.array([stored.get((b, i), np.nan) for i, _, b in items], float)
    return la, lb


def _inputs(wh, dataset: str, humans=(), judges=(), *, k: int = K.default, seed: int = SEED.default,
            alpha: float = ALPHA.default, epsilon: float = 0.2, min_items: int = 30,
            correction: str = CORRECTION.default):
    """What the ``judge_diagnostics`` rows of the chosen judges are of: their votes and the
    outputs' lengths (both in the fingerprint), the setting's keys."""
    import hashlib

    import numpy as np

    from metaeval.errors import Argument, Message, WarehouseError
    from metaeval.runs.votes import judges as jg
    from metaeval.runs.engine import parameters, store

    parameters.check_k(k, alpha, "interval")
    if not 0 <= epsilon < 1:
        raise WarehouseError(Message(Argument("epsilon", epsilon), " must be at least 0 and below 1"))
    wh.require_dataset(dataset)
    data = jg.load(wh, dataset, humans, judges)
    la, lb = _lengths(wh, dataset, data.items, data.systems)
    digest = hashlib.sha256(data.fingerprint.encode())
    digest.update(np.nan_to_num(np.concatenate([la, lb]), nan=-1.0).astype("<f8").tobytes())
    setting = {"k": int(k), "seed": int(seed), "alpha": float(alpha), "epsilon": float(epsilon),
               "min_items": int(min_items), "correction": correction}
    return store.Inputs(dataset, digest.hexdigest(), {"judge": tuple(data.judges), **setting}, data=(data, la, lb))


_ORDER = ("length_preference", "self_preference", "bias", "variance", "repetition_stability", "alt_test",
          "alt_test_annotator")


def _ordered(rows):
    return rows.assign(_o=rows["diagnostic"].map(_ORDER.index)).sort_values(
        ["judge", "_o", "annotator"]).drop(columns="_o").reset_index(drop=True)


def _rows(data, la, lb, setting) -> list[dict]:
    """Every row of the chosen judges (the tests decided over the judges by the conclusion layer)."""
    import numpy as np

    from metaeval.analyses import conclusions
    from metaeval.analyses import judge_diagnostics as jd
    from metaeval.analyses import preferences as pf

    k, seed, alpha, epsilon, min_items, correction = (setting[x] for x in ("k", "seed", "alpha", "epsilon", "min_items",
                                                                           "correction"))
    W = pf.bootstrap_weights(len(data.items), k, seed)
    sa = np.array([data.systems.index(a) for _, a, _ in data.items], dtype=np.int64)
    sb = np.array([data.systems.index(b) for _, _, b in data.items], dtype=np.int64)
    tests = {"length_preference": {j: jd.length_preference(data.V[j], data.H, la, lb, W, alpha=alpha)
                                   for j in data.judges},
             "self_preference": {j: jd.self_preference(data.V[j], data.H, sa, sb, data.systems.index(j), W, alpha=alpha)
                                 for j in data.judges if j in data.systems}}
    rows = []
    for diagnostic, results in tests.items():
        if not results:
            continue
        names, values = list(results), list(results.values())
        formula = values[0].formula
        verdict = conclusions.decide([v.pvalue for v in values], formula=formula,
                                     k=k if formula == "count" else None, correction=correction, alpha=alpha,
                                     n_valid=[v.n_valid for v in values] if formula == "count" else None,
                                     data_floors=[v.data_floor for v in values], min_size=1)
        for i, (judge, v) in enumerate(zip(names, values)):
            rows.append(_comparison_row(judge, diagnostic, v, verdict, i, correction))
    for judge in data.judges:
        rows += _bias_variance_rows(judge, jd.bias_variance(data.V[judge], data.H, W, alpha=alpha))
        if data.runs:      # some chosen judge was run more than once (else no row: the rows of before)
            rows.append(_stability_row(judge, data, W, alpha))
        rows += _alt_test_rows(judge, data.humans, jd.alt_test(data.V[judge], data.H, epsilon=epsilon, alpha=alpha,
                                                                 min_items=min_items))
    return rows


def _none(x):
    import math

    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


_BLANK = {"annotator": "", "system": "", "n": 0, "verdicts": None, "judge_value": None, "human_value": None,
          "difference": None, "lower": None, "upper": None, "pvalue": None, "pvalue_adjusted": None,
          "significant": None, "resolvable": None, "omega": None, "rho": None, "passes": None}

_DEFINITIONS = {
    "length_preference": "judge_value / human_value: share of the decisive verdicts (each order one) choosing the "
                         "longer output (output_length), the humans on the items the judge decided; difference = "
                         "judge - human, percentile interval over paired item resamples; test: exact McNemar on the "
                         "judge's decisive verdicts against the decisive human majority (b: judge longer, majority "
                         "shorter; c: the reverse)",
    "self_preference": "judge_value / human_value: the win rate of the system named as the judge (a tie half) among "
                       "the judge's verdicts and the humans' on the same items; test: two-sided bootstrap p of the "
                       "difference, min(1, 2 min(#d<=0, #d>=0) / n_valid)",
    "bias": "AlpacaEval's bias: 1 - share of items whose judge mode (unique most frequent verdict) equals the human "
            "majority label; lower/upper its percentile interval over item resamples",
    "variance": "AlpacaEval's variance: expected leave-one-out disagreement of one judge verdict with the mode of its "
                "other verdicts on the item (two orders: 1 - position consistency)",
    "repetition_stability": "the judge's agreement with itself: share of the pairs of its runs (preferences.replicate) "
                            "on the same item and order that gave the same verdict (a, b, tie), pooled over the cells; "
                            "n: items with such a pair, verdicts: the pairs; percentile interval over item resamples; "
                            "NULL for a judge run once. Every other diagnostic reads the mean over the runs",
    "alt_test": "Calderon et al. 2025: omega = share of annotators whose H0 (rho_f <= rho_h - epsilon) is rejected "
                "(one-sided paired t-test, Benjamini-Yekutieli over the annotators); passes = omega >= 0.5; rho = the "
                "average advantage probability mean_j rho_f_j",
}


def _comparison_row(judge, diagnostic, v, verdict, i, correction) -> dict:
    from metaeval.runs.engine import bookkeeping

    defined = not (v.pvalue != v.pvalue)
    return {**_BLANK, "judge": judge, "diagnostic": diagnostic, "system": judge if diagnostic == "self_preference" else "",
            "n": v.n, "verdicts": v.verdicts, "judge_value": _none(v.judge), "human_value": _none(v.human),
            "difference": _none(v.difference), "lower": _none(v.lower), "upper": _none(v.upper),
            "pvalue": _none(v.pvalue), "pvalue_adjusted": _none(float(verdict.adjusted[i])),
            "significant": bool(verdict.significant[i]) if defined else None, "resolvable": verdict.resolvable,
            "conventions": bookkeeping.conventions_json({
                "definition": _DEFINITIONS[diagnostic], "correction": f"{correction} over the judges",
                "resolution": None if verdict.resolution is None else verdict.resolution.as_dict(),
                "n_valid": v.n_valid, "data_floor": v.data_floor})}


def _bias_variance_rows(judge, r) -> list[dict]:
    from metaeval.runs.engine import bookkeeping

    return [{**_BLANK, "judge": judge, "diagnostic": name, "n": n, "judge_value": _none(value), "lower": _none(lo),
             "upper": _none(hi), "conventions": bookkeeping.conventions_json({"definition": _DEFINITIONS[name]})}
            for name, n, value, lo, hi in (("bias", r.n_bias, r.bias, r.bias_lower, r.bias_upper),
                                           ("variance", r.n_variance, r.variance, r.variance_lower, r.variance_upper))]


def _stability_row(judge, data, W, alpha) -> dict:
    """Repetition stability: the judge's agreement with itself across its runs (NULL: run once)."""
    from metaeval.analyses import preferences as pf
    from metaeval.analyses import replicates as rp
    from metaeval.runs.engine import bookkeeping

    runs = data.runs.get(judge)
    value = lower = upper = None
    n = pairs = 0
    if runs is not None:
        point, boot = rp.stability(runs, len(data.items), W)
        lo, hi, _ = pf._percentile(boot, point, alpha)
        value, lower, upper = _none(point), _none(lo), _none(hi)
        agree, per_item = rp.stability_terms(runs, len(data.items))
        n, pairs = int((per_item > 0).sum()), int(per_item.sum())
    return {**_BLANK, "judge": judge, "diagnostic": "repetition_stability", "n": n, "verdicts": pairs,
            "judge_value": value, "lower": lower, "upper": upper,
            "conventions": bookkeeping.conventions_json({"definition": _DEFINITIONS["repetition_stability"]})}


def _alt_test_rows(judge, humans, r) -> list[dict]:
    import numpy as np

    from metaeval.runs.engine import bookkeeping

    conventions = bookkeeping.conventions_json({"definition": _DEFINITIONS["alt_test"], "epsilon": r.epsilon,
                                                "min_items": r.min_items,
                                                "correction": "by over the annotators",
                                                "resolution": r.verdict.resolution.as_dict()
                                                if r.verdict.resolution is not None else None})
    rows = [{**_BLANK, "judge": judge, "diagnostic": "alt_test", "n": int((~np.isnan(r.pvalue)).sum()), "omega": _none(r.omega),
             "rho": _none(r.rho), "passes": r.passes, "resolvable": r.verdict.resolvable, "conventions": conventions}]
    for j, name in enumerate(humans):
        p = float(r.pvalue[j])
        rows.append({**_BLANK, "judge": judge, "diagnostic": "alt_test_annotator", "annotator": name,
                     "n": int(r.n[j]), "judge_value": _none(float(r.rho_judge[j])),
                     "human_value": _none(float(r.rho_human[j])),
                     "difference": _none(float(r.rho_judge[j] - r.rho_human[j])), "pvalue": _none(p),
                     "pvalue_adjusted": _none(float(r.verdict.adjusted[j])),
                     "significant": bool(r.verdict.significant[j]) if p == p else None,
                     "resolvable": r.verdict.resolvable, "conventions": conventions})
    return rows
