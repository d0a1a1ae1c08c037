"""``metaeval leaderboard``: systems ranked from pairwise votes (issue 35 item 1; the statistics:
:mod:`metaeval.analyses.leaderboard`).

The votes are the stored preferences (``ingest preferences``): every human judge's by default, or
one automatic judge's (``judge``); each (input, pair, presentation order) verdict is one vote, a
tie half a win each way. Bradley-Terry by maximum likelihood on the counted distinct votes (no
prior unless ``ridge``), ratings on the arena's Elo-style scale (or logits), intervals from a
bootstrap over votes (multinomial on the counts, ``k`` rounds, ``seed``: the same draws for every
judge of the same votes) or the sandwich estimator. Votes that admit no estimate (a system that
never loses, or never wins) are refused unless a ``ridge`` is given: the ratings would be
infinite. One run writes the rows of ``leaderboard``; the same command on the same votes computes
nothing.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError
from metaeval.runs.families import ALPHA, DATASET, FORCE, K, SEED, Family, Option, register

COMMAND, TABLE = "leaderboard", "leaderboard"

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
    FORCE,
)


@register
class Leaderboard(Family):
    name = COMMAND
    summary = "Systems ranked from pairwise votes: Bradley-Terry ratings with intervals (Chatbot Arena's method)."
    tables = (TABLE,)
    options = OPTIONS

    def compute(self, wh, **params):
        return leaderboard(wh, **params)

    def present(self, outcome, fmt: str) -> str:
        if fmt != "text" or outcome.empty:
            return super().present(outcome, fmt)
        shown = outcome[["system", "rating", "lower", "upper", "first_share", "votes"]].copy()
        r = outcome.iloc[0]
        digits = 1 if r["scale"] == "elo" else 3
        for c in ("rating", "lower", "upper"):
            shown[c] = shown[c].map(lambda x: f"{x:.{digits}f}")
        shown["first_share"] = shown["first_share"].map(lambda x: "" if x != x or x is None else f"{x:.3f}")
        who = f"judge {r['judge']}" if r["judge"] else "the human votes"
        how = (f"{100 * (1 - r['alpha']):g}% percentile bootstrap over votes, k={r['k']}, seed={r['seed']}, "
               f"{r['n_valid']} valid rounds" if r["interval"] == "bootstrap" else
               f"{100 * (1 - r['alpha']):g}% sandwich intervals")
        from metaeval.analyses import plain, tables

        return (plain.wrap(f"Bradley-Terry ratings from {who} ({r['scale']} scale; {how}):") + "\n"
                + tables.render(shown, "text"))


def _votes(wh, dataset: str, judge: str | None):
    """(systems, counted votes, fingerprint, votes per system) of the chosen votes."""
    import hashlib

    import numpy as np

    from metaeval import schema
    from metaeval.analyses import leaderboard as lb

    wh.require_dataset(dataset)
    rows = wh.con.execute(schema.read("preferences_of"), {"dataset": dataset}).df()
    if judge is None:
        rows = rows[rows["kind"] == "human"]
    else:
        if judge not in set(rows.loc[rows["kind"] == "automatic", "judge"]):
            raise WarehouseError(Message(f"{dataset!r} has no automatic judge ", Argument("judge", judge)))
        rows = rows[rows["judge"] == judge]
    if rows.empty:
        raise WarehouseError(f"{dataset!r} has no {'human ' if judge is None else ''}pairwise votes: ingest them "
                             "with ingest preferences")
    systems = sorted(set(rows["system_a"]) | set(rows["system_b"]))
    index = {s: i for i, s in enumerate(systems)}
    a, b = rows["system_a"].map(index).to_numpy(), rows["system_b"].map(index).to_numpy()
    y = rows["winner"].map({"a": lb.A_WINS, "b": lb.B_WINS, "tie": lb.TIE}).to_numpy()
    counted = lb.count(a, b, y, len(systems))
    digest = hashlib.sha256("\n".join(systems).encode())
    for part in (counted.a, counted.b, counted.y, counted.w):
        digest.update(np.ascontiguousarray(part, dtype="<f8").tobytes())
    votes = np.bincount(a, minlength=len(systems)) + np.bincount(b, minlength=len(systems))
    return systems, counted, digest.hexdigest(), votes


def leaderboard(wh, dataset: str, judge: str | None = None, *, k: int = K.default, seed: int = SEED.default,
                alpha: float = ALPHA.default, interval: str = "bootstrap", scale: str = "elo", anchor: str | None = None,
                anchor_rating: float = 1000.0, ridge: float = 0.0, force: bool = False, progress=None):
    """The latest ``leaderboard`` rows of these votes and settings (best first), computed unless
    up to date."""
    import numpy as np
    import pandas as pd
    from scipy import stats

    from metaeval.analyses import leaderboard as lb
    from metaeval.runs import bookkeeping, parameters, persist

    if interval == "bootstrap":
        parameters.check_k(k, alpha, "interval")
    systems, counted, fingerprint, votes = _votes(wh, dataset, judge)
    if anchor is not None and anchor not in systems:
        raise WarehouseError(Message(Argument("anchor", anchor), f" is not a system of the votes of {dataset!r}"))
    if ridge == 0 and not lb.estimable(counted):
        raise WarehouseError(Message("these votes admit no maximum-likelihood ratings (a system never loses or never "
                                     "wins against the others, so its rating is infinite): give a prior, e.g. ",
                                     Argument("ridge", 0.01)))
    setting = {"judge": judge or "", "scale": scale, "interval": interval, "anchor": anchor or "",
               "ridge": float(ridge), "alpha": float(alpha)}
    if interval == "bootstrap":
        setting.update(k=int(k), seed=int(seed))
    if not force and (rows := persist.reusable(wh, TABLE, dataset, fingerprint, **setting)) is not None:
        return rows.sort_values("rating", ascending=False).reset_index(drop=True)
    at = systems.index(anchor) if anchor is not None else None

    def transform(theta):
        return lb.elo(theta, at, anchor_rating) if scale == "elo" else (
            theta - theta[..., [at]] if at is not None else theta)

    theta = lb.fit(counted, ridge=ridge)
    if not np.isfinite(theta).all():
        raise WarehouseError("the Bradley-Terry fit of these votes did not converge: no ratings are stored")
    rating = transform(theta)
    first, n_valid = np.full(len(systems), np.nan), None
    if interval == "bootstrap":
        boot = lb.bootstrap(counted, k=k, seed=seed, alpha=alpha, ridge=ridge, transform=transform)
        lower, upper, first, n_valid = boot.lower, boot.upper, boot.first, boot.n_valid
    else:
        cov = lb.sandwich(counted, theta)
        if at is not None:                       # the variance of theta_i - theta_anchor
            e = np.eye(len(systems)) - np.eye(len(systems))[at]
            cov = e @ cov @ e.T
        se = np.sqrt(np.clip(np.diag(cov), 0, None)) * (lb.ELO_PER_LOGIT if scale == "elo" else 1.0)
        z = stats.norm.ppf(1 - alpha / 2)
        lower, upper = rating - z * se, rating + z * se
    conventions = {"model": "Bradley-Terry, P(a beats b) = sigma(theta_a - theta_b); a tie is half a win each way",
                   "estimator": "maximum likelihood on the counted distinct votes (Newton)"
                   + (f", Gaussian prior ridge {ridge:g}" if ridge else ""),
                   "scale": "1000 + 400/ln(10) * theta" if scale == "elo" else "theta, centred",
                   "interval": ("percentile over multinomial resamples of the vote counts; rounds whose votes admit "
                                "no estimate left out" if interval == "bootstrap" else
                                "rating +- z * sqrt(diag(H^+ J H^+)), the robust (sandwich) covariance"),
                   "votes": "each judge's verdict in each presentation order is one vote",
                   "n_votes": counted.n_votes}
    frame = pd.DataFrame({"system": systems, "votes": votes, "rating": rating, "lower": lower, "upper": upper,
                          "first_share": [bookkeeping.none_if_nan(x) for x in first]}).assign(
        dataset=dataset, **setting, anchor_rating=float(anchor_rating) if anchor else None, n_valid=n_valid,
        fingerprint=fingerprint, conventions=bookkeeping.conventions_json(conventions))
    persist.ensure_table(wh, TABLE, "85_leaderboard")
    persist.write(wh, COMMAND, TABLE, frame, {"dataset": dataset, **setting}, fingerprint,
                  seed if interval == "bootstrap" else None)
    rows = persist.reusable(wh, TABLE, dataset, fingerprint, **setting)
    return rows.sort_values("rating", ascending=False).reset_index(drop=True)
