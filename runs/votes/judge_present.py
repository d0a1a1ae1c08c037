"""What ``metaeval judges`` prints (its family's :meth:`~metaeval.runs.engine.families.Family.present`:
:mod:`metaeval.runs.votes.judge_families`): the run's line, the judges' statistics with their intervals,
the tests between judges, the Bradley-Terry strengths; the paper tables (markdown, LaTeX).

Imported when the command prints, never at start-up.
"""

from __future__ import annotations

from metaeval.runs.engine.family_present import TEXT, prose, run_of

#: the judges' statistics shown with their intervals
STATISTICS = ("accuracy", "accuracy_ab", "accuracy_ba", "both_correct", "position_consistency", "first_position_rate",
              "tie_rate", "kappa", "kendall")


def said(wh, summary, rows: dict, params: dict) -> dict:
    """What the output says besides the rows (carried by them): the run's line, the settings of
    the captions and notes, each subset's signature."""
    from metaeval.runs.engine import signatures

    state = "up to date; nothing computed" if summary.run_id is None else \
        f"run {summary.run_id}: wrote {summary.rows} rows"
    tied = "; ".join(f"{n} in {label}" if label else str(n) for label, n in summary.tied_majority.items())
    clustered = f"; clusters of items resampled whole ({params['resample_clusters']})" \
        if params["resample_clusters"] else ""
    clustered += "; each judge's runs resampled within the item resamples" if params["replicates"] == "resample" else ""
    line = (f"judges of {params['dataset']} vs the majority of {summary.human}: {state}; items with a tied human "
            f"majority left out: {tied}{clustered}")
    signed = {subset: signatures.table_signature(wh, part)
              for subset, part in rows["judge_statistics"].groupby("subset", sort=False)}
    return {"line": line, "human": summary.human, "signed": signed,
            **{k: params[k] for k in ("dataset", "k", "seed", "test", "correction", "cluster_rule", "alpha", "ridge")}}


def notes(outcome, fmt: str) -> list[str]:
    from metaeval.present import paper_tables

    s = run_of(outcome["judge_statistics"])
    if s is None or fmt in TEXT:
        return []
    why = paper_tables.judges_undetermined(outcome["judge_statistics"]) if fmt in ("json", "csv") else None
    return [s["line"], *([f"clusters not determined: {why}"] if why else [])]


def _ci(v, lo, hi) -> str:
    import math

    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "undefined"
    if lo is None or hi is None or (isinstance(lo, float) and (math.isnan(lo) or math.isnan(hi))):
        return f"{v:.3f}"
    return f"{v:.3f} [{lo:.3f}, {hi:.3f}]"


def present(outcome, fmt: str, layout: str = "auto") -> str:
    """Text: the run, the statistics with their intervals, the tests, the strengths; json and csv:
    the three tables; markdown and latex: a paper table per subset (:func:`paper`)."""
    from metaeval.analyses import conclusions
    from metaeval.present import paper_tables, tables
    from metaeval.analyses.stored_tests import JUDGE_TEST_FORMULAS
    from metaeval.runs.votes.judges import TABLES

    stats, s = outcome["judge_statistics"], run_of(outcome["judge_statistics"])
    if fmt in ("json", "csv"):
        return tables.render_blocks([(t, outcome[t]) for t in TABLES], fmt)
    if fmt in ("markdown", "latex"):
        return paper(stats, fmt, layout, s)
    why = paper_tables.judges_undetermined(stats)
    shown = stats[(["subset"] if (stats["subset"] != "").any() else []) + ["judge", "n", "cluster"]].copy()
    for name in STATISTICS:
        shown[name] = [_ci(v, lo, hi) for v, lo, hi in zip(stats[name], stats[f"{name}_lower"], stats[f"{name}_upper"])]
    if "stability" in stats and stats["stability"].notna().any():        # a judge run more than once
        shown["stability"] = [_ci(v, lo, hi) for v, lo, hi in zip(stats["stability"], stats["stability_lower"],
                                                                   stats["stability_upper"])]
    out = [prose(s["line"]), "\n", tables.render(shown, "table"),
           prose(f"\nintervals: {100 * (1 - s['alpha']):g}% percentile bootstrap over items (k={s['k']}, "
                 f"seed={s['seed']}); clusters by accuracy from the {s['test']} test, {s['correction']}-corrected "
                 "over the pairs of judges")]
    if why:
        out.append(prose(f"clusters not determined: {why}"))
    tests = outcome["judge_tests"]
    if len(tests):
        printed = conclusions.printed_by(tests, JUDGE_TEST_FORMULAS, key="test", columns=("pvalue", "pvalue_corrected"))
        out += ["\n", tables.render(printed[(["subset"] if (tests["subset"] != "").any() else []) + [
            "test", "judge_a", "judge_b", "n", "delta", "discordant_a", "discordant_b", "pvalue", "pvalue_corrected",
            "significant"]].round(4), "table")]
    ranking = outcome["preference_rankings"]
    out.append(prose("\nBradley-Terry strengths (log scale, mean 0; ties half a win each side; "
                     f"ridge {s['ridge']:g}):"))
    out.append(tables.render(
        ranking.assign(strength=[_ci(v, lo, hi) for v, lo, hi in zip(ranking["strength"], ranking["lower"],
                                                                      ranking["upper"])])
        [(["subset"] if (ranking["subset"] != "").any() else []) + ["judge", "rank", "system", "strength",
                                                                     "comparisons"]], "table"))
    return "".join(out)


def paper(stats, fmt: str, layout: str, s: dict) -> str:
    """One paper table per subset: judges x statistics with their intervals, accuracy's top
    significance cluster in bold (LaTeX, or markdown that agrees with it)."""
    from metaeval.present import paper_tables

    out, confidence = [], f"{100 * (1 - s['alpha']):g}%"
    for i, (subset, part) in enumerate(stats.groupby("subset", sort=False)):
        caption = (f"Automatic judges of {s['dataset']}{f' (items {subset})' if subset else ''} against the majority "
                   f"of {s['human']}: accuracy (each order ab / ba and overall), both orders correct, position "
                   f"consistency, Cohen's kappa over a/b/tie, Kendall tau of its Bradley-Terry system ranking vs the "
                   f"humans', first-position and tie rates; {confidence} percentile bootstrap intervals over items "
                   f"(k={s['k']}, seed={s['seed']}); accuracy's clusters (cl.) from the {s['test']} test, "
                   f"{s['correction']}-corrected over the pairs of judges, alpha={s['alpha']:g}, cluster rule "
                   f"{s['cluster_rule']}" + (f"; signature {s['signed'][subset]}" if s["signed"].get(subset) else "")
                   + ".")
        ranking = paper_tables.judges_ranking(part, confidence=1 - s["alpha"])
        out += ["\n" if i else "", ranking.latex(caption, layout) if fmt == "latex" else ranking.markdown(caption)]
    return "".join(out)
