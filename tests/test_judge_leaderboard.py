"""`metaeval judge-leaderboard` (analyses/judge_leaderboard.py, runs/votes/judge_leaderboard.py): the rank
correlations equal scipy's, separability and agreement count the pairs of a hand-made example,
the Brier scores equal worked examples and brute-force loops, the paired bootstrap equals a loop
over explicit item resamples; the stored rows, reuse and refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from scipy.special import expit

from metaeval.analyses import judge_leaderboard as jl
from metaeval.analyses import leaderboard as lb
from metaeval.errors import WarehouseError
from metaeval.ingest import preferences
from metaeval.runs import Warehouse

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "preferences.csv"


def _votes(rng, strengths, n_items, per_item, noise=0.0):
    """Synthetic votes: items are random pairs; each item gets ``per_item`` votes."""
    S = len(strengths)
    pairs = [tuple(rng.choice(S, 2, replace=False)) for _ in range(n_items)]
    item, a, b, y = [], [], [], []
    for i, (s, t) in enumerate(pairs):
        for _ in range(per_item):
            p = expit(strengths[s] - strengths[t] + noise * rng.normal())
            u = rng.random()
            item.append(i), a.append(s), b.append(t), y.append(1.0 if u < p * 0.9 else 0.5 if u < p * 0.9 + 0.1 else 0.0)
    return pairs, jl.Votes(np.array(item), np.array(a), np.array(b), np.array(y))


def _case(seed=1, S=5, n_items=120):
    rng = np.random.default_rng(seed)
    strengths = np.linspace(1, -1, S)
    pairs, human = _votes(rng, strengths, n_items, 3)
    judge = jl.Votes(*(np.array(x) for x in zip(*[(i, s, t, 1.0 if rng.random() < expit(1.5 * (strengths[s] - strengths[t]))
                                                   else 0.0) for i, (s, t) in enumerate(pairs) for _ in range(2)])))
    return human, judge, S, n_items


def test_rank_correlations_equal_scipy():
    human, judge, S, n = _case()
    r = jl.evaluate(human, judge, S, n, k=50, seed=3)
    assert r.value["kendall"] == pytest.approx(scipy.stats.kendalltau(r.rating_judge, r.rating_human)[0], abs=1e-12)
    assert r.value["spearman"] == pytest.approx(scipy.stats.spearmanr(r.rating_judge, r.rating_human)[0], abs=1e-12)
    # the points are the leaderboard's maximum-likelihood ratings of each side's counted votes
    c = lb.count(human.a, human.b, human.y, S)
    assert np.allclose(r.rating_human, lb.elo(lb.fit(c)), atol=1e-9)


def test_paired_bootstrap_equals_a_loop_over_explicit_item_resamples():
    human, judge, S, n = _case(seed=2, S=4, n_items=60)
    k, seed, alpha = 40, 7, 0.1
    r = jl.evaluate(human, judge, S, n, k=k, seed=seed, alpha=alpha)
    idx = np.random.default_rng(np.random.SeedSequence(seed)).integers(0, n, size=(k, n))
    taus, rhos, briers, vote_briers, ratings_j, ratings_h = [], [], [], [], [], []
    for draw in idx:
        fits = []
        for v in (human, judge):
            take = np.concatenate([np.flatnonzero(v.item == i) for i in draw])
            fits.append((lb.fit(lb.count(v.a[take], v.b[take], v.y[take], S)), take))
        (th, take_h), (tj, _) = fits
        if not (np.isfinite(th).all() and np.isfinite(tj).all()):
            continue
        rh, rj = lb.elo(th), lb.elo(tj)
        ratings_h.append(rh), ratings_j.append(rj)
        taus.append(scipy.stats.kendalltau(rj, rh)[0]), rhos.append(scipy.stats.spearmanr(rj, rh)[0])
        i, j = np.triu_indices(S, 1)
        known = rh[i] != rh[j]
        briers.append(np.mean((expit(tj[i] - tj[j]) - (rh[i] > rh[j]))[known] ** 2))
        p = expit(tj[human.a[take_h]] - tj[human.b[take_h]])
        vote_briers.append(np.mean((p - human.y[take_h]) ** 2))
    assert r.n_valid == len(taus)
    q = [100 * alpha / 2, 100 * (1 - alpha / 2)]
    for name, values in (("kendall", taus), ("spearman", rhos), ("brier", briers), ("brier_votes", vote_briers)):
        assert (r.lower[name], r.upper[name]) == pytest.approx(tuple(np.percentile(values, q)), abs=1e-7), name
    lo, hi = np.percentile(np.array(ratings_j), q, axis=0)
    assert np.allclose(r.interval_judge[0], lo, atol=1e-6) and np.allclose(r.interval_judge[1], hi, atol=1e-6)


def test_separability_and_agreement_count_the_pairs_of_a_hand_made_example():
    # four systems; judge intervals: A [10, 20], B [15, 25], C [30, 40], D [0, 5]
    judge = (np.array([10., 15., 30., 0.]), np.array([20., 25., 40., 5.]))
    # pairs AB AC AD BC BD CD: the judge separates AC (-1), AD (+1), BC (-1), BD (+1), CD (+1); AB overlaps
    assert list(jl.separated(*judge)) == [0, -1, 1, -1, 1, 1]
    assert jl.separability(*judge) == pytest.approx(5 / 6)
    # humans: A [50, 60], B [0, 10], C [20, 30], D [25, 35]: AB +1, AC +1, AD +1, BC -1, BD -1, CD overlap
    human = (np.array([50., 0., 20., 25.]), np.array([60., 10., 30., 35.]))
    assert list(jl.separated(*human)) == [1, 1, 1, -1, -1, 0]
    # products: AB 0, AC -1, AD +1, BC +1, BD -1, CD 0 -> (1 + 1 - 1 - 1) / 6 = 0; both separate 4, 2 alike;
    # over the 5 pairs the humans separate: 0 / 5
    assert jl.agreement(judge, human) == (pytest.approx(0.0), pytest.approx(0.5), pytest.approx(0.0), 4)
    # the humans now order C above D (CD +1): products ..., CD +1 -> 1/6 overall, 3/5 alike, 1/6 over humans' 6
    human2 = (np.array([50., 0., 30., 20.]), np.array([60., 10., 35., 25.]))
    assert list(jl.separated(*human2)) == [1, 1, 1, -1, -1, 1]
    assert jl.agreement(judge, human2) == (pytest.approx(1 / 6), pytest.approx(3 / 5), pytest.approx(1 / 6), 5)
    # touching intervals overlap; a NaN bound separates no pair, and the share over pairs with an
    # undefined interval is itself undefined (it was 0: a number from no data)
    assert list(jl.separated(np.array([0., 1.]), np.array([1., 2.]))) == [0]
    assert list(jl.separated(np.array([np.nan, 1.]), np.array([np.nan, 2.]))) == [0]
    assert np.isnan(jl.separability(np.array([np.nan, 1.]), np.array([np.nan, 2.])))
    none = (np.array([0., 0.]), np.array([1., 1.]))
    assert jl.agreement(none, none)[1] != jl.agreement(none, none)[1]          # nothing separated by both: NaN


def test_brier_scores_on_worked_examples():
    # two systems: the judge's strengths differ by ln 3, so P(0 beats 1) = 3/4; the humans rate 1 above 0
    theta = np.array([np.log(3), 0.0])
    assert jl.pair_brier(theta, np.array([0.0, 1.0])) == pytest.approx(0.75 ** 2)
    assert jl.pair_brier(theta, np.array([1.0, 0.0])) == pytest.approx(0.25 ** 2)
    assert np.isnan(jl.pair_brier(theta, np.array([1.0, 1.0])))               # the humans tie every pair
    # three systems, P = expit(differences); the humans' order 2 > 0 > 1, pair (0, 1) o=1, (0, 2) o=0, (1, 2) o=0
    t = np.array([0.0, -1.0, 1.0])
    expected = ((expit(1) - 1) ** 2 + expit(-1) ** 2 + expit(-2) ** 2) / 3
    assert jl.pair_brier(t, np.array([1.0, 0.0, 2.0])) == pytest.approx(expected)
    # per vote: a win, a tie and a loss of system 0 against 1
    c = lb.count([0, 0, 1], [1, 1, 0], [1.0, 0.5, 1.0], 2)
    p = 0.75
    assert jl.vote_brier(theta, c) == pytest.approx(((p - 1) ** 2 + (p - 0.5) ** 2 + p ** 2) / 3)


def test_rows_are_stored_reused_and_refused(db):
    with Warehouse(db) as wh:
        preferences.ingest(wh, "judges-demo", EXAMPLE)
        rows = wh.judge_leaderboard("judges-demo", k=50)
        again = wh.judge_leaderboard("judges-demo", judges=("judge-ties",), k=50)
        runs = wh.sql("SELECT count(*) AS n FROM analysis_runs WHERE command = 'judge-leaderboard'")["n"][0]
        assert runs == 1 and set(rows["judge"]) == {"judge-consistent", "judge-position", "judge-ties"}
        assert again.drop(columns="result_id").iloc[0].equals(
            rows[rows["judge"] == "judge-ties"].drop(columns="result_id").iloc[0].rename(0))
        with pytest.raises(WarehouseError, match="judges=.*nope"):
            wh.judge_leaderboard("judges-demo", judges=("nope",), k=50)
        with pytest.raises(WarehouseError):
            wh.judge_leaderboard("judges-demo", k=10)
    row = rows[rows["judge"] == "judge-consistent"].iloc[0]
    assert row["pairs"] == 10 and row["items"] == 180 and row["votes_human"] == 540
    assert -1 <= row["agreement"] <= row["separability"] <= 1 and row["brier_lower"] <= row["brier"] <= row["brier_upper"]


def test_undefined_intervals_and_ratings_give_nan_not_zero():
    """No valid bootstrap round (NaN bounds) separates nothing known: separability and agreement
    are undefined, not 0; an undefined human rating leaves the Brier score undefined, not a number."""
    nan3 = np.full(3, np.nan)
    assert np.isnan(jl.separability(nan3, nan3))
    assert all(np.isnan(x) for x in jl.agreement((nan3, nan3), (np.array([0., 1., 2.]), np.array([.5, 1.5, 2.5])))[:3])
    assert np.isnan(jl.pair_brier(np.array([0.0, 1.0]), np.array([np.nan, np.nan])))
    assert np.isnan(jl.pair_brier(np.array([np.nan, 1.0]), np.array([0.0, 1.0])))
    # defined inputs as before: two separated pairs of three, the Brier of one known pair
    assert jl.separability(np.array([0., 2., 4.]), np.array([1., 3., 5.])) == 1.0
    assert jl.pair_brier(np.array([0.0, 1.0]), np.array([0.0, 1.0])) == pytest.approx(expit(-1.0) ** 2)
