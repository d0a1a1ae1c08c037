"""LLM judges and pairwise preferences: each automatic judge against the human majority (with
intervals), position bias, the significance clusters where the tests decide them, the
judge-vs-judge tests, and the Bradley-Terry rankings of the systems."""

from __future__ import annotations

import html

import pandas as pd

from metaeval.errors import Hint
from metaeval.runs.report.cells import (flag_cell, int_cell, interval_text, missing_value, p_cell, sortable,
                                        value_cell)
from metaeval.runs.report.context import Context, Section

#: The judge statistics shown, each with its interval (columns NAME_lower, NAME_upper).
STATISTICS = ("accuracy", "accuracy_ab", "accuracy_ba", "both_correct", "position_consistency",
              "first_position_rate", "tie_rate", "kappa", "kendall")


def judges(ctx: Context) -> Section | None:
    """The judges' section; None when the dataset has no preferences."""
    s = Section("LLM judges and pairwise preferences", "judges")
    stats = ctx.wh.sql("SELECT * FROM latest_judge_statistics WHERE dataset = ? ORDER BY result_id",
                       [ctx.dataset])
    stored = ctx.wh.sql("SELECT kind, count(DISTINCT judge) AS judges FROM preference_matrix WHERE dataset = ? "
                        "GROUP BY kind", [ctx.dataset])
    if stats.empty and stored.empty:
        return None
    hint = ctx.run(Hint("judges", (("dataset", ctx.dataset),)))
    if stats.empty:
        kinds = dict(zip(stored["kind"], stored["judges"]))
        if not kinds.get("human") or not kinds.get("automatic"):
            s.note = (f"no judge statistics: they need human and automatic judges, and dataset {ctx.dataset} has "
                      f"{kinds.get('human', 0)} human and {kinds.get('automatic', 0)} automatic ones")
        else:
            s.note = f"no judge statistics yet: run `{hint}`"
        return s
    s.run_ids |= set(stats["run_id"])
    tests = ctx.tests("judges")
    ranks = ctx.wh.sql("SELECT * FROM latest_preference_rankings WHERE dataset = ? ORDER BY result_id",
                       [ctx.dataset])
    for (human, subset), part in stats.groupby(["human", "subset"], sort=True):
        t = tests[(tests["human"] == human) & (tests["subset"] == subset)]
        r = ranks[(ranks["human"] == human) & (ranks["subset"] == subset)]
        where = f", subset {subset}" if subset else ""
        s.blocks.append(f"<h3>{html.escape(f'Against the majority of {human}{where}')}</h3>")
        s.blocks.append(_statistics(ctx, human, part, t))
        if not t.empty:
            s.run_ids |= set(t["run_id"])
            s.blocks.append(_tests(t))
        if not r.empty:
            s.run_ids |= set(r["run_id"])
            s.blocks.append(_rankings(r))
    return s


def _answer(stats: pd.DataFrame, order: pd.DataFrame, clustered: bool) -> str:
    """The most accurate judge (and the top cluster), and the judges with a position bias."""
    ranked = order[order["rank"].notna()]
    if ranked.empty:
        answer = "No judge has a defined accuracy."
    else:
        best = ranked.iloc[0]
        answer = (f"The most accurate judge is {best['judge']}, "
                  f"{interval_text(best['accuracy'], best['accuracy_lower'], best['accuracy_upper'])}")
        if clustered:
            top = list(ranked.loc[ranked["cluster"] == 1, "judge"])
            answer += (f"; the top significance cluster is {', '.join(top)}" if len(top) > 1
                       else "; the tests separate it from every other judge")
        answer += "."
    biased = []
    for r in stats.itertuples():
        lo, hi = r.first_position_rate_lower, r.first_position_rate_upper
        if not (missing_value(lo) or missing_value(hi)) and (lo > 0.5 or hi < 0.5):
            biased.append(f"{r.judge} chose the output shown {'first' if lo > 0.5 else 'second'} in "
                          f"{interval_text(r.first_position_rate, lo, hi)} of its non-tie verdicts")
    return answer + (" Position bias (the interval excludes 0.5): " + "; ".join(biased) + "." if biased
                     else " No judge's first-position rate interval excludes 0.5 (no position bias shown).")


def _statistics(ctx: Context, human: str, stats: pd.DataFrame, tests: pd.DataFrame) -> str:
    """The answer, the table of the judges' statistics and its caption."""
    first = stats.iloc[0]
    clustered = stats["cluster"].notna().any()
    order = stats.assign(_r=stats["rank"].fillna(10 ** 6)).sort_values(["_r", "judge"])
    answer = _answer(stats, order, clustered)
    table = []
    for r in order.itertuples():
        row = [int_cell(r.rank) if not missing_value(r.rank) else ("—", ""), (r.judge, "")]
        if clustered:
            row.append(int_cell(r.cluster) if not missing_value(r.cluster) else ("", ""))
        row += [value_cell(getattr(r, c), (getattr(r, c + "_lower"), getattr(r, c + "_upper"))) for c in STATISTICS]
        row += [int_cell(r.n), int_cell(r.n_both)]
        table.append(row)
    head = ["Rank", "Judge", *(["Cluster"] if clustered else []), "Accuracy [CI]", "Accuracy ab", "Accuracy ba",
            "Both orders correct", "Position consistency", "First-position rate", "Tie rate", "Cohen's κ",
            "Kendall τ-b vs humans' ranking", "n items", "in both orders"]
    test = first["test"]
    if clustered:
        why = f"clusters from the {test} tests ({first['correction']}), 1 = the best"
    elif tests.empty:
        why = f"no clusters: no judge-vs-judge tests are stored (run `{ctx.run(Hint('judges', (('dataset', ctx.dataset),)))}`)"
    else:
        why = ("no clusters: the tests do not decide them (every pair of ranked judges must be tested and the "
               "family able to reach its corrected level)")
    caption = (f"Each automatic judge against the majority of the human judges ({human}; items whose majority is "
               f"tied left out: {int(first['tied_majority'])}). Fractions in [0, 1] with "
               f"{1 - float(first['alpha']):.0%} percentile bootstrap intervals over items (k = {int(first['k'])}, "
               f"seed {int(first['seed'])}); a judge's tie is wrong unless the humans' is a tie; first-position "
               f"rate: share of non-tie verdicts choosing the output shown first (0.5: no position bias); "
               f"undefined: an empty denominator (e.g. a judge that only ties). Ranked by accuracy; {why}.")
    return (f'<p class="answer">{html.escape(answer)}</p>' + sortable(head, table)
            + f'<p class="caption">{html.escape(caption)}</p>')


def _tests(tests: pd.DataFrame) -> str:
    """The judge-vs-judge tests, collapsed; p as the conclusion layer prints it."""
    from metaeval.analyses import conclusions
    from metaeval.analyses.stored_tests import JUDGE_TEST_FORMULAS

    printed = conclusions.printed_by(tests, JUDGE_TEST_FORMULAS, key="test", columns=("pvalue", "pvalue_corrected"))
    rows_t = [[(r.judge_a, ""), (r.judge_b, ""), (r.test, ""), int_cell(r.n), value_cell(r.delta),
               int_cell(r.discordant_a), int_cell(r.discordant_b), p_cell(r.pvalue, p.pvalue),
               p_cell(r.pvalue_corrected, p.pvalue_corrected), flag_cell(r.significant)]
              for r, p in zip(tests.itertuples(), printed.itertuples())]
    return ("<details><summary>" + html.escape(
        f"judge-vs-judge tests ({len(tests)}: exact McNemar on the verdicts both gave and a paired "
        f"permutation test over items; {tests['correction'].iloc[0]} correction, alpha "
        f"{float(tests['alpha'].iloc[0]):g})") + "</summary>"
        + sortable(["Judge A", "Judge B", "Test", "n", "Δ accuracy (A − B)", "A right, B wrong",
                    "B right, A wrong", "p", "p corrected", "Significant"], rows_t) + "</details>")


def _rankings(ranks: pd.DataFrame) -> str:
    """The systems ranked from the humans' preferences (Bradley-Terry, with intervals) and each
    judge's rank of them."""
    humans = ranks[ranks["kind"] == "human"].set_index("system")
    judges = sorted(set(ranks.loc[ranks["kind"] == "automatic", "judge"]))
    systems = list(humans.sort_values("rank").index) if not humans.empty else sorted(set(ranks["system"]))
    by_judge = {j: ranks[ranks["judge"] == j].set_index("system") for j in judges}
    rows_r = []
    for system in systems:
        row = [(system, "")]
        if not humans.empty:
            h = humans.loc[system]
            row += [int_cell(h["rank"]), value_cell(h["strength"], (h["lower"], h["upper"]))]
        row += [int_cell(by_judge[j]["rank"].get(system)) if system in by_judge[j].index else ("", "")
                for j in judges]
        rows_r.append(row)
    head_r = ["System", *(["Humans' rank", "Humans' strength [CI]"] if not humans.empty else []),
              *[f"rank by {j}" for j in judges]]
    r0 = ranks.iloc[0]
    return ("<h4>System rankings from the preferences (Bradley–Terry)</h4>"
            + sortable(head_r, rows_r) + '<p class="caption">' + html.escape(
                "Bradley–Terry log-strengths (mean 0 over the systems; ties half a win to each "
                f"side; ridge prior (ridge/2)·Σθ², ridge = {float(r0['ridge']):g}) of the humans' "
                f"verdicts, with {1 - float(r0['alpha']):.0%} percentile bootstrap intervals over "
                f"items (k = {int(r0['k'])}, seed {int(r0['seed'])}), and each judge's rank of the "
                "systems; the Kendall τ-b of a judge's ranking against the humans' is in the table "
                "above.") + "</p>")
