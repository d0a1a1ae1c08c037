"""``metaeval detection``: metrics judged as detectors on binary labels (ROC-AUC, balanced accuracy)."""

from __future__ import annotations

import json

import click

from metaeval.cli.app import (ALPHA, RESAMPLES, SEED, Context, FiniteFloatRange, LazyChoice, _parse_where,
                              fmt_option, is_text, show, show_blocks, subset_options)

ROWS = ["metric", "group", "n", "n_positive", "roc_auc", "roc_auc_lower", "roc_auc_upper", "threshold",
        "balanced_accuracy", "balanced_accuracy_lower", "balanced_accuracy_upper", "tune_balanced_accuracy"]
TESTS = ["statistic", "group", "metric_a", "metric_b", "value_a", "value_b", "delta", "p_value", "p_adjusted",
         "significant"]


@click.command()
@click.option("--dataset", required=True, help="Dataset to analyse.")
@click.option("--human", required=True, help="The human judgment giving the labels, e.g. consistent.")
@click.option("--positive", required=True, type=FiniteFloatRange(), metavar="V",
              help="A cell is positive (consistent) when its human value is >= V (<= V for a lower-is-better "
                   "judgment); a 0/1 label: --positive 1.")
@click.option("--metric", "metrics", multiple=True, metavar="GLOB",
              help="Metrics (globs over automatic measures). Default: all. Repeatable.")
@subset_options(by=True)
@click.option("--tune", multiple=True, metavar="ATTR=VALUE", callback=_parse_where,
              help="Tune each metric's threshold (maximising balanced accuracy) on the cells of this subset, e.g. "
                   "split=validation (with --by, per group), and apply it to the --where cells. Repeatable (AND). "
                   "Default: tuned on the evaluated cells themselves (optimistic).")
@click.option("--threshold", type=FiniteFloatRange(), default=None, metavar="T",
              help="A fixed threshold instead of a tuned one: predicted positive when score > T (score < T for a "
                   "lower-is-better measure: T in each measure's own scale).")
@click.option("--k", default=1000, show_default=True, type=RESAMPLES,
              help="Bootstrap resamples of the intervals and the paired tests (each re-tunes the threshold).")
@click.option("--alpha", default=0.05, show_default=True, type=ALPHA, help="Intervals 1 - alpha; tests' level.")
@click.option("--seed", default=0, show_default=True, type=SEED, help="Seed of the resampling.")
@click.option("--alternative", type=LazyChoice("metaeval.analyses.stats.vocabulary:ALTERNATIVES"),
              default="two-sided", show_default=True, help="H1 of the paired tests between metrics.")
@click.option("--correction", type=LazyChoice("metaeval.analyses.stats.vocabulary:CORRECTIONS"), default="holm",
              show_default=True, help="Multiple-comparison correction of the paired tests.")
@click.option("--correction-group", type=LazyChoice("metaeval.analyses.stats.vocabulary:CORRECTION_GROUPS"),
              default="metric", show_default=True,
              help="The family corrected together: each metric_a's tests (per group and statistic), or all.")
@click.option("--tests/--no-tests", default=True, show_default=True, help="Paired tests between the metrics.")
@click.option("--force", is_flag=True, help="Recompute even what is up to date.")
@fmt_option()
@click.pass_obj
def detection(obj: Context, dataset, human, positive, metrics, by, where, tune, threshold, k, alpha, seed,
              alternative, correction, correction_group, tests, force, fmt):
    """Metrics judged as detectors of the cells a binary human judgment marks positive.

    Per metric: ROC-AUC, and the balanced accuracy at the threshold tuned on --tune (exact search
    over the distinct scores, the smallest of equal maxima) or fixed by --threshold, on the --where
    cells; with --by, per group (a threshold tuned per group) and their unweighted macro average
    (group *). Percentile bootstrap intervals over the cells (every resample re-tunes the
    threshold) and paired bootstrap tests between the metrics of the difference in balanced
    accuracy and in ROC-AUC, corrected within each family. Tables detection and detection_tests.
    """
    from metaeval.runs import detection as runs

    with obj.open() as wh:
        out = runs.detection(wh, dataset, human, metrics, positive=positive, where=where, tune=tune, by=by,
                             threshold=threshold, k=k, alpha=alpha, seed=seed, alternative=alternative,
                             correction=correction, correction_group=correction_group, tests=tests, force=force)
    state = ("up to date; nothing computed" if out.run_id is None
             else f"run {out.run_id}: wrote {len(out.rows)} detection rows and {len(out.tests)} tests")
    click.echo(state, err=not is_text(fmt))
    if not is_text(fmt):
        show_blocks([("detection", out.rows), ("detection_tests", out.tests)], fmt)
        return
    subset = out.params.where or "every cell"
    source = (f"fixed threshold {threshold:g}" if threshold is not None else
              f"threshold tuned on {out.params.tune}" if out.params.tune else
              "threshold tuned on the evaluated cells themselves (optimistic)")
    lower = "<=" in (json.loads(out.rows["conventions"].iloc[0]).get("positive", "") if not out.rows.empty else "")
    click.echo(f"\n{human} {'<=' if lower else '>='} {positive:g} is positive; evaluated: {subset}; {source}; "
               f"{100 * (1 - alpha):g}% percentile bootstrap intervals, k={k}, seed={seed}.")
    show(out.rows[ROWS].round(4), "text")
    lower = sorted({m for m, c in zip(out.rows["metric"], out.rows["conventions"])
                    if "lower-is-better" in json.loads(c).get("prediction", "")})
    if lower:
        click.echo(f"Lower-is-better ({', '.join(lower)}): predicted positive when score < threshold "
                   "(the threshold in the measure's own scale).")
    if not out.tests.empty:
        click.echo(f"\nPaired bootstrap tests ({alternative}, {correction} within each "
                   f"{'metric_a' if correction_group == 'metric' else 'group'}'s family, alpha {alpha:g}):")
        show(out.tests[TESTS].round(4), "text")


COMMANDS = [detection]
