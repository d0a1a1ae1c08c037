"""Clustered resampling (issue 45 item 3, ``--resample-clusters ATTR``): the statistics against a
brute-force loop over clusters drawn with numpy's Generator in the same order; one input per
cluster gives today's numbers bit for bit (statistics and stored rows); intervals widen when the
inputs of a cluster are strongly correlated; the refusals, each one line with nothing written."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from metaeval import Store
from metaeval.analyses.stats import clusters as clustering
from metaeval.analyses.stats import hypothesis, intervals, resampling
from metaeval.analyses.stats.correlation import level_correlation
from metaeval.analyses.stats.validation import coefficient_iv
from metaeval.errors import WarehouseError
from metaeval.ingest.table import add_scores
from metaeval.runs import Warehouse
from metaeval.runs.engine import api
from tests.conftest import digest, run_cli

N, M = 5, 12
LABELS = ["a", "a", "a", "b", "b", "c", "d", "d", "d", "d", "e", "e"]   # 5 clusters of sizes 3, 2, 1, 4, 2


def _matrices(seed=0, n=N, m=M):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, m))
    return Z + rng.normal(size=(n, m)), Z + 2 * rng.normal(size=(n, m)), Z


def _members(labels):
    order = list(dict.fromkeys(labels))
    return [np.array([j for j, v in enumerate(labels) if v == c]) for c in order]


def _brute_bootstrap(X, Z, level, coefficient, method, k, seed, labels):
    """r of each resample: systems and clusters drawn block by block as the documented stream
    does (SeedSequence(seed, spawn_key=(block,)), 256 resamples a block, systems first)."""
    members, coef = _members(labels), coefficient_iv(coefficient)
    out = []
    for block in range(-(-k // resampling.RNG_BLOCK)):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(block,)))
        size = resampling.RNG_BLOCK
        rows = rng.integers(0, X.shape[0], size=(size, X.shape[0]), dtype=np.int32) if method != "inputs" else None
        drawn = rng.integers(0, len(members), size=(size, len(members)), dtype=np.int32) if method != "systems" else None
        for b in range(size):
            r = slice(None) if rows is None else rows[b]
            c = slice(None) if drawn is None else np.concatenate([members[d] for d in drawn[b]])
            out.append(level_correlation(X[r][:, c], Z[r][:, c], level, coef))
    return np.array(out[:k])


@pytest.mark.parametrize("level", ["system", "summary", "global"])
@pytest.mark.parametrize("method", ["inputs", "both"])
def test_cluster_bootstrap_equals_a_loop_over_clusters(level, method):
    X, _, Z = _matrices()
    r = intervals.bootstrap_ci(X, Z, level, "pearson", method, k=300, seed=7, clusters=LABELS)
    brute = _brute_bootstrap(X, Z, level, "pearson", method, 300, 7, LABELS)
    np.testing.assert_allclose(r.samples, brute, rtol=1e-10, atol=1e-12)
    valid = brute[~np.isnan(brute)]
    assert (r.lower, r.upper) == pytest.approx(tuple(np.percentile(valid, [2.5, 97.5])), abs=1e-12)
    assert r.conventions["clusters"] == 5


def _brute_permutation(X, Y, Z, level, method, k, seed, labels):
    """delta of each resample: one coin per cluster (perm-inputs) or per system and cluster
    (perm-both), the coins drawn as resampling._coins draws them (bytes unpacked to bits)."""
    codes = np.array([list(dict.fromkeys(labels)).index(v) for v in labels])
    C, coef = codes.max() + 1, coefficient_iv("pearson")
    Xs, Ys = hypothesis.standardize(X), hypothesis.standardize(Y)
    out = []
    for block in range(-(-k // resampling.RNG_BLOCK)):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(block,)))
        shape = (resampling.RNG_BLOCK, 1 if method == "inputs" else X.shape[0], C)
        count = int(np.prod(shape))
        coins = np.unpackbits(rng.integers(0, 256, size=(count + 7) // 8, dtype=np.uint8))[:count].reshape(shape)
        for b in range(shape[0]):
            swap = np.broadcast_to(coins[b][:, codes].astype(bool), X.shape)
            xp, yp = np.where(swap, Ys, Xs), np.where(swap, Xs, Ys)
            out.append(level_correlation(xp, Z, level, coef) - level_correlation(yp, Z, level, coef))
    return np.array(out[:k])


@pytest.mark.parametrize("level", ["system", "summary", "global"])
@pytest.mark.parametrize("method", ["inputs", "both"])
def test_cluster_permutation_equals_a_loop_over_clusters(level, method):
    X, Y, Z = _matrices(1)
    r = hypothesis.permutation_test(X, Y, Z, level, "pearson", method, k=300, seed=3, clusters=LABELS)
    brute = hypothesis.zero_if_rounding(_brute_permutation(X, Y, Z, level, method, 300, 3, LABELS))
    np.testing.assert_allclose(r.samples, brute, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
def test_one_input_per_cluster_is_the_unclustered_resampling_bit_for_bit(coefficient):
    X, Y, Z = _matrices(2)
    X[1, 4] = np.nan
    singletons = [f"doc{j}" for j in range(M)]
    for level in ("system", "summary", "global"):
        for method in ("systems", "inputs", "both"):
            a = intervals.bootstrap_ci(X, Z, level, coefficient, method, k=260, seed=5)
            b = intervals.bootstrap_ci(X, Z, level, coefficient, method, k=260, seed=5, clusters=singletons)
            assert np.array_equal(a.samples, b.samples, equal_nan=True) and (a.lower, a.upper) == (b.lower, b.upper)
            for variant in ("paper", "nlpstats"):
                p = hypothesis.permutation_test(X, Y, Z, level, coefficient, method, k=260, seed=5, variant=variant)
                q = hypothesis.permutation_test(X, Y, Z, level, coefficient, method, k=260, seed=5, variant=variant,
                                                clusters=singletons)
                assert np.array_equal(p.samples, q.samples, equal_nan=True) and p.pvalue == q.pvalue
            p = hypothesis.paired_bootstrap_test(X, Y, Z, level, coefficient, method, k=260, seed=5)
            q = hypothesis.paired_bootstrap_test(X, Y, Z, level, coefficient, method, k=260, seed=5,
                                                 clusters=singletons)
            assert np.array_equal(p.samples, q.samples, equal_nan=True) and p.pvalue == q.pvalue


def test_intervals_widen_when_the_inputs_of_a_cluster_are_correlated():
    """20 documents of 8 segments: the metric's agreement with the human is a document's
    (a shared distortion per document), so segments of one document are far from independent."""
    ratios = []
    for seed in range(4):
        rng = np.random.default_rng(seed)
        docs, per, n = 20, 8, 6
        labels = np.repeat(np.arange(docs), per)
        Z = rng.normal(size=(n, docs * per)) + rng.normal(size=docs)[labels]
        X = Z * rng.uniform(0.0, 2.0, size=docs)[labels] + 0.3 * rng.normal(size=Z.shape)
        plain = intervals.bootstrap_ci(X, Z, "global", "pearson", "inputs", k=400, seed=seed)
        clustered = intervals.bootstrap_ci(X, Z, "global", "pearson", "inputs", k=400, seed=seed, clusters=labels)
        ratios.append((clustered.upper - clustered.lower) / (plain.upper - plain.lower))
    assert min(ratios) > 1.5, ratios
    # and no widening where the clusters carry no dependence (labels unrelated to the data)
    X, _, Z = _matrices(3, 6, 160)
    plain = intervals.bootstrap_ci(X, Z, "global", "pearson", "inputs", k=400, seed=0)
    shuffled = intervals.bootstrap_ci(X, Z, "global", "pearson", "inputs", k=400, seed=0,
                                      clusters=np.repeat(np.arange(20), 8))
    assert (shuffled.upper - shuffled.lower) / (plain.upper - plain.lower) < 1.3


def test_clusters_iv_refuses_a_single_cluster_and_missing_labels():
    with pytest.raises(ValueError, match="single cluster"):
        clustering.clusters_iv(["x"] * 4, 4)
    with pytest.raises(ValueError, match="every input needs"):
        clustering.clusters_iv(["x", None, "y", "y"], 4)
    with pytest.raises(ValueError, match="3 labels for 4 inputs"):
        clustering.clusters_iv(["x", "y", "y"], 4)


# --- the families --------------------------------------------------------------------------
SYSTEMS = [f"s{i}" for i in range(N)]
INPUTS = [f"i{j:02d}" for j in range(M)]


@pytest.fixture
def clustered(db, tmp_path):
    """5 systems x 12 inputs, two metrics, one judgment; attributes ``doc`` (5 clusters),
    ``self`` (one input per cluster), ``one`` (a single cluster), ``part`` (on 9 inputs)."""
    X, Y, Z = _matrices(4)
    rows = [{"system": s, "input": i, "m1": X[a, b], "m2": Y[a, b], "h": Z[a, b]}
            for a, s in enumerate(SYSTEMS) for b, i in enumerate(INPUTS)]
    with Store(db) as wh:
        add_scores(wh, "tiny", pd.DataFrame(rows), human=["h"])
    lines = ["input,attribute,value"]
    lines += [f"{i},doc,{v}" for i, v in zip(INPUTS, LABELS)]
    lines += [f"{i},self,{i}" for i in INPUTS] + [f"{i},one,all" for i in INPUTS]
    lines += [f"{i},part,p{j // 3}" for j, i in enumerate(INPUTS[:9])]
    path = tmp_path / "attributes.csv"
    path.write_text("\n".join(lines) + "\n")
    run_cli(db, "ingest", "attributes", path, "--dataset", "tiny")
    return db


RESULT = {"confidence_intervals": ["estimate", "lower", "upper", "n_valid"],
          "hypothesis_tests": ["delta", "p_value", "p_adjusted", "k_used"]}


def test_one_input_per_cluster_stores_todays_rows(clustered):
    with Warehouse(clustered) as wh:
        plain = api.ci(wh, "tiny", "h", method="boot-both", k=300).rows(wh)
        tests = api.compare(wh, "tiny", "h", method="perm-both", k=300).rows(wh)
        self_ci = api.ci(wh, "tiny", "h", method="boot-both", k=300, resample_clusters="self").rows(wh)
        self_tests = api.compare(wh, "tiny", "h", method="perm-both", k=300, resample_clusters="self").rows(wh)
        recorded = json.loads(wh.sql("SELECT parameters FROM analysis_runs ORDER BY run_id DESC LIMIT 1")
                              ["parameters"][0])
    for a, b, table in ((plain, self_ci, "confidence_intervals"), (tests, self_tests, "hypothesis_tests")):
        assert len(a) == len(b) > 0
        assert a[RESULT[table]].equals(b[RESULT[table]]), table
        assert (a["fingerprint"] != b["fingerprint"]).all()   # never reused for one another
        for ca, cb in zip(a["conventions"], b["conventions"]):
            ca, cb = json.loads(ca), json.loads(cb)
            extra = {k: v for k, v in cb.items() if k not in ca}
            assert extra.pop("resample_clusters") == "self" and extra.pop("clusters") == M
            assert {k: cb[k] for k in ca} == ca
    assert recorded["resample_clusters"] == "self"


def test_clustered_rows_are_not_reused_for_unclustered_ones(clustered):
    with Warehouse(clustered) as wh:
        doc = api.ci(wh, "tiny", "h", method="boot-inputs", k=300, resample_clusters="doc", levels=["global"],
                    coefficients=["pearson"])
        plain = api.ci(wh, "tiny", "h", method="boot-inputs", k=300, levels=["global"], coefficients=["pearson"])
        assert not plain.summary.up_to_date
        again = api.ci(wh, "tiny", "h", method="boot-inputs", k=300, resample_clusters="doc", levels=["global"],
                    coefficients=["pearson"])
        rows = again.rows(wh)
    assert doc.summary.computed == plain.summary.computed == 2
    assert again.summary.computed == 0   # the clustered rows reused, shown again as the latest
    X, Y, Z = _matrices(4)
    for metric, A in (("m1", X), ("m2", Y)):
        row = rows[rows["metric"] == metric].iloc[0]
        r = intervals.bootstrap_ci(A, Z, "global", "pearson", "inputs", k=300, seed=0, clusters=LABELS)
        assert (row["lower"], row["upper"]) == pytest.approx((r.lower, r.upper), abs=1e-12)


def test_ci_reports_the_width_against_the_unclustered_interval(clustered):
    first = run_cli(clustered, "ci", "--dataset", "tiny", "--human", "h", "--ci-method", "boot-inputs", "--k", "300",
                    "--level", "global", "--coefficient", "pearson", "--resample-clusters", "doc").output
    assert "no unclustered interval of this setting is stored" in " ".join(first.split())
    run_cli(clustered, "ci", "--dataset", "tiny", "--human", "h", "--ci-method", "boot-inputs", "--k", "300",
            "--level", "global", "--coefficient", "pearson")
    out = run_cli(clustered, "ci", "--dataset", "tiny", "--human", "h", "--ci-method", "boot-inputs", "--k", "300",
                  "--level", "global", "--coefficient", "pearson", "--resample-clusters", "doc").output
    with Warehouse(clustered) as wh:
        rows = wh.sql("SELECT metric, upper - lower AS width, conventions FROM confidence_intervals "
                      "WHERE metric = 'm1' ORDER BY result_id")
    clustered_w = [w for w, c in zip(rows["width"], rows["conventions"]) if "resample_clusters" in c][0]
    plain_w = [w for w, c in zip(rows["width"], rows["conventions"]) if "resample_clusters" not in c][0]
    said = " ".join(out.split())
    assert f"m1 global pearson: {clustered_w:.3f} wide clustered by doc (5 clusters), {plain_w:.3f} unclustered" in said


@pytest.mark.parametrize("args, message", [
    (("--resample-clusters", "nope"), "--resample-clusters 'nope': dataset 'tiny' has no attribute 'nope'; its "
                                      "attributes: doc, one, part, self"),
    (("--resample-clusters", "part"), "--resample-clusters 'part': 3 of the 12 inputs have no value of 'part' "
                                      "(e.g. input 'i09')"),
    (("--resample-clusters", "one"), "--resample-clusters 'one': every input of dataset 'tiny' is in one cluster"),
    (("--resample-clusters", "doc", "--ci-method", "fisher"), "--resample-clusters 'doc' is not available "
                                                           "with --ci-method 'fisher'"),
])
def test_refusals_are_one_line_and_write_nothing(clustered, args, message):
    before = digest(clustered)
    result = run_cli(clustered, "ci", "--dataset", "tiny", "--human", "h", "--k", "300", *args, ok=False)
    assert result.exit_code != 0 and message in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert digest(clustered) == before


def test_compare_refuses_williams_and_tests_clusters(clustered):
    result = run_cli(clustered, "compare", "--dataset", "tiny", "--human", "h", "--method", "williams",
                     "--resample-clusters", "doc", ok=False)
    assert "--resample-clusters 'doc' is not available with --method 'williams'" in result.output
    with Warehouse(clustered) as wh:
        rows = api.compare(wh, "tiny", "h", method="perm-inputs", k=300, levels=["summary"], coefficients=["pearson"],
                          resample_clusters="doc").rows(wh)
    X, Y, Z = _matrices(4)
    row = rows[rows["metric_a"] == "m1"].iloc[0]
    r = hypothesis.permutation_test(X, Y, Z, "summary", "pearson", "inputs", k=300, seed=0, clusters=LABELS)
    assert row["p_value"] == pytest.approx(r.pvalue, abs=1e-12)
    with pytest.raises(WarehouseError):
        with Warehouse(clustered) as wh:
            api.ci(wh, "tiny", "h", resample_clusters="doc", control="system", coefficients=["pearson"])


def test_the_signature_names_the_clusters():
    from metaeval.analyses import signature

    row = {"level": "global", "coefficient": "pearson", "method": "boot-inputs", "k": 1000.0, "seed": 0,
           "conventions": json.dumps({"resample_clusters": "doc", "clusters": 5}), "fingerprint": "abcdef0123"}
    said = signature.signature("1.0", "ci", row)
    assert said == "metaeval:1.0|ci|level:global|coef:pearson|method:boot-inputs|k:1000|seed:0|clus:doc|data:abcdef01"
    assert "clus:" not in signature.signature("1.0", "ci", {**row, "conventions": "{}"})


def test_evaluate_resamples_clusters_as_ci_and_compare_do(clustered):
    from metaeval.runs.metrics import evaluate

    with Warehouse(clustered) as wh:
        plain = evaluate.evaluate(wh, "tiny", "h", metrics=["m1"], k=300, levels=["summary"]).table
        singletons = evaluate.evaluate(wh, "tiny", "h", metrics=["m1"], k=300, levels=["summary"],
                                       resample_clusters="self")
        doc = evaluate.evaluate(wh, "tiny", "h", metrics=["m1"], k=300, levels=["summary"], resample_clusters="doc")
        ci = api.ci(wh, "tiny", "h", ["m1"], ["summary"], method="boot-both", k=300, resample_clusters="doc").rows(wh)
    numbers = ["correlation", "lower", "upper", "rank", "cluster"]
    pd.testing.assert_frame_equal(plain[numbers], singletons.table[numbers])
    assert "clusters of inputs (self) resampled whole" in singletons.caption()
    assert all("clus:doc" in s for s in doc.table["signature"])
    got = doc.table[doc.table["metric"] == "m1"].set_index("coefficient")
    for r in ci.itertuples():
        assert (got.loc[r.coefficient, "lower"], got.loc[r.coefficient, "upper"]) == (r.lower, r.upper)


def test_system_tests_bootstrap_and_randomization_against_a_loop_over_clusters():
    from metaeval.analyses import system_tests as st

    rng = np.random.default_rng(5)
    A = rng.normal(size=(3, M)) + rng.normal(size=M)
    members, codes = _members(LABELS), np.array([list(dict.fromkeys(LABELS)).index(v) for v in LABELS])
    boot = st.pair_tests(A, "bootstrap", k=300, seed=1, clusters=LABELS)
    perm = st.pair_tests(A, "randomization", k=300, seed=1, clusters=LABELS)
    for r, (a, b) in enumerate(zip(boot.a, boot.b)):
        d = A[a] - A[b]
        delta, tol = d.mean(), st.ROUNDING * np.abs(d).mean()
        hits_boot = hits_perm = 0
        for block in range(2):
            g = np.random.default_rng(np.random.SeedSequence(1, spawn_key=(block,)))
            drawn = g.integers(0, len(members), size=(256, len(members)), dtype=np.int32)
            for i in range(min(256, 300 - 256 * block)):
                stat = d[np.concatenate([members[c] for c in drawn[i]])].mean()
                hits_boot += abs(stat - delta) >= abs(delta) - tol
        for block in range(2):
            g = np.random.default_rng(np.random.SeedSequence(1, spawn_key=(block,)))
            count = 256 * len(members)
            coins = np.unpackbits(g.integers(0, 256, size=(count + 7) // 8, dtype=np.uint8))[:count]
            coins = coins.reshape(256, len(members)).astype(bool)
            for i in range(min(256, 300 - 256 * block)):
                stat = np.where(coins[i][codes], -d, d).mean()
                hits_perm += abs(stat) >= abs(delta) - tol
        assert boot.p_value[r] == pytest.approx((1 + hits_boot) / 301, abs=1e-12)
        assert perm.p_value[r] == pytest.approx((1 + hits_perm) / 301, abs=1e-12)
    with pytest.raises(ValueError, match="t-test treats the inputs as independent"):
        st.pair_tests(A, "t-test", clusters=LABELS)


def test_system_tests_with_one_input_per_cluster_store_todays_rows(clustered):
    with Warehouse(clustered) as wh:
        plain = wh.system_tests("tiny", "m1", methods=("bootstrap", "randomization"), k=300).rows
        singletons = wh.system_tests("tiny", "m1", methods=("bootstrap", "randomization"), k=300,
                                     resample_clusters="self").rows
        doc = wh.system_tests("tiny", "m1", methods=("bootstrap",), k=300, resample_clusters="doc").rows
    columns = ["method", "system_a", "system_b", "delta", "p_value", "p_adjusted", "n_valid", "significant"]
    assert plain[columns].equals(singletons[columns])
    assert (plain["fingerprint"] != singletons["fingerprint"]).all()
    assert all(json.loads(c)["resample_clusters"] == "self" for c in singletons["conventions"])
    assert all(json.loads(c)["clusters"] == 5 for c in doc["conventions"])
    result = run_cli(clustered, "system-tests", "--dataset", "tiny", "--measure", "m1", "--resample-clusters", "doc",
                     ok=False)
    assert "--resample-clusters 'doc' is not available with --method 't-test'" in result.output


@pytest.fixture
def judged(db, tmp_path):
    """The guides' preferences (docs/examples/preferences.csv) with attributes ``self`` (each
    input its own cluster) and ``doc`` (five inputs a cluster)."""
    from pathlib import Path

    source = Path(__file__).resolve().parents[1] / "docs" / "examples" / "preferences.csv"
    frame = pd.read_csv(source)
    first = frame.drop_duplicates("input")[["input", "system_a", "system_b"]]
    frame.merge(first).to_csv(tmp_path / "one-item-per-input.csv", index=False)   # one item per input
    run_cli(db, "ingest", "preferences", tmp_path / "one-item-per-input.csv", "--dataset", "prefs")
    inputs = sorted(set(frame["input"]))
    lines = ["input,attribute,value"] + [f"{i},self,{i}" for i in inputs]
    lines += [f"{i},doc,d{j // 5}" for j, i in enumerate(inputs)] + [f"{i},half,h" for i in inputs[:3]]
    path = tmp_path / "attributes.csv"
    path.write_text("\n".join(lines) + "\n")
    run_cli(db, "ingest", "attributes", path, "--dataset", "prefs")
    return db


def test_judges_with_one_item_cluster_per_input_equal_todays_rows(judged):
    from metaeval.runs.votes import judges as runs

    columns = {"judge_statistics": ["judge", "accuracy", "accuracy_lower", "accuracy_upper", "kappa_lower", "rank"],
               "judge_tests": ["judge_a", "judge_b", "test", "delta", "pvalue", "pvalue_corrected"],
               "preference_rankings": ["judge", "system", "strength", "lower", "upper"]}
    with Warehouse(judged) as wh:
        plain = wh.judges("prefs", k=300)
        data = runs.load(wh, "prefs")
        assert len({i for i, _, _ in data.items}) == len(data.items)   # one item per input: singletons
        singletons = wh.judges("prefs", k=300, resample_clusters="self")
        for t, cols in columns.items():
            assert plain[t][cols].equals(singletons[t][cols]), t
            assert not plain[t]["fingerprint"].isin(singletons[t]["fingerprint"]).any()
        clustered = wh.judges("prefs", k=300, resample_clusters="doc")
        recorded = json.loads(wh.sql("SELECT parameters FROM analysis_runs ORDER BY run_id DESC LIMIT 1")
                              ["parameters"][0])
    assert recorded["resample_clusters"] == "doc"
    assert all(json.loads(c)["resample_clusters"] == "doc" for c in clustered["judge_tests"]["conventions"])
    perm = clustered["judge_tests"][clustered["judge_tests"]["test"] == "mcnemar"]
    assert perm["pvalue"].equals(plain["judge_tests"][plain["judge_tests"]["test"] == "mcnemar"]["pvalue"])
    result = run_cli(judged, "judges", "--dataset", "prefs", "--resample-clusters", "half", ok=False)
    assert "--resample-clusters 'half':" in result.output and "have no value of 'half'" in result.output


def test_clustered_item_weights_and_flips_against_a_loop():
    from metaeval.analyses import preferences as pf
    from metaeval.analyses.ranking import sign_flip_test

    labels = ["x", "y", "x", "z", "y", "y"]
    W = pf.bootstrap_weights(6, 50, 3, clusters=labels)
    drawn = np.random.default_rng(np.random.SeedSequence(3)).integers(0, 3, size=(50, 3))
    codes = np.array([0, 1, 0, 2, 1, 1])
    expected = np.array([[np.sum(row == codes[i]) for i in range(6)] for row in drawn], dtype=float)
    assert np.array_equal(W, expected)
    assert np.array_equal(pf.bootstrap_weights(6, 50, 3, clusters=list("abcdef")), pf.bootstrap_weights(6, 50, 3))
    d = np.array([[1.0, -0.5, 2.0, 0.5, 1.0, -1.0]])
    p, _, _ = sign_flip_test(d, 200, 4, clusters=labels)
    flips = np.random.default_rng(np.random.SeedSequence(4)).integers(0, 2, size=(200, 3))[:, codes]
    T = np.abs(np.where(flips == 1, -d, d).sum(axis=1))
    assert p[0] == pytest.approx((1 + np.sum(T >= abs(d.sum()) - 1e-12 * np.abs(d).sum())) / 201)
    assert sign_flip_test(d, 200, 4, clusters=["one"] * 6)[0][0] == 1.0   # one cluster: +-T only


def test_ppi_clustered_standard_errors_against_a_loop_over_clusters():
    from metaeval.analyses import ppi

    rng = np.random.default_rng(8)
    docs = rng.normal(size=10)
    lab_c, unl_c = np.arange(40) % 10, np.arange(200) % 10
    y = docs[lab_c] + rng.normal(size=40)
    yhat, yhat_u = y + rng.normal(size=40), docs[unl_c] + rng.normal(size=200)
    e = ppi.mean(y, yhat, yhat_u, clusters=(lab_c, unl_c))
    r = y - e.lam * yhat
    total = 0.0
    for c in range(10):   # each cluster's labelled and unlabelled contributions summed, then squared
        s = (r[lab_c == c] - r.mean()).sum() / 40 + e.lam * (yhat_u[unl_c == c] - yhat_u.mean()).sum() / 200
        total += s * s
    assert e.se == pytest.approx(np.sqrt(total), rel=1e-12)
    classical = sum(((y[lab_c == c] - y.mean()).sum() / 40) ** 2 for c in range(10))
    assert e.classical_se == pytest.approx(np.sqrt(classical), rel=1e-12)
    plain = ppi.mean(y, yhat, yhat_u)
    assert e.estimate == plain.estimate and e.lam == plain.lam and e.se > 1.5 * plain.se   # correlated within
    # one cell per cluster: the unclustered numbers bit for bit, and the sandwich is that formula
    singletons = ppi.mean(y, yhat, yhat_u, clusters=(range(40), range(40, 240)))
    assert singletons == plain
    psi = np.concatenate([(r - r.mean()) / 40, e.lam * (yhat_u - yhat_u.mean()) / 200])
    assert ppi.clustered_se(psi, np.arange(240)) == pytest.approx(
        np.sqrt(np.var(e.lam * yhat_u) / 200 + np.var(r) / 40), rel=1e-12)


def _bt_votes(seed: int = 1, docs: int = 24, per_doc: int = 10, labelled_docs: int = 12):
    """Comparisons of 4 systems in documents, each document one pair compared again and again
    with a shift of its own (its votes lean together: clusters); the first half labelled."""
    from metaeval.analyses import ppi

    rng = np.random.default_rng(seed)
    pa, pb = rng.integers(0, 4, docs), rng.integers(0, 4, docs)
    pb = np.where(pa == pb, (pb + 1) % 4, pb)
    doc = np.repeat(np.arange(docs), per_doc)
    a, b = pa[doc], pb[doc]
    strength = np.array([0.0, 0.4, 0.8, 1.2])
    shift = rng.normal(scale=1.5, size=docs)[doc]
    p = 1 / (1 + np.exp(-(strength[a] - strength[b] + shift)))
    y = (rng.random(doc.size) < p).astype(float)
    judged = np.clip(p + rng.normal(scale=0.1, size=doc.size), 0, 1)
    return ppi.design(a, b, 4), y, judged, doc, doc < labelled_docs


def test_ppi_bradley_terry_clustered_sandwich_against_a_loop_over_clusters():
    from metaeval.analyses import ppi

    X, y, judged, doc, lab = _bt_votes()
    unl = ~lab
    fit = ppi.bradley_terry(X[lab], y[lab], judged[lab], X[unl], judged[unl], clusters=(doc[lab], doc[unl]))
    plain = ppi.bradley_terry(X[lab], y[lab], judged[lab], X[unl], judged[unl])
    assert fit.converged and np.array_equal(fit.estimate, plain.estimate) and fit.lam == plain.lam
    # by hand: each comparison's gradient of the logistic loss, summed over its cluster, then the sandwich
    theta, lam, n, N = fit.estimate, fit.lam, int(lab.sum()), int(unl.sum())
    Xl, Xu = X[lab], X[unl]
    mu = lambda A: 1 / (1 + np.exp(-(A @ theta)))   # noqa: E731
    H = np.zeros((3, 3))
    for A in (Xl, Xu):
        for x, w in zip(A, mu(A) * (1 - mu(A))):
            H += w * np.outer(x, x)
    H /= n + N
    r = [x * (mu(Xl)[i] - y[lab][i]) - lam * x * (mu(Xl)[i] - judged[lab][i]) for i, x in enumerate(Xl)]
    u = [lam * x * (mu(Xu)[i] - judged[unl][i]) for i, x in enumerate(Xu)]
    r_bar, u_bar = np.mean(r, axis=0), np.mean(u, axis=0)
    M = np.zeros((3, 3))
    for c in np.unique(doc):
        s = sum(((r[i] - r_bar) / n for i in np.flatnonzero(doc[lab] == c)), np.zeros(3))
        s = s + sum(((u[i] - u_bar) / N for i in np.flatnonzero(doc[unl] == c)), np.zeros(3))
        M += np.outer(s, s)
    Hi = np.linalg.inv(H)
    np.testing.assert_allclose(fit.covariance, Hi @ M @ Hi, rtol=1e-9, atol=1e-14)
    assert (fit.se > 1.2 * plain.se).all()           # votes leaning together in a document: wider
    # one comparison per cluster: the unclustered fit, bit for bit
    single = ppi.bradley_terry(X[lab], y[lab], judged[lab], X[unl], judged[unl],
                               clusters=(np.arange(n), np.arange(n, n + N)))
    assert np.array_equal(single.se, plain.se) and np.array_equal(single.covariance, plain.covariance)


def test_ppi_bradley_terry_duplicated_votes_clustered_are_the_votes_once():
    """Each vote twice, the copies one cluster: the clustered se is the unclustered se of the votes
    once (to the count - 1 divisor the unclustered covariances use); unclustered it is ~1/sqrt(2) of it."""
    from metaeval.analyses import ppi

    rng = np.random.default_rng(5)
    X, y, judged, _, _ = _bt_votes(seed=9)
    lab = rng.random(len(y)) < 0.3
    unl = ~lab
    once = ppi.bradley_terry(X[lab], y[lab], judged[lab], X[unl], judged[unl], lam=0.5)
    twice = [np.repeat(a, 2, axis=0) for a in (X[lab], y[lab], judged[lab], X[unl], judged[unl])]
    n, N = int(lab.sum()), int(unl.sum())
    codes = (np.repeat(np.arange(n), 2), np.repeat(np.arange(n, n + N), 2))
    clustered = ppi.bradley_terry(*twice, lam=0.5, clusters=codes)
    naive = ppi.bradley_terry(*twice, lam=0.5)
    np.testing.assert_allclose(clustered.estimate, once.estimate, rtol=1e-8)
    np.testing.assert_allclose(clustered.se, once.se, rtol=1.5 / min(n, N))
    np.testing.assert_allclose(naive.se * np.sqrt(2), once.se, rtol=1.5 / min(n, N))


@pytest.fixture
def clustered_votes(db, tmp_path):
    """:func:`_bt_votes` as a warehouse: one input a comparison, the human verdict on the labelled
    documents' comparisons, judge ``j``'s on every one; attributes ``doc`` and ``self``."""
    X, y, judged, doc, lab = _bt_votes()
    first, second = X.argmax(axis=1), X.argmin(axis=1)   # design(): +1 the first system, -1 the second
    rows, attributes = [], ["input,attribute,value"]
    for i in range(len(y)):
        a, b = f"s{first[i] + 1 if X[i].max() > 0 else 0}", f"s{second[i] + 1 if X[i].min() < 0 else 0}"
        names = {"input": f"c{i:03d}", "system_a": a, "system_b": b, "order": "ab"}
        if lab[i]:
            rows.append({**names, "judge": "h", "winner": "a" if y[i] else "b", "kind": "human"})
        rows.append({**names, "judge": "j", "winner": "a" if judged[i] > 0.5 else "b", "kind": "automatic"})
        attributes += [f"c{i:03d},doc,d{doc[i]}", f"c{i:03d},self,c{i:03d}"]
    pd.DataFrame(rows).to_csv(tmp_path / "votes.csv", index=False)
    (tmp_path / "attributes.csv").write_text("\n".join(attributes) + "\n")
    run_cli(db, "ingest", "preferences", tmp_path / "votes.csv", "--dataset", "v")
    run_cli(db, "ingest", "attributes", tmp_path / "attributes.csv", "--dataset", "v")
    return db


def test_ppi_bradley_terry_rows_with_clusters(clustered_votes):
    with Warehouse(clustered_votes) as wh:
        plain = wh.ppi("v", judge="j")
        singletons = wh.ppi("v", judge="j", resample_clusters="self")
        doc = wh.ppi("v", judge="j", resample_clusters="doc")
    columns = ["estimand", "system", "other", "estimate", "se", "lower", "upper", "lam", "p_adjusted"]
    assert plain[columns].equals(singletons[columns])
    assert plain["se"].iloc[1:].notna().all()                      # a fit, not a degenerate one
    conventions = json.loads(doc["conventions"].iloc[0])
    assert conventions["resample_clusters"] == "doc" and "clustered: the CR0 sandwich" in conventions["interval"]
    assert doc["estimate"].equals(plain["estimate"]) and (doc["se"].iloc[1:] > plain["se"].iloc[1:]).all()


def test_ppi_rows_with_clusters(clustered):
    with Warehouse(clustered) as wh:
        plain = wh.ppi("tiny", "h", "m1", labelled_share=0.5)
        singletons = wh.ppi("tiny", "h", "m1", labelled_share=0.5, resample_clusters="self")
        doc = wh.ppi("tiny", "h", "m1", labelled_share=0.5, resample_clusters="doc")
    columns = ["estimand", "system", "other", "estimate", "se", "lower", "upper", "classical_lower", "lam",
               "effective_labels", "p_adjusted"]
    columns = [c for c in columns if c in plain.columns]
    assert plain[columns].equals(singletons[columns])
    assert (plain["fingerprint"] != singletons["fingerprint"]).all()
    assert json.loads(doc["conventions"].iloc[0])["clusters"] == 5
    assert (doc["estimate"].values == plain["estimate"].values).all() and not doc["se"].equals(plain["se"])


def test_the_report_says_where_clustering_widened_an_interval(clustered, tmp_path):
    for extra in ((), ("--resample-clusters", "doc")):
        run_cli(clustered, "ci", "--dataset", "tiny", "--human", "h", "--ci-method", "boot-inputs", "--k", "300",
                "--level", "global", "--coefficient", "pearson", *extra)
    out = tmp_path / "report.html"
    run_cli(clustered, "report", "--dataset", "tiny", "--human", "h", "--out", out)
    page = out.read_text()
    assert "Clusters of inputs resampled whole: m1 global pearson:" in page
    assert "wide clustered by doc (5 clusters)" in page and "unclustered (run 1)" in page


def test_range_exceedances_of_the_sequential_tests_take_clusters():
    X, Y, Z = _matrices(6)
    for test, method in (("permutation", "both"), ("bootstrap", "inputs")):
        plain = hypothesis.range_exceedances(X, Y, Z, "summary", "pearson", test, method, seed=2, start=100, stop=300)
        same = hypothesis.range_exceedances(X, Y, Z, "summary", "pearson", test, method, seed=2, start=100, stop=300,
                                            clusters=[f"c{j}" for j in range(M)])
        assert (plain.count, plain.n_valid, plain.delta) == (same.count, same.n_valid, same.delta)
        whole = (hypothesis.permutation_test(X, Y, Z, "summary", "pearson", method, k=300, seed=2, clusters=LABELS)
                 if test == "permutation" else
                 hypothesis.paired_bootstrap_test(X, Y, Z, "summary", "pearson", method, k=300, seed=2,
                                                  clusters=LABELS))
        part = hypothesis.range_exceedances(X, Y, Z, "summary", "pearson", test, method, seed=2, start=0, stop=300,
                                            clusters=LABELS)
        assert np.isclose(whole.pvalue, (1 + part.count) / (1 + part.n_valid) if test == "permutation"
                          else part.count / part.n_valid)


def test_a_judgment_whose_inputs_are_one_cluster_is_refused_before_any_write(clustered):
    rows = [{"system": s, "input": i, "h2": float(a * b % 7)} for a, s in enumerate(SYSTEMS)
            for b, i in enumerate(INPUTS) if LABELS[b] == "d"]
    with Store(clustered) as wh:
        add_scores(wh, "tiny", pd.DataFrame(rows), human=["h2"])
    before = digest(clustered)
    result = run_cli(clustered, "ci", "--dataset", "tiny", "--human", "h2", "--metric", "m1", "--k", "300",
                     "--resample-clusters", "doc", ok=False)
    assert "--resample-clusters 'doc': the inputs h2 judged are in one cluster" in result.output
    assert len(result.output.strip().splitlines()) == 1 and digest(clustered) == before


def test_the_warehouse_method_evaluate_takes_resample_clusters_as_the_command_does(clustered):
    """``wh.evaluate(resample_clusters=...)``, the keyword of ``evaluate --resample-clusters``, gives
    the module function's rows (it was missing from the method's signature)."""
    import inspect

    from metaeval.runs.metrics import evaluate

    assert "resample_clusters" in inspect.signature(Warehouse.evaluate).parameters
    with Warehouse(clustered) as wh:
        method = wh.evaluate("tiny", "h", metrics=["m1"], k=300, levels=["summary"], resample_clusters="doc").table
        module = evaluate.evaluate(wh, "tiny", "h", metrics=["m1"], k=300, levels=["summary"],
                                   resample_clusters="doc").table
    numbers = ["correlation", "lower", "upper", "signature"]
    pd.testing.assert_frame_equal(method[numbers], module[numbers])
    assert all("clus:doc" in s for s in method["signature"])
