"""runs/ speaks the Python API's words (docs/architecture.md, "Errors and hints"): its errors
name parameters as ``metaeval.errors.Argument`` (rendered as flags by cli/app.py), never as
``--flag`` text. This scans every string literal of runs/ (docstrings left out: they may say
which option of the command line a function serves) for flag text, so it cannot come back.

ALLOWED: the printed notes that still name a flag and are not errors, each with why (the next
step of the same pattern, listed in docs/architecture.md)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from metaeval.cli.app import error_text
from metaeval.errors import WarehouseError
from metaeval.runs.factuality import categories
from metaeval.runs.engine import parameters, selection

RUNS = Path(__file__).resolve().parents[1] / "runs"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
#: (file, flag): a printed note, not an error.
ALLOWED = {
    ("metrics/evaluate.py", "--all-pairs"): "Evaluation.caption / cluster_note: the table's note (the report rewrites it)",
    ("metrics/evaluate.py", "--system-inputs"): "Evaluation.caption: the system-score protocol of the table's note",
    ("report/answer.py", "--all-pairs"): "the report removes evaluate's --all-pairs note from its own text",
    # the run lines and notes of the generated commands (moved from cli/commands/ with their presents)
    ("engine/family_present.py", "--force"): "run_line: 'up to date; nothing computed (--force recomputes)'",
    ("metrics/correlation_present.py", "--system-inputs"): "correlate/ci's caption: the system-score protocol said "
                                                          "with its flag (moved from cli/commands/correlation.py)",
    ("metrics/correlation_present.py", "--k-max"): "compare --sequential's summary: 'raise --k-max to decide them'",
    ("metrics/simulation_families.py", "--force"): "normality's run line: 'up to date ... (--force recomputes)'",
    ("metrics/task_ranking.py", "--force"): "rank-tasks' run line: 'up to date ... (--force recomputes)'",
    ("metrics/ranking_families.py", "--aggregate"): "accuracy's note: 'a system's score: its median ... (--aggregate median)'",
    ("agreement/agreement_present.py", "--force"): "agreement's run line: 'all results up to date ... (--force recomputes)'",
    ("agreement/agreement_present.py", "--db"): "agreement's text: the `metaeval --db ... results TABLE` commands it suggests",
    ("agreement/agreement_present.py", "--dataset"): "agreement's text: the `results TABLE --dataset ...` commands it suggests",
    ("factuality/factuality_present.py", "--layout"): "detection's tests caption: '(--layout sets the table above)'",
}


def _flag_strings(path: Path):
    """Flag text in the string literals of ``path``, but for docstrings and the ``help=`` texts and
    ``flag=`` of the registry's options (runs/engine/families.py: the command line's, read by cli/)."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in ("help", "flag", "renamed_from"):
            docstrings.update(id(n) for n in ast.walk(node.value))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            for flag in FLAG.findall(node.value):
                yield node.lineno, flag


def _name(path: Path) -> str:
    """A module's path under runs/ (``report/answer.py``: the report is a package)."""
    return path.relative_to(RUNS).as_posix()


def test_runs_strings_name_no_flags():
    found = [f"runs/{_name(p)}:{line}: {flag}" for p in sorted(RUNS.rglob("*.py")) for line, flag in _flag_strings(p)
             if (_name(p), flag) not in ALLOWED]
    assert not found, "flag text in runs/ (name the parameter with metaeval.errors.Argument):\n" + "\n".join(found)


def test_the_allow_list_is_not_stale():
    used = {(_name(p), flag) for p in RUNS.rglob("*.py") for _, flag in _flag_strings(p)}
    assert set(ALLOWED) <= used, f"stale ALLOWED entries: {sorted(set(ALLOWED) - used)}"


def test_the_scan_finds_flag_text(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('"""Serves --where."""\n\ndef f():\n    """--by too."""\n    raise ValueError(f"--by {1} and x")\n')
    assert list(_flag_strings(probe)) == [(5, "--by")]


@pytest.mark.parametrize(("call", "python", "cli"), [
    (lambda: parameters.check_partial(["pearson[control=system]"], k_block=100), "k_block is not available with a partial correlation (control)",
     "--k-block is not available with a partial correlation (--control)"),
    (lambda: selection.with_control(["kendall-23"], "system"),
     "control applies to the coefficients", "--control applies to the coefficients"),
    (lambda: categories.pairs(["entity"], "categories"),
     "categories=['entity']: expected CATEGORY=MEASURE", "--category 'entity': expected CATEGORY=MEASURE"),
    (lambda: categories.pairs(["a=x", "a=y"], "ablations"),
     "ablations: category 'a' given twice", "--ablation: category 'a' given twice"),
])
def test_errors_read_as_python_and_as_flags(call, python, cli):
    with pytest.raises(WarehouseError) as caught:
        call()
    assert str(caught.value).startswith(python) and "--" not in str(caught.value)
    assert error_text(caught.value).startswith(cli)
