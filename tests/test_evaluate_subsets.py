"""``evaluate --where`` and ``evaluate --control`` (issue 26 item 5): the evaluation of a subset of
cells, or of partial correlations, is correlate's / ci's / compare's on the same subset or control
(stored under the same keys, so a second call computes nothing), equal to an independent
computation, and refused in one line before anything is written."""

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

SYSTEMS = tuple(f"S{i}" for i in range(4))
INPUTS = tuple(f"d{j:02d}" for j in range(10))
K = 50


@pytest.fixture
def confounded(db, tmp_path):
    """4 systems x 10 inputs: m1 tracks the systems' quality only, m2 the cell's; an input
    attribute 'source' (cnndm: the first 6 inputs, xsum: the rest)."""
    rng = np.random.default_rng(1)
    quality = rng.normal(size=len(SYSTEMS)) * 2
    rows = []
    for i, s in enumerate(SYSTEMS):
        for d in INPUTS:
            cell = rng.normal()
            rows.append({"system": s, "input": d, "h": quality[i] + cell,
                         "m1": quality[i] + rng.normal() * 0.3, "m2": 0.5 * quality[i] + cell + rng.normal() * 0.5})
    with Warehouse(db) as wh:
        add_scores(wh, "conf", pd.DataFrame(rows), human=["h"])
    lines = ["input,attribute,value", *(f"{d},source,{'cnndm' if j < 6 else 'xsum'}" for j, d in enumerate(INPUTS))]
    (tmp_path / "attrs.csv").write_text("\n".join(lines) + "\n")
    run_cli(db, "ingest", "attributes", tmp_path / "attrs.csv", "--dataset", "conf")
    return db


def test_evaluate_where_is_correlate_on_the_subset(confounded):
    with Warehouse(confounded) as wh:
        ev = wh.evaluate("conf", "h", metrics=["m2"], levels=["global", "system"], coefficients=["pearson"], k=K,
                         where=["source=cnndm"])
        assert ev.settings["subset"] == "source=cnndm" and "subset source=cnndm" in ev.caption()
        m = wh.matrix("conf", ["m2", "m1", "h"])
        cnndm = [j for j, d in enumerate(m.inputs) if INPUTS.index(d) < 6]
        row = ev.table.set_index(["metric", "level"])
        for metric in ("m1", "m2"):
            x, z = m[metric][:, cnndm], m["h"][:, cnndm]
            assert row.loc[(metric, "global"), "correlation"] == pytest.approx(
                scipy.stats.pearsonr(x.ravel(), z.ravel()).statistic, abs=1e-12)
            assert row.loc[(metric, "system"), "correlation"] == pytest.approx(
                scipy.stats.pearsonr(x.mean(axis=1), z.mean(axis=1)).statistic, abs=1e-12)
        stored = wh.sql("SELECT DISTINCT subset FROM correlations UNION SELECT DISTINCT subset FROM "
                        "confidence_intervals UNION SELECT DISTINCT subset FROM hypothesis_tests")
        assert set(stored["subset"]) == {"source=cnndm"}
        # the same rows as correlate's on the subset: reused, nothing computed
        again = wh.correlate("conf", "h", ["m1", "m2"], ["global", "system"], ["pearson"], where=["source=cnndm"])
        assert again.set_index(["metric", "level"])["value"].to_dict() == pytest.approx(
            row["correlation"].to_dict(), abs=0)
        assert wh.evaluate("conf", "h", metrics=["m2"], levels=["global", "system"], coefficients=["pearson"], k=K,
                           where=["source=cnndm"]).computed == 0
        # every cell is another result: computed anew, the subset's rows kept
        full = wh.evaluate("conf", "h", metrics=["m2"], levels=["global"], coefficients=["pearson"], k=K)
        assert full.computed > 0 and "subset" not in full.settings
        assert full.table.set_index("metric").loc["m2", "correlation"] == pytest.approx(
            scipy.stats.pearsonr(m["m2"].ravel(), m["h"].ravel()).statistic, abs=1e-12)


def test_evaluate_control_is_the_partial_correlation(confounded):
    with Warehouse(confounded) as wh:
        ev = wh.evaluate("conf", "h", metrics=["m2"], coefficients=["pearson"], k=K, control="system")
        assert ev.settings["levels"] == ["global"] and ev.settings["coefficients"] == ["pearson[control=system]"]
        m = wh.matrix("conf", ["m1", "m2", "h"])
        rows = ev.table.set_index("metric")
        for metric in ("m1", "m2"):
            # residuals of metric and human on the system dummies (lstsq), correlated by scipy
            D = np.kron(np.eye(len(m.systems)), np.ones((len(m.inputs), 1)))
            rx, rz = (v - D @ np.linalg.lstsq(D, v, rcond=None)[0] for v in (m[metric].ravel(), m["h"].ravel()))
            assert rows.loc[metric, "correlation"] == pytest.approx(scipy.stats.pearsonr(rx, rz).statistic, abs=1e-10)
        # m1 only recognises the system: pooled high, partial near 0, ranked below m2
        pooled = wh.correlate("conf", "h", ["m1"], ["global"], ["pearson"])["value"].iloc[0]
        assert pooled > 0.8 and abs(rows.loc["m1", "correlation"]) < 0.5
        assert rows.loc["m2", "rank"] == 1 and rows.loc["m1", "rank"] == 2
        stored = wh.sql("SELECT DISTINCT coefficient FROM latest_confidence_intervals UNION "
                        "SELECT DISTINCT coefficient FROM latest_hypothesis_tests")
        assert set(stored["coefficient"]) == {"pearson[control=system]"}


REFUSED = [
    ({"where": ["source=bbc"]}, "never has the value 'bbc'"),
    ({"where": ["sourc=cnndm"]}, "has no attribute 'sourc'"),
    ({"control": "system", "levels": ["system"]}, "defined at the global level only"),
    ({"control": "sourc"}, "has no attribute 'sourc'"),
    ({"control": "system", "coefficients": ["kendall-a"]}, "control applies to the coefficients"),
]


def test_evaluate_refuses_a_bad_subset_or_control_before_writing(confounded, tmp_path):
    before = digest(confounded)
    scores = tmp_path / "new.csv"
    pd.DataFrame({"system": list(SYSTEMS), "input": ["d00"] * 4, "m3": [1.0, 2.0, 3.0, 4.0]}).to_csv(scores,
                                                                                                  index=False)
    with Warehouse(confounded) as wh:
        for options, message in REFUSED:   # with a score table: nothing ingested either
            with pytest.raises(WarehouseError, match=message):
                wh.evaluate("conf", "h", [scores], k=K, **options)
    assert digest(confounded) == before


def test_evaluate_cli_where_and_control(confounded):
    out = run_cli(confounded, "evaluate", "--dataset", "conf", "--human", "h", "--metric", "m2", "--k", K,
                  "--where", "source=xsum", "--level", "global", "--coefficient", "pearson", "--format", "json")
    rows = json.loads(out.stdout)
    assert {r["metric"] for r in rows} == {"m1", "m2"}
    assert all(r["conventions"]["level"] == "global" for r in rows)
    text = run_cli(confounded, "evaluate", "--dataset", "conf", "--human", "h", "--metric", "m2", "--k", K,
                   "--control", "system", "--coefficient", "pearson").output
    assert "pearson[control=system]" in text and "global" in text
    bad = run_cli(confounded, "evaluate", "--dataset", "conf", "--human", "h", "--metric", "m2", "--where", "split",
                  ok=False)
    assert bad.exit_code != 0 and "ATTR=VALUE" in bad.output and "Traceback" not in bad.output
