"""The first screen: the metrics ranked by their correlation with each human judgment, with
their intervals, the significance clusters where the stored tests support them, and the human
ceiling as a row -- computed from the stored rows exactly as ``evaluate`` computes its table
(:func:`metaeval.runs.metrics.evaluate.evaluation_table`)."""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from metaeval.analyses import signature
from metaeval.present import figures, ranking_tables
from metaeval.analyses.stats import vocabulary
from metaeval.core import Store
from metaeval.errors import Argument, Hint
from metaeval.runs.agreement import annotators
from metaeval.runs.report.cells import integer, minus, missing_value, number, slug
from metaeval.runs.report.context import Context, Section

#: The tests a ranking reads, as every command reads them (README "Conclusions": one set of defaults).
ALTERNATIVE, CORRECTION, CORRECTION_GROUP = "two-sided", "holm", "metric"
#: Preferred settings of the intervals and tests a ranking shows, when several are stored.
CI_PREFERRED, TEST_PREFERRED = ("boot-both", 0.05), "perm-both"


def ranking_undefined() -> str:
    from metaeval.analyses import ranking

    return ranking.UNDEFINED_TEXT + ": never ranked"


def _cluster_rule_text(rule: str = "any") -> str:
    from metaeval.analyses import ranking

    return ranking.CLUSTER_RULE_TEXT[rule]


@dataclass
class _Stored:
    """Stored rows in the shape :func:`metaeval.runs.metrics.evaluate.evaluation_table` reads an analysis'
    outcome: its scope and its latest rows (nothing is run)."""

    scope: object
    frame: pd.DataFrame

    def rows(self, wh: Store) -> pd.DataFrame:
        return self.frame


@dataclass
class Ranked:
    """The metrics ranked against one human judgment at one level and coefficient: the rows of
    :func:`metaeval.runs.metrics.evaluate.evaluation_table` (with the human ceiling's columns), the
    intervals' and tests' settings read (None: none stored), and why no clusters are given."""

    human: str
    level: str
    coefficient: str
    table: pd.DataFrame
    ci: dict | None
    tests: dict | None
    note: str
    run_ids: set[int]

    @property
    def clustered(self) -> bool:
        return bool(self.table["cluster"].notna().any())

    @property
    def heading(self) -> str:
        name = ranking_tables.COEFFICIENT_NAMES.get(self.coefficient, (self.coefficient,))[0]
        kendall = " τ-b" if self.coefficient == "kendall" else ""
        return f"{ranking_tables.LEVEL_NAMES.get(self.level, self.level)} level, {name}{kendall}"


def pick(frame: pd.DataFrame, columns: Sequence[str], preferred: tuple, order: dict) -> tuple[pd.DataFrame, tuple]:
    """The rows of one setting (values of ``columns``) of ``frame``: ``preferred`` when stored,
    else the setting with the most rows (ties in ``order`` of the first column)."""
    groups = {key if isinstance(key, tuple) else (key,): part for key, part in frame.groupby(list(columns))}
    if preferred in groups:
        return groups[preferred], preferred
    key = min(groups, key=lambda k: (-len(groups[k]), order.get(k[0], len(order)), str(k)))
    return groups[key], key


def headline(ranked: Sequence[Ranked]) -> Ranked:
    """The setting a report leads with, by the rule ``evaluate`` tables its settings (and sorts its
    rows) by: the first stored in the order of the levels (system, summary, global) and then of
    the coefficients (Pearson, Spearman, Kendall, ...), never by what happens to be stored for it."""
    levels = {lv: i for i, lv in enumerate(vocabulary.LEVELS)}
    coefficients = {c: i for i, c in enumerate(vocabulary.CORRELATION_COEFFICIENTS)}
    return min(ranked, key=lambda r: (levels.get(r.level, len(levels)), coefficients.get(r.coefficient,
                                                                                          len(coefficients))))


def answer(ctx: Context) -> Section:
    """The first screen: per human judgment, the ranking of the :func:`headline` setting (system
    level, Pearson, when stored), the other levels and coefficients collapsed under it."""
    s = Section("Ranking of the metrics", "ranking")
    humans = [ctx.human] if ctx.human else sorted(ctx.wh.measures(ctx.dataset, "human")["measure"])
    found = [(h, r) for h in humans if (r := rankings(ctx, h))]
    if not found:
        s.note = ctx.missing("correlations", "correlate")
        return s
    for human, ranked in found:
        primary = headline(ranked)   # evaluate's first setting, whatever is stored for each
        if len(found) > 1:
            s.blocks.append(f'<h3 id="{html.escape(slug("ranking", human))}">Against {html.escape(human)}</h3>')
        s.blocks.append(ranked_html(ctx, primary, primary=True))
        others = [r for r in ranked if r is not primary]
        if others:
            s.blocks.append(f"<details><summary>the other levels and coefficients ({len(others)}): "
                            + html.escape(", ".join(r.heading for r in others)) + "</summary>"
                            + "".join(ranked_html(ctx, r) for r in others) + "</details>")
        for r in ranked:
            s.run_ids |= r.run_ids
    return s


def rankings(ctx: Context, human: str) -> list[Ranked]:
    """One :class:`Ranked` per level and coefficient with stored correlations against ``human``."""
    corr = ctx.wh.sql("SELECT * FROM latest_correlations WHERE dataset = ? AND human = ? AND subset = '' "
                      "AND aggregate = 'mean'",
                      [ctx.dataset, human])
    if corr.empty:
        return []
    cis = ctx.wh.sql("SELECT * FROM latest_confidence_intervals WHERE dataset = ? AND human = ? AND subset = '' "
                     "AND aggregate = 'mean'",
                     [ctx.dataset, human])
    tests = ctx.wh.sql("SELECT * FROM latest_hypothesis_tests WHERE dataset = ? AND human = ? AND alternative = ? "
                       "AND correction = ? AND correction_group = ? AND subset = '' AND aggregate = 'mean'",
                       [ctx.dataset, human, ALTERNATIVE, CORRECTION, CORRECTION_GROUP])
    ceiling = annotators.ceilings(ctx.wh, ctx.dataset, human)
    levels = {lv: i for i, lv in enumerate(vocabulary.LEVELS)}
    coefficients = {c: i for i, c in enumerate(vocabulary.CORRELATION_COEFFICIENTS)}
    settings = sorted(set(zip(corr["level"], corr["coefficient"])),
                      key=lambda s: (levels.get(s[0], 99), coefficients.get(s[1], 99), s))
    out = []
    for level, coefficient in settings:
        def at(f: pd.DataFrame) -> pd.DataFrame:
            return f[(f["level"] == level) & (f["coefficient"] == coefficient)]

        out.append(_ranked(ctx, human, level, coefficient, at(corr), at(cis), at(tests), ceiling,
                           sorted(corr["metric"].unique())))
    return out


def _ranked(ctx: Context, human: str, level: str, coefficient: str, c: pd.DataFrame, ci: pd.DataFrame,
            t: pd.DataFrame, ceiling: pd.DataFrame, every_metric: list[str]) -> Ranked:
    """The ranking of one level and coefficient from its stored correlations ``c``, intervals
    ``ci`` and tests ``t``, as ``evaluate`` would table them (nothing is run)."""
    from metaeval.runs.metrics import evaluate
    from metaeval.runs.engine import parameters, selection

    metrics = tuple(sorted(c["metric"]))
    scope = selection.Scope(ctx.dataset, human, metrics, (level,), (coefficient,))
    ci_setting, t_setting, note = None, None, ""
    if not ci.empty:
        ci, key = pick(ci, ["method", "alpha"], CI_PREFERRED, {m: i for i, m in enumerate(vocabulary.CI_METHODS)})
        ci_setting = {"method": key[0], "alpha": float(key[1]), "k": integer(ci["k"].max()),
                      "seed": integer(ci["seed"].min())}
    if not t.empty:
        t, key = pick(t, ["method"], (TEST_PREFERRED,), {m: i for i, m in enumerate(vocabulary.TEST_METHODS)})
        t_setting = {"method": key[0], "alpha": float(t["alpha"].max()), "k": integer(t["k"].max()),
                     "seed": integer(t["seed"].min()), "n": len(t),
                     "metrics": sorted(set(t["metric_a"]) | set(t["metric_b"]))}
    alpha = t_setting["alpha"] if t_setting else ci_setting["alpha"] if ci_setting else 0.05
    known = t_setting or ci_setting or {}
    setting = {"method": t_setting["method"] if t_setting else TEST_PREFERRED, "alternative": ALTERNATIVE,
               "correction": CORRECTION, "correction_group": CORRECTION_GROUP,
               "ci_method": ci_setting["method"] if ci_setting else None, "k": known.get("k"),
               "seed": known.get("seed"), "alpha": alpha, "all_pairs": True,
               "system_inputs": c["system_inputs"].iloc[0] if "system_inputs" in c else None,
               "cluster_rule": parameters.DEFAULT_CLUSTER_RULE}
    outcomes = {"correlate": _Stored(scope, c), "ci": _Stored(scope, ci), "compare": _Stored(scope, t)}
    data = ctx.data(human, every_metric) if not t.empty else None
    table = annotators.with_ceilings(evaluate.evaluation_table(ctx.wh, outcomes, [], setting, data), ceiling)
    hint = ctx.run(Hint("compare", (("dataset", ctx.dataset), ("human", human), ("levels", [level]),
                                    ("coefficients", [coefficient]))))
    ranked = table[table["status"] != "undefined"]
    if t.empty:
        note = f"no significance tests are stored for this setting: run `{hint}`"
    elif set(t_setting["metrics"]) != set(metrics):
        note = (f"the stored {t_setting['method']} tests compare {len(t_setting['metrics'])} metrics, not the "
                f"{len(metrics)} ranked here (clusters need every pair of ranked metrics tested): run `{hint}`")
    elif not ranked.empty and ranked["cluster"].isna().all() and ranked["cluster_note"].notna().any():
        note = str(ranked["cluster_note"].dropna().iloc[0]).replace(" (--all-pairs tests every pair)",
                                                                    f": run `{hint}`")
    run_ids = {int(r) for f in (c, ci, t) for r in f["run_id"]}
    return Ranked(human, level, coefficient, table, ci_setting, t_setting, note, run_ids)


class _Axis:
    """One axis for every interval of a ranking's table, the ceiling's and 0; ``bar`` draws one
    correlation (a dot) and its interval (a line) on it."""

    def __init__(self, values: list):
        lo, hi = max(-1.0, min(map(float, values))), min(1.0, max(map(float, values)))
        if hi - lo < 1e-9:
            lo, hi = lo - 0.5, hi + 0.5
        self.lo, self.hi = lo, hi

    def pos(self, x) -> float:
        return 100 * (min(max(float(x), self.lo), self.hi) - self.lo) / (self.hi - self.lo)

    def bar(self, value, lower, upper, kind="") -> str:
        if missing_value(value):
            return ""
        line = ""
        if not (missing_value(lower) or missing_value(upper)):
            line = (f'<span class="ci {kind}" style="left:{self.pos(lower):.1f}%;'
                    f'width:{max(self.pos(upper) - self.pos(lower), 0.4):.1f}%"></span>')
        return (f'<span class="bar" title="axis from {minus(f"{self.lo:.2f}")} to {minus(f"{self.hi:.2f}")}; '
                f'the thin line: 0"><span class="zero" style="left:{self.pos(0):.1f}%"></span>{line}'
                f'<span class="dot {kind}" style="left:{self.pos(value):.1f}%"></span></span>')


def ranked_html(ctx: Context, r: Ranked, primary: bool = False) -> str:
    """The table of one ranking: rank, metric, cluster, correlation (bold: the top cluster, or
    the best where no clusters), its interval as numbers and drawn on a common axis, the
    metrics it beats and is beaten by; the human ceiling in the table's foot."""
    frame = r.table
    rk = ranking_tables.Ranking(frame[["metric", "level", "coefficient", "correlation", "lower", "upper", "cluster"]],
                        ceiling=False)
    ceiling = frame.iloc[0]
    has_ceiling = not missing_value(ceiling.get("human_ceiling"))
    # beats / beaten by, where they can be findings: tests of these metrics that can resolve
    tested = (r.tests is not None and int(frame["n_tested"].sum()) > 0
              and not (frame["status"] == "unresolvable").any())
    confidence = f"{1 - r.ci['alpha']:.0%}" if r.ci else ""
    values = [0.0, *frame["correlation"].dropna(), *frame["lower"].dropna(), *frame["upper"].dropna()]
    if has_ceiling:
        values += [v for v in (ceiling["human_ceiling"], ceiling["human_ceiling_lower"],
                               ceiling["human_ceiling_upper"]) if not missing_value(v)]
    axis = _Axis(values)
    head = _ranked_head(r, axis, confidence, tested)
    rows = frame.set_index("metric")
    body = [_ranked_row(r, rk, rows.loc[m], m, axis, tested) for m in rk.metrics]
    if has_ceiling:
        low, high = ceiling["human_ceiling_lower"], ceiling["human_ceiling_upper"]
        interval = "" if missing_value(low) or missing_value(high) else f"[{number(low)}, {number(high)}]"
        foot = ('<tr class="ceiling"><td></td><td title="the correlation of each annotator with the mean of the '
                'others, averaged over the annotators (metaeval annotators)">human ceiling (leave one annotator '
                'out)</td>' + ("<td></td>" if r.clustered else "")
                + f'<td class="num">{number(ceiling["human_ceiling"])}</td><td class="num">{interval}</td>'
                f'<td>{axis.bar(ceiling["human_ceiling"], low, high, "human")}</td>'
                + ("<td></td><td></td>" if tested else "") + "</tr>")
    else:
        foot = (f'<tr class="ceiling missing"><td></td><td>human ceiling</td><td colspan="{len(head) - 2}">— '
                f"{html.escape(ceiling_missing(ctx, r))}</td></tr>")
    title = "" if primary else f"<h4>{html.escape(r.heading)}</h4>"
    answer = f'<p class="answer">{html.escape(answer_text(r, rk))}</p>' if primary else ""
    return (f'<div class="ranked" id="{html.escape(slug("ranking", r.human, r.level, r.coefficient))}">'
            f'{title}{answer}<table class="ranking sortable"><thead><tr>{"".join(head)}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody><tfoot>{foot}</tfoot></table>'
            f'<p class="caption">{html.escape(ranked_caption(ctx, r, rk, confidence))}</p></div>')


def _ranked_head(r: Ranked, axis: _Axis, confidence: str, tested: bool) -> list[str]:
    head = ['<th class="num">Rank</th>', "<th>Metric</th>"]
    if r.clustered:
        head.append('<th class="num" title="significance cluster: 1 = the best; the tests do not separate '
                    'the metrics of one cluster">Cluster</th>')
    head += ['<th class="num">Correlation</th>',
             f'<th class="num" title="sorts by the width of the interval">{confidence} CI</th>',
             f'<th class="nosort">Interval on [{minus(f"{axis.lo:.2f}")}, {minus(f"{axis.hi:.2f}")}] '
             "(dot: correlation)</th>"]
    if tested:
        head += ['<th class="num" title="how many metrics it significantly beats (hover a number for their '
                 'names)">Beats</th>',
                 '<th class="num" title="how many metrics significantly beat it (hover a number for their '
                 'names)">Beaten by</th>']
    return head


def _ranked_row(r: Ranked, rk: ranking_tables.Ranking, x: pd.Series, m: str, axis: _Axis, tested: bool) -> str:
    """The row of metric ``m`` (its stored row ``x``) in a ranking's table."""
    dash = f'<span title="{html.escape(ranking_undefined())}">—</span>'
    undefined = x["status"] == "undefined"
    cells = [f'<td class="num" data-v="{"" if undefined else int(x["rank"])}">'
             + (dash if undefined else str(int(x["rank"]))) + "</td>",
             f"<td>{html.escape(m)}</td>"]
    if r.clustered:
        cl = x["cluster"]
        cells.append(f'<td class="num" data-v="{"" if missing_value(cl) else int(cl)}">'
                     + ("" if missing_value(cl) else str(int(cl))) + "</td>")
    value = x["correlation"]
    shown = (dash if undefined else f"<b>{number(value)}</b>" if (m, (r.level, r.coefficient)) in rk.bold
             else number(value))
    cells.append(f'<td class="num" data-v="{"" if undefined else repr(float(value))}">{shown}</td>')
    if undefined or missing_value(x["lower"]) or missing_value(x["upper"]):
        cells.append('<td class="num" data-v=""></td>')
    else:
        cells.append(f'<td class="num" data-v="{float(x["upper"]) - float(x["lower"])!r}">'
                     f'[{number(x["lower"])}, {number(x["upper"])}]</td>')
    cells.append(f'<td>{axis.bar(None if undefined else value, x["lower"], x["upper"])}</td>')
    if tested:
        for key in ("beats", "beaten_by"):
            listed = list(x[key]) if isinstance(x[key], (list, tuple)) else []
            cells.append(f'<td class="num" data-v="{len(listed)}" title="{html.escape(", ".join(listed))}">'
                         f"{len(listed)}</td>")
    css = ' class="undefined"' if undefined else ""
    return f"<tr{css}>" + "".join(cells) + "</tr>"


def answer_text(r: Ranked, rk: ranking_tables.Ranking) -> str:
    """The finding in a sentence or two: the top cluster, or the best metric and how many
    other intervals overlap its own; the human ceiling."""
    t = r.table.set_index("metric")
    ranked = [m for m in rk.metrics if t.loc[m, "status"] != "undefined"]
    where = f"{r.heading} correlation with {r.human}"
    if not ranked:
        return f"{where}: no metric has a defined correlation."
    best = ranked[0]
    if r.clustered:
        top = [m for m in ranked if t.loc[m, "cluster"] == 1]
        n = int(t["cluster"].max())
        text = (f"{where}: the top significance cluster is {', '.join(top)} ({len(top)} of {len(ranked)} "
                f"metrics{', not separated from one another by the tests' if len(top) > 1 else ''}); "
                f"{n} cluster{'s' if n > 1 else ''} in all.")
    else:
        lo, hi = t.loc[best, "lower"], t.loc[best, "upper"]
        interval = "" if missing_value(lo) or missing_value(hi) else f" [{number(lo)}, {number(hi)}]"
        text = f"{where}: the highest is {best}'s, {number(t.loc[best, 'correlation'])}{interval}"
        if interval and len(ranked) > 1:
            overlap = [m for m in ranked[1:] if not missing_value(t.loc[m, "upper"])
                       and float(t.loc[m, "upper"]) >= float(lo)]
            text += f"; its interval overlaps those of {len(overlap)} of the {len(ranked) - 1} other metrics"
        text += "; no significance clusters (the caption says why)." if r.note else "."
    c = r.table.iloc[0]
    if not missing_value(c.get("human_ceiling")):
        low, high = c["human_ceiling_lower"], c["human_ceiling_upper"]
        interval = "" if missing_value(low) or missing_value(high) else f" [{number(low)}, {number(high)}]"
        text += f" Human ceiling: {number(c['human_ceiling'])}{interval}."
    return text


def ranked_caption(ctx: Context, r: Ranked, rk: ranking_tables.Ranking, confidence: str) -> str:
    conventions = r.table["conventions"].iloc[0]
    parts = [f"{r.heading} correlation of each metric with {r.human}"
             + (f" (system scores: {ctx.words.argument(Argument('system_inputs', placeholder=conventions['system_inputs']))})"
                if r.level == "system" and conventions.get("system_inputs") else "") + "."]
    parts.append(rk.notes("wide").replace("Metrics sorted by their", "Sorted by")
                 .replace(" of each column", "") + " Click a column header to sort.")
    if r.ci:
        parts.append(f"CI: {confidence} {r.ci['method']} interval"
                     + (f" (k = {r.ci['k']}, seed {r.ci['seed']})" if r.ci["k"] else "") + ".")
    else:
        hint = ctx.run(Hint("ci", (("dataset", ctx.dataset), ("human", r.human), ("levels", [r.level]),
                                   ("coefficients", [r.coefficient]))))
        parts.append(f"No confidence intervals are stored: run `{hint}`.")
    if r.tests:
        parts.append(f"Tests: {r.tests['n']} {r.tests['method']} tests ({ALTERNATIVE}"
                     + (f", k = {r.tests['k']}, seed {r.tests['seed']}" if r.tests["k"] else "")
                     + f"), {figures.correction_phrase(CORRECTION, CORRECTION_GROUP)}, alpha {r.tests['alpha']:g}"
                     + (f"; clusters: {_cluster_rule_text()}" if r.clustered else "") + ".")
    if r.note:
        parts.append(f"No clusters: {r.note}.")
    if "signature" in r.table.columns and (common := signature.shared(r.table["signature"])):
        parts.append(f"Signature: {common}.")
    if ctx.duplicate_pairs():
        shown = set(r.table["metric"])
        same = [f"{m} = {d}" for m, d in zip(ctx.duplicates["measure"], ctx.duplicates["duplicate_of"])
                if m in shown and d in shown]
        if same:
            parts.append(f"Duplicated measures (the same correlations by construction): {'; '.join(same)}.")
    undefined = r.table[r.table["status"] == "undefined"]
    if not undefined.empty:
        parts.append(f"—: the correlation of {', '.join(undefined['metric'])} is undefined (e.g. a constant "
                     "metric): never ranked.")
    return " ".join(parts)


def ceiling_missing(ctx: Context, r: Ranked) -> str:
    """Why a ranking has no human ceiling, and the command that computes it where one can."""
    measures = ctx.wh.measures(ctx.dataset, "human")
    most = measures.loc[measures["measure"] == r.human, "max_annotators"]
    if len(most) and not missing_value(most.iloc[0]) and int(most.iloc[0]) < 2:
        return "none: one annotator per cell (a ceiling needs at least two)"
    hint = ctx.run(Hint("annotators", (("dataset", ctx.dataset), ("humans", [r.human]), ("levels", [r.level]),
                                       ("coefficients", [r.coefficient]))))
    return f"not computed at this level and coefficient: run `{hint}`"
