"""What ``metaeval detection`` and ``metaeval categories`` print (their families'
:meth:`~metaeval.runs.families.Family.present`: :mod:`metaeval.runs.factuality_families`): the
run's line, the text tables and their notes, the paper tables (markdown, LaTeX); and the figure of
``categories --out``.

Imported when a command prints, never at start-up (pandas is imported here).
"""

from __future__ import annotations

import json

from metaeval.runs.family_present import TEXT, prose, run_of

#: detection's text columns (json and csv give every column)
DETECTION_ROWS = ["metric", "group", "n", "n_positive", "roc_auc", "roc_auc_lower", "roc_auc_upper", "threshold",
                  "balanced_accuracy", "balanced_accuracy_lower", "balanced_accuracy_upper", "tune_balanced_accuracy"]
DETECTION_TESTS = ["statistic", "group", "metric_a", "metric_b", "value_a", "value_b", "delta", "p_value",
                   "p_adjusted", "significant"]


def detection_said(out, params: dict, signature: str | None) -> dict:
    """What detection's output says besides its rows (carried by them: :func:`with_run`): the run,
    its line, the settings of the captions, the tests' "cannot resolve" lines."""
    from metaeval.analyses import paper_tables

    threshold = params["threshold"]
    state = ("up to date; nothing computed" if out.run_id is None
             else f"run {out.run_id}: wrote {len(out.rows)} detection rows and {len(out.tests)} tests")
    source = (f"fixed threshold {threshold:g}" if threshold is not None else
              f"threshold tuned on {out.params.tune}" if out.params.tune else
              "threshold tuned on the evaluated cells themselves (optimistic)")
    # a lower-is-better human: a cell is positive when its value is <= positive
    relation = "<=" if "<=" in (json.loads(out.rows["conventions"].iloc[0]).get("positive", "")
                                if not out.rows.empty else "") else ">="
    return {"run_id": out.run_id, "state": state, "subset": out.params.where or "every cell", "source": source,
            "relation": relation, "by": out.params.by, "signature": signature,
            "unresolved": list(dict.fromkeys(paper_tables.detection_unresolved(out.tests).values())),
            **{k: params[k] for k in ("dataset", "human", "positive", "k", "seed", "alpha", "alternative",
                                      "correction", "correction_group")}}


def detection_notes(outcome, fmt: str) -> list[str]:
    said = run_of(outcome["detection"])
    if said is None or fmt in TEXT:
        return []
    return [said["state"], *(said["unresolved"] if fmt in ("json", "csv") else [])]


def detection(outcome, fmt: str, layout: str = "auto") -> str:
    """Text: the run, the setting, the rows, the lower-is-better note, the tests; json and csv:
    both tables; markdown and latex: the paper tables (:func:`detection_paper`)."""
    from metaeval.analyses import conclusions, tables

    rows, tests, s = outcome["detection"], outcome["detection_tests"], run_of(outcome["detection"])
    if fmt in ("json", "csv"):
        return tables.render_blocks([("detection", rows), ("detection_tests", tests)], fmt)
    if fmt in ("markdown", "latex"):
        return detection_paper(rows, tests, s, fmt, layout)
    alpha = s["alpha"]
    out = [s["state"] + "\n",
           prose(f"\n{s['human']} {s['relation']} {s['positive']:g} is positive; evaluated: {s['subset']}; "
                 f"{s['source']}; {100 * (1 - alpha):g}% percentile bootstrap intervals, k={s['k']}, seed={s['seed']}."),
           tables.render(rows[DETECTION_ROWS].round(4), "text")]
    lower = sorted({m for m, c in zip(rows["metric"], rows["conventions"])
                    if "lower-is-better" in json.loads(c).get("prediction", "")})
    if lower:
        out.append(prose(f"Lower-is-better ({', '.join(lower)}): predicted positive when score < threshold "
                         "(the threshold in the measure's own scale)."))
    if not tests.empty:
        out.append(prose(f"\nPaired bootstrap tests ({s['alternative']}, {s['correction']} within each "
                         f"{'metric_a' if s['correction_group'] == 'metric' else 'group'}'s family, alpha {alpha:g}):"))
        out.append(tables.render(conclusions.printed_pvalues(tests, "count")[DETECTION_TESTS].round(4), "text"))
        out.append(prose(*s["unresolved"]))
    return "".join(out)


def detection_paper(rows, tests, s: dict, fmt: str, layout: str) -> str:
    """The paper table (metrics x groups' ROC-AUC and balanced accuracy, clusters from the paired
    tests) and the tests' table, in LaTeX or in markdown that agrees with it."""
    from metaeval.analyses import conclusions, paper_tables, ranking_tables

    human, relation, positive, dataset, alpha = s["human"], s["relation"], s["positive"], s["dataset"], s["alpha"]
    alternative, correction, k, seed = s["alternative"], s["correction"], s["k"], s["seed"]
    family = "metric_a" if s["correction_group"] == "metric" else "group"
    tested = not tests.empty
    caption = (f"Metrics as detectors of {human} {relation} {positive:g} on {dataset} (evaluated: {s['subset']}; "
               f"{s['source']}): ROC-AUC and balanced accuracy (Bal. acc.)"
               f"{' per group and their unweighted macro average' if s['by'] else ''}"
               f", {100 * (1 - alpha):g}% percentile bootstrap intervals (k={k}, seed={seed}, every resample re-tunes "
               "the threshold)"
               + (f"; clusters (cl.) from paired bootstrap tests ({alternative}, {correction} within each {family}'s "
                  f"family, alpha={alpha:g}; rule any)" if tested else "")
               + (f"; signature {s['signature']}" if s["signature"] else "") + ".")
    ranking = paper_tables.detection_ranking(rows, tests, alternative=alternative, confidence=1 - alpha)
    out = [ranking.latex(caption, layout) if fmt == "latex" else ranking.markdown(caption)]
    if tested:
        named = conclusions.with_floors(tests, "count").assign(
            level=[paper_tables.group_name(g, s["by"])[1] or "all cells" for g in tests["group"]],
            coefficient=[paper_tables.DETECTION_STATISTICS[x][1] for x in tests["statistic"]])
        test_caption = (f"Paired bootstrap tests between the metrics as detectors of {human} {relation} {positive:g} "
                        f"on {dataset} ({alternative}, {correction} within each {family}'s family, k={k}, "
                        f"seed={seed}); AUC: ROC-AUC, BA: balanced accuracy; the layout is the one that fits "
                        "(--layout sets the table above).")
        out += ["\n", (ranking_tables.tests_latex(named, test_caption, alpha=alpha, value="value") if fmt == "latex"
                       else ranking_tables.tests_markdown(named, test_caption, alpha=alpha, value="value"))]
    return "".join(out)
