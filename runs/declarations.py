"""The analysis families that existed before the registry, declared in it (:mod:`metaeval.runs.families`).

Each declares its name (the command), summary, result tables, tests table and options (their
flags, defaults, help and choices: the command line reads them from here), and a ``compute``
that calls the family's own function (in ``runs/<family>.py``, imported inside: the command line
reads this module when it starts). ``evaluate`` is the orchestrator of several families, not one.
A new family declares itself in its own module (``runs/<family>.py``), not here.
"""

from __future__ import annotations

from metaeval.runs import parameters
from metaeval.runs.families import (AGGREGATE, ALPHA, ALTERNATIVE, BY, COEFFICIENTS, CORRECTION, CORRECTION_GROUP, DATASET, FORCE,
                                    HUMAN, JOBS, K, LEVELS, METRICS, RESAMPLE_CLUSTERS, SEED, SYSTEM_INPUTS, SYSTEM_TYPE, WHERE, Family,
                                    Option,
                                    register)

_VOCABULARY = "metaeval.analyses.stats.vocabulary:"

# --- options several of these families share (besides the registry's) --------------------------
#: the plain coefficients (no tie threshold): the families reading tests or per-input correlations
PLAIN_COEFFICIENTS = COEFFICIENTS.but(kind="choice", choices=_VOCABULARY + "COEFFICIENTS",
                                      help="Coefficient(s). Default: all three.")
EPSILON = Option("epsilon", kind="float", minimum=0,
                 help="Tie threshold on the metric's differences (|d| <= E is a tie) for kendall-a, kendall (b), "
                      "kendall-23, acc-23.")
TIE_CALIBRATION = Option("tie_calibration", default=False, kind="flag", flag="--tie-calibration",
                         help="Choose the tie threshold that maximises kendall-23 / acc-23 at each level (Deutsch et "
                              "al. 2023; default coefficient acc-23); resamples re-calibrate.")
CONTROL = Option("control", metavar="system|ATTR",
                 help="Partial correlations at the global level: on the cells where metric and human are both "
                      "present, each group's mean (each system's, or each value's of the attribute ATTR) subtracted "
                      "from both before correlating; p-values with n - 2 - (g - 1) df. Coefficients pearson, "
                      "spearman, kendall; stored as NAME[control=system]. Default level: global.")
#: the options of the correlation families' scope, in their order on the command line
SCOPE = (DATASET, HUMAN, METRICS, LEVELS, COEFFICIENTS, SYSTEM_INPUTS, JOBS, FORCE)
#: the options of the families that read compare's stored tests (winners, replicability)
TESTS_READ = (LEVELS.but(help="Correlation level(s) of the tests. Default: all three."),
              PLAIN_COEFFICIENTS.but(help="Coefficient(s) of the tests. Default: all three."),
              Option("method", default="perm-both", kind="choice", choices=_VOCABULARY + "TEST_METHODS",
                     help="The `metaeval compare` test whose rows are read."),
              ALPHA.but(help="winners: a beats b when p_adjusted <= alpha; replicability: level of the "
                             "partial-conjunction tests."),
              FORCE)
#: the options the two simulations share
SIMULATION = (K, SEED, DATASET.but(help="Dataset to simulate on."),
              HUMAN.but(help="The human judgment, e.g. litepyramid.recall."),
              LEVELS.but(help="Correlation level(s). Default: system, summary (the paper's). Repeatable."),
              Option("trials", default=1000, kind="int", minimum=1),
              ALPHA.but(help="CI level 1 - alpha (coverage); significance level (power)."), SYSTEM_INPUTS, JOBS, FORCE)


def _tied(params: dict) -> dict:
    """``epsilon`` / ``tie_calibration`` folded into the coefficient labels
    (:func:`metaeval.runs.selection.with_tie_threshold`)."""
    from metaeval.runs import selection

    params = dict(params)
    params["coefficients"] = selection.with_tie_threshold(params["coefficients"], params.pop("epsilon"),
                                                          params.pop("tie_calibration"))
    return params


def _correlation_rows(wh, command: str, params: dict):
    """correlate / ci: the latest rows of the setting (per value of ``by`` and their macro
    average with ``by``)."""
    from metaeval.runs import api, subsets

    params = _tied(params)
    by, where = params.pop("by", None), params.pop("where")
    if by is not None:
        return subsets.by_attribute(wh, command, by, where, **params).rows(wh)
    rows = getattr(api, command)(wh, where=where, **params).rows(wh)
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

    def compute(self, wh, **params):
        return _correlation_rows(wh, "correlate", params)


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
               EPSILON, TIE_CALIBRATION, WHERE, SYSTEM_TYPE, BY, CONTROL, AGGREGATE, RESAMPLE_CLUSTERS)

    def compute(self, wh, **params):
        return _correlation_rows(wh, "ci", params)


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

    def compute(self, wh, **params):
        from metaeval.runs import api

        return api.Warehouse.compare(wh, **params)


@register
class Accuracy(Family):
    name = "accuracy"
    topic = "metrics"
    headline = "Pairwise accuracy of metrics against a human judgment (Louis & Nenkova)."
    report = ("metaeval.runs.report.paper:close_pairs",)
    report_position = 70
    summary = "Pairwise accuracy of metrics against a human judgment (Louis & Nenkova 2013)."
    tables = ("pairwise_accuracy", "input_significance", "soft_pairwise_accuracy", "delta_bin_accuracy")
    options = (DATASET, HUMAN, METRICS,
               LEVELS.but(choices="metaeval.analyses.ranking:ACCURACY_LEVELS",
                          help="system: pairs of system means (macro); micro: pairs of systems within each input, "
                               "pooled. Default: both."),
               PLAIN_COEFFICIENTS.but(help="Coefficient(s) of the per-input significance counts. Default: all three."),
               ALPHA.but(help="Significance level of the per-input correlations."),
               ALTERNATIVE.but(choices="metaeval.runs.ranking:ALTERNATIVES",
                               help="Alternative of the per-input correlation tests (scipy)."),
               Option("metric_tolerance", default=0.0, kind="float", minimum=0,
                      help="Metric differences with |d| <= this are ties (metric units; 0: exact ties only)."),
               Option("human_tolerance", default=0.0, kind="float", minimum=0,
                      help="Human differences with |d| <= this are ties (0: exact ties only)."),
               Option("soft", default=False, kind="flag",
                      help="Soft pairwise accuracy instead (Thompson et al. 2024, WMT24): table "
                           "soft_pairwise_accuracy."),
               SYSTEM_INPUTS,
               Option("delta_bins", kind="int", minimum=1, metavar="Q",
                      help="Also the accuracy and Kendall's tau within Q quantile bins of the system pairs' human "
                           "difference, closest pairs first (Deutsch, Dror & Roth 2022): table delta_bin_accuracy."),
               K.but(help="--soft: permutations."),
               SEED.but(default=4, help="--soft: seed of the permutations. 4, not 0 as everywhere else: the draw of "
                                        "mt-metrics-eval's default, which --soft reproduces."),
               Option("pvalue", default="t", kind="choice", choices="metaeval.runs.ranking:PVALUE_METHODS",
                      help="p-values of the per-input correlations: t (scipy's defaults) or as89 (R's cor.test for "
                           "Spearman, as Louis & Nenkova: exact for n <= 9, AS 89's series above; --coefficient "
                           "spearman)."),
               JOBS, FORCE, WHERE, SYSTEM_TYPE,
               AGGREGATE.but(help="A metric's system score: the mean or the median over its inputs, the human's its "
                                  "mean unless --human-aggregate (system level: give "
                                  "--level system; --soft: the statistic of each pair's test). A key of the rows; a "
                                  "median is in their fingerprint, conventions and signature (agg:median)."))

    def compute(self, wh, **params):
        from metaeval.runs import api

        return api.Warehouse.accuracy(wh, **params)


@register
class SystemsAgreement(Family):
    name = "systems-agreement"
    topic = "metrics"
    summary = "Do metrics reach the same conclusions about systems as the humans?"
    tables = ("system_agreement",)
    options = (DATASET, HUMAN, METRICS,
               Option("tests", kind="choice", multiple=True, choices="metaeval.analyses.ranking:PAIR_TESTS",
                      flag="--test",
                      help="Paired two-sided test of each pair of systems over the inputs. Default: all three."),
               ALPHA, K, SEED, JOBS, FORCE)

    def compute(self, wh, **params):
        from metaeval.runs import api

        return api.Warehouse.systems_agreement(wh, **params)


@register
class Winners(Family):
    name = "winners"
    topic = "metrics"
    summary = "Metrics not significantly beaten by any other, and significance clusters."
    tables = ("winners",)
    tests_table = "hypothesis_tests"
    options = (DATASET, HUMAN, METRICS, *TESTS_READ,
               ALTERNATIVE.but(choices="metaeval.runs.ranking:ALTERNATIVES",
                               help="The alternative of the tests read (the default of compare and evaluate)."),
               CORRECTION.but(help="The correction of the tests read."),
               CORRECTION_GROUP.but(help="The correction family of the tests read."),
               Option("cluster_rule", default=parameters.DEFAULT_CLUSTER_RULE, kind="choice",
                      choices=_VOCABULARY + "CLUSTER_RULES",
                      help="any: a new cluster starts at the first metric significantly outperformed by any metric "
                           "of the current cluster (mt-metrics-eval); strict: only where every metric above beats "
                           "every metric below."),
               AGGREGATE.but(help="The tests read (and the correlations ranked) of a metric's system mean or median "
                                  "over its inputs (the compare run with it, and its --human-aggregate; system "
                                  "level)."))

    def compute(self, wh, **params):
        from metaeval.runs import api

        return api.Warehouse.winners(wh, **params)


@register
class Replicability(Family):
    name = "replicability"
    topic = "metrics"
    summary = "On how many datasets does metric A beat metric B? (Dror et al. 2017)"
    tables = ("replicability",)
    options = (Option("datasets", multiple=True, required=True, flag="--dataset",
                      help="A dataset; name two or more, each followed by its --human."),
               Option("humans", multiple=True, required=True, flag="--human",
                      help="The human judgment of each --dataset, in the same order (one for all if given once)."),
               METRICS, *TESTS_READ,
               ALTERNATIVE.but(default="greater", choices="metaeval.runs.ranking:ALTERNATIVES",
                               help="The alternative of the tests read: a replicated claim is directional (run "
                                    "compare with --alternative greater for it)."),
               Option("pc_methods", kind="choice", multiple=True, choices="metaeval.analyses.ranking:PC_METHODS",
                      flag="--pc-method",
                      help="Partial-conjunction combination: bonferroni (any dependence) or fisher (independent "
                           "datasets). Default: both."))

    def compute(self, wh, *, datasets, humans, **params):
        from metaeval.errors import Argument, Message, WarehouseError
        from metaeval.runs import api

        if len(humans) not in (1, len(datasets)):
            raise WarehouseError(Message(Argument("humans", list(humans)), f": give one per dataset ({len(datasets)}),"
                                         " or one for all"))
        on = list(zip(datasets, humans if len(humans) > 1 else humans * len(datasets)))
        return api.Warehouse.replicability(wh, on, **params)


@register
class RankTasks(Family):
    name = "rank-tasks"
    topic = "metrics"
    headline = "Rank metrics over several tasks: correlations, weighted average, clusters."
    summary = ("Rank metrics over several tasks: each task's correlation, the weighted average of the scores "
               "mapped to [0, 1], and significance clusters from a permutation test on the average (table "
               "task_rankings).")
    tables = ("task_rankings",)
    options = (Option("tasks", multiple=True, flag="--task",
                      metavar="DATASET:HUMAN:LEVEL:COEFFICIENT[:WEIGHT]",
                      help="One task (repeat): e.g. wmt23-en-de:mqm.seg:summary:acc-23[tie-calibrated]:1; "
                           "COEFFICIENT spa at level system: soft pairwise accuracy."),
               Option("task_set", kind="choice", choices="metaeval.runs.task_ranking:TASK_SETS", metavar="NAME",
                      help="A named task set over the --dataset given (one per language pair), judged by --human: "
                           "wmt24 = mt-metrics-eval tasks.WMT24 (system spa, item-grouped acc-eq with the test over "
                           "pairs, uniform weights)."),
               Option("datasets", multiple=True, flag="--dataset", metavar="D",
                      help="--task-set: an evaluation set (repeat, one per language pair)."),
               HUMAN.but(required=False, help="--task-set: the human judgment of every dataset."),
               METRICS.but(help="Metrics (globs); only those present in every task are ranked. Default: all."),
               K.but(help="Permutations."), SEED.but(help="Seed of the permutations."), ALPHA,
               AGGREGATE.but(help="A metric's system score in every system-level task: the mean or the median over "
                                  "its inputs, the human's its mean unless --human-aggregate (pearson, spearman, "
                                  "kendall, kendall-c; not spa). Other levels unchanged. "
                                  "Recorded in the tasks, fingerprint, conventions and signature (agg:median)."),
               FORCE)

    def compute(self, wh, **params):
        from metaeval.runs import api

        return api.Warehouse.rank_tasks(wh, **params)


#: agreement --bins (runs/agreement_curves.py): Bhandari et al. 2020, appendices A and B.
CURVE_BINS = Option("bins", default=0, kind="int", minimum=0,
                          help="Also the disagreement over sampled summary pairs and the F/N and F'/N ratios in this many "
                         "bins (Peyrard 2019: 15; table agreement_curves). Default 0: only the three thirds.")
CURVE_PROTOCOL = Option("protocol", default=("cumulative", "uniform"), kind="choice", multiple=True,
                        choices="metaeval.analyses.agreement_curves:PROTOCOLS",
                        help="--bins: cumulative bins (v >= k/n, Peyrard's) or bins of uniform width (Bhandari et "
                             "al.'s). Default: both. Repeatable.")
CURVE_PAIRS = Option("pairs", default=100_000, kind="int", minimum=1,
                     help="--bins: summary pairs sampled for the disagreement (Peyrard: 100000).")
CURVE_BASELINE = Option("baseline", default="none", kind="choice",
                        choices="metaeval.analyses.agreement_curves:BASELINES",
                        help="--bins: random also computes every statistic on Uniform(0, 1) random scores (seeded), "
                             "besides the metrics' (Bhandari et al., appendix B).")


@register
class Agreement(Family):
    name = "agreement"
    topic = "metrics"
    headline = "Do metrics agree with each other in the low, middle and top of the range?"
    report = ("metaeval.runs.report.agreement:agreement",)
    report_position = 110
    summary = "Do metrics agree with each other in the low, middle and top of each input's score range?"
    tables = ("score_range_agreement", "input_properties", "property_agreement", "agreement_curves")
    options = (DATASET.but(help="Dataset to analyse (no human judgment needed)."),
               METRICS.but(help="Metrics (globs over automatic measures); their mean normalised score defines each "
                                "input's score range. Default: all. Repeatable."),
               ALPHA.but(help="Significance level of the per-input Kendall taus."),
               Option("significant_only", default=False, kind="flag",
                      help="Average only per-input taus with p <= alpha (the paper's setting)."),
               Option("normalisation", default="input", kind="choice",
                      choices="metaeval.analyses.agreement:NORMALISATIONS",
                      help="Min-max normalise each metric over each input's summaries, or over the whole dataset, "
                           "before averaging them into the consensus score."),
               CURVE_BINS, CURVE_PROTOCOL, CURVE_PAIRS, CURVE_BASELINE,
               SEED.but(help="--bins: seed of the pair sampling and of the random scores; recorded with every row."),
               JOBS, FORCE)

    def compute(self, wh, **params):
        from metaeval.runs import api

        return api.Warehouse.agreement(wh, **params)


@register
class Annotators(Family):
    name = "annotators"
    topic = "metrics"
    summary = "How much the annotators agree, and the human ceiling."
    tables = ("annotator_agreement", "human_ceiling")
    options = (DATASET,
               Option("humans", multiple=True, metavar="GLOB", flag="--human",
                      help="Human measures (globs), e.g. 'expert.*'. Default: every human measure. Repeatable."),
               LEVELS.but(help="Level(s) of the correlations. Default: all three."), PLAIN_COEFFICIENTS,
               K.but(help="Boot-Both resamples of the leave-one-out ceiling's interval."), ALPHA,
               Option("splits", default=100, kind="int", minimum=1, help="Random splits of the split-half estimate."),
               SEED, FORCE, WHERE)

    def compute(self, wh, **params):
        from metaeval.runs import api

        return api.Warehouse.annotators(wh, **params)


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

    def compute(self, wh, **params):
        from metaeval.runs import api

        return api.Warehouse.normality(wh, **params)


@register
class SimulateCoverage(Family):
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

    def compute(self, wh, **params):
        from metaeval.runs import api

        return api.Warehouse.simulate_coverage(wh, **params)


@register
class SimulatePower(Family):
    name = "simulate-power"
    topic = "metrics"
    headline = "How often each test finds ROUGE-1 better than its degraded variants."
    report = ("metaeval.runs.report.paper:power",)
    report_position = 80
    summary = ("How often each test concludes ROUGE-1 > R_k, ROUGE-1 on a random share of the tokens (the "
               "paper's Figure 3); scored from the stored texts; table power.")
    tables = ("power",)
    options = (*SIMULATION,
               Option("variant", default="recall", kind="choice", choices="metaeval.runs.simulation:ROUGE_VARIANTS",
                      flag="--rouge-variant",
                      help="ROUGE-1 statistic compared with R_k (the paper: recall on REALSumm, f1 on SummEval)."),
               Option("proportions", metavar="LIST",
                      help="Comma-separated shares of each candidate's tokens R_k keeps. Default: 0.05, 0.1, 0.2, "
                           "..., 0.9, 1.0 (the paper's)."),
               PLAIN_COEFFICIENTS.but(default=("pearson",), help="Coefficient(s). Repeatable."),
               Option("methods", kind="choice", multiple=True, choices="metaeval.analyses.simulation:TEST_METHODS",
                      flag="--method",
                      help="Test(s), as `metaeval compare`. Default: williams, boot-both, perm-both (the paper's). "
                           "Repeatable."))

    def compute(self, wh, *, proportions=None, **params):
        from metaeval.runs import api

        if isinstance(proportions, str):
            proportions = [float(p) for p in proportions.split(",") if p.strip()]
        return api.Warehouse.simulate_power(wh, **params, **({} if proportions is None else
                                                             {"proportions": proportions}))


@register
class Detection(Family):
    name = "detection"
    topic = "metrics"
    headline = "Metrics as detectors of the cells a binary human judgment marks positive."
    report = ("metaeval.runs.report.factuality:detection",)
    report_position = 20
    summary = "Metrics judged as detectors of the cells a binary human judgment marks positive."
    tables = ("detection", "detection_tests")
    tests_table = "detection_tests"
    options = (DATASET, HUMAN.but(help="The human judgment giving the labels, e.g. consistent."),
               Option("positive", kind="float", required=True, metavar="V",
                      help="A cell is positive (consistent) when its human value is >= V (<= V for a lower-is-better "
                           "judgment); a 0/1 label: --positive 1."),
               METRICS, WHERE, BY,
               Option("tune", kind="where", multiple=True, metavar="ATTR=VALUE",
                      help="Tune each metric's threshold (maximising balanced accuracy) on the cells of this subset, "
                           "e.g. split=validation (with --by, per group), and apply it to the --where cells. "
                           "Repeatable (AND). Default: tuned on the evaluated cells themselves (optimistic)."),
               Option("threshold", kind="float", metavar="T",
                      help="A fixed threshold instead of a tuned one: predicted positive when score > T (score < T "
                           "for a lower-is-better measure: T in each measure's own scale)."),
               K.but(help="Bootstrap resamples of the intervals and the paired tests (each re-tunes the threshold)."),
               ALPHA.but(help="Intervals 1 - alpha; tests' level."), SEED,
               ALTERNATIVE.but(help="H1 of the paired tests between metrics."),
               CORRECTION.but(help="Multiple-comparison correction of the paired tests."),
               CORRECTION_GROUP.but(help="The family corrected together: each metric_a's tests (per group and "
                                         "statistic), or all."),
               Option("tests", default=True, kind="switch", help="Paired tests between the metrics."),
               FORCE)

    def compute(self, wh, **params):
        from metaeval.runs import api

        return api.Warehouse.detection(wh, **params)


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
                                          "parameters and fingerprint."))

    def compute(self, wh, *, judge_globs, **params):
        from metaeval.runs import api

        return api.Warehouse.judges(wh, judges=judge_globs, **params)


@register
class Categories(Family):
    name = "categories"
    topic = "metrics"
    headline = "Error categories of the human judgment: FRANK's ablation (Pagnoni 2021)."
    report = ("metaeval.runs.report.factuality:categories",)
    report_position = 30
    summary = "Error categories of the human judgment (FRANK's ablation, Pagnoni et al. 2021)."
    tables = ("error_categories",)
    options = (*SCOPE,
               Option("category_measures", multiple=True, metavar="CATEGORY=MEASURE", flag="--category",
                      help="An error category and its human measure (one judgment per error type). Repeatable."),
               Option("ablations", multiple=True, metavar="CATEGORY=MEASURE", flag="--ablation",
                      help="The overall judgment (--human) with CATEGORY ignored, as a human measure. Repeatable."))

    def compute(self, wh, *, category_measures, **params):
        from metaeval.runs import api

        return api.Warehouse.categories(wh, categories=category_measures, **params)
