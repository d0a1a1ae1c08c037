"""A warehouse that describes itself (issue 16, items 5 and 6): comments on every table and
column, conventions.method named as the method column, declared scales, duplicated measures."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval import Store, schema
from metaeval.cli import main
from metaeval.connection import duckdb_connect


def _run(db, *args, ok=True):
    result = CliRunner().invoke(main, ["--db", str(db), *map(str, args)], catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


def test_every_table_view_and_column_has_a_comment(db):
    with Store(db, read_only=True) as wh:
        tables = wh.sql("SELECT table_name AS name, comment FROM duckdb_tables() WHERE NOT internal")
        views = wh.sql("SELECT view_name AS name, comment FROM duckdb_views() WHERE NOT internal")
        columns = wh.sql("""SELECT table_name, column_name, comment FROM duckdb_columns()
                            WHERE NOT internal AND table_name IN (SELECT table_name FROM duckdb_tables())""")
        delta = wh.sql("SELECT comment FROM duckdb_columns() WHERE table_name = 'hypothesis_tests' "
                       "AND column_name = 'delta'")["comment"][0]
    assert len(tables) > 20 and len(views) > 10
    for frame, what in ((tables, "table"), (views, "view")):
        bare = frame[frame["comment"].isna() | (frame["comment"].fillna("").str.len() < 10)]["name"].tolist()
        assert not bare, f"{what}s without a comment: {bare}"
    bare = columns[columns["comment"].isna() | (columns["comment"].fillna("").str.len() < 5)]
    assert bare.empty, f"columns without a comment: {bare[['table_name', 'column_name']].values.tolist()}"
    assert "corr(metric_a, human) - corr(metric_b, human)" in delta


def test_conventions_method_is_the_method_column(db):
    _run(db, "demo", "--systems", "5", "--inputs", "6", "--k", "40")
    for method in ("boot-systems", "fisher"):
        _run(db, "ci", "--dataset", "demo", "--human", "expert.relevance", "--ci-method", method, "--k", "40",
             "--level", "system")
    for method in ("williams", "boot-inputs", "perm-systems"):
        _run(db, "compare", "--dataset", "demo", "--human", "expert.relevance", "--method", method, "--k", "40",
             "--level", "system", "--coefficient", "pearson")
    with Store(db, read_only=True) as wh:
        for table in ("confidence_intervals", "hypothesis_tests"):
            rows = wh.sql(f"SELECT method, conventions->>'$.method' AS named FROM {table}")
            assert len(set(rows["method"])) >= 2 and (rows["method"] == rows["named"]).all(), table


def _schema_2_scripts():
    """The DDL of schema version 2: the current scripts without what version 3 added."""
    for name, sql in schema.ddl_scripts():
        if name in ("16_duplicates.sql", "90_comments.sql"):
            continue
        sql = sql.replace("    scale       VARCHAR,", "").replace(" m.scale,", "").replace(", m.scale\n", "\n")
        yield sql


def test_a_schema_2_warehouse_is_upgraded_keeping_rows(tmp_path):
    db = tmp_path / "old.duckdb"
    with duckdb_connect(db) as con:  # a warehouse as version 2 wrote it
        for sql in _schema_2_scripts():
            con.execute(sql)
        assert "scale" not in [r[0] for r in con.execute("DESCRIBE measures").fetchall()]
        con.execute("INSERT INTO schema_info VALUES ('version', '2')")
        con.execute("INSERT INTO datasets (name) VALUES ('d')")
        con.execute("INSERT INTO measures (dataset_id, name, kind, direction) VALUES (1, 'm', 'automatic', 'higher')")
        con.execute("INSERT INTO analysis_runs (command, parameters, version, data_fingerprint) "
                    "VALUES ('ci', '{}', '0.3.0', 'f')")
        con.execute("""INSERT INTO confidence_intervals (run_id, dataset, metric, human, level, coefficient, method,
                       alpha, k, seed, estimate, lower, upper, fingerprint, conventions)
                       VALUES (1, 'd', 'm', 'h', 'system', 'kendall', 'boot-both', 0.05, 10, 0, 0.5, 0.1, 0.9, 'f',
                               '{"method": "bootstrap-both", "k": 10}')""")
    assert "init" in _run(db, "measures", "d", ok=False).output
    assert f"from schema 2 to {schema.SCHEMA_VERSION}" in _run(db, "init").output
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT method, conventions FROM confidence_intervals")
        assert len(rows) == 1 and json.loads(rows["conventions"][0]) == {"method": "boot-both", "k": 10}
        assert wh.measures("d")["scale"].isna().all() and wh.measures("d")["measure"].tolist() == ["m"]


def _table(path, columns: dict[str, np.ndarray]) -> None:
    rows = [(f"s{i}", f"i{j}", name, float(v[i, j])) for name, v in columns.items()
            for i in range(v.shape[0]) for j in range(v.shape[1])]
    pd.DataFrame(rows, columns=["system", "input", "measure", "value"]).to_csv(path, index=False)


@pytest.fixture
def dup_db(tmp_path):
    db = tmp_path / "w.duckdb"
    rng = np.random.default_rng(0)
    base = rng.random((5, 6)).round(3)
    _table(tmp_path / "t.csv", {
        "a": base, "b_same": base.copy(), "c_affine": 2 * base + 1, "d_flipped": -base,
        "e_other": rng.random((5, 6)), "f_negated": -base, "human": base + rng.normal(0, 0.1, (5, 6)),
    })
    _run(db, "init")
    _run(db, "ingest", "table", tmp_path / "t.csv", "--dataset", "x", "--human", "human", "--lower", "d_flipped")
    return db


def test_duplicated_measures_are_listed(dup_db):
    with Store(dup_db, read_only=True) as wh:
        m = wh.measures("x", duplicates=True).set_index("measure")
    assert m.loc["b_same", "duplicate_of"] == "a" and m.loc["b_same", "relation"] == "identical"
    assert m.loc["c_affine", "duplicate_of"] == "a" and m.loc["c_affine", "relation"] == "affine"
    assert m.loc["d_flipped", "duplicate_of"] == "a"          # lower is better: the same once oriented
    for name in ("a", "e_other", "f_negated", "human"):       # f_negated = -a with higher better: the opposite
        assert pd.isna(m.loc[name, "duplicate_of"]), name
    shown = _run(dup_db, "measures", "x", "--format", "csv").stdout
    assert "duplicate_of" in shown.splitlines()[0]


def test_duplicates_give_equal_correlations(dup_db):
    """What the listing promises: duplicates correlate identically."""
    rows = _run(dup_db, "correlate", "--dataset", "x", "--human", "human", "--format", "csv").stdout
    import io
    frame = pd.read_csv(io.StringIO(rows)).pivot_table(index=["level", "coefficient"], columns="metric",
                                                       values="value")
    for name in ("b_same", "c_affine", "d_flipped"):
        np.testing.assert_allclose(frame[name], frame["a"], atol=1e-12)


def test_report_notes_duplicates_instead_of_tau_1_panels(dup_db, tmp_path):
    _run(dup_db, "agreement", "--dataset", "x", "--metric", "a", "--metric", "b_same", "--metric", "e_other")
    _run(dup_db, "report", "--dataset", "x", "--out", tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text()
    assert "Duplicated measures: b_same = a (identical values)" in page
    assert "Not drawn: a / b_same" in page


def test_scale(dup_db):
    assert _run(dup_db, "scale", "x", "a", "b_same", "--range", "0..1").stdout.strip() == "a: 0..1; b_same: 0..1"
    bad = _run(dup_db, "scale", "x", "c_affine", "--range", "0..1", ok=False)
    assert bad.exit_code != 0 and "outside the scale 0..1; nothing changed" in bad.output
    with Store(dup_db, read_only=True) as wh:
        scales = wh.measures("x").set_index("measure")["scale"]
    assert scales["a"] == "0..1" and pd.isna(scales["c_affine"])
    _run(dup_db, "scale", "x", "a", "--unknown")
    with Store(dup_db, read_only=True) as wh:
        assert pd.isna(wh.measures("x").set_index("measure").loc["a", "scale"])
