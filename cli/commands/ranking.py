"""``metaeval accuracy``: pairwise accuracy (Louis & Nenkova 2013), persisted like
``correlate``/``ci``/``compare`` (``systems-agreement``, ``winners`` and ``replicability`` are
their families' generated commands: :mod:`metaeval.runs.ranking_families`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from metaeval.cli.app import (Context, fmt_option, interrupted, is_text, report_run, show, show_blocks, say)
from metaeval.cli.families import options_of
from metaeval.cli.progress import terminal_progress

if TYPE_CHECKING:  # annotations only (a light start-up for `--help`)
    import pandas as pd


def _run_analyses(obj: Context, call, shows, fmt: str = "text") -> None:
    """``call(wh, progress)`` (a :mod:`metaeval.runs.ranking` function: its Outcomes), then for
    each Outcome: report, ``show_rows(rows, analysis)`` with ``show_rows`` the function of
    ``shows`` for its table. Text: show_rows prints; other formats: show_rows returns
    (name, rows), printed together."""
    with obj.open() as wh:
        try:
            outcomes = call(wh, terminal_progress())
        except KeyboardInterrupt as exc:
            raise interrupted(exc, "the results finished so far are saved; "
                              "run the same command again to resume") from None
        for reason in (outcomes[0].skipped.values() if outcomes else ()):
            say(f"skipped: {reason}", err=True)
        blocks = []
        for out in outcomes:
            report_run(out.analysis.table, out.summary, fmt)
            block = shows[out.analysis.table](out.rows(wh), out.analysis)
            if block is not None:
                blocks.append(block)
    if blocks:  # the blocks of one table (systems-agreement's tests) as one
        import pandas as pd

        names = list(dict.fromkeys(name for name, _ in blocks))
        show_blocks([(n, pd.concat([f for m, f in blocks if m == n], ignore_index=True)) for n in names], fmt)


@click.command("accuracy")
@options_of("accuracy")
@fmt_option()
@click.pass_obj
def accuracy(obj, dataset, human, metrics, levels, coefficients, alpha, alternative, metric_tolerance,
             human_tolerance, system_inputs, soft, delta_bins, k, seed, pvalue, jobs, force, where, aggregate, fmt):
    """Pairwise accuracy of metrics against a human judgment (Louis & Nenkova 2013).

    Over every pair of systems, the share where the metric orders the pair as the human does
    (sign of the differences, a tie being its own order), at the system level (system means)
    and the micro level (pairs within each input, pooled): table pairwise_accuracy. Also the
    number and percent of inputs whose per-input correlation is significant at --alpha:
    table input_significance. With --soft: soft pairwise accuracy (Thompson et al. 2024), per
    system pair a one-sided paired permutation test over the inputs under the human and under the
    metric, SPA = 1 - mean |p_human - p_metric|: table soft_pairwise_accuracy. With --delta-bins Q:
    also the accuracy and tau within Q bins of the human difference: table delta_bin_accuracy.
    --aggregate median (with --level system, or --soft): a system's score is its median over the
    inputs (Graham 2015), a key of the rows beside the mean's.
    """
    import pandas as pd

    from metaeval.runs import ranking as ranking_runs

    def accuracy_rows(frame, analysis):
        if not is_text(fmt):
            return analysis.table, _shown(frame, fmt, ["metric", "level", "accuracy"])
        wide = frame.pivot_table(index="metric", columns="level", values="accuracy", dropna=False)
        show(wide.round(3), "text")
        _median_note(aggregate)

    def significance_rows(frame, analysis):
        if not is_text(fmt):
            return analysis.table, _shown(frame, fmt, ["metric", "coefficient", "n_inputs", "n_significant",
                                                       "percent_significant"])
        frame = frame.assign(significant=[f"{n} ({p:.1f}%)" for n, p in
                                          zip(frame["n_significant"], frame["percent_significant"])])
        wide = frame.pivot(index="metric", columns="coefficient", values="significant")
        say(f"inputs with a significant correlation (p <= {alpha}, {alternative}), of {frame['n_inputs'].max()}:")
        show(wide, "text")

    def soft_rows(frame, analysis):
        cols = ["metric", "spa", "pairs", "systems_used", "inputs_used"]
        # by SPA, the best first (undefined last; equal SPAs by name), not by name
        frame = frame.sort_values(["spa", "metric"], ascending=[False, True], na_position="last", kind="stable")
        if not is_text(fmt):
            return analysis.table, _shown(frame, fmt, cols)
        show(frame[cols].round(4), fmt)
        _median_note(aggregate)

    def delta_rows(frame, analysis):
        if not is_text(fmt):
            return analysis.table, _shown(frame, fmt, ["metric", "bin", "low", "high", "pairs", "accuracy", "kendall"])
        frame = frame.assign(cell=[f"{a:.3f} / {t:+.3f} ({n})" if pd.notna(a) else f"- ({n})"
                                   for a, t, n in zip(frame["accuracy"], frame["kendall"], frame["pairs"])])
        wide = frame.pivot(index="metric", columns="bin", values="cell")
        say("accuracy / tau (pairs) by bin of |human difference|, bin 0 = the closest pairs:")
        show(wide, "text")

    shows = {"pairwise_accuracy": accuracy_rows, "input_significance": significance_rows,
             "soft_pairwise_accuracy": soft_rows, "delta_bin_accuracy": delta_rows}
    _run_analyses(obj, lambda wh, progress: ranking_runs.accuracy(
        wh, dataset, human, metrics, levels, coefficients, alpha=alpha, alternative=alternative,
        metric_tolerance=metric_tolerance, human_tolerance=human_tolerance, system_inputs=system_inputs, soft=soft,
        delta_bins=delta_bins, k=k, seed=seed, pvalue=pvalue, jobs=jobs, force=force, progress=progress, where=where,
        aggregate=aggregate), shows, fmt)


def _median_note(aggregate: str) -> None:
    if aggregate != "mean":
        say(f"a system's score: its {aggregate} over its inputs (--aggregate {aggregate})")


def _shown(frame: pd.DataFrame, fmt: str, cols: list[str]) -> pd.DataFrame:
    """json and csv: every column of the rows; markdown and latex: ``cols``."""
    return frame.reset_index(drop=True) if fmt in ("json", "csv") else frame[cols].reset_index(drop=True)


COMMANDS = [accuracy]
