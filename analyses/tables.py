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

FORMATS: tuple[str, ...] = ("text", "json", "csv", "markdown", "latex")
#: Older names of a format, still accepted.
ALIASES: Mapping[str, str] = {"table": "text"}
#: Columns whose values are JSON documents (stored as JSON text): nested objects in JSON output.
JSON_COLUMNS: tuple[str, ...] = ("conventions", "parameters", "beaten_by", "consensus", "pc_pvalues", "p_values")
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


def to_markdown(frame: pd.DataFrame, digits: int = DIGITS) -> str:
    """A GitHub pipe table; numeric columns right-aligned."""
    esc = lambda s: s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")  # noqa: E731
    header = "| " + " | ".join(esc(str(c)) for c in frame.columns) + " |"
    align = "|" + "|".join("---:" if _numeric(frame[c]) else "---" for c in frame.columns) + "|"
    rows = ["| " + " | ".join(esc(cell_text(v, digits)) for v in row) + " |"
            for row in frame.itertuples(index=False, name=None)]
    return "\n".join([header, align, *rows]) + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_LATEX_RE = re.compile("|".join(re.escape(c) for c in _LATEX_SPECIAL))


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (``rouge_2 & co`` -> ``rouge\\_2 \\& co``)."""
    return _LATEX_RE.sub(lambda m: _LATEX_SPECIAL[m.group()], str(text))


def to_latex(frame: pd.DataFrame, *, caption: str | None = None, digits: int = DIGITS) -> str:
    """A booktabs ``tabular`` of ``frame`` (numeric columns right-aligned), inside a ``table``
    environment with ``caption`` when one is given."""
    spec = "".join("r" if _numeric(frame[c]) else "l" for c in frame.columns) or "l"
    lines = [rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(latex_escape(str(c)) for c in frame.columns) + r" \\", r"\midrule"]
    lines += [" & ".join(latex_escape(cell_text(v, digits)) for v in row) + r" \\"
              for row in frame.itertuples(index=False, name=None)]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return _wrap(lines, caption)


def _wrap(lines: list[str], caption: str | None) -> str:
    if caption is None:
        return "\n".join(lines) + "\n"
    return "\n".join([r"\begin{table}[t]", r"\centering", *lines,
                      rf"\caption{{{latex_escape(caption)}}}", r"\end{table}"]) + "\n"


def _numeric(column: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column)


# --- an evaluation as a paper's table ------------------------------------------------------------------
def ranked_latex(frame: pd.DataFrame, *, caption: str, confidence: float = 0.95, digits: int = 3) -> str:
    """A paper's table of correlations with their CIs and significance clusters.

    ``frame``: one row per metric, level and coefficient with columns ``metric``, ``level``,
    ``coefficient``, ``correlation``, ``lower``, ``upper``, ``cluster`` (1 = best; NaN if
    unknown). One row per metric, and for each (level, coefficient) two columns: the cluster
    and ``r [lower, upper]`` (a ``confidence`` CI). Rows are ordered by the first setting's correlation (descending,
    undefined last); in each setting the highest correlation is in bold (every tied one).
    WMT metrics tables (Bojar et al. 2016) show clusters the same way: metrics in one cluster
    are not separated by significance, each cluster beats every lower one.
    """
    need = {"metric", "level", "coefficient", "correlation", "lower", "upper", "cluster"}
    if missing := need - set(frame.columns):
        raise ValueError(f"ranked_latex needs columns {sorted(need)}; missing {sorted(missing)}")
    settings = list(dict.fromkeys(zip(frame["level"], frame["coefficient"])))
    metrics = list(dict.fromkeys(frame["metric"]))
    cell = {(r.metric, r.level, r.coefficient): r for r in frame.itertuples(index=False)}
    if settings:
        first = [cell.get((m, *settings[0])) for m in metrics]
        key = [-(r.correlation) if r is not None and not pd.isna(r.correlation) else math.inf for r in first]
        metrics = [m for _, _, m in sorted(zip(key, range(len(metrics)), metrics))]
    best = {}
    for s in settings:
        values = [cell[(m, *s)].correlation for m in metrics if (m, *s) in cell]
        values = [v for v in values if not pd.isna(v)]
        best[s] = max(values) if values else None
    spec = "l" + "cr" * len(settings)
    head1 = ["Metric"] + [rf"\multicolumn{{2}}{{c}}{{{latex_escape(lv)}, {latex_escape(c)}}}" for lv, c in settings]
    rules = " ".join(rf"\cmidrule(lr){{{2 + 2 * i}-{3 + 2 * i}}}" for i in range(len(settings)))
    head2 = [""] + ["cl.", rf"$r$ [{100 * confidence:g}\% CI]"] * len(settings)
    lines = [rf"\begin{{tabular}}{{{spec}}}", r"\toprule", " & ".join(head1) + r" \\"]
    if settings:
        lines.append(rules)
    lines += [" & ".join(head2) + r" \\", r"\midrule"]
    for m in metrics:
        parts = [latex_escape(m)]
        for s in settings:
            r = cell.get((m, *s))
            if r is None or pd.isna(r.correlation):
                parts += ["", "--"]
                continue
            value = f"{r.correlation:.{digits}f}"
            if best[s] is not None and r.correlation == best[s]:
                value = rf"\textbf{{{value}}}"
            ci = "" if pd.isna(r.lower) or pd.isna(r.upper) else f" [{r.lower:.{digits}f}, {r.upper:.{digits}f}]"
            parts += ["" if pd.isna(r.cluster) else str(int(r.cluster)), value + ci]
        lines.append(" & ".join(parts) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return _wrap(lines, caption)
