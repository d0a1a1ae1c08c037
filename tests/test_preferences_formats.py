"""ingest preferences reads arena vote tables and AlpacaEval annotations (issue 35 item 5): the
stored votes are the file's, counted by hand; bad input refused by file, line and field."""

from __future__ import annotations

import json

import pytest

from metaeval import Store
from tests.conftest import digest, run_cli

ARENA = ("question_id,model_a,model_b,winner,language\n"
         "q1,gpt,llama,model_a,en\nq2,llama,gpt,model_b,en\nq3,gpt,claude,tie,de\n"
         "q4,claude,llama,tie (bothbad),en\nq5,claude,gpt,model_a,en\n")


def stored(db):
    with Store(db, read_only=True) as wh:
        return wh.sql(
            "SELECT i.name AS input, sa.name AS a, sb.name AS b, p.judge, p.kind, p.presentation, p.winner "
            "FROM preferences p JOIN inputs i USING (input_id) JOIN systems sa ON sa.system_id = p.system_a_id "
            "JOIN systems sb ON sb.system_id = p.system_b_id ORDER BY i.name")


def test_arena_votes_are_human_with_question_ids_and_system_names_in_order(db, tmp_path):
    path = tmp_path / "battles.csv"
    path.write_text(ARENA)
    run_cli(db, "ingest", "preferences", path, "--dataset", "arena")
    rows = stored(db)
    assert list(rows["input"]) == ["q1", "q2", "q3", "q4", "q5"]
    assert set(rows["kind"]) == {"human"} and set(rows["judge"]) == {"arena"}
    # q2: llama (shown first) vs gpt, gpt won -> stored gpt, llama, order ba (llama first), winner a (gpt)
    q2 = rows[rows["input"] == "q2"].iloc[0]
    assert (q2["a"], q2["b"], q2["presentation"], q2["winner"]) == ("gpt", "llama", "ba", "a")
    assert list(rows["winner"]) == ["a", "a", "tie", "tie", "a"]          # q5: claude < gpt, claude won
    before = digest(db)
    run_cli(db, "ingest", "preferences", path, "--dataset", "arena")
    assert digest(db) == before
    out = run_cli(db, "leaderboard", "--dataset", "arena", "--ridge", "0.1", "--k", "50").output
    assert "claude" in out


def test_arena_votes_without_question_ids_are_one_input_each_and_a_judge_makes_them_automatic(db, tmp_path):
    path = tmp_path / "b.csv"
    path.write_text("model_a,model_b,winner\na,b,model_a\na,b,model_a\nb,a,tie\n")
    run_cli(db, "ingest", "preferences", path, "--dataset", "d", "--judge", "gpt-4-judge")
    rows = stored(db)
    assert sorted(rows["input"]) == ["vote-2", "vote-3", "vote-4"]
    assert set(rows["kind"]) == {"automatic"} and set(rows["judge"]) == {"gpt-4-judge"}


@pytest.mark.parametrize("body, where", [
    ("model_a,model_b,winner\na,b,model_a\na,b,left\n", ":3: field 'winner'"),
    ("model_a,model_b,winner\na,a,tie\n", ":2: field 'model_b'"),
    ("question_id,model_a,model_b,winner\nq,a,b,tie\nq,a,b,model_a\n", ":3: field 'winner'"),
])
def test_bad_arena_rows_are_refused_by_file_line_and_field(db, tmp_path, body, where):
    path = tmp_path / "bad.csv"
    path.write_text(body)
    before = digest(db)
    result = run_cli(db, "ingest", "preferences", path, "--dataset", "d", ok=False)
    assert result.exit_code != 0 and f"bad.csv{where}" in result.output and digest(db) == before


def alpaca(tmp_path, records, name="annotations.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_alpaca_eval_preferences_and_output_lengths(db, tmp_path):
    records = [{"instruction": "Say hi", "output_1": "hi", "generator_1": "gpt4", "output_2": "hello there",
                "generator_2": "alpaca", "annotator": "weighted_gpt4", "preference": 1.0},
               {"instruction": "Count", "output_1": "1 2 3", "generator_1": "gpt4", "output_2": "one",
                "generator_2": "alpaca", "annotator": "weighted_gpt4", "preference": 2},
               {"instruction": "Tie", "output_1": "x", "generator_1": "alpaca", "output_2": "yy",
                "generator_2": "gpt4", "annotator": "weighted_gpt4", "preference": 1.5}]
    run_cli(db, "ingest", "preferences", alpaca(tmp_path, records), "--dataset", "ae")
    rows = stored(db)
    assert len(rows) == 3 and set(rows["judge"]) == {"weighted_gpt4"} and set(rows["kind"]) == {"automatic"}
    assert sorted(rows["winner"]) == ["a", "b", "tie"]          # alpaca < gpt4: the first two swapped
    with Store(db, read_only=True) as wh:
        lengths = wh.sql("SELECT system, input, value FROM attributes WHERE attribute = 'output_length' "
                         "ORDER BY system, value")
    assert sorted(lengths["value"].astype(int)) == sorted([2, 11, 5, 3, 1, 2])


@pytest.mark.parametrize("change, where", [
    ({"preference": 2.3}, ":1: field 'preference'"),      # outside [1, 2]
    ({"preference": 0.5}, ":1: field 'preference'"),      # AlpacaEval's 0 is a draw; nothing else below 1
    ({"preference": "win"}, ":1: field 'preference'"),
    ({"generator_2": "gpt4"}, ":1: field 'generator_2'"),
    ({"length_1": -2}, ":1: field 'length_1'"),
])
def test_bad_alpaca_rows_are_refused(db, tmp_path, change, where):
    record = {"instruction_id": "7", "generator_1": "gpt4", "generator_2": "alpaca", "annotator": "j",
              "preference": 1, **change}
    path = alpaca(tmp_path, [record])
    result = run_cli(db, "ingest", "preferences", path, "--dataset", "d", ok=False)
    assert result.exit_code != 0 and f"annotations.jsonl{where}" in result.output
