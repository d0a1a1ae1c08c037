"""analyses/detection.py against scikit-learn's roc_auc_score and balanced_accuracy_score, a
brute-force threshold search, and resample-by-resample recomputation of the bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from metaeval.analyses import detection as d
from metaeval.analyses.stats import resampling


def _brute_threshold(s, y):
    """Every candidate (-inf and each distinct score), the smallest of the best."""
    best, best_t = -1.0, None
    for t in [-np.inf, *sorted(set(s))]:
        ba = balanced_accuracy_score(y, s > t)
        if ba > best + 1e-12:
            best, best_t = ba, t
    return best_t, best


def _random(rng, n, levels=5):
    s = rng.integers(0, levels, n).astype(float)   # many ties
    y = rng.random(n) < 0.5
    return s, y


def test_point_statistics_equal_sklearn_and_brute_force():
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(200):
        n = int(rng.integers(2, 16))
        s, y = _random(rng, n, int(rng.integers(1, 6)))
        if y.all() or not y.any():
            continue
        checked += 1
        assert d.roc_auc(s, y) == pytest.approx(roc_auc_score(y, s), abs=1e-12)
        t = float(rng.choice(np.append(s, rng.normal())))
        assert d.balanced_accuracy(s, y, t) == pytest.approx(balanced_accuracy_score(y, s > t), abs=1e-12)
        r = d.best_threshold(s, y)
        bt, bba = _brute_threshold(s, y)
        assert r.threshold == bt and r.balanced_accuracy == pytest.approx(bba, abs=1e-12)
    assert checked > 150


def test_continuous_scores_and_nan_items_left_out():
    rng = np.random.default_rng(2)
    y = rng.random(60) < 0.3
    s = y + rng.normal(size=60)
    with_nan = s.copy()
    with_nan[[3, 7]] = np.nan
    keep = ~np.isnan(with_nan)
    assert d.roc_auc(with_nan, y) == pytest.approx(roc_auc_score(y[keep], s[keep]), abs=1e-12)
    assert d.roc_auc(s, y.astype(int)) == pytest.approx(roc_auc_score(y, s), abs=1e-12)


def test_tie_rule_takes_the_smallest_threshold():
    # thresholds -inf, 1, 2, 3, 4 give BA 0.5, 0.75, 0.5, 0.75, 0.5: the smallest of the best is 1
    s = np.array([1.0, 2.0, 3.0, 4.0])
    y = np.array([0, 1, 0, 1])
    assert balanced_accuracy_score(y, s > 1) == balanced_accuracy_score(y, s > 3) == 0.75
    assert d.best_threshold(s, y) == d.ThresholdSearch(1.0, 0.75)


def test_degenerate_cases():
    one_class = np.ones(5, dtype=bool)
    s = np.arange(5.0)
    assert np.isnan(d.roc_auc(s, one_class))
    assert np.isnan(d.balanced_accuracy(s, one_class, 2.0))
    r = d.best_threshold(s, ~one_class)
    assert np.isnan(r.threshold) and np.isnan(r.balanced_accuracy)
    constant = np.full(6, 0.3)
    y = np.array([0, 1, 0, 1, 1, 0])
    assert d.roc_auc(constant, y) == roc_auc_score(y, constant) == 0.5
    assert d.best_threshold(constant, y) == d.ThresholdSearch(-np.inf, 0.5)
    with pytest.raises(ValueError, match="empty"):
        d.roc_auc(np.full(3, np.nan), [0, 1, 0])
    with pytest.raises(ValueError, match="empty"):
        d.detection(s, y[:5], evaluated=np.zeros(5, dtype=bool), k=10)
    with pytest.raises(ValueError, match="tune items"):
        d.detection(s, y[:5], tuned=np.zeros(5, dtype=bool), k=10)
    with pytest.raises(ValueError, match="finite"):
        d.roc_auc([0.0, np.inf], [0, 1])
    with pytest.raises(ValueError, match="0/1"):
        d.roc_auc([0.0, 1.0], [0, 0.5])
    with pytest.raises(ValueError, match="not both"):
        d.detection(s, y[:5], tuned=np.ones(5, dtype=bool), threshold=0.5, k=10)
    assert np.isnan(d.macro_average([0.7, np.nan])) and d.macro_average([0.6, 0.8]) == pytest.approx(0.7)


def _draws(seed, label, role, n, k):
    stream = resampling.ResampleStream(np.random.SeedSequence(seed, spawn_key=(d.group_key(label), role)),
                                       d._draw(n))
    return stream.take(0, k)[0]


def test_bootstrap_retunes_the_threshold_in_every_resample():
    """Resample b recomputed from its drawn items with sklearn and the brute-force search."""
    rng = np.random.default_rng(3)
    n = 40
    y = rng.random(n) < 0.5
    s = np.round(y + rng.normal(size=n), 1)
    tune = np.arange(n) < 18
    k = 30
    r = d.detection(s, y, evaluated=~tune, tuned=tune, k=k, alpha=0.1, seed=7)
    row, = r.rows
    ev, tu = np.flatnonzero(~tune), np.flatnonzero(tune)
    ev_draw, tu_draw = _draws(7, "", 0, ev.size, k), _draws(7, "", 1, tu.size, k)
    for b in range(k):
        e, t = ev[ev_draw[b]], tu[tu_draw[b]]
        threshold, _ = _brute_threshold(s[t], y[t]) if 0 < y[t].sum() < t.size else (np.nan, np.nan)
        if np.isnan(threshold) or y[e].all() or not y[e].any():
            assert np.isnan(row.ba_samples[b])
        else:
            assert row.ba_samples[b] == pytest.approx(balanced_accuracy_score(y[e], s[e] > threshold), abs=1e-12)
        if 0 < y[e].sum() < e.size:
            assert row.auc_samples[b] == pytest.approx(roc_auc_score(y[e], s[e]), abs=1e-12)
    lo, hi = np.percentile(row.ba_samples[~np.isnan(row.ba_samples)], [5, 95])
    assert (row.balanced_accuracy_lower, row.balanced_accuracy_upper) == pytest.approx((lo, hi))
    bt, bba = _brute_threshold(s[tune], y[tune])
    assert row.threshold == bt and row.tune_balanced_accuracy == pytest.approx(bba)
    assert row.balanced_accuracy == pytest.approx(balanced_accuracy_score(y[~tune], s[~tune] > bt))
    assert (row.n, row.n_positive, row.n_tune, row.n_tune_positive) == (22, y[~tune].sum(), 18, y[tune].sum())


def test_in_sample_tuning_uses_one_draw_and_fixed_threshold_none():
    rng = np.random.default_rng(4)
    y = rng.random(30) < 0.5
    s = y + rng.normal(size=30)
    k = 20
    row, = d.detection(s, y, k=k, seed=1).rows
    draw = _draws(1, "", 0, 30, k)
    for b in range(k):
        i = draw[b]
        if 0 < y[i].sum() < 30:
            bt, bba = _brute_threshold(s[i], y[i])
            assert row.ba_samples[b] == pytest.approx(bba, abs=1e-12)
    fixed, = d.detection(s, y, threshold=0.5, k=k, seed=1).rows
    assert fixed.tune_balanced_accuracy is None and fixed.n_tune is None and fixed.threshold == 0.5
    assert fixed.balanced_accuracy == pytest.approx(balanced_accuracy_score(y, s > 0.5))
    assert np.array_equal(fixed.auc_samples, row.auc_samples)      # the same draws for the same items


def test_groups_and_macro_average():
    rng = np.random.default_rng(5)
    n = 80
    y = rng.random(n) < 0.5
    s = y * 0.8 + rng.normal(size=n)
    groups = np.where(np.arange(n) % 3 == 0, "xsum", "cnndm").astype(object)
    groups[5] = None                      # outside every group: left out
    split = rng.random(n) < 0.5
    r = d.detection(s, y, evaluated=~split, tuned=split, groups=groups, k=50, seed=2)
    cnndm, xsum, macro = r.rows
    assert [x.group for x in r.rows] == ["cnndm", "xsum", d.MACRO] and macro.macro and macro.threshold is None
    for row, name in ((cnndm, "cnndm"), (xsum, "xsum")):
        ev, tu = ~split & (groups == name), split & (groups == name)
        bt, _ = _brute_threshold(s[tu], y[tu])
        assert row.threshold == bt and row.roc_auc == pytest.approx(roc_auc_score(y[ev], s[ev]))
        assert row.balanced_accuracy == pytest.approx(balanced_accuracy_score(y[ev], s[ev] > bt))
        alone, = d.detection(s[groups == name], y[groups == name], evaluated=~split[groups == name],
                             tuned=split[groups == name], k=50, seed=2).rows
        # a group's draws depend on its label, not on the other groups: same numbers alone
        assert row.balanced_accuracy == alone.balanced_accuracy and alone.group == ""
    assert macro.roc_auc == pytest.approx((cnndm.roc_auc + xsum.roc_auc) / 2)
    assert macro.balanced_accuracy == pytest.approx((cnndm.balanced_accuracy + xsum.balanced_accuracy) / 2)
    assert np.allclose(macro.ba_samples, (cnndm.ba_samples + xsum.ba_samples) / 2, equal_nan=True)
    assert macro.n == cnndm.n + xsum.n
    # a group with one class only: its values and the macro average are NaN, never a number
    y2 = y.copy()
    y2[groups == "xsum"] = True
    _, xsum2, macro2 = d.detection(s, y2, evaluated=~split, tuned=split, groups=groups, k=50, seed=2).rows
    assert np.isnan(xsum2.roc_auc) and np.isnan(xsum2.balanced_accuracy) and np.isnan(xsum2.threshold)
    assert np.isnan(macro2.roc_auc) and np.isnan(macro2.balanced_accuracy) and np.isnan(macro2.balanced_accuracy_lower)


def test_paired_test_pvalues_and_identical_detectors():
    rng = np.random.default_rng(6)
    n = 70
    y = rng.random(n) < 0.5
    a = y + rng.normal(size=n)
    b = 0.3 * y + rng.normal(size=n)
    b[0] = np.nan                        # the paired test uses the items both scored
    tests, conv = d.paired_detection_test(a, b, y, k=200, seed=3)
    assert {t.statistic for t in tests} == set(d.STATISTICS) and conv["alternative"] == "two-sided"
    both = ~np.isnan(b)
    ra, = d.detection(np.where(both, a, np.nan), y, k=200, seed=3).rows
    rb, = d.detection(b, y, k=200, seed=3).rows
    for t in tests:
        x, z, sa, sb = ((ra.balanced_accuracy, rb.balanced_accuracy, ra.ba_samples, rb.ba_samples)
                        if t.statistic == "balanced_accuracy" else (ra.roc_auc, rb.roc_auc, ra.auc_samples,
                                                                     rb.auc_samples))
        assert (t.value_a, t.value_b, t.delta) == pytest.approx((x, z, x - z))
        delta_b = (sa - sb)[~np.isnan(sa - sb)]
        assert t.p_value == pytest.approx(np.mean(np.abs(delta_b - t.delta) >= abs(t.delta)))
        assert t.n == n - 1
    same, _ = d.paired_detection_test(a, a, y, k=50, seed=3)
    assert all(t.delta == 0 and t.p_value == 1.0 for t in same)
    one_class, _ = d.paired_detection_test(a, b, np.ones(n, dtype=bool), k=50, seed=3)
    assert all(np.isnan(t.p_value) and t.undefined for t in one_class)


def test_seeded_and_reproducible():
    rng = np.random.default_rng(8)
    y = rng.random(50) < 0.5
    s = y + rng.normal(size=50)
    r1, = d.detection(s, y, k=40, seed=11).rows
    r2, = d.detection(s, y, k=40, seed=11).rows
    r3, = d.detection(s, y, k=40, seed=12).rows
    assert np.array_equal(r1.ba_samples, r2.ba_samples, equal_nan=True)
    assert not np.array_equal(r1.ba_samples, r3.ba_samples, equal_nan=True)
