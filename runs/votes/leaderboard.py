"""``metaeval leaderboard``: systems ranked from pairwise votes (issue 35 item 1; the statistics:
:mod:`metaeval.analyses.leaderboard`).

The votes are the stored preferences (``ingest preferences``): every human judge's by default, or
one automatic judge's (``judge``); each (input, pair, presentation order) verdict is one vote, a
tie half a win each way (``ties`` "half") or modelled (Rao-Kupper, Davidson). Bradley-Terry by
maximum likelihood on the counted distinct votes (no prior unless ``ridge``), ratings on the
arena's Elo-style scale (or logits), intervals from a bootstrap over votes (multinomial on the
counts, ``k`` rounds, ``seed``: the same draws for every judge of the same votes; on the
executor's workers with ``jobs`` or a Dask scheduler) or the sandwich estimator; rank intervals
over the rounds, groups and ranks decided by the conclusion layer (``correction``), fragility.
Votes that admit no estimate (a system that never loses, or never wins) are refused unless a
``ridge`` is given: the ratings would be infinite. Votes that form unconnected groups (no vote
compares systems of two groups) are rated group by group (:func:`_compute_groups`): ratings are
identified within a group only, and no rank orders systems of different groups. One run writes the rows of ``leaderboard``;
the same command on the same votes computes nothing. ``plain``: the rows as
:class:`~metaeval.rows.Rows` (the command line's text, json and csv; no pandas is imported, nor
scipy with the default bootstrap intervals: the command starts in a third of the time).
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError, ingest_hint
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import ALPHA, CORRECTION, DATASET, FORCE, JOBS, K, SEED, VOTES_BY, VOTES_WHERE, Option
from metaeval.runs.engine.shared_options import REPLICATES
from metaeval.runs.votes import vote_runs

COMMAND, TABLE, STYLE_TABLE = "leaderboard", "leaderboard", "leaderboard_style"

OPTIONS = (
    DATASET,
    Option("judge", metavar="JUDGE", help="Rank from this automatic judge's votes. Default: the human votes."),
    K.but(help="Bootstrap rounds (multinomial resamples of the vote counts)."), SEED, ALPHA,
    Option("interval", default="bootstrap", kind="choice", choices=("bootstrap", "sandwich"),
           help="bootstrap: percentile interval over the rounds; sandwich: rating +- z * robust standard error."),
    Option("scale", default="elo", kind="choice", choices=("elo", "logit"),
           help="elo: 1000 + 400/ln(10) per logit (the arena's); logit: the centred strengths."),
    Option("anchor", metavar="SYSTEM", help="Pin this system at --anchor-rating (Elo scale)."),
    Option("anchor_rating", default=1000.0, kind="float", help="The anchor's rating."),
    Option("ridge", default=0.0, kind="float", minimum=0,
           help="A Gaussian prior -ridge/2 * ||theta||^2 (default none: maximum likelihood)."),
    Option("ties", default="half", kind="choice", choices=("half", "rao-kupper", "davidson"),
           help="half: a tie is half a win each way (the arena's); rao-kupper or davidson: a tie parameter "
                "fitted with the strengths."),
    CORRECTION.but(help="Correction over the pairwise tests that decide the groups of systems that cannot be "
                        "separated."),
    Option("style", multiple=True, metavar="COVARIATE",
           help="Control the ratings for this style covariate (Chatbot Arena's style control; repeatable): length "
                "(output_length, else the text's characters), headers, lists, bold (markdown counts of the stored "
                "texts), or a numeric attribute. Its coefficient: table leaderboard_style."),
    VOTES_WHERE, VOTES_BY,
    REPLICATES.but(help="A judge run several times on the same items (preferences.replicate): mean counts each vote "
                        "as the mean over its runs; resample also draws each drawn vote's runs again inside every "
                        "bootstrap round (with --judge), so that the intervals include its run-to-run noise."),
    FORCE, JOBS.but(help="Worker processes for the bootstrap rounds (or a Dask scheduler's workers)."),
)


@register
class Leaderboard(Family):
    name = COMMAND
    topic = "votes"
    headline = "Systems ranked from pairwise votes: Bradley-Terry ratings with intervals."
    summary = "Systems ranked from pairwise votes: Bradley-Terry ratings with intervals (Chatbot Arena's method)."
    tables = (TABLE, STYLE_TABLE)
    options = OPTIONS
    report = ("metaeval.runs.report.votes:leaderboard",)
    report_position = 42
    run_keywords = ("progress", "plain")

    def compute(self, wh, **params):
        return leaderboard(wh, **params)

    def present(self, outcome, fmt: str) -> str:
        from metaeval.rows import Rows

        if isinstance(outcome, dict):            # style-controlled: the ratings, then the coefficients
            if fmt != "text":
                return super().present(outcome, fmt)
            from metaeval.runs.votes import leaderboard_style as lstyle

            return self.present(outcome[TABLE], fmt) + lstyle.present(outcome[STYLE_TABLE])
        if isinstance(outcome, Rows):            # ``plain``: printed without pandas, as the DataFrame would be
            if fmt == "text" and len(outcome):
                return _text([dict(zip(outcome.columns, row)) for row in outcome.data])
            from metaeval.present import plain
            from metaeval.runs.engine.families import BOOKKEEPING

            hidden = [c for c in BOOKKEEPING if c in outcome.columns] if fmt in ("text", "table") else []
            return plain.render(outcome.without(hidden), fmt) + (
                f"({', '.join(hidden)}: in the json and csv formats)\n" if hidden else "")
        if fmt != "text" or outcome.empty:
            return super().present(outcome, fmt)
        import pandas as pd

        return _text([{c: None if pd.isna(v) else v for c, v in row.items()} for row in outcome.to_dict("records")])


#: The columns of the text table, and those printed as they are (the others: formatted text).
SHOWN = ("system", "rating", "lower", "upper", "rank", "cluster", "rank_lower", "rank_upper", "first_share", "votes")


def _text(rows: list[dict]) -> str:
    """The text format: a title line, the table of :data:`SHOWN` (rows: {column: value, None for
    NULL}, best first), the groups' note and the fragility. Votes of several unconnected groups
    (``connected_group`` in the conventions): a ``group`` column, the rows group by group, and the
    notes, valid rounds and fragility of each group."""
    import json
    import math

    from metaeval.present import plain

    conventions = [json.loads(row["conventions"]) if isinstance(row["conventions"], str) else row["conventions"]
                   for row in rows]
    grouped = "connected_group" in conventions[0]
    if grouped:                              # group by group, each best first (as stored)
        order = sorted(range(len(rows)), key=lambda i: conventions[i]["connected_group"])
        rows, conventions = [rows[i] for i in order], [conventions[i] for i in order]
    firsts = [i for i in range(len(rows)) if i == 0 or conventions[i].get("connected_group")
              != conventions[i - 1].get("connected_group")]
    r = rows[0]
    digits = 1 if r["scale"] == "elo" else 3

    def cells(row, conv):
        rating = [f"{math.nan if row[c] is None else row[c]:.{digits}f}" for c in ("rating", "lower", "upper")]
        order = ["" if row[c] is None else str(int(row[c])) for c in ("rank", "cluster", "rank_lower", "rank_upper")]
        return (row["system"], *((str(conv["connected_group"]),) if grouped else ()), *rating, *order,
                "" if row["first_share"] is None else f"{row['first_share']:.3f}", int(row["votes"]))

    who = (f"judge {r['judge']}" if r["judge"] else "the human votes") + (
        f", controlled for {r['style'].replace(',', ', ')}" if r.get("style") else "")
    valid = "/".join(str(rows[i]["n_valid"]) for i in firsts)
    how = (f"{100 * (1 - r['alpha']):g}% percentile bootstrap over votes, k={r['k']}, seed={r['seed']}, "
           f"{valid} valid rounds{' (by group)' if grouped else ''}" if r["interval"] == "bootstrap" else
           f"{100 * (1 - r['alpha']):g}% sandwich intervals")
    ties = "" if r["ties"] == "half" else f"; {r['ties']} ties, tie parameter {r['tie_parameter']:.4g}"
    shown = SHOWN[:1] + (("group",) if grouped else ()) + SHOWN[1:]
    table = plain.columns_text(shown, ("object",) * (len(shown) - 1) + ("int",),
                               [cells(row, conv) for row, conv in zip(rows, conventions)])
    lines = [plain.wrap(f"Bradley-Terry ratings from {who} ({r['scale']} scale; {how}{ties}):"), table]
    if grouped:
        lines.append(plain.wrap(
            f"The votes form {len(firsts)} unconnected groups (no vote compares systems of two groups): "
            + "; ".join(f"{g + 1}: {', '.join(m)}" for g, m in enumerate(conventions[0]["connected_groups"]))
            + ". Ratings, ranks, clusters and first_share are within a group; ratings of different groups are "
            "not comparable (each group " + ("centred at its mean" if not r["anchor"] else
                                             f"centred at its mean; {r['anchor']}'s group anchored at {r['anchor']}'s rating") + ")."))
    for i in firsts:
        conv, row = conventions[i], rows[i]
        label = f"group {conv['connected_group']}: " if grouped else ""
        if conv.get("groups_note"):
            lines.append(plain.wrap(f"{label.capitalize()}No groups or ranks: {conv['groups_note']}"))
        if row["fragility"] is not None:
            bound = "" if row["fragility_exact"] else "at most "
            lines.append(plain.wrap(f"{'Fragility, ' + label if grouped else 'Fragility: '}removing {bound}"
                                    f"{int(row['fragility'])} votes makes {conv.get('fragility_challenger')} rate at "
                                    "least as high as the " + ("group's " if grouped else "") + "leader."))
    return "\n".join(lines) + "\n"


def _votes(wh, dataset: str, judge: str | None):
    """(systems, counted votes, fingerprint, votes per system) of the chosen votes, counted in the
    database (a million votes are a few thousand rows)."""
    import hashlib

    import numpy as np

    from metaeval import schema
    from metaeval.analyses import leaderboard as lb

    wh.require_dataset(dataset)
    if judge is not None and not wh.con.execute(schema.read("leaderboard_judge"),
                                                {"dataset": dataset, "judge": judge}).fetchall()[0][0]:
        raise WarehouseError(Message(f"{dataset!r} has no automatic judge ", Argument("judge", judge),
                                     ": leave it out to rank from the human votes, or ingest its votes with `",
                                     ingest_hint("preferences", dataset, ("judge", judge)), "`"))
    rows = wh.con.execute(schema.read("leaderboard_votes"), {"dataset": dataset, "judge": judge}).fetchall()
    if not rows:
        raise WarehouseError(Message(f"{dataset!r} has no {'human ' if judge is None else ''}pairwise votes: ingest "
                                     "them with `", ingest_hint("preferences", dataset, *(() if judge is None else
                                                                                    (("judge", judge),))), "`"))
    systems = sorted({r[0] for r in rows} | {r[1] for r in rows})
    index = {s: i for i, s in enumerate(systems)}
    half = {"a": 2, "b": 0, "tie": 1}
    table = np.array(sorted((index[a], index[b], half[w], n) for a, b, w, n in rows), dtype=np.int64)
    counted = lb.Counted(a=table[:, 0], b=table[:, 1], y=table[:, 2] / 2.0, w=table[:, 3].astype(float),
                         n_systems=len(systems))
    digest = hashlib.sha256("\n".join(systems).encode())
    for part in (counted.a, counted.b, counted.y, counted.w):
        digest.update(np.ascontiguousarray(part, dtype="<f8").tobytes())
    votes = (np.bincount(counted.a, counted.w, len(systems)) + np.bincount(counted.b, counted.w, len(systems)))
    return systems, counted, digest.hexdigest(), votes.astype(np.int64)


def leaderboard(wh, dataset: str, judge: str | None = None, *, k: int = K.default, seed: int = SEED.default,
                alpha: float = ALPHA.default, interval: str = "bootstrap", scale: str = "elo", anchor: str | None = None,
                anchor_rating: float = 1000.0, ridge: float = 0.0, ties: str = "half",
                correction: str = CORRECTION.default, style=(), force: bool = False, jobs: int = 1, progress=None,
                plain: bool = False, replicates: str = "mean"):
    """The latest ``leaderboard`` rows of these votes and settings (best first), computed unless up to date; with
    ``style`` covariates, {table: rows} of ``leaderboard`` (the controlled ratings) and ``leaderboard_style`` (the
    coefficients). ``plain`` (without ``style``): as :class:`~metaeval.rows.Rows`, pandas never imported."""
    from metaeval import names
    from metaeval.analyses import leaderboard as lb
    from metaeval.runs.votes import leaderboard_style as lstyle
    from metaeval.runs.engine import parameters, persist

    if judge is not None:                    # '' is the human votes' key, never a judge's name
        names.check_option("judge", judge, "judge name")
    style = lstyle.canonical(style)
    resample = vote_runs.check(replicates, judge, interval, style)   # (a judge's runs: runs/votes/vote_runs.py)
    if interval == "bootstrap":
        parameters.check_k(k, alpha, "interval")
    if ridge and ties != "half":
        raise WarehouseError(Message(Argument("ridge", ridge), " is a prior of the half-a-win model only; with ",
                                     Argument("ties", ties), " the ratings are the maximum-likelihood ones"))
    if style and ties != "half":
        raise WarehouseError(Message(Argument("style", list(style)), " is controlled for in the half-a-win model "
                                     "only (the arena's): leave out ", Argument("ties", ties)))
    systems, counted, fingerprint, votes = _votes(wh, dataset, judge)
    covariates = None
    if style:
        systems, counted, fingerprint, votes, covariates = lstyle.design(wh, dataset, judge, style)
    if anchor is not None and anchor not in systems:
        raise WarehouseError(Message(Argument("anchor", anchor), f" is not a system of the votes of {dataset!r}; "
                                     f"its systems: {', '.join(systems)}"))
    members = _connected_groups(counted)
    several = len(members) > 1
    named = "; ".join(f"{g + 1}: {', '.join(systems[i] for i in m)}" for g, m in enumerate(members))
    if several and (style or ties != "half"):
        option = Argument("style", list(style)) if style else Argument("ties", ties)
        raise WarehouseError(Message(f"the votes of {dataset!r} form {len(members)} unconnected groups of systems "
                                     f"that no vote compares ({named}); ", option, " is fitted on connected votes "
                                     "only: leave it out (each group is then rated on its own)"))
    for m in members if ridge == 0 else ():
        if not lb.estimable(lb.restricted(counted, m)[0] if several else counted):
            within = (f" (within the group {', '.join(systems[i] for i in m)}; the votes form {len(members)} "
                      "unconnected groups, each rated on its own)") if several else ""
            raise WarehouseError(Message("these votes admit no maximum-likelihood ratings (a system never loses or "
                                         f"never wins against the others, so its rating is infinite{within}): give a "
                                         "prior, e.g. ", Argument("ridge", 0.01)))
    if ties != "half" and not 0 < counted.w[counted.y == lb.TIE].sum() < counted.n_votes:
        raise WarehouseError(Message(Argument("ties", ties), " needs votes with ties and votes without: the tie "
                                     "parameter of these votes is at its bound"))
    runs, fingerprint = vote_runs.prepared(wh, dataset, resample, judge, several, systems, counted, fingerprint)
    setting = {"judge": judge or "", "scale": scale, "interval": interval, "anchor": anchor or "",
               "ridge": float(ridge), "alpha": float(alpha), "ties": ties, "correction": correction}
    if interval == "bootstrap":
        setting.update(k=int(k), seed=int(seed))
    if style:
        setting["style"] = ",".join(style)
    if not force and (rows := _reusable(wh, dataset, fingerprint, setting, plain)) is not None:
        return rows
    at = systems.index(anchor) if anchor is not None else None
    from metaeval.runs.engine import executors

    executors.of(wh).check()
    pool = lambda: executors.of(wh).pool(jobs)  # noqa: E731
    with lb.one_blas_thread():               # small systems: a second BLAS thread costs more than it gives
        if several:
            columns, coefficients = _compute_groups(systems, counted, votes, setting, members, anchor,
                                                    anchor_rating, k, seed, alpha, ridge, ties, correction, pool), None
        else:
            columns, coefficients = _compute(systems, counted, votes, setting, at, anchor_rating, k, seed, alpha,
                                             ridge, ties, correction, pool, covariates, runs=runs)
    columns = persist.columns(len(systems), **columns, dataset=dataset, fingerprint=fingerprint)
    more = {}
    if covariates is not None:
        more[STYLE_TABLE] = lstyle.coefficients_frame(covariates, coefficients, setting, counted.n_votes).assign(
            dataset=dataset, fingerprint=fingerprint)
    persist.write(wh, COMMAND, TABLE, columns, {"dataset": dataset, **setting, **vote_runs.recorded(runs)},
                  fingerprint,
                  seed if interval == "bootstrap" else None, more=more)
    return _reusable(wh, dataset, fingerprint, setting, plain)


def _reusable(wh, dataset: str, fingerprint: str, setting: dict, plain: bool = False):
    """The stored rows of this setting (best first; with style, {table: rows} of one run) or None;
    ``plain`` (without style): :class:`~metaeval.rows.Rows`."""
    from metaeval.runs.engine import persist

    if plain and not setting.get("style"):
        stored = persist.reusable_rows(wh, TABLE, dataset, fingerprint, **{"style": "", **setting})
        if stored is None:
            return None
        import dataclasses

        best = persist.sorted_rows(stored, "rating", ascending=False)
        groups = _groups_of(best.column("conventions"))
        return dataclasses.replace(best, data=tuple(best.data[i] for i in sorted(range(len(best)),
                                                                               key=groups.__getitem__)))
    rows = persist.reusable(wh, TABLE, dataset, fingerprint, **{"style": "", **setting})
    if rows is None or not setting.get("style"):
        return None if rows is None else _best_first(rows)
    keys = ("judge", "style", "interval", "ridge", "alpha", "k", "seed")
    coefficients = persist.reusable(wh, STYLE_TABLE, dataset, fingerprint, **{c: setting[c] for c in keys
                                                                              if c in setting})
    if coefficients is None or set(coefficients["run_id"]) != set(rows["run_id"]):
        return None
    return {TABLE: _best_first(rows), STYLE_TABLE: coefficients.sort_values("result_id").reset_index(drop=True)}


def _best_first(rows):
    """Best first; votes of unconnected groups: group by group, each best first (a group's
    ratings are not comparable with another's)."""
    best = rows.sort_values("rating", ascending=False).reset_index(drop=True)
    order = sorted(range(len(best)), key=_groups_of(best["conventions"]).__getitem__)
    return best.iloc[order].reset_index(drop=True)


def _groups_of(conventions) -> list:
    """Each row's connected group (0 when the votes are connected) from its conventions."""
    import json

    return [(json.loads(c) if isinstance(c, str) else c).get("connected_group", 0) for c in conventions]


def _fitter(counted, ties: str, ridge: float, Z=None):
    """weights (rows x rounds; None: the observed counts, one fit) -> strengths (rounds x systems),
    and the tie parameters or the style coefficients (or None). (The style and tie models'
    modules, which import scipy.special, only when asked for.)"""
    import numpy as np

    from metaeval.analyses import leaderboard as lb

    if Z is not None:                        # resampled rounds start from the observed fit
        from metaeval.analyses import leaderboard_style as ls

        point = ls.fit(counted, Z, ridge=ridge)
        return lambda W: point if W is None else ls.fit(counted, Z, W, ridge=ridge, start=point)
    if ties == "half":                       # resampled rounds (and removals) start from the observed fit
        point = lb.fit(counted, ridge=ridge)
        start = point if np.isfinite(point).all() else None
        return lambda W: (point, None) if W is None else (lb.fit(counted, W, ridge=ridge, start=start), None)
    from metaeval.analyses import leaderboard_ties as lt

    return lambda W: lt.fit(counted, ties, W)


def _connected_groups(counted) -> list:
    """The systems (indices) of each connected group of the votes (one group: every system)."""
    import numpy as np

    from metaeval.analyses import leaderboard as lb

    group = lb.components(counted)
    return [np.flatnonzero(group == g) for g in range(int(group.max()) + 1)]


def _compute_groups(systems, counted, votes, setting, members, anchor, anchor_rating, k, seed, alpha, ridge, ties,
                    correction, pool):
    """The columns of :func:`_compute` for votes that form several unconnected groups (issue 48
    item 2): no vote compares systems of different groups, so the likelihood says nothing of
    their relative strength (a prior alone would order them). Each group is rated on its own:
    its mean strength 0 (Elo 1000), or the anchor's group with the anchor at its rating; its
    rounds are the same multinomial draws of every vote, restricted to its votes; its pairwise
    tests, groups of systems that cannot be separated, ranks, rank intervals, first_share
    and fragility are within the group. The group of each row is in its conventions
    (``connected_group``, 1, 2, ..., and ``connected_groups``, the systems of each); ratings
    of different groups are not comparable, and no rank orders them. Rows: group by group."""
    import json

    import numpy as np

    from metaeval.analyses import leaderboard as lb
    from metaeval.runs.engine import bookkeeping

    W = lb.bootstrap_counts(counted, k, seed) if setting["interval"] == "bootstrap" else None
    groups = [[systems[i] for i in m] for m in members]
    parts = []
    for g, (m, names) in enumerate(zip(members, groups)):
        sub, rows = lb.restricted(counted, m)
        at = names.index(anchor) if anchor in names else None
        columns, _ = _compute(names, sub, votes[m], setting, at, anchor_rating, k, seed, alpha, ridge, ties,
                              correction, pool, W=None if W is None else W[rows])
        conventions = json.loads(columns["conventions"])
        conventions.update(
            connected_group=g + 1, connected_groups=groups,
            identified=(f"the votes form {len(groups)} unconnected groups (no vote compares systems of two groups): "
                        "ratings, tests, clusters, ranks, rank intervals, first_share and fragility are within the "
                        "system's group (connected_group), " + (f"anchored at {anchor}" if at is not None else
                                                                "centred on the group's mean strength")
                        + "; ratings of different groups are not comparable"))
        columns["conventions"] = bookkeeping.conventions_json(conventions)
        if at is None:
            columns["anchor_rating"] = None
        parts.append(columns)
    merged = {}
    for key in parts[0]:
        values = [part[key] for part in parts]
        if not any(isinstance(v, (list, tuple, np.ndarray)) for v in values) and all(
                v == values[0] or (v is None and values[0] is None) for v in values):
            merged[key] = values[0]
            continue
        rows = [x for v, m in zip(values, members)
                for x in (list(v) if isinstance(v, (list, tuple, np.ndarray)) else [v] * len(m))]
        # text as objects (as one repeated value is written): a numpy str array would be another type
        merged[key] = np.array(rows, dtype=object) if all(isinstance(x, str) for x in rows) else rows
    return merged


def _compute(systems, counted, votes, setting, at, anchor_rating, k, seed, alpha, ridge, ties, correction, pool,
             covariates=None, W=None, runs=None):
    """(the columns of the rows without dataset and fingerprint, {column: values or one value}:
    ratings, intervals, order, fragility; with covariates, their coefficients {coefficient,
    lower, upper}, else None). ``W``: the bootstrap's counts (rows x rounds; default: drawn
    here with ``k`` and ``seed``); ``runs``: the judge's votes run several times, drawn again in each round."""
    import numpy as np

    from metaeval.analyses import leaderboard as lb
    from metaeval.analyses import leaderboard_ranks as lr
    from metaeval.runs.engine import bookkeeping

    scale, interval, S = setting["scale"], setting["interval"], len(systems)
    Z = None if covariates is None else covariates.Z

    def transform(theta):
        return lb.elo(theta, at, anchor_rating) if scale == "elo" else (
            theta - theta[..., [at]] if at is not None else theta)

    fit = _fitter(counted, ties, ridge, Z)
    theta, extra = fit(None)
    tau, gamma = (extra, None) if Z is None else (None, extra)
    if not np.isfinite(theta).all():
        raise WarehouseError("the Bradley-Terry fit of these votes did not converge: no ratings are stored"
                             + ("" if Z is None else " (the style covariates may separate the outcomes)"))
    rating = transform(theta)
    nan = np.full(S, np.nan)
    first, n_valid, rank_lower, rank_upper, coefficients = nan, None, nan, nan, None
    if interval == "bootstrap":
        W = lb.bootstrap_counts(counted, k, seed) if W is None else W
        both = _rounds(*vote_runs.stage(counted, W, runs, seed), ties, ridge, pool, Z)
        samples = transform(both[:, :S])
        boot = lb.summarise(samples, alpha)
        lower, upper, first, n_valid = boot.lower, boot.upper, boot.first, boot.n_valid
        rank_lower, rank_upper = lr.rank_interval(samples, alpha)
        tests = lr.bootstrap_tests(rating, samples)
        if Z is not None:
            g = lb.summarise(both[:, S:], alpha)
            coefficients = {"coefficient": gamma, "lower": g.lower, "upper": g.upper, "n_valid": g.n_valid}
    else:
        lower, upper, tests, coefficients = _sandwich(counted, theta, tau, gamma, Z, ties, at, rating,
                                                      lb.ELO_PER_LOGIT if scale == "elo" else 1.0, alpha)
    order, resolution = _order(systems, rating, tests, k, correction, alpha)
    fragile = lr.fragility(counted, lambda W: fit(W)[0])
    conventions = vote_runs.said(_conventions(setting, ridge, counted, tau, resolution, fragile, systems), runs)
    tie_parameter = None
    if tau is not None:
        from metaeval.analyses import leaderboard_ties as lt

        tie_parameter = float(lt.tie_parameter(ties, tau))
    # NaN is NULL: DuckDB reads a float column's NaN as NULL (as it read the DataFrame's)
    return {"system": systems, "votes": votes, "rating": rating, "lower": lower, "upper": upper,
            "first_share": first, "rank_lower": rank_lower, "rank_upper": rank_upper, **order, **setting,
            "anchor_rating": float(anchor_rating) if at is not None else None, "n_valid": n_valid,
            "tie_parameter": tie_parameter, "fragility": fragile.votes, "fragility_exact": fragile.exact,
            "conventions": bookkeeping.conventions_json(conventions)}, coefficients


def _sandwich(counted, theta, tau, gamma, Z, ties, at, rating, per_unit, alpha):
    """The sandwich intervals (lower, upper), the pairwise z-tests and, with style features ``Z``,
    the coefficients' intervals (else None)."""
    import numpy as np
    from scipy.special import ndtri          # scipy.stats.norm.ppf, without importing scipy.stats (0.8 s)

    from metaeval.analyses import leaderboard as lb
    from metaeval.analyses import leaderboard_ranks as lr

    S, coefficients = len(theta), None
    if Z is None:
        if ties == "half":
            cov = lb.sandwich(counted, theta)
        else:
            from metaeval.analyses import leaderboard_ties as lt

            cov = lt.sandwich(counted, ties, theta, tau)
    else:
        from metaeval.analyses import leaderboard_style as ls

        full = ls.sandwich(counted, Z, theta, gamma)
        cov, gse = full[:S, :S], np.sqrt(np.clip(np.diag(full)[S:], 0, None))
        coefficients = {"coefficient": gamma, "lower": gamma - ndtri(1 - alpha / 2) * gse,
                        "upper": gamma + ndtri(1 - alpha / 2) * gse, "n_valid": None}
    if at is not None:                       # the variance of theta_i - theta_anchor
        e = np.eye(S) - np.eye(S)[at]
        cov = e @ cov @ e.T
    se = np.sqrt(np.clip(np.diag(cov), 0, None)) * per_unit
    z = ndtri(1 - alpha / 2)
    return rating - z * se, rating + z * se, lr.sandwich_tests(rating, cov, per_unit), coefficients


#: Bootstrap rounds per task on worker processes or a Dask cluster.
ROUNDS_PER_TASK = 25


def _rounds(counted, W, ties: str, ridge: float, pool, Z=None):
    """The strengths of every round (rounds x systems; with style features ``Z``, the coefficients
    in the columns after them): in this process, or in chunks of :data:`ROUNDS_PER_TASK` rounds on
    the executor's workers (the same fits; a round's numbers may differ in the last digits, as its
    Newton steps stop with its chunk's)."""
    import numpy as np

    with pool() as executor:
        if executor is None:
            return _fit_chunk(counted, W, ties, ridge, Z)
        from metaeval.runs.engine import executors

        shared = executors.shared(executor, counted)
        features = None if Z is None else executors.shared(executor, Z)
        chunks = [W[:, i:i + ROUNDS_PER_TASK] for i in range(0, W.shape[1], ROUNDS_PER_TASK)]
        n = len(chunks)
        return np.vstack(list(executor.map(_fit_chunk, [shared] * n, chunks, [ties] * n, [ridge] * n,
                                           [features] * n)))


def _fit_chunk(counted, W, ties: str, ridge: float, Z=None):
    """One task: the strengths of the rounds of ``W`` (rows x rounds), and the coefficients after
    them when there are style features ``Z``."""
    import numpy as np

    from metaeval.analyses import leaderboard as lb

    with lb.one_blas_thread():               # (a worker process: its own libraries' threads)
        theta, extra = _fitter(counted, ties, ridge, Z)(W)
    return theta if Z is None else np.hstack([theta, extra])


def _order(systems, rating, tests, k, correction, alpha):
    """The groups of systems that cannot be separated and the ranks, decided by the conclusion
    layer over the pairwise tests (none when the family cannot resolve): ({column: values}, resolution)."""
    import numpy as np

    from metaeval.analyses import conclusions

    n_valid = None if tests.n_valid is None else [tests.n_valid] * len(tests.a)
    verdict = conclusions.decide(tests.pvalue, formula=tests.formula, k=k if tests.formula == "count" else None,
                                 correction=correction, alpha=alpha, n_valid=n_valid, min_size=1)
    result, _beats, _tested = conclusions.clusters(rating, tests.a, tests.b, tests.delta, verdict.significant,
                                                   names=systems, evidence=verdict.evidence,
                                                   note=verdict.note("the pairwise tests of the leaderboard"))
    cluster = np.asarray(result.cluster, dtype=float)
    known = ~np.isnan(cluster)
    rank = np.where(known, 1 + np.asarray(result.n_beaten_by, dtype=float), np.nan)
    none = [None] * len(systems)
    return ({"cluster": [int(c) if ok else None for c, ok in zip(cluster, known)] if known.any() else none,
             "rank": [int(r) if ok else None for r, ok in zip(rank, known)] if known.any() else none},
            (verdict.resolution.as_dict() if verdict.resolution is not None else None, result.why))


def _conventions(setting, ridge, counted, tau, resolution, fragile, systems):
    ties = setting["ties"]
    model = {"half": "Bradley-Terry, P(a beats b) = sigma(theta_a - theta_b); a tie is half a win each way",
             "rao-kupper": "Rao-Kupper: P(a wins) = sigma(d - eta), P(b wins) = sigma(-d - eta), the rest a tie; "
                           "tie_parameter = e^eta",
             "davidson": "Davidson: P(a wins), P(b wins), P(tie) proportional to e^(d/2), e^(-d/2), nu; "
                         "tie_parameter = nu"}[ties]
    interval = setting["interval"]
    out = {"model": model,
           "estimator": "maximum likelihood on the counted distinct votes (Newton)"
           + (f", Gaussian prior ridge {ridge:g}" if ridge else ""),
           "scale": "1000 + 400/ln(10) * theta" if setting["scale"] == "elo" else "theta, centred",
           "interval": ("percentile over multinomial resamples of the vote counts; rounds whose votes admit "
                        "no estimate left out" if interval == "bootstrap" else
                        "rating +- z * sqrt(diag(H^+ J H^+)), the robust (sandwich) covariance"),
           "votes": "each judge's verdict in each presentation order is one vote",
           "n_votes": counted.n_votes,
           "tests": ("two-sided bootstrap p of each pair's difference, 2 min(#d<=0, #d>=0)/n_valid"
                     if interval == "bootstrap" else "two-sided z-test of each pair's difference, sandwich variance")
           + f", {setting['correction']} over all pairs; groups by the conclusion layer (rule any)",
           "resolution": resolution[0], "groups_note": resolution[1],
           "fragility": "fewest removed votes after which another system is rated at least as high as the leader"
                        + (" (exact search)" if fragile.exact else " (greedy search: an upper bound)"),
           "fragility_challenger": None if fragile.challenger is None else systems[fragile.challenger]}
    if setting.get("style"):
        out["model"] = ("Bradley-Terry with style covariates (Chatbot Arena's style control): P(a beats b) = "
                        "sigma(theta_a - theta_b + z'gamma), z the standardised style features; a tie is half a win "
                        "each way; the ratings are the controlled strengths")
        out["style"] = setting["style"]
        if ridge:
            out["estimator"] += " on the strengths and the coefficients"
    return out
