"""The simulation families of the paper: ``normality``, ``simulate-coverage`` and
``simulate-power`` (their computation: :mod:`metaeval.runs.metrics.simulation`).

This module is read when the command line starts: it imports its computation inside ``compute``.
"""

from __future__ import annotations

from metaeval.errors import WarehouseError
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import (ALPHA, DATASET, FORCE, HUMAN, JOBS, K, LEVELS, METRICS, PLAIN_COEFFICIENTS,
                                          SEED, SYSTEM_INPUTS, Option)

#: the options the two simulations share
SIMULATION = (K, SEED, DATASET.but(help="Dataset to simulate on."),
              HUMAN.but(help="The human judgment, e.g. litepyramid.recall."),
              LEVELS.but(help="Correlation level(s). Default: system, summary (the paper's). Repeatable."),
              Option("trials", default=1000, kind="int", minimum=1),
              ALPHA.but(help="CI level 1 - alpha (coverage); significance level (power)."), SYSTEM_INPUTS, JOBS, FORCE)


#: what an interrupted simulation keeps (the command's one line: :func:`metaeval.cli.families.command_of`)
INTERRUPTED = "the finished blocks of trials are saved; run the same command again to resume"


def _check_proportions(value) -> None:
    """``proportions``: the command line's comma-separated shares, or a list of numbers."""
    try:
        [float(p) for p in (value.split(",") if isinstance(value, str) else value) if str(p).strip()]
    except (TypeError, ValueError):
        raise WarehouseError(f"not a comma-separated list of numbers: {value!r}") from None


def simulation_line(table: str, summary) -> str:
    """What a simulation's run did (a :class:`metaeval.runs.metrics.simulation_engine.Summary`): the
    blocks computed and reused, the results written; or up to date."""
    from metaeval.analyses import simulation

    if summary.up_to_date:
        return f"{table}: all {summary.results} results up to date; nothing computed (--force recomputes)"
    reused = f", reused {summary.reused_blocks} blocks of earlier runs" if summary.reused_blocks else ""
    return (f"{table}: run {summary.run_id}: computed {summary.computed_blocks} blocks (of up to "
            f"{simulation.TRIAL_BLOCK} trials){reused}; wrote {summary.written} of {summary.results} results")


class _Simulation(Family):
    """What the two simulations share: a progress bar, the run's line on the rows (said with the
    rows in text, else on standard error), their interruption's line."""

    shows_progress = True
    interrupted = INTERRUPTED

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        from metaeval.runs.engine.family_present import TEXT, run_of

        run = run_of(outcome)
        return [] if fmt in TEXT or run is None else [simulation_line(self.tables[0], run)]

    def run_text(self, outcome) -> str:
        from metaeval.runs.engine.family_present import prose, run_of

        run = run_of(outcome)
        return "" if run is None else prose(simulation_line(self.tables[0], run))


@register
class Normality(Family):
    name = "normality"
    topic = "metrics"
    headline = "Shapiro-Wilk normality of the system means and of each input's scores."
    report = ("metaeval.runs.report.paper:normality",)
    report_position = 100
    summary = ("Shapiro-Wilk normality of the system means, and the percent of inputs whose scores fail it at "
               "p <= 0.05 (the paper's appendix A); table normality.")
    tables = ("normality",)
    options = (DATASET, Option("measures", multiple=True, metavar="GLOB", flag="--measure",
                               help="Measures to test (globs). Default: all. Repeatable."), FORCE)
    positional = ("dataset", "measures")

    def compute(self, wh, *, dataset, measures, **params):
        """:func:`metaeval.runs.metrics.simulation.normality`'s rows (table ``normality``), carrying what
        the run did (:func:`metaeval.runs.engine.family_present.with_run`)."""
        from metaeval.runs.metrics import simulation
        from metaeval.runs.engine.family_present import with_run

        summary = simulation.normality(wh, dataset, measures, **params)
        return with_run(simulation.latest_normality(wh, dataset, measures), summary)

    @staticmethod
    def _run_line(rows) -> list[str]:
        from metaeval.runs.engine.family_present import run_of

        s = run_of(rows)
        if s is None:
            return []
        return [f"normality: all {s.results} results up to date; nothing computed (--force recomputes)"
                if s.up_to_date else f"normality: run {s.run_id}: wrote {s.written} rows"]

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        from metaeval.runs.engine.family_present import TEXT

        return [] if fmt in TEXT else self._run_line(outcome)

    def present(self, outcome, fmt: str) -> str:
        """Text: the run's line, then per measure and level the statistic, p (Shapiro-Wilk's is
        exact: printed as ``p_text`` prints it) and the percent of inputs failing; else the rows."""
        from metaeval.runs.engine.family_present import TEXT, prose

        if fmt not in TEXT:
            return super().present(outcome, fmt)
        from metaeval.analyses import conclusions
        from metaeval.present import tables

        frame = outcome.assign(p_value=[conclusions.p_text(p, latex=False) if conclusions.defined_value(p) else None
                                        for p in outcome["p_value"]])
        shown = frame[["measure", "level", "statistic", "p_value", "percent_significant", "n"]].round(4)
        return prose(*self._run_line(outcome)) + tables.render(shown, "table")


@register
class SimulateCoverage(_Simulation):
    name = "simulate-coverage"
    topic = "metrics"
    headline = "How often a CI on half of the data contains the correlation on the rest."
    report = ("metaeval.runs.report.paper:coverage",)
    report_position = 90
    summary = ("How often a CI computed on a random half of the systems and inputs contains the correlation of "
               "the other half (the paper's Table 1); table ci_coverage.")
    tables = ("ci_coverage",)
    options = (*SIMULATION,
               METRICS.but(required=True, help="Metric(s) whose CIs are simulated (globs over automatic measures). "
                                                "Repeatable."),
               PLAIN_COEFFICIENTS.but(help="Coefficient(s). Default: all three. Repeatable."),
               Option("methods", kind="choice", multiple=True, choices="metaeval.analyses.simulation:CI_METHODS",
                      flag="--ci-method", renamed_from=("--method",),
                      help="CI method(s), as `metaeval ci --ci-method`. Default: all four. Repeatable."))
    positional = ("dataset", "human", "metrics")

    def compute(self, wh, **params):
        """:func:`metaeval.runs.metrics.simulation.simulate_coverage`'s rows (table ``ci_coverage``)."""
        from dataclasses import replace

        from metaeval.runs.metrics import simulation
        from metaeval.runs.engine.family_present import with_run

        summary = simulation.simulate_coverage(wh, **params)
        return with_run(simulation.with_coverage_tests(summary.rows), replace(summary, rows=None))

    def present(self, outcome, fmt: str) -> str:
        """Text: the run's line, then per metric, level, coefficient and method the trials whose CI
        contains the other half's correlation, coverage (*: the paper's bold) and the z-test's p
        against the method closest to 1 - alpha; else the rows."""
        from metaeval.runs.engine.family_present import TEXT

        if fmt not in TEXT:
            return super().present(outcome, fmt)
        from metaeval.present import tables
        from metaeval.analyses.conclusions import p_text

        frame = outcome.sort_values(["metric", "level", "coefficient", "method"])
        shown = frame[["metric", "level", "coefficient", "method", "trials", "contains", "too_high", "too_low",
                       "coverage"]].round(3)
        shown["coverage"] = [f"{c:.3f}{'*' if b else ''}" if c == c else "undefined"
                             for c, b in zip(frame["coverage"].astype(float), frame["bold"])]
        shown["z_test_p"] = ["closest" if c else p_text(p, latex=False) for c, p in zip(frame["closest"], frame["p_z"])]
        return (self.run_text(outcome) + tables.render(shown, "table")
                + "z_test_p: one-tailed difference-of-proportions z-test against the method whose coverage is\n"
                  "closest to 1 - alpha (below 1); *: that method, significantly different from every other (bold).\n")


@register
class SimulatePower(_Simulation):
    name = "simulate-power"
    topic = "metrics"
    headline = "How often each test finds ROUGE-1 better than its degraded variants."
    report = ("metaeval.runs.report.paper:power",)
    report_position = 80
    summary = ("How often each test concludes ROUGE-1 > R_k, ROUGE-1 on a random share of the tokens (the "
               "paper's Figure 3); scored from the stored texts; table power.")
    tables = ("power",)
    options = (*SIMULATION,
               Option("variant", default="recall", kind="choice", choices="metaeval.runs.metrics.simulation:ROUGE_VARIANTS",
                      flag="--rouge-variant",
                      help="ROUGE-1 statistic compared with R_k (the paper: recall on REALSumm, f1 on SummEval)."),
               Option("proportions", metavar="LIST", check=_check_proportions,
                      help="Comma-separated shares of each candidate's tokens R_k keeps. Default: 0.05, 0.1, 0.2, "
                           "..., 0.9, 1.0 (the paper's)."),
               PLAIN_COEFFICIENTS.but(default=("pearson",), help="Coefficient(s). Repeatable."),
               Option("methods", kind="choice", multiple=True, choices="metaeval.analyses.simulation:TEST_METHODS",
                      flag="--method",
                      help="Test(s), as `metaeval compare`. Default: williams, boot-both, perm-both (the paper's). "
                           "Repeatable."))
    positional = ("dataset", "human")

    def compute(self, wh, *, proportions=None, **params):
        """:func:`metaeval.runs.metrics.simulation.simulate_power`'s rows (table ``power``); ``proportions``
        a list of shares or the command line's comma-separated text."""
        from dataclasses import replace

        from metaeval.runs.metrics import simulation
        from metaeval.runs.engine.family_present import with_run

        if isinstance(proportions, str):
            proportions = [float(p) for p in proportions.split(",") if p.strip()]
        summary = simulation.simulate_power(wh, **params, **({} if proportions is None else
                                                             {"proportions": proportions}))
        return with_run(summary.rows, replace(summary, rows=None))

    def present(self, outcome, fmt: str) -> str:
        """Text: the run's line, then the power by share of tokens (rows) and level, coefficient and
        test (columns); else the rows."""
        from metaeval.runs.engine.family_present import TEXT

        if fmt not in TEXT:
            return super().present(outcome, fmt)
        from metaeval.present import tables

        wide = outcome.pivot_table(index="proportion", columns=["level", "coefficient", "method"], values="power")
        return self.run_text(outcome) + tables.render(wide.round(3), "text")
