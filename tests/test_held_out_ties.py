"""held-out-ties: tie calibration with epsilon chosen on held-out data (Perrella et al. 2024)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from metaeval import Store
from metaeval.analyses import held_out_ties as h
from tests._mtme_reference import calibrate, level_variant
from tests.conftest import run_cli


def test_split_is_seeded_disjoint_and_complete():
    cal, ev = h.split_inputs(11, 0.3, 5)
    assert len(cal) == 3 and len(ev) == 8
    assert sorted(np.r_[cal, ev].tolist()) == list(range(11))
    again = h.split_inputs(11, 0.3, 5)
    assert cal.tolist() == again[0].tolist()
    assert h.split_inputs(11, 0.3, 6)[0].tolist() != cal.tolist() or h.split_inputs(11, 0.3, 7)[0].tolist() != cal.tolist()
    assert len(h.split_inputs(3, 0.01, 0)[0]) == 1 and len(h.split_inputs(3, 0.99, 0)[1]) == 1
    with pytest.raises(ValueError):
        h.split_inputs(1, 0.5, 0)


@pytest.mark.parametrize("level", ["summary", "global", "system"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_epsilon_never_looks_at_the_evaluation_items(level, seed):
    rng = np.random.default_rng(seed)
    Z = rng.integers(0, 4, (4, 10)).astype(float)
    X = Z + rng.normal(0, 1.0, Z.shape)
    cal, ev = h.split_inputs(10, 0.5, seed)
    r = h.held_out(X[:, cal], Z[:, cal], X[:, ev], Z[:, ev], level)
    # brute force: every candidate epsilon of the calibration columns evaluated from scratch
    value, eps = calibrate(X[:, cal], Z[:, cal], level, "acc23")
    assert r.epsilon == pytest.approx(eps, abs=1e-12)
    assert r.value == pytest.approx(level_variant(X[:, ev], Z[:, ev], level, "acc23", eps), abs=1e-12)
    assert r.value_on_test == pytest.approx(calibrate(X[:, ev], Z[:, ev], level, "acc23")[0], abs=1e-12)
    assert r.value_untied == pytest.approx(level_variant(X[:, ev], Z[:, ev], level, "acc23"), abs=1e-12)
    # whatever the evaluation items hold, the epsilon is the same
    for trial in range(3):
        Xe, Ze = rng.normal(size=(4, len(ev))) * 10, rng.integers(0, 2, (4, len(ev))).astype(float)
        assert h.held_out(X[:, cal], Z[:, cal], Xe, Ze, level).epsilon == r.epsilon


def test_tuning_on_the_test_favours_the_continuous_metric_and_held_out_shrinks_it():
    """A discrete metric (three values) against a continuous one on a tie-rich human: tuned on the
    test, the continuous metric gains from the search over its many thresholds; held out, it
    does not, so its advantage over the discrete one shrinks (every seed of 10)."""
    n, m = 6, 60
    for seed in range(10):
        rng = np.random.default_rng(seed)
        Z = rng.integers(0, 3, (n, m)).astype(float)
        A = np.clip(Z + rng.integers(-1, 2, (n, m)), 0, 2).astype(float)
        B = Z + rng.normal(0, 1.0, (n, m))
        cal, ev = h.split_inputs(m, 0.5, seed)
        ra = h.held_out(A[:, cal], Z[:, cal], A[:, ev], Z[:, ev], "summary")
        rb = h.held_out(B[:, cal], Z[:, cal], B[:, ev], Z[:, ev], "summary")
        assert rb.value_on_test - rb.value > ra.value_on_test - ra.value >= 0
        assert rb.value - ra.value < rb.value_on_test - ra.value_on_test


def test_held_out_ties_command(tmp_path):
    db = tmp_path / "wh.duckdb"
    run_cli(db, "demo", "--dataset", "a", "--systems", "5", "--inputs", "10", "--k", "40")
    run_cli(db, "demo", "--dataset", "b", "--systems", "4", "--inputs", "8", "--k", "40", "--seed", "2")
    args = ["held-out-ties", "--dataset", "a", "--human", "expert.relevance", "--fraction", "0.4", "--seed", "3"]
    out = " ".join(run_cli(db, *args).output.split())
    assert "split of the inputs (fraction 0.4, seed 3: 4 calibrate, 6 evaluate)" in out
    run_cli(db, *args)   # up to date: no second run
    run_cli(db, "held-out-ties", "--dataset", "a", "--human", "expert.relevance", "--calibration-dataset", "b")
    with Store(db, read_only=True) as wh:
        runs = wh.sql("SELECT parameters FROM analysis_runs WHERE command = 'held-out-ties' ORDER BY run_id")
        rows = wh.sql("SELECT * FROM latest_held_out_ties ORDER BY calibration, metric")
    assert len(runs) == 2
    first = json.loads(runs["parameters"].iloc[0])
    assert first["fraction"] == 0.4 and first["seed"] == 3 and first["calibration"] == "split"
    split = rows[rows["calibration"] == "split"]
    other = rows[rows["calibration"] == "b"]
    assert len(split) == 4 and len(other) == 4
    assert other["fraction"].isna().all() and other["seed"].isna().all()
    assert (other["n_calibration"] == 8).all() and (other["n_evaluation"] == 10).all()
    assert (split["value_on_test"] >= split["value"] - 1e-12).all()
    bad = run_cli(db, "held-out-ties", "--dataset", "a", "--human", "expert.relevance", "--calibration-dataset", "a",
                  ok=False).output
    assert "--calibration-dataset 'a' is the evaluated dataset" in bad
