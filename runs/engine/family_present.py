"""How a family's rows are printed (:meth:`metaeval.runs.engine.families.Family.present`): p-values as
the conclusion layer prints them, and, in LaTeX, the settings shared by every row and the
"cannot resolve" line in the comment above the float.
"""

from __future__ import annotations

import re

from metaeval.runs.engine import parameters

_P_COLUMN = re.compile(r"^p(_|$)|p_?value|^p_adj")


def latex_note(frame) -> str:
    """The "cannot resolve" line of a table's stored rows (:func:`stored_tests.row_note` of the
    first row that records an unresolvable family, in its columns or its conventions), for the
    LaTeX comment: the text output says it under the table; a paper's author reads it above the
    float. '' otherwise."""
    if frame is None or not hasattr(frame, "columns") or "conventions" not in frame.columns:
        return ""
    from metaeval.analyses import stored_tests

    for i in range(len(frame)):
        row = frame.iloc[i]
        correction = row["correction"] if "correction" in frame.columns else None
        alpha = row["alpha"] if "alpha" in frame.columns else parameters.DEFAULT_ALPHA
        if isinstance(correction, str):
            said = stored_tests.row_note(row, correction, alpha)
            if said:
                return f"(no groups, ranks or verdicts: {said})"
    return ""


#: Columns that state how a table was made rather than a result: moved to the LaTeX comment when
#: they hold one value on every row (:func:`latex_settings`), as are the family's options.
SETTINGS: tuple[str, ...] = ("dataset", "human", "level", "method", "k", "seed", "alpha", "correction",
                             "n_valid", "scale", "variant", "alternative")


def latex_settings(frame, options=()) -> tuple:
    """(``frame`` without the setting columns (:data:`SETTINGS`, ``options``: the family's option
    names) that hold one value on every row, and without the columns empty on every row; a ``%``
    comment naming them, with their value): in a paper's table a setting shared by every row (the
    dataset, k, the seed, the correction) is said once, not repeated down a column; a result
    column stays even when constant. A table of fewer than two rows is left whole (every column is then constant)."""
    import pandas as pd

    if frame is None or not hasattr(frame, "columns") or len(frame) < 2:
        return frame, ""

    def said(v) -> str:
        if isinstance(v, float):
            return f"{int(v):d}" if v.is_integer() else f"{v:g}"
        return " ".join(str(v).split())

    same, empty = [], []
    for c in frame.columns:
        values = frame[c]
        if values.isna().all() or all(v is None or said(v) == "" for v in values if not pd.isna(v)):
            empty.append(str(c))
        elif (c in SETTINGS or c in options) and values.nunique(dropna=False) == 1:
            same.append(f"{c}={said(values.iloc[0])}")
    dropped = [c for c in frame.columns if str(c) in empty or any(x.startswith(f"{c}=") for x in same)]
    if len(dropped) == len(frame.columns):
        return frame, ""
    said = ([f"(the same on every row: {', '.join(same)})"] if same else []) + \
        ([f"(not set: {', '.join(empty)})"] if empty else [])
    return frame.drop(columns=dropped), " ".join(said)


def printed_frame(frame):
    """``frame`` with its p-value columns as the conclusion layer prints them
    (:func:`conclusions.p_text`: 3 decimals, the digits that show the side of alpha, ``<`` the
    test's resolution, never 0; empty where undefined): 1/n_valid where the rows count their
    valid resamples, else 1/k where they name their ``k``; a corrected p's floor times the family's size
    (:func:`conclusions.adjusted_floor`, with the rows' ``correction`` and ``family_size``)."""
    import pandas as pd

    from metaeval.analyses import conclusions

    if frame is None or not hasattr(frame, "columns"):
        return frame

    def column(name):
        return list(frame[name]) if name in frame.columns else [None] * len(frame)

    def known(x) -> bool:
        return x is not None and pd.notna(x) and bool(x)

    floors = [1 / v if known(v) else (1 / k if known(k) else 0.0) for v, k in zip(column("n_valid"), column("k"))]
    corrected = [conclusions.adjusted_floor(f, c, m) if isinstance(c, str) and known(m) else f
                 for f, c, m in zip(floors, column("correction"), column("family_size"))]
    alphas = [a if known(a) else conclusions.DEFAULT_ALPHA for a in column("alpha")]
    shown = {c: [conclusions.p_text(p, f, latex=False, alpha=a) if conclusions.defined_value(p) else None
                 for p, f, a in zip(frame[c], corrected if "adj" in str(c) else floors, alphas)]
             for c in frame.columns if _P_COLUMN.search(str(c)) and frame[c].dtype.kind == "f"}
    return frame.assign(**shown) if shown else frame


#: The key of a family's rows' ``attrs`` holding what its run did (a summary whose ``run_id`` is
#: None when everything was up to date): what the command says beside the rows (:meth:`Family.notes`,
#: :meth:`Family.present`), never a column; ``wh.<family>(...)`` returns the same rows, with it.
RUN = "run"
#: The aligned text formats: a run's lines are printed with the rows (else on standard error, so
#: that standard output holds only the JSON/CSV/... document).
TEXT = ("text", "table")


def with_run(rows, summary):
    """``rows`` (a DataFrame) carrying ``summary`` (:data:`RUN`; small: pandas copies it with the rows)."""
    rows.attrs[RUN] = summary
    return rows


def run_of(rows):
    """The summary ``rows`` carry (:func:`with_run`), or None."""
    return getattr(rows, "attrs", {}).get(RUN)


def run_line(table: str, summary) -> str:
    """What a run of ``table`` did (a ``runner.RunSummary``): computed and written, or up to date."""
    if summary.up_to_date:
        return f"{table}: all {summary.tasks} results up to date; nothing computed (--force recomputes)"
    return f"{table}: run {summary.run_id}: computed {summary.computed} of {summary.tasks}, wrote {summary.written} rows"


def prose(*lines: str) -> str:
    """``lines`` of prose as the command line prints them (wrapped to the display width:
    :func:`metaeval.present.plain.wrap`), each ending with a newline."""
    from metaeval.present.plain import wrap

    return "".join(wrap(line) + "\n" for line in lines)
