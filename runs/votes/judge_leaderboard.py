"""``metaeval judge-leaderboard``: each automatic judge's leaderboard against the humans' (issue 35
item 3; the statistics: :mod:`metaeval.analyses.judge_leaderboard`).

For every chosen automatic judge of a dataset's preferences: Kendall tau-b and Spearman between
its Bradley-Terry ratings of the systems and the humans' (every human verdict one vote), with
percentile intervals from a paired bootstrap over items (the same item resamples for the judge
and the humans: ``metaeval judges``' draws); Arena-Hard's separability with confidence and
agreement with confidence interval; the Brier score of the judge's pairwise win probabilities
against the humans' pairwise order and against every human vote. The items of a judge are those
either side voted on, so a judge's row depends on its own and the humans' votes only (its
fingerprint), and is reused by a later run on the same votes and settings. One run writes the rows
of ``judge_leaderboard``.
"""

from __future__ import annotations

from metaeval.errors import Argument, Message, WarehouseError, ingest_hint
from metaeval.runs.engine.families import Family, register
from metaeval.runs.engine.options import ALPHA, DATASET, FORCE, JUDGE_GLOBS, K, SEED, VOTES_BY, VOTES_WHERE, Option
from metaeval.runs.engine.shared_options import REPLICATES

COMMAND, TABLE = "judge-leaderboard", "judge_leaderboard"
_OUTCOME = {"a": 1.0, "b": 0.0, "tie": 0.5}


@register
class JudgeLeaderboard(Family):
    name = COMMAND
    topic = "votes"
    headline = "A judge's leaderboard against the humans': rankings, separability, Brier."
    summary = ("A judge's leaderboard against the humans': Kendall, Spearman, Arena-Hard's separability and "
               "agreement with confidence, Brier scores of its pairwise win probabilities.")
    tables = (TABLE,)
    options = (DATASET,
               JUDGE_GLOBS,
               K.but(help="Bootstrap rounds over the items (the same for the judge and the humans)."), SEED, ALPHA,
               Option("ridge", default=0.0, kind="float", minimum=0,
                      help="A Gaussian prior -ridge/2 * ||theta||^2 on both sides' strengths (default none)."),
               VOTES_WHERE, VOTES_BY,
               REPLICATES.but(help="A judge run several times on the same items (preferences.replicate): mean "
                                   "counts each vote as the mean over its runs; resample also draws each drawn "
                                   "vote's runs again inside every item resample (the humans' votes are one run "
                                   "each), so that the judge's intervals include its run-to-run noise."),
               FORCE)

    def inputs(self, wh, dataset: str, judges=(), *, k: int = K.default, seed: int = SEED.default,
               alpha: float = ALPHA.default, ridge: float = 0.0, replicates: str = "mean"):
        """The human votes and each chosen judge's (a part each: its own fingerprint); ``replicates``
        "resample": each judge's runs drawn again inside every item resample
        (:mod:`metaeval.analyses.vote_runs`; the runs in the fingerprint)."""
        from metaeval.analyses import judge_leaderboard as jl
        from metaeval.runs.engine import parameters, store
        from metaeval.runs.votes import vote_runs

        parameters.check_k(k, alpha, "interval")
        resample = vote_runs.check(replicates, "", "bootstrap", ())
        systems, human, chosen = _data(wh, dataset, judges)
        setting = {"k": int(k), "seed": int(seed), "alpha": float(alpha), "ridge": float(ridge)}
        parts, runs = [], {}
        for judge, frame in chosen.items():
            fp, runs[judge] = _fingerprint(systems, human, frame), None
            if resample:   # the judge's votes run several times, in the fingerprint
                items = _items(human, frame)
                runs[judge], fp = vote_runs.prepared(wh, dataset, True, judge, False, systems, jl.counted(
                    _votes(frame, items, systems), len(systems), len(items))[0], fp, items)
            parts.append((fp, {"judge": judge, **setting}))
        return store.Inputs(dataset, "", setting, data=(systems, human, chosen, runs, resample), parts=tuple(parts))

    def rows(self, wh, inputs, *, missing=(), **params):
        return _rows(inputs, missing)

    def outcome(self, stored, inputs, **params):
        """By Kendall, best first."""
        return stored.sort_values(["kendall", "judge"], ascending=[False, True], na_position="last").reset_index(
            drop=True)

    def present(self, outcome, fmt: str) -> str:
        if fmt != "text" or outcome.empty:
            return super().present(outcome, fmt)
        from metaeval.present import plain, tables

        def num(x, lo=None, hi=None):
            text = plain.number_text(x, 3)
            if text == "undefined" or plain.number_text(lo, 3) == "undefined":
                return text
            return f"{text} [{plain.number_text(lo, 3)}, {plain.number_text(hi, 3)}]"

        r = outcome.iloc[0]
        shown = outcome.assign(**{
            "kendall": [num(*v) for v in zip(outcome["kendall"], outcome["kendall_lower"], outcome["kendall_upper"])],
            "spearman": [num(*v) for v in zip(outcome["spearman"], outcome["spearman_lower"],
                                              outcome["spearman_upper"])],
            "separability": outcome["separability"].map(num), "agreement": outcome["agreement"].map(num),
            "brier": [num(*v) for v in zip(outcome["brier"], outcome["brier_lower"], outcome["brier_upper"])],
            "brier (votes)": outcome["brier_votes"].map(num)})
        caption = (f"Each judge's Bradley-Terry leaderboard against the humans' ({100 * (1 - r['alpha']):g}% percentile "
                   f"intervals over k={r['k']} paired item resamples, seed={r['seed']}; separability and agreement "
                   f"with confidence as Arena-Hard's; the humans' own separability "
                   f"{num(r['human_separability'])}):")
        table = tables.render(shown[["judge", "kendall", "spearman", "separability", "agreement", "brier",
                                     "brier (votes)"]], "text")
        return plain.wrap(caption) + "\n" + table.rstrip("\n") + "\n"


def _data(wh, dataset: str, globs):
    """(systems, items, human votes frame, {judge: its votes frame}) of the dataset."""
    from metaeval import schema
    from metaeval.runs.votes import judges as jg

    wh.require_dataset(dataset)
    rows = wh.con.execute(schema.read("preferences_of"), {"dataset": dataset}).df()
    kinds = rows.drop_duplicates("judge").set_index("judge")["kind"]
    if not (kinds == "human").any():
        raise WarehouseError(Message(f"dataset {dataset!r} has no human pairwise votes (preferences of kind human) to "
                                     "compare a judge's leaderboard with; ingest them with `",
                                     ingest_hint("preferences", dataset), "` (rows of kind human)"))
    chosen = jg.choose(sorted(kinds.index[kinds == "automatic"]), globs, "automatic", "judges", dataset)
    systems = sorted(set(rows["system_a"]) | set(rows["system_b"]))
    return systems, rows[rows["kind"] == "human"], {j: rows[rows["judge"] == j] for j in chosen}


def _votes(frame, items: dict, systems: list[str]):
    import numpy as np

    from metaeval.analyses import judge_leaderboard as jl

    index = {s: i for i, s in enumerate(systems)}
    return jl.Votes(item=np.array([items[k] for k in zip(frame["input"], frame["system_a"], frame["system_b"])],
                                  dtype=np.int64),
                    a=frame["system_a"].map(index).to_numpy(np.int64), b=frame["system_b"].map(index).to_numpy(np.int64),
                    y=frame["winner"].map(_OUTCOME).to_numpy(float))


def _fingerprint(systems, human, judge) -> str:
    import hashlib

    digest = hashlib.sha256("\n".join(systems).encode())
    for frame in (human, judge):
        digest.update(frame[["judge", "input", "system_a", "system_b", "presentation", "winner"]]
                      .to_csv(index=False).encode())
    return digest.hexdigest()


def _rows(inputs, missing):
    """The rows of the judges without up-to-date rows (``missing``: indices of the inputs' parts)."""
    import pandas as pd

    from metaeval.analyses import leaderboard as lb
    from metaeval.runs.engine import store

    (systems, human, chosen, runs, resample), setting, dataset = inputs.data, dict(inputs.keys), inputs.dataset
    ridge, judges = setting["ridge"], list(chosen)
    rows = []
    for i in missing:
        judge, (fp, _) = judges[i], inputs.parts[i]
        frame = chosen[judge]
        items = _items(human, frame)
        hv, jv = _votes(human, items, systems), _votes(frame, items, systems)
        if ridge == 0:
            for who, v in (("the human", hv), (f"judge {judge!r}'s", jv)):
                if not lb.estimable(lb.count(v.a, v.b, v.y, len(systems))):
                    raise WarehouseError(Message(f"{who} votes admit no maximum-likelihood ratings (a system never "
                                                 "loses or never wins, so its rating is infinite): give a prior, e.g. ",
                                                 Argument("ridge", 0.01)))
        rows.append(_row(judge, hv, jv, systems, len(items), fp, setting, runs[judge]))
    frame = pd.DataFrame(rows).assign(dataset=dataset, **setting)
    return store.Rows(frame, {"dataset": dataset, "judges": sorted(chosen), **setting,
                              **({"replicates": "resample"} if resample else {})}, setting["seed"],
                      ",".join(sorted(set(frame["fingerprint"]))))


def _items(human, frame) -> dict:
    """(input, system_a, system_b) -> item index: the items either side voted on, sorted."""
    return {key: i for i, key in enumerate(sorted(set(zip(human["input"], human["system_a"], human["system_b"]))
                                                  | set(zip(frame["input"], frame["system_a"], frame["system_b"]))))}


def _row(judge: str, hv, jv, systems, n_items: int, fingerprint: str, setting: dict, runs=None) -> dict:
    """One judge's row (without dataset and the setting's columns); ``runs``: its votes run
    several times, drawn again inside every item resample."""
    from metaeval.analyses import judge_leaderboard as jl
    from metaeval.runs.engine import bookkeeping
    from metaeval.runs.votes import vote_runs

    r = jl.evaluate(hv, jv, len(systems), n_items, **setting, runs=runs)
    none = bookkeeping.none_if_nan
    row = {"judge": judge, "systems": len(systems), "items": n_items, "votes_judge": len(jv.a),
           "votes_human": len(hv.a), "n_valid": r.n_valid, "pairs": r.pairs,
           "separability": none(r.separability), "human_separability": none(r.human_separability),
           "agreement": none(r.agreement), "agreement_separated": none(r.agreement_separated),
           "agreement_human": none(r.agreement_human),
           "pairs_separated_both": r.pairs_separated_both, "fingerprint": fingerprint}
    for name in jl.STATISTICS:
        row[name], row[f"{name}_lower"], row[f"{name}_upper"] = (none(r.value[name]), none(r.lower[name]),
                                                                  none(r.upper[name]))
    row["conventions"] = bookkeeping.conventions_json({
        "ratings": "maximum-likelihood Bradley-Terry on each side's counted votes (ties half a win each way"
                   + (f", Gaussian prior ridge {setting['ridge']:g}" if setting["ridge"] else "")
                   + "); Elo scale 1000 + 400/ln(10) theta, centred",
        "humans": "every verdict of every human judge in every presentation order is one vote",
        "bootstrap": "items (input, pair of systems) drawn with replacement, k rounds, "
                     "preferences.bootstrap_weights(items, k, seed): the same draws for the judge and the humans; "
                     "a round is valid when both sides' votes admit an estimate",
        "separability": "Arena-Hard's separability with confidence: share of system pairs whose judge-side "
                        "percentile intervals do not overlap",
        "agreement": "Arena-Hard's agreement with confidence interval: mean over system pairs of s_J * s_H, s = +1/-1 "
                     "when the intervals separate the pair one way or the other, 0 when they overlap; "
                     "agreement_separated = of the pairs both separate, the share ordered alike; "
                     "agreement_human = sum s_J * s_H over the pairs the humans separate, divided by their number",
        "brier": "mean over system pairs of (sigma(theta_J,i - theta_J,j) - 1[human rating i > j])^2, pairs the "
                 "humans rate equal left out",
        "brier_votes": "mean over human votes of (sigma(theta_J,a - theta_J,b) - y)^2, y = 1, 1/2 (tie), 0",
        "ratings_judge": dict(zip(systems, map(float, r.rating_judge))),
        "ratings_human": dict(zip(systems, map(float, r.rating_human))), **vote_runs.said({}, runs)})
    return row
