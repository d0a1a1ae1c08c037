"""`metaeval raters` (issue 36 item 3): rater agreement on scores and spans, and the ranking's
stability vs ratings per segment, against independent computations."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from metaeval.analyses import mqm
from metaeval.runs import Warehouse
from tests.conftest import run_cli
from tests.test_mqm_ingest import ROWS, SRC1, SRC2, write


def alpha_by_hand(data, delta):
    """Krippendorff's alpha from its definition: 1 - D_o / D_e over the pairable values (units with
    two or more values), D_o within units weighted 1/(m_u - 1), D_e over every pair of values."""
    values, within = [], 0.0
    for unit in data.T:
        v = unit[~np.isnan(unit)]
        if len(v) < 2:
            continue
        values += list(v)
        within += sum(delta(a, b) for a, b in itertools.permutations(v, 2)) / (len(v) - 1)
    n = len(values)
    between = sum(delta(a, b) for a, b in itertools.permutations(values, 2))
    return 1 - (within / n) / (between / (n * (n - 1)))


def test_score_and_label_alpha_equal_the_definition():
    rng = np.random.default_rng(3)
    for _ in range(20):
        data = rng.integers(0, 5, size=(3, 12)).astype(float)
        data[rng.random(data.shape) < 0.3] = np.nan
        assert mqm.score_alpha(data) == pytest.approx(alpha_by_hand(data, lambda a, b: (a - b) ** 2))
        assert mqm.label_alpha(data) == pytest.approx(alpha_by_hand(data, lambda a, b: float(a != b)))
    assert np.isnan(mqm.score_alpha(np.array([[1.0, np.nan], [np.nan, 2.0]])))    # nothing pairable
    assert np.isnan(mqm.label_alpha(np.zeros((2, 4))))                               # one label only


def test_character_labels_and_pairwise_f1_by_hand():
    seg = mqm.RatedSegment(lengths={"source": 4, "target": 6},
                           spans={"a": [("target", 0, 3, "Major")], "b": [("target", 2, 5, "minor"),
                                                                            ("source", 0, 1, "Minor")]})
    lone = mqm.RatedSegment(lengths={"source": 2, "target": 2}, spans={"a": [("target", 0, 2, "Major")]})
    labels = mqm.character_labels([seg, lone], ["a", "b", "c"])
    assert labels.shape == (3, 10)                    # the lone-rated segment is no unit; source first
    assert labels[0].tolist() == [0, 0, 0, 0, 1, 1, 1, 0, 0, 0]
    assert labels[1].tolist() == [1, 0, 0, 0, 0, 0, 1, 1, 1, 0]
    assert np.isnan(labels[2]).all()
    # a: 3 characters, b: 4, common: 1 -> 2 * 1 / 7
    assert mqm.pairwise_span_f1(labels) == (pytest.approx(2 / 7), pytest.approx(2 / 7))
    severity = mqm.character_labels([seg], ["a", "b"], severity=True)
    assert severity[0, 6] != severity[1, 6] and severity[1, 0] == severity[1, 6]   # Major vs minor; minor = Minor
    with pytest.raises(ValueError):
        mqm.character_labels([mqm.RatedSegment({"target": 2, "source": 0},
                                               {"a": [("target", 0, 3, "x")], "b": []})], ["a", "b"])


def test_rating_stability_properties_and_a_closed_form():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(5, 8, 3))
    values[0, 0, 2] = np.nan
    full = mqm.rating_stability(values, 3, 30, seed=1)
    assert full.taus == pytest.approx(np.ones(30)) and full.top_kept == 1.0 and full.short_cells == 1
    a, b = mqm.rating_stability(values, 1, 50, seed=7), mqm.rating_stability(values, 1, 50, seed=7)
    assert np.array_equal(a.taus, b.taus) and -1 <= a.lower <= a.mean <= a.upper <= 1
    # two systems, one input, two raters: A's ratings 0 and -10 (mean -5), B's -3 and -3 (best).
    # One rating drawn: A scores 0 (A best: tau -1, top lost) or -10 (tau 1, kept), each with 1/2.
    two = np.array([[[0.0, -10.0]], [[-3.0, -3.0]]])
    s = mqm.rating_stability(two, 1, 600, seed=2)
    assert np.all(np.isclose(np.abs(s.taus), 1.0))
    assert s.top_kept == pytest.approx(0.5, abs=0.07) and s.mean == pytest.approx(0.0, abs=0.14)
    assert s.top_kept == pytest.approx((s.mean + 1) / 2)


def test_raters_command_on_the_hand_worked_file(db, tmp_path):
    third = [("C", "1", "r1", SRC1, "Er <v>sagte</v> hallo.", "Accuracy/Mistranslation", "Major"),
             ("C", "2", "r2", SRC2, "Es regnet.", "No-error", "No-error")]
    run_cli(db, "ingest", "mqm", write(tmp_path / "mqm.tsv", ROWS + third), "--dataset", "wmt")
    run_cli(db, "raters", "--dataset", "wmt", "--human", "mqm", "--k", "100")
    with Warehouse(db, read_only=True) as wh:
        agreement = wh.sql("SELECT statistic, value, n_raters, n_units FROM latest_rater_agreement")
        stability = wh.sql("SELECT * FROM latest_rating_stability ORDER BY ratings")
        runs = wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0]
        values = wh.annotations("wmt", "mqm").values
    got = dict(zip(agreement["statistic"], agreement["value"]))
    # segments rated twice: A/1 (-30.1, -5), A/2 (0, -1), B/1 (0, -5)
    scores = np.array([[-30.1, 0, 0], [-5, -1, -5]])
    assert got["score_alpha"] == pytest.approx(alpha_by_hand(scores, lambda a, b: (a - b) ** 2))
    # characters of A/1 (22 + 21), A/2 (9 + 10), B/1 (22 + 15); r1 and r2 mark no character in common
    assert set(agreement["n_units"]) == {3, 99} and got["span_f1_mean"] == 0.0 and got["span_f1_pooled"] == 0.0
    assert stability["ratings"].tolist() == [1, 2] and stability["kendall_mean"].iloc[1] == pytest.approx(1.0)
    assert stability["kendall_mean"].iloc[0] == pytest.approx(
        mqm.rating_stability(values, 1, 100, seed=0).mean)
    run_cli(db, "raters", "--dataset", "wmt", "--human", "mqm", "--k", "100")
    with Warehouse(db, read_only=True) as wh:
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"][0] == runs          # nothing recomputed


def test_raters_print_their_rows_in_one_order(db, tmp_path):
    """Issue 48 item 15: raters printed the statistics and the numbers of ratings in the store's
    order (2 before 1 on one dataset, after on another); now the statistics in their declared
    order and the ratings ascending, whatever the store returns."""
    import pandas as pd

    from metaeval.runs.mt import raters

    third = [("C", "1", "r1", SRC1, "Er <v>sagte</v> hallo.", "Accuracy/Mistranslation", "Major"),
             ("C", "2", "r2", SRC2, "Es regnet.", "No-error", "No-error")]
    run_cli(db, "ingest", "mqm", write(tmp_path / "mqm.tsv", ROWS + third), "--dataset", "wmt")
    text = run_cli(db, "--full-width", "raters", "--dataset", "wmt", "--human", "mqm", "--k", "20").output
    shown = [w for line in text.splitlines() for w in line.split() if w in raters.STATISTICS]
    assert shown == list(raters.STATISTICS)
    stability = text[text.index("rating_stability"):].splitlines()
    assert [line.split()[2] for line in stability[2:4]] == ["1", "2"]
    shuffled = {raters.AGREEMENT: pd.DataFrame({"subset": "", "statistic": list(reversed(raters.STATISTICS))}),
                raters.STABILITY: pd.DataFrame({"subset": "", "ratings": [3, 1, 2]})}
    again = raters.ordered(shuffled)
    assert list(again[raters.AGREEMENT]["statistic"]) == list(raters.STATISTICS)
    assert list(again[raters.STABILITY]["ratings"]) == [1, 2, 3]
