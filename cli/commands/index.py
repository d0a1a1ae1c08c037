"""``metaeval index``: search indexes for retrieval-based metrics (SERA)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from metaeval.cli.app import FORMATS, Context, FiniteFloatRange, LazyChoice, _command_line, show, say
from metaeval.cli.progress import terminal_progress
from metaeval.cli.sections import topic


@topic("ingest")
@click.group()
def index():
    """Search indexes (tantivy) that SERA's queries are run against."""


@index.command("build", short_help="Index CORPUS files (JSONL or Parquet) for SERA's queries.")
@click.argument("name")
@click.argument("corpus", nargs=-1, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dataset", default=None,
              help="Index this dataset's stored source documents and references (instead of CORPUS files).")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The index directory. Default: <warehouse file>.indexes/NAME, beside the warehouse.")
@click.option("--model", type=LazyChoice("metaeval.runs.texts.index:MODELS"), default="lm-dirichlet", show_default=True,
              help="The retrieval model `score --metric sera` uses with this index unless told otherwise.")
@click.option("--mu", type=FiniteFloatRange(0, min_open=True), default=2000.0, show_default=True,
              help="The Dirichlet prior of lm-dirichlet used by default with this index.")
@click.option("--overwrite", is_flag=True, help="Rebuild an existing index of this name (its cached results go).")
@click.pass_obj
def build(obj: Context, name, corpus, dataset, directory, model, mu, overwrite):
    """Index CORPUS files (JSONL or Parquet with the fields id and text) as NAME, or with
    --dataset the dataset's own documents and references, and record it in the warehouse."""
    from metaeval.runs.texts import index as indexing

    if corpus and dataset:
        raise click.UsageError("give CORPUS files or --dataset, not both")
    if not corpus and not dataset:
        raise click.UsageError("give CORPUS files (JSONL or Parquet with id and text) or --dataset D")
    start = time.perf_counter()
    with obj.open() as wh:
        info = indexing.build(wh, name, list(corpus), dataset=dataset, directory=directory, model=model, mu=mu,
                              overwrite=overwrite, progress=terminal_progress(), command=_command_line())
    say(f"indexed {info.documents} document(s) ({info.terms} terms, {info.vocabulary} distinct) as {name!r} "
               f"in {info.path} in {time.perf_counter() - start:.1f} s")


@index.command("list")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table")
@click.pass_obj
def list_(obj: Context, fmt):
    """The indexes recorded in the warehouse."""
    from metaeval.runs.texts import index as indexing

    with obj.open(read_only=True) as wh:
        show(indexing.list_indexes(wh), fmt)


COMMANDS = [index]
