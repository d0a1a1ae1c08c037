"""A human judgment cell is compared and replaced whole: its annotators and their values."""

from __future__ import annotations

import pytest

from tests.conftest import assert_same, snapshot, write_jsonl
from warehouse import Warehouse


def _file(path, rel):
    """One summary (s0, d0) whose human.rel is ``rel``, and a score."""
    return write_jsonl(path, [{"instance_id": "d0", "summarizer_id": "s0",
                               "metrics": {"human": {"rel": rel}, "bleu": 1.0}}])


def _judgments(db) -> dict[str, float]:
    with Warehouse(db, read_only=True) as wh:
        rows = wh.sql("SELECT annotator, value FROM judgments ORDER BY annotator")
    return dict(zip(rows["annotator"], rows["value"]))


def _state(db):
    with Warehouse(db, read_only=True) as wh:
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
    with Warehouse(three, read_only=True) as wh:
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
    with Warehouse(db, read_only=True) as wh:
        rows = wh.sql("""SELECT s.name, j.annotator, j.value FROM judgments j JOIN systems s USING (system_id)
                         ORDER BY s.name, j.annotator""")
    assert rows.values.tolist() == [["A", "p", 5.0], ["A", "y", 2.0], ["B", "x", 4.0]]
