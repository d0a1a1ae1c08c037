"""The command line's modules import each other without a circle (issue 44 item 5: cli app ↔
db_option ↔ families): the graph of every ``import`` in ``cli/`` (module and function level, read
with ``ast``) among the modules of ``metaeval.cli`` is acyclic. The floors: messages, context,
options, db_option, families, then app, then the command modules."""

from __future__ import annotations

from tests.test_layers import import_circle, module_graph


def _graph() -> dict[str, set[str]]:
    """The import graph (tests/test_layers.py's, of every import) among the modules of metaeval.cli."""
    graph = module_graph()
    cli = {m for m in graph if m == "metaeval.cli" or m.startswith("metaeval.cli.")}
    return {m: graph[m] & cli for m in cli}


def test_the_command_line_has_no_import_circle():
    graph = _graph()
    assert "metaeval.cli.app" in graph["metaeval.cli.commands.warehouse"]      # the graph is read
    assert "metaeval.cli.options" in graph["metaeval.cli.families"]
    assert import_circle(graph) is None, " -> ".join(import_circle(graph))
