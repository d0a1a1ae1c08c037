"""metaeval derive: human scores derived from stored ones (Graham 2015 §2, Table 4; Eq. 1)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.stats

from metaeval.analyses import derived
from metaeval.runs import Warehouse
from tests.conftest import digest, run_cli


# --- the formulas ------------------------------------------------------------------------------
def test_means_against_scipy_and_their_order():
    rng = np.random.default_rng(0)
    stack = rng.uniform(0.01, 5, size=(3, 40))
    a = derived.derive("mean", stack).values
    g = derived.derive("geometric", stack).values
    h = derived.derive("harmonic", stack).values
    np.testing.assert_allclose(a, stack.mean(axis=0), rtol=1e-14)
    np.testing.assert_allclose(g, scipy.stats.gmean(stack, axis=0), rtol=1e-12)
    np.testing.assert_allclose(h, scipy.stats.hmean(stack, axis=0), rtol=1e-12)
    assert np.all(h <= g + 1e-12) and np.all(g <= a + 1e-12)          # harmonic <= geometric <= arithmetic
    equal = np.full((2, 3), 4.0)                                       # equal sources: all three equal
    for f in ("mean", "geometric", "harmonic"):
        np.testing.assert_allclose(derived.derive(f, equal).values, 4.0)


def test_zero_and_domain():
    assert derived.derive("harmonic", [[0.0, 2.0], [3.0, 2.0]]).values.tolist() == [0.0, 2.0]
    assert derived.derive("geometric", [[0.0], [3.0]]).values.tolist() == [0.0]
    with pytest.raises(derived.DomainError) as info:
        derived.derive("geometric", [[1.0, 2.0], [3.0, -1.0]])
    assert (info.value.source, info.value.index, info.value.value) == (1, (1,), -1.0)


def test_grade_is_graham_percentages():
    out = derived.derive("grade", [[5, 4, 3, 2, 1, np.nan]]).values   # A..E stored as 5..1
    assert out[:5].tolist() == [100, 75, 50, 25, 0] and np.isnan(out[5])
    with pytest.raises(derived.DomainError):
        derived.derive("grade", [[3.5]])


def test_coverage_is_equation_1():
    pus, e, mus = np.array([3.0, 0.0, 5.0]), np.array([0.5, 0.2, 1.0]), np.array([6.0, 4.0, 5.0])
    np.testing.assert_array_equal(derived.derive("coverage", [pus, e, mus]).values, pus * e / mus)
    with pytest.raises(derived.DomainError) as info:
        derived.derive("coverage", [[1.0], [1.0], [0.0]])
    assert info.value.source == 2


def test_missing_source_is_missing_and_counts_are_checked():
    out = derived.derive("mean", [[1.0, np.nan], [3.0, 4.0]]).values
    assert out[0] == 2.0 and np.isnan(out[1])
    for formula, n in (("mean", 1), ("grade", 2), ("coverage", 2)):
        with pytest.raises(ValueError):
            derived.check_sources(formula, n)


# --- the command -------------------------------------------------------------------------------
def _ingest(db, tmp_path):
    rows = ["system,input,measure,value,annotator"]
    values = {("s1", "i1"): [(4, 2, 0.5), (5, 3, 0.25)], ("s1", "i2"): [(3, 3, 0.4), (2, 5, 1.0)],
              ("s2", "i1"): [(1, 4, 0.1), (5, 5, 0.9)], ("s2", "i2"): [(2, 2, 0.3), (4, 1, 0.6)]}
    for (s, i), per in values.items():
        for a, (q1, q2, cov) in enumerate(per):
            rows += [f"{s},{i},{m},{v},a{a}" for m, v in (("q1", q1), ("q2", q2), ("cov", cov))]
    path = tmp_path / "judgments.csv"
    path.write_text("\n".join(rows) + "\n")
    run_cli(db, "ingest", "table", path, "--dataset", "d", "--human", "*")
    return values


def test_derive_per_annotator_and_per_cell(db, tmp_path):
    values = _ingest(db, tmp_path)
    run_cli(db, "derive", "mlq", "--dataset", "d", "--from", "q1", "--from", "q2", "--as", "mean")
    run_cli(db, "derive", "score", "--dataset", "d", "--from", "mlq", "--from", "cov", "--as", "harmonic",
            "--per", "cell")
    with Warehouse(db, read_only=True) as wh:
        mlq = wh.annotations("d", "mlq")
        s, i = mlq.systems.index("s2"), mlq.inputs.index("i1")
        assert mlq.values[s, i].tolist() == [2.5, 5.0]                      # per annotator: (1+4)/2, (5+5)/2
        score = wh.annotations("d", "score")
        assert score.annotators == ("mean",)
        q = [(a + b) / 2 for a, b, _ in values[("s2", "i1")]]
        c = [x for _, _, x in values[("s2", "i1")]]
        expected = scipy.stats.hmean([np.mean(q), np.mean(c)])
        assert score.values[s, i, 0] == pytest.approx(expected, rel=1e-14)
        options = json.loads(wh.sql("SELECT options FROM ingests WHERE format = 'derive' ORDER BY ingest_id")
                             ["options"].iloc[1])
        assert options == {"formula": "harmonic", "expression": derived.FORMULAS["harmonic"][1],
                           "sources": ["mlq", "cov"], "per": "cell"}


@pytest.mark.parametrize("args, words", [
    (["mlq", "--from", "q1", "--as", "mean"], "two or more"),
    (["g", "--from", "q1", "--as", "grade"], "grade stored as 1..5"),          # q1 holds 1..5: ok; cov is not
    (["q1", "--from", "q2", "--from", "cov", "--as", "mean"], "already has a measure 'q1'"),
    (["x", "--from", "nosuch", "--from", "q2", "--as", "mean"], "no measure 'nosuch'"),
    (["bad\x1fname", "--from", "q1", "--from", "q2", "--as", "mean"], "control character U+001F"),
    ([" lead", "--from", "q1", "--from", "q2", "--as", "mean"], "whitespace around it"),
])
def test_refusals_write_nothing(db, tmp_path, args, words):
    _ingest(db, tmp_path)
    if args[0] == "g":
        args = ["g", "--from", "cov", "--as", "grade"]
    before = digest(db)
    result = run_cli(db, "derive", "--dataset", "d", *args, ok=False)
    assert result.exit_code != 0 and words in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert digest(db) == before
