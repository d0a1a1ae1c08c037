"""The agreement families: do metrics agree with each other (``agreement``: its computation
:mod:`metaeval.runs.agreement.score_ranges`, with ``--bins`` :mod:`metaeval.runs.agreement.agreement_curves`), and do the
annotators (``annotators``: :mod:`metaeval.runs.agreement.annotators`)?

This module is read when the command line starts: it imports its computation inside ``compute``.
"""

from __future__ import annotations

from metaeval.runs.agreement.agreement_curves import BASELINE as CURVE_BASELINE, BINS as CURVE_BINS, PAIRS as CURVE_PAIRS
from metaeval.runs.agreement.agreement_curves import PROTOCOL as CURVE_PROTOCOL
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import (ALPHA, DATASET, FORCE, JOBS, K, LEVELS, METRICS, PLAIN_COEFFICIENTS, SEED,
                                          WHERE, Option)
from metaeval.runs.engine.shared_options import LAYOUT


def _check_splits(splits) -> None:
    """``splits`` of annotators: an integer >= 1 (the command line's range; from Python a
    WarehouseError, not the ValueError of :func:`metaeval.analyses.annotators.split_half`)."""
    from metaeval.errors import Argument, Message, WarehouseError

    if isinstance(splits, bool) or not isinstance(splits, int) or splits < 1:
        raise WarehouseError(Message(Argument("splits", splits), " must be an integer >= 1"))


@register
class Agreement(Family):
    """Do metrics agree with each other in the low, middle and top of each input's score range?

    Kendall tau between every pair of metrics over the summaries of each input in the bottom,
    middle and top third of its score range (L, M, T) and cumulatively (L+M+T, M+T), averaged
    over inputs; pairwise disagreement by bin with a random-score baseline; input properties
    (ease of summarisation; abstractiveness and coverage when documents are stored) and the
    correlation of per-input tau with each.
    """

    name = "agreement"
    topic = "metrics"
    headline = "Do metrics agree with each other in the low, middle and top of the range?"
    report = ("metaeval.runs.report.agreement:agreement",)
    report_position = 110
    summary = "Do metrics agree with each other in the low, middle and top of each input's score range?"
    tables = ("score_range_agreement", "input_properties", "property_agreement", "agreement_curves")
    options = (DATASET.but(help="Dataset to analyse (no human judgment needed)."),
               METRICS.but(help="Metrics (globs over automatic measures); their mean normalised score defines each "
                                "input's score range. Default: all. Repeatable."),
               ALPHA.but(help="Significance level of the per-input Kendall taus."),
               Option("significant_only", default=False, kind="flag",
                      help="Average only per-input taus with p <= alpha (the paper's setting)."),
               Option("normalisation", default="input", kind="choice",
                      choices="metaeval.analyses.agreement:NORMALISATIONS",
                      help="Min-max normalise each metric over each input's summaries, or over the whole dataset, "
                           "before averaging them into the consensus score."),
               CURVE_BINS, CURVE_PROTOCOL, CURVE_PAIRS, CURVE_BASELINE,
               SEED.but(help="--bins: seed of the pair sampling and of the random scores; recorded with every row."),
               JOBS, FORCE)
    positional = ("dataset", "metrics")
    shows_progress = True
    #: the help of its command's --format (:func:`metaeval.cli.families.command_of`)
    format_help = ("text: the tau tables and means; json, csv, markdown, latex: the latest rows of "
                   "score_range_agreement and property_agreement (json: an object with one list each).")

    def compute(self, wh, *, dataset, metrics, **params):
        """:func:`metaeval.runs.agreement.score_ranges.run_agreement`: ``score_range_agreement`` and
        ``property_agreement`` rows of its setting (and ``agreement_curves`` with ``bins``); the
        first carrying the runs' lines and what the text says (:func:`with_run`)."""
        from metaeval.runs.agreement import score_ranges as agreement
        from metaeval.runs.agreement.agreement_present import agreement_lines
        from metaeval.runs.engine.family_present import with_run

        scope = agreement.resolve(wh, dataset, metrics)
        summary = agreement.run_agreement(wh, scope, **params)
        alpha, significant_only = params["alpha"], params["significant_only"]
        said = {"lines": agreement_lines(summary), "n_metrics": len(scope.metrics), "dataset": dataset,
                "db": None if getattr(wh, "path", None) is None else str(wh.path)}
        return {"score_range_agreement": with_run(agreement.latest_rows(wh, scope, params["normalisation"], alpha,
                                                                        significant_only), said),
                "property_agreement": agreement.latest_property_rows(wh, scope, alpha, significant_only),
                **({} if summary.curves is None else {"agreement_curves": summary.curves})}

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        from metaeval.runs.agreement.agreement_present import agreement_notes

        return agreement_notes(outcome, fmt)

    def present(self, outcome, fmt: str) -> str:
        """Text: the runs, the tau tables and means; json, csv, markdown, latex: the latest rows of
        score_range_agreement and property_agreement (json: an object with one list each)."""
        from metaeval.runs.agreement import agreement_present

        return agreement_present.agreement(outcome, fmt)


@register
class Annotators(Family):
    """How much the annotators agree, and the human ceiling.

    Per human measure: annotators per cell, Krippendorff's alpha (interval, ordinal), the mean
    pairwise correlation between annotators, and the ceiling -- the leave-one-annotator-out
    correlation (mean over annotators of Corr(one, mean of the others), with a Boot-Both CI) and
    the split-half estimate (Spearman-Brown corrected) -- at each level and coefficient. Tables
    annotator_agreement and human_ceiling.
    """

    name = "annotators"
    topic = "metrics"
    summary = "How much the annotators agree, and the human ceiling."
    tables = ("annotator_agreement", "human_ceiling")
    options = (DATASET,
               Option("humans", multiple=True, metavar="GLOB", flag="--human",
                      help="Human measures (globs), e.g. 'expert.*'. Default: every human measure. Repeatable."),
               LEVELS.but(help="Level(s) of the correlations. Default: all three."), PLAIN_COEFFICIENTS,
               K.but(help="Boot-Both resamples of the leave-one-out ceiling's interval."), ALPHA,
               Option("splits", default=100, kind="int", minimum=1, check=_check_splits,
                      help="Random splits of the split-half estimate."),
               SEED, FORCE, WHERE)
    presented = (LAYOUT,)
    positional = ("dataset", "humans", "levels", "coefficients")

    def compute(self, wh, *, dataset, **params):
        """:func:`metaeval.runs.agreement.annotators.annotators`: ``annotator_agreement`` and ``human_ceiling``
        rows of the subset ``where``, the agreement rows carrying each human's run line and the
        captions' settings (:func:`metaeval.runs.engine.family_present.with_run`)."""
        from metaeval.runs.agreement import annotators
        from metaeval.runs.engine.family_present import with_run
        from metaeval.runs.engine.subset import subset_label

        summaries = annotators.annotators(wh, dataset, **params)
        agreement, ceiling = annotators.latest(wh, dataset, [s.human for s in summaries], subset_label(params["where"]))
        lines = [f"{s.human}: " + ("up to date; nothing computed" if s.run_id is None else
                                   f"run {s.run_id}: wrote {s.rows} rows") for s in summaries]
        said = {"lines": lines, "dataset": dataset, **{k: params[k] for k in ("levels", "coefficients", "k", "alpha",
                                                                              "splits", "seed")}}
        return {"annotator_agreement": with_run(agreement, said), "human_ceiling": ceiling}

    def notes(self, outcome, fmt: str, **shown) -> list[str]:
        from metaeval.runs.agreement.agreement_present import annotators_notes

        return annotators_notes(outcome, fmt)

    def present(self, outcome, fmt: str, layout: str = "auto") -> str:
        """Text: each human's run, then the agreement statistics and the ceilings; json and csv:
        both tables; markdown and latex: the paper tables."""
        from metaeval.runs.agreement import agreement_present

        return agreement_present.annotators(outcome, fmt, layout)
