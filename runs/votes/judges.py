"""``metaeval judges``: automatic judges of pairwise preferences against the human preference,
persisted.

For each automatic judge of a dataset's preferences (``metaeval ingest preferences``), against
the majority of the chosen human judges (an item whose human majority is tied is left out and
counted): n, accuracy per presentation order and overall, both-correct, position consistency,
first-position rate, tie rate and Cohen's kappa, each with a percentile bootstrap interval over
items (:mod:`metaeval.analyses.preferences`); the judge-vs-judge tests (exact McNemar and an
item-level permutation test, corrected over the family of judge pairs) and the significance
clusters of the judges by accuracy, built only from complete evidence; the Bradley-Terry
strengths of the systems per judge and for the humans, with intervals, and the Kendall tau-b
of each judge's ranking with the humans'. Rows go to ``judge_statistics``, ``judge_tests`` and
``preference_rankings`` under one run; the same command on the same preferences computes nothing.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from collections.abc import Sequence
from typing import ClassVar
from dataclasses import dataclass, field, replace
from itertools import combinations

import numpy as np
import pandas as pd

from metaeval import schema
from metaeval.analyses import conclusions
from metaeval.analyses import preferences as pf
from metaeval.analyses import replicates as rp
from metaeval.analyses.stats import vocabulary
from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError, ingest_hint
from metaeval.runs.engine import bookkeeping, parameters, selection
from metaeval.runs.engine.parameters import Params, setting

TABLES = ("judge_statistics", "judge_tests", "preference_rankings")
HUMAN_JUDGE = "human"    # the ``judge`` of the humans' ranking in preference_rankings
_LABEL = {"a": pf.A, "b": pf.B, "tie": pf.TIE}
_ORDER = {"ab": 0, "ba": 1}


@dataclass(frozen=True)
class JudgesParams(Params):
    """The settings of a ``judges`` run (tables ``judge_statistics``, ``judge_tests`` and
    ``preference_rankings``, written by :func:`write`, not the run loop): recorded with the run
    and matched when reusing it, beside its dataset, human and automatic judges and subsets."""

    table: ClassVar[str] = "judge_statistics"
    k: int = setting(column=False, argument=False)
    alpha: float = setting(column=False, argument=False)
    seed: int = setting(column=False, argument=False)
    test: str = setting(column=False, argument=False)
    correction: str = setting(column=False, argument=False)
    cluster_rule: str = setting(column=False, argument=False)
    ridge: float = setting(column=False, argument=False)
    resample_clusters: str | None = setting(None, column=False, argument=False)   # recorded only when set
    replicates: str = setting("mean", column=False, argument=False, quiet_default=True)  # recorded when not mean


@dataclass(frozen=True)
class Summary:
    run_id: int | None      # None: up to date, nothing computed
    rows: int
    human: str
    judges: list[str]
    tied_majority: dict[str, int]   # subset -> items with a tied human majority, left out


@dataclass(frozen=True)
class Data:
    """The preferences as arrays: ``items`` (input, system_a, system_b), ``systems``, the
    verdicts ``V[judge]`` (items, 2) and the humans' ``H`` (humans, items, 2)."""

    items: list[tuple[str, str, str]]
    systems: list[str]
    judges: list[str]
    humans: list[str]
    V: dict[str, np.ndarray]
    H: np.ndarray
    fingerprint: str
    #: judge -> its runs on the cells it judged more than once (V holds their mean's verdict)
    runs: dict[str, rp.Runs] = field(default_factory=dict)

    def subset(self, keep: np.ndarray) -> Data:
        """The same data on the items where ``keep`` is True."""
        return Data([it for it, k in zip(self.items, keep) if k], self.systems, self.judges, self.humans,
                    {j: v[keep] for j, v in self.V.items()}, self.H[:, keep], self.fingerprint,
                    {j: r.subset(keep) for j, r in self.runs.items()})


def choose(names: Sequence[str], globs: Sequence[str], what: str, option: str, dataset: str) -> list[str]:
    if not names:
        raise WarehouseError(Message(f"dataset {dataset!r} has no {what} preference judge; ingest its pairwise "
                                     "preferences with `", ingest_hint("preferences", dataset), "`"
                                     + ("" if what == "automatic" else " (rows of kind human)")))
    chosen: list[str] = []
    for g in globs or ("*",):
        hit = [n for n in names if fnmatch.fnmatchcase(n, g)]
        if not hit:
            raise WarehouseError(Message(Argument(option, [g]), f" matches no {what} judge of {dataset!r}; it has: "
                                         f"{', '.join(names)}"))
        chosen += [n for n in hit if n not in chosen]
    return chosen


def load(wh: Store, dataset: str, humans: Sequence[str] = (), judges: Sequence[str] = ()) -> Data:
    """The preferences of ``dataset`` of the human judges matching ``humans`` and the automatic
    judges matching ``judges`` (globs; default all)."""
    wh.require_dataset(dataset)
    rows = wh.con.execute(schema.read("preferences_of"), {"dataset": dataset}).df()
    kinds = rows.drop_duplicates("judge").set_index("judge")["kind"]
    humans = choose(sorted(kinds.index[kinds == "human"]), humans, "human", "humans", dataset)
    judges = choose(sorted(kinds.index[kinds == "automatic"]), judges, "automatic", "judges", dataset)
    rows = rows[rows["judge"].isin(humans + judges)]
    keys = list(zip(rows["input"], rows["system_a"], rows["system_b"]))
    items = sorted(set(keys))
    index = {item: i for i, item in enumerate(items)}
    systems = sorted(set(rows["system_a"]) | set(rows["system_b"]))
    item = np.array([index[k] for k in keys], dtype=np.int64)
    order = rows["presentation"].map(_ORDER).to_numpy()
    label = rows["winner"].map(_LABEL).to_numpy()
    judge = rows["judge"].to_numpy()

    def verdicts(name: str) -> np.ndarray:
        V = np.full((len(items), 2), pf.MISSING, dtype=np.int64)
        mine = judge == name
        V[item[mine], order[mine]] = label[mine]
        return V

    digest = hashlib.sha256()
    digest.update(rows.sort_values(["judge", "input", "system_a", "system_b", "presentation"])
                  .to_csv(index=False).encode())
    runs = _runs(wh, dataset, judges, index)
    if runs is not None:      # (none run twice: the fingerprint of before the runs were stored)
        digest.update(runs[0])
    return Data(items, systems, judges, humans, {j: verdicts(j) for j in judges},
                np.stack([verdicts(h) for h in humans]), digest.hexdigest(), {} if runs is None else runs[1])


def _runs(wh: Store, dataset: str, judges: Sequence[str], index: dict) -> tuple[bytes, dict] | None:
    """The runs of the chosen automatic judges on the cells they judged more than once: their
    text for the fingerprint and judge -> :class:`~metaeval.analyses.replicates.Runs`; None without any."""
    rows = wh.con.execute(schema.read("preference_runs"), {"dataset": dataset}).df()
    rows = rows[rows["judge"].isin(judges)]
    if rows.empty:
        return None
    out = {}
    for j, r in rows.groupby("judge", sort=True):
        out[j] = rp.Runs.of([index[k] for k in zip(r["input"], r["system_a"], r["system_b"])],
                            r["presentation"].map(_ORDER).to_numpy(), r["replicate"].to_numpy(),
                            r["winner"].map(_LABEL).to_numpy(), r["probability"].astype(float).to_numpy())
    return b"\x1eruns\x1e" + rows.to_csv(index=False).encode(), out


def check_options(*, k: int, alpha: float, test: str, correction: str, cluster_rule: str, ridge: float) -> None:
    """The checks of :func:`judges`' options (before anything is read or written)."""
    if test not in vocabulary.JUDGE_TESTS:
        raise WarehouseError(f"test must be one of {', '.join(vocabulary.JUDGE_TESTS)}; got {test!r}")
    if correction not in vocabulary.CORRECTIONS:
        raise WarehouseError(f"correction must be one of {', '.join(vocabulary.CORRECTIONS)}; got {correction!r}")
    if cluster_rule not in vocabulary.CLUSTER_RULES:
        raise WarehouseError(f"cluster rule must be one of {', '.join(vocabulary.CLUSTER_RULES)}; got {cluster_rule!r}")
    if not 0 < alpha < 1:
        raise WarehouseError(f"alpha must be strictly between 0 and 1; got {alpha}")
    if not ridge > 0:
        raise WarehouseError(f"ridge must be > 0 (without a prior a system that wins every comparison has an "
                             f"infinite strength); got {ridge}")
    parameters.check_k(k, alpha, "interval")


def judges(wh: Store, dataset: str, humans: Sequence[str] = (), judge_globs: Sequence[str] = (), *,
           k: int = parameters.DEFAULT_K, alpha: float = 0.05, seed: int = parameters.DEFAULT_SEED, test: str = "permutation",
           correction: str = "holm", cluster_rule: str = "any", ridge: float = pf.DEFAULT_RIDGE,
           where: Sequence = (), by: str | None = None, force: bool = False,
           resample_clusters: str | None = None, replicates: str = "mean") -> Summary:
    """Compute and persist the judge statistics, tests and rankings of ``dataset`` (see the module).

    ``where`` (``["split=test"]`` or pairs): only the items whose input satisfies every condition
    (attributes of ``metaeval ingest attributes``: an item counts when the cells of both its
    systems for its input do); ``by``: one result per value of that attribute (with ``where``),
    each its own ``subset``. No macro average over the values is computed for judges.
    ``resample_clusters``: the item bootstrap draws the clusters of items that input attribute
    names (an item's cluster: its input's value), the permutation test flips a cluster's items
    together; McNemar is unchanged (it treats its trials as independent).
    ``replicates``: ``mean`` (each cell the mean over a judge's runs) or ``resample`` (the statistics'
    intervals draw each cell's runs again inside each item resample: the judge's run-to-run noise)."""
    return write(wh, prepare(wh, dataset, humans, judge_globs, k=k, alpha=alpha, seed=seed, test=test,
                             correction=correction, cluster_rule=cluster_rule, ridge=ridge, where=where, by=by,
                             force=force, resample_clusters=resample_clusters, replicates=replicates))


@dataclass(frozen=True)
class Prepared:
    """What :func:`write` stores: the run's parameters and fingerprint and the rows of each table
    (None: an up-to-date run, nothing to write)."""

    params: dict
    seed: int
    fingerprint: str
    rows: dict[str, list[dict]] | None
    summary: Summary


def prepare(wh: Store, dataset: str, humans: Sequence[str] = (), judge_globs: Sequence[str] = (), *,
            k: int = parameters.DEFAULT_K, alpha: float = 0.05, seed: int = parameters.DEFAULT_SEED, test: str = "permutation",
            correction: str = "holm", cluster_rule: str = "any", ridge: float = pf.DEFAULT_RIDGE,
            where: Sequence = (), by: str | None = None, force: bool = False,
            resample_clusters: str | None = None, replicates: str = "mean") -> Prepared:
    """Every check and computation of :func:`judges`, writing nothing (``evaluate`` runs it inside
    the transaction of a preference file's ingest, so that a refusal leaves nothing stored)."""
    check_options(k=k, alpha=alpha, test=test, correction=correction, cluster_rule=cluster_rule, ridge=ridge)
    if replicates not in REPLICATES:
        raise WarehouseError(Message(Argument("replicates", replicates), f" must be one of {', '.join(REPLICATES)}"))
    data = load(wh, dataset, humans, judge_globs)
    human = ",".join(data.humans)
    subsets = _subsets(wh, dataset, data, where, by)
    labels = None
    if resample_clusters is not None:
        data, labels = _clustered(wh, dataset, data, resample_clusters, subsets)
    settings = JudgesParams(k, alpha, seed, test, correction, cluster_rule, ridge, resample_clusters, replicates)
    params = {"dataset": dataset, "human": data.humans, "judges": data.judges, **settings.recorded(),
              "subsets": list(subsets)}
    majorities = {label: pf.human_majority(data.H[:, keep]) for label, keep in subsets.items()}
    tied = {label: int(m.tied.sum()) for label, m in majorities.items()}
    done = wh.con.execute(schema.read("judges_done"), {"dataset": dataset, **bookkeeping.version_parameter()}).fetchall()
    same = {run for f, p, run in done
            if f == data.fingerprint and {a: b for a, b in json.loads(p).items() if a != "executor"} == params}
    if not force and same and _latest_of(wh, dataset, human, data.judges, subsets) <= same:
        return Prepared(params, seed, data.fingerprint, None, Summary(None, 0, human, data.judges, tied))
    rows = {t: [] for t in TABLES}
    for label, keep in subsets.items():
        if not keep.any():
            raise WarehouseError(f"the subset {label!r} of {dataset!r} holds no preference item")
        part = compute(data.subset(keep), majorities[label], dataset=dataset, k=k, alpha=alpha, seed=seed, test=test,
                       correction=correction, cluster_rule=cluster_rule, ridge=ridge,
                       clusters=None if labels is None else (resample_clusters, labels[keep]), replicates=replicates)
        for t in TABLES:
            rows[t] += [{**r, "subset": label} for r in part[t]]
    total = sum(len(r) for r in rows.values())
    return Prepared(params, seed, data.fingerprint, rows, Summary(None, total, human, data.judges, tied))


def write(wh: Store, prepared: Prepared) -> Summary:
    """Store what :func:`prepare` computed: one run, the rows of the three tables."""
    if prepared.rows is None:
        return prepared.summary
    total = prepared.summary.rows
    run_id = bookkeeping.start_run(wh, "judges", prepared.params, prepared.seed, prepared.fingerprint, total)
    with bookkeeping.finishing(wh, run_id):
        for table in TABLES:
            bookkeeping.insert_rows(wh, table, pd.DataFrame(prepared.rows[table]).assign(
                run_id=run_id, fingerprint=prepared.fingerprint))
        bookkeeping.finish_run(wh, run_id, "finished", total)
    return replace(prepared.summary, run_id=run_id)


def compute(data: Data, majority: pf.Majority, *, dataset: str, k: int, alpha: float, seed: int, test: str,
            correction: str, cluster_rule: str, ridge: float, clusters: tuple | None = None,
            replicates: str = "mean") -> dict[str, list[dict]]:
    """The rows of the three tables (no run id or fingerprint); every verdict (significant, the
    family's resolution, clusters and winners) from :mod:`metaeval.analyses.conclusions`.
    ``clusters``: (attribute, each item's cluster label) of ``--resample-clusters``."""
    h = majority.label
    common = {"dataset": dataset, "human": ",".join(data.humans)}
    labels = None if clusters is None else list(clusters[1])
    W = pf.bootstrap_weights(len(data.items), k, seed, clusters=labels)
    said = {} if clusters is None else {"resample_clusters": clusters[0], "clusters": len(set(labels)),
                                        "cluster_procedure": _CLUSTERED_TEXT}
    rankings, ranking_rows = _rankings(data, W, common, k=k, alpha=alpha, seed=seed, ridge=ridge, said=said)
    pairs = list(combinations(range(len(data.judges)), 2))
    results = {(a, b): pf.judge_pair_test(data.V[data.judges[a]], data.V[data.judges[b]], h, k=k, seed=seed,
                                          clusters=labels)
               for a, b in pairs}
    verdicts = {name: _decide(name, [results[p] for p in pairs], k=k, correction=correction, alpha=alpha)
                for name in vocabulary.JUDGE_TESTS}
    test_rows = [row for name in vocabulary.JUDGE_TESTS
                 for row in _test_rows(data, pairs, results, name, verdicts[name], common, k=k, alpha=alpha,
                                       seed=seed, correction=correction, said=said)]
    stats = {j: pf.judge_statistics(data.V[j], h, alpha=alpha, W=W, resampled=_resampler(data, j, seed, replicates))
             for j in data.judges}
    scores = np.array([stats[j].value["accuracy"] for j in data.judges], dtype=np.float64)
    chosen = verdicts[test]
    clusters, _, _ = conclusions.clusters(
        scores, [p[0] for p in pairs], [p[1] for p in pairs], [results[p].delta for p in pairs], chosen.significant,
        rule=cluster_rule, names=data.judges, evidence=chosen.evidence,
        note=chosen.note(f"the {test} tests between the judges"))
    judge_rows = []
    for i, j in enumerate(data.judges):
        s = stats[j]
        tau, tau_lo, tau_hi, tau_undefined = _kendall(rankings[j], rankings[HUMAN_JUDGE], alpha)
        row = {**common, "judge": j, "n": s.n, "tied_majority": int(majority.tied.sum()), "n_ab": s.counts["ab"],
               "n_ba": s.counts["ba"], "n_both": s.counts["both"]}
        for name in pf.STATISTICS:
            row[name], row[f"{name}_lower"], row[f"{name}_upper"] = (_none(s.value[name]), _none(s.lower[name]),
                                                                      _none(s.upper[name]))
        row.update(kendall=_none(tau), kendall_lower=_none(tau_lo), kendall_upper=_none(tau_hi),
                   rank=_int(clusters.rank[i]), cluster=_int(clusters.cluster[i]),
                   is_winner=bool(clusters.is_winner[i]) if clusters.winner_known[i] else None,
                   alpha=alpha, k=k, seed=seed, test=test, correction=correction)
        row.update(_stability(data, j, W, alpha))
        row["conventions"] = bookkeeping.conventions_json({
            **s.conventions, "human": _MAJORITY_TEXT, "humans": data.humans,
            "undefined_resamples": {**s.undefined_resamples, "kendall": tau_undefined},
            "kendall": _KENDALL_TEXT,
            "bradley_terry": pf.bt_conventions(ridge),
            "clusters": {**clusters.conventions, "score": "accuracy", "test": test, "correction": correction,
                         "why_undetermined": clusters.why},
            "rng": "numpy default_rng(SeedSequence(seed)).integers(0, items, size=(k, items)): the item resamples, "
                   "shared by every judge and the humans" + ("" if clusters is None else
                                                             " (clustered: clusters for items)"), **said,
            **_replicates_said(data, j, replicates)})
        judge_rows.append(row)
    return {"judge_statistics": judge_rows, "judge_tests": test_rows, "preference_rankings": ranking_rows}


REPLICATES = ("mean", "resample")
_MEAN_TEXT = ("each cell (item, order) of a judge run several times is the mean over its runs: the soft preference "
              "(share of the runs preferring system_b, a tie 1/2), its rounding (> 1/2 b, < 1/2 a, 1/2 tie) the "
              "verdict analysed")
_RESAMPLE_TEXT = ("two-stage bootstrap: in each item resample, each cell's runs are drawn again with replacement (as "
                  "many as it has; numpy default_rng(SeedSequence([seed, 45])), per judge) and their mean's rounding "
                  "is the verdict, so that the statistics' intervals include the judge's run-to-run noise; the point "
                  "estimates, tests and rankings use the mean")
_STABILITY_TEXT = ("share of the pairs of the judge's runs on the same item and order that gave the same verdict "
                   "(a, b, tie), pooled over the cells; percentile interval over the item resamples; NULL when no "
                   "cell was run twice")


def _resampler(data: Data, judge: str, seed: int, replicates: str):
    """``--replicates resample``: resample b's verdicts of ``judge`` (its runs drawn again), or None."""
    runs = data.runs.get(judge)
    if replicates != "resample" or runs is None or runs.most < 2:
        return None
    rng = rp.second_stage_rng(seed)
    return lambda b: rp.resampled_verdicts(data.V[judge], runs, rng)


def _stability(data: Data, judge: str, W: np.ndarray, alpha: float) -> dict:
    """The repetition stability columns of ``judge``'s row."""
    runs = data.runs.get(judge)
    if runs is None or runs.most < 2:
        return {"stability": None, "stability_lower": None, "stability_upper": None, "runs": 1}
    point, boot = rp.stability(runs, len(data.items), W)
    lower, upper, _ = pf._percentile(boot, point, alpha)
    return {"stability": _none(point), "stability_lower": _none(lower), "stability_upper": _none(upper),
            "runs": runs.most}


def _replicates_said(data: Data, judge: str, replicates: str) -> dict:
    """The conventions of the runs (nothing for a judge run once: the rows of before)."""
    if judge not in data.runs:
        return {}
    return {"replicates": _MEAN_TEXT + ("; " + _RESAMPLE_TEXT if replicates == "resample" else ""),
            "stability": _STABILITY_TEXT}


_CLUSTERED_TEXT = ("the item bootstrap draws clusters of items (an item's cluster: its input's value of the "
                   "attribute), each item as often as its cluster; the permutation test flips a cluster's items "
                   "together; McNemar counts its trials as independent (unchanged)")
_MAJORITY_TEXT = ("the label (a, b, tie) with the most human votes, every verdict of every chosen human judge "
                  "in every order one vote; an item whose top count is shared is left out (tied_majority)")
_KENDALL_TEXT = ("Kendall tau-b between the judge's Bradley-Terry strengths and the humans', interval from "
                 "the same item resamples for both")
#: How each judge test forms its p-value (analyses.stats.resolution.PVALUE_FORMULAS).
_FORMULAS = {"permutation": "add-one", "mcnemar": "parametric"}


def _rankings(data: Data, W: np.ndarray, common: dict, *, k: int, alpha: float, seed: int,
              ridge: float, said: dict | None = None) -> tuple[dict, list[dict]]:
    """Bradley-Terry rankings of the humans (all their verdicts) and of each judge, on the same
    item resamples, and their preference_rankings rows."""
    sa = np.array([data.systems.index(a) for _, a, _ in data.items], dtype=np.int64)
    sb = np.array([data.systems.index(b) for _, _, b in data.items], dtype=np.int64)
    S = len(data.systems)
    human_C = sum(pf.win_matrices(sa, sb, H_r, S) for H_r in data.H)
    rankings = {HUMAN_JUDGE: pf.preference_ranking(human_C, W, ridge=ridge, alpha=alpha)}
    for j in data.judges:
        rankings[j] = pf.preference_ranking(pf.win_matrices(sa, sb, data.V[j], S), W, ridge=ridge, alpha=alpha)
    bt = pf.bt_conventions(ridge)
    rows = []
    for j, r in rankings.items():
        for s, name in enumerate(data.systems):
            seen = r.comparisons[s] > 0   # never compared: the ridge prior's strength, not a number to report
            rows.append({**common, "judge": j, "kind": "human" if j == HUMAN_JUDGE else "automatic",
                         "system": name, "strength": float(r.strength[s]) if seen else None,
                         "lower": _none(r.lower[s]) if seen else None, "upper": _none(r.upper[s]) if seen else None,
                         "rank": int(r.rank[s]) if seen else None,
                         "comparisons": float(r.comparisons[s]), "ridge": ridge, "alpha": alpha, "k": k,
                         "seed": seed, "conventions": bookkeeping.conventions_json(
                             {**bt, "humans": "every verdict of every chosen human judge"
                              if j == HUMAN_JUDGE else None, **(said or {})})})
    return rankings, rows


def _kendall(judge, human, alpha: float) -> tuple[float, float, float, int | str]:
    """Kendall tau-b of a judge's Bradley-Terry ranking with the humans', and its interval; undefined
    (NaN, with why in place of the count of undefined resamples) when the judge or the humans left a
    system uncompared: its strength is the ridge prior's, not evidence."""
    blind = [s for s in range(len(judge.comparisons)) if judge.comparisons[s] <= 0 or human.comparisons[s] <= 0]
    if blind:
        return (np.nan, np.nan, np.nan, f"undefined: {len(blind)} of the {len(judge.comparisons)} systems were never "
                                        "compared by the judge or the humans (their strengths are the ridge prior's)")
    return pf.ranking_agreement(judge.strength, human.strength, judge.samples, human.samples, alpha)


def _decide(name: str, results: Sequence, *, k: int, correction: str, alpha: float) -> conclusions.FamilyVerdict:
    """The verdicts of one judge test over every pair of judges (the conclusion layer), with each
    test's exact floor on its data: 2^(1-n) for the sign flips over n items, 2^(1-d) for McNemar
    with d discordant verdicts."""
    raw = np.array([r.pvalue[name] for r in results], dtype=np.float64)
    floors = [conclusions.sign_flip_floor(r.n) if name == "permutation" else conclusions.mcnemar_floor(sum(r.discordant))
              for r in results]
    return conclusions.decide(raw, formula=_FORMULAS[name], k=k if name == "permutation" else None,
                              correction=correction, alpha=alpha, data_floors=floors, min_size=1)


def _test_rows(data: Data, pairs, results, name: str, verdict: conclusions.FamilyVerdict, common: dict, *, k: int,
               alpha: float, seed: int, correction: str, said: dict | None = None) -> list[dict]:
    """The judge_tests rows of one test over every pair of judges."""
    rows = []
    raw = [results[x].pvalue[name] for x in pairs]
    for (a, b), p, q, sig in zip(pairs, raw, verdict.adjusted, verdict.significant):
        r = results[a, b]
        conventions = {"test": _TEST_TEXT[name], "correction": correction,
                       "family": "every pair of the automatic judges, per test",
                       "resolution": verdict.resolution.as_dict(),
                       "delta": "accuracy(judge_a) - accuracy(judge_b) over the common verdicts (item-level mean)",
                       "human": _MAJORITY_TEXT, **(said or {})}
        rows.append({**common, "judge_a": data.judges[a], "judge_b": data.judges[b], "test": name,
                     "n": r.n, "verdicts": r.verdicts, "delta": _none(r.delta),
                     "discordant_a": r.discordant[0], "discordant_b": r.discordant[1],
                     "pvalue": _none(p), "pvalue_corrected": _none(q), "correction": correction,
                     "alpha": alpha, "significant": None if np.isnan(p) else bool(sig),
                     "resolvable": verdict.resolvable, "k": k if name == "permutation" else None,
                     "seed": seed, "conventions": bookkeeping.conventions_json(conventions)})
    return rows


_TEST_TEXT = {
    "permutation": "paired permutation over items: the sign of each item's accuracy difference (mean over the "
                   "orders both judged) flipped with probability 1/2, T = sum, p = (1 + #{|T_b| >= |T|}) / (1 + k)",
    "mcnemar": "exact McNemar on the (item, order) verdicts both judges gave: p = min(1, 2 P[Binom(b + c, 1/2) <= "
               "min(b, c)]); the two orders of an item are counted as two trials",
}


def latest(wh: Store, dataset: str, human: str, subsets: Sequence[str] = ("",)) -> dict[str, pd.DataFrame]:
    """The latest rows of the three tables for ``dataset``, the human judges ``human``
    (comma-joined, as stored) and the ``subsets`` (labels; '' = all items)."""
    views = {t: schema.RESULT_TABLES[t] for t in TABLES}
    order = {"judge_statistics": "subset, judge", "judge_tests": "subset, test, judge_a, judge_b",
             "preference_rankings": "subset, judge = 'human' DESC, judge, rank, system"}
    return {t: wh.sql(f"SELECT * EXCLUDE (result_id) FROM {views[t]} WHERE dataset = ? AND human = ? "
                      f"AND list_contains(?, subset) ORDER BY {order[t]}", [dataset, human, list(subsets)])
            for t in TABLES}


def _latest_of(wh: Store, dataset: str, human: str, judges: Sequence[str], subsets) -> set[int]:
    """The runs that wrote the latest rows of these judges (their statistics, the tests between
    them, their and the humans' rankings) in these subsets: a setting is up to date only when
    they are its own runs, not a later run's with another k, seed, ridge or set of judges."""
    rows = latest(wh, dataset, human, list(subsets))
    judges = set(judges)
    stats, tests, ranks = rows["judge_statistics"], rows["judge_tests"], rows["preference_rankings"]
    return (set(stats.loc[stats["judge"].isin(judges), "run_id"])
            | set(tests.loc[tests["judge_a"].isin(judges) & tests["judge_b"].isin(judges), "run_id"])
            | set(ranks.loc[ranks["judge"].isin(judges | {HUMAN_JUDGE}), "run_id"])) or {-1}


def _subsets(wh: Store, dataset: str, data: Data, where: Sequence, by: str | None) -> dict[str, np.ndarray]:
    """subset label -> the items in it: all items ('') without ``where`` or ``by``; an item is in
    a subset when the cells of both its systems for its input satisfy every condition."""
    if not where and by is None:
        return {"": np.ones(len(data.items), bool)}
    conditions = selection.parse_where(where)
    if by is not None and by in {a for a, _ in conditions}:
        raise WarehouseError(Message(Argument("by", by), " is also a ", Argument("where"),
                                     " attribute: give it in one of them"))
    wanted = [conditions] if by is None else [selection.parse_where([*conditions, (by, v)])
                                              for v in wh.attribute_values(dataset, by)]
    inputs = sorted({i for i, _, _ in data.items})
    col = {name: c for c, name in enumerate(inputs)}
    row = {name: r for r, name in enumerate(data.systems)}
    out = {}
    for cond in wanted:
        mask = wh.attribute_mask(dataset, cond, data.systems, inputs)
        out[selection.subset_label(cond)] = np.array([mask[row[a], col[i]] and mask[row[b], col[i]]
                                                      for i, a, b in data.items], dtype=bool)
    return out


def _clustered(wh: Store, dataset: str, data: Data, attribute: str, subsets: dict) -> tuple[Data, np.ndarray]:
    """``--resample-clusters``: each item's cluster (its input's value of ``attribute``, checked by
    :func:`metaeval.runs.engine.selection.cluster_labels`: every input has one, two or more clusters in each
    subset -- else a one-line refusal), and the data with a fingerprint covering them."""
    inputs = sorted({i for i, _, _ in data.items})
    by_input = dict(zip(inputs, selection.cluster_labels(wh, dataset, attribute, data.systems, inputs)))
    labels = np.array([by_input[i] for i, _, _ in data.items], dtype=object)
    for label, keep in subsets.items():
        if keep.any() and len(set(labels[keep])) < 2:
            raise WarehouseError(Message(Argument("resample_clusters", attribute), f": the items of the subset "
                                         f"{label or 'of every item'!r} are in one cluster; resampling clusters "
                                         "needs two or more"))
    digest = hashlib.sha256(f"{data.fingerprint}\x1eclusters\x1f{attribute}\x1e".encode())
    digest.update("\x1f".join(map(str, labels)).encode())
    return replace(data, fingerprint=digest.hexdigest()), labels


def _none(x) -> float | None:
    return None if x is None or np.isnan(x) else float(x)


def _int(x) -> int | None:
    return None if np.isnan(x) else int(x)
