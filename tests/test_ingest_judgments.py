"""A human judgment cell is compared and replaced whole: its annotators and their values."""

from __future__ import annotations

import pytest

from metaeval import Store
from tests.conftest import assert_same, snapshot, write_jsonl


def _file(path, rel):
    """One summary (s0, d0) whose human.rel is ``rel``, and a score."""
    return write_jsonl(path, [{"instance_id": "d0", "summarizer_id": "s0",
                               "metrics": {"human": {"rel": rel}, "bleu": 1.0}}])


def _judgments(db) -> dict[str, float]:
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT annotator, value FROM judgments ORDER BY annotator")
    return dict(zip(rows["annotator"], rows["value"]))


def _state(db):
    with Store(db, read_only=True) as wh:
        return snapshot(wh)


@pytest.fixture
def three(db, cli, tmp_path):
    cli("ingest", "sacrerouge", _file(tmp_path / "three.jsonl", [1, 2, 3]), "--dataset", "t", "--human", "human.*")
    return db


@pytest.mark.parametrize("rel, stored, given", [
    ([1, 2], "{0: 1.0, 1: 2.0, 2: 3.0}", "{0: 1.0, 1: 2.0}"),              # an annotator fewer
    ([1, 2, 3, 4], "{0: 1.0, 1: 2.0, 2: 3.0}", "{0: 1.0, 1: 2.0, 2: 3.0, 3: 4.0}"),  # one more
])
def test_another_annotator_set_is_a_conflict(three, cli, tmp_path, rel, stored, given):
    path = _file(tmp_path / "other.jsonl", rel)
    before = _state(three)
    result = cli("ingest", "sacrerouge", path, "--dataset", "t", "--human", "human.*", expect_ok=False)
    assert result.exit_code != 0
    assert "1 value(s) conflict with the warehouse" in result.output
    assert (f"{path}:1: judgments system=s0 input=d0 measure=human.rel: "
            f"warehouse has {stored}, file has {given}") in result.output, result.output
    assert_same(before, _state(three))


@pytest.mark.parametrize("rel", [[1, 2], [5, 2], [1, 2, 3, 4], [9]])
def test_replace_leaves_exactly_the_new_annotators(three, cli, tmp_path, rel):
    path = _file(tmp_path / "other.jsonl", rel)
    out = cli("ingest", "sacrerouge", path, "--dataset", "t", "--human", "human.*", "--replace").output
    assert f"inserted 0, replaced {len(rel)}" in out
    assert _judgments(three) == {str(a): float(v) for a, v in enumerate(rel)}
    with Store(three, read_only=True) as wh:
        assert wh.matrix("t", "human.rel").values[0, 0] == sum(rel) / len(rel)
        assert wh.sql("SELECT replaced FROM ingests ORDER BY ingest_id")["replaced"].tolist() == [0, len(rel)]
    again = cli("ingest", "sacrerouge", path, "--dataset", "t", "--human", "human.*").output
    assert "nothing changed" in again


def test_same_annotators_in_another_order_are_the_same_cell(db, cli, tmp_path):
    first = tmp_path / "a.csv"
    first.write_text("system,input,measure,value,annotator\nA,d,h,1,x\nA,d,h,2,y\nA,d,h,3,z\n")
    cli("ingest", "table", first, "--dataset", "t")
    second = tmp_path / "b.csv"
    second.write_text("system,input,measure,value,annotator\nA,d,h,3,z\nA,d,h,1,x\nA,d,h,2,y\n")
    assert "nothing changed" in cli("ingest", "table", second, "--dataset", "t").output


def test_replace_with_other_annotator_names_keeps_none_of_the_old(db, cli, tmp_path):
    first = tmp_path / "a.csv"
    first.write_text("system,input,measure,value,annotator\nA,d,h,1,x\nA,d,h,2,y\nB,d,h,4,x\n")
    cli("ingest", "table", first, "--dataset", "t")
    second = tmp_path / "b.csv"
    second.write_text("system,input,measure,value,annotator\nA,d,h,5,p\nA,d,h,2,y\n")
    result = cli("ingest", "table", second, "--dataset", "t", expect_ok=False)
    assert result.exit_code != 0 and f"{second}:2: judgments system=A input=d measure=h" in result.output
    assert "warehouse has {x: 1.0, y: 2.0}, file has {p: 5.0, y: 2.0}" in result.output, result.output
    out = cli("ingest", "table", second, "--dataset", "t", "--replace").output
    assert "replaced 2" in out
    with Store(db, read_only=True) as wh:
        rows = wh.sql("""SELECT s.name, j.annotator, j.value FROM judgments j JOIN systems s USING (system_id)
                         ORDER BY s.name, j.annotator""")
    assert rows.values.tolist() == [["A", "p", 5.0], ["A", "y", 2.0], ["B", "x", 4.0]]


# --- judgments split into one file per annotator ------------------------------------------
HEADER = "system,input,measure,value,annotator,kind\n"


def _annotator_file(path, annotator, values, systems=("A", "B")):
    """One row per system (input d, measure h) of ``annotator``'s ``values``."""
    path.write_text(HEADER + "".join(f"{s},d,h,{v},{annotator},human\n" for s, v in zip(systems, values)))
    return path


def _cells(db) -> dict[str, dict[str, float]]:
    with Store(db, read_only=True) as wh:
        rows = wh.sql("""SELECT s.name, j.annotator, j.value FROM judgments j JOIN systems s USING (system_id)
                         ORDER BY s.name, j.annotator""")
    out: dict[str, dict[str, float]] = {}
    for system, annotator, value in rows.itertuples(index=False):
        out.setdefault(system, {})[annotator] = value
    return out


@pytest.mark.parametrize("replace", [[], ["--replace"]])
def test_one_file_per_annotator_loads_as_the_union(db, cli, tmp_path, replace):
    alice = _annotator_file(tmp_path / "alice.csv", "alice", [1, 2])
    bob = _annotator_file(tmp_path / "bob.csv", "bob", [3, 4])
    out = cli("ingest", "table", alice, bob, "--dataset", "d", *replace).output
    assert (f"{alice}: read 2 judgments, inserted 2 {bob}: read 2 judgments, inserted 2"   # own rows (wrapped
            in " ".join(out.split())), out                                                  # at 100 columns)
    assert _cells(db) == {"A": {"alice": 1.0, "bob": 3.0}, "B": {"alice": 2.0, "bob": 4.0}}
    with Store(db, read_only=True) as wh:
        ingests = wh.sql("SELECT file, inserted, replaced FROM ingests ORDER BY ingest_id")
        assert ingests.values.tolist() == [[str(alice), 2, 0], [str(bob), 2, 0]]
        assert wh.matrix("d", "h").values.tolist() == [[2.0], [3.0]]
    before = _state(db)
    for again in ([alice, bob], [bob, alice]):
        assert "nothing changed" in cli("ingest", "table", *again, "--dataset", "d").output
    assert_same(before, _state(db))


def test_stored_union_compared_with_the_union_of_the_files(db, cli, tmp_path):
    alice = _annotator_file(tmp_path / "alice.csv", "alice", [1, 2])
    bob = _annotator_file(tmp_path / "bob.csv", "bob", [3, 4])
    cli("ingest", "table", alice, bob, "--dataset", "d")
    before = _state(db)
    # one annotator's file alone is another annotator set: a conflict, which says how to add annotators
    result = cli("ingest", "table", alice, "--dataset", "d", expect_ok=False)
    assert result.exit_code != 0 and "2 value(s) conflict with the warehouse" in result.output, result.output
    assert (f"{alice}:2: judgments system=A input=d measure=h: warehouse has {{alice: 1.0, bob: 3.0}}, "
            "file has {alice: 1.0}") in result.output, result.output
    assert "in one command" in result.output
    # bob changed one value: the cell's union differs; the message names both files
    bob2 = _annotator_file(tmp_path / "bob2.csv", "bob", [3, 5])
    result = cli("ingest", "table", alice, bob2, "--dataset", "d", expect_ok=False)
    assert result.exit_code != 0 and "1 value(s) conflict with the warehouse" in result.output, result.output
    assert (f"{alice}:3: judgments system=B input=d measure=h: warehouse has {{alice: 2.0, bob: 4.0}}, "
            f"this ingest has {{alice: 2.0, bob: 5.0}} (from this file and {bob2})") in result.output, result.output
    assert_same(before, _state(db))
    out = cli("ingest", "table", alice, bob2, "--dataset", "d", "--replace").output
    assert out.count("inserted 0, replaced 1") == 2, out  # B's cell: one row of each file
    assert _cells(db) == {"A": {"alice": 1.0, "bob": 3.0}, "B": {"alice": 2.0, "bob": 5.0}}
    # a third annotator's file with the others: added; --replace with one file leaves only its annotator
    carol = _annotator_file(tmp_path / "carol.csv", "carol", [6], systems=("A",))
    cli("ingest", "table", alice, bob2, carol, "--dataset", "d", "--replace")
    assert _cells(db)["A"] == {"alice": 1.0, "bob": 3.0, "carol": 6.0}
    cli("ingest", "table", carol, "--dataset", "d", "--replace")
    assert _cells(db) == {"A": {"carol": 6.0}, "B": {"alice": 2.0, "bob": 5.0}}


@pytest.mark.parametrize("replace", [[], ["--replace"]])
def test_same_annotator_two_values_in_two_files_is_an_input_conflict(db, cli, tmp_path, replace):
    alice = _annotator_file(tmp_path / "alice.csv", "alice", [1, 2])
    again = _annotator_file(tmp_path / "again.csv", "alice", [1, 9])
    result = cli("ingest", "table", alice, again, "--dataset", "d", *replace, expect_ok=False)
    assert result.exit_code != 0 and "1 value(s) conflict within the input" in result.output, result.output
    assert (f"{again}:3: judgments system=B input=d measure=h annotator=alice: 9.0 here, 2.0 in {alice}:3"
            in result.output), result.output
    assert _cells(db) == {}


def test_same_annotator_same_value_in_two_files_counts_once(db, cli, tmp_path):
    """As a score given identically by two files: no conflict, counted for the first file."""
    alice = _annotator_file(tmp_path / "alice.csv", "alice", [1, 2])
    both = tmp_path / "both.csv"
    both.write_text(HEADER + "A,d,h,1,alice,human\nA,d,h,3,bob,human\n")
    out = cli("ingest", "table", alice, both, "--dataset", "d").output
    assert f"{alice}: read 2 judgments, inserted 2 {both}: read 2 judgments, inserted 1" in " ".join(out.split()), out
    assert _cells(db) == {"A": {"alice": 1.0, "bob": 3.0}, "B": {"alice": 2.0}}


def test_sacrerouge_annotator_positions_add_up_over_files(db, cli, tmp_path):
    """SacreROUGE annotators are list positions: within one command a shorter list that agrees
    with a longer one on its positions adds nothing, and a differing position is a conflict."""
    short, full = _file(tmp_path / "short.jsonl", [1, 2]), _file(tmp_path / "full.jsonl", [1, 2, 3])
    cli("ingest", "sacrerouge", short, full, "--dataset", "t", "--human", "human.*")
    assert _judgments(db) == {"0": 1.0, "1": 2.0, "2": 3.0}
    other = _file(tmp_path / "other.jsonl", [1, 5])
    result = cli("ingest", "sacrerouge", full, other, "--dataset", "t", "--human", "human.*", expect_ok=False)
    assert f"{other}:1: judgments system=s0 input=d0 measure=human.rel annotator=1: 5.0 here, 2.0 in {full}:1" \
        in result.output, result.output
