"""The table ingest inside DuckDB (issue 15) and wide tables (issue 16): DuckDB's reading gives
exactly what the Python reader gives, or steps aside for it; wide tables and DataFrames."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval import Store
from metaeval.errors import ConflictError, DuplicateCellsError, InputError
from metaeval.ingest import table
from tests.conftest import digest, run_cli


def _cells(wh: Store, batch) -> list[tuple]:
    """A batch's cells (staged in DuckDB or parsed in Python) as sorted tuples."""
    if batch.cells_table:
        rows = wh.con.execute(f"SELECT system, input, measure, annotator, value FROM {batch.cells_table}").fetchall()
    else:
        columns = ["system", "input", "measure", "annotator", "value"]
        rows = list(batch.cells[columns].itertuples(index=False, name=None))
    return sorted(((s, i, m, None if pd.isna(a) else a, v) for s, i, m, a, v in rows), key=repr)


def _measures(batch) -> list[tuple]:
    """A batch's measures (a DataFrame, or the staged batch's Columns) as sorted (name, kind, direction)."""
    return sorted(zip(*(list(batch.measures[c]) for c in ("name", "kind", "direction"))))


def _both(wh: Store, path: Path, **options):
    """(what stage gives or None when it steps aside, what parse gives or the InputError it raises)."""
    try:
        staged = table.stage(wh.con, path, **options)
    except table.Unsure:
        staged = None
    try:
        exact = table.parse(path, **options)
    except InputError as exc:
        exact = exc
    return staged, exact


def _agree_or_step_aside(wh: Store, staged, exact) -> None:
    """DuckDB's reading refused a file Python refuses, or gave what Python gives."""
    if isinstance(exact, InputError):
        assert staged is None, f"DuckDB read a file that Python refuses: {exact}"
    elif staged is not None:
        assert _cells(wh, staged) == _cells(wh, exact)
        assert _measures(staged) == _measures(exact)
        assert sorted(staged.systems["name"]) == sorted(exact.systems["name"])
        assert staged.options == exact.options and staged.rows == exact.rows and staged.sha256 == exact.sha256
        table.drop_staged(wh.con, [staged])


TRICKY_CSV = {
    "plain": "system,input,measure,value\ns1,d1,m,0.5\ns2,d1,m,-1e-3\n",
    "crlf and blank lines": "system,input,measure,value\r\n\r\ns1,d1,m,.5\r\n\r\ns2,d1,m,5.\r\n",
    "bom": "\ufeffsystem,input,measure,value\ns1,d1,m,1\n",
    "spaces around numbers": "system,input,measure,value\ns1,d1,m, 0.5 \ns2,d1,m,\t2\n",
    "spaces around ids": "system,input,measure,value\n s1 ,d1,m,1\n",
    "underscore number": "system,input,measure,value\ns1,d1,m,1_000\n",
    "double sign": "system,input,measure,value\ns1,d1,m,+-1\n",
    "nan": "system,input,measure,value\ns1,d1,m,nan\n",
    "huge": "system,input,measure,value\ns1,d1,m,1e999\n",
    "beyond the largest magnitude": "system,input,measure,value\ns1,d1,m,1.2e308\ns2,d1,m,-1e151\n",
    "underflow to zero": "system,input,measure,value\ns1,d1,m,0\ns2,d1,m,1e-400\n",
    "underflow to a subnormal": "system,input,measure,value\ns1,d1,m,-4.9e-324\n",
    "zeros written small": "system,input,measure,value\ns1,d1,m,0e-400\ns2,d1,m,-0.000e-5\ns3,d1,m,2.3e-308\n",
    "wide underflow": "system,input,m1\ns1,d1,0\ns2,d1,1E-999\n",
    "empty value": "system,input,measure,value\ns1,d1,m,\n",
    "blank id": "system,input,measure,value\n  ,d1,m,1\n",
    "quoted newline id": 'system,input,measure,value\n"s\n1",d1,m,1\n',
    "duplicate": "system,input,measure,value\ns1,d1,m,1\ns1,d1,m,1\n",
    "kind and annotator": "system,input,measure,value,kind,annotator\ns1,d1,h,1,human,a\ns1,d1,m,2,,\ns2,d1,h,3,,b\n",
    "bad kind": "system,input,measure,value,kind\ns1,d1,m,1,other\n",
    "automatic with annotator": "system,input,measure,value,kind,annotator\ns1,d1,m,1,automatic,a\n",
    "mixed kinds": "system,input,measure,value,annotator\ns1,d1,m,1,a\ns2,d1,m,1,\n",
    # a kind column without annotators (staged as a 1-byte code, read in two parts): empty kinds
    # decided by the human glob, a kind human on a measure no glob matches, automatic on one it does
    "kind only": "system,input,measure,value,kind\ns1,d1,h,1,\ns1,d1,m,2,automatic\ns2,d1,e,3,human\ns2,d1,m,4,\n",
    "kind automatic on a human measure": "system,input,measure,value,kind\ns1,d1,h,1,automatic\ns2,d1,h,2,\n",
    "kind capitalised": "system,input,measure,value,kind\ns1,d1,m,1,Human\n",
    "kind with spaces": "system,input,measure,value,kind\ns1,d1,m,1, human\n",
    "short row": "system,input,measure,value\ns1,d1,m\n",
    "no rows": "system,input,measure,value\n",
    "no input column": "system,measure,value\ns1,bleu,30.5\n",
    "unknown column": "system,input,measure,value,extra\ns1,d1,m,1,x\n",
    "wide": "system,input,m1,m2\ns1,d1,0.5,1\ns2,d1,,2\n",
    "wide human": "system,input,m1,expert\ns1,d1,0.5,4\ns2,d1,0.25,3\n",
    "wide bad value": "system,input,m1\ns1,d1,0.5\ns2,d1,abc\n",
    "wide blank value": "system,input,m1,m2\ns1,d1,  ,1\n",
    "wide duplicate": "system,input,m1\ns1,d1,0.5\ns1,d1,0.5\n",
    "non-utf8": None,
    # what DuckDB's CSV reader takes otherwise than Python's csv module (found in review)
    "space before a quote": 'system,input,measure,value\n "s1",d1,m,0.5\n',
    "text after a quote": 'system,input,measure,value\n"s1" "x",d1,m,0.5\n',
    "space after a quote": 'system,input,measure,value\n"s1" ,d1,m,0.5\ns1,d1,m,"0.5" \n',
    "quoted number after a space": 'system,input,measure,value\ns1,d1,m, "0.5"\n',
    "an empty field too many": "system,input,measure,value\ns1,d1,m,0.5,\n",
    "two empty fields too many, crlf": "system,input,measure,value\r\ns1,d1,m,0.5,,\r\ns2,d1,m,1",
    "wide, an empty field too many": "system,q1\ns1,1,\n",
    "carriage return ending a line": "system,input,measure,value\ns1,d1,m,0.5\rs2,d1,m,0.6\n",
    "carriage return in the header": "system,input,measure,value\rs1,d1,m,0.5\n",
    "an id longer than a csv field": "system,input,measure,value\n" + "s" * 131073 + ",d1,m,0.5\n",
    # issue 24.9: control characters inside an id or a measure column's name
    "nul in an id": "system,input,measure,value\ns\x001,d1,m,0.5\n",
    "tab inside an id": "system,input,measure,value\ns\t1,d1,m,0.5\n",
    "bell in a measure": "system,input,measure,value\ns1,d1,m\x07,0.5\n",
    "c1 control in an input": "system,input,measure,value\ns1,d\x851,m,0.5\n",
    "del in a wide measure column": "system,input,m\x7f\ns1,d1,0.5\n",
}


@pytest.mark.parametrize("name", sorted(TRICKY_CSV))
def test_duckdb_reading_agrees_with_python_or_steps_aside(db, tmp_path, name):
    path = tmp_path / "t.csv"
    content = TRICKY_CSV[name]
    path.write_bytes(b"system,input,measure,value\ns1,d\xff,m,1\n" if content is None else content.encode())
    with Store(db) as wh:
        _agree_or_step_aside(wh, *_both(wh, path, human=["expert", "h"] if "human" in name or "kind" in name else []))


@pytest.mark.parametrize("name", ["plain", "kind and annotator", "kind only", "no input column", "wide",
                                  "wide human"])
def test_clean_files_are_read_by_duckdb(db, tmp_path, name):
    """The fast path is taken for ordinary files, CSV and Parquet (else it would be dead code)."""
    csv = tmp_path / "t.csv"
    csv.write_text(TRICKY_CSV[name])
    frame = pd.read_csv(csv, dtype={"annotator": object, "kind": object})
    parquet = tmp_path / "t.parquet"
    frame.to_parquet(parquet, index=False)
    human = ["expert", "h"]
    with Store(db) as wh:
        for path in (csv, parquet):
            staged = table.stage(wh.con, path, human=human if "human" in name or "kind" in name else [])
            exact = table.parse(path, human=human if "human" in name or "kind" in name else [])
            assert _cells(wh, staged) == _cells(wh, exact)
            table.drop_staged(wh.con, [staged])


def test_a_fast_path_conflict_is_reported_with_its_line(db, cli, tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("system,input,measure,value\ns1,d1,m,1\ns1,d2,m,2\n")
    b.write_text("system,input,measure,value\ns1,d1,m,1\n\ns1,d2,m,3\n")
    cli("ingest", "table", a, "--dataset", "t")
    out = cli("ingest", "table", b, "--dataset", "t", expect_ok=False).output
    assert f"{b}:4: scores system=s1 input=d2 measure=m: warehouse has 2.0, file has 3.0" in out
    assert "nothing changed" in cli("ingest", "table", a, "--dataset", "t").output  # idempotent


DUPLICATES = {  # (earlier file or None, file giving a cell on line 2 and again on a line, that line, options)
    "new measure": (None, "system,input,measure,value\ns1,d1,m,1\ns2,d1,m,2\ns1,d1,m,1\n", 4, {}),
    "stored measure": ("system,input,measure,value\ns1,d1,m,1\n",
                       "system,input,measure,value\ns2,d1,m,1\ns2,d1,m,3\n", 3, {}),
    "new judgments": (None, "system,input,measure,value,annotator\ns1,d1,h,1,a\ns1,d1,h,2,b\ns1,d1,h,1,a\n", 4,
                      {"human": ["h"]}),
    "stored judgments": ("system,input,measure,value,annotator\ns1,d1,h,1,a\n",
                         "system,input,measure,value,annotator\ns2,d1,h,1,a\ns2,d1,h,1,a\n", 3, {"human": ["h"]}),
    "wide": (None, "system,input,m1,m2\ns1,d1,0.5,1\ns1,d1,0.5,\n", 3, {}),
}


@pytest.mark.parametrize("case", sorted(DUPLICATES))
def test_duplicates_are_found_on_the_resolved_ids_and_named_by_the_exact_reader(db, cli, tmp_path, case):
    """``ingest`` leaves the duplicate check to ``load`` (on integer ids, after the insert for
    new measures): ``load`` refuses the staged batch and writes nothing, and the command gives
    the exact reader's error with its line."""
    earlier, text, line, options = DUPLICATES[case]
    path = tmp_path / "dup.csv"
    path.write_text(text)
    if earlier:
        first = tmp_path / "first.csv"
        first.write_text(earlier)
        cli("ingest", "table", first, "--dataset", "t", *[a for h in options.get("human", []) for a in ("--human", h)])
    with Store(db) as wh:
        before = wh.con.execute("SELECT (SELECT count(*) FROM scores), (SELECT count(*) FROM judgments), "
                                "(SELECT count(*) FROM ingests)").fetchall()
        staged = table.stage(wh.con, path, check_duplicates=False, **options)
        assert staged.unique_cells is False
        with pytest.raises(DuplicateCellsError, match="1 cell\\(s\\) given more than once"):
            wh.load("t", [staged], allow_new=True)
        table.drop_staged(wh.con, [staged])
        after = wh.con.execute("SELECT (SELECT count(*) FROM scores), (SELECT count(*) FROM judgments), "
                               "(SELECT count(*) FROM ingests)").fetchall()
        assert after == before
    out = cli("ingest", "table", path, "--dataset", "t", "--allow-new",
              *[a for h in options.get("human", []) for a in ("--human", h)], expect_ok=False).output
    assert f"{path}:2:" in out and f"more than once (lines 2, {line})" in out, out


def test_the_same_cell_in_two_files_is_not_a_duplicate(db, cli, tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("system,input,measure,value\ns1,d1,m,1\ns1,d2,m,2\n")
    b.write_text("system,input,measure,value\ns1,d2,m,2\ns2,d1,m,3\n")
    out = " ".join(cli("ingest", "table", a, b, "--dataset", "t").output.split())
    assert f"{a}: read 2 scores, inserted 2" in out and f"{b}: read 2 scores, inserted 1" in out


def test_wide_csv_ingest(db, cli, tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text("system,input,mymetric,rouge,expert\ns1,d1,0.5,0.1,4\ns1,d2,0.25,,3\ns2,d1,1,0.3,5\n")
    out = cli("ingest", "table", path, "--dataset", "w", "--human", "expert").output
    assert "inserted 8" in out
    with Store(db, read_only=True) as wh:
        m = wh.matrix("w", ["mymetric", "rouge", "expert"])
        kinds = dict(wh.sql("SELECT name, kind FROM measures").values)
        annotators = wh.sql("SELECT DISTINCT annotator FROM judgments")["annotator"].tolist()
    np.testing.assert_array_equal(m["mymetric"], [[0.5, 0.25], [1, np.nan]])
    np.testing.assert_array_equal(m["rouge"], [[0.1, np.nan], [0.3, np.nan]])
    np.testing.assert_array_equal(m["expert"], [[4, 3], [5, np.nan]])
    assert kinds == {"mymetric": "automatic", "rouge": "automatic", "expert": "human"} and annotators == ["0"]


def test_wide_errors_name_line_and_measure_column(db, cli, tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text("system,input,m1,m2\ns1,d1,0.5,1\n\ns2,d1,0.5,x\n")
    out = cli("ingest", "table", path, "--dataset", "w", expect_ok=False).output
    assert f"{path}:4: field 'm2': expected a number, got 'x'" in out


def test_wide_annotator_column_needs_human_measures(db, cli, tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text("system,input,annotator,rel,coh\ns1,d1,a,4,3\ns1,d1,b,2,5\n")
    out = cli("ingest", "table", path, "--dataset", "w", "--human", "rel", expect_ok=False).output
    assert "field 'coh'" in out and "annotator column" in out
    cli("ingest", "table", path, "--dataset", "w", "--human", "rel", "--human", "coh")
    with Store(db, read_only=True) as wh:
        m = wh.matrix("w", ["rel", "coh"])
    assert m["rel"][0, 0] == 3 and m["coh"][0, 0] == 4


def test_add_scores_dataframe_wide_and_long(db):
    rng = np.random.default_rng(7)
    wide = pd.DataFrame({"system": np.repeat(["a", "b", "c"], 4), "input": np.tile(["1", "2", "3", "10"], 3),
                         "metric": rng.random(12), "human": rng.integers(1, 6, 12).astype(float)})
    wide.loc[5, "metric"] = np.nan  # a missing cell
    with Store(db) as wh:
        report = table.add_scores(wh, "f", wide, human=["human"])
        assert (report.inserted, report.contents) == (23, "11 scores, 12 judgments")
        assert table.add_scores(wh, "f", wide, human=["human"]).inserted == 0
        m = wh.matrix("f", ["metric", "human"])
        assert m.inputs == ("1", "2", "3", "10")
        expected = wide.pivot(index="system", columns="input", values="metric")[list(m.inputs)].to_numpy()
        np.testing.assert_array_equal(m["metric"], expected)
        long = wide.melt(id_vars=["system", "input"], var_name="measure", value_name="value").dropna()
        long.loc[long.index[0], "value"] += 1
        with pytest.raises(ConflictError, match=r"<DataFrame>:1: scores system=a input=1 measure=metric"):
            table.add_scores(wh, "f", long, human=["human"])


def test_dataframe_errors_name_the_row(db):
    frame = pd.DataFrame({"system": ["a", "b"], "input": ["1", "2"], "m": [0.5, np.inf]})
    with Store(db) as wh, pytest.raises(InputError, match=r"scores.csv:2: field 'm': the value inf is not finite"):
        table.add_scores(wh, "f", frame, name="scores.csv")


@pytest.mark.parametrize("frame, error", [
    (pd.DataFrame({"system": ["a", 1.0], "input": ["1", "2"], "m": [0.5, 0.25]}), "row 2"),
    (pd.DataFrame({"system": ["a", "b"], "input": ["1", "2"], "m": [0.5, True]}), "row 2"),
    (pd.DataFrame({"system": ["a", "b"], "input": [1, 2], "m": pd.array([0.5, None], dtype="Float64")}), None),
    (pd.DataFrame({"system": ["a", "b"], "input": [1, 2], "m": np.array([1, 2], dtype=np.int64)}), None),
])
def test_dataframe_values_as_python_reads_them(db, frame, error):
    """A float id or a boolean value is refused as in a Parquet file (not turned into text by
    DuckDB); pandas' missing values are missing cells; numpy integers are numbers."""
    with Store(db) as wh:
        if error:
            with pytest.raises(InputError, match=r"<DataFrame>:2: field '(system|m)'"):
                table.add_scores(wh, "f", frame)
        else:
            report = table.add_scores(wh, "f", frame)
            assert report.inserted == int(frame["m"].notna().sum())
            stored = wh.sql("SELECT system, input, value FROM cells WHERE dataset = 'f' ORDER BY system")
            given = frame[frame["m"].notna()]
            assert stored["system"].tolist() == given["system"].tolist()
            assert stored["input"].tolist() == given["input"].astype(str).tolist()
            assert stored["value"].tolist() == given["m"].astype(float).tolist()


@pytest.mark.parametrize("bitmap", [True, False])
@pytest.mark.parametrize("table_name", ["scores", "judgments"])
def test_duplicate_count_on_ids_is_a_brute_force_count(db, monkeypatch, bitmap, table_name):
    """``merge.check_duplicates`` counts rows minus distinct keys (a judgment's with its annotator),
    exactly, with the bitmap over the ids' box and with DISTINCT (a box too large for the bitmap),
    also under a WHERE clause with bound parameters."""
    from metaeval import merge
    from metaeval.errors import DuplicateCellsError

    if not bitmap:
        monkeypatch.setattr(merge, "BITMAP_KEYS", 0)
    rng = np.random.default_rng(7)
    outcomes = set()
    with Store(db) as wh:
        for trial in range(40):
            n = int(rng.integers(1, 60))
            keys = np.column_stack([rng.integers(lo, lo + span, n) for lo, span in
                                    ((int(rng.integers(1, 1000)), int(rng.integers(1, 4))),
                                     (int(rng.integers(1, 10**6)), int(rng.integers(1, 30))),
                                     (int(rng.integers(1, 50)), int(rng.integers(1, 3))))])
            frame = pd.DataFrame(keys, columns=["system_id", "input_id", "measure_id"]).assign(value=0.5)
            columns = ["system_id", "input_id", "measure_id"]
            if table_name == "judgments":
                frame["annotator"] = rng.choice(["a", "b", "expert 3"], n)[: n]
                columns.append("annotator")
            wh.con.register("_rows", frame)
            where, params = "", []
            if trial % 2:  # only the rows of some measures
                kept = sorted(set(frame["measure_id"].tolist()))[:1]
                where, params = "WHERE list_contains($1, measure_id)", [kept]
                frame = frame[frame["measure_id"].isin(kept)]
            expected = len(frame) - len(frame[columns].drop_duplicates())
            outcomes.add(bool(expected))
            if expected:
                with pytest.raises(DuplicateCellsError, match=f"{expected} cell"):
                    merge.check_duplicates(wh.con, table_name, "_rows", "f.csv", where, params)
            else:
                merge.check_duplicates(wh.con, table_name, "_rows", "f.csv", where, params)
            wh.con.unregister("_rows")
    assert outcomes == {True, False}


def test_a_parquet_file_is_read_through_a_view_and_must_not_change_before_the_commit(db, tmp_path, monkeypatch):
    """Typed sources are not copied while staged (their columns are cheaper to read again); a
    file rewritten between staging and the commit is an error, and nothing is written."""
    import os

    from metaeval import load
    from metaeval.errors import WarehouseError

    path = tmp_path / "t.parquet"
    pd.DataFrame({"system": ["s1", "s2"], "input": ["d1", "d1"], "measure": "m", "value": [0.5, 1.0]}).to_parquet(path)
    with Store(db) as wh:
        staged = table.stage(wh.con, path)
        copies = wh.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '\\_raw\\_%' ESCAPE '\\'")
        assert copies.fetchall() == [(0,)] and staged.unchanged is not None
        table.drop_staged(wh.con, [staged])

    merge = load.merge

    def rewrite_then_merge(*args, **kwargs):
        pd.DataFrame({"system": ["s1"], "input": ["d1"], "measure": "m", "value": [9.0]}).to_parquet(path)
        os.utime(path, ns=(1, 1))  # a rewrite within the clock's resolution still changes the mtime here
        return merge(*args, **kwargs)

    monkeypatch.setattr(load, "merge", rewrite_then_merge)
    with Store(db) as wh:
        with pytest.raises(WarehouseError, match="changed .* while it was being read; nothing was written"):
            table.ingest(wh, "t", [path])
        assert wh.con.execute("SELECT (SELECT count(*) FROM scores), (SELECT count(*) FROM ingests)").fetchall() \
            == [(0, 0)]


def _exact_both(wh: Store, path: Path, **options):
    """(what parse gives or its InputError, what stage_exact gives or its InputError)."""
    out = []
    for read in (lambda: table.parse(path, **options), lambda: table.stage_exact(wh.con, path, **options)):
        try:
            out.append(read())
        except InputError as exc:
            out.append(exc)
    return out


def _same_batches(wh: Store, exact, streamed) -> None:
    if isinstance(exact, InputError):
        assert isinstance(streamed, InputError) and str(streamed) == str(exact)
        return
    assert not isinstance(streamed, InputError), streamed
    rows = wh.con.execute(f"SELECT system, input, measure, annotator, value, line FROM {streamed.cells_table} "
                          "ORDER BY seq").fetchall()
    columns = ["system", "input", "measure", "annotator", "value", "line"]
    assert rows == [tuple(None if pd.isna(v) else v for v in r)
                    for r in exact.cells[columns].itertuples(index=False, name=None)]
    assert streamed.measures.equals(exact.measures.reset_index(drop=True))
    assert list(streamed.systems["name"]) == list(exact.systems["name"])
    assert (streamed.options, streamed.rows, streamed.sha256, streamed.counts) == \
        (exact.options, exact.rows, exact.sha256, exact.counts)
    wh.con.execute(f"DROP TABLE {streamed.cells_table}")


MORE_CSV = {
    "unknown column, then a short row": "system,input,measure,value,extra\ns1,d1,m,1,x\ns2,d1,m\n",
    "bad value then short row": "system,input,measure,value\ns1,d1,m,abc\ns1,d2,m\n",
    "bad value then not utf-8": None,
    "duplicates of two annotators": ("system,input,measure,value,annotator\ns1,d1,h,1,a\ns1,d1,h,2,b\n"
                                     "s1,d1,h,1,a\ns1,d1,h,3,b\ns1,d1,h,4,c\n"),
    "wide duplicate of two measures": "system,input,m1,m2\ns1,d1,0.5,1\ns2,d1,1,2\ns1,d1,0.5,1\n",
    "mixed kinds later": "system,input,measure,value,annotator\ns1,d1,m,1,\ns2,d1,m,1,a\ns1,d1,n,1,\n",
    "header only": "system,input,measure,value\n\n",
    "empty": "",
}


@pytest.mark.parametrize("name", sorted(TRICKY_CSV) + sorted(MORE_CSV))
@pytest.mark.parametrize("chunk", [2])
def test_the_streamed_exact_reader_gives_what_parse_gives(db, tmp_path, monkeypatch, name, chunk):
    """``stage_exact`` (what ingest reads a file with when DuckDB steps aside) gives parse's
    cells, measures, systems and errors, in chunks of any size; the same file as JSONL and
    Parquet too, where it can be written as one."""
    from metaeval.ingest import common

    monkeypatch.setattr(common, "CHUNK", chunk)
    content = {**TRICKY_CSV, **MORE_CSV}[name]
    if content is None:
        raw = b"system,input,measure,value\ns1,d\xff,m,1\n" if name == "non-utf8" else \
            b"system,input,measure,value\ns1,d1,m,x\ns1,d\xff,m,1\n"
    else:
        raw = content.encode()
    human = ["expert", "h"] if "human" in name or "kind" in name or "annotator" in name else []
    path = tmp_path / "t.csv"
    path.write_bytes(raw)
    with Store(db) as wh:
        _same_batches(wh, *_exact_both(wh, path, human=human))
        try:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        except (ValueError, UnicodeDecodeError, pd.errors.ParserError):
            return
        jsonl = tmp_path / "t.jsonl"
        jsonl.write_text("".join(json.dumps({k: v for k, v in r.items() if v != ""}) + "\n"
                                 for r in frame.to_dict("records")))
        _same_batches(wh, *_exact_both(wh, jsonl, human=human))
        parquet = tmp_path / "t.parquet"
        frame.replace("", None).to_parquet(parquet, index=False)
        _same_batches(wh, *_exact_both(wh, parquet, human=human))


def test_a_bad_file_is_diagnosed_in_bounded_memory(db, tmp_path, monkeypatch):
    """The exact reader ingest falls back on stages its rows in chunks: a large file with one bad
    value at its end never has more than a chunk of Python rows at a time (counted here), and
    the error names the line."""
    from metaeval.ingest import common

    monkeypatch.setattr(common, "CHUNK", 1000)
    sizes = []
    path = tmp_path / "big.csv"
    with path.open("w") as f:
        f.write("system,input,measure,value\n")
        for i in range(20_000):
            f.write(f"s{i % 7},d{i // 7},m,{i / 3}\n")
        f.write("s0,d0,n,oops\n")
    class Counting(pd.DataFrame):  # pandas' DataFrame, counting the rows of each made of a list
        def __init__(self, data=None, *args, **kwargs):
            if isinstance(data, list):
                sizes.append(len(data))
            super().__init__(data, *args, **kwargs)

    monkeypatch.setattr(pd, "DataFrame", Counting)   # (ingest.common imports pandas where it uses it)
    with Store(db) as wh:
        with pytest.raises(InputError, match=f"{path}:20002: field 'value': expected a number, got 'oops'"):
            table.ingest(wh, "t", [path])
        assert wh.con.execute("SELECT count(*) FROM scores").fetchall() == [(0,)]
    assert sizes and max(sizes) <= 1000


_ROW = '"system": "s1", "input": "d1", "measure": "m"'
TRICKY_JSONL = {
    "plain": f'{{{_ROW}, "value": 0.5}}\n{{"system": "s2", "input": "d1", "measure": "m", "value": -1e-3}}\n',
    "blank lines": f'\n{{{_ROW}, "value": 1}}\n   \n\n',
    "integer ids and values": '{"system": 2, "input": -7, "measure": "m", "value": 18446744073709551615}\n',
    "big integer value": f'{{{_ROW}, "value": 123456789012345678901234567890}}\n',
    "huge integer value": f'{{{_ROW}, "value": 1{"0" * 400}}}\n',
    "float id": '{"system": 1.0, "input": "d1", "measure": "m", "value": 1}\n',
    "big integer id": '{"system": 123456789012345678901234567890, "input": "d1", "measure": "m", "value": 1}\n',
    "bool id": '{"system": true, "input": "d1", "measure": "m", "value": 1}\n',
    "bool value": f'{{{_ROW}, "value": false}}\n',
    "string value": f'{{{_ROW}, "value": "0.5"}}\n',
    "null value": f'{{{_ROW}, "value": null}}\n',
    "object value": f'{{{_ROW}, "value": {{"a": 1}}}}\n',
    "nan": f'{{{_ROW}, "value": NaN}}\n',
    "infinity": f'{{{_ROW}, "value": -Infinity}}\n',
    "1e400": f'{{{_ROW}, "value": 1e400}}\n',
    "largest double": f'{{{_ROW}, "value": 1.7976931348623157e308}}\n',  # beyond MAX_ABS_VALUE (issue 24.9)
    "duplicate key": f'{{{_ROW}, "value": 1, "value": 2}}\n',
    "trailing comma": f'{{{_ROW}, "value": 1,}}\n',
    "comma in a string": '{"system": "a,}", "input": "d1", "measure": "m", "value": 1}\n',
    "lone surrogate": '{"system": "s\\ud800", "input": "d1", "measure": "m", "value": 1}\n',
    "lone low surrogate": '{"system": "s\\udc00", "input": "d1", "measure": "m", "value": 1}\n',
    "surrogate pair": '{"system": "s\\ud83d\\ude00", "input": "d1", "measure": "m", "value": 1}\n',
    "escapes": '{"system": "s\\u00e9\\"x\\\\", "input": "d\\/1", "measure": "m", "value": 1}\n',
    # issue 24.9: a control character in an id (JSON escapes them) is refused by both readers
    "newline in an id": '{"system": "s1", "input": "d\\n1", "measure": "m", "value": 1}\n',
    "nul in an id": '{"system": "s\\u00001", "input": "d1", "measure": "m", "value": 1}\n',
    "escape in a measure": '{"system": "s1", "input": "d1", "measure": "m\\u001b[31m", "value": 1}\n',
    "del in an annotator": '{"system": "s1", "input": "d1", "measure": "h", "value": 1, "annotator": "a\\u007f"}\n',
    "bom": f'\ufeff{{{_ROW}, "value": 1}}\n',
    "not an object": '[1, 2]\n',
    "array with a trailing comma": f'{{{_ROW}, "value": 1}}\n[1,]\n',
    "null line": f'{{{_ROW}, "value": 1}}\nnull\n',
    "empty object": f'{{{_ROW}, "value": 1}}\n{{}}\n',
    "nested trailing comma": f'{{{_ROW}, "value": 1, "kind": {{"a": [1,]}}}}\n',
    "malformed": f'{{{_ROW}, "value": 1\n',
    "two objects on a line": f'{{{_ROW}, "value": 1}}{{"a": 1}}\n',
    "leading zero": f'{{{_ROW}, "value": 01}}\n',
    "plus sign": f'{{{_ROW}, "value": +1}}\n',
    "point without digits": f'{{{_ROW}, "value": 1.}}\n',
    "spaces in ids": '{"system": " s1 ", "input": "d1", "measure": "m", "value": 1}\n',
    "empty id": '{"system": "", "input": "d1", "measure": "m", "value": 1}\n',
    "annotator and kind": ('{"system": "s1", "input": "d1", "measure": "h", "value": 1, "annotator": 3}\n'
                           '{"system": "s1", "input": "d1", "measure": "m", "value": 2, "kind": "automatic"}\n'
                           '{"system": "s2", "input": "d1", "measure": "h", "value": 2, "annotator": null}\n'),
    "bool annotator": f'{{{_ROW}, "value": 1, "annotator": true}}\n',
    "bad kind": f'{{{_ROW}, "value": 1, "kind": 1}}\n',
    "unknown key": f'{{{_ROW}, "value": 1, "extra": 1}}\n',
    "missing input on a line": f'{{{_ROW}, "value": 1}}\n{{"system": "s2", "measure": "m", "value": 1}}\n',
    "no input key": '{"system": "s1", "measure": "bleu", "value": 30.5}\n',
    "wide": '{"system": "s1", "input": "d1", "m1": 0.5, "m2": 1}\n',
    "duplicate cell": f'{{{_ROW}, "value": 1}}\n{{{_ROW}, "value": 1}}\n',
    "many digits": "".join(f'{{"system": "s{i}", "input": "d1", "measure": "m", "value": {v}}}\n' for i, v in enumerate(
        ["0.1000000000000000055511151231257827", "1.1754943508222875e-38", "9007199254740993", "1e150",
         "-0", "0.30000000000000004", "0e-40", "123.456e-7", "1E+2"])),
    # issue 48 item 10: a non-zero value read as a subnormal or 0 is refused (it was stored so)
    "underflows": "".join(f'{{"system": "s{i}", "input": "d1", "measure": "m", "value": {v}}}\n' for i, v in enumerate(
        ["2.2250738585072014e-308", "2.2250738585072011e-308", "4.9e-324", "1e-400"])),
    "an exponent in a string": '{"system": "e-100", "input": "d1", "measure": "m", "value": 1}\n',
}


@pytest.mark.parametrize("name", sorted(TRICKY_JSONL))
def test_duckdb_json_reading_agrees_with_python_or_steps_aside(db, tmp_path, name):
    path = tmp_path / "t.jsonl"
    path.write_text(TRICKY_JSONL[name], encoding="utf-8", errors="surrogatepass")
    with Store(db) as wh:
        _agree_or_step_aside(wh, *_both(wh, path, human=["h"]))


@pytest.mark.parametrize("name", ["plain", "blank lines", "integer ids and values", "escapes", "annotator and kind",
                                  "no input key", "many digits", "comma in a string"])
def test_ordinary_jsonl_is_read_by_duckdb(db, tmp_path, name):
    """The fast path is taken for ordinary JSONL tables (else it would be dead code)."""
    path = tmp_path / "t.jsonl"
    path.write_text(TRICKY_JSONL[name])
    with Store(db) as wh:
        if name == "comma in a string":  # doubted (a comma before a bracket), read by Python alike
            with pytest.raises(table.Unsure):
                table.stage(wh.con, path, human=["h"])
            return
        staged = table.stage(wh.con, path, human=["h"])
        assert _cells(wh, staged) == _cells(wh, table.parse(path, human=["h"]))
        table.drop_staged(wh.con, [staged])


def test_paths_are_not_patterns_of_file_names(db, tmp_path):
    """DuckDB's readers expand *, ? and [..] in a path: such a file is read by the Python reader,
    never the files the pattern matches (found in review)."""
    header = "system,input,measure,value\n"
    (tmp_path / "x1.csv").write_text(header + "evil,d1,m,9\n")
    (tmp_path / "x2.csv").write_text(header + "evil2,d1,m,9\n")
    path = tmp_path / "x[12].csv"
    path.write_text(header + "s1,d1,m,0.5\n")
    with Store(db) as wh:
        with pytest.raises(table.Unsure):
            table.stage(wh.con, path)
        table.ingest(wh, "g", [path])
        assert wh.con.execute("SELECT name FROM systems").fetchall() == [("s1",)]


def test_wide_typed_columns_keep_their_values(db):
    """An integer and a float32 measure column: UNPIVOT's common type would be FLOAT (found in review)."""
    frame = pd.DataFrame({"system": ["s1"], "a": np.array([16777217], np.int64), "b": np.array([0.5], np.float32)})
    with Store(db) as wh:
        table.add_scores(wh, "ds", frame)
        assert wh.matrix("ds", "a")["a"][0, 0] == 16777217.0


@pytest.mark.parametrize("columns", [["system", "input", "measure", "value", "System"],
                                     ["system", "input", "BLEU", "bleu"]])
def test_column_names_equal_but_for_case_are_read_by_python(db, columns):
    frame = pd.DataFrame([["s1", "d1", *(["m", 0.5, "x"] if "value" in columns else [0.5, 0.25])]], columns=columns)
    with Store(db) as wh:
        with pytest.raises(table.Unsure):
            table.stage(wh.con, frame, name="f")
        if "value" not in columns:  # a wide table: both measures, as parse_frame reads them
            table.add_scores(wh, "ds", frame)
            assert sorted(wh.measures("ds")["measure"]) == ["BLEU", "bleu"]


def test_a_measure_of_both_kinds_is_the_exact_error_and_leaves_nothing(db, tmp_path):
    """A file DuckDB doubts late (a measure with and without annotators) leaves no staged view
    behind for the exact reader or a later ingest to trip on (found in review)."""
    mixed, bad = tmp_path / "mixed.csv", tmp_path / "bad.csv"
    mixed.write_text("system,input,measure,value,annotator\ns1,d1,m,0.5,a\ns2,d1,m,0.5,\n")
    bad.write_text("system,input,measure,value\ns1,d1,m,x\n")
    with Store(db) as wh:
        with pytest.raises(InputError, match="has rows both with and without annotators"):
            table.ingest(wh, "x", [mixed])
        with pytest.raises(InputError, match="expected a number"):
            table.ingest(wh, "x", [bad])


@pytest.mark.parametrize("suffix, text, where", [
    (".csv", "system,input,measure,value\ns1,d1,m,0\ns2,d1,m,1e-400\n", ":3: field 'value': the value 1e-400 underflows to 0.0"),
    (".csv", "system,input,m1,m2\ns1,d1,0.5,0\ns2,d1,1,-3e-310\n", ":3: field 'm2': the value -3e-310 underflows"),
    (".jsonl", '{"system": "s1", "input": "d1", "measure": "m", "value": 0.0}\n'
               '{"system": "s2", "input": "d1", "measure": "m", "value": 1E-400}\n', ":2: field 'value': the value 1E-400"),
    (".jsonl", '{"system": "s1", "input": "d1", "measure": "m", "value": 0.' + "0" * 250 + '1e-60}\n',
     ":1: field 'value': the value 0.000"),
])
def test_a_value_that_underflows_is_refused_by_line_and_field(db, tmp_path, suffix, text, where):
    # issue 48 item 10: 1e-400 was stored as 0 silently (1e300 and 1e308 were refused)
    path = tmp_path / f"tiny{suffix}"
    path.write_text(text)
    before = digest(db)
    result = run_cli(db, "ingest", "table", path, "--dataset", "d", ok=False)
    assert result.exit_code != 0 and f"tiny{suffix}{where}" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output
    assert digest(db) == before
