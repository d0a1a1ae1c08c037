"""The families that rank metrics or systems against a human judgment: ``accuracy``,
``systems-agreement``, ``winners``, ``replicability`` (their computation:
:mod:`metaeval.runs.metrics.ranking`) and ``rank-tasks`` (:mod:`metaeval.runs.metrics.task_ranking`).

This module is read when the command line starts: it imports its computation inside ``compute``.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.engine import parameters
from metaeval.runs.engine.shared_options import LAYOUT
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import (AGGREGATE, ALPHA, ALTERNATIVE, CORRECTION, CORRECTION_GROUP, DATASET, FORCE,
                                          HUMAN, JOBS, K, LEVELS, METRICS, PLAIN_COEFFICIENTS, SEED, SYSTEM_INPUTS,
                                          SYSTEM_TYPE, WHERE, Option)

_VOCABULARY = "metaeval.analyses.stats.vocabulary:"

#: the options of the families that read compare's stored tests (winners, replicability)
TESTS_READ = (LEVELS.but(help="Correlation level(s) of the tests. Default: all three."),
              PLAIN_COEFFICIENTS.but(help="Coefficient(s) of the tests. Default: all three."),
              Option("method", default="perm-both", kind="choice", choices=_VOCABULARY + "TEST_METHODS",
                     help="The `metaeval compare` test whose rows are read."),
              ALPHA.but(help="winners: a beats b when p_adjusted <= alpha; replicability: level of the "
                             "partial-conjunction tests."),
              FORCE)


def replicability_on(datasets, humans) -> list[tuple[str, str]]:
    """The (dataset, human) pairs of ``replicability``: one human per dataset, or one for all."""
    if len(humans) not in (1, len(datasets)):
        raise WarehouseError(Message(Argument("humans", list(humans)), f": give one per dataset ({len(datasets)}),"
                                     " or one for all"))
    return list(zip(datasets, humans if len(humans) > 1 else list(humans) * len(datasets)))


@register
class Accuracy(Family):
    """Pairwise accuracy of metrics against a human judgment (Louis & Nenkova 2013).

    Over every pair of systems, the share where the metric orders the pair as the human does
    (sign of the differences, a tie being its own order), at the system level (system means)
    and the micro level (pairs within each input, pooled): table pairwise_accuracy. Also the
    number and percent of inputs whose per-input correlation is significant at --alpha:
    table input_significance. With --soft: soft pairwise accuracy (Thompson et al. 2024), per
    system pair a one-sided paired permutation test over the inputs under the human and under the
    metric, SPA = 1 - mean |p_human - p_metric|: table soft_pairwise_accuracy. With --delta-bins Q:
    also the accuracy and tau within Q bins of the human difference: table delta_bin_accuracy.
    --aggregate median (with --level system, or --soft): a system's score is its median over the
    inputs (Graham 2015), a key of the rows beside the mean's.
    """

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
               ALTERNATIVE.but(choices="metaeval.runs.metrics.ranking:ALTERNATIVES",
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
               Option("pvalue", default="t", kind="choice", choices="metaeval.runs.metrics.ranking:PVALUE_METHODS",
                      help="p-values of the per-input correlations: t (scipy's defaults) or as89 (R's cor.test for "
                           "Spearman, as Louis & Nenkova: exact for n <= 9, AS 89's series above; --coefficient "
                           "spearman)."),
               JOBS, FORCE, WHERE, SYSTEM_TYPE,
               AGGREGATE.but(help="A metric's system score: the mean or the median over its inputs, the human's its "
                                  "mean unless --human-aggregate (system level: give "
                                  "--level system; --soft: the statistic of each pair's test). A key of the rows; a "
                                  "median is in their fingerprint, conventions and signature (agg:median)."))
    positional = ("dataset", "human", "metrics", "levels", "coefficients")

    def compute(self, wh, **params):
        """:func:`metaeval.runs.metrics.ranking.accuracy`: the rows of each table it wrote, each carrying its
        run, the metrics left out and the settings the text says (:func:`with_run`)."""
        from metaeval.runs.metrics import ranking
        from metaeval.runs.engine.family_present import with_run

        outcomes = ranking.accuracy(wh, **params)
        said = (list(outcomes[0].skipped.values()) if outcomes else [], params["alpha"], params["alternative"],
                params["aggregate"])
        return {o.analysis.table: with_run(o.rows(wh), (o.summary, *said)) for o in outcomes}

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        from metaeval.runs.engine.family_present import TEXT, run_line, run_of

        runs = [(t, run_of(f)) for t, f in outcome.items() if run_of(f) is not None]
        skipped = [f"skipped: {r}" for r in runs[0][1][1]] if runs else []
        return skipped + ([] if fmt in TEXT else [run_line(t, r[0]) for t, r in runs])

    def present(self, outcome, fmt: str) -> str:
        """Text: per table its run, then its rows as the hand-written command printed them
        (:func:`accuracy_text`); json and csv: every column; markdown and latex: the main columns."""
        from metaeval.present import tables
        from metaeval.runs.engine.family_present import TEXT, prose, run_line, run_of

        if fmt not in TEXT:
            shown = {t: _accuracy_sorted(t, f) for t, f in outcome.items()}
            return tables.render_blocks([(t, f.reset_index(drop=True) if fmt in ("json", "csv") else
                                          f[ACCURACY_COLUMNS[t]].reset_index(drop=True)) for t, f in shown.items()],
                                        fmt)
        out = []
        for table, frame in outcome.items():
            run = run_of(frame)
            out += [prose(run_line(table, run[0])) if run else "", accuracy_text(table, frame, fmt, *(run or ())[2:])]
        return "".join(out)


#: the columns of accuracy's tables in markdown and latex
ACCURACY_COLUMNS = {"pairwise_accuracy": ["metric", "level", "accuracy"],
                    "input_significance": ["metric", "coefficient", "n_inputs", "n_significant", "percent_significant"],
                    "soft_pairwise_accuracy": ["metric", "spa", "pairs", "systems_used", "inputs_used"],
                    "delta_bin_accuracy": ["metric", "bin", "low", "high", "pairs", "accuracy", "kendall"]}


def _accuracy_sorted(table: str, frame):
    """Soft pairwise accuracy by SPA, the best first (undefined last; equal SPAs by name), not by name."""
    if table != "soft_pairwise_accuracy":
        return frame
    return frame.sort_values(["spa", "metric"], ascending=[False, True], na_position="last", kind="stable")


def accuracy_text(table: str, frame, fmt: str, alpha=0.05, alternative="two-sided", aggregate="mean") -> str:
    """One table of ``accuracy`` as its text output shows it: accuracy by metric and level; the
    inputs with a significant correlation by coefficient; soft pairwise accuracy; accuracy / tau by
    bin of the human difference. A median's note after the accuracies."""
    import pandas as pd

    from metaeval.present import tables
    from metaeval.runs.engine.family_present import prose

    median = prose(f"a system's score: its {aggregate} over its inputs (--aggregate {aggregate})") \
        if aggregate != "mean" else ""
    if table == "pairwise_accuracy":
        wide = frame.pivot_table(index="metric", columns="level", values="accuracy", dropna=False)
        return tables.render(wide.round(3), "text") + median
    if table == "input_significance":
        frame = frame.assign(significant=[f"{n} ({p:.1f}%)" for n, p in
                                          zip(frame["n_significant"], frame["percent_significant"])])
        wide = frame.pivot(index="metric", columns="coefficient", values="significant")
        return prose(f"inputs with a significant correlation (p <= {alpha}, {alternative}), of "
                     f"{frame['n_inputs'].max()}:") + tables.render(wide, "text")
    if table == "soft_pairwise_accuracy":
        return tables.render(_accuracy_sorted(table, frame)[ACCURACY_COLUMNS[table]].round(4), fmt) + median
    frame = frame.assign(cell=[f"{a:.3f} / {t:+.3f} ({n})" if pd.notna(a) else f"- ({n})"
                               for a, t, n in zip(frame["accuracy"], frame["kendall"], frame["pairs"])])
    wide = frame.pivot(index="metric", columns="bin", values="cell")
    return prose("accuracy / tau (pairs) by bin of |human difference|, bin 0 = the closest pairs:") + \
        tables.render(wide, "text")


@register
class SystemsAgreement(Family):
    """Do metrics reach the same conclusions about systems as the humans?

    Every pair of systems is tested (paired over inputs: t-test, Wilcoxon signed-rank, or a
    seeded permutation test with --k sign flips) under the human judgment and under each
    metric; per metric, the pairs where both are significant in the same direction, in
    opposite directions, only the metric, only the human, or neither: table system_agreement.
    """

    name = "systems-agreement"
    topic = "metrics"
    summary = "Do metrics reach the same conclusions about systems as the humans?"
    tables = ("system_agreement",)
    options = (DATASET, HUMAN, METRICS,
               Option("tests", kind="choice", multiple=True, choices="metaeval.analyses.ranking:PAIR_TESTS",
                      flag="--test",
                      help="Paired two-sided test of each pair of systems over the inputs. Default: all three."),
               ALPHA, K, SEED, JOBS, FORCE)
    positional = ("dataset", "human", "metrics", "tests")

    def compute(self, wh, **params):
        """:func:`metaeval.runs.metrics.ranking.systems_agreement`'s rows (table ``system_agreement``), carrying
        each test's run and its number of rows, and the metrics left out (:func:`with_run`)."""
        import pandas as pd

        from metaeval.runs.metrics import ranking
        from metaeval.runs.engine.family_present import with_run

        outcomes = ranking.systems_agreement(wh, **params)
        parts = [o.rows(wh) for o in outcomes]
        return with_run(pd.concat(parts, ignore_index=True),
                        ([(o.summary, len(p)) for o, p in zip(outcomes, parts)],
                         list(outcomes[0].skipped.values()) if outcomes else []))

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        from metaeval.runs.engine.family_present import TEXT, run_line, run_of

        runs, skipped = run_of(outcome) or ([], [])
        return [f"skipped: {r}" for r in skipped] + ([] if fmt in TEXT else
                                                     [run_line("system_agreement", s) for s, _ in runs])

    def present(self, outcome, fmt: str) -> str:
        """Text: each test's run, then its rows; json and csv: every column; else the counts."""
        from metaeval.present import tables
        from metaeval.runs.engine.family_present import TEXT, prose, run_line, run_of

        cols = ["metric", "test", "pairs", "same", "opposite", "metric_only", "human_only", "neither", "agreement"]
        if fmt not in TEXT:
            return tables.render_blocks([("system_agreement", outcome if fmt in ("json", "csv") else outcome[cols])],
                                        fmt)
        out, start = [], 0
        for summary, n in (run_of(outcome) or ([], []))[0]:
            part = outcome.iloc[start:start + n]
            start += n
            out += [prose(run_line("system_agreement", summary)), tables.render(part[cols].round(3), fmt)]
        return "".join(out)


@register
class Winners(Family):
    """Metrics not significantly beaten by any other, and significance clusters.

    Reads the latest `metaeval compare` rows (never recomputes a test) of every ordered pair of
    the metrics. A winner is beaten by no other metric (Graham 2015); clusters by --cluster-rule
    (default mt-metrics-eval's: sorted by correlation, a new cluster starts at the first metric
    significantly beaten by any metric of the current cluster). A metric whose correlation is
    undefined is listed apart; when the tests cannot reach their corrected level, no cluster or
    winner is given. Table winners.
    """

    name = "winners"
    topic = "metrics"
    summary = "Metrics not significantly beaten by any other, and significance clusters."
    tables = ("winners",)
    tests_table = "hypothesis_tests"
    options = (DATASET, HUMAN, METRICS, *TESTS_READ,
               ALTERNATIVE.but(choices="metaeval.runs.metrics.ranking:ALTERNATIVES",
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
    presented = (LAYOUT,)
    positional = ("dataset", "human", "metrics", "levels", "coefficients")

    def compute(self, wh, **params):
        """:func:`metaeval.runs.metrics.ranking.winners`' rows (table ``winners``; reads stored tests),
        carrying the run (:func:`metaeval.runs.engine.family_present.with_run`)."""
        from metaeval.runs.metrics import ranking
        from metaeval.runs.engine.family_present import with_run

        summary, rows = ranking.winners(wh, **params)
        return with_run(rows, summary)

    def _said(self, outcome) -> list[str]:
        """The run's line, then what the table cannot show (:func:`winners_notes`)."""
        from metaeval.runs.engine.family_present import run_line, run_of

        run = run_of(outcome)
        return ([run_line("winners", run)] if run is not None else []) + winners_notes(outcome)

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        from metaeval.runs.engine.family_present import TEXT

        return [] if fmt in TEXT else self._said(outcome)

    def present(self, outcome, fmt: str, layout: str = "auto") -> str:
        """Text: the run and the notes, then the ranked metrics (cluster, * a winner); json and csv:
        every column; markdown and latex: the paper's table of the clusters."""
        import pandas as pd

        from metaeval.present import tables
        from metaeval.runs.engine.family_present import TEXT, prose

        frame = outcome
        if fmt in ("json", "csv") or (fmt not in TEXT and frame.empty):
            return tables.render(frame.reset_index(drop=True), fmt)
        if fmt not in TEXT:
            from metaeval.analyses import ranking
            from metaeval.present import ranking_tables

            r = frame.iloc[0]
            caption = (f"Significance clusters of the correlation with {r['human']} on {r['dataset']}: {r['method']} "
                       f"tests ({r['alternative']}), correction {r['correction']} per {r['correction_group']}, "
                       f"alpha={r['alpha']:g}"
                       + ("; a system's score the median over its inputs" if r["aggregate"] == "median" else "")
                       + f"; clusters (cl.): {ranking.CLUSTER_RULE_TEXT[r['cluster_rule']]}.")
            ranked = ranking_tables.Ranking(frame.sort_values(["rank"], na_position="last", kind="stable"))
            return ranked.latex(caption, layout) if fmt == "latex" else ranked.markdown(caption)
        ranked = frame[frame["status"] != "undefined"]
        shown = ranked.assign(winner=[("*" if w else "") if pd.notna(w) else "-" for w in ranked["is_winner"]],
                              cluster=["-" if pd.isna(v) else int(v) for v in ranked["cluster"]])
        return prose(*self._said(outcome)) + tables.render(
            shown[["level", "coefficient", "rank", "metric", "correlation", "cluster", "winner", "n_beaten_by"]]
            .round(4), fmt)


def winners_notes(frame) -> list[str]:
    """What the winners table cannot show: metrics set apart as undefined, families that cannot
    resolve, metrics left out of the ranking."""
    import json

    from metaeval.analyses import stored_tests

    notes = []
    undefined = frame[frame["status"] == "undefined"]
    if len(undefined):
        names = sorted(set(undefined["metric"]))
        notes.append(f"undefined (not ranked): {', '.join(names)}: the correlation is undefined, e.g. the metric is "
                     "constant on these inputs")
    notes += [stored_tests.not_a_finding(line, "no cluster or winner is given")
              for line in stored_tests.recorded_unresolvable(frame["conventions"])]
    seen = set(notes)
    for conv in frame["conventions"]:
        for reason in (json.loads(conv).get("skipped") or {}).values():
            if reason not in seen:
                seen.add(reason)
                notes.append(f"skipped: {reason}")
    return notes


@register
class Replicability(Family):
    """On how many datasets does metric A beat metric B? (Dror et al. 2017)

    For each ordered pair of metrics (by name, present in every dataset), the uncorrected
    p-values of the latest `metaeval compare` rows on each dataset are combined by the
    partial-conjunction test; k_hat estimates the number of datasets where A beats B.
    Table replicability.
    """

    name = "replicability"
    topic = "metrics"
    summary = "On how many datasets does metric A beat metric B? (Dror et al. 2017)"
    tables = ("replicability",)
    options = (Option("datasets", multiple=True, required=True, flag="--dataset",
                      help="A dataset; name two or more, each followed by its --human."),
               Option("humans", multiple=True, required=True, flag="--human",
                      help="The human judgment of each --dataset, in the same order (one for all if given once)."),
               METRICS, *TESTS_READ,
               ALTERNATIVE.but(default="greater", choices="metaeval.runs.metrics.ranking:ALTERNATIVES",
                               help="The alternative of the tests read: a replicated claim is directional (run "
                                    "compare with --alternative greater for it)."),
               Option("pc_methods", kind="choice", multiple=True, choices="metaeval.analyses.replicability:PC_METHODS",
                      flag="--pc-method",
                      help="Partial-conjunction combination: bonferroni (any dependence) or fisher (independent "
                           "datasets). Default: both."))
    positional = ("datasets", "humans", "metrics")

    def parameters(self, *args, **given):
        """As :meth:`Family.parameters`; ``on``, the (dataset, human) pairs (the older Python
        form), gives ``datasets`` and ``humans``."""
        if "on" in given:
            on = [tuple(pair) for pair in given.pop("on")]
            given["datasets"], given["humans"] = [d for d, _ in on], [h for _, h in on]
        return super().parameters(*args, **given)

    def compute(self, wh, *, datasets, humans, **params):
        """:func:`metaeval.runs.metrics.ranking.replicability`'s rows over the (dataset, human) pairs,
        carrying the run (:func:`metaeval.runs.engine.family_present.with_run`)."""
        from metaeval.runs.metrics import ranking
        from metaeval.runs.engine.family_present import with_run

        summary, rows = ranking.replicability(wh, replicability_on(datasets, humans), **params)
        return with_run(rows, summary)

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        from metaeval.runs.engine.family_present import TEXT, run_line, run_of

        return [] if fmt in TEXT or run_of(outcome) is None else [run_line("replicability", run_of(outcome))]

    def present(self, outcome, fmt: str) -> str:
        """Text: the run, then per ordered pair and combination k_hat and the datasets; json and
        csv: every column; markdown and latex: those of the text."""
        from metaeval.present import tables
        from metaeval.runs.engine.family_present import TEXT, prose, run_line, run_of

        cols = ["metric_a", "metric_b", "level", "coefficient", "pc_method", "k_hat", "n_datasets", "identified"]
        if fmt in TEXT:
            said = prose(run_line("replicability", run_of(outcome))) if run_of(outcome) is not None else ""
            return said + tables.render(outcome[cols].fillna(""), fmt)
        shown = outcome.reset_index(drop=True) if fmt in ("json", "csv") else outcome[cols].reset_index(drop=True)
        return tables.render(shown, fmt, caption="The rows of metaeval replicability." if fmt == "latex" else None)


@register
class RankTasks(Family):
    """Rank metrics over several tasks: each task's correlation, the weighted average of the
    scores mapped to [0, 1], and significance clusters from a permutation test on the average
    (table task_rankings). --aggregate median: every system-level task's system scores are
    medians over the inputs (Graham 2015)."""

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
               Option("task_set", kind="choice", choices="metaeval.runs.metrics.task_ranking:TASK_SETS", metavar="NAME",
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
    presented = (LAYOUT,)
    positional = ("tasks", "metrics", "task_set", "datasets", "human")

    def compute(self, wh, *, tasks, task_set, datasets, human, metrics, **params):
        """:func:`metaeval.runs.metrics.task_ranking.rank_tasks` of the tasks written
        ``DATASET:HUMAN:LEVEL:COEFFICIENT[:WEIGHT]`` and of a named ``task_set`` over ``datasets``;
        the rows carry the run (:func:`metaeval.runs.engine.family_present.with_run`)."""
        from dataclasses import replace

        from metaeval.runs.metrics import task_ranking
        from metaeval.runs.engine.family_present import with_run

        specs = task_ranking.specs_of(tasks, task_set, datasets, human)
        out = task_ranking.rank_tasks(wh, specs, metrics, **params)
        return with_run(out.rows, replace(out, rows=None))

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        from metaeval.runs.metrics import task_ranking
        from metaeval.runs.engine.family_present import TEXT

        return [] if fmt in TEXT else task_ranking.note_line(outcome)

    def present(self, outcome, fmt: str, layout: str = "auto") -> str:
        """Text: the run, the tasks and one line per metric; json: per metric its correlations by
        task and p-values; markdown and latex: the paper's table (:func:`metaeval.runs.metrics.task_ranking.paper`)."""
        from metaeval.runs.metrics import task_ranking
        from metaeval.runs.engine.family_present import TEXT, prose, run_of

        if fmt in TEXT:
            run = run_of(outcome)
            return prose(*task_ranking.text(outcome, None if run is None else run.run_id))
        if fmt == "json":
            return task_ranking.as_json(outcome)
        if fmt in ("latex", "markdown"):
            return task_ranking.paper(outcome, fmt, layout)
        return super().present(outcome, fmt)
