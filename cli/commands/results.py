"""``metaeval results`` and ``metaeval export``: the results tables, printed or written to a file."""

from __future__ import annotations

from pathlib import Path

import click

from metaeval import files
from metaeval.cli.app import EXPORT_SUFFIXES, OVERWRITE, RESULT_TABLES, fmt_option, out_file, show


@click.command()
@click.argument("table", type=click.Choice(sorted(RESULT_TABLES)))
@click.option("--dataset", default=None, help="Only this dataset.")
@click.option("--human", default=None, help="Only rows against this human judgment.")
@click.option("--metric", "metrics", multiple=True, metavar="GLOB",
              help="Only rows of these metrics (globs; a test row when metric_a or metric_b matches). Repeatable.")
@click.option("--level", "levels", multiple=True, help="Only these levels. Repeatable.")
@click.option("--coefficient", "coefficients", multiple=True, help="Only these coefficients. Repeatable.")
@click.option("--method", "methods", multiple=True, help="Only these methods (CI or test). Repeatable.")
@click.option("--signature", "signed", is_flag=True,
              help="Add each row's signature: version, analysis, settings and data fingerprint in one short "
                   "string a paper can print (sacrebleu-style).")
@fmt_option()
@click.pass_obj
def results(obj, table, dataset, human, metrics, levels, coefficients, methods, signed, fmt):
    """The latest result of each key in a results TABLE (all runs for analysis_runs).

    A filter on a column the table does not have is an error. json and csv give every column
    (conventions and parameters nested in json); text, markdown and latex leave out the
    conventions, parameters and fingerprints."""
    from metaeval.runs import engine

    with obj.open(read_only=True) as wh:
        frame = engine.table_rows(wh, table, dataset, latest=True)
        if signed:
            from metaeval.runs import signatures

            frame = signatures.with_signatures(wh, frame)
    frame = _filtered(frame, table, human=human, metrics=metrics, levels=levels, coefficients=coefficients,
                      methods=methods)
    if fmt not in ("json", "csv"):
        frame = frame.drop(columns=[c for c in ("conventions", "fingerprint", "parameters") if c in frame.columns])
    show(frame, fmt)


def _filtered(frame, table: str, *, human, metrics, levels, coefficients, methods):
    """The rows of ``frame`` that pass the filters (None / empty: no filter)."""
    import fnmatch

    def require(column: str, option: str) -> None:
        if column not in frame.columns:
            raise click.UsageError(f"{option}: table {table} has no column {column!r}")

    import pandas as pd

    keep = pd.Series(True, index=frame.index)
    if human is not None:
        require("human", "--human")
        keep &= frame["human"] == human
    if metrics:
        cols = [c for c in ("metric", "metric_a", "metric_b") if c in frame.columns]
        if not cols:
            require("metric", "--metric")
        hit = lambda name: isinstance(name, str) and any(fnmatch.fnmatchcase(name, g) for g in metrics)  # noqa: E731
        keep &= frame[cols].apply(lambda col: col.map(hit)).any(axis=1)
    for column, values, option in (("level", levels, "--level"), ("coefficient", coefficients, "--coefficient"),
                                   ("method", methods, "--method")):
        if values:
            require(column, option)
            keep &= frame[column].isin(values)
    return frame[keep].reset_index(drop=True)


@click.command()
@click.argument("table", type=click.Choice(sorted(RESULT_TABLES)))
@click.option("--format", "fmt", type=click.Choice(sorted(set(EXPORT_SUFFIXES.values()))), default=None,
              help="File format. Default: from the suffix of --out (.csv, .parquet, .json or .jsonl).")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), callback=out_file())
@click.option("--latest", is_flag=True, help="Only the latest row of each key (the latest_* view).")
@click.option("--dataset", default=None, help="Only this dataset (analysis_runs: the runs over it).")
@OVERWRITE
@click.pass_obj
def export(obj, table, fmt, out, latest, dataset, overwrite):
    """Write a results TABLE (every run, or --latest) to a file: CSV, Parquet or JSON lines."""
    suffix_format = EXPORT_SUFFIXES.get(out.suffix.lower())
    if fmt is None and suffix_format is None:
        raise click.BadParameter(f"{str(out)!r}: cannot tell the format from {out.suffix or 'no suffix'!r}; "
                                 f"use a suffix {', '.join(EXPORT_SUFFIXES)} or --format", param_hint="--out")
    if fmt is not None and suffix_format not in (None, fmt):
        raise click.BadParameter(f"{str(out)!r} looks like {suffix_format} but --format is {fmt}; "
                                 "make them agree", param_hint="--out")
    fmt = fmt or suffix_format
    from metaeval import schema
    from metaeval.runs import engine

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
    click.echo(f"wrote {len(frame)} rows of {source} to {out}")


COMMANDS = [results, export]
