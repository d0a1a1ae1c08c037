"""The ``judges`` family: LLM judges (automatic pairwise judges) against the human preference
(its computation: :mod:`metaeval.runs.judges`).

This module is read when the command line starts: it imports its computation inside ``compute``.
"""

from __future__ import annotations

from metaeval.runs import parameters
from metaeval.runs.families import ALPHA, BY, CORRECTION, DATASET, FORCE, K, RESAMPLE_CLUSTERS, SEED, WHERE, Family, Option, register

_VOCABULARY = "metaeval.analyses.stats.vocabulary:"


#: ``--replicates mean|resample``, declared once: the judges' (preferences.replicate) and, with its own
#: help, the scores' intervals (scores.replicate: ``ci``)
REPLICATES = Option("replicates", default="mean", kind="choice", choices=("mean", "resample"),
                    help="A judge run several times on the same items (preferences.replicate): mean reads each "
                         "item and order as the mean over its runs (the soft preference; its rounding the "
                         "verdict); resample also draws the runs again inside each item resample, so that the "
                         "statistics' intervals include the judge's run-to-run noise (seeded).")


@register
class Judges(Family):
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
    positional = ("dataset", "humans", "judge_globs")
    aliases = {"judges": "judge_globs"}

    def compute(self, wh, *, dataset, humans, judge_globs, **params):
        """:func:`metaeval.runs.judges.judges`: ``judge_statistics``, ``judge_tests`` and
        ``preference_rankings`` rows of the human judges ``humans`` (globs; default all)."""
        from metaeval.runs import judges as runs

        summary = runs.judges(wh, dataset, humans, judge_globs, **params)
        return runs.latest(wh, dataset, summary.human, list(summary.tied_majority))
