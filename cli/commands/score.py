"""``metaeval score``: metrics computed from the stored texts."""

from __future__ import annotations


from pathlib import Path

import click

from metaeval.cli.app import Context, FiniteFloatRange, LazyChoice, _command_line, say, show
from metaeval.cli.progress import terminal_progress
from metaeval.cli.sections import topic
from metaeval.cli.dataset_option import dataset_argument


def _comma_list(kind):
    """A click callback: a comma-separated list (``5,10``, ``plain,kw``) of ``kind`` values."""
    def parse(ctx, param, value):
        if value is None:
            return None
        try:
            items = [kind(v.strip()) for v in value.split(",") if v.strip()]
        except ValueError:
            raise click.BadParameter(f"{value!r}: expected a comma-separated list, e.g. {param.metavar}") from None
        if not items:
            raise click.BadParameter("empty list")
        return tuple(dict.fromkeys(items))
    return parse


def _queries(ctx, param, value):
    items = _comma_list(str)(ctx, param, value)
    if items:
        from metaeval.analyses.text.retrieval import QUERIES

        bad = [q for q in items if q not in QUERIES]
        if bad:
            raise click.BadParameter(f"{', '.join(bad)}: choose from {', '.join(QUERIES)}")
    return items


def _cutoffs(ctx, param, value):
    items = _comma_list(int)(ctx, param, value)
    if items and any(n < 1 for n in items):
        raise click.BadParameter("cut-offs are positive integers, e.g. 5,10")
    return items


@topic("ingest")
@click.command(short_help='Score the summary texts of DATASET and store the scores as metrics.')
@dataset_argument
@click.option("--metric", "metrics", multiple=True, required=True, type=LazyChoice("metaeval.runs.texts.scoring:METRICS"),
              help="Metric family to compute. Repeatable.")
@click.option("--variant", "variants", multiple=True, metavar="NAME",
              help="ROUGE variant by name, e.g. 'rouge-2.recall[stem,stop]' (kinds rouge-1..4, rouge-l, "
                   "rouge-lsum, rouge-w, rouge-s4, rouge-su4, rouge-s, rouge-su (unlimited skip); statistics "
                   "precision, recall, f1; flags stem, stop, maxref). Repeatable.")
@click.option("--grid", type=LazyChoice("metaeval.runs.texts.scoring:GRIDS"), default=None,
              help="A whole grid of ROUGE variants: default (ROUGE-1/2/L x P/R/F1), graham (Graham 2015's "
                   "96 summary-level variants), full (every kind x statistic x stem x stop).")
@click.option("--js-n", default=2, show_default=True, type=click.IntRange(1), help="JS divergence: n-gram order.")
@click.option("--js-target", type=click.Choice(["reference", "document"]), default="reference", show_default=True,
              help="JS divergence against the references or the input documents (Louis & Nenkova).")
@click.option("--js-stem/--no-js-stem", default=False, show_default=True)
@click.option("--js-stop/--no-js-stop", default=False, show_default=True)
@click.option("--js-smoothing/--no-js-smoothing", default=False, show_default=True,
              help="Louis & Nenkova's smoothing (delta = 0.0005, B = 1.5 |V|).")
@click.option("--input-stem/--no-input-stem", default=True, show_default=True,
              help="kl, cosine, topic, probability (Louis & Nenkova's model-free features): stem the words.")
@click.option("--input-stop/--no-input-stop", default=True, show_default=True,
              help="kl, cosine, topic, probability: remove stopwords.")
@click.option("--topic-cutoff", default=10.0, show_default=True, type=FiniteFloatRange(0),
              help="topic, cosine: the log-likelihood ratio (-2 log lambda) above which an input word is a topic "
                   "signature word (Lin & Hovy 2000), against the dataset's other inputs.")
@click.option("--index", "index_name", default=None, metavar="NAME",
              help="SERA: the search index to query (`metaeval index build`).")
@click.option("--query", "queries", default=None, metavar="plain,kw,np", callback=_queries,
              help="SERA: query reformulations, comma-separated (plain: no stopwords or numbers; kw: keywords and "
                   "key phrases above the index's mean idf; np: noun phrases, needs spaCy).  [default: plain]")
@click.option("--cutoff", "cutoffs", default=None, metavar="5,10", callback=_cutoffs,
              help="SERA: rank cut-offs n, comma-separated.  [default: 5,10]")
@click.option("--model", default=None, type=LazyChoice("metaeval.runs.texts.index:MODELS"),
              help="SERA: retrieval model. Default: the index's (see `metaeval index list`).")
@click.option("--mu", default=None, type=FiniteFloatRange(0, min_open=True),
              help="SERA: Dirichlet prior of lm-dirichlet. Default: the index's (2000 unless built otherwise).")
@click.option("--np-model", default="en_core_web_sm", show_default=True,
              help="SERA np queries: the installed spaCy English pipeline that finds noun phrases, or textblob "
                   "(TextBlob's Pattern chunker, installable from the package index with its model: the np extra).")
@click.option("--sweep", "sweep_human", default=None, metavar="H",
              help="SERA: after scoring, correlate every SERA measure scored with the human H at the system level "
                   "(pearson, spearman, kendall; stored as `correlate` stores them) and print correlation against "
                   "cut-off (Cohan & Goharian 2016, Fig. 1). Needs two --cutoff values or more.")
@click.option("--sweep-plot", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="STEM",
              help="With --sweep: draw the sweep to STEM.png and STEM.svg (refused if either exists).")
@click.option("--human", default=None, metavar="H",
              help="regression, sentinel-*: the human measure they predict (regression: Louis & Nenkova's linear "
                   "regression over the ten model-free features; sentinel-cand/-src/-ref: a linear model of surface "
                   "features of the candidate, source or reference alone, each input's cells scored by a model trained "
                   "on the other inputs).")
@click.option("--predictor", "predictors", multiple=True, metavar="NAME",
              help="regression: its predictors, in order -- a model-free feature by name (js, js-smoothed, "
                   "topic-coverage.input, kl.summary-input, cosine.input, topic-fraction.input, cosine-topic.input, "
                   "kl.input-summary, logprob-multinomial.input, logprob-unigram.input) or a stored measure (e.g. "
                   "rouge-2.recall: Louis & Nenkova's JS + ROUGE-2). Repeatable. Default: the ten features.")
@click.option("--trained-on", default=None, metavar="DATASET",
              help="regression: apply the coefficients of the regression scored on DATASET (same --human, "
                   "predictors and model-free setting; its fit on every cell) instead of fitting here "
                   "(Louis & Nenkova 2013, §4.3: trained on TAC 2008, tested on TAC 2009).")
@click.option("--prefix", default="", show_default=True,
              help="Prepended to every measure name, e.g. 'ours:' to keep computed scores apart from a "
                   "dataset's released ones of the same name.")
@click.option("--replace", is_flag=True, help="Overwrite stored scores that differ.")
@click.pass_obj
def score(obj: Context, dataset, metrics, variants, grid, js_n, js_target, js_stem, js_stop, js_smoothing,
          input_stem, input_stop, topic_cutoff, index_name, queries, cutoffs, model, mu, np_model, sweep_human,
          sweep_plot, human, predictors, trained_on, prefix, replace):
    """Score the summary texts of DATASET and store the scores as automatic measures.

    Measures are named by their settings (rouge-2.recall[stem,stop], js-2, bleu, chrf,
    sera-5, sera-dis-10[kw], sera-5[np,bm25], kl.input-summary[stem,stop],
    topic-fraction.input[stem,stop,cutoff=10], regression.input[stem,stop,cutoff=10,human=H]);
    scoring twice changes nothing. kl, cosine, topic and probability are Louis & Nenkova's (2013)
    model-free features against the input documents; regression (with --human H) their linear
    combination predicting H, its coefficients recorded in the ingest's options; sentinel-cand,
    sentinel-src, sentinel-ref (with --human H) one-sided baselines checking the meta-evaluation
    (lightweight stand-ins for Perrella et al.'s 2024 sentinels).
    """
    from metaeval.runs.texts import scoring

    rouge_variants = list(variants)
    if grid:
        rouge_variants += [v for v in scoring.GRIDS[grid]() if v not in rouge_variants]
    if rouge_variants and "rouge" not in metrics:
        raise click.UsageError("--variant/--grid choose ROUGE variants: add --metric rouge")
    js = scoring.JSSetting(js_n, js_target, js_stem, js_stop, js_smoothing)
    sera = None
    if "sera" in metrics:
        if not index_name:
            raise click.UsageError("--metric sera needs --index NAME (build one with `metaeval index build`)")
        given = {"queries": queries, "cutoffs": cutoffs}   # absent: the setting's defaults
        sera = scoring.SERASetting(index_name, model=model, mu=mu, np_model=np_model,
                                   **{k: v for k, v in given.items() if v})
    elif index_name or queries or cutoffs or model or mu is not None or sweep_human:
        raise click.UsageError("--index/--query/--cutoff/--model/--mu/--sweep set SERA: add --metric sera")
    plots = _plot_paths(sweep_plot, sweep_human)
    with obj.open() as wh:
        if sweep_human:
            from metaeval.runs.texts import sera as sera_runs

            sera_runs.check_sweep(wh, dataset, sweep_human, sera)
        report, names, dropped = scoring.score_dataset(
            wh, dataset, metrics, rouge_variants, js, sera=sera, prefix=prefix, replace=replace,
            model_free=scoring.ModelFreeSetting(input_stem, input_stop, topic_cutoff), human=human,
            predictors=predictors, trained_on=trained_on, command=_command_line(), progress=terminal_progress())
    state = (f"inserted {report.inserted}" + (f", replaced {report.replaced}" if report.replaced else "")
             if report.changed else "all already in the warehouse; nothing changed")
    say(f"scored {len(names)} measure(s) on {dataset}: {report.rows} values, {state}")
    if dropped:
        sentinels = [m for m in metrics if m.startswith("sentinel")]
        why = [*(["an empty summary"] if any(m not in sentinels and m != "sera" for m in metrics) else []),
               *(["for SERA, a candidate and a reference that both retrieve nothing"] if sera is not None else []),
               *(["for a sentinel, a cell whose text is missing or whose input's leave-input-out fit is not "
                  "determined by the other inputs"] if sentinels else [])]
        say(f"{dropped} undefined value(s) (e.g. {'; '.join(why)}) left out as missing cells")
    if sweep_human:
        _sweep(obj, dataset, sweep_human, [n for n in names if n.removeprefix(prefix).startswith("sera")], prefix,
               plots)


def _plot_paths(stem, human):
    if stem is None:
        return None
    if not human:
        raise click.UsageError("--sweep-plot draws the sweep: add --sweep H")
    paths = [stem.parent / f"{stem.name}.png", stem.parent / f"{stem.name}.svg"]
    existing = [str(p) for p in paths if p.exists()]
    if existing:
        raise click.UsageError(f"--sweep-plot: {', '.join(existing)} exists; give another STEM")
    return stem


def _sweep(obj: Context, dataset, human, measures, prefix, stem):
    """The cut-off sweep's correlations (stored by the correlate analysis), printed and drawn."""
    from metaeval.runs.texts import sera as sera_runs

    with obj.open() as wh:
        frame = sera_runs.sweep(wh, dataset, human, measures, prefix=prefix, progress=terminal_progress())
    wide = frame.pivot_table(index="cutoff", columns=["variant", "coefficient"], values="value", dropna=False)
    click.echo(f"system-level correlation with {human} against the cut-off (stored in correlations):")
    wide.columns = [f"{variant} {coefficient}" for variant, coefficient in wide.columns]
    show(wide.round(3).reset_index(), "text")          # the text table helper: fits, missing cells empty
    if stem is not None:
        from metaeval.present import figures, study_figures

        paths = figures.save(study_figures.cutoff_figure(frame, human, "system"), stem)
        click.echo(f"wrote {', '.join(map(str, paths))}")


COMMANDS = [score]
