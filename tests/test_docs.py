"""The documentation cannot drift from the program: the site builds in strict mode, and every
shell and Python example of README.md and docs/ runs, in order, page by page.

How a page is run (``test_page_runs``): in one temporary directory laid out as a fresh clone
(``examples/`` and ``docs/`` of this checkout, ``../shared`` beside it when this checkout has
it), shared by the pages as a reader's clone is and run in a reader's order (README.md, then
mkdocs.yml's nav), ``METAEVAL_DB`` set to ``./warehouse.duckdb`` of that directory (README's);
each guide names its own warehouse (``--db <page>.duckdb``: ``test_each_guide_uses_its_own_warehouse``),
so that no guide reads what another stored. Every ```` ```bash ```` block's lines (continuations joined, comments dropped) and every
```` ```python ```` block, in the order of the page. A ``metaeval`` line without pipes runs
in this process (``> FILE`` written from its output); any other line runs in ``bash``. The
set-up lines (a venv, ``pip install``) and the test command itself are not run: they are what
runs this test. Markers a page may carry (HTML comments, invisible on the site):

- ``<!-- docs-test: shared -->``: the page needs ``../shared/data`` (skipped, saying so, when
  absent);
- ``<!-- docs-test: heavy -->``: the page's examples take minutes (skipped unless
  ``METAEVAL_DOCS_HEAVY=1``);
- ``<!-- docs-test: postgres -->``: the page's examples use the team warehouse's PostgreSQL
  server at :data:`TEAM_URL` (tests/_postgres.py provides it, skipping outside CI when it cannot;
  its ``metaeval`` schema dropped first; the password in ``$PGPASSWORD``);
- ``<!-- check-numbers -->`` before a paragraph: every decimal number of that paragraph must
  appear in what the page's commands printed before it.

Examples that are meant to fail, or that need what no clone has (a cluster, a corpus), are in
```` ```text ```` blocks, which nothing runs.
"""

from __future__ import annotations

import glob
import io
import os
import re
import shlex
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT, SHARED_DATA

README = ROOT / "README.md"
DOCS = ROOT / "docs"


def reader_order() -> list[Path]:
    """README.md, then the pages of mkdocs.yml's nav in its order (a reader's), then any other page."""
    nav = [DOCS / m for m in re.findall(r":\s*([\w./-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.MULTILINE)]
    listed = [p for p in dict.fromkeys(nav) if p.exists()]
    return [README, *listed, *(p for p in sorted(DOCS.rglob("*.md")) if p not in listed)]


PAGES = reader_order()
GUIDES = [p for p in PAGES if p.parent == DOCS / "guides"]
#: the pages that name a warehouse of their own: every page but the README (whose ./warehouse.duckdb
#: is the default the pages after it would otherwise share: a reference page's `demo --systems 4`
#: refused after the README's demo)
OWN_WAREHOUSE = [p for p in PAGES if p.name != "README.md"]
#: lines a page shows but this test does not run: the set-up it runs in, and itself
NOT_RUN = (re.compile(r"^(python3? -m venv|\. \.venv|pip install|python -m pip install)"),
           re.compile(r"^python -m pytest"), re.compile(r"^mkdocs serve"))
BLOCK = re.compile(r"^```(bash|python)\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)
SHELL_OPS = {"|", "&&", ";", "||", "<", "2>", ">>", "&"}
#: the server a page marked ``docs-test: postgres`` writes in its examples (replaced by the test server's)
TEAM_URL = "postgresql://metaeval@127.0.0.1:54329/metaeval"


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def shell_lines(block: str) -> list[str]:
    """The command lines of a bash block: continuations joined, blank and comment lines dropped."""
    lines = []
    for line in block.replace("\\\n", " ").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            lines.append(line.strip())
    return lines


def steps(text: str) -> list[tuple[str, str, int]]:
    """(kind, body, offset) in page order: ``bash`` lines, ``python`` blocks, ``check`` paragraphs."""
    out = [("check", m.group(1), m.start()) for m in
           re.finditer(r"<!-- check-numbers -->\n(.*?)(?:\n\s*\n|\Z)", text, flags=re.DOTALL)]
    for m in BLOCK.finditer(text):
        if m.group(1) == "python":
            out.append(("python", m.group(2), m.start()))
        else:
            out.extend(("bash", line, m.start()) for line in shell_lines(m.group(2)))
    return sorted(out, key=lambda s: s[2])


def numbers(paragraph: str) -> list[str]:
    """The decimal numbers a paragraph quotes (``0.656``, ``-0.080``: compared without sign)."""
    return re.findall(r"\d+\.\d+", paragraph)


def quoted_in(number: str, printed: str) -> bool:
    """Whether ``number`` is what the output prints, or a printed number rounded to its
    decimals (prose quotes 0.826 where a table prints 0.8258)."""
    decimals = len(number.split(".")[1])
    for p in set(re.findall(r"\d+\.\d+", printed)):
        if p == number or (len(p.split(".")[1]) > decimals and f"{float(p):.{decimals}f}" == number):
            return True
    return False


# --- the rules every page follows --------------------------------------------------------------
@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_shell_examples_follow_the_rules(page):
    """bash blocks: one command a line, no `$` prompt, no <PLACEHOLDER> or `...`; the other
    blocks are python or text (never an unlabelled fence, which a reader cannot tell apart)."""
    text = page.read_text()
    fences = re.findall(r"^```(\w*)$", text, flags=re.MULTILINE)
    assert all(f in ("bash", "python", "text", "yaml", "") for f in fences), fences
    for kind, body, _ in steps(text):
        if kind != "bash":
            continue
        assert not body.startswith("$ "), f"{page_id(page)}: a `$` prompt in `{body}`"
        command = " ".join(shlex.split(body, comments=True))     # comments may say anything
        assert not re.search(r"<[A-Z_]+>|\.\.\.|…", command), f"{page_id(page)}: a placeholder in `{body}`"


def test_readme_is_short_and_keeps_the_test_command():
    lines = README.read_text().splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines (at most 250)"
    marker = lines.index("<!-- test-command -->")
    assert lines[marker + 1: marker + 3] == ["```bash", "python -m pytest -q"]


def test_every_page_is_in_the_site_and_every_link_resolves():
    """mkdocs.yml's nav lists every page of docs/ (architecture.md included), and the README's
    links into docs/ name files that exist."""
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in DOCS.rglob("*.md"):
        assert str(page.relative_to(DOCS)) in nav, f"{page_id(page)} is not in mkdocs.yml's nav"
    for target in re.findall(r"\]\((docs/[^)#]+)", README.read_text()):
        assert (ROOT / target).exists(), f"README links to {target}, which does not exist"


# --- the site builds ---------------------------------------------------------------------------
@pytest.mark.slow
def test_site_builds_in_strict_mode(tmp_path):
    """``mkdocs build --strict``: a broken link, a missing page or an API reference that cannot
    be collected fails the build."""
    pytest.importorskip("mkdocs", reason="mkdocs is not installed (pip install -e '.[docs]')")
    pytest.importorskip("material", reason="mkdocs-material is not installed (pip install -e '.[docs]')")
    pytest.importorskip("mkdocstrings_handlers.python",
                        reason="mkdocstrings-python is not installed (pip install -e '.[docs]')")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                            cwd=ROOT, capture_output=True, text=True, env=env, timeout=600, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "api" / "warehouse" / "index.html").exists()
    api = (tmp_path / "site" / "api" / "warehouse" / "index.html").read_text()
    assert "evaluate" in api and "correlate" in api


@pytest.mark.parametrize("page", OWN_WAREHOUSE, ids=page_id)
def test_each_guide_uses_its_own_warehouse(page):
    """Issue 48 item 16: the guides shared ./warehouse.duckdb, so a reader who followed evaluate.md
    then judges.md read other cluster numbers than judges.md quotes (evaluate's judge was in the
    warehouse). Every command of a guide names the guide's own file (``--db <page>.duckdb``), and
    so does every Python block that opens a warehouse."""
    own = f"{page.stem}.duckdb"
    for kind, body, _ in steps(page.read_text()):
        if kind == "bash" and not any(p.match(body) for p in NOT_RUN):
            for command in re.split(r"\s*\|\s*", body):
                words = shlex.split(command, comments=True)
                if words[:1] == ["metaeval"]:
                    # a second reader's warehouse (the team guide's colleague) is named after the page too
                    assert re.search(rf"--db {page.stem}(-[\w-]+)?\.duckdb\b", " ".join(words)), \
                        f"{page_id(page)}: `{body}` does not name --db {own}"
        elif kind == "python":
            for opened in re.findall(r"(?:Warehouse|Store)\(([^,)]*)", body):
                assert opened.strip() == f'"{own}"', f"{page_id(page)}: a warehouse other than {own}: {opened}"


# --- every example runs ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reader(tmp_path_factory) -> Path:
    """One directory for every page, as a reader's clone: the pages run in it one after the other,
    in the reader's order (:data:`PAGES`), each guide on its own warehouse."""
    return _clone(tmp_path_factory.mktemp("reader"))


def _clone(tmp_path: Path) -> Path:
    """A directory laid out as a fresh clone, with ../shared beside it when this checkout has it."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("examples", "docs"):
        (clone / name).symlink_to(ROOT / name)
    if SHARED_DATA.exists():
        (tmp_path / "shared").symlink_to(SHARED_DATA.parent)
    return clone


def _run_metaeval(words: list[str], out_file: str | None) -> tuple[int, str]:
    from metaeval.cli import main

    result = CliRunner().invoke(main, words[1:], catch_exceptions=False)
    output = result.output
    if out_file is not None:
        Path(out_file).write_text(result.stdout)
    return result.exit_code, output


def _words(line: str) -> list[str]:
    """The line's words as bash gives them to the command: quotes removed, comments dropped,
    unquoted globs expanded (sorted, as bash does; left as they are when nothing matches)."""
    words = []
    for token in shlex.split(line, comments=True, posix=False):
        if token[0] not in "'\"" and any(c in token for c in "*?["):
            words.extend(sorted(glob.glob(token)) or [token])
        else:
            words.extend(shlex.split(token))
    return words


def _run_line(line: str, env: dict) -> tuple[int, str]:
    words = _words(line)
    out_file = None
    if len(words) >= 3 and words[-2] == ">":
        words, out_file = words[:-2], words[-1]
    if words[:1] == ["metaeval"] and not SHELL_OPS & set(words) and ">" not in words:
        return _run_metaeval(words, out_file)
    result = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env, timeout=1200, check=False)
    return result.returncode, result.stdout + result.stderr


def _team_server(todo: list[tuple[str, str, int]], monkeypatch) -> list[tuple[str, str, int]]:
    """The page's steps on the test server, emptied of any team warehouse, its password in $PGPASSWORD."""
    from sqlalchemy.engine import make_url

    from tests import _postgres

    url = make_url(_postgres.server_url())
    with _postgres.admin(url.render_as_string(hide_password=False)) as con:
        con.execute("DROP SCHEMA IF EXISTS metaeval CASCADE")
    monkeypatch.setenv("PGPASSWORD", url.password or "")
    plain = url.render_as_string(hide_password=False).replace(f":{url.password}@", "@", 1) if url.password else \
        url.render_as_string()
    return [(kind, body.replace(TEAM_URL, plain), at) for kind, body, at in todo]


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_page_runs(page, reader, monkeypatch):
    text = page.read_text()
    todo = steps(text)
    if not any(kind != "check" and not any(p.match(body) for p in NOT_RUN) for kind, body, _ in todo):
        pytest.skip(f"{page_id(page)} has no example to run")
    if "<!-- docs-test: shared -->" in text and not SHARED_DATA.exists():
        pytest.skip(f"{page_id(page)} needs the shared meta-evaluation data at {SHARED_DATA} (absent on this checkout)")
    if "<!-- docs-test: heavy -->" in text and os.environ.get("METAEVAL_DOCS_HEAVY") != "1":
        pytest.skip(f"{page_id(page)} is marked heavy (minutes): run it with METAEVAL_DOCS_HEAVY=1")
    if "<!-- docs-test: postgres -->" in text:
        todo = _team_server(todo, monkeypatch)
    clone = reader
    monkeypatch.chdir(clone)
    monkeypatch.setenv("METAEVAL_DB", str(clone / "warehouse.duckdb"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    printed, namespace = [], {"__name__": "__docs__"}
    for kind, body, _ in todo:
        if kind == "bash":
            if any(p.match(body) for p in NOT_RUN):
                continue
            status, output = _run_line(body, env)
            assert status == 0, f"{page_id(page)}: `{body}` exited with {status}:\n{output}"
            printed.append(output)
        elif kind == "python":
            buffer = io.StringIO()
            with redirect_stdout(buffer):
                exec(compile(body, page_id(page), "exec"), namespace)
            printed.append(buffer.getvalue())
        else:
            seen = "\n".join(printed)
            missing = [n for n in numbers(body) if not quoted_in(n, seen)]
            assert not missing, f"{page_id(page)}: the prose quotes {missing}, which its commands did not print:\n{body}"
