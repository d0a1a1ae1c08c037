"""`metaeval detection` (issue 26 item 3) on a small synthetic warehouse: rows equal the pure
functions of analyses/detection.py on the cells --where / --tune / --by select, lower-is-better
measures are negated, the tests are corrected like compare's, a repeated command computes
nothing and a refusal writes nothing."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest

from metaeval.runs import Warehouse
from metaeval.analyses import detection as det
from metaeval.analyses.stats import multiple
from metaeval.errors import WarehouseError
from metaeval.ingest.table import add_scores
from metaeval.runs.factuality import detection
from metaeval.runs.engine import selection
from tests.conftest import digest, run_cli

SYSTEMS = tuple(f"s{i}" for i in range(4))
INPUTS = tuple(f"d{j:02d}" for j in range(24))


@pytest.fixture(scope="module")
def fx_warehouse(tmp_path_factory):
    """4 systems x 24 inputs; a 0/1 judgment 'consistent' (one cell unjudged), a good detector,
    a noise detector with one missing cell, and 'errors' (lower is better, -good); attributes
    split (val: inputs 0-9, test: the rest) and source (cnndm / xsum alternating)."""
    rng = np.random.default_rng(0)
    rows = []
    for s in SYSTEMS:
        for j, i in enumerate(INPUTS):
            y = float(rng.random() < 0.45)
            good = y + rng.normal()
            rows.append({"system": s, "input": i, "consistent": y, "good": good, "noise": rng.normal(),
                         "errors": -good})
    frame = pd.DataFrame(rows)
    frame.loc[3, "consistent"] = np.nan
    frame.loc[5, "noise"] = np.nan
    tmp_path = tmp_path_factory.mktemp("fx")
    db = tmp_path / "fx.duckdb"
    with Warehouse.create(db) as wh:
        add_scores(wh, "fx", frame, human=["consistent"], lower=["errors"])
    attrs = [{"input": i, "attribute": "split", "value": "val" if j < 10 else "test"} for j, i in enumerate(INPUTS)]
    attrs += [{"input": i, "attribute": "source", "value": "cnndm" if j % 2 else "xsum"} for j, i in enumerate(INPUTS)]
    pd.DataFrame(attrs).to_csv(tmp_path / "attributes.csv", index=False)
    run_cli(db, "ingest", "attributes", tmp_path / "attributes.csv", "--dataset", "fx")
    return db, frame


@pytest.fixture
def fx(fx_warehouse, tmp_path):
    """A private copy of the module's warehouse, and the frame it holds."""
    db, frame = fx_warehouse
    copy = tmp_path / "fx.duckdb"
    shutil.copy(db, copy)
    return copy, frame


def _cells(frame, metric):
    """The judged cells in grid order (systems, inputs sorted): scores, labels, split, source."""
    f = frame[frame["consistent"].notna()].sort_values(["system", "input"])
    j = f["input"].map({i: n for n, i in enumerate(INPUTS)}).to_numpy()
    return (f[metric].to_numpy(), f["consistent"].to_numpy() >= 1, np.where(j < 10, "val", "test"),
            np.where(j % 2, "cnndm", "xsum").astype(object))


def test_rows_equal_the_pure_functions_with_where_tune_and_by(fx):
    db, frame = fx
    with Warehouse(db) as wh:
        out = wh.detection("fx", "consistent", ["good", "noise"], positive=1, where=["split=test"],
                           tune=["split=val"], by="source", k=60, seed=3)
    rows, tests = out["detection"], out["detection_tests"]
    assert list(rows["metric"]) == ["good"] * 3 + ["noise"] * 3
    assert list(rows["group"]) == ["cnndm", "xsum", "*"] * 2
    assert set(rows["subset"]) == {"source=cnndm & split=test", "source=xsum & split=test", "source=* & split=test"}
    for metric in ("good", "noise"):
        s, y, split, source = _cells(frame, metric)
        expected = det.detection(s, y, evaluated=split == "test", tuned=split == "val", groups=source, k=60,
                                 seed=3).rows
        got = rows[rows["metric"] == metric]
        for e, (_, g) in zip(expected, got.iterrows()):
            assert g["group"] == e.group and g["n"] == e.n and g["n_positive"] == e.n_positive
            for column in ("roc_auc", "roc_auc_lower", "balanced_accuracy", "balanced_accuracy_upper",
                           "tune_balanced_accuracy"):
                assert g[column] == pytest.approx(getattr(e, column))
            assert (pd.isna(g["threshold"]) and e.threshold is None) or g["threshold"] == e.threshold
    # the paired tests, Holm within each metric_a's family of a group and statistic (here one test each)
    s_a, y, split, source = _cells(frame, "good")
    s_b = _cells(frame, "noise")[0]
    expected, _ = det.paired_detection_test(s_a, s_b, y, evaluated=split == "test", tuned=split == "val",
                                            groups=source, k=60, seed=3)
    got = tests[(tests["metric_a"] == "good")]
    assert len(got) == len(expected) == 6
    for e in expected:
        g = got[(got["group"] == e.group) & (got["statistic"] == e.statistic)].iloc[0]
        assert g["delta"] == pytest.approx(e.delta) and g["p_value"] == pytest.approx(e.p_value)
        assert g["p_adjusted"] == pytest.approx(e.p_value) and g["family_size"] == 1


def test_lower_is_better_is_negated_and_nan_cells_left_out(fx):
    db, frame = fx
    with Warehouse(db) as wh:
        rows = wh.detection("fx", "consistent", ["good", "errors", "noise"], positive=1, k=40,
                            tests=False)["detection"]
    good, errors, noise = (rows[rows["metric"] == m].iloc[0] for m in ("good", "errors", "noise"))
    assert errors["roc_auc"] == pytest.approx(good["roc_auc"]) and good["roc_auc"] > 0.6
    assert errors["threshold"] == pytest.approx(good["threshold"]) or errors["balanced_accuracy"] == pytest.approx(
        good["balanced_accuracy"])
    assert good["n"] == 4 * 24 - 1 and noise["n"] == 4 * 24 - 2      # unjudged cell; unscored cell
    s, y, _, _ = _cells(frame, "noise")
    assert noise["roc_auc"] == pytest.approx(det.roc_auc(s, y))
    assert good["tune"] == "" and good["subset"] == "" and good["group"] == "" and good["n_tune"] == good["n"]
    conventions = json.loads(good["conventions"])
    assert "in-sample" in conventions["threshold_source"] and "orientation" in conventions


def test_fixed_threshold_and_correction_over_all_pairs(fx):
    db, frame = fx
    with Warehouse(db) as wh:
        out = wh.detection("fx", "consistent", ["good", "noise", "errors"], positive=0.5, threshold=0.0, k=40,
                           correction="bonferroni", correction_group="all")
    rows, tests = out["detection"], out["detection_tests"]
    good = rows[rows["metric"] == "good"].iloc[0]
    s, y, _, _ = _cells(frame, "good")
    assert good["threshold"] == 0.0 and good["fixed_threshold"] == 0.0 and pd.isna(good["tune"])
    assert pd.isna(good["tune_balanced_accuracy"]) and pd.isna(good["n_tune"])
    assert good["balanced_accuracy"] == pytest.approx(det.balanced_accuracy(s, y, 0.0))
    assert len(tests) == 6 * 2                       # ordered pairs x statistics
    for statistic, family in tests.groupby("statistic"):
        adjusted = multiple.correct_pvalues(family["p_value"].to_numpy(), "bonferroni")
        assert np.allclose(family["p_adjusted"], adjusted) and (family["family_size"] == 6).all()
        # k = 40 cannot reach Bonferroni's 0.05 / 6 (1/k = 0.025): nothing can be significant, and it is said
        assert not family["significant"].any()
        resolution = json.loads(family["conventions"].iloc[0])["resolution"]
        assert resolution["resolvable"] is False and resolution["k_needed"] == 120


def test_repeated_command_computes_nothing_and_refusals_write_nothing(fx):
    db, _ = fx
    args = ["detection", "--dataset", "fx", "--human", "consistent", "--positive", "1", "--metric", "good",
            "--where", "split=test", "--tune", "split=val", "--k", "40"]
    assert "run " in run_cli(db, *args).output
    assert "up to date" in run_cli(db, *args).output
    before = digest(db)
    for bad, message in (
            (["--where", "source=nope"], "never has the value 'nope'"),
            (["--by", "colour"], "no attribute 'colour'"),
            (["--threshold", "0.5"], "not both"),
            (["--k", "10"], "--k 39 or more"),
            (["--by", "split"], "--by 'split' is also"),
    ):
        given = args[:-2] if bad[0] == "--k" else args      # --k given once (twice is its own refusal)
        result = run_cli(db, *given, *bad, ok=False)
        assert result.exit_code != 0 and message in result.output, result.output
        assert "Traceback" not in result.output
    with Warehouse(db) as wh:
        with pytest.raises(WarehouseError, match="holds every evaluated cell"):
            detection.detection(wh, "fx", "consistent", ["good"], positive=1, where=["split=test"],
                                tune=["split=test"], k=40)
    assert digest(db) == before


def test_one_class_gives_null_not_a_number(fx):
    db, _ = fx
    with Warehouse(db) as wh:
        rows = wh.detection("fx", "consistent", ["good"], positive=2, k=40)["detection"]
    row = rows.iloc[0]
    assert row["n_positive"] == 0
    for column in ("roc_auc", "balanced_accuracy", "threshold", "balanced_accuracy_lower", "tune_balanced_accuracy"):
        assert pd.isna(row[column]), column


def test_cli_json_rows_carry_the_issue_fields(fx):
    db, _ = fx
    result = run_cli(db, "detection", "--dataset", "fx", "--human", "consistent", "--positive", "1", "--k", "40",
                     "--metric", "good", "--metric", "noise", "--by", "source", "--format", "json")
    document = json.loads(result.stdout)
    assert set(document) == {"detection", "detection_tests"}
    for row in document["detection"]:
        assert {"metric", "group", "n", "n_positive", "roc_auc", "threshold", "balanced_accuracy",
                "tune_balanced_accuracy"} <= set(row)
    assert [r["group"] for r in document["detection"]][:3] == ["cnndm", "xsum", selection.MACRO_VALUE]
    assert {"metric_a", "metric_b", "p_value", "alternative"} <= set(document["detection_tests"][0])
    text = run_cli(db, "detection", "--dataset", "fx", "--human", "consistent", "--positive", "1", "--k", "40",
                   "--metric", "good", "--by", "source").output
    assert "up to date" not in text and "balanced_accuracy" in text and "tuned on the evaluated cells" in text
