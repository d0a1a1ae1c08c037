"""Which inputs a system score averages (issue 20.4; Deutsch, Dror & Roth, NAACL 2022):
--system-inputs all | judged, checked against independent computations."""

from __future__ import annotations

import json
import re
from functools import partial

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from metaeval.runs import Warehouse
from metaeval.errors import WarehouseError
from metaeval.analyses import bootstrap_ci, correlate, paired_bootstrap_test
from metaeval.analyses.stats import resampling
from tests.conftest import run_cli

N, JUDGED, EXTRA = 7, 6, 9          # systems; inputs the human judged; inputs only the metric scored


def _data(seed=0):
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(N, 1))
    X = np.round(quality + rng.normal(size=(N, JUDGED + EXTRA)), 3)
    Y = np.round(quality + 2 * rng.normal(size=(N, JUDGED + EXTRA)), 3)
    Z = np.full(X.shape, np.nan)
    Z[:, :JUDGED] = np.round(quality + rng.normal(size=(N, JUDGED)), 1)
    return X, Y, Z


def test_unpaired_bootstrap_equals_resampling_by_hand():
    """Each resample: systems drawn once; the metric's 15 inputs and the human's 6 drawn
    independently; r = pearson(metric means over its drawn inputs, human means over its)."""
    X, _, Z = _data()
    got = bootstrap_ci(X, Z, "system", "pearson", "both", k=50, seed=3, paired_inputs=False)
    draw = partial(resampling.unpaired_bootstrap_indices, n_systems=N, x_inputs=np.arange(JUDGED + EXTRA),
                   z_inputs=np.arange(JUDGED), method="both")
    rows, cx, cz = resampling.ResampleStream(np.random.SeedSequence(3), draw).take(0, 50)
    for b in range(50):
        xm, zm = X[:, cx[b]].mean(axis=1)[rows[b]], Z[:, cz[b]].mean(axis=1)[rows[b]]
        expected = np.nan if np.ptp(xm) == 0 or np.ptp(zm) == 0 else scipy.stats.pearsonr(xm, zm)[0]
        assert got.samples[b] == pytest.approx(expected, abs=1e-12, nan_ok=True)
    assert "nlpstats" in got.conventions["paired_inputs"]
    # the paired test draws X and Y on the same inputs and Z on its own
    test = paired_bootstrap_test(X, _data()[1], Z, "system", "kendall", "inputs", k=40, seed=1, paired_inputs=False)
    assert test.samples.shape == (40,) and "paired_inputs" in test.conventions
    with pytest.raises(ValueError, match="system-level protocol"):
        bootstrap_ci(X, Z, "summary", paired_inputs=False)


def _ingest(db, tmp_path):
    X, Y, Z = _data()
    lines = ["system,input,measure,value,kind"]
    for name, A, kind in (("mx", X, "automatic"), ("my", Y, "automatic"), ("h", Z, "human")):
        for i, j in zip(*np.nonzero(~np.isnan(A)), strict=True):
            lines.append(f"S{i},D{j:02d},{name},{A[i, j]},{kind}")
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    run_cli(db, "ingest", "table", tmp_path / "t.csv", "--dataset", "t")
    return X, Y, Z


@pytest.mark.parametrize("coefficient", ["pearson", "kendall"])
def test_correlate_all_and_judged_equal_the_two_nlpstats_style_computations(db, tmp_path, coefficient):
    X, _, Z = _ingest(db, tmp_path)
    scipy_corr = {"pearson": lambda a, b: scipy.stats.pearsonr(a, b)[0],
                  "kendall": lambda a, b: scipy.stats.kendalltau(a, b)[0]}[coefficient]
    expected = {"all": scipy_corr(X.mean(axis=1), Z[:, :JUDGED].mean(axis=1)),
                "judged": scipy_corr(X[:, :JUDGED].mean(axis=1), Z[:, :JUDGED].mean(axis=1))}
    assert expected["all"] != pytest.approx(expected["judged"])
    for protocol in ("all", "judged"):
        run_cli(db, "correlate", "--dataset", "t", "--human", "h", "--metric", "mx", "--level", "system",
                "--coefficient", coefficient, "--system-inputs", protocol)
        with Warehouse(db, read_only=True) as wh:
            row = wh.sql("SELECT * FROM latest_correlations").iloc[0]
        assert row.system_inputs == protocol
        assert row.value == pytest.approx(expected[protocol], abs=1e-12)
        assert json.loads(row.conventions)["unjudged_inputs"] == EXTRA
        assert correlate(X if protocol == "all" else X[:, :JUDGED], Z if protocol == "all" else Z[:, :JUDGED],
                         "system", coefficient) == pytest.approx(row.value, abs=1e-12)


def test_ci_and_compare_under_both_protocols(db, tmp_path):
    X, Y, Z = _ingest(db, tmp_path)
    base = ["--dataset", "t", "--human", "h", "--level", "system", "--coefficient", "pearson", "--k", "200"]
    run_cli(db, "ci", *base, "--metric", "mx", "--system-inputs", "judged")
    run_cli(db, "ci", *base, "--metric", "mx", "--system-inputs", "all")
    run_cli(db, "compare", *base, "--method", "boot-both", "--system-inputs", "all")
    with Warehouse(db, read_only=True) as wh:
        cis = wh.sql("SELECT * FROM confidence_intervals ORDER BY result_id")
        tests = wh.sql("SELECT * FROM latest_hypothesis_tests")
    judged, every = cis.iloc[0], cis.iloc[1]
    plain = bootstrap_ci(X[:, :JUDGED], Z[:, :JUDGED], "system", "pearson", "both", k=200, seed=0)
    assert (judged.lower, judged.upper) == pytest.approx((plain.lower, plain.upper), abs=1e-12)
    unpaired = bootstrap_ci(X, Z, "system", "pearson", "both", k=200, seed=0, paired_inputs=False)
    assert (every.lower, every.upper) == pytest.approx((unpaired.lower, unpaired.upper), abs=1e-12)
    assert "paired_inputs" in json.loads(every.conventions) and "paired_inputs" not in json.loads(judged.conventions)
    assert set(tests.system_inputs) == {"all"} and len(tests) == 2
    # running the other protocol again recomputes (a parameter), running the same one does not
    out = run_cli(db, "ci", *base, "--metric", "mx", "--system-inputs", "all").output
    assert "nothing computed" in out


def test_fully_judged_data_gives_the_same_numbers_under_both(db, tmp_path):
    rng = np.random.default_rng(5)
    lines = ["system,input,measure,value,kind"] + [
        f"S{i},D{j},{m},{rng.normal():.4f},{'human' if m == 'h' else 'automatic'}"
        for i in range(6) for j in range(8) for m in ("mx", "h")]
    (tmp_path / "p.csv").write_text("\n".join(lines) + "\n")
    run_cli(db, "ingest", "table", tmp_path / "p.csv", "--dataset", "p")
    for protocol in ("all", "judged"):
        run_cli(db, "ci", "--dataset", "p", "--human", "h", "--level", "system", "--coefficient", "kendall",
                "--k", "100", "--system-inputs", protocol)
    with Warehouse(db, read_only=True) as wh:
        rows = wh.sql("SELECT estimate, lower, upper FROM confidence_intervals ORDER BY result_id")
    assert rows.iloc[0].tolist() == rows.iloc[1].tolist()


def test_accuracy_under_both_protocols(db, tmp_path):
    """Pairwise accuracy of system means: all = the metric's mean over its 15 inputs, judged =
    over the 6 judged ones; against a pairs loop."""
    X, _, Z = _ingest(db, tmp_path)
    zm = Z[:, :JUDGED].mean(axis=1)
    for protocol, xm in (("all", X.mean(axis=1)), ("judged", X[:, :JUDGED].mean(axis=1))):
        run_cli(db, "accuracy", "--dataset", "t", "--human", "h", "--metric", "mx", "--level", "system",
                "--system-inputs", protocol)
        with Warehouse(db, read_only=True) as wh:
            row = wh.sql("SELECT * FROM latest_pairwise_accuracy").iloc[0]
        pairs = [(i, k) for i in range(N) for k in range(i + 1, N)]
        expected = np.mean([np.sign(xm[i] - xm[k]) == np.sign(zm[i] - zm[k]) for i, k in pairs])
        assert row.system_inputs == protocol and row.accuracy == pytest.approx(expected)


def _stored(db, view, **where):
    with Warehouse(db, read_only=True) as wh:
        frame = wh.sql(f"SELECT * FROM {view}")
    for column, value in where.items():
        frame = frame[frame[column] == value]
    return frame


def test_evaluate_rows_are_those_of_correlate_ci_compare_under_each_protocol(db, tmp_path):
    """evaluate --system-inputs P writes (and shows) the rows correlate / ci / compare
    --system-inputs P write on the same scope: those commands then find them up to date; the
    system-level correlation is scipy's on the means P says; a run under the other protocol
    computes its own rows (the protocol is a parameter), and a rerun computes nothing."""
    X, _, Z = _ingest(db, tmp_path)
    scope = ["--dataset", "t", "--human", "h", "--level", "system", "--level", "summary", "--coefficient", "pearson",
             "--coefficient", "kendall"]
    resampling = ["--k", "100", "--seed", "2"]
    human_means = Z[:, :JUDGED].mean(axis=1)
    metric_means = {"all": X.mean(axis=1), "judged": X[:, :JUDGED].mean(axis=1)}
    rows = {}
    for protocol in ("judged", "all"):
        out = run_cli(db, "evaluate", "--metric", "mx", *scope, *resampling, "--system-inputs", protocol,
                      "--format", "json")
        assert "nothing computed" not in out.stderr     # not the other protocol's results
        rows[protocol] = {(r["level"], r["coefficient"]): r for r in json.loads(out.stdout) if r["metric"] == "mx"}
        for (level, coefficient), r in rows[protocol].items():
            assert r["conventions"]["system_inputs"] == protocol
            if level == "system":
                scipy_corr = (scipy.stats.pearsonr if coefficient == "pearson" else scipy.stats.kendalltau)
                assert r["correlation"] == pytest.approx(scipy_corr(metric_means[protocol], human_means)[0],
                                                         abs=1e-12)
        tests_before = _stored(db, "latest_hypothesis_tests", metric_a="mx", system_inputs=protocol)
        # the stand-alone commands find evaluate's rows (same keys, parameters and fingerprints)
        same = ["--system-inputs", protocol, "--format", "json"]
        corr = run_cli(db, "correlate", *scope, *same)
        assert "nothing computed" in corr.stderr
        cis = run_cli(db, "ci", *scope, *resampling, *same)
        assert "nothing computed" in cis.stderr
        run_cli(db, "compare", *scope, *resampling, *same, "--alternative", "two-sided", "--correction", "holm")
        tests_after = _stored(db, "latest_hypothesis_tests", metric_a="mx", system_inputs=protocol)
        assert sorted(tests_before["result_id"]) == sorted(tests_after["result_id"])   # not even rewritten
        corr = {(r["level"], r["coefficient"]): r for r in json.loads(corr.stdout) if r["metric"] == "mx"}
        cis = {(r["level"], r["coefficient"]): r for r in json.loads(cis.stdout) if r["metric"] == "mx"}
        assert set(corr) == set(cis) == set(rows[protocol]) == {(lv, c) for lv in ("system", "summary")
                                                               for c in ("pearson", "kendall")}
        for key, r in rows[protocol].items():
            assert corr[key]["system_inputs"] == cis[key]["system_inputs"] == protocol
            assert r["correlation"] == corr[key]["value"]
            assert (r["lower"], r["upper"]) == (cis[key]["lower"], cis[key]["upper"])
            test = tests_after[(tests_after.level == key[0]) & (tests_after.coefficient == key[1])].iloc[0]
            beats = bool(test.p_adjusted <= 0.05 and test.delta > 0)
            beaten = bool(test.p_adjusted <= 0.05 and test.delta < 0)
            assert (r["beats"], r["beaten_by"]) == (["my"] if beats else [], ["my"] if beaten else [])
    for key in rows["all"]:   # only the system level depends on the protocol (here: the data differ there)
        differ = rows["all"][key]["correlation"] != pytest.approx(rows["judged"][key]["correlation"])
        assert differ == (key[0] == "system")
    # each protocol's rows are kept: a rerun of either computes nothing (the rows of the protocol run
    # before it are copied back as the latest) and shows the same rows
    for protocol in ("judged", "all"):
        again = run_cli(db, "evaluate", "--metric", "mx", *scope, *resampling, "--system-inputs", protocol,
                        "--format", "json")
        assert re.findall(r"computed (\d+)", again.stderr) in (["0"] * 3, [])
        assert again.stderr.count("nothing computed") + again.stderr.count("computed 0 of") == 3
        assert {(r["level"], r["coefficient"]): r for r in json.loads(again.stdout)
                if r["metric"] == "mx"} == rows[protocol]


def test_evaluate_says_its_protocol_and_records_it(db, tmp_path):
    _ingest(db, tmp_path)
    # the caption's conventions in full: --full-width (by default the caption is cut to three lines)
    base = ["evaluate", "--metric", "mx", "--dataset", "t", "--human", "h", "--coefficient", "pearson", "--k", "40",
            "--full-width"]
    text = run_cli(db, *base, "--system-inputs", "judged").stdout
    assert "(--system-inputs judged)" in text and "over the inputs the human judged only" in text
    assert "(--system-inputs all)" in run_cli(db, *base).stdout        # the default
    assert "--system-inputs" not in run_cli(db, *base, "--level", "summary").stdout   # no system level shown
    with Warehouse(db, read_only=True) as wh:
        runs = wh.sql("SELECT command, parameters FROM analysis_runs ORDER BY run_id")
    recorded = [json.loads(p)["system_inputs"] for p in runs["parameters"]]
    assert recorded[:3] == ["judged"] * 3 and recorded[3:6] == ["all"] * 3
    out = run_cli(db, *base, "--system-inputs", "some", ok=False)
    assert out.exit_code == 2 and "some" in out.output
    # the Python API: a setting run before, so nothing computed; a bad protocol is refused before any ingest
    with Warehouse(db) as wh:
        ev = wh.evaluate("t", "h", metrics=["mx"], coefficients=["pearson"], k=40, system_inputs="judged")
        assert ev.computed == 0 and ev.settings["system_inputs"] == "judged"
        with pytest.raises(WarehouseError, match="system_inputs='some'"):
            wh.evaluate("t", "h", [tmp_path / "t.csv"], metrics=["mx"], system_inputs="some")


def test_summary_and_global_levels_do_not_depend_on_the_protocol(db, tmp_path):
    """An input the human did not judge holds no pair at the summary and global levels: under
    either protocol their bootstraps resample the judged inputs only (before, "all" also drew the
    empty inputs, which widened its intervals while its conventions said "no effect")."""
    X, Y, Z = _ingest(db, tmp_path)
    base = ["--dataset", "t", "--human", "h", "--level", "summary", "--level", "global", "--coefficient", "pearson",
            "--k", "300"]
    for protocol in ("all", "judged"):
        run_cli(db, "ci", *base, "--metric", "mx", "--system-inputs", protocol)
        run_cli(db, "compare", *base, "--method", "boot-both", "--system-inputs", protocol, "--alternative", "greater")
    with Warehouse(db, read_only=True) as wh:
        cis = wh.sql("SELECT * FROM confidence_intervals ORDER BY result_id")
        tests = wh.sql("SELECT * FROM hypothesis_tests ORDER BY result_id")
    for level in ("summary", "global"):
        rows = cis[cis.level == level]
        assert rows.system_inputs.tolist() == ["all", "judged"]
        expected = bootstrap_ci(X[:, :JUDGED], Z[:, :JUDGED], level, "pearson", "both", k=300, seed=0)
        for r in rows.itertuples():
            assert (r.lower, r.upper) == pytest.approx((expected.lower, expected.upper), abs=1e-12)
            assert json.loads(r.conventions)["system_inputs"].endswith("(no effect at this level)")
        test = paired_bootstrap_test(X[:, :JUDGED], Y[:, :JUDGED], Z[:, :JUDGED], level, "pearson", "both", k=300,
                                     alternative="greater", seed=0)
        got = tests[(tests.level == level) & (tests.metric_a == "mx")]
        assert got.p_value.tolist() == pytest.approx([test.pvalue] * 2, abs=1e-12)


COVERAGE = ["simulate", "coverage", "--human", "h", "--metric", "mx", "--coefficient", "pearson",
            "--ci-method", "fisher", "--ci-method", "boot-inputs", "--trials", "80", "--k", "40", "--seed", "1"]
COVERAGE_VALUES = ["metric", "level", "coefficient", "method", "trials", "contains", "too_high", "too_low", "undefined",
                   "coverage", "n_systems", "n_inputs", "fingerprint"]


def _coverage_data(db, tmp_path, n_sys=12, judged=8, extra=12):
    """Dataset "t": mx scores judged + extra inputs, h judges the first ``judged``; dataset
    "only": the same cells of the judged inputs."""
    rng = np.random.default_rng(11)
    quality = rng.normal(size=(n_sys, 1))
    X = np.round(quality + 1.5 * rng.normal(size=(n_sys, judged + extra)), 2)
    Z = np.full(X.shape, np.nan)
    Z[:, :judged] = np.round(quality + rng.normal(size=(n_sys, judged)), 1)
    for dataset, inputs in (("t", judged + extra), ("only", judged)):
        lines = ["system,input,measure,value,kind"] + [
            f"S{i:02d},D{j:02d},{name},{A[i, j]},{kind}"
            for name, A, kind in (("mx", X, "automatic"), ("h", Z, "human")) for i in range(n_sys) for j in range(inputs) if not np.isnan(A[i, j])]
        (tmp_path / f"{dataset}.csv").write_text("\n".join(lines) + "\n")
        run_cli(db, "ingest", "table", tmp_path / f"{dataset}.csv", "--dataset", dataset)
    return X, Z, extra


def _shown(out: str, level: str, method: str) -> list[int]:
    """contains, too_high, too_low of the row of ``level`` and ``method`` in the printed table."""
    line = next(line.split() for line in out.splitlines() if f" {level} " in line and f" {method} " in line)
    return [int(v) for v in line[5:8]]


def test_simulate_coverage_under_each_protocol(db, tmp_path):
    """judged: the rows (and fingerprints) of a dataset holding only the judged inputs; all:
    the pure trials on every input (each half-A interval as `ci --system-inputs all` computes
    it), never served by the judged run, and the same as judged at the summary level; the
    protocol recorded in the run and the rows; each setting shown with its own rows."""
    from metaeval.analyses import simulation as sim

    X, Z, extra = _coverage_data(db, tmp_path)
    run_cli(db, *COVERAGE, "--dataset", "t", "--system-inputs", "judged")
    run_cli(db, *COVERAGE, "--dataset", "only")
    every_out = run_cli(db, *COVERAGE, "--dataset", "t").output
    assert "computed" in every_out and "nothing computed" not in every_out   # not the judged run's rows
    with Warehouse(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM ci_coverage ORDER BY result_id")
        runs = wh.sql("SELECT parameters FROM analysis_runs WHERE command = 'simulate coverage' ORDER BY run_id")
    assert [json.loads(p)["system_inputs"] for p in runs["parameters"]] == ["judged", "all", "all"]
    judged, only, every = (rows[rows.run_id == r].sort_values(["level", "method"]).reset_index(drop=True)
                           for r in sorted(set(rows.run_id)))
    pd.testing.assert_frame_equal(judged[COVERAGE_VALUES], only[COVERAGE_VALUES])
    assert (judged.n_inputs == 8).all() and (every.n_inputs == 8 + extra).all()
    conventions = [json.loads(c) for c in (judged.conventions[0], only.conventions[0], every.conventions[0])]
    assert [(c["system_inputs"], c["unjudged_inputs"]) for c in conventions] == [
        ("judged", extra), ("all = judged (every input scored is judged)", 0), ("all", extra)]
    configs = [(lv, "pearson") for lv in ("system", "summary")]
    counts = lambda r: (r.contains, r.too_high, r.too_low, r.undefined)  # noqa: E731
    for method in ("fisher", "boot-inputs"):
        trials = {p: sim.coverage_trials(X, Z, method, configs, range(80), k=40, seed=1, system_inputs=p)
                  for p in ("all", "judged")}
        for level in ("system", "summary"):
            for protocol, stored in (("all", every), ("judged", judged)):
                row = stored[(stored.level == level) & (stored.method == method)].iloc[0]
                assert counts(row) == counts(trials[protocol][(level, "pearson")].counts())
    system = lambda frame: frame[(frame.level == "system") & (frame.method == "boot-inputs")].iloc[0]  # noqa: E731
    assert counts(system(every)) != counts(system(judged))          # the protocols differ here
    summary = every.level == "summary"
    pd.testing.assert_frame_equal(every[summary][COVERAGE_VALUES[:10]], judged[summary][COVERAGE_VALUES[:10]])
    # each setting shows its own rows, whichever ran last (the latest_ci_coverage rows are all's)
    again = run_cli(db, *COVERAGE, "--dataset", "t", "--system-inputs", "judged").output
    assert "nothing computed" in again
    assert _shown(again, "system", "boot-inputs") == list(counts(system(judged))[:3])
    assert _shown(every_out, "system", "boot-inputs") == list(counts(system(every))[:3])
