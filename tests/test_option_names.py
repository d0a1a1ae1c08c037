"""Names given as options follow the names rule of the files (issue 48 items 4 and 9): an empty
judge name is the key of the human votes, a tab or spaces around it a name no file may hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from metaeval import names
from metaeval.errors import WarehouseError
from tests.conftest import digest, run_cli

PREFERENCES = Path(__file__).resolve().parents[1] / "docs" / "examples" / "preferences.csv"
BAD = [("", "the judge name is empty"), ("x\ty", "control character U+0009"), (" x", "spaces around it"),
       ("x\u2028", "separator U+2028")]


@pytest.mark.parametrize("judge, words", BAD)
def test_a_judge_option_follows_the_names_rule(db, tmp_path, judge, words):
    arena = tmp_path / "arena.csv"
    arena.write_text("model_a,model_b,winner\nm1,m2,model_a\nm2,m1,model_a\n")
    run_cli(db, "ingest", "preferences", PREFERENCES, "--dataset", "jd")
    before = digest(db)
    for command in (("ingest", "preferences", arena, "--dataset", "a"), ("leaderboard", "--dataset", "jd", "--k", "50"),
                    ("ingest", "mqm", arena, "--dataset", "m")):
        result = run_cli(db, *command, "--judge", judge, ok=False)
        assert result.exit_code != 0 and "--judge" in result.output and words in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
        assert digest(db) == before
    with pytest.raises(WarehouseError, match="judge"):
        names.check_option("judge", judge, "judge name")


def test_a_judge_name_of_the_rule_is_taken_as_given(db, tmp_path):
    arena = tmp_path / "arena.csv"
    arena.write_text("model_a,model_b,winner\nm1,m2,model_a\nm2,m1,model_a\nm1,m2,tie\n")
    run_cli(db, "ingest", "preferences", arena, "--dataset", "a", "--judge", "gpt 4")
    assert names.check_option("judge", "gpt 4") == "gpt 4"
    out = run_cli(db, "leaderboard", "--dataset", "a", "--judge", "gpt 4", "--k", "50").output
    assert "judge gpt 4" in out
