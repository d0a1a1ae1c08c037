"""The ``metaeval`` command line.

Start-up is kept light so that ``metaeval --help`` is fast: the analyses (numpy/scipy),
figures (matplotlib), the text metrics and the demo data are imported inside the commands
that use them, and option choices defined by analysis modules are :class:`LazyChoice` s,
read only when a command parses its options or shows its own help.
"""

from __future__ import annotations

import importlib
import shlex
import signal
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

import schema

from warehouse import connection, signals
from warehouse.errors import Terminated, WarehouseError

if TYPE_CHECKING:  # annotations only: importing them at start-up would slow `--help`
    import pandas as pd

    from warehouse.core import Warehouse

FORMATS = ("table", "csv", "json")
#: ``metaeval export``: file suffix -> format (json is JSON lines, one record a line).
EXPORT_SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".json": "json", ".jsonl": "json"}
#: Any seed numpy's SeedSequence accepts that the warehouse's BIGINT seed columns can store.
SEED = click.IntRange(0, 2**63 - 1)
#: The demo's smallest dataset (``warehouse.demo.generate`` refuses fewer systems or inputs).
DEMO_MIN = 3


class LazyChoice(click.Choice):
    """A :class:`click.Choice` whose choices are a constant of another module, given as
    ``"module:NAME"`` (e.g. ``"analyses.runner:LEVELS"``) and imported on first use, so that
    defining the option does not import the module (and scipy with it)."""

    def __init__(self, source: str, case_sensitive: bool = True):
        self.source = source
        self._choices: tuple | None = None
        self.case_sensitive = case_sensitive

    @property
    def choices(self) -> tuple:
        if self._choices is None:
            module, name = self.source.split(":")
            self._choices = tuple(getattr(importlib.import_module(module), name))
        return self._choices

    @choices.setter
    def choices(self, value) -> None:
        self._choices = tuple(value)


def out_file(*suffixes: str):
    """A click callback for an ``--out`` file: its directory must exist and, if ``suffixes``
    are given, its suffix must be one of them (case-insensitive)."""
    def check(ctx, param, value: Path | None) -> Path | None:
        if value is None:
            return value
        if suffixes and value.suffix.lower() not in suffixes:
            raise click.BadParameter(f"{str(value)!r}: unsupported file type "
                                     f"{value.suffix or '(no suffix)'!r}; use {', '.join(suffixes)}", ctx, param)
        _require_directory(value, ctx, param)
        return value
    return check


def _require_directory(path: Path, ctx=None, param=None) -> None:
    parent = path.parent
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        raise click.BadParameter(f"{str(path)!r}: directory {str(parent)!r} {what}", ctx, param)


class Context:
    def __init__(self, db: str | None):
        self.db = db                                  # --db as given (None: $METAEVAL_DB or the default)
        self.path = connection.resolve_path(db)

    def command(self, *args) -> str:
        """A ``metaeval`` command line for a hint: with this --db when one was given, quoted for
        a POSIX shell, so that it works when copy-pasted."""
        return shlex.join(["metaeval", *(["--db", str(self.db)] if self.db else []), *map(str, args)])

    def heatmap_command(self, dataset: str, human: str, level: str, coefficient: str, method: str,
                        alternative: str, correction: str, correction_group: str, alpha: float,
                        out: str = "tests.png") -> str:
        """The ``plot heatmap`` command drawing the tests of one ``compare`` setting."""
        return self.command("plot", "heatmap", "--dataset", dataset, "--human", human, "--level", level,
                            "--coefficient", coefficient, "--method", method, "--alternative", alternative,
                            "--correction", correction, "--correction-group", correction_group,
                            "--alpha", alpha, "--out", out)

    def open(self, *, read_only: bool = False, create: bool = False) -> Warehouse:
        from warehouse.core import Warehouse

        if create:
            return Warehouse.create(self.path)
        return Warehouse(self.path, read_only=read_only)


def show(frame: pd.DataFrame, fmt: str) -> None:
    """Print a DataFrame as an aligned table, CSV or JSON records."""
    import pandas as pd

    if fmt == "csv":
        click.echo(frame.to_csv(index=False), nl=False)
    elif fmt == "json":
        click.echo(frame.to_json(orient="records", date_format="iso", indent=1))
    elif frame.empty:
        click.echo("(no rows)")
    else:
        with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200):
            click.echo(frame.to_string(index=False))


class Group(click.Group):
    """Turns WarehouseError into a clean one-line error and a non-zero exit, and Ctrl-C or
    SIGTERM not handled by the command (or the error of a query it cut short) into the one-line
    error of :func:`interrupted`."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except BaseException as exc:
            if (stop := signals.interruption(exc)) is not None:
                raise interrupted(stop) from None
            if isinstance(exc, WarehouseError):
                raise click.ClickException(str(exc)) from None
            raise


def interrupted(exc: KeyboardInterrupt, saved: str | None = None) -> click.ClickException:
    """The one-line error of a command stopped by Ctrl-C or SIGTERM (``saved``: what is kept).
    It exits as a shell reports a process killed by that signal: 128 + 2 = 130 for Ctrl-C
    (SIGINT), 128 + 15 = 143 for SIGTERM."""
    term = isinstance(exc, Terminated)
    what = "terminated (SIGTERM)" if term else "interrupted"
    error = click.ClickException(f"{what}: {saved}" if saved else what)
    error.exit_code = 128 + (signal.SIGTERM if term else signal.SIGINT)
    return error


@click.group(cls=Group)
@click.option("--db", type=click.Path(dir_okay=False), default=None,
              help=f"Warehouse file. Default: ${connection.ENV_VAR}, else ./{connection.DEFAULT_PATH}.")
@click.version_option(package_name="metaeval-warehouse")
@click.pass_context
def main(ctx, db):
    """A DuckDB warehouse for the meta-evaluation of text-generation metrics."""
    ctx.obj = Context(db)
    # until the command ends, SIGTERM (`kill`, a scheduler, a container stopping) stops it as
    # Ctrl-C does: a run is marked interrupted and keeps its rows; one line (`interrupted`)
    ctx.call_on_close(signals.install())


@main.command()
@click.pass_obj
def init(obj: Context):
    """Create the warehouse file (harmless if it exists; upgrades an older schema in place)."""
    before = connection.stored_version(obj.path)
    existed = obj.path.exists()
    obj.open(create=True).close()
    if before is not None and before != str(schema.SCHEMA_VERSION):
        click.echo(f"Upgraded warehouse {obj.path} from schema {before} to {schema.SCHEMA_VERSION}, keeping every "
                   "row; results of earlier metaeval versions are recomputed when their commands run again")
    else:
        click.echo(f"{'Checked' if existed else 'Created'} warehouse {obj.path}")


# --- ingest ----------------------------------------------------------------------------
@main.group(cls=Group)
def ingest():
    """Load files into the warehouse (atomic; re-ingesting a file changes nothing)."""


def _ingest_options(f):
    f = click.option("--replace", is_flag=True, help="Overwrite stored values that differ, instead of failing.")(f)
    f = click.option("--dataset", required=True, help="Dataset to add to (created if new).")(f)
    return f


def _measure_options(f):
    f = click.option("--lower", "lower", multiple=True, metavar="GLOB",
                     help="Measures for which lower is better (divergences). Repeatable.")(f)
    f = click.option("--human", "human", multiple=True, metavar="GLOB",
                     help="Measures that are human judgments, e.g. 'expert.*'. Repeatable.")(f)
    return f


def _run_ingest(obj: Context, dataset: str, batches, replace: bool, human=(), lower=()) -> None:
    from ingest.common import check_globs_used

    measures = [m for b in batches for m in b.measures["name"]]
    files = [b.file for b in batches]
    check_globs_used(human, measures, "--human", files)
    check_globs_used(lower, measures, "--lower", files)
    with obj.open(create=not obj.path.exists()) as wh:
        reports = wh.load(dataset, batches, replace=replace, command=_command_line())
    _echo_reports(reports)


def _command_line() -> str:
    return shlex.join(["metaeval", *sys.argv[1:]])


def _echo_reports(reports) -> None:
    for r in reports:
        if r.changed:
            extra = f", replaced {r.replaced}" if r.replaced else ""
            click.echo(f"{r.file}: read {r.contents}, inserted {r.inserted}{extra}")
        else:
            click.echo(f"{r.file}: read {r.contents}, all already in the warehouse; nothing changed")


@ingest.command("sacrerouge")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_ingest_options
@_measure_options
@click.pass_obj
def ingest_sacrerouge(obj, files, dataset, replace, human, lower):
    """SacreROUGE metrics jsonl files (one summary per line, nested 'metrics')."""
    from ingest import sacrerouge

    batches = [sacrerouge.parse(f, human=human, lower=lower) for f in files]
    _run_ingest(obj, dataset, batches, replace, human, lower)


@ingest.command("summaries")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_ingest_options
@click.pass_obj
def ingest_summaries(obj, files, dataset, replace):
    """SacreROUGE summaries jsonl: summary texts, references, documents."""
    from ingest import summaries

    _run_ingest(obj, dataset, [summaries.parse(f) for f in files], replace)


@ingest.command("table")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_ingest_options
@_measure_options
@click.pass_obj
def ingest_table(obj, files, dataset, replace, human, lower):
    """Long tables (.csv, .parquet, .jsonl): system, [input,] measure, value[, annotator][, kind].

    Without an input column the values are per system and stored under one input 'all'.
    """
    from ingest import table

    batches = [table.parse(f, human=human, lower=lower) for f in files]
    _run_ingest(obj, dataset, batches, replace, human, lower)


# --- looking -----------------------------------------------------------------------------
@main.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table")
@click.pass_obj
def datasets(obj, fmt):
    """The datasets in the warehouse, with their sizes."""
    with obj.open(read_only=True) as wh:
        show(wh.datasets(), fmt)


@main.command()
@click.argument("dataset")
@click.option("--kind", type=click.Choice(["automatic", "human"]), default=None)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table")
@click.pass_obj
def measures(obj, dataset, kind, fmt):
    """The measures of DATASET: kind, direction, coverage."""
    with obj.open(read_only=True) as wh:
        show(wh.measures(dataset, kind), fmt)


@main.command()
@click.argument("dataset")
@click.argument("measure")
@click.option("--format", "fmt", type=click.Choice(["table", "csv"]), default="table",
              help="csv: one row per system (first column the system id), one column per input.")
@click.pass_obj
def matrix(obj, dataset, measure, fmt):
    """The systems x inputs matrix of MEASURE in DATASET."""
    import pandas as pd

    with obj.open(read_only=True) as wh:
        frame = wh.matrix(dataset, measure).frame()
    if fmt == "csv":
        click.echo(frame.to_csv(na_rep=""), nl=False)
    else:
        with pd.option_context("display.max_columns", 12, "display.width", 200):
            click.echo(frame.to_string(max_cols=12))
        click.echo(f"[{frame.shape[0]} systems x {frame.shape[1]} inputs]")


@main.command()
@click.argument("query")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table")
@click.pass_obj
def sql(obj, query, fmt):
    """Run a read-only SQL QUERY on the warehouse.

    The warehouse is opened read-only and without access to anything outside it: statements
    that write (INSERT, COPY ... TO), read other files (read_csv, ATTACH) or load extensions
    are refused. To save a result, use --format csv and redirect it.
    """
    import duckdb

    with obj.open(read_only=True) as wh:
        try:
            # cannot be switched back on by the query: DuckDB refuses while the database is open
            wh.con.execute("SET enable_external_access = false")
            frame = wh.sql(query)
        except duckdb.Error as exc:
            raise WarehouseError(f"SQL error: {exc}") from None
    show(frame, fmt)


@main.command()
@click.option("--dataset", default="demo", show_default=True)
@click.option("--systems", "n_systems", default=12, show_default=True, type=click.IntRange(DEMO_MIN))
@click.option("--inputs", "n_inputs", default=50, show_default=True, type=click.IntRange(DEMO_MIN))
@click.option("--seed", default=0, show_default=True, type=SEED)
@click.option("--k", default=1000, show_default=True, type=click.IntRange(1), help="Resamples of the CIs and tests.")
@click.pass_obj
def demo(obj, dataset, n_systems, n_inputs, seed, k):
    """Generate a seeded synthetic dataset, ingest it, and run a first analysis.

    Correlations of the four metrics with the human judgment, 95% Boot-Both CIs and
    Perm-Both tests (Holm-corrected), at the system and summary level, all persisted.
    """
    from analyses import runner
    from warehouse import demo as demo_data

    with tempfile.TemporaryDirectory() as tmp, obj.open(create=not obj.path.exists()) as wh:
        _echo_reports([demo_data.load(wh, dataset, Path(tmp), n_systems=n_systems, n_inputs=n_inputs, seed=seed,
                                      command=_command_line())])
    with obj.open() as wh:
        scope = runner.resolve_scope(wh, dataset, demo_data.HUMAN, levels=("system", "summary"),
                                     coefficients=("pearson", "kendall"))
        for analysis in (runner.correlate_analysis(scope),
                         runner.ci_analysis(scope, "boot-both", k, 0.05, seed),
                         runner.compare_analysis(scope, "perm-both", k, 0.05, seed, "greater", "holm", "metric")):
            s = runner.run(wh, scope, analysis, progress=sys.stderr.isatty())
            state = "up to date" if s.up_to_date else f"computed {s.computed}"
            click.echo(f"{analysis.command:>9}: {s.tasks} results, {state}")
        click.echo()
        show(wh.sql(schema.read("demo_report"), [dataset, demo_data.HUMAN, k, seed]), "table")
    click.echo("\nEverything above is in the warehouse: try "
               f"`{obj.command('results', 'confidence_intervals', '--dataset', dataset)}`, or draw the tests with "
               f"`{obj.heatmap_command(dataset, demo_data.HUMAN, 'system', 'pearson', 'perm-both', 'greater', 'holm', 'metric', 0.05)}`.")


# --- analyses ------------------------------------------------------------------------------
RESULT_TABLES = {
    "correlations": "latest_correlations",
    "confidence_intervals": "latest_confidence_intervals",
    "hypothesis_tests": "latest_hypothesis_tests",
    "analysis_runs": "analysis_runs",
}


def _analysis_options(f):
    for decorator in reversed([
        click.option("--dataset", required=True, help="Dataset to analyse."),
        click.option("--human", required=True, help="The human judgment, e.g. expert.relevance."),
        click.option("--metric", "metrics", multiple=True, metavar="GLOB",
                     help="Metrics (globs over automatic measures). Default: all. Repeatable."),
        click.option("--level", "levels", multiple=True, type=LazyChoice("analyses.runner:LEVELS"),
                     help="Correlation level(s). Default: all three."),
        click.option("--coefficient", "coefficients", multiple=True, type=LazyChoice("analyses.runner:COEFFICIENTS"),
                     help="Coefficient(s); kendall is tau-b. Default: all three."),
        click.option("--jobs", default=1, show_default=True, type=click.IntRange(1), help="Worker processes."),
        click.option("--force", is_flag=True, help="Recompute even what is up to date."),
    ]):
        f = decorator(f)
    return f


def _resampling_options(f):
    f = click.option("--seed", default=0, show_default=True, type=SEED,
                     help="Seed of the resampling; recorded with every row.")(f)
    f = click.option("--k", default=1000, show_default=True, type=click.IntRange(1), help="Resamples.")(f)
    return f


def _analyse(obj: Context, build, dataset, human, metrics, levels, coefficients, jobs, force, show_table):
    from analyses import runner

    with obj.open() as wh:
        scope = runner.resolve_scope(wh, dataset, human, metrics, levels, coefficients)
        data = runner.load_data(wh, scope)
        scope, skipped = runner.without_sparse_metrics(data, scope)
        for reason in skipped.values():
            click.echo(f"skipped: {reason}", err=True)
        analysis = build(scope)
        try:
            summary = runner.run(wh, scope, analysis, jobs=jobs, force=force, progress=sys.stderr.isatty(),
                                 data=data)
        except KeyboardInterrupt as exc:
            raise interrupted(exc, "the results finished so far are saved; "
                                   "run the same command again to resume") from None
        if summary.up_to_date:
            click.echo(f"{analysis.table}: all {summary.tasks} results up to date; nothing computed "
                       "(--force recomputes)")
        else:
            click.echo(f"{analysis.table}: run {summary.run_id}: computed {summary.computed} of "
                       f"{summary.tasks}, wrote {summary.written} rows")
        show_table(wh, scope, analysis)


def _latest_in_scope(wh, scope, analysis) -> pd.DataFrame:
    view = RESULT_TABLES[analysis.table]
    frame = wh.sql(f"SELECT * FROM {view} WHERE dataset = ? AND human = ?", [scope.dataset, scope.human])
    in_scope = frame["level"].isin(scope.levels) & frame["coefficient"].isin(scope.coefficients)
    for column in ("metric", "metric_a", "metric_b"):
        if column in frame.columns:
            in_scope &= frame[column].isin(scope.metrics)
    frame = frame[in_scope]
    for column, value in analysis.param_columns.items():
        frame = frame[frame[column].isna()] if value is None else frame[frame[column] == value]
    order = {"metric": list(scope.metrics), "metric_a": list(scope.metrics), "metric_b": list(scope.metrics),
             "level": list(scope.levels), "coefficient": list(scope.coefficients)}
    keys = [c for c in analysis.key_columns if c in order]
    rank = lambda col: col.map({v: i for i, v in enumerate(order[col.name])})  # noqa: E731
    return frame.sort_values(keys, key=rank).reset_index(drop=True)


@main.command()
@_analysis_options
@click.pass_obj
def correlate(obj, dataset, human, metrics, levels, coefficients, jobs, force):
    """Correlations of metrics with a human judgment (system, summary, global level)."""
    from analyses import runner

    def table(wh, scope, analysis):
        import pandas as pd

        frame = _latest_in_scope(wh, scope, analysis)
        wide = frame.pivot_table(index="metric", columns=["level", "coefficient"], values="value", dropna=False)
        with pd.option_context("display.max_rows", None, "display.width", 200, "display.float_format", "{:.3f}".format):
            click.echo(wide.to_string())

    _analyse(obj, runner.correlate_analysis, dataset, human, metrics, levels, coefficients, jobs, force, table)


@main.command()
@_analysis_options
@click.option("--method", type=LazyChoice("analyses.runner:CI_METHODS"), default="boot-both", show_default=True)
@_resampling_options
@click.option("--alpha", default=0.05, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True))
@click.pass_obj
def ci(obj, dataset, human, metrics, levels, coefficients, jobs, force, method, k, seed, alpha):
    """Confidence intervals of correlations (Fisher or bootstrap over systems/inputs/both)."""
    from analyses import runner

    def table(wh, scope, analysis):
        frame = _latest_in_scope(wh, scope, analysis)
        show(frame[["metric", "level", "coefficient", "estimate", "lower", "upper"]].round(4), "table")

    build = lambda scope: runner.ci_analysis(scope, method, k, alpha, seed)
    _analyse(obj, build, dataset, human, metrics, levels, coefficients, jobs, force, table)


@main.command()
@_analysis_options
@click.option("--method", type=LazyChoice("analyses.runner:TEST_METHODS"), default="perm-both", show_default=True)
@_resampling_options
@click.option("--alpha", default=0.05, show_default=True, type=click.FloatRange(0, 1, min_open=True, max_open=True))
@click.option("--alternative", type=LazyChoice("analyses.runner:ALTERNATIVES"), default="greater",
              show_default=True, help="H1 of each ordered pair (a, b): corr(a, human) > corr(b, human).")
@click.option("--correction", type=LazyChoice("analyses.runner:CORRECTIONS"), default="none",
              show_default=True, help="Multiple-comparison correction.")
@click.option("--correction-group", type=LazyChoice("analyses.runner:CORRECTION_GROUPS"), default="metric",
              show_default=True,
              help="Family of the correction: the pairs of one metric_a (as in the paper), or all pairs; "
                   "always within one level and coefficient.")
@click.pass_obj
def compare(obj, dataset, human, metrics, levels, coefficients, jobs, force, method, k, seed, alpha,
            alternative, correction, correction_group):
    """Test every ordered pair of metrics: is corr(a, human) > corr(b, human)?"""
    from analyses import runner

    def table(wh, scope, analysis):
        frame = _latest_in_scope(wh, scope, analysis)
        frame = frame[(frame["correction"] == correction) & (frame["correction_group"] == correction_group)]
        cols = ["metric_a", "metric_b", "level", "coefficient", "delta", "p_value", "p_adjusted", "significant"]
        if len(frame) <= 60:
            show(frame[cols].round(4), "table")
        n = int(frame["significant"].fillna(False).astype(bool).sum())
        click.echo(f"{n} of {len(frame)} ordered pairs significant at alpha={alpha} ({correction}); draw them with:")
        for level in scope.levels:
            for coefficient in scope.coefficients:
                click.echo("  " + obj.heatmap_command(scope.dataset, scope.human, level, coefficient, method,
                                                      alternative, correction, correction_group, alpha,
                                                      f"tests-{level}-{coefficient}.png"))

    build = lambda scope: runner.compare_analysis(scope, method, k, alpha, seed, alternative, correction,
                                                   correction_group)
    _analyse(obj, build, dataset, human, metrics, levels, coefficients, jobs, force, table)


@main.command()
@click.argument("table", type=click.Choice(sorted(RESULT_TABLES)))
@click.option("--dataset", default=None, help="Only this dataset.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table")
@click.pass_obj
def results(obj, table, dataset, fmt):
    """The latest result of each key in a results TABLE (all runs for analysis_runs)."""
    with obj.open(read_only=True) as wh:
        frame = _result_rows(wh, RESULT_TABLES[table], table, dataset)
    if fmt == "table":
        frame = frame.drop(columns=[c for c in ("conventions", "fingerprint", "parameters") if c in frame.columns])
    show(frame, fmt)


@main.command()
@click.argument("table", type=click.Choice(sorted(RESULT_TABLES)))
@click.option("--format", "fmt", type=click.Choice(sorted(set(EXPORT_SUFFIXES.values()))), default=None,
              help="File format. Default: from the suffix of --out (.csv, .parquet, .json or .jsonl).")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), callback=out_file())
@click.option("--latest", is_flag=True, help="Only the latest row of each key (the latest_* view).")
@click.option("--dataset", default=None, help="Only this dataset (analysis_runs: the runs over it).")
@click.pass_obj
def export(obj, table, fmt, out, latest, dataset):
    """Write a results TABLE (every run, or --latest) to a file: CSV, Parquet or JSON lines."""
    suffix_format = EXPORT_SUFFIXES.get(out.suffix.lower())
    if fmt is None and suffix_format is None:
        raise click.BadParameter(f"{str(out)!r}: cannot tell the format from {out.suffix or 'no suffix'!r}; "
                                 f"use a suffix {', '.join(EXPORT_SUFFIXES)} or --format", param_hint="--out")
    if fmt is not None and suffix_format not in (None, fmt):
        raise click.BadParameter(f"{str(out)!r} looks like {suffix_format} but --format is {fmt}; "
                                 "make them agree", param_hint="--out")
    fmt = fmt or suffix_format
    source = RESULT_TABLES[table] if latest else table
    with obj.open(read_only=True) as wh:
        frame = _result_rows(wh, source, table, dataset)
    try:
        if fmt == "csv":
            frame.to_csv(out, index=False)
        elif fmt == "parquet":
            frame.to_parquet(out, index=False)
        else:
            frame.to_json(out, orient="records", lines=True, date_format="iso")
    except OSError as exc:
        raise WarehouseError(f"cannot write {out}: {exc.strerror or exc}") from None
    click.echo(f"wrote {len(frame)} rows of {source} to {out}")


def _result_rows(wh, source: str, table: str, dataset: str | None):
    """The rows of ``source`` (a results table or its latest_* view) of ``dataset`` (None: all);
    for analysis_runs, the runs over ``dataset`` (parameter ``dataset``, or in ``datasets``); for
    replicability, the groups that include it."""
    if table == "analysis_runs":
        return wh.sql(f"SELECT * FROM {source} WHERE $dataset IS NULL OR json_extract_string(parameters, '$.dataset') "
                      "= $dataset OR list_contains(json_extract_string(parameters, '$.datasets[*]'), $dataset) "
                      "ORDER BY run_id", {"dataset": dataset})
    if table == "replicability":  # a row's dataset names its group: the datasets joined by '+'
        return wh.sql(f"SELECT * FROM {source} WHERE $dataset IS NULL OR dataset = $dataset "
                      "OR list_contains(string_split(dataset, '+'), $dataset) ORDER BY result_id", {"dataset": dataset})
    return wh.sql(f"SELECT * FROM {source} WHERE $dataset IS NULL OR dataset = $dataset ORDER BY result_id",
                  {"dataset": dataset})


# --- commands defined in their own modules (they import the helpers above) ----------------
def _register_command_modules() -> None:
    import pkgutil

    import warehouse.commands as package

    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"warehouse.commands.{info.name}")
        for command in getattr(module, "COMMANDS", ()):
            main.add_command(command)
    # modules add their result tables; `results` and `export` offer all of them
    for command in (results, export):
        next(p for p in command.params if p.name == "table").type = click.Choice(sorted(RESULT_TABLES))


_register_command_modules()
