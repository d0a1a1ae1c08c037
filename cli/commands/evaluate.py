"""``metaeval evaluate``: ingest a new metric's scores and evaluate it in one command
(a call of :func:`metaeval.runs.metrics.evaluate.evaluate` per dataset)."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import click

from metaeval.cli import stdin
from metaeval.cli.app import (Context, LazyChoice, _command_line, echo_reports, fmt_option, is_text, layout_option,
                              say, say_caption, show, width)
from metaeval.cli.families import aggregate_options, click_option
from metaeval.runs.engine.options import CONTROL
from metaeval.runs.engine.options import ALPHA, FORCE, JOBS, K, RESAMPLE_CLUSTERS, SEED, SYSTEM_INPUTS, WHERE
from metaeval.runs.engine.shared_options import REPLICATES
from metaeval.cli.progress import terminal_progress
from metaeval.cli.sections import topic

#: In text output, beats / beaten by lists longer than this many characters are cut (--full-width: never).
MAX_LIST = 70


@topic("start")
@click.command("evaluate", short_help='How good is my metric? Ingest its scores and evaluate them in one run.')
@click.argument("scores", nargs=-1, metavar="[SCORES]...")
@click.option("--dataset", "datasets", multiple=True, required=True,
              help="Dataset to evaluate on; repeat it, each with its --human, to evaluate on several.")
@click.option("--human", "humans", multiple=True,
              help="The human judgment of each --dataset, in the same order (one for all if given once). With "
                   "--preferences: globs of the human judges whose majority is the reference (default all).")
@click.option("--preferences", type=click.Path(dir_okay=False, path_type=Path), default=None,
              metavar="FILE",
              help="A preference file (input,system_a,system_b,judge,order,winner[,kind]) of a new automatic "
                   "judge: ingested into the one --dataset and judged with its stored judges against the human "
                   "preference, as `metaeval judges` does (--k, --seed, --alpha, --correction, --cluster-rule, "
                   "--where).")
@click.option("--metric", "metrics", multiple=True, metavar="GLOB",
              help="Evaluate these metrics already in the warehouse too (or instead of SCORES). Repeatable.")
@click.option("--against", "against", multiple=True, metavar="GLOB",
              help="Compare with these metrics only. Default: every other automatic measure. Repeatable.")
@click.option("--level", "levels", multiple=True, type=LazyChoice("metaeval.analyses.stats.vocabulary:LEVELS"),
              help="Correlation level(s). Default: system and summary (global with --control).")
@click.option("--coefficient", "coefficients", multiple=True, type=LazyChoice("metaeval.analyses.stats.vocabulary:COEFFICIENTS"),
              help="Coefficient(s); kendall is tau-b. Default: all three.")
@click.option("--method", type=LazyChoice("metaeval.analyses.stats.vocabulary:TEST_METHODS"), default="perm-both",
              show_default=True, help="Test of each evaluated metric against each other metric (two-sided).")
@click.option("--ci-method", type=LazyChoice("metaeval.analyses.stats.vocabulary:CI_METHODS"), default="boot-both",
              show_default=True, help="Confidence interval of the correlations.")
@click.option("--correction", type=LazyChoice("metaeval.analyses.stats.vocabulary:CORRECTIONS"), default="holm",
              show_default=True, help="Correction over each evaluated metric's tests (per level and coefficient).")
@click.option("--all-pairs", is_flag=True,
              help="Also test the other metrics against each other (slower: every ordered pair); clusters are "
                   "given only then, as `metaeval winners` gives them.")
@click.option("--cluster-rule", type=LazyChoice("metaeval.analyses.stats.vocabulary:CLUSTER_RULES"), default="any",
              show_default=True, help="any: a new cluster starts at the first metric significantly beaten by any "
                                      "metric of the current cluster (mt-metrics-eval); strict: only where every "
                                      "metric above beats every metric below.")
@click_option(SYSTEM_INPUTS)
@click_option(K.but(help="Resamples (CI and tests)."))
@click_option(SEED)
@click_option(ALPHA)
@click.option("--lower", "lower", multiple=True, metavar="GLOB",
              help="Measures of SCORES for which lower is better. Repeatable.")
@click.option("--allow-new", is_flag=True, help="Let SCORES add systems or inputs to the dataset.")
@click.option("--replace", is_flag=True, help="Overwrite stored values of SCORES that differ, instead of failing.")
@click_option(JOBS)
@click_option(FORCE)
@click_option(WHERE)
@click_option(CONTROL)
@click_option(RESAMPLE_CLUSTERS)
@click_option(REPLICATES.but(help="A metric (scores.replicate) or, with --preferences, a judge "
                                  "(preferences.replicate) run several times on the same cells: mean reads each cell "
                                  "as the mean over its runs; resample also draws the runs again inside every "
                                  "bootstrap resample of the intervals (seeded), so that they include the run-to-run "
                                  "noise."))
@click.option("--replicate", "replicate", type=int, default=None, metavar="N",
              help="With --preferences: the run number of the file's rows that give none (default 0), as "
                   "`ingest preferences --replicate`.")
@aggregate_options
@fmt_option()
@layout_option
@stdin.format_option("--input-format")
@click.pass_obj
def evaluate(obj: Context, scores, datasets, humans, metrics, against, levels, coefficients, method, ci_method,
             correction, all_pairs, cluster_rule, system_inputs, k, seed, alpha, lower, allow_new, replace, jobs,
             force, where, control, resample_clusters, aggregate, fmt, layout, input_format, preferences=None,
             replicates="mean", replicate=None):
    """How good is my metric? Ingest SCORES and evaluate their metrics in one run.

    SCORES are score tables as `ingest table` reads them; with several --dataset, give each as
    DATASET:FILE; - (or DATASET:-) is standard input, read once (--input-format, else told from
    its first bytes). For each dataset: the correlation with the human judgment at each level and
    coefficient, its confidence interval, and two-sided tests of each evaluated metric against
    every other metric (Holm within each metric's tests by default), all persisted and reused
    (a second run computes nothing). Printed: correlation [CI], rank, significance cluster (with
    --all-pairs: clusters need every pair tested), and the metrics it beats and is beaten by; then
    each test: the other metric's correlation [CI], delta, p and corrected p. json/csv/markdown give every metric's rows; latex a paper's table.

    --preferences FILE evaluates a new LLM judge instead: its pairwise preferences are ingested
    and it is judged, with the dataset's stored judges, against the human preference (accuracy
    in each order, position consistency and bias, ties, kappa, with intervals; tests and clusters
    against the other judges; Bradley-Terry ranking vs the humans').
    """
    if preferences is not None:
        if aggregate != "mean":
            raise click.ClickException(f"--aggregate {aggregate} is of metrics' system scores; --preferences "
                                       "evaluates a judge: drop --aggregate")
        _evaluate_judge(obj, preferences, datasets, humans, scores, metrics, against, control, method, k, seed,
                        alpha, correction, cluster_rule, where, allow_new, replace, force, fmt, resample_clusters,
                        replicates, 0 if replicate is None else replicate)
        return
    if replicate is not None:
        raise click.UsageError("--replicate N is the run number of a --preferences file's rows; a score table's "
                               "runs are its replicate column (or `ingest table --replicate N`)")
    if not humans:
        raise click.UsageError("Missing option '--human' (the human judgment of each --dataset).")
    if len(humans) not in (1, len(datasets)):
        raise click.UsageError(f"give one --human per --dataset ({len(datasets)}), or one for all; got {len(humans)}")
    if len(set(datasets)) != len(datasets):
        raise click.UsageError("each --dataset may be named once")
    pairs = list(zip(datasets, humans if len(humans) > 1 else humans * len(datasets)))
    dashes = stdin.check_dashes([_stdin_part(a, datasets) for a in scores], "SCORES")
    if input_format and not dashes:
        raise click.UsageError("--input-format is the format of - (standard input); a file's comes from its suffix")
    with ExitStack() as stack:
        piped = stack.enter_context(stdin.stdin_table(input_format)) if dashes else None
        files = _assign(scores, datasets, piped)
        _evaluate(obj, pairs, files, metrics, against, levels, coefficients, method, ci_method, correction,
                  all_pairs, cluster_rule, system_inputs, k, seed, alpha, lower, allow_new, replace, jobs, force,
                  fmt, layout, piped, where, control, aggregate, resample_clusters, replicates)


def _evaluate(obj, pairs, files, metrics, against, levels, coefficients, method, ci_method, correction, all_pairs,
              cluster_rule, system_inputs, k, seed, alpha, lower, allow_new, replace, jobs, force, fmt, layout,
              piped: Path | None, where=(), control=None, aggregate="mean", resample_clusters=None,
              replicates="mean"):
    import pandas as pd

    from metaeval.present import ranking_tables, tables
    from metaeval.runs.metrics import evaluate as evaluation

    err = not is_text(fmt)
    results = []
    with obj.open() as wh:
        # every dataset's names and options checked before anything is written
        requests = [evaluation.prepare(
            wh, dataset, human, files[dataset], metrics=metrics, against=against,
            levels=levels, coefficients=coefficients, method=method, correction=correction,
            ci_method=ci_method, k=k, seed=seed, alpha=alpha, all_pairs=all_pairs, system_inputs=system_inputs,
            lower=lower, replace=replace, allow_new=allow_new, command=_command_line(), cluster_rule=cluster_rule,
            where=where, control=control, aggregate=aggregate, resample_clusters=resample_clusters,
            replicates=replicates)
            for dataset, human in pairs]
        for batch in (b for request in requests for b in request.batches):
            if piped is not None and batch.file == str(piped):
                batch.file = stdin.NAME   # as ingests.file and in the reports
        for request in requests:
            try:
                ev = evaluation.run_request(wh, request, jobs=jobs, force=force, progress=terminal_progress())
            except KeyboardInterrupt:
                raise click.ClickException("interrupted: the results finished so far are saved; "
                                           "run the same command again to resume") from None
            _report(ev, err)
            results.append(ev)
    if fmt in ("json", "csv"):
        frame = pd.concat([ev.table for ev in results], ignore_index=True)  # lists and conventions: JSON in csv
        click.echo(tables.render(frame, fmt), nl=False)
        return
    for i, ev in enumerate(results):
        if i:
            click.echo()
        caption = ev.caption()   # the renderers add what they bold
        if fmt == "latex":
            click.echo(ranking_tables.ranked_latex(ev.table, caption=caption, confidence=1 - alpha, layout=layout), nl=False)
        elif fmt == "markdown":
            shown, notes = _readable(ev.table, everyone=True, marker="**")
            click.echo(tables.markdown_caption(caption, notes) + tables.to_markdown(shown), nl=False)
        else:
            n = len(ev.against)
            say(f"{ev.dataset} / {ev.human}: {', '.join(ev.metrics)} against {n} other metric{'' if n == 1 else 's'}")
            shown, notes = _readable(ev.table, everyone=False, cut=None if width() is None else MAX_LIST, marker="*")
            show(shown, "text")
            for note in _cluster_notes(ev.table):
                say(note)
            # results, not conventions: their own lines, never cut with the caption
            extra = [f"Human ceiling (leave-one-out, metaeval annotators): {c}." if (c := ev.ceiling_text()) else "",
                     f"Duplicated measures (the same numbers): {ev.duplicates_text()}." if ev.duplicates else ""]
            for line in filter(None, extra):
                caption = caption.replace(f" {line}", "")
            say_caption(caption, f"{notes} Every metric's rows: --format json, csv, markdown or latex.")
            for line in filter(None, extra):
                say(line)
            if len(ev.tests):
                click.echo()
                say(f"Tests of {', '.join(ev.metrics)} against each other metric (its correlation [CI]; delta = "
                    f"the difference of the correlations; p corrected: {ev.settings['correction']} within each "
                    "metric's tests; *: significant at alpha "
                    f"{ev.settings['alpha']:g}):")
                show(_tests_readable(ev), "text")


def _evaluate_judge(obj, preferences, datasets, humans, scores, metrics, against, control, method, k, seed, alpha,
                    correction, cluster_rule, where, allow_new, replace, force, fmt, resample_clusters=None,
                    replicates="mean", replicate=0):
    """``evaluate --preferences FILE``: a new judge (:func:`metaeval.runs.votes.judge_evaluation.evaluate_judge`)."""
    from metaeval.cli.app import show_blocks
    from metaeval.runs.votes import judge_evaluation
    from metaeval.runs.votes import judges as judges_runs

    if len(datasets) != 1:
        raise click.UsageError("--preferences evaluates a judge on one --dataset")
    if scores or metrics or against or control:
        raise click.UsageError("--preferences evaluates a judge; give SCORES, --metric, --against or --control "
                               "in a separate evaluate (of metrics)")
    test = "permutation"   # both tests are stored; the clusters rest on the permutation test (as judges)
    with obj.open() as wh:
        ev = judge_evaluation.evaluate_judge(wh, datasets[0], preferences, humans=humans, k=k, seed=seed, alpha=alpha,
                                       test=test, correction=correction, cluster_rule=cluster_rule, where=where,
                                       replace=replace, allow_new=allow_new, command=_command_line(), force=force,
                                       resample_clusters=resample_clusters, replicates=replicates,
                                       replicate=replicate)
    err = not is_text(fmt)
    echo_reports([ev.loaded], err=err)
    state = ("up to date; nothing computed" if ev.summary.run_id is None
             else f"run {ev.summary.run_id}: wrote {ev.summary.rows} rows")
    say(f"judges of {ev.dataset} vs the majority of {ev.human}: {state}", err=err)
    from metaeval.present import paper_tables

    stats = ev.rows["judge_statistics"]
    why = paper_tables.judges_undetermined(stats)
    if fmt in ("json", "csv"):
        show_blocks([(t, ev.rows[t]) for t in judges_runs.TABLES], fmt)
        if why:
            say(f"clusters not determined: {why}", err=True)
        return
    shown = stats[(["subset"] if (stats["subset"] != "").any() else []) + ["judge", "n", "rank", "cluster"]].copy()
    shown.insert(0, "new", ["*" if j in ev.judges else "" for j in stats["judge"]])
    for name in ("accuracy", "accuracy_ab", "accuracy_ba", "position_consistency", "first_position_rate", "tie_rate",
                 "kappa", "kendall"):
        shown[name] = [_interval(v, lo, hi) for v, lo, hi in zip(stats[name], stats[f"{name}_lower"],
                                                                  stats[f"{name}_upper"])]
    caption = (f"Judges of {ev.dataset} against the majority of {ev.human} ({100 * (1 - alpha):g}% percentile "
               f"bootstrap intervals over items, k={k}, seed={seed}; clusters: {test} test, {correction} correction; "
               f"*: the judges of {preferences})." + (f" Clusters not determined: {why}." if why else ""))
    if fmt in ("markdown", "latex"):
        show(shown, fmt, caption=caption)
        return
    show(shown, "table")
    tests = ev.rows["judge_tests"]
    mine = tests[tests["judge_a"].isin(ev.judges) | tests["judge_b"].isin(ev.judges)]
    if len(mine):
        click.echo()
        from metaeval.analyses import conclusions
        from metaeval.analyses.stored_tests import JUDGE_TEST_FORMULAS

        printed = conclusions.printed_by(mine, JUDGE_TEST_FORMULAS, key="test", columns=("pvalue", "pvalue_corrected"))
        show(printed[["test", "judge_a", "judge_b", "n", "delta", "pvalue", "pvalue_corrected", "significant"]].round(4),
             "table")
    say_caption(caption, "Every table: --format json.")


def _interval(v, lo, hi) -> str:
    if pd_isna(v):
        return "undefined"
    from metaeval.present import ranking_tables

    return ranking_tables.plain_number(v) + ("" if pd_isna(lo) or pd_isna(hi) else
                                     f" [{ranking_tables.plain_number(lo)}, {ranking_tables.plain_number(hi)}]")


def _stdin_part(arg: str, datasets) -> str:
    """``-`` when ``arg`` is standard input (``-``, or ``DATASET:-`` of a --dataset), else ``arg``."""
    dataset, _, rest = arg.partition(":")
    return stdin.DASH if arg == stdin.DASH or (rest == stdin.DASH and dataset in datasets
                                               and not Path(arg).exists()) else arg


def _assign(scores, datasets, piped: Path | None = None) -> dict[str, list[Path]]:
    """SCORES per dataset: FILE (one --dataset) or DATASET:FILE; ``piped``: the file standard
    input was copied to, for ``-``."""
    files: dict[str, list[Path]] = {d: [] for d in datasets}
    for arg in scores:
        path = Path(arg)
        dataset, _, rest = arg.partition(":")
        if arg == stdin.DASH and piped is not None and len(datasets) == 1:
            files[datasets[0]].append(piped)
            continue
        if not path.exists() and rest and dataset in files:
            if rest == stdin.DASH and piped is not None:
                files[dataset].append(piped)
                continue
            path, target = Path(rest), dataset
        elif len(datasets) == 1:
            target = datasets[0]
        else:
            raise click.BadParameter(f"{arg!r}: with several --dataset, name each file's dataset as DATASET:FILE",
                                     param_hint="SCORES")
        if not path.is_file():
            raise click.BadParameter(f"{str(path)!r}: no such file", param_hint="SCORES")
        files[target].append(path)
    return files


def _report(ev, err: bool) -> None:
    if ev.loaded:
        echo_reports(ev.loaded, err=err)
    for reason in ev.skipped.values():
        say(f"skipped: {reason}", err=True)
    for name, out in ev.outcomes.items():
        s = out.summary
        table = out.analysis.table
        if s.up_to_date:
            say(f"{table}: all {s.tasks} results up to date; nothing computed", err=err)
        else:
            say(f"{table}: run {s.run_id}: computed {s.computed} of {s.tasks}, wrote {s.written} rows", err=err)


def _readable(table, *, everyone: bool, cut: int | None = None, marker: str = "**"):
    """The rows as a reader wants them, in the LaTeX table's order (per level and coefficient, by
    correlation, undefined last): correlation [CI] (the LaTeX table's bold between ``marker`` in
    markdown, followed by it in text), rank of n, cluster, beats / beaten by; and the caption's
    sentences on order and bold."""
    from metaeval.present import ranking_tables

    ranking = ranking_tables.Ranking(table, ceiling=False)
    table = ranking_tables.sort_ranked(table.reset_index(drop=True))
    bold = ranking_tables.bold_ranked(table, unresolved=list(ranking.unresolved))
    keep = table["evaluated"] if not everyone else pd_true(table)
    rows, bold = table[keep], bold[keep]

    def names(v):
        text = ", ".join(v)
        if cut is not None and len(text) > cut:
            text = text[:cut].rsplit(", ", 1)[0] + f", ... ({len(v)})"
        return text

    def corr(r, b):
        if r.correlation is None or pd_isna(r.correlation):
            return "undefined"
        value = ranking_tables.plain_number(r.correlation)
        value = (f"**{value}**" if marker == "**" else f"{value}{marker}") if b else value
        ci = "" if pd_isna(r.lower) or pd_isna(r.upper) else \
            f" [{ranking_tables.plain_number(r.lower)}, {ranking_tables.plain_number(r.upper)}]"
        return value + ci

    out = rows.assign(correlation=[corr(r, b) for r, b in zip(rows.itertuples(), bold)],
                      rank=["-" if pd_isna(r.rank) else f"{int(r.rank)}/{r.n_metrics}" for r in rows.itertuples()],
                      cluster=["-" if pd_isna(r.cluster) else int(r.cluster) for r in rows.itertuples()],
                      beats=rows["beats"].map(names), beaten_by=rows["beaten_by"].map(names))
    notes = "Rows sorted by correlation within each level and coefficient, undefined last. " + \
        ranking_tables.bold_sentence({s: c for s, c in ranking.clustered.items() if s not in ranking.unresolved},
                             "Bold" if marker == "**" else marker) + \
        "".join(f" No bold in {' '.join(s)}: {line}." for s, line in ranking.unresolved.items() if marker == "**")
    return out[["metric", "level", "coefficient", "correlation", "rank", "cluster", "beats", "beaten_by"]], notes


def _tests_readable(ev):
    """The tests of :attr:`Evaluation.tests` as text rows: the other metric's correlation [CI],
    delta, p and corrected p as the conclusion layer prints them (at their resolution), a ``*``
    on a significant corrected p."""
    from metaeval.analyses import conclusions
    from metaeval.present import ranking_tables
    from metaeval.runs.metrics import comparisons

    t = ev.tests
    printed = conclusions.printed_pvalues(t, comparisons.pvalue_formula(ev.settings["method"]))

    def interval(r):
        if pd_isna(r.correlation):
            return "undefined"
        ci = "" if pd_isna(r.lower) or pd_isna(r.upper) else \
            f" [{ranking_tables.plain_number(r.lower)}, {ranking_tables.plain_number(r.upper)}]"
        return ranking_tables.plain_number(r.correlation) + ci

    return t[["metric", "level", "coefficient", "against"]].assign(
        correlation=[interval(r) for r in t.itertuples()],
        delta=[ranking_tables.plain_number(d) for d in t["delta"]],
        p=list(printed["p_value"]),
        p_corrected=[f"{p}*" if bool(sig) else p for p, sig in zip(printed["p_adjusted"], t["significant"])])


def pd_true(frame):
    import pandas as pd

    return pd.Series(True, index=frame.index)


def _cluster_notes(table) -> list[str]:
    """Why a cluster column shows '-': one line per distinct reason (and where; a note on tests
    that cannot resolve names its level and coefficient itself)."""
    from metaeval.analyses import stored_tests

    notes: dict[str, list[str]] = {}
    for r in table.itertuples():
        if isinstance(r.cluster_note, str) and r.cluster_note and (r.evaluated or r.status != "undefined"):
            if r.status == "unresolvable":
                notes.setdefault(stored_tests.not_a_finding(r.cluster_note), [])
                continue
            where = f"{r.level} level, {r.coefficient}" + (f", {r.metric}" if r.status == "undefined" else "")
            notes.setdefault(r.cluster_note, [])
            if where not in notes[r.cluster_note]:
                notes[r.cluster_note].append(where)
    return [f"{'; '.join(places)}: {note}" if places else note for note, places in notes.items()]


def pd_isna(x) -> bool:
    import pandas as pd

    return x is None or bool(pd.isna(x))


COMMANDS = [evaluate]
