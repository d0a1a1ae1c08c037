"""The factuality families: metrics as detectors of the cells a binary human judgment marks
(``detection``: :mod:`metaeval.runs.factuality.detection`) and the error categories of the human judgment
(``categories``: :mod:`metaeval.runs.factuality.categories`, FRANK's ablation).

This module is read when the command line starts: it imports its computation inside ``compute``.
"""

from __future__ import annotations

from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import (ALPHA, ALTERNATIVE, BY, CORRECTION, CORRECTION_GROUP, DATASET, FORCE, HUMAN,
                                          K, METRICS, SCOPE, SEED, WHERE, Option)
from metaeval.runs.engine.shared_options import LAYOUT


@register
class Detection(Family):
    """Metrics judged as detectors of the cells a binary human judgment marks positive.

    Per metric: ROC-AUC, and the balanced accuracy at the threshold tuned on --tune (exact search
    over the distinct scores, the smallest of equal maxima) or fixed by --threshold, on the --where
    cells; with --by, per group (a threshold tuned per group) and their unweighted macro average
    (group *). Percentile bootstrap intervals over the cells (every resample re-tunes the
    threshold) and paired bootstrap tests between the metrics of the difference in balanced
    accuracy and in ROC-AUC, corrected within each family. Tables detection and detection_tests.
    """

    name = "detection"
    topic = "metrics"
    headline = "Metrics as detectors of the cells a binary human judgment marks positive."
    report = ("metaeval.runs.report.factuality:detection",)
    report_position = 20
    summary = "Metrics judged as detectors of the cells a binary human judgment marks positive."
    tables = ("detection", "detection_tests")
    tests_table = "detection_tests"
    options = (DATASET, HUMAN.but(help="The human judgment giving the labels, e.g. consistent."),
               Option("positive", kind="float", required=True, metavar="V",
                      help="A cell is positive (consistent) when its human value is >= V (<= V for a lower-is-better "
                           "judgment); a 0/1 label: --positive 1."),
               METRICS, WHERE, BY,
               Option("tune", kind="where", multiple=True, metavar="ATTR=VALUE",
                      help="Tune each metric's threshold (maximising balanced accuracy) on the cells of this subset, "
                           "e.g. split=validation (with --by, per group), and apply it to the --where cells. "
                           "Repeatable (AND). Default: tuned on the evaluated cells themselves (optimistic)."),
               Option("threshold", kind="float", metavar="T",
                      help="A fixed threshold instead of a tuned one: predicted positive when score > T (score < T "
                           "for a lower-is-better measure: T in each measure's own scale)."),
               K.but(help="Bootstrap resamples of the intervals and the paired tests (each re-tunes the threshold)."),
               ALPHA.but(help="Intervals 1 - alpha; tests' level."), SEED,
               ALTERNATIVE.but(help="H1 of the paired tests between metrics."),
               CORRECTION.but(help="Multiple-comparison correction of the paired tests."),
               CORRECTION_GROUP.but(help="The family corrected together: each metric_a's tests (per group and "
                                         "statistic), or all."),
               Option("tests", default=True, kind="switch", help="Paired tests between the metrics."),
               FORCE)
    presented = (LAYOUT,)
    positional = ("dataset", "human", "metrics")

    def compute(self, wh, **params):
        """:func:`metaeval.runs.factuality.detection.detection`: the ``detection`` rows of its setting (per
        metric and group, the macro average last) and the ``detection_tests`` rows (empty with one
        metric or ``tests=False``); the rows carry the run and what the output says of the setting
        (:func:`metaeval.runs.factuality.factuality_present.detection_said`)."""
        from metaeval.runs.factuality import detection
        from metaeval.runs.engine import signatures
        from metaeval.runs.factuality.factuality_present import detection_said
        from metaeval.runs.engine.family_present import with_run

        out = detection.detection(wh, **params)
        said = detection_said(out, params, signatures.table_signature(wh, out.rows))
        return {"detection": with_run(out.rows, said), "detection_tests": out.tests}

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        from metaeval.runs.factuality.factuality_present import detection_notes

        return detection_notes(outcome, fmt)

    def present(self, outcome, fmt: str, layout: str = "auto") -> str:
        """Text: the run, the setting, the rows and the tests; json and csv: both tables; markdown
        and latex: the paper tables (:func:`metaeval.runs.factuality.factuality_present.detection`)."""
        from metaeval.runs.factuality import factuality_present

        return factuality_present.detection(outcome, fmt, layout)


def _figure_file(value) -> None:
    from metaeval.runs.factuality.factuality_present import figure_file

    figure_file(value)


#: ``--out`` of categories' figure and its ``--overwrite`` (CLI-only: :attr:`Family.presented`)
FIGURE = Option("figure", flag="--out", renamed_from=("--figure",), metavar="FILE", check=_figure_file,
                help="Also draw the drop per category and metric (one --level and one --coefficient) to this file.")
OVERWRITE = Option("overwrite", default=False, kind="flag",
                   help="Replace the --out file (or report directory) if it exists. Never the warehouse.")


@register
class Categories(Family):
    """Error categories of the human judgment (FRANK's ablation, Pagnoni et al. 2021).

    For each metric, level, coefficient and category: r_category, the correlation with the
    category's measure (--category); r_overall, with the human judgment --human; r_without, with
    --human when the category is ignored (--ablation); drop = r_overall - r_without (> 0: the
    metric's agreement rests on that category). An undefined correlation (a constant category) is
    NaN (null), never 0."""

    name = "categories"
    topic = "metrics"
    headline = "Error categories of the human judgment: FRANK's ablation (Pagnoni 2021)."
    report = ("metaeval.runs.report.factuality:categories",)
    report_position = 30
    summary = "Error categories of the human judgment (FRANK's ablation, Pagnoni et al. 2021)."
    tables = ("error_categories",)
    options = (*SCOPE,
               Option("category_measures", multiple=True, metavar="CATEGORY=MEASURE", flag="--category",
                      help="An error category and its human measure (one judgment per error type). Repeatable."),
               Option("ablations", multiple=True, metavar="CATEGORY=MEASURE", flag="--ablation",
                      help="The overall judgment (--human) with CATEGORY ignored, as a human measure. Repeatable."))
    presented = (FIGURE, OVERWRITE, LAYOUT)
    positional = ("dataset", "human", "category_measures", "ablations", "metrics", "levels", "coefficients")
    aliases = {"categories": "category_measures"}
    shows_progress = True

    def compute(self, wh, *, dataset, human, category_measures, ablations, metrics, levels, coefficients, **params):
        """:func:`metaeval.runs.factuality.categories.categories`' rows (table ``error_categories``): each
        metric's correlation with each error category and the drop of its correlation with
        ``human`` when the category is ignored (``ablations``)."""
        from metaeval.runs.factuality import categories as family

        from metaeval.runs.factuality.factuality_present import categories_said
        from metaeval.runs.engine.family_present import with_run

        out = family.categories(wh, dataset, human, category_measures, ablations, metrics, levels, coefficients,
                                **params)
        frame = family.rows(wh, out)
        return with_run(frame, categories_said(wh, out, {"dataset": dataset, "human": human}, frame))

    def refusal(self, warehouse, params: dict, **shown):
        """What the command line refuses before it runs (a usage error's text, or None:
        :func:`~metaeval.runs.factuality.factuality_present.categories_refusal`)."""
        from metaeval.runs.factuality.factuality_present import categories_refusal

        return categories_refusal(warehouse, params, **shown)

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        from metaeval.runs.factuality.factuality_present import categories_notes

        return categories_notes(outcome, fmt, **shown)

    def present(self, outcome, fmt: str, figure=None, overwrite: bool = False, layout: str = "auto") -> str:
        """Text: the run, the rows, what drop is; json and csv: every column; markdown and latex:
        the paper table; with ``--out`` the figure of the drops too."""
        from metaeval.runs.factuality import factuality_present

        return factuality_present.categories(outcome, fmt, figure, overwrite, layout)
