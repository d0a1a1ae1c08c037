"""The MT meta-evaluation statistics persisted: Kendall variants with ties, tie calibration and
soft pairwise accuracy through correlate / ci / compare / accuracy --soft."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from metaeval import Store, analyses
from metaeval.analyses import stats
from tests.conftest import run_cli


@pytest.fixture
def mt_db(tmp_path):
    """6 systems x 10 inputs, a human on a 0-3 scale (many ties), two metrics."""
    rng = np.random.default_rng(0)
    rows = []
    human = rng.integers(0, 4, (6, 10)).astype(float)
    metrics = {"m-good": human + rng.normal(0, 0.7, (6, 10)), "m-bad": rng.normal(0, 1, (6, 10))}
    for i in range(6):
        for j in range(10):
            rows.append(("sys%d" % i, "seg%d" % j, "mqm", human[i, j], "human"))
            for name, a in metrics.items():
                rows.append(("sys%d" % i, "seg%d" % j, name, round(float(a[i, j]), 1), "automatic"))
    path = tmp_path / "t.csv"
    pd.DataFrame(rows, columns=["system", "input", "measure", "value", "kind"]).to_csv(path, index=False)
    db = tmp_path / "wh.duckdb"
    run_cli(db, "init")
    run_cli(db, "ingest", "table", path, "--dataset", "mt")
    return db


def _latest(db, view):
    with Store(db, read_only=True) as wh:
        return wh.sql(f"SELECT * FROM {view} WHERE dataset = 'mt'")


def test_correlate_variants_and_calibration_are_the_pure_functions(mt_db):
    base = ["correlate", "--dataset", "mt", "--human", "mqm"]
    run_cli(mt_db, *base, "--coefficient", "kendall-a", "--coefficient", "kendall-23", "--coefficient", "acc-23",
            "--coefficient", "kendall-c")
    run_cli(mt_db, *base, "--coefficient", "acc-23", "--coefficient", "kendall-23", "--tie-calibration")
    run_cli(mt_db, *base, "--coefficient", "acc-23", "--coefficient", "kendall", "--epsilon", "0.25")
    rows = _latest(mt_db, "latest_correlations")
    assert len(rows) == 2 * 3 * 8
    with Store(mt_db, read_only=True) as wh:
        m = wh.matrix("mt", ["m-good", "m-bad", "mqm"])
    for r in rows.itertuples():
        conv = json.loads(r.conventions)
        assert r.value == pytest.approx(analyses.correlate(m[r.metric], m["mqm"], r.level, r.coefficient), abs=1e-12)
        if r.coefficient.endswith("[tie-calibrated]"):
            cal = stats.tie_calibration(m[r.metric], m["mqm"], r.level, r.coefficient.partition("[")[0])
            assert conv["epsilon"] == cal.epsilon and r.value == cal.value
        if "[eps=" in r.coefficient:
            assert conv["epsilon"] == 0.25
    assert set(rows["coefficient"]) >= {"acc-23[eps=0.25]", "kendall[eps=0.25]", "acc-23[tie-calibrated]"}


def test_ci_and_compare_with_tie_calibration_record_epsilon(mt_db):
    common = ["--dataset", "mt", "--human", "mqm", "--level", "system", "--level", "summary", "--k", "40",
              "--tie-calibration"]
    run_cli(mt_db, "ci", *common)
    run_cli(mt_db, "compare", *common)
    cis = _latest(mt_db, "latest_confidence_intervals")
    assert len(cis) == 4 and set(cis["coefficient"]) == {"acc-23[tie-calibrated]"}
    for r in cis.itertuples():
        conv = json.loads(r.conventions)
        assert "resamples re-calibrate" in conv["tie_calibration"] and conv["epsilon"] is not None
        assert r.lower <= r.upper
    tests = _latest(mt_db, "latest_hypothesis_tests")
    assert len(tests) == 4
    assert all({"epsilon_a", "epsilon_b"} <= json.loads(c).keys() for c in tests["conventions"])


def test_parametric_methods_and_bad_options_are_refused(mt_db):
    out = run_cli(mt_db, "ci", "--dataset", "mt", "--human", "mqm", "--coefficient", "acc-23", "--ci-method", "fisher",
                  ok=False)
    assert out.exit_code != 0 and "Fisher" in out.output
    out = run_cli(mt_db, "compare", "--dataset", "mt", "--human", "mqm", "--coefficient", "kendall-23",
                  "--method", "williams", ok=False)
    assert out.exit_code != 0 and "Williams" in out.output
    out = run_cli(mt_db, "correlate", "--dataset", "mt", "--human", "mqm", "--coefficient", "pearson",
                  "--tie-calibration", ok=False)
    assert out.exit_code == 2 and "--tie-calibration applies" in out.output
    out = run_cli(mt_db, "correlate", "--dataset", "mt", "--human", "mqm", "--coefficient", "kendall-c[eps=1]",
                  ok=False)
    assert out.exit_code == 2


def test_accuracy_soft_is_persisted_and_equals_the_pure_function(mt_db):
    run_cli(mt_db, "accuracy", "--dataset", "mt", "--human", "mqm", "--soft", "--k", "200")
    again = run_cli(mt_db, "accuracy", "--dataset", "mt", "--human", "mqm", "--soft", "--k", "200")
    assert "up to date" in again.output
    rows = _latest(mt_db, "latest_soft_pairwise_accuracy")
    assert len(rows) == 2 and set(rows["k"]) == {200} and set(rows["seed"]) == {4}
    with Store(mt_db, read_only=True) as wh:
        m = wh.matrix("mt", ["m-good", "m-bad", "mqm"])
    for r in rows.itertuples():
        assert r.spa == stats.soft_pairwise_accuracy(m[r.metric], m["mqm"], k=200, seed=4).spa
        assert (r.pairs, r.systems_used, r.inputs_used) == (15, 6, 10)
    spa = dict(zip(rows["metric"], rows["spa"]))
    assert spa["m-good"] > spa["m-bad"]


def test_readme_mt_section_runs_on_the_demo(tmp_path):
    """The "MT meta-evaluation" guide's commands on a small demo (docs/guides/mt.md; its ingest
    mtme on a directory built here, its correlate on that dataset)."""
    import re
    import shlex
    from pathlib import Path

    from tests.test_ingest_mtme import SYSTEMS, _write

    text = (Path(__file__).resolve().parents[1] / "docs" / "guides" / "mt.md").read_text()
    block = "\n".join(re.findall(r"^```(?:bash|text)\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE))
    lines = [shlex.split(line, comments=True) for line in block.replace("\\\n", " ").splitlines()]
    # the plain demo is the small one below; a demo naming its --dataset builds a page's example
    lines = [w for w in lines if w[:1] == ["metaeval"] and (w[1:2] != ["demo"] or "--dataset" in w)]
    assert len(lines) >= 8
    db = tmp_path / "wh.duckdb"
    run_cli(db, "demo", "--systems", "5", "--inputs", "8", "--k", "40")
    d = tmp_path / "wmt23"
    _write(d / "sources" / "en-de.txt", ["a", "b", "c"])
    rng = np.random.default_rng(0)
    _write(d / "human-scores" / "en-de.mqm.seg.score", [f"{s} {-rng.integers(0, 3)}" for s in SYSTEMS for _ in "abc"])
    _write(d / "metric-scores" / "en-de" / "BLEU-refA.seg.score", [f"{s} {rng.random()}" for s in SYSTEMS for _ in "abc"])
    for words in lines:
        args = [str(d) if a == "mt-metrics-eval-v2/wmt23" else a for a in words[1:]]
        result = run_cli(db, *args, ok=False)
        assert result.exit_code == 0, f"README `{shlex.join(words)}`: {result.output}"
