"""The command line's modules import each other without a circle (issue 44 item 5: cli app ↔
db_option ↔ families): the graph of every ``import`` in ``cli/`` (module and function level, read
with ``ast``) among the modules of ``metaeval.cli`` is acyclic. The floors: messages, context,
options, db_option, families, then app, then the command modules."""

from __future__ import annotations

import ast
from pathlib import Path

import metaeval.cli

CLI = Path(metaeval.cli.__file__).parent


def _module(path: Path) -> str:
    parts = path.relative_to(CLI).with_suffix("").parts
    return ".".join(["metaeval.cli", *(p for p in parts if p != "__init__")]).rstrip(".")


def _graph() -> dict[str, set[str]]:
    modules = {_module(p): p for p in CLI.rglob("*.py")}
    graph = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join([*parts[:len(parts) - node.level + 1], *([base] if base else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph[name].add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its modules in order), or None."""
    state, path = {}, []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = "done"
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_command_line_has_no_import_circle():
    graph = _graph()
    assert "metaeval.cli.app" in graph["metaeval.cli.commands.warehouse"]      # the graph is read
    assert "metaeval.cli.options" in graph["metaeval.cli.families"]
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_cycle_finder_finds_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
