"""``metaeval agreement``: inter-metric agreement by score range and by input properties
(Bhandari et al. 2020), without human judgments, persisted like the other analyses."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from metaeval.cli.app import Context, fmt_option, interrupted, is_text, show_blocks, say, show
from metaeval.cli.families import options_of
from metaeval.cli.progress import terminal_progress

if TYPE_CHECKING:  # annotations only (a light start-up for `--help`)
    import pandas as pd


#: Up to this many metrics the tau tables are printed; beyond, a summary line.
MAX_PRINTED_METRICS = 8


@click.command("agreement")
@options_of("agreement")
@fmt_option(help="text: the tau tables and means; json, csv, markdown, latex: the latest rows of "
                 "score_range_agreement and property_agreement (json: an object with one list each).")
@click.pass_obj
def agreement_command(obj: Context, dataset, metrics, alpha, significant_only, normalisation, bins, protocol, pairs,
                      baseline, seed, jobs, force, fmt):
    """Do metrics agree with each other in the low, middle and top of each input's score range?

    Kendall tau between every pair of metrics over the summaries of each input in the bottom,
    middle and top third of its score range (L, M, T) and cumulatively (L+M+T, M+T), averaged
    over inputs; pairwise disagreement by bin with a random-score baseline; input properties
    (ease of summarisation; abstractiveness and coverage when documents are stored) and the
    correlation of per-input tau with each.
    """
    from metaeval.runs.agreement import score_ranges as agreement_runs

    with obj.open() as wh:
        scope = agreement_runs.resolve(wh, dataset, metrics)
        try:
            s = agreement_runs.run_agreement(wh, scope, normalisation=normalisation, alpha=alpha,
                                             significant_only=significant_only, jobs=jobs, force=force,
                                             progress=terminal_progress(), bins=bins, protocol=protocol,
                                             pairs=pairs, baseline=baseline, seed=seed)
        except KeyboardInterrupt as exc:
            raise interrupted(exc, "the results finished so far are saved; "
                              "run the same command again to resume") from None
        err = not is_text(fmt)  # stdout then holds only the rows
        if s.up_to_date:
            say("agreement: all results up to date; nothing computed (--force recomputes)", err=err)
        else:
            for table, r in (("score_range_agreement", s.score_ranges), ("property_agreement", s.by_property)):
                state = "up to date" if r.up_to_date else f"run {r.run_id}: computed {r.computed}, wrote {r.written} rows"
                say(f"{table}: {r.tasks} results, {state}", err=err)
            p = s.properties
            say(f"input_properties: {'up to date' if p.up_to_date else f'run {p.run_id}: wrote {p.written} rows'}",
                       err=err)
        if s.properties.missing:
            say(f"note: {s.properties.missing}", err=err)
        rows = agreement_runs.latest_rows(wh, scope, normalisation, alpha, significant_only)
        by_property = agreement_runs.latest_property_rows(wh, scope, alpha, significant_only)
    if not is_text(fmt):
        if fmt not in ("json", "csv"):
            rows = rows[[c for c in ("metric_a", "metric_b", "bin", "n_inputs", "tau", "disagreement",
                                     "random_disagreement") if c in rows.columns]]
        show_blocks([("score_range_agreement", rows.reset_index(drop=True)),
                     ("property_agreement", by_property),
                     *([] if s.curves is None else [("agreement_curves", s.curves)])], fmt)
        return
    _print(rows, by_property, len(scope.metrics), obj, dataset)
    if s.curves is not None:
        _print_curves(s.curves)


def _print(rows: pd.DataFrame, by_property: pd.DataFrame, n_metrics: int, obj: Context, dataset: str) -> None:
    import pandas as pd

    from metaeval.analyses import agreement

    if n_metrics <= MAX_PRINTED_METRICS:
        for setting in ("non-cumulative", "cumulative"):
            say(f"\nKendall tau, {setting} bins (mean over inputs):")
            show(agreement.tau_matrix(rows, setting).round(3), "text")
    means = rows.groupby("bin", sort=False)[["tau", "disagreement", "random_disagreement"]].mean()
    say("\nMean over metric pairs, by bin:")
    show(means.reindex(pd.Index(list(agreement.BINS), name="bin")).round(3), "text")
    if not by_property.empty:
        say("\nPer-input tau (all summaries) against input properties, mean over metric pairs:")
        show(by_property.groupby("property")[["n_used", "pearson", "spearman"]].mean().round(3), "text")
    say("\nEverything is in the warehouse: "
               + ", ".join(f"`{obj.command('results', table, '--dataset', dataset)}`"
                           for table in ("score_range_agreement", "input_properties", "property_agreement")) + ".")


def _print_curves(curves: pd.DataFrame) -> None:
    """Mean over metric pairs of each statistic per bin, one table per protocol and baseline
    (3 decimals, through the text table helper: it fits the terminal)."""
    if curves.empty:
        return
    for (protocol, baseline), g in curves.groupby(["protocol", "baseline"], sort=False):
        table = g.pivot_table(index=["bin", "lower", "upper"], columns="statistic", values="value", aggfunc="mean")
        scores = "Uniform(0, 1) random scores" if baseline == "random" else "the metrics' scores"
        say(f"\n{protocol} bins, {scores} (mean over metric pairs):")
        table.columns.name = None
        show(table.reset_index().round(3), "text")
    say("(table agreement_curves: per metric pair, with counts)")


COMMANDS = [agreement_command]
