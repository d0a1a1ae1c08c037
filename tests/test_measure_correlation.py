"""The correlation of two measures with its p-value (issue 43: Louis & Nenkova 2013 §2.3, SERA's
Table 3): two human judgments, or two metrics, against scipy and the closed forms."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from metaeval import Store
from metaeval.analyses import measure_correlation as mc

from .conftest import digest


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_correlation_test_against_scipy_and_the_t_test(alternative):
    rng = np.random.default_rng(4)
    a = rng.normal(size=15)
    b = 0.6 * a + rng.normal(size=15)
    a[3], b[7] = np.nan, np.nan
    ok = ~np.isnan(a) & ~np.isnan(b)
    for coefficient, test in (("pearson", scipy.stats.pearsonr), ("spearman", scipy.stats.spearmanr),
                              ("kendall", scipy.stats.kendalltau)):
        r = mc.correlation_test(a, b, coefficient, alternative)
        expected = test(a[ok], b[ok], alternative=alternative)
        assert (r.value, r.p_value, r.n) == pytest.approx((expected.statistic, expected.pvalue, 13), abs=1e-12)
    r = mc.correlation_test(a, b, "pearson", alternative)          # the t test, by hand
    n = 13
    x, y = a[ok] - a[ok].mean(), b[ok] - b[ok].mean()
    rho = (x @ y) / math.sqrt((x @ x) * (y @ y))
    t = rho * math.sqrt((n - 2) / (1 - rho ** 2))
    p = {"two-sided": 2 * scipy.stats.t.sf(abs(t), n - 2), "greater": scipy.stats.t.sf(t, n - 2),
         "less": scipy.stats.t.cdf(t, n - 2)}[alternative]
    assert (r.value, r.p_value) == pytest.approx((rho, p), rel=1e-9)
    ranks = [(np.sign(a[ok][i] - a[ok][j]) * np.sign(b[ok][i] - b[ok][j])) for i in range(n) for j in range(i)]
    assert mc.correlation_test(a, b, "kendall").value == pytest.approx(sum(ranks) / len(ranks))  # no ties: tau-a


def test_undefined_correlations_are_nan():
    for a, b in (([1, 2], [2, 1]), ([1, 1, 1, 1], [1, 2, 3, 4]), ([1, np.nan, 3, np.nan], [1, 2, np.nan, 4])):
        r = mc.correlation_test(a, b, "kendall")
        assert math.isnan(r.value) and math.isnan(r.p_value)
    with pytest.raises(ValueError, match="`coefficient` must be one of"):
        mc.correlation_test([1, 2, 3], [1, 2, 3], "kendall-c")


def _two_judgments(tmp_path, seed=0):
    rng = np.random.default_rng(seed)
    cells = []
    for s in range(7):
        for i in range(9):
            if (s, i) == (2, 3):
                continue                                   # a cell no measure scores
            q = s + rng.normal()
            values = {"h.relevance": q, "h.coherence": q + rng.normal(scale=2), "m.rouge": q + rng.normal(),
                      "m.divergence": -q + rng.normal(scale=1.5)}
            if (s, i) == (5, 1):
                del values["h.coherence"]                  # one cell the second judgment lacks
            cells += [{"system": f"s{s}", "input": f"d{i}", "measure": m, "value": v,
                       **({"kind": "human"} if m.startswith("h.") else {})} for m, v in values.items()]
    frame = pd.DataFrame(cells)
    path = tmp_path / "two.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_two_human_judgments_and_two_metrics(db, cli, tmp_path):
    path, frame = _two_judgments(tmp_path)
    cli("ingest", "table", path, "--dataset", "t", "--lower", "m.divergence")
    base = ["--dataset", "t", "--level", "system", "--level", "global", "--coefficient", "pearson",
            "--coefficient", "kendall"]
    cli("measure-correlation", *base, "--measure", "h.relevance", "--measure", "h.coherence")
    cli("measure-correlation", *base, "--measure", "m.divergence", "--measure", "m.rouge", "--alternative", "greater")
    with Store(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_measure_correlations")
        n_runs = len(wh.sql("SELECT * FROM analysis_runs WHERE command = 'measure-correlation'"))
    assert len(rows) == 8 and n_runs == 2
    wide = frame.pivot_table(index=["system", "input"], columns="measure", values="value")
    wide["m.divergence"] = -wide["m.divergence"]                   # oriented: higher is better
    tests = {"pearson": scipy.stats.pearsonr, "kendall": scipy.stats.kendalltau}
    for (a, b), alternative in ((("h.relevance", "h.coherence"), "two-sided"),
                                (("m.divergence", "m.rouge"), "greater")):
        means = wide.groupby(level="system")[[a, b]].mean()       # each measure's own cells
        cells = wide[[a, b]].dropna()
        for level, points in (("system", means), ("global", cells)):
            for coefficient, test in tests.items():
                [row] = rows[(rows.measure_a == a) & (rows.level == level) & (rows.coefficient == coefficient)
                             ].itertuples()
                expected = test(points[a], points[b], alternative=alternative)
                assert (row.value, row.p_value) == pytest.approx((expected.statistic, expected.pvalue), rel=1e-9)
                assert row.n == len(points) and row.alternative == alternative
                assert json.loads(row.conventions)["pvalue"] == mc.PVALUES[coefficient]
    assert rows[rows.level == "global"].n.min() == 61 and (rows[rows.level == "system"].n == 7).all()
    assert (rows[rows.measure_a == "m.divergence"].value > 0).all()  # oriented, the divergence agrees
    before = digest(db)
    cli("measure-correlation", *base, "--measure", "h.relevance", "--measure", "h.coherence")
    assert digest(db) == before                                    # reused: nothing written


@pytest.mark.parametrize("args, message", [
    (["--measure", "h.relevance"], "give exactly two measures: --measure 'h.relevance'"),
    (["--measure", "h.relevance", "--measure", "nope"], "has no measure 'nope'"),
    (["--measure", "h.relevance", "--measure", "m.rouge", "--level", "global", "--aggregate", "median"],
     "--aggregate 'median' is for the system level alone"),
])
def test_refusals_write_nothing(db, cli, tmp_path, args, message):
    path, _ = _two_judgments(tmp_path)
    cli("ingest", "table", path, "--dataset", "t")
    before = digest(db)
    result = cli("measure-correlation", "--dataset", "t", *args, expect_ok=False)
    assert result.exit_code != 0 and message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1 and digest(db) == before


def test_correlate_refusing_two_judgments_names_measure_correlation(db, cli, tmp_path):
    path, _ = _two_judgments(tmp_path)
    cli("ingest", "table", path, "--dataset", "t")
    out = cli("correlate", "--dataset", "t", "--human", "h.relevance", "--metric", "h.coherence", expect_ok=False)
    assert out.exit_code != 0 and len(out.output.strip().splitlines()) == 1
    assert "metaeval measure-correlation --dataset t --measure h.coherence --measure OTHER" in out.output
    out = cli("correlate", "--dataset", "t", "--human", "m.rouge", expect_ok=False)
    assert "metaeval measure-correlation --dataset t --measure m.rouge --measure OTHER" in out.output
