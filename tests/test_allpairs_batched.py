"""All-pairs sharing (analyses/stats/allpairs.py) gives exactly the per-pair path's numbers.

Every ordered pair of a few small random metrics (NaN cells, ties, a constant column) is tested
and every metric's interval computed, once per pair inside ``allpairs.sharing()`` and once
without it: intervals equal to 1e-12 (they are bit-identical), p-values identical, deltas and
resampled deltas identical (the reverse pair's are 0 - delta_b: +0.0 where the per-pair path
rounds to 0). Then the same through ``evaluate --all-pairs``: the stored rows of both paths.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from metaeval.analyses.stats import allpairs, bootstrap_ci, paired_bootstrap_test, permutation_test

COEFFICIENTS = ("pearson", "spearman", "kendall")
K = 40


@pytest.fixture(scope="module")
def matrices() -> tuple[list[np.ndarray], np.ndarray]:
    rng = np.random.default_rng(37)
    Z = rng.integers(0, 9, (6, 8)) / 4
    metrics = [Z + rng.normal(0, s, Z.shape) for s in (0.3, 0.6, 1.0)]
    metrics.append(np.round(metrics[0] * 2) / 2)          # ties
    metrics[1][0, 3] = metrics[2][4, 1] = np.nan           # missing cells
    Z[2, 5] = np.nan
    metrics[3][:, 6] = 1.0                                 # a constant input
    return metrics, Z


def _same(a, b) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def _all_pairs(metrics, Z, test, level, coefficient, method, alternative):
    return {(i, j): test(metrics[i], metrics[j], Z, level, coefficient, method, k=K, alternative=alternative, seed=3)
            for i, j in itertools.permutations(range(len(metrics)), 2)}


@pytest.mark.parametrize("level", ["system", "summary", "global"])
@pytest.mark.parametrize("method", ["perm-both", "perm-systems", "perm-inputs", "boot-both", "boot-inputs"])
def test_shared_tests_equal_per_pair(matrices, level, method):
    metrics, Z = matrices
    test = permutation_test if method.startswith("perm-") else paired_bootstrap_test
    how = method.split("-")[1]
    for coefficient, alternative in zip(COEFFICIENTS, ("two-sided", "greater", "less")):
        before = _all_pairs(metrics, Z, test, level, coefficient, how, alternative)
        with allpairs.sharing() as shared:
            after = _all_pairs(metrics, Z, test, level, coefficient, how, alternative)
        assert shared.hits > 0
        for pair, r in before.items():
            s = after[pair]
            assert _same(r.pvalue, s.pvalue), (pair, coefficient)
            assert _same(r.delta, s.delta) and np.signbit(r.delta) == np.signbit(s.delta)
            assert _same(r.samples, s.samples), (pair, coefficient)
            assert r.conventions == s.conventions


@pytest.mark.parametrize("level", ["system", "summary"])
def test_shared_intervals_equal_per_metric(matrices, level):
    metrics, Z = matrices
    for coefficient in COEFFICIENTS:
        before = [bootstrap_ci(X, Z, level, coefficient, "both", k=K, seed=3) for X in metrics]
        with allpairs.sharing():
            for i, j in itertools.permutations(range(len(metrics)), 2):   # the tests fill the store first
                paired_bootstrap_test(metrics[i], metrics[j], Z, level, coefficient, "both", k=K, seed=3)
            after = [bootstrap_ci(X, Z, level, coefficient, "both", k=K, seed=3) for X in metrics]
        for r, s in zip(before, after):
            assert abs(r.lower - s.lower) <= 1e-12 and abs(r.upper - s.upper) <= 1e-12
            assert _same(r.samples, s.samples) and r.conventions == s.conventions


def test_per_pair_environment_turns_sharing_off(monkeypatch):
    monkeypatch.setenv(allpairs.ENVIRONMENT, "per-pair")
    with allpairs.sharing() as shared:
        assert shared is None and allpairs.active() is None


def test_evaluate_all_pairs_stores_the_per_pair_rows(tmp_path, monkeypatch):
    """``evaluate --all-pairs`` stores the same rows (values and conventions) shared or per pair;
    with the linear sums (the default: permuted_sums.py, drawn_sums.py) the same tests and
    intervals within 1e-12."""
    import pandas as pd

    from metaeval.core import Store
    from metaeval.runs.metrics import evaluate as ev

    rng = np.random.default_rng(5)
    rows = []
    for s in range(5):
        for i in range(7):
            h = rng.normal()
            rows.append({"system": f"s{s}", "input": f"i{i}", "human": h,
                         **{f"m{m}": h + rng.normal(0, 0.5 + m / 2) for m in range(3)}})
    frame = pd.DataFrame(rows)
    dumps = []
    for mode in ("per-pair", "shared", ""):
        monkeypatch.setenv(allpairs.ENVIRONMENT, mode)
        path = tmp_path / f"w{len(dumps)}.duckdb"
        Store.create(path).close()
        with Store(path) as wh:
            ev.evaluate(wh, "d", "human", [frame], all_pairs=True, k=40, seed=2,
                        coefficients=("pearson", "kendall"))
            dumps.append({t: wh.sql(f"SELECT * FROM {t}").drop(columns=["run_id", "result_id"], errors="ignore")
                          .sort_values(["metric_a", "metric_b", "level", "coefficient"] if t == "hypothesis_tests"
                                       else ["metric", "level", "coefficient"]).reset_index(drop=True)
                          for t in ("hypothesis_tests", "confidence_intervals")})
    for table, before in dumps[0].items():
        pd.testing.assert_frame_equal(before, dumps[1][table], check_exact=True)
        pd.testing.assert_frame_equal(before, dumps[2][table], check_exact=False, rtol=0, atol=1e-12)
        if table == "hypothesis_tests":
            pd.testing.assert_series_equal(before["p_value"], dumps[2][table]["p_value"], check_exact=True)


@pytest.mark.parametrize("n_systems", [2, 7, 24])
def test_permuted_ranks_are_rankdata_of_the_permuted_columns(n_systems):
    """Spearman's permuted ranks from the rank tables (batched._permuted_ranks) equal scipy's
    average ranks of where(mask, Y, X) and where(mask, X, Y), ties within and across X and Y."""
    import scipy.stats

    from metaeval.analyses.stats import batched

    rng = np.random.default_rng(n_systems)
    X, Y = rng.integers(0, 4, (n_systems, 11)).astype(float), rng.integers(0, 4, (n_systems, 11)).astype(float)
    Y[:, 0] = X[:, 0]
    mask = rng.integers(0, 2, (30, n_systems, 11)).astype(bool)
    G, sums = batched._rank_tables(X, Y)
    rx, ry = batched._permuted_ranks(G, sums, mask)
    for r, permuted in ((rx, np.where(mask, Y, X)), (ry, np.where(mask, X, Y))):
        expected = scipy.stats.rankdata(permuted, axis=1)   # (c, N, M), ranks over the systems
        assert np.array_equal(r, expected.transpose(1, 0, 2))


def _evaluation_rows(wh) -> dict:
    return {t: wh.sql(f"SELECT * FROM {t}").drop(columns=["run_id", "result_id"], errors="ignore")
            .sort_values(["metric_a", "metric_b", "level", "coefficient"] if t == "hypothesis_tests"
                         else ["metric", "level", "coefficient"]).reset_index(drop=True)
            for t in ("hypothesis_tests", "confidence_intervals")}


def test_all_pairs_on_workers_in_blocks_equal_one_process(tmp_path, monkeypatch):
    """``evaluate --all-pairs`` on a Dask LocalCluster (one in-process worker, blocks of 3 pairs:
    runs/metrics/pair_blocks.py) stores bit for bit the rows of the run in one process, and each block's
    permutation tests are batched together on the worker."""
    import pandas as pd

    distributed = pytest.importorskip("distributed")
    from metaeval.core import Store
    from metaeval.runs.metrics import evaluate as ev
    from metaeval.runs.engine import executors
    from metaeval.runs.metrics import pair_blocks

    rng = np.random.default_rng(11)
    frame = pd.DataFrame([{"system": f"s{s}", "input": f"i{i}", "human": (h := rng.normal()),
                           **{f"m{m}": np.round(h + rng.normal(0, 0.4 + m / 3), 1 if m % 2 else 6) for m in range(5)}}
                          for s in range(6) for i in range(8)])
    monkeypatch.setenv(allpairs.ENVIRONMENT, "")
    monkeypatch.setattr(pair_blocks, "PAIRS_PER_BLOCK", 3)
    from metaeval.analyses.stats import permuted_sums

    batches, evaluator = [], permuted_sums.pairs_evaluator

    def counted(metrics, Z, level, coefficient, pairs=None):
        batches.append(len(metrics) * (len(metrics) - 1) // 2 if pairs is None else len(pairs))
        return evaluator(metrics, Z, level, coefficient, pairs)

    monkeypatch.setattr(permuted_sums, "pairs_evaluator", counted)
    dumps = []
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address=":0") as cluster:
        for scheduler in (None, cluster.scheduler_address):
            path = tmp_path / f"w{len(dumps)}.duckdb"
            Store.create(path).close()
            with Store(path) as wh:
                wh.executor = executors.Executor(scheduler)
                ev.evaluate(wh, "d", "human", [frame], all_pairs=True, k=40, seed=2)
                dumps.append(_evaluation_rows(wh))
            if scheduler is None:
                assert batches.count(10) == 6   # one process: every pair at once, per level and coefficient
                batches.clear()
    assert len(dumps[0]["hypothesis_tests"]) == 20 * 2 * 3 and len(dumps[0]["confidence_intervals"]) == 5 * 2 * 3
    for table, before in dumps[0].items():
        pd.testing.assert_frame_equal(before, dumps[1][table], check_exact=True)
    assert max(batches) == 3 and batches.count(3) >= 12   # on the worker: blocks of 3 pairs (10 = 3 + 3 + 3 + 1)
