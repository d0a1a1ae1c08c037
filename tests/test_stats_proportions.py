"""Kendall intervals as shares of pairs ranked wrongly; the coverage-rate z-test (Deutsch et al. 2021)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from metaeval.analyses.stats.proportions import pairs_wrong, proportions_z_test


def test_pairs_wrong_is_the_discordant_share():
    rng = np.random.default_rng(0)
    for _ in range(50):
        h, m = rng.normal(size=(2, 9))
        tau = stats.kendalltau(h, m).statistic
        discordant = np.mean([np.sign(h[i] - h[j]) != np.sign(m[i] - m[j]) for i, j in combinations(range(9), 2)])
        lo, hi = pairs_wrong(tau, tau)
        assert lo == pytest.approx(discordant) and hi == pytest.approx(discordant)
    assert pairs_wrong(-0.08, 0.82) == pytest.approx((0.09, 0.54))      # the paper's "9-54%"
    with pytest.raises(ValueError):
        pairs_wrong(0.5, 0.2)


def test_z_test_against_the_formula_and_statsmodels_style_values():
    z, p = proportions_z_test(950, 1000, 900, 1000, "greater")
    pooled = 1850 / 2000
    expected = (0.95 - 0.90) / np.sqrt(pooled * (1 - pooled) * (2 / 1000))
    assert z == pytest.approx(expected) and p == pytest.approx(stats.norm.sf(expected))
    z2, p2 = proportions_z_test(900, 1000, 950, 1000, "two-sided")
    assert z2 == pytest.approx(-expected) and p2 == pytest.approx(2 * stats.norm.sf(expected))
    # chi-square test of the 2x2 table without continuity correction = z squared
    chi2 = stats.chi2_contingency([[950, 50], [900, 100]], correction=False)[0]
    assert chi2 == pytest.approx(expected ** 2)
    assert np.isnan(proportions_z_test(10, 10, 20, 20)[1])                 # all covered: undefined
