"""Early-stopping permutation tests (mt-metrics-eval's PermutationSigDiff block protocol)."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval import Store, schema
from metaeval.analyses import stats
from metaeval.analyses.stats.hypothesis import EARLY_STOPPING
from tests.test_mt_runs import mt_db  # noqa: F401 - fixture
from tests.conftest import run_cli


def _data(seed, noise):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(8, 15))
    return Z + noise * rng.normal(size=Z.shape), rng.normal(size=Z.shape), Z


def _expected_stop(samples, delta, k_block, k):
    """Walk the full run's resamples block by block with the protocol's rule."""
    for used in range(k_block, k, k_block):
        drawn = samples[:used]
        drawn = drawn[~np.isnan(drawn)]
        share = (drawn >= delta - 1e-12).sum() / drawn.size   # within ROUNDING, as the tests count
        if share < EARLY_STOPPING["early_min"] or share > EARLY_STOPPING["early_max"]:
            return used
    return k


@pytest.mark.parametrize("seed, noise", [(0, 0.3), (1, 3.0), (2, 1.0), (3, 10.0)])
@pytest.mark.parametrize("level", ["system", "summary"])
def test_early_stopping_is_a_prefix_of_the_full_run(seed, noise, level):
    X, Y, Z = _data(seed, noise)
    full = stats.permutation_test(X, Y, Z, level, "kendall", k=600, alternative="greater", seed=seed)
    early = stats.permutation_test(X, Y, Z, level, "kendall", k=600, alternative="greater", seed=seed,
                                  k_block=50)
    used = _expected_stop(full.samples, full.delta, 50, 600)
    assert early.conventions["k_used"] == used == early.samples.size
    np.testing.assert_array_equal(early.samples, full.samples[:used])
    count = int((early.samples >= early.delta - 1e-12).sum())
    assert early.pvalue == (1 + count) / (1 + used)
    for X2, Y2 in ((X, Y), (Y, X)):  # both directions: one stops early below early_min or above early_max
        r = stats.permutation_test(X2, Y2, Z, level, "kendall", k=600, alternative="greater", seed=seed,
                                   k_block=600)
        assert r.conventions["k_used"] == 600


def test_a_clear_difference_stops_after_one_block():
    X, Y, Z = _data(0, 0.1)
    assert stats.permutation_test(X, Y, Z, "system", "pearson", k=1000, alternative="greater",
                                  seed=0, k_block=100).conventions["k_used"] == 100
    assert stats.permutation_test(Y, X, Z, "system", "pearson", k=1000, alternative="greater",
                                  seed=0, k_block=100).conventions["k_used"] == 100


def test_compare_k_block_stores_k_used(mt_db):  # noqa: F811
    run_cli(mt_db, "compare", "--dataset", "mt", "--human", "mqm", "--level", "system", "--coefficient", "pearson",
            "--k", "400", "--k-block", "100", "--alternative", "greater")
    with Store(mt_db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_hypothesis_tests")
        m = wh.matrix("mt", ["m-good", "m-bad", "mqm"])
    assert set(rows["k_block"]) == {100}
    for r in rows.itertuples():
        t = stats.permutation_test(m[r.metric_a], m[r.metric_b], m["mqm"], "system", "pearson", k=400,
                                   alternative="greater", seed=0, k_block=100)
        assert r.k_used == t.conventions["k_used"] and r.p_value == pytest.approx(t.pvalue, abs=0)
    out = run_cli(mt_db, "compare", "--dataset", "mt", "--human", "mqm", "--method", "boot-both", "--k-block", "10",
                  ok=False)
    assert out.exit_code != 0 and "--k-block" in out.output


def test_schema_2_warehouse_gains_the_early_stopping_columns(tmp_path):
    from metaeval.connection import duckdb_connect

    db = tmp_path / "v2.duckdb"
    run_cli(db, "demo", "--dataset", "d", "--systems", "4", "--inputs", "5", "--k", "40")
    with duckdb_connect(db) as con:  # as a version-2 warehouse was: no k_block, k_used
        before = con.execute("SELECT count(*) FROM hypothesis_tests").fetchall()[0][0]
        con.execute("ALTER TABLE hypothesis_tests DROP COLUMN k_block")
        con.execute("ALTER TABLE hypothesis_tests DROP COLUMN k_used")
        con.execute("DROP TABLE soft_pairwise_accuracy")
        con.execute("UPDATE schema_info SET value = '2' WHERE key = 'version'")
    assert run_cli(db, "correlate", "--dataset", "d", "--human", "expert.relevance", ok=False).exit_code != 0
    assert f"from schema 2 to {schema.SCHEMA_VERSION}" in run_cli(db, "init").output
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT k_block, k_used FROM hypothesis_tests")
        assert len(rows) == before > 0 and rows["k_block"].isna().all()
        assert len(wh.sql("SELECT * FROM latest_soft_pairwise_accuracy")) == 0
