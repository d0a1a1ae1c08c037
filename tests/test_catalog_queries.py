"""The catalog queries of the light commands (issue 47 item 5): ``schema/dataset_sizes.sql``
(``datasets``), ``measure_coverage.sql`` and ``measure_duplicates_of.sql`` (``measures``) give the
rows, column names and SQL types of the views they replace (``dataset_summary``,
``measure_summary``, ``measure_duplicates``), and those rows equal a computation in Python from the
stored tables, on small warehouses written row by row: several datasets, measures without cells,
judgments of several annotators, partial coverage, lower-is-better measures, identical and affine
duplicates, constant measures and ties."""

from __future__ import annotations

import math
import random
from collections import defaultdict

import duckdb
import pytest

from metaeval import Store, schema


def _fill(con: duckdb.DuckDBPyConnection, seed: int, full: bool = False) -> None:
    """A random warehouse of 1-3 datasets written into the tables themselves; ``full``: every
    measure on every cell of its dataset (a grid the measures share), some nearly affine."""
    rng = random.Random(seed)
    for d in range(rng.randint(1, 3)):
        (dataset_id,) = con.execute("INSERT INTO datasets (name) VALUES (?) RETURNING dataset_id", [f"d{d}"]).fetchone()
        systems = [con.execute("INSERT INTO systems (dataset_id, name) VALUES (?, ?) RETURNING system_id",
                               [dataset_id, f"s{i}"]).fetchone()[0] for i in range(rng.randint(0, 5))]
        inputs = [con.execute("INSERT INTO inputs (dataset_id, name) VALUES (?, ?) RETURNING input_id",
                              [dataset_id, f"i{i}"]).fetchone()[0] for i in range(rng.randint(0, 6))]
        for s in systems:
            for i in inputs:
                if rng.random() < 0.5:
                    con.execute("INSERT INTO summaries VALUES (?, ?, 'text')", [s, i])
        grids = []          # earlier measures' values, to derive duplicates from
        for m in range(rng.randint(0, 7)):
            cells = [(s, i) for s in systems for i in inputs if full or rng.random() < 0.8]
            kind, direction, values = _values(rng, cells, grids, full)
            grids.append((kind, direction, values))
            (measure_id,) = con.execute(
                "INSERT INTO measures (dataset_id, name, kind, direction, scale) VALUES (?, ?, ?, ?, ?) "
                "RETURNING measure_id", [dataset_id, f"m{rng.randint(0, 99):02d}.{m}", kind, direction,
                                         rng.choice([None, "0..1"])]).fetchone()
            runs = kind == "automatic" and rng.random() < 0.4      # a second run (replicate 1) of some cells
            for (s, i), v in values.items():
                if kind == "automatic":
                    con.execute("INSERT INTO scores (system_id, input_id, measure_id, value) VALUES (?, ?, ?, ?)", [s, i, measure_id, v])
                    if runs and rng.random() < 0.5:
                        con.execute("INSERT INTO scores (system_id, input_id, measure_id, value, replicate) "
                                    "VALUES (?, ?, ?, ?, 1)", [s, i, measure_id, rng.choice([v, rng.random()])])
                else:
                    n = rng.randint(1, 3)                   # annotators around v
                    for a, offset in enumerate({1: [0], 2: [-0.5, 0.5], 3: [-0.5, 0, 0.5]}[n]):
                        con.execute("INSERT INTO judgments VALUES (?, ?, ?, ?, ?)",
                                    [s, i, measure_id, f"a{a}", v + offset])


def _values(rng: random.Random, cells: list, grids: list[tuple[str, str, dict]],
            nearly: bool = False) -> tuple[str, str, dict]:
    """The kind, direction and values of a new measure on ``cells``: random, constant, with ties,
    or derived from an earlier measure (of its kind: identical, affine, or negated with the other
    direction) on the cells both have, a random value on one more cell at times; ``nearly``: also
    affine plus noise that puts Pearson's r near the threshold 1 - 1e-9, on either side."""
    how = rng.choice(["random", "ties", "constant", "copy", "copy", "affine", "negated"] + ["nearly"] * (2 * nearly))
    if how == "nearly" and grids:
        kind, direction, base = rng.choice(grids)
        noise = rng.choice([1e-6, 3e-6, 1e-5, 3e-5, 1e-4])
        return kind, direction, {c: base[c] * 0.5 + 2 + rng.gauss(0, noise) for c in cells if c in base}
    if how == "nearly":
        how = "random"
    kind, direction = rng.choice(["automatic", "human"]), rng.choice(["higher", "higher", "lower"])
    if how in ("copy", "affine", "negated") and grids:
        kind, direction, base = rng.choice(grids)
        scale, shift = {"copy": (1, 0), "affine": (0.5, 2), "negated": (-3, 1)}[how]
        if how == "negated":
            direction = {"higher": "lower", "lower": "higher"}[direction]
        values = {c: base[c] * scale + shift for c in cells if c in base}
        if rng.random() < 0.3 and cells:
            values[rng.choice(cells)] = rng.random()
        return kind, direction, values
    if how == "constant":
        return kind, direction, dict.fromkeys(cells, 0.25)
    if how == "ties":
        return kind, direction, {c: float(rng.randint(1, 3)) for c in cells}
    return kind, direction, {c: rng.random() for c in cells}


def _tables(con):
    """The stored rows the Python computations start from."""
    datasets = con.execute("SELECT dataset_id, name, created_at FROM datasets").fetchall()
    systems = con.execute("SELECT system_id, dataset_id FROM systems").fetchall()
    inputs = con.execute("SELECT input_id, dataset_id FROM inputs").fetchall()
    measures = con.execute("SELECT measure_id, dataset_id, name, kind, direction, scale FROM measures").fetchall()
    summaries = con.execute("SELECT system_id FROM summaries").fetchall()
    cells = defaultdict(dict)       # measure_id -> (system, input) -> (value, annotators)
    runs = defaultdict(list)        # a score cell's runs: read as their mean (view score_means)
    for s, i, m, v in con.execute("SELECT system_id, input_id, measure_id, value FROM scores").fetchall():
        runs[m, s, i].append(v)
    for (m, s, i), vs in runs.items():
        cells[m][s, i] = (sum(vs) / len(vs), 1)
    judged = defaultdict(list)
    for s, i, m, v in con.execute("SELECT system_id, input_id, measure_id, value FROM judgments").fetchall():
        judged[m, s, i].append(v)
    for (m, s, i), vs in judged.items():
        cells[m][s, i] = (sum(vs) / len(vs), len(vs))
    return datasets, systems, inputs, measures, summaries, cells


def _dataset_sizes(con) -> list[tuple]:
    datasets, systems, inputs, measures, summaries, _ = _tables(con)
    system_dataset = dict(systems)
    out = []
    for dataset_id, name, created_at in sorted(datasets, key=lambda d: d[1]):
        out.append((name, sum(d == dataset_id for _, d in systems), sum(d == dataset_id for _, d in inputs),
                    sum(m[1] == dataset_id and m[3] == "automatic" for m in measures),
                    sum(m[1] == dataset_id and m[3] == "human" for m in measures),
                    sum(system_dataset[s] == dataset_id for (s,) in summaries), created_at))
    return out


def _coverage(con, dataset: str, kind: str | None) -> list[tuple]:
    datasets, _, _, measures, _, cells = _tables(con)
    ids = {name: i for i, name, _ in datasets}
    out = []
    for m, d, name, k, direction, scale in measures:
        if d != ids.get(dataset) or kind not in (None, k):
            continue
        c = cells[m]
        out.append((dataset, name, k, direction, scale, len(c), len({s for s, _ in c}), len({i for _, i in c}),
                    max((n for _, n in c.values()), default=None)))
    return sorted(out, key=lambda r: (r[2], r[1]))


def _pearson(x: list[float], y: list[float]) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx, syy = sum((a - mx) ** 2 for a in x), sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


def _duplicates(con, dataset: str) -> list[tuple]:
    """measure_duplicates' rule (16_duplicates.sql) in Python: the first measure by name of the
    same kind, earlier by name, sharing >= 2 cells, both varying there, the same values or r >= 1 - 1e-9."""
    datasets, _, _, measures, _, cells = _tables(con)
    ids = {name: i for i, name, _ in datasets}
    mine = sorted((m for m in measures if m[1] == ids.get(dataset)), key=lambda m: m[2])
    oriented = {m[0]: {c: (-v if m[4] == "lower" else v) for c, (v, _) in cells[m[0]].items()} for m in mine}
    out = []
    for a in mine:
        for b in mine:
            if not (b[2] < a[2] and b[3] == a[3]):
                continue
            shared = sorted(oriented[a[0]].keys() & oriented[b[0]].keys())
            x, y = [oriented[a[0]][c] for c in shared], [oriented[b[0]][c] for c in shared]
            if len(shared) < 2 or min(x) == max(x) or min(y) == max(y):
                continue
            if x == y or _pearson(x, y) >= 1 - 1e-9:
                out.append((dataset, a[2], b[2], a[3], "identical" if x == y else "affine", len(shared)))
                break
    return out


def _run(con, sql: str, params=None) -> tuple[list[tuple], list[tuple[str, str]]]:
    """The rows, and (name, SQL type) of each column."""
    result = con.execute(sql, params)
    return result.fetchall(), [(d[0], str(d[1])) for d in result.description]


@pytest.fixture(scope="module")
def warehouses(tmp_path_factory):
    paths = []
    for seed in range(8):
        path = tmp_path_factory.mktemp("catalog") / f"wh{seed}.duckdb"
        with Store.create(path) as wh:
            _fill(wh.con, seed)
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def grids(tmp_path_factory):
    """Warehouses whose measures share their dataset's grid: the sketched query settles pairs there."""
    paths = []
    for seed in range(100, 112):
        path = tmp_path_factory.mktemp("grids") / f"wh{seed}.duckdb"
        with Store.create(path) as wh:
            _fill(wh.con, seed, full=True)
        paths.append(path)
    return paths


def test_dataset_sizes_are_the_views_rows_and_counted_in_python(warehouses):
    for path in warehouses:
        with Store(path, read_only=True) as wh:
            rows, columns = _run(wh.con, schema.read("dataset_sizes"))
            assert (rows, columns) == _run(wh.con, "SELECT * FROM dataset_summary"), path
            assert rows == _dataset_sizes(wh.con)


def test_measure_coverage_is_the_views_rows_and_counted_in_python(warehouses):
    seen = set()
    for path in warehouses:
        with Store(path, read_only=True) as wh:
            for dataset in ("d0", "d1", "d2", "none"):
                for kind in (None, "automatic", "human"):
                    rows, columns = _run(wh.con, schema.read("measure_coverage"), {"dataset": dataset, "kind": kind})
                    view = _run(wh.con, "SELECT * FROM measure_summary WHERE dataset = ? AND (? IS NULL OR kind = ?)",
                                [dataset, kind, kind])
                    assert (rows, columns) == view, (path, dataset, kind)
                    assert rows == _coverage(wh.con, dataset, kind)
                    seen |= {(r[5] == 0, r[8] or 0) for r in rows}
    assert {(True, 0), (False, 1), (False, 2), (False, 3)} <= seen     # no cells, 1-3 annotators


@pytest.mark.parametrize("script", ["measure_duplicates_of", "measure_duplicates_sketched"])
@pytest.mark.parametrize("which", ["warehouses", "grids"])
def test_measure_duplicates_of_is_the_views_rows_and_found_in_python(script, which, request):
    """Both scripts (the self-join; the sketch, then the self-join of the pairs it did not settle)
    give the view's rows and Python's, on partly covered measures and on shared grids."""
    relations = set()
    for path in request.getfixturevalue(which):
        with Store(path, read_only=True) as wh:
            for dataset in ("d0", "d1", "d2", "none"):
                rows, columns = _run(wh.con, schema.read(script), {"dataset": dataset})
                view = _run(wh.con, "SELECT * FROM measure_duplicates WHERE dataset = ? ORDER BY measure", [dataset])
                assert rows == view[0], (path, dataset)
                assert [c for c, _ in columns] == [c for c, _ in view[1]]
                assert rows == _duplicates(wh.con, dataset)
                relations |= {r[4] for r in rows}
    assert relations == {"identical", "affine"}


def _settled(con, dataset: str) -> tuple[int, int]:
    """(pairs of measures of the same kind, pairs the sketched script settles without the self-join)."""
    sql = schema.read("measure_duplicates_sketched")
    head = sql[:sql.index("SELECT $dataset AS dataset")]
    return con.execute(head + "SELECT (SELECT count(*) FROM spread AS a JOIN spread AS b ON b.human = a.human "
                       "AND b.pos < a.pos), (SELECT count(*) FROM settled)", {"dataset": dataset}).fetchone()


def test_the_sketch_settles_most_pairs_on_a_shared_grid(grids):
    """Not a vacuous comparison: on shared grids most pairs are settled by the sketch (the rest,
    duplicates and near ones, by the self-join), and no pair of a duplicate row is among them."""
    pairs = settled = 0
    for path in grids:
        with Store(path, read_only=True) as wh:
            for dataset in ("d0", "d1", "d2"):
                p, s = _settled(wh.con, dataset)
                pairs, settled = pairs + p, settled + s
    assert pairs > 50 and settled > 0.5 * pairs, (pairs, settled)


def test_the_script_is_chosen_by_the_pairs_of_cells():
    from metaeval.core import SKETCH_PAIRS, duplicates_script

    assert duplicates_script([], []) == "measure_duplicates_of"
    assert duplicates_script(["automatic"] * 34 + ["human"] * 8, [1600] * 42) == "measure_duplicates_of"  # SummEval
    assert duplicates_script(["automatic"] * 40, [1600] * 40) == "measure_duplicates_sketched"
    assert duplicates_script(["automatic", "human"] * 10, [SKETCH_PAIRS] * 20) == "measure_duplicates_sketched"
    assert duplicates_script(["automatic", "human"], [SKETCH_PAIRS] * 2) == "measure_duplicates_of"   # no pair


@pytest.mark.parametrize("sketch", [False, True])
def test_the_measures_command_prints_the_same_with_either_script(grids, sketch, monkeypatch):
    """Store.measures with duplicates through either script (SKETCH_PAIRS forced), plain and as a
    DataFrame: the view's duplicates."""
    from metaeval import core

    monkeypatch.setattr(core, "SKETCH_PAIRS", 0 if sketch else 10 ** 18)
    for path in grids:
        with Store(path, read_only=True) as wh:
            for dataset in [r[0] for r in wh.con.execute("SELECT name FROM datasets").fetchall()]:
                plain = wh.measures(dataset, duplicates=True, plain=True)
                frame = wh.measures(dataset, duplicates=True)
                dups = dict(wh.con.execute("SELECT measure, duplicate_of FROM measure_duplicates WHERE dataset = ?",
                                           [dataset]).fetchall())
                assert [dups.get(m) for m in plain.column("measure")] == [
                    None if isinstance(v, float) else v for v in plain.column("duplicate_of")]
                assert [dups.get(m) for m in frame["measure"]] == [
                    None if isinstance(v, float) else v for v in frame["duplicate_of"]]


def test_the_measures_command_prints_the_same_with_the_new_queries(warehouses, monkeypatch):
    """Store.measures with duplicates, plain and as a DataFrame: the rows of the views."""
    for path in warehouses:
        with Store(path, read_only=True) as wh:
            for dataset in [r[0] for r in wh.con.execute("SELECT name FROM datasets").fetchall()]:
                plain = wh.measures(dataset, duplicates=True, plain=True)
                frame = wh.measures(dataset, duplicates=True)
                assert list(frame.columns) == list(plain.columns)
                assert len(frame) == len(plain)
                dups = dict(wh.con.execute("SELECT measure, duplicate_of FROM measure_duplicates WHERE dataset = ?",
                                           [dataset]).fetchall())
                assert [dups.get(m) for m in plain.column("measure")] == [
                    None if isinstance(v, float) else v for v in plain.column("duplicate_of")]
