"""An HTML report of a dataset's persisted results: figures, the tables behind them, and the
provenance (parameters, seed, data fingerprint) of every result shown. Nothing is recomputed,
with one exception, said in its captions: the per-input Kendall tau drawn against the input
properties (the figure 1 of Bhandari et al. 2020) is not persisted, so it is computed from the
stored scores by :func:`metaeval.runs.agreement.tau_vs_property` for a few metric pairs.

The report is a directory: ``index.html``, each figure as PNG and SVG, and each table behind a
figure as CSV at full precision (the HTML shows 4 decimals).
"""

from __future__ import annotations

import glob
import html
import json
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from metaeval import files
from metaeval.analyses import figures
from metaeval.runs import annotators
from metaeval.core import Warehouse
from metaeval.errors import WarehouseError

DECIMALS = 4
#: Up to this many metric pairs are drawn against each input property (the paper's figure 1).
MAX_PROPERTY_PAIRS = 6
#: The columns of latest_property_agreement shown and written with the figures of tau against properties.
PROPERTY_COLUMNS = ["metric_a", "metric_b", "property", "n_used", "tau_mean", "pearson", "pearson_p", "spearman",
                    "spearman_p", "run_id"]
PROVENANCE_COLUMNS = ["run_id", "command", "parameters", "seed", "data_fingerprint", "version", "started_at"]


@dataclass
class Section:
    title: str
    note: str = ""
    blocks: list[str] = field(default_factory=list)     # HTML fragments
    run_ids: set[int] = field(default_factory=set)


def _slug(*parts) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", "_".join(str(p) for p in parts)).strip("-")


def _table_html(frame: pd.DataFrame) -> str:
    return frame.to_html(index=False, float_format=lambda x: f"{x:.{DECIMALS}f}", na_rep="", border=0,
                         classes="data")


def correlations(wh: Warehouse, dataset: str, human: str, level: str, coefficient: str) -> dict[str, float]:
    """metric -> its latest correlation with ``human`` at ``level`` and ``coefficient`` (the
    order of a significance heatmap's metrics); empty when ``correlate`` has not run."""
    rows = wh.sql("SELECT metric, value FROM latest_correlations WHERE dataset = ? AND human = ? AND level = ? "
                  "AND coefficient = ?", [dataset, human, level, coefficient])
    return dict(zip(rows["metric"], rows["value"], strict=True))


class _Builder:
    def __init__(self, wh: Warehouse, dataset: str, human: str | None, out: Path, command: Callable[..., str]):
        self.wh, self.dataset, self.human, self.out, self.command = wh, dataset, human, out, command
        self.images: list[str] = []

    def rows(self, view: str) -> pd.DataFrame:
        return self.wh.sql(f"SELECT * FROM {view} WHERE dataset = ? AND (? IS NULL OR human = ?) ORDER BY result_id",
                           [self.dataset, self.human, self.human])

    def figure(self, section: Section, fig, name: str, caption: str, table: pd.DataFrame) -> None:
        png, svg = figures.save(fig, self.out / name)
        table.to_csv(self.out / f"{name}.csv", index=False)
        self.images.append(png.name)
        section.blocks.append(
            f'<figure><img src="{html.escape(png.name)}" alt="{html.escape(caption)}">'
            f'<figcaption>{html.escape(caption)} — <a href="{html.escape(svg.name)}">SVG</a>, '
            f'<a href="{html.escape(name)}.csv">CSV</a></figcaption></figure>')

    # --- sections ---------------------------------------------------------------------
    def overview(self) -> Section:
        s = Section("Dataset")
        s.blocks.append(_table_html(self.wh.sql("SELECT * EXCLUDE (created_at) FROM dataset_summary WHERE dataset = ?",
                                                [self.dataset])))
        s.blocks.append(_table_html(self.wh.measures(self.dataset, duplicates=True)))
        if note := self.duplicates_note():
            s.blocks.append(f"<p class=\"note\">{html.escape(note)}</p>")
        return s

    def duplicate_pairs(self) -> set[frozenset]:
        """Pairs of measures of which one duplicates the other (view measure_duplicates)."""
        if not hasattr(self, "_duplicates"):
            self._duplicates = self.wh.duplicates(self.dataset)
        return {frozenset(p) for p in zip(self._duplicates["measure"], self._duplicates["duplicate_of"])}

    def duplicates_note(self) -> str | None:
        self.duplicate_pairs()
        if self._duplicates.empty:
            return None
        said = "; ".join(f"{m} = {d}" + (" (identical values)" if r == "identical" else
                                           " (a positive affine transform, up to rounding)")
                         for m, d, r in zip(self._duplicates["measure"], self._duplicates["duplicate_of"],
                                            self._duplicates["relation"]))
        return (f"Duplicated measures: {said}. Each pair gives the same correlations, intervals and tests; "
                "the agreement figures leave their pairs out (tau = 1 by construction).")

    def correlations(self) -> Section:
        s = Section("Correlations with human judgments")
        rows = self.rows("latest_correlations")
        if rows.empty:
            s.note = self._missing("correlations", "correlate")
            return s
        s.run_ids |= set(rows["run_id"])
        for human, part in rows.groupby("human"):
            wide = part.pivot_table(index="metric", columns=["level", "coefficient"], values="value", dropna=False)
            wide.columns = [f"{lv} {c}" for lv, c in wide.columns]
            s.blocks.append(f"<h3>{html.escape(human)}</h3>" + _table_html(wide.reset_index()))
        return s

    def intervals(self) -> Section:
        s = Section("Confidence intervals (the paper's Figure 4)")
        rows = self.rows("latest_confidence_intervals")
        if rows.empty:
            s.note = self._missing("confidence intervals", "ci")
            return s
        s.run_ids |= set(rows["run_id"])
        keys = ["human", "method", "alpha", "level", "coefficient"]
        for key, part in rows.groupby(keys, sort=True):
            human, method, alpha, level, coefficient = key
            caption = f"{1 - alpha:.0%} {method} CIs, {level} level, {coefficient}, against {human}"
            table = part[["metric", "estimate", "lower", "upper", "k", "seed", "run_id"]]
            ceiling = annotators.ceilings(self.wh, self.dataset, human)
            ceiling = ceiling[(ceiling["level"] == level) & (ceiling["coefficient"] == coefficient)]
            line = None
            if not ceiling.empty and pd.notna(ceiling["human_ceiling"].iloc[0]):
                line = tuple(float(ceiling[c].iloc[0]) for c in ("human_ceiling", "human_ceiling_lower",
                                                                  "human_ceiling_upper"))
                caption += (f"; dashed: the human ceiling (leave-one-out, metaeval annotators) {line[0]:.3f} "
                            f"[{line[1]:.3f}, {line[2]:.3f}]")
            self.figure(s, figures.ci_forest(part, caption, line), _slug("ci", *key), caption, table)
            s.blocks.append(f"<details><summary>table</summary>{_table_html(table)}</details>")
        return s

    def tests(self) -> Section:
        s = Section("Pairwise significance (the paper's Figure 5)")
        rows = self.rows("latest_hypothesis_tests")
        if rows.empty:
            s.note = self._missing("hypothesis tests", "compare", needs_pair=True)
            return s
        s.run_ids |= set(rows["run_id"])
        keys = ["human", "method", "alternative", "correction", "correction_group", "alpha", "level", "coefficient"]
        for key, part in rows.groupby(keys, sort=True):
            human, method, alternative, correction, group, alpha, level, coefficient = key
            setting = f"{method} ({alternative}), {level} level, {coefficient}, against {human}"
            phrase = figures.correction_phrase(correction, group)
            shading = (f"filled = p <= {alpha} before correction, outlined = significant after {phrase}"
                       if correction != "none" else f"filled = significant at alpha {alpha} ({phrase})")
            caption = (f"{figures.hypothesis(alternative)} {setting}: {shading}; metrics ordered by their "
                       "correlation with the human judgment (in brackets) when it is stored")
            table = part[["metric_a", "metric_b", "delta", "statistic", "p_value", "p_adjusted", "significant",
                          "k", "seed", "run_id"]]
            order = correlations(self.wh, self.dataset, human, level, coefficient)
            self.figure(s, figures.significance_heatmap(part, alpha, setting, alternative, order or None),
                        _slug("tests", *key),
                        caption, table)
            s.blocks.append(f"<details><summary>table</summary>{_table_html(table)}</details>")
        return s

    def close_pairs(self) -> Section:
        s = Section("Close systems: accuracy by human difference (Deutsch, Dror & Roth 2022)")
        rows = self.rows("latest_delta_bin_accuracy")
        if rows.empty:
            s.note = self._missing("accuracy by bin of human difference", "accuracy", "--delta-bins", "4")
            return s
        s.run_ids |= set(rows["run_id"])
        for key, part in rows.groupby(["human", "bins", "metric_tolerance", "human_tolerance"], sort=True):
            human, bins = key[0], key[1]
            caption = (f"pairwise accuracy within {bins} quantile bins of the system pairs' |human difference| "
                       f"(bin 0 = the closest pairs), against {human}")
            table = part[["metric", "bin", "low", "high", "pairs", "accuracy", "kendall", "run_id"]]
            self.figure(s, figures.delta_bin_accuracy(part, caption), _slug("close", *key), caption, table)
            s.blocks.append(f"<details><summary>table</summary>{_table_html(table)}</details>")
        return s

    def power(self) -> Section:
        s = Section("Statistical power (the paper's Figure 3)")
        if (rows := self.rows("latest_power")).empty:
            s.note = self._missing("power simulations", "simulate", "power", needs_texts=True)
            return s
        s.run_ids |= set(rows["run_id"])
        # one figure per latest_power partition (all but method and proportion): never mix variants
        for key, part in rows.groupby(["human", "variant", "alpha", "level", "coefficient"], sort=True):
            human, variant, alpha, level, coefficient = key
            caption = (f"power of ROUGE-1 {variant} > R_k against the proportion of tokens kept, alpha {alpha}, "
                       f"{level} level, {coefficient}, against {human}")
            table = part[["variant", "method", "proportion", "trials", "rejections", "power", "alpha", "k", "seed",
                          "run_id"]]
            self.figure(s, figures.power_curves(part, caption), _slug("power", *key), caption, table)
            s.blocks.append(f"<details><summary>table</summary>{_table_html(table)}</details>")
        return s

    def coverage(self) -> Section:
        s = Section("CI coverage of held-out correlations (the paper's Table 1)")
        if (rows := self.rows("latest_ci_coverage")).empty:
            s.note = self._missing("coverage simulations", "simulate", "coverage", needs_metric=True)
            return s
        s.run_ids |= set(rows["run_id"])
        s.blocks.append(_table_html(rows[["metric", "human", "level", "coefficient", "method", "alpha", "k", "trials",
                                          "contains", "too_high", "too_low", "coverage", "seed", "run_id"]]))
        return s

    def normality(self) -> Section:
        s = Section("Normality of the scores (the paper's appendix A)")
        rows = self.wh.sql("SELECT * FROM latest_normality WHERE dataset = ? ORDER BY measure, level", [self.dataset])
        if rows.empty:
            s.note = f"no normality results: run `{self.command('normality', '--dataset', self.dataset)}`"
            return s
        s.run_ids |= set(rows["run_id"])
        s.blocks.append(_table_html(rows.drop(columns=[c for c in ("result_id", "dataset", "fingerprint", "conventions")
                                                       if c in rows.columns])))
        return s

    def agreement(self) -> Section:
        from metaeval.analyses import agreement_plots

        s = Section("Inter-metric agreement by score range (Bhandari et al. 2020)")
        rows = self.wh.sql("SELECT * FROM latest_score_range_agreement WHERE dataset = ? ORDER BY result_id",
                           [self.dataset])
        if rows.empty:
            s.note = f"no agreement results yet: run `{self.command('agreement', '--dataset', self.dataset)}`"
            return s
        s.run_ids |= set(rows["run_id"])
        # one heatmap (and one disagreement figure) per setting of latest_score_range_agreement:
        # never a mix of consensus, normalisation, alpha or significant_only
        keys = ["consensus", "normalisation", "alpha", "significant_only"]
        for n, (key, part) in enumerate(rows.groupby(keys, sort=True)):
            consensus, normalisation, alpha, significant_only = key
            setting = (f"{'significant' if significant_only else 'all'} per-input taus (alpha {alpha}), "
                       f"{normalisation} normalisation, consensus of {len(json.loads(consensus))} metrics")
            s.blocks.append(f"<h3>{html.escape(setting[0].upper() + setting[1:])}</h3>"
                            f"<p>Consensus: {html.escape(', '.join(json.loads(consensus)))}.</p>")
            table = part[["metric_a", "metric_b", "bin", "tau", "n_tau", "n_undefined", "disagreement",
                          "random_disagreement", "run_id"]]
            duplicated = [frozenset(p) in self.duplicate_pairs() for p in zip(part["metric_a"], part["metric_b"])]
            if any(duplicated):  # tau = 1 by construction: said, not drawn (the CSV keeps every pair)
                left_out = sorted({" / ".join(sorted(p)) for p, d in zip(zip(part["metric_a"], part["metric_b"]),
                                                                         duplicated) if d})
                s.blocks.append(f"<p class=\"note\">Not drawn: {html.escape(', '.join(left_out))} — one duplicates "
                                "the other (see Dataset), so their tau is 1 in every bin.</p>")
                part = part[[not d for d in duplicated]]
                if part.empty:
                    continue
            cells = agreement_plots.tau_heatmap_table(part)
            pairs = part[["metric_a", "metric_b"]].drop_duplicates().shape[0]
            rows_are = ("metric pairs, then their mean" if len(cells) == pairs + 1 else
                        f"each metric's mean over its {len(json.loads(consensus)) - 1} pairs (more than "
                        f"{agreement_plots.MAX_HEATMAP_PAIRS} pairs: every pair is in the CSV), then the mean "
                        f"over all {pairs} pairs")
            caption = (f"τ by bin heatmap: mean over inputs of the per-input Kendall τ between metrics, by bin of "
                       f"the input's score range: L, M, T (non-cumulative thirds), then L+M+T, M+T (cumulative); "
                       f"rows: {rows_are}; n/a: no input with a defined τ. Setting: {setting}.")
            self.figure(s, agreement_plots.tau_heatmap(part, setting),
                        _slug("agreement-tau", n, normalisation, alpha, significant_only), caption, table)
            s.blocks.append("<details><summary>table: the heatmap's cells</summary>"
                            + _table_html(cells.reset_index()) + "</details>")
            self.figure(s, agreement_plots.disagreement_by_bin(part), _slug("agreement-disagreement", n, normalisation,
                                                                            alpha, significant_only),
                        f"pairwise disagreement by score bin against random scores: {setting}", table)
        props = self.wh.sql("SELECT * FROM latest_property_agreement WHERE dataset = ? ORDER BY result_id",
                            [self.dataset])
        if not props.empty:
            s.run_ids |= set(props["run_id"])
            s.blocks.append("<h3>Per-input agreement against input properties (the paper's figure 1)</h3>")
            for n, (key, part) in enumerate(props.groupby(["consensus", "alpha", "significant_only"], sort=True)):
                self._properties(s, n, *key, part)
        return s

    def _properties(self, s: Section, n: int, consensus: str, alpha: float, significant_only: bool,
                    part: pd.DataFrame) -> None:
        """Per-input tau against each stored property, for one setting of latest_property_agreement
        (one figure per property). Per-input tau is not persisted: it is computed from the
        warehouse's matrices by agreement_runs.tau_vs_property, for at most MAX_PROPERTY_PAIRS pairs."""
        from metaeval.analyses import agreement, agreement_plots
        from metaeval.runs import agreement as agreement_runs

        metrics = json.loads(consensus)
        setting = (f"{'significant' if significant_only else 'all'} per-input taus (alpha {alpha}), consensus of "
                   f"{len(metrics)} metrics")
        s.blocks.append(f"<h4>{html.escape(setting[0].upper() + setting[1:])}</h4>")
        stored = [p for p in agreement.PROPERTIES if p in set(part["property"])]
        if lacking := [p for p in agreement.TEXT_PROPERTIES if p not in stored]:
            s.blocks.append(f'<p class="note">{html.escape(self._text_properties_note(lacking))}</p>')
        pairs = _property_pairs(part)
        total = len(part[["metric_a", "metric_b"]].drop_duplicates())
        chosen = (f"all {total} metric pairs" if len(pairs) == total else
                  f"{len(pairs)} of the {total} metric pairs, spread evenly from the lowest to the highest mean "
                  "per-input τ (every pair's correlations are in the table below)")
        only = f", inputs with p <= {alpha} only" if significant_only else ""
        try:
            scope = agreement_runs.resolve(self.wh, self.dataset, [glob.escape(m) for m in metrics])
            data = agreement_runs.load(self.wh, scope, "input")  # per-input tau ignores the normalisation
            for prop in stored:
                drawn = part[part["property"] == prop].set_index(["metric_a", "metric_b"]).loc[pairs].reset_index()
                window = _window(drawn)
                series = {(a, b): agreement_runs.tau_vs_property(self.wh, scope, a, b, prop, window=window,
                                                                 alpha=alpha, significant_only=significant_only,
                                                                 data=data)
                          for a, b in pairs}
                caption = (f"per-input Kendall τ against {agreement_plots.PROPERTY_LABELS[prop]} (the paper's "
                           f"figure 1): each point is an input, its τ over all its complete summaries (bin L+M+T"
                           f"{only}), computed for this figure from the stored scores (per-input τ is not "
                           f"persisted); red: {window}-point moving average; panel titles: the stored correlation "
                           f"over inputs; {chosen}. Setting: {setting}.")
                stale = [f"{r.metric_a} vs {r.metric_b}" for r in drawn.itertuples()
                         if len(series[(r.metric_a, r.metric_b)]) != r.n_used]
                if stale:
                    caption += (f" Warning: the stored rows of {', '.join(stale)} count other inputs than drawn (the "
                                f"scores changed since): rerun `{self.command('agreement', '--dataset', self.dataset)}`.")
                self.figure(s, agreement_plots.tau_vs_property_pairs(series, prop, drawn, setting),
                            _slug("agreement-property", n, prop, alpha, significant_only), caption,
                            drawn[PROPERTY_COLUMNS])
        except WarehouseError as exc:
            s.blocks.append(f'<p class="note">{html.escape(f"per-input τ cannot be drawn: {exc}")}</p>')
        s.blocks.append("<details><summary>table: correlation over inputs of per-input τ with each property, "
                        "every pair</summary>" + _table_html(part[PROPERTY_COLUMNS]) + "</details>")

    def _text_properties_note(self, lacking: list[str]) -> str:
        counts = self.wh.con.execute(
            """SELECT (SELECT count(*) FROM documents JOIN inputs USING (input_id) JOIN datasets USING (dataset_id)
                       WHERE datasets.name = $d),
                      (SELECT count(*) FROM "references" JOIN inputs USING (input_id) JOIN datasets USING (dataset_id)
                       WHERE datasets.name = $d)""", {"d": self.dataset}).fetchone()
        what = " and ".join(lacking)
        if counts[0] and counts[1]:
            return (f"{what}: not stored for these metrics although the dataset now has documents and references: "
                    f"run `{self.command('agreement', '--dataset', self.dataset)}` again")
        return (f"{what} need the source documents and the reference texts; dataset {self.dataset!r} stores "
                f"{counts[0]} documents and {counts[1]} reference texts (`metaeval ingest summaries` stores those "
                "its file has), "
                "so only ease of summarisation is drawn")

    def _missing(self, what: str, *command: str, needs_texts: bool = False, needs_metric: bool = False,
                 needs_pair: bool = False) -> str:
        """"no WHAT yet", with a command that can run on this warehouse: real measure names (the
        report's human judgment, else the dataset's first), the warehouse's --db, and, when the
        command cannot run here (no human judgment, no summary texts), what is missing instead."""
        humans = sorted(self.wh.measures(self.dataset, "human")["measure"])
        human = self.human or (humans[0] if humans else None)
        if human is None:
            return (f"no {what}: dataset {self.dataset} has no human judgment to correlate with "
                    f"(mark one with --human when ingesting)")
        if needs_texts and not self.wh.sql("SELECT 1 FROM summary_texts WHERE dataset = ? LIMIT 1",
                                           [self.dataset]).shape[0]:
            return (f"no {what}: they score the summary texts, and dataset {self.dataset} has none "
                    f"(add them with `{self.command('ingest', 'summaries', 'SUMMARIES.jsonl', '--dataset', self.dataset)}`)")
        args = [*command, "--dataset", self.dataset, "--human", human]
        metrics = sorted(self.wh.measures(self.dataset, "automatic")["measure"])
        if len(metrics) < (2 if needs_pair else 1):
            return (f"no {what}: they need {'two automatic metrics' if needs_pair else 'an automatic metric'}, "
                    f"and dataset {self.dataset} has {len(metrics) or 'none'}")
        if needs_metric:
            args += ["--metric", metrics[0]]
        return f"no {what} yet: run `{self.command(*args)}`"

    def provenance(self, run_ids: set[int]) -> str:
        if not run_ids:
            return ""
        runs = self.wh.sql(f"SELECT {', '.join(PROVENANCE_COLUMNS)} FROM analysis_runs "
                           "WHERE list_contains(?, run_id) ORDER BY run_id", [sorted(int(r) for r in run_ids)])
        return "<details><summary>provenance: runs behind this section</summary>" + _table_html(runs) + "</details>"


def _property_pairs(rows: pd.DataFrame) -> list[tuple[str, str]]:
    """The metric pairs drawn against the properties: all, or MAX_PROPERTY_PAIRS of them spread
    evenly over the ranking by mean per-input tau (the same pairs for every property)."""
    mean = (rows.groupby(["metric_a", "metric_b"])["tau_mean"].mean().sort_index()
            .sort_values(kind="stable", na_position="last"))
    if len(mean) <= MAX_PROPERTY_PAIRS:
        return sorted(mean.index)
    defined = mean.dropna()
    ranked = defined if len(defined) >= MAX_PROPERTY_PAIRS else mean
    picks = sorted(set(np.round(np.linspace(0, len(ranked) - 1, MAX_PROPERTY_PAIRS)).astype(int)))
    return [ranked.index[i] for i in picks]


def _window(rows: pd.DataFrame) -> int:
    """The moving average of tau against a property: the paper's 10 points (TAC, 46 inputs), or
    100 (CNNDM, 11,490) beyond 1,000 inputs; at most a third of the fewest inputs drawn, at least 2."""
    paper = 10 if int(rows["n_inputs"].max()) <= 1000 else 100
    return min(paper, max(2, int(rows["n_used"].min()) // 3))


STYLE = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table.data{border-collapse:collapse;font-size:12px;margin:.5em 0}table.data td,table.data th{padding:2px 8px;
border-bottom:1px solid #ddd;text-align:right}figure{margin:1em 0}img{max-width:100%}.note{color:#a55}
details{margin:.3em 0 1em}code{background:#f4f4f4;padding:0 3px}"""


def build(wh: Warehouse, dataset: str, out: Path, human: str | None = None, *, overwrite: bool = False,
          command: Callable[..., str] | None = None) -> tuple[Path, list[str]]:
    """Write the report of ``dataset`` into directory ``out``; (index.html, image file names).

    The report is written beside ``out`` and moved into place when complete (a failure leaves
    nothing behind); an existing report in ``out`` is replaced only with ``overwrite``, and a
    non-empty directory that is not a report never (:mod:`metaeval.files`). ``command`` formats
    the hints of missing sections as runnable command lines (default: ``metaeval ARGS``)."""
    wh.require_dataset(dataset)
    if human is not None:
        humans = set(wh.measures(dataset, "human")["measure"])
        if human not in humans:
            raise WarehouseError(f"dataset {dataset!r} has no human judgment {human!r}; it has: "
                                 f"{', '.join(sorted(humans)) or 'none'}")
    with files.atomic_directory(out, warehouse=wh.path, overwrite=overwrite) as tmp:
        images = _write(wh, dataset, human, tmp, command or (lambda *args: shlex.join(["metaeval", *map(str, args)])))
    return out / "index.html", images


def _write(wh: Warehouse, dataset: str, human: str | None, out: Path, command: Callable[..., str]) -> list[str]:
    b = _Builder(wh, dataset, human, out, command)
    sections = [b.overview(), b.correlations(), b.intervals(), b.tests(), b.close_pairs(), b.power(), b.coverage(),
                b.normality(), b.agreement()]
    body = []
    for s in sections:
        body.append(f"<h2>{html.escape(s.title)}</h2>")
        if s.note:
            body.append(f'<p class="note">{html.escape(s.note)}</p>')
        body += s.blocks
        body.append(b.provenance(s.run_ids))
    title = f"metaeval report: {dataset}" + (f" against {human}" if human else "")
    page = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
            f"<p>Warehouse <code>{html.escape(str(wh.path))}</code>. Every number below is read from its tables; "
            "each section lists the runs (parameters, seed, data fingerprint) that produced it.</p>"
            + "\n".join(body) + "</body></html>")
    (out / "index.html").write_text(page, encoding="utf-8")
    return b.images
