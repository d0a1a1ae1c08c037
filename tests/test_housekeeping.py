"""``metaeval drop measure|dataset`` and ``metaeval rename measure`` (issue 27, item 5): atomic,
refused while results depend on what they change (every table byte-identical after a refusal)
unless --cascade, which removes the dependent result rows and says how many per table."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from metaeval import Store, housekeeping
from metaeval.errors import WarehouseError
from tests.conftest import digest, run_cli

HUMAN = "expert.relevance"


@pytest.fixture(scope="module")
def demo_warehouse(tmp_path_factory) -> Path:
    """Datasets d and e, two demos (4 systems x 5 inputs, 4 metrics), each with its correlations,
    CIs and tests."""
    db = tmp_path_factory.mktemp("demo") / "w.duckdb"
    run_cli(db, "demo", "--dataset", "d", "--systems", "4", "--inputs", "5", "--k", "40")
    run_cli(db, "demo", "--dataset", "e", "--systems", "4", "--inputs", "5", "--k", "40", "--seed", "1")
    return db


@pytest.fixture
def demo(demo_warehouse, tmp_path) -> Path:
    db = tmp_path / "w.duckdb"
    shutil.copy(demo_warehouse, db)
    return db


def _rows(db: Path, query: str, params=None) -> list[tuple]:
    with Store(db, read_only=True) as wh:
        return wh.con.execute(query, params).fetchall()


def _count(db: Path, query: str, params=None) -> int:
    return _rows(db, query, params)[0][0]


def _refused(db: Path, *args, message: str) -> str:
    before = digest(db)
    result = run_cli(db, *args, ok=False)
    assert result.exit_code == 1 and message in result.output, result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1, result.output
    assert digest(db) == before
    return result.output


def _results_naming(db: Path, dataset: str, measure: str) -> dict[str, int]:
    tables = {"correlations": "metric = $m OR human = $m", "confidence_intervals": "metric = $m OR human = $m",
              "hypothesis_tests": "metric_a = $m OR metric_b = $m OR human = $m"}
    return {t: _count(db, f"SELECT count(*) FROM {t} WHERE dataset = $d AND ({w})", {"d": dataset, "m": measure})
            for t, w in tables.items()}


# --- drop measure --------------------------------------------------------------------------------
def test_drop_measure_with_results_is_refused_naming_them_and_changes_nothing(demo):
    counts = _results_naming(demo, "d", "sim-low.f1")
    out = _refused(demo, "drop", "measure", "d", "sim-low.f1", message="cannot drop measure 'sim-low.f1'")
    for table, n in counts.items():
        assert f"{n} rows of {table}" in out
    assert "--cascade" in out and "nothing changed" in out


def test_drop_measure_cascade_removes_its_cells_and_the_results_naming_it_and_says_how_many(demo):
    counts = _results_naming(demo, "d", "sim-low.f1")
    cells = _count(demo, "SELECT count(*) FROM cells WHERE dataset = 'd' AND measure = 'sim-low.f1'")
    other = _count(demo, "SELECT count(*) FROM cells WHERE NOT (dataset = 'd' AND measure = 'sim-low.f1')")
    e_results = _count(demo, "SELECT count(*) FROM correlations WHERE dataset = 'e'")
    kept = _count(demo, "SELECT count(*) FROM correlations WHERE dataset = 'd' AND metric <> 'sim-low.f1'")
    out = run_cli(demo, "drop", "measure", "d", "sim-low.f1", "--cascade").output
    out = " ".join(out.split())   # the report wraps at 100 columns
    assert f"removed {cells} rows of scores, 1 row of measures" in out
    for table, n in counts.items():
        assert f"{n} rows of {table}" in out
    assert _results_naming(demo, "d", "sim-low.f1") == dict.fromkeys(counts, 0)
    assert _count(demo, "SELECT count(*) FROM cells WHERE dataset = 'e' AND measure = 'sim-low.f1'") == cells
    assert _count(demo, "SELECT count(*) FROM scores WHERE measure_id NOT IN (SELECT measure_id FROM measures)") == 0
    assert _count(demo, "SELECT count(*) FROM cells") == other
    assert _count(demo, "SELECT count(*) FROM correlations WHERE dataset = 'e'") == e_results
    assert _count(demo, "SELECT count(*) FROM correlations WHERE dataset = 'd'") == kept
    with Store(demo, read_only=True) as wh:
        assert "sim-low.f1" not in set(wh.measures("d")["measure"])


def test_drop_human_measure_removes_its_judgments_and_every_result_against_it(demo):
    judgments = _count(demo, "SELECT count(*) FROM judgments j JOIN measures m USING (measure_id) "
                             "JOIN datasets d USING (dataset_id) WHERE d.name = 'd' AND m.name = $h", {"h": HUMAN})
    out = run_cli(demo, "drop", "measure", "d", HUMAN, "--cascade").output
    assert f"removed {judgments} rows of judgments, 1 row of measures" in out
    for table in ("correlations", "confidence_intervals", "hypothesis_tests"):
        assert _count(demo, f"SELECT count(*) FROM {table} WHERE dataset = 'd'") == 0
        assert _count(demo, f"SELECT count(*) FROM {table} WHERE dataset = 'e'") > 0


def test_drop_measure_without_results_needs_no_cascade_and_unknown_names_are_one_line(demo, tmp_path):
    table = tmp_path / "mine.csv"
    table.write_text("system,input,measure,value\n" + "".join(
        f"{s},{i},mine,{0.1 * n}\n" for n, (s, i) in enumerate(
            _rows(demo, "SELECT DISTINCT system, input FROM cells WHERE dataset = 'd' ORDER BY ALL"))))
    run_cli(demo, "ingest", "table", table, "--dataset", "d")
    assert "dropped measure 'mine' of dataset 'd'; removed 20 rows of scores" in run_cli(
        demo, "drop", "measure", "d", "mine").output
    _refused(demo, "drop", "measure", "d", "mine", message="dataset 'd' has no measure 'mine'; it has: ")
    _refused(demo, "drop", "measure", "nope", "mine", message="unknown dataset 'nope'; the warehouse has: d, e")


def test_cascade_removes_a_whole_ranking_whose_rows_rank_the_dropped_metric(demo):
    run_cli(demo, "winners", "--dataset", "d", "--human", HUMAN, "--level", "system", "--coefficient", "pearson")
    n = _count(demo, "SELECT count(*) FROM winners WHERE dataset = 'd'")
    assert n == 4
    out = _refused(demo, "drop", "measure", "d", "sim-low.f1", message="cannot drop")
    assert "4 rows of winners" in out  # the other metrics' ranks and clusters were relative to it
    run_cli(demo, "drop", "measure", "d", "sim-low.f1", "--cascade")
    assert _count(demo, "SELECT count(*) FROM winners") == 0


def test_result_tables_are_found_from_the_schema_with_grouped_datasets_and_json_lists(demo):
    with Store(demo) as wh:
        run = wh.con.execute("SELECT min(run_id) FROM analysis_runs").fetchall()[0][0]
        wh.con.execute("CREATE TABLE my_results (result_id BIGINT, run_id INTEGER, dataset VARCHAR, "
                       "measure VARCHAR, consensus VARCHAR)")
        wh.con.execute("INSERT INTO my_results VALUES (1, ?, 'd', 'sim-low.f1', '[]'), "
                       "(2, ?, 'd', 'x', '[\"sim-low.f1\", \"y\"]'), (3, ?, 'e', 'sim-low.f1', '[]'), "
                       "(4, ?, 'd', 'sim-high.f1', '[]')", [run] * 4)
        # replicability names a group of datasets and their humans, joined by '+'
        wh.con.execute(
            """INSERT INTO replicability (run_id, dataset, human, metric_a, metric_b, level, coefficient, method,
               alternative, pc_method, alpha, n_datasets, k_hat, pc_pvalues, p_values, fingerprint, conventions)
               VALUES (?, 'd+e', 'h1+h2', 'a', 'b', 'system', 'pearson', 'perm-both', 'two-sided', 'fisher',
                       0.05, 2, 1, '[]', '{}', 'f', '{}')""", [run])
        assert housekeeping.count_dependents(wh.con, "d", "sim-low.f1")["my_results"] == 2
        assert housekeeping.count_dependents(wh.con, "e", "h2")["replicability"] == 1
        assert "replicability" not in housekeeping.count_dependents(wh.con, "e", "h1")
        assert housekeeping.count_dependents(wh.con, "d")["replicability"] == 1
        removed = wh.drop_measure("d", "sim-low.f1", cascade=True)
        assert removed.results["my_results"] == 2
        assert [r[0] for r in wh.con.execute("SELECT result_id FROM my_results ORDER BY 1").fetchall()] == [3, 4]


# --- rename measure ------------------------------------------------------------------------------
def test_rename_to_an_existing_measure_is_refused_and_changes_nothing(demo):
    _refused(demo, "rename", "measure", "d", "sim-low.f1", "sim-high.f1", "--cascade",
             message="dataset 'd' has a measure 'sim-high.f1' already; nothing changed")


@pytest.mark.parametrize("new, message", [("", "is empty"), (" x", "whitespace around it"),
                                           ("a\tb", "control character U+0009")])
def test_rename_to_a_bad_name_is_refused(demo, new, message):
    _refused(demo, "rename", "measure", "d", "sim-low.f1", new, message=message)


def test_rename_with_results_is_refused_unless_cascade_removes_them(demo):
    counts = _results_naming(demo, "d", "sim-low.f1")
    values = _rows(demo, "SELECT system, input, value FROM cells WHERE dataset = 'd' AND measure = 'sim-low.f1' "
                         "ORDER BY ALL")
    out = _refused(demo, "rename", "measure", "d", "sim-low.f1", "sim-new.f1",
                   message="cannot rename measure 'sim-low.f1' of dataset 'd' to 'sim-new.f1'")
    assert "keep the name they were computed under" in out
    run_cli(demo, "scale", "d", "sim-low.f1", "--range", "-100..100")
    out = run_cli(demo, "rename", "measure", "d", "sim-low.f1", "sim-new.f1", "--cascade").output
    out = " ".join(out.split())   # the report wraps at 100 columns
    for table, n in counts.items():
        assert f"{n} rows of {table}" in out
    assert _rows(demo, "SELECT system, input, value FROM cells WHERE dataset = 'd' AND measure = 'sim-new.f1' "
                       "ORDER BY ALL") == values
    assert _results_naming(demo, "d", "sim-low.f1") == dict.fromkeys(counts, 0)
    assert _count(demo, "SELECT count(*) FROM cells WHERE dataset = 'e' AND measure = 'sim-low.f1'") > 0
    with Store(demo, read_only=True) as wh:
        kinds = wh.measure_kinds("d").set_index("measure")
        assert kinds.loc["sim-new.f1", "scale"] == "-100..100" and "sim-low.f1" not in kinds.index


def test_rename_without_results_keeps_duplicates_consistent(demo, tmp_path):
    cells = _rows(demo, "SELECT system, input, value FROM cells WHERE dataset = 'd' AND measure = 'sim-high.f1'")
    table = tmp_path / "copy.csv"
    table.write_text("system,input,measure,value\n" + "".join(f"{s},{i},copy,{v!r}\n" for s, i, v in cells))
    run_cli(demo, "ingest", "table", table, "--dataset", "d")
    dup = "SELECT measure, duplicate_of FROM measure_duplicates WHERE dataset = 'd' ORDER BY ALL"
    assert _rows(demo, dup) == [("sim-high.f1", "copy")]
    out = run_cli(demo, "rename", "measure", "d", "copy", "zcopy").output
    assert out.strip() == "renamed measure 'copy' of dataset 'd' to 'zcopy'"
    assert _rows(demo, dup) == [("zcopy", "sim-high.f1")]


# --- drop dataset --------------------------------------------------------------------------------
def test_drop_dataset_with_results_is_refused_and_cascade_removes_everything_of_it_only(demo):
    out = _refused(demo, "drop", "dataset", "d", message="cannot drop dataset 'd'")
    assert "rows of correlations" in out and "--cascade" in out
    e_cells = _rows(demo, "SELECT * FROM cells WHERE dataset = 'e' ORDER BY ALL")
    e_results = _count(demo, "SELECT count(*) FROM hypothesis_tests WHERE dataset = 'e'")
    d_tests = _count(demo, "SELECT count(*) FROM hypothesis_tests WHERE dataset = 'd'")
    out = run_cli(demo, "drop", "dataset", "d", "--cascade").output
    assert re.search(rf"{d_tests} rows of hypothesis_tests", out) and "1 row of datasets" in out
    assert _rows(demo, "SELECT name FROM datasets") == [("e",)]
    assert _rows(demo, "SELECT * FROM cells ORDER BY ALL") == e_cells
    assert _count(demo, "SELECT count(*) FROM hypothesis_tests") == e_results
    for table in ("systems", "inputs", "measures", "ingests"):
        assert _count(demo, f"SELECT count(*) FROM {table} WHERE dataset_id NOT IN "
                            "(SELECT dataset_id FROM datasets)") == 0
    for table in ("scores", "judgments"):
        assert _count(demo, f"SELECT count(*) FROM {table} WHERE measure_id NOT IN "
                            "(SELECT measure_id FROM measures)") == 0


def test_drop_dataset_stopped_after_its_first_transaction_is_finished_by_the_same_call(demo, monkeypatch):
    original = housekeeping.statement
    monkeypatch.setattr(housekeeping, "statement",
                        lambda name: "SELECT * FROM no_such_table" if name == "drop_dataset_systems" else original(name))
    with Store(demo) as wh, pytest.raises(WarehouseError, match="run the same command again to finish"):
        wh.drop_dataset("d", cascade=True)
    assert _count(demo, "SELECT count(*) FROM cells WHERE dataset = 'd'") == 0
    assert _rows(demo, "SELECT name FROM datasets ORDER BY 1") == [("d",), ("e",)]
    monkeypatch.setattr(housekeeping, "statement", original)
    with Store(demo) as wh:
        assert "dropped dataset 'd'" in str(wh.drop_dataset("d"))  # no results left: no cascade needed
    assert _rows(demo, "SELECT name FROM datasets") == [("e",)]
