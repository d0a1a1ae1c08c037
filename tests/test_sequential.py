"""Sequential Monte-Carlo p-values (MMCTest, Gandy & Hahn 2014): the pure statistics."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from metaeval.analyses import stats
from metaeval.analyses.stats import hypothesis, sequential


@pytest.mark.parametrize("count, n", [(0, 1), (0, 50), (3, 50), (25, 50), (50, 50), (1, 100000), (7, 13)])
@pytest.mark.parametrize("miscoverage", [0.05, 1e-3, 1e-9])
def test_clopper_pearson_equals_scipy(count, n, miscoverage):
    lower, upper = sequential.clopper_pearson(count, n, miscoverage)
    ci = scipy.stats.binomtest(count, n).proportion_ci(1 - miscoverage, method="exact")
    np.testing.assert_allclose([lower, upper], [ci.low, ci.high], rtol=1e-5, atol=1e-11)  # scipy: brentq, xtol ~1e-12
    if 0 < count < n:  # the beta quantiles of the docstring
        assert lower == scipy.stats.beta.ppf(miscoverage / 2, count, n - count + 1)
        assert upper == scipy.stats.beta.ppf(1 - miscoverage / 2, count + 1, n - count)


def test_clopper_pearson_vectorised_and_empty():
    lower, upper = sequential.clopper_pearson([0, 5, 0], [10, 10, 0], 0.01)
    assert lower[0] == 0 and upper[2] == 1 and lower[2] == 0
    assert 0 < lower[1] < 0.5 < upper[1] < 1
    with pytest.raises(ValueError):
        sequential.clopper_pearson(3, 2, 0.1)


def test_spending_sums_to_at_most_the_risk():
    risk = 1e-3
    j = np.arange(0, 10_001)
    eps = sequential.spent(j, risk)
    increments = np.diff(eps)
    assert eps[0] == 0 and (increments > 0).all() and increments.sum() < risk
    np.testing.assert_allclose(increments, risk * sequential.SPENDING_RHO
                               / ((j[1:] + sequential.SPENDING_RHO) * (j[1:] + sequential.SPENDING_RHO - 1)))


def test_look_schedule_is_fixed_and_ends_at_k_max():
    looks = sequential.look_schedule(1000)
    assert looks[0] == sequential.FIRST_LOOK and looks[-1] == 1000 and np.all(np.diff(looks) > 0)
    assert sequential.look_schedule(10) == [10]
    assert sequential.look_schedule(65) == [64, 65]


def _bernoulli_extend(p, seed):
    """extend(tests, stop) drawing Bernoulli(p_i) exceedances (binomial sums of the new draws)."""
    rng = np.random.default_rng(seed)
    drawn = np.zeros(len(p), dtype=np.int64)

    def extend(tests, stop):
        n = stop - drawn[tests]
        drawn[tests] = stop
        return rng.binomial(n, p[tests]), n

    return extend


def _exact(p, alpha, correction):
    return np.where(stats.correct_pvalues(p, correction) <= alpha, sequential.SIGNIFICANT, sequential.NOT_SIGNIFICANT)


#: families of known exact p-values, none on a threshold of its correction
FAMILIES = {
    "holm": np.array([0.0, 0.0, 1e-4, 0.002, 0.003, 0.02, 0.04, 0.2, 0.5, 0.9]),
    "bh": np.array([0.0, 1e-3, 0.004, 0.012, 0.02, 0.06, 0.3, 0.6, 0.8, 1.0]),
    "bonferroni": np.array([0.0, 0.001, 0.003, 0.01, 0.03, 0.3, 0.7, 0.99]),
    "none": np.array([0.01, 0.03, 0.07, 0.2]),
}


@pytest.mark.parametrize("correction", list(FAMILIES))
def test_decisions_equal_the_exact_ones_in_every_repetition(correction):
    p = FAMILIES[correction]
    exact = _exact(p, 0.05, correction)
    for rep in range(40):
        r = sequential.mmctest(_bernoulli_extend(p, rep), len(p), 0.05, correction, 1e-3, 2_000_000)
        decided = r.decision != sequential.UNDECIDED
        assert decided.all(), (rep, r.decision, r.k_used)
        assert (r.decision == exact).all()
        assert (r.lower <= p).all() and (p <= r.upper).all()
        assert (r.k_used >= r.n_valid).all() and (r.count <= r.n_valid).all()
    assert r.k_used.min() < r.k_used.max()  # the clear cases stop early


def test_empirical_error_rate_within_the_bound():
    """p-values just off the Holm thresholds, a large risk: errors happen, at a rate <= risk."""
    alpha, risk = 0.05, 0.2
    p = np.array([0.0, 0.05 / 4 * 0.85, 0.05 / 3 * 1.15, 0.05 / 2 * 0.9, 0.5])
    exact = _exact(p, alpha, "holm")
    errors = decided = 0
    reps = 300
    for rep in range(reps):
        r = sequential.mmctest(_bernoulli_extend(p, 10_000 + rep), len(p), alpha, "holm", risk, 200_000)
        ok = r.decision != sequential.UNDECIDED
        decided += ok.all()
        errors += bool((r.decision[ok] != exact[ok]).any())
    assert errors / reps <= risk
    assert decided > reps / 2


def test_undecided_at_k_max_is_never_significant():
    p = np.array([0.05 / 3, 0.0, 0.9])  # the first sits on its Holm threshold
    r = sequential.mmctest(_bernoulli_extend(p, 0), 3, 0.05, "holm", 1e-3, 5000)
    assert r.decision[0] == sequential.UNDECIDED and r.k_used[0] == 5000
    assert r.decision[2] == sequential.NOT_SIGNIFICANT and r.k_used[2] < 5000


def test_same_seed_same_result():
    p = FAMILIES["holm"]
    a = sequential.mmctest(_bernoulli_extend(p, 7), len(p), 0.05, "holm", 1e-3, 100_000)
    b = sequential.mmctest(_bernoulli_extend(p, 7), len(p), 0.05, "holm", 1e-3, 100_000)
    for field in ("count", "n_valid", "k_used", "decision", "lower", "upper"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_mmctest_checks_its_driver():
    t = sequential.MMCTest(2, 0.05, "holm", 1e-3, 100)
    tests, stop = t.pending()
    with pytest.raises(ValueError):
        t.record([0], [0], [stop])
    with pytest.raises(ValueError):
        sequential.MMCTest(2, 0.05, "holm", 0.0, 100)
    assert sequential.MMCTest(0, 0.05, "holm", 1e-3, 100).pending() is None


def _data(seed, noise=1.0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(8, 12))
    return Z + noise * rng.normal(size=Z.shape), Z + 1.5 * noise * rng.normal(size=Z.shape), Z


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
@pytest.mark.parametrize("level", ["system", "summary"])
def test_range_exceedances_are_the_fixed_tests_resamples(level, alternative):
    X, Y, Z = _data(3)
    k = 300
    perm = stats.permutation_test(X, Y, Z, level, "kendall", k=k, alternative=alternative, seed=5)
    boot = stats.paired_bootstrap_test(X, Y, Z, level, "kendall", k=k, alternative=alternative, seed=5)
    for test, fixed, add_one in (("permutation", perm, True), ("bootstrap", boot, False)):
        parts = [hypothesis.range_exceedances(X, Y, Z, level, "kendall", test, "both", alternative, 5, a, b)
                 for a, b in ((0, 64), (64, 96), (96, 300))]
        count, n_valid = sum(p.count for p in parts), sum(p.n_valid for p in parts)
        assert parts[0].delta == fixed.delta
        assert hypothesis.resampling_pvalue(fixed.delta, count, n_valid, add_one) == fixed.pvalue
        assert parts[-1].conventions["method"] == fixed.conventions["method"]
    assert hypothesis.range_exceedances(X, Y, Z, level, "kendall", start=0, stop=0).n_valid == 0


def test_range_exceedances_of_an_undefined_delta():
    X, Y, Z = _data(0)
    X[:] = 1.0
    r = hypothesis.range_exceedances(X, Y, Z, "system", "pearson", stop=10)
    assert np.isnan(r.delta) and r.undefined.startswith("delta undefined")


# --- compare --sequential ----------------------------------------------------------------------
import json  # noqa: E402

from metaeval import Store  # noqa: E402
from tests.conftest import run_cli  # noqa: E402

COMPARE = ("compare", "--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--coefficient",
           "kendall", "--correction", "holm", "--correction-group", "all")
KEY = ["metric_a", "metric_b", "level", "coefficient"]
VALUES = ["delta", "p_value", "p_adjusted", "significant", "k_used", "k", "risk", "family_size"]


@pytest.fixture()
def demo_db(tmp_path):
    db = tmp_path / "w.duckdb"
    run_cli(db, "demo", "--systems", "8", "--inputs", "10", "--k", "40")
    return db


def _rows(db, where="risk IS NOT NULL"):
    with Store(db, read_only=True) as wh:
        return wh.sql(f"SELECT * FROM latest_hypothesis_tests WHERE {where}").sort_values(KEY).reset_index(drop=True)


def test_sequential_compare_records_decisions_and_k_used(demo_db):
    out = run_cli(demo_db, *COMPARE, "--sequential", "--k-max", "5000")
    assert "sequential (MMCTest)" in out.output
    rows = _rows(demo_db)
    assert len(rows) == 12 and (rows["risk"] == 1e-3).all() and (rows["k"] == 5000).all()
    conv = rows["conventions"].map(json.loads)
    decisions = conv.map(lambda c: c["sequential"]["decision"])
    assert (rows["significant"] == (decisions == "significant")).all()
    assert ((rows["k_used"] >= sequential.FIRST_LOOK) & (rows["k_used"] <= 5000)).all()
    assert rows["k_used"].nunique() > 1   # pairs stop at different rounds
    for c, k_used in zip(conv, rows["k_used"]):
        assert c["k_used"] == k_used and c["sequential"]["risk"] == 1e-3 and c["sequential"]["k_max"] == 5000
        lo, hi = c["sequential"]["p_interval"]
        assert lo <= hi
    assert "up to date" in run_cli(demo_db, *COMPARE, "--sequential", "--k-max", "5000").output


def test_sequential_same_seed_same_rows_whatever_jobs(demo_db, tmp_path):
    run_cli(demo_db, *COMPARE, "--sequential", "--k-max", "3000", "--seed", "4")
    first = _rows(demo_db)
    run_cli(demo_db, *COMPARE, "--sequential", "--k-max", "3000", "--seed", "4", "--force", "--jobs", "2")
    again = _rows(demo_db)
    pd_testing = pytest.importorskip("pandas.testing")
    pd_testing.assert_frame_equal(first[KEY + VALUES], again[KEY + VALUES])
    assert (first["conventions"] == again["conventions"]).all()


def test_sequential_with_k_max_k_and_nothing_decided_equals_fixed_k(demo_db):
    """k_max = 64 (one round) with a Holm level 64 resamples cannot certify (0.02/3 < 1/65; the k
    floor at alpha 0.02 is 49): undecided pairs' resamples are the fixed test's first 64, so
    p_value and p_adjusted equal the fixed k = 64 rows."""
    options = ("--alpha", "0.02", "--seed", "3")
    run_cli(demo_db, *COMPARE, *options, "--k", "64")
    fixed = _rows(demo_db, "risk IS NULL AND k = 64")
    run_cli(demo_db, *COMPARE, *options, "--sequential", "--k-max", "64")
    seq = _rows(demo_db)
    decisions = seq["conventions"].map(lambda c: json.loads(c)["sequential"]["decision"])
    assert set(decisions) <= {"undecided", "not significant"} and (decisions == "undecided").any()
    assert (seq["k_used"] == 64).all() or set(decisions) == {"undecided"}
    undecided = (decisions == "undecided").to_numpy()
    for c in ("delta", "p_value", "p_adjusted"):
        np.testing.assert_array_equal(seq[c].to_numpy()[undecided], fixed[c].to_numpy()[undecided])
    assert not seq["significant"].any()


def test_sequential_options_are_checked(demo_db):
    assert "--k-max and --risk" in run_cli(demo_db, *COMPARE, "--k-max", "100", ok=False).output
    out = run_cli(demo_db, *COMPARE, "--sequential", "--k-block", "10", ok=False)
    assert out.exit_code != 0 and "--k-block" in out.output
    out = run_cli(demo_db, *COMPARE, "--sequential", "--method", "williams", "--coefficient", "pearson", ok=False)
    assert out.exit_code != 0 and "--sequential" in out.output


def test_sequential_and_fixed_rows_are_apart(demo_db):
    run_cli(demo_db, *COMPARE, "--k", "200")
    run_cli(demo_db, *COMPARE, "--sequential", "--k-max", "200")
    with Store(demo_db, read_only=True) as wh:
        rows = wh.sql("SELECT risk, count(*) AS n FROM hypothesis_tests WHERE correction_group = 'all' GROUP BY risk")
    assert sorted(rows["n"]) == [12, 12]   # the sequential run reused no fixed row


def test_schema_3_warehouse_gains_the_risk_column(tmp_path):
    from metaeval import schema
    from metaeval.connection import duckdb_connect

    db = tmp_path / "v3.duckdb"
    run_cli(db, "demo", "--dataset", "d", "--systems", "4", "--inputs", "5", "--k", "40")
    with duckdb_connect(db) as con:  # as a version-3 warehouse was: no risk
        before = con.execute("SELECT count(*) FROM hypothesis_tests").fetchall()[0][0]
        con.execute("ALTER TABLE hypothesis_tests DROP COLUMN risk")
        con.execute("UPDATE schema_info SET value = '3' WHERE key = 'version'")
    assert run_cli(db, "correlate", "--dataset", "d", "--human", "expert.relevance", ok=False).exit_code != 0
    assert f"from schema 3 to {schema.SCHEMA_VERSION}" in run_cli(db, "init").output
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT risk FROM hypothesis_tests")
        assert len(rows) == before > 0 and rows["risk"].isna().all()


def test_sequential_with_several_correction_families(demo_db):
    """--correction-group metric makes one MMCTest per metric: each family's pending pairs are
    looked up in its own list of defined tests (the last family's list was used for all)."""
    grouped = [a if a != "all" else "metric" for a in COMPARE]
    run_cli(demo_db, *grouped, "--sequential", "--k-max", "2000", "--seed", "7")
    with Store(demo_db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE risk IS NOT NULL AND correction_group = 'metric'")
    assert len(rows) == 12 and set(rows["family_size"]) == {3}
    assert ((rows["k_used"] >= sequential.FIRST_LOOK) & (rows["k_used"] <= 2000)).all()
