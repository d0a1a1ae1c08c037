"""Span-level meta-evaluation (issue 36 item 4, pure part): character precision, recall and F1
with partial-overlap credit, severity matching, micro / macro and the bootstrap over segments,
against hand-worked numbers and an independent loop over character sets."""

from __future__ import annotations

import json

import numpy as np
import pytest

from metaeval.analyses import spans


def test_by_hand():
    lengths = [10, 10, 10]
    gold = [[(0, 4, "major")], [], [(2, 6, "minor")]]
    pred = [[(2, 6, "major")], [(0, 1, "minor")], []]
    s = spans.span_counts(lengths, pred, gold)
    assert s.tp.tolist() == [2, 0, 0] and s.predicted.tolist() == [4, 1, 0] and s.gold.tolist() == [4, 0, 4]
    p, r, f = s.micro()
    assert (p, r) == (2 / 5, 2 / 8) and f == pytest.approx(2 * p * r / (p + r))
    mp, mr, mf = s.macro()
    assert mp == pytest.approx((0.5 + 0.0) / 2)     # segment 3 has no prediction: no precision
    assert mr == pytest.approx((0.5 + 0.0) / 2)     # segment 2 has no human span: no recall
    assert mf == pytest.approx(0.5)                 # only segment 1 has both
    matched = spans.span_counts([10], [[(0, 4, "major"), (4, 8, "minor")]], [[(0, 8, "Major")]], severity=True)
    assert matched.tp.tolist() == [4] and matched.predicted.tolist() == [8]   # only the major characters
    overlapping = spans.span_counts([4], [[(0, 4, "major"), (0, 4, "minor")]], [[(0, 4, "minor"), (0, 4, "major")]],
                                    severity=True)
    assert overlapping.tp.tolist() == [4] and overlapping.micro()[0] == 1.0   # a character counts once
    assert all(np.isnan(v) for v in spans.span_counts([5], [[]], [[]]).micro())
    assert spans.flatten({"source": 3, "target": 5}, [("target", 1, 2, "x"), ("source", 0, 3, "y")]) == \
        (8, [(4, 5, "x"), (0, 3, "y")])
    with pytest.raises(ValueError):
        spans.flatten({"source": 3, "target": 5}, [("target", 4, 6, "x")])


def loop_counts(lengths, pred, gold, severity):
    """Independent: characters as Python sets, severity as dicts of sets."""
    out = []
    for n, P, G in zip(lengths, pred, gold):
        def chars(spans_):
            cover = {}
            for a, b, sev in spans_:
                for c in range(a, b):
                    cover.setdefault(c, set()).add(sev.lower())
            return cover
        p, g = chars(P), chars(G)
        tp = [c for c in p if c in g and (not severity or p[c] & g[c])]
        out.append((len(tp), len(p), len(g)))
    return np.array(out)


def random_case(rng, n_segments=25):
    lengths, pred, gold = [], [], []
    for _ in range(n_segments):
        n = int(rng.integers(0, 15))
        lengths.append(n)
        for side in (pred, gold):
            side.append([])
            for _ in range(int(rng.integers(0, 3)) if n else 0):
                a = int(rng.integers(0, n))
                side[-1].append((a, int(rng.integers(a, n + 1)), str(rng.choice(["major", "Minor", "minor"]))))
    return lengths, pred, gold


def test_against_a_loop_and_the_bootstrap_by_hand():
    rng = np.random.default_rng(11)
    for _ in range(20):
        lengths, pred, gold = random_case(rng)
        for severity in (False, True):
            c = spans.span_counts(lengths, pred, gold, severity=severity)
            want = loop_counts(lengths, pred, gold, severity)
            assert np.array_equal(np.c_[c.tp, c.predicted, c.gold], want)
    lengths, pred, gold = random_case(np.random.default_rng(5), 40)
    c = spans.span_counts(lengths, pred, gold)
    out = spans.bootstrap(c, k=300, seed=9, alpha=0.1)
    draws = np.random.default_rng(9).integers(0, len(lengths), size=(300, len(lengths)))
    f1s = []
    for d in draws:
        tp, P, G = c.tp[d].sum(), c.predicted[d].sum(), c.gold[d].sum()
        p, r = (tp / P if P else np.nan), (tp / G if G else np.nan)
        f1s.append(np.nan if np.isnan(p) or np.isnan(r) else (2 * p * r / (p + r) if p + r else 0.0))
    f1s = np.array(f1s)
    value, lo, hi = out[("micro", "f1")]
    assert value == pytest.approx(c.micro()[2])
    assert (lo, hi) == pytest.approx(tuple(np.quantile(f1s[~np.isnan(f1s)], [0.05, 0.95])))
    assert set(out) == {(a, s) for a in ("micro", "macro") for s in spans.STATISTICS}
    assert out[("macro", "precision")][1] <= out[("macro", "precision")][0] <= out[("macro", "precision")][2]


PREDICTED = [  # a metric's spans on the hand-worked file of tests/test_mqm_ingest.py
    ("A", "1", "-", 'He said "hello" to me.', 'Er sagte "hallo" <v>mir</v>.', "Fluency/Grammar", "minor"),
    ("A", "2", "-", "It rains.", "Es regnet.", "No-error", "No-error"),
    ("B", "1", "-", 'He said "hello" to me.', "Er sagte <v>hallo</v>.", "Accuracy", "major"),
    ("B", "2", "-", "It rains.", "<v>Es</v> regnet!", "Fluency", "minor"),
]


def test_span_eval_command_by_hand(db, tmp_path):
    from metaeval.runs import Warehouse
    from tests.conftest import run_cli
    from tests.test_mqm_ingest import write

    run_cli(db, "ingest", "mqm", write(tmp_path / "mqm.tsv"), "--dataset", "wmt")
    out = run_cli(db, "ingest", "mqm", write(tmp_path / "metric.tsv", PREDICTED), "--dataset", "wmt",
                  "--judge", "xcomet").output
    assert "0 judgments" not in out and "inserted" in out
    run_cli(db, "span-eval", "--dataset", "wmt", "--k", "200")
    with Warehouse(db, read_only=True) as wh:
        rows = wh.sql("SELECT * FROM latest_span_evaluation")
        n_measures = wh.sql("SELECT count(*) AS n FROM measures")["n"][0]
    assert n_measures == 1                                   # a judge's spans make no measure
    got = {(r.severity_matching, r.averaging): r for r in rows.itertuples()}
    # gold: A/1 26 characters (source 5 + the whole target), A/2 6, B/1 5, B/2 1 = 38; predicted 3 + 0 + 5 + 2
    micro = got[(False, "micro")]
    assert (micro.precision, micro.recall) == (pytest.approx(8 / 10), pytest.approx(8 / 38))
    assert micro.f1 == pytest.approx(2 * 0.8 * (8 / 38) / (0.8 + 8 / 38)) and micro.n_segments == 4
    matched = got[(True, "micro")]                           # "mir" is minor, the human span there Major
    assert (matched.precision, matched.recall) == (pytest.approx(5 / 10), pytest.approx(5 / 38))
    macro = got[(False, "macro")]
    assert macro.precision == pytest.approx((1 + 1 + 0) / 3)           # A/2: nothing predicted
    assert macro.recall == pytest.approx((3 / 26 + 0 + 1 + 0) / 4)
    assert macro.f1 == pytest.approx((2 * (3 / 26) / (1 + 3 / 26) + 1 + 0) / 3)
    assert micro.f1_lower <= micro.f1 <= micro.f1_upper
    bad = run_cli(db, "span-eval", "--dataset", "wmt", "--judge", "nope", ok=False).output
    assert "--judge" in bad and "xcomet" in bad and len(bad.strip().splitlines()) == 1


def test_paired_test_against_the_exact_permutation_distribution():
    import itertools

    rng = np.random.default_rng(4)
    n = 7
    gold = rng.integers(0, 6, n)
    a = spans.SpanCounts(tp=np.minimum(gold, rng.integers(0, 5, n)), predicted=np.full(n, 5), gold=gold)
    b = spans.SpanCounts(tp=np.minimum(gold, rng.integers(0, 3, n)), predicted=np.full(n, 4), gold=gold)

    def f1(tp, pr, g):
        p, r = tp.sum() / pr.sum(), tp.sum() / g.sum()
        return 2 * p * r / (p + r) if p + r else 0.0

    delta = f1(a.tp, a.predicted, gold) - f1(b.tp, b.predicted, gold)
    extreme = 0
    for swap in itertools.product([False, True], repeat=n):
        s = np.array(swap)
        d = (f1(np.where(s, b.tp, a.tp), np.where(s, b.predicted, a.predicted), gold)
             - f1(np.where(s, a.tp, b.tp), np.where(s, a.predicted, b.predicted), gold))
        extreme += abs(d) >= abs(delta) - 1e-12
    exact = extreme / 2 ** n
    test = spans.paired_test(a, b, k=20000, seed=1)
    assert test.delta == pytest.approx(delta) and test.n_valid == 20000
    assert test.pvalue == pytest.approx(exact, abs=0.015)
    same = spans.paired_test(a, a, k=50, seed=0)
    assert same.delta == 0 and same.pvalue == 1.0
    with pytest.raises(ValueError):
        spans.paired_test(a, spans.SpanCounts(a.tp, a.predicted, a.gold + 1), k=5, seed=0)


def _three_judges_tested(db, tmp_path):
    """span-eval's latest span_tests rows on three judges (one silent), Holm, k = 50."""
    from metaeval.runs import Warehouse
    from tests.conftest import run_cli
    from tests.test_mqm_ingest import write

    run_cli(db, "ingest", "mqm", write(tmp_path / "mqm.tsv"), "--dataset", "wmt")
    run_cli(db, "ingest", "mqm", write(tmp_path / "a.tsv", PREDICTED), "--dataset", "wmt", "--judge", "xcomet")
    silent = [r[:4] + (r[4].replace("<v>", "").replace("</v>", ""), "No-error", "No-error") for r in PREDICTED]
    run_cli(db, "ingest", "mqm", write(tmp_path / "b.tsv", silent), "--dataset", "wmt", "--judge", "silent")
    whole = [r[:4] + ("<v>" + r[4].replace("<v>", "").replace("</v>", "") + "</v>", "Other", "major")
             for r in PREDICTED]
    run_cli(db, "ingest", "mqm", write(tmp_path / "c.tsv", whole), "--dataset", "wmt", "--judge", "all")
    run_cli(db, "span-eval", "--dataset", "wmt", "--k", "50", "--correction", "holm")
    with Warehouse(db, read_only=True) as wh:
        tests = wh.sql("SELECT * FROM latest_span_tests ORDER BY severity_matching, judge_a, judge_b")
        evaluation = wh.sql("SELECT * FROM latest_span_evaluation WHERE averaging = 'micro'")
    return tests, evaluation


def test_span_eval_tests_two_judges_through_the_conclusion_layer(db, tmp_path):
    from metaeval.analyses import conclusions

    tests, evaluation = _three_judges_tested(db, tmp_path)
    assert len(tests) == 6 and set(zip(tests["judge_a"], tests["judge_b"])) == {
        ("all", "silent"), ("all", "xcomet"), ("silent", "xcomet")}
    f1 = {(r.judge, r.severity_matching): r.f1 for r in evaluation.itertuples()}
    silent = evaluation[evaluation["judge"] == "silent"]
    # the silent judge marks nothing: its precision and F1 are undefined (NULL), its recall 0; no delta
    assert silent["precision"].isna().all() and (silent["recall"] == 0).all()
    undefined = tests[(tests["judge_a"] == "silent") | (tests["judge_b"] == "silent")]
    assert undefined["delta"].isna().all() and undefined["pvalue"].isna().all() and undefined["significant"].isna().all()
    for r in tests[(tests["judge_a"] == "all") & (tests["judge_b"] == "xcomet")].itertuples():
        assert r.delta == pytest.approx(f1[("all", r.severity_matching)] - f1[("xcomet", r.severity_matching)])
        assert 1 / 51 <= r.pvalue <= 1 and r.n_valid == 50
    # per severity matching one family of the defined tests (1 here), Holm at 0.05, k = 50
    verdict = conclusions.decide([0.5], formula="add-one", k=50, correction="holm", alpha=0.05)
    assert set(tests["resolvable"]) == {verdict.resolvable}
    # the family's resolution in typed columns (schema 10), not JSON text within the conventions
    r = verdict.resolution
    assert set(tests["pvalue_formula"]) == {"add-one"} and set(tests["family_tests"]) == {r.m}
    assert set(tests["smallest_p"]) == {1 / 51} and set(tests["needed_p"]) == {r.needed_p}
    assert set(tests["k_needed"]) == {r.k_needed}
    assert all("resolution" not in json.loads(c) for c in tests["conventions"])


def test_a_schema_9_warehouse_upgrades_its_span_tests_keeping_every_row(db, tmp_path):
    """Schema 9 kept span-eval's resolution as JSON text within the conventions JSON: `metaeval
    init` sets the typed columns from it, every row and every other value kept."""
    from metaeval import schema
    from metaeval.analyses import stored_tests
    from metaeval.connection import duckdb_connect
    from metaeval.runs import Warehouse
    from tests.conftest import run_cli

    now, _ = _three_judges_tested(db, tmp_path)
    typed = ["pvalue_formula", "family_tests", "smallest_p", "needed_p", "k_needed"]
    with duckdb_connect(db) as con:          # as schema 9 wrote them
        for r in now.itertuples():
            old = {"smallest_p": r.smallest_p, "needed_p": r.needed_p, "resolvable": r.resolvable, "k": int(r.k),
                   "k_needed": int(r.k_needed), "family_tests": int(r.family_tests), "pvalue_formula": "add-one",
                   "rule": "as Resolution.as_dict wrote it"}
            c = {**json.loads(r.conventions), "resolution": json.dumps(old)}
            con.execute("UPDATE span_tests SET conventions = ? WHERE result_id = ?", [json.dumps(c), r.result_id])
        before = con.execute(f"SELECT * EXCLUDE ({', '.join(typed)}) FROM span_tests ORDER BY result_id").df()
        con.execute("DROP VIEW latest_span_tests")
        for c in typed:
            con.execute(f"ALTER TABLE span_tests DROP COLUMN {c}")
        con.execute("UPDATE schema_info SET value = '9' WHERE key = 'version'")
    assert f"from schema 9 to {schema.SCHEMA_VERSION}" in run_cli(db, "init").output
    with Warehouse(db, read_only=True) as wh:
        after = wh.sql("SELECT * FROM span_tests ORDER BY result_id")
        latest = wh.sql("SELECT * FROM latest_span_tests")
    assert after.drop(columns=typed).equals(before) and len(before) == len(now) == len(latest)
    for c in typed:
        assert list(after[c]) == list(now.sort_values("result_id")[c]), c
    row = after.iloc[0]
    res = stored_tests.row_resolution(row)
    assert res.smallest_p == row["smallest_p"] and res.k_needed == row["k_needed"] and res.m == row["family_tests"]


def test_span_eval_prints_its_rows_in_one_order_the_judges_by_f1(db, tmp_path):
    """Issue 48 item 15: span-eval printed its rows in the store's order (micro / macro, matching on
    and off in an order that changed between datasets) and judges by name. The settings come in a
    fixed order, in each the judges by F1, the best first, undefined last."""
    from tests.conftest import run_cli
    from tests.test_mqm_ingest import write

    run_cli(db, "ingest", "mqm", write(tmp_path / "mqm.tsv"), "--dataset", "wmt")
    run_cli(db, "ingest", "mqm", write(tmp_path / "a.tsv", PREDICTED), "--dataset", "wmt", "--judge", "xcomet")
    silent = [r[:4] + (r[4].replace("<v>", "").replace("</v>", ""), "No-error", "No-error") for r in PREDICTED]
    run_cli(db, "ingest", "mqm", write(tmp_path / "b.tsv", silent), "--dataset", "wmt", "--judge", "a-silent")
    whole = [r[:4] + ("<v>" + r[4].replace("<v>", "").replace("</v>", "") + "</v>", "Other", "major")
             for r in PREDICTED]
    run_cli(db, "ingest", "mqm", write(tmp_path / "c.tsv", whole), "--dataset", "wmt", "--judge", "b-all")
    out = run_cli(db, "--full-width", "span-eval", "--dataset", "wmt", "--k", "50", "--format", "json").output
    import json

    rows, _ = json.JSONDecoder().raw_decode(out[out.index("["):])     # span_evaluation's, then span_tests'
    assert rows and all("averaging" in r for r in rows)
    settings = list(dict.fromkeys((r["severity_matching"], r["averaging"]) for r in rows))
    assert settings == [(False, "micro"), (False, "macro"), (True, "micro"), (True, "macro")]
    for s in settings:
        f1 = [r["f1"] for r in rows if (r["severity_matching"], r["averaging"]) == s]
        defined = [x for x in f1 if x is not None]
        assert f1 == sorted(defined, reverse=True) + [None] * (len(f1) - len(defined)), (s, f1)
