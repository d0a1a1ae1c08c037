"""`metaeval ingest preferences`: atomic, idempotent, errors by file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from metaeval.runs import Warehouse
from metaeval.analyses.preferences_synthetic import synthetic_preferences
from metaeval.errors import ConflictError, InputError, NewIdsError
from metaeval.ingest import preferences

HEADER = "input,system_a,system_b,judge,order,winner,kind\n"


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def _count(wh):
    return wh.sql("SELECT count(*) AS n FROM preferences")["n"].iloc[0]


def test_ingest_is_idempotent_and_a_swapped_row_is_the_same_judgment(db, tmp_path):
    path = _write(tmp_path / "p.csv", HEADER + "d1,S2,S1,gpt,ab,a,\nd1,S1,S2,gpt,ab,tie,\nd1,S1,S2,ann,ba,b,human\n")
    with Warehouse(db) as wh:
        report = preferences.ingest(wh, "x", path)
        assert (report.rows, report.inserted, report.replaced) == (3, 3, 0)
        again = preferences.ingest(wh, "x", path)
        assert not again.changed and _count(wh) == 3
        m = wh.sql("SELECT * FROM preference_matrix ORDER BY judge")
        # S2,S1 shown ab (S2 first), winner S2  ==  S1,S2 shown ba, winner b
        assert m[["judge", "kind", "system_a", "system_b", "winner_ab", "winner_ba"]].fillna("-").values.tolist() == [
            ["ann", "human", "S1", "S2", "-", "b"], ["gpt", "automatic", "S1", "S2", "tie", "b"]]
        assert wh.sql("SELECT count(*) AS n FROM ingests WHERE format = 'preferences'")["n"].iloc[0] == 1


def test_conflicts_replace_and_kinds(db, tmp_path):
    first = _write(tmp_path / "a.csv", HEADER + "d1,S1,S2,gpt,ab,a,\n")
    other = _write(tmp_path / "b.csv", HEADER + "d1,S2,S1,gpt,ba,a,\n")   # = S1,S2 ab winner b
    with Warehouse(db) as wh:
        preferences.ingest(wh, "x", first)
        with pytest.raises(ConflictError, match=r"b.csv:2: judge gpt input d1 S1 vs S2 \(ab\): winner b, stored a"):
            preferences.ingest(wh, "x", other)
        assert wh.sql("SELECT winner FROM preferences")["winner"].tolist() == ["a"]
        report = preferences.ingest(wh, "x", other, replace=True)
        assert (report.inserted, report.replaced) == (0, 1)
        assert wh.sql("SELECT winner FROM preferences")["winner"].tolist() == ["b"]
        human = _write(tmp_path / "c.csv", HEADER + "d1,S1,S2,gpt,ba,a,human\n")
        with pytest.raises(InputError, match="c.csv:2: field 'kind': judge 'gpt' is stored as automatic"):
            preferences.ingest(wh, "x", human, replace=True)
        assert _count(wh) == 1


def test_unknown_systems_and_inputs_are_named_with_their_line(db, tmp_path):
    with Warehouse(db) as wh:
        preferences.ingest(wh, "x", _write(tmp_path / "a.csv", HEADER + "d1,S1,S2,gpt,ab,a,\n"))
        path = _write(tmp_path / "b.csv", HEADER + "d1,S1,S2,gpt,ba,a,\nd2,S1,S3,gpt,ab,a,\n")
        with pytest.raises(NewIdsError) as caught:
            preferences.ingest(wh, "x", path)
        assert caught.value.systems == [("S3", f"{path}:3")] and caught.value.inputs == [("d2", f"{path}:3")]
        assert _count(wh) == 1                                  # nothing written, not even line 2
        assert preferences.ingest(wh, "x", path, allow_new=True).inserted == 2


@pytest.mark.parametrize("row, field, message", [
    ("d1,S1,S2,gpt,xy,a,", "order", "expected one of ab, ba, got 'xy'"),
    ("d1,S1,S2,gpt,ab,first,", "winner", "expected one of a, b, tie, got 'first'"),
    ("d1,S1,S2,gpt,ab,a,robot", "kind", "expected one of automatic, human"),
    ("d1,S1,S1,gpt,ab,a,", "system_b", "both 'S1'"),
    (",S1,S2,gpt,ab,a,", "input", "the id is empty"),
    ("d1,S2,S1,gpt,ba,b,", "winner", "already judged input 'd1', S1 vs S2, with S1 shown first, on line 2"),
    ("d1,S1,S2,gpt,ba,b,human", "kind", "judge 'gpt' is human here but automatic on line 2"),
])
def test_bad_rows_name_file_line_and_field(tmp_path, row, field, message):
    path = _write(tmp_path / "p.csv", HEADER + "d1,S1,S2,gpt,ab,a,\n" + row + "\n")
    with pytest.raises(InputError) as caught:
        preferences.parse(path)
    assert (caught.value.line, caught.value.field) == (3, field) and message in str(caught.value)


def test_columns_and_typed_files(db, tmp_path):
    with pytest.raises(InputError, match="missing column"):
        preferences.parse(_write(tmp_path / "a.csv", "input,system_a,system_b,judge,winner\nd,S1,S2,g,a\n"))
    with pytest.raises(InputError, match="unknown column"):
        preferences.parse(_write(tmp_path / "b.csv", HEADER.strip() + ",score\nd,S1,S2,g,ab,a,,1\n"))
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in [
        {"input": 1, "system_a": "S1", "system_b": "S2", "judge": "g", "order": "ab", "winner": "a"},
        {"input": 1, "system_a": "S1", "system_b": "S2", "judge": "g", "order": "ba", "winner": 1}]))
    with pytest.raises(InputError, match=r"p.jsonl:2: field 'winner': expected one of a, b, tie, got 1"):
        preferences.parse(jsonl)
    frame = synthetic_preferences(inputs=4)
    frame.to_parquet(tmp_path / "p.parquet")
    with Warehouse(db) as wh:
        report = preferences.ingest(wh, "x", tmp_path / "p.parquet")
        assert report.inserted == len(frame)


def test_the_repository_example_is_the_generator_at_seed_0():
    from pathlib import Path

    stored = pd.read_csv(Path(__file__).parent.parent / "docs" / "examples" / "preferences.csv")
    pd.testing.assert_frame_equal(stored, synthetic_preferences(0))


def test_cli_ingest_preferences_one_line_errors(cli, tmp_path):
    good = _write(tmp_path / "p.csv", HEADER + "d1,S1,S2,gpt,ab,a,\n")
    out = cli("ingest", "preferences", good, "--dataset", "x").output
    assert "read 1 preferences, inserted 1" in out
    bad = _write(tmp_path / "q.csv", HEADER + "d1,S1,S2,gpt,ab,maybe,\n")
    result = cli("ingest", "preferences", bad, "--dataset", "x", expect_ok=False)
    assert result.exit_code != 0 and "q.csv:2: field 'winner'" in result.output and "Traceback" not in result.output


def test_drop_dataset_removes_its_preferences_and_judge_results(db, tmp_path):

    path = _write(tmp_path / "p.csv", HEADER + "d1,S1,S2,h,ab,a,human\nd1,S1,S2,gpt,ab,a,\n")
    with Warehouse(db) as wh:
        preferences.ingest(wh, "x", path)
        preferences.ingest(wh, "y", path)
        wh.judges("x", k=39)
        with pytest.raises(Exception, match="judge_statistics"):
            wh.drop_dataset("x")                                   # results on it: refused without cascade
        wh.drop_dataset("x", cascade=True)
        assert wh.sql("SELECT count(*) AS n FROM judge_statistics")["n"].iloc[0] == 0
        assert wh.sql("SELECT DISTINCT dataset FROM preference_matrix")["dataset"].tolist() == ["y"]
        assert _count(wh) == 2


def _as_schema_13(db) -> None:
    """The warehouse as schema 13 made it: preferences under their seven-column primary key."""
    import duckdb

    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE p13 AS SELECT * FROM preferences")
    con.execute("DROP VIEW preference_matrix")
    con.execute("DROP VIEW preference_means")
    con.execute("DROP TABLE preferences")
    con.execute("""CREATE TABLE preferences (dataset_id INTEGER NOT NULL, input_id INTEGER NOT NULL,
        system_a_id INTEGER NOT NULL, system_b_id INTEGER NOT NULL, judge VARCHAR NOT NULL,
        kind VARCHAR NOT NULL CHECK (kind IN ('automatic', 'human')),
        presentation VARCHAR NOT NULL CHECK (presentation IN ('ab', 'ba')),
        winner VARCHAR NOT NULL CHECK (winner IN ('a', 'b', 'tie')), probability DOUBLE,
        replicate INTEGER NOT NULL DEFAULT 0 CHECK (replicate >= 0),
        PRIMARY KEY (dataset_id, input_id, system_a_id, system_b_id, judge, presentation, replicate))""")
    con.execute("INSERT INTO preferences SELECT * FROM p13")
    con.execute("DROP TABLE p13")
    con.execute("UPDATE schema_info SET value = '13' WHERE key = 'version'")
    con.close()


def test_init_upgrades_schema_13_keeping_every_preference(db, tmp_path):
    # issue 47 item 1: schema 14 stores preferences without a declared key (the ingest keeps it)
    from metaeval import schema
    from tests.conftest import run_cli

    examples = Path(__file__).resolve().parents[1] / "docs" / "examples"
    runs = _write(tmp_path / "runs.csv", HEADER.replace("kind\n", "kind,replicate\n")
                  + "d1,S1,S2,gpt,ab,a,,0\nd1,S1,S2,gpt,ab,b,,1\nd1,S2,S1,gpt,ab,tie,,1\n")
    with Warehouse(db) as wh:
        preferences.ingest(wh, "p", examples / "preferences.csv")
        preferences.ingest(wh, "alp", examples / "alpaca.csv", judge="gpt4")
        preferences.ingest(wh, "r", runs)
        before = wh.sql("SELECT * FROM preferences")                  # (in their stored order)
        matrix = wh.sql("SELECT * FROM preference_matrix ORDER BY ALL")
        board = run_cli(db, "leaderboard", "--dataset", "p", "--k", "40", "--format", "json").output
    _as_schema_13(db)
    refused = run_cli(db, "datasets", ok=False)
    assert refused.exit_code != 0 and "init" in refused.output
    out = run_cli(db, "init")
    assert f"from schema 13 to {schema.SCHEMA_VERSION}" in out.output and schema.SCHEMA_VERSION == 14
    with Warehouse(db) as wh:
        pd.testing.assert_frame_equal(wh.sql("SELECT * FROM preferences"), before)
        pd.testing.assert_frame_equal(wh.sql("SELECT * FROM preference_matrix ORDER BY ALL"), matrix)
        assert wh.sql("SELECT count(*) AS n FROM duckdb_constraints() WHERE table_name = 'preferences' "
                      "AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')")["n"].iloc[0] == 0
        assert not preferences.ingest(wh, "p", examples / "preferences.csv").changed     # the key, kept by the ingest
        with pytest.raises(ConflictError):
            preferences.ingest(wh, "r", _write(tmp_path / "other.csv", HEADER.replace("kind\n", "kind,replicate\n")
                                               + "d1,S1,S2,gpt,ab,b,,0\n"))
        assert len(wh.sql("SELECT * FROM preferences")) == len(before)
    assert run_cli(db, "leaderboard", "--dataset", "p", "--k", "40", "--format", "json").output == board
