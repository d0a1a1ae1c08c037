"""Incremental ingest: idempotent, conflicts reported, bad input rejected atomically."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from metaeval import Store
from metaeval.ingest import sacrerouge, summaries
from tests.conftest import ROOT, assert_same, snapshot, write_jsonl


def _metrics_lines(n_systems=3, n_inputs=4, measure="rouge-1", offset=0.0):
    return [{"instance_id": f"d{j}", "summarizer_id": f"s{i}", "summarizer_type": "peer",
             "metrics": {measure: {"recall": offset + i + j / 10}, "human": {"rel": [i, i + 1, j]}}}
            for i in range(n_systems) for j in range(n_inputs)]


@pytest.fixture
def loaded(db, cli, tmp_path):
    """A warehouse holding one small SacreROUGE file; returns its path."""
    path = write_jsonl(tmp_path / "base.jsonl", _metrics_lines())
    cli("ingest", "sacrerouge", path, "--dataset", "toy", "--human", "human.*")
    return path


def _state(db):
    with Store(db, read_only=True) as wh:
        return snapshot(wh)


def test_values_and_annotators(db, loaded):
    with Store(db, read_only=True) as wh:
        m = wh.matrix("toy", ["rouge-1.recall", "human.rel"])
    assert m.systems == ("s0", "s1", "s2") and m.inputs == ("d0", "d1", "d2", "d3")
    i, j = np.meshgrid(range(3), range(4), indexing="ij")
    np.testing.assert_allclose(m["rouge-1.recall"], i + j / 10)
    np.testing.assert_allclose(m["human.rel"], (i + i + 1 + j) / 3)


def test_new_measure_merges_by_system_and_input(db, cli, loaded, tmp_path):
    before = _state(db)
    extra = write_jsonl(tmp_path / "extra.jsonl", [
        {"instance_id": "d0", "summarizer_id": "s0", "metrics": {"bleu": 1.5}},
        {"instance_id": "d9", "summarizer_id": "s7", "metrics": {"bleu": 2.5}},
    ])
    out = cli("ingest", "sacrerouge", extra, "--dataset", "toy", "--allow-new").output  # s7 and d9 are new
    assert "inserted 2" in out
    after = _state(db)
    assert len(after["scores"]) == len(before["scores"]) + 2
    with Store(db, read_only=True) as wh:
        outer = wh.matrix("toy", ["rouge-1.recall", "bleu"])
        inner = wh.matrix("toy", ["rouge-1.recall", "bleu"], join="inner")
    assert outer.values.shape == (2, 4, 5) and np.isnan(outer["rouge-1.recall"][3]).all()
    assert outer["bleu"][0, 0] == 1.5 and np.isnan(outer["bleu"][1, 1])
    assert inner.systems == ("s0",) and inner.inputs == ("d0",)


def test_reingest_is_noop(db, cli, loaded):
    before = _state(db)
    out = cli("ingest", "sacrerouge", loaded, "--dataset", "toy", "--human", "human.*").output
    assert "nothing changed" in out
    assert_same(before, _state(db))


def test_conflict_is_reported_and_nothing_written(db, cli, loaded, tmp_path):
    lines = _metrics_lines()
    lines[5]["metrics"]["rouge-1"]["recall"] = 99.0
    lines[6]["metrics"]["human"]["rel"][1] = 42
    lines.append({"instance_id": "new", "summarizer_id": "s0", "metrics": {"rouge-1": {"recall": 1.0}}})
    changed = write_jsonl(tmp_path / "changed.jsonl", lines)
    before = _state(db)
    result = cli("ingest", "sacrerouge", changed, "--dataset", "toy", "--human", "human.*", "--allow-new",
                 expect_ok=False)  # the input "new" is new on purpose
    assert result.exit_code != 0
    assert "2 value(s) conflict" in result.output
    assert f"{changed}:6: scores system=s1 input=d1 measure=rouge-1.recall" in result.output
    assert "warehouse has 1.1, file has 99.0" in result.output
    assert (f"{changed}:7: judgments system=s1 input=d2 measure=human.rel: "
            "warehouse has {0: 1.0, 1: 2.0, 2: 2.0}, file has {0: 1.0, 1: 42.0, 2: 2.0}") in result.output
    assert_same(before, _state(db))
    out = cli("ingest", "sacrerouge", changed, "--dataset", "toy", "--human", "human.*", "--replace",
              "--allow-new").output
    assert "replaced 4" in out and "inserted 1" in out  # a score, and the 3 values of a judgment cell
    with Store(db, read_only=True) as wh:
        assert wh.matrix("toy", "rouge-1.recall").frame().loc["s1", "d1"] == 99.0


@pytest.mark.parametrize("replace", [[], ["--replace"]])
def test_kind_clash_is_a_conflict_replace_does_not_resolve(db, cli, loaded, tmp_path, replace):
    path = write_jsonl(tmp_path / "k.jsonl", [{"instance_id": "d0", "summarizer_id": "s0",
                                              "metrics": {"rouge-1": {"recall": 0.0}}}])
    before = _state(db)
    result = cli("ingest", "sacrerouge", path, "--dataset", "toy", "--human", "rouge-1.*", *replace, expect_ok=False)
    assert result.exit_code != 0
    assert (f"{path}: measure 'rouge-1.recall' is stored as automatic (higher is better), "
            "this file makes it human (higher is better)") in result.output, result.output
    assert "--replace" not in result.output and "another measure name" in result.output
    assert_same(before, _state(db))


def test_direction_clash_within_one_ingest_names_both_files(db, cli, tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("system,input,measure,value\ns0,d0,js-2,0.1\n")
    b.write_text("system,input,measure,value,kind\ns1,d0,js-2,0.2,human\n")
    result = cli("ingest", "table", a, b, "--dataset", "t", "--lower", "js-*", expect_ok=False)
    assert result.exit_code != 0
    assert "another file of this ingest" in result.output and "--replace" not in result.output
    assert f"{b}: measure 'js-2' is human (lower is better) here, automatic (lower is better) in {a}" in result.output


def test_conflict_within_one_ingest_names_both_places(db, cli, loaded, tmp_path):
    first = write_jsonl(tmp_path / "first.jsonl", _metrics_lines(measure="rouge-9"))
    lines = _metrics_lines(measure="rouge-9")
    lines[2]["metrics"]["rouge-9"]["recall"] = 123.0
    lines[3]["metrics"]["human"]["rel"] = [0, 7]  # annotator 1 gave 1 in first.jsonl; annotator 2 only there
    second = write_jsonl(tmp_path / "second.jsonl", lines)
    before = _state(db)
    for replace in ([], ["--replace"]):
        result = cli("ingest", "sacrerouge", first, second, "--dataset", "toy", "--human", "human.*", *replace,
                     expect_ok=False)
        assert result.exit_code != 0
        assert "2 value(s) conflict within the input" in result.output, result.output
        assert "warehouse has" not in result.output and "--replace" not in result.output
        assert (f"{second}:3: scores system=s0 input=d2 measure=rouge-9.recall: 123.0 here, 0.2 in {first}:3"
                in result.output), result.output
        assert (f"{second}:4: judgments system=s0 input=d3 measure=human.rel annotator=1: 7.0 here, "
                f"1.0 in {first}:4") in result.output, result.output
        assert_same(before, _state(db))


def test_texts_conflict_within_one_ingest(db, cli, tmp_path):
    one = {"instance_id": "d0", "summarizer_id": "a", "summary": {"text": ["x ."]},
           "references": [{"summarizer_id": "r", "text": ["gold ."]}]}
    a = write_jsonl(tmp_path / "a.jsonl", [one])
    one["references"][0]["text"] = ["other gold ."]
    b = write_jsonl(tmp_path / "b.jsonl", [{"instance_id": "d1", "summarizer_id": "a", "summary": "y ."}, one])
    result = cli("ingest", "summaries", a, b, "--dataset", "t", expect_ok=False)
    assert result.exit_code != 0
    assert f"{b}:2: references input=d0 reference_id=r: 'other gold .' here, 'gold .' in {a}:1" in result.output


def test_same_values_in_two_files_of_one_ingest(db, tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", _metrics_lines())
    b = write_jsonl(tmp_path / "b.jsonl", _metrics_lines()[5:] + _metrics_lines(measure="bleu")[:2])
    batches = [sacrerouge.parse(p, human=["human.*"]) for p in (a, b)]
    with Store(db) as wh:
        first, second = wh.load("toy", batches)
    assert (first.contents, first.rows, first.inserted) == ("12 scores, 36 judgments", 48, 48)
    assert (second.contents, second.inserted) == ("9 scores, 27 judgments", 2)  # only the bleu values are new


def test_report_says_what_was_read(db, tmp_path):
    texts = write_jsonl(tmp_path / "s.jsonl", [
        {"instance_id": "d0", "summarizer_id": "a", "summary": "x .", "references": [{"text": "gold ."}]},
        {"instance_id": "d0", "summarizer_id": "b", "summary": "y .", "references": [{"text": "gold ."}]}])
    one = write_jsonl(tmp_path / "one.jsonl", [{"instance_id": "d0", "summarizer_id": "a", "metrics": {"m": 1}}])
    with Store(db) as wh:
        [report] = wh.load("t", [summaries.parse(texts)])
        assert report.contents == "2 summaries, 1 reference, 0 documents" and report.rows == 3
        [report] = wh.load("t", [sacrerouge.parse(one)])
        assert report.contents == "1 score"


BAD_LINES = {
    "malformed": ('{"instance_id": "d0", "summarizer_id": ', None, "malformed JSON"),
    "missing-id": ({"summarizer_id": "s0", "metrics": {"m": 1}}, "instance_id", "got missing"),
    "non-numeric": ({"instance_id": "d0", "summarizer_id": "s9", "metrics": {"m": "high"}}, "metrics.m", "expected a number"),
    "nan": ('{"instance_id": "d0", "summarizer_id": "s9", "metrics": {"m": NaN}}', None, "NaN is not a number"),
    "infinite": ('{"instance_id": "d0", "summarizer_id": "s9", "metrics": {"m": 1e999}}', "metrics.m", "not finite"),
    "null": ({"instance_id": "d0", "summarizer_id": "s9", "metrics": {"m": None}}, "metrics.m", "got null"),
    "bool": ({"instance_id": "d0", "summarizer_id": "s9", "metrics": {"m": True}}, "metrics.m", "expected a number"),
    "list-not-human": ({"instance_id": "d0", "summarizer_id": "s9", "metrics": {"m": [1, 2]}}, "metrics.m", "--human"),
    "no-metrics": ({"instance_id": "d0", "summarizer_id": "s9"}, "metrics", "non-empty object"),
    "duplicate": ({"instance_id": "d0", "summarizer_id": "s0", "metrics": {"rouge-1": {"recall": 0.0}}},
                  "metrics.rouge-1.recall", "measure=rouge-1.recall is given more than once (lines 1, 8)"),
}


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_bad_line_in_the_middle_leaves_warehouse_unchanged(db, cli, loaded, tmp_path, case):
    bad, field, message = BAD_LINES[case]
    good = [json.dumps(o) for o in _metrics_lines(n_systems=4, offset=0.0)]
    texts = good[:7] + [bad if isinstance(bad, str) else json.dumps(bad)] + good[7:]
    path = tmp_path / f"{case}.jsonl"
    path.write_text("\n".join(texts) + "\n")
    before = _state(db)
    result = cli("ingest", "sacrerouge", path, "--dataset", "toy", "--human", "human.*", expect_ok=False)
    assert result.exit_code != 0
    line = 1 if case == "duplicate" else 8
    assert f"{path}:{line}:" in result.output, result.output
    if field:
        assert f"field {field!r}" in result.output, result.output
    assert message in result.output, result.output
    assert "Traceback" not in result.output
    assert_same(before, _state(db))


def test_failure_in_second_file_rolls_back_first(db, cli, loaded, tmp_path):
    good = write_jsonl(tmp_path / "good.jsonl", _metrics_lines(measure="rouge-9"))
    before = _state(db)
    lines = _metrics_lines(measure="rouge-9")
    lines[2]["metrics"]["rouge-9"]["recall"] = 123.0  # conflicts with good.jsonl once loaded
    bad = write_jsonl(tmp_path / "bad.jsonl", lines)
    result = cli("ingest", "sacrerouge", good, bad, "--dataset", "toy", "--human", "human.*", expect_ok=False)
    assert result.exit_code != 0 and "conflict" in result.output
    assert_same(before, _state(db))


def test_empty_file(db, cli, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    result = cli("ingest", "sacrerouge", empty, "--dataset", "toy", expect_ok=False)
    assert result.exit_code != 0 and f"{empty}: the file is empty" in result.output


def test_human_glob_matching_nothing(db, cli, loaded):
    result = cli("ingest", "sacrerouge", loaded, "--dataset", "toy", "--human", "human.*", "--human", "humn.*",
                 expect_ok=False)
    assert result.exit_code != 0 and "--human 'humn.*' matches no measure" in result.output


def test_locked_warehouse(db, cli, loaded):
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from metaeval.connection import duckdb_connect
        con = duckdb_connect({str(db)!r})
        print("locked", flush=True)
        sys.stdin.read()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout.readline().strip() == "locked"
        result = cli("ingest", "sacrerouge", loaded, "--dataset", "toy", "--human", "human.*", expect_ok=False)
    finally:
        holder.communicate("")
    assert result.exit_code != 0
    assert "locked by another process" in result.output
    assert_same(_state(db), _state(db))


# --- the long-table format ------------------------------------------------------------
def _table(n=3):
    return pd.DataFrame([{"system": f"s{i}", "input": f"d{j}", "measure": "m", "value": i * 10 + j}
                         for i in range(n) for j in range(n)])


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_table_formats_agree(db, cli, tmp_path, suffix):
    frame = pd.concat([_table(), pd.DataFrame([{"system": "s0", "input": "d0", "measure": "h",
                                                "value": 4, "annotator": "ann-a"},
                                               {"system": "s0", "input": "d0", "measure": "h",
                                                "value": 2, "annotator": "ann-b"}])])
    path = tmp_path / f"t{suffix}"
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    elif suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_json(path, orient="records", lines=True)
    cli("ingest", "table", path, "--dataset", "t")
    with Store(db, read_only=True) as wh:
        m = wh.matrix("t", ["m", "h"])
        kinds = dict(wh.sql("SELECT name, kind FROM measures").values)
    np.testing.assert_array_equal(m["m"], np.arange(3)[:, None] * 10 + np.arange(3))
    assert m["h"][0, 0] == 3.0 and kinds == {"m": "automatic", "h": "human"}


def test_table_system_level_without_input(db, cli, tmp_path):
    path = tmp_path / "wmt.csv"
    path.write_text("system,measure,value\nA,bleu,30.1\nB,bleu,28.4\nA,human.da,0.2\nB,human.da,0.1\n")
    cli("ingest", "table", path, "--dataset", "wmt", "--human", "human.*")
    with Store(db, read_only=True) as wh:
        m = wh.matrix("wmt", ["bleu", "human.da"])
    assert m.inputs == ("all",) and m.systems == ("A", "B")
    np.testing.assert_array_equal(m.values[:, :, 0], [[30.1, 28.4], [0.2, 0.1]])


@pytest.mark.parametrize("content, line, field, message", [
    ("system,input,measure,value,extra\nA,d,m,1,x\n", None, "extra", "unknown column"),
    ("system,input,value\nA,d,1\n", None, "measure", "required column missing"),
    ("system,input,measure,value\nA,d,m,1\nA,d,m,x\n", 3, "value", "expected a number"),
    ("system,input,measure,value\nA,d,m,1\n,d,m,2\n", 3, "system", "got missing"),
    ("system,input,measure,value\nA,d,m,1\nB,d,m,inf\n", 3, "value", "not finite"),
    ("system,input,measure,value,kind\nA,d,m,1,robot\n", 2, "kind", "expected one of"),
    ("system,input,measure,value\n", None, None, "no rows"),
])
def test_table_errors(db, cli, tmp_path, content, line, field, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    before = _state(db)
    result = cli("ingest", "table", path, "--dataset", "t", expect_ok=False)
    assert result.exit_code != 0
    where = f"{path}:{line}:" if line else f"{path}:"
    assert where in result.output and message in result.output, result.output
    if field:
        assert repr(field) in result.output
    assert_same(before, _state(db))


def test_summaries_conflicting_reference_in_file(db, cli, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [
        {"instance_id": "d0", "summarizer_id": "a", "summary": {"text": ["x ."]},
         "references": [{"summarizer_id": "r", "text": ["gold ."]}]},
        {"instance_id": "d0", "summarizer_id": "b", "summary": {"text": ["y ."]},
         "references": [{"summarizer_id": "r", "text": ["other ."]}]},
    ])
    result = cli("ingest", "summaries", path, "--dataset", "t", expect_ok=False)
    assert result.exit_code != 0
    assert f"{path}:2: field 'references[0]'" in result.output and "line 1" in result.output


def test_summaries_text_conflict_with_warehouse(db, cli, tmp_path):
    one = {"instance_id": "d0", "summarizer_id": "a", "summary": {"text": ["x ."]},
           "documents": [{"text": ["doc one ."]}, {"text": "doc two ."}]}
    cli("ingest", "summaries", write_jsonl(tmp_path / "a.jsonl", [one]), "--dataset", "t")
    with Store(db, read_only=True) as wh:
        assert list(wh.sql("SELECT text FROM documents ORDER BY position")["text"]) == ["doc one .", "doc two ."]
    before = _state(db)
    one["summary"]["text"] = ["changed ."]
    result = cli("ingest", "summaries", write_jsonl(tmp_path / "b.jsonl", [one]), "--dataset", "t", expect_ok=False)
    assert result.exit_code != 0 and "summaries system=a input=d0" in result.output
    assert_same(before, _state(db))


# --- reading: encodings, CSV lines, typed numbers ----------------------------------------
NOT_UTF8 = "caf\u00e9".encode("latin-1")


@pytest.mark.parametrize("command, name, good, bad", ids=["sacrerouge", "summaries", "csv", "jsonl"], argvalues=[
    ("sacrerouge", "m.jsonl", b'{"instance_id": "d0", "summarizer_id": "s0", "metrics": {"m": 1}}',
     b'{"instance_id": "' + NOT_UTF8 + b'", "summarizer_id": "s0", "metrics": {"m": 1}}'),
    ("summaries", "s.jsonl", b'{"instance_id": "d0", "summarizer_id": "s0", "summary": "x ."}',
     b'{"instance_id": "d1", "summarizer_id": "s0", "summary": "' + NOT_UTF8 + b'"}'),
    ("table", "t.csv", b"system,input,measure,value\nA,d0,m,1", b"A," + NOT_UTF8 + b",m,2"),
    ("table", "t.jsonl", b'{"system": "A", "input": "d0", "measure": "m", "value": 1}',
     b'{"system": "A", "input": "' + NOT_UTF8 + b'", "measure": "m", "value": 2}'),
])
def test_non_utf8_file_is_an_input_error(db, cli, tmp_path, command, name, good, bad):
    path = tmp_path / name
    path.write_bytes(good + b"\n" + bad + b"\n")
    line = good.count(b"\n") + 2
    before = _state(db)
    result = cli("ingest", command, path, "--dataset", "t", expect_ok=False)
    assert result.exit_code != 0
    assert f"{path}:{line}: not UTF-8 text" in result.output, result.output
    assert "Traceback" not in result.output
    assert_same(before, _state(db))


@pytest.mark.parametrize("content, line", ids=["blank-lines", "multi-line-fields", "crlf"], argvalues=[
    ("system,input,measure,value\n\nA,d0,m,1\n\n\nA,d1,m,oops\n", 6),
    # line breaks inside quoted values (spaces around a number are allowed; in an id they are refused)
    ('system,input,measure,value\nA,d0,m,"1\n"\nA,d1,m,"\n\n2"\nA,d2,m,oops\n', 7),
    ('system,input,measure,value\r\nA,d0,m,"1\r\n"\r\n\r\nA,d1,m,oops\r\n', 5),
])
def test_csv_errors_name_the_physical_line(db, cli, tmp_path, content, line):
    path = tmp_path / "lines.csv"
    path.write_bytes(content.encode())
    result = cli("ingest", "table", path, "--dataset", "t", expect_ok=False)
    assert result.exit_code != 0
    assert f"{path}:{line}: field 'value': expected a number, got 'oops'" in result.output, result.output


@pytest.mark.parametrize("content, line, message", [
    ("system,input,measure,value\nA,d0,m,1,extra\n", 2, "5 fields, the header has 4"),
    ('system,input,measure,value\nA,d0,m,1\nA,"d1,m,2\n', 3, "malformed CSV"),
    ("system,input,measure,value,value\nA,d0,m,1,2\n", 1, "more than once"),
    ("\n\n", None, "the file is empty"),
])
def test_csv_structure_errors(db, cli, tmp_path, content, line, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    result = cli("ingest", "table", path, "--dataset", "t", expect_ok=False)
    assert result.exit_code != 0
    assert (f"{path}:{line}:" if line else f"{path}:") in result.output and message in result.output, result.output


@pytest.mark.parametrize("metrics, field, got", [
    ({"m": "0.5"}, "metrics.m", "the string '0.5'"),
    ({"rouge": {"f1": "1e-3"}}, "metrics.rouge.f1", "the string '1e-3'"),
    ({"human": {"rel": [1, "2"]}}, "metrics.human.rel[1]", "the string '2'"),
    ({"human": {"rel": [True, 2]}}, "metrics.human.rel[0]", "bool True"),
])
def test_sacrerouge_string_numbers_are_rejected(db, cli, tmp_path, metrics, field, got):
    path = write_jsonl(tmp_path / "strings.jsonl", [
        {"instance_id": "d0", "summarizer_id": "s0", "metrics": {"m": 1, "rouge": {"f1": 1}, "human": {"rel": [1, 2]}}},
        {"instance_id": "d1", "summarizer_id": "s0", "metrics": metrics}])
    result = cli("ingest", "sacrerouge", path, "--dataset", "t", "--human", "human.*", expect_ok=False)
    assert result.exit_code != 0
    assert f"{path}:2: field {field!r}: expected a number, got {got}" in result.output, result.output


@pytest.mark.parametrize("value, got", [("0.5", "the string '0.5'"), (True, "bool True")])
def test_typed_table_string_or_bool_values_are_rejected(db, cli, tmp_path, value, got):
    jsonl = write_jsonl(tmp_path / "t.jsonl", [{"system": "A", "input": "d0", "measure": "m", "value": 1},
                                               {"system": "A", "input": "d1", "measure": "m", "value": value}])
    parquet = tmp_path / "t.parquet"  # a Parquet column has one type: all strings, or all booleans
    pd.DataFrame({"system": ["A", "A"], "input": ["d0", "d1"], "measure": "m", "value": [value, value]}).to_parquet(parquet)
    for path, line in ((jsonl, 2), (parquet, 1)):
        result = cli("ingest", "table", path, "--dataset", "t", expect_ok=False)
        assert result.exit_code != 0
        assert f"{path}:{line}: field 'value': expected a number, got {got}" in result.output, result.output


def test_csv_values_are_text_and_parsed(db, cli, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('system,input,measure,value\nA,d0,m," 0.5"\nA,d1,m,1e-3\n')
    cli("ingest", "table", path, "--dataset", "t")
    with Store(db, read_only=True) as wh:
        np.testing.assert_array_equal(wh.matrix("t", "m").values, [[0.5, 1e-3]])


@pytest.mark.parametrize("command, name, text, field, key", ids=["table", "sacrerouge-nested", "summaries"], argvalues=[
    ("table", "t.jsonl", '{"system": "A", "input": "d1", "measure": "m", "value": 0.1, "value": 0.9}', "value", "value"),
    ("sacrerouge", "m.jsonl", '{"instance_id": "d1", "summarizer_id": "s0", "metrics": {"rouge-2": {"f1": 0.1, "f1": 0.9}}}',
     "metrics.rouge-2.f1", "f1"),
    ("summaries", "s.jsonl", '{"instance_id": "d1", "summarizer_id": "s0", "summary": "x .", '
     '"references": [{"text": "a ."}, {"text": "b .", "text": "c ."}]}', "references[1].text", "text"),
])
def test_json_duplicate_key_is_an_input_error(db, cli, tmp_path, command, name, text, field, key):
    good = {"table": '{"system": "A", "input": "d0", "measure": "m", "value": 1}',
            "sacrerouge": '{"instance_id": "d0", "summarizer_id": "s0", "metrics": {"rouge-2": {"f1": 1}}}',
            "summaries": '{"instance_id": "d0", "summarizer_id": "s0", "summary": "y ."}'}[command]
    path = tmp_path / name
    path.write_text(good + "\n" + text + "\n")
    before = _state(db)
    result = cli("ingest", command, path, "--dataset", "t", expect_ok=False)
    assert result.exit_code != 0
    assert (f"{path}:2: field {field!r}: the key {key!r} is given more than once in a JSON object"
            in result.output), result.output
    assert_same(before, _state(db))


@pytest.mark.parametrize("text, hint", [
    ("1_000", "digit separators"), ("0.000_1", "digit separators"), ("1e1_0", "digit separators"),
    ("\u0661\u0662", "ASCII digits"), ("\uff11", "ASCII digits"),
])
def test_csv_number_syntax_only_python_reads_is_rejected(db, cli, tmp_path, text, hint):
    path = tmp_path / "t.csv"
    path.write_text(f"system,input,measure,value\nA,d0,m,1\nA,d1,m,{text}\n", encoding="utf-8")
    result = cli("ingest", "table", path, "--dataset", "t", expect_ok=False)
    assert result.exit_code != 0
    assert f"{path}:3: field 'value': expected a number, got {text!r} (" in result.output and hint in result.output, \
        result.output


@pytest.mark.parametrize("text", ["inf", "-Infinity", "nan", "NaN", "+inf"])
def test_csv_non_finite_spellings_are_not_finite(db, cli, tmp_path, text):
    path = tmp_path / "t.csv"
    path.write_text(f"system,input,measure,value\nA,d0,m,{text}\n")
    result = cli("ingest", "table", path, "--dataset", "t", expect_ok=False)
    assert result.exit_code != 0 and f"{path}:2: field 'value': the value" in result.output
    assert "not finite" in result.output, result.output


def test_csv_plain_number_spellings_are_accepted(db, cli, tmp_path):
    path = tmp_path / "t.csv"
    texts = ["+1", "-2", ".5", "1.", "1E3", "1e-3", " 0.25 ", "007"]
    path.write_text("system,input,measure,value\n" + "".join(f"A,d{i},m,{t}\n" for i, t in enumerate(texts)))
    cli("ingest", "table", path, "--dataset", "t")
    with Store(db, read_only=True) as wh:
        m = wh.matrix("t", "m")
    assert m.frame().loc["A", [f"d{i}" for i in range(len(texts))]].tolist() == [1, -2, 0.5, 1, 1000, 1e-3, 0.25, 7]


@pytest.mark.parametrize("command, name, content", ids=["csv", "table-jsonl", "sacrerouge", "summaries"], argvalues=[
    ("table", "t.csv", "system,input,measure,value\nA,d0,m,1\n"),
    ("table", "t.jsonl", '{"system": "A", "input": "d0", "measure": "m", "value": 1}\n'),
    ("sacrerouge", "m.jsonl", '{"instance_id": "d0", "summarizer_id": "A", "metrics": {"m": 1}}\n'),
    ("summaries", "s.jsonl", '{"instance_id": "d0", "summarizer_id": "A", "summary": "x ."}\n'),
])
def test_utf8_byte_order_mark_is_accepted(db, cli, tmp_path, command, name, content):
    plain, bom = tmp_path / name, tmp_path / f"bom-{name}"
    plain.write_bytes(content.encode())
    bom.write_bytes(b"\xef\xbb\xbf" + content.encode())
    cli("ingest", command, bom, "--dataset", "t")
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT name FROM systems")["name"].tolist() == ["A"]
        assert wh.sql("SELECT name FROM inputs")["name"].tolist() == ["d0"]
    assert "nothing changed" in cli("ingest", command, plain, "--dataset", "t").output


def test_bom_only_opening_the_file_is_dropped(db, cli, tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes("system,input,measure,value\nA,\ufeffd0,m,1\n".encode())
    cli("ingest", "table", path, "--dataset", "t")
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT name FROM inputs")["name"].tolist() == ["\ufeffd0"]


@pytest.mark.parametrize("metrics, field", [
    ({"rouge-2": {"f1": 0.1}, "rouge-2.f1": 0.1}, "metrics.rouge-2.f1"),
    ({"rouge-2.f1": 0.1, "rouge-2": {"f1": 0.9}}, "metrics.rouge-2.f1"),
    ({"a": {"b.c": 1}, "a.b": {"c": 2}}, "metrics.a.b.c"),
    ({"human": {"rel": [1, 2]}, "human.rel": [1, 2]}, "metrics.human.rel"),
])
def test_sacrerouge_measure_named_twice_through_a_dotted_key(db, cli, tmp_path, metrics, field):
    path = write_jsonl(tmp_path / "m.jsonl", [{"instance_id": "d0", "summarizer_id": "s0", "metrics": {"m": 1}},
                                              {"instance_id": "d1", "summarizer_id": "s0", "metrics": metrics}])
    result = cli("ingest", "sacrerouge", path, "--dataset", "t", "--human", "human.*", expect_ok=False)
    assert result.exit_code != 0
    assert f"{path}:2: field {field!r}: measure {field[len('metrics.'):]!r} is given twice on this line" \
        in result.output, result.output


# --- new systems and inputs in an existing dataset: only when asked -----------------------------------
@pytest.fixture
def summeval_like(db, cli, tmp_path):
    """A dataset of systems M0..M2 and inputs d0..d3, one measure; returns its CSV file."""
    path = tmp_path / "base.csv"
    path.write_text("system,input,measure,value\n" + "".join(f"M{i},d{j},m,{i + j / 10}\n"
                                                            for i in range(3) for j in range(4)))
    cli("ingest", "table", path, "--dataset", "summeval")
    return path


def test_a_typo_in_an_input_id_is_not_a_new_input(db, cli, summeval_like, tmp_path):
    typo = tmp_path / "typo.csv"
    typo.write_text("system,input,measure,value\nM0,d0,mm,0.4\nM0,x,mm,0.5\n")
    before = _state(db)
    result = cli("ingest", "table", typo, "--dataset", "summeval", expect_ok=False)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert result.output == (f"Error: 1 new input ('x' at {typo}:3) for dataset summeval; nothing was written: "
                             "pass --allow-new to add them (allow_new=True in Python), or fix the ids\n")
    assert_same(before, _state(db))
    assert "inserted 2" in cli("ingest", "table", typo, "--dataset", "summeval", "--allow-new").output
    with Store(db, read_only=True) as wh:
        assert wh.matrix("summeval", "mm").inputs == ("d0", "x")


def test_new_ids_are_counted_and_the_first_few_listed(db, cli, summeval_like, tmp_path):
    path = tmp_path / "new.csv"
    rows = [f"M{9 - i},d0,m2,1\n" for i in range(7)] + ["M0,y,m2,1\n", "M0,x,m2,1\n", "M0,y,m3,1\n"]
    path.write_text("system,input,measure,value\n" + "".join(rows))
    result = cli("ingest", "table", path, "--dataset", "summeval", expect_ok=False)
    assert (f"7 new systems ('M9' at {path}:2, 'M8' at {path}:3, 'M7' at {path}:4, 'M6' at {path}:5, "
            f"'M5' at {path}:6, and 2 more) and 2 new inputs ('y' at {path}:9, 'x' at {path}:10) "
            "for dataset summeval; nothing was written") in result.output, result.output


@pytest.mark.parametrize("command", ["table", "sacrerouge", "summaries"])
def test_every_ingest_command_needs_allow_new(db, cli, summeval_like, tmp_path, command):
    path = {"table": lambda: _write(tmp_path / "t.csv", "system,input,measure,value\nM0,d0,m,0.0\nM7,d0,m,1\n"),
            "sacrerouge": lambda: write_jsonl(tmp_path / "m.jsonl", [
                {"instance_id": "d0", "summarizer_id": "M7", "metrics": {"m": 1}}]),
            "summaries": lambda: write_jsonl(tmp_path / "s.jsonl", [
                {"instance_id": "d0", "summarizer_id": "M0", "summary": "x ."},
                {"instance_id": "d0", "summarizer_id": "M7", "summary": "y ."}])}[command]()
    before = _state(db)
    result = cli("ingest", command, path, "--dataset", "summeval", expect_ok=False)
    assert result.exit_code != 0 and "1 new system ('M7' at " in result.output, result.output
    assert_same(before, _state(db))
    cli("ingest", command, path, "--dataset", "summeval", "--allow-new")
    with Store(db, read_only=True) as wh:
        assert "M7" in set(wh.sql("SELECT name FROM systems")["name"])


def test_new_ids_of_references_and_documents_count_too(db, cli, summeval_like, tmp_path):
    path = write_jsonl(tmp_path / "s.jsonl", [{"instance_id": "d0", "summarizer_id": "M0", "summary": "x .",
                                               "references": [{"text": "r ."}]}])
    cli("ingest", "summaries", path, "--dataset", "summeval")
    path = write_jsonl(tmp_path / "s2.jsonl", [{"instance_id": "d9", "summarizer_id": "M0", "summary": "x ."}])
    result = cli("ingest", "summaries", path, "--dataset", "summeval", expect_ok=False)
    assert f"1 new input ('d9' at {path}:1)" in result.output, result.output


def test_python_load_takes_allow_new(db, summeval_like, tmp_path):
    from metaeval.errors import NewIdsError
    from metaeval.ingest import table

    path = _write(tmp_path / "t.csv", "system,input,measure,value\nM3,d0,m,1\n")
    with Store(db) as wh:
        with pytest.raises(NewIdsError) as caught:
            wh.load("summeval", [table.parse(path)])
        assert caught.value.systems == [("M3", f"{path}:2")] and caught.value.inputs == []
        [report] = wh.load("summeval", [table.parse(path)], allow_new=True)
        assert report.inserted == 1
        [report] = wh.load("other", [table.parse(path)])  # a new dataset takes any id
        assert report.inserted == 1


def test_the_demo_into_a_dataset_of_other_systems_says_what_to_do(db, tmp_path):
    from metaeval.errors import NewIdsError
    from metaeval.runs import demo

    with Store(db) as wh:
        demo.load(wh, "demo", tmp_path / "a", n_systems=3, n_inputs=3)
        with pytest.raises(NewIdsError) as caught:
            demo.load(wh, "demo", tmp_path / "b", n_systems=4, n_inputs=3)
    message = str(caught.value)
    assert message.startswith("1 new system ('S03' at <demo seed=0 systems=4 inputs=3>:11) for dataset demo")
    assert "allow_new" not in message and "dataset=NAME" in message and "db=PATH" in message
    from metaeval.cli.app import error_text   # the command line names the flags

    assert "--allow-new" not in error_text(caught.value)
    assert "--dataset NAME" in error_text(caught.value) and "--db PATH" in error_text(caught.value)


def _write(path, text):
    path.write_text(text)
    return path


# --- input that escaped as a traceback; empty measure names; ids of typed tables --------------------------
BIG = "1" + "0" * 400  # an integer beyond the largest double


@pytest.mark.parametrize("command, options, line, field", ids=["sacrerouge", "sacrerouge-human", "table-jsonl"],
                         argvalues=[
    ("sacrerouge", [], '{"instance_id": "d%d", "summarizer_id": "s0", "metrics": {"m": %s}}', "metrics.m"),
    ("sacrerouge", ["--human", "human"],
     '{"instance_id": "d%d", "summarizer_id": "s0", "metrics": {"human": [1, %s]}}', "metrics.human[1]"),
    ("table", [], '{"system": "s0", "input": "d%d", "measure": "m", "value": %s}', "value"),
])
def test_a_huge_integer_is_an_input_error(db, cli, tmp_path, command, options, line, field):
    path = tmp_path / "big.jsonl"
    path.write_text(line % (0, "1") + "\n" + line % (1, BIG) + "\n")
    before = _state(db)
    result = cli("ingest", command, path, "--dataset", "t", *options, expect_ok=False)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert (f"{path}:2: field {field!r}: the integer of 401 digits is too large to store as a number"
            in result.output), result.output
    assert_same(before, _state(db))


@pytest.mark.parametrize("command, text, field", ids=["sacrerouge-id", "sacrerouge-metric", "summaries-id",
                                                      "summaries-text", "table-jsonl"], argvalues=[
    ("sacrerouge", '{"instance_id": "d\\ud800", "summarizer_id": "s0", "metrics": {"m": 1}}', "instance_id"),
    ("sacrerouge", '{"instance_id": "d1", "summarizer_id": "s0", "metrics": {"r": {"x\\udfff": 1}}}', "metrics.r.x\udfff"),
    ("summaries", '{"instance_id": "d1", "summarizer_id": "\\ud800", "summary": "x ."}', "summarizer_id"),
    ("summaries", '{"instance_id": "d1", "summarizer_id": "s0", "summary": "x .", '
                  '"references": [{"text": ["ok .", "\\ud83d ."]}]}', "references[0].text[1]"),
    ("table", '{"system": "s0", "input": "\\ud800", "measure": "m", "value": 1}', "input"),
])
def test_a_lone_surrogate_escape_is_an_input_error(db, cli, tmp_path, command, text, field):
    good = {"sacrerouge": '{"instance_id": "d0", "summarizer_id": "s0", "metrics": {"m": 1, "r": {"x": 1}}}',
            "summaries": '{"instance_id": "d0", "summarizer_id": "s0", "summary": "\\ud83d\\ude00 ."}',
            "table": '{"system": "s0", "input": "d0", "measure": "m", "value": 1}'}[command]  # a full pair is fine
    path = tmp_path / "x.jsonl"
    path.write_text(good + "\n" + text + "\n")
    before = _state(db)
    result = cli("ingest", command, path, "--dataset", "t", expect_ok=False)
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert f"{path}:2: field {field!r}: the escape \\u" in result.output, result.output
    assert "is half of a UTF-16 surrogate pair" in result.output
    assert_same(before, _state(db))
    path.write_text(good + "\n")
    cli("ingest", command, path, "--dataset", "t")


@pytest.mark.parametrize("command, name, content, line, field", ids=[
    "sacrerouge-empty", "sacrerouge-blank-level", "csv-blank", "jsonl-empty", "parquet-blank"], argvalues=[
    ("sacrerouge", "m.jsonl", '{"instance_id": "d0", "summarizer_id": "s0", "metrics": {"m": 1, "": 2}}', 1,
     "metrics."),
    ("sacrerouge", "m.jsonl", '{"instance_id": "d0", "summarizer_id": "s0", "metrics": {"rouge": {" ": 2}}}', 1,
     "metrics.rouge. "),
    ("table", "t.csv", "system,input,measure,value\ns0,d0,m,1\ns0,d0,  ,2\n", 3, "measure"),
    ("table", "t.jsonl", '{"system": "s0", "input": "d0", "measure": "", "value": 1}', 1, "measure"),
    ("table", "t.parquet", pd.DataFrame({"system": ["s0", "s0"], "input": ["d0", "d1"], "measure": ["m", " \t"],
                                         "value": [1.0, 2.0]}), 2, "measure"),
])
def test_an_empty_measure_name_is_an_input_error(db, cli, tmp_path, command, name, content, line, field):
    path = tmp_path / name
    if isinstance(content, pd.DataFrame):
        content.to_parquet(path)
    else:
        path.write_text(content + "\n")
    result = cli("ingest", command, path, "--dataset", "t", expect_ok=False)
    assert result.exit_code != 0
    assert f"{path}:{line}: field {field!r}:" in result.output, result.output
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT * FROM measures").empty


def test_parquet_float_ids_are_refused(db, cli, tmp_path):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"system": [1.0, 2.0], "input": ["d0", "d0"], "measure": "m", "value": [1.0, 2.0]}).to_parquet(path)
    result = cli("ingest", "table", path, "--dataset", "t", expect_ok=False)
    assert result.exit_code != 0
    assert (f"{path}:1: field 'system': expected an id (string or integer), got the float 1.0: "
            "store ids as strings or integers") in result.output, result.output


def test_csv_and_parquet_give_the_same_ids(db, cli, tmp_path):
    """Integer ids, and annotators of an integer column with nulls (the rows of an automatic
    measure), which pandas would read from Parquet as floats."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {"system": pa.array([7, 7, 7, 8], pa.int64()), "input": pa.array([1, 1, 1, 1], pa.int32()),
               "measure": ["h", "h", "auto", "auto"], "value": [4.0, 5.0, 0.5, 0.25],
               "annotator": pa.array([10, 11, None, None], pa.int64())}
    parquet = tmp_path / "t.parquet"
    pq.write_table(pa.table(columns), parquet)
    csv = tmp_path / "t.csv"
    csv.write_text("system,input,measure,value,annotator\n7,1,h,4.0,10\n7,1,h,5.0,11\n7,1,auto,0.5,\n8,1,auto,0.25,\n")
    cli("ingest", "table", csv, "--dataset", "from-csv")
    cli("ingest", "table", parquet, "--dataset", "from-parquet")
    with Store(db, read_only=True) as wh:
        ids = {d: wh.sql("SELECT s.name AS system, i.name AS input, m.name AS measure, j.annotator, j.value "
                         "FROM judgments j JOIN systems s USING (system_id) JOIN inputs i USING (input_id) "
                         "JOIN measures m USING (measure_id) JOIN datasets d ON d.dataset_id = m.dataset_id "
                         "WHERE d.name = ? ORDER BY ALL", [d]).values.tolist() for d in ("from-csv", "from-parquet")}
        systems = wh.sql("SELECT DISTINCT name FROM systems ORDER BY name")["name"].tolist()
    assert ids["from-csv"] == ids["from-parquet"] == [["7", "1", "h", "10", 4.0], ["7", "1", "h", "11", 5.0]]
    assert systems == ["7", "8"]


# --- issue 24.9: input hygiene ---------------------------------------------------------------------------
#: (field, id) pairs: a control character (C0 incl. NUL and tab, DEL, C1) inside each kind of id
CONTROL_IDS = [("system", "s\x001"), ("input", "d\t1"), ("measure", "h\x1b[31m"), ("annotator", "a\x7f"),
               ("system", "s\x851")]


def _long_rows(field: str, bad: str) -> list[dict]:
    rows = [{"system": "s0", "input": "d0", "measure": "h", "value": 1.0, "annotator": "a0"},
            {"system": "s1", "input": "d0", "measure": "h", "value": 2.0, "annotator": "a0"},
            {"system": "s2", "input": "d0", "measure": "h", "value": 3.0, "annotator": "a0"}]
    rows[1][field] = bad
    return rows


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet", "DataFrame"])
def test_a_control_character_in_an_id_is_refused_on_every_reader_path(db, tmp_path, suffix):
    """A NUL inside a system id was stored. Now, CSV, JSONL, Parquet or DataFrame, whether
    DuckDB's reading or the exact reader sees it first: file:line:field, nothing written."""
    from metaeval.errors import InputError
    from metaeval.ingest import table

    with Store(db) as wh:
        before = snapshot(wh)
        for field, bad in CONTROL_IDS:
            frame = pd.DataFrame(_long_rows(field, bad))
            path = tmp_path / f"t{suffix}"
            if suffix == ".csv":
                frame.to_csv(path, index=False)
            elif suffix == ".jsonl":
                frame.to_json(path, orient="records", lines=True)
            elif suffix == ".parquet":
                frame.to_parquet(path, index=False)
            where = {".csv": f"{path}:3", ".jsonl": f"{path}:2", ".parquet": f"{path}:2"}.get(suffix, "<DataFrame>:2")
            with pytest.raises(InputError) as caught:
                if suffix == "DataFrame":
                    table.add_scores(wh, "t", frame, human=["h"])
                else:
                    table.ingest(wh, "t", [path], human=["h"])
            message = str(caught.value)
            assert message.startswith(f"{where}: field '{field}': the id {bad.strip()!r} holds the control "
                                      f"character U+{ord(next(c for c in bad if not c.isprintable())):04X}"), message
            assert "\n" not in message and "remove it" in message
        assert_same(before, snapshot(wh))


def test_a_control_character_in_a_wide_measure_column_or_a_sacrerouge_key_is_refused(db, cli, tmp_path):
    wide = tmp_path / "wide.csv"
    wide.write_text("system,input,ok,m\x00x\ns0,d0,1,2\n")
    sacre = tmp_path / "m.jsonl"
    write_jsonl(sacre, [{"instance_id": "d0", "summarizer_id": "s0", "metrics": {"m": 1}},
                        {"instance_id": "d0", "summarizer_id": "s\x001", "metrics": {"m": 1}},
                        {"instance_id": "d1", "summarizer_id": "s0", "metrics": {"rouge": {"f\u00851": 1}}}])
    before = _state(db)
    result = cli("ingest", "table", wide, "--dataset", "t", expect_ok=False)
    assert result.exit_code == 1 and f"{wide}:2: field 'measure': the id 'm\\x00x' holds the control character " \
        "U+0000" in result.output, result.output
    result = cli("ingest", "sacrerouge", sacre, "--dataset", "t", expect_ok=False)
    assert result.exit_code == 1 and f"{sacre}:2: field 'summarizer_id': the id 's\\x001'" in result.output
    lines = sacre.read_text().splitlines()
    sacre.write_text("\n".join([lines[0], lines[2]]) + "\n")
    result = cli("ingest", "sacrerouge", sacre, "--dataset", "t", expect_ok=False)
    assert result.exit_code == 1 and f"{sacre}:2: field 'metrics.rouge.f\\x851': the metric name 'rouge.f\\x851' " \
        "holds the control character U+0085" in result.output, result.output
    assert_same(before, _state(db))


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet", "DataFrame", "sacrerouge"])
def test_a_value_whose_sums_overflow_is_refused_on_every_reader_path(db, tmp_path, suffix):
    """Values near 1.2e308 were stored and `system_means` showed inf. Now |value| is at most
    MAX_ABS_VALUE (1e150: sums of squares of 1e8 such values stay finite), on every path, with
    file:line:field; the bound itself is accepted and its means are finite."""
    from metaeval.errors import InputError
    from metaeval.ingest import sacrerouge as sacre
    from metaeval.ingest import table
    from metaeval.ingest.common import MAX_ABS_VALUE

    def prepared(big: float):
        """(a call ingesting s0 = 1, s1 = big, s2 = -big; where the error on big is)"""
        rows = [{"system": f"s{i}", "input": "d0", "measure": "m", "value": v} for i, v in enumerate([1.0, big, -big])]
        frame = pd.DataFrame(rows)
        path = tmp_path / f"t{suffix}"
        if suffix == "sacrerouge":
            write_jsonl(path, [{"instance_id": r["input"], "summarizer_id": r["system"], "metrics": {"m": r["value"]}}
                               for r in rows])
            return lambda wh: sacre.ingest(wh, "t", [path]), f"{path}:2: field 'metrics.m'"
        if suffix == "DataFrame":
            return lambda wh: table.add_scores(wh, "t", frame), "<DataFrame>:2: field 'value'"
        if suffix == ".csv":
            path.write_text("system,input,measure,value\n" + "".join(f"{r['system']},d0,m,{r['value']!r}\n"
                                                                     for r in rows))
        elif suffix == ".jsonl":
            write_jsonl(path, rows)
        else:
            frame.to_parquet(path, index=False)
        return lambda wh: table.ingest(wh, "t", [path]), f"{path}:{3 if suffix == '.csv' else 2}: field 'value'"

    with Store(db) as wh:
        before = snapshot(wh)
        for big in (1.2e308, 1.7976931348623157e308, MAX_ABS_VALUE * 1.000001):
            call, where = prepared(big)
            with pytest.raises(InputError) as caught:
                call(wh)
            assert str(caught.value) == (f"{where}: the value {big!r} is beyond the largest magnitude stored, 1e+150 "
                                         "(sums and means of such values overflow); no score is this large: fix the "
                                         "value or its unit")
        assert_same(before, snapshot(wh))
        prepared(MAX_ABS_VALUE)[0](wh)
        table.add_scores(wh, "t", pd.DataFrame({"system": ["s0", "s1", "s2"], "input": "d1", "measure": "m",
                                                "value": [1.0, MAX_ABS_VALUE, -MAX_ABS_VALUE]}), allow_new=True)
        means = wh.sql("SELECT mean, n_inputs FROM system_means WHERE dataset = 't' ORDER BY mean")
        assert means["mean"].tolist() == [-MAX_ABS_VALUE, 1.0, MAX_ABS_VALUE] and set(means["n_inputs"]) == {2}


def test_a_nan_value_in_a_parquet_file_or_a_dataframe_says_nan(db, tmp_path):
    """A NaN in a Parquet file was reported as "got null". A NaN is named as such; a null
    (what pandas writes for a NaN) says so."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from metaeval.errors import InputError
    from metaeval.ingest import table

    columns = {"system": ["a", "b"], "input": ["d", "d"], "measure": ["m", "m"]}
    real_nan = tmp_path / "nan.parquet"
    pq.write_table(pa.table({**columns, "value": pa.array([1.0, float("nan")], pa.float64())}), real_nan)
    by_pandas = tmp_path / "pandas.parquet"
    pd.DataFrame({**columns, "value": [1.0, np.nan]}).to_parquet(by_pandas)  # pyarrow stores the NaN as null
    with Store(db) as wh:
        before = snapshot(wh)
        for source, where in ((real_nan, f"{real_nan}:2"), (pd.DataFrame({**columns, "value": [1.0, np.nan]}),
                                                           "<DataFrame>:2")):
            with pytest.raises(InputError) as caught:
                if isinstance(source, pd.DataFrame):
                    table.add_scores(wh, "t", source)
                else:
                    table.ingest(wh, "t", [source])
            assert str(caught.value).startswith(f"{where}: field 'value': the value NaN is not finite (not a number;")
            assert "null" not in str(caught.value)
        with pytest.raises(InputError, match=r"pandas.parquet:2: field 'value': expected a number, got null "
                                             r"\(a missing value; pandas writes a NaN as null"):
            table.ingest(wh, "t", [by_pandas])
        assert_same(before, snapshot(wh))


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet", "DataFrame"])
def test_a_long_table_under_other_column_names_is_an_unknown_layout(db, tmp_path, suffix):
    """`system,input,metric,score` was read as a wide table and the error blamed field 'metric'
    as a bad number. A wide table's measure column whose first value is text (not a number) is
    a column of names: the layout is refused, naming the columns and both layouts expected (and
    the renaming, for a long table's shape); a later non-number stays a bad value."""
    from metaeval.errors import InputError
    from metaeval.ingest import table

    frame = pd.DataFrame({"system": ["s1", "s2"], "input": ["d1", "d1"], "metric": ["rouge-1", "rouge-1"],
                          "score": [0.5, 0.25]})
    path = tmp_path / f"t{suffix}"
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    elif suffix == ".jsonl":
        write_jsonl(path, frame.to_dict("records"))
    elif suffix == ".parquet":
        frame.to_parquet(path, index=False)
    with Store(db) as wh:
        before = snapshot(wh)
        with pytest.raises(InputError) as caught:
            table.add_scores(wh, "t", frame) if suffix == "DataFrame" else table.ingest(wh, "t", [path])
        where = {".csv": f"{path}:2", ".jsonl": f"{path}:1", ".parquet": f"{path}:1"}.get(suffix, "<DataFrame>:1")
        assert str(caught.value) == (
            f"{where}: field 'metric': unknown column layout ['system', 'input', 'metric', 'score']: column 'metric' "
            "holds text ('rouge-1'), not numbers; expected a long table (columns system, measure, value; optionally "
            "input, annotator, kind, replicate) or a wide one (system, optionally input and annotator, and one column of "
            "numbers per measure); if it is a long table, rename 'metric' to 'measure' and 'score' to 'value'")
        assert_same(before, snapshot(wh))


def test_a_wide_table_without_its_input_column_is_told_to_name_it_input(db, cli, tmp_path):
    """Issue 48 item 12: `system,doc,lenratio5` (the inputs under another name) was told to rename
    'doc' to 'measure' and 'lenratio5' to 'value', which reads the document ids as measure names;
    the fix is 'doc' -> 'input'. A long table's names (metric / score) keep the long table's hint."""
    path = tmp_path / "w.csv"
    path.write_text("system,doc,lenratio5\ns1,d1,0.5\ns2,d1,0.25\n")
    with Store(db) as wh:
        before = snapshot(wh)
    out = cli("ingest", "table", path, "--dataset", "w", expect_ok=False).output
    assert out.strip().endswith("; if 'doc' names the inputs (a wide table of the measure 'lenratio5'), rename it to "
                                "'input'"), out
    assert "'measure'" not in out.split("; if")[-1], out
    with Store(db) as wh:
        assert_same(before, snapshot(wh))
    path.write_text("system,doc,lenratio5\ns1,d1,0.5\n".replace("doc", "input"))
    assert cli("ingest", "table", path, "--dataset", "w").exit_code == 0
    path.write_text("system,metric,value2\ns1,rouge,0.5\n")
    assert "rename 'metric' to 'measure' and 'value2' to 'value'" in cli(
        "ingest", "table", path, "--dataset", "v", expect_ok=False).output


def test_a_text_column_in_a_wide_table_is_an_unknown_layout_a_later_bad_value_is_not(db, cli, tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("system,input,m1,title,m2\ns1,d1,0.5,,1\ns2,d1,0.25,The One,2\n")
    out = cli("ingest", "table", path, "--dataset", "w", expect_ok=False).output
    assert f"{path}:3: field 'title': unknown column layout ['system', 'input', 'm1', 'title', 'm2']: column " \
        "'title' holds text ('The One'), not numbers;" in out and "rename" not in out, out
    path.write_text("system,input,m1\ns1,d1,0.5\ns2,d1,abc\n")
    assert f"{path}:3: field 'm1': expected a number, got 'abc'" in cli("ingest", "table", path, "--dataset", "w",
                                                                        expect_ok=False).output
    path.write_text("system,input,m1\ns1,d1,1_000\n")  # Python reads it: a bad number, not a name
    assert "digit separators" in cli("ingest", "table", path, "--dataset", "w", expect_ok=False).output
