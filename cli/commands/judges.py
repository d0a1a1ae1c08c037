"""``metaeval judges``: automatic judges of pairwise preferences against the human preference."""

from __future__ import annotations

import click

from metaeval.cli.app import Context, fmt_option, is_text, layout_option, show, say
from metaeval.cli.families import options_of

#: How each test between judges computes its p-value (for printing it at its resolution): the
#: exact McNemar test, and the permutation test's (1 + count) / (1 + k).
from metaeval.analyses.stored_tests import JUDGE_TEST_FORMULAS  # noqa: E402  (how the judges' tests form p)


@click.command()
@options_of("judges")
@fmt_option()
@layout_option
@click.pass_obj
def judges(obj: Context, dataset, humans, judge_globs, k, alpha, seed, test, correction, cluster_rule, ridge, where, by,
           force, resample_clusters, replicates, fmt, layout):
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
    from metaeval.runs.votes import judges as runs

    with obj.open() as wh:
        s = runs.judges(wh, dataset, humans, judge_globs, k=k, alpha=alpha, seed=seed, test=test,
                        correction=correction, cluster_rule=cluster_rule, ridge=ridge, where=where, by=by,
                        force=force, resample_clusters=resample_clusters, replicates=replicates)
        state = "up to date; nothing computed" if s.run_id is None else f"run {s.run_id}: wrote {s.rows} rows"
        tied = "; ".join(f"{n} in {label}" if label else str(n) for label, n in s.tied_majority.items())
        clustered = f"; clusters of items resampled whole ({resample_clusters})" if resample_clusters else ""
        clustered += "; each judge's runs resampled within the item resamples" if replicates == "resample" else ""
        say(f"judges of {dataset} vs the majority of {s.human}: {state}; items with a tied human majority "
                   f"left out: {tied}{clustered}", err=not is_text(fmt))
        rows = runs.latest(wh, dataset, s.human, list(s.tied_majority))
        if fmt in ("markdown", "latex"):
            from metaeval.runs.engine import signatures

            signed = {subset: signatures.table_signature(wh, part)
                      for subset, part in rows["judge_statistics"].groupby("subset", sort=False)}
    from metaeval.present import paper_tables

    stats = rows["judge_statistics"]
    why = paper_tables.judges_undetermined(stats)
    if fmt in ("json", "csv"):
        from metaeval.cli.app import show_blocks

        show_blocks([(t, rows[t]) for t in runs.TABLES], fmt)
        if why:
            say(f"clusters not determined: {why}", err=True)
        return
    shown = stats[(["subset"] if (stats["subset"] != "").any() else []) + ["judge", "n", "cluster"]].copy()
    for name in ("accuracy", "accuracy_ab", "accuracy_ba", "both_correct", "position_consistency",
                 "first_position_rate", "tie_rate", "kappa", "kendall"):
        shown[name] = [_ci(v, lo, hi) for v, lo, hi in zip(stats[name], stats[f"{name}_lower"], stats[f"{name}_upper"])]
    if "stability" in stats and stats["stability"].notna().any():        # a judge run more than once
        shown["stability"] = [_ci(v, lo, hi) for v, lo, hi in zip(stats["stability"], stats["stability_lower"],
                                                                   stats["stability_upper"])]
    confidence = f"{100 * (1 - alpha):g}%"
    if fmt in ("markdown", "latex"):
        _paper(stats, fmt, layout, signed, dataset=dataset, human=s.human, confidence=confidence, k=k, seed=seed,
               test=test, correction=correction, cluster_rule=cluster_rule, alpha=alpha)
        return
    click.echo()
    show(shown, "table")
    say(f"\nintervals: {confidence} percentile bootstrap over items (k={k}, seed={seed}); clusters by accuracy "
               f"from the {test} test, {correction}-corrected over the pairs of judges")
    if why:
        say(f"clusters not determined: {why}")
    tests = rows["judge_tests"]
    if len(tests):
        click.echo()
        from metaeval.analyses import conclusions

        printed = conclusions.printed_by(tests, JUDGE_TEST_FORMULAS, key="test", columns=("pvalue", "pvalue_corrected"))
        show(printed[(["subset"] if (tests["subset"] != "").any() else []) + [
            "test", "judge_a", "judge_b", "n", "delta", "discordant_a", "discordant_b", "pvalue", "pvalue_corrected",
            "significant"]].round(4), "table")
    ranking = rows["preference_rankings"]
    say("\nBradley-Terry strengths (log scale, mean 0; ties half a win each side; "
               f"ridge {ridge:g}):")
    show(ranking.assign(strength=[_ci(v, lo, hi) for v, lo, hi in zip(ranking["strength"], ranking["lower"],
                                                                          ranking["upper"])])
         [(["subset"] if (ranking["subset"] != "").any() else []) + ["judge", "rank", "system", "strength",
                                                                      "comparisons"]], "table")


def _paper(stats, fmt: str, layout: str, signed: dict, *, dataset, human, confidence, k, seed, test, correction,
           cluster_rule, alpha) -> None:
    """One paper table per subset: judges x statistics with their intervals, accuracy's top
    significance cluster in bold (LaTeX, or markdown that agrees with it)."""
    from metaeval.present import paper_tables

    for i, (subset, part) in enumerate(stats.groupby("subset", sort=False)):
        caption = (f"Automatic judges of {dataset}{f' (items {subset})' if subset else ''} against the majority of "
                   f"{human}: accuracy (each order ab / ba and overall), both orders correct, position consistency, "
                   f"Cohen's kappa over a/b/tie, Kendall tau of its Bradley-Terry system ranking vs the humans', "
                   f"first-position and tie rates; {confidence} percentile bootstrap intervals over items (k={k}, "
                   f"seed={seed}); accuracy's clusters (cl.) from the {test} test, {correction}-corrected over the "
                   f"pairs of judges, alpha={alpha:g}, cluster rule {cluster_rule}"
                   + (f"; signature {signed[subset]}" if signed.get(subset) else "") + ".")
        ranking = paper_tables.judges_ranking(part, confidence=1 - alpha)
        if i:
            click.echo()
        click.echo(ranking.latex(caption, layout) if fmt == "latex" else ranking.markdown(caption), nl=False)


def _ci(v, lo, hi) -> str:
    import math

    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "undefined"
    if lo is None or hi is None or (isinstance(lo, float) and (math.isnan(lo) or math.isnan(hi))):
        return f"{v:.3f}"
    return f"{v:.3f} [{lo:.3f}, {hi:.3f}]"


COMMANDS = [judges]
