"""What ``metaeval correlate``, ``ci`` and ``compare`` print: the present of their families
(:mod:`metaeval.runs.metrics.correlation_families`).

A family's rows carry what its run did and the settings its captions name (:class:`Said`, by
:func:`metaeval.runs.engine.family_present.with_run`), so that ``wh.correlate(...)`` returns the rows the
command prints, and the command prints them from the rows alone. Text: the run's lines, then the
ranking of metrics (:class:`metaeval.present.ranking_tables.Ranking`) and its notes; markdown and
LaTeX: the paper's table, captioned; json and csv: every row and column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from metaeval.runs.engine.family_present import TEXT, prose, run_of


@dataclass(frozen=True)
class Said:
    """What a correlation family's run did, carried by its rows: the metrics it left out
    (``skipped``, on standard error on every format), what it ran (``run``: with the rows in text,
    else on standard error), what is said after the rows (``after``: a clustered ci's widening, on
    every format), the checked ``params`` its captions name, whether the rows are ``by`` an
    attribute's values, and the ``plot heatmap`` commands of compare's settings (``heatmaps``: Hints)."""

    params: dict[str, Any]
    skipped: tuple[str, ...] = ()
    run: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    by: bool = False
    heatmaps: tuple = field(default=())


def notes(rows, fmt: str, findings: list[str] | None = None) -> list[str]:
    """What the command says on standard error before the rows: the metrics left out, and outside
    text what the run did (and ``findings``: compare's notes), then ``after``."""
    said = run_of(rows)
    if said is None:
        return []
    if fmt in TEXT:
        return list(said.skipped)
    return [*said.skipped, *said.run, *(findings or []), *said.after]


def aggregate_text(aggregate: str) -> str:
    """How a system's score is made under ``aggregate`` (the metric's, then the human's after /)."""
    from metaeval.runs.engine.parameters import aggregate_sides

    metric, human = aggregate_sides(aggregate)
    flags = " ".join(f"--{name} {value}" for name, value in (("aggregate", metric), ("human-aggregate", human))
                     if value != "mean")
    return f"the metric's {metric} over its inputs, the human's {human} ({flags})"


def subset_text(where) -> str:
    """`` (subset split=test)`` for a caption; '' for every cell."""
    from metaeval.runs.engine.subset import subset_label

    label = subset_label(where)
    return f" (subset {label})" if label else ""


def conventions(frame) -> str:
    """Level(s), coefficient(s), systems x inputs, the system-score protocol of the rows and
    the signature they share (:mod:`metaeval.analyses.signature`), for a caption."""
    from metaeval.analyses import signature
    from metaeval.runs.metrics.evaluate import SYSTEM_INPUTS_TEXT

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
        parts.append(f"a system's score {aggregate_text(frame['aggregate'].iloc[0])}")
    if "signature" in frame.columns and (common := signature.shared(frame["signature"])):
        parts.append(f"signature {common}")
    return "; ".join(parts)


def paper(frame, fmt: str, caption: str, layout: str = "auto", **ranking) -> str:
    """A ranking of metrics (correlation, optional lower/upper/cluster, human ceiling) as the paper
    table (latex), or the markdown or text that agree with it (same order, same bold)."""
    from metaeval.present import ranking_tables

    r = ranking_tables.Ranking(frame, **ranking)
    if fmt == "latex":
        return r.latex(caption, layout)
    if fmt == "markdown":
        return r.markdown(caption)
    return ranking_tables.Ranking(frame, ceiling=False, **ranking).text()


def _ceiling(frame) -> list[str]:
    """The human ceiling of the shown levels and coefficients (stored by `metaeval annotators`)."""
    if "human_ceiling" not in frame:
        return []
    ceiling = frame.drop_duplicates(["level", "coefficient"]).dropna(subset=["human_ceiling"])
    if ceiling.empty:
        return []
    from metaeval.runs.agreement import annotators

    return [f"human ceiling (leave-one-out, metaeval annotators): {annotators.ceiling_text(ceiling)}"]


def _aggregate(frame) -> list[str]:
    """Text: that the system scores are medians (``--aggregate median``), which the table does not show."""
    if ("aggregate" in frame and len(frame) and len(set(frame["aggregate"])) == 1
            and frame["aggregate"].iloc[0] != "mean"):
        return [f"A system's score: {aggregate_text(frame['aggregate'].iloc[0])}."]
    return []


def _pairs_wrong(frame) -> str:
    """A Kendall interval read as the share of pairs ranked wrongly (Deutsch et al. 2021, section 6)."""
    rows = frame.dropna(subset=["pairs_wrong_lower", "pairs_wrong_upper"]) if "pairs_wrong_lower" in frame else frame[:0]
    if rows.empty:
        return ""
    return "".join(["Pairs ranked otherwise than by the humans, from the Kendall interval ((1 - tau) / 2):\n",
                    *(f"  {r.metric} ({r.level}, {r.coefficient}): "
                      f"{100 * r.pairs_wrong_lower:.0f}-{100 * r.pairs_wrong_upper:.0f}%\n" for r in rows.itertuples())])


def _by(rows, command: str, fmt: str, layout: str, p: dict) -> str:
    """``--by ATTR``: a table per subset (text: each after its ``subset X:`` line), or every row."""
    from metaeval.present import tables

    if fmt in ("json", "csv"):
        return tables.render(rows, fmt)
    value, out = "estimate" if command == "ci" else "value", []
    for subset, part in rows.groupby("subset", sort=False):
        caption = (f"{'Correlation' if command == 'correlate' else 'Correlation and CI'} with {p['human']} on "
                   f"{p['dataset']}, subset {subset}: {conventions(part)}.")
        if fmt in TEXT:
            out.append(prose(f"subset {subset}:"))
        out.append(paper(part.rename(columns={value: "correlation"}), fmt, caption, layout,
                         **({"confidence": 1 - p["alpha"], "keep_ci": True} if command == "ci" else {})))
    return "".join(out)


def correlation_text(rows, command: str, fmt: str, layout: str = "auto") -> str:
    """correlate / ci (``command``): text, the run's lines, the ranking, the human ceiling, (ci) the
    pairs a Kendall interval ranks wrongly, the aggregate and (ci) the widening of clustered
    intervals; markdown and latex: the paper's table; json and csv: every row and column."""
    from metaeval.present import tables

    said = run_of(rows)
    p = said.params
    out = [prose(*said.run)] if fmt in TEXT else []
    if said.by:
        return "".join(out) + _by(rows, command, fmt, layout, p)
    if fmt in ("json", "csv"):
        return tables.render(rows, fmt)
    if command == "correlate":
        caption = f"Correlation with {p['human']} on {p['dataset']}{subset_text(p['where'])}: {conventions(rows)}."
        out.append(paper(rows.rename(columns={"value": "correlation"}), fmt, caption, layout))
        if fmt in TEXT:
            out.append(prose(*_ceiling(rows), *_aggregate(rows)))
        return "".join(out)
    method, alpha = p["method"], p["alpha"]
    caption = (f"Correlation with {p['human']} on {p['dataset']}{subset_text(p['where'])} and its "
               f"{100 * (1 - alpha):g}% {method} confidence interval"
               + ("" if method == "fisher" else f" (k={p['k']}, seed={p['seed']})")
               + (f", annotators re-drawn ({p['resample_annotators']})" if p["resample_annotators"] else "")
               + (f", clusters of inputs resampled ({p['resample_clusters']})" if p["resample_clusters"] else "")
               + (", each cell's runs of a metric resampled" if p.get("replicates") == "resample" else "")
               + f": {conventions(rows)}.")
    out.append(paper(rows.rename(columns={"estimate": "correlation"}), fmt, caption, layout, confidence=1 - alpha,
                     keep_ci=True))
    if fmt in TEXT:
        out += [prose(*_ceiling(rows)), _pairs_wrong(rows), prose(*_aggregate(rows), *said.after)]
    return "".join(out)


# --- compare ------------------------------------------------------------------------------------
def _n_valid(frame) -> list | None:
    """Each compare row's valid resamples (the layer's :func:`~metaeval.analyses.stored_tests.conventions_n_valid`)."""
    from metaeval.analyses import stored_tests

    return stored_tests.conventions_n_valid(frame) if "conventions" in frame else None


def findings(rows) -> list[str]:
    """compare's notes on every format: the tests that cannot resolve (the conclusion layer's "not
    a finding" lines), and that clusters of inputs were resampled whole."""
    from metaeval.analyses import stored_tests
    from metaeval.runs.metrics import ranking

    p = run_of(rows).params
    out = [stored_tests.not_a_finding(line) for line in
           ranking.stored_tests(rows, p["method"], p["correction"], p["correction_group"]).notes(p["alpha"])]
    if p["resample_clusters"] is not None:
        out.append(f"Clusters of inputs resampled whole ({p['resample_clusters']}): drawn by the bootstrap, swapped "
                   "together by the permutation tests (resampling only systems is unchanged).")
    return out


def _sequential(frame) -> list[str]:
    """How the sequential tests ended: decided (significant / not) or undecided at k_max, and
    the resamples they drew."""
    import json

    decisions = frame["conventions"].map(lambda c: json.loads(c).get("sequential", {}).get("decision", "undefined"))
    counts = decisions.value_counts()
    parts = [f"{int(counts.get(d, 0))} {d}" for d in ("significant", "not significant", "undecided", "undefined")
             if counts.get(d, 0)]
    out = [f"sequential (MMCTest): {', '.join(parts)}; {int(frame['k_used'].sum())} resamples in all "
           f"(k_max {int(frame['k'].max())} per pair)"]
    if counts.get("undecided", 0):
        out.append("  undecided pairs are not significant: their p-value is too close to its corrected threshold "
                   "for k_max; raise --k-max to decide them")
    return out


#: the columns of compare's text table
COMPARE_COLUMNS = ["metric_a", "metric_b", "level", "coefficient", "delta", "p_value", "p_adjusted", "significant"]


def compare_text(rows, fmt: str, layout: str = "auto", hint=None) -> str:
    """compare: text, the run's lines and notes, the tests (up to 60, in the LaTeX table's order),
    the number significant and the ``plot heatmap`` command of each setting (``hint`` writes a
    Hint as a command line); markdown and latex: the paper's table of tests; json and csv: every
    row and column."""
    from metaeval.analyses import conclusions
    from metaeval.present import ranking_tables, tables
    from metaeval.runs.metrics import comparisons

    said = run_of(rows)
    p = said.params
    if fmt in ("json", "csv"):
        return tables.render(rows, fmt)
    if fmt not in TEXT:
        frame = conclusions.with_floors(rows, comparisons.pvalue_formula(p["method"]), _n_valid(rows))
        caption = (f"{p['method']} tests ({p['alternative']}, k={p['k']}, seed={p['seed']}) of the difference in "
                   f"correlation with {p['human']} on {p['dataset']}{subset_text(p['where'])}: {conventions(frame)}; "
                   f"correction {p['correction']} per {p['correction_group']}, alpha={p['alpha']:g}.")
        if fmt == "latex":
            return ranking_tables.tests_latex(frame, caption, alpha=p["alpha"], layout=layout)
        return ranking_tables.tests_markdown(frame, caption, alpha=p["alpha"])
    out = [prose(*said.run, *findings(rows))]
    if len(rows) <= 60:
        printed = conclusions.printed_pvalues(rows, comparisons.pvalue_formula(p["method"]), _n_valid(rows))
        out.append(tables.render(ranking_tables.sort_tests(printed)[COMPARE_COLUMNS].round(4), "table"))
    n = int(rows["significant"].fillna(False).astype(bool).sum())
    if hint is None:
        from metaeval.errors import Hint

        def hint(h: Hint) -> str:
            return str(h)
    lines = _sequential(rows) if p["sequential"] else []
    lines.append(f"{n} of {len(rows)} ordered pairs significant at alpha={p['alpha']} ({p['correction']}); "
                 "draw them with:")
    out.append(prose(*lines, *("  " + hint(h) for h in said.heatmaps)))
    return "".join(out)


def heatmaps(scope, p: dict) -> tuple:
    """The ``plot heatmap`` Hints drawing the tests of each level and coefficient of ``scope``."""
    from metaeval.errors import Hint

    return tuple(Hint("heatmap", (("dataset", scope.dataset), ("human", scope.human), ("level", level),
                                  ("coefficient", coefficient), ("method", p["method"]),
                                  ("alternative", p["alternative"]), ("correction", p["correction"]),
                                  ("correction_group", p["correction_group"]), ("alpha", p["alpha"]),
                                  ("out", f"tests-{level}-{coefficient}.png")))
                 for level in scope.levels for coefficient in scope.coefficients)


# --- plot ci ------------------------------------------------------------------------------------
def _medians(aggregate: str) -> str:
    """``, system medians`` for a figure's title (nothing for the mean)."""
    from metaeval.runs.engine.parameters import aggregate_sides

    if aggregate == "mean":
        return ""
    metric, human = aggregate_sides(aggregate)
    return f", system {metric}s" if human == "mean" else f", system {metric}s (metric), {human}s (human)"


def _ci_hint(wh, dataset, human, level, coefficient, method, alpha, aggregate):
    """The ``ci`` call computing the rows plot ci draws (a Hint on this warehouse)."""
    from metaeval.errors import Hint
    from metaeval.runs.engine.parameters import aggregate_sides

    metric, side = aggregate_sides(aggregate)
    extra = ((("aggregate", metric),) if metric != "mean" else ()) + \
        ((("human_aggregate", side),) if side != "mean" else ())
    return Hint("ci", (("dataset", dataset), ("human", human), ("level", level), ("coefficient", coefficient),
                       ("method", method), ("alpha", alpha), *extra), db=str(wh.path))


def plot_ci(wh, *, dataset, human, level, coefficient, out, overwrite, method, alpha, aggregate):
    """The forest plot of the latest ``confidence_intervals`` rows of one setting, the human
    ceiling as a line, written to ``out`` (replaced only with ``overwrite``); its path. No rows:
    an error naming the ``ci`` that computes them and the settings stored."""
    from pathlib import Path

    import matplotlib.pyplot as plt

    from metaeval import files
    from metaeval.present import figures
    from metaeval.errors import Message, WarehouseError
    from metaeval.runs.agreement import annotators
    from metaeval.runs.engine import analyse as engine

    where = dict(dataset=dataset, human=human, level=level, coefficient=coefficient, method=method, alpha=alpha,
                 aggregate=aggregate)
    settings = ("level", "coefficient", "method", "alpha", "aggregate")
    rows, stored = engine.setting_rows(wh, "confidence_intervals", where, list(settings))
    if rows.empty:
        def said(values) -> str:
            return " ".join(f"--{c.replace('_', '-')} {values[c]}" for c in settings)
        message = [f"no confidence intervals of {dataset} against {human} with {said(where)}: run `",
                   _ci_hint(wh, dataset, human, level, coefficient, method, alpha, aggregate), "` first"]
        if not stored.empty:
            message.append("; stored: " + " | ".join(said(r) for r in stored.to_dict("records")))
        raise WarehouseError(Message(*message))
    ceiling = annotators.ceilings(wh, dataset, human)
    ceiling = ceiling[(ceiling["level"] == level) & (ceiling["coefficient"] == coefficient)]
    line = (tuple(float(ceiling[c].iloc[0]) for c in ("human_ceiling", "human_ceiling_lower", "human_ceiling_upper"))
            if not ceiling.empty and ceiling["human_ceiling"].notna().iloc[0] else None)
    fig = figures.ci_forest(rows, f"{1 - alpha:.0%} {method} CIs, {level} level{_medians(aggregate)}, "
                                  f"{coefficient}, against {human}", line)
    out = Path(out)
    try:
        with files.atomic_file(out, warehouse=wh.path, overwrite=overwrite) as tmp:
            fig.savefig(tmp, dpi=150, format=out.suffix[1:].lower())
    finally:
        plt.close(fig)
    return out
