"""The engine's registry of result tables (metaeval.schema.RESULT_TABLES) and its one reader."""

from metaeval import schema
from metaeval.runs import Warehouse


def test_every_registered_table_and_view_exists(tmp_path):
    with Warehouse.create(tmp_path / "wh.duckdb") as wh:
        names = set(wh.sql("SELECT table_name AS name FROM duckdb_tables() UNION ALL "
                           "SELECT view_name FROM duckdb_views() WHERE NOT internal")["name"])
    for table, view in schema.RESULT_TABLES.items():
        assert table in names and view in names, (table, view)
    # every table with a latest_* view is registered
    assert {n[len("latest_"):] for n in names if n.startswith("latest_")} <= set(schema.RESULT_TABLES)


def test_every_command_has_a_warehouse_method(db, tmp_path):
    """The Python API the commands call: each method persists and returns the latest rows."""
    from metaeval.runs import demo

    with Warehouse(db) as wh:
        demo.load(wh, "d", tmp_path / "demo", n_systems=5, n_inputs=8)
        acc = wh.accuracy("d", demo.HUMAN, levels=["system"], coefficients=["kendall"])
        assert set(acc) == {"pairwise_accuracy", "input_significance"}
        assert len(acc["pairwise_accuracy"]) == len(demo.METRICS)
        assert list(acc["pairwise_accuracy"]["metric"]) == sorted(demo.METRICS)
        soft = wh.accuracy("d", demo.HUMAN, soft=True, k=50)["soft_pairwise_accuracy"]
        assert len(soft) == len(demo.METRICS)
        agree = wh.systems_agreement("d", demo.HUMAN, tests=["ttest"])
        assert set(agree["test"]) == {"ttest"}
        wh.compare("d", demo.HUMAN, levels=["system"], coefficients=["pearson"], k=40)
        win = wh.winners("d", demo.HUMAN, levels=["system"], coefficients=["pearson"])
        assert set(win["metric"]) == set(demo.METRICS)
        ann = wh.annotators("d", [demo.HUMAN], ["system"], ["pearson"], k=40, splits=4)
        assert len(ann["human_ceiling"]) and len(ann["annotator_agreement"])
        assert len(wh.normality("d", ["sim-*"])) > 0
