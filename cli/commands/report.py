"""``metaeval report`` and ``metaeval plot``: figures from the persisted results."""

from __future__ import annotations

from pathlib import Path

import click

from metaeval import files
from metaeval.cli.app import ALPHA, OVERWRITE, CoefficientChoice, Context, LazyChoice, argument_text, out_file, say
from metaeval.cli.families import options_of
from metaeval.cli.sections import topic
from metaeval.errors import WarehouseError
from metaeval.runs.metrics.correlation_families import FIGURE_SUFFIXES  # the file types of --out, declared once


#: The file types ``metaeval report`` writes: one self-contained HTML page.
REPORT_SUFFIXES = (".html", ".htm")


@topic("start")
@click.command(short_help="Write DATASET's report: one self-contained HTML file.")
@click.option("--dataset", required=True)
@click.option("--human", default=None, help="Only results against this human judgment. Default: all.")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              callback=out_file(*REPORT_SUFFIXES),
              help="The HTML file to write: one self-contained page (figures and tables inside, nothing fetched "
                   "from the network), e.g. report.html.")
@OVERWRITE
@click.pass_obj
def report(obj: Context, dataset, human, out, overwrite):
    """Write DATASET's report, one self-contained HTML file: first the metrics ranked by their
    correlation with the human judgment (intervals, significance clusters, human ceiling), then
    the figures, then the dataset, measures and the runs behind every number."""
    from metaeval.runs import report as reporting

    with obj.open(read_only=True) as wh:
        path, n = reporting.build(wh, dataset, out, human, overwrite=overwrite,
                                  words=reporting.Words(obj.hint, argument_text))
    say(f"wrote {path} with {n} figure(s)")


@topic("output")
@click.group()
def plot():
    """Draw one figure of the persisted results to a file (.png, .svg or .pdf)."""


def _generated() -> None:
    """``plot ci``: the family ``plot-ci``'s generated command (:mod:`metaeval.runs.metrics.correlation_families`)."""
    from metaeval.cli.families import command_of
    from metaeval.runs.engine.families import FAMILIES

    plot.add_command(command_of(FAMILIES["plot-ci"], name="ci"))


_generated()


def _options(settings: dict) -> str:
    return " ".join(f"--{c.replace('_', '-')} {v}" for c, v in settings.items())


def _rows(obj: Context, table: str, where: dict, options: dict, what: str, hint: str):
    """The latest rows of ``table`` whose columns equal ``where`` (dataset, human and the settings
    chosen by the command's ``options``: column -> option name), or an error saying how to
    produce them and which settings the warehouse holds."""
    from metaeval.runs.engine import analyse as engine

    with obj.open(read_only=True) as wh:
        rows, stored = engine.setting_rows(wh, table, where, list(options))
    if rows.empty:
        chosen = _options({options[c]: where[c] for c in options})
        message = f"no {what} of {where['dataset']} against {where['human']} with {chosen}: run `{hint}` first"
        if not stored.empty:
            message += "; stored: " + " | ".join(_options({options[c]: r[c] for c in options})
                                                 for r in stored.to_dict("records"))
        raise WarehouseError(message)
    return rows


def _common(f):
    for decorator in reversed([
        click.option("--dataset", required=True),
        click.option("--human", required=True),
        click.option("--level", type=LazyChoice("metaeval.analyses.stats.vocabulary:LEVELS"), default="system", show_default=True),
        click.option("--coefficient", type=CoefficientChoice(), default="pearson",
                     show_default=True),
        click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path),
                     callback=out_file(*FIGURE_SUFFIXES), help="The figure: .png, .svg or .pdf."),
        OVERWRITE,
    ]):
        f = decorator(f)
    return f


def _aggregated(command: tuple, aggregate: str) -> tuple:
    """A hint's command line with ``--aggregate`` (``--human-aggregate``) when not the mean (a mean's as before)."""
    from metaeval.runs.engine.parameters import aggregate_sides

    metric, human = aggregate_sides(aggregate)
    return (*command, *(("--aggregate", metric) if metric != "mean" else ()),
            *(("--human-aggregate", human) if human != "mean" else ()))


def _medians(aggregate: str) -> str:
    from metaeval.runs.engine.parameters import aggregate_sides

    if aggregate == "mean":
        return ""
    metric, human = aggregate_sides(aggregate)
    return f", system {metric}s" if human == "mean" else f", system {metric}s (metric), {human}s (human)"


def _write(obj: Context, fig, out: Path, overwrite: bool) -> None:
    import matplotlib.pyplot as plt

    try:
        with files.atomic_file(out, warehouse=obj.path, overwrite=overwrite) as tmp:
            fig.savefig(tmp, dpi=150, format=out.suffix[1:].lower())
    finally:
        plt.close(fig)
    say(f"wrote {out}")


@plot.command("heatmap", short_help='Pairwise significance heatmap, from the latest `compare` rows.')
@_common
@click.option("--method", type=LazyChoice("metaeval.analyses.stats.vocabulary:TEST_METHODS"), default="perm-both", show_default=True)
@click.option("--alternative", type=LazyChoice("metaeval.runs.metrics.ranking:ALTERNATIVES"), default="two-sided",
              show_default=True, help="The alternative of the tests drawn (the default of compare and evaluate).")
@click.option("--correction", type=LazyChoice("metaeval.analyses.stats.vocabulary:CORRECTIONS"), default="holm", show_default=True)
@click.option("--correction-group", type=LazyChoice("metaeval.analyses.stats.vocabulary:CORRECTION_GROUPS"), default="metric",
              show_default=True)
@click.option("--alpha", default=0.05, show_default=True, type=ALPHA,
              help="The tests' significance level (as given to `metaeval compare`).")
@options_of("plot-ci", "aggregate")   # the same declared option as plot ci's
@click.pass_obj
def plot_heatmap(obj, dataset, human, level, coefficient, out, overwrite, method, alternative, correction,
                 correction_group, alpha, aggregate):
    """Pairwise significance heatmap, from the latest `metaeval compare` rows of one setting:
    filled = p <= alpha, outlined = significant after the correction (title and legend say
    which); metrics ordered by their correlation with the human judgment when `correlate` ran."""
    from metaeval.present import figures
    from metaeval.runs import report as reporting

    where = dict(dataset=dataset, human=human, level=level, coefficient=coefficient, method=method,
                 alternative=alternative, correction=correction, correction_group=correction_group, alpha=alpha,
                 aggregate=aggregate)
    hint = obj.command(*_aggregated(("compare", "--dataset", dataset, "--human", human, "--level", level,
                                     "--coefficient", coefficient, "--method", method, "--alternative", alternative,
                                     "--correction", correction, "--correction-group", correction_group, "--alpha",
                                     alpha), aggregate))
    settings = ("level", "coefficient", "method", "alternative", "correction", "correction_group", "alpha", "aggregate")
    rows = _rows(obj, "hypothesis_tests", where, {c: c for c in settings}, "hypothesis tests", hint)
    with obj.open(read_only=True) as wh:
        correlations = reporting.correlations(wh, dataset, human, level, coefficient, aggregate=aggregate)
    _write(obj, figures.significance_heatmap(rows, alpha, f"{method}, {level} level{_medians(aggregate)}, "
                                                          f"{coefficient}, against {human}",
                                             correlations=correlations), out, overwrite)


@plot.command("scatter", short_help='One point per summary scored by both measures (Graham 2015, Fig. 1).')
@click.option("--dataset", required=True)
@click.option("--x", "x", required=True, metavar="MEASURE", help="The measure on the x axis (e.g. a coverage score).")
@click.option("--y", "y", required=True, metavar="MEASURE",
              help="The measure on the y axis (e.g. a linguistic quality score).")
@click.option("--diagonal/--no-diagonal", default=None,
              help="Draw y = x. Default: when both measures declare the same scale (metaeval scale).")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              callback=out_file(*FIGURE_SUFFIXES), help="The figure: .png, .svg or .pdf.")
@OVERWRITE
@click.pass_obj
def plot_scatter(obj, dataset, x, y, diagonal, out, overwrite):
    """One point per summary scored by both measures, from the stored cells (Graham 2015, Fig. 1:
    linguistic quality against coverage)."""
    from metaeval.present import figures
    from metaeval.runs.metrics import cell_figures

    with obj.open(read_only=True) as wh:
        c = cell_figures.cells(wh, dataset, [x, y])
    if diagonal is None:
        diagonal = c.scales[x] is not None and c.scales[x] == c.scales[y]
    _write(obj, figures.measure_scatter(c.values[x], c.values[y], c.label(x), c.label(y), diagonal=diagonal,
                                        title=dataset), out, overwrite)


@plot.command("distribution", short_help="The distribution of measures' scores, or of each system's (Graham 2015).")
@click.option("--dataset", required=True)
@click.option("--measure", "measures", required=True, multiple=True, metavar="MEASURE",
              help="A measure whose scores are drawn. Repeatable (one histogram each; with --by-system, one).")
@click.option("--by-system", is_flag=True,
              help="Each system's distribution over its inputs (a box per system, by mean) instead of one "
                   "histogram of every summary.")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              callback=out_file(*FIGURE_SUFFIXES), help="The figure: .png, .svg or .pdf.")
@OVERWRITE
@click.pass_obj
def plot_distribution(obj, dataset, measures, by_system, out, overwrite):
    """The distribution of measures' scores from the stored cells: a histogram of every summary's
    score per measure (Graham 2015, Fig. 2), or with --by-system each system's scores."""
    from metaeval.present import figures
    from metaeval.runs.metrics import cell_figures

    if by_system and len(set(measures)) != 1:
        raise WarehouseError("--by-system draws one measure: give one --measure")
    with obj.open(read_only=True) as wh:
        c = cell_figures.cells(wh, dataset, measures)
    if by_system:
        [m] = c.values
        fig = figures.system_distributions(c.values[m], c.systems, c.label(m), title=dataset)
    else:
        fig = figures.score_distributions({c.label(m): v for m, v in c.values.items()}, title=dataset)
    _write(obj, fig, out, overwrite)


@plot.command("power", short_help='Power curves of the tests, from the latest `simulate power` rows.')
@_common
@click.option("--rouge-variant", "variant", type=LazyChoice("metaeval.runs.metrics.simulation:ROUGE_VARIANTS"),
              default="recall", show_default=True, help="The ROUGE-1 statistic of the simulation drawn.")
@click.option("--alpha", default=0.05, show_default=True, type=ALPHA, help="The simulation's significance level.")
@click.pass_obj
def plot_power(obj, dataset, human, level, coefficient, out, overwrite, variant, alpha):
    """Power curves of the tests against the proportion of tokens kept, from the latest
    `metaeval simulate power` rows of one setting."""
    from metaeval.present import figures

    where = dict(dataset=dataset, human=human, variant=variant, level=level, coefficient=coefficient, alpha=alpha)
    hint = obj.command("simulate", "power", "--dataset", dataset, "--human", human, "--level", level,
                       "--coefficient", coefficient, "--rouge-variant", variant, "--alpha", alpha)
    rows = _rows(obj, "power", where, {"level": "level", "coefficient": "coefficient",
                                              "variant": "rouge_variant", "alpha": "alpha"}, "power results", hint)
    _write(obj, figures.power_curves(rows, f"power of ROUGE-1 {variant} > R_k, {level} level, {coefficient}, "
                                      f"against {human}"), out, overwrite)


COMMANDS = [report, plot]
