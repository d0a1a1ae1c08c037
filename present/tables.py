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
:mod:`metaeval.present.ranking_tables` (which imports this module, never the reverse), and
what is bold and how a p-value prints is decided by :mod:`metaeval.analyses.conclusions`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import re
import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval.present import plain
from metaeval.present.plain import JSON_COLUMNS  # columns of JSON text: nested objects in JSON output
from metaeval.present.plain import DISPLAY, resolve_width  # the characters of a line of text

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


def render(frame: pd.DataFrame, fmt: str, *, caption: str | None = None, width=DISPLAY) -> str:
    """``frame`` in format ``fmt`` (see the module docstring), ending with a newline.

    ``caption``: a LaTeX caption (the tabular is then wrapped in a ``table`` environment);
    in markdown, a line above the table; ignored by text, json and csv. ``width``: the most
    characters of a line of text (:func:`metaeval.present.plain.fit`; ``None``: no limit).
    """
    fmt = normalise(fmt)
    if fmt == "json":
        return to_json(frame)
    if fmt == "csv":
        return to_csv(frame)
    if fmt == "markdown":
        return markdown_caption(caption) + to_markdown(frame)
    if fmt == "latex":
        return to_latex(frame, caption=caption)
    return text(frame, width)


def text(frame: pd.DataFrame, width=DISPLAY) -> str:
    """``frame`` as an aligned text table of at most ``width`` characters a line, ending with a
    newline: the one text rendering of every table (:func:`metaeval.present.plain.to_text`; a
    frame's index is printed as leading columns when it is named; a column of several levels, a
    pivot's, is headed by its levels' names joined by spaces)."""
    if any(name is not None for name in frame.index.names):
        frame = frame.reset_index()
    if frame.empty or not len(frame.columns):
        return "(no rows)\n"
    columns = [" ".join(str(p) for p in c if str(p)) if isinstance(c, tuple) else str(c)   # a pivot's levels
               for c in frame.columns]
    kinds = tuple(_kind(frame.iloc[:, i]) for i in range(len(columns)))
    data = list(zip(*(_values(frame.iloc[:, i], k) for i, k in enumerate(kinds))))
    return plain.columns_text(columns, kinds, data, width) + "\n"


def _kind(column: pd.Series) -> str:
    """The :mod:`metaeval.rows` kind that prints ``column`` as its dtype prints."""
    dtype = column.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bool" if dtype == np.bool_ else "Bool"
    if pd.api.types.is_integer_dtype(dtype):
        return "int" if isinstance(dtype, np.dtype) else "Int"
    if pd.api.types.is_float_dtype(dtype):
        return "float"
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "datetimetz"
    return "object"


def _values(column: pd.Series, kind: str) -> list:
    """The column's values as Python values, missing ones None."""
    if kind == "datetimetz":
        return [None if pd.isna(v) else v.to_pydatetime() for v in column]
    out = []
    for v in column.tolist():
        if v is None or v is pd.NA or v is pd.NaT or (isinstance(v, float) and math.isnan(v)):
            out.append(None if kind != "float" else math.nan)
        elif isinstance(v, (list, tuple, dict, np.ndarray)):
            out.append(json.dumps(_json_value(v, False)))
        elif isinstance(v, np.generic):
            out.append(v.item())
        else:
            out.append(v)
    return out


def render_blocks(blocks: Sequence[tuple[str, pd.DataFrame]], fmt: str, *, width=DISPLAY) -> str:
    """Several named tables in one output. One block: :func:`render` of it. Several: text,
    markdown and latex give each table under its name; json one object ``{name: [rows]}``;
    csv each table after a ``# name`` line, separated by a blank line."""
    fmt = normalise(fmt)
    if fmt == "latex":                    # every float captioned (by its table's name) and labelled
        return "\n".join(to_latex(frame, caption=(name or "The rows.").replace(": ", ", "))   # a name is a title
                         for name, frame in blocks)
    if len(blocks) == 1:
        return render(blocks[0][1], fmt, width=width)
    if fmt == "json":
        return json.dumps({name: records(frame) for name, frame in blocks}, indent=1, allow_nan=False) + "\n"
    if fmt == "csv":
        return "\n".join(f"# {name}\n{to_csv(frame)}" for name, frame in blocks)
    if fmt == "markdown":
        return "\n".join(f"### {name}\n\n{to_markdown(frame)}" for name, frame in blocks)
    return "\n".join(f"{name}:\n{render(frame, fmt, width=width)}" for name, frame in blocks)


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


def whole_numbers(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each float column whose every value is a whole number (a count that passed
    through a float: ``261.0``) as nullable integers, so that no format prints it with decimals."""
    cast = {}
    for c in frame.columns:
        column = frame[c]
        if pd.api.types.is_float_dtype(column.dtype):
            finite = column.dropna()
            if len(finite) and np.isfinite(finite).all() and (finite == np.round(finite)).all() \
                    and (finite.abs() < 1e15).all():
                cast[c] = column.astype("Int64")
    return frame.assign(**cast) if cast else frame


def to_markdown(frame: pd.DataFrame, digits: int = DIGITS, *, align: Sequence[str] | None = None) -> str:
    """A GitHub pipe table; numeric columns right-aligned (or ``align``: ``---:`` or ``---`` per column)."""
    frame = whole_numbers(frame)
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


def to_latex(frame: pd.DataFrame, *, caption: str | None = None, digits: int = DIGITS, comment: str = "") -> str:
    """A booktabs ``tabular`` of ``frame`` (numeric columns right-aligned, negative numbers with a
    true minus, each float column with one number of decimals), inside a ``table`` (or, when wider
    than an ACL column, ``table*``) environment with ``caption`` when one is given (``comment``:
    plain text added to the ``%`` lines above it). A table wider than the page is set as
    several tabulars one under the other, each led by the rows' key columns (as text is:
    :func:`metaeval.present.plain.fit`). More rows than :data:`LATEX_ROWS`: a ``%`` line saying so
    (no page holds them; TeX runs out of memory on thousands)."""
    if len(frame) > LATEX_ROWS:
        return f"% {split_caption(caption or 'a table')[0].rstrip('.')}: {len(frame)} rows, more than a page holds: " \
               "not set in LaTeX; every row: --format csv or json\n"
    frame = whole_numbers(frame)
    numeric = [_numeric(frame[c]) for c in frame.columns]
    heads = [latex_escape(str(c)) for c in frame.columns]
    columns = [_latex_column(frame[c], digits) for c in frame.columns]
    widths = [int(max(map(latex_width, [h, *cells])) + 2 * TABCOLSEP_PT) + 1 for h, cells in zip(heads, columns)]
    spec = ["r" if n else "l" for n in numeric]
    if sum(widths) > COLUMN_WIDTH_PT:      # a long text (a note, a path, a hash) set as a paragraph
        for j in (j for j in range(len(heads)) if not numeric[j] and widths[j] > WRAP_PT + 2 * TABCOLSEP_PT):
            spec[j], widths[j] = f"p{{{WRAP_PT:g}pt}}", int(WRAP_PT + 2 * TABCOLSEP_PT) + 1
            columns[j] = [_breakable(c) for c in columns[j]]
    blocks = ([list(range(len(heads)))] if sum(widths) <= TEXT_WIDTH_PT
              else plain.blocks(widths, numeric, int(TEXT_WIDTH_PT)))
    tabs = []
    for block in blocks:
        tab = Tabular("".join(spec[j] for j in block) or "l")
        tab.add([heads[j] for j in block])
        tab.rule()
        for r in range(len(frame)):
            tab.add([columns[j][r] for j in block])
        tabs.append(tab)
    if caption is None:
        return "\n".join(float_env(tab, None) for tab in tabs)
    shown, rest = latex_caption(caption)
    return float_env(tabs, shown, comment=" ".join(x for x in (rest, comment) if x))


def _breakable(cell: str) -> str:
    """A cell's LaTeX with places a line may break: after ``/``, ``_`` and ``,``, and every 16
    characters of a long run of letters and digits (a hash)."""
    cell = re.sub(r"(/|\\_|,)(?=\S)", lambda m: m.group() + r"\allowbreak{}", cell)
    return re.sub(r"[0-9A-Za-z]{16}(?=[0-9A-Za-z]{4})", lambda m: m.group() + r"\allowbreak{}", cell)


def _latex_column(column: pd.Series, digits: int) -> list[str]:
    """A column's LaTeX cells: floats with ``digits`` decimals (all in scientific notation when one
    is too small for them), a true minus."""
    values = [_json_value(v, False) for v in column]
    small = any(isinstance(v, float) and 0 < abs(v) < 10 ** -digits for v in values)
    out = []
    for v in values:
        text = latex_escape((f"{v:.{digits - 1}e}" if small else f"{v:.{digits}f}") if isinstance(v, float)
                            else cell_text(v, digits))
        number = isinstance(v, (int, float)) and not isinstance(v, bool)
        out.append("$-$" + text[1:] if number and text.startswith("-") else text)
    return out


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
#: The most rows of a table of rows set in LaTeX (a float is one page).
LATEX_ROWS = 200
#: The width (pt) of a long text column set as a paragraph (``p{...}``) in a table of rows.
WRAP_PT = 150.0

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


def float_env(tab: Tabular | Sequence[Tabular], caption: str | None, *, env: str | None = None,
              comment: str = "") -> str:
    """``tab`` in a ``table`` (if its estimated width fits \\columnwidth) or ``table*`` float,
    ``\\small``, with ``caption`` (LaTeX, already escaped; see :func:`split_caption` for what a
    caption holds) and a ``\\label{tab:...}`` made of its first words (and a short hash of the
    caption and ``comment``, so that two tables of one paper differ), ``comment`` (plain text:
    the conventions and the signature) in ``%`` lines above it; a bare tabular without a caption.
    Several tabulars (the column blocks of a wide table): one under the other in the float."""
    tabs = [tab] if isinstance(tab, Tabular) else list(tab)
    body = [line for i, t in enumerate(tabs) for line in ([r"\par\medskip"] if i else []) + t.lines()]
    if caption is None:
        return "\n".join(body) + "\n"
    tab = tabs[0]
    env = env or ("table" if max(t.width() for t in tabs) <= COLUMN_WIDTH_PT else "table*")
    head = [rf"\begin{{{env}}}[t]", r"\centering", r"\small"]
    if tab.tabcolsep != TABCOLSEP_PT:
        head.append(rf"\setlength{{\tabcolsep}}{{{tab.tabcolsep:g}pt}}")
    notes = [f"% {line}" for part in re.split(r"(signature \S+)", comment.replace("\n", " ")) if part.strip(" ;.")
             for line in ([part] if part.startswith("signature ") else     # the signature whole, on its own line
                          textwrap.wrap(part.strip(" ;"), 98, break_long_words=False, break_on_hyphens=False))]
    return "\n".join([*notes, *head, *body, rf"\caption{{{caption}}}", rf"\label{{{label(caption, comment)}}}",
                      rf"\end{{{env}}}"]) + "\n"


def label(caption: str, comment: str = "") -> str:
    """``tab:`` and the first five words of ``caption`` (letters and digits, lower case, joined by
    ``-``), then six hex digits of a hash of the caption and ``comment``: a ``\\label`` that is
    readable and differs between the tables of one paper."""
    words = re.findall(r"[a-z0-9]+", re.sub(r"\\[a-zA-Z]+", " ", caption).lower())[:5]
    digest = hashlib.sha1(f"{caption}\n{comment}".encode()).hexdigest()[:6]
    return "tab:" + "-".join([*words, digest])


#: The most characters of a caption in LaTeX (what does not fit -- the conventions, the signature --
#: goes in a comment above the table), and the most lines of a caption in text.
CAPTION_CHARS, CAPTION_LINES = 300, 3


def split_caption(caption: str, notes: str = "", limit: int = CAPTION_CHARS) -> tuple[str, str]:
    """(shown, rest) of a table's ``caption`` (plain text, as every command and the report build
    it: what the table is, then ``: `` and its conventions and signature) and ``notes`` (the
    renderer's sentences on how to read it: what is bold, what a marker means): ``shown`` is the
    title (the caption up to its first ``: `` or sentence end outside brackets) and then the
    notes' sentences that fit in ``limit`` characters; ``rest`` is everything else, in order (a
    LaTeX comment above the table; in text, ``--format json`` and the documentation)."""
    caption, notes = " ".join(caption.split()), " ".join(notes.split())
    cut = _first_cut(caption)
    title, conventions = (caption, "") if cut is None else (caption[:cut].rstrip(".:;") + ".", caption[cut:].strip())
    if len(title) > limit:
        title, conventions = "", caption
    kept = [x for x in _sentences(conventions) if _verdict(x)]      # a verdict in the caption stays shown
    conventions = " ".join(x for x in _sentences(conventions) if not _verdict(x))
    sentences = kept + _sentences(notes)
    if len(title) + sum(len(x) + 1 for x in sentences if _verdict(x)) > limit:     # the verdicts in short
        conventions = " ".join(x for x in [conventions, *(x for x in sentences if _verdict(x))] if x)
        sentences = [_short_verdict(x) if _verdict(x) else x for x in sentences]
    room = limit - len(title) - sum(len(x) + 1 for x in sentences if _verdict(x))
    shown, left = [title], []
    for sentence in sentences:       # the "cannot resolve" lines are always shown, the others while they fit
        if _verdict(sentence) or (not left and len(sentence) + 1 <= room):
            shown.append(sentence)
            room -= 0 if _verdict(sentence) else len(sentence) + 1
        else:
            left.append(sentence)
    return " ".join(x for x in shown if x), " ".join(x for x in [conventions, *left] if x)


def _short_verdict(sentence: str) -> str:
    """A "cannot resolve" sentence without its arithmetic: up to ``cannot resolve at k = N)`` and
    its last clause (the k that would), e.g. ``No clusters in accuracy: ... (it cannot resolve at
    k = 50); k >= 59 resamples would be needed.``"""
    head = re.match(r"^(.*?cannot resolve[^)]*\))", sentence)
    if head is None or "; " not in sentence[head.end():]:
        return sentence
    return f"{head.group(1)}; {sentence.rsplit('; ', 1)[1]}"


def _verdict(sentence: str) -> bool:
    """Whether a sentence is a statement no caption leaves out ("cannot resolve", "not a finding",
    "clusters not determined")."""
    return any(x in sentence.lower() for x in ("cannot resolve", "not a finding", "not determined"))


def _first_cut(text: str) -> int | None:
    """Where the title of a caption ends: the first ``: ``, ``. `` or ``; `` outside brackets."""
    depth = 0
    for i, c in enumerate(text):
        depth += (c in "([{") - (c in ")]}")
        if depth == 0 and c in ":.;" and text[i + 1:i + 2] in (" ", ""):
            return i + 1
    return None


def _sentences(text: str) -> list[str]:
    """``text`` in sentences (a period and a space outside brackets ends one)."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += (c in "([{") - (c in ")]}")
        if depth == 0 and c == "." and text[i + 1:i + 2] == " ":
            out.append(text[start:i + 1].strip())
            start = i + 1
    return [x for x in [*out, text[start:].strip()] if x]


def latex_caption(caption: str, notes: str = "") -> tuple[str, str]:
    """(caption, comment) of a LaTeX float: :func:`split_caption`, the caption escaped."""
    limit = CAPTION_CHARS
    while True:                       # escaping lengthens the text (``>`` is ``\\textgreater{}``)
        shown, rest = split_caption(caption, notes, limit)
        if len(latex_escape(shown)) <= CAPTION_CHARS or limit < CAPTION_CHARS // 2:
            return latex_escape(shown), rest
        limit -= len(latex_escape(shown)) - CAPTION_CHARS


def markdown_caption(caption: str | None, notes: str = "") -> str:
    """A caption above a markdown table: :func:`split_caption`'s shown part (at most
    :data:`CAPTION_CHARS` characters, as in LaTeX), the rest (conventions, signature) in an HTML
    comment under it, which a markdown viewer does not show; ends with a blank line ('' without
    a caption or notes)."""
    if not caption and not notes:
        return ""
    shown, rest = split_caption(caption or "", notes)
    comment = "<!-- " + rest.replace("--", "- -") + " -->\n" if rest else ""
    return f"{shown}\n{comment}\n"


def caption_text(caption: str, notes: str = "", width=DISPLAY) -> str:
    """A caption in text: :func:`split_caption`'s shown part in at most :data:`CAPTION_LINES`
    lines of ``width`` characters and a pointer to the conventions; all of it under ``--full-width``."""
    width = resolve_width(width)
    if width is None:
        return " ".join(x for x in (caption, notes) if x)
    shown, rest = split_caption(caption, notes, CAPTION_LINES * width - 60)
    more = " (Conventions and signature: --format json, --format latex or --full-width.)" if rest else ""
    return "\n".join(textwrap.wrap(shown + more, width, break_on_hyphens=False))


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
