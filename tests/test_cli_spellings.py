"""One spelling per meaning on the command line (issue 44 item 6): ``--dataset`` accepted by every
command that takes a dataset (the positional DATASET kept working, the two the same rows), and
old option spellings still accepted with a one-line note naming the new one."""

from __future__ import annotations

import pytest

from tests.conftest import digest, run_cli

ROWS = "system,input,measure,value\n" + "".join(
    f"{s},d{i},{m},{(ord(s) * 7 + i * 3 + len(m)) % 11 / 10}\n"
    for s in "ABC" for i in range(4) for m in ("h", "m", "n"))


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


def _fingerprints(db) -> list:
    from metaeval.core import Store

    with Store(db, read_only=True) as wh:
        return wh.sql("SELECT metric, level, coefficient, method, fingerprint, estimate, lower, upper "
                      "FROM confidence_intervals ORDER BY ALL").values.tolist()


def test_an_old_spelling_is_accepted_with_a_note_and_stores_the_same_rows(filled, tmp_path):
    """`ci --method` (now --ci-method): one note on stderr naming the new spelling, the same rows,
    values and fingerprints as the new spelling (the stored parameter keeps its name)."""
    import shutil

    other = tmp_path / "other.duckdb"
    shutil.copy(filled, other)
    args = ("ci", "--dataset", "d", "--human", "h", "--level", "system", "--k", "49", "--format", "csv")
    new = run_cli(filled, *args, "--ci-method", "boot-systems")
    old = run_cli(other, *args, "--method=boot-systems")
    note = "note: --method of `metaeval ci` is now spelled --ci-method; --method is accepted in this release only"
    assert old.stderr.splitlines()[0] == note and "note:" not in new.stderr
    assert old.stdout == new.stdout
    assert _fingerprints(filled) == _fingerprints(other) and _fingerprints(filled)


@pytest.mark.parametrize("args, old, new", [
    (("--wide", "datasets"), "--wide", "--full-width"),
    (("datasets", "--wide"), "--wide", "--full-width"),
    (("simulate", "coverage", "--dataset", "d", "--human", "h", "--metric", "m", "--method", "fisher",
      "--trials", "2", "--level", "system", "--coefficient", "pearson"), "--method", "--ci-method"),
])
def test_old_spellings_say_their_new_one(filled, args, old, new):
    result = run_cli(filled, *args, ok=False)      # the toy dataset is too small to simulate: the note first
    [line] = [line for line in result.stderr.splitlines() if line.startswith("note:")]
    assert f"{old} of `metaeval" in line and f"now spelled {new}" in line


def test_old_and_new_spelling_together_is_given_twice(filled):
    result = run_cli(filled, "ci", "--dataset", "d", "--human", "h", "--method", "fisher", "--ci-method", "fisher",
                     ok=False)
    assert result.exit_code == 2 and "--ci-method is given more than once" in result.output


def test_help_shows_the_new_spellings_only(filled):
    from click.testing import CliRunner

    from metaeval.cli import main

    for command, new, old in ((["ci"], "--ci-method", "--method"), (["plot", "ci"], "--ci-method", "--method"),
                              (["categories"], "--out", "--figure"), (["datasets"], "--full-width", "--wide"),
                              (["simulate", "coverage"], "--ci-method", "--method")):
        text = CliRunner().invoke(main, [*command, "--help"], terminal_width=200).output
        assert new in text and not any(line.split()[:1] == [old] for line in text.splitlines()), command
    text = CliRunner().invoke(main, ["accuracy", "--help"], terminal_width=300).output
    assert "4, not 0 as everywhere else" in text


def test_arguments_given_as_paths_are_passed_on(filled, tmp_path):
    """click.testing passes the arguments as given (a Path is not a str): the respelling and the
    --dataset move leave such values as they are."""
    from click.testing import CliRunner

    from metaeval.cli import main

    scores = tmp_path / "more.csv"
    scores.write_text(ROWS.replace(",d", ",e"))
    for args in (["ingest", "table", str(scores), "--dataset", "e", "--human", "h", "--wide", "--db", filled],
                 ["matrix", "--dataset", "e", "m", "--db", filled]):
        result = CliRunner().invoke(main, ["--db", filled, *args])
        assert result.exit_code == 0, result.output
