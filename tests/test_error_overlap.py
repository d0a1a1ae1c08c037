"""Louis & Nenkova's Table 4 (error overlap) and Graham's Table 3 (rank change), pure parts."""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import pytest
from scipy import stats

from metaeval.analyses.error_overlap import correct_pairs, error_overlap
from metaeval.analyses.rank_change import positions, rank_change


def test_cells_sum_to_all_pairs_and_match_a_loop():
    rng = np.random.default_rng(3)
    for n in (2, 5, 12):
        h, a, b = rng.normal(size=(3, n))
        b[:2] = a[:2]                                   # some shared structure
        out = error_overlap(h, a, b)
        assert out.table.sum() == comb(n, 2) == out.n_pairs
        loop = np.zeros((2, 2), dtype=int)
        for i, j in combinations(range(n), 2):
            ra = np.sign(a[i] - a[j]) == np.sign(h[i] - h[j])
            rb = np.sign(b[i] - b[j]) == np.sign(h[i] - h[j])
            loop[int(not ra), int(not rb)] += 1
        np.testing.assert_array_equal(out.table, loop)
        assert out.accuracy_a == pytest.approx(loop[0].sum() / comb(n, 2))


def test_tests_against_scipy_and_undefined_cases():
    h = np.arange(10.0)
    a = h.copy(); a[[0, 1]] = a[[1, 0]]; a[[5, 6]] = a[[6, 5]]
    b = h.copy(); b[[0, 1]] = b[[1, 0]]; b[[8, 9]] = b[[9, 8]]; b[[3, 7]] = b[[7, 3]]
    out = error_overlap(h, a, b)
    n10, n01 = out.table[0, 1], out.table[1, 0]
    assert out.mcnemar_p == pytest.approx(stats.binomtest(n10, n10 + n01, 0.5).pvalue)
    assert out.fisher_p == pytest.approx(stats.fisher_exact(out.table, alternative="greater").pvalue)
    same = error_overlap(h, a, a)                       # no discordant pair: McNemar undefined
    assert np.isnan(same.mcnemar_p)
    perfect = error_overlap(h, h, a)                    # A always right: an empty margin, Fisher undefined
    assert np.isnan(perfect.fisher_p)
    assert correct_pairs([1, 1], [2, 2]).tolist() == [True] and correct_pairs([1, 1], [2, 3]).tolist() == [False]
    with pytest.raises(ValueError):
        error_overlap([1.0], [1.0], [1.0])


def test_rank_change():
    a = np.array([0.9, 0.5, 0.7, 0.1])
    b = np.array([0.6, 0.8, 0.7, 0.1])
    out = rank_change(a, b)
    assert out.position_a.tolist() == [1, 3, 2, 4] and out.position_b.tolist() == [3, 1, 2, 4]
    assert out.change.tolist() == [2, -2, 0, 0]
    assert out.kendall == pytest.approx(stats.kendalltau(a, b).statistic)
    assert out.spearman == pytest.approx(stats.spearmanr(a, b).statistic)
    assert positions([3, 5, 5, 1]).tolist() == [3, 1, 1, 4]
    assert np.isnan(rank_change(a, np.ones(4)).kendall)
