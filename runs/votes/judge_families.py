"""The ``judges`` family: LLM judges (automatic pairwise judges) against the human preference
(its computation: :mod:`metaeval.runs.votes.judges`).

This module is read when the command line starts: it imports its computation inside ``compute``.
"""

from __future__ import annotations

from metaeval.runs.engine import parameters
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import (ALPHA, BY, CORRECTION, DATASET, FORCE, K, RESAMPLE_CLUSTERS, SEED, WHERE,
                                          Option)
from metaeval.runs.engine.shared_options import LAYOUT, REPLICATES

_VOCABULARY = "metaeval.analyses.stats.vocabulary:"


#: ``--replicates mean|resample``, declared once: the judges' (preferences.replicate) and, with its own
#: help, the scores' intervals (scores.replicate: ``ci``)
@register
class Judges(Family):
    """LLM judges (automatic pairwise judges) against the human preference.

    Per automatic judge, against the majority of the human judges (an item whose majority is
    tied is left out and counted): n, accuracy_ab, accuracy_ba, accuracy, both_correct,
    position_consistency, first_position_rate, tie_rate, kappa (Cohen's, over a/b/tie), and
    kendall (its Bradley-Terry system ranking vs the humans'), each with a percentile bootstrap
    interval over items; judge-vs-judge tests (permutation over items, exact McNemar), corrected
    over the judge pairs, and significance clusters by accuracy; Bradley-Terry strengths of the
    systems per judge and for the humans. Tables judge_statistics, judge_tests, preference_rankings.

    --where/--by select items by input attributes (metaeval ingest attributes); --by gives one
    result per value (no macro average for judges). A judge run several times (preferences.replicate)
    is read as the mean over its runs; --replicates resample draws its runs again inside each item
    resample; stability (with its interval) is its agreement with itself across runs.
    """

    name = "judges"
    topic = "votes"
    report = ("metaeval.runs.report.judges:judges",)
    report_position = 40
    summary = "LLM judges (automatic pairwise judges) against the human preference."
    tables = ("judge_statistics", "judge_tests", "preference_rankings")
    tests_table = "judge_tests"
    options = (DATASET,
               Option("humans", multiple=True, metavar="GLOB", flag="--human",
                      help="Human judges (annotators; globs) whose majority is the reference. Default: every human "
                           "judge. Repeatable."),
               Option("judge_globs", multiple=True, metavar="GLOB", flag="--judge",
                      help="Automatic judges (globs). Default: every automatic judge. Repeatable."),
               K.but(help="Bootstrap resamples of items (intervals) and permutations (the permutation test)."),
               ALPHA, SEED,
               Option("test", default="permutation", kind="choice", choices=_VOCABULARY + "JUDGE_TESTS",
                      help="The judge-vs-judge test the significance clusters rest on (both are stored)."),
               CORRECTION.but(help="Multiple-comparison correction over the pairs of judges."),
               Option("cluster_rule", default=parameters.DEFAULT_CLUSTER_RULE, kind="choice",
                      choices=_VOCABULARY + "CLUSTER_RULES",
                      help="Significance clusters: a new cluster at the first judge beaten by any (any) or by all "
                           "(strict) of the current cluster."),
               # analyses.preferences.DEFAULT_RIDGE (a test checks they agree; not imported: a light start-up)
               Option("ridge", default=0.01, kind="float", minimum=0, open=True,
                      help="Bradley-Terry prior: the penalty (ridge/2) * sum of squared log-strengths."),
               WHERE, BY, FORCE,
               RESAMPLE_CLUSTERS.but(help="Resample whole clusters of items, an item's cluster its input's value of "
                                          "the input attribute ATTR (e.g. the document of each segment): the item "
                                          "bootstrap draws clusters, the permutation test flips a cluster's items "
                                          "together (McNemar is unchanged). In the rows' conventions, the run's "
                                          "parameters and fingerprint."),
               REPLICATES)
    presented = (LAYOUT,)
    positional = ("dataset", "humans", "judge_globs")
    aliases = {"judges": "judge_globs"}

    def compute(self, wh, *, dataset, humans, judge_globs, **params):
        """:func:`metaeval.runs.votes.judges.judges`: ``judge_statistics``, ``judge_tests`` and
        ``preference_rankings`` rows of the human judges ``humans`` (globs; default all); the
        statistics carry the run and what the output says of the setting (:func:`with_run`)."""
        from metaeval.runs.votes import judges as runs
        from metaeval.runs.votes import judge_present
        from metaeval.runs.engine.family_present import with_run

        summary = runs.judges(wh, dataset, humans, judge_globs, **params)
        rows = runs.latest(wh, dataset, summary.human, list(summary.tied_majority))
        with_run(rows["judge_statistics"], judge_present.said(wh, summary, rows, {"dataset": dataset, **params}))
        return rows

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        from metaeval.runs.votes import judge_present

        return judge_present.notes(outcome, fmt)

    def present(self, outcome, fmt: str, layout: str = "auto") -> str:
        """Text: the run, the statistics with their intervals, the tests, the strengths; json and
        csv: the three tables; markdown and latex: a paper table per subset."""
        from metaeval.runs.votes import judge_present

        return judge_present.present(outcome, fmt, layout)
