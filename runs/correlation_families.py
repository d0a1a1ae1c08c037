"""The correlation families: ``correlate``, ``ci`` and ``compare`` (declared here; their computation:
:mod:`metaeval.runs.correlation_runs` over the engine, :mod:`metaeval.runs.subsets` for ``--by``).

This module is read when the command line starts: it imports its computation inside ``compute``.
"""

from __future__ import annotations

from metaeval.runs import parameters
from metaeval.runs.families import (AGGREGATE, ALPHA, ALTERNATIVE, BY, CONTROL, CORRECTION, CORRECTION_GROUP, EPSILON,
                                    K, RESAMPLE_CLUSTERS, SCOPE, SEED, SYSTEM_TYPE, TIE_CALIBRATION, WHERE, Family, Option,
                                    register)
from metaeval.runs.judge_families import REPLICATES

_VOCABULARY = "metaeval.analyses.stats.vocabulary:"


def tied(coefficients, epsilon, tie_calibration) -> tuple:
    """The coefficient labels with ``epsilon`` / ``tie_calibration`` folded in
    (:func:`metaeval.runs.selection.with_tie_threshold`): ``acc-23[eps=0.01]``, ``acc-23[tie-calibrated]``."""
    from metaeval.runs import selection

    return selection.with_tie_threshold(coefficients, epsilon, tie_calibration)


def correlation_rows(wh, command: str, params: dict):
    """correlate / ci: the latest rows of the setting (per value of ``by`` and their macro
    average with ``by``; a Kendall interval's share of pairs ranked wrongly with ci)."""
    from metaeval.runs import correlation_runs, subsets

    params = dict(params)
    params["coefficients"] = tied(params["coefficients"], params.pop("epsilon"), params.pop("tie_calibration"))
    by, where = params.pop("by", None), params.pop("where")
    if by is not None:
        return subsets.by_attribute(wh, command, by, where, **params).rows(wh)
    rows = getattr(correlation_runs, command)(wh, where=where, **params).rows(wh)
    if command == "ci":
        from metaeval.runs import intervals

        rows = intervals.with_pairs_wrong(rows)
    return rows


@register
class Correlate(Family):
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
class Ci(Family):
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

    def compute(self, wh, **params):
        """The tests of the setting under its correction (table ``hypothesis_tests``)."""
        from metaeval.runs import correlation_runs

        out = correlation_runs.compare(wh, **params)
        rows, p = out.rows(wh), out.analysis.params
        return rows[(rows["correction"] == p.correction)
                    & (rows["correction_group"] == p.correction_group)].reset_index(drop=True)
