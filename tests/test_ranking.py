"""Ranking and agreement statistics (analyses.ranking) against brute-force loops, scipy and hand
computations."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.stats

from metaeval.analyses import ranking, replicability


def _sign(d, tol=0.0):
    return 0 if abs(d) <= tol else (1 if d > 0 else -1)


def _brute_accuracy(X, Z, level, tx=0.0, tz=0.0):
    """Loops over pairs: (pairs, agree, flipped, metric_ties, human_ties, both_ties)."""
    if level == "system":
        X, Z = np.nanmean(X, axis=1)[:, None], np.nanmean(Z, axis=1)[:, None]
    counts = dict(pairs=0, agree=0, flipped=0, metric_ties=0, human_ties=0, both_ties=0)
    for j in range(X.shape[1]):
        for i, k in itertools.combinations(range(X.shape[0]), 2):
            cells = [X[i, j], X[k, j], Z[i, j], Z[k, j]]
            if any(np.isnan(c) for c in cells):
                continue
            sx, sz = _sign(X[i, j] - X[k, j], tx), _sign(Z[i, j] - Z[k, j], tz)
            counts["pairs"] += 1
            counts["agree"] += sx == sz
            counts["flipped"] += sx * sz < 0
            counts["metric_ties"] += sx == 0 and sz != 0
            counts["human_ties"] += sz == 0 and sx != 0
            counts["both_ties"] += sx == 0 and sz == 0
    return counts


@pytest.fixture
def tied():
    """Integer scores (many ties) with missing cells: 7 systems x 9 inputs."""
    rng = np.random.default_rng(3)
    Z = rng.integers(1, 5, size=(7, 9)).astype(float)
    X = Z + rng.integers(-1, 2, size=(7, 9))
    X[2, 3] = Z[5, 1] = np.nan
    return X, Z


@pytest.mark.parametrize("level", ["system", "micro"])
@pytest.mark.parametrize("tolerances", [(0.0, 0.0), (0.5, 0.25)])
def test_pairwise_accuracy_equals_brute_force(tied, level, tolerances):
    X, Z = tied
    r = ranking.pairwise_accuracy(X, Z, level, metric_tolerance=tolerances[0], human_tolerance=tolerances[1])
    expected = _brute_accuracy(X, Z, level, *tolerances)
    got = {name: getattr(r, name) for name in expected}
    assert got == expected
    assert r.accuracy == pytest.approx(expected["agree"] / expected["pairs"])
    assert r.disagree == r.flipped + r.metric_ties + r.human_ties
    if level == "system":
        assert r.pairs == 7 * 6 // 2


def test_accuracy_exact_ties_survive_rounding():
    # the same values summed in another order: means that differ in the last bit are a tie
    X = np.array([[0.1, 0.2, 0.3], [0.3, 0.2, 0.1], [0.0, 0.0, 0.0]])
    assert X[0].mean() != X[1].mean()
    Z = np.array([[1.0, 1, 1], [1, 1, 1], [0, 0, 0]])
    r = ranking.pairwise_accuracy(X, Z, "system")
    assert (r.pairs, r.agree, r.both_ties) == (3, 3, 1)
    # a real difference below the tolerance is a tie only with the tolerance
    Z2 = Z + np.array([[0.01], [0], [0]])
    assert ranking.pairwise_accuracy(X, Z2).human_ties == 0 and ranking.pairwise_accuracy(X, Z2).metric_ties == 1
    assert ranking.pairwise_accuracy(X, Z2, human_tolerance=0.02).accuracy == 1.0


@pytest.mark.parametrize("kwargs, message", [
    (dict(level="summary"), "`level` must be one of"),
    (dict(metric_tolerance=-1.0), "`metric_tolerance` must be a finite number >= 0"),
    (dict(human_tolerance=float("nan")), "`human_tolerance` must be a finite number >= 0"),
])
def test_pairwise_accuracy_argument_errors(tied, kwargs, message):
    with pytest.raises(ValueError, match=message):
        ranking.pairwise_accuracy(*tied, **kwargs)
    with pytest.raises(ValueError, match="same shape"):
        ranking.pairwise_accuracy(np.zeros((3, 4)), np.zeros((3, 5)))


@pytest.mark.parametrize("coefficient, alternative", [("pearson", "two-sided"), ("spearman", "greater"),
                                                      ("kendall", "two-sided")])
def test_input_significance_equals_scipy_per_input(coefficient, alternative):
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(8, 12))
    X = Z + rng.normal(scale=1.5, size=Z.shape)
    X[0, 0] = np.nan
    X[:, 5] = 1.0                        # constant input: undefined
    Z[:6, 7] = np.nan                    # 2 pairs: undefined
    r = ranking.input_significance(X, Z, coefficient, alpha=0.1, alternative=alternative)
    test = {"pearson": scipy.stats.pearsonr, "spearman": scipy.stats.spearmanr,
            "kendall": scipy.stats.kendalltau}[coefficient]
    significant = []
    for j in range(12):
        ok = ~np.isnan(X[:, j]) & ~np.isnan(Z[:, j])
        if j in (5, 7):
            assert np.isnan(r.correlations[j]) and np.isnan(r.pvalues[j])
            continue
        res = test(X[ok, j], Z[ok, j], alternative=alternative)
        assert (r.correlations[j], r.pvalues[j]) == pytest.approx((res[0], res[1]), abs=1e-12)
        if res[1] <= 0.1:
            significant.append(res[0])
    assert (r.n_inputs, r.n_defined, r.n_significant) == (12, 10, len(significant))
    assert r.percent_significant == pytest.approx(100 * len(significant) / 12)
    agreeing = [v for v in significant if v > 0]
    if agreeing:
        assert (r.min_significant, r.max_significant) == pytest.approx((min(agreeing), max(agreeing)))


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_input_significance_extremes_are_of_the_sign_that_counts(alternative):
    """Table 3's minima are the weakest significant agreement: a significant disagreement (a
    negative correlation, two-sided) is counted in n_negative but is never the minimum."""
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(10, 9))
    signs = np.array([1, 1, 1, 1, -1, -1, 1, -1, 0.2])
    X = Z * signs + rng.normal(scale=0.4, size=Z.shape)
    r = ranking.input_significance(X, Z, "pearson", alpha=0.05, alternative=alternative)
    p = [scipy.stats.pearsonr(X[:, j], Z[:, j], alternative=alternative) for j in range(9)]
    counted = [t.statistic for t in p if t.pvalue <= 0.05 and (t.statistic < 0 if alternative == "less"
                                                               else t.statistic > 0)]
    assert len(counted) >= 3
    assert (r.min_significant, r.max_significant) == pytest.approx((min(counted), max(counted)), abs=1e-12)
    assert np.sign(r.min_significant) == np.sign(r.max_significant) == (-1 if alternative == "less" else 1)
    if alternative == "two-sided":       # the disagreements are significant, and counted, by sign
        assert r.n_negative == sum(t.pvalue <= 0.05 and t.statistic < 0 for t in p) >= 3
        assert r.n_significant == r.n_positive + r.n_negative
    none = ranking.input_significance(-np.abs(signs) * Z + 0.1 * rng.normal(size=Z.shape), Z, "pearson")
    assert none.n_negative > 0 and np.isnan(none.min_significant) and np.isnan(none.max_significant)


def test_input_significance_argument_errors():
    X = np.ones((4, 3))
    with pytest.raises(ValueError, match="`coefficient` must be one of pearson, spearman, kendall"):
        ranking.input_significance(X, X, "kendall-c")
    with pytest.raises(ValueError, match="`alpha`"):
        ranking.input_significance(X, X, "pearson", alpha=1.5)
    with pytest.raises(ValueError, match="`alternative`"):
        ranking.input_significance(X, X, "pearson", alternative="bigger")


@pytest.fixture
def systems():
    """6 systems x 15 inputs with a missing cell, a duplicated system and a zero difference."""
    rng = np.random.default_rng(11)
    A = rng.normal(size=(6, 15)) + np.linspace(0, 1.5, 6)[:, None]
    A[4] = A[3]                          # identical systems: every d_j = 0
    A[5, :3] = A[0, :3]                  # some zero differences
    A[1, 2] = np.nan
    return A


def test_ttest_and_wilcoxon_equal_scipy_per_pair(systems):
    A = systems
    for test in ("ttest", "wilcoxon"):
        r = ranking.system_pair_tests(A, test)
        assert len(r.pvalue) == 15
        for p, (i, k) in enumerate(zip(r.first, r.second)):
            ok = ~np.isnan(A[i]) & ~np.isnan(A[k])
            d = A[i, ok] - A[k, ok]
            assert r.n[p] == ok.sum() and r.difference[p] == pytest.approx(d.mean())
            if not d.any():
                assert np.isnan(r.pvalue[p])
                continue
            if test == "ttest":
                expected = scipy.stats.ttest_rel(A[i, ok], A[k, ok])
                assert r.direction[p] == np.sign(expected.statistic)
            else:
                expected = scipy.stats.wilcoxon(A[i, ok], A[k, ok])
                nz = d[d != 0]
                ranks = scipy.stats.rankdata(np.abs(nz))
                assert r.direction[p] == np.sign(ranks[nz > 0].sum() - ranks[nz < 0].sum())
            assert r.pvalue[p] == pytest.approx(expected.pvalue, rel=1e-10)


def test_permutation_equals_loop_with_the_same_flips(systems):
    A, k, seed = systems, 300, 4
    r = ranking.system_pair_tests(A, "permutation", k=k, seed=seed)
    flips = np.random.default_rng(np.random.SeedSequence(seed)).integers(0, 2, size=(k, A.shape[1])) == 1
    for p, (i, j) in enumerate(zip(r.first, r.second)):
        d = np.nan_to_num(A[i] - A[j])
        T = d.sum()
        count = sum(abs(np.where(f, -d, d).sum()) >= abs(T) - 1e-9 for f in flips)
        assert r.pvalue[p] == (1 + count) / (1 + k)
        assert r.direction[p] == np.sign(T)
    again = ranking.system_pair_tests(A, "permutation", k=k, seed=seed)
    np.testing.assert_array_equal(r.pvalue, again.pvalue)


def test_permutation_approaches_exact_enumeration():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(3, 8)) + np.array([[0.0], [0.8], [0.3]])
    r = ranking.system_pair_tests(A, "permutation", k=20000, seed=1)
    for p, (i, k) in enumerate(zip(r.first, r.second)):
        d = A[i] - A[k]
        signs = np.array(list(itertools.product([-1, 1], repeat=8)))
        exact = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12)
        assert r.pvalue[p] == pytest.approx(exact, abs=0.01)


def test_system_agreement_counts_equal_brute_force(systems):
    rng = np.random.default_rng(2)
    Z = systems + rng.normal(scale=0.8, size=systems.shape)
    Z[3, 4] = np.nan
    for test in ranking.PAIR_TESTS:
        r = ranking.system_agreement(systems, Z, test, alpha=0.1, k=200, seed=0)
        counts = dict(same=0, opposite=0, metric_only=0, human_only=0, neither=0)
        for i, k in itertools.combinations(range(6), 2):
            ok = ~np.isnan(systems[i] - systems[k]) & ~np.isnan(Z[i] - Z[k])
            x, z = systems[i, ok] - systems[k, ok], Z[i, ok] - Z[k, ok]
            if test == "ttest":
                tx, tz = scipy.stats.ttest_1samp(x, 0), scipy.stats.ttest_1samp(z, 0)
                sx, sz = tx.pvalue <= 0.1, tz.pvalue <= 0.1
                same = np.sign(tx.statistic) == np.sign(tz.statistic)
            else:     # the pure per-pair tests, checked against scipy / loops above
                p = list(zip(r.metric.first, r.metric.second)).index((i, k))
                sx, sz = r.metric.pvalue[p] <= 0.1, r.human.pvalue[p] <= 0.1
                same = r.metric.direction[p] == r.human.direction[p]
            key = ("same" if same else "opposite") if sx and sz else \
                "metric_only" if sx else "human_only" if sz else "neither"
            counts[key] += 1
        assert {name: getattr(r, name) for name in counts} == counts, test
        assert r.pairs == 15 and r.agreement == pytest.approx((r.same + r.neither) / 15)


def test_system_agreement_of_a_measure_with_itself():
    A = np.random.default_rng(7).normal(size=(5, 20)) + np.arange(5)[:, None] * 0.3
    r = ranking.system_agreement(A, A, "wilcoxon")
    assert r.opposite == r.metric_only == r.human_only == 0 and r.agreement == 1.0


def test_pair_test_argument_errors(systems):
    with pytest.raises(ValueError, match="`test` must be one of"):
        ranking.system_pair_tests(systems, "sign")
    with pytest.raises(ValueError, match="`k` must be an integer >= 1"):
        ranking.system_pair_tests(systems, "permutation", k=0)
    with pytest.raises(ValueError, match="`seed`"):
        ranking.system_pair_tests(systems, "permutation", seed=-1)
    with pytest.raises(ValueError, match="`mask` must have shape"):
        ranking.system_pair_tests(systems, mask=np.ones((3, 3), bool))


def _brute_clusters(scores, beats):
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    cluster, current = {}, 1
    for pos, m in enumerate(order):
        if pos and all(beats[a, b] for a in order[:pos] for b in order[pos:]):
            current += 1
        cluster[m] = current
    return [cluster[i] for i in range(len(scores))]


def test_significance_clusters_by_hand():
    # a > c > d, b and a indistinguishable, b beats d only
    scores = [0.9, 0.85, 0.5, 0.1]
    beats = np.zeros((4, 4), bool)
    beats[0, 2] = beats[0, 3] = beats[1, 3] = beats[2, 3] = True
    r = ranking.significance_clusters(scores, beats, rule="strict")
    assert list(r.rank) == [1, 2, 3, 4]
    assert list(r.is_winner) == [True, True, False, False]
    # b does not beat c: no boundary between them; everybody beats d
    assert list(r.cluster) == [1, 1, 1, 2]
    # mt-metrics-eval's rule: a beats c, so c opens cluster 2; c beats d, so d opens cluster 3
    assert list(ranking.significance_clusters(scores, beats).cluster) == [1, 1, 2, 3]
    assert list(r.n_beaten_by) == [0, 0, 1, 3]


def test_significance_clusters_equal_brute_force_rule():
    rng = np.random.default_rng(9)
    for n in (1, 2, 5, 9):
        for _ in range(20):
            scores = rng.normal(size=n)
            order = np.argsort(-scores)
            beats = np.zeros((n, n), bool)
            for x, y in itertools.combinations(range(n), 2):     # the better one may win
                beats[order[x], order[y]] = rng.random() < 0.7
            r = ranking.significance_clusters(scores, beats, rule="strict")
            assert list(r.cluster) == _brute_clusters(list(scores), beats)
            assert list(r.is_winner) == [not beats[:, i].any() for i in range(n)]
            assert set(np.flatnonzero(r.is_winner)) <= set(np.flatnonzero(r.cluster == 1))


def test_significance_clusters_errors():
    with pytest.raises(ValueError, match="antisymmetric"):
        ranking.significance_clusters([1, 2], np.ones((2, 2), bool) & ~np.eye(2, dtype=bool))
    with pytest.raises(ValueError, match="boolean array of shape"):
        ranking.significance_clusters([1, 2], np.zeros((3, 3), bool))


def _fisher_sf(x, df):
    """chi2 survival function for even df, closed form: exp(-x/2) sum_{i < df/2} (x/2)^i / i!."""
    return math.exp(-x / 2) * sum((x / 2) ** i / math.factorial(i) for i in range(df // 2))


def test_partial_conjunction_by_hand():
    # the example of Dror et al.'s code: k_Bonferroni = 1, k_Fisher = 2, Holm rejects dataset 6
    p = [0.168, 0.297, 0.357, 0.019, 0.218, 0.001]
    b = replicability.partial_conjunction(p, 0.05, "bonferroni")
    # sorted: .001 .019 .168 .218 .297 .357; (n-u+1) p_(u) = .006 .095 .672 .654 .594 .357; running max
    np.testing.assert_allclose(b.pc_pvalues, [0.006, 0.095, 0.672, 0.672, 0.672, 0.672])
    assert b.k_hat == 1 and list(b.identified) == [5]
    f = replicability.partial_conjunction(p, 0.05, "fisher")
    s = sorted(p)
    raw = [_fisher_sf(-2 * sum(math.log(q) for q in s[u:]), 2 * (6 - u)) for u in range(6)]
    np.testing.assert_allclose(f.pc_pvalues, np.maximum.accumulate(raw), rtol=1e-12)
    assert f.k_hat == 2 and f.identified is None


def test_partial_conjunction_step_down():
    # raw Bonferroni-PC: .03, .08, .04 -- u = 3 alone would pass, but not after u = 2 failed
    r = replicability.partial_conjunction([0.04, 0.01, 0.04], 0.05, "bonferroni")
    np.testing.assert_allclose(r.pc_pvalues, [0.03, 0.08, 0.08])
    assert r.k_hat == 1 and list(r.identified) == [1]
    everything = replicability.partial_conjunction([0.001, 0.002], 0.05, "bonferroni")
    assert everything.k_hat == 2 and sorted(everything.identified) == [0, 1]
    assert replicability.partial_conjunction([0.0, 0.5], 0.05, "fisher").k_hat == 1


@pytest.mark.parametrize("args, message", [
    (([],), "at least one p-value"),
    (([0.1, np.nan],), "no NaN"),
    (([0.1, 1.2],), r"lie in \[0, 1\]"),
    (([0.1], 0.05, "stouffer"), "`method` must be one of"),
    (([0.1], 0.0), "`alpha`"),
])
def test_partial_conjunction_errors(args, message):
    with pytest.raises(ValueError, match=message):
        replicability.partial_conjunction(*args)


# --- mt-metrics-eval's AssignRanks, the default cluster rule -------------------------------------
def _assign_ranks(sig_matrix: np.ndarray, pval: float) -> list[int]:
    """mt-metrics-eval stats.AssignRanks, restated from its source: ``sig_matrix`` upper
    triangular over metrics sorted by decreasing correlation, sig_matrix[i, j] the p-value that
    metric j is >= metric i; metric i opens a new rank when a metric of the current rank (from
    its first member to i - 1) has p <= pval against it."""
    n = sig_matrix.shape[0]
    ranks, current, start = [0] * n, 1, 0
    for i in range(n):
        if any(sig_matrix[:, i][start:i] <= pval):
            current += 1
            start = i
        ranks[i] = current
    return ranks


def test_any_rule_by_hand():
    # sorted a > b > c > d > e; a beats c, c beats d only; nothing else significant
    scores = [0.9, 0.8, 0.7, 0.6, 0.5]
    beats = np.zeros((5, 5), bool)
    beats[0, 2] = beats[2, 3] = True
    r = ranking.significance_clusters(scores, beats)
    # c is beaten by a (cluster 1 member): new cluster at c; d beaten by c: new at d; e joins d
    assert list(r.cluster) == [1, 1, 2, 3, 3]
    assert list(r.is_winner) == [True, True, False, False, True]   # e: beaten by nobody, yet cluster 3
    assert r.determined and r.why is None
    # the strict partition separates nothing here (b does not beat c, d or e)
    assert list(ranking.significance_clusters(scores, beats, rule="strict").cluster) == [1, 1, 1, 1, 1]
    # the rule reads only the current cluster: a beating e does not matter once d opened cluster 3
    beats[0, 4] = True
    assert list(ranking.significance_clusters(scores, beats).cluster) == [1, 1, 2, 3, 3]


def test_any_rule_equals_assign_ranks_on_random_significance_matrices():
    rng = np.random.default_rng(24)
    for n in (1, 2, 3, 6, 10):
        for _ in range(40):
            scores = rng.permutation(n) + rng.random()       # distinct scores
            order = np.argsort(-scores, kind="stable")
            sig = np.ones((n, n))
            sig[np.triu_indices(n, 1)] = rng.choice([0.001, 0.03, 0.2, 0.7], size=n * (n - 1) // 2)
            beats = np.zeros((n, n), bool)
            for x, y in itertools.combinations(range(n), 2):
                beats[order[x], order[y]] = sig[x, y] <= 0.05
            r = ranking.significance_clusters(scores, beats)
            assert [int(r.cluster[i]) for i in order] == _assign_ranks(sig, 0.05)


def test_untested_pairs_leave_clusters_undetermined():
    scores = [0.9, 0.8, 0.7]
    beats = np.zeros((3, 3), bool)
    tested = np.ones((3, 3), bool)
    tested[1, 2] = tested[2, 1] = False                     # b vs c never run
    r = ranking.significance_clusters(scores, beats, tested=tested, names=["a", "b", "c"])
    assert not r.determined and np.isnan(r.cluster).all() and "b vs c" in r.why and "1 of the 3 pairs" in r.why
    assert list(r.rank) == [1, 2, 3]
    assert list(r.winner_known) == [True, False, False]      # b and c: a test against them is missing
    # a beats b and b beats c would put a and c in different clusters without their own test
    beats[0, 1] = True
    tested[1, 2] = tested[2, 1] = True
    tested[0, 2] = tested[2, 0] = False
    beats[1, 2] = True
    for rule in ranking.CLUSTER_RULES:
        r = ranking.significance_clusters(scores, beats, rule=rule, tested=tested, names=["a", "b", "c"])
        assert not r.determined and "a vs c" in r.why
        # a: its test against c is missing, so unbeaten is not known; b and c are beaten
        assert list(r.winner_known) == [False, True, True] and not r.is_winner.any()
    # an untested pair with an undefined metric does not matter: it is not ranked
    r = ranking.significance_clusters([0.9, 0.8, np.nan], beats & False, tested=tested)
    assert r.determined and list(r.cluster[:2]) == [1, 1]


def test_undefined_scores_never_rank_cluster_or_win():
    scores = [0.5, np.nan, 0.2]
    beats = np.zeros((3, 3), bool)
    beats[1, 2] = True                                      # a stray win of the undefined metric is ignored
    for rule in ranking.CLUSTER_RULES:
        r = ranking.significance_clusters(scores, beats, rule=rule)
        assert list(r.undefined) == [False, True, False]
        assert np.isnan(r.rank[1]) and np.isnan(r.cluster[1])
        assert not r.is_winner[1] and not r.winner_known[1]
        assert list(r.rank[[0, 2]]) == [1, 2] and list(r.is_winner[[0, 2]]) == [True, True]
        assert list(r.n_beaten_by) == [0, 0, 0]


def test_pairwise_beats_one_row_decides_a_two_sided_pair():
    # rows (0, 1) and (1, 0) of a two-sided test in different families: the row of the metric
    # with the higher score (0) decides; the other row counts only when it is the one run
    scores = [0.9, 0.5, 0.1]
    a, b = [0, 1, 2], [1, 0, 0]
    beats, tested = ranking.pairwise_beats(3, a, b, delta=[0.4, -0.4, -0.8], significant=[False, True, True],
                                           alternative="two-sided", scores=scores)
    assert not beats[0, 1] and not beats[1, 0]               # (0, 1) decides: not significant
    assert beats[0, 2]                                      # only (2, 0) was run: it decides
    assert tested[0, 1] and tested[1, 0] and tested[0, 2] and not tested[1, 2]
    # undefined delta: tested, never significant, whatever the row says
    beats, tested = ranking.pairwise_beats(2, [0], [1], [np.nan], [True], "two-sided", [0.5, 0.4])
    assert not beats.any() and tested[0, 1]
    beats, _ = ranking.pairwise_beats(2, [0], [1], [0.1], [False], "greater", [0.5, 0.4])
    assert not beats.any()
    # one-sided: each row its own direction
    beats, _ = ranking.pairwise_beats(2, [0, 1], [1, 0], [0.1, -0.1], [True, False], "greater", [0.5, 0.4])
    assert beats[0, 1] and not beats[1, 0]
    beats, _ = ranking.pairwise_beats(2, [0], [1], [0.1], [True], "less", [0.5, 0.4])
    assert beats[1, 0] and not beats[0, 1]


def test_property_random_datasets_never_claim_what_was_not_tested():
    """On random small families: no pair is significant when its difference is undefined, a
    cluster never separates two metrics whose test was not run, undefined metrics never rank."""
    rng = np.random.default_rng(2024)
    for _ in range(300):
        n = int(rng.integers(2, 7))
        scores = rng.normal(size=n)
        scores[rng.random(n) < 0.2] = np.nan
        rows = [(i, j) for i in range(n) for j in range(n) if i != j and rng.random() < 0.8]
        a = [i for i, _ in rows]
        b = [j for _, j in rows]
        delta = np.array([scores[i] - scores[j] for i, j in rows])
        p = rng.choice([0.001, 0.01, 0.2, np.nan], size=len(rows))
        alternative = str(rng.choice(["two-sided", "greater"]))
        beats, tested = ranking.pairwise_beats(n, a, b, delta, p <= 0.05, alternative, scores)
        undefined_pairs = {(i, j) for (i, j), d in zip(rows, delta) if np.isnan(d)}
        assert not any(beats[i, j] or beats[j, i] for i, j in undefined_pairs)
        assert not (beats & ~tested).any()
        for rule in ranking.CLUSTER_RULES:
            r = ranking.significance_clusters(scores, beats, rule=rule, tested=tested)
            assert np.isnan(r.rank[np.isnan(scores)]).all() and not r.is_winner[np.isnan(scores)].any()
            if r.determined:
                for i, j in itertools.permutations(range(n), 2):
                    if not np.isnan(scores[i]) and not np.isnan(scores[j]) and r.cluster[i] != r.cluster[j]:
                        assert tested[i, j]
            else:
                assert np.isnan(r.cluster).all() and r.why
