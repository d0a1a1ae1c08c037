"""Paper tables of the detection, judges and categories families (issue 27 items 1-2): each
family's stored rows as a :class:`metaeval.present.ranking_tables.Ranking` -- booktabs LaTeX that fits an
ACL page (``--layout auto|wide|compact|long``), numbers with a true minus aligned on the decimal
point, rows sorted, the top significance cluster in bold where tests decide it (else the single
best value; never an undefined one), and markdown in the same order with the same bold.

- :func:`detection_ranking`: metrics x (group, statistic) -- ROC-AUC and balanced accuracy per
  ``--by`` group and their macro average, with percentile bootstrap intervals; the significance
  clusters come from the paired detection tests (:func:`detection_clusters`);
- :func:`judges_ranking`: automatic judges x statistics with their intervals; accuracy's clusters
  are the stored ones (the judge-vs-judge tests);
- :func:`categories_ranking`: metrics x error categories: the correlation with the overall
  judgment, then per category the drop of that correlation when the category is ignored (or,
  without an ablation, the correlation with the category's judgment).

Pure functions on DataFrames: no database.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from metaeval.analyses import conclusions
from metaeval.present.ranking_tables import COEFFICIENT_NAMES, LEVEL_NAMES, LONG_MAX_ROWS, Ranking
from metaeval.present.tables import latex_escape

MACRO = "*"   # the macro row's group (analyses.detection.MACRO; not imported: that module loads scipy)

# --- detection --------------------------------------------------------------------------------------
#: statistic -> (long LaTeX header, short LaTeX header, plain name)
DETECTION_STATISTICS = {"roc_auc": ("ROC-AUC", "AUC", "ROC-AUC"),
                        "balanced_accuracy": ("Bal.\\ acc.", "BA", "balanced accuracy")}


def group_name(group: str, by: str = "") -> tuple[str, str]:
    """(LaTeX, plain) name of a detection group: '' (every cell), ``Macro`` or ``by=value``."""
    if group == MACRO:
        return "Macro", "macro"
    name = f"{by}={group}" if by and group else group
    return latex_escape(name), name


def detection_unresolved(tests: pd.DataFrame | None) -> dict[tuple[str, str], str]:
    """(group, statistic) -> the "cannot resolve" line of its paired tests, for the families whose
    stored resolution says they cannot (:func:`metaeval.analyses.conclusions.stored_note`)."""
    out: dict[tuple[str, str], str] = {}
    if tests is None or tests.empty:
        return out
    for r in tests.itertuples(index=False):
        note = conclusions.stored_note(r.conventions, getattr(r, "correction", "corrected"), getattr(r, "alpha", math.nan),
                                       "the paired bootstrap tests")
        if note is not None:
            out.setdefault((r.group, r.statistic), note)
    return out


def detection_clusters(rows: pd.DataFrame, tests: pd.DataFrame, *, alternative: str = "two-sided",
                       rule: str = "any") -> pd.DataFrame:
    """Significance clusters of the metrics per group and statistic from the paired tests
    (:func:`metaeval.analyses.conclusions.clusters`, ``rule`` as winners' ``--cluster-rule``):
    columns group, statistic, metric, cluster (NaN where the tests do not decide it: a pair of
    metrics untested, or a family whose k cannot reach its corrected level, in which no test can
    be significant)."""
    out = []
    if tests is None or tests.empty:
        return pd.DataFrame(columns=["group", "statistic", "metric", "cluster"])
    unresolved = detection_unresolved(tests)
    for (group, statistic), part in tests.groupby(["group", "statistic"], sort=False):
        mine = rows[rows["group"] == group]
        metrics = list(mine["metric"])
        scores = mine[statistic].astype(float).to_numpy()
        index = {m: i for i, m in enumerate(metrics)}
        part = part[part["metric_a"].isin(index) & part["metric_b"].isin(index)]
        cluster = np.full(len(metrics), np.nan)
        if len(metrics) > 1 and len(part):
            result, _, _ = conclusions.clusters(
                scores, part["metric_a"].map(index), part["metric_b"].map(index), part["delta"].astype(float),
                part["significant"].fillna(False).astype(bool), alternative=alternative, rule=rule, names=metrics,
                note=unresolved.get((group, statistic)))
            cluster = result.cluster
        out += [{"group": group, "statistic": statistic, "metric": m, "cluster": c} for m, c in zip(metrics, cluster)]
    return pd.DataFrame(out)


def detection_ranking(rows: pd.DataFrame, tests: pd.DataFrame | None = None, *, alternative: str = "two-sided",
                      rule: str = "any", confidence: float = 0.95) -> Ranking:
    """``metaeval detection`` rows (metric, group, roc_auc[_lower, _upper], balanced_accuracy[...])
    as metrics x (group, statistic): the groups in order and the macro average last, ROC-AUC then
    balanced accuracy in each; rows sorted by the macro (else the only group's) ROC-AUC; bold the
    top cluster of the paired tests, else the best value."""
    groups = [g for g in dict.fromkeys(rows["group"]) if g != MACRO] + ([MACRO] if (rows["group"] == MACRO).any() else [])
    clusters = detection_clusters(rows, tests, alternative=alternative, rule=rule)
    cluster = {(r.group, r.statistic, r.metric): r.cluster for r in clusters.itertuples(index=False)}
    long_rows, headers = [], {}
    for g in groups:
        by = str(rows["by"].iloc[0]) if "by" in rows.columns and len(rows) else ""
        latex_group, plain_group = group_name(g, by)
        for statistic, (long, short, plain) in DETECTION_STATISTICS.items():
            headers[(g, statistic)] = (latex_group, long, short, f"{plain_group} {plain}".strip())
            for r in rows[rows["group"] == g].itertuples(index=False):
                long_rows.append({"metric": r.metric, "group": g, "statistic": statistic,
                                  "correlation": getattr(r, statistic), "lower": getattr(r, f"{statistic}_lower"),
                                  "upper": getattr(r, f"{statistic}_upper"),
                                  "cluster": cluster.get((g, statistic, r.metric), np.nan)})
    frame = pd.DataFrame(long_rows, columns=["metric", "group", "statistic", "correlation", "lower", "upper",
                                             "cluster"])
    sort = ((MACRO if MACRO in groups else groups[0]), "roc_auc") if groups else None
    return Ranking(frame, keys=("group", "statistic"), headers=headers, confidence=confidence, ceiling=False,
                   keep_ci=True, value_name="", value_header="Value", sort_by=sort,
                   unresolved={s: line for s, line in detection_unresolved(tests).items() if s in headers})


# --- judges -------------------------------------------------------------------------------------------
#: statistic -> (long LaTeX header, short LaTeX header, plain name, higher is better)
JUDGE_STATISTICS = {
    "accuracy": ("Accuracy", "Acc.", "accuracy", True),
    "accuracy_ab": ("Acc.\\ ab", "ab", "accuracy ab", True),
    "accuracy_ba": ("Acc.\\ ba", "ba", "accuracy ba", True),
    "both_correct": ("Both correct", "Both", "both correct", True),
    "position_consistency": ("Consistency", "Cons.", "position consistency", True),
    "kappa": ("Cohen $\\kappa$", "$\\kappa$", "kappa", True),
    "kendall": ("Kendall $\\tau$", "$\\tau$", "kendall", True),
    "first_position_rate": ("First pos.", "1st", "first-position rate", False),
    "tie_rate": ("Ties", "Ties", "tie rate", False),
}
JUDGES_UNBOLDED = ("No bold in first-position rate and tie rate: neither has a better direction (an unbiased judge "
                   "picks the first position half the time).")


def judges_undetermined(stats: pd.DataFrame) -> str | None:
    """Why the stored judge_statistics rows have no clusters (their family cannot resolve: the
    "cannot resolve" line; or a pair's test is not evidence), from their conventions; None when
    the clusters are given."""
    for c in stats.get("conventions", ()):
        why = (json.loads(c) if isinstance(c, str) else c).get("clusters", {}).get("why_undetermined")
        if why:
            return why
    return None


def judges_ranking(stats: pd.DataFrame, *, confidence: float = 0.95,
                   statistics: Sequence[str] = tuple(JUDGE_STATISTICS)) -> Ranking:
    """``metaeval judges`` judge_statistics rows of one subset as judges x ``statistics``, with
    their intervals; rows sorted by accuracy; accuracy's bold is its top significance cluster (the
    stored ``cluster``, from the judge-vs-judge tests) -- none, and the caption says why, when the
    tests give no clusters (:func:`judges_undetermined`) --, the other statistics' the best value,
    none for the first-position and tie rates."""
    rows, headers = [], {}
    for statistic in statistics:
        long, short, plain, _ = JUDGE_STATISTICS[statistic]
        headers[(statistic,)] = ("", long, short, plain)
        for r in stats.itertuples(index=False):
            rows.append({"metric": r.judge, "statistic": statistic, "correlation": getattr(r, statistic),
                         "lower": getattr(r, f"{statistic}_lower"), "upper": getattr(r, f"{statistic}_upper"),
                         "cluster": r.cluster if statistic == "accuracy" else np.nan})
    frame = pd.DataFrame(rows, columns=["metric", "statistic", "correlation", "lower", "upper", "cluster"])
    bold = [(s,) for s in statistics if JUDGE_STATISTICS[s][3]]
    unbolded = JUDGES_UNBOLDED if len(bold) < len(statistics) else None
    why = judges_undetermined(stats) if "accuracy" in statistics and len(stats) > 1 else None
    return Ranking(frame, keys=("statistic",), headers=headers, confidence=confidence, ceiling=False,
                   keep_ci=LONG_MAX_ROWS,
                   row_header="Judge", rows_name="Judges", value_name="", value_header="Value",
                   bold=bold, unbolded=unbolded, unresolved={("accuracy",): why} if why else None)


# --- error categories -----------------------------------------------------------------------------------
OVERALL = ""   # the column of the correlation with the overall judgment


def categories_ranking(frame: pd.DataFrame) -> Ranking:
    """``metaeval categories`` rows (metric, level, coefficient, category, overall_correlation,
    correlation_drop, category_correlation, ablated_measure) as metrics x (level, coefficient,
    column): r with the overall judgment, then per category its drop (with an ablation) or its
    r with the category's judgment; rows sorted by the first r overall; bold: the highest r
    (overall and per category), never a drop (a larger drop is not better: it says how much the
    metric's agreement rests on the category)."""
    rows, headers, bold = [], {}, []
    settings = list(dict.fromkeys(zip(frame["level"], frame["coefficient"])))
    categories = list(dict.fromkeys(frame["category"]))
    ablated = {c: frame.loc[frame["category"] == c, "ablated_measure"].map(lambda v: isinstance(v, str)).any()
               for c in categories}
    for level, coefficient in settings:
        part = frame[(frame["level"] == level) & (frame["coefficient"] == coefficient)]
        name, symbol, plain_symbol = COEFFICIENT_NAMES.get(coefficient, (coefficient, None, coefficient))
        group = f"{latex_escape(LEVEL_NAMES.get(level, level))}, {symbol or latex_escape(coefficient)}"
        key = (level, coefficient, OVERALL)
        r_symbol = symbol or "$r$"
        headers[key] = (group, f"{r_symbol} overall", f"{r_symbol} all", f"{level} {coefficient} r overall")
        bold.append(key)
        for r in part.drop_duplicates("metric").itertuples(index=False):
            rows.append({"metric": r.metric, "level": level, "coefficient": coefficient, "column": OVERALL,
                         "correlation": r.overall_correlation})
        for c in categories:
            key = (level, coefficient, c)
            drop = bool(ablated[c])
            headers[key] = (group, (r"$\Delta$ " if drop else f"{r_symbol} ") + latex_escape(c),
                            (r"$\Delta$ " if drop else f"{r_symbol} ") + latex_escape(c),
                            f"{level} {coefficient} {'drop' if drop else 'r'} {c}")
            if not drop:
                bold.append(key)
            for r in part[part["category"] == c].itertuples(index=False):
                rows.append({"metric": r.metric, "level": level, "coefficient": coefficient, "column": c,
                             "correlation": r.correlation_drop if drop else r.category_correlation})
    shown = pd.DataFrame(rows, columns=["metric", "level", "coefficient", "column", "correlation"])
    unbolded = ("Drop of a category = r overall - r with the category ignored (> 0: the metric's agreement rests on "
                "the category); no bold among the drops: a larger drop is not better.")
    return Ranking(shown, keys=("level", "coefficient", "column"), headers=headers, ceiling=False, value_name="",
                   value_header="Value", sort_by=(settings[0][0], settings[0][1], OVERALL) if settings else None,
                   bold=bold, unbolded=unbolded if any(ablated.values()) else None)
