"""Inter-metric agreement by score range and input properties: pure functions (no database)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
import scipy.stats

from metaeval.analyses import agreement as ag


# --- brute-force references -------------------------------------------------------------------
def _brute_positions(stack):
    """Per input: complete summaries, min-max per metric, mean, position in the range (loops)."""
    K, N, M = stack.shape
    P = np.full((N, M), np.nan)
    for j in range(M):
        rows = [i for i in range(N) if not np.isnan(stack[:, i, j]).any()]
        if not rows:
            continue
        c = np.zeros(len(rows))
        for k in range(K):
            v = stack[k, rows, j]
            c += (v - v.min()) / (v.max() - v.min()) if v.max() > v.min() else 0.0
        c /= K
        if c.max() > c.min():
            P[rows, j] = (c - c.min()) / (c.max() - c.min())
    return P


def _brute_bin(p, bin):
    return {"L": p < 1 / 3, "M": 1 / 3 <= p < 2 / 3, "T": p >= 2 / 3, "M+T": p >= 1 / 3, "L+M+T": True}[bin]


def _brute_agreement(a, b, P, bin, alpha, significant_only):
    taus, undefined, significant = [], 0, 0
    pairs = discordant = 0
    for j in range(a.shape[1]):
        rows = [i for i in range(a.shape[0]) if not np.isnan(P[i, j]) and _brute_bin(P[i, j], bin)]
        x, z = a[rows, j], b[rows, j]
        if len(rows) < 2 or np.ptp(x) == 0 or np.ptp(z) == 0:
            undefined += 1
        else:
            r = scipy.stats.kendalltau(x, z)
            significant += r.pvalue <= alpha
            if r.pvalue <= alpha or not significant_only:
                taus.append(r.statistic)
        complete = [i for i in range(a.shape[0]) if not np.isnan(P[i, j])]
        for i, k in combinations(complete, 2):
            if _brute_bin((P[i, j] + P[k, j]) / 2, bin):
                pairs += 1
                discordant += np.sign(a[i, j] - a[k, j]) * np.sign(b[i, j] - b[k, j]) < 0
    return (np.mean(taus) if taus else np.nan), len(taus), undefined, significant, pairs, discordant


@pytest.fixture
def messy():
    """Three metrics on 14 systems x 9 inputs: ties, missing cells, a constant input."""
    rng = np.random.default_rng(3)
    q = rng.random((14, 9))
    stack = np.stack([q + 0.3 * rng.random((14, 9)), np.round(q * 5 + rng.random((14, 9)), 0),
                      q + rng.random((14, 9))])
    stack[0, 2, 1] = stack[1, 5, 3] = stack[2, 7, 3] = np.nan
    stack[:, :, 6] = 1.0                      # every metric constant on input 6: no range
    return stack


# --- Kendall tau and p-value ------------------------------------------------------------------
@pytest.mark.parametrize("n, ties", [(2, False), (3, False), (9, False), (24, True), (40, False), (40, True)])
def test_kendall_per_input_equals_scipy(n, ties):
    rng = np.random.default_rng(n)
    X = rng.random((n, 30))
    Z = X + rng.random((n, 30)) * rng.random(30) * 3
    if ties:
        X, Z = np.round(X * 4), np.round(Z * 3)
    X[0, 0] = np.nan
    mask = rng.random((n, 30)) < 0.8
    k = ag.kendall_per_input(X, Z, mask)
    for j in range(30):
        keep = mask[:, j] & ~np.isnan(X[:, j])
        assert k.n[j] == keep.sum()
        if keep.sum() < 2 or np.ptp(X[keep, j]) == 0 or np.ptp(Z[keep, j]) == 0:
            assert np.isnan(k.tau[j]) and np.isnan(k.pvalue[j])
            continue
        r = scipy.stats.kendalltau(X[keep, j], Z[keep, j])
        assert k.tau[j] == pytest.approx(r.statistic, abs=1e-12)
        assert k.pvalue[j] == pytest.approx(r.pvalue, rel=1e-9, abs=1e-15)


# --- consensus and bins ------------------------------------------------------------------------
def test_positions_equal_brute_force(messy):
    expected = _brute_positions(messy)
    got = ag.range_positions(ag.consensus_scores(messy))
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert np.isnan(got[:, 6]).all()                       # zero range: no bins
    assert np.isnan(got[2, 1]) and np.isnan(got[5, 3])     # incomplete summaries left out


def test_bins_partition_the_summaries():
    p = np.array([0.0, 0.2, 1 / 3, 0.5, 2 / 3, 0.9, 1.0, np.nan])
    L, M, T = (ag.in_bin(p, b) for b in ag.NON_CUMULATIVE)
    assert (L.astype(int) + M + T == ~np.isnan(p)).all()
    assert (ag.in_bin(p, "M+T") == (M | T)).all() and (ag.in_bin(p, "L+M+T") == (L | M | T)).all()
    assert list(p[M]) == [1 / 3, 0.5]


def test_dataset_normalisation_uses_every_input():
    stack = np.array([[[0.0, 2.0], [1.0, 4.0]]])          # one metric, 2 systems x 2 inputs
    np.testing.assert_allclose(ag.normalise(stack, "dataset")[0], [[0, 0.5], [0.25, 1]])
    np.testing.assert_allclose(ag.normalise(stack, "input")[0], [[0, 0], [1, 1]])


# --- agreement by bin ----------------------------------------------------------------------------
@pytest.mark.parametrize("significant_only", [False, True])
def test_score_range_agreement_equals_brute_force(messy, significant_only):
    names = ["a", "b", "c"]
    rows = ag.score_range_agreement(dict(zip(names, messy)), alpha=0.1, significant_only=significant_only)
    assert len(rows) == 3 * len(ag.BINS)
    P = _brute_positions(messy)
    for r in rows.itertuples():
        i, j = names.index(r.metric_a), names.index(r.metric_b)
        tau, n_tau, undefined, significant, pairs, discordant = _brute_agreement(
            messy[i], messy[j], P, r.bin, 0.1, significant_only)
        assert (r.n_tau, r.n_undefined, r.n_significant, r.pairs, r.discordant) == \
            (n_tau, undefined, significant, pairs, discordant), r
        assert r.tau == pytest.approx(tau, abs=1e-12, nan_ok=True)
        assert r.n_tau + r.n_undefined + r.n_nonsignificant == messy.shape[2]
        assert r.disagreement == pytest.approx(discordant / pairs)


def test_agree_at_the_top_independent_at_the_bottom():
    """a = b = quality q on the better half of the summaries, b independent of a below it, and
    the range positions given by q: tau is exactly 1 in T, about 0 in L."""
    rng = np.random.default_rng(0)
    q = rng.random((60, 80))
    b = np.where(q >= 0.5, q, 0.5 * rng.random(q.shape))
    positions = ag.range_positions(q)
    rows = {bin: ag.bin_agreement(q, b, positions, bin) for bin in ag.BINS}
    assert rows["T"].tau == 1.0 and rows["T"].disagreement == 0.0
    assert abs(rows["L"].tau) < 0.03
    # pairs are binned by their mean position: L holds a few pairs reaching into the agreeing half
    assert 0.4 < rows["L"].disagreement < 0.5 and rows["M"].disagreement < rows["L"].disagreement
    assert rows["L+M+T"].tau > rows["M"].tau > rows["L"].tau
    assert all(r.random_disagreement == 0.5 for r in rows.values())   # no ties: exactly 1/2
    assert all(r.n_tau == 80 for r in rows.values())


def test_bins_on_the_consensus_select_against_agreement():
    """A property of the paper's design: bins are defined on the mean of the metrics compared,
    so within a narrow bin two independent metrics are negatively associated (a high a must
    be offset by a low b to stay in the bin; Berkson's paradox). With only a and b in the
    consensus, independent scores give tau < 0 in every non-cumulative bin."""
    rng = np.random.default_rng(0)
    rows = ag.score_range_agreement({"a": rng.random((60, 80)), "b": rng.random((60, 80))}).set_index("bin")
    assert (rows.loc[list(ag.NON_CUMULATIVE), "tau"] < -0.1).all()
    assert abs(rows.loc["L+M+T", "tau"]) < 0.02


def test_random_baseline_equals_permutation_simulation():
    """The analytic baseline is the mean disagreement when each metric's scores are shuffled
    among each input's summaries (bins of the pairs held fixed)."""
    rng = np.random.default_rng(1)
    a = np.round(rng.random((10, 6)) * 3)                  # heavy ties
    b = np.round(rng.random((10, 6)) * 4)
    P = rng.random((10, 6))
    expected = ag.bin_agreement(a, b, P, "M").random_disagreement
    rates = []
    for _ in range(1000):
        sa = np.stack([rng.permutation(col) for col in a.T], axis=1)
        sb = np.stack([rng.permutation(col) for col in b.T], axis=1)
        rates.append(ag.bin_agreement(sa, sb, P, "M").disagreement)
    assert np.mean(rates) == pytest.approx(expected, abs=3 * np.std(rates) / np.sqrt(len(rates)))
    assert expected < 0.45                                 # the ties lower it below 1/2


def test_tau_matrix_layout():
    rng = np.random.default_rng(2)
    scores = {m: rng.random((12, 5)) for m in ("r1", "r2", "bs")}
    rows = ag.score_range_agreement(scores)
    table = ag.tau_matrix(rows, "cumulative")
    assert list(table.index) == [(a, b) for a in ("r1", "r2") for b in ag.CUMULATIVE]
    assert list(table.columns) == ["r2", "bs"]
    row = rows[(rows.metric_a == "r1") & (rows.metric_b == "bs") & (rows.bin == "M+T")].iloc[0]
    assert table.loc[("r1", "M+T"), "bs"] == row.tau
    assert np.isnan(table.loc[("r2", "T"), "r2"])


# --- properties ------------------------------------------------------------------------------------
def test_ease_of_summarization():
    # metric 1 ranges 0..10 over the dataset, metric 2 0..1
    stack = np.array([[[0.0, 5.0], [10.0, 2.0]], [[1.0, 0.5], [0.0, 0.0]]])
    np.testing.assert_allclose(ag.ease_of_summarization(stack), [(1.0 + 1.0) / 2, (0.5 + 0.5) / 2])


def test_abstractiveness_and_coverage():
    doc = "the cat sat on the mat while the dog slept".split()
    ref = "the cat sat quietly while the dog slept".split()
    assert ag.abstractiveness(doc, ref) == pytest.approx(1 - 6 / 7)     # 'quietly' is new
    assert ag.extractive_fragments(doc, ref) == [(0, 3), (4, 4)]
    assert ag.coverage(doc, ref) == pytest.approx(7 / 8)
    assert ag.coverage(doc, doc) == 1.0 and ag.abstractiveness(doc, doc) == 0.0
    assert ag.coverage(doc, ["x", "y"]) == 0.0 and np.isnan(ag.coverage(doc, []))
    props = ag.reference_properties({"d1": doc}, {"d1": [ref, doc]})
    assert props.set_index("property").loc["coverage", "value"] == pytest.approx((7 / 8 + 1) / 2)


def test_property_agreement_and_series():
    rng = np.random.default_rng(4)
    v = rng.random(50)
    t = 0.8 * v + 0.1 * rng.random(50)
    p = np.where(np.arange(50) < 10, 0.5, 0.001)
    r = ag.property_agreement(t, p, v)
    assert r.n_inputs == 50 and r.pearson == pytest.approx(scipy.stats.pearsonr(t, v)[0])
    assert ag.property_agreement(t, p, v, significant_only=True).n_inputs == 40
    series = ag.property_series(t, v, window=5)
    assert series["value"].is_monotonic_increasing and series["tau_avg"].isna().sum() == 4
    assert series["tau_avg"].iloc[4] == pytest.approx(series["tau"].iloc[:5].mean())


@pytest.mark.parametrize("call, message", [
    (lambda: ag.normalise(np.zeros((2, 3))), "K metrics"),
    (lambda: ag.normalise(np.zeros((1, 2, 2)), "global"), "normalisation"),
    (lambda: ag.in_bin([0.5], "H"), "bin"),
    (lambda: ag.bin_agreement(np.zeros((3, 2)), np.zeros((3, 3)), np.zeros((3, 2)), "L"), "shape"),
    (lambda: ag.bin_agreement(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2)), "L", alpha=2), "alpha"),
    (lambda: ag.score_range_agreement({"a": np.zeros((3, 2))}), "at least two"),
    (lambda: ag.kendall_per_input(np.array([[np.inf]]), np.array([[1.0]])), "infinite"),
    (lambda: ag.reference_properties({}, {"x": [[1]]}), "no document"),
])
def test_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_property_agreement_of_rounding_noise_is_undefined_and_quiet() -> None:
    """Two identical metrics: tau = 1 on every input up to ~1e-16; no correlation to report."""
    import warnings

    t = np.array([1.0, 1.0 - 2e-16, 1.0, 1.0 - 1e-16, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = ag.property_agreement(t, np.zeros(5), np.arange(5.0))
        assert r.n_inputs == 5 and np.isnan(r.pearson) and np.isnan(r.spearman)
        small = ag.property_agreement(np.array([0.5, 0.51, 0.52, 0.5, 0.49]), np.zeros(5), np.arange(5.0))
    assert np.isfinite(small.pearson)  # a real spread, however small in tau terms, is kept
