"""Every row of docs/guides/mt.md's "mt-metrics-eval and this project" table, checked: the
project's function or command and mt-metrics-eval's (restated in tests/anchors/mtme_reference.py)
run on the same data and reach the same conclusions -- values, significance, clusters."""

from __future__ import annotations

import csv
import json
from functools import partial

import numpy as np
import pytest

from metaeval.analyses import ranking, stats
from metaeval.analyses.stats import resampling
from tests.anchors import mtme_reference as ref
from tests.conftest import run_cli

LEVEL_AVERAGE = {"global": "none", "summary": "item"}   # the table's level rows
VARIANTS = {"b": "kendall", "c": "kendall-c", "23": "kendall-23", "acc23": "acc-23"}


def _packed(A: np.ndarray) -> list:
    """A matrix (systems x segments) as mt-metrics-eval's packed system-major vector, NaN -> None."""
    return [None if np.isnan(v) else float(v) for v in A.ravel()]


def _task(seed: int, ties: bool = False, n_sys: int = 7, n_seg: int = 9):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n_sys, n_seg))
    X = Z + rng.normal(scale=1.0, size=Z.shape)
    if ties:
        X, Z = np.round(X), np.round(Z * 2) / 2
    if n_seg > 2:
        Z[1, 2] = Z[4, 0] = np.nan  # missing gold: mt-metrics-eval filters these (None)
    return X, Z


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("ties", [False, True])
def test_kendall_variants_and_levels_equal_mtme_average_correlation(seed, ties):
    """Rows KendallVariants(variant, epsilon) and average_by 'none' / 'item': the same value at
    every level, so the same ordering of metrics."""
    X, Z = _task(seed, ties)
    gold, metric = _packed(Z), _packed(X)
    for variant, name in VARIANTS.items():
        for eps in (0.0, 0.3) if variant != "c" else (0.0,):
            coef = name if eps == 0 else f"{name}[eps={eps}]"
            fcn = partial(ref.kendall_variants, variant=variant, epsilon=eps)
            for level, average_by in LEVEL_AVERAGE.items():
                want = ref.average_correlation(fcn, gold, metric, X.shape[0], average_by)[0]
                assert stats.correlate(X, Z, level, coef) == pytest.approx(want, abs=1e-12), (coef, level)
            sys_x, sys_z = np.nanmean(X, axis=1), np.nanmean(Z, axis=1)   # system scores, average_by='none'
            want = ref.average_correlation(fcn, list(sys_z), list(sys_x), len(sys_x), "none")[0]
            assert stats.correlate(X, Z, "system", coef) == pytest.approx(want, abs=1e-12), (coef, "system")
    for level, average_by in LEVEL_AVERAGE.items():
        want = ref.average_correlation(ref.pearson, gold, metric, X.shape[0], average_by)[0]
        assert stats.correlate(X, Z, level, "pearson") == pytest.approx(want, abs=1e-12)


def test_agreement_equals_system_pairwise_accuracy():
    """Row stats.Agreement: the share of system pairs ordered alike, ties (sign 0) included."""
    for seed in range(5):
        rng = np.random.default_rng(seed)
        x, z = rng.integers(0, 5, 9).astype(float), rng.integers(0, 4, 9).astype(float)
        agree, pairs = ref.agreement(list(z), list(x))
        got = ranking.pairwise_accuracy(x[:, None], z[:, None], "system")
        assert (got.agree, got.pairs) == (agree, pairs)


def _mtme_draw(masks: np.ndarray, order: str):
    """mt-metrics-eval's w1 from the project's swap masks (True: swapped, so w1 = 0), in the
    packed order of its averaging (system-major for 'none', segment-major for 'item')."""
    it = iter(masks)

    def draw(n):
        mask = np.broadcast_to(next(it), masks.shape[1:])
        flat = (mask.T if order == "item" else mask).ravel()
        assert flat.size == n
        return (~flat).astype(int)
    return draw


@pytest.mark.parametrize(("level", "method", "k_block", "coefficient"), [
    ("global", "both", None, "pearson"), ("summary", "both", None, "pearson"), ("summary", "both", 50, "pearson"),
    ("system", "systems", None, "pearson"), ("system", "systems", 50, "pearson"),
    ("summary", "both", None, "acc-23[eps=0.3]"), ("global", "both", None, "kendall-23[eps=0.3]")])
def test_permutation_counts_equal_permutation_sig_diff_with_the_same_swaps(level, method, k_block, coefficient):
    """Row PermutationSigDiff(k, block_size): fed the same swaps, mt-metrics-eval counts the same
    resamples as extreme and stops early at the same resample; only the p formula differs (its
    count / i, here (1 + count) / (1 + i)). System level: per-system scores (one input). Row
    PermutationSigDiff(corr_fcn=KendallVariants, epsilon=E): E applies to the z-scores in both."""
    k, seed = 300, 5
    X, Z = _task(1, n_sys=8, n_seg=1 if level == "system" else 9)
    Z = np.where(np.isnan(Z), 0.0, Z)
    Y = Z + np.random.default_rng(9).normal(scale=1.5, size=Z.shape)
    if k_block:   # a clear difference, so that the test stops early: below early_min, or above early_max
        Y = np.random.default_rng(9).normal(size=Z.shape)
        X, Y = (Y, X) if level == "system" else (X, Y)
    got = stats.permutation_test(X, Y, Z, level, coefficient, method, k, "greater", seed, k_block=k_block)
    fcn = ref.quick_pearson if coefficient == "pearson" else partial(
        ref.kendall_variants, variant="acc23" if coefficient.startswith("acc") else "23", epsilon=0.3)
    masks = resampling.draw_range(np.random.SeedSequence(seed), 0, k, partial(
        resampling.permutation_masks, n_systems=X.shape[0], n_inputs=X.shape[1], method=method))[0]
    average_by = "item" if level == "summary" else "none"
    params = ref.PermutationSigDiffParams(block_size=k_block or k)
    p, delta, used = ref.permutation_sig_diff(_packed(Z), _packed(Y), _packed(X), X.shape[0], fcn, average_by, k, params, draw=_mtme_draw(masks, average_by))
    assert got.delta == pytest.approx(delta, abs=1e-12)
    assert got.conventions["k_used"] == used and (used == 50 if k_block else used == k)
    assert round(got.pvalue * (1 + used)) - 1 == round(p * used)


def test_williams_equals_williams_sig_diff():
    """Row WilliamsSigDiff (Pearson, system scores): the same p one-sided (for the better metric
    against the worse) and two-sided, so the same significance."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        z = rng.normal(size=12)
        x, y = z + rng.normal(scale=0.4, size=12), z + rng.normal(scale=1.2, size=12)
        p1, r1, r2 = ref.williams_sig_diff(z, x, y)
        if r1 < r2:
            x, y = y, x
        one = stats.williams_test(x[:, None], y[:, None], z[:, None], "system", "pearson", "greater")
        two = stats.williams_test(x[:, None], y[:, None], z[:, None], "system", "pearson", "two-sided")
        assert one.pvalue == pytest.approx(p1, rel=1e-9)
        assert two.pvalue == pytest.approx(ref.williams_sig_diff(z, x, y, one_sided=False)[0], rel=1e-9)
        assert (one.pvalue <= 0.05) == (p1 <= 0.05)


def _system_task(path, seed: int = 7, n_sys: int = 10, n_metrics: int = 6):
    """A WMT-shaped system-level task (per-system scores: no input column), seeded: metrics are
    the systems' quality plus noise of growing size."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=n_sys)
    gold = quality + rng.normal(scale=0.1, size=n_sys)
    metrics = {f"m{j}": quality + rng.normal(scale=s, size=n_sys)
               for j, s in enumerate(np.linspace(0.1, 1.5, n_metrics))}
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "human", *metrics])
        for i in range(n_sys):
            w.writerow([f"s{i}", repr(float(gold[i])), *(repr(float(v[i])) for v in metrics.values())])
    return gold, metrics


def test_perm_systems_clusters_equal_mtme_ranks(tmp_path):
    """Row PermutationSigDiff at the system level + AssignRanks: `compare --method perm-systems
    --alternative greater --correction none` on per-system scores, then `winners` with the same
    options, gives mt-metrics-eval's ranks (k = 1000, p <= 0.05) -- under several of its seeds."""
    gold, metrics = _system_task(tmp_path / "systems.csv")
    db = tmp_path / "w.duckdb"
    run_cli(db, "ingest", "table", tmp_path / "systems.csv", "--dataset", "wmt", "--human", "human")
    opts = ["--dataset", "wmt", "--human", "human", "--level", "system", "--coefficient", "pearson",
            "--method", "perm-systems", "--alternative", "greater", "--correction", "none"]
    run_cli(db, "compare", *opts, "--k", "1000")
    out = run_cli(db, "winners", *opts, "--format", "json").output
    got = {r["metric"]: r["cluster"] for r in json.loads(out[out.index("["):])}
    assert len(set(got.values())) > 1            # a task with something to separate
    for mtme_seed in (0, 1):
        np.random.seed(mtme_seed)
        want = ref.metric_ranks(list(gold), {m: list(v) for m, v in metrics.items()}, len(gold),
                                corr_fcn=ref.quick_pearson, k=1000)
        assert got == {m: rank for m, (_, rank) in want.items()}


@pytest.mark.parametrize("variant", ["acc23", "23"])
@pytest.mark.parametrize("ties", [False, True])
def test_tie_calibration_equals_kendall_with_ties_opt(variant, ties):
    """Row KendallWithTiesOpt(sample_rate=1.0): the same calibrated value and threshold at the
    global ('none'), summary ('item') and system (system scores) levels."""
    name = {"acc23": "acc-23", "23": "kendall-23"}[variant]
    for seed in range(3):
        X, Z = _task(seed, ties, n_sys=6, n_seg=5)
        for level, average_by in LEVEL_AVERAGE.items():
            got = stats.tie_calibration(X, Z, level, name)
            want, eps = ref.kendall_with_ties_opt(_packed(Z), _packed(X), variant, X.shape[0], average_by)
            assert got.value == pytest.approx(want, abs=1e-12) and got.epsilon == pytest.approx(eps, abs=1e-12)
        sx, sz = np.nanmean(X, axis=1), np.nanmean(Z, axis=1)
        got = stats.tie_calibration(sx[:, None], sz[:, None], "global", name)
        want, eps = ref.kendall_with_ties_opt(list(sz), list(sx), variant, len(sx), "none")
        assert got.value == pytest.approx(want, abs=1e-12) and got.epsilon == pytest.approx(eps, abs=1e-12)


def test_permutation_with_tie_calibration_equals_permutation_sig_diff_ties_opt():
    """Row PermutationSigDiff(corr_fcn=KendallWithTiesOpt): fed the same swaps, the same count of
    resamples as extreme (each resample re-calibrated in both), at the global level."""
    k, seed = 30, 2
    X, Z = _task(3, n_sys=5, n_seg=5)
    Z = np.where(np.isnan(Z), 0.0, np.round(Z))
    Y = Z + np.random.default_rng(4).normal(scale=2.0, size=Z.shape)
    got = stats.permutation_test(X, Y, Z, "global", "acc-23[tie-calibrated]", "both", k, "greater", seed)
    masks = resampling.draw_range(np.random.SeedSequence(seed), 0, k, partial(
        resampling.permutation_masks, n_systems=5, n_inputs=5, method="both"))[0]
    p, delta, _ = ref.permutation_sig_diff_ties_opt(_packed(Z), _packed(Y), _packed(X), 5, "acc23", "none", k,
                                                    draw=_mtme_draw(masks, "none"))
    assert got.delta == pytest.approx(delta, abs=1e-12)
    assert round(got.pvalue * (1 + k)) - 1 == round(p * k)
