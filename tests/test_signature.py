"""Signatures (issue 27, item 4): one short string per result with everything that produced it."""

from __future__ import annotations

import json
import re

import numpy as np

from metaeval.analyses import signature as sig
from tests.conftest import run_cli


def test_fields_in_order_and_only_those_a_row_has():
    row = {"level": "system", "coefficient": "kendall", "method": "perm-both", "alternative": "two-sided",
           "k": 1000.0, "seed": 0, "correction": "holm", "correction_group": "metric", "alpha": 0.05,
           "system_inputs": "all", "resample_annotators": None, "risk": np.nan, "fingerprint": "0123456789abcdef"}
    assert sig.signature("0.5.0", "compare", row) == (
        "metaeval:0.5.0|compare|level:system|coef:kendall|method:perm-both|alt:two-sided|k:1000|seed:0|"
        "corr:holm/metric|alpha:0.05|sysin:all|data:01234567")
    # no correction is no field; a correlation row has only its level, coefficient, protocol, data
    assert "corr:" not in sig.signature("0.5.0", "compare", {**row, "correction": "none"})
    assert sig.signature("1", "correlate", {"level": "summary", "coefficient": "pearson"}) == \
        "metaeval:1|correlate|level:summary|coef:pearson"



def test_subsets_controls_and_detection_settings_are_in_the_signature():
    row = {"level": "global", "coefficient": "pearson[control=system]", "subset": "source=xsum & split=test",
           "fingerprint": "ffffeeeeddddcccc"}
    assert sig.signature("1", "correlate", row) == (
        "metaeval:1|correlate|level:global|coef:pearson[control=system]|subset:source=xsum&split=test|data:ffffeeee")
    assert "subset" not in sig.signature("1", "correlate", {**row, "subset": ""})   # every cell: no field
    detection = {"subset": "split=test", "positive": 1.0, "tune": "split=validation", "fixed_threshold": None,
                 "k": 1000, "seed": 0}
    assert sig.signature("1", "detection", detection) == (
        "metaeval:1|detection|subset:split=test|pos:1|tune:split=validation|k:1000|seed:0")
    assert "tune:self" in sig.signature("1", "detection", {**detection, "tune": ""})
    assert "thr:0.5" in sig.signature("1", "detection", {**detection, "tune": None, "fixed_threshold": 0.5})


def test_shared_keeps_the_fields_every_row_has():
    a = "metaeval:0.5.0|ci|level:system|coef:kendall|k:200|data:aaaa"
    b = "metaeval:0.5.0|ci|level:summary|coef:kendall|k:200|data:bbbb"
    assert sig.shared([a, b, None]) == "metaeval:0.5.0|ci|coef:kendall|k:200"
    assert sig.shared([]) is None


def test_results_json_latex_and_evaluate_carry_signatures(tmp_path):
    db = tmp_path / "w.duckdb"
    run_cli(db, "demo", "--systems", "5", "--inputs", "8", "--k", "40")
    rows = run_cli(db, "results", "confidence_intervals", "--signature", "--format", "json").stdout
    for r in json.loads(rows):
        assert r["signature"].startswith("metaeval:") and f"level:{r['level']}" in r["signature"]
        assert f"data:{r['fingerprint'][:8]}" in r["signature"] and "method:boot-both|k:40|seed:0" in r["signature"]
    base = ["--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--coefficient", "pearson"]
    for r in json.loads(run_cli(db, "correlate", *base, "--format", "json").stdout):
        assert r["signature"].startswith("metaeval:") and "|correlate|level:system|coef:pearson|" in r["signature"]
    latex = run_cli(db, "ci", *base, "--k", "40", "--format", "latex").stdout
    # the signature in a LaTeX comment above the table (issue 34: a caption of at most 300 characters)
    assert re.search(r"^% signature metaeval:\S*\|ci\|", latex, flags=re.MULTILINE) and "|" not in latex.split(
        r"\caption")[1]
    ev = json.loads(run_cli(db, "evaluate", "--metric", "sim-high.f1", *base, "--k", "40", "--format", "json").stdout)
    assert all(r["signature"].startswith("metaeval:") and "|evaluate|" in r["signature"] for r in ev)
