"""``metaeval simulate coverage|power``: which CI to trust on a dataset, and the power of each test
(Deutsch, Dror & Roth 2021, §5), persisted: the group of the generated commands of the families
``simulate-coverage`` and ``simulate-power`` (:mod:`metaeval.runs.metrics.simulation_families`). ``metaeval
normality`` (appendix A) is its family's generated command too."""

from __future__ import annotations

import click

from metaeval.cli.app import Group
from metaeval.cli.families import command_of
from metaeval.cli.sections import topic


@topic("metrics")
@click.group(cls=Group, short_help="The paper's simulations (§5): CI coverage on held-out data, and power.")
def simulate():
    """The paper's simulations (§5): CI coverage of held-out data, and statistical power."""


def _subcommands() -> None:
    """``simulate coverage`` and ``simulate power``: the families' generated commands."""
    from metaeval.runs.engine.families import FAMILIES

    for sub in ("coverage", "power"):
        simulate.add_command(command_of(FAMILIES[f"simulate-{sub}"], name=sub))


_subcommands()

COMMANDS = [simulate]
