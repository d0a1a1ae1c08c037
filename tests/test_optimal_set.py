"""The optimal set's share per configuration option (issue 33 item 10; Graham 2015, Table 2)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from metaeval import Store
from metaeval.analyses import optimal_set as osa

from .conftest import run_cli

OPTIMAL = {"rouge-2.precision[stem,stop]": True, "rouge-2.recall[stem]": True, "rouge-1.precision": True,
           "rouge-3.precision[stop]": True, "rouge-1.recall": False, "rouge-l.f1[stem,stop]": False,
           "bleu": True}


def test_shares_against_a_hand_count():
    got = {(s.option, s.value): s for s in osa.shares(OPTIMAL)}
    # the optimal ROUGE variants: 4 (bleu is not a variant); by hand:
    expected = {("ngram", "rouge-2"): (2, 2), ("ngram", "rouge-1"): (1, 2), ("ngram", "rouge-3"): (1, 1),
                ("ngram", "rouge-l"): (0, 1), ("stemming", "stemmed"): (2, 3), ("stemming", "not stemmed"): (2, 3),
                ("stopwords", "removed"): (2, 3), ("stopwords", "kept"): (2, 3),
                ("statistic", "precision"): (3, 3), ("statistic", "recall"): (1, 2), ("statistic", "f1"): (0, 1),
                ("aggregate", "mean"): (4, 6)}
    assert set(got) == set(expected)
    for key, (n_optimal, n_variants) in expected.items():
        assert (got[key].n_optimal, got[key].n_variants) == (n_optimal, n_variants), key
        assert got[key].share == n_optimal / 4
    for option in osa.OPTIONS:
        assert sum(s.share for s in got.values() if s.option == option) == pytest.approx(1)


def test_undetermined_winners_give_no_shares_and_no_variant_is_an_error():
    undetermined = osa.shares({**OPTIMAL, "rouge-1.recall": None})
    assert all(math.isnan(s.share) and s.n_optimal is None for s in undetermined)
    assert osa.settings("bleu") is None and osa.settings("rouge-2.recall[stem,stop]", "median") == {
        "ngram": "rouge-2", "stemming": "stemmed", "stopwords": "removed", "statistic": "recall",
        "aggregate": "median"}
    with pytest.raises(ValueError, match="no ranked metric is a ROUGE variant"):
        osa.shares({"bleu": True})


def test_the_command_reads_winners_and_stores_its_rows(tmp_path):
    rng = np.random.default_rng(5)
    metrics = ["rouge-1.recall", "rouge-2.precision[stem]", "rouge-2.recall", "bleu"]
    lines = []
    for s in range(8):
        for i in range(10):
            human = s + rng.normal(scale=0.5)
            values = [human + rng.normal(scale=k) for k in (0.3, 0.5, 3.0, 0.4)]
            lines.append(",".join([f"s{s}", str(i), *map(repr, values), repr(human)]))
    csv = tmp_path / "v.csv"
    csv.write_text("system,input," + ",".join(metrics) + ",human\n" + "\n".join(lines) + "\n")
    db = tmp_path / "o.duckdb"
    Store.create(db).close()
    run_cli(db, "ingest", "table", csv, "--dataset", "v", "--human", "human")
    common = ["--dataset", "v", "--human", "human", "--level", "system", "--coefficient", "pearson",
              "--method", "williams"]
    run_cli(db, "compare", *common)
    run_cli(db, "winners", *common)
    first = run_cli(db, "optimal-set", "--dataset", "v", "--human", "human", "--method", "williams",
                    "--format", "json").output
    run_cli(db, "optimal-set", "--dataset", "v", "--human", "human", "--method", "williams")
    with Store(db, read_only=True) as wh:
        winners = wh.sql("SELECT metric, is_winner FROM latest_winners").set_index("metric")["is_winner"]
        rows = wh.sql("SELECT * FROM latest_optimal_set_shares")
        n_runs = int(wh.sql("SELECT count(*) AS n FROM analysis_runs WHERE command = 'optimal-set'")["n"][0])
    assert n_runs == 1   # the second command reused the rows
    expected = {(s.option, s.value): s.share for s in osa.shares({m: bool(w) for m, w in winners.items()})}
    assert {(r.option, r.value): r.share for r in rows.itertuples()} == expected
    assert json.loads(first[first.index("["):])[0]["dataset"] == "v"
    missing = run_cli(db, "optimal-set", "--dataset", "v", "--human", "human", ok=False)
    assert missing.exit_code != 0 and "run winners first" in missing.output
    # the median's ranking (winners --aggregate median) is a block of its own: its variants' aggregate is the median
    run_cli(db, "compare", *common, "--aggregate", "median")
    run_cli(db, "winners", *common, "--aggregate", "median")
    run_cli(db, "optimal-set", "--dataset", "v", "--human", "human", "--method", "williams")
    with Store(db, read_only=True) as wh:
        won = wh.sql("SELECT metric, is_winner FROM latest_winners WHERE aggregate = 'median'")
        rows = wh.sql("SELECT * FROM latest_optimal_set_shares ORDER BY result_id")
    assert sorted(set(rows["aggregate"])) == ["mean", "median"]
    median = rows[rows["aggregate"] == "median"]
    expected = {(s.option, s.value): s.share for s in osa.shares({m: bool(w) for m, w in zip(won.metric, won.is_winner)},
                                                                 {m: "median" for m in won.metric})}
    assert {(r.option, r.value): r.share for r in median.itertuples()} == expected
    assert expected[("aggregate", "median")] == 1 and ("aggregate", "mean") not in expected
    assert "median over its inputs" in json.loads(median["conventions"].iloc[0])["aggregate"]
    assert {(r.option, r.value): r.share for r in rows[rows["aggregate"] == "mean"].itertuples()}[("aggregate", "mean")] == 1


def test_variants_scored_with_a_prefix_are_variants(tmp_path):
    """``score --grid graham --prefix 'ours:'`` names its variants ``ours:rouge-...``: they are
    read after the prefix (optimal-set refused them: "no ranked metric is a ROUGE variant")."""
    assert osa.settings("ours:rouge-2.recall[stem,stop]") == osa.settings("rouge-2.recall[stem,stop]")
    assert osa.settings("ours-rouge-l.f1", "median") == osa.settings("rouge-l.f1", "median")
    for name in ("ours:bleu", "xrouge-1.recall", "ours:rouge-1.recall[bad]", "ours:rouge-2"):
        assert osa.settings(name) is None, name
    prefixed = {f"ours:{m}": v for m, v in OPTIMAL.items()}
    assert [vars(s) for s in osa.shares(prefixed)] == [vars(s) for s in osa.shares(OPTIMAL)]
    rng = np.random.default_rng(2)
    metrics = ["ours:rouge-1.recall", "ours:rouge-2.precision[stem]", "ours:rouge-2.recall"]
    lines = []
    for s in range(8):
        for i in range(6):
            human = s + rng.normal(scale=0.5)
            lines.append(",".join([f"s{s}", str(i), *(repr(human + rng.normal(scale=k)) for k in (0.3, 0.5, 3.0)),
                                   repr(human)]))
    csv = tmp_path / "p.csv"
    csv.write_text("system,input," + ",".join(metrics) + ",human\n" + "\n".join(lines) + "\n")
    db = tmp_path / "p.duckdb"
    Store.create(db).close()
    run_cli(db, "ingest", "table", csv, "--dataset", "p", "--human", "human")
    common = ["--dataset", "p", "--human", "human", "--level", "system", "--coefficient", "pearson",
              "--method", "williams"]
    run_cli(db, "compare", *common)
    run_cli(db, "winners", *common)
    run_cli(db, "optimal-set", "--dataset", "p", "--human", "human", "--method", "williams")
    with Store(db, read_only=True) as wh:
        winners = wh.sql("SELECT metric, is_winner FROM latest_winners").set_index("metric")["is_winner"]
        rows = wh.sql("SELECT * FROM latest_optimal_set_shares")
    expected = {(s.option, s.value): s.share
                for s in osa.shares({m.removeprefix("ours:"): bool(w) for m, w in winners.items()})}
    assert {(r.option, r.value): r.share for r in rows.itertuples()} == expected and len(expected) == 8
