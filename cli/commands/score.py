"""``metaeval score``: metrics computed from the stored texts."""

from __future__ import annotations

import click

from metaeval.cli.app import Context, LazyChoice, _command_line


@click.command()
@click.argument("dataset")
@click.option("--metric", "metrics", multiple=True, required=True, type=LazyChoice("metaeval.runs.scoring:METRICS"),
              help="Metric family to compute. Repeatable.")
@click.option("--variant", "variants", multiple=True, metavar="NAME",
              help="ROUGE variant by name, e.g. 'rouge-2.recall[stem,stop]' (kinds rouge-1..4, rouge-l, "
                   "rouge-lsum, rouge-w, rouge-s4, rouge-su4; statistics precision, recall, f1; flags stem, "
                   "stop, maxref). Repeatable.")
@click.option("--grid", type=LazyChoice("metaeval.runs.scoring:GRIDS"), default=None,
              help="A whole grid of ROUGE variants: default (ROUGE-1/2/L x P/R/F1), graham (Graham 2015's "
                   "96 summary-level variants), full (every kind x statistic x stem x stop).")
@click.option("--js-n", default=2, show_default=True, type=click.IntRange(1), help="JS divergence: n-gram order.")
@click.option("--js-target", type=click.Choice(["reference", "document"]), default="reference", show_default=True,
              help="JS divergence against the references or the input documents (Louis & Nenkova).")
@click.option("--js-stem/--no-js-stem", default=False, show_default=True)
@click.option("--js-stop/--no-js-stop", default=False, show_default=True)
@click.option("--js-smoothing/--no-js-smoothing", default=False, show_default=True,
              help="Louis & Nenkova's smoothing (delta = 0.0005, B = 1.5 |V|).")
@click.option("--prefix", default="", show_default=True,
              help="Prepended to every measure name, e.g. 'ours:' to keep computed scores apart from a "
                   "dataset's released ones of the same name.")
@click.option("--replace", is_flag=True, help="Overwrite stored scores that differ.")
@click.pass_obj
def score(obj: Context, dataset, metrics, variants, grid, js_n, js_target, js_stem, js_stop, js_smoothing, prefix, replace):
    """Score the summary texts of DATASET and store the scores as automatic measures.

    Measures are named by their settings (rouge-2.recall[stem,stop], js-2, bleu, chrf);
    scoring twice changes nothing.
    """
    from metaeval.runs import scoring

    rouge_variants = list(variants)
    if grid:
        rouge_variants += [v for v in scoring.GRIDS[grid]() if v not in rouge_variants]
    if rouge_variants and "rouge" not in metrics:
        raise click.UsageError("--variant/--grid choose ROUGE variants: add --metric rouge")
    js = scoring.JSSetting(js_n, js_target, js_stem, js_stop, js_smoothing)
    with obj.open() as wh:
        report, names, dropped = scoring.score_dataset(
            wh, dataset, metrics, rouge_variants, js, prefix=prefix, replace=replace,
            command=_command_line())
    state = (f"inserted {report.inserted}" + (f", replaced {report.replaced}" if report.replaced else "")
             if report.changed else "all already in the warehouse; nothing changed")
    click.echo(f"scored {len(names)} measure(s) on {dataset}: {report.rows} values, {state}")
    if dropped:
        click.echo(f"{dropped} undefined value(s) (e.g. an empty summary) left out as missing cells")


COMMANDS = [score]
