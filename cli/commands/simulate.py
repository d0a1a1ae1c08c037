"""``metaeval simulate coverage|power`` and ``metaeval normality``: which CI and which test to
trust on a dataset (Deutsch, Dror & Roth 2021, §5 and appendix A), persisted."""

from __future__ import annotations


import click

from metaeval.cli.app import (ALPHA, Context, Group, LazyChoice, _resampling_options, interrupted,
                              scheduler_option, show, system_inputs_option)
from metaeval.cli.progress import terminal_progress




def _common(f):
    for decorator in reversed([
        click.option("--dataset", required=True, help="Dataset to simulate on."),
        click.option("--human", required=True, help="The human judgment, e.g. litepyramid.recall."),
        click.option("--level", "levels", multiple=True, type=LazyChoice("metaeval.analyses.stats.vocabulary:LEVELS"),
                     help="Correlation level(s). Default: system, summary (the paper's). Repeatable."),
        click.option("--trials", default=1000, show_default=True, type=click.IntRange(1)),
        click.option("--alpha", default=0.05, show_default=True, type=ALPHA,
                     help="CI level 1 - alpha (coverage); significance level (power)."),
        system_inputs_option,
        click.option("--jobs", default=1, show_default=True, type=click.IntRange(1), help="Worker processes."),
        scheduler_option,
        click.option("--force", is_flag=True, help="Recompute even what is up to date."),
    ]):
        f = decorator(f)
    return _resampling_options(f)


def _report(table: str, summary) -> None:
    from metaeval.analyses import simulation

    if summary.up_to_date:
        click.echo(f"{table}: all {summary.results} results up to date; nothing computed (--force recomputes)")
    else:
        reused = f", reused {summary.reused_blocks} blocks of earlier runs" if summary.reused_blocks else ""
        click.echo(f"{table}: run {summary.run_id}: computed {summary.computed_blocks} blocks (of up to "
                   f"{simulation.TRIAL_BLOCK} trials){reused}; wrote {summary.written} of {summary.results} results")


def _run(build):
    try:
        return build()
    except KeyboardInterrupt as exc:
        raise interrupted(exc, "the finished blocks of trials are saved; "
                          "run the same command again to resume") from None


@click.group(cls=Group)
def simulate():
    """The paper's simulations (§5): CI coverage of held-out data, and statistical power."""


@simulate.command("coverage")
@_common
@click.option("--metric", "metrics", multiple=True, required=True, metavar="GLOB",
              help="Metric(s) whose CIs are simulated (globs over automatic measures). Repeatable.")
@click.option("--coefficient", "coefficients", multiple=True, type=LazyChoice("metaeval.analyses.stats.vocabulary:COEFFICIENTS"),
              help="Coefficient(s). Default: all three. Repeatable.")
@click.option("--method", "methods", multiple=True, type=LazyChoice("metaeval.analyses.simulation:CI_METHODS"),
              help="CI method(s), as `metaeval ci`. Default: all four. Repeatable.")
@click.pass_obj
def coverage(obj: Context, dataset, human, levels, trials, alpha, system_inputs, jobs, force, k, seed, metrics,
             coefficients, methods):
    """How often a CI computed on a random half of the systems and inputs contains the
    correlation of the other half (the paper's Table 1); table ci_coverage."""
    from metaeval.runs import simulation as simulation_runs

    with obj.open() as wh:
        summary = _run(lambda: simulation_runs.simulate_coverage(
            wh, dataset, human, metrics, levels=levels, coefficients=coefficients, methods=methods, trials=trials,
            k=k, alpha=alpha, seed=seed, system_inputs=system_inputs, jobs=jobs, force=force,
            progress=terminal_progress()))
        _report("ci_coverage", summary)
        frame = summary.rows.sort_values(["metric", "level", "coefficient", "method"])
    show(frame[["metric", "level", "coefficient", "method", "trials", "contains", "too_high", "too_low",
                "coverage"]].round(3), "table")


@simulate.command("power")
@_common
@click.option("--rouge-variant", "variant", type=LazyChoice("metaeval.runs.simulation:ROUGE_VARIANTS"), default="recall",
              show_default=True,
              help="ROUGE-1 statistic compared with R_k (the paper: recall on REALSumm, f1 on SummEval).")
@click.option("--proportions", default=None, metavar="LIST",
              help="Comma-separated shares of each candidate's tokens R_k keeps. "
                   "Default: 0.05, 0.1, 0.2, ..., 0.9, 1.0 (the paper's).")
@click.option("--coefficient", "coefficients", multiple=True, type=LazyChoice("metaeval.analyses.stats.vocabulary:COEFFICIENTS"),
              default=("pearson",), show_default=True, help="Coefficient(s). Repeatable.")
@click.option("--method", "methods", multiple=True, type=LazyChoice("metaeval.analyses.simulation:TEST_METHODS"),
              help="Test(s), as `metaeval compare`. Default: williams, boot-both, perm-both (the paper's). "
                   "Repeatable.")
@click.pass_obj
def power(obj: Context, dataset, human, levels, trials, alpha, system_inputs, jobs, force, k, seed, variant,
          proportions, coefficients, methods):
    """How often each test concludes ROUGE-1 > R_k, ROUGE-1 on a random share of the tokens
    (the paper's Figure 3); scored from the stored texts; table power."""
    from metaeval.runs import simulation as simulation_runs

    if proportions is None:
        proportions = ",".join(map(str, simulation_runs.PROPORTIONS))
    try:
        shares = [float(p) for p in proportions.split(",") if p.strip()]
    except ValueError:
        raise click.BadParameter(f"not a comma-separated list of numbers: {proportions!r}",
                                 param_hint="--proportions") from None
    with obj.open() as wh:
        summary = _run(lambda: simulation_runs.simulate_power(
            wh, dataset, human, variant=variant, proportions=shares, levels=levels, coefficients=coefficients,
            methods=methods, trials=trials, k=k, alpha=alpha, seed=seed, system_inputs=system_inputs, jobs=jobs,
            force=force, progress=terminal_progress()))
        _report("power", summary)
        frame = summary.rows
    wide = frame.pivot_table(index="proportion", columns=["level", "coefficient", "method"], values="power")
    click.echo(wide.round(3).to_string())


@click.command("normality")
@click.option("--dataset", required=True)
@click.option("--measure", "measures", multiple=True, metavar="GLOB",
              help="Measures to test (globs). Default: all. Repeatable.")
@click.option("--force", is_flag=True, help="Recompute even what is up to date.")
@click.pass_obj
def normality(obj: Context, dataset, measures, force):
    """Shapiro-Wilk normality of the system means, and the percent of inputs whose scores fail
    it at p < 0.05 (the paper's appendix A); table normality."""
    from metaeval.runs import simulation as simulation_runs

    with obj.open() as wh:
        summary = simulation_runs.normality(wh, dataset, measures, force=force)
        if summary.up_to_date:
            click.echo(f"normality: all {summary.results} results up to date; nothing computed (--force recomputes)")
        else:
            click.echo(f"normality: run {summary.run_id}: wrote {summary.written} rows")
        frame = simulation_runs.latest_normality(wh, dataset, measures)
    show(frame[["measure", "level", "statistic", "p_value", "percent_significant", "n"]].round(4), "table")


COMMANDS = [simulate, normality]
