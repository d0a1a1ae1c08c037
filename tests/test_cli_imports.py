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


#: What the light commands (issue 47 item 5: `--help`, `datasets`, `measures`, each within 1.5x the
#: CPU of `python -c 'import duckdb'`, bench/bench_startup.py) never import: pandas, numpy and
#: pyarrow (0.3 s), scipy, the ingest and run layers, the executors (multiprocessing). (hashlib:
#: `import duckdb` imports it itself.)
HEAVY = ("pandas", "numpy", "pyarrow", "scipy", "metaeval.runs", "metaeval.load", "metaeval.merge",
         "metaeval.ingest", "metaeval.present.tables", "multiprocessing")

_PROBE = ("import sys\nfrom metaeval.cli import main\n"
          "try:\n    main(sys.argv[1:])\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
          "schema = sys.modules.get('metaeval.schema')\n"
          "print('LOADED', sorted(m for m in sys.modules if m in {heavy!r} or m.startswith('metaeval.cli.commands.')),"
          " schema is not None and 'RESULT_TABLES' in vars(schema), file=sys.stderr)")


def test_light_commands_import_only_their_own_module(tmp_path):
    """`--help` no command module; `datasets` and `measures` only theirs
    (metaeval.cli.commands.warehouse), none of HEAVY, and the registry of result tables is not
    read from the schema scripts (schema.result_tables, made at its first use)."""
    import subprocess
    import sys

    from tests.conftest import run_cli

    db = tmp_path / "wh.duckdb"
    table = tmp_path / "t.csv"
    table.write_text("system,input,measure,value\n" + "".join(
        f"s{s},d{d},{m},{(s * 7 + d * 3 + len(m)) % 5}\n" for s in range(3) for d in range(2) for m in ("h", "m", "n")))
    run_cli(db, "init")
    run_cli(db, "ingest", "table", table, "--dataset", "x", "--human", "h")
    probe = _PROBE.format(heavy=HEAVY)
    for argv, commands in ((["--help"], []), (["datasets"], ["metaeval.cli.commands.warehouse"]),
                           (["measures", "x"], ["metaeval.cli.commands.warehouse"]),
                           (["measures", "x", "--format", "json"], ["metaeval.cli.commands.warehouse"])):
        done = subprocess.run([sys.executable, "-c", probe, "--db", str(db), *argv], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        line = done.stderr.strip().splitlines()[-1]
        assert line == f"LOADED {commands!r} False", (argv, line)
        assert done.stdout.strip(), argv


#: A process whose entry point is ``main()`` (as the console script's), with an exit handler
#: that says whether Python's shutdown ran (it does not after a light command: cli/ending.py).
_ENTRY = ("import atexit, sys\natexit.register(lambda: print('SHUTDOWN', file=sys.stderr))\n"
          "from metaeval.cli import main\nmain()")
_CALLED = ("import sys\nfrom metaeval.cli import main\nmain(sys.argv[1:])")


def test_light_commands_end_without_pythons_shutdown_and_print_the_same(tmp_path):
    """As the process's entry point, `datasets`, `measures` and the group's own `--help` (and its
    usage errors) end with os._exit once their output is flushed; every other command, and
    `main([...])` from Python, end as before. The same bytes on stdout and stderr and the same
    exit status either way (an unknown dataset: 1; a usage error: 2)."""
    import subprocess
    import sys

    from tests.conftest import run_cli

    db = tmp_path / "wh.duckdb"
    table = tmp_path / "t.csv"
    table.write_text("system,input,measure,value\n" + "".join(
        f"s{s},d{d},{m},{(s * 7 + d * 3 + len(m)) % 5}\n" for s in range(3) for d in range(2) for m in ("h", "m", "n")))
    run_cli(db, "init")
    run_cli(db, "ingest", "table", table, "--dataset", "x", "--human", "h")
    cases = [(["--db", str(db), "datasets"], 0, True), (["--db", str(db), "measures", "x", "--format", "json"], 0, True),
             (["--db", str(db), "measures", "nope"], 1, True), (["--help"], 0, True), (["--bogus"], 2, True),
             (["--db", str(db), "measures", "x", "--kind", "bogus"], 2, True),
             (["--db", str(db), "sql", "SELECT 1 AS one"], 0, False), (["--db", str(tmp_path / "none.duckdb"), "datasets"], 1, True)]
    for argv, status, light in cases:
        entry = subprocess.run([sys.executable, "-c", _ENTRY, *argv], capture_output=True, text=True)
        called = subprocess.run([sys.executable, "-c", _CALLED, *argv], capture_output=True, text=True)
        assert entry.returncode == called.returncode == status, (argv, entry.stderr, called.stderr)
        assert entry.stdout == called.stdout, argv
        assert bool(entry.stdout.strip()) is (status == 0), argv
        shutdown = entry.stderr.endswith("SHUTDOWN\n")
        assert shutdown is not light, (argv, entry.stderr)
        assert entry.stderr.removesuffix("SHUTDOWN\n") == called.stderr, argv
