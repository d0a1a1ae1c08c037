"""ESA's released CSV (WMT24 humeval/esa_*.csv): read by ``ingest mqm`` (auto-detected or
--format esa-csv), errors by file, physical line and field."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from metaeval import Store
from metaeval.errors import InputError
from metaeval.ingest import esa_csv
from tests.conftest import run_cli

EXAMPLE = Path(__file__).parent.parent / "docs" / "examples" / "esa-wmt24.csv"
SPAN = '"[{""start_i"":1,""end_i"":3,""severity"":""major"",""error_type"":null}]"'


def _record(user="u1", system="S", line_id="5", kind="TGT", l1="eng", l2="deu", score="70", doc="test-en-news_x",
            spans="[]", t1="1.5", t2="2.5"):
    return ",".join([user, system, line_id, kind, l1, l2, score, doc, "False", spans, t1, t2])


def test_the_released_layout_by_hand():
    spans, skipped = esa_csv.parse(EXAMPLE)
    assert skipped == {"tutorial": 2, "attention check": 1, "bad, dup or incomplete": 0}
    scores = {tuple(r[:3]): r[3] for r in spans.scores.itertuples(index=False)}
    assert scores == {("SysA", "10", "engdeu7901"): 91.0, ("SysA", "11", "engdeu7901"): 98.0,
                      ("SysB", "10", "engdeu7901"): 35.0, ("SysB", "11", "engdeu7901"): 72.0,
                      ("SysA", "10", "engdeu7902"): 88.0, ("SysB", "10", "engdeu7902"): 50.0,
                      ("refA", "10", "engdeu7902"): 97.0}
    rows = spans.spans
    b = rows[(rows["system"] == "SysB") & (rows["input"] == "10") & (rows["judge"] == "engdeu7901")]
    assert b[["severity", "side", "span_start", "span_end"]].iloc[0].tolist() == ["major", "target", 0, 15]
    assert b["severity"].iloc[1] == "minor"                               # "missing" offsets: no position
    assert b[["side", "span_start", "span_end"]].iloc[1].isna().all()
    assert b["line"].tolist() == [5, 5]
    clean = rows[(rows["system"] == "SysA") & (rows["input"] == "11")]
    assert clean[["severity", "category"]].values.tolist() == [["No-error", "No-error"]]
    assert clean["side"].isna().all()
    assert spans.targets.empty and spans.sources.empty   # the file carries no text


def test_detection():
    assert esa_csv.looks_like(EXAMPLE)
    assert not esa_csv.looks_like(Path(__file__).parent.parent / "docs" / "examples" / "mqm.tsv")


@pytest.mark.parametrize("records, line, field, words", [
    ([_record(), _record(user="u2", score="101")], 2, "esa_score", "between 0 and 100"),
    ([_record(), _record(line_id="x")], 2, "line_id", "segment index"),
    ([_record(), _record(line_id="\u00b2")], 2, "line_id", "segment index"),      # a superscript two: not a digit
    ([_record(), _record(line_id="\u0663")], 2, "line_id", "segment index"),      # an Arabic-Indic three
    ([_record(spans='"[{""start_i"":5,""end_i"":2,""severity"":""minor""}]"')], 1, "esa_spans", "start_i 5, end_i 2"),
    ([_record(spans='"[{""start_i"":1,""end_i"":2,""severity"":""critical""}]"')], 1, "esa_spans", "'critical'"),
    ([_record(spans='"[{""start_i"":1,"')], 1, "esa_spans", "not JSON"),
    ([_record(), _record(score="60")], 2, "user_id", "again (first on line 1)"),
    ([_record(), _record(system="T", l2="ces")], 2, "lang2", "eng-deu, eng-ces"),
    ([_record(), "a,b,c"], 2, None, "expected 12 comma-separated fields"),
    ([_record(t1="soon")], 1, "time_start", "number"),
])
def test_errors_name_file_line_and_field(tmp_path, records, line, field, words):
    path = tmp_path / "esa.csv"
    path.write_text("\n".join(records) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        esa_csv.parse(path)
    err = info.value
    assert (err.file, err.line, err.field) == (str(path), line, field)
    assert words in str(err)


def test_a_record_over_two_physical_lines_shifts_the_line_numbers(tmp_path):
    """The line named is the physical line where the record starts (a quoted field may hold a newline)."""
    two_lines = _record(spans='"[{""start_i"":1,\n""end_i"":3,""severity"":""minor""}]"')
    path = tmp_path / "esa.csv"
    path.write_text("\n".join([two_lines, _record(user="u2", score="-1")]) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        esa_csv.parse(path)
    assert (info.value.line, info.value.field) == (3, "esa_score")
    path.write_text("\n".join([two_lines, _record(system="T", l2="ces")]) + "\n", encoding="utf-8")
    spans, _ = esa_csv.parse(path, lp="eng-ces")
    assert spans.scores["system"].tolist() == ["T"] and spans.scores["line"].tolist() == [3]


def test_ingest_mqm_reads_the_esa_csv(tmp_path):
    db = tmp_path / "wh.duckdb"
    out = run_cli(db, "ingest", "mqm", EXAMPLE, "--dataset", "esa").output
    assert "read 7 judgments" in out and "skipped 3 records (2 tutorial, 1 attention check)" in out
    assert "nothing changed" in run_cli(db, "ingest", "mqm", EXAMPLE, "--dataset", "esa", "--format", "esa-csv").output
    with Store(db, read_only=True) as wh:
        m = wh.matrix("esa", "esa")
        fmt = wh.sql("SELECT format, options FROM ingests WHERE file LIKE '%esa-wmt24.csv'")
    grid = dict(zip(m.systems, m["esa"]))
    inputs = list(m.inputs)
    assert grid["SysA"][inputs.index("10")] == pytest.approx((91 + 88) / 2)
    assert grid["SysB"][inputs.index("10")] == pytest.approx((35 + 50) / 2)
    assert np.isnan(grid["refA"][inputs.index("11")])
    assert set(fmt["format"]) == {"esa-csv"}
    bad = run_cli(db, "ingest", "mqm", EXAMPLE, "--dataset", "esa2", "--lp", "eng-ces", ok=False).output
    assert "no record of the language pair eng-ces; the file has eng-deu" in bad
    tsv = Path(__file__).parent.parent / "docs" / "examples" / "mqm.tsv"
    bad = run_cli(db, "ingest", "mqm", tsv, "--dataset", "m", "--lp", "eng-deu", ok=False).output
    assert "--lp 'eng-deu' chooses a language pair of ESA's released CSV" in bad
