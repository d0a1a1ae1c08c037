"""Refusals and answers under hostile input (issue 32, "Defects found under hostile input"):
each refusal a non-zero exit with one line naming the option (or file, line and field), and
nothing written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metaeval import Store

FACTUALITY = Path(__file__).resolve().parents[1] / "examples" / "factuality" / "scores.csv"


def _one_error_line(result) -> str:
    assert result.exit_code != 0, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    return lines[0]


# --- a constant metric is nobody's duplicate ------------------------------------------------------
def test_a_constant_measure_is_nobodys_duplicate_and_no_chain_passes_through_it(db, cli, tmp_path):
    cli("ingest", "table", FACTUALITY, "--dataset", "f", "--human", "human.*")
    frame = pd.read_csv(FACTUALITY)
    mym = frame[["system", "input"]].assign(mym=3.0, other=3.0, shifted=2 * frame["system-recognizer"] + 1)
    mym.to_csv(tmp_path / "mym.csv", index=False)
    cli("ingest", "table", tmp_path / "mym.csv", "--dataset", "f")
    with Store(db, read_only=True) as wh:
        dups = wh.duplicates("f")
        listed = wh.measures("f", duplicates=True).set_index("measure")
    # the constants (mym, other: equal in every cell) duplicate nothing and nothing duplicates them;
    # a real affine copy is still found
    assert dups[["measure", "duplicate_of", "relation"]].values.tolist() == [["system-recognizer", "shifted", "affine"]]
    for name in ("mym", "other", "consistency-detector", "shifted"):
        assert pd.isna(listed.loc[name, "duplicate_of"]), name


# --- one rule for ids and names: a control or separator character at an end is refused, not stripped ------
#: What str.strip() took away and so merged "s1\x1f" into "s1": C0 separators, NEL, line separator,
#: VT, FF, TAB; a no-break space (a space that is not U+0020) makes another name that looks the same.
EDGES = ["\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u2028", "\x0b", "\x0c", "\t", "\u00a0"]
LONG = [{"system": "s0", "input": "d0", "measure": "m", "value": 1.0},
        {"system": "s1", "input": "d0", "measure": "m", "value": 2.0},
        {"system": "s2", "input": "d0", "measure": "m", "value": 3.0}]


def _write_table(frame: pd.DataFrame, path: Path) -> None:
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path, index=False)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet", "DataFrame"])
@pytest.mark.parametrize("field", ["system", "measure"])
def test_an_id_beginning_or_ending_with_a_control_or_separator_is_refused_on_every_table_path(db, tmp_path, suffix,
                                                                                              field):
    from metaeval.errors import InputError
    from metaeval.ingest import table

    with Store(db) as wh:
        table.ingest(wh, "t", [_write_table(pd.DataFrame(LONG), tmp_path / "ok.csv") or tmp_path / "ok.csv"])
        before = wh.sql("SELECT * FROM cells ORDER BY ALL").values.tolist()
        for i, char in enumerate(EDGES):
            rows = [dict(r) for r in LONG]
            rows[1][field] = rows[1][field] + char if i % 2 else char + rows[1][field]
            frame = pd.DataFrame(rows).assign(value=[1.0, 5.0, 3.0])
            path = tmp_path / f"t{i}{suffix}"
            with pytest.raises(InputError) as caught:
                if suffix == "DataFrame":
                    table.add_scores(wh, "t", frame)
                else:
                    _write_table(frame, path)
                    table.ingest(wh, "t", [path])
            message = str(caught.value)
            where = "<DataFrame>:2" if suffix == "DataFrame" else f"{path}:{3 if suffix == '.csv' else 2}"
            assert message.startswith(f"{where}: field '{field}': the id {rows[1][field]!r} "), (char, message)
            assert f"U+{ord(char):04X}" in message and "\n" not in message, message
        assert wh.sql("SELECT * FROM cells ORDER BY ALL").values.tolist() == before


def test_the_same_rule_holds_for_attributes_preferences_and_rename(db, cli, tmp_path):
    from metaeval.errors import InputError
    from metaeval.ingest import preferences

    pd.DataFrame(LONG).to_csv(tmp_path / "ok.csv", index=False)
    cli("ingest", "table", tmp_path / "ok.csv", "--dataset", "t")
    attributes = tmp_path / "a.csv"
    attributes.write_text("input,attribute,value\nd0,split,test\nd0,source\x1f,xsum\n", encoding="utf-8")
    line = _one_error_line(cli("ingest", "attributes", attributes, "--dataset", "t", expect_ok=False))
    assert f"{attributes}:3: field 'attribute': the id 'source\\x1f'" in line and "U+001F" in line
    path = tmp_path / "p.csv"
    path.write_text("input,system_a,system_b,judge,order,winner,kind\nd0,s0,s1\u00a0,gpt,ab,a,\n", encoding="utf-8")
    with Store(db) as wh, pytest.raises(InputError, match=r":2: field 'system_b': the id 's1\\xa0' ends with"):
        preferences.ingest(wh, "t", path)
    for new, code in (("m2\x1f", "U+001F"), ("\u2028m2", "U+2028"), ("m2\u00a0", "U+00A0")):
        line = _one_error_line(cli("rename", "measure", "t", "m", new, expect_ok=False))
        assert code in line, line
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT count(*) AS n FROM attributes")["n"].iloc[0] == 0
        assert wh.sql("SELECT count(*) AS n FROM preferences")["n"].iloc[0] == 0
        assert wh.measures("t")["measure"].tolist() == ["m"]


# --- a single-value option given twice ------------------------------------------------------------------
@pytest.mark.parametrize("args, option", [
    (("correlate", "--dataset", "f", "--human", "human.consistency", "--by", "split", "--by", "source"), "--by"),
    (("correlate", "--dataset", "f", "--human", "human.consistency", "--control", "system", "--control", "source"),
     "--control"),
    (("simulate", "coverage", "--dataset", "f", "--human", "human.consistency", "--k", "50", "--k=60"), "--k"),
    (("results", "correlations", "--dataset", "f", "--format", "csv", "--format", "json"), "--format"),
])
def test_a_single_value_option_given_twice_is_refused_in_one_line(db, cli, args, option):
    cli("ingest", "table", FACTUALITY, "--dataset", "f", "--human", "human.*")
    with Store(db, read_only=True) as wh:
        runs = wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"].iloc[0]
    line = _one_error_line(cli(*args, expect_ok=False))
    assert line == f"Error: {option} is given more than once; it takes one value: give it once"
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"].iloc[0] == runs


def test_repeatable_options_and_db_before_and_after_the_command_still_work(db, cli):
    from click.testing import CliRunner

    from metaeval.cli import main

    cli("ingest", "table", FACTUALITY, "--dataset", "f", "--human", "human.*")
    cli("measures", "f", "--db", str(db))                                   # --db before and after, the same file
    out = cli("correlate", "--dataset", "f", "--human", "human.consistency", "--metric", "system-recognizer",
              "--metric", "consistency-detector", "--level", "system", "--level", "summary").output
    assert "consistency-detector" in out
    result = CliRunner().invoke(main, ["--db", str(db), "--db", str(db), "datasets"])
    assert result.exit_code == 0, result.output


# --- an unknown dataset is refused by results and export, and nothing is created -------------------------
@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl"])
def test_export_and_results_refuse_an_unknown_dataset_and_create_nothing(db, cli, tmp_path, fmt):
    cli("ingest", "table", FACTUALITY, "--dataset", "f", "--human", "human.*")
    out = tmp_path / "out" / f"rows.{fmt}"
    out.parent.mkdir()
    for table in ("correlations", "analysis_runs"):
        line = _one_error_line(cli("export", table, "--dataset", "nosuch", "--out", out, expect_ok=False))
        assert line == "Error: unknown dataset 'nosuch'; the warehouse has: f"
        assert list(out.parent.iterdir()) == []
        line = _one_error_line(cli("results", table, "--dataset", "nosuch", expect_ok=False))
        assert line == "Error: unknown dataset 'nosuch'; the warehouse has: f"
    cli("export", "correlations", "--dataset", "f", "--out", out)    # a known dataset without rows: an empty file
    assert out.exists()


# --- compare --sequential --k-max beyond the analyses' bound -----------------------------------------------
def test_a_sequential_compare_beyond_the_bound_on_k_is_the_one_line_k_error_and_writes_nothing(db, cli):
    from metaeval.analyses.stats.validation import K_MAX

    cli("ingest", "table", FACTUALITY, "--dataset", "f", "--human", "human.*")
    compare = ("compare", "--dataset", "f", "--human", "human.consistency", "--sequential")
    line = _one_error_line(cli(*compare, "--k-max", 10 * K_MAX, expect_ok=False))
    assert line == f"Error: --k-max {10 * K_MAX} is more resamples than the analyses draw: at most --k-max {K_MAX}"
    line = _one_error_line(cli(*compare, "--k-max", 10, expect_ok=False))
    assert line.startswith("Error: --k-max 10 is too small for a resampling test") and "--k-max 19 or more" in line
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT count(*) AS n FROM analysis_runs")["n"].iloc[0] == 0
        assert wh.sql("SELECT count(*) AS n FROM hypothesis_tests")["n"].iloc[0] == 0
