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
