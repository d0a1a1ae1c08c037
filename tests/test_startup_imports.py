"""What a command imports at start-up (issue 35 item 6, issue 37 item 4): `metaeval --help`,
`ingest table` and `leaderboard` run in a new interpreter load no figure library, no Dask and no
scikit-learn; `ingest table` no scipy (none of them is needed there: each a second of CPU or
more on a shared machine); `leaderboard` with its default bootstrap intervals, in the text, json
and csv formats, neither pandas nor scipy (0.4 s and 0.3 s of CPU), computing or reusing."""

from __future__ import annotations

import subprocess
import sys

import pytest

NEVER = ("matplotlib", "dask", "distributed", "sklearn")


def _loaded(argv: list[str], modules: tuple[str, ...]) -> list[str]:
    """The ``modules`` that running ``metaeval ARGV`` in a new interpreter has imported."""
    code = ("import sys\nfrom metaeval.cli import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
            f"print('LOADED', sorted(m for m in {modules!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip().splitlines()[-1].removeprefix("LOADED "))


def test_help_loads_no_figures_and_no_dask():
    assert _loaded(["--help"], NEVER) == []


@pytest.fixture
def votes(tmp_path):
    path = tmp_path / "votes.csv"
    rows = [("a", "b", "model_a"), ("b", "c", "model_a"), ("c", "a", "model_a"), ("a", "c", "model_b"),
            ("b", "a", "tie"), ("c", "b", "model_b"), ("a", "b", "model_b"), ("b", "c", "tie")]
    path.write_text("model_a,model_b,winner\n" + "".join(f"{a},{b},{w}\n" for a, b, w in rows))
    return path


def test_ingest_table_loads_no_scipy_no_figures_and_no_dask(tmp_path):
    """Nor pandas, numpy or pyarrow when DuckDB reads the file (0.5 s of CPU, a tenth of ingesting 5.5M
    cells), with or without kinds and annotators; a file the exact reader reads (a bad value) may."""
    scores = tmp_path / "scores.csv"
    scores.write_text("system,input,measure,value\nA,d1,m,0.5\nB,d1,m,0.25\nA,d2,h,1\nB,d2,h,2\n")
    argv = ["--db", str(tmp_path / "wh.duckdb"), "ingest", "table", str(scores), "--dataset", "d", "--human", "h"]
    assert _loaded(argv, (*NEVER, "scipy", "pandas", "numpy", "pyarrow")) == []
    labelled = tmp_path / "labelled.csv"
    labelled.write_text("system,input,measure,value,annotator,kind\nA,d1,m2,0.5,,automatic\nB,d1,m2,0.25,,\n"
                        "A,d1,j,1,x,human\nB,d1,j,2,,human\n")
    argv = ["--db", str(tmp_path / "wh.duckdb"), "ingest", "table", str(labelled), "--dataset", "d"]
    assert _loaded(argv, ("pandas", "numpy", "pyarrow")) == []


def test_leaderboard_loads_no_figures_and_no_dask(tmp_path, votes):
    """Nor pandas and scipy: computed and written (json), then reused (text, csv)."""
    db = str(tmp_path / "wh.duckdb")
    assert _loaded(["--db", db, "ingest", "preferences", str(votes), "--dataset", "arena"], NEVER) == []
    for fmt in ("json", "text", "csv"):
        argv = ["--db", db, "leaderboard", "--dataset", "arena", "--k", "40", "--format", fmt]
        assert _loaded(argv, ("pandas", "scipy", *NEVER)) == [], fmt
