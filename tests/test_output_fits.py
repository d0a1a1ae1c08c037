"""Output that fits (issue 34 item 3): the commands of the walk-throughs, run on the data the
repository ships (the demo, docs/examples, examples/factuality) with a small k, print text of
at most 100 characters a line (``--wide``: as wide as it is), never ``None``, ``NaN`` or a
count as a float (``261.0``), and LaTeX whose captions have at most 300 characters and whose
floats each have a ``\\label``."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval.analyses import plain, tables
from metaeval.cli import main
from tests.conftest import ROOT

EXAMPLES = Path("docs") / "examples"            # relative, as the walk-throughs give them (from ROOT)
FACTUALITY = Path("examples") / "factuality"
DEMO = ("--dataset", "demo", "--human", "expert.relevance")
K = ("--k", "100")
#: the commands whose text output is checked (after the set-up below)
TEXT_COMMANDS = [
    ("evaluate", str(EXAMPLES / "mymetric.csv"), *DEMO, *K),
    ("evaluate", "--metric", "*", *DEMO, "--level", "system", "--coefficient", "kendall", "--all-pairs", *K),
    ("correlate", *DEMO),
    ("ci", *DEMO, *K),
    ("compare", *DEMO, "--level", "system", *K),
    ("winners", *DEMO, "--level", "system", "--coefficient", "kendall"),
    ("accuracy", *DEMO, "--soft"),
    ("rank-change", "--dataset", "demo", "--metric", "sim-high.f1", "--metric", "expert.relevance"),
    ("datasets",),
    ("measures", "demo"),
    ("results", "confidence_intervals", "--dataset", "demo"),
    ("results", "hypothesis_tests", "--dataset", "demo"),
    ("judges", "--dataset", "judges-demo", "--k", "50"),
    ("leaderboard", "--dataset", "judges-demo", "--k", "50"),
    ("results", "leaderboard", "--dataset", "judges-demo"),
    ("results", "preference_rankings", "--dataset", "judges-demo"),
    ("sql", "SELECT * FROM preference_matrix LIMIT 5"),
    ("detection", "--dataset", "factuality", "--human", "human.label", "--positive", "1",
     "--tune", "split=validation", "--where", "split=test", "--by", "source", "--k", "50"),
    ("results", "detection", "--dataset", "factuality"),
    ("results", "judge_statistics", "--dataset", "judges-demo"),
    ("results", "system_tests", "--dataset", "demo"),
    ("system-tests", "--dataset", "demo", "--measure", "sim-high.f1", "--method", "t-test", "--shapiro"),
    ("evaluate", "--dataset", "judges-demo", "--preferences", str(EXAMPLES / "my-judge.csv"), "--k", "50"),
    ("annotators", *DEMO, "--k", "100"),
    ("normality", "--dataset", "demo"),
    ("agreement", "--dataset", "demo"),
]
LATEX_COMMANDS = [
    ("evaluate", "--metric", "mymetric", *DEMO, *K, "--format", "latex"),
    ("compare", *DEMO, "--level", "system", *K, "--format", "latex"),
    ("ci", *DEMO, *K, "--format", "latex"),
    ("judges", "--dataset", "judges-demo", "--k", "50", "--format", "latex"),
    ("detection", "--dataset", "factuality", "--human", "human.label", "--positive", "1",
     "--tune", "split=validation", "--where", "split=test", "--by", "source", "--k", "50", "--format", "latex"),
]
MISSING = re.compile(r"(?<![\w.\-])(None|NaN|nan|<NA>|NaT)(?![\w.\-])")
WHOLE = re.compile(r"(?<![\w.])\d+\.0(?![\d.])")
ONE_DECIMAL = re.compile(r"(?<![\w.])\d+\.[1-9](?![\d.])")


def run(db, *args, ok: bool = True) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert (result.exit_code == 0) == ok, f"{args}: {result.output}"
    return result.output


def problems(output: str, width: int | None = plain.WIDTH) -> list[str]:
    """What does not fit in ``output``: long lines, missing-value tokens, whole numbers as
    floats (where no number of the output has one decimal: a one-decimal column may end in .0)."""
    out = []
    floats_with_one_decimal = ONE_DECIMAL.search(output) is not None
    for line in output.splitlines():
        if width is not None and len(line) > width:
            out.append(f"{len(line)} characters: {line}")
        if MISSING.search(line):
            out.append(f"a missing value printed: {line}")
        if WHOLE.search(line) and not floats_with_one_decimal:
            out.append(f"a count as a float: {line}")
    return out


@pytest.fixture(autouse=True)
def _in_the_clone(monkeypatch):
    monkeypatch.chdir(ROOT)


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    db = tmp_path_factory.mktemp("fits") / "wh.duckdb"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        run(db, "demo", "--k", "100")
        run(db, "ingest", "preferences", str(EXAMPLES / "preferences.csv"), "--dataset", "judges-demo")
        run(db, "ingest", "table", str(FACTUALITY / "scores.csv"), "--dataset", "factuality", "--human", "human.*")
        run(db, "ingest", "attributes", str(FACTUALITY / "attributes.csv"), "--dataset", "factuality")
    return db


def test_text_output_fits(warehouse):
    found = {}
    for args in TEXT_COMMANDS:
        bad = problems(run(warehouse, *args))
        if bad:
            found[" ".join(args)] = bad[:5]
    assert not found, found


def test_latex_captions_are_short_and_every_float_has_a_label(warehouse):
    for args in LATEX_COMMANDS:
        output = run(warehouse, *args)
        floats = re.findall(r"\\begin\{(table\*?|figure\*?)\}", output)
        assert floats, args
        assert len(re.findall(r"\\label\{tab:[a-z0-9-]+\}", output)) == len(floats), (args, output)
        for caption in re.findall(r"^\\caption\{(.*)\}$", output, flags=re.MULTILINE):
            assert len(caption) <= tables.CAPTION_CHARS, (args, caption)
        assert not [line for line in output.splitlines() if MISSING.search(line)], args


def test_wide_prints_everything(warehouse):
    args = ("evaluate", str(EXAMPLES / "mymetric.csv"), *DEMO, *K)
    fitted, wide = run(warehouse, *args), run(warehouse, "--wide", *args)
    assert max(map(len, wide.splitlines())) > plain.WIDTH >= max(map(len, fitted.splitlines()))
    assert run(warehouse, *args, "--wide") == wide                 # after the command's name too
    assert "signature metaeval:" in wide and "signature metaeval:" not in fitted
    assert plain.resolve_width() == plain.WIDTH                    # --wide ends with its command


def test_fit_wraps_text_columns_then_sets_blocks():
    frame = pd.DataFrame({"metric": ["a", "b"], "beats": ["x, " * 40, "y"], "n": [1, 2]})
    text = tables.render(frame, "text")
    assert max(map(len, text.splitlines())) <= plain.WIDTH and "x, x" in text
    assert tables.render(frame, "text", width=None).splitlines()[1].rstrip().endswith("1")
    many = pd.DataFrame({f"column_{i}": [0.123456, 0.5] for i in range(20)}).assign(key=["p", "q"])
    many = many[["key", *many.columns[:-1]]]
    blocks = tables.render(many, "text").split("\n\n")
    assert len(blocks) > 1 and all(b.splitlines()[1].split()[0] == "p" for b in blocks)   # the key leads each
    assert all(len(line) <= plain.WIDTH for line in tables.render(many, "text").splitlines())


def test_missing_values_and_counts_print_plainly():
    frame = pd.DataFrame({"votes": [261.0, float("nan")], "scale": [None, "elo"], "r": [0.5, float("nan")],
                          "n": pd.array([1, None], dtype="Int64")})
    text = tables.render(frame, "text")
    assert not problems(text) and "261" in text and "0.5" in text


def test_captions_keep_their_title_and_verdicts():
    caption = ("Correlation with h on d: level system; tests perm-both (k=50, seed=0); " + "x " * 200
               + "signature metaeval:1|evaluate.")
    shown, rest = tables.split_caption(caption, "Bold: the top cluster. No clusters: they cannot resolve at k=50.")
    assert shown.startswith("Correlation with h on d.") and "cannot resolve" in shown and len(shown) <= 300
    assert "signature" in rest and "level system" in rest
    assert len(tables.caption_text(caption, width=100).splitlines()) <= tables.CAPTION_LINES
    latex = tables.render(pd.DataFrame({"a": [1]}), "latex", caption=caption)
    assert re.search(r"^% .*level system", latex, flags=re.MULTILINE) and r"\label{tab:correlation-with-h-on-d-" in latex


def test_a_command_in_prose_is_continued_not_cut():
    text = "Draw them with: metaeval plot heatmap " + " ".join(f"--option-{i} value" for i in range(12))
    lines = plain.wrap(text, 60).splitlines()
    assert all(len(line) <= 60 for line in lines)
    assert all(line.endswith(" \\") for line in lines[1:-1])
    assert " ".join(line.rstrip(" \\").strip() for line in lines[1:]) == text.split(": ", 1)[1]


def test_the_kind_refusal_names_drop_measure(tmp_path):
    db = tmp_path / "wh.duckdb"
    run(db, "ingest", "table", str(FACTUALITY / "scores.csv"), "--dataset", "factuality")     # --human forgotten
    output = run(db, "ingest", "table", str(FACTUALITY / "scores.csv"), "--dataset", "factuality",
                 "--human", "human.*", ok=False)
    assert "`metaeval drop measure factuality human.consistency`" in output
    output = run(db, "correlate", "--dataset", "factuality", "--human", "human.consistency", ok=False)
    assert "stored as an automatic metric" in output and "`metaeval drop measure factuality human.consistency`" in output
