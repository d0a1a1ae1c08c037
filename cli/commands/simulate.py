"""``metaeval simulate coverage|power``: which CI to trust on a dataset, and the power of each test
(Deutsch, Dror & Roth 2021, §5), persisted. ``metaeval normality`` (appendix A) is its family's
generated command (:mod:`metaeval.runs.metrics.simulation_families`)."""

from __future__ import annotations


import click

from metaeval.cli.app import Context, Group, interrupted, show, say
from metaeval.cli.families import options_of
from metaeval.cli.progress import terminal_progress
from metaeval.cli.sections import topic


def _report(table: str, summary) -> None:
    from metaeval.analyses import simulation

    if summary.up_to_date:
        say(f"{table}: all {summary.results} results up to date; nothing computed (--force recomputes)")
    else:
        reused = f", reused {summary.reused_blocks} blocks of earlier runs" if summary.reused_blocks else ""
        say(f"{table}: run {summary.run_id}: computed {summary.computed_blocks} blocks (of up to "
                   f"{simulation.TRIAL_BLOCK} trials){reused}; wrote {summary.written} of {summary.results} results")


def _run(build):
    try:
        return build()
    except KeyboardInterrupt as exc:
        raise interrupted(exc, "the finished blocks of trials are saved; "
                          "run the same command again to resume") from None


@topic("metrics")
@click.group(cls=Group, short_help="The paper's simulations (§5): CI coverage on held-out data, and power.")
def simulate():
    """The paper's simulations (§5): CI coverage of held-out data, and statistical power."""


@simulate.command("coverage", short_help='How often a CI on half of the data contains the correlation on the rest.')
@options_of("simulate-coverage")
@click.pass_obj
def coverage(obj: Context, dataset, human, levels, trials, alpha, system_inputs, jobs, force, k, seed, metrics,
             coefficients, methods):
    """How often a CI computed on a random half of the systems and inputs contains the
    correlation of the other half (the paper's Table 1); table ci_coverage."""
    from metaeval.runs.metrics import simulation as simulation_runs

    with obj.open() as wh:
        summary = _run(lambda: simulation_runs.simulate_coverage(
            wh, dataset, human, metrics, levels=levels, coefficients=coefficients, methods=methods, trials=trials,
            k=k, alpha=alpha, seed=seed, system_inputs=system_inputs, jobs=jobs, force=force,
            progress=terminal_progress()))
        _report("ci_coverage", summary)
        frame = simulation_runs.with_coverage_tests(summary.rows).sort_values(["metric", "level", "coefficient",
                                                                                "method"])
    from metaeval.analyses.conclusions import p_text

    shown = frame[["metric", "level", "coefficient", "method", "trials", "contains", "too_high", "too_low",
                   "coverage"]].round(3)
    shown["coverage"] = [f"{c:.3f}{'*' if b else ''}" if c == c else "undefined"
                         for c, b in zip(frame["coverage"].astype(float), frame["bold"])]
    shown["z_test_p"] = ["closest" if c else p_text(p, latex=False) for c, p in zip(frame["closest"], frame["p_z"])]
    show(shown, "table")
    click.echo("z_test_p: one-tailed difference-of-proportions z-test against the method whose coverage is\n"
               "closest to 1 - alpha (below 1); *: that method, significantly different from every other (bold).")


@simulate.command("power", short_help='How often each test finds ROUGE-1 better than its degraded variants.')
@options_of("simulate-power")
@click.pass_obj
def power(obj: Context, dataset, human, levels, trials, alpha, system_inputs, jobs, force, k, seed, variant,
          proportions, coefficients, methods):
    """How often each test concludes ROUGE-1 > R_k, ROUGE-1 on a random share of the tokens
    (the paper's Figure 3); scored from the stored texts; table power."""
    from metaeval.runs.metrics import simulation as simulation_runs

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
    show(wide.round(3), "text")


COMMANDS = [simulate]
