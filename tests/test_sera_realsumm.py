"""SERA on a slice of REALSumm (skipped, with the reason, when ../shared/data is absent)."""

from __future__ import annotations

import numpy as np
import pytest

from metaeval import Store
from metaeval.runs.texts import sera as sera_runs
from tests.conftest import read_jsonl, shared, write_jsonl

pytestmark = pytest.mark.shared_data
INPUTS = {str(i) for i in range(8)}


def test_sera_on_a_realsumm_slice_scores_every_summary_and_correlates(db, cli, tmp_path):
    summaries = [o for o in read_jsonl(shared("realsumm", "summaries.jsonl")) if o["instance_id"] in INPUTS]
    pyramid = [o for o in read_jsonl(shared("realsumm", "pyramid.jsonl")) if o["instance_id"] in INPUTS]
    for o in pyramid:   # the human judgment only: the slice is about SERA
        o["metrics"] = {"litepyramid": {"recall": o["metrics"]["litepyramid"]["recall"]}}
    cli("ingest", "sacrerouge", write_jsonl(tmp_path / "p.jsonl", pyramid), "--dataset", "realsumm",
        "--human", "litepyramid.recall")
    cli("ingest", "summaries", write_jsonl(tmp_path / "s.jsonl", summaries), "--dataset", "realsumm")
    assert f"indexed {len(INPUTS)} document(s)" in cli("index", "build", "refs", "--dataset", "realsumm").output
    out = cli("score", "realsumm", "--metric", "sera", "--index", "refs", "--query", "plain,kw",
              "--cutoff", "2,5").output
    n = len(summaries)
    assert f"scored 8 measure(s) on realsumm: {8 * n} values, inserted {8 * n}" in out
    with Store(db, read_only=True) as wh:
        names = set(wh.measures("realsumm", "automatic")["measure"])
        m = wh.matrix("realsumm", ["sera-2", "sera-dis-5[kw]"])
        assert m.values.shape == (2, 24, len(INPUTS))
        assert np.all((m.values >= 0) & (m.values <= 1))
        # each reference retrieves itself first (it is the one document holding all its terms)
        [(documents,)] = wh.con.execute("""SELECT count(*) FROM retrievals
                                            WHERE query = ? AND documents[1] LIKE 'ref:%'""",
                                        [f"plain@{sera_runs.QUERY_CODE}"]).fetchall()
        assert documents > 0
    cli("correlate", "--dataset", "realsumm", "--human", "litepyramid.recall", "--metric", "sera*", "--level", "system")
    cli("ci", "--dataset", "realsumm", "--human", "litepyramid.recall", "--metric", "sera-5", "--level", "system",
        "--ci-method", "boot-both", "--k", "50", "--seed", "0")
    with Store(db, read_only=True) as wh:
        r = wh.sql("SELECT metric, value FROM latest_correlations WHERE dataset = 'realsumm'")
        ci = wh.sql("SELECT lower, upper FROM latest_confidence_intervals WHERE metric = 'sera-5'")
    assert len(r) == 8 * 3 and r["value"].notna().all() and set(r["metric"]) == set(names)
    assert len(ci) == 3 and (ci["lower"] <= ci["upper"]).all()
