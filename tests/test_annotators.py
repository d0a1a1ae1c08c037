"""Annotator agreement and the human ceiling (issue 20, items 1-2), against independent
computations: Krippendorff's alpha from its definition, leave-one-out with scipy loops."""

from __future__ import annotations

import json
import re
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from metaeval import Store
from metaeval.analyses import annotators as an
from tests.conftest import read_jsonl, run_cli, shared

SCIPY = {"pearson": lambda x, z: scipy.stats.pearsonr(x, z)[0],
         "spearman": lambda x, z: scipy.stats.spearmanr(x, z)[0],
         "kendall": lambda x, z: scipy.stats.kendalltau(x, z)[0]}


def _panel(seed=0, n=8, m=12, k=3, noise=1.0, missing=0.0):
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=(n, 1)) + rng.normal(size=(n, m))
    A = np.round(truth[:, :, None] + noise * rng.normal(size=(n, m, k)), 1)
    A[rng.random(A.shape) < missing] = np.nan
    return A


def _alpha_interval(A):
    """Krippendorff's interval alpha from the definition: 1 - D_o / D_e over pairable values."""
    units = [u[~np.isnan(u)] for u in A.reshape(-1, A.shape[2])]
    units = [u for u in units if u.size >= 2]
    values = np.concatenate(units)
    n = values.size
    d_o = sum(sum((a - b) ** 2 for i, a in enumerate(u) for j, b in enumerate(u) if i != j) / (u.size - 1)
              for u in units) / n
    d_e = sum((a - b) ** 2 for i, a in enumerate(values) for j, b in enumerate(values) if i != j) / (n * (n - 1))
    return 1 - d_o / d_e


def _level(x, z, level, coefficient):
    """Corr at a level with scipy, NaN cells dropped pairwise; summary: mean of defined inputs."""
    f = SCIPY[coefficient]

    def one(a, b):
        ok = ~np.isnan(a) & ~np.isnan(b)
        if ok.sum() < 2 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
            return np.nan
        return f(a[ok], b[ok])

    if level == "system":
        return one(np.nanmean(x, axis=1), np.nanmean(z, axis=1))
    if level == "global":
        return one(x.ravel(), z.ravel())
    r = np.array([one(x[:, j], z[:, j]) for j in range(x.shape[1])])
    return np.nanmean(r)


def _loo(A, level, coefficient):
    per = []
    for a in range(A.shape[2]):
        others = np.delete(A, a, axis=2)
        with np.errstate(all="ignore"), __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("ignore")
            mean_others = np.nanmean(others, axis=2)
        per.append(_level(A[:, :, a], mean_others, level, coefficient))
    return np.nanmean(per), per


@pytest.mark.parametrize("missing", [0.0, 0.2])
def test_krippendorff_alpha_equals_its_definition(missing):
    A = _panel(1, missing=missing)
    assert an.krippendorff_alpha(A, "interval") == pytest.approx(_alpha_interval(A), abs=1e-10)
    # identity-free: shuffling each cell's annotators changes nothing
    rng = np.random.default_rng(2)
    shuffled = np.take_along_axis(A, rng.random(A.shape).argsort(axis=2), axis=2)
    for variant in an.KRIPPENDORFF_LEVELS:
        assert an.krippendorff_alpha(shuffled, variant) == pytest.approx(an.krippendorff_alpha(A, variant), abs=1e-12)


def test_alpha_is_undefined_without_disagreement_to_expect():
    A = np.full((3, 4, 2), 2.0)
    assert np.isnan(an.krippendorff_alpha(A))
    single = _panel(0, k=1)
    assert np.isnan(an.krippendorff_alpha(single))


@pytest.mark.parametrize("level", ["system", "summary", "global"])
@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
@pytest.mark.parametrize("missing", [0.0, 0.15])
def test_leave_one_out_equals_a_scipy_loop(level, coefficient, missing):
    A = _panel(3, missing=missing)
    expected, per = _loo(A, level, coefficient)
    got = an.leave_one_out(A, level, coefficient)
    assert got.estimate == pytest.approx(expected, abs=1e-10)
    np.testing.assert_allclose(got.per_annotator, per, atol=1e-10)


@pytest.mark.parametrize("level", ["system", "summary"])
def test_pairwise_correlation_equals_a_scipy_loop(level):
    A = _panel(4, k=4, missing=0.1)
    pairs = [_level(A[:, :, a], A[:, :, b], level, "kendall") for a, b in combinations(range(4), 2)]
    assert an.pairwise_correlation(A, level, "kendall") == pytest.approx(np.nanmean(pairs), abs=1e-10)


def test_identical_annotators_give_a_ceiling_of_one():
    A = np.repeat(_panel(5, k=1), 3, axis=2)
    loo = an.leave_one_out(A, "system", "pearson", k=200, seed=0)
    assert loo.estimate == pytest.approx(1.0) and loo.lower == pytest.approx(1.0) and loo.upper == pytest.approx(1.0)
    assert an.split_half(A, "summary", "pearson", splits=10).estimate == pytest.approx(1.0)


def test_split_half_is_near_zero_for_unrelated_annotators_and_seeded():
    rng = np.random.default_rng(6)
    A = rng.normal(size=(40, 60, 4))
    half = an.split_half(A, "global", "pearson", splits=20, seed=1)
    assert abs(half.estimate) < 0.1
    again = an.split_half(A, "global", "pearson", splits=20, seed=1)
    np.testing.assert_array_equal(half.samples, again.samples)
    # with two annotators per cell each split puts one in each half: r is Corr(A_0, A_1) up to
    # the swaps, and the Spearman-Brown step is 2r / (1 + r) of each split
    B = _panel(7, k=2)
    h = an.split_half(B, "global", "pearson", splits=5, seed=0)
    r = np.corrcoef(B[:, :, 0].ravel(), B[:, :, 1].ravel())[0, 1]
    assert h.estimate == pytest.approx(2 * r / (1 + r), abs=0.05)


def test_leave_one_out_interval_is_seeded_and_contains_the_estimate():
    A = _panel(8, missing=0.1)
    one = an.leave_one_out(A, "summary", "kendall", k=300, seed=4)
    two = an.leave_one_out(A, "summary", "kendall", k=300, seed=4)
    np.testing.assert_array_equal(one.samples, two.samples)
    assert one.lower <= one.estimate <= one.upper
    # one resample by hand: the mean over annotators of the level correlation on the sub-tensor
    # (the draws of the project's resample stream, as bootstrap_ci makes them for this seed)
    from functools import partial

    from metaeval.analyses.stats import resampling

    draw = partial(resampling.bootstrap_indices, n_systems=A.shape[0], n_inputs=A.shape[1], method="both")
    rows, cols = resampling.ResampleStream(np.random.SeedSequence(4), draw).take(0, 3)
    for b in range(3):
        sub = A[rows[b]][:, cols[b]]
        assert one.samples[b] == pytest.approx(_loo(sub, "summary", "kendall")[0], abs=1e-10)


def test_a_single_annotator_has_no_leave_one_out():
    with pytest.raises(ValueError, match="at least two annotators"):
        an.leave_one_out(_panel(0, k=1), "system")


# --- persisted: `metaeval annotators` --------------------------------------------------------------
def _ingest_panel(db, tmp_path, A, name="h"):
    lines = ["system,input,measure,value,annotator,kind"]
    for i, j, a in zip(*np.nonzero(~np.isnan(A)), strict=True):
        lines.append(f"S{i},D{j},{name},{A[i, j, a]},{['ann', 'bob', 'cy'][a]},human")
    (tmp_path / "h.csv").write_text("\n".join(lines) + "\n")
    run_cli(db, "ingest", "table", tmp_path / "h.csv", "--dataset", "p")


def test_annotators_command_persists_and_reuses(db, tmp_path):
    A = _panel(9, missing=0.1)
    _ingest_panel(db, tmp_path, A)
    out = run_cli(db, "annotators", "--dataset", "p", "--k", "50", "--splits", "5").output
    assert "run 1" in out and "identity-free" in out
    again = run_cli(db, "annotators", "--dataset", "p", "--k", "50", "--splits", "5").output
    assert "up to date; nothing computed" in again
    with Store(db, read_only=True) as wh:
        ann = wh.annotations("p", "h")
        assert ann.annotators == ("ann", "bob", "cy") and not ann.positional
        m = wh.matrix("p", "h")
        assert (ann.systems, ann.inputs) == (m.systems, m.inputs)
        np.testing.assert_allclose(an.cell_means(ann.values), m.values)
        ceiling = wh.sql("SELECT * FROM latest_human_ceiling WHERE estimator = 'leave-one-out'")
        agreement = wh.sql("SELECT * FROM latest_annotator_agreement")
        runs = wh.sql("SELECT * FROM analysis_runs WHERE command = 'annotators'")
    assert len(ceiling) == 9 and len(runs) == 1 and runs["status"].tolist() == ["finished"]
    row = ceiling[(ceiling.level == "system") & (ceiling.coefficient == "kendall")].iloc[0]
    assert row.value == pytest.approx(_loo(ann.values, "system", "kendall")[0], abs=1e-10)
    assert row.lower <= row.value <= row.upper and json.loads(row.conventions)["k"] == 50
    alpha = agreement[(agreement.statistic == "krippendorff-alpha") & (agreement.variant == "interval")].iloc[0]
    assert alpha.value == pytest.approx(_alpha_interval(ann.values), abs=1e-10)
    assert alpha.identity_free and not agreement[agreement.statistic == "pairwise-correlation"].identity_free.any()


def test_python_refuses_what_the_command_line_refuses_and_gets_its_rows(db, tmp_path):
    """wh.annotators: splits < 1 a WarehouseError naming it (the command line: click's range),
    nothing written; the rows of a --where subset are that subset's (the command's), carrying
    each human's run line."""
    from metaeval.errors import WarehouseError
    from metaeval.runs import Warehouse
    from metaeval.runs.engine.family_present import run_of

    A = _panel(5, missing=0.1)
    _ingest_panel(db, tmp_path, A)
    refused = run_cli(db, "annotators", "--dataset", "p", "--splits", "0", ok=False)
    assert refused.exit_code == 2 and "--splits" in refused.output
    with Warehouse(db) as wh:
        for bad in (0, -3, 1.5, True):
            with pytest.raises(WarehouseError, match=f"splits={bad!r} must be an integer >= 1"):
                wh.annotators("p", k=50, splits=bad)
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"].iloc[0] == 0
    printed = json.loads(run_cli(db, "annotators", "--dataset", "p", "--k", "50", "--splits", "5", "--format",
                                 "json").stdout)
    with Warehouse(db) as wh:
        rows = wh.annotators("p", k=50, splits=5)
    assert run_of(rows["annotator_agreement"])["lines"] == ["h: up to date; nothing computed"]
    assert sorted(r["result_id"] for r in printed["annotator_agreement"]) == \
        sorted(rows["annotator_agreement"]["result_id"])
    assert sorted(r["result_id"] for r in printed["human_ceiling"]) == sorted(rows["human_ceiling"]["result_id"])
    (tmp_path / "attributes.csv").write_text("input,attribute,value\n" + "".join(
        f"D{j},half,{'a' if j < 6 else 'b'}\n" for j in range(A.shape[1])))
    run_cli(db, "ingest", "attributes", tmp_path / "attributes.csv", "--dataset", "p")
    where = json.loads(run_cli(db, "annotators", "--dataset", "p", "--k", "50", "--splits", "5", "--where", "half=a",
                               "--format", "json").stdout)
    with Warehouse(db) as wh:
        subset = wh.annotators("p", k=50, splits=5, where=["half=a"])
    assert set(subset["human_ceiling"]["subset"]) == {"half=a"}
    assert sorted(r["result_id"] for r in where["human_ceiling"]) == sorted(subset["human_ceiling"]["result_id"])


def test_summeval_expert_agreement_and_ceiling(tmp_path):
    """The issue's check: alpha of each expert dimension equals the krippendorff package on the
    lists as released, and the leave-one-out ceiling of expert.relevance equals scipy on them."""
    import krippendorff

    path = shared("summeval", "relevance.jsonl")
    db = tmp_path / "s.duckdb"
    run_cli(db, "ingest", "sacrerouge", path, "--dataset", "summeval", "--human", "expert.*", "--human", "turker.*")
    run_cli(db, "annotators", "--dataset", "summeval", "--human", "expert.*", "--k", "100", "--splits", "5")
    objects = read_jsonl(path)
    systems = sorted({o["summarizer_id"] for o in objects})
    inputs = sorted({o["instance_id"] for o in objects})
    with Store(db, read_only=True) as wh:
        agreement = wh.sql("SELECT * FROM latest_annotator_agreement WHERE statistic = 'krippendorff-alpha'")
        ceiling = wh.sql("SELECT * FROM latest_human_ceiling WHERE human = 'expert.relevance' "
                         "AND estimator = 'leave-one-out'")
    for dim in ("coherence", "consistency", "fluency", "relevance"):
        lists = np.array([o["metrics"]["expert"][dim] for o in objects], dtype=float)      # units x 3
        for variant in ("interval", "ordinal"):
            stored = agreement[(agreement.human == f"expert.{dim}") & (agreement.variant == variant)].value.item()
            assert stored == pytest.approx(krippendorff.alpha(reliability_data=lists.T,
                                                              level_of_measurement=variant), abs=1e-10)
    A = np.full((len(systems), len(inputs), 3), np.nan)
    for o in objects:
        A[systems.index(o["summarizer_id"]), inputs.index(o["instance_id"])] = o["metrics"]["expert"]["relevance"]
    for r in ceiling.itertuples():
        assert r.value == pytest.approx(_loo(A, r.level, r.coefficient)[0], abs=1e-10), (r.level, r.coefficient)
    system_kendall = ceiling[(ceiling.level == "system") & (ceiling.coefficient == "kendall")].value.item()
    assert system_kendall == pytest.approx(0.77, abs=0.01)


# --- item 3: annotator-aware intervals --------------------------------------------------------------
@pytest.mark.parametrize("level", ["system", "summary", "global"])
@pytest.mark.parametrize("coefficient", ["pearson", "kendall"])
@pytest.mark.parametrize("method", ["both", "inputs"])
@pytest.mark.parametrize("how", ["cells", "panel"])
def test_identical_annotators_give_plain_boot_both(level, coefficient, method, how):
    from metaeval.analyses import bootstrap_ci

    A = np.repeat(_panel(10, k=1), 3, axis=2)
    X = A[:, :, 0] + np.random.default_rng(11).normal(size=A.shape[:2])
    plain = bootstrap_ci(X, an.cell_means(A), level, coefficient, method, k=300, seed=5)
    aware = an.annotator_bootstrap_ci(X, A, level, coefficient, method, k=300, seed=5, annotators=how)
    np.testing.assert_allclose(aware.samples, plain.samples, atol=1e-12, equal_nan=True)
    assert (aware.lower, aware.upper) == pytest.approx((plain.lower, plain.upper), abs=1e-12)


def test_one_resample_by_hand():
    from functools import partial

    from metaeval.analyses.stats import resampling

    A = _panel(12, missing=0.2)
    X = an.cell_means(A) + np.random.default_rng(13).normal(size=A.shape[:2])
    got = an.annotator_bootstrap_ci(X, A, "summary", "spearman", k=4, seed=9, annotators="cells")
    seq = np.random.SeedSequence(9)
    draw = partial(resampling.bootstrap_indices, n_systems=A.shape[0], n_inputs=A.shape[1], method="both")
    rows, cols = resampling.ResampleStream(seq, draw).take(0, 4)
    ann = np.random.SeedSequence(9, spawn_key=(an.ANNOTATOR_STREAM,))
    (u,) = resampling.ResampleStream(ann, partial(an._cell_draws, shape=A.shape)).take(0, 4)
    for b in range(4):
        Z = np.full(A.shape[:2], np.nan)
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                vals = A[i, j][~np.isnan(A[i, j])]
                if vals.size:
                    Z[i, j] = np.mean([vals[int(u[b, i, j, s] * vals.size)] for s in range(vals.size)])
        expected = _level(X[rows[b]][:, cols[b]], Z[rows[b]][:, cols[b]], "summary", "spearman")
        assert got.samples[b] == pytest.approx(expected, abs=1e-10)


def test_annotation_noise_never_narrows_the_interval_on_average():
    widths = {"plain": [], "cells": []}
    from metaeval.analyses import bootstrap_ci

    for seed in range(8):
        A = _panel(100 + seed, noise=2.0)
        X = np.nanmean(A, axis=2) + np.random.default_rng(seed).normal(size=A.shape[:2])
        plain = bootstrap_ci(X, an.cell_means(A), "system", "pearson", k=300, seed=seed)
        aware = an.annotator_bootstrap_ci(X, A, "system", "pearson", k=300, seed=seed)
        widths["plain"].append(plain.upper - plain.lower)
        widths["cells"].append(aware.upper - aware.lower)
    assert np.mean(widths["cells"]) >= np.mean(widths["plain"])


# --- item 5: close pairs (delta bins) ------------------------------------------------------------------
def test_accuracy_by_delta_equals_a_pairs_loop():
    from metaeval.analyses.close_pairs import accuracy_by_delta

    rng = np.random.default_rng(20)
    Z = np.round(rng.normal(size=(12, 30)), 1)
    X = Z + rng.normal(scale=0.8, size=Z.shape)
    X[0, :5] = np.nan
    got = accuracy_by_delta(X, Z, bins=3)
    xm, zm = np.nanmean(X, axis=1), np.nanmean(Z, axis=1)
    pairs = [(i, k) for i in range(12) for k in range(i + 1, 12)]
    dz = np.array([abs(zm[i] - zm[k]) for i, k in pairs])
    edges = np.quantile(dz, [0, 1 / 3, 2 / 3, 1])
    for b in range(3):
        inside = [p for p, d in zip(pairs, dz, strict=True)
                  if (d <= edges[b + 1]) and (b == 0 or d > edges[b])]
        s = [(np.sign(xm[i] - xm[k]), np.sign(zm[i] - zm[k])) for i, k in inside]
        assert got.pairs[b] == len(inside)
        assert got.accuracy[b] == pytest.approx(np.mean([a == c for a, c in s]), abs=1e-12)
        assert got.kendall[b] == pytest.approx(np.mean([a * c for a, c in s]), abs=1e-12)
    assert got.pairs.sum() == 66
    # one bin: the plain pairwise accuracy
    from metaeval.analyses.ranking import pairwise_accuracy

    assert accuracy_by_delta(X, Z, bins=1).accuracy[0] == pytest.approx(pairwise_accuracy(X, Z).accuracy)


def test_a_perfect_metric_is_right_in_every_bin_and_bad_bins_are_rejected():
    from metaeval.analyses.close_pairs import accuracy_by_delta

    Z = np.random.default_rng(21).normal(size=(10, 5))
    got = accuracy_by_delta(2 * Z + 1, Z, bins=4)
    np.testing.assert_array_equal(got.accuracy, 1.0)
    np.testing.assert_array_equal(got.kendall, 1.0)
    with pytest.raises(ValueError, match="bins"):
        accuracy_by_delta(Z, Z, bins=0)


def test_ci_resample_annotators_is_persisted_and_reused(db, tmp_path):
    A = _panel(30, missing=0.1)
    _ingest_panel(db, tmp_path, A)
    X = an.cell_means(A) + np.random.default_rng(31).normal(size=A.shape[:2])
    lines = ["system,input,measure,value"] + [f"S{i},D{j},m,{float(X[i, j])!r}" for i in range(X.shape[0])
                                               for j in range(X.shape[1])]
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    run_cli(db, "ingest", "table", tmp_path / "m.csv", "--dataset", "p")
    base = ["ci", "--dataset", "p", "--human", "h", "--level", "system", "--coefficient", "kendall", "--k", "200"]
    run_cli(db, *base)
    run_cli(db, *base, "--resample-annotators", "cells")
    again = run_cli(db, *base, "--resample-annotators", "cells").output
    assert "nothing computed" in again
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM confidence_intervals ORDER BY result_id")
        Z = wh.matrix("p", "h").values
        Xw = wh.matrix("p", "m").values
        ann = wh.annotations("p", "h").values
    plain, aware = rows.iloc[0], rows.iloc[1]
    assert pd.isna(plain.resample_annotators) and aware.resample_annotators == "cells"
    expected = an.annotator_bootstrap_ci(Xw, ann, "system", "kendall", k=200, seed=0, Z=Z)
    assert (aware.estimate, aware.lower, aware.upper) == pytest.approx(
        (expected.estimate, expected.lower, expected.upper), abs=1e-12)
    assert aware.estimate == pytest.approx(plain.estimate, abs=1e-15)
    assert "annotators" in json.loads(aware.conventions)
    result = run_cli(db, "ci", "--dataset", "p", "--human", "h", "--ci-method", "fisher", "--resample-annotators",
                     "cells", ok=False)
    assert result.exit_code == 1 and "needs a bootstrap method" in result.output


def test_accuracy_delta_bins_is_persisted(db, tmp_path):
    from metaeval.analyses.close_pairs import accuracy_by_delta

    run_cli(db, "demo", "--systems", "8", "--inputs", "10", "--k", "40")
    out = run_cli(db, "accuracy", "--dataset", "demo", "--human", "expert.relevance", "--delta-bins", "3").output
    assert "bin 0 = the closest pairs" in out
    again = run_cli(db, "accuracy", "--dataset", "demo", "--human", "expert.relevance", "--delta-bins", "3").output
    assert "nothing computed" in again
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_delta_bin_accuracy WHERE metric = 'sim-low.f1' ORDER BY bin")
        m = wh.matrix("demo", ["sim-low.f1", "expert.relevance"])
    expected = accuracy_by_delta(m["sim-low.f1"], m["expert.relevance"], 3)
    np.testing.assert_allclose(rows["accuracy"], expected.accuracy, atol=1e-12)
    np.testing.assert_allclose(rows["kendall"], expected.kendall, atol=1e-12)
    assert rows["pairs"].sum() == 28 and list(rows["bin"]) == [0, 1, 2]


def test_the_ceiling_is_printed_beside_the_metrics_and_drawn(db, tmp_path):
    """Issue 20.2: correlate/ci print the stored human ceiling (and their JSON carries it); the
    report and `plot ci` draw it as a dashed line."""
    run_cli(db, "demo", "--systems", "6", "--inputs", "8", "--k", "40")
    base = ["--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--coefficient", "kendall"]
    out = run_cli(db, "correlate", *base).output
    assert "human ceiling" not in out
    run_cli(db, "annotators", "--dataset", "demo", "--human", "expert.relevance", "--level", "system",
            "--coefficient", "kendall", "--k", "50", "--splits", "3")
    with Store(db, read_only=True) as wh:
        c = wh.sql("SELECT * FROM latest_human_ceiling WHERE estimator = 'leave-one-out'").iloc[0]
    out = run_cli(db, "correlate", *base).output
    assert f"human ceiling (leave-one-out, metaeval annotators): system/kendall {c.value:.3f}" in out
    rows = json.loads(run_cli(db, "ci", *base, "--k", "40", "--format", "json").stdout)
    assert [r["human_ceiling"] for r in rows] == pytest.approx([c.value] * len(rows)) and rows
    out = run_cli(db, "evaluate", "--dataset", "demo", "--human", "expert.relevance", "--metric", "sim-high.f1",
                  "--level", "system", "--coefficient", "kendall", "--k", "40").output
    assert f"Human ceiling (leave-one-out, metaeval annotators): system/kendall {c.value:.3f}" in out
    from metaeval.present import figures

    calls = []
    original = figures.ci_forest
    figures.ci_forest = lambda *a, **k: calls.append(a) or original(*a, **k)
    try:
        run_cli(db, "plot", "ci", *base, "--out", tmp_path / "ci.png")
        run_cli(db, "report", "--dataset", "demo", "--out", tmp_path / "r.html")
    finally:
        figures.ci_forest = original
    assert calls[0][2] == pytest.approx((c.value, c.lower, c.upper))
    assert any(len(a) > 2 and a[2] is not None for a in calls[1:])
    fig = original(json_rows_to_frame(rows), "t", (c.value, c.lower, c.upper))
    assert any(line.get_xdata()[0] == pytest.approx(c.value) and line.get_linestyle() == "--"
               for line in fig.axes[0].get_lines())
    assert any("human ceiling (leave-one-out)" in t.get_text() for t in fig.legends[0].get_texts())


def json_rows_to_frame(rows):
    return pd.DataFrame(rows)


def test_report_draws_the_accuracy_by_human_difference(db, tmp_path):
    run_cli(db, "demo", "--systems", "6", "--inputs", "8", "--k", "40")
    run_cli(db, "report", "--dataset", "demo", "--out", tmp_path / "r0.html")
    page = (tmp_path / "r0.html").read_text()
    assert "run `metaeval --db" in page and "accuracy --delta-bins 4 --dataset demo --human expert.relevance" in page
    run_cli(db, "accuracy", "--dataset", "demo", "--human", "expert.relevance", "--delta-bins", "3")
    run_cli(db, "report", "--dataset", "demo", "--out", tmp_path / "r.html")
    page = (tmp_path / "r.html").read_text()
    assert "Close systems: accuracy by human difference" in page and "within 3 quantile bins" in page
    assert re.search(r'<figure id="fig-close-[^"]*"><img src="data:image/svg', page)


def test_compare_resample_annotators(db, tmp_path):
    """Paired bootstrap tests with the annotators re-drawn: equal to the pure function, and with
    identical annotators equal to the plain paired bootstrap test (same seed)."""
    from metaeval.analyses import paired_bootstrap_test

    A = np.repeat(_panel(40, k=1), 3, axis=2)
    _ingest_panel(db, tmp_path, A)
    rng = np.random.default_rng(41)
    lines = ["system,input,measure,value"]
    for name in ("m1", "m2"):
        M = an.cell_means(A) + rng.normal(scale=1.5, size=A.shape[:2])
        lines += [f"S{i},D{j},{name},{float(M[i, j])!r}" for i in range(M.shape[0]) for j in range(M.shape[1])]
    (tmp_path / "m.csv").write_text("\n".join(lines) + "\n")
    run_cli(db, "ingest", "table", tmp_path / "m.csv", "--dataset", "p")
    run_cli(db, "compare", "--dataset", "p", "--human", "h", "--level", "summary", "--coefficient", "spearman",
            "--method", "boot-both", "--k", "200", "--resample-annotators", "cells", "--alternative", "greater")
    with Store(db, read_only=True) as wh:
        row = wh.sql("SELECT * FROM hypothesis_tests WHERE metric_a = 'm1'").iloc[0]
        X, Y, Z = (wh.matrix("p", m).values for m in ("m1", "m2", "h"))
        stored = wh.annotations("p", "h").values           # on the warehouse's grid (ids sorted)
    plain = paired_bootstrap_test(X, Y, Z, "summary", "spearman", "both", k=200, alternative="greater", seed=0)
    aware = an.annotator_paired_bootstrap_test(X, Y, stored, "summary", "spearman", "both", k=200,
                                             alternative="greater", seed=0, Z=Z)
    np.testing.assert_allclose(aware.samples, plain.samples, atol=1e-12)
    assert aware.pvalue == pytest.approx(plain.pvalue) and row.p_value == pytest.approx(aware.pvalue)
    assert row.resample_annotators == "cells" and "annotators" in json.loads(row.conventions)
    bad = run_cli(db, "compare", "--dataset", "p", "--human", "h", "--method", "perm-both",
                  "--resample-annotators", "cells", ok=False)
    assert bad.exit_code == 1 and "paired bootstrap tests" in bad.output
