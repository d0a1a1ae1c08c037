"""The light path of the commands that print a table (issue 27 item 6): rows fetched without pandas
(metaeval.rows) and printed by metaeval.present.plain exactly as present.tables prints DuckDB's
DataFrame of the same query; and the light commands do not import pandas or numpy."""

from __future__ import annotations

import random
import subprocess
import sys

import duckdb
import pytest

from metaeval.present import plain, tables
from metaeval.rows import Rows, fetch_rows, left_join
from tests.conftest import run_cli

FORMATS = ("text", "json", "csv")


def _literal(v, sql_type: str) -> str:
    if v is None:
        return f"NULL::{sql_type}"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + f"'::{sql_type}"
    if isinstance(v, float) and v != v:
        return f"'nan'::{sql_type}"
    if isinstance(v, float) and v in (float("inf"), float("-inf")):
        return f"'{'-' if v < 0 else ''}inf'::{sql_type}"
    return f"{v!r}::{sql_type}"


def _query(columns: dict[str, tuple[str, list]]) -> str:
    """A VALUES query of the columns {name: (sql type, values)}."""
    names = list(columns)
    n = len(next(iter(columns.values()))[1])
    rows = [", ".join(_literal(columns[c][1][i], columns[c][0]) for c in names) for i in range(n)]
    quoted = ", ".join('"' + c.replace('"', '""') + '"' for c in names)
    return f"SELECT * FROM (VALUES ({'), ('.join(rows)})) AS t({quoted})"


def _same(con, query: str) -> Rows:
    rows = fetch_rows(con.execute(query))
    assert rows.plain, query
    frame = con.execute(query).df()
    for fmt in FORMATS:
        assert plain.render(rows, fmt) == tables.render(frame, fmt), (fmt, query, frame.dtypes.to_dict())
    return rows


@pytest.fixture
def con():
    c = duckdb.connect()
    c.execute("SET TimeZone = 'UTC'")
    yield c
    c.close()


FLOATS = [
    [0.5598041343, 0.311764705882, 0.15, -0.2],
    [1.0, 2.0, 16.0, 100.0],
    [float("nan"), None, 0.25, 3.0],
    [1e-7, 0.5, -0.25, 2.0],                          # a small value: scientific notation
    [123456789.123, 0.5, 2.0, -1.0],                  # large and too long: scientific
    [2e6, 3.0, 1.0, 0.0],                             # large but short: fixed
    [0.0, -0.0, 0.0, 0.0],
    [float("inf"), float("-inf"), 1.5, None],
    [1.23456789e-5, 1e300, -1e-300, 42.0],
    [None, None, None, None],
]


@pytest.mark.parametrize("values", FLOATS)
def test_floats_print_as_pandas_prints_them(con, values):
    _same(con, _query({"value": ("DOUBLE", values), "name": ("VARCHAR", ["a", "b", "c", "d"])}))


def test_random_floats_print_as_pandas_prints_them(con):
    rng = random.Random(7)
    for _ in range(40):
        scale = 10 ** rng.randint(-9, 9)
        values = [rng.choice([None, float("nan"), round(rng.uniform(-1, 1) * scale, rng.randint(0, 12)),
                              rng.uniform(-1, 1) * scale, float(rng.randint(-50, 50))]) for _ in range(5)]
        _same(con, _query({"x": ("DOUBLE", values)}))


@pytest.mark.parametrize("sql_type, values", [
    ("BIGINT", [1, -20, 300, 4]), ("BIGINT", [1, None, 3, None]), ("BIGINT", [None] * 4),
    ("INTEGER", [16, 100, 0, -5]), ("INTEGER", [16, None, 0, -5]), ("SMALLINT", [1, 2, None, 4]),
    ("UBIGINT", [1, 2**63, 3, 4]),
    ("BOOLEAN", [True, False, True, False]), ("BOOLEAN", [True, None, False, None]),
    ("VARCHAR", ["summeval", "a|b", "x,y", 'say "hi"']), ("VARCHAR", ["a", None, "c", None]),
    ("VARCHAR", [None] * 4), ("VARCHAR", ["tab\there", "new\nline", "cr\rx", "ünïcödé"]),
    ("VARCHAR", ["x" * 49, "y" * 50, "z" * 51, "w" * 80]), ("VARCHAR", ["", " lead", "trail ", "a  b"]),
    ("JSON", ['{"a": 1}', None, '[1, 2]', '"s"']),
    ("TIMESTAMPTZ", ["2026-11-25 02:11:06.195736+00", "2026-11-25 02:11:06+00", None, "2020-01-01 00:00:00+00"]),
    ("TIMESTAMPTZ", ["2026-11-25 02:11:06.5+00", "2026-11-25 02:11:06+00", "0999-01-01 00:00:00+00", None]),
    ("TIMESTAMPTZ", ["2026-11-25 02:11:06+00", "2026-11-25 02:11:00+00", "2026-11-25 02:11:00.001+00", None]),
    ("TIMESTAMPTZ", ["2026-01-01 00:00:00+00", "2026-01-02 00:00:00+00", "2026-01-03 00:00:00+00",
                     "2026-01-04 00:00:00+00"]),
])
def test_each_kind_prints_as_pandas_prints_it(con, sql_type, values):
    query = _query({"n": ("INTEGER", [1, 2, 3, 4]), "a column with a long name": (sql_type, values),
                    "conventions": ("JSON", ['{"k": [1, 2]}', '"text"', None, "{}"])})
    _same(con, query)
    _same(con, query + " WHERE n > 10")   # no rows
    _same(con, query + " WHERE n = 2")    # one row


def test_result_tables_print_as_pandas_prints_them(shared_warehouse, tmp_path):
    """Every view the light commands read, on the shared warehouse (SummEval and REALSumm)."""
    con = duckdb.connect(str(shared_warehouse), read_only=True)
    try:
        for view in ("dataset_summary", "measure_summary", "measure_duplicates", "system_order"):
            _same(con, f"SELECT * FROM {view} ORDER BY ALL")
        _same(con, "SELECT * FROM measure_summary WHERE dataset = 'summeval' AND kind = 'human'")
    finally:
        con.close()


def test_left_join_is_pandas_left_merge(con):
    left = _query({"measure": ("VARCHAR", ["a", "b", "c"]), "n": ("BIGINT", [1, 2, 3])})
    for right in (_query({"measure": ("VARCHAR", ["b"]), "duplicate_of": ("VARCHAR", ["a"]),
                          "relation": ("VARCHAR", ["affine"])}),
                  _query({"measure": ("VARCHAR", ["b"]), "duplicate_of": ("VARCHAR", ["a"]),
                          "relation": ("VARCHAR", ["affine"])}) + " WHERE false"):
        joined = left_join(fetch_rows(con.execute(left)), fetch_rows(con.execute(right)), "measure",
                           ["duplicate_of", "relation"])
        frame = con.execute(left).df().merge(con.execute(right).df()[["measure", "duplicate_of", "relation"]],
                                             on="measure", how="left")
        for fmt in FORMATS:
            assert plain.render(joined, fmt) == tables.render(frame, fmt)


def test_filtered_rows_keep_their_kinds(con):
    """A column's dtype is the one of the whole query even when the rows left are all NULL there."""
    query = _query({"k": ("INTEGER", [1, 2, 3]), "s": ("VARCHAR", ["x", None, None]), "i": ("BIGINT", [None, 5, 6]),
                    "drop": ("DOUBLE", [1.0, 2.0, 3.0])})
    rows = fetch_rows(con.execute(query))
    frame = con.execute(query).df()
    keep = [False, True, True]
    for fmt in FORMATS:
        assert (plain.render(rows.where(keep).without(["drop"]), fmt)
                == tables.render(frame.loc[keep].reset_index(drop=True).drop(columns=["drop"]), fmt))


def test_other_types_are_fetched_as_a_frame(con):
    for query in ("SELECT DATE '2020-01-01' AS d", "SELECT 1.5::DECIMAL(4, 2) AS x", "SELECT [1, 2] AS l",
                  "SELECT 1.5::FLOAT AS f", "SELECT 1 AS a, 2 AS a"):
        rows = fetch_rows(con.execute(query))
        assert not rows.plain and len(rows) == 1, query


LIGHT = [["datasets"], ["measures", "summeval"], ["results", "correlations", "--dataset", "summeval"],
         ["sql", "SELECT * FROM dataset_summary"]]


def test_light_commands_import_neither_pandas_nor_numpy(shared_warehouse):
    """`datasets`, `measures`, `results`, `sql` in text, json and csv: no pandas, numpy or scipy
    (0.3 s of start-up); markdown still uses pandas."""
    code = ("import sys\nfrom metaeval.cli import main\nargs = sys.argv[1:]\n"
            "try:\n    main(args)\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
            "print('LOADED', [m for m in ('pandas', 'numpy', 'pyarrow', 'scipy') if m in sys.modules])")
    for command in LIGHT:
        for fmt in FORMATS:
            args = ["--db", str(shared_warehouse), *command, "--format", fmt]
            out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
            assert out.stdout.rstrip().endswith("LOADED []"), (args, out.stdout[-300:], out.stderr[-300:])
    args = ["--db", str(shared_warehouse), "datasets", "--format", "markdown"]
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    assert "'pandas'" in out.stdout.splitlines()[-1]


_PROBE = ("import sys\nfrom metaeval.cli import main\n"
          "for args in [a.split('\\t') for a in sys.argv[1:]]:\n"
          "    try:\n        main(args)\n    except SystemExit as exc:\n        assert not exc.code, (args, exc.code)\n"
          "    loaded = [m for m in ('pandas', 'numpy', 'pyarrow', 'scipy') if m in sys.modules]\n"
          "    print('LOADED', args[2:], loaded, file=sys.stderr)\n")


def test_light_commands_on_a_small_warehouse_import_no_pandas(db, tmp_path):
    """The quick guard: one process runs each light command (text) on a warehouse with a
    correlation stored, and checks after each that pandas and numpy are still not loaded."""
    table = tmp_path / "t.csv"
    table.write_text("system,input,measure,value\n" + "".join(
        f"s{s},d{d},{m},{(s * 7 + d * 3 + len(m)) % 5}\n" for s in range(3) for d in range(2) for m in ("h", "m")))
    run_cli(db, "ingest", "table", table, "--dataset", "x", "--human", "h")
    run_cli(db, "correlate", "--dataset", "x", "--human", "h", "--level", "system", "--coefficient", "pearson")
    commands = [["--db", str(db), *c] for c in (["datasets"], ["measures", "x"], ["results", "correlations"],
                                                 ["sql", "SELECT * FROM latest_correlations"])]
    out = subprocess.run([sys.executable, "-c", _PROBE, *("\t".join(c) for c in commands)], capture_output=True,
                         text=True, check=True)
    lines = [line for line in out.stderr.splitlines() if line.startswith("LOADED")]
    assert len(lines) == len(commands) and all(line.endswith("[]") for line in lines), out.stderr
    assert "pearson" in out.stdout
