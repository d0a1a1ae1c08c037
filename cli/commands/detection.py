"""``metaeval detection``: metrics judged as detectors on binary labels (ROC-AUC, balanced accuracy)."""

from __future__ import annotations

import json

import click

from metaeval.cli.app import Context, fmt_option, is_text, layout_option, show, show_blocks, say
from metaeval.cli.families import options_of

ROWS = ["metric", "group", "n", "n_positive", "roc_auc", "roc_auc_lower", "roc_auc_upper", "threshold",
        "balanced_accuracy", "balanced_accuracy_lower", "balanced_accuracy_upper", "tune_balanced_accuracy"]
TESTS = ["statistic", "group", "metric_a", "metric_b", "value_a", "value_b", "delta", "p_value", "p_adjusted",
         "significant"]


@click.command()
@options_of("detection")
@fmt_option()
@layout_option
@click.pass_obj
def detection(obj: Context, dataset, human, positive, metrics, by, where, tune, threshold, k, alpha, seed,
              alternative, correction, correction_group, tests, force, fmt, layout):
    """Metrics judged as detectors of the cells a binary human judgment marks positive.

    Per metric: ROC-AUC, and the balanced accuracy at the threshold tuned on --tune (exact search
    over the distinct scores, the smallest of equal maxima) or fixed by --threshold, on the --where
    cells; with --by, per group (a threshold tuned per group) and their unweighted macro average
    (group *). Percentile bootstrap intervals over the cells (every resample re-tunes the
    threshold) and paired bootstrap tests between the metrics of the difference in balanced
    accuracy and in ROC-AUC, corrected within each family. Tables detection and detection_tests.
    """
    from metaeval.runs.factuality import detection as runs
    from metaeval.runs.engine import signatures

    with obj.open() as wh:
        out = runs.detection(wh, dataset, human, metrics, positive=positive, where=where, tune=tune, by=by,
                             threshold=threshold, k=k, alpha=alpha, seed=seed, alternative=alternative,
                             correction=correction, correction_group=correction_group, tests=tests, force=force)
        signature = signatures.table_signature(wh, out.rows)
    state = ("up to date; nothing computed" if out.run_id is None
             else f"run {out.run_id}: wrote {len(out.rows)} detection rows and {len(out.tests)} tests")
    click.echo(state, err=not is_text(fmt))
    subset = out.params.where or "every cell"
    source = (f"fixed threshold {threshold:g}" if threshold is not None else
              f"threshold tuned on {out.params.tune}" if out.params.tune else
              "threshold tuned on the evaluated cells themselves (optimistic)")
    # a lower-is-better human: a cell is positive when its value is <= positive
    relation = "<=" if "<=" in (json.loads(out.rows["conventions"].iloc[0]).get("positive", "")
                                if not out.rows.empty else "") else ">="
    from metaeval.present import paper_tables

    unresolved = list(dict.fromkeys(paper_tables.detection_unresolved(out.tests).values()))
    if fmt in ("json", "csv"):
        show_blocks([("detection", out.rows), ("detection_tests", out.tests)], fmt)
        for line in unresolved:
            say(line, err=True)
        return
    if fmt in ("markdown", "latex"):
        _paper(out, fmt, layout, dataset=dataset, human=human, positive=positive, subset=subset, source=source,
               k=k, seed=seed, alpha=alpha, alternative=alternative, correction=correction,
               correction_group=correction_group, signature=signature, relation=relation)
        return
    say(f"\n{human} {relation} {positive:g} is positive; evaluated: {subset}; {source}; "
               f"{100 * (1 - alpha):g}% percentile bootstrap intervals, k={k}, seed={seed}.")
    show(out.rows[ROWS].round(4), "text")
    lower = sorted({m for m, c in zip(out.rows["metric"], out.rows["conventions"])
                    if "lower-is-better" in json.loads(c).get("prediction", "")})
    if lower:
        say(f"Lower-is-better ({', '.join(lower)}): predicted positive when score < threshold "
                   "(the threshold in the measure's own scale).")
    if not out.tests.empty:
        say(f"\nPaired bootstrap tests ({alternative}, {correction} within each "
                   f"{'metric_a' if correction_group == 'metric' else 'group'}'s family, alpha {alpha:g}):")
        from metaeval.analyses import conclusions

        show(conclusions.printed_pvalues(out.tests, "count")[TESTS].round(4), "text")
        for line in unresolved:
            say(line)


def _paper(out, fmt: str, layout: str, *, dataset, human, positive, subset, source, k, seed, alpha, alternative,
           correction, correction_group, signature, relation: str = ">=") -> None:
    """The paper table (metrics x groups' ROC-AUC and balanced accuracy, clusters from the paired
    tests) and the tests' table, in LaTeX or in markdown that agrees with it."""
    from metaeval.analyses import conclusions
    from metaeval.present import paper_tables, ranking_tables

    family = "metric_a" if correction_group == "metric" else "group"
    tested = not out.tests.empty
    caption = (f"Metrics as detectors of {human} {relation} {positive:g} on {dataset} (evaluated: {subset}; {source}): ROC-AUC "
               f"and balanced accuracy (Bal. acc.){' per group and their unweighted macro average' if out.params.by else ''}"
               f", {100 * (1 - alpha):g}% percentile bootstrap intervals (k={k}, seed={seed}, every resample re-tunes "
               "the threshold)"
               + (f"; clusters (cl.) from paired bootstrap tests ({alternative}, {correction} within each {family}'s "
                  f"family, alpha={alpha:g}; rule any)" if tested else "")
               + (f"; signature {signature}" if signature else "") + ".")
    ranking = paper_tables.detection_ranking(out.rows, out.tests, alternative=alternative, confidence=1 - alpha)
    click.echo(ranking.latex(caption, layout) if fmt == "latex" else ranking.markdown(caption), nl=False)
    if tested:
        named = conclusions.with_floors(out.tests, "count").assign(level=[paper_tables.group_name(g, out.params.by)[1] or "all cells"
                                        for g in out.tests["group"]],
                                 coefficient=[paper_tables.DETECTION_STATISTICS[s][1] for s in out.tests["statistic"]])
        test_caption = (f"Paired bootstrap tests between the metrics as detectors of {human} {relation} {positive:g} on "
                        f"{dataset} ({alternative}, {correction} within each {family}'s family, k={k}, seed={seed}); AUC: "
                        "ROC-AUC, BA: balanced accuracy; the layout is the one that fits (--layout sets the table "
                        "above).")
        click.echo()
        click.echo(ranking_tables.tests_latex(named, test_caption, alpha=alpha, value="value") if fmt == "latex" else
                   ranking_tables.tests_markdown(named, test_caption, alpha=alpha, value="value"), nl=False)


COMMANDS = [detection]
