"""The tables a paper shows: a ranking of metrics (correlations, their CIs and significance
clusters) and the tests between them, as booktabs LaTeX that fits an ACL page and the markdown /
text that agree with it (same order, same bold).

- :class:`Ranking`, :func:`ranked_latex`: metrics sorted by correlation, numbers with a true
  minus aligned on the decimal point, the bold cells of :func:`metaeval.analyses.conclusions.bold_cells`
  (the top significance cluster; none where the tests cannot resolve, saying so; elsewhere the
  best value), the human ceiling as a row, the conventions in the caption;
- :func:`tests_latex`, :func:`tests_markdown`: the tests between metrics, bold where significant,
  p-values printed at their test's resolution (:func:`metaeval.analyses.conclusions.p_text`).

The page model (:class:`~metaeval.present.tables.Tabular`, layouts) is :mod:`metaeval.present.tables`'.
Pure functions, no database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from metaeval.analyses import conclusions
from metaeval.present.tables import (COMPACT_TABCOLSEP_PT, PAPER_DIGITS, TABCOLSEP_PT, Tabular, choose_layout,
                                      float_env, header_rows, latex_caption, latex_escape, markdown_caption,
                                      merge_groups, render, to_markdown)

#: The most rows of the judges' long layout that auto keeps for its CIs (a longer float fills a
#: page alone): beyond, the compact layout (``Ranking(keep_ci=LONG_MAX_ROWS)``).
LONG_MAX_ROWS = 30
LEVEL_NAMES = {"system": "System", "summary": "Summary", "global": "Global", "micro": "Micro"}
#: coefficient -> (name, LaTeX symbol, plain symbol)
COEFFICIENT_NAMES = {"pearson": ("Pearson", r"$r$", "r"), "spearman": ("Spearman", r"$\rho$", "rho"),
                     "kendall": ("Kendall", r"$\tau$", "tau")}


def setting_header(level: str, coefficient: str) -> tuple[str, str, str, str]:
    """The headers of a (level, coefficient) column: (group, long label, short label) in LaTeX and
    the plain name (``system kendall``)."""
    group = latex_escape(LEVEL_NAMES.get(level, level))
    name, symbol, _ = COEFFICIENT_NAMES.get(coefficient, (coefficient, None, None))
    long = f"{name} {symbol}" if symbol else latex_escape(coefficient)
    return group, long, symbol or latex_escape(coefficient), f"{level} {coefficient}"


def _rounded(x: float, digits: int) -> tuple[bool, str]:
    """(negative, digits of |x|) as printed: -0.0004 prints 0.000, not -0.000."""
    text = f"{abs(float(x)):.{digits}f}"
    return float(x) < 0 and float(text) != 0, text


_defined = conclusions.defined_value


def latex_number(x, digits: int = PAPER_DIGITS, *, pad: bool = False) -> str:
    """``x`` with ``digits`` decimals and a true minus (``$-$0.123``); ``--`` if undefined.
    ``pad``: a non-negative number gets ``\\phantom{$-$}``, to align with negative ones."""
    if not _defined(x):
        return "--"
    negative, text = _rounded(x, digits)
    return ("$-$" if negative else (r"\phantom{$-$}" if pad else "")) + text


def plain_number(x, digits: int = PAPER_DIGITS) -> str:
    """``x`` with ``digits`` decimals (``-0.123``); ``undefined`` if undefined
    (:func:`metaeval.present.plain.number_text`)."""
    from metaeval.present.plain import number_text

    return number_text(x, digits)


def latex_bold(number: str) -> str:
    """A LaTeX number in bold that keeps its decimal point where the regular one has it (bold
    digits are wider in Computer Modern): the decimals overprint their regular width."""
    head, dot, tail = number.rpartition(".")
    if not dot:
        return rf"\textbf{{{number}}}"
    return rf"\textbf{{{head}.}}\rlap{{\textbf{{{tail}}}}}\phantom{{{tail}}}"



# --- a ranking of metrics (correlations, their CIs and clusters) ----------------------------------------
def sort_ranked(frame: pd.DataFrame, keys: Sequence[str] = ("level", "coefficient"), value: str = "correlation",
                name: str = "metric") -> pd.DataFrame:
    """``frame``'s rows grouped by setting (``keys``, in order of first appearance), in each by
    ``value`` descending, undefined last; ties keep their order."""
    if frame.empty:
        return frame
    setting = list(zip(*(frame[k] for k in keys))) if keys else [()] * len(frame)
    first = {s: i for i, s in reversed(list(enumerate(setting)))}
    order = sorted(range(len(frame)), key=lambda i: (first[setting[i]], not _defined(frame[value].iloc[i]),
                                                     -float(frame[value].iloc[i]) if _defined(frame[value].iloc[i])
                                                     else 0.0, i))
    return frame.iloc[order].reset_index(drop=True)


def bold_ranked(frame: pd.DataFrame, keys: Sequence[str] = ("level", "coefficient"), value: str = "correlation",
                cluster: str = "cluster", unresolved: Sequence[tuple] = ()) -> pd.Series:
    """Which rows a paper shows in bold: :func:`metaeval.analyses.conclusions.bold_cells`."""
    return conclusions.bold_cells(frame, keys, value, cluster, unresolved)


def unresolved_settings(frame: pd.DataFrame, keys: Sequence[str] = ("level", "coefficient")) -> dict[tuple, str]:
    """setting -> the line saying why its tests cannot resolve, from rows of status
    ``unresolvable`` (winners, evaluate): their ``cluster_note``, else their conventions'
    ``unresolvable`` lines (:func:`metaeval.analyses.stored_tests.recorded_unresolvable`); empty for
    other rows."""
    from metaeval.analyses.stored_tests import recorded_unresolvable

    out: dict[tuple, str] = {}
    if "status" not in frame:
        return out
    for _, r in frame[frame["status"] == "unresolvable"].iterrows():
        setting = tuple(r[k] for k in keys)
        line = r.get("cluster_note")
        if not isinstance(line, str) or not line:
            line = "; ".join(recorded_unresolvable([r.get("conventions")])) or "the tests cannot resolve at this k"
        out.setdefault(setting, line)
    return out


def _clustered(frame: pd.DataFrame, keys, cluster: str = "cluster") -> dict:
    if cluster not in frame:
        return {}
    return {s: rows[cluster].map(_defined).any() for s, rows in frame.groupby(list(keys), sort=False)}


def bold_sentence(clustered: Mapping, marker: str = "Bold", what: str = "correlation") -> str:
    """What is in bold (``marker``): the top cluster, or the best value where no clusters."""
    values = list(clustered.values())
    if values and all(values):
        return f"{marker}: the top significance cluster (cluster 1) of each column."
    if any(values):
        return (f"{marker}: the top significance cluster (cluster 1) where clusters are given, elsewhere the "
                f"highest {what}.")
    return f"{marker}: the highest {what} of each column (no significance clusters)."


class Ranking:
    """Metrics' correlations per setting, ready for a paper: rows sorted by the first setting's
    correlation, bold cells, the human ceiling per setting.

    ``frame``: one row per metric and setting with ``metric``, the ``keys`` columns (default
    level, coefficient), ``correlation``; optional ``lower``, ``upper`` (a CI), ``cluster`` (1 =
    top), ``human_ceiling`` (and ``_lower``, ``_upper``). ``headers``: setting -> (group, long
    label, short label, plain name) (default :func:`setting_header`). ``bold``: False for none,
    or the settings whose column has a bold cell (the others have no better direction;
    ``unbolded``: the sentence the caption says of them). ``keep_ci``: the automatic layout never
    drops the CIs (a table of CIs); a number: not while the long layout has at most that many rows. ``value_name``: what the numbers are (``correlation``; '' when
    the plain setting names say it, e.g. ``macro ROC-AUC``), ``value_header`` the long layout's
    column header. ``sort_by``: the setting whose values order the rows (default the first).
    ``unresolved``: setting -> the "cannot resolve" line of its tests
    (:func:`metaeval.analyses.conclusions.cannot_resolve`): no bold there, and the caption says why
    (default: :func:`unresolved_settings` of the rows).
    """

    def __init__(self, frame: pd.DataFrame, *, keys: Sequence[str] = ("level", "coefficient"),
                 headers: Mapping | None = None, bold: bool = True, digits: int = PAPER_DIGITS,
                 confidence: float = 0.95, ceiling: bool = True, keep_ci: bool = False, row_header: str = "Metric",
                 rows_name: str = "Metrics", value_name: str = "correlation", value_header: str = "Corr.",
                 sort_by: tuple | None = None, unbolded: str | None = None,
                 unresolved: Mapping[tuple, str] | None = None):
        need = {"metric", "correlation", *keys}
        if missing := need - set(frame.columns):
            raise ValueError(f"a ranking needs columns {sorted(need)}; missing {sorted(missing)}")
        frame = frame.reset_index(drop=True)
        self.keys, self.digits, self.confidence, self.keep_ci = tuple(keys), digits, confidence, keep_ci
        self.row_header, self.rows_name = row_header, rows_name
        self.value_name, self.value_header, self.unbolded = value_name, value_header, unbolded
        self.settings = list(dict.fromkeys(zip(*(frame[k] for k in keys))))
        self.headers = {s: (headers[s] if headers else setting_header(*s)) for s in self.settings}
        self.has_ci = {"lower", "upper"} <= set(frame.columns) and bool(frame["lower"].map(_defined).any())
        self.clustered = {s: bool(v) for s, v in _clustered(frame, keys).items()}
        self.clustered = {s: self.clustered.get(s, False) for s in self.settings}
        if unresolved is None:
            unresolved = unresolved_settings(frame, keys)
        self.unresolved = {tuple(s): line for s, line in unresolved.items()}
        self.bolded = [s for s in ([s for s in self.settings if s in set(map(tuple, bold))] if not isinstance(bold, bool)
                                   else list(self.settings) if bold else []) if s not in self.unresolved]
        bold_mask = (bold_ranked(frame, keys, unresolved=list(self.unresolved)) if self.bolded
                     else pd.Series(False, index=frame.index))
        if not isinstance(bold, bool) or self.unresolved:
            bold_mask &= pd.Series([tuple(x) in self.bolded for x in zip(*(frame[k] for k in keys))], index=frame.index)
        self.bold_on = bool(self.bolded)
        self.cells, self.bold = {}, set()
        for i, r in enumerate(frame.itertuples(index=False)):
            s = tuple(getattr(r, k) for k in keys)
            self.cells[(r.metric, s)] = r
            if bold_mask.iloc[i]:
                self.bold.add((r.metric, s))
        ranked = sort_ranked(frame, keys)
        self.order = {s: list(dict.fromkeys(ranked.loc[[tuple(x) == s for x in zip(*(ranked[k] for k in keys))],
                                                       "metric"])) for s in self.settings}
        every = list(dict.fromkeys(frame["metric"]))
        self.sort_by = tuple(sort_by) if sort_by is not None else (self.settings[0] if self.settings else None)
        if self.sort_by is not None and self.sort_by not in self.order:
            raise ValueError(f"sort_by {self.sort_by!r} is not a setting of the ranking")
        first = self.order[self.sort_by] if self.settings else []
        self.metrics = first + [m for m in every if m not in first]
        self.ceiling = {}
        if ceiling and "human_ceiling" in frame:
            for s in self.settings:
                rows = frame[[tuple(x) == s for x in zip(*(frame[k] for k in keys))]]
                r = rows.iloc[0]
                if _defined(r["human_ceiling"]):
                    self.ceiling[s] = (r["human_ceiling"], r.get("human_ceiling_lower"), r.get("human_ceiling_upper"))
        self.undefined = any(not _defined(r.correlation) for r in self.cells.values())

    # the numbers
    def _value(self, m, s):
        r = self.cells.get((m, s))
        return None if r is None else r.correlation

    def _ci(self, m, s):
        r = self.cells.get((m, s))
        if r is None or not self.has_ci or not _defined(r.correlation):
            return None
        lo, hi = getattr(r, "lower", None), getattr(r, "upper", None)
        return (lo, hi) if _defined(lo) and _defined(hi) else None

    def _cluster(self, m, s) -> str:
        r = self.cells.get((m, s))
        c = None if r is None else getattr(r, "cluster", None)
        return str(int(c)) if _defined(c) and _defined(r.correlation) else ""

    def _pads(self, settings) -> tuple[bool, bool]:
        """Whether some lower / upper bound printed in these settings' CI column is negative."""
        bounds = [self._ci(m, s) for s in settings for m in self.metrics]
        bounds += [(c[1], c[2]) for s in settings if (c := self.ceiling.get(s)) and _defined(c[1]) and _defined(c[2])]
        bounds = [b for b in bounds if b is not None]
        return (any(_rounded(lo, self.digits)[0] for lo, _ in bounds),
                any(_rounded(hi, self.digits)[0] for _, hi in bounds))

    def latex_value(self, m, s) -> str:
        text = latex_number(self._value(m, s), self.digits)
        return latex_bold(text) if (m, s) in self.bold else text

    def latex_ci(self, bounds, pads) -> str:
        if bounds is None or not (_defined(bounds[0]) and _defined(bounds[1])):
            return ""
        return (f"[{latex_number(bounds[0], self.digits, pad=pads[0])}, "
                f"{latex_number(bounds[1], self.digits, pad=pads[1])}]")

    def ci_header(self) -> str:
        return f"{100 * self.confidence:g}\\% CI"

    # the layouts
    def wide(self) -> Tabular:
        """One row per metric; per setting its cluster (where clusters are given), correlation and CI."""
        spec, groups, sub = "l", [], []
        for s in self.settings:
            n = 1 + self.clustered[s] + self.has_ci
            spec += "r" * n
            group, long, _, _ = self.headers[s]
            groups.append((group, n))
            sub += (["cl."] if self.clustered[s] else []) + [long] + ([self.ci_header()] if self.has_ci else [])
        tab = Tabular(spec)
        header_rows(tab, [self.row_header], merge_groups(groups), sub)
        pads = {s: self._pads([s]) for s in self.settings}
        for m in self.metrics:
            row = [latex_escape(m)]
            for s in self.settings:
                row += ([self._cluster(m, s)] if self.clustered[s] else []) + [self.latex_value(m, s)]
                row += [self.latex_ci(self._ci(m, s), pads[s])] if self.has_ci else []
            tab.add(row)
        self._ceiling_row(tab, compact=False, pads=pads)
        return tab

    def compact(self) -> Tabular:
        """One row per metric; per setting its correlation only (bold: the top cluster), short headers."""
        tab = Tabular("l" + "r" * len(self.settings), COMPACT_TABCOLSEP_PT)
        header_rows(tab, [self.row_header], merge_groups([(self.headers[s][0], 1) for s in self.settings]),
                 [self.headers[s][2] for s in self.settings])
        for m in self.metrics:
            tab.add([latex_escape(m), *(self.latex_value(m, s) for s in self.settings)])
        self._ceiling_row(tab, compact=True, pads={})
        return tab

    def long(self) -> Tabular:
        """One row per metric and setting: a block per setting, sorted by its correlation."""
        clustered = any(self.clustered.values())
        n = 2 + clustered + self.has_ci
        tab = Tabular("l" + "r" * (n - 1))
        tab.add([self.row_header, *(["cl."] if clustered else []), self.value_header, *([self.ci_header()] if self.has_ci else [])])
        pads = self._pads(self.settings)
        for i, s in enumerate(self.settings):
            tab.rule()
            group, long, _, _ = self.headers[s]
            tab.add([(rf"\emph{{{group}, {long}}}" if group else rf"\emph{{{long}}}", n, "l")])
            for m in self.order[s] + [m for m in self.metrics if m not in self.order[s] and (m, s) in self.cells]:
                tab.add([latex_escape(m), *([self._cluster(m, s)] if clustered else []), self.latex_value(m, s),
                         *([self.latex_ci(self._ci(m, s), pads)] if self.has_ci else [])])
            if (c := self.ceiling.get(s)) is not None:
                tab.add([r"\emph{Human ceiling}", *([""] if clustered else []), latex_number(c[0], self.digits),
                         *([self.latex_ci(c[1:], pads)] if self.has_ci else [])])
        return tab

    def _ceiling_row(self, tab: Tabular, *, compact: bool, pads) -> None:
        if not self.ceiling:
            return
        tab.rule()
        row = [r"\emph{Human ceiling}"]
        for s in self.settings:
            c = self.ceiling.get(s)
            if not compact and self.clustered[s]:
                row.append("")
            row.append("" if c is None else latex_number(c[0], self.digits))
            if not compact and self.has_ci:
                row.append("" if c is None else self.latex_ci(c[1:], pads[s]))
        tab.add(row)

    def tabulars(self) -> dict[str, Tabular]:
        return {"wide": self.wide(), "compact": self.compact(), "long": self.long()}

    def latex_layout(self, layout: str = "auto") -> tuple[str, str]:
        """(layout, environment) :meth:`latex` uses; with ``keep_ci`` auto never drops the CIs
        (compact only when asked for), or, when ``keep_ci`` is a number of rows, only while the
        long layout has at most that many (the judges': :data:`LONG_MAX_ROWS`)."""
        tabs = self.tabulars()
        if layout == "auto" and self.keep_ci and self.has_ci:
            long_rows = sum(1 for row in tabs["long"].rows if not isinstance(row, str))
            if isinstance(self.keep_ci, bool) or long_rows <= self.keep_ci:
                tabs.pop("compact")
        return choose_layout(tabs, layout)

    # captions, markdown and text
    def notes(self, layout: str, marker: str = "Bold", latex: bool = False) -> str:
        """The sentences a caption adds: order, bold, undefined, omitted CIs, ceiling row."""
        out = []
        value = self.value_name or "value"
        if self.settings:
            first = " ".join(filter(None, (self.headers[self.sort_by][3], self.value_name)))
            out.append(f"{self.rows_name} sorted by their {first} (descending)"
                       + (", undefined last" if self.undefined else "") + "." if layout != "long" else
                       f"{self.rows_name} sorted by {value} in each block (descending).")
        if self.bold_on:
            partial = len(self.bolded) < len(self.settings)
            if partial and self.unbolded:
                out.append(self.unbolded)
            out.append(bold_sentence({s: self.clustered[s] for s in self.bolded},
                                     f"{marker} (the other columns)" if partial else marker, value))
        for line in dict.fromkeys(self.unresolved.values()):
            names = ", ".join(self.headers[s][3] for s, other in self.unresolved.items() if other == line)
            out.append(f"No clusters and no bold in {names}: {line}.")
        if self.undefined:
            what = "correlation (e.g. a constant metric)" if self.value_name == "correlation" else "value"
            out.append(f"\u2013: undefined {what}, never ranked." if latex else
                       f"undefined: the {what} is undefined, never ranked." if self.value_name != "correlation" else
                       "undefined: the correlation is undefined (e.g. a constant metric), never ranked.")
        if layout == "compact" and self.has_ci:
            out.append("Confidence intervals: in the wide and long layouts.")
        if self.ceiling:
            out.append("Human ceiling: leave-one-annotator-out correlation (metaeval annotators).")
        return " ".join(out)

    def latex(self, caption: str | None, layout: str = "auto") -> str:
        """The table (``caption``: plain text, escaped here, followed by :meth:`notes`)."""
        tabs = self.tabulars()
        layout, env = self.latex_layout(layout)
        if caption is None:
            return float_env(tabs[layout], None, env=env)
        text, comment = latex_caption(caption, self.notes(layout, latex=True))
        return float_env(tabs[layout], text, env=env, comment=comment)

    def frame(self, marker: str = "**") -> pd.DataFrame:
        """The wide layout as a DataFrame of strings (markdown and text): metric, and per setting
        its cluster (where given) and ``correlation [lower, upper]``; bold cells between
        ``marker`` (markdown ``**``; text a trailing ``*``); the human ceiling last."""
        rows = []
        for m in [*self.metrics, *(["(human ceiling)"] if self.ceiling else [])]:
            row = {"metric": m}
            for s in self.settings:
                name = self.headers[s][3]
                if m == "(human ceiling)":
                    c = self.ceiling.get(s)
                    value, ci, cl = (None, None, "") if c is None else (c[0], (c[1], c[2]), "")
                    bold = False
                else:
                    value, ci, cl, bold = self._value(m, s), self._ci(m, s), self._cluster(m, s), (m, s) in self.bold
                if self.clustered[s]:
                    row[f"cl. ({name})"] = cl
                text = plain_number(value, self.digits) if (m, s) in self.cells or m == "(human ceiling)" else ""
                if m == "(human ceiling)" and value is None:
                    text = ""
                if bold:
                    text = f"**{text}**" if marker == "**" else f"{text}{marker}"
                if ci is not None and _defined(ci[0]) and _defined(ci[1]):
                    text += f" [{plain_number(ci[0], self.digits)}, {plain_number(ci[1], self.digits)}]"
                row[name] = text
            rows.append(row)
        return pd.DataFrame(rows)

    def markdown(self, caption: str | None) -> str:
        shown = self.frame("**")
        head = markdown_caption(caption, self.notes("wide"))
        return f"{head}{to_markdown(shown, align=['---'] + ['---:'] * (shown.shape[1] - 1))}"

    def text(self, caption: str | None = None) -> str:
        """The table in text, then ``caption`` (at most three lines: :func:`caption_text`) or
        the notes, fitted to the display width."""
        from metaeval.present.plain import wrap
        from metaeval.present.tables import caption_text

        notes = self.notes("wide", marker="*")
        tail = caption_text(caption, notes) if caption else wrap(notes.strip())
        return render(self.frame("*"), "text") + tail + "\n"


def ranked_latex(frame: pd.DataFrame, *, caption: str | None, confidence: float = 0.95, digits: int = PAPER_DIGITS,
                 layout: str = "auto") -> str:
    """A paper's table of correlations with their CIs and significance clusters (see
    :class:`Ranking`): ``caption`` (plain text) is followed by what the table does (order,
    bold, undefined, ceiling). WMT metrics tables (Bojar et al. 2016; mt-metrics-eval) show
    clusters the same way: metrics in one cluster are not separated by significance. The
    automatic layout keeps the CIs and clusters (wide in a column or across the page, else long:
    correlations without their intervals only when ``layout="compact"`` asks for them)."""
    return Ranking(frame, confidence=confidence, digits=digits, keep_ci=True).latex(caption, layout)


# --- tests between metrics ----------------------------------------------------------------------------
def _p(r, column: str, digits: int, latex: bool) -> str:
    """A row's p-value (``p_value`` or ``p_adjusted``) at its floor (``p_floor`` /
    ``p_adjusted_floor`` columns, from :func:`metaeval.analyses.conclusions.p_floors`; 0 if absent),
    beside the row's ``alpha`` (default 0.05)."""
    floor = getattr(r, "p_floor" if column == "p_value" else "p_adjusted_floor", 0.0)
    alpha = getattr(r, "alpha", conclusions.DEFAULT_ALPHA)
    return conclusions.p_text(getattr(r, column), floor if _defined(floor) else 0.0, digits, latex=latex,
                              alpha=alpha if _defined(alpha) else conclusions.DEFAULT_ALPHA)


def _floor_note(frame: pd.DataFrame) -> str:
    return (" A p-value below its test's resolution prints as <1/k (a p of count/k = 0 says only p < 1/k; "
            "corrected: < m/k)." if "p_floor" in frame and (frame["p_floor"].fillna(0) > 0).any() else "")


def sort_tests(frame: pd.DataFrame) -> pd.DataFrame:
    """Tests grouped by level and coefficient, in each by delta descending."""
    return sort_ranked(frame, ("level", "coefficient"), value="delta")


def tests_latex(frame: pd.DataFrame, caption: str | None, *, alpha: float = 0.05, layout: str = "auto",
                digits: int = PAPER_DIGITS, value: str = "corr") -> str:
    """``metaeval compare`` rows (metric_a, metric_b, level, coefficient, delta, p_value,
    p_adjusted, significant) as a paper's table: long, a block per level and coefficient with
    each ordered pair's delta, p and corrected p (bold: significant), by delta descending; wide,
    one row per pair and per setting delta and corrected p; compact, the corrected p only."""
    frame = sort_tests(frame.reset_index(drop=True))
    settings = list(dict.fromkeys(zip(frame["level"], frame["coefficient"])))
    pairs = list(dict.fromkeys(zip(frame["metric_a"], frame["metric_b"])))
    cell = {(r.metric_a, r.metric_b, r.level, r.coefficient): r for r in frame.itertuples(index=False)}

    def p_adj(r) -> str:
        text = _p(r, "p_adjusted", digits, True)
        return latex_bold(text) if bool(r.significant) and _defined(r.p_adjusted) else text

    def delta(r) -> str:
        return latex_number(r.delta, digits)

    long = Tabular("llrrr")
    long.add(["Metric A", "Metric B", r"$\Delta$", r"$p$", r"$p$ adj."])
    for s in settings:
        long.rule()
        group, name, _, _ = setting_header(*s)
        long.add([(rf"\emph{{{group}, {name}}}", 5, "l")])
        for (a, b) in pairs:
            if (r := cell.get((a, b, *s))) is not None:
                long.add([latex_escape(a), latex_escape(b), delta(r), _p(r, "p_value", digits, True), p_adj(r)])
    tabs = {"long": long}
    for name, per in (("wide", 2), ("compact", 1)):
        tab = Tabular("ll" + "r" * per * len(settings), TABCOLSEP_PT if name == "wide" else COMPACT_TABCOLSEP_PT)
        groups = merge_groups([(setting_header(*s)[0], per) for s in settings])
        sub = []
        for s in settings:
            sub += ([rf"$\Delta$ {setting_header(*s)[2]}"] if per == 2 else []) + [rf"$p$ adj. {setting_header(*s)[2]}"]
        header_rows(tab, ["Metric A", "Metric B"], groups, sub)
        for (a, b) in pairs:
            row = [latex_escape(a), latex_escape(b)]
            for s in settings:
                r = cell.get((a, b, *s))
                row += ([("" if r is None else delta(r))] if per == 2 else []) + ["" if r is None else p_adj(r)]
            tab.add(row)
        tabs[name] = tab
    chosen, env = choose_layout(tabs, layout)
    notes = (f"Pairs sorted by delta = {value}(A) - {value}(B) (descending{' in each block' if chosen == 'long' else ''}). "
             f"Bold: significant (corrected p <= {alpha:g}).{_floor_note(frame)}")
    if caption is None:
        return float_env(tabs[chosen], None, env=env)
    text, comment = latex_caption(caption, notes)
    return float_env(tabs[chosen], text, env=env, comment=comment)


def tests_markdown(frame: pd.DataFrame, caption: str | None, *, alpha: float = 0.05, digits: int = PAPER_DIGITS,
                   value: str = "corr") -> str:
    """The rows of :func:`tests_latex`'s long layout as a markdown table, in its order and bold."""
    frame = sort_tests(frame.reset_index(drop=True))
    shown = pd.DataFrame({
        "metric_a": frame["metric_a"], "metric_b": frame["metric_b"], "level": frame["level"],
        "coefficient": frame["coefficient"], "delta": [plain_number(d, digits) for d in frame["delta"]],
        "p_value": [_p(r, "p_value", digits, False) for r in frame.itertuples(index=False)],
        "p_adjusted": [f"**{_p(r, 'p_adjusted', digits, False)}**" if bool(r.significant) and _defined(r.p_adjusted)
                       else _p(r, "p_adjusted", digits, False) for r in frame.itertuples(index=False)],
        "significant": frame["significant"]})
    notes = (f"Rows sorted by delta = {value}(a) - {value}(b) within each level and coefficient (descending). "
             f"Bold: significant (corrected p <= {alpha:g}).{_floor_note(frame)}")
    head = markdown_caption(caption, notes)
    return f"{head}{to_markdown(shown, align=['---', '---', '---', '---', '---:', '---:', '---:', '---'])}"
