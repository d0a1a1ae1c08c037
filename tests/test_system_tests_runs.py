"""The system-tests family persisted (runs/systems/system_tests.py): rows against the pure computation,
reuse, refusals that write nothing, a warehouse made before the table, subsets, presentation."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from metaeval import Store
from metaeval.analyses import system_tests as st
from metaeval.errors import WarehouseError
from tests.conftest import digest, run_cli

from metaeval.runs.systems import system_tests as rs
from metaeval.runs.engine.families import FAMILIES

HUMAN = "expert.relevance"


@pytest.fixture(scope="module")
def demo_warehouse(tmp_path_factory):
    db = tmp_path_factory.mktemp("demo") / "w.duckdb"
    run_cli(db, "demo", "--dataset", "d", "--systems", "6", "--inputs", "10", "--k", "40")
    return db


@pytest.fixture
def demo(demo_warehouse, tmp_path):
    db = tmp_path / "w.duckdb"
    shutil.copy(demo_warehouse, db)
    return db


def _metric(wh):
    return sorted(wh.measure_kinds("d").query("kind == 'automatic'")["measure"])[0]


def test_the_family_is_declared_once():
    family = FAMILIES["system-tests"]
    assert family.tables == ("system_tests",) and family.tests_table == "system_tests"
    names = [o.name for o in family.options]
    assert names[:4] == ["dataset", "measure", "methods", "shapiro"]
    assert {"k", "alpha", "seed", "alternative", "correction", "correction_group", "where", "force"} <= set(names)
    assert family.option("methods").flag == "--method" if hasattr(family, "option") else True


def test_rows_equal_the_computation_and_are_reused(demo):
    with Store(demo) as wh:
        measure = _metric(wh)
        out = rs.run_system_tests(wh, "d", measure, ("t-test", "randomization"), shapiro=True, k=199, seed=3)
        A = wh.matrix("d", measure)
        again = rs.run_system_tests(wh, "d", measure, ("t-test", "randomization"), shapiro=True, k=199, seed=3)
        forced = rs.run_system_tests(wh, "d", measure, ("t-test", "randomization"), shapiro=True, k=199, seed=3,
                                     force=True)
        other = rs.run_system_tests(wh, "d", measure, ("randomization",), k=299, seed=3)
        runs = wh.sql("SELECT run_id, status FROM analysis_runs WHERE command = 'system-tests'")
    assert out.run_id is not None and again.run_id is None and forced.run_id not in (None, out.run_id)
    assert other.run_id is not None and len(runs) == 3 and (runs["status"] == "finished").all()
    ref = st.system_tests(A.values, ("t-test", "randomization"), k=199, seed=3, shapiro=True)
    rows = out.rows
    assert list(rows["method"].unique()) == ["t-test", "randomization", "shapiro-wilk"]
    for method, t in ref.tests.items():
        mine = rows[rows["method"] == method]
        assert len(mine) == 15
        assert list(mine["system_a"]) == [A.systems[i] for i in t.a]
        assert np.allclose(mine["p_value"].astype(float), t.p_value, equal_nan=True)
        assert np.allclose(mine["p_adjusted"].astype(float), t.p_adjusted, equal_nan=True)
        assert list(mine["significant"]) == list(t.significant)
        winners, _ = t.not_outperformed()
        assert out.not_outperformed[method] == (None if winners is None else [A.systems[i] for i in winners])
    assert out.not_outperformed["randomization"] is None and out.not_outperformed["t-test"] is not None
    conv = json.loads(rows[rows["method"] == "randomization"]["conventions"].iloc[0])
    assert conv["seed"] == 3 and conv["resolution"]["k"] == 199 and "orientation" in conv
    assert rows.loc[rows["method"] == "t-test", "k"].isna().all()
    assert np.allclose(rows[rows["method"] == "shapiro-wilk"]["p_value"].astype(float), ref.normality.p_value,
                       equal_nan=True)
    assert again.rows["result_id"].tolist() == out.rows["result_id"].tolist()     # the same rows, reused
    assert other.rows["k"].eq(299).all()


def test_a_lower_is_better_measure_is_negated(demo):
    with Store(demo) as wh:
        measure = "sim-high.f1"
        assert wh.sql("SELECT direction FROM measures WHERE name = 'sim-divergence'")["direction"][0] == "lower"
        raw = wh.matrix("d", "sim-divergence")
        diverging = rs.run_system_tests(wh, "d", "sim-divergence", ("t-test",)).rows
        first = diverging.iloc[0]
        assert first["delta"] == pytest.approx(-np.mean(raw.values[0] - raw.values[1]))
        higher = rs.run_system_tests(wh, "d", measure, ("t-test",))
        wh.con.execute("UPDATE measures SET direction = 'lower' WHERE name = ?", [measure])
        lower = rs.run_system_tests(wh, "d", measure, ("t-test",))
    assert lower.run_id is not None                 # another fingerprint: the direction is part of it
    assert np.allclose(lower.rows["delta"].astype(float), -higher.rows["delta"].astype(float))
    assert set(lower.rows["better"].dropna()) <= set(higher.rows["system_a"]) | set(higher.rows["system_b"])


@pytest.mark.parametrize("kwargs, message", [
    ({"methods": ("williams",)}, "unknown methods='williams'"),
    ({"methods": ()}, "give one or more"),
    ({"alternative": "bigger"}, "unknown alternative"),
    ({"correction_group": "system"}, "one-sided"),
    ({"methods": ("bootstrap",), "k": 5}, "k=5 is too small"),
    ({"alpha": 1.5}, "alpha=1.5"),
    ({"measure": "nosuch"}, "no measure 'nosuch'"),
    ({"dataset": "nosuch"}, "unknown dataset"),
    ({"where": ("split=test",)}, "split"),
])
def test_refusals_are_one_line_and_write_nothing(demo, kwargs, message):
    before = digest(demo)
    with Store(demo) as wh:
        args = {"dataset": "d", "measure": _metric(wh), **kwargs}
        with pytest.raises(WarehouseError) as exc:
            rs.run_system_tests(wh, args.pop("dataset"), args.pop("measure"), **args)
    assert message in str(exc.value) and "\n" not in str(exc.value)
    assert digest(demo) == before


def test_a_warehouse_made_before_the_table_gets_it(demo):
    with Store(demo) as wh:
        wh.con.execute("DROP VIEW latest_system_tests")
        wh.con.execute("DROP TABLE system_tests")
        out = rs.run_system_tests(wh, "d", HUMAN, ("wilcoxon",))
        assert out.run_id is not None and len(out.rows) == 15
        comments = wh.sql("SELECT comment FROM duckdb_columns() WHERE table_name = 'system_tests'")
    assert comments["comment"].notna().all()


def test_a_subset_of_cells(demo, tmp_path):
    with Store(demo) as wh:
        inputs = wh.matrix("d", HUMAN).inputs
    path = tmp_path / "attributes.csv"
    path.write_text("input,attribute,value\n" + "".join(f"{i},split,{'test' if n % 2 else 'dev'}\n"
                                                         for n, i in enumerate(inputs)))
    run_cli(demo, "ingest", "attributes", path, "--dataset", "d")
    with Store(demo) as wh:
        out = rs.run_system_tests(wh, "d", HUMAN, ("t-test",), where=("split=test",))
        every = rs.run_system_tests(wh, "d", HUMAN, ("t-test",))
    assert set(out.rows["subset"]) == {"split=test"} and (out.rows["n"] == 5).all()
    assert set(every.rows["subset"]) == {""} and (every.rows["n"] == 10).all()


def test_a_family_that_cannot_resolve_says_so_and_has_no_winner(demo):
    with Store(demo) as wh:
        out = rs.run_system_tests(wh, "d", HUMAN, ("bootstrap",), k=19)
    assert out.not_outperformed["bootstrap"] is None
    assert "cannot resolve at k = 19" in out.notes["bootstrap"] and "k >= 299 resamples would" in out.notes["bootstrap"]
    assert not out.rows["significant"].any() and out.rows["better"].isna().all()
    for fmt in ("text", "json", "csv", "markdown", "latex"):
        assert "cannot resolve" in rs.present(out, fmt)


def test_present_shows_graham_fig4(demo):
    with Store(demo) as wh:
        out = rs.run_system_tests(wh, "d", HUMAN, ("t-test",), correction="none")
    text = rs.present(out, "text")
    assert "t-test: row significantly better than column" in text and "not significantly outperformed" in text
    fig = rs.matrix(out, "t-test")
    assert list(fig.columns) == ["better than", *out.systems]
    significant = out.rows[out.rows["significant"]]
    for r in significant.itertuples():
        loser = r.system_b if r.better == r.system_a else r.system_a
        assert fig.set_index("better than").loc[r.better, loser].endswith("*")
    json.loads(rs.present(out, "json"))


def test_the_heatmap_orders_systems_by_mean(demo, tmp_path):
    from metaeval.present import figures

    with Store(demo) as wh:
        out = rs.run_system_tests(wh, "d", HUMAN, ("t-test", "bootstrap"), k=19)
    fig = rs.figure(out, "t-test")
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == sorted(out.systems, key=lambda s: -out.means[s])
    assert len(figures.save(fig, tmp_path / "fig4")) == 2
    fig = rs.figure(out, "bootstrap")
    assert "cannot resolve" in fig.axes[0].get_title()


def test_one_sided_families_per_system(demo):
    with Store(demo) as wh:
        out = rs.run_system_tests(wh, "d", HUMAN, ("t-test",), alternative="greater", correction_group="system",
                                  shapiro=True)
        again = rs.run_system_tests(wh, "d", HUMAN, ("t-test",), alternative="greater", correction_group="system",
                                    shapiro=True)
        with pytest.raises(WarehouseError, match="k=20000000"):
            rs.run_system_tests(wh, "d", HUMAN, ("t-test",), k=20_000_000)
    pairs = out.rows[out.rows["method"] == "t-test"]
    assert len(pairs) == 30 and (pairs["correction_group"] == "system").all() and (pairs["family_size"] == 5).all()
    normal = out.rows[out.rows["method"] == "shapiro-wilk"]
    assert len(normal) == 6 and (normal["correction_group"] == "all").all() and (normal["family_size"] <= 6).all()
    assert again.run_id is None
    for r in pairs[pairs["significant"]].itertuples():
        assert r.better == r.system_a and r.delta > 0


def test_the_report_shows_the_family_section_from_the_registry(demo_warehouse, tmp_path):
    """The report reads the registry: a family with a section (system-tests) adds it to the page
    with no change to the report; absent until its tests are stored."""
    from metaeval.runs import report

    db = tmp_path / "w.duckdb"
    shutil.copy(demo_warehouse, db)
    with Store(db, read_only=True) as wh:
        before, _ = report.render(wh, "d")
    assert "Tests between systems" not in before
    run_cli(db, "system-tests", "--dataset", "d", "--measure", HUMAN, "--method", "t-test", "--method", "bootstrap",
            "--k", "50")
    with Store(db, read_only=True) as wh:
        page, _ = report.render(wh, "d")
        rows = wh.sql("SELECT * FROM latest_system_tests WHERE method = 't-test'")
    assert 'id="system-tests"' in page and "Tests between systems" in page
    assert "cannot resolve at k = 50" in page                    # the bootstrap family at k=50
    beaten = {b if w == a else a for a, b, w in zip(rows["system_a"], rows["system_b"], rows["better"]) if w}
    winners = ", ".join(s for s in sorted(set(rows["system_a"]) | set(rows["system_b"])) if s not in beaten)
    assert winners in page
