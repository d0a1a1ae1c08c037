"""``metaeval demo``: a seeded synthetic dataset, ingested and analysed (:mod:`metaeval.runs.demo`)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from metaeval.cli.app import SEED, _command_line, echo_reports, show, say
from metaeval.cli.families import click_option
from metaeval.runs.engine.options import K
from metaeval.cli.progress import terminal_progress
from metaeval.cli.sections import topic

#: The demo's smallest dataset (``metaeval.runs.demo.generate`` refuses fewer systems or inputs).
DEMO_MIN = 3


@topic("start")
@click.command()
@click.option("--dataset", default="demo", show_default=True)
@click.option("--systems", "n_systems", default=12, show_default=True, type=click.IntRange(DEMO_MIN))
@click.option("--inputs", "n_inputs", default=50, show_default=True, type=click.IntRange(DEMO_MIN))
@click.option("--seed", default=0, show_default=True, type=SEED)
@click_option(K.but(help="Resamples of the CIs and tests."))
@click.pass_obj
def demo(obj, dataset, n_systems, n_inputs, seed, k):
    """Generate a seeded synthetic dataset, ingest it, and run a first analysis.

    Correlations of the four metrics with the human judgment, 95% Boot-Both CIs and
    two-sided Perm-Both tests (Holm-corrected), at the system and summary level, all persisted.
    """
    from metaeval.runs import demo as demo_data
    from metaeval.runs.engine import parameters

    parameters.check_k(k, demo_data.ALPHA, "interval")   # before anything is written
    with tempfile.TemporaryDirectory() as tmp, obj.open(create=not obj.path.exists()) as wh:
        echo_reports([demo_data.load(wh, dataset, Path(tmp), n_systems=n_systems, n_inputs=n_inputs, seed=seed,
                                     command=_command_line())])
    with obj.open() as wh:
        for analysis, s in demo_data.analyse(wh, dataset, k=k, seed=seed, progress=terminal_progress()):
            state = "up to date" if s.up_to_date else f"computed {s.computed}"
            say(f"{analysis.command:>9}: {s.tasks} results, {state}")
        click.echo()
        show(demo_data.report(wh, dataset, k=k, seed=seed), "table")
    say("\nEverything above is in the warehouse: try "
               f"`{obj.command('results', 'confidence_intervals', '--dataset', dataset)}`, or draw the tests with "
               f"`{obj.heatmap_command(dataset, demo_data.HUMAN, 'system', 'pearson', 'perm-both', parameters.DEFAULT_ALTERNATIVE, parameters.DEFAULT_CORRECTION, parameters.DEFAULT_CORRECTION_GROUP, demo_data.ALPHA)}`.")


COMMANDS = [demo]
