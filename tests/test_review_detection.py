"""Adversarial review of `metaeval detection` (issue 26 item 3): a lower-is-better measure's
threshold is in its own scale (given and reported), and so is a lower-is-better human's
--positive; each checked against scikit-learn on the raw values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import balanced_accuracy_score

from metaeval.runs import Warehouse
from metaeval.ingest.table import add_scores

SYSTEMS = tuple(f"s{i}" for i in range(3))
INPUTS = tuple(f"d{j:02d}" for j in range(20))


@pytest.fixture(scope="module")
def lower(tmp_path_factory):
    """3 systems x 20 inputs: a 0/1 label 'consistent', its lower-is-better twin 'inconsistent'
    (= -consistent), a detector 'good' and its lower-is-better twin 'errors' (= 1 - good)."""
    rng = np.random.default_rng(7)
    rows = []
    for s in SYSTEMS:
        for i in INPUTS:
            y = float(rng.random() < 0.5)
            good = round(y + rng.normal(), 6)
            rows.append({"system": s, "input": i, "consistent": y, "inconsistent": -y, "good": good,
                         "errors": 1 - good})
    frame = pd.DataFrame(rows)
    db = tmp_path_factory.mktemp("lower") / "lower.duckdb"
    with Warehouse.create(db) as wh:
        add_scores(wh, "fx", frame, human=["consistent", "inconsistent"], lower=["errors", "inconsistent"])
    return db, frame.sort_values(["system", "input"]).reset_index(drop=True)


def test_a_fixed_threshold_is_in_a_lower_is_better_measures_own_scale(lower):
    db, f = lower
    y = f["consistent"] >= 1
    with Warehouse(db) as wh:
        out = wh.detection("fx", "consistent", ["good", "errors"], positive=1, threshold=0.3, k=40, seed=1)
    rows = out["detection"].set_index("metric")
    assert rows.loc["good", "balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, f["good"] > 0.3))
    # errors: positive (consistent) when errors < 0.3, in errors' own scale
    assert rows.loc["errors", "balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, f["errors"] < 0.3))
    assert rows.loc["errors", "threshold"] == 0.3
    tests = out["detection_tests"]
    ba = tests[(tests["statistic"] == "balanced_accuracy") & (tests["metric_a"] == "good")].iloc[0]
    assert ba["value_a"] == pytest.approx(balanced_accuracy_score(y, f["good"] > 0.3))
    assert ba["value_b"] == pytest.approx(balanced_accuracy_score(y, f["errors"] < 0.3))


def test_a_tuned_threshold_of_a_lower_is_better_measure_is_reported_in_its_own_scale(lower):
    db, f = lower
    y = f["consistent"] >= 1
    with Warehouse(db) as wh:
        out = wh.detection("fx", "consistent", ["good", "errors"], positive=1, k=40, seed=1, tests=False)
    rows = out["detection"].set_index("metric")
    t = rows.loc["errors", "threshold"]
    # reading the stored threshold in errors' scale (positive when errors < t) gives the stored accuracy
    assert rows.loc["errors", "balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y, f["errors"] < t))
    assert rows.loc["errors", "balanced_accuracy"] == pytest.approx(rows.loc["good", "balanced_accuracy"])
    assert t == pytest.approx(1 - rows.loc["good", "threshold"])
    assert "<" in rows.loc["errors", "conventions"] and "lower" in rows.loc["errors", "conventions"]


def test_positive_of_a_lower_is_better_human_is_in_its_own_scale(lower):
    db, f = lower
    with Warehouse(db) as wh:
        higher = wh.detection("fx", "consistent", ["good"], positive=1, k=40, seed=1)["detection"].iloc[0]
        # inconsistent = -consistent, lower is better: consistent (positive) when inconsistent <= -1
        low = wh.detection("fx", "inconsistent", ["good"], positive=-1, k=40, seed=1)["detection"].iloc[0]
    assert low["n_positive"] == int((f["inconsistent"] <= -1).sum()) == higher["n_positive"]
    assert low["roc_auc"] == pytest.approx(higher["roc_auc"])
    assert "<=" in low["conventions"]


def test_an_unbounded_finite_option_says_so_in_help_and_errors():
    from click.testing import CliRunner

    from metaeval.cli import main

    help_text = CliRunner().invoke(main, ["detection", "--help"]).output
    assert "None" not in help_text and "any finite number" in help_text
    out = CliRunner().invoke(main, ["detection", "--dataset", "d", "--human", "h", "--positive", "nan"])
    assert out.exit_code != 0 and "give a finite number" in out.output and "None" not in out.output


def test_a_setting_run_again_after_another_k_or_seed_returns_its_own_rows(lower):
    db, _ = lower
    with Warehouse(db) as wh:
        def run(k, seed):
            return wh.detection("fx", "consistent", ["good", "errors"], positive=1, k=k, seed=seed, where=(),
                                threshold=0.1)
        first = run(40, 2)
        run(60, 2)
        run(40, 3)
        again = run(40, 2)
    for name in ("detection", "detection_tests"):
        assert set(again[name]["k"]) == {40} and set(again[name]["seed"]) == {2}, name
    cols = ["metric", "roc_auc_lower", "roc_auc_upper", "balanced_accuracy_lower", "balanced_accuracy_upper"]
    pd.testing.assert_frame_equal(again["detection"][cols], first["detection"][cols])


def test_a_test_with_few_valid_resamples_is_never_significant_by_its_coarse_p():
    """A paired test's p is a count over its valid resamples (those where every group has both
    classes): with 10 valid of k = 1000, p = 0 only says p < 1/10, so it can never pass a threshold
    of 0.05 however small the count — while a test with every resample valid can."""
    from metaeval.runs.factuality.detection import DetectionTestParams, _correct

    params = DetectionTestParams(1.0, "", "", None, "two-sided", 1000, 0, "none", "all", 0.05)

    def row(n_valid):
        return {"group": "", "statistic": "roc_auc", "metric_a": "a", "metric_b": "b", "p_value": 0.0,
                "n_valid": n_valid, "conventions": {}}

    few, full = [row(10)], [row(1000)]
    _correct(few, params)
    _correct(full, params)
    assert few[0]["significant"] is False and full[0]["significant"] is True
