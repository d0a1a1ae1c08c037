"""Sentinel metrics (Perrella et al. 2024), lightweight stand-ins: features of one side of a
translation, a least-squares model cross-fitted leave-input-out."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from metaeval import Store
from metaeval.analyses.text import sentinel
from tests.conftest import run_cli

EXAMPLE = Path(__file__).parent.parent / "docs" / "examples" / "mqm-sentinel.tsv"


def test_text_features_by_hand():
    text = "Ab, 12 cd é!"   # 12 characters: 5 letters (1 upper), 2 digits, 2 punctuation, 3 spaces, 1 non-ASCII
    f = dict(zip(sentinel.FEATURES, sentinel.text_features(text)))
    assert f["log-chars"] == pytest.approx(math.log(13))
    assert f["log-tokens"] == pytest.approx(math.log(5))
    assert f["mean-token-length"] == pytest.approx((3 + 2 + 2 + 2) / 4)
    assert f["punctuation-share"] == pytest.approx(2 / 12)
    assert f["digit-share"] == pytest.approx(2 / 12)
    assert f["non-ascii-share"] == pytest.approx(1 / 12)
    assert f["uppercase-share"] == pytest.approx(1 / 5)
    assert f["distinct-char-trigrams"] == pytest.approx(len({text[i:i + 3] for i in range(10)}) / 10)
    assert sentinel.text_features("") == [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    assert np.isnan(sentinel.feature_matrix([None, "a"])[0]).all()


def test_leave_input_out_equals_a_fit_per_input_and_never_sees_its_input():
    rng = np.random.default_rng(0)
    inputs = np.repeat(np.arange(7), 4)
    X = rng.normal(size=(28, 3))
    y = X @ [1.0, -2.0, 0.5] + rng.normal(0, 0.3, 28)
    y[5] = np.nan   # not a training row, still scored
    got = sentinel.leave_input_out(X, y, inputs)
    for i in range(7):
        train = (inputs != i) & np.isfinite(y)
        design = np.column_stack([np.ones(train.sum()), X[train]])
        b = np.linalg.lstsq(design, y[train], rcond=None)[0]
        np.testing.assert_allclose(got[inputs == i], b[0] + X[inputs == i] @ b[1:], atol=1e-10)
    # the scores of input 3 never depend on input 3's human scores
    y2 = y.copy()
    y2[inputs == 3] = 100.0
    np.testing.assert_array_equal(sentinel.leave_input_out(X, y2, inputs)[inputs == 3], got[inputs == 3])
    # a side shared by the systems of an input (source, reference): one score per input, exactly
    Xs = rng.normal(size=(7, 3))[inputs]
    shared = sentinel.leave_input_out(Xs, y, inputs)
    assert all(np.unique(shared[inputs == i]).size == 1 for i in range(7))
    # too few other inputs for the features: undefined, never a guess
    assert np.isnan(sentinel.leave_input_out(Xs[:8], y[:8], inputs[:8])).all()


def test_score_sentinels_command(tmp_path):
    db = tmp_path / "wh.duckdb"
    run_cli(db, "ingest", "mqm", EXAMPLE, "--dataset", "s")
    out = run_cli(db, "score", "s", "--metric", "sentinel-cand", "--metric", "sentinel-src", "--human", "mqm").output
    assert "scored 2 measure(s)" in out
    # issue 48 item 15: its undefined values are a sentinel's (a fold that does not fit), never SERA's
    assert "SERA" not in out and "empty summary" not in out and "leave-input-out fit" in out
    with Store(db, read_only=True) as wh:
        kinds = wh.measure_kinds("s")
        src = wh.matrix("s", "sentinel-src[human=mqm]")["sentinel-src[human=mqm]"]
        options = json.loads(wh.sql("SELECT options FROM ingests WHERE format = 'score'")["options"].iloc[0])
    names = set(kinds["measure"])
    assert {"sentinel-cand[human=mqm]", "sentinel-src[human=mqm]"} <= names
    assert (kinds.set_index("measure").loc["sentinel-cand[human=mqm]", "direction"]
            == kinds.set_index("measure").loc["mqm", "direction"])
    for j in range(src.shape[1]):   # one score per input
        col = src[:, j][~np.isnan(src[:, j])]
        assert np.unique(col).size <= 1
    fitted = options["sentinels"]["sentinel-src[human=mqm]"]
    assert fitted["side"] == "source" and "leave-input-out" in fitted["protocol"]
    assert "digit-share" in fitted["features"] and fitted["terms"][0] == "(intercept)"
    assert "stand-in" in fitted["model"]
    bad = run_cli(db, "score", "s", "--metric", "sentinel-ref", "--human", "mqm", ok=False).output
    assert "sentinel-ref reads the reference of each translation, and 's' stores none" in bad
    bad = run_cli(db, "score", "s", "--metric", "sentinel-cand", ok=False).output
    assert "a sentinel predicts a human score: give --human H" in bad
