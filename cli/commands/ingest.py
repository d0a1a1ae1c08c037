"""``metaeval ingest sacrerouge|summaries|table|mtme|attributes|preferences|mqm``: files into the warehouse, atomically."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import click

from metaeval.cli import stdin
from metaeval.cli.app import Context, Group, _command_line, echo_reports, say
from metaeval.cli.sections import topic


@topic("ingest")
@click.group(cls=Group, short_help='Load files into the warehouse (atomic; re-ingesting changes nothing).')
def ingest():
    """Load files into the warehouse (atomic; re-ingesting a file changes nothing)."""


def _ingest_options(f):
    f = click.option("--allow-new", is_flag=True,
                     help="Let the files add systems or inputs to a dataset that has some (without it, new "
                          "ids are listed and nothing is written: they are often typos).")(f)
    f = click.option("--replace", is_flag=True, help="Overwrite stored values that differ, instead of failing.")(f)
    f = click.option("--dataset", required=True, help="Dataset to add to (created if new).")(f)
    return f


def _measure_options(f):
    f = click.option("--lower", "lower", multiple=True, metavar="GLOB",
                     help="Measures for which lower is better (divergences). Repeatable.")(f)
    f = click.option("--human", "human", multiple=True, metavar="GLOB",
                     help="Measures that are human judgments, e.g. 'expert.*'. Repeatable.")(f)
    return f


def _replicate_option(f):
    return click.option("--replicate", default=0, type=int, show_default=True, metavar="N",
                        help="The run of the files' automatic scores (a metric run again on the same cells: run 1, "
                             "2, ...; default 0, the first); the analyses read the mean over the runs.")(f)


def _run_ingest(obj: Context, dataset: str, batches, replace: bool, allow_new: bool, human=(), lower=()) -> None:
    from metaeval.ingest.common import check_globs_used

    measures = [m for b in batches for m in b.measures["name"]]
    files = [b.file for b in batches]
    check_globs_used(human, measures, "--human", files)
    check_globs_used(lower, measures, "--lower", files)
    with obj.open(create=not obj.path.exists()) as wh:
        reports = wh.load(dataset, batches, replace=replace, command=_command_line(), allow_new=allow_new)
    echo_reports(reports)


@ingest.command("sacrerouge", short_help='SacreROUGE metrics jsonl files (one summary per line).')
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_ingest_options
@_measure_options
@_replicate_option
@click.pass_obj
def ingest_sacrerouge(obj, files, dataset, replace, allow_new, human, lower, replicate):
    """SacreROUGE metrics jsonl files (one summary per line, nested 'metrics')."""
    from metaeval.ingest import sacrerouge, table

    table.run_option(replicate, list(files))   # before a new warehouse is made
    with obj.open(create=not obj.path.exists()) as wh:
        reports = sacrerouge.ingest(wh, dataset, list(files), human=human, lower=lower, replace=replace,
                                    allow_new=allow_new, command=_command_line(), replicate=replicate)
    echo_reports(reports)


@ingest.command("summaries")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_ingest_options
@click.pass_obj
def ingest_summaries(obj, files, dataset, replace, allow_new):
    """SacreROUGE summaries jsonl: summary texts, references, documents."""
    from metaeval.ingest import summaries

    _run_ingest(obj, dataset, [summaries.parse(f) for f in files], replace, allow_new)


@ingest.command("eee", short_help='Every Eval Ever 0.3.0 JSON lines (as `export --format eee` writes).')
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_ingest_options
@_replicate_option
@click.pass_obj
def ingest_eee(obj, files, dataset, replace, allow_new, replicate):
    """Every Eval Ever 0.3.0 JSON lines (as `export --format eee` writes): instance-level records
    as values (systems = models, inputs = samples, measures = evaluation names), with their texts."""
    from metaeval.ingest import eee, table

    table.run_option(replicate, list(files))
    _run_ingest(obj, dataset, [eee.parse(f, replicate=replicate) for f in files], replace, allow_new)


@ingest.command("table", short_help='Tables of scores or judgments (CSV, TSV, Parquet, JSONL), long or wide.')
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path, allow_dash=True))
@_ingest_options
@_measure_options
@stdin.format_option()
@click.option("--replicate", default=0, type=int, show_default=True, metavar="N",
              help="The run of the scores whose row gives none (a metric run again on the same cells: 1, 2, ...); "
                   "the analyses read each cell's mean over its runs.")
@click.pass_obj
def ingest_table(obj, files, dataset, replace, allow_new, human, lower, input_format, replicate):
    """Tables (.csv, .tsv, .parquet, .jsonl), long: system, [input,] measure, value[, annotator][, kind][, replicate];
    or wide: system, [input,] [replicate,] and one column per measure (--human marks judgment columns).

    Without an input column the values are per system and stored under one input 'all'. A file
    - is standard input (its format given by --format or told from its first bytes). replicate:
    the run of an automatic score (a non-negative integer; default --replicate's, 0).
    """
    from metaeval.ingest import table

    dashes = stdin.check_dashes([str(f) for f in files], "FILES")
    if input_format and not dashes:
        raise click.UsageError("--format is the format of - (standard input); a file's comes from its suffix")
    with ExitStack() as stack:
        piped = stack.enter_context(stdin.stdin_table(input_format)) if dashes else None
        paths = [piped if str(f) == stdin.DASH else f for f in files]
        names = [stdin.NAME if str(f) == stdin.DASH else str(f) for f in files]
        table.run_option(replicate, names)   # before a new warehouse is made
        with obj.open(create=not obj.path.exists()) as wh:
            reports = table.ingest(wh, dataset, paths, human=human, lower=lower, replace=replace,
                                   allow_new=allow_new, command=_command_line(), names=names, replicate=replicate)
    echo_reports(reports)


@ingest.command("attributes", short_help='Attributes of inputs or cells (CSV, TSV, Parquet, JSONL).')
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--dataset", required=True, help="Dataset whose inputs (and cells) the attributes describe.")
@click.option("--replace", is_flag=True, help="Overwrite stored attribute values that differ, instead of failing.")
@click.pass_obj
def ingest_attributes(obj, file, dataset, replace):
    """Attributes of inputs or cells (.csv, .tsv, .parquet, .jsonl), long: input, attribute, value
    (every system's cell of the input), or system, input, attribute, value (one cell; a cell's value
    overrides its input's). E.g. source=cnndm|xsum, split=validation|test; select cells with --where.
    """
    from metaeval.ingest import attributes

    with obj.open() as wh:
        report = attributes.ingest(wh, dataset, file, replace=replace, command=_command_line())
    echo_reports([report])


@ingest.command("mtme", short_help="An mt-metrics-eval evaluation set directory (wmt23/...), one language pair.")
@click.argument("directory", type=click.Path(path_type=Path))
@_ingest_options
@click.option("--lp", default=None, help="Language pair (e.g. en-de); needed when the set has several.")
@click.option("--lower", "lower", multiple=True, metavar="GLOB",
              help="Measures for which lower is better (mt-metrics-eval's scores are higher-better). Repeatable.")
@click.option("--replicate", default=0, type=int, show_default=True, metavar="N",
              help="The run of the set's metric scores (a metric run again: 1, 2, ...; default 0); the human "
                   "scores are ingested as they are (a judgment has no runs).")
@click.pass_obj
def ingest_mtme(obj, directory, dataset, replace, allow_new, lp, lower, replicate):
    """An mt-metrics-eval evaluation set directory (e.g. wmt23/), one language pair.

    human-scores/LP.NAME.LEVEL.score and metric-scores/LP/NAME.LEVEL.score become measures
    NAME.seg (cells: system x segment index) and NAME.sys (per system, input 'all'); sources,
    references and system-outputs the texts.
    """
    from metaeval.ingest import mtme, run_numbers, table

    table.run_option(replicate, [str(directory)])   # before the set is read
    evalset = mtme.parse(directory, lp, lower=lower)
    run_numbers.given(evalset.batches, replicate, judgments="skip")
    say(f"{directory}: language pair {evalset.lp}, {evalset.n_segments} segments, "
               f"{len(evalset.batches)} files")
    for path in evalset.not_read:
        say(f"not read (only seg and sys .score files and .txt/.jsonl texts are): {path}", err=True)
    _run_ingest(obj, dataset, evalset.batches, replace, allow_new, (), lower)


@ingest.command("preferences", short_help='Pairwise preferences: a long table, arena votes or AlpacaEval annotations.')
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_ingest_options
@click.option("--judge", default=None, metavar="NAME",
              help="Arena vote tables and AlpacaEval annotations: the automatic judge whose votes these are "
                   "(arena votes are human without it).")
@click.option("--replicate", default=0, type=int, show_default=True, metavar="N",
              help="The run of the rows that give none (a judge asked again on the same items: run 1, 2, ...; "
                   "the analyses read the mean over the runs).")
@click.pass_obj
def ingest_preferences(obj, file, dataset, replace, allow_new, judge, replicate):
    """Pairwise preferences: a long table (CSV, TSV, Parquet, JSONL) input,system_a,system_b,
    judge,order,winner[,kind][,replicate]; or an arena vote table (model_a, model_b, winner[, question_id]
    [, judge]); or AlpacaEval annotations (generator_1, generator_2, preference 1/2/1.5,
    instruction or instruction_id[, annotator][, output_1, output_2 or length_1, length_2]).

    order: ab (system_a's output shown first) or ba; winner: a, b or tie (names the system, not
    the position); kind: automatic (default) or human (each annotator is a human judge);
    replicate: the run (a non-negative integer; default --replicate's, 0).
    Table preferences; views preference_means (the mean over runs: the soft preference) and
    preference_matrix (judge x item, the verdict in each order).
    """
    from metaeval.ingest import preferences

    with obj.open(create=not obj.path.exists()) as wh:
        report = preferences.ingest(wh, dataset, file, replace=replace, allow_new=allow_new, command=_command_line(),
                                    judge=judge, replicate=replicate)
    echo_reports([report])


# --- mqm (issue 36): MQM / ESA error spans ------------------------------------------------
@ingest.command("mqm", short_help="MQM / ESA error spans (tab-separated), or ESA's released CSV.")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@_ingest_options
@click.option("--weights", default=None, metavar="SPECS",
              help="The weighting of the MQM score, mt-metrics-eval's 'severity[/category...]:weight' specs, "
                   "e.g. 'major:5 minor:1 minor/Fluency/Punctuation:0.1' (measure mqm[...]); default: the "
                   "released one (measure mqm).")
@click.option("--judge", default=None, metavar="NAME",
              help="The spans are this metric's predictions (an automatic judge), not raters'.")
@click.option("--format", "fmt", type=click.Choice(["auto", "tsv", "esa-csv"]), default="auto", show_default=True,
              help="tsv: the MQM/ESA layout below; esa-csv: ESA's released CSV (WMT24 humeval/esa_*.csv, no "
                   "header); auto: esa-csv when the first line is twelve comma-separated fields.")
@click.option("--lp", default=None, metavar="SRC-TGT",
              help="esa-csv: the language pair to read, as its lang1-lang2 fields (e.g. eng-jpn); needed when "
                   "the file holds several.")
@click.option("--targets", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None, metavar="DIR",
              help="esa-csv: the system outputs the spans point into, DIR/SYSTEM.txt with one line per segment "
                   "(line_id from 0; WMT24's or mt-metrics-eval's system-outputs/LP/); without it, the target "
                   "texts the dataset holds (ingest mtme) are used.")
@click.pass_obj
def ingest_mqm(obj, file, dataset, replace, allow_new, weights, judge, fmt, lp, targets):
    """MQM / ESA error spans (tab-separated, no quoting): system doc doc_id seg_id rater source target
    category severity [comment] [score], the span marked <v>...</v> in source or target; or ESA's
    released CSV (--format esa-csv: scores and target-side spans, no texts: --targets DIR gives the
    system outputs, or the dataset's stored ones are used; every span is checked within its text).

    Spans go to the table error_spans (view error_span_texts), the texts without markers stored once
    per segment; each rater's segment score becomes its judgment of the human measure mqm (or
    mqm[...] with --weights), or esa with a score column (0-100).
    """
    from metaeval.ingest import mqm_store as mqm

    if weights is not None and judge is not None:
        raise click.UsageError("--weights scores raters' errors; a --judge's spans are stored without a score")
    with obj.open(create=not obj.path.exists()) as wh:
        report = mqm.ingest(wh, dataset, file, weights=mqm.DEFAULT_WEIGHTS if weights is None else weights, judge=judge,
                            replace=replace, allow_new=allow_new, command=_command_line(), fmt=fmt, lp=lp,
                            targets=targets)
    echo_reports([report])
# --- end mqm ---------------------------------------------------------------------------------


COMMANDS = [ingest]
