"""The correlation families: ``correlate``, ``ci`` and ``compare`` (declared here; their computation:
:mod:`metaeval.runs.metrics.correlation_runs` over the engine, :mod:`metaeval.runs.engine.subsets` for ``--by``).

This module is read when the command line starts: it imports its computation inside ``compute``.
"""

from __future__ import annotations

from metaeval.errors import WarehouseError
from metaeval.runs.engine import parameters
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import (AGGREGATE, ALPHA, ALTERNATIVE, BY, CONTROL, CORRECTION, CORRECTION_GROUP,
                                          DATASET, EPSILON, HUMAN, HUMAN_AGGREGATE, K, RESAMPLE_CLUSTERS, SCOPE, SEED,
                                          SYSTEM_TYPE, TIE_CALIBRATION, WHERE, Option)
from metaeval.runs.engine.shared_options import LAYOUT, REPLICATES

_VOCABULARY = "metaeval.analyses.stats.vocabulary:"


def tied(coefficients, epsilon, tie_calibration) -> tuple:
    """The coefficient labels with ``epsilon`` / ``tie_calibration`` folded in
    (:func:`metaeval.runs.engine.selection.with_tie_threshold`): ``acc-23[eps=0.01]``, ``acc-23[tie-calibrated]``."""
    from metaeval.runs.engine import selection

    return selection.with_tie_threshold(coefficients, epsilon, tie_calibration)


def _said(out, params: dict, **more):
    """What the run of ``out`` (an Outcome) did, with the ``params`` the output names
    (:class:`metaeval.runs.metrics.correlation_present.Said`)."""
    from metaeval.runs.metrics.correlation_present import Said
    from metaeval.runs.engine.family_present import run_line

    return Said({k: v for k, v in params.items() if k != "progress"},
                skipped=tuple(f"skipped: {r}" for r in out.skipped.values()),
                run=(run_line(out.analysis.table, out.summary),), **more)


def outcome_rows(wh, out):
    """The latest rows of ``out`` (an Outcome) with their signatures and the human ceiling of
    their level and coefficient (stored by ``metaeval annotators``)."""
    from metaeval.runs.agreement import annotators
    from metaeval.runs.engine import signatures

    ceiling = annotators.ceilings(wh, out.scope.dataset, out.scope.human, out.scope.subset)
    return annotators.with_ceilings(signatures.with_signatures(wh, out.rows(wh)), ceiling)


def correlation_rows(wh, command: str, params: dict):
    """correlate / ci: the latest rows of the setting, with their signatures and human ceiling
    (per value of ``by`` and their macro average with ``by``; a Kendall interval's share of pairs
    ranked wrongly with ci), carrying what the run did (:func:`metaeval.runs.engine.family_present.with_run`)."""
    from metaeval.runs.metrics import correlation_runs
    from metaeval.runs.engine import subsets
    from metaeval.runs.metrics.correlation_present import Said
    from metaeval.runs.engine.family_present import with_run

    given = dict(params)
    params = dict(params)
    params["coefficients"] = tied(params["coefficients"], params.pop("epsilon"), params.pop("tie_calibration"))
    by, where = params.pop("by", None), params.pop("where")
    if by is not None:
        result = subsets.by_attribute(wh, command, by, where, **params)
        return with_run(result.rows(wh), Said({k: v for k, v in given.items() if k != "progress"},
                                              run=tuple(result.messages()), by=True))
    out = getattr(correlation_runs, command)(wh, where=where, **params)
    rows = outcome_rows(wh, out)
    if command == "correlate":
        return with_run(rows, _said(out, given))
    from metaeval.runs.engine import clusters
    from metaeval.runs.metrics import intervals

    return with_run(intervals.with_pairs_wrong(rows), _said(out, given, after=tuple(clusters.widening(wh, out))))


class _Correlation(Family):
    """What correlate and ci share: a progress bar, ``--layout``, the run's lines on the rows."""

    shows_progress = True
    presented = (LAYOUT,)

    def refusal(self, warehouse, params: dict, **shown):
        """The command line refuses a tie threshold that no coefficient takes (or both kinds) as a
        usage error, before it opens the warehouse (:func:`tied`'s message; None when it holds)."""
        try:
            tied(params.get("coefficients") or (), params.get("epsilon"), params.get("tie_calibration", False))
        except WarehouseError as exc:
            return exc.args[0]
        return None

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        from metaeval.runs.metrics import correlation_present

        return correlation_present.notes(outcome, fmt)

    def present(self, outcome, fmt: str, layout: str = "auto") -> str:
        """Text: the run's lines, one row per metric, a column per level and coefficient, and the
        notes; markdown and latex: the paper's table; json and csv: every row and column."""
        from metaeval.runs.metrics import correlation_present

        return correlation_present.correlation_text(outcome, self.name, fmt, layout)


@register
class Correlate(_Correlation):
    """Correlations of metrics with a human judgment (system, summary, global level).

    text: one row per metric, a column per level and coefficient; the other formats: the
    latest rows (json and csv with every column, conventions included)."""


    name = "correlate"
    topic = "metrics"
    headline = "Correlations of metrics with a human judgment, at each level."
    report = ("metaeval.runs.report.factuality:partial", "metaeval.runs.report.factuality:subsets")
    report_position = 10
    summary = "Correlations of metrics with a human judgment (system, summary, global level)."
    tables = ("correlations",)
    options = (*SCOPE, EPSILON, TIE_CALIBRATION, WHERE, SYSTEM_TYPE, BY, CONTROL, AGGREGATE)
    positional = ("dataset", "human", "metrics", "levels", "coefficients")

    def compute(self, wh, **params):
        return correlation_rows(wh, "correlate", params)


@register
class Ci(_Correlation):
    name = "ci"
    topic = "metrics"
    headline = "Confidence intervals of correlations (Fisher, or bootstrap resampling)."
    report = ("metaeval.runs.report.paper:intervals",)
    report_position = 50
    summary = "Confidence intervals of correlations (Fisher or bootstrap over systems/inputs/both)."
    tables = ("confidence_intervals",)
    options = (*SCOPE, Option("method", default="boot-both", kind="choice", choices=_VOCABULARY + "CI_METHODS",
                              flag="--ci-method", renamed_from=("--method",),
                              help="The interval's method, as `evaluate --ci-method` (--method is a test's)."),
               K, SEED, ALPHA,
               Option("resample_annotators", kind="choice", choices=_VOCABULARY + "ANNOTATOR_RESAMPLING",
                      help="Also re-draw the human annotators in every resample: each cell's (cells) or the panel's "
                           "ids once per resample (panel, for ids that are the same people everywhere)."),
               EPSILON, TIE_CALIBRATION, WHERE, SYSTEM_TYPE, BY, CONTROL, AGGREGATE, RESAMPLE_CLUSTERS,
               REPLICATES.but(help="A metric run several times on the same cells (scores.replicate): mean reads each "
                                   "cell as the mean over its runs; resample also draws each cell's runs again inside "
                                   "every bootstrap resample (a second stage, seeded), so that the interval includes "
                                   "the metric's run-to-run noise; with one run per cell the intervals of mean."))
    positional = ("dataset", "human", "metrics", "levels", "coefficients")

    def compute(self, wh, **params):
        return correlation_rows(wh, "ci", params)


@register
class Compare(Family):
    name = "compare"
    topic = "metrics"
    report = ("metaeval.runs.report.paper:tests",)
    report_position = 60
    summary = "Test every ordered pair of metrics: is corr(a, human) > corr(b, human)?"
    tables = ("hypothesis_tests",)
    tests_table = "hypothesis_tests"
    hinted = True        # its text suggests the plot heatmap commands, written as the caller writes them
    options = (*SCOPE, Option("method", default="perm-both", kind="choice", choices=_VOCABULARY + "TEST_METHODS"),
               K, SEED, ALPHA, ALTERNATIVE, CORRECTION, CORRECTION_GROUP, EPSILON, TIE_CALIBRATION,
               Option("resample_annotators", kind="choice", choices=_VOCABULARY + "ANNOTATOR_RESAMPLING",
                      help="Paired bootstrap tests: also re-draw the human annotators in every resample (cells or "
                           "panel, as for ci)."),
               Option("k_block", kind="resamples",
                      help="Early stopping of the permutation tests (mt-metrics-eval): after every K_BLOCK "
                           "resamples, stop when the share as extreme as delta is < 0.02 or > 0.5; resamples used "
                           "per row in k_used."),
               Option("sequential", default=False, kind="flag",
                      help="Sequential tests (MMCTest, Gandy & Hahn 2014): resample each pair only while its "
                           "decision at the corrected level is uncertain, up to --k-max; significant = certified "
                           "(--k is not used)."),
               # no default of their own: None means the run's default (shown), as they apply to --sequential only
               Option("k_max", kind="int", minimum=1,
                      help=f"--sequential: most resamples per pair  [default: {parameters.DEFAULT_K_MAX}]"),
               Option("risk", kind="float", minimum=0, maximum=1, open=True,
                      help="--sequential: bound on the probability that any decision of a family differs from the "
                           f"one the exact (infinite-k) p-values give  [default: {parameters.DEFAULT_RISK:g}]"),
               WHERE, SYSTEM_TYPE, CONTROL, AGGREGATE, RESAMPLE_CLUSTERS)
    positional = ("dataset", "human", "metrics", "levels", "coefficients")

    shows_progress = True
    presented = (LAYOUT,)

    def compute(self, wh, **params):
        """The tests of the setting under its correction (table ``hypothesis_tests``), with their
        signatures and human ceiling, carrying what the run did and the ``plot heatmap`` commands
        of its settings (:class:`metaeval.runs.metrics.correlation_present.Said`)."""
        from metaeval.runs.metrics import correlation_runs
        from metaeval.runs.metrics.correlation_present import heatmaps
        from metaeval.runs.engine.family_present import with_run

        out = correlation_runs.compare(wh, **params)
        rows, p = outcome_rows(wh, out), out.analysis.params
        rows = rows[(rows["correction"] == p.correction)
                    & (rows["correction_group"] == p.correction_group)].reset_index(drop=True)
        return with_run(rows, _said(out, params, heatmaps=heatmaps(out.scope, params)))

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        from metaeval.runs.metrics import correlation_present
        from metaeval.runs.engine.family_present import TEXT

        return correlation_present.notes(outcome, fmt, None if fmt in TEXT else correlation_present.findings(outcome))

    def present(self, outcome, fmt: str, layout: str = "auto", hint=None) -> str:
        """Text: the run's lines and notes, the tests, how many are significant and the ``plot
        heatmap`` commands drawing them (``hint``: a Hint as a command line); markdown and latex:
        the paper's table of tests; json and csv: every row and column."""
        from metaeval.runs.metrics import correlation_present

        return correlation_present.compare_text(outcome, fmt, layout, hint)


# --- plot ci: the forest plot of ci's stored rows -------------------------------------------------
#: the file types of a figure (matplotlib's, chosen by the suffix of ``out``)
FIGURE_SUFFIXES = (".png", ".svg", ".pdf")


def check_figure(out) -> None:
    """``out``: a figure's file (a suffix of :data:`FIGURE_SUFFIXES`) in a directory that exists."""
    from pathlib import Path

    path = Path(out)
    if path.suffix.lower() not in FIGURE_SUFFIXES:
        raise WarehouseError(f"{str(path)!r}: unsupported file type {path.suffix or '(no suffix)'!r}; "
                             f"use {', '.join(FIGURE_SUFFIXES)}")
    if not path.parent.is_dir():
        what = "is not a directory" if path.parent.exists() else "does not exist"
        raise WarehouseError(f"{str(path)!r}: directory {str(path.parent)!r} {what}")


@register
class PlotCi(Family):
    name = "plot-ci"
    topic = "output"
    headline = "CI of every metric (forest plot), from the latest `ci` rows of one setting."
    summary = "CI of every metric (forest plot), from the latest `metaeval ci` rows of one setting."
    figure_only = True   # its command writes the figure and takes no --format
    options = (DATASET.but(help=None), HUMAN.but(help=None),
               Option("level", default="system", kind="choice", choices=_VOCABULARY + "LEVELS"),
               Option("coefficient", default="pearson", kind="coefficient"),
               Option("out", required=True, metavar="FILE", check=check_figure, help="The figure: .png, .svg or .pdf."),
               Option("overwrite", default=False, kind="flag", role="setting",
                      help="Replace the --out file (or report directory) if it exists. Never the warehouse."),
               Option("method", default="boot-both", kind="choice", choices=_VOCABULARY + "CI_METHODS",
                      flag="--ci-method", renamed_from=("--method",), help="The intervals' method, as `ci --ci-method`."),
               ALPHA.but(help="The CIs' level is 1 - alpha."),
               AGGREGATE.but(help="Draw the rows of a metric's system mean or of its median over the inputs "
                                  "(compare/ci --aggregate).",
                             companions=(HUMAN_AGGREGATE.but(help="Draw the rows of the human's mean or median system "
                                                                  "score (compare/ci --human-aggregate)."),)))
    positional = ("dataset", "human", "level", "coefficient", "out")

    def compute(self, wh, **params):
        """Draw the forest plot of the setting's latest ``confidence_intervals`` rows (and the human
        ceiling) to ``out``; its path (:func:`metaeval.runs.metrics.correlation_present.plot_ci`)."""
        from metaeval.runs.metrics import correlation_present

        return correlation_present.plot_ci(wh, **params)

    def present(self, outcome, fmt: str) -> str:
        from metaeval.runs.engine.family_present import prose

        return prose(f"wrote {outcome}")
