"""`metaeval ingest mqm` (issue 36 items 1-2): spans, texts and scores from a hand-worked file,
refusals by file, line and field, idempotence, and MQM as a human measure every analysis reads."""

from __future__ import annotations

import pandas as pd
import pytest

from metaeval import Store
from tests.conftest import digest, run_cli

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment"
SRC1 = 'He said "hello" to me.'
SRC2 = "It rains."
# (system, seg, rater, source, target, category, severity): the hand-worked file
ROWS = [
    ("A", "1", "r1", SRC1, 'Er sagte <v>"hallo"</v> mir.', "Accuracy/Mistranslation", "Major"),
    ("A", "1", "r1", SRC1, 'Er sagte "hallo" mir<v>.</v>', "Fluency/Punctuation", "Minor"),
    ("A", "1", "r1", SRC1, '<v>Er sagte "hallo" mir.</v>', "Non-translation!", "Major"),
    ("A", "1", "r2", 'He said "hello" <v>to me</v>.', 'Er sagte "hallo" mir.', "Accuracy/Omission", "Major"),
    ("A", "2", "r1", SRC2, "Es regnet.", "No-error", "No-error"),
    ("A", "2", "r2", SRC2, "Es <v>regnet</v>.", "Style/Awkward", "Minor"),
    ("B", "1", "r1", SRC1, "Er sagte hallo.", "No-error", "No-error"),
    ("B", "1", "r2", SRC1, "Er sagte <v>hallo</v>.", "Accuracy/Addition", "Major"),
    ("B", "2", "r1", SRC2, "Es regnet<v>!</v>", "Fluency/Punctuation", "Minor"),
]


def released(severity: str, category: str) -> float:
    """mt-metrics-eval's released default written out by hand (Major:5 Minor:1 Neutral:0
    Major/Non-translation!:25 Minor/Fluency/Punctuation:0.1; anything else 0)."""
    if severity == "Major" and category == "Non-translation!":
        return 25.0
    if severity == "Minor" and category.startswith("Fluency/Punctuation"):
        return 0.1
    return {"Major": 5.0, "Minor": 1.0, "Neutral": 0.0}.get(severity, 0.0)


def expected_cells(weight=released):
    """Segment -> (mean over raters of the negated sums, number of raters), computed directly."""
    per_rater: dict = {}
    for system, seg, rater, _, _, category, severity in ROWS:
        per_rater.setdefault((system, seg), {}).setdefault(rater, 0.0)
        per_rater[(system, seg)][rater] -= weight(severity, category)
    return {k: (sum(v.values()) / len(v), len(v)) for k, v in per_rater.items()}


def write(path, rows=ROWS, header=HEADER, comment=True):
    lines = [header] + ["\t".join([s, "doc1", "0", seg, r, src, tgt, cat, sev] + (["c"] if comment else []))
                        for s, seg, r, src, tgt, cat, sev in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def cells(db, measure):
    with Store(db, read_only=True) as wh:
        rows = wh.sql(f"SELECT system, input, value, n_annotators FROM cells WHERE measure = '{measure}'")
    return {(s, i): (v, n) for s, i, v, n in rows.itertuples(index=False)}


def test_hand_worked_file_scores_spans_and_texts(db, tmp_path):
    path = write(tmp_path / "mqm.tsv")
    out = run_cli(db, "ingest", "mqm", path, "--dataset", "wmt").output
    assert "inserted" in out
    got, want = cells(db, "mqm"), expected_cells()
    assert want[("A", "1")] == (pytest.approx(-(5 + 0.1 + 25 + 5) / 2), 2)     # by hand: r1 -30.1, r2 -5
    assert want[("B", "2")] == (pytest.approx(-0.1), 1)                         # one rater rated it
    assert set(got) == set(want)
    for key, (value, n) in want.items():
        assert got[key][0] == pytest.approx(value, abs=1e-12) and got[key][1] == n, key
    with Store(db, read_only=True) as wh:
        spans = wh.sql("SELECT system, input, judge, error, severity, category, side, span_start, span_end, "
                       "span_text FROM error_span_texts ORDER BY system, input, judge, error")
        texts = wh.sql("SELECT text FROM documents JOIN inputs USING (input_id) WHERE name = '1'")["text"].tolist()
    rows = [tuple(r) for r in spans.itertuples(index=False)]
    assert rows[0] == ("A", "1", "r1", 0, "Major", "Accuracy/Mistranslation", "target", 9, 16, '"hallo"')
    assert rows[1][6:] == ("target", 20, 21, ".")
    assert rows[2][6:] == ("target", 0, 21, 'Er sagte "hallo" mir.')
    assert rows[3][6:] == ("source", 16, 21, "to me")                          # a source-side span
    no_error = [r for r in rows if r[4] == "No-error"]
    assert [(r[0], r[1], r[2]) for r in no_error] == [("A", "2", "r1"), ("B", "1", "r1")]
    assert all(pd.isna(r[6]) and pd.isna(r[7]) for r in no_error)               # kept, with no span
    assert texts == [SRC1]                                                      # once per segment, no markers
    before = tables(db)
    again = run_cli(db, "ingest", "mqm", path, "--dataset", "wmt").output
    assert "nothing changed" in again and tables(db) == before


def tables(db):
    """Every row of the tables an ingest writes (the dataset sequence aside: every ingest draws one)."""
    with Store(db, read_only=True) as wh:
        return {t: wh.sql(f"SELECT * FROM {t} ORDER BY ALL").to_csv() for t in
                ("datasets", "systems", "inputs", "measures", "judgments", "documents", "summaries", "error_spans")}


def test_other_weighting_is_its_own_measure(db, tmp_path):
    path = write(tmp_path / "mqm.tsv")
    run_cli(db, "ingest", "mqm", path, "--dataset", "wmt", "--weights", "major:10 minor:1 minor/Fluency/Punctuation:0")
    name = "mqm[major:10,minor:1,minor/fluency/punctuation:0]"

    def weight(severity, category):
        if severity == "Minor" and category.startswith("Fluency/Punctuation"):
            return 0.0
        return {"Major": 10.0, "Minor": 1.0}.get(severity, 0.0)

    got = cells(db, name)
    for key, (value, n) in expected_cells(weight).items():
        assert got[key] == (pytest.approx(value), n)
    assert got[("A", "1")][0] == pytest.approx(-(10 + 0 + 10 + 10) / 2)      # Non-translation! is just Major here


def test_correlate_a_metric_against_mqm(db, tmp_path):
    third = [("C", "1", "r1", SRC1, "Er <v>sagte</v> hallo.", "Accuracy/Mistranslation", "Major"),
             ("C", "2", "r2", SRC2, "Es regnet.", "No-error", "No-error")]
    run_cli(db, "ingest", "mqm", write(tmp_path / "mqm.tsv", ROWS + third), "--dataset", "wmt")
    metric = tmp_path / "metric.csv"
    metric.write_text("system,input,measure,value\nA,1,m,-3\nA,2,m,-1\nB,1,m,-2\nB,2,m,0.5\nC,1,m,-1\nC,2,m,0\n")
    run_cli(db, "ingest", "table", metric, "--dataset", "wmt")
    out = run_cli(db, "correlate", "--dataset", "wmt", "--human", "mqm", "--level", "global",
                  "--coefficient", "pearson", "--format", "csv").output
    assert "m" in out and "pearson" in out


def test_esa_layout(db, tmp_path):
    rows = ["\t".join(r) for r in [
        ("A", "d", "0", "1", "r1", "Hi.", "<v>Hallo</v>.", "", "major", "", "40"),
        ("A", "d", "0", "1", "r1", "Hi.", "Hallo<v>.</v>", "", "minor", "", "40"),
        ("A", "d", "0", "1", "r2", "Hi.", "Hallo.", "", "", "", "90"),
        ("B", "d", "0", "1", "r1", "Hi.", "Servus.", "", "", "", "100")]]
    path = tmp_path / "esa.tsv"
    path.write_text("\n".join([HEADER + "\tscore"] + rows) + "\n")
    run_cli(db, "ingest", "mqm", path, "--dataset", "esa")
    assert cells(db, "esa") == {("A", "1"): (65.0, 2), ("B", "1"): (100.0, 1)}
    with Store(db, read_only=True) as wh:
        spans = wh.sql("SELECT judge, severity, side, span_text FROM error_span_texts ORDER BY system, judge, error")
    assert [tuple(r) for r in spans.itertuples(index=False)][:2] == [("r1", "major", "target", "Hallo"),
                                                                      ("r1", "minor", "target", ".")]


def test_conflicting_spans_need_replace(db, tmp_path):
    run_cli(db, "ingest", "mqm", write(tmp_path / "mqm.tsv"), "--dataset", "wmt")
    changed = list(ROWS)
    changed[5] = ("A", "2", "r2", SRC2, "<v>Es</v> regnet.", "Style/Awkward", "Minor")   # same score, other span
    path = write(tmp_path / "changed.tsv", changed)
    before = digest(db)
    result = run_cli(db, "ingest", "mqm", path, "--dataset", "wmt", ok=False)
    assert result.exit_code != 0 and "changed.tsv:7: judge r2 on system A, segment 2" in result.output
    assert digest(db) == before
    run_cli(db, "ingest", "mqm", path, "--dataset", "wmt", "--replace")
    with Store(db, read_only=True) as wh:
        got = wh.sql("SELECT span_text FROM error_span_texts WHERE system = 'A' AND input = '2' AND judge = 'r2'")
    assert got["span_text"].tolist() == ["Es"]


BAD = [
    (ROWS[:1] + [("A", "1", "r2", SRC1, "Er sagte <v>hallo mir.", "Fluency/Grammar", "Minor")], ":3: field 'target'",
     "does not close"),
    (ROWS[:1] + [("A", "1", "r2", SRC1, "Er sagte hallo <v>mir</v>.", "Fluency/Grammar", "Minor")],
     ":3: field 'target'", "differs from the one of the same segment on line 2"),
    (ROWS[:1] + [("A", "1", "r2", "He <v>said</v> hi.", 'Er sagte "hallo" mir.', "Accuracy/Omission", "Major")],
     ":3: field 'source'", "differs"),
    ([("A", "1", "r1", SRC1, "Er <v>sagte</v>.", "No-error", "No-error")], ":2: field 'target'", "No-error"),
    ([("A", "1", "r1", SRC1, "Er sagte.", "Accuracy", "")], ":2: field 'severity'", "empty"),
    ([("A", "", "r1", SRC1, "Er sagte.", "Accuracy", "Major")], ":2: field 'seg_id'", "empty"),
]


@pytest.mark.parametrize("rows, where, words", BAD)
def test_bad_rows_refused_by_file_line_and_field(db, tmp_path, rows, where, words):
    path = write(tmp_path / "bad.tsv", rows)
    before = digest(db)
    result = run_cli(db, "ingest", "mqm", path, "--dataset", "wmt", ok=False)
    assert result.exit_code != 0 and where in result.output and words in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert digest(db) == before


def test_bad_layout_and_weights_refused(db, tmp_path):
    before = digest(db)
    short = tmp_path / "short.tsv"
    short.write_text(HEADER + "\nA\tdoc\t0\t1\tr1\tsrc\n")
    out = run_cli(db, "ingest", "mqm", short, "--dataset", "wmt", ok=False).output
    assert "short.tsv:2: expected 10 tab-separated fields, got 6" in out
    nocol = tmp_path / "nocol.tsv"
    nocol.write_text(HEADER.replace("\tseverity", "") + "\n")
    assert "nocol.tsv:1: field 'severity': missing column" in run_cli(db, "ingest", "mqm", nocol, "--dataset",
                                                                       "wmt", ok=False).output
    out = run_cli(db, "ingest", "mqm", write(tmp_path / "ok.tsv", comment=False, header=HEADER[:-8]), "--dataset",
                  "wmt", "--weights", "major:x", ok=False).output
    assert "--weights" in out and "major:x" in out and len(out.strip().splitlines()) == 1
    esa = tmp_path / "esa.tsv"
    esa.write_text(HEADER + "\tscore\n" + "\t".join(["A", "d", "0", "1", "r1", "s", "t", "", "", "", "120"]) + "\n")
    assert "esa.tsv:2: field 'score': an ESA score is between 0 and 100" in run_cli(
        db, "ingest", "mqm", esa, "--dataset", "wmt", ok=False).output
    assert digest(db) == before


def test_encoding_and_an_esa_file_with_weights(db, tmp_path):
    before = digest(db)
    bad = tmp_path / "latin.tsv"
    bad.write_bytes((HEADER + "\n").encode() + "\t".join(["A", "d", "0", "1", "r1", "é", "t", "No-error", "No-error",
                                                           ""]).encode("latin-1") + b"\n")
    out = run_cli(db, "ingest", "mqm", bad, "--dataset", "wmt", ok=False).output
    assert "latin.tsv:2: not UTF-8" in out and len(out.strip().splitlines()) == 1
    esa = tmp_path / "esa.tsv"
    esa.write_text(HEADER + "\tscore\n" + "\t".join(["A", "d", "0", "1", "r1", "s", "t", "", "", "", "50"]) + "\n")
    out = run_cli(db, "ingest", "mqm", esa, "--dataset", "wmt", "--weights", "major:1", ok=False).output
    assert "--weights" in out and "ESA" in out
    assert digest(db) == before
    bom = write(tmp_path / "bom.tsv")
    bom.write_bytes(b"\xef\xbb\xbf" + bom.read_bytes().replace(b"\n", b"\r\n"))   # a BOM and CRLF line ends
    run_cli(db, "ingest", "mqm", bom, "--dataset", "wmt")
    assert cells(db, "mqm")[("A", "1")][1] == 2


@pytest.mark.parametrize("rows, options, words", [
    # issue 48 item 5: an unknown severity would weigh 0 (one error scored as an error-free segment)
    ([ROWS[0][:6] + ("Majr",)], (), ":2: field 'severity': 'Majr'"),
    ([ROWS[4], ROWS[5][:6] + ("Catastrophic",)], (), ":3: field 'severity': 'Catastrophic'"),
    # item 6: an exact duplicate row would count twice (-10 instead of -5)
    ([ROWS[0], ROWS[1], ROWS[0]], (), ":4: the same row as line 2"),
    # items 7 and 8: weights inverting the severity order, an empty weighting
    (ROWS, ("--weights", "major:-1"), "--weights 'major:-1'"),
    (ROWS, ("--weights", "major:1 minor:5"), "inverting the severity order"),
    (ROWS, ("--weights", ""), "--weights '': a weighting is one or more"),
])
def test_silent_scores_refused(db, tmp_path, rows, options, words):
    path = write(tmp_path / "bad.tsv", rows)
    before = digest(db)
    result = run_cli(db, "ingest", "mqm", path, "--dataset", "wmt", *options, ok=False)
    assert result.exit_code != 0 and words in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert digest(db) == before


def test_an_unknown_severity_mapped_by_the_weights_is_scored(db, tmp_path):
    rows = ROWS + [("B", "2", "r2", SRC2, "Es <v>regnet</v>!", "Accuracy", "Catastrophic")]
    path = write(tmp_path / "mapped.tsv", rows)
    spec = "major:5 minor:1 catastrophic:30"
    run_cli(db, "ingest", "mqm", path, "--dataset", "wmt", "--weights", spec)
    weight = {"major": 5.0, "minor": 1.0, "catastrophic": 30.0}
    per_rater: dict = {}
    for system, seg, rater, _, _, category, severity in rows:
        total = per_rater.setdefault((system, seg), {}).setdefault(rater, 0.0)
        per_rater[(system, seg)][rater] = total - (0.0 if severity == "No-error" else weight[severity.lower()])
    got = cells(db, "mqm[catastrophic:30,major:5,minor:1]")
    assert set(got) == set(per_rater)
    for key, by_rater in per_rater.items():
        assert got[key] == (pytest.approx(sum(by_rater.values()) / len(by_rater)), len(by_rater))
    assert got[("B", "2")][0] == pytest.approx(-(1 + 30) / 2)
