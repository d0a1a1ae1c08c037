"""``metaeval correlate|ci|compare``: correlations with a human judgment, their confidence
intervals and the tests between metrics; each a call of :mod:`metaeval.runs.api`."""

from __future__ import annotations

import sys

import click

from metaeval.cli.app import (ALPHA, RESAMPLES, Context, FiniteFloatRange, LazyChoice, _analysis_options,
                              _resampling_options, fmt_option, interrupted, is_text, show)


def _analyse(obj: Context, call, fmt: str = "text", **kwargs):
    """Run one :mod:`metaeval.runs.api` function, print what it computed (to stderr unless
    ``fmt`` is text, so that stdout holds only the rows); its Outcome and latest rows."""
    err = not is_text(fmt)
    with obj.open() as wh:
        try:
            out = call(wh, **kwargs, progress=sys.stderr.isatty())
        except KeyboardInterrupt as exc:
            raise interrupted(exc, "the results finished so far are saved; "
                                   "run the same command again to resume") from None
        for reason in out.skipped.values():
            click.echo(f"skipped: {reason}", err=True)
        s = out.summary
        if s.up_to_date:
            click.echo(f"{out.analysis.table}: all {s.tasks} results up to date; nothing computed (--force recomputes)",
                       err=err)
        else:
            click.echo(f"{out.analysis.table}: run {s.run_id}: computed {s.computed} of {s.tasks}, wrote {s.written} rows",
                       err=err)
        from metaeval.runs import annotators

        ceiling = annotators.ceilings(wh, out.scope.dataset, out.scope.human)
        return out, annotators.with_ceilings(out.rows(wh), ceiling)


def _echo_ceiling(frame) -> None:
    """The human ceiling of the shown levels and coefficients (stored by `metaeval annotators`)."""
    ceiling = frame.drop_duplicates(["level", "coefficient"]).dropna(subset=["human_ceiling"])
    if not ceiling.empty:
        from metaeval.runs import annotators

        click.echo(f"human ceiling (leave-one-out, metaeval annotators): {annotators.ceiling_text(ceiling)}")


def _ties_options(f):
    """--epsilon and --tie-calibration, turned into coefficient labels (``acc-23[eps=E]``,
    ``acc-23[tie-calibrated]``) by :func:`metaeval.runs.runner.with_tie_threshold`."""
    f = click.option("--tie-calibration", is_flag=True,
                     help="Choose the tie threshold that maximises kendall-23 / acc-23 at each level "
                          "(Deutsch et al. 2023; default coefficient acc-23); resamples re-calibrate.")(f)
    f = click.option("--epsilon", type=FiniteFloatRange(0), default=None,
                     help="Tie threshold on the metric's differences (|d| <= E is a tie) for kendall-a, "
                          "kendall (b), kendall-23, acc-23.")(f)
    return f


def _tied(coefficients, epsilon, tie_calibration):
    from metaeval.errors import WarehouseError
    from metaeval.runs import runner

    try:
        return runner.with_tie_threshold(coefficients, epsilon, tie_calibration)
    except WarehouseError as exc:
        raise click.UsageError(str(exc)) from None


@click.command()
@_analysis_options
@_ties_options
@fmt_option()
@click.pass_obj
def correlate(obj, dataset, human, metrics, levels, coefficients, system_inputs, jobs, force, epsilon,
              tie_calibration, fmt):
    """Correlations of metrics with a human judgment (system, summary, global level).

    text: one row per metric, a column per level and coefficient; the other formats: the
    latest rows (json and csv with every column, conventions included)."""
    import pandas as pd

    from metaeval.runs import api

    coefficients = _tied(coefficients, epsilon, tie_calibration)
    _, frame = _analyse(obj, api.correlate, fmt, dataset=dataset, human=human, metrics=metrics, levels=levels,
                        coefficients=coefficients, system_inputs=system_inputs, jobs=jobs, force=force)
    if not is_text(fmt):
        show(_columns(frame, fmt, ["metric", "level", "coefficient", "value", "n_systems", "n_inputs",
                                   "human_ceiling"]), fmt,
             caption=f"Correlation with {human} on {dataset}")
        return
    wide = frame.pivot_table(index="metric", columns=["level", "coefficient"], values="value", dropna=False)
    with pd.option_context("display.max_rows", None, "display.width", 200, "display.float_format", "{:.3f}".format):
        click.echo(wide.to_string())
    _echo_ceiling(frame)


@click.command()
@_analysis_options
@click.option("--method", type=LazyChoice("metaeval.runs.runner:CI_METHODS"), default="boot-both", show_default=True)
@_resampling_options
@click.option("--alpha", default=0.05, show_default=True, type=ALPHA)
@click.option("--resample-annotators", type=LazyChoice("metaeval.runs.runner:ANNOTATOR_RESAMPLING"), default=None,
              help="Also re-draw the human annotators in every resample: each cell's (cells) or the panel's "
                   "ids once per resample (panel, for ids that are the same people everywhere).")
@_ties_options
@fmt_option()
@click.pass_obj
def ci(obj, dataset, human, metrics, levels, coefficients, system_inputs, jobs, force, method, k, seed, alpha,
       resample_annotators, epsilon, tie_calibration, fmt):
    """Confidence intervals of correlations (Fisher or bootstrap over systems/inputs/both)."""
    from metaeval.runs import api

    coefficients = _tied(coefficients, epsilon, tie_calibration)
    _, frame = _analyse(obj, api.ci, fmt, dataset=dataset, human=human, metrics=metrics, levels=levels,
                        coefficients=coefficients, system_inputs=system_inputs, jobs=jobs, force=force, method=method,
                        k=k, alpha=alpha, seed=seed, resample_annotators=resample_annotators)
    cols = ["metric", "level", "coefficient", "estimate", "lower", "upper"]
    if is_text(fmt):
        show(frame[cols].round(4), fmt)
        _echo_ceiling(frame)
    else:
        show(_columns(frame, fmt, cols + ["method", "alpha", "k", "seed", "human_ceiling"]), fmt,
             caption=f"{100 * (1 - alpha):g}% {method} CIs of the correlation with {human} on {dataset}"
                     + ("" if method == "fisher" else f" (k={k}, seed={seed})")
                     + (f", annotators re-drawn ({resample_annotators})" if resample_annotators else ""))


@click.command()
@_analysis_options
@click.option("--method", type=LazyChoice("metaeval.runs.runner:TEST_METHODS"), default="perm-both", show_default=True)
@_resampling_options
@click.option("--alpha", default=0.05, show_default=True, type=ALPHA)
@click.option("--alternative", type=LazyChoice("metaeval.runs.runner:ALTERNATIVES"), default="greater",
              show_default=True, help="H1 of each ordered pair (a, b): corr(a, human) > corr(b, human).")
@click.option("--correction", type=LazyChoice("metaeval.runs.runner:CORRECTIONS"), default="none",
              show_default=True, help="Multiple-comparison correction.")
@click.option("--correction-group", type=LazyChoice("metaeval.runs.runner:CORRECTION_GROUPS"), default="metric",
              show_default=True,
              help="Family of the correction: the pairs of one metric_a (as in the paper), or all pairs; "
                   "always within one level and coefficient.")
@_ties_options
@click.option("--resample-annotators", type=LazyChoice("metaeval.runs.runner:ANNOTATOR_RESAMPLING"), default=None,
              help="Paired bootstrap tests: also re-draw the human annotators in every resample (cells or panel, "
                   "as for ci).")
@click.option("--k-block", type=RESAMPLES, default=None,
              help="Early stopping of the permutation tests (mt-metrics-eval): after every K_BLOCK resamples, "
                   "stop when the share as extreme as delta is < 0.02 or > 0.5; resamples used per row in k_used.")
@fmt_option()
@click.pass_obj
def compare(obj, dataset, human, metrics, levels, coefficients, system_inputs, jobs, force, method, k, seed, alpha,
            alternative, correction, correction_group, epsilon, tie_calibration, resample_annotators, k_block, fmt):
    """Test every ordered pair of metrics: is corr(a, human) > corr(b, human)?"""
    from metaeval.runs import api

    coefficients = _tied(coefficients, epsilon, tie_calibration)
    out, frame = _analyse(obj, api.compare, fmt, dataset=dataset, human=human, metrics=metrics, levels=levels,
                          coefficients=coefficients, system_inputs=system_inputs, jobs=jobs, force=force,
                          method=method, k=k, alpha=alpha, seed=seed, alternative=alternative, correction=correction,
                          correction_group=correction_group, k_block=k_block,
                          resample_annotators=resample_annotators)
    frame = frame[(frame["correction"] == correction) & (frame["correction_group"] == correction_group)]
    cols = ["metric_a", "metric_b", "level", "coefficient", "delta", "p_value", "p_adjusted", "significant"]
    if not is_text(fmt):  # every row; the hints below are for a terminal
        show(_columns(frame, fmt, cols + ["method", "alternative", "correction", "family_size", "alpha"]), fmt,
             caption=f"{method} tests ({alternative}; correction {correction} per {correction_group}) of the "
                     f"correlation with {human} on {dataset}")
        return
    if len(frame) <= 60:
        show(frame[cols].round(4), "table")
    n = int(frame["significant"].fillna(False).astype(bool).sum())
    click.echo(f"{n} of {len(frame)} ordered pairs significant at alpha={alpha} ({correction}); draw them with:")
    for level in out.scope.levels:
        for coefficient in out.scope.coefficients:
            click.echo("  " + obj.heatmap_command(out.scope.dataset, out.scope.human, level, coefficient, method,
                                                  alternative, correction, correction_group, alpha,
                                                  f"tests-{level}-{coefficient}.png"))


def _columns(frame, fmt: str, shown: list[str]):
    """json and csv: every column (with dataset, human, conventions...); markdown and latex:
    ``shown``, the columns a reader needs."""
    return frame if fmt in ("json", "csv") else frame[shown]


COMMANDS = [correlate, ci, compare]
