"""The report's HTML pieces: numbers as printed (a true minus, never "None" or "nan"), table
cells as (text shown, sort key), the sortable tables, figure names and data URIs."""

from __future__ import annotations

import base64
import html
import json
import math
import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval.present import ranking_tables
from metaeval.analyses.stats import vocabulary

DECIMALS = 4
MINUS = "\u2212"


def slug(*parts) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", "_".join(str(p) for p in parts)).strip("-")


def missing_value(v) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float) and math.isnan(v)


def cell(v, digits: int = DECIMALS) -> tuple[str, str]:
    """(text shown, sort key) of one table cell: never "None" or "nan" (an empty cell), floats
    with ``digits`` decimals and a true minus, lists and objects as JSON."""
    if isinstance(v, np.generic):
        v = v.item()
    if missing_value(v):
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


def table_html(frame: pd.DataFrame, digits: int = DECIMALS, row_ids: Sequence[str] | None = None,
               printed: Mapping[str, Sequence[str]] | None = None) -> str:
    """A sortable HTML table (click a header) of ``frame``; an empty cell where a value is missing.
    ``row_ids``: an id for each row (links to it). ``printed``: column -> the text of each row
    (p-values as the conclusion layer prints them: :func:`p_texts`), sorted by the value; the p
    columns of ``frame`` not given print through :func:`metaeval.analyses.conclusions.p_text`
    (no floor; the digits that show the side of the rows' ``alpha``)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    printed = {**p_texts(frame), **(printed or {})}
    columns = list(frame.columns)
    body = []
    for n, row in enumerate(frame.itertuples(index=False)):
        cells = []
        for c, v in zip(columns, row):
            text, key = p_cell(v, printed[c][n]) if c in printed and not missing_value(v) else cell(v, digits)
            cells.append(f'<td data-v="{html.escape(key)}">{html.escape(text)}</td>' if key else
                         f"<td>{html.escape(text)}</td>")
        attribute = f' id="{html.escape(row_ids[n])}"' if row_ids is not None else ""
        body.append(f"<tr{attribute}>" + "".join(cells) + "</tr>")
    return (f'<table class="data sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
            "</table>")


#: A column of p-values (``p_value``, ``pvalue_corrected``, ``pearson_p``, ...).
_P_COLUMN = re.compile(r"(^p$|^p_(value|adj)|pvalue|_p$)")


def p_texts(frame: pd.DataFrame) -> dict[str, list[str]]:
    """The p-value columns of ``frame`` as :func:`metaeval.analyses.conclusions.p_text` prints them,
    beside the rows' ``alpha`` where they have one (no floor: a caller that knows the test's gives
    :func:`metaeval.analyses.conclusions.printed_pvalues`' texts)."""
    from metaeval.analyses import conclusions

    alphas = list(frame["alpha"]) if "alpha" in frame else [conclusions.DEFAULT_ALPHA] * len(frame)
    return {c: [conclusions.p_text(v, latex=False, alpha=a if not missing_value(a) else None)
                for v, a in zip(frame[c], alphas)]
            for c in frame.columns if _P_COLUMN.search(str(c)) and frame[c].dtype.kind == "f"}


def sortable(head: Sequence[str], rows: Sequence[Sequence[tuple[str, str]]]) -> str:
    """A sortable table of cells given as (text shown, sort key): a numeric key sorts the column
    by number (an empty key last), none by the text."""
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f'<td data-v="{html.escape(k)}">{html.escape(t)}</td>' if k else
                                    f"<td>{html.escape(t)}</td>" for t, k in row) + "</tr>" for row in rows)
    return f'<table class="data sortable"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def minus(text: str) -> str:
    """A printed number with a true minus sign."""
    return text.replace("-", MINUS)


def integer(v) -> int | None:
    return None if missing_value(v) else int(v)


def number(v) -> str:
    return minus(ranking_tables.plain_number(v))


def interval_text(value, lower=None, upper=None) -> str:
    """``0.931 [0.890, 0.965]``; "undefined" for a missing value, no bracket without bounds."""
    if missing_value(value):
        return "undefined"
    if missing_value(lower) or missing_value(upper):
        return number(value)
    return f"{number(value)} [{number(lower)}, {number(upper)}]"


def p_cell(value, printed: str) -> tuple[str, str]:
    """A p-value's sortable cell: ``printed`` (as the conclusion layer prints it:
    :func:`metaeval.analyses.conclusions.printed_pvalues`), sorted by the value; "undefined" when missing."""
    return value_cell(value) if missing_value(value) else (printed, repr(float(value)))


def value_cell(value, bounds: tuple | None = None) -> tuple[str, str]:
    """A statistic (with its interval) as a sortable cell; "undefined", sorted last, when missing."""
    if isinstance(value, np.generic):
        value = value.item()
    if missing_value(value):
        return "undefined", ""
    lower, upper = bounds if bounds is not None else (None, None)
    return interval_text(value, lower, upper), repr(float(value))


def int_cell(value) -> tuple[str, str]:
    return ("", "") if missing_value(value) else (str(int(value)), str(int(value)))


def flag_cell(value) -> tuple[str, str]:
    return ("—", "") if missing_value(value) else (("yes", "1") if bool(value) else ("no", "0"))


def threshold_cell(threshold, macro: bool) -> tuple[str, str]:
    """A detection threshold: −∞ (every cell positive), "— (per group)" for a macro row, undefined."""
    if missing_value(threshold):
        return ("— (per group)", "") if macro else ("undefined", "")
    if math.isinf(float(threshold)):
        return ("−∞ (every cell positive)", repr(float(threshold)))
    return number(threshold), repr(float(threshold))


def subset_text(subset: str) -> str:
    return subset or "every cell"


def in_order(groups, keys: Sequence[str]) -> list:
    """``groups`` (key, rows) with the levels and coefficients in the order of the ranking
    (system, summary, global; pearson, spearman, kendall), the other keys sorted."""
    rank = {"level": vocabulary.LEVELS, "coefficient": vocabulary.CORRELATION_COEFFICIENTS}

    def key(item):
        return tuple((list(rank[k]).index(v) if k in rank and v in rank[k] else 99, str(v))
                     for k, v in zip(keys, item[0]))
    return sorted(groups, key=key)
