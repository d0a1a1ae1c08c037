"""R's cor.test(method = "spearman") p-values (AS 89), against brute-force enumeration of every
permutation for n <= 8 and a seeded permutation estimate beyond the exact range (issue 33 item 7)."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest
import scipy.stats

from metaeval.analyses.ranking import input_significance
from metaeval.analyses.stats.spearman_test import spearman_pvalue, upper_tail


def _r_by_enumeration(x, y):
    """cor.test's exact p-values by definition: every permutation of y, its rho."""
    rho = scipy.stats.spearmanr(x, y)[0]
    rx, ry = scipy.stats.rankdata(x), scipy.stats.rankdata(y)
    shuffled = np.array(list(permutations(ry)))                 # every permutation of y's ranks
    a, b = rx - rx.mean(), shuffled - shuffled.mean(axis=1, keepdims=True)
    null = (b @ a) / (np.sqrt((a * a).sum()) * np.sqrt((b * b).sum(axis=1)))
    eps = 1e-9
    greater, less = np.mean(null >= rho - eps), np.mean(null <= rho + eps)
    return {"greater": greater, "less": less, "two-sided": min(1.0, 2 * (less if rho < 0 else greater))}


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7, 8])
def test_exact_for_small_n_equals_enumeration(n):
    rng = np.random.default_rng(n)
    for _ in range(4):
        x, y = rng.permutation(n) + 0.5, rng.normal(size=n)
        expected = _r_by_enumeration(x, y)
        for alternative, p in expected.items():
            rho, got, used = spearman_pvalue(x, y, alternative, "as89")
            assert used == "as89" and got == pytest.approx(p, abs=1e-12), (n, alternative)


def test_known_values():
    # perfect agreement of 5: only the identity has S = 0, so Pr = 1/120, two-sided 2/120
    assert spearman_pvalue(range(5), range(5), "two-sided", "as89")[1] == pytest.approx(2 / 120)
    assert spearman_pvalue(range(5), range(5), "greater", "as89")[1] == pytest.approx(1 / 120)
    assert spearman_pvalue(range(5), range(5)[::-1], "less", "as89")[1] == pytest.approx(1 / 120)
    assert upper_tail(0, 12) == 1.0 and upper_tail(12 * 143 / 3 + 1, 12) == 0.0


def test_edgeworth_is_close_to_the_permutation_distribution():
    rng = np.random.default_rng(0)
    n = 14
    ranks = np.arange(1, n + 1)
    null = np.array([((ranks - rng.permutation(ranks)) ** 2).sum() for _ in range(100_000)])
    for s in (200, 300, 455, 600, 700):
        assert upper_tail(s, n) == pytest.approx(np.mean(null >= s), abs=0.006), s


def test_ties_and_the_t_method_are_scipys():
    x, y = [1, 2, 2, 3, 4, 5], [2, 1, 4, 3, 6, 5]
    for method in ("t", "as89"):
        rho, p, used = spearman_pvalue(x, y, "two-sided", method)
        assert used == "t" and p == pytest.approx(scipy.stats.spearmanr(x, y)[1])
    assert np.isnan(spearman_pvalue([1, 1, 1], [1, 2, 3])[1])


def test_input_significance_counts_by_direction_and_method():
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(8, 12))
    X = np.concatenate([Z[:, :5] + 0.1 * rng.normal(size=(8, 5)), -Z[:, 5:8], rng.normal(size=(8, 4))], axis=1)
    t = input_significance(X, Z, "spearman", 0.05)
    exact = input_significance(X, Z, "spearman", 0.05, pvalue="as89")
    for r in (t, exact):
        sig = r.pvalues <= 0.05
        assert r.n_significant == sig.sum()
        assert r.n_positive == (sig & (r.correlations > 0)).sum() and r.n_negative == (sig & (r.correlations < 0)).sum()
        assert r.n_positive + r.n_negative == r.n_significant and r.n_negative >= 1
        assert r.conventions["n_significant_positive"] == r.n_positive
    for j in range(12):
        assert exact.pvalues[j] == pytest.approx(_r_by_enumeration(X[:, j], Z[:, j])["two-sided"], abs=1e-12)
    assert "AS 89" in exact.conventions["pvalue"] and "scipy" in t.conventions["pvalue"]
    with pytest.raises(ValueError, match="spearman"):
        input_significance(X, Z, "pearson", pvalue="as89")


def test_accuracy_pvalue_as89_is_a_recorded_parameter(db):
    """`accuracy --pvalue as89` (Spearman only): its rows carry pvalue='as89' beside the t rows,
    each counted with its own p-values; another coefficient is refused before anything is written."""
    import pandas as pd

    from metaeval.errors import WarehouseError
    from metaeval.ingest.table import add_scores
    from metaeval.analyses import ranking
    from metaeval.runs import Warehouse

    rng = np.random.default_rng(5)
    rows = [{"system": f"S{i}", "input": f"d{j}", "h": float(rng.integers(0, 5)), "m": rng.normal()}
            for i in range(7) for j in range(12)]
    with Warehouse(db) as wh:
        add_scores(wh, "t", pd.DataFrame(rows), human=["h"])
        with pytest.raises(WarehouseError, match="as89.*spearman"):
            wh.accuracy("t", "h", coefficients=["kendall"], pvalue="as89")
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == 0
        t = wh.accuracy("t", "h", coefficients=["spearman"])["input_significance"]
        exact = wh.accuracy("t", "h", coefficients=["spearman"], pvalue="as89")["input_significance"]
        X, Z = wh.matrix("t", ["m", "h"])["m"], wh.matrix("t", ["m", "h"])["h"]
        both = wh.sql("SELECT pvalue, n_significant FROM latest_input_significance ORDER BY pvalue")
    assert both["pvalue"].tolist() == ["as89", "t"]
    assert exact["n_significant"].iloc[0] == ranking.input_significance(X, Z, "spearman", pvalue="as89").n_significant
    assert t["n_significant"].iloc[0] == ranking.input_significance(X, Z, "spearman").n_significant
