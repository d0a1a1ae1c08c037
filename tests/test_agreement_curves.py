"""Disagreement over sampled pairs, F/N and F'/N in many bins, and the Uniform(0, 1) baseline
(Bhandari et al. 2020, appendices A and B): against loops written from the paper's definitions,
their properties, and the `agreement --bins` rows."""

from __future__ import annotations

import csv
import itertools

import numpy as np
import pytest

from metaeval import Store
from metaeval.analyses import agreement, agreement_curves as ac
from tests.conftest import run_cli


def _stack(seed=0, K=3, N=7, M=5):
    rng = np.random.default_rng(seed)
    base = rng.random((N, M))
    S = np.stack([base + rng.normal(scale=0.3, size=(N, M)) for _ in range(K)])
    S[1, 2, 3] = np.nan
    S[0, 4] = np.round(S[0, 4], 1)       # some ties
    return S


@pytest.mark.parametrize("n_bins", [1, 3, 15])
def test_uniform_bins_partition_and_cumulative_bins_nest(n_bins):
    v = np.concatenate([np.linspace(0, 1, 301), [np.nan]])
    uni, cum = ac.bins_of(v, n_bins, "uniform"), ac.bins_of(v, n_bins, "cumulative")
    assert (uni.sum(axis=0)[:-1] == 1).all() and not uni[:, -1].any()     # each value in one bin; NaN in none
    assert cum[0, :-1].all() and (cum[:-1] >= cum[1:]).all()             # bin 0 is all; each bin inside the one before
    for k in range(n_bins):                                               # cumulative k = the uniform bins k..n-1
        np.testing.assert_array_equal(cum[k], uni[k:].any(axis=0))
    assert uni[-1, 300] and cum[-1, 300]                                  # v = 1 is in the last bin


def test_bins_validate():
    with pytest.raises(ValueError, match="protocol"):
        ac.bins_of([0.5], 3, "thirds")
    with pytest.raises(ValueError, match="n_bins"):
        ac.bins_of([0.5], 0, "uniform")


def test_fn_ratios_equal_the_papers_set_definitions():
    """Eqs. 1-2: F/N = |{x: all m, m(x) > m(s)}| / |{x: some m, m(x) > m(s)}| over the input's
    complete summaries, F'/N the same with <; undefined when nobody is better (worse)."""
    S = _stack(1)
    complete = ~np.isnan(S).any(axis=0)
    a, b = np.where(complete, S[0], np.nan), np.where(complete, S[2], np.nan)
    f_n, fp_n = ac.fn_ratios(a, b)
    N, M = a.shape
    for j in range(M):
        for s in range(N):
            if not complete[s, j]:
                assert np.isnan(f_n[s, j]) and np.isnan(fp_n[s, j])
                continue
            others = [x for x in range(N) if complete[x, j]]
            for got, op in ((f_n[s, j], np.greater), (fp_n[s, j], np.less)):
                F = sum(1 for x in others if op(a[x, j], a[s, j]) and op(b[x, j], b[s, j]))
                n = sum(1 for x in others if op(a[x, j], a[s, j]) or op(b[x, j], b[s, j]))
                assert (np.isnan(got) if n == 0 else got == pytest.approx(F / n))


def test_fn_of_one_metric_with_itself_is_one():
    a = _stack(2)[0]
    f_n, fp_n = ac.fn_ratios(a, a)
    assert np.nanmin(f_n) == np.nanmax(f_n) == 1 and np.nanmin(fp_n) == 1


def test_sampled_disagreement_estimates_the_share_of_all_discordant_pairs():
    """One bin holds every pair: with many sampled pairs the share is the exact share of discordant
    pairs of distinct complete summaries (within 4 standard errors)."""
    S = _stack(3, N=9, M=6)
    keep = ~np.isnan(S[0]) & ~np.isnan(S[1])
    x, y = S[0][keep], S[1][keep]
    exact = np.mean([np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) < 0
                     for i, j in itertools.combinations(range(x.size), 2)])
    c = ac.sampled_disagreement(S[0], S[1], 40_000, 1, "uniform", seed=5)
    assert c.count[0] == 40_000
    assert abs(c.value[0] - exact) < 4 * np.sqrt(exact * (1 - exact) / 40_000)
    again = ac.sampled_disagreement(S[0], S[1], 40_000, 1, "uniform", seed=5)
    assert again.value[0] == c.value[0]                                   # seeded


def test_sampled_disagreement_bins_by_metric_a_and_counts_add_up():
    S = _stack(4, N=9, M=6)
    uni = ac.sampled_disagreement(S[0], S[1], 5000, 15, "uniform", seed=1)
    cum = ac.sampled_disagreement(S[0], S[1], 5000, 15, "cumulative", seed=1)
    assert uni.count.sum() == 5000 and cum.count[0] == 5000                # uniform bins partition the pairs
    np.testing.assert_array_equal(cum.count, np.cumsum(uni.count[::-1])[::-1])
    assert ((uni.value >= 0) & (uni.value <= 1) | np.isnan(uni.value)).all()


def test_random_baseline_is_uniform_where_complete_and_disagrees_half_the_time():
    S = _stack(5, N=30, M=30)
    R = ac.random_stack(S, seed=7)
    complete = ~np.isnan(S).any(axis=0)
    assert (np.isnan(R) == ~complete[None]).all() and np.nanmin(R) >= 0 and np.nanmax(R) < 1
    np.testing.assert_array_equal(R, ac.random_stack(S, seed=7))
    c = ac.sampled_disagreement(R[0], R[1], 20_000, 1, "uniform", seed=2)
    assert abs(c.value[0] - 0.5) < 4 * np.sqrt(0.25 / 20_000)             # independent scores: 1/2
    # the paper's point (appendix B): F/N falls and F'/N rises with the score even for random scores
    f, fp = ac.pair_curves(R, 0, 1, 5, "uniform", 1000, 0)[2:]
    assert f.value[0] > f.value[-1] and fp.value[0] < fp.value[-1]


def test_fn_curves_bin_by_consensus_positions():
    S = _stack(6)
    curves = ac.pair_curves(S, 0, 2, 4, "uniform", 1000, 0)
    complete = ~np.isnan(S).any(axis=0)
    P = agreement.range_positions(agreement.consensus_scores(S, "input"))
    f_n, _ = ac.fn_ratios(np.where(complete, S[0], np.nan), np.where(complete, S[2], np.nan))
    member = ac.bins_of(P, 4, "uniform")
    for k in range(4):
        vals = f_n[member[k] & ~np.isnan(f_n)]
        assert curves[2].statistic == "f_over_n" and curves[2].count[k] == vals.size
        assert (np.isnan(curves[2].value[k]) if vals.size == 0 else curves[2].value[k] == pytest.approx(vals.mean()))


def test_agreement_bins_rows_equal_the_pure_functions_and_are_reused(tmp_path):
    S = _stack(7, K=3, N=6, M=4)
    names = ["m-a", "m-b", "m-c"]
    path = tmp_path / "scores.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "input", *names])
        for i, j in itertools.product(range(6), range(4)):
            w.writerow([f"s{i}", f"d{j}", *("" if np.isnan(S[k, i, j]) else repr(float(S[k, i, j])) for k in range(3))])
    db = tmp_path / "w.duckdb"
    run_cli(db, "ingest", "table", path, "--dataset", "d")
    args = ["agreement", "--dataset", "d", "--bins", "4", "--pairs", "500", "--baseline", "random", "--seed", "3"]
    out = run_cli(db, *args).output
    assert "cumulative bins, Uniform(0, 1) random scores" in out and "uniform bins, the metrics' scores" in out
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_agreement_curves")
        runs = wh.sql("SELECT count(*) AS n FROM analysis_runs WHERE command = 'agreement-curves'")["n"][0]
    # 2 baselines x 2 protocols x 4 bins x (6 ordered pairs of disagreement + 3 pairs x (tau + 2 ratios))
    assert len(rows) == 2 * 2 * 4 * (6 + 9)
    for r in rows[(rows.baseline == "none") & (rows.protocol == "uniform")].itertuples():
        ka, kb = names.index(r.metric_a), names.index(r.metric_b)
        curve = {c.statistic: c for c in ac.pair_curves(S, ka, kb, 4, "uniform", 500, 3)}[r.statistic]
        assert r.count == curve.count[r.bin]
        assert (r.value is None or np.isnan(r.value)) if curve.count[r.bin] == 0 else r.value == curve.value[r.bin]
    run_cli(db, *args)
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs WHERE command = 'agreement-curves'")["n"][0] == runs


@pytest.mark.parametrize("protocol, bins", [("uniform", ("L", "M", "T")), ("cumulative", ("L+M+T", "M+T", "T"))])
def test_tau_in_three_bins_is_the_papers_thirds(protocol, bins):
    """Section 4.1's table in 3 bins: the same taus as the thirds of score_range_agreement, so the
    random baseline of the thirds is `--bins 3 --baseline random`."""
    S = _stack(8, N=9, M=6)
    for stack in (S, ac.random_stack(S, 4)):
        P = agreement.range_positions(agreement.consensus_scores(stack, "input"))
        complete = ~np.isnan(stack).any(axis=0)
        a, b = np.where(complete, stack[0], np.nan), np.where(complete, stack[1], np.nan)
        curve = ac.pair_curves(stack, 0, 1, 3, protocol, 100, 0)[0]
        assert curve.statistic == "tau"
        for k, name in enumerate(bins):
            r = agreement.bin_agreement(a, b, P, name)
            assert curve.count[k] == r.n_tau
            assert (np.isnan(r.tau) and np.isnan(curve.value[k])) or curve.value[k] == pytest.approx(r.tau, abs=1e-12)
