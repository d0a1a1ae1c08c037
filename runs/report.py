"""The report of a dataset's persisted results: ONE self-contained HTML file (figures inlined as
SVG data URIs, the table behind each figure as a CSV data-URI download, a few lines of inline CSS
and JavaScript; nothing fetched from the network) that a person browses.

Its first screen answers "which metrics agree best with the humans, and how sure are we": the
metrics ranked by their correlation with the human judgment, with confidence intervals, the
significance clusters where the stored tests support them, and the human ceiling as a row. The
ranking is computed from the stored rows exactly as ``metaeval evaluate`` computes its table
(:func:`metaeval.runs.evaluate.evaluation_table`: clusters only when every pair of ranked metrics
was tested on the cells the warehouse holds now and the tests can reach their corrected level;
an undefined correlation is never ranked). Then the figures, then the datasets, measures and the
runs behind every number (parameters, versions, data fingerprints), collapsed.

Nothing is recomputed, with one exception, said in its captions: the per-input Kendall tau drawn
against the input properties (the figure 1 of Bhandari et al. 2020) is not persisted, so it is
computed from the stored scores by :func:`metaeval.runs.agreement.tau_vs_property` for a few
metric pairs. The report only reads the warehouse (it is opened read-only).
"""

from __future__ import annotations

import base64
import glob
import html
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from metaeval import __version__, files
from metaeval.analyses import figures, signature, tables
from metaeval.analyses.stats import vocabulary
from metaeval.core import Warehouse
from metaeval.errors import Argument, Hint, WarehouseError
from metaeval.runs import annotators
from metaeval.runs.selection import EVERY_CELL

DECIMALS = 4
#: Up to this many metric pairs are drawn against each input property (the paper's figure 1).
MAX_PROPERTY_PAIRS = 6
#: The columns of latest_property_agreement shown and written with the figures of tau against properties.
PROPERTY_COLUMNS = ["metric_a", "metric_b", "property", "n_used", "tau_mean", "pearson", "pearson_p", "spearman",
                    "spearman_p", "run_id"]
PROVENANCE_COLUMNS = ["run_id", "command", "status", "version", "started_at", "seed", "data_fingerprint",
                      "parameters"]


@dataclass
class Section:
    title: str
    anchor: str
    note: str = ""
    blocks: list[str] = field(default_factory=list)     # HTML fragments
    run_ids: set[int] = field(default_factory=set)


def _slug(*parts) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", "_".join(str(p) for p in parts)).strip("-")


def _missing_value(v) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float) and math.isnan(v)


def _cell(v, digits: int = DECIMALS) -> tuple[str, str]:
    """(text shown, sort key) of one table cell: never "None" or "nan" (an empty cell), floats
    with ``digits`` decimals and a true minus, lists and objects as JSON."""
    if isinstance(v, np.generic):
        v = v.item()
    if _missing_value(v):
        return "", ""
    if isinstance(v, bool):
        return ("yes" if v else "no"), str(int(v))
    if isinstance(v, int):
        return str(v), str(v)
    if isinstance(v, float):
        if math.isinf(v):
            return ("−∞" if v < 0 else "∞"), repr(v)
        return f"{v:.{digits}f}".replace("-", "−"), repr(v)
    if isinstance(v, (list, dict, tuple)):
        v = json.dumps(v, default=str)
    return str(v), ""


def _table_html(frame: pd.DataFrame, digits: int = DECIMALS, row_ids: Sequence[str] | None = None) -> str:
    """A sortable HTML table (click a header) of ``frame``; an empty cell where a value is missing.
    ``row_ids``: an id for each row (links to it)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = []
    for n, row in enumerate(frame.itertuples(index=False)):
        cells = []
        for v in row:
            text, key = _cell(v, digits)
            cells.append(f'<td data-v="{html.escape(key)}">{html.escape(text)}</td>' if key else
                         f"<td>{html.escape(text)}</td>")
        attribute = f' id="{html.escape(row_ids[n])}"' if row_ids is not None else ""
        body.append(f"<tr{attribute}>" + "".join(cells) + "</tr>")
    return (f'<table class="data sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
            "</table>")


def _data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def correlations(wh: Warehouse, dataset: str, human: str, level: str, coefficient: str) -> dict[str, float]:
    """metric -> its latest correlation with ``human`` at ``level`` and ``coefficient`` (the
    order of a significance heatmap's metrics); empty when ``correlate`` has not run."""
    rows = wh.sql("SELECT metric, value FROM latest_correlations WHERE dataset = ? AND human = ? AND level = ? "
                  "AND coefficient = ? AND subset = ''", [dataset, human, level, coefficient])
    return dict(zip(rows["metric"], rows["value"], strict=True))


def ranking_undefined() -> str:
    from metaeval.analyses import ranking

    return ranking.UNDEFINED_TEXT + ": never ranked"


def _cluster_rule_text(rule: str = "any") -> str:
    from metaeval.analyses import ranking

    return ranking.CLUSTER_RULE_TEXT[rule]


def _dataset_line(summary: pd.DataFrame) -> str:
    if summary.empty:
        return "no rows"
    r = summary.iloc[0]
    return (f"{r['n_systems']} systems × {r['n_inputs']} inputs, {r['n_automatic']} automatic and "
            f"{r['n_human']} human measures")


#: The tests a ranking reads, as every command reads them (README "Conclusions": one set of defaults).
ALTERNATIVE, CORRECTION, CORRECTION_GROUP = "two-sided", "holm", "metric"
#: Preferred settings of the intervals and tests a ranking shows, when several are stored.
CI_PREFERRED, TEST_PREFERRED = ("boot-both", 0.05), "perm-both"
MINUS = "\u2212"


def _minus(text: str) -> str:
    """A printed number with a true minus sign."""
    return text.replace("-", MINUS)


@dataclass
class _Stored:
    """Stored rows in the shape :func:`metaeval.runs.evaluate.evaluation_table` reads an analysis'
    outcome: its scope and its latest rows (nothing is run)."""

    scope: object
    frame: pd.DataFrame

    def rows(self, wh: Warehouse) -> pd.DataFrame:
        return self.frame


@dataclass
class Ranked:
    """The metrics ranked against one human judgment at one level and coefficient: the rows of
    :func:`metaeval.runs.evaluate.evaluation_table` (with the human ceiling's columns), the
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
        name = tables.COEFFICIENT_NAMES.get(self.coefficient, (self.coefficient,))[0]
        kendall = " τ-b" if self.coefficient == "kendall" else ""
        return f"{tables.LEVEL_NAMES.get(self.level, self.level)} level, {name}{kendall}"


def _pick(frame: pd.DataFrame, columns: Sequence[str], preferred: tuple, order: dict) -> tuple[pd.DataFrame, tuple]:
    """The rows of one setting (values of ``columns``) of ``frame``: ``preferred`` when stored,
    else the setting with the most rows (ties in ``order`` of the first column)."""
    groups = {key if isinstance(key, tuple) else (key,): part for key, part in frame.groupby(list(columns))}
    if preferred in groups:
        return groups[preferred], preferred
    key = min(groups, key=lambda k: (-len(groups[k]), order.get(k[0], len(order)), str(k)))
    return groups[key], key


def _int(v) -> int | None:
    return None if _missing_value(v) else int(v)


def _number(v) -> str:
    return _minus(tables.plain_number(v))


class _Builder:
    def __init__(self, wh: Warehouse, dataset: str, human: str | None, words: Words):
        self.wh, self.dataset, self.human, self.words = wh, dataset, human, words
        self.figures = 0
        self._data = None

    def rows(self, view: str) -> pd.DataFrame:
        """The latest rows of ``view`` for the report's dataset (and human); of a table with a
        ``subset`` column, those of every cell only (the rows of a ``--where`` / ``--by`` subset
        would mix with them in one figure)."""
        rows = self.wh.sql(f"SELECT * FROM {view} WHERE dataset = ? AND (? IS NULL OR human = ?) ORDER BY result_id",
                           [self.dataset, self.human, self.human])
        return rows[rows["subset"] == EVERY_CELL].reset_index(drop=True) if "subset" in rows.columns else rows

    def figure(self, section: Section, fig, name: str, caption: str, table: pd.DataFrame, note: str = "") -> None:
        """The figure inlined as SVG, its caption (and a note a reader needs: a hidden curve, a
        test that cannot apply) and the table behind it as a CSV download at full precision."""
        image = _data_uri(figures.svg(fig), "image/svg+xml")
        csv = _data_uri(table.to_csv(index=False).encode(), "text/csv")
        self.figures += 1
        section.blocks.append(
            f'<figure id="{html.escape(_slug("fig", name))}"><img src="{image}" alt="{html.escape(caption)}">'
            f"<figcaption>{html.escape(caption)} — "
            f'<a download="{html.escape(name)}.csv" href="{csv}">table (CSV)</a></figcaption>'
            + (f'<p class="note">{html.escape(note)}</p>' if note else "") + "</figure>")

    # --- the first screen: the metrics ranked ------------------------------------------------
    def data(self, human: str, metrics: Sequence[str]):
        """The cells of ``metrics`` and ``human`` (read once per human), to check that stored
        tests were computed on the cells the warehouse holds now."""
        from metaeval.runs import selection

        if self._data is None or self._data[0] != human or not set(metrics) <= set(self._data[1]):
            scope = selection.Scope(self.dataset, human, tuple(metrics), vocabulary.LEVELS[:1],
                                    vocabulary.COEFFICIENTS[:1])
            self._data = (human, tuple(metrics), selection.load_data(self.wh, scope))
        return self._data[2]

    def rankings(self, human: str) -> list[Ranked]:
        """One :class:`Ranked` per level and coefficient with stored correlations against ``human``."""
        from metaeval.runs import evaluate, parameters, selection

        corr = self.wh.sql("SELECT * FROM latest_correlations WHERE dataset = ? AND human = ? AND subset = ''",
                           [self.dataset, human])
        if corr.empty:
            return []
        cis = self.wh.sql("SELECT * FROM latest_confidence_intervals WHERE dataset = ? AND human = ? AND subset = ''",
                          [self.dataset, human])
        tests = self.wh.sql("SELECT * FROM latest_hypothesis_tests WHERE dataset = ? AND human = ? AND alternative = ? "
                            "AND correction = ? AND correction_group = ? AND subset = ''",
                            [self.dataset, human, ALTERNATIVE, CORRECTION, CORRECTION_GROUP])
        ceiling = annotators.ceilings(self.wh, self.dataset, human)
        levels = {lv: i for i, lv in enumerate(vocabulary.LEVELS)}
        coefficients = {c: i for i, c in enumerate(vocabulary.CORRELATION_COEFFICIENTS)}
        settings = sorted(set(zip(corr["level"], corr["coefficient"])),
                          key=lambda s: (levels.get(s[0], 99), coefficients.get(s[1], 99), s))
        out = []
        for level, coefficient in settings:
            def at(f: pd.DataFrame) -> pd.DataFrame:
                return f[(f["level"] == level) & (f["coefficient"] == coefficient)]

            c = at(corr)
            metrics = tuple(sorted(c["metric"]))
            scope = selection.Scope(self.dataset, human, metrics, (level,), (coefficient,))
            ci, ci_setting = at(cis), None
            if not ci.empty:
                ci, key = _pick(ci, ["method", "alpha"], CI_PREFERRED, {m: i for i, m in enumerate(vocabulary.CI_METHODS)})
                ci_setting = {"method": key[0], "alpha": float(key[1]), "k": _int(ci["k"].max()),
                              "seed": _int(ci["seed"].min())}
            t, t_setting, note = at(tests), None, ""
            if not t.empty:
                t, key = _pick(t, ["method"], (TEST_PREFERRED,), {m: i for i, m in enumerate(vocabulary.TEST_METHODS)})
                t_setting = {"method": key[0], "alpha": float(t["alpha"].max()), "k": _int(t["k"].max()),
                             "seed": _int(t["seed"].min()), "n": len(t),
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
            data = self.data(human, sorted(corr["metric"].unique())) if not t.empty else None
            table = annotators.with_ceilings(evaluate.evaluation_table(self.wh, outcomes, [], setting, data), ceiling)
            hint = self.run(Hint("compare", (("dataset", self.dataset), ("human", human), ("levels", [level]),
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
            out.append(Ranked(human, level, coefficient, table, ci_setting, t_setting, note, run_ids))
        return out

    def ranking(self) -> Section:
        s = Section("Ranking of the metrics", "ranking")
        humans = [self.human] if self.human else sorted(self.wh.measures(self.dataset, "human")["measure"])
        found = [(h, r) for h in humans if (r := self.rankings(h))]
        if not found:
            s.note = self._missing("correlations", "correlate")
            return s
        for human, ranked in found:
            # first the setting whose answer is surest: clusters, else tests, else intervals
            primary = min(ranked, key=lambda r: (not r.clustered, r.tests is None, r.ci is None))
            if len(found) > 1:
                s.blocks.append(f'<h3 id="{html.escape(_slug("ranking", human))}">Against {html.escape(human)}</h3>')
            s.blocks.append(self._ranked_html(primary, primary=True))
            others = [r for r in ranked if r is not primary]
            if others:
                s.blocks.append(f"<details><summary>the other levels and coefficients ({len(others)}): "
                                + html.escape(", ".join(r.heading for r in others)) + "</summary>"
                                + "".join(self._ranked_html(r) for r in others) + "</details>")
            for r in ranked:
                s.run_ids |= r.run_ids
        return s

    def _ranked_html(self, r: Ranked, primary: bool = False) -> str:
        """The table of one ranking: rank, metric, cluster, correlation (bold: the top cluster, or
        the best where no clusters), its interval as numbers and drawn on a common axis, the
        metrics it beats and is beaten by; the human ceiling in the table's foot."""
        frame = r.table
        rk = tables.Ranking(frame[["metric", "level", "coefficient", "correlation", "lower", "upper", "cluster"]],
                            ceiling=False)
        setting = (r.level, r.coefficient)
        rows = frame.set_index("metric")
        ceiling = frame.iloc[0]
        has_ceiling = not _missing_value(ceiling.get("human_ceiling"))
        # beats / beaten by, where they can be findings: tests of these metrics that can resolve
        tested = (r.tests is not None and int(frame["n_tested"].sum()) > 0
                  and not (frame["status"] == "unresolvable").any())
        confidence = f"{1 - r.ci['alpha']:.0%}" if r.ci else ""
        # one axis for every interval of the table, the ceiling's and 0
        values = [0.0, *frame["correlation"].dropna(), *frame["lower"].dropna(), *frame["upper"].dropna()]
        if has_ceiling:
            values += [v for v in (ceiling["human_ceiling"], ceiling["human_ceiling_lower"],
                                   ceiling["human_ceiling_upper"]) if not _missing_value(v)]
        lo, hi = max(-1.0, min(map(float, values))), min(1.0, max(map(float, values)))
        if hi - lo < 1e-9:
            lo, hi = lo - 0.5, hi + 0.5

        def pos(x) -> float:
            return 100 * (min(max(float(x), lo), hi) - lo) / (hi - lo)

        def bar(value, lower, upper, kind="") -> str:
            if _missing_value(value):
                return ""
            line = ""
            if not (_missing_value(lower) or _missing_value(upper)):
                line = (f'<span class="ci {kind}" style="left:{pos(lower):.1f}%;'
                        f'width:{max(pos(upper) - pos(lower), 0.4):.1f}%"></span>')
            return (f'<span class="bar" title="axis from {_minus(f"{lo:.2f}")} to {_minus(f"{hi:.2f}")}; '
                    f'the thin line: 0"><span class="zero" style="left:{pos(0):.1f}%"></span>{line}'
                    f'<span class="dot {kind}" style="left:{pos(value):.1f}%"></span></span>')

        head = ['<th class="num">Rank</th>', "<th>Metric</th>"]
        if r.clustered:
            head.append('<th class="num" title="significance cluster: 1 = the best; the tests do not separate '
                        'the metrics of one cluster">Cluster</th>')
        head += ['<th class="num">Correlation</th>',
                 f'<th class="num" title="sorts by the width of the interval">{confidence} CI</th>',
                 f'<th class="nosort">Interval on [{_minus(f"{lo:.2f}")}, {_minus(f"{hi:.2f}")}] '
                 "(dot: correlation)</th>"]
        if tested:
            head += ['<th class="num" title="how many metrics it significantly beats (hover a number for their '
                     'names)">Beats</th>',
                     '<th class="num" title="how many metrics significantly beat it (hover a number for their '
                     'names)">Beaten by</th>']
        dash = f'<span title="{html.escape(ranking_undefined())}">—</span>'
        body = []
        for m in rk.metrics:
            x = rows.loc[m]
            undefined = x["status"] == "undefined"
            cells = [f'<td class="num" data-v="{"" if undefined else int(x["rank"])}">'
                     + (dash if undefined else str(int(x["rank"]))) + "</td>",
                     f"<td>{html.escape(m)}</td>"]
            if r.clustered:
                cl = x["cluster"]
                cells.append(f'<td class="num" data-v="{"" if _missing_value(cl) else int(cl)}">'
                             + ("" if _missing_value(cl) else str(int(cl))) + "</td>")
            value = x["correlation"]
            shown = (dash if undefined else f"<b>{_number(value)}</b>" if (m, setting) in rk.bold else _number(value))
            cells.append(f'<td class="num" data-v="{"" if undefined else repr(float(value))}">{shown}</td>')
            if undefined or _missing_value(x["lower"]) or _missing_value(x["upper"]):
                cells.append('<td class="num" data-v=""></td>')
            else:
                cells.append(f'<td class="num" data-v="{float(x["upper"]) - float(x["lower"])!r}">'
                             f'[{_number(x["lower"])}, {_number(x["upper"])}]</td>')
            cells.append(f'<td>{bar(None if undefined else value, x["lower"], x["upper"])}</td>')
            if tested:
                for key in ("beats", "beaten_by"):
                    listed = list(x[key]) if isinstance(x[key], (list, tuple)) else []
                    cells.append(f'<td class="num" data-v="{len(listed)}" title="{html.escape(", ".join(listed))}">'
                                 f"{len(listed)}</td>")
            css = ' class="undefined"' if undefined else ""
            body.append(f"<tr{css}>" + "".join(cells) + "</tr>")
        if has_ceiling:
            low, high = ceiling["human_ceiling_lower"], ceiling["human_ceiling_upper"]
            interval = "" if _missing_value(low) or _missing_value(high) else f"[{_number(low)}, {_number(high)}]"
            foot = ('<tr class="ceiling"><td></td><td title="the correlation of each annotator with the mean of the '
                    'others, averaged over the annotators (metaeval annotators)">human ceiling (leave one annotator '
                    'out)</td>' + ("<td></td>" if r.clustered else "")
                    + f'<td class="num">{_number(ceiling["human_ceiling"])}</td><td class="num">{interval}</td>'
                    f'<td>{bar(ceiling["human_ceiling"], low, high, "human")}</td>'
                    + ("<td></td><td></td>" if tested else "") + "</tr>")
        else:
            foot = (f'<tr class="ceiling"><td></td><td>human ceiling</td><td colspan="{len(head) - 2}">— '
                    f"{html.escape(self._ceiling_missing(r))}</td></tr>")
        title = "" if primary else f"<h4>{html.escape(r.heading)}</h4>"
        answer = f'<p class="answer">{html.escape(self._answer(r, rk))}</p>' if primary else ""
        return (f'<div class="ranked" id="{html.escape(_slug("ranking", r.human, r.level, r.coefficient))}">'
                f'{title}{answer}<table class="ranking sortable"><thead><tr>{"".join(head)}</tr></thead>'
                f'<tbody>{"".join(body)}</tbody><tfoot>{foot}</tfoot></table>'
                f'<p class="caption">{html.escape(self._ranked_caption(r, rk, confidence))}</p></div>')

    def _answer(self, r: Ranked, rk: tables.Ranking) -> str:
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
            interval = "" if _missing_value(lo) or _missing_value(hi) else f" [{_number(lo)}, {_number(hi)}]"
            text = f"{where}: the highest is {best}'s, {_number(t.loc[best, 'correlation'])}{interval}"
            if interval and len(ranked) > 1:
                overlap = [m for m in ranked[1:] if not _missing_value(t.loc[m, "upper"])
                           and float(t.loc[m, "upper"]) >= float(lo)]
                text += f"; its interval overlaps those of {len(overlap)} of the {len(ranked) - 1} other metrics"
            text += "; no significance clusters (the caption says why)." if r.note else "."
        c = r.table.iloc[0]
        if not _missing_value(c.get("human_ceiling")):
            low, high = c["human_ceiling_lower"], c["human_ceiling_upper"]
            interval = "" if _missing_value(low) or _missing_value(high) else f" [{_number(low)}, {_number(high)}]"
            text += f" Human ceiling: {_number(c['human_ceiling'])}{interval}."
        return text

    def _ranked_caption(self, r: Ranked, rk: tables.Ranking, confidence: str) -> str:
        conventions = r.table["conventions"].iloc[0]
        parts = [f"{r.heading} correlation of each metric with {r.human}"
                 + (f" (system scores: {self.words.argument(Argument('system_inputs', placeholder=conventions['system_inputs']))})"
                    if r.level == "system" and conventions.get("system_inputs") else "") + "."]
        parts.append(rk.notes("wide").replace("Metrics sorted by their", "Sorted by")
                     .replace(" of each column", "") + " Click a column header to sort.")
        if r.ci:
            parts.append(f"CI: {confidence} {r.ci['method']} interval"
                         + (f" (k = {r.ci['k']}, seed {r.ci['seed']})" if r.ci["k"] else "") + ".")
        else:
            hint = self.run(Hint("ci", (("dataset", self.dataset), ("human", r.human), ("levels", [r.level]),
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
        if self.duplicate_pairs():
            shown = set(r.table["metric"])
            same = [f"{m} = {d}" for m, d in zip(self._duplicates["measure"], self._duplicates["duplicate_of"])
                    if m in shown and d in shown]
            if same:
                parts.append(f"Duplicated measures (the same correlations by construction): {'; '.join(same)}.")
        undefined = r.table[r.table["status"] == "undefined"]
        if not undefined.empty:
            parts.append(f"—: the correlation of {', '.join(undefined['metric'])} is undefined (e.g. a constant "
                         "metric): never ranked.")
        return " ".join(parts)

    def _ceiling_missing(self, r: Ranked) -> str:
        """Why a ranking has no human ceiling, and the command that computes it where one can."""
        measures = self.wh.measures(self.dataset, "human")
        most = measures.loc[measures["measure"] == r.human, "max_annotators"]
        if len(most) and not _missing_value(most.iloc[0]) and int(most.iloc[0]) < 2:
            return "none: one annotator per cell (a ceiling needs at least two)"
        hint = self.run(Hint("annotators", (("dataset", self.dataset), ("humans", [r.human]), ("levels", [r.level]),
                                            ("coefficients", [r.coefficient]))))
        return f"not computed at this level and coefficient: run `{hint}`"

    # --- the other sections -------------------------------------------------------------
    def overview(self) -> Section:
        s = Section("Dataset and measures", "dataset")
        summary = self.wh.sql("SELECT * EXCLUDE (created_at) FROM dataset_summary WHERE dataset = ?", [self.dataset])
        measures = self.wh.measures(self.dataset, duplicates=True)
        s.blocks.append(f"<details><summary>the dataset: {html.escape(_dataset_line(summary))}</summary>"
                        + _table_html(summary) + "</details>")
        s.blocks.append(f"<details><summary>its {len(measures)} measures: kind, direction, scale (empty: none "
                        "declared), coverage, duplicates</summary>" + _table_html(measures) + "</details>")
        if note := self.duplicates_note():
            s.blocks.append(f'<p class="note">{html.escape(note)}</p>')
        return s

    def duplicate_pairs(self) -> set[frozenset]:
        """Pairs of measures of which one duplicates the other (view measure_duplicates)."""
        if not hasattr(self, "_duplicates"):
            self._duplicates = self.wh.duplicates(self.dataset)
        return {frozenset(p) for p in zip(self._duplicates["measure"], self._duplicates["duplicate_of"])}

    def duplicates_note(self) -> str | None:
        self.duplicate_pairs()
        if self._duplicates.empty:
            return None
        said = "; ".join(f"{m} = {d}" + (" (identical values)" if r == "identical" else
                                           " (a positive affine transform, up to rounding)")
                         for m, d, r in zip(self._duplicates["measure"], self._duplicates["duplicate_of"],
                                            self._duplicates["relation"]))
        return (f"Duplicated measures: {said}. Each pair gives the same correlations, intervals and tests; "
                "the agreement figures leave their pairs out (tau = 1 by construction).")

    def intervals(self) -> Section:
        s = Section("Confidence intervals (the paper's Figure 4)", "intervals")
        rows = self.rows("latest_confidence_intervals")
        if rows.empty:
            s.note = self._missing("confidence intervals", "ci")
            return s
        s.run_ids |= set(rows["run_id"])
        keys = ["human", "method", "alpha", "level", "coefficient"]
        for key, part in _in_order(rows.groupby(keys, sort=True), keys):
            human, method, alpha, level, coefficient = key
            caption = f"{1 - alpha:.0%} {method} CIs, {level} level, {coefficient}, against {human}"
            table = part[["metric", "estimate", "lower", "upper", "k", "seed", "run_id"]]
            ceiling = annotators.ceilings(self.wh, self.dataset, human)
            ceiling = ceiling[(ceiling["level"] == level) & (ceiling["coefficient"] == coefficient)]
            line = None
            if not ceiling.empty and pd.notna(ceiling["human_ceiling"].iloc[0]):
                line = tuple(float(ceiling[c].iloc[0]) for c in ("human_ceiling", "human_ceiling_lower",
                                                                  "human_ceiling_upper"))
                interval = ("" if any(map(_missing_value, line[1:]))
                            else f" [{_number(line[1])}, {_number(line[2])}]")
                caption += f"; dashed: the human ceiling (leave-one-out, metaeval annotators) {_number(line[0])}{interval}"
            self.figure(s, figures.ci_forest(part, caption, line), _slug("ci", *key), caption, table)
            s.blocks.append(f"<details><summary>table</summary>{_table_html(table)}</details>")
        return s

    def tests(self) -> Section:
        s = Section("Pairwise significance (the paper's Figure 5)", "tests")
        rows = self.rows("latest_hypothesis_tests")
        if rows.empty:
            s.note = self._missing("hypothesis tests", "compare", needs_pair=True)
            return s
        s.run_ids |= set(rows["run_id"])
        keys = ["human", "method", "alternative", "correction", "correction_group", "alpha", "level", "coefficient"]
        for key, part in _in_order(rows.groupby(keys, sort=True), keys):
            human, method, alternative, correction, group, alpha, level, coefficient = key
            setting = f"{method} ({alternative}), {level} level, {coefficient}, against {human}"
            phrase = figures.correction_phrase(correction, group)
            shading = (f"filled = p <= {alpha} before correction, outlined = significant after {phrase}"
                       if correction != "none" else f"filled = significant at alpha {alpha} ({phrase})")
            caption = (f"{figures.hypothesis(alternative)} {setting}: {shading}; metrics ordered by their "
                       "correlation with the human judgment (in brackets) when it is stored")
            table = part[["metric_a", "metric_b", "delta", "statistic", "p_value", "p_adjusted", "significant",
                          "k", "seed", "run_id"]]
            order = correlations(self.wh, self.dataset, human, level, coefficient)
            self.figure(s, figures.significance_heatmap(part, alpha, setting, alternative, order or None),
                        _slug("tests", *key),
                        caption, table)
            s.blocks.append(f"<details><summary>table</summary>{_table_html(table)}</details>")
        return s

    def close_pairs(self) -> Section:
        s = Section("Close systems: accuracy by human difference (Deutsch, Dror & Roth 2022)", "close-pairs")
        rows = self.rows("latest_delta_bin_accuracy")
        if rows.empty:
            s.note = self._missing("accuracy by bin of human difference", "accuracy", first=(("delta_bins", 4),))
            return s
        s.run_ids |= set(rows["run_id"])
        for key, part in rows.groupby(["human", "bins", "metric_tolerance", "human_tolerance"], sort=True):
            human, bins = key[0], key[1]
            caption = (f"pairwise accuracy within {bins} quantile bins of the system pairs' |human difference| "
                       f"(bin 0 = the closest pairs), against {human}")
            table = part[["metric", "bin", "low", "high", "pairs", "accuracy", "kendall", "run_id"]]
            self.figure(s, figures.delta_bin_accuracy(part, caption), _slug("close", *key), caption, table)
            s.blocks.append(f"<details><summary>table</summary>{_table_html(table)}</details>")
        return s

    def power(self) -> Section:
        s = Section("Statistical power (the paper's Figure 3)", "power")
        if (rows := self.rows("latest_power")).empty:
            s.note = self._missing("power simulations", "simulate_power", needs_texts=True)
            return s
        s.run_ids |= set(rows["run_id"])
        # one figure per latest_power partition (all but method and proportion): never mix variants
        for key, part in rows.groupby(["human", "variant", "alpha", "level", "coefficient"], sort=True):
            human, variant, alpha, level, coefficient = key
            caption = (f"power of ROUGE-1 {variant} > R_k against the proportion of tokens kept, alpha {alpha}, "
                       f"{level} level, {coefficient}, against {human}")
            table = part[["variant", "method", "proportion", "trials", "rejections", "power", "alpha", "k", "seed",
                          "run_id"]]
            self.figure(s, figures.power_curves(part, caption), _slug("power", *key), caption, table,
                        note=_power_note(part))
            s.blocks.append(f"<details><summary>table</summary>{_table_html(table)}</details>")
        return s

    def coverage(self) -> Section:
        s = Section("CI coverage of held-out correlations (the paper's Table 1)", "coverage")
        if (rows := self.rows("latest_ci_coverage")).empty:
            s.note = self._missing("coverage simulations", "simulate_coverage", needs_metric=True)
            return s
        s.run_ids |= set(rows["run_id"])
        s.blocks.append(_table_html(rows[["metric", "human", "level", "coefficient", "method", "alpha", "k", "trials",
                                          "contains", "too_high", "too_low", "coverage", "seed", "run_id"]]))
        return s

    def normality(self) -> Section:
        s = Section("Normality of the scores (the paper's appendix A)", "normality")
        rows = self.wh.sql("SELECT * FROM latest_normality WHERE dataset = ? ORDER BY measure, level", [self.dataset])
        if rows.empty:
            s.note = f"no normality results: run `{self.run(Hint('normality', (('dataset', self.dataset),)))}`"
            return s
        s.run_ids |= set(rows["run_id"])
        s.blocks.append(_table_html(rows.drop(columns=[c for c in ("result_id", "dataset", "fingerprint", "conventions")
                                                       if c in rows.columns])))
        return s

    def agreement(self) -> Section:
        from metaeval.analyses import agreement_plots

        s = Section("Inter-metric agreement by score range (Bhandari et al. 2020)", "agreement")
        rows = self.wh.sql("SELECT * FROM latest_score_range_agreement WHERE dataset = ? ORDER BY result_id",
                           [self.dataset])
        if rows.empty:
            s.note = f"no agreement results yet: run `{self.agreement_hint()}`"
            return s
        s.run_ids |= set(rows["run_id"])
        # one heatmap (and one disagreement figure) per setting of latest_score_range_agreement:
        # never a mix of consensus, normalisation, alpha or significant_only
        keys = ["consensus", "normalisation", "alpha", "significant_only"]
        for n, (key, part) in enumerate(rows.groupby(keys, sort=True)):
            consensus, normalisation, alpha, significant_only = key
            setting = (f"{'significant' if significant_only else 'all'} per-input taus (alpha {alpha}), "
                       f"{normalisation} normalisation, consensus of {len(json.loads(consensus))} metrics")
            s.blocks.append(f"<h3>{html.escape(setting[0].upper() + setting[1:])}</h3>"
                            f"<p>Consensus: {html.escape(', '.join(json.loads(consensus)))}.</p>")
            table = part[["metric_a", "metric_b", "bin", "tau", "n_tau", "n_undefined", "disagreement",
                          "random_disagreement", "run_id"]]
            duplicated = [frozenset(p) in self.duplicate_pairs() for p in zip(part["metric_a"], part["metric_b"])]
            if any(duplicated):  # tau = 1 by construction: said, not drawn (the CSV keeps every pair)
                left_out = sorted({" / ".join(sorted(p)) for p, d in zip(zip(part["metric_a"], part["metric_b"]),
                                                                         duplicated) if d})
                s.blocks.append(f"<p class=\"note\">Not drawn: {html.escape(', '.join(left_out))} — one duplicates "
                                "the other (see Dataset), so their tau is 1 in every bin.</p>")
                part = part[[not d for d in duplicated]]
                if part.empty:
                    continue
            cells = agreement_plots.tau_heatmap_table(part)
            pairs = part[["metric_a", "metric_b"]].drop_duplicates().shape[0]
            rows_are = ("metric pairs, then their mean" if len(cells) == pairs + 1 else
                        f"each metric's mean over its {len(json.loads(consensus)) - 1} pairs (more than "
                        f"{agreement_plots.MAX_HEATMAP_PAIRS} pairs: every pair is in the CSV), then the mean "
                        f"over all {pairs} pairs")
            caption = (f"τ by bin heatmap: mean over inputs of the per-input Kendall τ between metrics, by bin of "
                       f"the input's score range: L, M, T (non-cumulative thirds), then L+M+T, M+T (cumulative); "
                       f"rows: {rows_are}; n/a: no input with a defined τ. Setting: {setting}.")
            self.figure(s, agreement_plots.tau_heatmap(part, setting),
                        _slug("agreement-tau", n, normalisation, alpha, significant_only), caption, table)
            s.blocks.append("<details><summary>table: the heatmap's cells</summary>"
                            + _table_html(cells.reset_index()) + "</details>")
            self.figure(s, agreement_plots.disagreement_by_bin(part), _slug("agreement-disagreement", n, normalisation,
                                                                            alpha, significant_only),
                        f"pairwise disagreement by score bin against random scores: {setting}", table)
        props = self.wh.sql("SELECT * FROM latest_property_agreement WHERE dataset = ? ORDER BY result_id",
                            [self.dataset])
        if not props.empty:
            s.run_ids |= set(props["run_id"])
            s.blocks.append("<h3>Per-input agreement against input properties (the paper's figure 1)</h3>")
            for n, (key, part) in enumerate(props.groupby(["consensus", "alpha", "significant_only"], sort=True)):
                self._properties(s, n, *key, part)
        return s

    def _properties(self, s: Section, n: int, consensus: str, alpha: float, significant_only: bool,
                    part: pd.DataFrame) -> None:
        """Per-input tau against each stored property, for one setting of latest_property_agreement
        (one figure per property). Per-input tau is not persisted: it is computed from the
        warehouse's matrices by agreement_runs.tau_vs_property, for at most MAX_PROPERTY_PAIRS pairs."""
        from metaeval.analyses import agreement, agreement_plots
        from metaeval.runs import agreement as agreement_runs

        metrics = json.loads(consensus)
        setting = (f"{'significant' if significant_only else 'all'} per-input taus (alpha {alpha}), consensus of "
                   f"{len(metrics)} metrics")
        s.blocks.append(f"<h4>{html.escape(setting[0].upper() + setting[1:])}</h4>")
        stored = [p for p in agreement.PROPERTIES if p in set(part["property"])]
        if lacking := [p for p in agreement.TEXT_PROPERTIES if p not in stored]:
            s.blocks.append(f'<p class="note">{html.escape(self._text_properties_note(lacking))}</p>')
        pairs = _property_pairs(part)
        total = len(part[["metric_a", "metric_b"]].drop_duplicates())
        chosen = (f"all {total} metric pairs" if len(pairs) == total else
                  f"{len(pairs)} of the {total} metric pairs, spread evenly from the lowest to the highest mean "
                  "per-input τ (every pair's correlations are in the table below)")
        only = f", inputs with p <= {alpha} only" if significant_only else ""
        try:
            scope = agreement_runs.resolve(self.wh, self.dataset, [glob.escape(m) for m in metrics])
            data = agreement_runs.load(self.wh, scope, "input")  # per-input tau ignores the normalisation
            for prop in stored:
                drawn = part[part["property"] == prop].set_index(["metric_a", "metric_b"]).loc[pairs].reset_index()
                window = _window(drawn)
                series = {(a, b): agreement_runs.tau_vs_property(self.wh, scope, a, b, prop, window=window,
                                                                 alpha=alpha, significant_only=significant_only,
                                                                 data=data)
                          for a, b in pairs}
                caption = (f"per-input Kendall τ against {agreement_plots.PROPERTY_LABELS[prop]} (the paper's "
                           f"figure 1): each point is an input, its τ over all its complete summaries (bin L+M+T"
                           f"{only}), computed for this figure from the stored scores (per-input τ is not "
                           f"persisted); red: {window}-point moving average; panel titles: the stored correlation "
                           f"over inputs; {chosen}. Setting: {setting}.")
                stale = [f"{r.metric_a} vs {r.metric_b}" for r in drawn.itertuples()
                         if len(series[(r.metric_a, r.metric_b)]) != r.n_used]
                if stale:
                    caption += (f" Warning: the stored rows of {', '.join(stale)} count other inputs than drawn (the "
                                f"scores changed since): rerun `{self.agreement_hint()}`.")
                self.figure(s, agreement_plots.tau_vs_property_pairs(series, prop, drawn, setting),
                            _slug("agreement-property", n, prop, alpha, significant_only), caption,
                            drawn[PROPERTY_COLUMNS])
        except WarehouseError as exc:
            s.blocks.append(f'<p class="note">{html.escape(f"per-input τ cannot be drawn: {exc}")}</p>')
        s.blocks.append("<details><summary>table: correlation over inputs of per-input τ with each property, "
                        "every pair</summary>" + _table_html(part[PROPERTY_COLUMNS]) + "</details>")

    def _text_properties_note(self, lacking: list[str]) -> str:
        counts = self.wh.con.execute(
            """SELECT (SELECT count(*) FROM documents JOIN inputs USING (input_id) JOIN datasets USING (dataset_id)
                       WHERE datasets.name = $d),
                      (SELECT count(*) FROM "references" JOIN inputs USING (input_id) JOIN datasets USING (dataset_id)
                       WHERE datasets.name = $d)""", {"d": self.dataset}).fetchone()
        what = " and ".join(lacking)
        if counts[0] and counts[1]:
            return (f"{what}: not stored for these metrics although the dataset now has documents and references: "
                    f"run `{self.agreement_hint()}` again")
        return (f"{what} need the source documents and the reference texts; dataset {self.dataset!r} stores "
                f"{counts[0]} documents and {counts[1]} reference texts (`{self.run(_SUMMARIES)}` stores those "
                "its file has), "
                "so only ease of summarisation is drawn")

    def run(self, hint: Hint) -> str:
        """What to run, in the words of the report's reader (:class:`Words`)."""
        return self.words.hint(hint)

    def agreement_hint(self) -> str:
        return self.run(Hint("agreement", (("dataset", self.dataset),)))

    def _missing(self, what: str, command: str, *, first: tuple = (), needs_texts: bool = False,
                 needs_metric: bool = False, needs_pair: bool = False) -> str:
        """"no WHAT yet", with the call of the ``Warehouse`` method ``command`` (its arguments
        ``first``, then the dataset's) that can run on this warehouse: real measure names (the
        report's human judgment, else the dataset's first), and, when it cannot run here (no human
        judgment, no summary texts), what is missing instead."""
        humans = sorted(self.wh.measures(self.dataset, "human")["measure"])
        human = self.human or (humans[0] if humans else None)
        if human is None:
            return (f"no {what}: dataset {self.dataset} has no human judgment to correlate with "
                    f"(mark one with {self.words.argument(Argument('human'))} when ingesting)")
        if needs_texts and not self.wh.sql("SELECT 1 FROM summary_texts WHERE dataset = ? LIMIT 1",
                                           [self.dataset]).shape[0]:
            return (f"no {what}: they score the summary texts, and dataset {self.dataset} has none "
                    f"(add them with `{self.run(_load_summaries(self.dataset))}`)")
        args = [*first, ("dataset", self.dataset), ("human", human)]
        metrics = sorted(self.wh.measures(self.dataset, "automatic")["measure"])
        if len(metrics) < (2 if needs_pair else 1):
            return (f"no {what}: they need {'two automatic metrics' if needs_pair else 'an automatic metric'}, "
                    f"and dataset {self.dataset} has {len(metrics) or 'none'}")
        if needs_metric:
            args += [("metrics", [metrics[0]])]
        return f"no {what} yet: run `{self.run(Hint(command, tuple(args)))}`"

    def runs_line(self, run_ids: set[int]) -> str:
        """The runs behind a section, each a link to its row in the provenance section."""
        if not run_ids:
            return ""
        links = ", ".join(f'<a href="#run-{int(r)}">{int(r)}</a>' for r in sorted(run_ids))
        return f'<p class="runs">Runs behind this section (parameters, seed, data fingerprint): {links}.</p>'

    def provenance(self, run_ids: set[int]) -> Section:
        s = Section("Provenance: the runs behind every number", "provenance")
        runs = self.wh.sql(f"SELECT {', '.join(PROVENANCE_COLUMNS)} FROM analysis_runs "
                           "WHERE list_contains(?, run_id) ORDER BY run_id", [sorted(int(r) for r in run_ids)])
        if runs.empty:
            s.note = "no analysis results are shown, so no run is behind this report"
            return s
        versions = ", ".join(sorted(set(map(str, runs["version"]))))
        s.blocks.append(f"<details><summary>{len(runs)} analysis runs (metaeval {html.escape(versions)}): command, "
                        "status, version, start, seed, the sha256 fingerprint of the cells analysed, parameters"
                        "</summary>" + _table_html(runs, row_ids=[f"run-{int(r)}" for r in runs["run_id"]])
                        + "</details>")
        return s


def _in_order(groups, keys: Sequence[str]) -> list:
    """``groups`` (key, rows) with the levels and coefficients in the order of the ranking
    (system, summary, global; pearson, spearman, kendall), the other keys sorted."""
    rank = {"level": vocabulary.LEVELS, "coefficient": vocabulary.CORRELATION_COEFFICIENTS}

    def key(item):
        return tuple((list(rank[k]).index(v) if k in rank and v in rank[k] else 99, str(v))
                     for k, v in zip(keys, item[0]))
    return sorted(groups, key=key)


def _power_note(rows: pd.DataFrame) -> str:
    """What a reader of a power figure must be told: which curves coincide (drawn one over the
    other), and why a test that never rejects cannot, from its rows' conventions."""
    notes = []
    for group in figures.coinciding(rows, "method", "proportion", "power"):
        notes.append(f"The curves of {' and '.join(group)} coincide (the same power at every proportion): they are "
                     "drawn one over the other, told apart by their line styles and markers.")
    for method in figures.never_rejects(rows):
        part = rows[rows["method"] == method]
        conventions = part["conventions"].iloc[0] if "conventions" in part else None
        conventions = json.loads(conventions) if isinstance(conventions, str) else conventions or {}
        trials = int(part["trials"].max())
        level = conventions.get("level", part["level"].iloc[0] if "level" in part else "")
        why = [f"its p-value is {conventions['pvalue']}"] if conventions.get("pvalue") else []
        if method == "williams":
            n = int(part["n_systems"].max()) if level == "system" and "n_systems" in part else None
            if n is not None:
                why.append(f"at the system level n is the {n} systems ({n - 3} degrees of freedom): it sees the "
                           "system means only, not the variation over inputs that the resampling tests draw on")
            coefficient = conventions.get("coefficient", "")
            if coefficient and coefficient != "pearson":
                why.append(f"the test is derived for Pearson's r and is only an approximation for {coefficient}")
        notes.append(f"{method} rejected H0 in none of the {trials} trials at any proportion (power 0 throughout)"
                     + (": " + "; ".join(why) if why else "") + ". Its line lies on the x-axis.")
    return " ".join(notes)


def _property_pairs(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """The metric pairs drawn against the properties: all, or MAX_PROPERTY_PAIRS of them spread
    evenly over the ranking by mean per-input tau (the same pairs for every property)."""
    mean = (rows.groupby(["metric_a", "metric_b"])["tau_mean"].mean().sort_index()
            .sort_values(kind="stable", na_position="last"))
    if len(mean) <= MAX_PROPERTY_PAIRS:
        return sorted(mean.index)
    defined = mean.dropna()
    ranked = defined if len(defined) >= MAX_PROPERTY_PAIRS else mean
    picks = sorted(set(np.round(np.linspace(0, len(ranked) - 1, MAX_PROPERTY_PAIRS)).astype(int)))
    return [ranked.index[i] for i in picks]


def _window(rows: pd.DataFrame) -> int:
    """The moving average of tau against a property: the paper's 10 points (TAC, 46 inputs), or
    100 (CNNDM, 11,490) beyond 1,000 inputs; at most a third of the fewest inputs drawn, at least 2."""
    paper = 10 if int(rows["n_inputs"].max()) <= 1000 else 100
    return min(paper, max(2, int(rows["n_used"].min()) // 3))


STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1180px;margin:1.2em auto;padding:0 1em;
color:#222;line-height:1.4}
h1{font-size:1.5em;margin:.2em 0 .1em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd}
h3{font-size:1.05em}h4{font-size:.95em;margin:1.2em 0 .3em}
.meta{color:#555;font-size:.85em;margin:0 0 .4em}
nav.toc{font-size:.85em;margin:.3em 0 .8em;padding:.3em .6em;background:#f6f7f9;border-radius:4px}
nav.toc a{margin-right:.9em;white-space:nowrap}
.answer{font-size:1.02em;margin:.4em 0}
table{border-collapse:collapse;font-size:13px;margin:.4em 0}
td,th{padding:2px 8px;border-bottom:1px solid #e3e3e3;text-align:left;vertical-align:top}
th{background:#f6f7f9;position:sticky;top:0}
table.sortable th:not(.nosort){cursor:pointer}
table.sortable th:not(.nosort):after{content:" \\2195";color:#aaa;font-size:.8em}
th.asc:after{content:" \\2191"!important;color:#333!important}th.desc:after{content:" \\2193"!important;color:#333!important}
td.num,th.num,table.data td[data-v]{text-align:right;font-variant-numeric:tabular-nums}
table.data{font-size:12px}
tr.undefined td{color:#888}tfoot td{border-top:2px solid #bbb;color:#8a1c1c}
.bar{position:relative;display:inline-block;width:180px;height:12px;vertical-align:middle}
.bar .zero{position:absolute;top:0;bottom:0;border-left:1px dotted #999}
.bar .ci{position:absolute;top:5px;height:3px;background:#1f77b4}
.bar .dot{position:absolute;top:2px;width:8px;height:8px;margin-left:-4px;border-radius:50%;background:#222}
.bar .ci.human{background:#d62728;opacity:.5}.bar .dot.human{background:#d62728}
.caption{font-size:.85em;color:#444;max-width:1100px}
figure{margin:1em 0}figure img{max-width:100%;height:auto}figcaption{font-size:.85em;color:#444;max-width:900px}
.note{color:#8a4b00}.runs{font-size:.8em;color:#666}
details{margin:.3em 0 .8em}summary{cursor:pointer;color:#234}
code{background:#f4f4f4;padding:0 3px}
"""

#: Click a header to sort its table (numbers by their data-v value; an empty value always last).
SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('thead th').forEach(function (th, col) {
    if (th.classList.contains('nosort')) return;
    th.addEventListener('click', function () {
      var body = table.tBodies[0], up = !th.classList.contains('asc');
      table.querySelectorAll('thead th').forEach(function (h) { h.classList.remove('asc', 'desc'); });
      th.classList.add(up ? 'asc' : 'desc');
      var key = function (row) {
        var td = row.cells[col]; if (!td) return null;
        var v = td.getAttribute('data-v');
        if (v !== null) return v === '' ? null : parseFloat(v);
        return td.textContent.trim() || null;
      };
      Array.from(body.rows).map(function (r, i) { return [key(r), i, r]; }).sort(function (a, b) {
        if (a[0] === null || b[0] === null) return (a[0] === null) - (b[0] === null) || a[1] - b[1];
        var c = typeof a[0] === 'number' && typeof b[0] === 'number' ? a[0] - b[0]
                : String(a[0]).localeCompare(String(b[0]));
        return (up ? c : -c) || a[1] - b[1];
      }).forEach(function (x) { body.appendChild(x[2]); });
    });
  });
});
"""


@dataclass(frozen=True)
class Words:
    """How the report names what to run (``hint``: a :class:`~metaeval.errors.Hint` as text) and a
    parameter (``argument``: an :class:`~metaeval.errors.Argument`). Default: the Python API's
    words (``wh.compare(dataset='d', ...)``, ``system_inputs=all``); the command line gives its
    own (``metaeval compare --dataset d ...``, ``--system-inputs all``)."""

    hint: Callable[[Hint], str] = str
    argument: Callable[[Argument], str] = str


#: ``metaeval.ingest.summaries``: what stores a dataset's summary texts, references and documents.
_SUMMARIES = Hint("load_summaries", python="metaeval.ingest.summaries")


def _load_summaries(dataset: str) -> Hint:
    return Hint("load_summaries", (("dataset", dataset),), positional=("SUMMARIES.jsonl",),
                python=f"wh.load({dataset!r}, [metaeval.ingest.summaries.parse('SUMMARIES.jsonl')])")


def build(wh: Warehouse, dataset: str, out: Path, human: str | None = None, *, overwrite: bool = False,
          words: Words = Words()) -> tuple[Path, int]:
    """Write the report of ``dataset`` to the HTML file ``out``; (``out``, the number of figures).

    One self-contained file: nothing it shows is fetched from elsewhere. It is written beside
    ``out`` and moved into place when complete (a failure leaves nothing behind); an existing
    file is replaced only with ``overwrite``, and never the warehouse (:mod:`metaeval.files`).
    ``words`` name what to run for missing results (default: Python calls; the command line
    gives its command lines)."""
    wh.require_dataset(dataset)
    if human is not None:
        humans = set(wh.measures(dataset, "human")["measure"])
        if human not in humans:
            raise WarehouseError(f"dataset {dataset!r} has no human judgment {human!r}; it has: "
                                 f"{', '.join(sorted(humans)) or 'none'}")
    files.check_output_file(out, warehouse=wh.path, overwrite=overwrite)
    page, n = render(wh, dataset, human, words)
    with files.atomic_file(out, warehouse=wh.path, overwrite=overwrite) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return Path(out), n


def render(wh: Warehouse, dataset: str, human: str | None = None, words: Words = Words()) -> tuple[str, int]:
    """The report's page (HTML) and its number of figures; ``words``: see :func:`build`."""
    b = _Builder(wh, dataset, human, words)
    sections = [b.ranking(), b.intervals(), b.tests(), b.close_pairs(), b.power(), b.coverage(), b.normality(),
                b.agreement(), b.overview()]
    runs = set().union(*(s.run_ids for s in sections))
    # what is not computed yet: one list of the commands that compute it, after the results
    missing = [s for s in sections if s.note and not s.blocks]
    sections = [s for s in sections if s not in missing or s.anchor == "ranking"]
    if missing:
        todo = Section("Not computed yet", "missing")
        todo.blocks.append("<ul>" + "".join(f"<li><b>{html.escape(_short(s.title))}</b>: {html.escape(s.note)}</li>"
                                            for s in missing if s.anchor != "ranking") + "</ul>")
        if len(todo.blocks[0]) > len("<ul></ul>"):
            sections.insert(-1, todo)
    sections.append(b.provenance(runs))
    body = []
    for s in sections:
        body.append(f'<section id="{s.anchor}"><h2>{html.escape(s.title)}</h2>')
        if s.note:
            body.append(f'<p class="note">{html.escape(s.note)}</p>')
        body += s.blocks
        if s.anchor != "provenance":
            body.append(b.runs_line(s.run_ids))
        body.append("</section>")
    against = f"with {human}" if human else "with the human judgments"
    title = f"Which metrics agree best {against}? {dataset}"
    toc = " ".join(f'<a href="#{s.anchor}">{html.escape(_short(s.title))}</a>' for s in sections)
    page = ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
            f"<h1>Which metrics agree best {html.escape(against)}? "
            f"<span style='font-weight:normal'>Dataset {html.escape(dataset)}</span></h1>"
            f"<p class='meta'>metaeval {html.escape(__version__)} report of <code>{html.escape(str(wh.path))}</code>: "
            "every number is read from the warehouse's tables (nothing is recomputed but the per-input τ of the "
            "agreement figures, said in their captions); each section links the runs behind it.</p>"
            f"<nav class='toc'><b>Contents:</b> {toc}</nav>"
            + "\n".join(body) + f"<script>{SCRIPT}</script></body></html>")
    return page, b.figures


def _short(title: str) -> str:
    """A section title for the table of contents (without its reference in brackets)."""
    return re.sub(r" \((?:the paper's|Deutsch|Bhandari)[^)]*\)$", "", title).split(":")[0]
