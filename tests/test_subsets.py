"""Subsets of cells (issue 26): --where in the analyses over cells, --by with its macro average,
and the synthetic factuality dataset of examples/factuality (item 6)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from metaeval import Store
from metaeval.analyses.stats import bootstrap_ci
from metaeval.analyses.stats.macro import macro_average, macro_bootstrap_ci
from metaeval.errors import WarehouseError
from metaeval.runs.engine import api, subsets
from tests.conftest import run_cli

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "factuality"
HUMAN = "human.consistency"
METRICS = ("consistency-detector", "system-recognizer")


def _scores() -> pd.DataFrame:
    scores = pd.read_csv(EXAMPLE / "scores.csv")
    attributes = pd.read_csv(EXAMPLE / "attributes.csv").pivot(index="input", columns="attribute", values="value")
    return scores.join(attributes, on="input")


def _residual(frame: pd.DataFrame, column: str) -> pd.Series:
    return frame[column] - frame.groupby("system")[column].transform("mean")


def test_the_dataset_is_what_make_py_writes_and_pooled_and_partial_correlations_disagree(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make", EXAMPLE / "make.py")
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    for path in make.write(tmp_path):
        assert path.read_bytes() == (EXAMPLE / path.name).read_bytes()
    d = _scores()
    assert d.groupby("system")["source"].nunique().eq(1).all()            # each system writes one source
    assert set(d["split"]) == {"validation", "test"} and set(d["human.label"]) == {0, 1}
    assert (d["human.label"] == (d["human.consistency"] > 0.5)).all()
    pooled = {m: sps.pearsonr(d[m], d[HUMAN])[0] for m in METRICS}
    partial = {m: np.corrcoef(_residual(d, m), _residual(d, HUMAN))[0, 1] for m in METRICS}
    # the recogniser: high pooled correlation, none within systems; the detector: both high
    assert pooled["system-recognizer"] > 0.5 and abs(partial["system-recognizer"]) < 0.1
    assert pooled["consistency-detector"] > 0.8 and partial["consistency-detector"] > 0.7
    # the systems differ in quality, within each source
    quality = d.groupby(["source", "system"])[HUMAN].mean()
    assert all(quality[s].max() - quality[s].min() > 0.3 for s in ("cnndm", "xsum"))


@pytest.fixture
def factuality(db):
    run_cli(db, "ingest", "table", EXAMPLE / "scores.csv", "--dataset", "factuality", "--human", "human.*")
    run_cli(db, "ingest", "attributes", EXAMPLE / "attributes.csv", "--dataset", "factuality")
    return db


def test_where_restricts_the_cells_and_keeps_subsets_apart(factuality):
    d = _scores()
    xsum_test = d[(d["source"] == "xsum") & (d["split"] == "test")]
    with Store(factuality) as wh:
        every = api.correlate(wh, "factuality", HUMAN, levels=["global", "system"], coefficients=["pearson"])
        out = api.correlate(wh, "factuality", HUMAN, levels=["global", "system"], coefficients=["pearson"],
                            where=["split=test", "source=xsum"])
        rows = out.rows(wh).set_index(["metric", "level"])
        again = api.correlate(wh, "factuality", HUMAN, levels=["global", "system"], coefficients=["pearson"],
                              where=[("source", "xsum"), ("split", "test")])
        assert again.summary.up_to_date and not out.summary.up_to_date
        all_rows = every.rows(wh).set_index(["metric", "level"])
        runs = wh.sql("SELECT parameters FROM analysis_runs ORDER BY run_id")["parameters"].map(json.loads)
    for m in METRICS:
        # global: pooled over the subset's cells; system: the correlation of the means over its inputs
        assert rows.loc[(m, "global"), "value"] == pytest.approx(sps.pearsonr(xsum_test[m], xsum_test[HUMAN])[0])
        means = xsum_test.groupby("system")[[m, HUMAN]].mean()
        assert rows.loc[(m, "system"), "value"] == pytest.approx(sps.pearsonr(means[m], means[HUMAN])[0])
        assert all_rows.loc[(m, "global"), "value"] == pytest.approx(sps.pearsonr(d[m], d[HUMAN])[0])
        assert rows.loc[(m, "global"), "fingerprint"] != all_rows.loc[(m, "global"), "fingerprint"]
    assert (rows["subset"] == "source=xsum & split=test").all() and (all_rows["subset"] == "").all()
    assert rows["n_systems"].eq(4).all() and rows["n_inputs"].eq(20).all()
    conventions = json.loads(rows["conventions"].iloc[0])
    assert conventions["subset"] == "source=xsum & split=test" and "mean over the subset" in conventions["subset_cells"]
    assert "subset" not in json.loads(all_rows["conventions"].iloc[0])
    assert "where" not in runs[0] and runs[1]["where"] == ["source=xsum", "split=test"]


def test_where_in_ci_compare_accuracy_and_annotators_writes_subset_rows(factuality):
    common = ["--dataset", "factuality", "--human", HUMAN, "--where", "source=cnndm"]
    run_cli(factuality, "ci", *common, "--level", "global", "--coefficient", "pearson", "--k", "100")
    run_cli(factuality, "compare", *common, "--level", "global", "--coefficient", "pearson", "--k", "100")
    run_cli(factuality, "accuracy", *common, "--level", "system")
    run_cli(factuality, "annotators", "--dataset", "factuality", "--human", HUMAN, "--where", "source=cnndm",
            "--level", "global", "--coefficient", "pearson", "--k", "50", "--splits", "3")
    with Store(factuality, read_only=True) as wh:
        for table in ("confidence_intervals", "hypothesis_tests", "pairwise_accuracy", "human_ceiling"):
            subsets_ = wh.sql(f"SELECT DISTINCT subset FROM {table}")["subset"].tolist()
            assert subsets_ == ["source=cnndm"], table
        ci = wh.sql("SELECT * FROM latest_confidence_intervals WHERE metric = 'system-recognizer'").iloc[0]
    cnndm = _scores().query("source == 'cnndm'")
    assert ci["estimate"] == pytest.approx(sps.pearsonr(cnndm["system-recognizer"], cnndm[HUMAN])[0])
    bad = run_cli(factuality, "correlate", "--dataset", "factuality", "--human", HUMAN, "--where", "source=bbc",
                  ok=False)
    assert bad.exit_code != 0 and "never has the value 'bbc'; its values: cnndm, xsum" in bad.output
    bad = run_cli(factuality, "correlate", "--dataset", "factuality", "--human", HUMAN, "--where", "lang=en",
                  ok=False)
    assert "no attribute 'lang'; its attributes: source, split" in bad.output


def test_by_writes_each_group_and_the_macro_average(factuality):
    d = _scores()
    with Store(factuality) as wh:
        result = subsets.by_attribute(wh, "correlate", "source", ["split=test"], dataset="factuality", human=HUMAN,
                                      levels=["global"], coefficients=["pearson"])
        rows = result.rows(wh)
        again = subsets.by_attribute(wh, "correlate", "source", ["split=test"], dataset="factuality", human=HUMAN,
                                     levels=["global"], coefficients=["pearson"])
        with pytest.raises(WarehouseError, match="bootstrap method"):
            subsets.by_attribute(wh, "ci", "source", dataset="factuality", human=HUMAN, method="fisher")
    assert again.macro.up_to_date and all(o.summary.up_to_date for o in again.outcomes)
    assert sorted(set(rows["subset"])) == ["source=* & split=test", "source=cnndm & split=test",
                                          "source=xsum & split=test"]
    test = d[d["split"] == "test"]
    for m in METRICS:
        per = [sps.pearsonr(g[m], g[HUMAN])[0] for _, g in test.groupby("source")]
        got = rows[(rows["metric"] == m)].set_index("subset")["value"]
        assert got["source=* & split=test"] == pytest.approx(np.mean(per))
        assert got["source=xsum & split=test"] == pytest.approx(per[1])
    assert macro_average([0.5, np.nan]) != macro_average([0.5, np.nan])   # NaN: never a number


def test_macro_bootstrap_is_a_stratified_bootstrap_checked_by_brute_force():
    rng = np.random.default_rng(3)
    groups = []
    for n, m in ((4, 9), (5, 7)):
        Z = rng.normal(size=(n, m))
        groups.append((Z + rng.normal(size=(n, m)), Z))
    k, seed, alpha = 120, 11, 0.1
    r = macro_bootstrap_ci(groups, "global", "pearson", "both", k=k, alpha=alpha, seed=seed)
    # the same draws (the resampling contract: block 0 of SeedSequence(seed, spawn_key=(0,)), 256 a block),
    # evaluated with scipy one resample at a time
    draw = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0,)))
    indices = []
    for n, m in ((4, 9), (5, 7)):
        indices.append((draw.integers(0, n, size=(256, n), dtype=np.int32)[:k],
                        draw.integers(0, m, size=(256, m), dtype=np.int32)[:k]))
    brute = []
    for b in range(k):
        values = []
        for (X, Z), (rows, cols) in zip(groups, indices):
            x, z = X[rows[b]][:, cols[b]].ravel(), Z[rows[b]][:, cols[b]].ravel()
            values.append(sps.pearsonr(x, z)[0] if np.ptp(x) and np.ptp(z) else np.nan)
        brute.append(np.mean(values))
    np.testing.assert_allclose(r.samples, brute, rtol=1e-9, atol=1e-12)
    assert r.estimate == pytest.approx(np.mean([sps.pearsonr(X.ravel(), Z.ravel())[0] for X, Z in groups]))
    assert (r.lower, r.upper) == pytest.approx(tuple(np.percentile(brute, [5, 95])))
    # one group: the ordinary bootstrap interval, draw for draw
    one = macro_bootstrap_ci(groups[:1], "system", "kendall", "inputs", k=k, seed=seed)
    plain = bootstrap_ci(*groups[0], "system", "kendall", "inputs", k=k, seed=seed)
    np.testing.assert_array_equal(one.samples, plain.samples)


def test_a_schema_4_warehouse_gains_the_subset_column_and_keeps_its_rows(tmp_path):
    from metaeval import schema
    from metaeval.connection import duckdb_connect

    db = tmp_path / "v4.duckdb"
    run_cli(db, "demo", "--dataset", "d", "--systems", "4", "--inputs", "5", "--k", "40")
    with duckdb_connect(db) as con:  # as a version-4 warehouse was: no subset column, no attributes
        before = con.execute("SELECT count(*) FROM correlations").fetchall()[0][0]
        for table in ("correlations", "confidence_intervals", "hypothesis_tests"):
            con.execute(f"ALTER TABLE {table} DROP COLUMN subset")
        con.execute("DROP TABLE attributes")
        con.execute("UPDATE schema_info SET value = '4' WHERE key = 'version'")
    assert f"from schema 4 to {schema.SCHEMA_VERSION}" in run_cli(db, "init").output
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT subset FROM latest_correlations")
        assert len(rows) == before > 0 and (rows["subset"] == "").all()
        assert wh.attributes("d") == []


def test_by_with_a_partial_coefficient_averages_the_groups_partial_values_and_ci_refuses(factuality):
    d = _scores()
    with Store(factuality) as wh:
        result = subsets.by_attribute(wh, "correlate", "source", dataset="factuality", human=HUMAN,
                                      coefficients=["pearson"], control="system")
        rows = result.rows(wh)
        with pytest.raises(WarehouseError, match="partial coefficient"):
            subsets.by_attribute(wh, "ci", "source", dataset="factuality", human=HUMAN, coefficients=["pearson"],
                                 control="system")
    assert set(rows["coefficient"]) == {"pearson[control=system]"}
    for m in METRICS:
        per = []
        for _, g in d.groupby("source"):   # residuals of each group's cells after the system means
            x = g[m] - g.groupby("system")[m].transform("mean")
            z = g[HUMAN] - g.groupby("system")[HUMAN].transform("mean")
            per.append(sps.pearsonr(x, z)[0])
        got = rows[rows["metric"] == m].set_index("subset")["value"]
        assert got["source=*"] == pytest.approx(np.mean(per))
        assert got["source=cnndm"] == pytest.approx(per[0])
