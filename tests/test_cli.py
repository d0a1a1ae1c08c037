"""Set-up and the commands a new user runs first."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import click
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval import Store, WarehouseError, schema
from metaeval.cli import main
from metaeval.connection import duckdb_connect
from metaeval.runs.engine.options import ALPHA, K, SEED
from tests.conftest import ROOT, run_cli


def test_init_twice_is_harmless(tmp_path):
    db = tmp_path / "w.duckdb"
    runner = CliRunner()
    first = runner.invoke(main, ["--db", str(db), "init"])
    second = runner.invoke(main, ["--db", str(db), "init"])
    assert first.exit_code == 0 and "Created" in first.output
    assert second.exit_code == 0 and "Checked" in second.output


def test_db_from_environment(tmp_path, monkeypatch):
    db = tmp_path / "env.duckdb"
    monkeypatch.setenv("METAEVAL_DB", str(db))
    assert CliRunner().invoke(main, ["init"]).exit_code == 0
    assert db.exists()


def test_missing_warehouse_says_how_to_create_it_in_a_pasteable_command(tmp_path):
    path = tmp_path / "my warehouse.duckdb"
    result = CliRunner().invoke(main, ["--db", str(path), "datasets"])
    assert result.exit_code != 0
    hint = result.output.split("`")[1]
    assert hint == f"metaeval --db '{path}' init"
    assert CliRunner().invoke(main, shlex.split(hint)[1:]).exit_code == 0 and path.exists()


def test_schema_1_warehouse_is_refused_then_upgraded_by_init_keeping_rows(tmp_path):
    db = tmp_path / "old warehouse.duckdb"
    run_cli(db, "demo", "--dataset", "d", "--systems", "4", "--inputs", "5", "--k", "40")
    with duckdb_connect(db) as con:  # as a version-1 warehouse was: no family columns, 0.1.0 runs
        before = con.execute("SELECT count(*) FROM hypothesis_tests").fetchall()[0][0]
        cells = con.execute("SELECT * FROM cells ORDER BY ALL").fetchall()
        con.execute("DROP VIEW latest_hypothesis_tests")
        con.execute("ALTER TABLE hypothesis_tests DROP COLUMN family")
        con.execute("ALTER TABLE hypothesis_tests DROP COLUMN family_size")
        con.execute("UPDATE schema_info SET value = '1' WHERE key = 'version'")
        con.execute("UPDATE analysis_runs SET version = '0.1.0'")
    result = run_cli(db, "correlate", "--dataset", "d", "--human", "expert.relevance", ok=False)
    assert result.exit_code != 0 and f"upgrade it with `metaeval --db '{db}' init`" in result.output
    upgraded = run_cli(db, "init").output
    assert f"Upgraded warehouse {db} from schema 1 to {schema.SCHEMA_VERSION}" in upgraded
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT value FROM schema_info WHERE key = 'version'")["value"][0] == str(schema.SCHEMA_VERSION)
        assert wh.con.execute("SELECT * FROM cells ORDER BY ALL").fetchall() == cells  # scores, judgments rebuilt
        rows = wh.sql("SELECT family, family_size FROM hypothesis_tests")
        assert len(rows) == before > 0 and rows["family"].isna().all()
        assert len(wh.sql("SELECT * FROM latest_hypothesis_tests")) > 0
    assert "Checked warehouse" in run_cli(db, "init").output
    # results of the earlier version are recomputed, not served
    again = run_cli(db, "demo", "--dataset", "d", "--systems", "4", "--inputs", "5", "--k", "40").output
    assert "correlate: 16 results, computed 16" in again and "compare: 48 results, computed 48" in again, again


#: analysis_runs as schema 2 defined it: without the owner process of a run
SCHEMA_2_RUNS = """
CREATE SEQUENCE IF NOT EXISTS run_id_seq;
CREATE TABLE IF NOT EXISTS analysis_runs (
    run_id            INTEGER PRIMARY KEY DEFAULT nextval('run_id_seq'),
    command           VARCHAR NOT NULL,
    parameters        JSON NOT NULL,
    seed              BIGINT,
    started_at        TIMESTAMPTZ NOT NULL DEFAULT current_timestamp,
    finished_at       TIMESTAMPTZ,
    status            VARCHAR NOT NULL DEFAULT 'running',
    version           VARCHAR NOT NULL,
    data_fingerprint  VARCHAR NOT NULL,
    tasks             INTEGER,
    computed          INTEGER,
    command_line      VARCHAR
);
"""


def _as_schema_2(db: Path, out: Path) -> None:
    """Write ``out``: the warehouse ``db`` as a schema-2 warehouse was. DuckDB cannot drop a
    column of a table that foreign keys reference, so the tables are created anew, with
    analysis_runs as schema 2 had it, every row is copied and every sequence advanced as far."""
    with duckdb_connect(out) as con:
        for name, sql in schema.ddl_scripts():
            if name != "90_comments.sql":  # schema 2 had no comments (they name columns of schema 3)
                con.execute(SCHEMA_2_RUNS if name == "20_analysis_runs.sql" else sql)
        con.execute(f"ATTACH '{db}' AS new (READ_ONLY)")
        tables = con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'new' "
                             "ORDER BY table_oid").fetchall()
        for (table,) in tables:  # in the order they were created: referenced tables first
            columns = ", ".join(f'"{c}"' for (c,) in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
                "AND table_name = ? ORDER BY column_index", [table]).fetchall())
            con.execute(f'INSERT INTO main."{table}" ({columns}) SELECT {columns} FROM new."{table}"')
        for name, last in con.execute("SELECT sequence_name, last_value FROM duckdb_sequences() "
                                      "WHERE database_name = 'new'").fetchall():
            con.execute(f"SELECT nextval('{name}') FROM range({last or 0})").fetchall()
        con.execute("DETACH new")
        con.execute("UPDATE schema_info SET value = '2' WHERE key = 'version'")


def test_schema_2_warehouse_is_refused_then_upgraded_by_init_keeping_rows(tmp_path):
    new = tmp_path / "new.duckdb"
    run_cli(new, "demo", "--dataset", "d", "--systems", "4", "--inputs", "5", "--k", "40")
    db = tmp_path / "old warehouse.duckdb"
    _as_schema_2(new, db)
    with duckdb_connect(db) as con:  # and a run of schema 2 left running: no owner recorded
        con.execute("INSERT INTO analysis_runs (command, parameters, version, data_fingerprint) "
                    "VALUES ('ci', '{}', '0.2.0', 'x')")
        runs = con.execute("SELECT * FROM analysis_runs ORDER BY run_id").df()
        counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0]
                  for t in ("scores", "judgments", "correlations", "confidence_intervals", "hypothesis_tests")}
    assert list(runs["status"]) == ["finished"] * 3 + ["running"]
    result = run_cli(db, "correlate", "--dataset", "d", "--human", "expert.relevance", ok=False)
    assert result.exit_code != 0 and f"upgrade it with `metaeval --db '{db}' init`" in result.output
    upgraded = run_cli(db, "init").output
    assert f"Upgraded warehouse {db} from schema 2 to {schema.SCHEMA_VERSION}" in upgraded
    with Store(db, read_only=True) as wh:
        assert wh.sql("SELECT value FROM schema_info WHERE key = 'version'")["value"][0] == str(schema.SCHEMA_VERSION)
        upgraded_runs = wh.sql("SELECT * FROM analysis_runs ORDER BY run_id")
        assert {t: len(wh.sql(f"SELECT * FROM {t}")) for t in counts} == counts
    pd.testing.assert_frame_equal(upgraded_runs[runs.columns], runs)  # the unknown owner's run still running
    assert upgraded_runs[["owner_pid", "owner_host", "owner_start"]].isna().all().all()
    assert "Checked warehouse" in run_cli(db, "init").output
    # the same release's results are reused; a new run records its owner
    again = run_cli(db, "demo", "--dataset", "d", "--systems", "4", "--inputs", "5", "--k", "40").output
    assert "correlate: 16 results, up to date" in again and "compare: 48 results, up to date" in again, again
    run_cli(db, "correlate", "--dataset", "d", "--human", "expert.relevance", "--level", "system", "--force")
    with Store(db, read_only=True) as wh:
        last = wh.sql("SELECT * FROM analysis_runs ORDER BY run_id")
    assert len(last) == len(runs) + 1 and last["status"].iloc[len(runs) - 1] == "running"
    assert (last["owner_pid"].iloc[-1], last["owner_host"].iloc[-1]) == (os.getpid(), socket.gethostname())


def test_other_schema_version_is_refused(db):
    with duckdb_connect(db) as con:
        con.execute("UPDATE schema_info SET value = '999' WHERE key = 'version'")
    try:
        Store(db)
    except WarehouseError as exc:
        assert "schema version 999" in str(exc) and str(schema.SCHEMA_VERSION) in str(exc)
    else:
        raise AssertionError("a warehouse of another schema version was opened")
    result = CliRunner().invoke(main, ["--db", str(db), "datasets"])
    assert result.exit_code != 0 and "schema version 999" in result.output


def test_unknown_dataset_and_measure_name_what_exists(cli):
    cli("demo", "--systems", "4", "--inputs", "5")
    result = cli("matrix", "nope", "x", expect_ok=False)
    assert result.exit_code != 0 and "unknown dataset 'nope'" in result.output and "demo" in result.output
    result = cli("matrix", "demo", "x", expect_ok=False)
    assert result.exit_code != 0 and "no measure 'x'" in result.output and "sim-high.f1" in result.output


def test_demo_runs_the_pipeline_and_is_idempotent(cli, db):
    out = cli("demo", "--k", "200").output
    assert "compare: 48 results, computed 48" in out
    with Store(db, read_only=True) as wh:
        first = wh.matrix("demo", "sim-low.f1").values
        ci = wh.sql("SELECT * FROM latest_confidence_intervals WHERE level = 'system' AND coefficient = 'pearson'"
                    " ORDER BY estimate DESC")
    assert first.shape == (12, 50)
    # the synthetic truth: the low-fidelity metric is last, and its printed CI is the stored one
    assert ci["metric"].iloc[-1] == "sim-low.f1"
    low = ci.iloc[-1]
    assert f"[{round(low.lower, 3)}, {round(low.upper, 3)}]" in out
    again = cli("demo", "--k", "200").output
    assert "nothing changed" in again and "compare: 48 results, up to date" in again


def test_every_command_has_help():
    runner = CliRunner()
    for args in (["--help"], ["init", "--help"], ["ingest", "--help"], ["ingest", "sacrerouge", "--help"],
                 ["ingest", "summaries", "--help"], ["ingest", "table", "--help"], ["datasets", "--help"],
                 ["measures", "--help"], ["matrix", "--help"], ["sql", "--help"], ["demo", "--help"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 0 and "Usage:" in result.output, args


# --- the README and the documentation site, as a new user reads them ----------------------------
README = ROOT / "README.md"
#: README.md and every page of the documentation site (docs/, as mkdocs.yml builds it)
DOC_PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]


def readme_commands(pages=DOC_PAGES, fences=("bash",)) -> list[list[str]]:
    """Every ``metaeval`` command line of the pages' bash blocks (continuations joined,
    comments dropped); ``fences=("bash", "text")`` adds the commands shown but not run."""
    commands = []
    for page in pages:
        for fence, block in re.findall(r"^```(\w*)\n(.*?)^```", page.read_text(), flags=re.DOTALL | re.MULTILINE):
            if fence not in fences:
                continue
            for line in block.replace("\\\n", " ").splitlines():
                words = shlex.split(line, comments=True)
                for i, w in enumerate(words):
                    if w in (">", "|", "&&", ";"):     # the shell's part: redirections, pipes
                        words = words[:i]
                        break
                if "metaeval" in words[:3] and words[0] != "metaeval":     # `cat FILE | metaeval ...`
                    words = words[words.index("metaeval"):]
                if words[:1] == ["metaeval"]:
                    commands.append(words)
    return commands


def _without_group_options(args: list[str]) -> list[str]:
    """A documented command line's words after ``metaeval`` without the group's options (``--db PATH``:
    every guide names its own warehouse)."""
    while args and args[0].startswith("--"):
        args = args[2:]
    return args


def _subcommand(words: list[str]):
    """The click command a documented line names, and its own arguments."""
    command, args = main, words[1:]
    while isinstance(command, click.Group):
        while args[0].startswith("--"):    # group options (--db PATH)
            args = args[2:]
        command, args = command.commands[args[0]], args[1:]
    return command, args


def test_every_documented_command_line_parses():
    """Option names, choices and ranges of every command of the README and the documentation
    site (bash and text blocks) are what the CLI accepts."""
    commands = readme_commands(fences=("bash", "text"))
    assert len(commands) > 100
    written = {w[i + 1] for w in commands for i, a in enumerate(w[:-1]) if a == "--out"}   # by an earlier line
    for words in commands:
        command, args = _subcommand(words)
        read = [a.startswith("../shared/") or (a in written and (i == 0 or args[i - 1] != "--out"))
                for i, a in enumerate(args)]
        if any(read):  # needs the data, or a file an earlier line writes; its options still parse
            args = [str(ROOT / "README.md") if r else a for a, r in zip(args, read)]
        try:
            command.make_context(command.name, list(args), obj=None)
        except click.ClickException as exc:
            raise AssertionError(f"docs: `{shlex.join(words)}` does not parse: {exc.format_message()}") from None


def test_the_documentation_shows_every_command():
    """Every command and subcommand is shown in a command line of the README or of a page of
    the documentation site."""
    shown = {" ".join(_without_group_options(w[1:])[:3]) for w in readme_commands(fences=("bash", "text"))}
    text = "\n".join(page.read_text() for page in DOC_PAGES)
    for name, command in main.commands.items():
        subs = command.commands if isinstance(command, click.Group) else {"": command}
        for sub in subs:
            line = f"{name} {sub}".strip()
            assert any(s == line or s.startswith(line + " ") for s in shown) or f"metaeval {line}" in text, \
                f"the documentation never shows `metaeval {line}`"
    assert "--jobs 2" in text


def test_readme_walkthrough_runs_on_a_fresh_clone():
    """The README's five-minute walk-through reads only files the repository ships."""
    for words in readme_commands([README]):
        for arg in words:
            if arg.endswith((".csv", ".jsonl", ".tsv", ".parquet")) and "/" in arg and not arg.startswith("-"):
                path = arg.split(":", 1)[-1]
                assert (ROOT / path).exists(), f"README: `{shlex.join(words)}` reads {path}, which is not shipped"


def test_documented_plot_commands_work_on_the_demo(cli, tmp_path):
    """The documentation's `plot ci` and `plot heatmap` lines, on a small demo: the demo runs
    the same kind of analyses (Boot-Both CIs, Perm-Both tests, Holm)."""
    cli("demo", "--systems", "5", "--inputs", "8", "--k", "50")
    plots = [["metaeval", *_without_group_options(w[1:])] for w in readme_commands()]     # the fixture's --db
    plots = [w for w in plots if w[1:2] == ["plot"]]
    assert {w[2] for w in plots} >= {"ci", "heatmap"}
    for words in plots:
        if words[2] == "power" or "demo" not in words:
            continue
        args = list(words[1:])
        args[args.index("--out") + 1] = str(tmp_path / Path(args[args.index("--out") + 1]).name)
        result = cli(*args, expect_ok=False)
        assert result.exit_code == 0, f"docs `{shlex.join(words)}` on the demo: {result.output}"


# --- hints print commands that work when copy-pasted --------------------------------------------
def _hinted(output: str) -> list[list[str]]:
    """The ``metaeval ...`` command lines an output suggests (in backticks or indented; a long one
    continued with `` \\`` on the next lines, as the shell reads it)."""
    output = re.sub(r" \\\n\s*", " ", output)
    lines = re.findall(r"`(metaeval [^`]+)`", output) + re.findall(r"^\s+(metaeval .+)$", output, flags=re.MULTILINE)
    return [shlex.split(line) for line in lines]


def test_compare_hint_draws_the_tests_it_ran(cli, db, tmp_path):
    cli("demo", "--systems", "5", "--inputs", "8", "--k", "50")
    out = cli("compare", "--dataset", "demo", "--human", "expert.relevance", "--level", "system",
              "--level", "summary", "--level", "global", "--coefficient", "spearman", "--coefficient", "kendall",
              "--method", "perm-inputs", "--k", "50", "--alternative", "two-sided", "--correction", "bh",
              "--correction-group", "all", "--alpha", "0.1").output
    hints = [h for h in _hinted(out) if "heatmap" in h]
    assert len(hints) == 6, out
    for words in hints:
        assert words[1:3] == ["--db", str(db)]
        args = words[3:]
        args[args.index("--out") + 1] = str(tmp_path / args[args.index("--out") + 1])
        result = run_cli(db, *args)
        assert result.output.startswith("wrote ")
        assert {"--alternative", "two-sided", "--correction", "bh", "--correction-group", "all"} <= set(args)


def test_plot_error_names_the_command_that_produces_the_rows(cli, db, tmp_path):
    cli("demo", "--systems", "5", "--inputs", "8", "--k", "50")
    target = tmp_path / "t.png"
    plot = ["plot", "heatmap", "--dataset", "demo", "--human", "expert.relevance", "--level", "global",
            "--coefficient", "spearman", "--method", "williams", "--alternative", "less", "--out", target]
    result = cli(*plot, expect_ok=False)
    assert result.exit_code != 0
    # what is stored is listed as options, and the hinted command produces what is missing
    assert "--level system --coefficient pearson --method perm-both --alternative two-sided --correction holm" \
        in result.output
    [words] = [h for h in _hinted(result.output) if "compare" in h]
    assert {"--level", "global", "--coefficient", "spearman", "--method", "williams", "--alternative", "less"} \
        <= set(words)
    run_cli(db, *words[3:])
    cli(*plot)
    assert target.stat().st_size > 1000


def test_demo_hints_work(cli, db, tmp_path, monkeypatch):
    out = cli("demo", "--systems", "5", "--inputs", "8", "--k", "50").output
    hints = _hinted(out)
    assert len(hints) == 2
    monkeypatch.chdir(tmp_path)
    for words in hints:
        assert words[1:3] == ["--db", str(db)]
        run_cli(db, *words[3:])
    assert (tmp_path / "tests.png").stat().st_size > 1000


# --- bad arguments are clear errors, never tracebacks ------------------------------------------
@pytest.mark.parametrize("seed", ["-1", str(2**63), "99999999999999999999"])
def test_seed_out_of_range_is_refused_before_any_run(cli, db, seed):
    cli("demo", "--systems", "4", "--inputs", "5", "--k", "40")
    with Store(db, read_only=True) as wh:
        runs = len(wh.sql("SELECT * FROM analysis_runs"))
    for args in (["ci", "--dataset", "demo", "--human", "expert.relevance", "--level", "system"],
                 ["compare", "--dataset", "demo", "--human", "expert.relevance", "--level", "system"],
                 ["systems-agreement", "--dataset", "demo", "--human", "expert.relevance", "--test", "permutation"],
                 ["simulate", "coverage", "--dataset", "demo", "--human", "expert.relevance", "--metric", "*"],
                 ["demo", "--dataset", "other"]):
        result = cli(*args, "--seed", seed, expect_ok=False)
        # a declared --seed (the families') refuses in the Python API's words; demo's own, in click's
        said = _python_refusal(SEED, int(seed)) if args[0] != "demo" else "is not in the range"
        assert result.exit_code == 2 and "--seed" in result.output and said in result.output, (args, result.output)
    with Store(db, read_only=True) as wh:
        after = wh.sql("SELECT * FROM analysis_runs")
    assert len(after) == runs and set(after["status"]) == {"finished"}
    assert str(2**63 - 1) in cli("ci", "--help").output


def _python_refusal(option, value) -> str:
    """The text the Python API's refusal of ``value`` for the declared ``option`` prints on the
    command line (:func:`metaeval.cli.app.error_text` of its WarehouseError)."""
    from metaeval.cli.app import error_text
    from metaeval.errors import WarehouseError

    with pytest.raises(WarehouseError) as refused:
        option.value(value)
    return error_text(refused.value)


def _one_line_usage_error(result, option: str) -> None:
    """A refused option: exit 2, no traceback, the error on one line naming the option."""
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert len(error) == 1 and option in error[0], result.output


def test_non_finite_epsilon_and_alpha_are_one_line_errors_before_anything_opens(tmp_path):
    """Issue 24.6: `--epsilon nan|inf|1e400` (correlate, ci, compare) and `--alpha nan` were
    tracebacks out of the analyses after a run had started (click lets nan through a range;
    1e400 reads as inf). Now refused while parsing: the warehouse is not even opened."""
    db = tmp_path / "never.duckdb"
    scope = ["--dataset", "demo", "--human", "expert.relevance", "--level", "system", "--coefficient", "kendall"]
    for value in ("nan", "inf", "-inf", "1e400", "NaN"):
        for command in ("correlate", "ci", "compare"):
            result = run_cli(db, command, *scope, "--epsilon", value, ok=False)
            _one_line_usage_error(result, "'--epsilon'")
            assert "x>=0" in result.output and ("not a finite number" in result.output) != (value == "-inf")
    human = ["--dataset", "demo", "--human", "expert.relevance"]
    for args in (["ci", *scope], ["compare", *scope], ["evaluate", "--metric", "sim-*", *human],
                 ["annotators", *human], ["winners", *human], ["systems-agreement", *human],
                 ["simulate", "coverage", *human, "--metric", "*"], ["plot", "heatmap", *human],
                 ["rank-tasks", "--task", "demo:expert.relevance:system:kendall"]):
        for value in ("nan", "inf", "1e400"):
            result = run_cli(db, *args, "--alpha", value, ok=False)
            _one_line_usage_error(result, "'--alpha'")
            assert "0<x<1" in result.output or _python_refusal(ALPHA, float(value)) in result.output, (args,
                                                                                                     result.output)
    assert not db.exists()


def test_a_huge_k_is_refused_before_anything_opens_with_the_bound(tmp_path):
    """Issue 24.6: `ci --k 99999999999999999999` failed inside numpy ("Maximum allowed dimension
    exceeded") after starting a run; every k is now at most K_MAX (README), also in the API."""
    from metaeval.analyses.stats import bootstrap_ci
    from metaeval.analyses.stats.validation import K_MAX

    db = tmp_path / "never.duckdb"
    human = ["--dataset", "demo", "--human", "expert.relevance"]
    for args in (["ci", *human, "--level", "system", "--k"], ["compare", *human, "--level", "system", "--k"],
                 ["compare", *human, "--level", "system", "--k-block"], ["demo", "--dataset", "other", "--k"],
                 ["evaluate", "--metric", "sim-*", *human, "--k"], ["annotators", *human, "--k"],
                 ["simulate", "power", *human, "--k"], ["rank-tasks", "--task", "demo:h:system:kendall", "--k"]):
        for k in ("99999999999999999999", str(K_MAX + 1)):
            result = run_cli(db, *args, k, ok=False)
            _one_line_usage_error(result, f"'{args[-1]}'")
            said = _python_refusal(K.but(name=args[-1][2:].replace("-", "_")), int(k))
            assert f"1<=x<={K_MAX}" in result.output or said in result.output, (args, result.output)
    assert not db.exists()
    assert f"1<=x<={K_MAX}" in run_cli(db, "ci", "--help").output
    with pytest.raises(ValueError, match="at most"):
        bootstrap_ci([[1.0, 2.0], [2.0, 3.0], [3.0, 1.0]], [[1.0, 2.0], [2.0, 3.0], [3.0, 2.0]], "system",
                     k=K_MAX + 1)


def test_sql_without_a_statement_is_one_line(cli):
    """Issue 24.6: `metaeval sql ''` and `sql ';'` were an AttributeError traceback."""
    for query in ("", ";", " ; ;\n", "-- only a comment", "/* c */"):
        result = cli("sql", "--", query, expect_ok=False)
        assert result.exit_code == 1 and "Traceback" not in result.output, result.output
        assert result.output.count("\n") == 1 and "no SQL statement given" in result.output, result.output
        assert "metaeval --db" in result.output and "sql 'SELECT" in result.output


def test_largest_seed_runs(cli, db):
    cli("demo", "--systems", "4", "--inputs", "5", "--k", "40", "--seed", str(2**63 - 1))
    with Store(db, read_only=True) as wh:
        assert set(wh.sql("SELECT seed FROM analysis_runs WHERE seed IS NOT NULL")["seed"]) == {2**63 - 1}


def test_a_failing_run_is_marked_failed(cli, db, monkeypatch):
    from metaeval.runs.metrics import intervals

    cli("demo", "--systems", "4", "--inputs", "5", "--k", "40")

    def broken(*args, **kwargs):
        raise RuntimeError("broken evaluation")

    monkeypatch.setattr(intervals, "evaluate_ci", broken)
    with pytest.raises(RuntimeError, match="broken evaluation"):
        cli("ci", "--dataset", "demo", "--human", "expert.relevance", "--ci-method", "fisher")
    with Store(db, read_only=True) as wh:
        runs = wh.sql("SELECT command, status FROM analysis_runs ORDER BY run_id")
    assert list(runs["status"]) == ["finished"] * 3 + ["failed"] and runs["command"].iloc[-1] == "ci"


def test_demo_too_small_is_a_usage_error(cli):
    for args in (["--systems", "2"], ["--inputs", "1"]):
        result = cli("demo", *args, expect_ok=False)
        assert result.exit_code == 2 and "is not in the range x>=3" in result.output, result.output


def test_bad_out_paths_are_clear_errors(cli, tmp_path):
    cli("demo", "--systems", "4", "--inputs", "5", "--k", "40")
    human = ["--dataset", "demo", "--human", "expert.relevance"]
    (tmp_path / "afile").write_text("x")
    cases = [
        (["plot", "ci", *human, "--out", tmp_path / "ci.txt"], "unsupported file type '.txt'"),
        (["plot", "ci", *human, "--out", tmp_path / "ci"], "unsupported file type '(no suffix)'"),
        (["plot", "heatmap", *human, "--out", tmp_path / "no" / "such" / "t.png"], "does not exist"),
        (["plot", "ci", *human, "--out", tmp_path / "afile" / "t.png"], "is not a directory"),
        (["export", "correlations", "--out", tmp_path / "no" / "c.csv"], "does not exist"),
        (["export", "correlations", "--out", tmp_path / "c.xlsx"], "cannot tell the format"),
        (["export", "correlations", "--format", "parquet", "--out", tmp_path / "c.csv"], "looks like csv"),
        (["report", "--dataset", "demo", "--out", tmp_path / "report"], "unsupported file type '(no suffix)'"),
        (["report", "--dataset", "demo", "--out", tmp_path / "afile" / "r.html"], "is not a directory"),
    ]
    for args, message in cases:
        result = cli(*args, expect_ok=False)
        assert result.exit_code == 2 and message in result.output, (args, result.output)
    assert not list(tmp_path.rglob("*.png")) and not list(tmp_path.rglob("*.csv"))
    assert not list(tmp_path.rglob("*.html"))


def test_export_takes_the_format_from_the_suffix(cli, tmp_path):
    cli("demo", "--systems", "4", "--inputs", "5", "--k", "40")
    for name, read in (("c.csv", pd.read_csv), ("c.parquet", pd.read_parquet),
                       ("c.jsonl", lambda p: pd.read_json(p, lines=True))):
        cli("export", "correlations", "--out", tmp_path / name)
        assert len(read(tmp_path / name)) == 16


def test_export_and_results_of_analysis_runs_honour_dataset(cli, tmp_path):
    for name in ("a", "b"):
        cli("demo", "--dataset", name, "--systems", "4", "--inputs", "5", "--k", "40")
    cli("export", "analysis_runs", "--dataset", "a", "--out", tmp_path / "runs.csv")
    runs = pd.read_csv(tmp_path / "runs.csv")
    assert len(runs) == 3 and all(json.loads(p)["dataset"] == "a" for p in runs["parameters"])
    shown = pd.read_csv(io.StringIO(cli("results", "analysis_runs", "--dataset", "b", "--format", "csv").output))
    assert len(shown) == 3 and all(json.loads(p)["dataset"] == "b" for p in shown["parameters"])
    cli("export", "analysis_runs", "--out", tmp_path / "all.csv")
    assert len(pd.read_csv(tmp_path / "all.csv")) == 6


def test_sql_is_read_only_and_touches_no_other_file(cli, tmp_path):
    cli("demo", "--systems", "4", "--inputs", "5", "--k", "40")
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n")
    for query in (f"COPY (SELECT * FROM measures) TO '{tmp_path / 'leak.csv'}'",
                  f"SELECT * FROM read_csv('{outside}')",
                  f"ATTACH '{tmp_path / 'other.duckdb'}' AS other",
                  "SET enable_external_access = true",
                  "INSERT INTO datasets (name) VALUES ('x')"):
        result = cli("sql", query, expect_ok=False)
        assert result.exit_code == 1 and "SQL error" in result.output, (query, result.output)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside.csv", "wh.duckdb"]
    assert "demo" in cli("sql", "SELECT name FROM datasets").output


# --- registration and start-up ------------------------------------------------------------------
def test_results_and_export_offer_every_result_table():
    from metaeval.cli.app import RESULT_TABLES

    tables = {"correlations", "confidence_intervals", "hypothesis_tests", "analysis_runs", "ci_coverage", "power",
              "normality", "pairwise_accuracy", "input_significance", "system_agreement", "winners",
              "replicability", "score_range_agreement", "input_properties", "property_agreement",
              "annotator_agreement", "human_ceiling", "soft_pairwise_accuracy", "task_rankings",
              "delta_bin_accuracy", "detection", "detection_tests", "judge_statistics", "judge_tests",
              "preference_rankings", "error_categories", "system_tests", "error_overlap", "rank_changes", "leaderboard",
              "rater_agreement", "rating_stability", "span_evaluation", "span_tests", "agreement_curves",
              "optimal_set_shares", "lc_winrates", "judge_leaderboard", "judge_diagnostics", "held_out_ties",
              "leaderboard_style", "ppi_estimates", "plan_sizes", "measure_correlations"}
    assert set(RESULT_TABLES) == tables
    for command in ("results", "export"):
        text = CliRunner().invoke(main, [command, "--help"], terminal_width=1000).output
        offered = set(re.search(r"[{[]([a-z_|]+)[]}]", text).group(1).split("|"))
        assert offered == tables, command


def test_help_imports_no_heavy_module():
    """`metaeval --help` loads neither scipy, matplotlib, the text metrics nor the analyses; of
    runs/, only the registry of families (runs/engine/families.py, runs/engine/parameters.py and the modules
    declaring families, which import their computation inside ``compute``)."""
    code = ("import sys\nfrom metaeval.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = ('scipy', 'matplotlib', 'metaeval.analyses', 'metaeval.analyses.text', 'nltk', 'sacrebleu',\n"
            "         'metaeval.runs.engine.analyse', 'metaeval.runs.engine.runner', 'metaeval.runs.engine.selection', 'metaeval.runs.engine.api')\n"
            "from importlib import resources\n"
            "declaring = {'metaeval.runs.' + f.name[:-3] for f in resources.files('metaeval.runs').iterdir()\n"
            "             if f.name.endswith('.py') and '\\n@register' in f.read_text()}\n"
            "light = {'metaeval.runs', 'metaeval.runs.engine.families', 'metaeval.runs.engine.parameters'} | declaring\n"
            "print('LOADED', [m for m in heavy if m in sys.modules]\n"
            "      + [m for m in sys.modules if m.startswith('metaeval.runs') and m not in light])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "LOADED []" in out, out


def test_command_index_is_made_from_the_commands_and_kept_for_their_files(tmp_path, monkeypatch):
    """The index of the commands (cli/app.py Commands: which module defines each command, its
    --help summary) is kept in the cache directory under the size and time of every source file;
    a changed source file is a new key, and its index is made again from the commands."""
    from metaeval.cli import app

    monkeypatch.setenv("METAEVAL_CACHE", str(tmp_path))
    key = app.index_key()
    made = app.Commands().index()
    assert app._read_index(key) == made == app.Commands().made_index()
    assert made["ingest"]["modules"] == ["metaeval.cli.commands.ingest", "metaeval.cli.commands.units"]
    assert made["leaderboard"]["modules"] == [app.FAMILY] and made["datasets"]["help"]
    source = Path(app.__file__).parent / "commands" / "warehouse.py"
    stat = source.stat()
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    try:
        assert app.index_key() != key and app._read_index(app.index_key()) is None
    finally:
        os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert app.index_key() == key


def test_help_listing_from_the_index_is_the_commands_own(monkeypatch):
    """`metaeval --help` lists the commands from the index without importing them: the same
    listing as from the commands themselves."""
    from metaeval.cli import app

    for width in (80, 200):
        monkeypatch.setattr(app.main, "commands", app.Commands())      # none imported yet
        fast = CliRunner().invoke(app.main, ["--help"], terminal_width=width)
        assert not app.main.commands.loaded
        monkeypatch.setattr(app, "_read_index", lambda key: None)     # the index made again: every command imported
        monkeypatch.setattr(app, "_write_index", lambda key, index: None)
        monkeypatch.setattr(app.main, "commands", app.Commands())
        slow = CliRunner().invoke(app.main, ["--help"], terminal_width=width)
        assert app.main.commands.complete
        monkeypatch.undo()
        assert fast.exit_code == slow.exit_code == 0
        assert fast.output == slow.output
        assert "leaderboard" in fast.output and "ingest" in fast.output


def test_light_command_imports_only_its_own_module(db):
    """`metaeval datasets` and `measures` import their command module alone (cli/app.py
    Commands), neither the registry of families nor the executors; an unknown command name, the
    whole CLI (and is refused as before)."""
    code = ("import sys\nfrom metaeval.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit as exc:\n    print('EXIT', exc.code)\n"
            "print('LOADED', sorted(m for m in sys.modules if m.startswith(('metaeval.cli.commands.',\n"
            "      'metaeval.runs.engine.families', 'metaeval.runs.engine.executors', 'metaeval.cli.families'))))")
    for argv in (["datasets"], ["measures", "nosuch"], ["--help"]):
        out = subprocess.run([sys.executable, "-c", code, "--db", str(db), *argv], capture_output=True, text=True)
        loaded = out.stdout.strip().splitlines()[-1]
        expected = [] if argv == ["--help"] else ["metaeval.cli.commands.warehouse"]
        assert loaded == f"LOADED {expected}", (argv, out.stdout, out.stderr)
    out = subprocess.run([sys.executable, "-c", code, "--db", str(db), "nosuch"], capture_output=True, text=True)
    assert "No such command 'nosuch'" in out.stderr and "EXIT 2" in out.stdout
    assert "metaeval.cli.commands.ingest" in out.stdout.splitlines()[-1]


def test_option_choices_come_from_the_analysis_modules():
    from metaeval.analyses import ranking, simulation
    from metaeval.runs.metrics import ranking as ranking_runs
    from metaeval.analyses.stats import vocabulary
    from metaeval.runs.texts import scoring
    from metaeval.runs.metrics import simulation as simulation_runs

    def choices(*path):
        command, name = main, path[-1]
        for p in path[:-1]:
            command = command.commands[p]
        return tuple(next(p for p in command.params if p.name == name).type.choices)

    assert choices("ci", "levels") == vocabulary.LEVELS and choices("ci", "method") == vocabulary.CI_METHODS
    assert choices("plot", "heatmap", "method") == vocabulary.TEST_METHODS
    assert choices("plot", "heatmap", "alternative") == ranking_runs.ALTERNATIVES
    assert choices("plot", "heatmap", "correction") == vocabulary.CORRECTIONS
    assert choices("plot", "heatmap", "correction_group") == vocabulary.CORRECTION_GROUPS
    assert choices("plot", "ci", "method") == vocabulary.CI_METHODS
    assert choices("plot", "power", "variant") == simulation_runs.ROUGE_VARIANTS
    assert choices("simulate", "power", "methods") == simulation.TEST_METHODS
    assert choices("systems-agreement", "tests") == ranking.PAIR_TESTS
    assert choices("score", "metrics") == scoring.METRICS
    # the defaults the help states are the modules' own
    text = CliRunner().invoke(main, ["simulate", "power", "--help"], terminal_width=1000).output
    assert f"Default: {', '.join(simulation_runs.POWER_METHODS)} (the paper's)" in text
    assert f"Default: {', '.join(simulation_runs.SIM_LEVELS)} (the paper's)" in text
    assert simulation_runs.PROPORTIONS[:3] == (0.05, 0.1, 0.2) and simulation_runs.PROPORTIONS[-2:] == (0.9, 1.0)


@pytest.mark.parametrize("command", [
    ["accuracy", "--dataset", "demo", "--human", "expert.relevance", "--level", "system"],
    ["normality", "--dataset", "demo"],
    ["agreement", "--dataset", "demo"],
    ["compare", "--dataset", "demo", "--human", "expert.relevance", "--method", "williams", "--level", "system",
     "--coefficient", "pearson", "--correction", "holm"],
])
def test_a_run_failing_after_its_evaluation_is_marked_failed_not_left_running(cli, db, monkeypatch, command):
    """Every path that starts a run, not only the evaluation loop, marks a failed run 'failed'."""
    from metaeval.runs.engine import bookkeeping

    cli("demo", "--systems", "4", "--inputs", "5", "--k", "40")
    finish = bookkeeping.finish_run

    def failing_finish(wh, run_id, status, computed):
        if status == "finished":
            raise RuntimeError("disk full")
        finish(wh, run_id, status, computed)

    monkeypatch.setattr(bookkeeping, "finish_run", failing_finish)
    with pytest.raises(RuntimeError, match="disk full"):
        cli(*command)
    with Store(db, read_only=True) as wh:
        runs = wh.sql("SELECT command, status FROM analysis_runs ORDER BY run_id")
    assert "running" not in set(runs["status"]) and runs["status"].iloc[-1] == "failed", runs


# --- issue 13.3: outputs never overwrite the warehouse, nor a file without --overwrite -----------
def test_export_never_writes_onto_the_warehouse(tmp_path):
    """`metaeval --db wh.csv export correlations --out wh.csv` destroyed the warehouse; now it is
    refused, also through a symlink, even with --overwrite, and the file is byte-identical."""
    wh = tmp_path / "wh.csv"
    run_cli(wh, "demo", "--systems", "4", "--inputs", "5", "--k", "40")
    before = wh.read_bytes()
    (tmp_path / "link.csv").symlink_to(wh)
    for out in (wh, tmp_path / "link.csv", tmp_path / "." / "wh.csv"):
        for extra in ((), ("--overwrite",)):
            result = run_cli(wh, "export", "correlations", "--out", out, *extra, ok=False)
            assert result.exit_code == 1 and "is the warehouse itself" in result.output, result.output
            assert "Traceback" not in result.output
    assert wh.read_bytes() == before
    assert Store(wh, read_only=True).datasets()["dataset"].tolist() == ["demo"]


def test_outputs_replace_an_existing_file_only_with_overwrite(cli, tmp_path):
    cli("demo", "--systems", "4", "--inputs", "5", "--k", "40")
    human = ["--dataset", "demo", "--human", "expert.relevance"]
    writers = [(["export", "correlations"], "c.csv"),
               (["plot", "ci", *human], "ci.png"),
               (["plot", "heatmap", *human, "--correction", "holm"], "t.svg")]
    for args, name in writers:
        out = tmp_path / name
        out.write_text("precious")
        result = cli(*args, "--out", out, expect_ok=False)
        assert result.exit_code == 1 and "already exists; pass --overwrite" in result.output, result.output
        assert out.read_text() == "precious"
        cli(*args, "--out", out, "--overwrite")
        assert out.read_bytes() != b"precious"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no temporary file left behind"


def test_a_failed_export_leaves_nothing_behind(cli, tmp_path, monkeypatch):
    import pandas as pd

    cli("demo", "--systems", "4", "--inputs", "5", "--k", "40")

    def broken(self, path, *a, **k):
        Path(path).write_text("half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", broken)
    result = cli("export", "correlations", "--out", tmp_path / "c.csv", expect_ok=False)
    assert result.exit_code == 1 and "No space left on device" in result.output
    assert not (tmp_path / "c.csv").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".c.csv")]


def test_report_file_rules(cli, db, tmp_path):
    """The report is one HTML file, written as every --out file is (warehouse/files.py): an
    existing file is replaced only with --overwrite, never the warehouse (even through a
    symlink), and a failed or refused write leaves nothing behind."""
    cli("demo", "--systems", "4", "--inputs", "5", "--k", "40")
    out = tmp_path / "r.html"
    cli("report", "--dataset", "demo", "--out", out)
    first = out.read_text()
    result = cli("report", "--dataset", "demo", "--out", out, expect_ok=False)
    assert result.exit_code == 1 and "already exists; pass --overwrite" in result.output
    assert out.read_text() == first
    out.write_text("an older report")
    cli("report", "--dataset", "demo", "--out", out, "--overwrite")
    assert out.read_text().startswith("<!doctype html>")
    link = tmp_path / "w.html"
    link.symlink_to(db)
    before = db.read_bytes()
    result = cli("report", "--dataset", "demo", "--out", link, "--overwrite", expect_ok=False)
    assert result.exit_code == 1 and "is the warehouse itself" in result.output
    assert db.read_bytes() == before
    (tmp_path / "d.html").mkdir()
    result = cli("report", "--dataset", "demo", "--out", tmp_path / "d.html", "--overwrite", expect_ok=False)
    assert result.exit_code == 2 and "is a directory" in result.output
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_written_files_get_the_permissions_of_a_new_file(tmp_path):
    """export/plot/report write through a temporary file: the result is readable as any new file
    under the umask, not private (mkstemp's 0600)."""
    import os

    from metaeval import files

    target = tmp_path / "out.csv"
    mask = os.umask(0o022)
    try:
        with files.atomic_file(target, warehouse=None, overwrite=False) as tmp:
            tmp.write_text("a\n")
    finally:
        os.umask(mask)
    assert (target.stat().st_mode & 0o777) == 0o644
