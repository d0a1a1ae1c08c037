"""Pairwise Difference Pearson (pdp): hand-worked values, mt-metrics-eval's enumeration, and the
refusals (Fisher, Williams, the global level)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from metaeval.analyses import stats
from metaeval.analyses.stats import pairwise_difference
from tests.conftest import run_cli

X = np.array([[1.0, 3.0], [2.0, 2.0], [4.0, 6.0]])
Z = np.array([[0.2, 0.4], [0.5, 0.5], [0.6, 1.0]])


def _mtme_pdp(gold, metric):
    """mt-metrics-eval's enumeration: the N x N matrices of differences (meshgrid, i = j included)
    flattened, pairs with a missing gold value left out, then scipy.stats.pearsonr."""
    g1, g2 = np.meshgrid(gold, gold)
    m1, m2 = np.meshgrid(metric, metric)
    dg, dm = (g1 - g2).ravel(), (m1 - m2).ravel()
    keep = ~np.isnan(dg) & ~np.isnan(dm)
    return dg[keep], dm[keep]


def test_system_level_hand_worked():
    # system means x = (2, 2, 5), z = (0.3, 0.5, 0.8); unordered differences
    # (0, -0.2), (-3, -0.5), (-3, -0.3): sum dx dz = 2.4, sum dx^2 = 18, sum dz^2 = 0.38
    assert stats.correlate(X, Z, "system", "pdp") == pytest.approx(2.4 / np.sqrt(18 * 0.38), abs=1e-12)
    # at the system level PDP equals Pearson's r of the means (up to rounding)
    assert stats.correlate(X, Z, "system", "pdp") == pytest.approx(stats.correlate(X, Z, "system", "pearson"),
                                                                  abs=1e-12)


def test_summary_level_pools_the_inputs_hand_worked():
    # input 1: sum dx dz = 1.7, dx^2 = 14, dz^2 = 0.26; input 2: 3.7, 26, 0.62 (pooled, not averaged)
    assert stats.correlate(X, Z, "summary", "pdp") == pytest.approx(5.4 / np.sqrt(40 * 0.88), abs=1e-12)
    Zm = Z.copy()
    Zm[1, 1] = np.nan   # a missing human cell: input 2 keeps only the pair (1, 3): -3, -0.6
    assert stats.correlate(X, Zm, "summary", "pdp") == pytest.approx(3.5 / np.sqrt(23 * 0.62), abs=1e-12)


def test_matches_mt_metrics_evals_enumeration():
    rng = np.random.default_rng(0)
    for _ in range(20):
        N, M = rng.integers(3, 9), rng.integers(2, 12)
        A, B = rng.normal(size=(N, M)), rng.normal(size=(N, M)) + rng.normal(size=(N, M))
        B[rng.random((N, M)) < 0.2] = np.nan
        ref = scipy.stats.pearsonr(*_mtme_pdp(np.nanmean(B, axis=1), A.mean(axis=1)))[0]
        assert stats.correlate(A, B, "system", "pdp") == pytest.approx(ref, abs=1e-9)
        pooled = [np.concatenate(v) for v in zip(*(_mtme_pdp(B[:, j], A[:, j]) for j in range(M)))]
        assert stats.correlate(A, B, "summary", "pdp") == pytest.approx(scipy.stats.pearsonr(*pooled)[0], abs=1e-9)


def test_batched_vectors_and_undefined():
    x = np.array([[1.0, 2.0, 4.0], [3.0, 3.0, 3.0]])
    z = np.array([0.1, 0.4, 0.2])
    r = pairwise_difference.corr(x, np.broadcast_to(z, x.shape))
    assert r[0] == pytest.approx(stats.correlate(x[0][:, None], z[:, None], "system", "pdp"), abs=1e-12)
    assert np.isnan(r[1])   # a constant metric: every difference is 0


def test_fisher_williams_and_global_are_refused():
    with pytest.raises(ValueError, match="pdp"):
        stats.fisher_ci(X, Z, "system", "pdp")
    with pytest.raises(ValueError, match="pdp"):
        stats.williams_test(X, Z, Z, "system", "pdp")
    with pytest.raises(ValueError, match="pdp is defined at the levels"):
        stats.correlate(X, Z, "global", "pdp")


def test_resampling_methods_apply():
    rng = np.random.default_rng(1)
    A, B = rng.normal(size=(6, 8)), rng.normal(size=(6, 8))
    H = A + rng.normal(size=(6, 8))
    for level in ("system", "summary"):
        ci = stats.bootstrap_ci(A, H, level, "pdp", "both", k=50, seed=0)
        assert ci.lower <= ci.estimate <= ci.upper
        assert ci.estimate == pytest.approx(stats.correlate(A, H, level, "pdp"), abs=1e-12)
        test = stats.permutation_test(A, B, H, level, "pdp", "both", k=50, seed=0)
        assert 0 < test.pvalue <= 1


def test_correlate_ci_compare_commands(tmp_path):
    db = tmp_path / "w.duckdb"
    run_cli(db, "demo", "--systems", "6", "--inputs", "8", "--k", "40")
    common = ("--dataset", "demo", "--human", "expert.relevance", "--coefficient", "pdp")
    assert run_cli(db, "correlate", *common, "--level", "system", "--level", "summary").exit_code == 0
    assert run_cli(db, "ci", *common, "--level", "summary", "--k", "50").exit_code == 0
    assert run_cli(db, "compare", *common, "--level", "system", "--k", "50").exit_code == 0
    out = run_cli(db, "ci", *common, "--level", "system", "--ci-method", "fisher", ok=False)
    assert out.exit_code != 0 and "pdp" in out.output
    out = run_cli(db, "compare", *common, "--level", "system", "--method", "williams", ok=False)
    assert out.exit_code != 0 and "pdp" in out.output
    out = run_cli(db, "correlate", *common, ok=False)   # the default levels include global
    assert out.exit_code != 0 and "system and summary" in out.output
    from metaeval import Store

    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT level, value, conventions FROM latest_correlations WHERE coefficient = 'pdp'")
    assert len(rows) and rows["conventions"].str.contains("mt-metrics-eval pdp=True").all()
