"""Kendall intervals as shares of pairs ranked wrongly; the coverage-rate z-test (Deutsch et al. 2021)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from metaeval.analyses.stats.proportions import pairs_wrong, proportions_z_test


def test_pairs_wrong_is_the_discordant_share():
    rng = np.random.default_rng(0)
    for _ in range(50):
        h, m = rng.normal(size=(2, 9))
        tau = stats.kendalltau(h, m).statistic
        discordant = np.mean([np.sign(h[i] - h[j]) != np.sign(m[i] - m[j]) for i, j in combinations(range(9), 2)])
        lo, hi = pairs_wrong(tau, tau)
        assert lo == pytest.approx(discordant) and hi == pytest.approx(discordant)
    assert pairs_wrong(-0.08, 0.82) == pytest.approx((0.09, 0.54))      # the paper's "9-54%"
    with pytest.raises(ValueError):
        pairs_wrong(0.5, 0.2)


def test_z_test_against_the_formula_and_statsmodels_style_values():
    z, p = proportions_z_test(950, 1000, 900, 1000, "greater")
    pooled = 1850 / 2000
    expected = (0.95 - 0.90) / np.sqrt(pooled * (1 - pooled) * (2 / 1000))
    assert z == pytest.approx(expected) and p == pytest.approx(stats.norm.sf(expected))
    z2, p2 = proportions_z_test(900, 1000, 950, 1000, "two-sided")
    assert z2 == pytest.approx(-expected) and p2 == pytest.approx(2 * stats.norm.sf(expected))
    # chi-square test of the 2x2 table without continuity correction = z squared
    chi2 = stats.chi2_contingency([[950, 50], [900, 100]], correction=False)[0]
    assert chi2 == pytest.approx(expected ** 2)
    assert np.isnan(proportions_z_test(10, 10, 20, 20)[1])                 # all covered: undefined


# --- wired into the output: ci's pairs ranked wrongly, simulate coverage's z-tests (issue 33.16) ---
def test_closest_coverage_picks_the_closest_below_one_and_tests_it_against_each_other():
    from metaeval.analyses.stats.proportions import closest_coverage

    t = closest_coverage([1000, 930, 990, 700], [1000, 1000, 1000, 1000], 0.95)
    assert list(t["closest"]) == [False, True, False, False]           # 1.0 is never the closest
    assert np.isnan(t["p"][1])
    assert (t["z"][2], t["p"][2]) == proportions_z_test(930, 1000, 990, 1000, "less")    # the other covers more
    assert (t["z"][3], t["p"][3]) == proportions_z_test(930, 1000, 700, 1000, "greater")
    assert (t["z"][0], t["p"][0]) == proportions_z_test(930, 1000, 1000, 1000, "less")
    none = closest_coverage([10, 5], [10, 0])                           # all-covering, or no defined trial
    assert not none["closest"].any() and np.isnan(none["p"]).all()


def test_with_coverage_tests_marks_bold_only_when_every_test_is_significant():
    import pandas as pd

    from metaeval.runs.metrics.simulation import with_coverage_tests

    def rows(contains):
        return pd.DataFrame({"dataset": "d", "metric": "m", "human": "h", "level": "system", "coefficient": "pearson",
                             "alpha": 0.05, "seed": 0, "k": [None, 1000, 1000], "method": ["fisher", "boot-a", "boot-b"],
                             "trials": 1000, "undefined": 0, "contains": contains})
    clear = with_coverage_tests(rows([700, 945, 800]))
    assert list(clear["closest"]) == [False, True, False] and list(clear["bold"]) == [False, True, False]
    close = with_coverage_tests(rows([940, 945, 800]))                  # 0.940 vs 0.945: not significant
    assert list(close["closest"]) == [False, True, False] and not close["bold"].any()
    assert close["p_z"][0] == proportions_z_test(945, 1000, 940, 1000, "greater")[1]


def test_with_pairs_wrong_reads_kendall_intervals_only():
    import pandas as pd

    from metaeval.runs.metrics.intervals import with_pairs_wrong

    frame = pd.DataFrame({"coefficient": ["kendall", "pearson", "kendall-a", "kendall"],
                          "lower": [0.08, 0.1, -0.2, np.nan], "upper": [0.82, 0.9, 0.6, 0.5]})
    out = with_pairs_wrong(frame)
    assert (out["pairs_wrong_lower"][0], out["pairs_wrong_upper"][0]) == pairs_wrong(0.08, 0.82)   # 9-46%
    assert (out["pairs_wrong_lower"][2], out["pairs_wrong_upper"][2]) == pairs_wrong(-0.2, 0.6)
    assert out[["pairs_wrong_lower", "pairs_wrong_upper"]].iloc[[1, 3]].isna().all().all()


def test_ci_prints_and_returns_the_share_of_pairs_ranked_wrongly(tmp_path):
    import csv

    from metaeval.runs import Warehouse
    from tests.conftest import run_cli

    rng = np.random.default_rng(1)
    quality = rng.normal(size=8)
    path = tmp_path / "s.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "input", "human", "m"])
        for i in range(8):
            for j in range(5):
                w.writerow([f"s{i}", f"d{j}", float(quality[i] + rng.normal()), float(quality[i] + rng.normal())])
    db = tmp_path / "w.duckdb"
    run_cli(db, "ingest", "table", path, "--dataset", "d", "--human", "human")
    out = run_cli(db, "ci", "--dataset", "d", "--human", "human", "--level", "system", "--coefficient", "kendall",
                  "--k", "200").output
    assert "Pairs ranked otherwise than by the humans" in out
    with Warehouse(db) as wh:
        rows = wh.ci("d", "human", levels=["system"], coefficients=["kendall"], k=200)
    lo, hi = pairs_wrong(rows["lower"][0], rows["upper"][0])
    assert (rows["pairs_wrong_lower"][0], rows["pairs_wrong_upper"][0]) == (lo, hi)
    assert f"m (system, kendall): {100 * lo:.0f}-{100 * hi:.0f}%" in out
