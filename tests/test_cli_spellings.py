"""One spelling per meaning on the command line (issue 44 item 6): ``--dataset`` accepted by every
command that takes a dataset (the positional DATASET kept working, the two the same rows), and
old option spellings still accepted with a one-line note naming the new one."""

from __future__ import annotations

import pytest

from tests.conftest import digest, run_cli

ROWS = "system,input,measure,value\n" + "".join(
    f"{s},d{i},{m},{(ord(s) * 7 + i * 3 + len(m)) % 11 / 10}\n" for s in "ABC" for i in range(4) for m in ("h", "m", "n"))


@pytest.fixture
def filled(db, tmp_path):
    scores = tmp_path / "scores.csv"
    scores.write_text(ROWS)
    run_cli(db, "ingest", "table", scores, "--dataset", "d", "--human", "h")
    return db


@pytest.mark.parametrize("positional, option", [
    (("matrix", "d", "m"), ("matrix", "--dataset", "d", "m")),
    (("matrix", "d", "m", "--format", "csv"), ("matrix", "m", "--dataset=d", "--format", "csv")),
    (("measures", "d"), ("measures", "--dataset", "d")),
    (("measures", "d", "--kind", "human"), ("measures", "--kind", "human", "--dataset", "d")),
])
def test_dataset_as_an_option_reads_the_same_rows(filled, positional, option):
    assert run_cli(filled, *positional).output == run_cli(filled, *option).output


@pytest.mark.parametrize("positional, option", [
    (("scale", "d", "m", "n", "--range", "0..1"), ("scale", "m", "n", "--dataset", "d", "--range", "0..1")),
    (("rename", "measure", "d", "m", "m2"), ("rename", "measure", "--dataset", "d", "m", "m2")),
    (("drop", "measure", "d", "n"), ("drop", "measure", "n", "--dataset", "d")),
    (("drop", "dataset", "d"), ("drop", "dataset", "--dataset", "d")),
])
def test_dataset_as_an_option_writes_the_same_warehouse(filled, tmp_path, positional, option):
    import shutil

    other = tmp_path / "other.duckdb"
    shutil.copy(filled, other)
    one, two = run_cli(filled, *positional), run_cli(other, *option)
    assert one.output == two.output
    assert digest(filled) == digest(other)


def test_dataset_given_twice_is_one_line_and_changes_nothing(filled):
    before = digest(filled)
    for args in (("matrix", "d", "--dataset", "d", "m"), ("drop", "dataset", "d", "--dataset", "d")):
        result = run_cli(filled, *args, ok=False)
        assert result.exit_code == 2 and "the dataset is given twice" in result.output, result.output
        assert "Traceback" not in result.output
    assert "--dataset is given more than once" in run_cli(filled, "matrix", "--dataset", "d", "--dataset", "e", "m",
                                                          ok=False).output
    assert digest(filled) == before


def test_score_takes_dataset_as_an_option_too(filled):
    """`score --dataset X` parses as `score X` (refused the same way: the toy dataset has no texts)."""
    one = run_cli(filled, "score", "d", "--metric", "rouge", ok=False)
    two = run_cli(filled, "score", "--dataset", "d", "--metric", "rouge", ok=False)
    assert one.exit_code == two.exit_code and one.output == two.output
