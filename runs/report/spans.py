"""Error spans (MQM, ESA): how far the raters agree and how stable the system ranking is with
fewer ratings per segment (``raters``), and a metric's predicted spans against the humans'
(``span-eval``: precision, recall and F1 at character level, paired tests between metrics).
Each reads its family's latest rows; a test's verdict and its printed p are the conclusion
layer's (:func:`metaeval.analyses.conclusions.printed_by`, :func:`metaeval.analyses.stored_tests.row_note`)."""

from __future__ import annotations

import html

import pandas as pd

from metaeval.analyses import conclusions, stored_tests
from metaeval.present import figures
from metaeval.runs.report.cells import flag_cell, int_cell, p_cell, sortable, value_cell
from metaeval.runs.report.context import Context, Section

#: What each stored agreement statistic is, for the table.
AGREEMENT = {"score_alpha": "Krippendorff's α (interval) on the raters' segment scores",
             "span_alpha": "Krippendorff's α (nominal) on the characters: inside a span or not",
             "span_alpha_severity": "Krippendorff's α (nominal) on the characters: the severities covering each",
             "span_f1_mean": "span F1 between two raters (character overlap), mean over rater pairs",
             "span_f1_pooled": "span F1 between two raters, characters pooled over the pairs"}


def raters(ctx: Context) -> Section | None:
    """The agreement between raters and the ranking's stability by ratings per segment; None
    when neither is stored for the dataset."""
    agreement, stability = ctx.latest("rater_agreement"), ctx.latest("rating_stability")
    if agreement.empty and stability.empty:
        return None
    s = Section("Raters and ratings per segment", "raters",
                run_ids={int(r) for f in (agreement, stability) if not f.empty for r in f["run_id"]})
    for (human, subset), part in agreement.groupby(["human", "subset"], sort=True) if not agreement.empty else ():
        s.blocks.append(f"<h3>{html.escape(f'Agreement between the raters of {human}{_where(subset)}')}</h3>")
        table = [[(AGREEMENT.get(r.statistic, r.statistic), ""), value_cell(r.value), int_cell(r.n_raters),
                  int_cell(r.n_units)] for r in part.sort_values("statistic").itertuples()]
        s.blocks.append(sortable(["Statistic", "Value", "Raters", "Units (cells or characters)"], table)
                        + '<p class="caption">Undefined: fewer than two raters of a unit, or no variation.</p>')
    for (human, subset, k, seed, alpha), part in (stability.groupby(["human", "subset", "k", "seed", "alpha"], sort=True)
                                                  if not stability.empty else ()):
        part = part.sort_values("ratings")
        level = f"{1 - float(alpha):.0%}"
        s.blocks.append(f"<h3>{html.escape(f'Stability of the system ranking of {human}{_where(subset)}')}</h3>")
        table = [[int_cell(r.ratings), value_cell(r.kendall_mean, (r.kendall_lower, r.kendall_upper)),
                  value_cell(r.top_kept), int_cell(r.n_systems), int_cell(r.short_cells)] for r in part.itertuples()]
        s.blocks.append(sortable(["Ratings per segment", f"Kendall τ with all ratings [{level} interval]",
                                  "Share keeping the top system", "Systems", "Segments with fewer ratings"], table))
        title = (f"Kendall τ between the system ranking from r ratings per segment and from all of them ({human}); "
                 f"{level} percentile intervals over k = {int(k)} draws of raters; no tests (no correction)")
        fig = figures.interval_chart([f"{int(n)} rating{'s' * (n > 1)}" for n in part["ratings"]],
                                     part["kendall_mean"], part["kendall_lower"], part["kendall_upper"],
                                     xlabel="Kendall τ with the ranking from all ratings", point="mean over draws",
                                     interval=f"{level} percentile interval", title=title)
        ctx.figure(s, fig, f"rating-stability-{human}", title,
                   part[["ratings", "kendall_mean", "kendall_lower", "kendall_upper", "top_kept", "n_systems"]])
    return s


def span_eval(ctx: Context) -> Section | None:
    """Each judge's predicted spans against the humans', and the paired tests between judges;
    None when no span evaluation is stored for the dataset."""
    rows = ctx.latest("span_evaluation")
    if rows.empty:
        return None
    tests = ctx.tests("span-eval")
    s = Section("Predicted error spans against the raters'", "span-eval",
                run_ids={int(r) for f in (rows, tests) if not f.empty for r in f["run_id"]})
    for (subset, k, seed, alpha), part in rows.groupby(["subset", "k", "seed", "alpha"], sort=True):
        level = f"{1 - float(alpha):.0%}"
        part = part.sort_values(["severity_matching", "averaging", "f1"], ascending=[True, False, False])
        table = [[(r.judge, ""), ("with" if r.severity_matching else "without", ""), (r.averaging, ""),
                  *(value_cell(getattr(r, c), (getattr(r, c + "_lower"), getattr(r, c + "_upper")))
                    for c in ("precision", "recall", "f1")), int_cell(r.n_segments)] for r in part.itertuples()]
        s.blocks.append(sortable(["Judge", "Severity matching", "Averaging", f"Precision [{level} interval]",
                                  "Recall", "F1", "Segments"], table) + '<p class="caption">' + html.escape(
            f"Character-level precision, recall and F1 of each judge's spans against the union of the raters' "
            f"spans{_where(subset)}, micro (characters pooled) and macro (mean over segments), "
            f"{level} percentile bootstrap intervals over segments (k = {int(k)}, seed {int(seed)}).") + "</p>")
        t = tests[(tests["subset"] == subset)] if not tests.empty else tests
        correction = str(t["correction"].iloc[0]) if not t.empty else "none"
        title = (f"Span F1 (micro) of each judge, {level} bootstrap intervals over segments; paired tests between "
                 f"judges: {figures.correction_phrase(correction, 'all') if not t.empty else 'none stored, no correction'}")
        micro = part[part["averaging"] == "micro"]
        if not micro.empty:
            labels = [f"{j} ({'with' if m else 'without'} severity)" for j, m in
                      zip(micro["judge"], micro["severity_matching"])]
            fig = figures.interval_chart(labels, micro["f1"], micro["f1_lower"], micro["f1_upper"],
                                         xlabel="span F1 (micro)", point="F1", interval=f"{level} percentile interval",
                                         title=title)
            ctx.figure(s, fig, "span-f1", title, micro[["judge", "severity_matching", "f1", "f1_lower", "f1_upper"]])
        if not t.empty:
            s.blocks.append(_tests(t))
    return s


def _tests(tests: pd.DataFrame) -> str:
    """The paired tests between judges: p as the conclusion layer prints it, the family's
    "cannot resolve" line where it cannot."""
    printed = conclusions.printed_by(tests.assign(kind="paired"), {"paired": "add-one"}, key="kind",
                                     columns=("pvalue", "pvalue_corrected"))
    first = tests.iloc[0]
    note = stored_tests.row_note(first, what="the paired tests between judges")
    rows = [[(r.judge_a, ""), (r.judge_b, ""), ("with" if r.severity_matching else "without", ""),
             value_cell(r.delta), p_cell(r.pvalue, p.pvalue), p_cell(r.pvalue_corrected, p.pvalue_corrected),
             flag_cell(r.significant)]
            for r, p in zip(tests.itertuples(), printed.itertuples())]
    head = ["Judge A", "Judge B", "Severity matching", "Δ micro F1 (A − B)", "p", "p corrected", "Significant"]
    caption = (f"Paired permutation tests over segments, {first['correction']} correction, α = "
               f"{float(first['alpha']):g}; p never printed finer than its resolution.")
    return (sortable(head, rows) + f'<p class="caption">{html.escape(caption)}</p>'
            + (f'<p class="note">{html.escape(note)}.</p>' if note else ""))


def _where(subset: str) -> str:
    return f" (subset {subset})" if subset else ""
