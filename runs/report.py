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
from metaeval.core import Store
from metaeval.errors import Argument, Hint, WarehouseError
from metaeval.runs import annotators

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


def correlations(wh: Store, dataset: str, human: str, level: str, coefficient: str,
                 subset: str = "") -> dict[str, float]:
    """metric -> its latest correlation with ``human`` at ``level`` and ``coefficient`` on the
    cells of ``subset`` (the order of a significance heatmap's metrics); empty when ``correlate``
    has not run."""
    rows = wh.sql("SELECT metric, value FROM latest_correlations WHERE dataset = ? AND human = ? AND level = ? "
                  "AND coefficient = ? AND subset = ?", [dataset, human, level, coefficient, subset])
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

    def rows(self, wh: Store) -> pd.DataFrame:
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
    def __init__(self, wh: Store, dataset: str, human: str | None, words: Words):
        self.wh, self.dataset, self.human, self.words = wh, dataset, human, words
        self.figures = 0
        self._data = None

    def rows(self, view: str) -> pd.DataFrame:
        """The latest rows of ``view`` for the report's dataset (and human), of every subset of
        cells: the sections group them by ``subset`` (one figure each; a ``--where`` / ``--by``
        subset's rows never mix with those of every cell)."""
        return self.wh.sql(f"SELECT * FROM {view} WHERE dataset = ? AND (? IS NULL OR human = ?) ORDER BY result_id",
                           [self.dataset, self.human, self.human])

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
        keys = ["human", "method", "alpha", "level", "coefficient", "subset"]
        for key, part in _in_order(rows.groupby(keys, sort=True), keys):
            human, method, alpha, level, coefficient, subset = key
            caption = (f"{1 - alpha:.0%} {method} CIs, {level} level, {coefficient}, against {human}"
                       + (f", subset {subset}" if subset else ""))
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
        keys = ["human", "method", "alternative", "correction", "correction_group", "alpha", "level", "coefficient",
                "subset"]
        for key, part in _in_order(rows.groupby(keys, sort=True), keys):
            human, method, alternative, correction, group, alpha, level, coefficient, subset = key
            setting = (f"{method} ({alternative}), {level} level, {coefficient}, against {human}"
                       + (f", subset {subset}" if subset else ""))
            phrase = figures.correction_phrase(correction, group)
            shading = (f"filled = p <= {alpha} before correction, outlined = significant after {phrase}"
                       if correction != "none" else f"filled = significant at alpha {alpha} ({phrase})")
            caption = (f"{figures.hypothesis(alternative)} {setting}: {shading}; metrics ordered by their "
                       "correlation with the human judgment (in brackets) when it is stored")
            table = part[["metric_a", "metric_b", "delta", "statistic", "p_value", "p_adjusted", "significant",
                          "k", "seed", "run_id"]]
            order = correlations(self.wh, self.dataset, human, level, coefficient, subset)
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

    # --- factual consistency: partial correlations, subsets, detection, error categories ---------
    def _ci_rows(self, frame: pd.DataFrame) -> pd.DataFrame:
        """The intervals of one setting per coefficient and subset: the preferred method and alpha
        (boot-both, 0.05) when stored, else the setting with the most rows."""
        if frame.empty:
            return frame
        order = {m: i for i, m in enumerate(vocabulary.CI_METHODS)}
        parts = [_pick(part, ["method", "alpha"], CI_PREFERRED, order)[0]
                 for _, part in frame.groupby(["coefficient", "subset"], sort=True)]
        return pd.concat(parts, ignore_index=True)

    def factuality(self) -> Section | None:
        """Pooled against partial correlations, the correlations of each subset of cells, the
        metrics judged as detectors on binary labels, and the error categories; None when the
        dataset has none of these results and no attributes (nothing to suggest)."""
        s = Section("Factual consistency: confounding, subsets, detection, error categories", "factuality")
        corr = self.rows("latest_correlations")
        partial = corr[corr["coefficient"].str.contains("[control=", regex=False)] if not corr.empty else corr
        subsets = corr[(corr["subset"] != "") & ~corr["coefficient"].str.contains("[control=", regex=False)] \
            if not corr.empty else corr
        detection = self.rows("latest_detection")
        categories = self.rows("latest_error_categories")
        attributes = self.wh.attributes(self.dataset)
        if partial.empty and subsets.empty and detection.empty and categories.empty and not attributes:
            return None
        cis = self._ci_rows(self.rows("latest_confidence_intervals"))
        missing = []
        if not partial.empty:
            self._partial(s, corr, partial, cis)
        else:
            missing.append(self._missing("partial correlations", "correlate",
                                         first=(("control", "system"), ("levels", ["global"]))))
        if not subsets.empty:
            self._subsets(s, subsets, cis)
        if not detection.empty:
            self._detection(s, detection)
        else:
            missing.append(self._missing("detection results (metrics judged on binary labels)", "detection",
                                         first=(("positive", 1),))
                           + " (positive: the lowest human value that counts as consistent; 1 for a 0/1 label)")
        if not categories.empty:
            self._categories(s, categories)
        if missing:
            text = "; ".join(missing)
            if s.blocks:
                s.blocks.append(f'<p class="note">{html.escape(text[0].upper() + text[1:])}.</p>')
            else:
                s.note = text
        return s

    def _partial(self, s: Section, corr: pd.DataFrame, partial: pd.DataFrame, cis: pd.DataFrame) -> None:
        s.blocks.append("<h3>Pooled and partial correlations: is the agreement confounded?</h3>")
        s.run_ids |= set(partial["run_id"])
        part = partial.assign(base=partial["coefficient"].str.split("[", n=1).str[0],
                              control=partial["coefficient"].str.extract(r"\[control=([^\]]*)\]")[0])
        for key, rows in part.groupby(["human", "subset", "level", "base", "control"], sort=True):
            human, subset, level, base, control = key
            pooled = corr[(corr["human"] == human) & (corr["subset"] == subset) & (corr["level"] == level)
                          & (corr["coefficient"] == base)].set_index("metric")
            s.run_ids |= set(pooled["run_id"])
            ci = cis[(cis["human"] == human) & (cis["subset"] == subset) & (cis["level"] == level)] \
                if not cis.empty else cis
            s.run_ids |= set(ci["run_id"]) if not ci.empty else set()

            def interval(metric: str, coefficient: str):
                if ci.empty:
                    return None
                hit = ci[(ci["metric"] == metric) & (ci["coefficient"] == coefficient)]
                return None if hit.empty else (hit["lower"].iloc[0], hit["upper"].iloc[0])

            table = []
            for r in rows.sort_values("value", ascending=False, na_position="last").itertuples():
                p = pooled["value"].get(r.metric, float("nan"))
                table.append([(r.metric, ""), _value_cell(p, interval(r.metric, base)),
                              _value_cell(r.value, interval(r.metric, r.coefficient)),
                              _value_cell(p - r.value if not (_missing_value(p) or _missing_value(r.value))
                                          else None)])
            name = tables.COEFFICIENT_NAMES.get(base, (base,))[0]
            within = "system" if control == "system" else f"value of {control}"
            ranked = rows.dropna(subset=["value"]).sort_values("value", ascending=False)
            answer = ""
            if not ranked.empty:
                drops = {m: pooled["value"].get(m, float("nan")) - v for m, v in zip(ranked["metric"], ranked["value"])}
                defined = {m: d for m, d in drops.items() if not _missing_value(d)}
                answer = f"Within each {within}, the highest partial {name} is {ranked['metric'].iloc[0]}'s"
                if defined:
                    worst = max(defined, key=defined.get)
                    answer += (f"; the largest fall from pooled to partial is {worst}'s, "
                               f"{_number(pooled['value'][worst])} → {_number(ranked.set_index('metric')['value'][worst])}"
                               " (its pooled correlation rests on recognising the "
                               f"{'system' if control == 'system' else control})")
                pooled_top = pooled["value"].dropna().sort_values(ascending=False)
                if not pooled_top.empty and pooled_top.index[0] != ranked["metric"].iloc[0]:
                    answer += f"; pooled, {pooled_top.index[0]} would come first"
                answer += "."
            where = f", subset {subset}" if subset else ""
            s.blocks.append(
                f"<h4>{html.escape(f'{name}, {level} level, against {human}, controlling for {control}{where}')}</h4>"
                + (f'<p class="answer">{html.escape(answer)}</p>' if answer else "")
                + _sortable(["Metric", f"Pooled {name} [CI]", f"Partial {name} [CI]", "Pooled − partial"], table)
                + '<p class="caption">' + html.escape(
                    f"Partial: each {within}'s mean subtracted from the metric and from the human on the cells "
                    "where both are present, then correlated (p-values with n − 2 − (g − 1) degrees of freedom, "
                    "in the rows' conventions). A metric whose pooled correlation is high and partial near 0 "
                    f"tells the {within}s apart, not the good outputs from the bad within one. "
                    + ("CI: " + ", ".join(sorted({f'{1 - a:.0%} {m}' for m, a in zip(ci['method'], ci['alpha'])}))
                       + "; an empty bracket: no interval stored. " if not ci.empty else
                       f"No intervals stored: run `{self.run(Hint('ci', (('dataset', self.dataset), ('human', human), ('control', control))))}`. ")
                    + "Significance of the partial correlations' differences: the Pairwise significance section "
                      f"(coefficient {base}[control={control}]).") + "</p>")

    def _subsets(self, s: Section, rows: pd.DataFrame, cis: pd.DataFrame) -> None:
        s.blocks.append("<h3>Correlations per subset of cells</h3>")
        s.run_ids |= set(rows["run_id"])
        for (human, level, coefficient), part in _in_order(rows.groupby(["human", "level", "coefficient"], sort=True),
                                                            ["human", "level", "coefficient"]):
            ci = cis[(cis["human"] == human) & (cis["level"] == level) & (cis["coefficient"] == coefficient)] \
                if not cis.empty else cis
            s.run_ids |= set(ci["run_id"]) if not ci.empty else set()
            table = []
            for r in part.sort_values(["subset", "value"], ascending=[True, False], na_position="last").itertuples():
                hit = ci[(ci["metric"] == r.metric) & (ci["subset"] == r.subset)] if not ci.empty else ci
                bounds = None if hit.empty else (hit["lower"].iloc[0], hit["upper"].iloc[0])
                table.append([(_subset_text(r.subset), ""), (r.metric, ""), _value_cell(r.value, bounds)])
            s.blocks.append(f"<h4>{html.escape(f'{level} level, {coefficient}, against {human}')}</h4>"
                            + _sortable(["Subset", "Metric", "Correlation [CI]"], table)
                            + '<p class="caption">' + html.escape(
                                "Each subset is its own result (the cells whose attributes hold its conditions; "
                                "ATTR=*: the unweighted macro average over the values of ATTR). The ranking above "
                                "reads every cell (subset '').") + "</p>")

    def _detection(self, s: Section, rows: pd.DataFrame) -> None:
        s.blocks.append("<h3>Detection on binary labels: ROC-AUC and balanced accuracy</h3>")
        s.run_ids |= set(rows["run_id"])
        tests = self.rows("latest_detection_tests")
        keys = ["human", "positive", "by", "tune", "fixed_threshold", "alpha"]
        for key, part in rows.fillna({"tune": "\0", "fixed_threshold": float("nan")}).groupby(
                keys, sort=True, dropna=False):
            human, positive, by, tune, fixed, alpha = key
            tune = None if tune == "\0" else tune
            table = []
            macro = part[part["group"] == "*"]
            order = part.assign(_macro=part["group"] == "*").sort_values(
                ["subset", "_macro", "group", "roc_auc"], ascending=[True, True, True, False])
            for r in order.itertuples():
                group = "macro average" if r.group == "*" else r.group or "—"
                table.append([(r.metric, ""), (_subset_text(r.subset), ""), (group, ""), _int_cell(r.n),
                              _int_cell(r.n_positive),
                              _value_cell(r.roc_auc, (r.roc_auc_lower, r.roc_auc_upper)),
                              _threshold_cell(r.threshold, r.group == "*"),
                              _value_cell(r.balanced_accuracy, (r.balanced_accuracy_lower,
                                                                r.balanced_accuracy_upper)),
                              _value_cell(r.tune_balanced_accuracy)])
            if tune is None:
                how = f"at the fixed threshold {_number(fixed)}"
            elif tune == "":
                how = ("at a threshold tuned on the evaluated cells themselves (optimistic: no held-out tune "
                       "subset)")
            else:
                how = f"at a threshold tuned on the cells of {tune}" + (" (per group of " + by + ")" if by else "")
            best = part[part["group"].isin(["*"] if not macro.empty else [""])].dropna(subset=["roc_auc"])
            answer = ""
            if not best.empty:
                top = best.sort_values("roc_auc", ascending=False).iloc[0]
                answer = (f"Highest {'macro-average ' if not macro.empty else ''}ROC-AUC: {top['metric']}, "
                          f"{_interval_text(top['roc_auc'], top['roc_auc_lower'], top['roc_auc_upper'])}; its balanced "
                          f"accuracy {_interval_text(top['balanced_accuracy'], top['balanced_accuracy_lower'], top['balanced_accuracy_upper'])}.")
            caption = (f"A cell is positive (consistent) when {human} ≥ {float(positive):g}; each metric (lower-is-"
                       f"better ones negated) as a detector: ROC-AUC, and the balanced accuracy {how}, a cell "
                       "predicted positive when its score > the threshold (−∞: every cell). "
                       f"{1 - alpha:.0%} percentile bootstrap intervals over the cells (k = {int(part['k'].max())}, "
                       f"seed {int(part['seed'].min())}; every resample re-tunes the threshold). "
                       + ("Macro average: the unweighted mean over the groups of " + by + " (undefined when any group "
                          "is). " if by else "")
                       + "undefined: one class only among the cells.")
            s.blocks.append(f"<h4>{html.escape(f'against {human}, positive ≥ {float(positive):g}' + (f', by {by}' if by else ''))}</h4>"
                            + (f'<p class="answer">{html.escape(answer)}</p>' if answer else "")
                            + _sortable(["Metric", "Subset", "Group", "n", "Positive", "ROC-AUC [CI]", "Threshold",
                                         "Balanced accuracy [CI]", "Tune balanced accuracy"], table)
                            + f'<p class="caption">{html.escape(caption)}</p>')
            t = tests[(tests["human"] == human) & (tests["positive"] == positive) & (tests["by"] == by)
                      & (tests["tune"].isna() if tune is None else tests["tune"] == tune)] if not tests.empty else tests
            if t.empty:
                s.blocks.append('<p class="note">' + html.escape(
                    "No paired tests between the detectors are stored for this setting (they need two metrics): "
                    f"run `{self.run(Hint('detection', (('dataset', self.dataset), ('human', human), ('positive', positive))))}`"
                    " with the same options.") + "</p>")
                continue
            s.run_ids |= set(t["run_id"])
            rows_t = [[(r.metric_a, ""), (r.metric_b, ""), (_subset_text(r.subset), ""),
                       ("macro average" if r.group == "*" else r.group or "—", ""), (r.statistic, ""),
                       _value_cell(r.delta), _value_cell(r.p_value), _value_cell(r.p_adjusted),
                       _flag_cell(r.significant)] for r in t.itertuples()]
            first = t.iloc[0]
            s.blocks.append("<details><summary>" + html.escape(
                f"paired bootstrap tests between the detectors ({len(t)}; "
                f"{figures.correction_phrase(first['correction'], first['correction_group'])}, alpha "
                f"{float(first['alpha']):g}, {first['alternative']})") + "</summary>"
                + _sortable(["Metric A", "Metric B", "Subset", "Group", "Statistic", "Δ (A − B)", "p", "p corrected",
                             "Significant"], rows_t)
                + '<p class="caption">' + html.escape(
                    "Paired bootstrap over the cells both metrics scored (drawn once for both); p = count / k; a "
                    "family that cannot reach its corrected level at k is never significant (no).") + "</p></details>")

    def _categories(self, s: Section, rows: pd.DataFrame) -> None:
        s.blocks.append("<h3>Error categories: which errors each metric captures</h3>")
        s.run_ids |= set(rows["run_id"])
        for key, part in _in_order(rows.groupby(["human", "level", "coefficient", "system_inputs"], sort=True),
                                   ["human", "level", "coefficient", "system_inputs"]):
            human, level, coefficient, _ = key
            table = [[(r.metric, ""), (r.category, ""), _value_cell(r.category_correlation),
                      _value_cell(r.overall_correlation), _value_cell(r.ablated_correlation),
                      _value_cell(r.correlation_drop)] for r in part.itertuples()]
            setting = f"{level} level, {coefficient}, against {human}"
            s.blocks.append(f"<h4>{html.escape(setting)}</h4>"
                            + _sortable(["Metric", "Category", "r(metric, category)", "r(metric, overall)",
                                         "r(metric, overall without it)", "Drop"], table))
            if part["correlation_drop"].notna().any():
                caption = (f"drop of each metric's correlation with {human} when the category is ignored (FRANK's "
                           f"ablation), {level} level, {coefficient}; > 0: the metric's agreement rests on that "
                           "category; n/a: undefined")
                cols = ["metric", "category", "category_measure", "ablated_measure", "category_correlation",
                        "overall_correlation", "ablated_correlation", "correlation_drop", "run_id"]
                self.figure(s, figures.category_drops(part, caption), _slug("categories", *key), caption, part[cols])

    # --- LLM judges and pairwise preferences ---------------------------------------------------
    def judges(self) -> Section | None:
        """Per automatic judge against the human majority (with intervals), position bias, the
        significance clusters where the tests decide them, the judge-vs-judge tests, and the
        Bradley-Terry rankings of the systems; None when the dataset has no preferences."""
        s = Section("LLM judges and pairwise preferences", "judges")
        stats = self.wh.sql("SELECT * FROM latest_judge_statistics WHERE dataset = ? ORDER BY result_id",
                            [self.dataset])
        stored = self.wh.sql("SELECT kind, count(DISTINCT judge) AS judges FROM preference_matrix WHERE dataset = ? "
                             "GROUP BY kind", [self.dataset])
        if stats.empty and stored.empty:
            return None
        hint = self.run(Hint("judges", (("dataset", self.dataset),)))
        if stats.empty:
            kinds = dict(zip(stored["kind"], stored["judges"]))
            if not kinds.get("human") or not kinds.get("automatic"):
                s.note = (f"no judge statistics: they need human and automatic judges, and dataset {self.dataset} has "
                          f"{kinds.get('human', 0)} human and {kinds.get('automatic', 0)} automatic ones")
            else:
                s.note = f"no judge statistics yet: run `{hint}`"
            return s
        s.run_ids |= set(stats["run_id"])
        tests = self.wh.sql("SELECT * FROM latest_judge_tests WHERE dataset = ? ORDER BY result_id", [self.dataset])
        ranks = self.wh.sql("SELECT * FROM latest_preference_rankings WHERE dataset = ? ORDER BY result_id",
                            [self.dataset])
        for (human, subset), part in stats.groupby(["human", "subset"], sort=True):
            self._judges_of(s, human, subset, part,
                            tests[(tests["human"] == human) & (tests["subset"] == subset)],
                            ranks[(ranks["human"] == human) & (ranks["subset"] == subset)])
        return s

    def _judges_of(self, s: Section, human: str, subset: str, stats: pd.DataFrame, tests: pd.DataFrame,
                   ranks: pd.DataFrame) -> None:
        first = stats.iloc[0]
        clustered = stats["cluster"].notna().any()
        where = f", subset {subset}" if subset else ""
        s.blocks.append(f"<h3>{html.escape(f'Against the majority of {human}{where}')}</h3>")
        order = stats.assign(_r=stats["rank"].fillna(10 ** 6)).sort_values(["_r", "judge"])
        ranked = order[order["rank"].notna()]
        if ranked.empty:
            answer = "No judge has a defined accuracy."
        else:
            best = ranked.iloc[0]
            answer = (f"The most accurate judge is {best['judge']}, "
                      f"{_interval_text(best['accuracy'], best['accuracy_lower'], best['accuracy_upper'])}")
            if clustered:
                top = list(ranked.loc[ranked["cluster"] == 1, "judge"])
                answer += (f"; the top significance cluster is {', '.join(top)}" if len(top) > 1
                           else "; the tests separate it from every other judge")
            answer += "."
        biased = []
        for r in stats.itertuples():
            lo, hi = r.first_position_rate_lower, r.first_position_rate_upper
            if not (_missing_value(lo) or _missing_value(hi)) and (lo > 0.5 or hi < 0.5):
                biased.append(f"{r.judge} chose the output shown {'first' if lo > 0.5 else 'second'} in "
                              f"{_interval_text(r.first_position_rate, lo, hi)} of its non-tie verdicts")
        answer += (" Position bias (the interval excludes 0.5): " + "; ".join(biased) + "." if biased
                   else " No judge's first-position rate interval excludes 0.5 (no position bias shown).")
        table = []
        for r in order.itertuples():
            row = [_int_cell(r.rank) if not _missing_value(r.rank) else ("—", ""), (r.judge, "")]
            if clustered:
                row.append(_int_cell(r.cluster) if not _missing_value(r.cluster) else ("", ""))
            row += [_value_cell(getattr(r, c), (getattr(r, c + "_lower"), getattr(r, c + "_upper")))
                    for c in ("accuracy", "accuracy_ab", "accuracy_ba", "both_correct", "position_consistency",
                              "first_position_rate", "tie_rate", "kappa", "kendall")]
            row += [_int_cell(r.n), _int_cell(r.n_both)]
            table.append(row)
        head = ["Rank", "Judge", *(["Cluster"] if clustered else []), "Accuracy [CI]", "Accuracy ab", "Accuracy ba",
                "Both orders correct", "Position consistency", "First-position rate", "Tie rate", "Cohen's κ",
                "Kendall τ-b vs humans' ranking", "n items", "in both orders"]
        test = first["test"]
        if clustered:
            why = f"clusters from the {test} tests ({first['correction']}), 1 = the best"
        elif tests.empty:
            why = f"no clusters: no judge-vs-judge tests are stored (run `{self.run(Hint('judges', (('dataset', self.dataset),)))}`)"
        else:
            why = ("no clusters: the tests do not decide them (every pair of ranked judges must be tested and the "
                   "family able to reach its corrected level)")
        caption = (f"Each automatic judge against the majority of the human judges ({human}; items whose majority is "
                   f"tied left out: {int(first['tied_majority'])}). Fractions in [0, 1] with "
                   f"{1 - float(first['alpha']):.0%} percentile bootstrap intervals over items (k = {int(first['k'])}, "
                   f"seed {int(first['seed'])}); a judge's tie is wrong unless the humans' is a tie; first-position "
                   f"rate: share of non-tie verdicts choosing the output shown first (0.5: no position bias); "
                   f"undefined: an empty denominator (e.g. a judge that only ties). Ranked by accuracy; {why}.")
        s.blocks.append(f'<p class="answer">{html.escape(answer)}</p>' + _sortable(head, table)
                        + f'<p class="caption">{html.escape(caption)}</p>')
        if not tests.empty:
            s.run_ids |= set(tests["run_id"])
            rows_t = [[(r.judge_a, ""), (r.judge_b, ""), (r.test, ""), _int_cell(r.n), _value_cell(r.delta),
                       _int_cell(r.discordant_a), _int_cell(r.discordant_b), _value_cell(r.pvalue),
                       _value_cell(r.pvalue_corrected), _flag_cell(r.significant)] for r in tests.itertuples()]
            s.blocks.append("<details><summary>" + html.escape(
                f"judge-vs-judge tests ({len(tests)}: exact McNemar on the verdicts both gave and a paired "
                f"permutation test over items; {tests['correction'].iloc[0]} correction, alpha "
                f"{float(tests['alpha'].iloc[0]):g})") + "</summary>"
                + _sortable(["Judge A", "Judge B", "Test", "n", "Δ accuracy (A − B)", "A right, B wrong",
                             "B right, A wrong", "p", "p corrected", "Significant"], rows_t) + "</details>")
        if not ranks.empty:
            s.run_ids |= set(ranks["run_id"])
            humans = ranks[ranks["kind"] == "human"].set_index("system")
            judges = sorted(set(ranks.loc[ranks["kind"] == "automatic", "judge"]))
            systems = list(humans.sort_values("rank").index) if not humans.empty else sorted(set(ranks["system"]))
            by_judge = {j: ranks[ranks["judge"] == j].set_index("system") for j in judges}
            rows_r = []
            for system in systems:
                row = [(system, "")]
                if not humans.empty:
                    h = humans.loc[system]
                    row += [_int_cell(h["rank"]), _value_cell(h["strength"], (h["lower"], h["upper"]))]
                row += [_int_cell(by_judge[j]["rank"].get(system)) if system in by_judge[j].index else ("", "")
                        for j in judges]
                rows_r.append(row)
            head_r = ["System", *(["Humans' rank", "Humans' strength [CI]"] if not humans.empty else []),
                      *[f"rank by {j}" for j in judges]]
            r0 = ranks.iloc[0]
            s.blocks.append("<h4>System rankings from the preferences (Bradley–Terry)</h4>"
                            + _sortable(head_r, rows_r) + '<p class="caption">' + html.escape(
                                "Bradley–Terry log-strengths (mean 0 over the systems; ties half a win to each "
                                f"side; ridge prior (ridge/2)·Σθ², ridge = {float(r0['ridge']):g}) of the humans' "
                                f"verdicts, with {1 - float(r0['alpha']):.0%} percentile bootstrap intervals over "
                                f"items (k = {int(r0['k'])}, seed {int(r0['seed'])}), and each judge's rank of the "
                                "systems; the Kendall τ-b of a judge's ranking against the humans' is in the table "
                                "above.") + "</p>")


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


def _sortable(head: Sequence[str], rows: Sequence[Sequence[tuple[str, str]]]) -> str:
    """A sortable table of cells given as (text shown, sort key): a numeric key sorts the column
    by number (an empty key last), none by the text."""
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f'<td data-v="{html.escape(k)}">{html.escape(t)}</td>' if k else
                                    f"<td>{html.escape(t)}</td>" for t, k in row) + "</tr>" for row in rows)
    return f'<table class="data sortable"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def _interval_text(value, lower=None, upper=None) -> str:
    """``0.931 [0.890, 0.965]``; "undefined" for a missing value, no bracket without bounds."""
    if _missing_value(value):
        return "undefined"
    if _missing_value(lower) or _missing_value(upper):
        return _number(value)
    return f"{_number(value)} [{_number(lower)}, {_number(upper)}]"


def _value_cell(value, bounds: tuple | None = None) -> tuple[str, str]:
    """A statistic (with its interval) as a sortable cell; "undefined", sorted last, when missing."""
    if isinstance(value, np.generic):
        value = value.item()
    if _missing_value(value):
        return "undefined", ""
    lower, upper = bounds if bounds is not None else (None, None)
    return _interval_text(value, lower, upper), repr(float(value))


def _int_cell(value) -> tuple[str, str]:
    return ("", "") if _missing_value(value) else (str(int(value)), str(int(value)))


def _flag_cell(value) -> tuple[str, str]:
    return ("—", "") if _missing_value(value) else (("yes", "1") if bool(value) else ("no", "0"))


def _threshold_cell(threshold, macro: bool) -> tuple[str, str]:
    """A detection threshold: −∞ (every cell positive), "— (per group)" for a macro row, undefined."""
    if _missing_value(threshold):
        return ("— (per group)", "") if macro else ("undefined", "")
    if math.isinf(float(threshold)):
        return ("−∞ (every cell positive)", repr(float(threshold)))
    return _number(threshold), repr(float(threshold))


def _subset_text(subset: str) -> str:
    return subset or "every cell"


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


def build(wh: Store, dataset: str, out: Path, human: str | None = None, *, overwrite: bool = False,
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


def render(wh: Store, dataset: str, human: str | None = None, words: Words = Words()) -> tuple[str, int]:
    """The report's page (HTML) and its number of figures; ``words``: see :func:`build`."""
    b = _Builder(wh, dataset, human, words)
    sections = [b.ranking(), b.factuality(), b.judges(), b.intervals(), b.tests(), b.close_pairs(), b.power(),
                b.coverage(), b.normality(), b.agreement(), b.overview()]
    sections = [s for s in sections if s is not None]   # factuality, judges: only where the data has them
    if not sections[0].blocks and any(s.anchor == "judges" and s.blocks for s in sections):
        # preferences but no correlations: the judges answer first
        judges = next(s for s in sections if s.anchor == "judges")
        sections = [judges, *(s for s in sections if s is not judges)]
    preferences_only = (any(s.anchor == "judges" and s.blocks for s in sections)
                        and wh.measures(dataset).empty)
    if preferences_only:
        # pairwise preferences and no scores: the sections of scores have nothing to say or suggest
        sections = [s for s in sections if s.blocks]
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
    who = "metrics"
    if preferences_only:
        who, against = "judges", "with the human preferences"
    title = f"Which {who} agree best {against}? {dataset}"
    toc = " ".join(f'<a href="#{s.anchor}">{html.escape(_short(s.title))}</a>' for s in sections)
    page = ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
            f"<h1>Which {who} agree best {html.escape(against)}? "
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
