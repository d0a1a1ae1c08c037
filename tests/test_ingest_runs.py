"""Run numbers of a metric's scores in `ingest sacrerouge`, `ingest mtme` and `ingest eee`
(--replicate N; eee's metadata.replicate), and `export --format eee` writing one record per run
(issue 45 item 4): the runs stored, the same run again unchanged, the same run with other values a
conflict named replicate=N, the refusals one line with nothing written; a dataset run once
exports as before."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from metaeval.core import Store
from metaeval.ingest import table
from metaeval.runs import Warehouse
from tests.conftest import digest, run_cli

SYSTEMS = ["s0", "s1", "s2"]
INPUTS = ["d0", "d1", "d2", "d3"]


def _sacrerouge(path, seed: int, human: bool = False):
    rng = np.random.default_rng(seed)
    lines = []
    for s in SYSTEMS:
        for i in INPUTS:
            metrics = {"bleu": float(np.round(rng.normal(), 6))}
            if human:
                metrics["expert"] = float(np.round(rng.normal(), 6))
            lines.append(json.dumps({"instance_id": i, "summarizer_id": s, "metrics": metrics}))
    path.write_text("\n".join(lines) + "\n")
    return path


def _scores(db):
    with Store(db, read_only=True) as wh:
        return wh.con.execute("SELECT s.name, i.name, m.name, v.replicate, v.value FROM scores v JOIN systems s "
                              "USING (system_id) JOIN inputs i USING (input_id) JOIN measures m USING (measure_id) "
                              "ORDER BY ALL").fetchall()


def test_sacrerouge_runs(db, tmp_path):
    first, second = _sacrerouge(tmp_path / "a.jsonl", 1), _sacrerouge(tmp_path / "b.jsonl", 2)
    run_cli(db, "ingest", "sacrerouge", first, "--dataset", "d")
    run_cli(db, "ingest", "sacrerouge", second, "--dataset", "d", "--replicate", "1")
    rows = _scores(db)
    assert sorted({r[3] for r in rows}) == [0, 1] and len(rows) == 2 * len(SYSTEMS) * len(INPUTS)
    by_run = {(r[0], r[1], r[3]): r[4] for r in rows}
    for line in second.read_text().splitlines():
        o = json.loads(line)
        assert by_run[o["summarizer_id"], o["instance_id"], 1] == o["metrics"]["bleu"]
    run_cli(db, "ingest", "sacrerouge", second, "--dataset", "d", "--replicate", "1")   # the same run again
    assert _scores(db) == rows
    before = digest(db)
    cases = [(["--replicate", "1"], _sacrerouge(tmp_path / "c.jsonl", 3), "replicate=1"),
             (["--replicate", "-1"], second, "--replicate"),
             (["--replicate", "2", "--human", "expert"], _sacrerouge(tmp_path / "h.jsonl", 4, human=True),
              "human judgment")]
    for options, path, said in cases:
        out = run_cli(db, "ingest", "sacrerouge", path, "--dataset", "d", *options, ok=False)
        assert out.exit_code != 0 and "Traceback" not in out.output and said in out.output, out.output
        assert len([line for line in out.output.splitlines() if line.startswith("Error")]) == 1, out.output
    assert digest(db) == before


def test_mtme_runs_are_the_metrics_the_human_scores_as_they_are(tmp_path):
    from tests import test_ingest_mtme as mt

    d, _, metric = mt.evalset.__wrapped__(tmp_path)   # the fixture's set, built here
    db = tmp_path / "wh.duckdb"
    run_cli(db, "ingest", "mtme", d, "--dataset", "w", "--lp", "en-de")
    with Store(db, read_only=True) as wh:
        judgments = wh.con.execute("SELECT * FROM judgments ORDER BY ALL").fetchall()
    bumped = d / "metric-scores" / "en-de" / "BLEU-refA.seg.score"
    bumped.write_text("".join(f"{s} {v + 1}\n" for s in mt.SYSTEMS for v in metric[s]))
    run_cli(db, "ingest", "mtme", d, "--dataset", "w", "--lp", "en-de", "--replicate", "1")
    rows = [r for r in _scores(db) if r[2] == "BLEU-refA.seg"]
    assert sorted({r[3] for r in rows}) == [0, 1]
    runs = {(r[0], r[1], r[3]): r[4] for r in rows}
    assert all(runs[s, i, 1] == pytest.approx(runs[s, i, 0] + 1) for s, i, run in runs if run == 0)
    with Store(db, read_only=True) as wh:
        assert wh.con.execute("SELECT * FROM judgments ORDER BY ALL").fetchall() == judgments
    out = run_cli(db, "ingest", "mtme", d, "--dataset", "w", "--lp", "en-de", "--replicate", "-2", ok=False)
    assert out.exit_code != 0 and "--replicate" in out.output and "Traceback" not in out.output


def _runs_dataset(db, tmp_path, runs: bool = True):
    rng = np.random.default_rng(0)
    rows = [(s, i, "m", float(np.round(rng.normal(), 6)), r) for s in SYSTEMS for i in INPUTS
            for r in range(2 if runs and i != "d0" else 1)]
    rows += [(s, i, "h", float(np.round(rng.normal(), 6)), None) for s in SYSTEMS for i in INPUTS]
    frame = pd.DataFrame(rows, columns=["system", "input", "measure", "value", "replicate"])
    scores = frame[frame["measure"] == "m"].astype({"replicate": int})
    scores.to_csv(tmp_path / "m.csv", index=False)
    frame[frame["measure"] == "h"].drop(columns="replicate").to_csv(tmp_path / "h.csv", index=False)
    with Warehouse(db) as wh:
        table.ingest(wh, "d", [str(tmp_path / "m.csv"), str(tmp_path / "h.csv")], human=["h"])


def test_eee_export_writes_one_record_per_run_and_reads_them_back(db, tmp_path):
    _runs_dataset(db, tmp_path)
    out = tmp_path / "d.jsonl"
    run_cli(db, "export", "--format", "eee", "--dataset", "d", "--out", out)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    instances = [r for r in records if "sample_id" in r and r["evaluation_name"] == "m"]
    assert len(instances) == len(SYSTEMS) * (2 * len(INPUTS) - 1)
    assert sorted({r["metadata"].get("replicate") for r in instances}, key=str) == ["1", None]
    other = tmp_path / "other.duckdb"
    run_cli(other, "ingest", "eee", out, "--dataset", "d")
    assert _scores(other) == _scores(db)
    with Store(db, read_only=True) as a, Store(other, read_only=True) as b:
        sql = "SELECT system, input, measure, value FROM cells ORDER BY ALL"
        assert a.con.execute(sql).fetchall() == b.con.execute(sql).fetchall()   # the means, the judgments


def test_eee_run_once_exports_as_before_and_takes_replicate(db, tmp_path):
    _runs_dataset(db, tmp_path, runs=False)
    out = tmp_path / "d.jsonl"
    run_cli(db, "export", "--format", "eee", "--dataset", "d", "--out", out)
    assert "replicate" not in out.read_text()
    scores_only = tmp_path / "m.jsonl"
    scores_only.write_text("".join(line + "\n" for line in out.read_text().splitlines()
                                   if '"annotator"' not in line))
    run_cli(db, "ingest", "eee", scores_only, "--dataset", "d", "--replicate", "3")
    assert {r[3] for r in _scores(db)} == {0, 3}
    before = digest(db)
    human = tmp_path / "human.jsonl"
    line = next(json.loads(t) for t in out.read_text().splitlines() if '"annotator"' in t)
    line["metadata"]["replicate"] = "1"
    human.write_text(json.dumps(line) + "\n")
    bad = tmp_path / "bad.jsonl"
    record = next(json.loads(t) for t in scores_only.read_text().splitlines() if '"sample_id"' in t)
    bad.write_text(json.dumps({**record, "metadata": {**record["metadata"], "replicate": "x"}}) + "\n")
    changed = tmp_path / "changed.jsonl"
    changed.write_text(json.dumps({**record, "evaluation": {"score": 99.0, "is_correct": False}}) + "\n")
    for path, options, said in ((human, [], "human judgment"), (bad, [], "metadata.replicate"),
                                (changed, ["--replicate", "3"], "replicate=3"),
                                (scores_only, ["--replicate", "1.5"], "--replicate"),
                                (out, ["--replicate", "2"], "human judgment")):
        result = run_cli(db, "ingest", "eee", path, "--dataset", "d", *options, ok=False)
        assert result.exit_code != 0 and "Traceback" not in result.output and said in result.output, result.output
    assert digest(db) == before
