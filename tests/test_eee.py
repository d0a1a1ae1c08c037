"""``export --format eee`` and ``ingest eee``: the Every Eval Ever 0.3.0 schema.

The records are validated with jsonschema against the schemas inside the every-eval-ever 0.3.0
wheel (it declares Python >= 3.12, so .ci/run downloads it without installing it and names it in
$METAEVAL_EEE_WHEEL). Without the wheel the validating tests skip, except in CI (``CI`` set),
where they fail."""

from __future__ import annotations

import json
import math
import os
import zipfile
from pathlib import Path

import pytest

from metaeval.core import Store
from tests.conftest import run_cli

WHEEL = os.environ.get("METAEVAL_EEE_WHEEL")


@pytest.fixture(scope="module")
def validators():
    if not WHEEL or not Path(WHEEL).is_file():
        reason = f"the every-eval-ever 0.3.0 wheel is not at $METAEVAL_EEE_WHEEL ({WHEEL!r}); .ci/run downloads it"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    import jsonschema

    with zipfile.ZipFile(WHEEL) as z:
        aggregate = json.loads(z.read("every_eval_ever/schemas/eval.schema.json"))
        instance = json.loads(z.read("every_eval_ever/schemas/instance_level_eval.schema.json"))
    assert aggregate["version"] == instance["version"] == "0.3.0"
    return {"aggregate": jsonschema.Draft7Validator(aggregate), "instance": jsonschema.Draft7Validator(instance)}


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """A small demo (correlations, intervals, tests), with texts, and a system-level test table."""
    tmp = tmp_path_factory.mktemp("eee")
    db = tmp / "demo.duckdb"
    run_cli(db, "demo", "--systems", 4, "--inputs", 6, "--k", 50)
    with Store(db, read_only=True) as wh:
        systems = [s for (s,) in wh.con.execute("SELECT name FROM systems ORDER BY name").fetchall()]
        inputs = [i for (i,) in wh.con.execute("SELECT name FROM inputs ORDER BY name").fetchall()]
    texts = tmp / "summaries.jsonl"
    texts.write_text("".join(json.dumps({
        "instance_id": i, "summarizer_id": s, "summary": {"text": [f"{s} on {i}.", "Second sentence."]},
        "references": [{"summarizer_id": "ref-a", "text": f"Reference of {i}."}],
        "documents": [{"text": f"Document of {i}."}, {"text": "Another document."}]}) + "\n"
        for s in systems for i in inputs), encoding="utf-8")
    run_cli(db, "ingest", "summaries", texts, "--dataset", "demo")
    run_cli(db, "system-tests", "--dataset", "demo", "--measure", "sim-high.f1", "--k", 50)
    return db


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _cells(db: Path) -> list[tuple]:
    with Store(db, read_only=True) as wh:
        return wh.con.execute("SELECT dataset, measure, system, input, value, kind FROM cells ORDER BY ALL").fetchall()


def _table(db: Path, sql: str) -> list[tuple]:
    with Store(db, read_only=True) as wh:
        return wh.con.execute(sql).fetchall()


def test_every_record_is_valid_against_the_wheels_schemas(demo, validators, tmp_path):
    out = tmp_path / "all.jsonl"
    result = run_cli(demo, "export", "--format", "eee", "--out", out)
    records = _records(out)
    kinds = {"instance" if "sample_id" in r else "aggregate" for r in records}
    assert kinds == {"instance", "aggregate"}
    for number, record in enumerate(records, start=1):
        kind = "instance" if "sample_id" in record else "aggregate"
        errors = [e.message for e in validators[kind].iter_errors(record)]
        assert not errors, f"line {number} ({kind}): {errors[:3]}"
    n_instances = sum("sample_id" in r for r in records)
    assert f"{len(records) - n_instances} aggregate and {n_instances} instance-level records" in result.output
    # one instance record per stored value: every score and every annotator's judgment
    [(values,)] = _table(demo, "SELECT (SELECT count(*) FROM scores) + (SELECT count(*) FROM judgments)")
    assert n_instances == values
    # every result table that has rows is in the file
    tables = {r["source_metadata"]["additional_details"].get("table") for r in records if "evaluation_results" in r}
    for table in ("correlations", "confidence_intervals", "hypothesis_tests", "system_tests"):
        assert table in tables


def test_intervals_and_system_means_are_the_stored_ones(demo, validators, tmp_path):
    out = tmp_path / "ci.jsonl"
    run_cli(demo, "export", "confidence_intervals", "--format", "eee", "--out", out)
    records = _records(out)
    by_id = {res["evaluation_result_id"]: res for r in records if "evaluation_results" in r
             for res in r["evaluation_results"]}
    rows = _table(demo, "SELECT result_id, estimate, lower, upper, alpha, method, k, metric FROM "
                        "latest_confidence_intervals")
    assert rows
    for result_id, estimate, lower, upper, alpha, method, k, metric in rows:
        res = by_id[f"confidence_intervals/{result_id}/estimate"]
        assert res["score_details"]["score"] == estimate
        interval = res["score_details"]["uncertainty"]["confidence_interval"]
        assert (interval["lower"], interval["upper"], interval["method"]) == (lower, upper, method)
        assert math.isclose(interval["confidence_level"], 1 - alpha)
        assert res["score_details"]["uncertainty"]["num_bootstrap_samples"] == k
        owner = next(r for r in records if "evaluation_results" in r and res in r["evaluation_results"])
        assert owner["model_info"]["id"] == metric
    # the items' aggregate: each system's mean of each automatic measure, from the instance records
    means: dict[tuple, list] = {}
    for r in records:
        if "sample_id" in r and r["metadata"]["kind"] == "automatic":
            means.setdefault((r["model_id"], r["evaluation_name"]), []).append(r["evaluation"]["score"])
    items = [r for r in records if "evaluation_results" in r
             and r["source_metadata"]["additional_details"]["metaeval"] == "items"]
    checked = 0
    for r in items:
        for res in r["evaluation_results"]:
            values = means.get((r["model_info"]["id"], res["evaluation_name"]))
            if values is not None:
                assert math.isclose(res["score_details"]["score"], sum(values) / len(values), rel_tol=1e-12)
                checked += 1
    assert checked == 4 * 4   # 4 systems x 4 automatic measures


def test_round_trip_demo_export_validate_ingest_scores_equal(demo, validators, tmp_path):
    out = tmp_path / "demo.jsonl"
    run_cli(demo, "export", "--format", "eee", "--dataset", "demo", "--out", out)
    for record in _records(out):
        kind = "instance" if "sample_id" in record else "aggregate"
        assert validators[kind].is_valid(record)
    fresh = tmp_path / "fresh.duckdb"
    first = run_cli(fresh, "ingest", "eee", out, "--dataset", "demo")
    assert "inserted" in first.output
    assert _cells(fresh) == _cells(demo)
    measures = "SELECT name, kind, direction FROM measures ORDER BY name"
    assert _table(fresh, measures) == _table(demo, measures)
    judgments = ("SELECT s.name, i.name, m.name, j.annotator, j.value FROM judgments j JOIN systems s USING "
                 "(system_id) JOIN inputs i USING (input_id) JOIN measures m USING (measure_id) ORDER BY ALL")
    assert _table(fresh, judgments) == _table(demo, judgments)
    for sql in ("SELECT s.name, i.name, t.text FROM summaries t JOIN systems s USING (system_id) JOIN inputs i "
                "USING (input_id) ORDER BY ALL",
                'SELECT i.name, r.reference_id, r.text FROM "references" r JOIN inputs i USING (input_id) ORDER BY ALL',
                "SELECT i.name, d.position, d.text FROM documents d JOIN inputs i USING (input_id) ORDER BY ALL"):
        assert _table(fresh, sql) == _table(demo, sql) != []
    # idempotent: the same file again adds nothing
    before = _table(fresh, "SELECT (SELECT count(*) FROM scores), (SELECT count(*) FROM judgments)")
    second = run_cli(fresh, "ingest", "eee", out, "--dataset", "demo")
    assert "nothing changed" in second.output
    assert _table(fresh, "SELECT (SELECT count(*) FROM scores), (SELECT count(*) FROM judgments)") == before


def _lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("change, where", [
    (lambda r: r["evaluation"].update(score="0.5"), "field 'evaluation.score'"),
    (lambda r: r.pop("model_id"), "field 'model_id'"),
    (lambda r: r["metadata"].update(reference_ids="[1"), "field 'metadata.reference_ids'"),
    (lambda r: r["output"].update(raw=["one", "two"]), "field 'output.raw'"),
])
def test_a_bad_record_is_refused_in_one_line_naming_file_line_and_field(demo, tmp_path, change, where):
    out = tmp_path / "demo.jsonl"
    run_cli(demo, "export", "--format", "eee", "--dataset", "demo", "--out", out)
    records = _records(out)
    at = next(n for n, r in enumerate(records) if "sample_id" in r) + 3
    change(records[at])
    bad = _lines(tmp_path / "bad.jsonl", records)
    fresh = tmp_path / "fresh.duckdb"
    result = run_cli(fresh, "ingest", "eee", bad, "--dataset", "demo", ok=False)
    assert result.exit_code != 0
    message = result.output.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in message
    assert f"bad.jsonl:{at + 1}:" in message and where in message
    assert not fresh.exists() or _table(fresh, "SELECT count(*) FROM scores") == [(0,)]


def test_a_file_of_two_datasets_or_of_no_record_kind_is_refused(demo, tmp_path):
    out = tmp_path / "demo.jsonl"
    run_cli(demo, "export", "--format", "eee", "--dataset", "demo", "--out", out)
    records = _records(out)
    last = max(n for n, r in enumerate(records) if "sample_id" in r)
    records[last]["metadata"]["dataset"] = "other"
    fresh = tmp_path / "fresh.duckdb"
    result = run_cli(fresh, "ingest", "eee", _lines(tmp_path / "two.jsonl", records), "--dataset", "d", ok=False)
    assert f"two.jsonl:{last + 1}: field 'metadata.dataset'" in result.output and "one dataset a file" in result.output
    result = run_cli(fresh, "ingest", "eee", _lines(tmp_path / "x.jsonl", [{"x": 1}]), "--dataset", "d", ok=False)
    assert "x.jsonl:1:" in result.output and "neither an aggregate record" in result.output
    assert not fresh.exists() or _table(fresh, "SELECT count(*) FROM datasets") == [(0,)]


def test_export_eee_refuses_another_suffix_and_other_formats_need_a_table(demo, tmp_path):
    result = run_cli(demo, "export", "--format", "eee", "--out", tmp_path / "x.csv", ok=False)
    assert result.exit_code == 2 and "JSON lines" in result.output
    result = run_cli(demo, "export", "--out", tmp_path / "x.csv", ok=False)
    assert result.exit_code == 2 and "TABLE: missing" in result.output
    assert not (tmp_path / "x.csv").exists()


def _one_row_in_every_result_table(con) -> list[str]:
    """A row in each result table (but analysis_runs) of a finished run: each column a value of its
    type (a CHECK's first allowed literal), some nullable doubles NaN. The tables it filled."""
    import re

    from metaeval import schema

    [(run,)] = con.execute("SELECT max(run_id) FROM analysis_runs WHERE status = 'finished'").fetchall()
    tables = [t for t in schema.RESULT_TABLES if t != "analysis_runs"]
    for n, table in enumerate(tables):
        checks = {}
        for names, text in con.execute("SELECT constraint_column_names, constraint_text FROM duckdb_constraints() "
                                       "WHERE table_name = ? AND constraint_type = 'CHECK'", [table]).fetchall():
            literal = re.search(r"'([^']*)'", text)
            if literal and len(names) == 1:
                checks[names[0]] = literal.group(1)
        columns = con.execute(f"DESCRIBE {table}").fetchall()
        values = []
        for i, (c, kind, nullable, *_) in enumerate(columns):
            value = {"result_id": 100000 + n, "run_id": run, "dataset": "demo"}.get(c, checks.get(c))
            if value is None:
                value = {"VARCHAR": f"{c}-x", "INTEGER": 3, "BIGINT": 3, "BOOLEAN": True, "JSON": "{}"}.get(kind)
                if kind == "DOUBLE":
                    value = [0.25, 0.75, float("nan")][i % 3] if nullable == "YES" else 0.5
                elif kind.endswith("[]"):
                    value = []
            values.append(value)
        names = ", ".join(f'"{c}"' for c, *_ in columns)
        con.execute(f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' * len(columns))})", values)
    return tables


def test_a_row_of_every_result_table_is_exported_valid_with_nan_never_a_score(demo, validators, tmp_path):
    db = tmp_path / "every.duckdb"
    db.write_bytes(demo.read_bytes())
    with Store(db) as wh:
        tables = _one_row_in_every_result_table(wh.con)
    out = tmp_path / "every.jsonl"
    run_cli(db, "export", "--format", "eee", "--out", out)
    records = [r for r in _records(out) if "evaluation_results" in r]
    for record in records:
        assert validators["aggregate"].is_valid(record), record["evaluation_id"]
    results = {res["evaluation_result_id"]: res for r in records for res in r["evaluation_results"]}
    exported = {res["metric_config"]["additional_details"]["table"] for res in results.values()
                if "table" in res["metric_config"]["additional_details"]}
    assert exported == set(tables)
    some_undefined = False
    for n, table in enumerate(tables):
        mine = {k: v for k, v in results.items() if k.startswith(f"{table}/{100000 + n}/")}
        assert mine, table
        undefined = next(iter(mine.values()))["score_details"]["details"].get("undefined", "")
        for key, res in mine.items():
            assert math.isfinite(res["score_details"]["score"])
            assert key.rsplit("/", 1)[1] not in undefined.split(",")
        for column in filter(None, undefined.split(",")):   # each named undefined is NaN or NULL in the table
            [(value,)] = _table(db, f'SELECT "{column}" FROM {table} WHERE result_id = {100000 + n}')
            assert value is None or math.isnan(value), (table, column)
            some_undefined = True
    assert some_undefined


def test_an_empty_warehouse_exports_nothing_and_says_so(db, tmp_path):
    out = tmp_path / "empty.jsonl"
    result = run_cli(db, "export", "--format", "eee", "--out", out, ok=False)
    assert result.exit_code != 0 and "has no dataset" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not out.exists()
