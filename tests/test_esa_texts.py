"""ESA's released CSV with the texts its offsets point into (issue 36): the system outputs read
from a directory of SYSTEM.txt files (``--targets``) or taken from the dataset's stored summaries
(``ingest mtme``), every span checked within its text, and the character-level statistics
(``raters``' span agreement, ``span-eval``) computed on the ESA spans -- checked against sets of
characters built here from the example files."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from metaeval import Store
from tests.conftest import run_cli
from tests.test_mqm_raters import alpha_by_hand

EXAMPLES = Path(__file__).parent.parent / "docs" / "examples"
CSV = EXAMPLES / "esa-wmt24.csv"
OUTPUTS = EXAMPLES / "esa-wmt24-outputs"
METRIC = EXAMPLES / "esa-wmt24-metric.tsv"


def _target(system: str, line_id: str) -> str:
    return (OUTPUTS / f"{system}.txt").read_text(encoding="utf-8").split("\n")[int(line_id)]


def _human_marks() -> dict:
    """(system, line_id) -> {rater: set of marked character positions}, read from the CSV here
    (test-set judgments only: the tutorial, BAD and #bad records left out as the WMT24 scripts do)."""
    out: dict = {}
    with open(CSV, newline="", encoding="utf-8") as f:
        for user, system, line_id, kind, *_, doc, _unknown, spans, _t1, _t2 in csv.reader(f):
            if "-tutorial" in doc or kind != "TGT" or doc.endswith(("#bad", "#dup", "#incomplete")):
                continue
            marked = set()
            for s in json.loads(spans):
                if s["start_i"] != "missing":
                    assert 0 <= s["start_i"] <= s["end_i"] <= len(_target(system, line_id))
                    marked |= set(range(s["start_i"], s["end_i"]))
            out.setdefault((system, line_id), {})[user] = marked
    return out


def _agreement(db: Path) -> dict:
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT statistic, value, n_units FROM latest_rater_agreement")
    return {r.statistic: (r.value, r.n_units) for r in rows.itertuples()}


def _by_hand_agreement():
    """The pairwise character F1 and the nominal alpha of the two raters over the target
    characters of the segments both rated."""
    marks = _human_marks()
    both = {k: v for k, v in marks.items() if len(v) == 2}
    inter = total = 0
    labels = []
    for (system, line_id), raters in sorted(both.items()):
        a, b = (raters[r] for r in sorted(raters))
        inter, total = inter + len(a & b), total + len(a) + len(b)
        n = len(_target(system, line_id))
        labels.append(np.array([[c in a for c in range(n)], [c in b for c in range(n)]], dtype=float))
    data = np.concatenate(labels, axis=1)
    return 2 * inter / total, alpha_by_hand(data, lambda x, y: float(x != y)), data.shape[1]


def test_targets_from_files_make_the_esa_spans_measurable(tmp_path):
    db = tmp_path / "wh.duckdb"
    out = run_cli(db, "ingest", "mqm", CSV, "--dataset", "esa", "--targets", OUTPUTS).output
    assert "5 summaries" in out and "without a target text" not in out
    with Store(db, read_only=True) as wh:
        texts = wh.sql("SELECT system, input, span_text FROM error_span_texts WHERE side = 'target'")
        stored = wh.sql("SELECT count(*) AS n FROM summaries")
    got = sorted(map(tuple, texts.values.tolist()))
    assert got == [("SysA", "10", "Hund "), ("SysB", "10", "Die Katze schla"), ("SysB", "10", "e Kat")]
    assert int(stored["n"].iloc[0]) == 5      # once per judged segment: SysA 10, 11; SysB 10, 11; refA 10
    run_cli(db, "raters", "--dataset", "esa", "--human", "esa", "--k", "20")
    f1, alpha, units = _by_hand_agreement()
    assert (f1, units) == (pytest.approx(0.4), 20 + 29)                       # 2 * 5 / (20 + 5)
    assert alpha == pytest.approx(1 - 97 * 30 / (2 * 73 * 25))                # coincidences: 15 + 15 off-diagonal
    got = _agreement(db)
    assert got["span_f1_mean"] == (pytest.approx(f1), units) and got["span_f1_pooled"][0] == pytest.approx(f1)
    assert got["span_alpha"] == (pytest.approx(alpha), units)
    again = run_cli(db, "ingest", "mqm", CSV, "--dataset", "esa", "--targets", OUTPUTS).output
    assert "nothing changed" in again


def _mtme(tmp_path: Path) -> Path:
    """An mt-metrics-eval evaluation set holding the example's system outputs (and sources)."""
    root = tmp_path / "wmt24"
    (root / "sources").mkdir(parents=True)
    (root / "sources" / "en-de.txt").write_text("".join(f"Source sentence {i}.\n" for i in range(12)))
    shutil.copytree(OUTPUTS, root / "system-outputs" / "en-de")
    return root


def test_targets_from_the_dataset_stored_by_ingest_mtme(tmp_path):
    """The same statistics as with --targets: the stored sources are no units (ESA marks targets only)."""
    db = tmp_path / "wh.duckdb"
    run_cli(db, "ingest", "mtme", _mtme(tmp_path), "--dataset", "wmt24-en-de")
    out = run_cli(db, "ingest", "mqm", CSV, "--dataset", "wmt24-en-de").output
    assert "summar" not in out and "without a target text" not in out     # the stored texts, not stored again
    run_cli(db, "raters", "--dataset", "wmt24-en-de", "--human", "esa", "--k", "20")
    f1, alpha, units = _by_hand_agreement()
    got = _agreement(db)
    assert got["span_alpha"] == (pytest.approx(alpha), units) and got["span_f1_mean"][0] == pytest.approx(f1)
    with Store(db, read_only=True) as wh:
        conventions = wh.sql("SELECT conventions FROM latest_rater_agreement LIMIT 1")["conventions"].iloc[0]
    assert "the source's characters are no unit" in conventions


def test_without_texts_the_spans_are_kept_and_said_unmeasured(tmp_path):
    out = " ".join(run_cli(tmp_path / "wh.duckdb", "ingest", "mqm", CSV, "--dataset", "esa").output.split())
    assert "5 segments without a target text (spans stored, left out of the character-level statistics)" in out


@pytest.mark.parametrize("edit, line, field, words", [
    (("SysB.txt", 10, "Die Katze."), 5, "esa_spans", "span 1: end_i 15 is beyond the 10 characters of system "
                                                     "SysB's target of segment 10 ("),
    (("refA.txt", None, None), 10, "system", "no target texts for system refA"),
    (("SysA.txt", 11, None), 4, "line_id", "segment 11 is beyond the 11 lines of"),
])
def test_a_span_beyond_its_text_is_an_error_and_nothing_is_written(tmp_path, edit, line, field, words):
    outputs = tmp_path / "outputs"
    shutil.copytree(OUTPUTS, outputs)
    name, at, text = edit
    if at is None:
        (outputs / name).unlink()
    else:
        lines = (outputs / name).read_text(encoding="utf-8").splitlines()
        if text is None:
            lines = lines[:at]         # the file ends before the segment
        else:
            lines[at] = text
        (outputs / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = tmp_path / "wh.duckdb"
    out = run_cli(db, "ingest", "mqm", CSV, "--dataset", "esa", "--targets", outputs, ok=False).output
    assert f"{CSV}:{line}: field '{field}': {words}" in " ".join(out.split()) and "Traceback" not in out
    if db.exists():
        with Store(db, read_only=True) as wh:
            assert "esa" not in set(wh.sql("SELECT name FROM datasets")["name"])


def test_a_span_beyond_the_stored_text_is_an_error(tmp_path):
    root = _mtme(tmp_path)
    short = root / "system-outputs" / "en-de" / "SysB.txt"
    lines = short.read_text(encoding="utf-8").split("\n")
    lines[10] = "Die Katze."
    short.write_text("\n".join(lines), encoding="utf-8")
    db = tmp_path / "wh.duckdb"
    run_cli(db, "ingest", "mtme", root, "--dataset", "d")
    out = " ".join(run_cli(db, "ingest", "mqm", CSV, "--dataset", "d", ok=False).output.split())
    assert f"{CSV}:5: field 'esa_spans': span 1: end_i 15 is beyond the 10 characters" in out
    assert "(stored in dataset d)" in out
    differ = run_cli(db, "ingest", "mqm", CSV, "--dataset", "d", "--targets", OUTPUTS, ok=False).output
    assert "conflict" in differ                # the files' text is not the stored one: --replace decides
    tsv = " ".join(run_cli(db, "ingest", "mqm", EXAMPLES / "mqm.tsv", "--dataset", "m", "--targets", OUTPUTS,
                           ok=False).output.split())
    assert "--targets" in tsv and "is read as the MQM/ESA TSV" in tsv


def _metric_marks() -> dict:
    """(system, seg_id) -> (marked characters, severity) of the metric's TSV, from its <v> markers."""
    out = {}
    lines = METRIC.read_text(encoding="utf-8").splitlines()[1:]
    for line in lines:
        system, _doc, _doc_id, seg, _judge, _src, target, _cat, severity = line.split("\t")
        a = target.find("<v>")
        marked = set() if a < 0 else set(range(a, target.find("</v>") - len("<v>")))
        out[(system, seg)] = (marked, severity.lower())
    return out


def test_span_eval_on_esa_spans_by_hand(tmp_path):
    db = tmp_path / "wh.duckdb"
    run_cli(db, "ingest", "mqm", CSV, "--dataset", "esa", "--targets", OUTPUTS)
    run_cli(db, "ingest", "mqm", METRIC, "--dataset", "esa", "--judge", "xcomet")
    run_cli(db, "span-eval", "--dataset", "esa", "--k", "50")
    human, metric = _human_marks(), _metric_marks()
    severities = {("SysA", "10"): "minor", ("SysB", "10"): "major"}    # the ESA spans' severities (the CSV)
    tp = tp_sev = n_pred = n_gold = 0
    for key, (pred, severity) in metric.items():
        gold = set().union(*human[key].values())
        tp, n_pred, n_gold = tp + len(pred & gold), n_pred + len(pred), n_gold + len(gold)
        tp_sev += len(pred & gold) if severities.get(key) == severity else 0
    assert (tp, n_pred, n_gold, tp_sev) == (13, 15, 20, 9)
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT severity_matching, averaging, precision, recall, f1, n_segments "
                      "FROM latest_span_evaluation")
    got = {(bool(r.severity_matching), r.averaging): (r.precision, r.recall, r.f1, r.n_segments)
           for r in rows.itertuples()}
    assert got[(False, "micro")] == (pytest.approx(tp / n_pred), pytest.approx(tp / n_gold),
                                     pytest.approx(2 * tp / (n_pred + n_gold)), 4)
    assert got[(True, "micro")][2] == pytest.approx(2 * tp_sev / (n_pred + n_gold))
    # macro: SysA 10 (P 1, R 4/5), SysB 10 (P 1, R 9/15), SysB 11 (P 0, R undefined), SysA 11 (none)
    assert got[(False, "macro")][:3] == (pytest.approx(2 / 3), pytest.approx(0.7),
                                         pytest.approx((8 / 9 + 0.75) / 2))


def test_texts_stored_after_the_spans_are_checked_before_any_statistic(tmp_path):
    """ESA spans ingested without text, then an evaluation set whose output is shorter: raters and
    span-eval refuse, naming the span, instead of failing inside the computation."""
    root = _mtme(tmp_path)
    short = root / "system-outputs" / "en-de" / "SysB.txt"
    lines = short.read_text(encoding="utf-8").splitlines()
    lines[10] = "Die Katze."
    short.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = tmp_path / "wh.duckdb"
    run_cli(db, "ingest", "mqm", CSV, "--dataset", "d")
    run_cli(db, "ingest", "mtme", root, "--dataset", "d", "--allow-new")
    out = " ".join(run_cli(db, "raters", "--dataset", "d", "--human", "esa", "--k", "5", ok=False).output.split())
    assert "judge engdeu7901's span [0, 15) on system SysB, segment 10 lies beyond the 10 characters" in out
    assert "--replace" in out and "Traceback" not in out
