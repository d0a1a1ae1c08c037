"""Pyramid scores from content units (001 Eq. 1, 002 §4.2) and `metaeval ingest units`."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from metaeval.analyses import pyramid
from metaeval.runs import Warehouse
from tests.conftest import digest, run_cli


def brute_ideal(weight, x):
    """The largest weight any x units of the pyramid can have (every subset tried)."""
    return max((sum(c) for c in itertools.combinations(weight, x)), default=0)


def test_ideal_summary_scores_one_and_eq1_by_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(200):
        u = int(rng.integers(1, 8))
        weight = rng.integers(1, 5, size=u).astype(float)
        present = rng.integers(0, 2, size=u).astype(float)
        x = int(present.sum())
        expected = 0.0 if x == 0 else (weight * present).sum() / brute_ideal(weight, x)
        assert pyramid.pyramid_score(present, weight) == pytest.approx(expected, rel=1e-14)
        # the tiered form with P_max equals Eq. 1 for integer (tier) weights
        assert pyramid.tiered_score(present, weight) == pytest.approx(expected, rel=1e-14)
        assert pyramid.lite_recall(present) == x / u
        top = np.zeros(u)
        top[np.argsort(-weight, kind="stable")[:max(x, 1)]] = 1           # an ideal summary
        assert pyramid.pyramid_score(top, weight) == pytest.approx(1.0)


def test_tiered_needs_integer_weights_and_majority_is_strict():
    assert np.isnan(pyramid.tiered_score([1, 0], [1.5, 2.0]))
    marks = np.array([[1, 1, 0, 1], [1, 0, 0, 1], [0, 1, 0, 1], [1, 0, 1, 0]])   # 4 annotators x 4 units
    assert pyramid.majority(marks).tolist() == [1.0, 0.0, 0.0, 1.0]            # 3/4, 2/4 (tie), 1/4, 3/4
    with pytest.raises(ValueError):
        pyramid.pyramid_score([1, 2], [1, 1])


ROWS = """input,system,unit,present,annotator,weight
d1,s1,u1,1,a,4
d1,s1,u2,N,a,2
d1,s1,u3,y,a,1
d1,s1,u1,1,b,4
d1,s1,u2,1,b,2
d1,s1,u3,0,b,1
d1,s2,u1,0,a,4
d1,s2,u2,1,a,2
d1,s2,u3,0,a,1
d1,s2,u1,0,b,4
d1,s2,u2,1,b,2
d1,s2,u3,1,b,1
"""


def test_ingest_units_majority_and_mean(db, tmp_path):
    path = tmp_path / "units.csv"
    path.write_text(ROWS)
    assert "inserted 6" in run_cli(db, "ingest", "units", path, "--dataset", "pyr").output
    with Warehouse(db, read_only=True) as wh:
        m = wh.matrix("pyr", ["units.lite", "units.pyramid", "units.pyramid-tiered"])
        s1, s2 = m.systems.index("s1"), m.systems.index("s2")
        # s1: u1 marked by both (present), u2 and u3 by one of two (a tie: absent)
        assert m["units.lite"][s1, 0] == pytest.approx(1 / 3) and m["units.pyramid"][s1, 0] == 1.0
        assert m["units.pyramid"][s2, 0] == 0.5 and m["units.pyramid-tiered"][s2, 0] == 0.5
    run_cli(db, "ingest", "units", path, "--dataset", "pyr2", "--combine", "mean", "--prefix", "scu")
    with Warehouse(db, read_only=True) as wh:
        a = wh.annotations("pyr2", "scu.pyramid")
        s1 = a.systems.index("s1")
        # annotator a: {u1, u3} -> (4+1)/(4+2); b: {u1, u2} -> 6/6; the summary's value is their mean
        assert a.annotators == ("a", "b") and a.values[s1, 0].tolist() == pytest.approx([5 / 6, 1.0])
        assert wh.matrix("pyr2", "scu.pyramid")["scu.pyramid"][s1, 0] == pytest.approx((5 / 6 + 1) / 2)


def test_a_byte_order_mark_is_read_as_every_ingest_reads_it(db, tmp_path):
    # issue 48 item 3: the one reader rule (common.text_lines) of table, preferences and mqm
    plain, marked = tmp_path / "plain.csv", tmp_path / "marked.csv"
    plain.write_text(ROWS)
    marked.write_bytes(b"\xef\xbb\xbf" + ROWS.encode())
    run_cli(db, "ingest", "units", plain, "--dataset", "p1")
    assert "inserted 6" in run_cli(db, "ingest", "units", marked, "--dataset", "p2").output
    with Warehouse(db, read_only=True) as wh:
        one, two = (wh.matrix(d, ["units.lite", "units.pyramid"]) for d in ("p1", "p2"))
        assert one.systems == two.systems
        for m in ("units.lite", "units.pyramid"):
            np.testing.assert_array_equal(one[m], two[m])
    latin = tmp_path / "latin.csv"
    latin.write_bytes(ROWS.replace("s2", "s\xe9").encode("latin-1"))
    result = run_cli(db, "ingest", "units", latin, "--dataset", "p3", ok=False)
    assert result.exit_code != 0 and "latin.csv:" in result.output and "not UTF-8 text" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_prefix_follows_the_rule_for_names(db, tmp_path):
    path = tmp_path / "units.csv"
    path.write_text(ROWS)
    before = digest(db)
    result = run_cli(db, "ingest", "units", path, "--dataset", "pyr", "--prefix", "p\x1f", ok=False)
    assert result.exit_code != 0 and "control character U+001F" in result.output
    assert digest(db) == before


@pytest.mark.parametrize("text, words", [
    ("input,system,unit,present\nd1,s1,u1,maybe\n", ":2: field 'present'"),
    ("input,system,unit,present,weight\nd1,s1,u1,1,2\nd1,s2,u1,0,3\n", ":3: field 'weight'"),
    ("input,system,unit,present\nd1,s1,u1,1\nd1,s1,u2,0\nd1,s2,u1,1\n", "not judged on unit 'u2'"),
    ("input,system,unit,present\nd1,s1,u1,1\nd1,s1,u1,0\n", ":3: field 'unit'"),
    ("input,system,present\nd1,s1,1\n", "field 'unit': missing column"),
    ("input,system,unit,present,weight\nd1,s1,u1,1,0\n", "weight must be > 0"),
])
def test_refused_by_file_line_and_field(db, tmp_path, text, words):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    before = digest(db)
    result = run_cli(db, "ingest", "units", path, "--dataset", "pyr", ok=False)
    assert result.exit_code != 0 and words in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert digest(db) == before
