"""``leaderboard --judge J --replicates resample``: the judge's repeated runs drawn again inside
every bootstrap round (the second stage: :mod:`metaeval.analyses.vote_runs`). Its refusals, the
runs read from the warehouse, and what the rows and the run record say of it; the leaderboard
itself (runs/votes/leaderboard.py) hands its rounds' counts through :func:`stage`.
"""

from __future__ import annotations

import hashlib

from metaeval.errors import Argument, Message, WarehouseError

REPLICATES = ("mean", "resample")


def check(replicates: str, judge: str | None, interval: str, style) -> bool:
    """Whether the runs are resampled; a refusal in one line where they cannot be (before anything
    is read or written)."""
    if replicates not in REPLICATES:
        raise WarehouseError(Message(Argument("replicates", replicates), f" must be one of {', '.join(REPLICATES)}"))
    if replicates == "mean":
        return False
    option = Argument("replicates", "resample")
    if judge is None:
        raise WarehouseError(Message(option, " draws an automatic judge's runs again; the human votes have none "
                                     "(a human verdict is one run): give ", Argument("judge")))
    if interval != "bootstrap":
        raise WarehouseError(Message(option, " draws the runs inside the bootstrap's rounds; with ",
                                     Argument("interval", interval), " there are none"))
    if style:
        raise WarehouseError(Message(option, " and ", Argument("style", list(style)), " cannot be combined"))
    return True


def prepared(wh, dataset: str, resample: bool, judge: str, several: bool, systems, counted, fingerprint: str,
             items: dict | None = None):
    """(the judge's votes run several times, :class:`metaeval.analyses.vote_runs.VoteRuns`, or None for
    the mean; the rows' fingerprint: with the runs, of the votes and their runs); ``items``: as
    :func:`load`'s."""
    if not resample:
        return None, fingerprint
    if several:
        raise WarehouseError(Message(Argument("replicates", "resample"), " draws the runs of connected votes only; these votes form unconnected "
                                     "groups of systems (leave it out)"))
    runs, digest = load(wh, dataset, judge, systems, counted, items)
    return runs, hashlib.sha256(f"{fingerprint}\x1e{digest}".encode()).hexdigest()


def load(wh, dataset: str, judge: str, systems, counted, items: dict | None = None):
    """The judge's votes run several times (:class:`metaeval.analyses.vote_runs.VoteRuns` on
    ``counted``, the leaderboard's rows) and the digest of their runs; ``items``: (input, system_a,
    system_b) -> item index, each vote's item (judge-leaderboard's bootstrap over items)."""
    import numpy as np

    from metaeval import schema
    from metaeval.analyses import vote_runs

    rows = wh.con.execute(schema.read("leaderboard_runs"), {"dataset": dataset, "judge": judge}).fetchall()
    index = {s: i for i, s in enumerate(systems)}
    outcome = {"a": 1.0, "b": 0.0, "tie": 0.5}
    a, b, y, vote, soft, inputs = (np.array(c) for c in zip(*rows)) if rows else ([], [], [], [], [], [])
    item = None if items is None else [items[key] for key in zip(inputs, a, b)]
    runs = vote_runs.of(counted, [index[s] for s in a], [index[s] for s in b], [outcome[w] for w in y], vote, soft,
                        item)
    digest = hashlib.sha256(b"replicates\x1fresample\x1e")
    digest.update(np.ascontiguousarray(np.asarray(soft, dtype=float), dtype="<f8").tobytes())
    digest.update(np.ascontiguousarray(np.asarray(vote, dtype=np.int64), dtype="<i8").tobytes())
    return runs, digest.hexdigest()


def recorded(runs) -> dict:
    """What the run's parameters add (nothing for the mean: as before the runs)."""
    return {} if runs is None else {"replicates": "resample"}


def stage(counted, W, runs, seed: int):
    """(counted rows, rounds' counts) the rounds fit: the first stage's, or with ``runs`` (a
    :class:`~metaeval.analyses.vote_runs.VoteRuns`) the second stage's."""
    if runs is None:
        return counted, W
    from metaeval.analyses import replicates, vote_runs

    return vote_runs.second_stage(runs, W, replicates.second_stage_rng(seed))


def said(conventions: dict, runs) -> dict:
    """The rows' conventions, with the second stage said (and the most runs of a vote) when drawn."""
    if runs is None:
        return conventions
    from metaeval.analyses import vote_runs

    return {**conventions, "replicates": vote_runs.RUNS_TEXT, "most_runs": runs.most}
