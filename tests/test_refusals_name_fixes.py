"""Every refusal that has a way out names it (issue 34 item 5): another option, another command,
a drop or an ingest -- on its one line. A sample of the important ones, each run from the
command line on a small warehouse; the expected text is the fix, as the user would type it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from metaeval.cli import main
from tests.conftest import ROOT

EXAMPLES = Path("docs") / "examples"
FACTUALITY = Path("examples") / "factuality"


def run(db, *args, ok: bool = True):
    result = CliRunner().invoke(main, ["--db", str(db), *map(str, args)], catch_exceptions=False)
    assert (result.exit_code == 0) == ok, f"{args}: {result.output}"
    return result.output


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("refusals") / "wh.duckdb"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        run(path, "demo", "--k", "50")
        run(path, "ingest", "table", FACTUALITY / "scores.csv", "--dataset", "factuality")      # --human forgotten
        run(path, "ingest", "attributes", FACTUALITY / "attributes.csv", "--dataset", "factuality")
        run(path, "ingest", "preferences", EXAMPLES / "preferences.csv", "--dataset", "judges-demo")
        run(path, "ingest", "units", EXAMPLES / "units.csv", "--dataset", "units-demo", "--prefix", "scu")
        run(path, "ingest", "mqm", EXAMPLES / "mqm-metric.tsv", "--dataset", "spans-only", "--judge", "xcomet")
        run(path, "ingest", "preferences", EXAMPLES / "alpaca.csv", "--dataset", "votes-gpt4", "--judge", "gpt4")
    return path


#: (command, the fix its refusal must name)
REFUSALS = [
    (("ingest", "table", FACTUALITY / "scores.csv", "--dataset", "factuality", "--human", "human.*"),
     "`metaeval drop measure factuality human.consistency`"),
    (("correlate", "--dataset", "factuality", "--human", "human.consistency"),
     "`metaeval drop measure factuality human.consistency`"),
    (("derive", "new", "--dataset", "factuality", "--from", "human.label", "--from", "human.consistency", "--as", "mean"),
     "`metaeval drop measure factuality human.label`"),
    (("annotators", "--dataset", "factuality"), "`metaeval ingest table FILE --dataset factuality --human GLOB`"),
    (("correlate", "--dataset", "units-demo", "--human", "scu.lite"), "`metaeval ingest table FILE --dataset units-demo`"),
    (("derive", "new", "--dataset", "units-demo", "--from", "scu.nosuch", "--from", "scu.lite", "--as", "mean"),
     "`metaeval measures units-demo`"),
    (("derive", "new", "--dataset", "units-demo", "--from", "scu.pyramid", "--as", "mean"), "--as 'mean'"),
    (("derive", "scu.lite", "--dataset", "units-demo", "--from", "scu.pyramid", "--from", "scu.lite", "--as", "mean"),
     "`metaeval drop measure units-demo scu.lite`"),
    (("leaderboard", "--dataset", "judges-demo", "--judge", "nosuch"),
     "`metaeval ingest preferences FILE --dataset judges-demo --judge nosuch`"),
    (("leaderboard", "--dataset", "judges-demo", "--anchor", "nosuch"), "its systems: sys-1, sys-2"),
    (("span-eval", "--dataset", "spans-only"), "`metaeval ingest mqm FILE --dataset spans-only`"),
    (("correlate", "--dataset", "demo", "--human", "nosuch"), "its human judgments: expert.relevance"),
    (("correlate", "--dataset", "demo", "--human", "expert.relevance", "--metric", "nosuch"), "it has: sim-divergence"),
    (("correlate", "--dataset", "nosuch", "--human", "h"), "the warehouse has: demo"),
    (("judges", "--dataset", "nosuch"), "the warehouse has: demo"),
    (("correlate", "--dataset", "factuality", "--human", "consistency-detector", "--where", "split=nosuch"),
     "its values: test, validation"),
    (("simulate", "power", "--dataset", "demo", "--human", "expert.relevance"), "`metaeval ingest summaries FILE"),
    (("optimal-set", "--dataset", "demo", "--human", "expert.relevance"), "run winners first"),
    (("winners", "--dataset", "factuality", "--human", "consistency-detector"), "metaeval"),
    (("ci", "--dataset", "demo", "--human", "expert.relevance", "--k", "5"), "--k 39"),
    # read in the sweep of cli/ runs/ ingest/ (issue 34, item 5's leftovers): each names its fix now
    (("judge-leaderboard", "--dataset", "votes-gpt4"), "`metaeval ingest preferences FILE --dataset votes-gpt4`"),
    (("judges", "--dataset", "votes-gpt4"), "`metaeval ingest preferences FILE --dataset votes-gpt4`"),
    (("compare", "--dataset", "demo", "--human", "expert.relevance", "--metric", "sim-high.f1"), "--metric GLOB"),
    (("winners", "--dataset", "demo", "--human", "expert.relevance", "--metric", "sim-high.f1"), "--metric GLOB"),
    (("agreement", "--dataset", "demo", "--metric", "sim-high.f1"), "--metric GLOB"),
    (("ingest", "preferences", EXAMPLES / "alpaca.csv", "--dataset", "alpaca-2"), "--judge NAME"),
]


def test_each_refusal_names_its_fix_on_one_line(db):
    found = {}
    for args, fix in REFUSALS:
        output = run(db, *args, ok=False)
        error = [line for line in output.splitlines() if line.startswith("Error")]
        if fix not in output or "Traceback" in output or len(error) != 1:
            found[" ".join(map(str, args))] = output
    assert not found, "\n".join(f"{a}:\n  {o}" for a, o in found.items())
    assert len(REFUSALS) >= 15
