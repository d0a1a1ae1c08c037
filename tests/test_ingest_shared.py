"""The two shared datasets ingest, and what comes out equals what went in."""

from __future__ import annotations

import numpy as np
import sqlalchemy
from click.testing import CliRunner

from metaeval import Store
from metaeval.cli import main
from metaeval.connection import CONFIG, duckdb_connect
from tests.conftest import assert_same, read_jsonl, shared, snapshot


def _source_matrix(path, key, systems, inputs):
    """The source file's values of ``key`` (a.b.c; lists averaged) by plain loops."""
    out = np.full((len(systems), len(inputs)), np.nan)
    for obj in read_jsonl(path):
        value = obj["metrics"]
        for part in key.split("."):
            value = value[part]
        value = np.mean(value) if isinstance(value, list) else value
        out[systems.index(obj["summarizer_id"]), inputs.index(obj["instance_id"])] = value
    return out


def test_summeval_expert_relevance_matrix(shared_warehouse):
    with Store(shared_warehouse, read_only=True) as wh:
        m = wh.matrix("summeval", ["expert.relevance", "rouge-2.f1"])
    assert m.values.shape == (2, 16, 100)
    assert not np.isnan(m.values).any()
    systems, inputs = list(m.systems), list(m.inputs)
    assert inputs == sorted(inputs) and len(set(systems)) == 16
    expected = _source_matrix(shared("summeval", "relevance.jsonl"), "expert.relevance", systems, inputs)
    np.testing.assert_allclose(m["expert.relevance"], expected, rtol=0, atol=1e-12)
    expected = _source_matrix(shared("summeval", "rouge.jsonl"), "rouge-2.f1", systems, inputs)
    np.testing.assert_array_equal(m["rouge-2.f1"], expected)


def test_summeval_annotators_are_kept(shared_warehouse):
    with Store(shared_warehouse, read_only=True) as wh:
        counts = wh.sql("""SELECT m.name, count(DISTINCT annotator) AS a, count(*) AS n
                           FROM judgments JOIN measures m USING (measure_id)
                           JOIN datasets d USING (dataset_id) WHERE d.name = 'summeval'
                           GROUP BY m.name ORDER BY m.name""")
    got = dict(zip(counts["name"], zip(counts["a"], counts["n"])))
    assert got["expert.relevance"] == (3, 4800)
    assert got["turker.coherence"] == (5, 8000)


def test_realsumm_litepyramid_and_texts(shared_warehouse):
    with Store(shared_warehouse, read_only=True) as wh:
        m = wh.matrix("realsumm", "litepyramid.recall")
        assert m.values.shape == (24, 100)
        assert m.inputs[:3] == ("0", "1", "2"), "numeric input ids sort numerically"
        expected = _source_matrix(shared("realsumm", "pyramid.jsonl"), "litepyramid.recall",
                                  list(m.systems), list(m.inputs))
        np.testing.assert_array_equal(m.values, expected)
        kinds = wh.measures("realsumm").set_index("measure")["kind"]
        assert kinds["litepyramid.recall"] == "human" and kinds["rouge-1.recall"] == "automatic"
        texts = wh.sql("""SELECT s.name AS system, i.name AS input, su.text FROM summaries su
                          JOIN systems s USING (system_id) JOIN inputs i USING (input_id)""")
        refs = wh.sql('SELECT count(*) AS n FROM "references"')["n"][0]
    assert len(texts) == 2400 and refs == 100
    source = read_jsonl(shared("realsumm", "summaries.jsonl"))[5]
    row = texts[(texts.system == source["summarizer_id"]) & (texts.input == source["instance_id"])]
    assert row["text"].item() == "\n".join(source["summary"]["text"])


def test_reingest_changes_nothing(shared_warehouse, tmp_path):
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(shared_warehouse.read_bytes())
    with Store(copy, read_only=True) as wh:
        before = snapshot(wh)
    result = CliRunner().invoke(main, ["--db", str(copy), "ingest", "sacrerouge",
                                       str(shared("summeval", "relevance.jsonl")), "--dataset", "summeval",
                                       "--human", "expert.*", "--human", "turker.*"])
    assert result.exit_code == 0, result.output
    assert "nothing changed" in result.output
    with Store(copy, read_only=True) as wh:
        assert_same(before, snapshot(wh))


def test_sql_matrix_view_equals_python(shared_warehouse):
    with Store(shared_warehouse, read_only=True) as wh:
        for dataset, measure in [("summeval", "expert.relevance"), ("realsumm", "qa-eval.f1")]:
            m = wh.matrix(dataset, measure)
            rows = wh.sql("SELECT system, inputs, value_list FROM matrix WHERE dataset = ? AND measure = ?",
                          [dataset, measure])
            assert tuple(rows["system"]) == m.systems
            assert all(tuple(i) == m.inputs for i in rows["inputs"])
            sql_values = np.array([[np.nan if v is None else v for v in r] for r in rows["value_list"]])
            np.testing.assert_allclose(sql_values, m.values, rtol=1e-15)
            means = wh.sql("SELECT system, mean FROM system_means WHERE dataset = ? AND measure = ?",
                           [dataset, measure])
            assert tuple(means["system"]) == m.systems
            np.testing.assert_allclose(means["mean"], np.nanmean(m.values, axis=1), rtol=1e-12)


def test_sqlalchemy_engine_reads_same_tables(shared_warehouse):
    engine = sqlalchemy.create_engine(f"duckdb:///{shared_warehouse}",
                                      connect_args={"read_only": True, "config": dict(CONFIG)})
    with engine.connect() as c:
        n = c.execute(sqlalchemy.text(
            "SELECT count(*) FROM cells WHERE dataset = 'summeval' AND measure = 'expert.relevance'")).scalar()
        names = sqlalchemy.inspect(c).get_table_names()
    engine.dispose()
    assert n == 1600
    assert {"datasets", "systems", "inputs", "measures", "scores", "judgments", "ingests"} <= set(names)


def test_cli_matrix_csv(shared_warehouse):
    result = CliRunner().invoke(main, ["--db", str(shared_warehouse), "matrix", "realsumm",
                                       "litepyramid.recall", "--format", "csv"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    header = lines[0].split(",")
    assert header[0] == "system" and header[1:4] == ["0", "1", "2"] and len(header) == 101
    assert len(lines) == 25
    with Store(shared_warehouse, read_only=True) as wh:
        m = wh.matrix("realsumm", "litepyramid.recall")
    first = lines[1].split(",")
    assert first[0] == m.systems[0]
    np.testing.assert_allclose([float(v) for v in first[1:]], m.values[0])


def test_read_only_sql_refuses_writes(shared_warehouse):
    result = CliRunner().invoke(main, ["--db", str(shared_warehouse), "sql", "DELETE FROM scores"])
    assert result.exit_code != 0
    assert "read-only" in result.output.lower()
    with duckdb_connect(shared_warehouse, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM scores").fetchall()[0][0] > 0
