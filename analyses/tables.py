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

The LaTeX page model (:class:`Tabular`, :func:`float_env`, :func:`choose_layout`) is here too;
the tables a paper shows -- a ranking of metrics with CIs and clusters (``Ranking``,
``ranked_latex``) and the tests between them (``tests_latex``, ``tests_markdown``) -- are in
:mod:`metaeval.analyses.ranking_tables` (their names are also reachable from this module), and
what is bold and how a p-value prints is decided by :mod:`metaeval.analyses.conclusions`.
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


def header_rows(tab: Tabular, lead: list[str], groups: list[tuple[str, int]], sub: list[str]) -> None:
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


def merge_groups(groups: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Adjacent equal groups as one (text, columns)."""
    out: list[tuple[str, int]] = []
    for text, n in groups:
        if out and out[-1][0] == text:
            out[-1] = (text, out[-1][1] + n)
        else:
            out.append((text, n))
    return out


#: The paper tables' names, defined in :mod:`metaeval.analyses.ranking_tables`.
_PAPER_NAMES = frozenset({"LEVEL_NAMES", "COEFFICIENT_NAMES", "setting_header", "latex_number", "plain_number",
                          "latex_bold", "sort_ranked", "bold_ranked", "bold_sentence", "Ranking", "ranked_latex",
                          "p_text", "sort_tests", "tests_latex", "tests_markdown"})


def __getattr__(name: str):
    """The paper tables' names (:data:`_PAPER_NAMES`) from :mod:`metaeval.analyses.ranking_tables`."""
    if name in _PAPER_NAMES:
        from metaeval.analyses import ranking_tables

        return getattr(ranking_tables, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

