"""What ``metaeval detection`` and ``metaeval categories`` print (their families'
:meth:`~metaeval.runs.engine.families.Family.present`: :mod:`metaeval.runs.factuality.factuality_families`): the
run's line, the text tables and their notes, the paper tables (markdown, LaTeX); and the figure of
``categories --out``.

Imported when a command prints, never at start-up (pandas is imported here).
"""

from __future__ import annotations

import json

from metaeval.runs.engine.family_present import TEXT, prose, run_of

#: detection's text columns (json and csv give every column)
DETECTION_ROWS = ["metric", "group", "n", "n_positive", "roc_auc", "roc_auc_lower", "roc_auc_upper", "threshold",
                  "balanced_accuracy", "balanced_accuracy_lower", "balanced_accuracy_upper", "tune_balanced_accuracy"]
DETECTION_TESTS = ["statistic", "group", "metric_a", "metric_b", "value_a", "value_b", "delta", "p_value",
                   "p_adjusted", "significant"]


def detection_said(out, params: dict, signature: str | None) -> dict:
    """What detection's output says besides its rows (carried by them: :func:`with_run`): the run,
    its line, the settings of the captions, the tests' "cannot resolve" lines."""
    from metaeval.present import paper_tables

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
    from metaeval.analyses import conclusions
    from metaeval.present import tables

    rows, tests, s = outcome["detection"], outcome["detection_tests"], run_of(outcome["detection"])
    if fmt in ("json", "csv"):
        return tables.render_blocks([("detection", rows), ("detection_tests", tests)], fmt)
    if fmt in ("markdown", "latex"):
        return detection_paper(rows, tests, s, fmt, layout)
    alpha = s["alpha"]
    out = [s["state"] + "\n",
           prose(f"\n{s['human']} {s['relation']} {s['positive']:g} is positive; evaluated: {s['subset']}; "
                 f"{s['source']}; {100 * (1 - alpha):g}% percentile bootstrap intervals, k={s['k']}, "
                 f"seed={s['seed']}."),
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
    from metaeval.analyses import conclusions
    from metaeval.present import paper_tables, ranking_tables

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


# --- categories -----------------------------------------------------------------------------------
#: categories' columns of the text table (json and csv give every column)
CATEGORY_COLUMNS = {"metric": "metric", "level": "level", "coefficient": "coefficient", "category": "category",
                    "category_correlation": "r_category", "overall_correlation": "r_overall",
                    "ablated_correlation": "r_without", "correlation_drop": "drop"}


def figure_file(value) -> None:
    """``--out`` of categories: a .png, .svg or .pdf file in a directory that exists."""
    from pathlib import Path

    from metaeval.errors import WarehouseError

    path = Path(value)
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise WarehouseError(f"{str(path)!r}: unsupported file type {path.suffix or '(no suffix)'!r}; "
                             "use .png, .svg, .pdf")
    if not path.parent.is_dir():
        what = "is not a directory" if path.parent.exists() else "does not exist"
        raise WarehouseError(f"{str(path)!r}: directory {str(path.parent)!r} {what}")


def categories_refusal(warehouse, params: dict, figure=None, overwrite: bool = False, **_):
    """What the command line refuses before categories runs: a usage error's text (no category
    nor ablation; ``--out`` with more than one level or coefficient), or None; an ``--out`` file it
    may not write is a WarehouseError (:func:`metaeval.files.check_output_file`)."""
    from metaeval.errors import Argument, Message

    if not params["category_measures"] and not params["ablations"]:
        return Message("give at least one ", Argument("category_measures", placeholder="CATEGORY=MEASURE"), " or ",
                       Argument("ablations", placeholder="CATEGORY=MEASURE"))
    if figure is not None:
        if len(params["levels"]) != 1 or len(params["coefficients"]) != 1:
            return Message(Argument("figure"), " draws one setting: give one ", Argument("levels"), " and one ",
                           Argument("coefficients"))
        from metaeval import files

        files.check_output_file(figure, warehouse=warehouse, overwrite=overwrite)
    return None


def categories_said(wh, out, params: dict, frame) -> dict:
    """What categories' output says besides its rows (carried by them): the run's line, the
    metrics left out, the caption's settings."""
    from metaeval.runs.engine import signatures
    from metaeval.runs.engine.family_present import run_line

    return {"skipped": [f"skipped: {r}" for r in out.skipped.values()],
            "line": run_line(out.analysis.table, out.summary), "human": params["human"],
            "dataset": params["dataset"], "warehouse": None if getattr(wh, "path", None) is None else str(wh.path),
            "signature": signatures.table_signature(wh, frame)}


def categories_notes(outcome, fmt: str, figure=None, overwrite: bool = False, **_) -> list[str]:
    """The metrics left out; outside text the run's line, and the figure's (drawn now: the text
    says it after its table, :func:`categories`)."""
    s = run_of(outcome)
    if s is None:
        return []
    if fmt in TEXT:
        return s["skipped"]
    return s["skipped"] + [s["line"]] + ([draw(outcome, s, figure, overwrite)] if figure is not None else [])


def categories(outcome, fmt: str, figure=None, overwrite: bool = False, layout: str = "auto") -> str:
    """Text: the run, the rows (:data:`CATEGORY_COLUMNS`), what drop is, the figure's line;
    json and csv: every column; markdown and latex: the paper table (:func:`categories_paper`)."""
    from metaeval.present import tables

    frame, s = outcome, run_of(outcome)
    if fmt in ("json", "csv"):
        return tables.render(frame, fmt)
    if fmt in ("markdown", "latex"):
        return categories_paper(frame, fmt, layout, s["human"], s["dataset"], s["signature"])
    return "".join([prose(s["line"]), tables.render(frame[list(CATEGORY_COLUMNS)].rename(columns=CATEGORY_COLUMNS),
                                                                                   fmt),
                    prose("drop = r_overall - r_without: the fall of the correlation with the overall judgment when "
                          "the category is ignored (> 0: the metric's agreement rests on it); empty: undefined (a "
                          "constant judgment) or no such measure given"),
                    prose(draw(outcome, s, figure, overwrite)) if figure is not None else ""])


def categories_paper(frame, fmt: str, layout: str, human: str, dataset: str, signature: str | None) -> str:
    """The paper table: metrics x (r with the overall judgment, then each category's drop, or its
    r where no ablation was given), LaTeX or the markdown that agrees with it."""
    from metaeval.present import paper_tables
    from metaeval.runs.metrics.evaluate import SYSTEM_INPUTS_TEXT

    protocols = sorted(set(frame["system_inputs"].dropna()))
    measures = "; ".join(f"{c}: " + ", ".join(filter(None, (
        f"judgment {cm}" if isinstance(cm, str) else "", f"ablation {am}" if isinstance(am, str) else "")))
        for c, cm, am in frame.drop_duplicates("category")[["category", "category_measure", "ablated_measure"]]
        .itertuples(index=False))
    caption = (f"Error categories of {human} on {dataset} (FRANK's ablation, Pagnoni et al. 2021): each metric's "
               f"correlation with {human} (overall), then per category the drop of that correlation when the category "
               f"is ignored (drop) or, without an ablation, the correlation with the category's judgment ({measures})"
               + (f"; system scores: {SYSTEM_INPUTS_TEXT.get(protocols[0], protocols[0])}"
                  if len(protocols) == 1 and "system" in set(frame["level"]) else "")
               + (f"; signature {signature}" if signature else "") + ".")
    settings = list(dict.fromkeys(zip(frame["level"], frame["coefficient"])))
    out = []
    for i, (level, coefficient) in enumerate(settings):   # a table per level and coefficient: each fits the page
        part = frame[(frame["level"] == level) & (frame["coefficient"] == coefficient)]
        ranking = paper_tables.categories_ranking(part)
        text = caption if len(settings) == 1 else f"{caption[:-1]}; {level} level, {coefficient}."
        out.append(("\n" if i else "") + (ranking.latex(text, layout) if fmt == "latex" else ranking.markdown(text)))
    return "".join(out)


def draw(frame, s: dict, figure, overwrite: bool) -> str:
    """The drop per category and metric of ``frame`` (one level and coefficient) drawn to
    ``figure`` (written whole or not at all); its line."""
    from pathlib import Path

    import matplotlib.pyplot as plt

    from metaeval import files
    from metaeval.present import figures

    figure = Path(figure)
    human, dataset = s["human"], s["dataset"]
    level, coefficient = frame["level"].iloc[0], frame["coefficient"].iloc[0]
    fig = figures.category_drops(frame, f"Drop of each metric's {level}-level {coefficient} correlation with "
                                        f"{human} ({dataset}) when an error category is ignored: "
                                        f"r(metric, overall) - r(metric, overall without the category)")
    warehouse = None if s["warehouse"] is None else Path(s["warehouse"])
    try:
        with files.atomic_file(figure, warehouse=warehouse, overwrite=overwrite) as tmp:
            fig.savefig(tmp, dpi=150, format=figure.suffix[1:].lower())
    finally:
        plt.close(fig)
    return f"wrote {figure}"
