"""What every number rests on: the dataset and its measures (duplicates said), and the runs
behind the sections (parameters, versions, data fingerprints), collapsed."""

from __future__ import annotations

import html

import pandas as pd

from metaeval.runs.report.cells import table_html
from metaeval.runs.report.context import Context, Section

PROVENANCE_COLUMNS = ["run_id", "command", "status", "version", "started_at", "seed", "data_fingerprint",
                      "parameters"]


def _dataset_line(summary: pd.DataFrame) -> str:
    if summary.empty:
        return "no rows"
    r = summary.iloc[0]
    return (f"{r['n_systems']} systems × {r['n_inputs']} inputs, {r['n_automatic']} automatic and "
            f"{r['n_human']} human measures")


def overview(ctx: Context) -> Section:
    s = Section("Dataset and measures", "dataset")
    summary = ctx.wh.sql("SELECT * EXCLUDE (created_at) FROM dataset_summary WHERE dataset = ?", [ctx.dataset])
    measures = ctx.wh.measures(ctx.dataset, duplicates=True)
    s.blocks.append(f"<details><summary>the dataset: {html.escape(_dataset_line(summary))}</summary>"
                    + table_html(summary) + "</details>")
    s.blocks.append(f"<details><summary>its {len(measures)} measures: kind, direction, scale (empty: none "
                    "declared), coverage, duplicates</summary>" + table_html(measures) + "</details>")
    if note := duplicates_note(ctx):
        s.blocks.append(f'<p class="note">{html.escape(note)}</p>')
    return s


def duplicates_note(ctx: Context) -> str | None:
    duplicates = ctx.duplicates
    if duplicates.empty:
        return None
    said = "; ".join(f"{m} = {d}" + (" (identical values)" if r == "identical" else
                                       " (a positive affine transform, up to rounding)")
                     for m, d, r in zip(duplicates["measure"], duplicates["duplicate_of"], duplicates["relation"]))
    return (f"Duplicated measures: {said}. Each pair gives the same correlations, intervals and tests; "
            "the agreement figures leave their pairs out (tau = 1 by construction).")


def runs_line(run_ids: set[int]) -> str:
    """The runs behind a section, each a link to its row in the provenance section."""
    if not run_ids:
        return ""
    links = ", ".join(f'<a href="#run-{int(r)}">{int(r)}</a>' for r in sorted(run_ids))
    return f'<p class="runs">Runs behind this section (parameters, seed, data fingerprint): {links}.</p>'


def provenance(ctx: Context) -> Section:
    """The runs behind the sections on the page (``ctx.run_ids``), one row each."""
    s = Section("Provenance: the runs behind every number", "provenance")
    runs = ctx.wh.sql(f"SELECT {', '.join(PROVENANCE_COLUMNS)} FROM analysis_runs "
                      "WHERE list_contains(?, run_id) ORDER BY run_id", [sorted(int(r) for r in ctx.run_ids)])
    if runs.empty:
        s.note = "no analysis results are shown, so no run is behind this report"
        return s
    versions = ", ".join(sorted(set(map(str, runs["version"]))))
    s.blocks.append(f"<details><summary>{len(runs)} analysis runs (metaeval {html.escape(versions)}): command, "
                    "status, version, start, seed, the sha256 fingerprint of the cells analysed, parameters"
                    "</summary>" + table_html(runs, row_ids=[f"run-{int(r)}" for r in runs["run_id"]])
                    + "</details>")
    return s
