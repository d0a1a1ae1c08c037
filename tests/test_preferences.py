"""analyses/preferences.py against brute-force counts, scikit-learn, scipy and choix."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from metaeval.analyses import preferences as pf

A, B, T, M = pf.A, pf.B, pf.TIE, pf.MISSING


def _random(seed, n=40, missing=True):
    rng = np.random.default_rng(seed)
    V = rng.integers(M if missing else 0, 3, size=(n, 2))
    h = rng.integers(M, 3, size=n)
    return V, h


def _brute(V, h):
    """Every statistic by loops over items, as a judge benchmark counts them."""
    ab = [(v[0] == y) for v, y in zip(V, h) if y >= 0 and v[0] >= 0]
    ba = [(v[1] == y) for v, y in zip(V, h) if y >= 0 and v[1] >= 0]
    both = [(v, y) for v, y in zip(V, h) if y >= 0 and v[0] >= 0 and v[1] >= 0]
    verdicts = [(v[o], o, y) for v, y in zip(V, h) if y >= 0 for o in (0, 1) if v[o] >= 0]
    non_tie = [(x, o) for x, o, _ in verdicts if x != T]
    mean = lambda xs: sum(xs) / len(xs) if xs else float("nan")  # noqa: E731
    acc_ab, acc_ba = mean(ab), mean(ba)
    accuracy = np.nanmean([acc_ab, acc_ba]) if ab or ba else float("nan")
    return {
        "accuracy_ab": acc_ab, "accuracy_ba": acc_ba, "accuracy": accuracy,
        "both_correct": mean([v[0] == y and v[1] == y for v, y in both]),
        "position_consistency": mean([v[0] == v[1] for v, _ in both]),
        "first_position_rate": mean([(x == A and o == 0) or (x == B and o == 1) for x, o in non_tie]),
        "tie_rate": mean([x == T for x, _, _ in verdicts]),
    }, len({i for i, (v, y) in enumerate(zip(V, h)) if y >= 0 and (v >= 0).any()}), verdicts


@pytest.mark.parametrize("seed", range(6))
def test_statistics_equal_brute_force_counts_and_sklearn_kappa(seed):
    from sklearn.metrics import cohen_kappa_score

    V, h = _random(seed)
    r = pf.judge_statistics(V, h, k=50, seed=seed)
    expected, n, verdicts = _brute(V, h)
    assert r.n == n
    for name, value in expected.items():
        np.testing.assert_allclose(r.value[name], value, err_msg=name)
    x = [v for v, _, _ in verdicts]
    y = [l for _, _, l in verdicts]
    np.testing.assert_allclose(r.value["kappa"], cohen_kappa_score(x, y, labels=[0, 1, 2]))
    np.testing.assert_allclose(pf.cohen_kappa(x, y), cohen_kappa_score(x, y, labels=[0, 1, 2]))


def test_bootstrap_interval_is_the_percentile_of_items_resampled_by_hand():
    V, h = _random(7, n=25)
    k, alpha = 60, 0.1
    r = pf.judge_statistics(V, h, k=k, alpha=alpha, seed=3)
    idx = np.random.default_rng(np.random.SeedSequence(3)).integers(0, 25, size=(k, 25))
    samples = {name: [] for name in pf.STATISTICS}
    for row in idx:
        values, _, verdicts = _brute(V[row], h[row])
        from sklearn.metrics import cohen_kappa_score
        values["kappa"] = cohen_kappa_score([v for v, _, _ in verdicts], [l for _, _, l in verdicts], labels=[0, 1, 2])
        for name in pf.STATISTICS:
            samples[name].append(values[name])
    for name in pf.STATISTICS:
        s = np.asarray(samples[name], float)
        s = s[~np.isnan(s)]
        lo, hi = np.quantile(s, [alpha / 2, 1 - alpha / 2])
        np.testing.assert_allclose([r.lower[name], r.upper[name]], [lo, hi], err_msg=name)
        assert r.undefined_resamples[name] == k - len(s)


def test_human_majority_leaves_tied_majorities_out_and_counts_them():
    H = np.array([[[A, A], [A, B], [T, M], [M, M]],
                  [[A, M], [B, M], [T, B], [M, M]],
                  [[B, M], [M, M], [B, B], [M, M]]])
    m = pf.human_majority(H)
    # votes: item 0 a=3 b=1 -> a; item 1 a=1 b=2 -> b; item 2 b=3 tie=2 -> b; item 3 nobody -> none
    assert m.votes.tolist() == [[3, 1, 0], [1, 2, 0], [0, 3, 2], [0, 0, 0]]
    assert m.label.tolist() == [A, B, B, M]
    assert m.tied.tolist() == [False] * 4
    tied = pf.human_majority(np.array([[[A, B]], [[T, M]]]))
    assert tied.tied.tolist() == [True] and tied.label.tolist() == [M]


def test_one_class_and_all_tie_cases_are_nan_never_a_number():
    n = 10
    all_a = np.full(n, A)
    # judge and human both only say a: kappa undefined (p_e = 1); sklearn agrees (NaN)
    r = pf.judge_statistics(np.full((n, 2), A), all_a, k=20)
    assert np.isnan(r.value["kappa"]) and np.isnan(r.lower["kappa"])
    assert r.value["accuracy"] == 1.0
    # a judge that only ties: no non-tie verdict, so no position rate
    r = pf.judge_statistics(np.full((n, 2), T), all_a, k=20)
    assert np.isnan(r.value["first_position_rate"]) and r.value["tie_rate"] == 1.0
    # only one order judged: no consistency, accuracy is the one order's
    V = np.column_stack([np.full(n, A), np.full(n, M)])
    r = pf.judge_statistics(V, np.r_[all_a[:5], np.full(5, B)], k=20)
    assert np.isnan(r.value["position_consistency"]) and np.isnan(r.value["both_correct"])
    assert r.value["accuracy"] == r.value["accuracy_ab"] == 0.5 and np.isnan(r.value["accuracy_ba"])
    # no human label at all: everything undefined, n = 0
    r = pf.judge_statistics(np.full((n, 2), A), np.full(n, M), k=20)
    assert r.n == 0 and all(np.isnan(v) for v in r.value.values())
    assert np.isnan(pf.cohen_kappa([], []))


def test_mcnemar_equals_scipy_binomtest():
    for b, c in [(0, 0), (3, 0), (5, 9), (12, 4), (20, 21)]:
        expected = 1.0 if b + c == 0 else stats.binomtest(b, b + c, 0.5).pvalue
        np.testing.assert_allclose(pf.mcnemar_exact(b, c), min(1.0, expected))


def test_pair_test_counts_and_permutation_against_exact_enumeration():
    rng = np.random.default_rng(11)
    n = 10
    h = rng.integers(0, 3, size=n)
    V1 = np.where(rng.random((n, 2)) < 0.8, h[:, None], (h[:, None] + 1) % 3)
    V2 = np.where(rng.random((n, 2)) < 0.4, h[:, None], (h[:, None] + 2) % 3)
    V2[0, 1] = M
    t = pf.judge_pair_test(V1, V2, h, k=20000, seed=5)
    c1, c2 = V1 == h[:, None], V2 == h[:, None]
    common = V2 >= 0
    b = int((c1 & ~c2 & common).sum())
    c = int((~c1 & c2 & common).sum())
    assert t.discordant == (b, c) and t.verdicts == int(common.sum()) and t.n == n
    d = np.array([(c1[i] & common[i]).sum() - (c2[i] & common[i]).sum() for i in range(n)]) / common.sum(axis=1)
    np.testing.assert_allclose(t.delta, d.mean())
    observed = abs(d.sum())
    exact = np.mean([abs((np.array(s) * d).sum()) >= observed - 1e-12
                     for s in itertools.product((-1, 1), repeat=n)])
    assert abs(t.pvalue["permutation"] - exact) < 0.01
    np.testing.assert_allclose(t.pvalue["mcnemar"], pf.mcnemar_exact(b, c))
    none = pf.judge_pair_test(V1, V2, np.full(n, M))
    assert none.n == 0 and np.isnan(none.delta) and np.isnan(none.pvalue["permutation"])


def test_bradley_terry_equals_choix_and_scipy():
    import choix
    from scipy.optimize import minimize

    rng = np.random.default_rng(2)
    S, n = 4, 60
    sa = rng.integers(0, S, n)
    sb = (sa + rng.integers(1, S, n)) % S
    V = rng.choice([A, B, T], size=(n, 2), p=[0.5, 0.3, 0.2])
    C = pf.win_matrices(sa, sb, V, S).sum(axis=0)
    ridge = 0.05
    theta = pf.bradley_terry(C, ridge)
    # choix: every comparison entered twice (a tie once each way), penalty alpha * ||theta||^2
    data = []
    for s, t, v in zip(np.r_[sa, sa], np.r_[sb, sb], V.T.ravel()):
        data += [(s, t)] * 2 if v == A else [(t, s)] * 2 if v == B else [(s, t), (t, s)]
    ref = choix.opt_pairwise(S, data, alpha=ridge, tol=1e-12)
    np.testing.assert_allclose(theta, ref - ref.mean(), atol=1e-6)

    def nll(t):
        d = t[:, None] - t[None, :]
        return (C * np.logaddexp(0, -d)).sum() + ridge / 2 * (t ** 2).sum()

    np.testing.assert_allclose(theta, minimize(nll, np.zeros(S), method="BFGS", options={"gtol": 1e-10}).x, atol=1e-5)
    assert abs(theta.sum()) < 1e-9
    # a batch gives each matrix's own fit; a system that wins everything stays finite
    sweep = np.zeros((S, S))
    sweep[0, 1:] = 5
    both = pf.bradley_terry(np.stack([C, sweep]), ridge)
    np.testing.assert_allclose(both[0], theta, atol=1e-9)
    assert np.isfinite(both[1]).all() and both[1].argmax() == 0
    with pytest.raises(ValueError, match="ridge"):
        pf.bradley_terry(C, 0)


def test_kendall_tau_b_equals_scipy_and_nan_when_constant():
    rng = np.random.default_rng(4)
    for _ in range(10):
        x, z = rng.integers(0, 4, 6).astype(float), rng.integers(0, 4, 6).astype(float)
        expected = stats.kendalltau(x, z).statistic
        np.testing.assert_allclose(pf.kendall_tau_b(x, z), expected, equal_nan=True)
    assert np.isnan(pf.kendall_tau_b([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]))


def test_ranking_recovers_a_known_order_and_intervals_contain_it():
    rng = np.random.default_rng(9)
    S, n = 4, 400
    true = np.array([1.0, 0.3, -0.3, -1.0])
    sa = rng.integers(0, S, n)
    sb = (sa + rng.integers(1, S, n)) % S
    p = 1 / (1 + np.exp(-(true[sa] - true[sb])))
    V = np.column_stack([np.where(rng.random(n) < p, A, B), np.full(n, M)])
    C = pf.win_matrices(sa, sb, V, S)
    W = pf.bootstrap_weights(n, 200, 0)
    r = pf.preference_ranking(C, W)
    assert r.rank.tolist() == [1, 2, 3, 4]
    assert ((r.lower <= r.strength) & (r.strength <= r.upper)).all()
    np.testing.assert_allclose(r.samples[0], pf.bradley_terry(np.einsum("i,ist->st", W[0], C)))
    tau, lo, hi, _ = pf.ranking_agreement(r.strength, true, r.samples, np.tile(true, (200, 1)))
    assert tau == 1.0 and lo <= tau <= hi
