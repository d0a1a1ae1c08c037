"""``--where`` / ``--by`` of the vote families (issue 44 item 4; runs/engine/subset_runs.py): a per-category
table is the table a warehouse holding only that category's votes gives (computed there, on an
ingest of the filtered file); the refusals are one line with nothing written; Python's
``wh.leaderboard(..., by=...)`` gives the command line's rows; every-vote rows stay as they were."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from metaeval.runs import Warehouse
from metaeval.runs.engine.persist import subset_fingerprint
from tests.conftest import digest, run_cli

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
#: the keys a subset adds to its rows' conventions
SUBSET_KEYS = {"subset", "subset_votes", "by", "across_subsets"}
#: family -> (its table, the example, its own arguments, the columns ordering its rows)
CASES = {
    "leaderboard": ("leaderboard", "preferences.csv", ["--k", "40"], ["system"]),
    "judge-leaderboard": ("judge_leaderboard", "preferences.csv", ["--k", "40", "--ridge", "0.01"], ["judge"]),
    "judge-diagnostics": ("judge_diagnostics", "preferences.csv", ["--k", "40", "--min-items", "5"],
                          ["judge", "diagnostic", "annotator", "system"]),
    "lc-winrate": ("lc_winrates", "alpaca.csv", ["--baseline", "baseline", "--judge", "gpt4", "--k", "40"], ["system"]),
}


def _input_column(example: str) -> str:
    return "instruction_id" if example == "alpaca.csv" else "input"


def _categories(example: str) -> dict[str, str]:
    """Each input of the example -> its category (A, B alternately, in name order)."""
    with open(EXAMPLES / example) as f:
        inputs = sorted({r[_input_column(example)] for r in csv.DictReader(f)})
    return {x: "AB"[i % 2] for i, x in enumerate(inputs)}


def _ingest(db, example: str, keep=None, tmp=None) -> None:
    """The example's votes (only the inputs ``keep`` says, written to ``tmp``) with the outputs'
    lengths of preferences.csv's dataset."""
    path = EXAMPLES / example
    if keep is not None:
        with open(path) as f:
            reader = csv.DictReader(f)
            rows = [r for r in reader if keep(r[_input_column(example)])]
            fields = reader.fieldnames
        path = tmp / f"only-{example}"
        with open(path, "w", newline="") as f:
            writer = csv.DictWriter(f, fields)
            writer.writeheader()
            writer.writerows(rows)
    if example == "alpaca.csv":
        run_cli(db, "ingest", "preferences", path, "--dataset", "d", "--judge", "gpt4")
        if keep is not None:             # AlpacaEval's instruction index, the place in the whole file
            places = tmp / "places.csv"
            places.write_text("system,input,attribute,value\n" + "".join(
                f",{x},instruction_index,{i}\n" for i, x in enumerate(sorted(_categories(example))) if keep(x)))
            run_cli(db, "ingest", "attributes", places, "--dataset", "d", "--replace")
        return
    run_cli(db, "ingest", "preferences", path, "--dataset", "d")
    lengths = EXAMPLES / "preferences-lengths.csv"
    if keep is not None:
        text = lengths.read_text().splitlines()
        kept = [line for line in text[1:] if keep(line.split(",")[1])]
        lengths = tmp / "only-lengths.csv"
        lengths.write_text("\n".join([text[0], *kept]) + "\n")
    run_cli(db, "ingest", "attributes", lengths, "--dataset", "d")


def _with_categories(db, example: str, tmp) -> dict[str, str]:
    _ingest(db, example)
    categories = _categories(example)
    path = tmp / "categories.csv"
    path.write_text("system,input,attribute,value\n" + "".join(
        f",{x},category,{c}\n,{x},tier,{'gold' if c == 'A' else 'silver'}\n" for x, c in categories.items()))
    run_cli(db, "ingest", "attributes", path, "--dataset", "d")
    return categories


def _latest(db, table: str, subset: str | None, order: list[str]) -> pd.DataFrame:
    with Warehouse(db, read_only=True) as wh:
        rows = wh.sql(f"SELECT * FROM latest_{table}" + ("" if subset is None else " WHERE subset = ?"),
                      [] if subset is None else [subset])
    return rows.sort_values(order).reset_index(drop=True)


def _conventions(text) -> dict:
    return {k: v for k, v in json.loads(text).items() if k not in SUBSET_KEYS}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_category_table_is_the_table_of_a_warehouse_of_its_votes_only(name, tmp_path):
    table, example, args, order = CASES[name]
    whole = tmp_path / "whole.duckdb"
    categories = _with_categories(whole, example, tmp_path)
    out = run_cli(whole, name, "--dataset", "d", *args, "--by", "category").output
    assert "no correction is made across" in " ".join(out.split()) and "alpha = 0.025)" in " ".join(out.split())
    for category in "AB":
        label = f"category={category}"
        alone = tmp_path / f"only-{category}.duckdb"
        _ingest(alone, example, lambda x, c=category: categories[x] == c, tmp_path)
        run_cli(alone, name, "--dataset", "d", *args)
        got, expected = _latest(whole, table, label, order), _latest(alone, table, None, order)
        assert len(got) == len(expected) > 0 and set(expected["subset"]) == {""}
        same = [c for c in expected.columns if c not in ("result_id", "run_id", "subset", "fingerprint",
                                                          "conventions")]
        pd.testing.assert_frame_equal(got[same], expected[same], check_exact=True)
        # the label folded into the fingerprint of the same votes; the conventions say the subset
        assert list(got["fingerprint"]) == [subset_fingerprint(f, label) for f in expected["fingerprint"]]
        assert [_conventions(c) for c in got["conventions"]] == [_conventions(c) for c in expected["conventions"]]
        said = json.loads(got["conventions"][0])
        assert said["subset"] == label and said["by"] == "category" and "across the 2 values" in said["across_subsets"]


def test_every_vote_rows_stay_and_a_subset_is_its_own_latest(tmp_path):
    db = tmp_path / "w.duckdb"
    _with_categories(db, "preferences.csv", tmp_path)
    run_cli(db, "leaderboard", "--dataset", "d", "--k", "40")
    whole = _latest(db, "leaderboard", "", ["system"])
    run_cli(db, "leaderboard", "--dataset", "d", "--k", "40", "--where", "category=A")
    assert whole.equals(_latest(db, "leaderboard", "", ["system"]))     # not replaced by the subset's run
    assert set(_latest(db, "leaderboard", None, ["system"])["subset"]) == {"", "category=A"}
    with Warehouse(db, read_only=True) as wh:
        runs = wh.sql("SELECT parameters FROM analysis_runs ORDER BY run_id")["parameters"].map(json.loads)
    assert "subset" not in runs[0] and runs[1]["subset"] == "category=A"
    from metaeval.runs.engine import signatures

    with Warehouse(db, read_only=True) as wh:       # the signature says the subset; every vote's as before
        signed = signatures.with_signatures(wh, _latest(db, "leaderboard", None, ["subset", "system"]))
    assert all("subset:" not in x for x in signed.loc[signed["subset"] == "", "signature"])
    assert all("|subset:category=A|" in x for x in signed.loc[signed["subset"] != "", "signature"])
    before = digest(db)                                  # both up to date, from either entry point
    run_cli(db, "leaderboard", "--dataset", "d", "--k", "40")
    run_cli(db, "leaderboard", "--dataset", "d", "--k", "40", "--where", "category=A")
    assert digest(db) == before


@pytest.mark.parametrize("extra, said", [
    (["--by", "genre"], "has no attribute 'genre'; its attributes: category"),
    (["--where", "genre=x"], "has no attribute 'genre'"),
    (["--where", "category=C"], "never has the value 'C'; its values: A, B"),
    (["--where", "category=A", "--where", "tier=silver"], "holds no vote"),
    (["--where", "category=A", "--by", "category"], "select the same attribute"),
    (["--by", "tier", "--where", "category=B"], "holds no vote"),
])
def test_refusals_are_one_line_and_write_nothing(tmp_path, extra, said):
    db = tmp_path / "w.duckdb"
    _with_categories(db, "preferences.csv", tmp_path)
    before = digest(db)
    for name in CASES:
        if name == "lc-winrate":
            continue                                      # (its own example: the same code refuses)
        result = run_cli(db, name, "--dataset", "d", "--k", "40", *extra, ok=False)
        assert result.exit_code != 0 and said in result.output, (name, result.output)
        assert len(result.output.strip().splitlines()) == 1, result.output
    assert digest(db) == before


def test_a_refusal_in_a_later_category_leaves_nothing_written(tmp_path):
    """judge-leaderboard without a prior: a judge that never loses in one category is refused
    there, and the --by run of the categories before it is rolled back with it."""
    db = tmp_path / "w.duckdb"
    _with_categories(db, "preferences.csv", tmp_path)
    refused = {c: run_cli(db, "judge-leaderboard", "--dataset", "d", "--k", "40", "--where", f"category={c}",
                          ok=False).exit_code != 0 for c in "AB"}
    if not any(refused.values()) or all(refused.values()):
        pytest.skip(f"the example's categories do not give one refusal and one table: {refused}")
    before = digest(db)
    result = run_cli(db, "judge-leaderboard", "--dataset", "d", "--k", "40", "--by", "category", ok=False)
    assert result.exit_code != 0 and "--ridge" in result.output
    assert digest(db) == before


def test_python_gives_the_command_lines_rows(tmp_path):
    db = tmp_path / "w.duckdb"
    _with_categories(db, "preferences.csv", tmp_path)
    printed = run_cli(db, "leaderboard", "--dataset", "d", "--k", "40", "--by", "category", "--format", "csv").output
    shown = pd.read_csv(io.StringIO(printed))
    with Warehouse(db) as wh:
        before = len(wh.sql("SELECT * FROM analysis_runs"))
        got = wh.leaderboard("d", k=40, by="category")
        assert len(wh.sql("SELECT * FROM analysis_runs")) == before          # the same setting: reused
        one = wh.leaderboard("d", k=40, where=["category=B"])
        with pytest.raises(Exception, match="never has the value 'C'"):
            wh.leaderboard("d", k=40, where={"category": "C"})
    assert list(got) == ["category=A", "category=B"] and list(one) == ["category=B"]
    rows = pd.concat(list(got.values()), ignore_index=True)
    assert list(rows["result_id"]) == list(shown["result_id"]) and list(rows["subset"]) == list(shown["subset"])
    pd.testing.assert_frame_equal(one["category=B"].reset_index(drop=True),
                                  got["category=B"].reset_index(drop=True))
    assert got.note and "alpha / 2" in got.note and got.votes["category=A"] + got.votes["category=B"] == got.total


def test_the_report_shows_each_category_and_the_correction_across(tmp_path):
    import html

    db = tmp_path / "w.duckdb"
    _with_categories(db, "preferences.csv", tmp_path)
    run_cli(db, "leaderboard", "--dataset", "d", "--k", "40")
    run_cli(db, "leaderboard", "--dataset", "d", "--k", "40", "--by", "category")
    out = tmp_path / "r.html"
    run_cli(db, "report", "--dataset", "d", "--out", out)
    text = " ".join(html.unescape(out.read_text()).split())
    heads = [h for h in ("Ratings from the human votes</h3>", "Ratings from the human votes on the inputs with "
                         "category=A</h3>", "Ratings from the human votes on the inputs with category=B</h3>")]
    assert all(h in text for h in heads) and text.index(heads[0]) < text.index(heads[1]) < text.index(heads[2])
    assert text.count("no correction is made across the 2 values") == 2


def test_a_schema_10_warehouse_upgrades_keeping_its_vote_rows(tmp_path):
    from metaeval import schema
    from metaeval.connection import duckdb_connect

    db = tmp_path / "w.duckdb"
    _with_categories(db, "preferences.csv", tmp_path)
    run_cli(db, "leaderboard", "--dataset", "d", "--k", "40")
    run_cli(db, "judge-diagnostics", "--dataset", "d", "--k", "40")
    tables = ("leaderboard", "judge_diagnostics")
    with duckdb_connect(db) as con:                   # as schema 10 had them: no subset column
        before = {t: con.execute(f"SELECT * EXCLUDE (subset) FROM {t} ORDER BY result_id").df() for t in tables}
        for t in tables:
            con.execute(f"DROP VIEW latest_{t}")
            con.execute(f"ALTER TABLE {t} DROP COLUMN subset")
        con.execute("UPDATE schema_info SET value = '10' WHERE key = 'version'")
    assert f"from schema 10 to {schema.SCHEMA_VERSION}" in run_cli(db, "init").output
    with Warehouse(db, read_only=True) as wh:
        for t in tables:
            after = wh.sql(f"SELECT * FROM {t} ORDER BY result_id")
            assert set(after["subset"]) == {""} and len(wh.sql(f"SELECT * FROM latest_{t}")) == len(after)
            pd.testing.assert_frame_equal(after.drop(columns="subset"), before[t])
    state = digest(db)                                # still up to date
    run_cli(db, "leaderboard", "--dataset", "d", "--k", "40")
    assert digest(db) == state


def test_a_family_with_vote_subsets_declares_them_and_its_tables_key_them(tmp_path):
    """The families whose options restrict the votes (Option.restricts) are the four vote families,
    and each of their tables has the subset key, so that a family added with the two options
    cannot store a subset's rows as every vote's; a restriction of another table is refused."""
    from metaeval.runs.engine import options
    from metaeval.runs.engine.families import FAMILIES

    with_subsets = {n for n, f in FAMILIES.items() if any(o.restricts for o in f.options)}
    assert with_subsets == set(CASES)
    db = tmp_path / "w.duckdb"
    with Warehouse.create(db) as wh:
        for name in with_subsets:
            assert {o.name: o.role for o in FAMILIES[name].options if o.restricts} == {"where": "subset",
                                                                                       "by": "subset"}
            for table in FAMILIES[name].tables:
                assert "subset" in set(wh.sql(f"SELECT * FROM {table} LIMIT 0").columns), table
    with pytest.raises(ValueError, match="restricts 'scores'"):
        options.WHERE.but(role="subset", restricts="scores")
    with pytest.raises(ValueError, match="needs the role 'subset'"):
        options.WHERE.but(restricts="preferences")


def test_an_interrupted_by_run_keeps_the_categories_finished(tmp_path, monkeypatch):
    from metaeval.runs.engine.families import FAMILIES

    db = tmp_path / "w.duckdb"
    _with_categories(db, "preferences.csv", tmp_path)
    family = FAMILIES["leaderboard"]
    own, calls = type(family).compute, []

    def compute(self, wh, **params):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return own(self, wh, **params)

    monkeypatch.setattr(type(family), "compute", compute)
    with Warehouse(db) as wh, pytest.raises(KeyboardInterrupt):
        wh.leaderboard("d", k=40, by="category")
    monkeypatch.undo()
    assert set(_latest(db, "leaderboard", None, ["system"])["subset"]) == {"category=A"}
    before = digest(db)
    with Warehouse(db) as wh:                 # A is up to date; B is computed
        assert list(wh.leaderboard("d", k=40, by="category")) == ["category=A", "category=B"]
        statuses = set(wh.sql("SELECT status FROM analysis_runs")["status"])
    assert digest(db) != before and statuses == {"finished"}
