"""Graham (2015)'s median variants (issue 43 item 2): ``--aggregate median`` medians the metric's
summary scores against the human's one (mean) system score; ``--human-aggregate median`` medians
the human's too. Against brute-force loops (numpy per system, scipy's Pearson), the pooled
Williams ranking against the formula of Williams' test (../shared/docs/method.md)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.stats

from metaeval import Store
from metaeval.runs import Warehouse
from metaeval.runs.engine import signatures

from .conftest import run_cli


@pytest.fixture
def grid(tmp_path):
    """7 systems x 8 inputs, three ROUGE variants and a human score, a few cells missing."""
    rng = np.random.default_rng(21)
    human = rng.normal(size=(7, 8))
    cols = {"rouge-1.f1": human + rng.normal(scale=0.6, size=human.shape),
            "rouge-2.recall": human + rng.normal(scale=1.2, size=human.shape),
            "rouge-l.precision": rng.normal(size=human.shape)}
    holes = rng.random(human.shape) < 0.1
    lines = [f"s{s},{i},{','.join(repr(float(c[s, i])) for c in cols.values())},{float(human[s, i])!r}"
             for s in range(7) for i in range(8) if not holes[s, i]]
    for c in (*cols.values(), human):
        c[holes] = np.nan
    csv = tmp_path / "grid.csv"
    csv.write_text(f"system,input,{','.join(cols)},human\n" + "\n".join(lines) + "\n")
    db = tmp_path / "g.duckdb"
    Store.create(db).close()
    run_cli(db, "ingest", "table", csv, "--dataset", "g", "--human", "human")
    return db, cols, human


def _agg(A, how):
    """Each system's median or mean over its cells, one row at a time (numpy)."""
    return np.array([(np.median if how == "median" else np.mean)(r[~np.isnan(r)]) for r in A])


def _williams_p(r12, r13, r23, n):
    """Two-sided p of Williams' test, as ../shared/docs/method.md writes it."""
    det = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r13 * r23
    rbar = (r12 + r13) / 2
    t = (r12 - r13) * math.sqrt((n - 1) * (1 + r23) / (2 * (n - 1) / (n - 3) * det + rbar ** 2 * (1 - r23) ** 3))
    return 2 * scipy.stats.t.sf(abs(t), n - 3)


def test_the_williams_formula_of_the_test_gives_method_md_check_value():
    assert _williams_p(0.8, 0.6, 0.7, 20) / 2 == pytest.approx(0.049, abs=5e-4)


def test_correlate_median_is_the_metrics_median_against_the_humans_mean(grid):
    db, cols, human = grid
    scope = ["correlate", "--dataset", "g", "--human", "human", "--metric", "rouge-1.f1", "--level", "system",
             "--coefficient", "pearson"]
    run_cli(db, *scope)
    text = run_cli(db, *scope, "--aggregate", "median").output
    assert "the metric's median over its inputs, the human's mean (--aggregate median)" in " ".join(text.split())
    run_cli(db, *scope, "--aggregate", "median", "--human-aggregate", "median")
    run_cli(db, *scope, "--human-aggregate", "median")
    with Store(db) as wh:
        rows = wh.sql("SELECT * FROM latest_correlations ORDER BY aggregate")
        runs = wh.sql("SELECT parameters, data_fingerprint FROM analysis_runs ORDER BY run_id")
        signed = signatures.with_signatures(wh, rows)
    with Warehouse(db) as wh:
        api = wh.correlate("g", "human", ["rouge-1.f1"], ["system"], ["pearson"], aggregate="median",
                           human_aggregate="median")
    x = cols["rouge-1.f1"]
    expected = {"mean": (_agg(x, "mean"), _agg(human, "mean")), "median": (_agg(x, "median"), _agg(human, "mean")),
                "mean/median": (_agg(x, "mean"), _agg(human, "median")),
                "median/median": (_agg(x, "median"), _agg(human, "median"))}
    assert rows["aggregate"].tolist() == sorted(expected)
    for _, row in rows.iterrows():
        assert row["value"] == pytest.approx(scipy.stats.pearsonr(*expected[row["aggregate"]])[0], abs=1e-12)
    assert api["value"][0] == rows.set_index("aggregate").loc["median/median", "value"]
    conventions = {a: json.loads(c) for a, c in zip(rows["aggregate"], rows["conventions"])}
    assert "aggregate" not in conventions["mean"] and "human_aggregate" not in conventions["mean"]
    assert conventions["median"]["aggregate"] == "median" and "human_aggregate" not in conventions["median"]
    assert conventions["median/median"]["human_aggregate"] == "median"
    assert conventions["mean/median"]["aggregate"] == "mean"
    assert conventions["mean/median"]["human_aggregate"] == "median"
    signature = dict(zip(rows["aggregate"], signed["signature"]))
    assert "agg:" not in signature["mean"] and "|agg:median|" in signature["median"]
    assert "|agg:median/median|" in signature["median/median"]
    parameters = [json.loads(p) for p in runs["parameters"]]
    assert "aggregate" not in parameters[0] and [p["aggregate"] for p in parameters[1:]] == \
        ["median", "median/median", "mean/median"]
    assert runs["data_fingerprint"].nunique() == 4


def test_compare_williams_median_against_the_formula(grid):
    db, cols, human = grid
    run_cli(db, "compare", "--dataset", "g", "--human", "human", "--metric", "rouge-1.f1", "--metric", "rouge-2.recall",
            "--level", "system", "--coefficient", "pearson", "--method", "williams", "--aggregate", "median")
    with Store(db) as wh:
        row = wh.sql("SELECT * FROM latest_hypothesis_tests WHERE metric_a = 'rouge-1.f1'").iloc[0]
    x, y, z = _agg(cols["rouge-1.f1"], "median"), _agg(cols["rouge-2.recall"], "median"), _agg(human, "mean")
    r12, r13, r23 = (abs(scipy.stats.pearsonr(a, b)[0]) for a, b in ((x, z), (y, z), (x, y)))
    assert row["aggregate"] == "median"
    assert row["p_value"] == pytest.approx(_williams_p(r12, r13, r23, 7), abs=1e-12)


def test_pooled_williams_ranks_every_variant_against_the_one_human_vector(grid):
    from metaeval.analyses import optimal_set as osa

    db, cols, human = grid
    out = run_cli(db, "optimal-set", "--dataset", "g", "--human", "human", "--pooled", "--method", "williams",
                  "--format", "json").output
    rows = json.loads(out[out.index("["):])
    assert {r["aggregate"] for r in rows} == {"pooled"} and {r["method"] for r in rows} == {"williams"}
    conventions = rows[0]["conventions"]
    assert "Williams" in conventions["tests"]
    pooled = osa.pooled_ranking(cols, human, "pearson", "williams", alternative="two-sided")
    z = _agg(human, "mean")
    vectors = {v: _agg(cols[v[0]], v[1]) for v in pooled.variants}
    assert len(pooled.variants) == 6
    for i, u in enumerate(pooled.variants):
        assert pooled.scores[i] == pytest.approx(scipy.stats.pearsonr(vectors[u], z)[0], abs=1e-12)
        for j, v in enumerate(pooled.variants):
            if i == j:
                continue
            r12, r13 = abs(scipy.stats.pearsonr(vectors[u], z)[0]), abs(scipy.stats.pearsonr(vectors[v], z)[0])
            r23 = abs(scipy.stats.pearsonr(vectors[u], vectors[v])[0])
            assert pooled.pvalues[i, j] == pytest.approx(_williams_p(r12, r13, r23, 7), abs=1e-12)
            assert pooled.delta[i, j] == pytest.approx(pooled.scores[i] - pooled.scores[j], abs=1e-12)
    optimal = sorted(f"{m} ({a})" for (m, a), v in pooled.optimal.items() if v)
    assert sorted(conventions["optimal_variants"]) == optimal
    again = run_cli(db, "optimal-set", "--dataset", "g", "--human", "human", "--pooled", "--method", "williams",
                    "--k", "500")
    with Store(db) as wh:   # Williams draws nothing: another k is the same ranking, computed once
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs WHERE command = 'optimal-set'")["n"][0] == 1
    assert again.exit_code == 0


def test_the_human_aggregate_refused_off_the_system_level_in_one_line_writing_nothing(grid):
    db, _, _ = grid
    for command in ("correlate", "ci", "compare"):
        result = run_cli(db, command, "--dataset", "g", "--human", "human", "--human-aggregate", "median", ok=False)
        assert result.exit_code != 0 and "Traceback" not in result.output
        assert len(result.output.strip().splitlines()) == 1 and "--human-aggregate" in result.output, result.output
    result = run_cli(db, "rank-change", "--dataset", "g", "--metric", "rouge-1.f1", "--metric", "rouge-2.recall",
                     "--human-aggregate", "median", ok=False)     # two metrics' rankings: no human side
    assert len(result.output.strip().splitlines()) == 1 and "--human-aggregate 'median'" in result.output
    result = run_cli(db, "optimal-set", "--dataset", "g", "--human", "human", "--pooled", "--method", "perm-both",
                     ok=False)
    assert "--method 'williams'" in result.output and len(result.output.strip().splitlines()) == 1
    with Store(db) as wh:
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == 0
