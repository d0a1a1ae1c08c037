"""The CSV value check of the staged ingest (issues 15 and 37): DuckDB's cast of a field to DOUBLE,
guarded by :func:`text_number_sql`'s substring tests, accepts exactly what the Python reader
(:func:`number_text`) accepts, and reads the same number — brute force over short strings of
number characters, and random text and random doubles printed in several ways."""

from __future__ import annotations

import itertools
import math
import random
import struct

import pytest

from metaeval.connection import duckdb_connect
from metaeval.errors import InputError
from metaeval.ingest.common import MAX_ABS_VALUE, number_text
from metaeval.ingest.table_staged import number_cast_sql, text_number_sql

SPACES = " \t\r\n\f\v"


def _python(text: str) -> float | None:
    try:
        return number_text(text, "f", 1, "value")
    except InputError:
        return None


def _compare(strings: list[str]) -> int:
    """Assert the SQL reading of each string is the Python reader's (refused alike: NULL, or a value
    refused later as not finite or too large); how many are numbers."""
    con = duckdb_connect()
    con.execute("CREATE TABLE s AS SELECT * FROM unnest(?) WITH ORDINALITY AS t(v, i)", [strings])
    rows = con.execute(f"SELECT v, {text_number_sql('v')}, {text_number_sql('v', 'c')} "
                       f"FROM (SELECT *, {number_cast_sql('v')} AS c FROM s) ORDER BY i").fetchall()
    assert all(struct.pack("d", x) == struct.pack("d", y) if x is not None else y is None for _, x, y in rows)
    rows = [(text, value) for text, value, _ in rows]
    assert len(rows) == len(strings)
    numbers = 0
    for text, value in rows:
        expected = _python(text)
        if value is not None and not (math.isfinite(value) and abs(value) <= MAX_ABS_VALUE):
            value = None  # refused by the staged checks after
        assert (value is None) == (expected is None), repr(text)
        if value is not None:  # the same double, bit for bit
            assert struct.pack("d", value) == struct.pack("d", expected), repr(text)
            numbers += 1
    return numbers


def test_every_short_string_of_number_characters_reads_as_python_reads_it():
    strings = ["".join(p) for n in range(1, 6) for p in itertools.product("01.e+-_ \t", repeat=n)]
    assert _compare(strings) > 1000


def test_random_text_and_printed_doubles_read_as_python_reads_them():
    rng = random.Random(37)
    alphabet = list("0123456789" * 3 + ".eE+-_ \t\f\v\x00xXabdfinINFtyTY#$%&'()*/:;<=>?@[]^`{|}~,") + \
        ["\u00a0", "\u0663", "\uff11", "\u2009", "\x85", "\u3000"]
    strings = {"+-1", "-+1", "++1", "--1", " +-1", "+ 1", "+_1", "1_0", "0b101", "0o7", "0x1p3", "1e400", "-1e400",
               "1e-400", "1e150", "1.0000001e150", "inf", "+inf", "+nan", "Infinity", "  -1.5e-3  ", "4.9e-324"}
    while len(strings) < 20_000:
        strings.add("".join(rng.choice(alphabet) for _ in range(rng.choice([1, 2, 3, 4, 6, 10]))))
    for _ in range(5_000):
        x = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if math.isfinite(x):
            strings.update([repr(x), f"{x:.25e}", f"{x:.17g}", f" {x!r}\t"])
    assert _compare(sorted(strings)) > 10_000


@pytest.mark.parametrize("value", ["1_000", "+-1", "1e400", "nan", "-inf", " ", ""])
def test_what_duckdb_alone_would_take_or_store_otherwise_is_refused(value):
    assert _python(value) is None
    [(read,)] = duckdb_connect().execute(f"SELECT {text_number_sql('v')} FROM (SELECT ? AS v)", [value]).fetchall()
    assert read is None or not math.isfinite(read)
