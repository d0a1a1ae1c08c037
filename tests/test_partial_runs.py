"""correlate / ci / compare --control (issue 26 item 2): partial correlations persisted under the
coefficient label NAME[control=GROUPS], equal to an independent computation (least-squares
residuals on group dummies, correlated by scipy), never mixed with the pooled rows, refused where
they are not defined (one line, nothing written)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from metaeval.errors import WarehouseError
from metaeval.ingest.table import add_scores
from metaeval.runs import Warehouse
from tests.conftest import digest, run_cli

SYSTEMS = tuple(f"S{i}" for i in range(5))
INPUTS = tuple(f"d{j:02d}" for j in range(12))


@pytest.fixture
def confounded(db, tmp_path):
    """5 systems x 12 inputs: metric m1 tracks the systems' quality only, m2 also the cell's;
    an input-level attribute 'source' (two values) and a cell without one."""
    rng = np.random.default_rng(0)
    quality = rng.normal(size=len(SYSTEMS)) * 2
    rows = []
    for i, s in enumerate(SYSTEMS):
        for j, d in enumerate(INPUTS):
            cell = rng.normal()
            rows.append({"system": s, "input": d, "h": quality[i] + cell,
                         "m1": quality[i] + rng.normal() * 0.3, "m2": 0.5 * quality[i] + cell + rng.normal() * 0.5})
    with Warehouse(db) as wh:
        add_scores(wh, "conf", pd.DataFrame(rows), human=["h"])
    lines = ["input,attribute,value", *(f"{d},source,{'cnndm' if j < 7 else 'xsum'}" for j, d in enumerate(INPUTS))]
    (tmp_path / "attrs.csv").write_text("\n".join(lines) + "\n")
    run_cli(db, "ingest", "attributes", tmp_path / "attrs.csv", "--dataset", "conf")
    return db


def _independent(wh, metric, groups, coefficient="pearson"):
    """The residuals of metric and human regressed on the group dummies by lstsq, correlated by scipy."""
    m = wh.matrix("conf", [metric, "h"])
    x, z = m[metric].ravel(), m["h"].ravel()
    labels = np.repeat(np.arange(len(m.systems)), len(m.inputs)) if groups == "system" else \
        wh.attribute_labels("conf", groups, m.systems, m.inputs).ravel()
    levels = sorted(set(labels))
    D = np.array([[lab == lv for lv in levels] for lab in labels], dtype=float)
    rx, rz = (v - D @ np.linalg.lstsq(D, v, rcond=None)[0] for v in (x, z))
    stat = {"pearson": scipy.stats.pearsonr, "spearman": scipy.stats.spearmanr, "kendall": scipy.stats.kendalltau}
    return stat[coefficient](rx, rz).statistic, len(x), len(levels)


@pytest.mark.parametrize("control", ["system", "source"])
def test_correlate_control_equals_lstsq_residuals_and_keeps_pooled_rows_apart(confounded, control):
    with Warehouse(confounded) as wh:
        pooled = wh.correlate("conf", "h", levels=["global"], coefficients=["pearson"])
        rows = wh.correlate("conf", "h", control=control)
        assert sorted(set(rows["coefficient"])) == sorted(f"{c}[control={control}]"
                                                          for c in ("pearson", "spearman", "kendall"))
        assert set(rows["level"]) == {"global"}
        for r in rows.to_dict("records"):
            expected, n, g = _independent(wh, r["metric"], control, r["coefficient"].partition("[")[0])
            assert r["value"] == pytest.approx(expected, abs=1e-12)
            conv = json.loads(r["conventions"])
            assert (conv["n"], conv["groups"], conv["df"]) == (n, g, n - 2 - (g - 1))
            assert conv["partial"]["control"] == control
        # the pooled rows are untouched, under their own key
        again = wh.correlate("conf", "h", levels=["global"], coefficients=["pearson"])
        assert again["value"].tolist() == pooled["value"].tolist()
        assert set(again["coefficient"]) == {"pearson"}
        # rerunning computes nothing
        from metaeval.runs.engine import api
        assert api.correlate(wh, "conf", "h", control=control).summary.up_to_date


def test_system_control_removes_the_system_confound(confounded):
    with Warehouse(confounded) as wh:
        pooled = wh.correlate("conf", "h", metrics=["m1"], levels=["global"], coefficients=["pearson"])["value"][0]
        part = wh.correlate("conf", "h", metrics=["m1"], coefficients=["pearson"], control="system")["value"][0]
    assert pooled > 0.5 and abs(part) < 0.3


def test_attribute_labels_are_in_the_fingerprint(confounded, tmp_path):
    with Warehouse(confounded) as wh:
        first = wh.correlate("conf", "h", metrics=["m2"], coefficients=["pearson"], control="source")
    lines = ["input,attribute,value", *(f"{d},source,{'cnndm' if j < 3 else 'xsum'}" for j, d in enumerate(INPUTS))]
    (tmp_path / "relabel.csv").write_text("\n".join(lines) + "\n")
    run_cli(confounded, "ingest", "attributes", tmp_path / "relabel.csv", "--dataset", "conf", "--replace")
    with Warehouse(confounded) as wh:
        from metaeval.runs.engine import api
        out = api.correlate(wh, "conf", "h", metrics=["m2"], coefficients=["pearson"], control="source")
        assert not out.summary.up_to_date
        second = out.rows(wh)
        assert second["fingerprint"][0] != first["fingerprint"][0]
        assert second["value"][0] == pytest.approx(_independent(wh, "m2", "source")[0], abs=1e-12)


def test_ci_and_compare_rows(confounded):
    with Warehouse(confounded) as wh:
        fisher = wh.ci("conf", "h", metrics=["m2"], coefficients=["pearson"], control="system", method="fisher")
        r, n, g = _independent(wh, "m2", "system")
        half = scipy.stats.norm.ppf(0.975) / np.sqrt(n - (g - 1) - 3)
        assert (fisher["lower"][0], fisher["upper"][0]) == pytest.approx(
            (np.tanh(np.arctanh(r) - half), np.tanh(np.arctanh(r) + half)), abs=1e-12)
        boot = wh.ci("conf", "h", metrics=["m2"], coefficients=["spearman"], control="source", method="boot-inputs",
                     k=200, seed=1)
        assert boot["lower"][0] < boot["estimate"][0] < boot["upper"][0] and boot["n_valid"][0] == 200
        tests = wh.compare("conf", "h", coefficients=["pearson"], control="system", method="williams")
        assert set(tests["coefficient"]) == {"pearson[control=system]"}
        assert {"metric_a", "metric_b", "p_value", "alternative"} <= set(tests.columns)
        a = tests[tests["metric_a"] == "m2"].iloc[0]
        assert a["delta"] == pytest.approx(abs(_independent(wh, "m2", "system")[0])
                                           - abs(_independent(wh, "m1", "system")[0]), abs=1e-12)
        perm = wh.compare("conf", "h", coefficients=["kendall"], control="source", method="perm-inputs", k=200)
        assert perm["p_value"].notna().all() and (perm["k_used"] == 200).all()


def test_cli_json_rows_and_refusals(confounded):
    out = run_cli(confounded, "correlate", "--dataset", "conf", "--human", "h", "--control", "system",
                  "--coefficient", "pearson", "--format", "json").output
    rows = json.loads(out[out.index("["):])
    assert [(r["metric"], r["coefficient"]) for r in rows] == [("m1", "pearson[control=system]"),
                                                               ("m2", "pearson[control=system]")]
    assert all(isinstance(r["value"], float) for r in rows)
    before = digest(confounded)
    for args, message in [
        (["correlate", "--control", "system", "--level", "system"], "global level only"),
        (["correlate", "--control", "system", "--coefficient", "kendall-c"], "--control applies to"),
        (["correlate", "--control", "nope"], "no attribute 'nope'"),
        (["ci", "--control", "system", "--resample-annotators", "cells"], "--resample-annotators"),
        (["compare", "--control", "system", "--sequential"], "--sequential is not available"),
        (["compare", "--control", "system", "--method", "perm-both", "--k-block", "100"], "--k-block"),
        (["evaluate", "--coefficient", "pearson[control=system]"], "pearson[control=system]"),
    ]:
        result = run_cli(confounded, *args[:1], "--dataset", "conf", "--human", "h", *args[1:], ok=False)
        assert message in result.output and "Traceback" not in result.output
        assert sum(line.startswith("Error:") for line in result.output.splitlines()) == 1
    assert digest(confounded) == before


def test_python_api_refuses_with_warehouse_errors(confounded):
    with Warehouse(confounded) as wh:
        with pytest.raises(WarehouseError, match="global level only"):
            wh.correlate("conf", "h", levels=["summary"], control="system")
        # accuracy's coefficients are the plain ones, as on its command line (a choice, refused by name)
        with pytest.raises(WarehouseError, match=r"unknown coefficients='pearson\[control=system\]'"):
            wh.accuracy("conf", "h", coefficients=["pearson[control=system]"])
