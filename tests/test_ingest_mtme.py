"""``metaeval ingest mtme``: an mt-metrics-eval evaluation set directory, built here."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval import Store
from tests.conftest import run_cli, snapshot

SYSTEMS = ("sys-A", "sys-B", "refB")
N_SEG = 4


def _write(path, lines):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


@pytest.fixture
def evalset(tmp_path):
    """wmtx/ with en-de (3 systems x 4 segments, 2 metrics, MQM at seg and sys level) and de-en."""
    rng = np.random.default_rng(0)
    d = tmp_path / "wmtx"
    _write(d / "sources" / "en-de.txt", [f"source {j}" for j in range(N_SEG)])
    _write(d / "sources" / "de-en.txt", ["Quelle"])
    _write(d / "references" / "en-de.refA.txt", [f"ref A {j}" for j in range(N_SEG)])
    _write(d / "references" / "en-de.refB.txt", [f"ref B {j}" for j in range(N_SEG)])
    _write(d / "documents" / "en-de.docs", ["news doc1"] * N_SEG)
    seg = {s: rng.integers(-5, 1, N_SEG).astype(float) for s in SYSTEMS}
    seg["sys-B"][2] = np.nan  # a missing human score: None
    metric = {s: np.round(rng.normal(size=N_SEG), 3) for s in SYSTEMS}
    for s in SYSTEMS:
        _write(d / "system-outputs" / "en-de" / f"{s}.txt", [f"{s} out {j}" for j in range(N_SEG)])
    _write(d / "human-scores" / "en-de.mqm.seg.score",
           [f"{s} {'None' if np.isnan(v) else v}" for s in SYSTEMS for v in seg[s]])
    _write(d / "human-scores" / "en-de.mqm.sys.score", [f"{s} {np.nanmean(seg[s])}" for s in SYSTEMS])
    _write(d / "human-scores" / "en-de.mqm.doc.score", [f"{s} 0" for s in SYSTEMS])
    _write(d / "metric-scores" / "en-de" / "BLEU-refA.seg.score", [f"{s} {v}" for s in SYSTEMS for v in metric[s]])
    _write(d / "metric-scores" / "en-de" / "BLEU-refA.sys.score", [f"{s} {metric[s].mean()}" for s in SYSTEMS])
    return d, seg, metric


def test_mtme_directory_becomes_cells_and_texts(evalset, tmp_path):
    d, seg, metric = evalset
    db = tmp_path / "wh.duckdb"
    out = run_cli(db, "ingest", "mtme", d, "--dataset", "wmtx-en-de", "--lp", "en-de")
    assert "en-de.mqm.doc.score" in out.output  # listed as not read
    with Store(db, read_only=True) as wh:
        measures = wh.measures("wmtx-en-de").set_index("measure")
        assert dict(measures["kind"]) == {"BLEU-refA.seg": "automatic", "BLEU-refA.sys": "automatic",
                                          "mqm.seg": "human", "mqm.sys": "human"}
        m = wh.matrix("wmtx-en-de", ["mqm.seg", "BLEU-refA.seg"])
        assert m.inputs == tuple(str(j) for j in range(N_SEG))
        for i, s in enumerate(m.systems):
            np.testing.assert_array_equal(m["mqm.seg"][i], seg[s])
            np.testing.assert_array_equal(m["BLEU-refA.seg"][i], metric[s])
        sysm = wh.matrix("wmtx-en-de", ["mqm.sys"])
        assert sysm.inputs == ("all",)
        np.testing.assert_allclose(sysm["mqm.sys"][:, 0], [np.nanmean(seg[s]) for s in sysm.systems])
        texts = wh.sql("SELECT * FROM summary_texts WHERE dataset = 'wmtx-en-de' AND system = 'sys-A' AND input = '2'")
        assert texts["summary"][0] == "sys-A out 2"
        assert sorted(texts["references"][0]) == ["ref A 2", "ref B 2"]
        assert list(texts["documents"][0]) == ["source 2"]
    again = run_cli(db, "ingest", "mtme", d, "--dataset", "wmtx-en-de", "--lp", "en-de")
    assert "nothing changed" in again.output


@pytest.mark.parametrize("breakage, message", [
    (lambda d: _write(d / "metric-scores" / "en-de" / "BLEU-refA.seg.score", ["sys-A 0.1", "sys-A 0.2"]),
     "BLEU-refA.seg.score:1: field 'system': system 'sys-A' has 2 scores; expected 4 segments"),
    (lambda d: _write(d / "metric-scores" / "en-de" / "X.sys.score", ["sys-A 0.1 7"]),
     "X.sys.score:1: expected 'SYSTEM SCORE', got 3 fields"),
    (lambda d: _write(d / "metric-scores" / "en-de" / "X.sys.score", ["sys-A abc"]),
     "X.sys.score:1: field 'score'"),
    (lambda d: _write(d / "metric-scores" / "en-de" / "X.sys.score", ["sys-A 1", "sys-A 2"]),
     "X.sys.score:1: field 'system': system 'sys-A' has 2 scores; expected one line per system"),
    (lambda d: _write(d / "references" / "en-de.refC.txt", ["only one"]),
     "en-de.refC.txt: 1 segments; the source has 4"),
])
def test_bad_files_are_one_line_errors_and_write_nothing(evalset, tmp_path, breakage, message):
    d, _, _ = evalset
    db = tmp_path / "wh.duckdb"
    run_cli(db, "init")
    with Store(db, read_only=True) as wh:
        before = snapshot(wh)
    breakage(d)
    out = run_cli(db, "ingest", "mtme", d, "--dataset", "x", "--lp", "en-de", ok=False)
    assert out.exit_code != 0 and message in out.output and "Traceback" not in out.output
    with Store(db, read_only=True) as wh:
        after = snapshot(wh)
    assert all(before[t].equals(after[t]) for t in before)


def test_several_language_pairs_need_lp(evalset, tmp_path):
    d, _, _ = evalset
    out = run_cli(tmp_path / "wh.duckdb", "ingest", "mtme", d, "--dataset", "x", ok=False)
    assert out.exit_code != 0 and "2 language pairs (de-en, en-de): choose one with --lp" in out.output
    out = run_cli(tmp_path / "wh.duckdb", "ingest", "mtme", d, "--dataset", "x", "--lp", "fr-en", ok=False)
    assert "no language pair 'fr-en'" in out.output
