"""The CSV value check of the staged ingest (issue 15): a value matched by the plain-number
pattern is cast as it is, without the trim; brute force over short strings shows that this
changes nothing — same strings accepted, same numbers — and agrees with the Python reader."""

from __future__ import annotations

import itertools

import pytest

from metaeval.connection import duckdb_connect
from metaeval.errors import InputError
from metaeval.ingest.common import number_text
from metaeval.ingest.table_staged import _NUMBER_SQL, _PLAIN_NUMBER_SQL

ALPHABET = "01.e+- \t"
SPACES = " \t\r\n\f\v"


def test_plain_pattern_shortcut_gives_the_trimmed_value():
    strings = ["".join(p) for n in range(1, 6) for p in itertools.product(ALPHABET, repeat=n)]
    con = duckdb_connect()
    con.execute("CREATE TABLE s AS SELECT unnest(?) AS v", [strings])
    rows = con.execute(
        f"""SELECT v,
                   CASE WHEN regexp_full_match(v, '{_NUMBER_SQL}') THEN TRY_CAST(trim(v, '{SPACES}') AS DOUBLE) END,
                   CASE WHEN regexp_full_match(v, '{_PLAIN_NUMBER_SQL}') THEN TRY_CAST(v AS DOUBLE)
                        WHEN regexp_full_match(v, '{_NUMBER_SQL}') THEN TRY_CAST(trim(v, '{SPACES}') AS DOUBLE) END
            FROM s""").fetchall()
    assert len(rows) == len(strings)
    shortcut = 0
    for v, before, after in rows:
        assert before == after, v
        try:
            expected = number_text(v, "f", 1, "value")
        except InputError:
            expected = None
        assert after == expected, v  # what the Python reader reads, or nothing where it refuses
        shortcut += v.strip(SPACES) == v and after is not None
    assert shortcut > 100  # the shortcut is taken


@pytest.mark.parametrize("value", ["0.5", "-1e-3", ".5", "5.", "+2", "1E+10"])
def test_plain_numbers_take_the_shortcut(value):
    con = duckdb_connect()
    assert con.execute(f"SELECT regexp_full_match(?, '{_PLAIN_NUMBER_SQL}')", [value]).fetchall()[0][0]
