"""``metaeval results`` and ``metaeval export``: the results tables, printed or written to a file."""

from __future__ import annotations

from pathlib import Path

import click

from metaeval import files
from metaeval.cli.app import EXPORT_SUFFIXES, OVERWRITE, RESULT_TABLES, fmt_option, out_file, plain, show, say
from metaeval.cli.sections import topic


@topic("output")
@click.command(short_help='The latest result of each key in a results TABLE.')
@click.argument("table", type=click.Choice(sorted(RESULT_TABLES)))
@click.option("--dataset", default=None, help="Only this dataset.")
@click.option("--human", default=None, help="Only rows against this human judgment.")
@click.option("--metric", "metrics", multiple=True, metavar="GLOB",
              help="Only rows of these metrics (globs; a test row when metric_a or metric_b matches). Repeatable.")
@click.option("--level", "levels", multiple=True, help="Only these levels. Repeatable.")
@click.option("--coefficient", "coefficients", multiple=True, help="Only these coefficients. Repeatable.")
@click.option("--method", "methods", multiple=True, help="Only these methods (CI or test). Repeatable.")
@click.option("--aggregate", "aggregates", multiple=True,
              type=click.Choice(["mean", "median", "mean/median", "median/median"]),
              help="Only the rows of a metric's system mean (or median) over its inputs, in a table with an "
                   "aggregate column (median/median, mean/median: the human's median too, --human-aggregate). "
                   "Repeatable. Default: all (the column tells them apart).")
@click.option("--signature", "signed", is_flag=True,
              help="Add each row's signature: version, analysis, settings and data fingerprint in one short "
                   "string a paper can print (sacrebleu-style).")
@fmt_option()
@click.pass_obj
def results(obj, table, dataset, human, metrics, levels, coefficients, methods, signed, fmt, aggregates=()):
    """The latest result of each key in a results TABLE (all runs for analysis_runs).

    A filter on a column the table does not have is an error. json and csv give every column
    (conventions and parameters nested in json); text, markdown and latex leave out the
    conventions, parameters and fingerprints."""
    from metaeval.runs.engine import stored

    light = plain(fmt) and not signed    # printed without pandas (metaeval.present.plain)
    with obj.open(read_only=True) as wh:
        frame = stored.table_rows(wh, table, dataset, latest=True, plain=light)
        if signed:
            from metaeval.runs.engine import signatures

            frame = signatures.with_signatures(wh, frame)
    hidden = () if fmt in ("json", "csv") else ("conventions", "fingerprint", "parameters")
    if light and frame.plain:
        keep = _kept(frame.columns, frame.column, table, human=human, metrics=metrics, levels=levels,
                     coefficients=coefficients, methods=methods, aggregates=aggregates)
        show(frame.where(keep).without(hidden), fmt)
        return
    frame = frame.frame if light else frame
    keep = _kept(frame.columns, lambda c: frame[c].tolist(), table, human=human, metrics=metrics, levels=levels,
                 coefficients=coefficients, methods=methods, aggregates=aggregates)
    frame = frame.loc[keep].reset_index(drop=True)
    show(frame.drop(columns=[c for c in hidden if c in frame.columns]), fmt)


def _kept(columns, column, table: str, *, human, metrics, levels, coefficients, methods, aggregates=()) -> list[bool]:
    """Whether each row passes the filters (None / empty: no filter), from the table's
    ``columns`` and ``column(name)``, a column's values as a list."""
    import fnmatch

    def require(name: str, option: str) -> None:
        if name not in columns:
            raise click.UsageError(f"{option}: table {table} has no column {name!r}")

    def hit(name) -> bool:
        return isinstance(name, str) and any(fnmatch.fnmatchcase(name, g) for g in metrics)

    n = len(column(columns[0])) if len(columns) else 0
    keep = [True] * n
    if human is not None:
        require("human", "--human")
        keep = [k and v == human for k, v in zip(keep, column("human"))]
    if metrics:
        cols = [c for c in ("metric", "metric_a", "metric_b") if c in columns]
        if not cols:
            require("metric", "--metric")
        hits = [any(row) for row in zip(*([hit(v) for v in column(c)] for c in cols))]
        keep = [k and h for k, h in zip(keep, hits)]
    for name, values, option in (("level", levels, "--level"), ("coefficient", coefficients, "--coefficient"),
                                 ("method", methods, "--method"), ("aggregate", aggregates, "--aggregate")):
        if values:
            require(name, option)
            keep = [k and v in values for k, v in zip(keep, column(name))]
    return keep


@topic("output")
@click.command(short_help='Write a results TABLE to a file: CSV, Parquet, JSON lines, or EEE.')
@click.argument("table", type=click.Choice(sorted(RESULT_TABLES)), required=False)
@click.option("--format", "fmt", type=click.Choice(sorted({*EXPORT_SUFFIXES.values(), "eee"})), default=None,
              help="File format. Default: from the suffix of --out (.csv, .parquet, .json or .jsonl). eee: the "
                   "Every Eval Ever schema (0.3.0), JSON lines of aggregate and instance-level records: the "
                   "datasets' items and the latest rows of TABLE (default: every result table; --latest implied).")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), callback=out_file())
@click.option("--latest", is_flag=True, help="Only the latest row of each key (the latest_* view).")
@click.option("--dataset", default=None, help="Only this dataset (analysis_runs: the runs over it).")
@OVERWRITE
@click.pass_obj
def export(obj, table, fmt, out, latest, dataset, overwrite):
    """Write a results TABLE (every run, or --latest) to a file: CSV, Parquet or JSON lines; or,
    with --format eee, the datasets' items and results in the Every Eval Ever schema."""
    suffix_format = EXPORT_SUFFIXES.get(out.suffix.lower())
    if fmt == "eee":
        return _export_eee(obj, table, out, dataset, overwrite)
    if table is None:
        raise click.UsageError(f"TABLE: missing; one of {', '.join(sorted(RESULT_TABLES))} "
                               "(only --format eee exports every table)")
    if fmt is None and suffix_format is None:
        raise click.BadParameter(f"{str(out)!r}: cannot tell the format from {out.suffix or 'no suffix'!r}; "
                                 f"use a suffix {', '.join(EXPORT_SUFFIXES)} or --format", param_hint="--out")
    if fmt is not None and suffix_format not in (None, fmt):
        raise click.BadParameter(f"{str(out)!r} looks like {suffix_format} but --format is {fmt}; "
                                 "make them agree", param_hint="--out")
    fmt = fmt or suffix_format
    from metaeval import schema
    from metaeval.runs.engine import analyse as engine

    source = schema.RESULT_TABLES[table] if latest else table
    files.check_output_file(out, warehouse=obj.path, overwrite=overwrite)
    with obj.open(read_only=True) as wh:
        frame = engine.table_rows(wh, table, dataset, latest=latest)
    with files.atomic_file(out, warehouse=obj.path, overwrite=overwrite) as tmp:
        if fmt == "csv":
            frame.to_csv(tmp, index=False)
        elif fmt == "parquet":
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_json(tmp, orient="records", lines=True, date_format="iso")
    say(f"wrote {len(frame)} rows of {source} to {out}")


def _export_eee(obj, table, out, dataset, overwrite) -> None:
    from metaeval.runs import eee

    if table == "analysis_runs":
        raise click.BadParameter("analysis_runs holds runs, not results: an eee export has none (the other "
                                 "tables' records name their run)", param_hint="TABLE")
    if out.suffix.lower() not in (".jsonl", ".json"):
        raise click.BadParameter(f"{str(out)!r}: an eee export is JSON lines; name it *.jsonl", param_hint="--out")
    files.check_output_file(out, warehouse=obj.path, overwrite=overwrite)
    with obj.open(read_only=True) as wh, files.atomic_file(out, warehouse=obj.path, overwrite=overwrite) as tmp:
        counts = eee.write(wh, tmp, [table] if table else eee.result_tables(), dataset)
    say(f"wrote {counts['aggregate']} aggregate and {counts['instance']} instance-level records "
        f"(Every Eval Ever {eee.SCHEMA_VERSION}) to {out}")


COMMANDS = [results, export]
