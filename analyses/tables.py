"""Result tables as text: one DataFrame rendered in each output format of the commands.

Pure functions, no database inside: :func:`render` turns a DataFrame into

- ``text``: an aligned table (pandas' ``to_string``), for reading in a terminal;
- ``json``: a JSON array with one object per row; values typed (numbers, booleans, strings,
  ``null`` for NaN / NULL / NaT, ISO 8601 for timestamps), and the JSON-holding columns
  (:data:`JSON_COLUMNS`: ``conventions``, ``parameters``, ...) parsed into nested objects, not
  left as JSON strings;
- ``csv``: RFC 4180 CSV with a header (empty field = missing);
- ``markdown``: a GitHub pipe table (``|`` in a cell escaped);
- ``latex``: a ``booktabs`` ``tabular`` (``\\toprule``, ``\\midrule``, ``\\bottomrule``), special
  characters escaped.

:func:`ranked_latex` renders an evaluation (each metric's correlation with its CI and its
significance cluster per level and coefficient) as the ``table`` a paper shows.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval.analyses.plain import JSON_COLUMNS  # columns of JSON text: nested objects in JSON output

FORMATS: tuple[str, ...] = ("text", "json", "csv", "markdown", "latex")
#: Older names of a format, still accepted.
ALIASES: Mapping[str, str] = {"table": "text"}
#: Significant digits of floats in the text-like formats (markdown, latex).
DIGITS = 4


def normalise(fmt: str) -> str:
    """The format named ``fmt`` (an alias such as ``table`` gives ``text``); ValueError if unknown."""
    fmt = ALIASES.get(fmt, fmt)
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    return fmt


def render(frame: pd.DataFrame, fmt: str, *, caption: str | None = None) -> str:
    """``frame`` in format ``fmt`` (see the module docstring), ending with a newline.

    ``caption``: a LaTeX caption (the tabular is then wrapped in a ``table`` environment);
    in markdown, a line above the table; ignored by text, json and csv.
    """
    fmt = normalise(fmt)
    if fmt == "json":
        return to_json(frame)
    if fmt == "csv":
        return to_csv(frame)
    if fmt == "markdown":
        return (f"{caption}\n\n" if caption else "") + to_markdown(frame)
    if fmt == "latex":
        return to_latex(frame, caption=caption)
    if frame.empty:
        return "(no rows)\n"
    with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
        return frame.to_string(index=False) + "\n"


def render_blocks(blocks: Sequence[tuple[str, pd.DataFrame]], fmt: str) -> str:
    """Several named tables in one output. One block: :func:`render` of it. Several: text,
    markdown and latex give each table under its name; json one object ``{name: [rows]}``;
    csv each table after a ``# name`` line, separated by a blank line."""
    fmt = normalise(fmt)
    if len(blocks) == 1:
        return render(blocks[0][1], fmt)
    if fmt == "json":
        return json.dumps({name: records(frame) for name, frame in blocks}, indent=1, allow_nan=False) + "\n"
    if fmt == "csv":
        return "\n".join(f"# {name}\n{to_csv(frame)}" for name, frame in blocks)
    if fmt == "markdown":
        return "\n".join(f"### {name}\n\n{to_markdown(frame)}" for name, frame in blocks)
    if fmt == "latex":
        return "\n".join(to_latex(frame, caption=name) for name, frame in blocks)
    return "\n".join(f"{name}:\n{render(frame, fmt)}" for name, frame in blocks)


# --- JSON -------------------------------------------------------------------------------------------
def records(frame: pd.DataFrame) -> list[dict]:
    """One dict per row with plain Python values: NaN/NULL/NaT -> None, numpy scalars -> int,
    float or bool, timestamps -> ISO 8601 strings, JSON text in :data:`JSON_COLUMNS` -> parsed."""
    out = []
    columns = list(frame.columns)
    for row in frame.itertuples(index=False, name=None):
        out.append({str(c): _json_value(v, c in JSON_COLUMNS) for c, v in zip(columns, row)})
    return out


def to_json(frame: pd.DataFrame) -> str:
    """A JSON array of :func:`records` (strict JSON: no NaN or Infinity tokens)."""
    return json.dumps(records(frame), indent=1, allow_nan=False) + "\n"


def _json_value(v, parse: bool):
    if isinstance(v, (list, tuple)):
        return [_json_value(x, False) for x in v]
    if isinstance(v, np.ndarray):
        return [_json_value(x, False) for x in v.tolist()]
    if isinstance(v, dict):
        return {str(k): _json_value(x, False) for k, x in v.items()}
    if v is None or v is pd.NaT or v is pd.NA:
        return None
    if isinstance(v, (np.bool_, bool)):
        return bool(v)
    if isinstance(v, (np.integer, int)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        v = float(v)
        return None if math.isnan(v) or math.isinf(v) else v
    if isinstance(v, (pd.Timestamp, _dt.datetime, _dt.date)):
        return v.isoformat()
    if isinstance(v, (pd.Timedelta, _dt.timedelta)):
        return str(v)
    if parse and isinstance(v, str):
        try:
            return json.loads(v)
        except ValueError:
            return v
    return v if isinstance(v, str) else str(v)


def to_csv(frame: pd.DataFrame) -> str:
    """CSV with a header; a list or dict cell as its JSON text (not Python's repr)."""
    nested = [c for c in frame.columns if frame[c].dtype == object
              and frame[c].map(lambda v: isinstance(v, (list, dict, tuple))).any()]
    if nested:
        frame = frame.assign(**{c: frame[c].map(lambda v: json.dumps(_json_value(v, False))
                                                if isinstance(v, (list, dict, tuple)) else v) for c in nested})
    return frame.to_csv(index=False)


# --- markdown and LaTeX --------------------------------------------------------------------------------
def cell_text(v, digits: int = DIGITS) -> str:
    """A cell as text: empty for missing, floats to ``digits`` decimals (``digits`` significant
    digits when 0 < |x| < 10^-digits, so a small p-value does not show as 0)."""
    v = _json_value(v, False)
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if v != 0 and abs(v) < 10 ** -digits:
            return f"{v:.{digits}g}"
        return f"{v:.{digits}f}"
    if isinstance(v, (list, dict)):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


def to_markdown(frame: pd.DataFrame, digits: int = DIGITS, *, align: Sequence[str] | None = None) -> str:
    """A GitHub pipe table; numeric columns right-aligned (or ``align``: ``---:`` or ``---`` per column)."""
    esc = lambda s: s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")  # noqa: E731
    header = "| " + " | ".join(esc(str(c)) for c in frame.columns) + " |"
    align = "|" + "|".join(align or ["---:" if _numeric(frame[c]) else "---" for c in frame.columns]) + "|"
    rows = ["| " + " | ".join(esc(cell_text(v, digits)) for v in row) + " |"
            for row in frame.itertuples(index=False, name=None)]
    return "\n".join([header, align, *rows]) + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "|": r"\textbar\allowbreak{}", "<": r"\textless{}", ">": r"\textgreater{}"}   # OT1 prints | < > otherwise
_LATEX_RE = re.compile("|".join(re.escape(c) for c in _LATEX_SPECIAL))


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (``rouge_2 & co`` -> ``rouge\\_2 \\& co``), and
    ``--`` kept as two hyphens (``-{}-``, not an en dash: ``--all-pairs`` in a caption)."""
    return re.sub(r"-(?=-)", "-{}", _LATEX_RE.sub(lambda m: _LATEX_SPECIAL[m.group()], str(text)))


def to_latex(frame: pd.DataFrame, *, caption: str | None = None, digits: int = DIGITS) -> str:
    """A booktabs ``tabular`` of ``frame`` (numeric columns right-aligned, negative numbers with a
    true minus), inside a ``table`` (or, when wider than an ACL column, ``table*``) environment
    with ``caption`` when one is given."""
    spec = "".join("r" if _numeric(frame[c]) else "l" for c in frame.columns) or "l"
    tab = Tabular(spec)
    tab.add([latex_escape(str(c)) for c in frame.columns])
    tab.rule()
    for row in frame.itertuples(index=False, name=None):
        tab.add([_latex_cell(v, digits) for v in row])
    return float_env(tab, None if caption is None else latex_escape(caption))


def _latex_cell(v, digits: int) -> str:
    text = latex_escape(cell_text(v, digits))
    if isinstance(_json_value(v, False), (int, float)) and not isinstance(v, (bool, np.bool_)) and text.startswith("-"):
        return "$-$" + text[1:]
    return text


def _numeric(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


# --- tables for papers ----------------------------------------------------------------------------------
# A paper's table (LaTeX) and the markdown / text that agree with it: metrics sorted by correlation,
# numbers with a true minus and aligned on the decimal point, the top significance cluster (or, where
# no tests were run, the best value) in bold, the human ceiling as a row, the conventions in the caption,
# and a layout that fits an ACL-style two-column page.

#: An ACL-style page (acl.sty: \textwidth 16 cm, \columnsep 0.6 cm): \columnwidth 7.7 cm and \textwidth, in pt.
COLUMN_WIDTH_PT = 219.0
TEXT_WIDTH_PT = 455.0
#: Estimated printed width (pt) of a character in a table set in ``\small``, measured on Computer
#: Modern at 10 pt (the \small of an 11 pt document): 5 pt for digits and lower-case letters (0.5 em;
#: lower case 4.9 pt on average), 3.9 pt for punctuation, brackets and spaces, 7.2 pt for capitals,
#: 7.8 pt for a true minus. ACL's \small is 10 pt Times, narrower (lower case 4.4 pt on average), and a
#: 10 pt article's \small is 9 pt: the estimate is an upper bound of both, so a table estimated to fit does.
CHAR_PT, NARROW_PT, CAPITAL_PT, MINUS_PT = 5.0, 3.9, 7.2, 7.8
_NARROW = frozenset(".,;:!'|[]() ")
#: ``\tabcolsep`` (pt) of the wide and long layouts (LaTeX's default) and of the compact one.
TABCOLSEP_PT, COMPACT_TABCOLSEP_PT = 6.0, 4.0
#: ``auto``: the first that fits of wide in a column, compact in a column, wide across the page
#: (``table*``), compact across the page, long (see :func:`choose_layout`).
LAYOUTS = ("auto", "wide", "compact", "long")
#: Decimals of the correlations in the paper tables.
PAPER_DIGITS = 3

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


def _defined(x) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x)) and not pd.isna(x)


def latex_number(x, digits: int = PAPER_DIGITS, *, pad: bool = False) -> str:
    """``x`` with ``digits`` decimals and a true minus (``$-$0.123``); ``--`` if undefined.
    ``pad``: a non-negative number gets ``\\phantom{$-$}``, to align with negative ones."""
    if not _defined(x):
        return "--"
    negative, text = _rounded(x, digits)
    return ("$-$" if negative else (r"\phantom{$-$}" if pad else "")) + text


def plain_number(x, digits: int = PAPER_DIGITS) -> str:
    """``x`` with ``digits`` decimals (``-0.123``); ``undefined`` if undefined."""
    if not _defined(x):
        return "undefined"
    negative, text = _rounded(x, digits)
    return ("-" if negative else "") + text


def latex_bold(number: str) -> str:
    """A LaTeX number in bold that keeps its decimal point where the regular one has it (bold
    digits are wider in Computer Modern): the decimals overprint their regular width."""
    head, dot, tail = number.rpartition(".")
    if not dot:
        return rf"\textbf{{{number}}}"
    return rf"\textbf{{{head}.}}\rlap{{\textbf{{{tail}}}}}\phantom{{{tail}}}"


_WIDTH_SYMBOLS = [("$-$", "\x00"), ("-{}", "-"), ("$<$", "<"), (r"\%", "%"), (r"\_", "_"), (r"\&", "&"), (r"\#", "#"),
                  (r"\$", "$"), (r"\{", "{"), (r"\}", "}"), (r"\textbackslash{}", "\\"),
                  (r"\textasciitilde{}", "~"), (r"\textasciicircum{}", "^"), (r"$\tau$", "t"), (r"$\rho$", "p"),
                  (r"$\Delta$", "D"), (r"$p$", "p"), (r"$r$", "r"), ("--", "-")]
_RLAP = re.compile(r"\\rlap\{(?:[^{}]|\{[^{}]*\})*\}")


def latex_width(text: str) -> float:
    """Estimated printed width (pt) of a cell's LaTeX (see :data:`CHAR_PT`)."""
    t = _RLAP.sub("", text)
    for latex, char in _WIDTH_SYMBOLS:
        t = t.replace(latex, char)
    t = re.sub(r"\\[a-zA-Z]+\*?", "", t).replace("{", "").replace("}", "").replace("$", "")
    return sum(MINUS_PT if c == "\x00" else NARROW_PT if c in _NARROW else CAPITAL_PT if c.isupper() else CHAR_PT
               for c in t)


class Tabular:
    """A booktabs tabular being built: ``spec`` (one letter per column) and rows, each a rule line
    (a string) or cells [(latex, span)]; :meth:`width` estimates its printed width."""

    def __init__(self, spec: str, tabcolsep: float = TABCOLSEP_PT):
        self.spec, self.tabcolsep, self.rows = spec, tabcolsep, []

    def add(self, cells) -> None:
        self.rows.append([(c + ("c",))[:3] if isinstance(c, tuple) else (c, 1, "c") for c in cells])

    def rule(self, line: str = r"\midrule") -> None:
        self.rows.append(line)

    def width(self) -> float:
        """Estimated width (pt): each column's widest cell plus 2 \\tabcolsep, widened where a
        spanning header is wider than its columns."""
        widths, spans = [0.0] * len(self.spec), []
        for row in self.rows:
            if isinstance(row, str):
                continue
            at = 0
            for text, span, _ in row:
                w = latex_width(text)
                if span == 1:
                    widths[at] = max(widths[at], w)
                else:
                    spans.append((at, span, w))
                at += span
        for at, span, w in spans:
            have = sum(widths[at:at + span]) + 2 * self.tabcolsep * (span - 1)
            if w > have:
                widths[at + span - 1] += w - have
        return sum(widths) + 2 * self.tabcolsep * len(widths)

    def lines(self) -> list[str]:
        out = [rf"\begin{{tabular}}{{{self.spec}}}", r"\toprule"]
        for row in self.rows:
            if isinstance(row, str):
                out.append(row)
            else:
                out.append(" & ".join(text if span == 1 else rf"\multicolumn{{{span}}}{{{align}}}{{{text}}}"
                                      for text, span, align in row) + r" \\")
        return out + [r"\bottomrule", r"\end{tabular}"]


def float_env(tab: Tabular, caption: str | None, *, env: str | None = None) -> str:
    """``tab`` in a ``table`` (if its estimated width fits \\columnwidth) or ``table*`` float,
    ``\\small``, with ``caption`` (LaTeX, already escaped); a bare tabular without a caption."""
    if caption is None:
        return "\n".join(tab.lines()) + "\n"
    env = env or ("table" if tab.width() <= COLUMN_WIDTH_PT else "table*")
    head = [rf"\begin{{{env}}}[t]", r"\centering", r"\small"]
    if tab.tabcolsep != TABCOLSEP_PT:
        head.append(rf"\setlength{{\tabcolsep}}{{{tab.tabcolsep:g}pt}}")
    return "\n".join([*head, *tab.lines(), rf"\caption{{{caption}}}", rf"\end{{{env}}}"]) + "\n"


def choose_layout(tabs: Mapping[str, Tabular], layout: str = "auto") -> tuple[str, str]:
    """(layout, float environment): the chosen ``layout``, or with ``auto`` the first that fits of
    wide in a column (``table``), compact in a column, wide across the page (``table*``), compact
    across the page, else long (layouts not in ``tabs`` are skipped by auto)."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; choose from {', '.join(LAYOUTS)}")
    if layout != "auto":
        tab = tabs[layout]
        return layout, "table" if tab.width() <= COLUMN_WIDTH_PT else "table*"
    for name, limit, env in (("wide", COLUMN_WIDTH_PT, "table"), ("compact", COLUMN_WIDTH_PT, "table"),
                             ("wide", TEXT_WIDTH_PT, "table*"), ("compact", TEXT_WIDTH_PT, "table*")):
        if name in tabs and tabs[name].width() <= limit:
            return name, env
    return "long", "table" if tabs["long"].width() <= COLUMN_WIDTH_PT else "table*"


def _headers(tab: Tabular, lead: list[str], groups: list[tuple[str, int]], sub: list[str]) -> None:
    """Two header rows: ``groups`` (text, columns) over the columns after ``lead``, with
    cmidrules, then ``sub`` under them (the group row is left out when every group is empty)."""
    if any(text for text, _ in groups):
        tab.add([*([""] * len(lead)), *groups])
        at, rules = len(lead) + 1, []
        for text, span in groups:
            if text:
                rules.append(rf"\cmidrule(lr){{{at}-{at + span - 1}}}")
            at += span
        tab.rule(" ".join(rules))
    tab.add([*lead, *sub])
    tab.rule()


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
                cluster: str = "cluster") -> pd.Series:
    """Which rows a paper shows in bold, per setting (``keys``): the top significance cluster
    (``cluster`` 1) where the setting has clusters, else the highest ``value`` (every tied one);
    never an undefined value."""
    out = pd.Series(False, index=frame.index)
    groups = frame.groupby(list(keys), sort=False, dropna=False) if keys else [((), frame)]
    for _, rows in groups:
        defined = rows[value].map(_defined)
        if not defined.any():
            continue
        if cluster in rows and rows.loc[defined, cluster].map(_defined).any():
            out[rows.index] = defined & (rows[cluster] == 1)
        else:
            best = rows.loc[defined, value].astype(float).max()
            out[rows.index] = defined & (rows[value] == best)
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
    drops the CIs (a table of CIs). ``value_name``: what the numbers are (``correlation``; '' when
    the plain setting names say it, e.g. ``macro ROC-AUC``), ``value_header`` the long layout's
    column header. ``sort_by``: the setting whose values order the rows (default the first).
    """

    def __init__(self, frame: pd.DataFrame, *, keys: Sequence[str] = ("level", "coefficient"),
                 headers: Mapping | None = None, bold: bool = True, digits: int = PAPER_DIGITS,
                 confidence: float = 0.95, ceiling: bool = True, keep_ci: bool = False, row_header: str = "Metric",
                 rows_name: str = "Metrics", value_name: str = "correlation", value_header: str = "Corr.",
                 sort_by: tuple | None = None, unbolded: str | None = None):
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
        self.bolded = ([s for s in self.settings if s in set(map(tuple, bold))] if not isinstance(bold, bool)
                       else list(self.settings) if bold else [])
        bold_mask = bold_ranked(frame, keys) if self.bolded else pd.Series(False, index=frame.index)
        if not isinstance(bold, bool):
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
        _headers(tab, [self.row_header], _merge(groups), sub)
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
        _headers(tab, [self.row_header], _merge([(self.headers[s][0], 1) for s in self.settings]),
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
        (compact only when asked for)."""
        tabs = self.tabulars()
        if layout == "auto" and self.keep_ci and self.has_ci:
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
        text = None if caption is None else latex_escape((caption + " " + self.notes(layout, latex=True)).strip())
        return float_env(tabs[layout], text, env=env)

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
        head = (caption + " " + self.notes("wide")).strip() if caption is not None else self.notes("wide")
        shown = self.frame("**")
        return f"{head}\n\n{to_markdown(shown, align=['---'] + ['---:'] * (shown.shape[1] - 1))}"

    def text(self, caption: str | None = None) -> str:
        body = render(self.frame("*"), "text")
        tail = (caption + " " if caption else "") + self.notes("wide", marker="*")
        return body + tail.strip() + "\n"


def _merge(groups: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Adjacent equal groups as one (text, columns)."""
    out: list[tuple[str, int]] = []
    for text, n in groups:
        if out and out[-1][0] == text:
            out[-1] = (text, out[-1][1] + n)
        else:
            out.append((text, n))
    return out


def ranked_latex(frame: pd.DataFrame, *, caption: str | None, confidence: float = 0.95, digits: int = PAPER_DIGITS,
                 layout: str = "auto") -> str:
    """A paper's table of correlations with their CIs and significance clusters (see
    :class:`Ranking`): ``caption`` (plain text) is followed by what the table does (order,
    bold, undefined, ceiling). WMT metrics tables (Bojar et al. 2016; mt-metrics-eval) show
    clusters the same way: metrics in one cluster are not separated by significance."""
    return Ranking(frame, confidence=confidence, digits=digits).latex(caption, layout)


# --- tests between metrics ----------------------------------------------------------------------------
def p_text(p, digits: int = PAPER_DIGITS, *, latex: bool = True) -> str:
    """A p-value with ``digits`` decimals; below what they show, ``<0.001``; ``--`` if undefined."""
    if not _defined(p):
        return "--"
    if float(p) < 0.5 * 10 ** -digits:
        return ("$<$" if latex else "<") + f"{10 ** -digits:.{digits}f}"
    return f"{float(p):.{digits}f}"


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
        text = p_text(r.p_adjusted, digits)
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
                long.add([latex_escape(a), latex_escape(b), delta(r), p_text(r.p_value, digits), p_adj(r)])
    tabs = {"long": long}
    for name, per in (("wide", 2), ("compact", 1)):
        tab = Tabular("ll" + "r" * per * len(settings), TABCOLSEP_PT if name == "wide" else COMPACT_TABCOLSEP_PT)
        groups = _merge([(setting_header(*s)[0], per) for s in settings])
        sub = []
        for s in settings:
            sub += ([rf"$\Delta$ {setting_header(*s)[2]}"] if per == 2 else []) + [rf"$p$ adj. {setting_header(*s)[2]}"]
        _headers(tab, ["Metric A", "Metric B"], groups, sub)
        for (a, b) in pairs:
            row = [latex_escape(a), latex_escape(b)]
            for s in settings:
                r = cell.get((a, b, *s))
                row += ([("" if r is None else delta(r))] if per == 2 else []) + ["" if r is None else p_adj(r)]
            tab.add(row)
        tabs[name] = tab
    chosen, env = choose_layout(tabs, layout)
    notes = (f"Pairs sorted by delta = {value}(A) - {value}(B) (descending{' in each block' if chosen == 'long' else ''}). "
             f"Bold: significant (corrected p <= {alpha:g}).")
    text = None if caption is None else latex_escape(f"{caption} {notes}")
    return float_env(tabs[chosen], text, env=env)


def tests_markdown(frame: pd.DataFrame, caption: str | None, *, alpha: float = 0.05, digits: int = PAPER_DIGITS,
                   value: str = "corr") -> str:
    """The rows of :func:`tests_latex`'s long layout as a markdown table, in its order and bold."""
    frame = sort_tests(frame.reset_index(drop=True))
    shown = pd.DataFrame({
        "metric_a": frame["metric_a"], "metric_b": frame["metric_b"], "level": frame["level"],
        "coefficient": frame["coefficient"], "delta": [plain_number(d, digits) for d in frame["delta"]],
        "p_value": [p_text(p, digits, latex=False) for p in frame["p_value"]],
        "p_adjusted": [f"**{p_text(p, digits, latex=False)}**" if bool(s) and _defined(p) else p_text(p, digits, latex=False)
                       for p, s in zip(frame["p_adjusted"], frame["significant"])],
        "significant": frame["significant"]})
    notes = (f"Rows sorted by delta = {value}(a) - {value}(b) within each level and coefficient (descending). "
             f"Bold: significant (corrected p <= {alpha:g}).")
    head = f"{caption} {notes}" if caption else notes
    return f"{head}\n\n{to_markdown(shown, align=['---', '---', '---', '---', '---:', '---:', '---:', '---'])}"
