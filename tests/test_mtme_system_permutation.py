"""mt-metrics-eval's system-level permutation test (issue 43 item 3): ``compare --method
perm-systems-mtme`` against the p-values that mt-metrics-eval's own ``stats.PermutationSigDiff``
printed on the same segment-level data (tests/anchors/mtme_system_permutation.json says how they
were made). Both are Monte-Carlo estimates with k = 1000 draws of different generators: they
agree within the binomial error of their difference. ``perm-systems`` (the TACL'21 convention,
cells z-scored) stays what it was."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from metaeval import Store
from metaeval.analyses.stats import hypothesis

from .conftest import run_cli

FIXTURE = Path(__file__).parent / "anchors" / "mtme_system_permutation.json"


def _matrix(rows) -> np.ndarray:
    return np.array([[np.nan if v is None else v for v in r] for r in rows], dtype=float)


@pytest.fixture
def mtme(tmp_path):
    d = json.loads(FIXTURE.read_text())
    lines = ["system,input," + ",".join(d["metrics"]) + ",human"]
    for i, s in enumerate(d["systems"]):
        for j, t in enumerate(d["inputs"]):
            values = [d["metrics"][m][i][j] for m in d["metrics"]] + [d["human"][i][j]]
            lines.append(f"{s},{t}," + ",".join("" if v is None else repr(v) for v in values))
    csv = tmp_path / "mtme.csv"
    csv.write_text("\n".join(lines) + "\n")
    db = tmp_path / "m.duckdb"
    Store.create(db).close()
    run_cli(db, "ingest", "table", csv, "--dataset", "mt", "--human", "human")
    return db, d


def _tolerance(p: float, k: int) -> float:
    """4 standard errors of the difference of two independent k-draw estimates of p (p(1 - p)
    at least that of one count in k), plus one count."""
    q = min(max(p, 1 / k), 1 - 1 / k)
    return 4 * math.sqrt(2 * q * (1 - q) / k) + 1 / k


def test_perm_systems_mtme_agrees_with_mt_metrics_evals_printed_pvalues(mtme):
    db, d = mtme
    run_cli(db, "compare", "--dataset", "mt", "--human", "human", "--level", "system", "--coefficient", "pearson",
            "--method", "perm-systems-mtme", "--alternative", "greater", "--correction", "none", "--k", "1000")
    with Store(db) as wh:
        rows = wh.sql("SELECT * FROM latest_hypothesis_tests")
    got = {(r.metric_a, r.metric_b): r for r in rows.itertuples()}
    assert len(got) == len(d["pvalues"]) == 12
    Z = _matrix(d["human"])
    z = np.nanmean(Z, axis=1)
    for want in d["pvalues"]:
        row = got[want["metric_a"], want["metric_b"]]
        assert row.p_value == pytest.approx(want["p"], abs=_tolerance(want["p"], d["k"])), want
        assert row.delta == pytest.approx(want["delta"], abs=1e-9)       # the same statistic, exactly
        x, y = (np.nanmean(_matrix(d["metrics"][m]), axis=1) for m in (want["metric_a"], want["metric_b"]))
        assert row.delta == pytest.approx(scipy.stats.pearsonr(x, z)[0] - scipy.stats.pearsonr(y, z)[0], abs=1e-12)
        conventions = json.loads(row.conventions)
        assert conventions["method"] == "perm-systems-mtme" and conventions["pvalue_formula"].startswith("count / k")
        assert row.method == "perm-systems-mtme"
    out = run_cli(db, "winners", "--dataset", "mt", "--human", "human", "--level", "system", "--coefficient",
                  "pearson", "--method", "perm-systems-mtme", "--alternative", "greater", "--correction", "none",
                  "--format", "json").output
    clusters = {r["metric"]: r["cluster"] for r in json.loads(out[out.index("["):])}
    assert clusters == d["ranks"]          # mt-metrics-eval's AssignRanks on its own p-values


def test_perm_systems_mtme_is_perm_systems_on_the_z_scored_system_scores(mtme):
    """The same masks as perm-systems on N x 1 matrices of system means, p = count / k; perm-systems
    itself unchanged: (1 + count) / (1 + k) on the cells z-scored over all cells."""
    _, d = mtme
    X, Y, Z = _matrix(d["metrics"]["clean"]), _matrix(d["metrics"]["noisy"]), _matrix(d["human"])
    ours = hypothesis.system_scores_permutation_test(X, Y, Z, "pearson", k=300, alternative="two-sided", seed=5)
    means = [np.nanmean(A, axis=1)[:, None] for A in (X, Y, Z)]
    standard = [(a - a.mean()) / a.std() for a in means[:2]]
    one_input = hypothesis.permutation_test(*standard, means[2], "system", "pearson", "systems", k=300,
                                            alternative="two-sided", seed=5)
    np.testing.assert_allclose(ours.samples, one_input.samples, rtol=0, atol=1e-12)
    count = int(np.sum(np.abs(ours.samples) >= abs(ours.delta) - 1e-12))
    assert ours.pvalue == pytest.approx(count / 300, abs=1e-12)
    cells = hypothesis.permutation_test(X, Y, Z, "system", "pearson", "systems", k=300, alternative="two-sided",
                                        seed=5)
    assert cells.conventions["standardization"] == "X and Y over all cells, ddof 0"
    assert cells.pvalue == pytest.approx((1 + np.sum(np.abs(cells.samples) >= abs(cells.delta) - 1e-12)) / 301)


def test_perm_systems_mtme_refusals_in_one_line_writing_nothing(mtme):
    db, _ = mtme
    base = ["compare", "--dataset", "mt", "--human", "human", "--method", "perm-systems-mtme", "--coefficient",
            "pearson"]
    for extra, words in (([], "--level 'system'"), (["--level", "summary"], "--level 'system'"),
                         (["--level", "system", "--sequential"], "--sequential")):
        result = run_cli(db, *base, *extra, ok=False)
        assert result.exit_code != 0 and "Traceback" not in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1 and words in result.output, result.output
    with Store(db) as wh:
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs WHERE command = 'compare'")["n"][0] == 0
