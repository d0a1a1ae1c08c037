"""``metaeval correlate|ci|compare``: correlations with a human judgment, their confidence
intervals and the tests between metrics; each a call of :mod:`metaeval.runs.api`."""

from __future__ import annotations


import click

from metaeval.cli.app import (Context, error_text, fmt_option, interrupted, is_text, layout_option, report_outcome,
                              show, say)
from metaeval.cli.families import options_of
from metaeval.cli.progress import terminal_progress


def _analyse(obj: Context, call, fmt: str = "text", *params, **kwargs):
    """Run one :mod:`metaeval.runs.api` function (on the family's ``params`` object, or keywords),
    print what it computed (to stderr unless ``fmt`` is text, so that stdout holds only the rows);
    its Outcome and latest rows."""
    if params:
        params = (params[0].but(progress=terminal_progress()),)
    else:
        kwargs["progress"] = terminal_progress()
    with obj.open() as wh:
        try:
            out = call(wh, *params, **kwargs)
        except KeyboardInterrupt as exc:
            raise interrupted(exc, "the results finished so far are saved; "
                                   "run the same command again to resume") from None
        report_outcome(out, fmt)
        from metaeval.runs import annotators, signatures

        ceiling = annotators.ceilings(wh, out.scope.dataset, out.scope.human, out.scope.subset)
        return out, annotators.with_ceilings(signatures.with_signatures(wh, out.rows(wh)), ceiling)


def _echo_pairs_wrong(frame) -> None:
    """A Kendall interval read as the share of pairs ranked wrongly (Deutsch et al. 2021, section 6)."""
    rows = frame.dropna(subset=["pairs_wrong_lower", "pairs_wrong_upper"]) if "pairs_wrong_lower" in frame else frame[:0]
    if rows.empty:
        return
    click.echo("Pairs ranked otherwise than by the humans, from the Kendall interval ((1 - tau) / 2):")
    for r in rows.itertuples():
        click.echo(f"  {r.metric} ({r.level}, {r.coefficient}): "
                   f"{100 * r.pairs_wrong_lower:.0f}-{100 * r.pairs_wrong_upper:.0f}%")


def _echo_ceiling(frame) -> None:
    """The human ceiling of the shown levels and coefficients (stored by `metaeval annotators`)."""
    ceiling = frame.drop_duplicates(["level", "coefficient"]).dropna(subset=["human_ceiling"])
    if not ceiling.empty:
        from metaeval.runs import annotators

        say(f"human ceiling (leave-one-out, metaeval annotators): {annotators.ceiling_text(ceiling)}")


def _tied(coefficients, epsilon, tie_calibration):
    """The family's :func:`~metaeval.runs.correlation_families.tied`, its refusal a usage error."""
    from metaeval.errors import WarehouseError
    from metaeval.runs.correlation_families import tied

    try:
        return tied(coefficients, epsilon, tie_calibration)
    except WarehouseError as exc:
        raise click.UsageError(error_text(exc)) from None


@click.command()
@options_of("correlate")
@fmt_option()
@layout_option
@click.pass_obj
def correlate(obj, dataset, human, metrics, levels, coefficients, system_inputs, jobs, force, epsilon,
              tie_calibration, where, by, control, aggregate, fmt, layout):
    """Correlations of metrics with a human judgment (system, summary, global level).

    text: one row per metric, a column per level and coefficient; the other formats: the
    latest rows (json and csv with every column, conventions included)."""
    import pandas as pd

    from metaeval.runs import api

    coefficients = _tied(coefficients, epsilon, tie_calibration)
    kwargs = dict(dataset=dataset, human=human, metrics=metrics, levels=levels, coefficients=coefficients,
                  system_inputs=system_inputs, jobs=jobs, force=force, control=control, aggregate=aggregate)
    if by is not None:
        _by(obj, "correlate", fmt, layout, by, where, kwargs)
        return
    _, frame = _analyse(obj, api.correlate, fmt, where=where, **kwargs)
    if fmt in ("json", "csv"):
        show(frame, fmt)
        return
    caption = f"Correlation with {human} on {dataset}{_subset_text(where)}: {_conventions(frame)}."
    _paper(frame.rename(columns={"value": "correlation"}), fmt, caption, layout)
    if is_text(fmt):
        _echo_ceiling(frame)
        _echo_aggregate(frame)


def _echo_aggregate(frame) -> None:
    """Text: say that the system scores are medians (``--aggregate median``), which the table does not show."""
    if ("aggregate" in frame and len(frame) and len(set(frame["aggregate"])) == 1
            and frame["aggregate"].iloc[0] != "mean"):
        say(f"A system's score: {_aggregate_text(frame['aggregate'].iloc[0])}.")


def _aggregate_text(aggregate: str) -> str:
    """How a system's score is made under ``aggregate`` (the metric's, then the human's after /)."""
    from metaeval.runs.parameters import aggregate_sides

    metric, human = aggregate_sides(aggregate)
    flags = " ".join(f"--{name} {value}" for name, value in (("aggregate", metric), ("human-aggregate", human))
                     if value != "mean")
    return f"the metric's {metric} over its inputs, the human's {human} ({flags})"


def _subset_text(where) -> str:
    """`` (subset split=test)`` for a caption; '' for every cell."""
    from metaeval.runs import selection

    label = selection.subset_label(where)
    return f" (subset {label})" if label else ""


def _by(obj: Context, command: str, fmt: str, layout: str, by: str, where, kwargs: dict) -> None:
    """``--by ATTR``: one result per value of ATTR (each with ``where``) and their macro average
    (:func:`metaeval.runs.subsets.by_attribute`); a table per subset (text), or every row."""
    from metaeval.runs import subsets

    err = not is_text(fmt)
    with obj.open() as wh:
        try:
            result = subsets.by_attribute(wh, command, by, where, progress=terminal_progress(), **kwargs)
        except KeyboardInterrupt as exc:
            raise interrupted(exc, "the results finished so far are saved; "
                                   "run the same command again to resume") from None
        for line in result.messages():
            say(line, err=err)
        frame = result.rows(wh)
    if fmt in ("json", "csv"):
        show(frame, fmt)
        return
    value = "estimate" if command == "ci" else "value"
    for subset, rows in frame.groupby("subset", sort=False):
        caption = (f"{'Correlation' if command == 'correlate' else 'Correlation and CI'} with {kwargs['human']} on "
                   f"{kwargs['dataset']}, subset {subset}: {_conventions(rows)}.")
        if is_text(fmt):
            say(f"subset {subset}:")
        _paper(rows.rename(columns={value: "correlation"}), fmt, caption, layout,
               **({"confidence": 1 - kwargs["alpha"], "keep_ci": True} if command == "ci" else {}))


def _conventions(frame) -> str:
    """Level(s), coefficient(s), systems x inputs, the system-score protocol of the rows and
    the signature they share (:mod:`metaeval.analyses.signature`), for a caption."""
    from metaeval.analyses import signature
    from metaeval.runs.evaluate import SYSTEM_INPUTS_TEXT

    levels = list(dict.fromkeys(frame["level"]))
    parts = [f"level {', '.join(levels)}", f"coefficient {', '.join(dict.fromkeys(frame['coefficient']))}"
             + (" (Kendall's tau-b)" if "kendall" in set(frame["coefficient"]) else "")]
    if {"n_systems", "n_inputs"} <= set(frame.columns) and len(frame):
        parts.append(f"{int(frame['n_systems'].max())} systems x {int(frame['n_inputs'].max())} inputs")
    protocols = sorted(set(frame["system_inputs"].dropna())) if "system_inputs" in frame else []
    if "system" in levels and len(protocols) == 1:
        parts.append(f"system scores: {SYSTEM_INPUTS_TEXT.get(protocols[0], protocols[0])} "
                     f"(--system-inputs {protocols[0]})")
    if "aggregate" in frame and len(set(frame["aggregate"])) == 1 and frame["aggregate"].iloc[0] != "mean":
        parts.append(f"a system's score {_aggregate_text(frame['aggregate'].iloc[0])}")
    if "signature" in frame.columns and (common := signature.shared(frame["signature"])):
        parts.append(f"signature {common}")
    return "; ".join(parts)


def _paper(frame, fmt: str, caption: str, layout: str = "auto", **ranking) -> None:
    """A ranking of metrics (correlation, optional lower/upper/cluster, human ceiling) as the paper
    table (latex), or the markdown or text that agree with it (same order, same bold)."""
    from metaeval.analyses import ranking_tables

    r = ranking_tables.Ranking(frame, **ranking)
    if fmt == "latex":
        click.echo(r.latex(caption, layout), nl=False)
    elif fmt == "markdown":
        click.echo(r.markdown(caption), nl=False)
    else:
        click.echo(ranking_tables.Ranking(frame, ceiling=False, **ranking).text(), nl=False)


@click.command()
@options_of("ci")
@fmt_option()
@layout_option
@click.pass_obj
def ci(obj, dataset, human, metrics, levels, coefficients, system_inputs, jobs, force, method, k, seed, alpha,
       resample_annotators, epsilon, tie_calibration, where, by, control, aggregate, resample_clusters, replicates,
       fmt, layout):
    """Confidence intervals of correlations (Fisher or bootstrap over systems/inputs/both)."""
    from metaeval.runs import api

    coefficients = _tied(coefficients, epsilon, tie_calibration)
    kwargs = dict(dataset=dataset, human=human, metrics=metrics, levels=levels, coefficients=coefficients,
                  system_inputs=system_inputs, jobs=jobs, force=force, method=method, k=k, alpha=alpha, seed=seed,
                  resample_annotators=resample_annotators, control=control, aggregate=aggregate,
                  resample_clusters=resample_clusters, replicates=replicates)
    if by is not None:
        _by(obj, "ci", fmt, layout, by, where, kwargs)
        return
    from metaeval.runs import intervals

    out, frame = _analyse(obj, api.ci, fmt, where=where, **kwargs)
    frame = intervals.with_pairs_wrong(frame)
    if fmt in ("json", "csv"):
        show(frame, fmt)
        _echo_widening(obj, out, fmt)
        return
    caption = (f"Correlation with {human} on {dataset}{_subset_text(where)} and its {100 * (1 - alpha):g}% {method} confidence interval"
               + ("" if method == "fisher" else f" (k={k}, seed={seed})")
               + (f", annotators re-drawn ({resample_annotators})" if resample_annotators else "")
               + (f", clusters of inputs resampled ({resample_clusters})" if resample_clusters else "")
               + (", each cell's runs of a metric resampled" if replicates == "resample" else "")
               + f": {_conventions(frame)}.")
    _paper(frame.rename(columns={"estimate": "correlation"}), fmt, caption, layout, confidence=1 - alpha, keep_ci=True)
    if is_text(fmt):
        _echo_ceiling(frame)
        _echo_pairs_wrong(frame)
        _echo_aggregate(frame)
    _echo_widening(obj, out, fmt)


def _echo_widening(obj: Context, out, fmt: str) -> None:
    """A clustered ci: where clustering widened each interval (said on every format; on stderr
    unless the format is text)."""
    from metaeval.runs import clusters

    if getattr(out.analysis.params, "resample_clusters", None) is None:
        return
    with obj.open() as wh:
        lines = clusters.widening(wh, out)
    for line in lines:
        say(line, err=not is_text(fmt))


@click.command()
@options_of("compare")
@fmt_option()
@layout_option
@click.pass_obj
def compare(obj, fmt, layout, **given):
    """Test every ordered pair of metrics: is corr(a, human) > corr(b, human)?"""
    from metaeval.runs import api
    from metaeval.runs.families import family

    p = family("compare").parameters(**given)   # one object, from here to the analysis
    out, frame = _analyse(obj, api.compare, fmt, p)
    frame = frame[(frame["correction"] == p.correction) & (frame["correction_group"] == p.correction_group)]
    from metaeval.runs import ranking as ranking_runs

    from metaeval.analyses import stored_tests

    for line in ranking_runs.stored_tests(frame, p.method, p.correction, p.correction_group).notes(p.alpha):
        say(stored_tests.not_a_finding(line), err=not is_text(fmt))   # said on every format
    if p.resample_clusters is not None:
        say(f"Clusters of inputs resampled whole ({p.resample_clusters}): drawn by the bootstrap, swapped together by "
            "the permutation tests (resampling only systems is unchanged).", err=not is_text(fmt))
    cols = ["metric_a", "metric_b", "level", "coefficient", "delta", "p_value", "p_adjusted", "significant"]
    if fmt in ("json", "csv"):  # every row and column; the hints below are for a terminal
        show(frame, fmt)
        return
    if not is_text(fmt):
        from metaeval.analyses import conclusions, ranking_tables
        from metaeval.runs import comparisons

        frame = conclusions.with_floors(frame, comparisons.pvalue_formula(p.method), _n_valid(frame))
        caption = (f"{p.method} tests ({p.alternative}, k={p.k}, seed={p.seed}) of the difference in correlation "
                   f"with {p.human} on {p.dataset}{_subset_text(p.where)}: {_conventions(frame)}; correction "
                   f"{p.correction} per {p.correction_group}, alpha={p.alpha:g}.")
        if fmt == "latex":
            click.echo(ranking_tables.tests_latex(frame, caption, alpha=p.alpha, layout=layout), nl=False)
        else:
            click.echo(ranking_tables.tests_markdown(frame, caption, alpha=p.alpha), nl=False)
        return
    if len(frame) <= 60:
        from metaeval.analyses import conclusions, ranking_tables
        from metaeval.runs import comparisons

        printed = conclusions.printed_pvalues(frame, comparisons.pvalue_formula(p.method), _n_valid(frame))
        show(ranking_tables.sort_tests(printed)[cols].round(4), "table")   # in the LaTeX table's order
    n = int(frame["significant"].fillna(False).astype(bool).sum())
    if p.sequential:
        _echo_sequential(frame)
    say(f"{n} of {len(frame)} ordered pairs significant at alpha={p.alpha} ({p.correction}); draw them with:")
    for level in out.scope.levels:
        for coefficient in out.scope.coefficients:
            say("  " + obj.heatmap_command(out.scope.dataset, out.scope.human, level, coefficient, p.method,
                                           p.alternative, p.correction, p.correction_group, p.alpha,
                                           f"tests-{level}-{coefficient}.png"))


def _echo_sequential(frame) -> None:
    """How the sequential tests ended: decided (significant / not) or undecided at k_max, and
    the resamples they drew."""
    import json

    decisions = frame["conventions"].map(lambda c: json.loads(c).get("sequential", {}).get("decision", "undefined"))
    counts = decisions.value_counts()
    parts = [f"{int(counts.get(d, 0))} {d}" for d in ("significant", "not significant", "undecided", "undefined")
             if counts.get(d, 0)]
    say(f"sequential (MMCTest): {', '.join(parts)}; {int(frame['k_used'].sum())} resamples in all "
               f"(k_max {int(frame['k'].max())} per pair)")
    if counts.get("undecided", 0):
        say("  undecided pairs are not significant: their p-value is too close to its corrected threshold "
                   "for k_max; raise --k-max to decide them")



def _n_valid(frame) -> list | None:
    """Each compare row's valid resamples (the layer's :func:`~metaeval.analyses.stored_tests.conventions_n_valid`)."""
    from metaeval.analyses import stored_tests

    return stored_tests.conventions_n_valid(frame) if "conventions" in frame else None


COMMANDS = [correlate, ci, compare]
