"""Systems by type (issue 33 item 8): the stored ``systems.type`` chooses which systems take part;
reference, oracle and human systems are left out unless chosen; the choice is the rows' subset
label (key, fingerprint, signature)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.stats as sps

from metaeval import Store
from metaeval.errors import WarehouseError
from metaeval.runs.engine import api, persist, selection

from .conftest import run_cli, write_jsonl

TYPES = {"s0": "peer", "s1": "peer", "s2": "peer", "s3": "peer", "s4": "peer", "ref": "reference", "orc": "oracle"}


@pytest.fixture
def typed(tmp_path):
    """Five peers, a reference and an oracle system, 6 inputs, a metric and a 2-annotator human score."""
    rng = np.random.default_rng(3)
    lines, cells = [], {}
    for system, kind in TYPES.items():
        for i in range(6):
            metric, human = rng.random(), [float(x) for x in rng.integers(1, 6, 2)]
            if kind != "peer":                     # the human summaries score high on both
                metric, human = metric + 2, [h + 3 for h in human]
            cells[(system, str(i))] = (metric, float(np.mean(human)))
            lines.append({"instance_id": str(i), "summarizer_id": system, "summarizer_type": kind,
                          "metrics": {"m": float(metric), "human": human}})
    db = tmp_path / "typed.duckdb"
    Store.create(db).close()
    run_cli(db, "ingest", "sacrerouge", write_jsonl(tmp_path / "typed.jsonl", lines), "--dataset", "t",
            "--human", "human")
    return db, cells


def _system_pearson(cells, systems):
    means = np.array([[np.mean([v[k] for (s, _), v in cells.items() if s == system]) for k in (0, 1)]
                      for system in systems])
    return sps.pearsonr(means[:, 0], means[:, 1])[0]


def test_reference_and_oracle_systems_are_left_out_unless_chosen(typed):
    db, cells = typed
    peers = [s for s, k in TYPES.items() if k == "peer"]
    with Store(db) as wh:
        assert sorted(wh.sql("SELECT type FROM systems")["type"].unique()) == ["oracle", "peer", "reference"]
        default = api.correlate(wh, "t", "human", levels=["system"], coefficients=["pearson"]).rows(wh).iloc[0]
        every = api.correlate(wh, "t", "human", levels=["system"], coefficients=["pearson"],
                              where=selection.with_system_types((), ["all"])).rows(wh).iloc[0]
        chosen = api.correlate(wh, "t", "human", levels=["system"], coefficients=["pearson"],
                               where=selection.with_system_types((), ["reference", "peer"])).rows(wh).iloc[0]
    assert default["n_systems"] == 5 and default["subset"] == ""
    assert default["value"] == pytest.approx(_system_pearson(cells, peers))
    assert every["n_systems"] == 7 and every["subset"] == "system.type=all"
    assert every["value"] == pytest.approx(_system_pearson(cells, list(TYPES)))
    assert chosen["n_systems"] == 6 and chosen["subset"] == "system.type=peer,reference"
    assert chosen["value"] == pytest.approx(_system_pearson(cells, [*peers, "ref"]))
    assert len({default["fingerprint"], every["fingerprint"], chosen["fingerprint"]}) == 3


def test_the_command_line_option_is_the_subset_and_in_the_signature(typed):
    db, _ = typed
    out = run_cli(db, "correlate", "--dataset", "t", "--human", "human", "--level", "system", "--coefficient",
                  "pearson", "--system-type", "all", "--format", "json").output
    row = json.loads(out[out.index("["):])[0]
    assert row["subset"] == "system.type=all" and "subset:system.type=all" in row["signature"]
    bad = run_cli(db, "correlate", "--dataset", "t", "--human", "human", "--system-type", "judge", ok=False)
    assert bad.exit_code != 0 and "no system of type 'judge'; its types: oracle, peer, reference" in bad.output
    assert len(bad.output.strip().splitlines()) == 1
    bad = run_cli(db, "correlate", "--dataset", "t", "--human", "human", "--system-type", "all",
                  "--system-type", "peer", ok=False)
    assert bad.exit_code != 0 and "'all' alone" in bad.output


def test_system_scores_and_rank_change_leave_them_out(typed):
    db, _ = typed
    with Store(db) as wh:
        systems, _, fp_default, _ = persist.system_scores(wh, "t", ["m"], "human")
        every, _, fp_all, _ = persist.system_scores(wh, "t", ["m"], "human", where=[("system.type", "all")])
    assert systems == ("s0", "s1", "s2", "s3", "s4") and len(every) == 7 and fp_default != fp_all


def test_a_dataset_of_peers_and_untyped_systems_loses_nothing(tmp_path):
    """The default on data without reference/oracle systems (SummEval, REALSumm, the table ingests):
    the data, hence every fingerprint and row, are those of before."""
    db = tmp_path / "w.duckdb"
    Store.create(db).close()
    csv = tmp_path / "s.csv"
    rows = [f"s{s},{i},{s * 0.1 + i},{i * 0.3 - s}" for s in range(4) for i in range(3)]
    csv.write_text("system,input,m,human\n" + "\n".join(rows) + "\n")
    run_cli(db, "ingest", "table", csv, "--dataset", "u", "--human", "human")
    with Store(db) as wh:
        assert wh.sql("SELECT type FROM systems")["type"].isna().all()
        scope = selection.resolve_scope(wh, "u", "human")
        data = selection.load_data(wh, scope)
        raw = wh.matrix("u", ["m", "human"])
        assert np.array_equal(data.values["m"], raw["m"]) and data.subset == ""
        with pytest.raises(WarehouseError, match="no system of type 'reference'; its types: peer"):
            selection.resolve_scope(wh, "u", "human", where=selection.with_system_types((), ["reference"]))
