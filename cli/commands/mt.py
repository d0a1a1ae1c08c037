"""``metaeval rank-tasks``: metrics ranked over several datasets / language pairs at once (WMT23/24)."""

from __future__ import annotations

import json

import click

from metaeval.cli.app import Context, layout_option, say
from metaeval.cli.families import options_of



@click.command("rank-tasks")
@options_of("rank-tasks", skip=("force",))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown", "latex"]), default="text",
              show_default=True)
@layout_option
@options_of("rank-tasks", "force")
@click.pass_obj
def rank_tasks(obj: Context, tasks, task_set, datasets, human, metrics, k, seed, alpha, aggregate, fmt, layout,
               force):
    """Rank metrics over several tasks: each task's correlation, the weighted average of the
    scores mapped to [0, 1], and significance clusters from a permutation test on the average
    (table task_rankings). --aggregate median: every system-level task's system scores are
    medians over the inputs (Graham 2015)."""
    from metaeval.runs import task_ranking

    with obj.open() as wh:
        specs = task_ranking.with_aggregate(task_ranking.specs_of(tasks, task_set, datasets, human), aggregate)
        out = task_ranking.rank_tasks(wh, specs, metrics, k=k, seed=seed, alpha=alpha, force=force)
    rows = out.rows
    names = [s.name for s in specs]
    if fmt == "json":
        _echo_note(rows, alpha, err=True)
        click.echo(json.dumps([{"metric": r.metric, "rank": _int(r.rank), "cluster": _int(r.cluster),
                                "winner": None if _int(r.winner) is None else bool(r.winner), "average": r.average,
                                "correlations": dict(zip(names, json.loads(r.correlations))),
                                "p_values": json.loads(r.p_values)} for r in rows.itertuples()], indent=2))
        return
    if fmt in ("latex", "markdown"):
        _echo_note(rows, alpha, err=True)
        click.echo(_paper(rows, specs, k, seed, alpha, fmt, layout), nl=False)
        return
    say("task_rankings: " + ("up to date; nothing computed (--force recomputes)" if out.run_id is None
                                    else f"run {out.run_id}: ranked {len(rows)} metrics over {len(specs)} tasks"))
    for i, n in enumerate(names, 1):
        test = " (test over pairs)" if specs[i - 1].test == "pairs" else ""
        test += f" (system scores: {_sides(specs[i - 1].aggregate)})" if specs[i - 1].aggregate != "mean" else ""
        say(f"  task {i}: {n} (weight {specs[i - 1].weight:g}){test}")
    for r in rows.itertuples():
        corr = " ".join(f"{c:7.3f}" if c is not None else "     --" for c in json.loads(r.correlations))
        avg = "--" if r.average is None or r.average != r.average else f"{r.average:.4f}"
        rank, cluster = (f"{v:{w}d}" if (v := _int(x)) is not None else " " * (w - 2) + "--"
                         for x, w in ((r.rank, 3), (r.cluster, 2)))
        say(f"{rank}  cluster {cluster}{' *' if _int(r.winner) else '  '}  {r.metric:30s} {avg}   {corr}")
    _echo_note(rows, alpha)


def _int(x) -> int | None:
    """A stored integer (or bool), None where NULL."""
    import pandas as pd

    return None if x is None or pd.isna(x) else int(x)


def _note(rows, alpha: float) -> str | None:
    """The one "cannot resolve" line of the stored ranking (the conclusion layer's), or None."""
    from metaeval.analyses import conclusions

    if not len(rows):
        return None
    return conclusions.stored_note(rows["conventions"].iloc[0], "none", alpha, "the permutation tests between metrics")


def _echo_note(rows, alpha: float, err: bool = False) -> None:
    if note := _note(rows, alpha):
        from metaeval.analyses import stored_tests

        say(stored_tests.not_a_finding(note), err=err)


def _paper(rows, specs, k: int, seed: int, alpha: float, fmt: str, layout: str) -> str:
    """The ranking as a paper's table (latex) or the markdown that agrees with it: per metric the
    average (its cluster; bold: cluster 1) and each task's correlation (bold: the best)."""
    import pandas as pd

    from metaeval.analyses import ranking_tables, tables

    long, headers = [], {"average": ("", "Average", "Avg.", "average")}
    for i, s in enumerate(specs):
        group, name, short, _ = ranking_tables.setting_header(s.level, s.coefficient)
        headers[f"task {i + 1}"] = (tables.latex_escape(s.dataset), f"{group} {name}", f"{group[:3]}. {short}",
                                    f"{s.dataset} {s.level} {s.coefficient}")
    for r in rows.itertuples():
        long.append({"metric": r.metric, "task": "average", "correlation": r.average, "cluster": r.cluster})
        for i, c in enumerate(json.loads(r.correlations)):
            long.append({"metric": r.metric, "task": f"task {i + 1}", "correlation": c, "cluster": None})
    frame = pd.DataFrame(long).astype({"correlation": float})
    note = _note(rows, alpha)   # no bold from tests that cannot resolve (the conclusion layer)
    ranking = ranking_tables.Ranking(frame, keys=("task",), headers={(t,): h for t, h in headers.items()},
                             unresolved={("average",): note} if note else {})
    tasks = "; ".join(f"{i + 1}: {s.name}{' of system ' + _sides(s.aggregate) if s.aggregate != 'mean' else ''} "
                      f"(weight {s.weight:g})" for i, s in enumerate(specs))
    caption = (f"Metrics ranked over {len(specs)} tasks ({tasks}): each task's correlation, and their weighted "
               f"average after mapping each score to [0, 1] (WMT23/24); clusters (cl.) from permutation tests on "
               f"the average (k={k}, seed={seed}, alpha={alpha:g}).")
    return ranking.latex(caption, layout) if fmt == "latex" else ranking.markdown(caption)


COMMANDS = [rank_tasks]


def _sides(aggregate: str) -> str:
    """A task's system scores under ``aggregate``: the metric's, then the human's."""
    from metaeval.runs.parameters import aggregate_sides

    metric, human = aggregate_sides(aggregate)
    return f"{metric}s (metric), {human}s (human)"
