"""One import name and true floors (issue 14).

The repository's folders are the subpackages of ``metaeval`` (pyproject's package-dir):
warehouse/ = ``metaeval`` (the storage core), schema/, ingest/, analyses/ (pure computations),
present/ (tables and figures of rows, no database), runs/ (persisted analyses), cli/ (the command line). Each floor imports only the floors below.
These tests read every module's import statements (relative ones resolved), so an arrow that
runs back up fails here, whether or not a test happens to execute it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
FOLDER = {package: ROOT / folder for package, folder in PACKAGE_DIR.items()}

#: floor -> the metaeval packages its modules may import (besides their own)
CORE = {"metaeval.errors", "metaeval.connection", "metaeval.core", "metaeval.load", "metaeval.batch", "metaeval.merge",
        "metaeval.files", "metaeval.schema", "metaeval.names"}
ALLOWED = {
    "metaeval": CORE,
    "metaeval.schema": set(),
    "metaeval.ingest": CORE | {"metaeval.analyses"},   # its storage steps compute (pyramid scores, derived measures)
    "metaeval.analyses": set(),
    "metaeval.present": {"metaeval.analyses"},
    "metaeval.runs": CORE | {"metaeval", "metaeval.ingest", "metaeval.analyses", "metaeval.present"},
    "metaeval.cli": CORE | {"metaeval", "metaeval.ingest", "metaeval.analyses", "metaeval.present", "metaeval.runs"},
}
OLD_NAMES = {"warehouse", "schema", "ingest", "analyses", "present", "runs", "cli"}


def modules(package: str) -> list[tuple[str, Path]]:
    """(dotted name, file) of every module of ``package``'s folder that is not a subpackage
    mapped elsewhere (warehouse/ holds only the core's own modules)."""
    folder = FOLDER[package]
    out = []
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(folder).with_suffix("").parts
        name = ".".join([package, *[p for p in parts if p != "__init__"]])
        out.append((name, path))
    return out


def imports(name: str, path: Path) -> list[str]:
    """The absolute module names a module's import statements name (relative ones resolved)."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            found.append(module)
            found += [f"{module}.{a.name}" for a in node.names]  # `from metaeval import runs`
    return found


def project_imports(name: str, path: Path) -> set[str]:
    """The metaeval packages (one level below metaeval, or a core module) a module imports."""
    out = set()
    for module in imports(name, path):
        parts = module.split(".")
        if parts[0] != "metaeval":
            continue
        if len(parts) == 1:
            out.add("metaeval")
        elif f"metaeval.{parts[1]}" in PACKAGE_DIR or f"metaeval.{parts[1]}" in CORE:
            out.add(f"metaeval.{parts[1]}")
        # `from metaeval import Store` and the like name the root package itself
        else:
            out.add("metaeval")
    return out


def imported_modules(name: str, path: Path, known) -> set[str]:
    """The modules of ``known`` that the import statements of module ``name`` load: ``from P
    import x`` is module ``P.x`` when that is a module, else ``P`` (nearest known parent)."""
    tree = ast.parse(path.read_text(), str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = name.split(".")[: len(name.split(".")) - node.level + (path.name == "__init__.py")]
            module = ".".join(base + [node.module] if node.module else base) if node.level else node.module
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in known else module for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def module_graph() -> dict[str, set[str]]:
    """module -> the metaeval modules it imports, from every import statement: at module level,
    inside functions, under ``if TYPE_CHECKING``."""
    files = {name: path for package in PACKAGE_DIR for name, path in modules(package)
             if not (package == "metaeval" and path.parent != FOLDER["metaeval"])}
    return {name: imported_modules(name, path, files) for name, path in files.items()}


def import_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of imports (a module, the modules it leads to, the first again), or None."""
    state: dict[str, int] = {}                        # 1 on the current path, 2 finished
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (found := visit(target)):
                return found
        state[module] = 2
        path.pop()
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return None


def test_the_imports_of_metaeval_have_no_circle():
    """0 import circles (issue 44 item 5): the graph of every import in metaeval, module and
    function level alike, is acyclic, so every module can be read after the ones it imports."""
    graph = module_graph()
    assert len(graph) > 200 and sum(map(len, graph.values())) > 1000      # the walk saw the package
    circle = import_circle(graph)
    assert circle is None, "an import circle: " + " -> ".join(circle)


def test_a_circle_is_found_where_there_is_one():
    assert import_circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert import_circle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None
    assert import_circle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_each_floor_imports_only_the_floors_below(package):
    wrong = {}
    for name, path in modules(package):
        own = {package} | ({name} if package == "metaeval" else set())
        bad = project_imports(name, path) - ALLOWED[package] - own
        if package == "metaeval":  # the core's modules are each other's: metaeval.core, .load...
            bad -= CORE | {"metaeval"}
        if bad:
            wrong[str(path.relative_to(ROOT))] = sorted(bad)
    assert not wrong, f"imports that run back up the house: {wrong}"


def test_the_storage_core_imports_no_floor_above_it():
    """warehouse/ (the package metaeval and its core modules) names neither ingest, analyses,
    runs nor the CLI in any import statement; the package's lazy attributes load them by name."""
    above = {"metaeval.ingest", "metaeval.analyses", "metaeval.present", "metaeval.runs", "metaeval.cli"}
    for name, path in modules("metaeval"):
        assert not project_imports(name, path) & above, path


@pytest.mark.parametrize("package", ["metaeval.analyses", "metaeval.present"])
def test_pure_computations_import_no_database_code(package):
    for name, path in modules(package):
        named = {m.split(".")[0] for m in imports(name, path)}
        assert not named & {"duckdb", "sqlalchemy", "duckdb_engine"}, path
        assert project_imports(name, path) <= {"metaeval.analyses", package}, path


def test_computations_draw_nothing():
    """The floor of pure computation holds no presentation: no module of analyses/ imports
    matplotlib or the presentation floor (present/ draws and prints their results)."""
    for name, path in modules("metaeval.analyses"):
        named = set(imports(name, path))
        assert not {m for m in named if m.split(".")[0] == "matplotlib" or m.startswith("metaeval.present")}, path


def test_importing_every_pure_module_loads_no_database_module():
    """Not only the import statements: nothing they pull in at run time loads duckdb either."""
    names = [name for p in ("metaeval.analyses", "metaeval.present") for name, _ in modules(p)]
    code = ("import importlib, sys\n"
            f"for name in {names!r}:\n    importlib.import_module(name)\n"
            "print(sorted(m for m in ('duckdb', 'sqlalchemy', 'metaeval.core', 'metaeval.connection') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_every_project_import_is_under_the_one_name():
    """No module imports the folders by their own names (which would work only from a clone)."""
    wrong = []
    for package in PACKAGE_DIR:
        for name, path in modules(package):
            wrong += [f"{path.relative_to(ROOT)}: {m}" for m in imports(name, path)
                      if m and m.split(".")[0] in OLD_NAMES]
    for path in [*ROOT.glob("tests/*.py"), *ROOT.glob("bench/*.py")]:
        wrong += [f"{path.relative_to(ROOT)}: {m}" for m in imports("tests.x", path)
                  if m and m.split(".")[0] in OLD_NAMES - {"tests"}]
    assert not wrong


def test_the_distribution_installs_exactly_one_top_level_name():
    dist = metadata.distribution("metaeval-warehouse")
    top = (dist.read_text("top_level.txt") or "").split()
    assert top == ["metaeval"]
    # and the packages pyproject declares are exactly the mapped folders and their subpackages
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert {p.split(".")[0] for p in declared} == {"metaeval"}
    for package in declared:
        root = max((p for p in PACKAGE_DIR if package == p or package.startswith(p + ".")), key=len)
        folder = FOLDER[root].joinpath(*package[len(root):].strip(".").split(".")) if package != root else FOLDER[root]
        assert (folder / "__init__.py").exists(), package


def test_the_public_api_is_reached_through_metaeval():
    import metaeval

    assert metaeval.Store.__module__ == "metaeval.core"
    assert callable(metaeval.analyses.correlate)
    assert metaeval.schema.SCHEMA_VERSION >= 1
    assert Path(metaeval.schema.__file__).parent == FOLDER["metaeval.schema"]
    with pytest.raises(AttributeError):
        metaeval.no_such_thing  # noqa: B018


#: The size floors of issue 44 item 5 (docs/contributing.md): a module reads in one sitting, a
#: function on one screen or two.
MODULE_LINES, FUNCTION_LINES = 600, 80


def oversized(limit_module: int = MODULE_LINES, limit_function: int = FUNCTION_LINES) -> list[str]:
    """Every module of metaeval longer than ``limit_module`` lines and every function or method
    longer than ``limit_function`` (from its ``def`` to its last line, decorators excluded)."""
    found = []
    for package in PACKAGE_DIR:
        for name, path in modules(package):
            text = path.read_text()
            if (n := text.count("\n")) > limit_module:
                found.append(f"{path.relative_to(ROOT)}: {n} lines (at most {limit_module})")
            for node in ast.walk(ast.parse(text, str(path))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    if (n := node.end_lineno - node.lineno + 1) > limit_function:
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {n} lines "
                                     f"(at most {limit_function})")
    return found


def test_modules_and_functions_keep_their_floors():
    assert oversized() == []


def test_the_floor_check_finds_what_is_too_long():
    found = oversized(limit_module=1000, limit_function=30)
    assert found and all(" lines (at most 30)" in f for f in found)   # functions of 31+ lines exist
    assert any("runs/" in f for f in found) and any("cli/" in f for f in found)   # every folder is read
