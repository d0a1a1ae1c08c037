"""`metaeval judge-diagnostics` (analyses/judge_diagnostics.py, runs/votes/judge_diagnostics.py): the
alternative annotator test against a brute-force loop (scipy's one-sample t-test and
Benjamini-Yekutieli), length and self-preference and bias/variance on hand-counted examples, the
winning rate from the conclusion layer; the stored rows, reuse and refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from metaeval.analyses import conclusions
from metaeval.analyses import judge_diagnostics as jd
from metaeval.analyses.stats.multiple import correct_pvalues
from metaeval.analyses.stats.resolution import correction_threshold
from metaeval.errors import WarehouseError
from metaeval.ingest import attributes, preferences
from metaeval.runs import Warehouse

DOCS = Path(__file__).resolve().parents[1] / "docs" / "examples"
A, B, T, M = 0, 1, 2, -1


def test_benjamini_yekutieli_equals_scipy():
    p = np.array([0.01, 0.04, 0.03, 0.2, 0.001, 0.5, np.nan])
    out = correct_pvalues(p, "by")
    assert np.allclose(out[:-1], scipy.stats.false_discovery_control(p[:-1], method="by")) and np.isnan(out[-1])
    assert correction_threshold("by", 3, 0.05) == pytest.approx(0.05 / (1 + 1 / 2 + 1 / 3))


def _brute_alt_test(V, H, epsilon, alpha, min_items=30):
    """The paper's procedure written out: loops over annotators and items, scipy's t-test (on
    W^h - W^f against epsilon, as the authors' notebook) and BY; annotators with fewer than
    ``min_items`` items left out."""
    m, n_items = H.shape[0], H.shape[1]
    rho_f, pvalues = [], []
    for j in range(m):
        wf, wh = [], []
        for i in range(n_items):
            others = [v for r in range(m) if r != j for v in H[r, i] if v >= 0]
            mine, llm = [v for v in H[j, i] if v >= 0], [v for v in V[i] if v >= 0]
            if not others or not mine or not llm:
                continue
            s_f = np.mean([x == r for x in llm for r in others])
            s_h = np.mean([x == r for x in mine for r in others])
            wf.append(float(s_f >= s_h)), wh.append(float(s_h >= s_f))
        if len(wf) < min_items:
            continue
        rho_f.append(np.mean(wf))
        pvalues.append(scipy.stats.ttest_1samp(np.array(wh) - np.array(wf), epsilon, alternative="less").pvalue)
    adjusted = scipy.stats.false_discovery_control(pvalues, method="by")
    omega = np.mean(adjusted <= alpha)
    return np.array(rho_f), np.array(pvalues), adjusted, omega, np.mean(rho_f)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alt_test_equals_a_brute_force_implementation(seed):
    rng = np.random.default_rng(seed)
    n_items, m = 40, 4
    truth = rng.integers(0, 3, n_items)
    noisy = lambda p: np.where(rng.random(n_items) < p, truth, rng.integers(0, 3, n_items))   # noqa: E731
    H = np.full((m, n_items, 2), M)
    for r in range(m):
        H[r, :, rng.integers(0, 2)] = noisy(0.7)
        H[r, rng.random(n_items) < 0.1, :] = M                                  # some items not judged
    V = np.stack([noisy(0.6 + 0.1 * seed), noisy(0.6 + 0.1 * seed)], axis=1)
    H[0, 8:, :] = M                                                             # annotator 0: 8 items, not tested
    r = jd.alt_test(V, H, epsilon=0.2, alpha=0.05)
    rho_f, p, adjusted, omega, rho = _brute_alt_test(V, H, 0.2, 0.05)
    tested = ~np.isnan(r.pvalue)
    assert list(tested) == [False, True, True, True]
    assert np.allclose(r.rho_judge[tested], rho_f) and np.allclose(r.pvalue[tested], p, atol=1e-12)
    assert np.allclose(r.verdict.adjusted[tested], adjusted) and r.omega == pytest.approx(omega) and r.rho == pytest.approx(rho)
    assert r.passes == (omega >= 0.5)


def test_winning_rate_from_the_conclusion_layer():
    verdict = conclusions.decide([0.001, 0.002, 0.9, np.nan], formula="parametric", k=None, correction="by",
                                 alpha=0.05, min_size=1)
    assert conclusions.winning_rate(verdict) == (pytest.approx(2 / 3), True)
    none = conclusions.decide([np.nan], formula="parametric", k=None, correction="by", alpha=0.05, min_size=1)
    omega, passes = conclusions.winning_rate(none)
    assert np.isnan(omega) and passes is None


def test_length_preference_counts_a_hand_made_example():
    # item 0: a longer; item 1: b longer; item 2: equal lengths (left out)
    V = np.array([[A, A], [A, B], [A, T]])
    H = np.array([[[A, M], [B, M], [A, M]], [[M, B], [B, M], [B, M]]])      # two annotators
    W = np.ones((5, 3))
    r = jd.length_preference(V, H, [500, 100, 300], [100, 500, 300], W)
    # judge decisive verdicts on items 0, 1: A, A (0 longer: 2), A (shorter), B (longer): 3 of 4
    # humans on items 0 and 1: A, B (item 0: one longer), B, B (item 1: two longer): 3 of 4
    assert (r.n, r.verdicts, r.judge, r.human, r.difference) == (2, 4, 0.75, 0.75, 0.0)
    # McNemar against the majority (item 0: tie a/b -> no label; item 1: b, the longer): the judge's
    # verdicts on item 1 are A (shorter; c) and B (longer; concordant): b = 0, c = 1
    assert r.pvalue == pytest.approx(1.0) and r.data_floor == 1.0


def test_self_preference_and_bias_variance_on_hand_made_examples():
    # system 0 against 1 and 2; the judge gives itself wins, the humans are split
    V = np.array([[A, A], [A, T], [M, M]])
    H = np.array([[[B, M], [A, M], [B, M]], [[M, A], [B, M], [A, M]]])
    W = np.ones((4, 3))
    r = jd.self_preference(V, H, [0, 0, 1], [1, 2, 2], 0, W)
    # judge: 1, 1, 1, 0.5 -> 0.875; humans on items 0, 1: 0, 1, 1, 0 -> 0.5
    assert (r.n, r.judge, r.human, r.difference) == (2, 0.875, 0.5, 0.375)
    assert r.pvalue == 0.0 and r.n_valid == 4
    bv = jd.bias_variance(V, H, W)
    # majorities: item 0 tie (a, b) -> none; item 1 tie -> none; item 2 tie -> none: no bias items
    assert bv.n_bias == 0 and np.isnan(bv.bias)
    # variance: item 0 (A, A) -> 0; item 1 (A, T) -> 1; item 2 no verdict
    assert (bv.variance, bv.n_variance) == (0.5, 2)
    H2 = np.array([[[A, M], [B, M], [B, M]], [[A, M], [B, M], [B, M]]])
    bv2 = jd.bias_variance(V, H2, W)
    # judge modes: item 0 A (= A), item 1 none (A, T tied), item 2 none: bias 0 over 1 item
    assert (bv2.bias, bv2.n_bias) == (0.0, 1)


def test_rows_are_stored_reused_and_refused(db):
    with Warehouse(db) as wh:
        preferences.ingest(wh, "judges-demo", DOCS / "preferences.csv")
        attributes.ingest(wh, "judges-demo", DOCS / "preferences-lengths.csv")
        rows = wh.judge_diagnostics("judges-demo", k=50)
        again = wh.judge_diagnostics("judges-demo", k=50)
        runs = wh.sql("SELECT count(*) AS n FROM analysis_runs WHERE command = 'judge-diagnostics'")["n"][0]
        with pytest.raises(WarehouseError, match="epsilon"):
            wh.judge_diagnostics("judges-demo", k=50, epsilon=1.5)
    assert runs == 1 and len(again) == len(rows)
    alt = rows[rows["diagnostic"] == "alt_test"].set_index("judge")
    assert alt.loc["judge-consistent", "passes"] and not alt.loc["judge-position", "passes"]
    length = rows[rows["diagnostic"] == "length_preference"]
    assert len(length) == 3 and (length["n"] > 0).all() and length["pvalue"].notna().all()


def test_self_preference_row_of_a_judge_named_as_a_system(db, tmp_path):
    import pandas as pd

    raw = pd.read_csv(DOCS / "preferences.csv")
    raw[["system_a", "system_b"]] = raw[["system_a", "system_b"]].replace("sys-1", "judge-ties")
    path = tmp_path / "self.csv"
    raw.to_csv(path, index=False)
    with Warehouse(db) as wh:
        preferences.ingest(wh, "self", path)
        rows = wh.judge_diagnostics("self", judges=("judge-ties",), k=50)
    row = rows[rows["diagnostic"] == "self_preference"].iloc[0]
    involved = raw[(raw["system_a"] == "judge-ties") | (raw["system_b"] == "judge-ties")]
    side = np.where(involved["system_a"] == "judge-ties", "a", "b")
    score = np.where(involved["winner"] == side, 1.0, np.where(involved["winner"] == "tie", 0.5, 0.0))
    human, judge = (score[(involved["kind"] == kind).to_numpy() & (involved["judge"] != "judge-consistent").to_numpy()
                          & (involved["judge"] != "judge-position").to_numpy()].mean() for kind in ("human", "automatic"))
    assert row["system"] == "judge-ties" and row["n"] == 87
    assert row["human_value"] == pytest.approx(human) and row["judge_value"] == pytest.approx(judge)
    assert row["difference"] == pytest.approx(judge - human) and row["lower"] <= row["difference"] <= row["upper"]
