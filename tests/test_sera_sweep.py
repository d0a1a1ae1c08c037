"""SERA's correlation against its cut-off as one sweep (Cohan & Goharian 2016, Fig. 1; issue 33
item 17): `score --metric sera --cutoff ... --sweep H [--sweep-plot STEM]`."""

from __future__ import annotations

import pandas as pd
import pytest

from metaeval import Store
from metaeval.analyses.text import sera_sweep
from metaeval.present import study_figures
from tests.conftest import write_jsonl
from tests.test_sera_scoring import REFS

SUMMARIES = {("s1", "i0"): "aspirin helps after a heart attack", ("s2", "i0"): "sleep and memory",
             ("s3", "i0"): "heart attack", ("s4", "i0"): "tumor",
             ("s1", "i1"): "cancer trial shows tumor growth slowed", ("s2", "i1"): "the brain",
             ("s3", "i1"): "cancer cells", ("s4", "i1"): "heart memory",
             ("s1", "i2"): "brain memory sleep", ("s2", "i2"): "heart attack aspirin",
             ("s3", "i2"): "sleep", ("s4", "i2"): "cancer"}


@pytest.fixture
def toy(db, cli, tmp_path):
    lines = [{"instance_id": i, "summarizer_id": s, "summary": {"text": [t]},
              "references": [{"summarizer_id": f"r{k}", "text": [r]} for k, r in enumerate(REFS[i])]}
             for (s, i), t in SUMMARIES.items()]
    cli("ingest", "summaries", write_jsonl(tmp_path / "s.jsonl", lines), "--dataset", "toy")
    cli("index", "build", "refs", "--dataset", "toy")
    return db


def test_names_parse_to_variant_and_cutoff():
    assert sera_sweep.parse("sera-5") == ("sera", 5)
    assert sera_sweep.parse("sera-dis-10[kw,bm25]") == ("sera-dis[kw,bm25]", 10)
    with pytest.raises(ValueError, match="not a SERA"):
        sera_sweep.parse("rouge-1.f1")


def test_the_figure_has_a_line_per_variant_and_coefficient_and_labels():
    rows = pd.DataFrame({"metric": ["sera-1", "sera-3", "sera-dis-1", "sera-dis-3"] * 2,
                         "coefficient": ["pearson"] * 4 + ["kendall"] * 4,
                         "value": [0.9, 0.5, 0.8, None, 0.7, 0.4, 0.6, 0.2]})
    fig = study_figures.cutoff_figure(sera_sweep.sweep_frame(rows), "pyramid", "system")
    ax = fig.axes[0]
    assert len(ax.lines) == 4 and "cut-off" in ax.get_xlabel() and "pyramid" in ax.get_ylabel()
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {
        "sera, pearson", "sera, kendall", "sera-dis, pearson", "sera-dis, kendall"}
    with pytest.raises(ValueError, match="two cut-offs"):
        study_figures.cutoff_figure(sera_sweep.sweep_frame(rows[rows["metric"].str.endswith("1")]), "h", "system")


def test_score_sweep_stores_the_correlations_and_draws(toy, cli, tmp_path):
    values = {"s1": 3.0, "s2": 1.0, "s3": 2.0, "s4": 0.5}
    pd.DataFrame([{"system": s, "input": i, "measure": "pyramid", "value": values[s] + 0.1 * k, "annotator": "a",
                   "kind": "human"} for k, (s, i) in enumerate(SUMMARIES)]).to_csv(tmp_path / "h.csv", index=False)
    cli("ingest", "table", tmp_path / "h.csv", "--dataset", "toy")
    refused = cli("score", "toy", "--metric", "sera", "--index", "refs", "--cutoff", "2", "--sweep", "pyramid",
                  expect_ok=False)
    assert refused.exit_code != 0 and "two cut-offs" in refused.output and "Traceback" not in refused.output
    refused = cli("score", "toy", "--metric", "sera", "--index", "refs", "--cutoff", "1,3", "--sweep", "nosuch",
                  expect_ok=False)
    assert "--sweep" in refused.output and "not a human measure" in refused.output
    with Store(toy, read_only=True) as wh:
        assert wh.measures("toy")["measure"].tolist() == ["pyramid"]      # refused before any write
    out = cli("score", "toy", "--metric", "sera", "--index", "refs", "--cutoff", "1,2,3", "--sweep", "pyramid",
              "--sweep-plot", tmp_path / "fig").output
    assert "against the cut-off" in out and (tmp_path / "fig.png").exists() and (tmp_path / "fig.svg").exists()
    with Store(toy, read_only=True) as wh:
        rows = wh.sql("SELECT metric, coefficient, level, value FROM latest_correlations WHERE human = 'pyramid'")
    assert set(rows["metric"]) == {f"sera{d}-{n}" for d in ("", "-dis") for n in (1, 2, 3)}
    assert set(rows["coefficient"]) == {"pearson", "spearman", "kendall"} and set(rows["level"]) == {"system"}
    again = cli("score", "toy", "--metric", "sera", "--index", "refs", "--cutoff", "1,2,3", "--sweep", "pyramid",
                "--sweep-plot", tmp_path / "fig", expect_ok=False)
    assert again.exit_code != 0 and "fig.png" in again.output
