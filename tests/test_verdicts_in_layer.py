"""Every verdict is the conclusion layer's: no module of metaeval outside it compares a p-value
with a significance level (``p <= alpha``). A comparison is found by an ``ast`` walk over every
module: one side a p-value by its name (``p``, ``pvalue``, ``p_value``, ``p_adjusted``,
``pvalue_corrected``, ``pearson_p``, ...; a name, an attribute, a subscript by a string or a call on one, as
``float(p)`` or ``np.asarray(pvalues)``), the other a level by its name (``alpha``, ``level``,
``threshold``) or a literal level (a float in (0, 0.2]). The layer decides with
:func:`metaeval.analyses.conclusions.rejects` (rule 0) and its family rules."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("warehouse", "schema", "ingest", "analyses", "present", "runs", "cli")
#: The conclusion layer: the rules (conclusions), its reading of stored tests, and rule 0's
#: primitive (stats/multiple.py, below analyses.ranking, which conclusions imports).
LAYER = {"analyses/conclusions.py", "analyses/stored_tests.py", "analyses/stats/multiple.py"}

P_VALUE = re.compile(r"^(p|pv|padj|adjusted|corrected|p_\w*|\w+_p|\w*pval\w*|\w*p_value\w*|\w*p_adj\w*)$", re.I)
LEVEL = re.compile(r"^(\w*alpha\w*|level|\w+_level|threshold)$", re.I)
ORDER = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        key = node.slice
        return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else _name(node.value)
    if isinstance(node, ast.Call) and node.args:
        return _name(node.args[0])
    return None


def _literal_level(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, float) and 0 < node.value <= 0.2


def comparisons(source: str) -> list[tuple[int, str]]:
    """(line, text) of each comparison of a p-value with a level in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(isinstance(op, ORDER) for op in node.ops):
            sides = [node.left, *node.comparators]
            names = [_name(s) for s in sides]
            if any(n and P_VALUE.match(n) for n in names) and \
                    (any(n and LEVEL.match(n) for n in names) or any(map(_literal_level, sides))):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_the_walk_finds_what_it_looks_for():
    """The check itself, on code that compares and code that does not."""
    caught = ["significant = p <= alpha", "share = np.mean(column_p < alpha)", "x = r.p_value < 0.05", "keep &= rows['p_adjusted'] <= level",
              "ok = np.asarray(pvalues) <= self.alpha", "s = float(t.pvalue_corrected) > threshold"]
    for line in caught:
        assert comparisons(line), line
    for line in ["n = k <= alpha", "p = min(p, 1.0)", "if p > 0.5 * 10 ** -digits: pass", "big = delta > 0.1",
                 "ok = conclusions.rejects(p, alpha)"]:
        assert not comparisons(line), line


def test_no_module_outside_the_conclusion_layer_compares_a_p_value_with_alpha():
    offences = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative in LAYER:
                continue
            offences += [f"{relative}:{line}: {text}" for line, text in comparisons(path.read_text(encoding="utf-8"))]
    assert not offences, ("decide through the conclusion layer (conclusions.rejects / decide, "
                          "stored_tests.StoredTests.significant):\n" + "\n".join(offences))
