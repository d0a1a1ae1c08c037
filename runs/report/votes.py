"""Systems ranked from pairwise votes: the leaderboard (Bradley-Terry ratings with intervals, the
groups the pairwise tests cannot separate) and the length-controlled win rates against a
baseline. Each reads its family's latest rows; a verdict (a group, "cannot resolve") is the one
the conclusion layer stored or states (:func:`metaeval.analyses.conclusions.stored_note`)."""

from __future__ import annotations

import html
import json

import pandas as pd

from metaeval.analyses import conclusions
from metaeval.present import figures
from metaeval.runs.report.cells import int_cell, missing_value, sortable, value_cell
from metaeval.runs.report.context import Context, Section

#: The columns that tell one leaderboard's setting from another's (one table and figure each); a
#: subset of the votes (``--where``/``--by``: ``subset``, '' every vote, first) is a table of its own.
LEADERBOARD_SETTING = ["subset", "judge", "scale", "interval", "ties", "anchor", "ridge", "correction", "k", "seed",
                       "alpha"]
#: The columns that tell one length-controlled comparison from another.
LC_SETTING = ["subset", "judge", "baseline", "k", "seed", "alpha", "glm", "difficulty"]


def _on(setting: dict) -> str:
    """Which votes, when a subset of them: " on the inputs with category=math"; '' for every vote."""
    return f" on the inputs with {setting['subset']}" if setting.get("subset") else ""


def leaderboard(ctx: Context) -> Section | None:
    """The leaderboards stored for the dataset, one per judge and setting; None when none is."""
    rows = ctx.latest("leaderboard")
    if rows.empty:
        return None
    s = Section("Leaderboard from pairwise votes", "leaderboard", run_ids=set(int(r) for r in rows["run_id"]))
    rows = rows.fillna({"judge": "", "anchor": ""}).assign(subset=rows.get("subset", "")).fillna({"subset": ""})
    for key, part in rows.groupby(LEADERBOARD_SETTING, sort=True, dropna=False):
        setting = dict(zip(LEADERBOARD_SETTING, key))
        part = part.sort_values("rating", ascending=False, na_position="last")
        who = (f"judge {setting['judge']}" if setting["judge"] else "the human votes") + _on(setting)
        s.blocks.append(f"<h3>{html.escape(f'Ratings from {who}')}</h3>")
        conventions = [json.loads(c) if isinstance(c, str) else c for c in part["conventions"]]
        groups = [c.get("connected_group") for c in conventions]
        if groups[0] is not None:            # unconnected votes (issue 48 item 2): each group apart
            s.blocks.append(f'<p class="answer">{html.escape(_groups_answer(conventions[0]))}</p>')
            for g in sorted(set(groups)):
                piece = part[[x == g for x in groups]]
                s.blocks.append(f"<h4>{html.escape(f'Group {g}: ' + ', '.join(conventions[0]['connected_groups'][g - 1]))}</h4>")
                s.blocks.append(_leaderboard_answer(piece, setting))
                s.blocks.append(_leaderboard_table(piece, setting))
            continue
        s.blocks.append(_leaderboard_answer(part, setting))
        s.blocks.append(_leaderboard_table(part, setting))
        title = (f"Bradley–Terry ratings from {who} ({setting['scale']} scale), {1 - float(setting['alpha']):.0%} "
                 f"{setting['interval']} intervals; groups from the pairwise tests, "
                 f"{figures.correction_phrase(setting['correction'], 'all')}, α = {float(setting['alpha']):g}")
        fig = figures.interval_chart(list(part["system"]), part["rating"], part["lower"], part["upper"],
                                     xlabel=f"rating ({setting['scale']} scale)", point="rating (point estimate)",
                                     interval=f"{1 - float(setting['alpha']):.0%} {setting['interval']} interval",
                                     groups=list(part["cluster"]), group_name="group", title=title)
        name = "leaderboard" + (f"-{setting['judge']}" if setting["judge"] else "") + (
            f"-{setting['subset']}" if setting["subset"] else "")
        ctx.figure(s, fig, name, title, part[["system", "rating", "lower", "upper", "rank", "cluster", "votes"]])
    return s


def _groups_answer(conventions: dict) -> str:
    groups = conventions["connected_groups"]
    return (f"The votes form {len(groups)} unconnected groups: no vote compares systems of two groups, so their "
            "ratings are not comparable and no rank orders them; each group is rated, tested and ranked on its own.")


def _leaderboard_answer(part: pd.DataFrame, setting: dict) -> str:
    """The groups the conclusion layer drew (the top one named), or why there are none; the
    fragility of the leader."""
    first = part.iloc[0]
    note = conclusions.stored_note(first["conventions"], setting["correction"], float(setting["alpha"]),
                                   "the pairwise tests of the leaderboard")
    if note is not None:
        answer = f"No groups or ranks: {note}."
    elif part["cluster"].notna().all():
        top = list(part.loc[part["cluster"] == part["cluster"].min(), "system"])
        answer = (f"The tests separate {top[0]} from every other system." if len(top) == 1 else
                  f"The top group, which the tests cannot separate: {', '.join(top)}.")
        answer += f" {int(part['cluster'].max())} groups in all."
    else:
        answer = "No groups: a pair of systems has no defined test."
    conventions = json.loads(first["conventions"]) if isinstance(first["conventions"], str) else first["conventions"]
    if conventions.get("across_subsets"):    # one table per value of --by: the correction across them said
        answer += f" {conventions['across_subsets']}"
    if not missing_value(first["fragility"]):
        bound = "" if bool(first["fragility_exact"]) else "at most "
        answer += (f" Removing {bound}{int(first['fragility'])} of the {conventions.get('n_votes', 'stored')} votes "
                   f"makes {conventions.get('fragility_challenger')} rate at least as high as the highest-rated system.")
    return f'<p class="answer">{html.escape(answer)}</p>'


def _leaderboard_table(part: pd.DataFrame, setting: dict) -> str:
    rows = []
    for r in part.itertuples():
        span = ("" if missing_value(r.rank_lower) else str(int(r.rank_lower)) if r.rank_lower == r.rank_upper
                else f"{int(r.rank_lower)}–{int(r.rank_upper)}")
        rows.append([(r.system, ""), _rating(r.rating, r.lower, r.upper, setting["scale"]), int_cell(r.rank), (span, span),
                     int_cell(r.cluster), value_cell(r.first_share), int_cell(r.votes)])
    head = ["System", f"Rating [{1 - float(setting['alpha']):.0%} interval]", "Rank", "Rank interval", "Group",
            "Share of rounds first", "Votes"]
    ties = "a tie half a win to each side" if setting["ties"] == "half" else f"ties by the {setting['ties']} model"
    anchor = f"; anchored at {setting['anchor']}" if setting["anchor"] in set(part["system"]) else (
        "; centred on the group's mean" if setting["anchor"] else "")
    drawn = ("" if missing_value(setting["k"]) else
             f" (k = {int(setting['k'])}, seed {int(setting['seed'])})")            # a sandwich interval draws none
    caption = (f"Maximum-likelihood Bradley–Terry ratings ({setting['scale']} scale{anchor}; {ties}) with "
               f"{setting['interval']} intervals{drawn}; rank and group empty where the tests cannot decide them.")
    return sortable(head, rows) + f'<p class="caption">{html.escape(caption)}</p>'


def _rating(value, lower, upper, scale: str) -> tuple[str, str]:
    """A rating and its interval: one decimal on the Elo scale (hundreds of points), three on
    the logit scale; "undefined" (sorted last) when missing."""
    if missing_value(value):
        return "undefined", ""
    digits = 1 if scale == "elo" else 3
    text = f"{value:.{digits}f}" + ("" if missing_value(lower) or missing_value(upper)
                                   else f" [{lower:.{digits}f}, {upper:.{digits}f}]")
    return text.replace("-", "−"), repr(float(value))


def lc_winrate(ctx: Context) -> Section | None:
    """The length-controlled win rates stored for the dataset; None when none is."""
    from metaeval.runs.votes.length_control import variant

    rows = ctx.latest("lc_winrates")
    if rows.empty:
        return None
    s = Section("Length-controlled win rates", "lc-winrate", run_ids=set(int(r) for r in rows["run_id"]))
    rows = rows.fillna({"judge": ""}).assign(subset=rows.get("subset", "")).fillna({"subset": ""})
    for key, part in rows.groupby(LC_SETTING, sort=True, dropna=False):
        setting = dict(zip(LC_SETTING, key))
        part = part.sort_values("lc_winrate", ascending=False, na_position="last")
        who = (f"judge {setting['judge']}" if setting["judge"] else "the human votes") + _on(setting)
        level = f"{1 - float(setting['alpha']):.0%}"
        heading = f"Against {setting['baseline']} from {who} ({setting['glm']})"
        s.blocks.append(f"<h3>{html.escape(heading)}</h3>")
        table = [[(r.system, ""), value_cell(r.lc_winrate, (r.lower, r.upper)), value_cell(r.winrate),
                  value_cell(r.length_coefficient), int_cell(r.n_items)] for r in part.itertuples()]
        head = ["System", f"LC win rate (%) [{level} interval]", "Win rate (%)", "Length coefficient", "Items"]
        caption = (f"Win rates against {setting['baseline']} in percent, raw and length-controlled by "
                   f"{variant(setting['glm'], setting['difficulty'])} (the win rate at no length difference), "
                   f"{level} percentile bootstrap intervals over the items (k = {int(setting['k'])}, "
                   f"seed {int(setting['seed'])}); no test between systems is stored, so the order is that of the "
                   "point values, not a ranking.")
        s.blocks.append(sortable(head, table) + f'<p class="caption">{html.escape(caption)}</p>')
        title = (f"Length-controlled win rate against {setting['baseline']} ({who}), {level} bootstrap intervals; "
                 "no tests between systems (no correction)")
        fig = figures.interval_chart(list(part["system"]), part["lc_winrate"], part["lower"], part["upper"],
                                     xlabel="win rate against the baseline (%)", point="LC win rate",
                                     interval=f"{level} percentile interval", title=title,
                                     extra=("raw win rate", part["winrate"]))
        ctx.figure(s, fig, f"lc-winrate-{setting['baseline']}" + (f"-{setting['subset']}" if setting["subset"] else ""),
                   title,
                   part[["system", "lc_winrate", "lower", "upper", "winrate", "length_coefficient", "n_items"]])
    return s
