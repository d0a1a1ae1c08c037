"""Output that fits (issue 34 item 3): the commands of the walk-throughs, run on the data the
repository ships (the demo, docs/examples, examples/factuality) with a small k, print text of
at most 100 characters a line (``--full-width``: as wide as it is), never ``None``, ``NaN`` or a
count as a float (``261.0``), and LaTeX whose captions have at most 300 characters and whose
floats each have a ``\\label``. Every command of the program is either run here
(:data:`SETUP`, :data:`TEXT_COMMANDS`) or listed in :data:`NOT_TABLES` with why; a table's
columns (read where :func:`metaeval.present.plain.fit` sets them) keep one number of decimals,
and a p-value column prints what the conclusion layer prints (never ``0``, never finer than 3
decimals: ``<floor`` below its resolution)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import click
import pandas as pd
import pytest
from click.testing import CliRunner

from metaeval.present import plain, tables
from metaeval.cli import main
from tests.conftest import ROOT

EXAMPLES = Path("docs") / "examples"            # relative, as the walk-throughs give them (from ROOT)
FACTUALITY = Path("examples") / "factuality"
DEMO = ("--dataset", "demo", "--human", "expert.relevance")
K = ("--k", "100")
#: the set-up (its own output is checked too): every ingest path the shipped files allow
SETUP = [
    ("demo", "--k", "100"),
    ("ingest", "preferences", str(EXAMPLES / "preferences.csv"), "--dataset", "judges-demo"),
    ("ingest", "table", str(FACTUALITY / "scores.csv"), "--dataset", "factuality", "--human", "human.*"),
    ("ingest", "table", str(FACTUALITY / "scores.csv"), "--dataset", "factuality-b", "--human", "human.*"),
    ("ingest", "attributes", str(FACTUALITY / "attributes.csv"), "--dataset", "factuality"),
    ("ingest", "preferences", str(EXAMPLES / "alpaca.csv"), "--dataset", "alpaca", "--judge", "gpt4"),
    ("ingest", "mqm", str(EXAMPLES / "mqm.tsv"), "--dataset", "mqm-demo"),
    ("ingest", "mqm", str(EXAMPLES / "mqm-metric.tsv"), "--dataset", "mqm-demo", "--judge", "xcomet"),
    ("ingest", "units", str(EXAMPLES / "units.csv"), "--dataset", "units-demo", "--prefix", "scu"),
    ("ingest", "summaries", "{tmp}/s.jsonl", "--dataset", "toy"),
    ("ingest", "sacrerouge", "{tmp}/h.jsonl", "--dataset", "toy", "--human", "pyramid"),
    ("ingest", "mtme", "{tmp}/wmtx", "--dataset", "wmtx-en-de", "--lp", "en-de"),
    ("index", "build", "refs", "--dataset", "toy"),
]
#: the commands whose text output is checked (after the set-up below)
TEXT_COMMANDS = [
    ("evaluate", str(EXAMPLES / "mymetric.csv"), *DEMO, *K),
    ("evaluate", "--metric", "*", *DEMO, "--level", "system", "--coefficient", "kendall", "--all-pairs", *K),
    ("correlate", *DEMO),
    ("ci", *DEMO, *K),
    ("compare", *DEMO, "--level", "system", *K),
    ("winners", *DEMO, "--level", "system", "--coefficient", "kendall"),
    ("accuracy", *DEMO, "--soft"),
    ("accuracy", *DEMO, "--k", "50"),
    ("rank-change", "--dataset", "demo", "--metric", "sim-high.f1", "--metric", "expert.relevance"),
    ("measure-correlation", "--dataset", "demo", "--measure", "expert.relevance", "--measure", "sim-high.f1"),
    ("datasets",),
    ("measures", "demo"),
    ("measures", "mqm-demo"),
    ("matrix", "mqm-demo", "mqm"),
    ("matrix", "units-demo", "scu.lite"),
    ("scale", "units-demo", "scu.lite", "--range", "0..1"),
    ("results", "confidence_intervals", "--dataset", "demo"),
    ("results", "hypothesis_tests", "--dataset", "demo"),
    ("judges", "--dataset", "judges-demo", "--k", "50"),
    ("leaderboard", "--dataset", "judges-demo", "--k", "50"),
    ("leaderboard", "--dataset", "judges-demo", "--judge", "judge-position", "--interval", "sandwich",
     "--anchor", "sys-3"),
    ("leaderboard", "--dataset", "judges-demo", "--ties", "davidson", "--correction", "none"),
    ("results", "leaderboard", "--dataset", "judges-demo"),
    ("results", "preference_rankings", "--dataset", "judges-demo"),
    ("lc-winrate", "--dataset", "alpaca", "--baseline", "baseline", "--judge", "gpt4", "--k", "50"),
    ("ppi", *DEMO, "--metric", "sim-medium.f1", "--labelled-share", "0.2"),
    ("plan", *DEMO, "--system", "S00", "--system", "S01", "--systems", "12", "--ratings", "3", "--trials", "200"),
    ("ppi", "--dataset", "judges-demo", "--judge", "judge-ties", "--baseline", "sys-3", "--labelled-share", "0.3"),
    ("raters", "--dataset", "mqm-demo", "--human", "mqm", "--k", "50"),
    ("span-eval", "--dataset", "mqm-demo", "--k", "50"),
    ("sql", "SELECT * FROM preference_matrix LIMIT 5"),
    ("detection", "--dataset", "factuality", "--human", "human.label", "--positive", "1",
     "--tune", "split=validation", "--where", "split=test", "--by", "source", "--k", "50"),
    ("categories", "--dataset", "factuality", "--human", "human.consistency", "--category", "label=human.label"),
    ("results", "detection", "--dataset", "factuality"),
    ("results", "judge_statistics", "--dataset", "judges-demo"),
    ("system-tests", "--dataset", "demo", "--measure", "sim-high.f1", "--method", "t-test", "--shapiro"),
    ("system-tests", "--dataset", "demo", "--measure", "sim-high.f1", "--method", "bootstrap",
     "--method", "randomization", *K),
    ("results", "system_tests", "--dataset", "demo"),
    ("systems-agreement", *DEMO),
    ("error-overlap", *DEMO, "--metric", "sim-high.f1", "--metric", "sim-low.f1"),
    *[("compare", "--dataset", d, "--human", "human.consistency", "--level", "system", "--alternative", "greater",
       "--k", "50") for d in ("factuality", "factuality-b")],
    ("replicability", "--level", "system", "--dataset", "factuality", "--human", "human.consistency", "--dataset", "factuality-b",
     "--human", "human.consistency"),
    ("rank-tasks", "--task", "demo:expert.relevance:system:kendall",
     "--task", "demo:expert.relevance:summary:acc-23:2", "--k", "50"),
    ("evaluate", "--dataset", "judges-demo", "--preferences", str(EXAMPLES / "my-judge.csv"), "--k", "50"),
    ("annotators", *DEMO, "--k", "100"),
    ("judge-leaderboard", "--dataset", "judges-demo", "--k", "50"),
    ("judge-diagnostics", "--dataset", "judges-demo", "--k", "50"),
    ("held-out-ties", *DEMO, "--fraction", "0.5", "--seed", "3"),
    ("normality", "--dataset", "demo"),
    ("agreement", "--dataset", "demo"),
    ("agreement", "--dataset", "demo", "--bins", "4", "--pairs", "200", "--baseline", "random"),
    ("derive", "scu.mean", "--dataset", "units-demo", "--from", "scu.lite", "--from", "scu.pyramid", "--as", "mean"),
    ("score", "toy", "--metric", "rouge", "--metric", "js"),
    ("score", "toy", "--metric", "regression", "--human", "pyramid", "--topic-cutoff", "2"),
    ("score", "toy", "--metric", "sera", "--index", "refs", "--cutoff", "1,2,3", "--sweep", "pyramid"),
    ("index", "list"),
    ("compare", "--dataset", "toy", "--human", "pyramid", "--level", "system", "--coefficient", "kendall",
     "--metric", "rouge-*", "--k", "50"),
    ("winners", "--dataset", "toy", "--human", "pyramid", "--level", "system", "--coefficient", "kendall",
     "--metric", "rouge-*"),
    ("optimal-set", "--dataset", "toy", "--human", "pyramid", "--coefficient", "kendall"),
    ("simulate", "coverage", *DEMO, "--metric", "sim-high.f1", "--trials", "20", "--k", "50"),
    ("simulate", "power", "--dataset", "toy", "--human", "pyramid", "--trials", "20", "--k", "50"),
    ("correlate", "--dataset", "wmtx-en-de", "--human", "mqm.seg", "--metric", "*.seg"),
]
#: the commands not run here, and why (each prints at most a line of its own, checked elsewhere)
NOT_TABLES = {
    "init": "one line (the warehouse created or up to date)",
    "push": "lines (the rows sent, per dataset and table; needs a PostgreSQL server: tests/test_team.py)",
    "pull": "lines (the rows added, per dataset and table; needs a PostgreSQL server: tests/test_team.py)",
    "drop dataset": "its report is wrapped (tests/test_housekeeping.py)",
    "drop measure": "its report is wrapped (tests/test_housekeeping.py)",
    "rename measure": "its report is wrapped (tests/test_housekeeping.py)",
    "export": "writes a file; one line naming it",
    "ingest eee": "one line a file, as every ingest's report (tests/test_eee.py)",
    "plot ci": "draws a figure (tests/test_cli.py::test_documented_plot_commands_work_on_the_demo)",
    "plot heatmap": "draws a figure (as plot ci)",
    "plot power": "draws a figure (as plot ci)",
    "plot scatter": "draws a figure (tests/test_cell_figures.py)",
    "plot distribution": "draws a figure (tests/test_cell_figures.py)",
    "report": "writes an HTML page (tests/test_report*.py)",
}
MISSING = re.compile(r"(?<![\w.\-])(None|NaN|nan|<NA>|NaT)(?![\w.\-])")
WHOLE = re.compile(r"(?<![\w.])\d+\.0(?![\d.%]| s\b)")   # not a duration (in 1.0 s)
ONE_DECIMAL = re.compile(r"(?<![\w.])\d+\.[1-9](?![\d.])")


def run(db, *args, ok: bool = True) -> str:
    result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
    assert (result.exit_code == 0) == ok, f"{args}: {result.output}"
    return result.output


def problems(output: str, width: int | None = plain.WIDTH) -> list[str]:
    """What does not fit in ``output``: long lines, missing-value tokens, whole numbers as
    floats (where no number of the output has one decimal: a one-decimal column may end in .0)."""
    out = []
    floats_with_one_decimal = ONE_DECIMAL.search(output) is not None
    for line in output.splitlines():
        if width is not None and len(line) > width:
            out.append(f"{len(line)} characters: {line}")
        if MISSING.search(line):
            out.append(f"a missing value printed: {line}")
        if WHOLE.search(line) and not floats_with_one_decimal:
            out.append(f"a count as a float: {line}")
    return out


@pytest.fixture(autouse=True)
def _in_the_clone(monkeypatch):
    monkeypatch.chdir(ROOT)


def _toy_files(tmp: Path) -> None:
    """The texts of a small dataset (toy: 4 systems x 3 inputs, their references and documents,
    a human measure ``pyramid`` in SacreROUGE's layout) and a small mt-metrics-eval directory."""
    from tests.test_sera_scoring import REFS
    from tests.test_sera_sweep import SUMMARIES

    lines = [{"instance_id": i, "summarizer_id": s, "summary": {"text": [t]},
              "references": [{"summarizer_id": f"r{k}", "text": [r]} for k, r in enumerate(REFS[i])],
              "documents": [{"text": [" ".join(REFS[i])]}]} for (s, i), t in SUMMARIES.items()]
    (tmp / "s.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    base = {"s1": 3.0, "s2": 1.0, "s3": 2.0, "s4": 0.5}
    scores = [{"instance_id": i, "summarizer_id": s, "summarizer_type": "peer",
               "metrics": {"pyramid": base[s] + 0.1 * k}} for k, (s, i) in enumerate(SUMMARIES)]
    (tmp / "h.jsonl").write_text("".join(json.dumps(line) + "\n" for line in scores))
    d = tmp / "wmtx"
    for sub in ("sources", "references", "human-scores", "metric-scores/en-de", "system-outputs/en-de"):
        (d / sub).mkdir(parents=True)
    systems = ("sys-A", "sys-B", "sys-C")
    (d / "sources" / "en-de.txt").write_text("".join(f"source {j}\n" for j in range(4)))
    (d / "references" / "en-de.refA.txt").write_text("".join(f"ref {j}\n" for j in range(4)))
    for n, s in enumerate(systems):
        (d / "system-outputs" / "en-de" / f"{s}.txt").write_text("".join(f"{s} {j}\n" for j in range(4)))
    (d / "human-scores" / "en-de.mqm.seg.score").write_text(
        "".join(f"{s} {-((n * 3 + j) % 5)}\n" for n, s in enumerate(systems) for j in range(4)))
    (d / "metric-scores" / "en-de" / "BLEU-refA.seg.score").write_text(
        "".join(f"{s} {((n * 7 + j * 3) % 11) / 10}\n" for n, s in enumerate(systems) for j in range(4)))


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fits")
    db = tmp / "wh.duckdb"
    _toy_files(tmp)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(ROOT)
        setup = [run(db, *(a.format(tmp=tmp) for a in args)) for args in SETUP]
    return db, setup


@pytest.fixture(scope="module")
def tables_printed():
    """Every table :func:`plain.fit` sets while the fixture is active: (headers, columns, numeric)."""
    seen: list[tuple] = []
    original = plain.fit

    def spy(headers, columns, numeric, width=plain.DISPLAY):
        seen.append((headers, columns, numeric))
        return original(headers, columns, numeric, width)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(plain, "fit", spy)
        yield seen


def command_of(args: tuple[str, ...]) -> str:
    """The command's name in ``args`` (``ingest mqm``, ``leaderboard``)."""
    group = main.commands.get(args[0])
    return " ".join(args[:2]) if isinstance(group, click.Group) else args[0]


def every_command(group: click.Group = main, prefix: str = "") -> set[str]:
    out = set()
    for name, command in group.commands.items():
        full = f"{prefix}{name}"
        out |= every_command(command, full + " ") if isinstance(command, click.Group) else {full}
    return out


def test_every_command_is_run_here_or_listed_as_printing_no_table():
    covered = {command_of(args) for args in [*SETUP, *TEXT_COMMANDS]}
    assert not covered & set(NOT_TABLES)
    assert every_command() == covered | set(NOT_TABLES), every_command() ^ (covered | set(NOT_TABLES))


NUMBER = re.compile(r"[+-]?\d+\.(\d+)(?![\d.e])")
PVALUE = re.compile(r"^p(_|$)|p_?value|^p_adj")


def column_problems(headers, columns, raw_values: bool = False) -> list[str]:
    """A column whose decimal numbers (alone, or in an interval ``[lo, hi]``) have different
    numbers of decimals; a p-value column with a ``0`` or more than 3 decimals (not in
    ``raw_values``: ``results`` and ``sql`` print the stored values, as ``export`` writes them)."""
    out = []
    for header, cells in zip(headers, columns):
        header = header.strip()
        if PVALUE.search(header):   # a p near alpha prints the digits that show its side (0.04995)
            cells = [c for c in cells if not _beside_alpha(c.strip().rstrip("*"))]
        for shape in (r"[+-]?\d+\.\d+\*?", r"\[.*\]"):
            shaped = [c.strip() for c in cells if re.fullmatch(shape, c.strip())]
            places = {len(m.group(1)) for c in shaped for m in NUMBER.finditer(c)}
            if len(places) > 1:
                out.append(f"{header}: {sorted(places)} decimals ({shaped[:4]})")
        if PVALUE.search(header) and raw_values is False:
            for cell in (c.strip().rstrip("*") for c in cells):
                if re.fullmatch(r"0(\.0*)?", cell) or re.fullmatch(r"\d\.\d{4,}", cell):
                    out.append(f"{header}: p printed as {cell!r}")
                    break
    return out


def _beside_alpha(cell: str) -> bool:
    """A p printed with more than 3 decimals because it lies near the default alpha."""
    from metaeval.analyses import conclusions

    return (re.fullmatch(r"0\.\d{4,}", cell) is not None
            and conclusions.side_digits(float(cell), conclusions.DEFAULT_ALPHA) == len(cell) - 2)


def test_column_problems_are_found():
    assert column_problems(["r", "p_value"], [["0.5", "0.25"], ["0.9009", "0.100"]]) == [
        "r: [1, 2] decimals (['0.5', '0.25'])", "p_value: [3, 4] decimals (['0.9009', '0.100'])",
        "p_value: p printed as '0.9009'"]
    assert column_problems(["ci"], [["[0.93, 0.996]"]]) and not column_problems(["ci"], [["[0.930, 0.996]"]])
    assert not column_problems(["p_adjusted"], [["<0.02", "0.047*", "1.000", ""]])


def test_text_output_fits(warehouse, tables_printed):
    db, setup = warehouse
    found = {f"setup {i}": bad[:5] for i, out in enumerate(setup) if (bad := problems(out))}
    for args in TEXT_COMMANDS:
        tables_printed.clear()
        result = CliRunner().invoke(main, ["--db", str(db), *args], catch_exceptions=False)
        bad = problems(result.output) if result.exit_code == 0 else [f"failed: {result.output}"]
        raw = args[0] in ("results", "sql")
        bad += [p for headers, columns, _ in tables_printed for p in column_problems(headers, columns, raw)]
        if bad:
            found[" ".join(args)] = bad[:5]
    assert not found, "\n".join(f"{args}:\n  " + "\n  ".join(bad) for args, bad in found.items())


def has_latex(args: tuple[str, ...]) -> bool:
    """Whether the command of ``args`` has ``--format latex``."""
    command = main.commands[args[0]]
    command = command.commands[args[1]] if isinstance(command, click.Group) else command
    return any(p.name == "fmt" and "latex" in getattr(p.type, "choices", ()) for p in command.params)


def _columns_of(spec: str) -> int:
    return len(re.sub(r"[^lrcp]", "", re.sub(r"[p@]\{[^}]*\}", "p", spec)))


def _plain_cell(cell: str) -> str:
    """A LaTeX cell as the number or text it prints (bold, phantoms and math left out)."""
    cell = re.sub(r"\\phantom\{[^{}]*\}", "", cell).replace(r"\textless{}", "<").replace("$-$", "-")
    cell = re.sub(r"\\[a-zA-Z]+", "", cell.replace(r"\_", "_"))
    return cell.replace("{", "").replace("}", "").replace("$", "").strip()


def latex_tabulars(output: str) -> list[tuple[str, list[str], list[list[str]]]]:
    r"""(spec, header, rows) of each tabular of ``output``: the header is the row above the first
    ``\midrule``, the rows those under it (a row spanning columns left out)."""
    out = []
    for spec, body in re.findall(r"\\begin\{tabular\}\{([^\n]*)\}\n(.*?)\\end\{tabular\}", output, flags=re.S):
        header, rows, ruled = [], [], False
        for line in body.splitlines():
            ruled = ruled or line.startswith(r"\midrule")
            if line.endswith(r"\\") and r"\multicolumn" not in line:
                cells = [_plain_cell(c) for c in re.split(r"(?<!\\)&", line[:-2])]
                rows.append(cells) if ruled else header.__setitem__(slice(None), cells)
        out.append((spec, header, rows))
    return out


def latex_problems(output: str, raw_values: bool = False) -> list[str]:
    r"""What is wrong in a command's LaTeX: a table not in a float, a float without a ``\label``, a
    caption over 300 characters, a missing value or a count as a float, unbalanced braces, a row
    with another number of cells than its tabular's columns, an unescaped ``_ % # &``, and the
    column problems of text (:func:`column_problems`: decimals, p-values)."""
    lines = [x for x in output.splitlines() if not x.startswith("%")]
    floats = re.findall(r"\\begin\{(table\*?|figure\*?)\}", output)
    too_long = re.search(r"^% .*: \d+ rows, more than a page holds", output, flags=re.MULTILINE)   # not set
    out = [] if too_long or floats and re.search(r"\\begin\{tabular\}", output) else ["no table in a float"]
    if len(re.findall(r"\\label\{tab:[a-z0-9-]+\}", output)) != len(floats):
        out.append("a float without a \\label")
    captions = re.findall(r"^\\caption\{(.*)\}$", output, flags=re.MULTILINE)
    out += [f"a caption of {len(c)} characters" for c in captions if len(c) > tables.CAPTION_CHARS]
    out += [f"unescaped {c} in a caption: {x[:60]}" for x in captions for c in "_%#&" if re.search(rf"(?<!\\){c}", x)]
    out += [f"a missing value: {x[:80]}" for x in lines if MISSING.search(x)]
    out += [f"a count as a float: {x[:80]}" for x in lines if x.endswith(r"\\") and problems(x, None)]
    depth = 0
    for c in re.sub(r"\\[{}]", "", re.sub(r"\\\\", "", "\n".join(lines))):
        depth += (c == "{") - (c == "}")
        if depth < 0:
            break
    if depth:
        out.append("braces unbalanced")
    for spec, header, rows in latex_tabulars(output):
        n = _columns_of(spec)
        body = output.split(f"\\begin{{tabular}}{{{spec}}}", 1)[1].split(r"\end{tabular}", 1)[0]
        for line in (x for x in body.splitlines() if x.endswith(r"\\")):
            spans = sum(int(m) - 1 for m in re.findall(r"\\multicolumn\{(\d+)\}", line))
            if len(re.split(r"(?<!\\)&", line)) + spans != n:
                out.append(f"a row of other than {n} columns: {line[:80]}")
            out += [f"unescaped {c}: {line[:80]}" for c in "_%#" if re.search(rf"(?<!\\){c}", line)]
        rows = [r for r in rows if len(r) == n]
        if len(header) == n:
            out += column_problems(header, [list(c) for c in zip(*rows)] if rows else [[]] * n, raw_values)
    return out


def test_latex_problems_are_found():
    good = tables.to_latex(pd.DataFrame({"metric_a": ["x_1"], "p_value": ["0.020"], "n": [3.0]}), caption="T.")
    assert not latex_problems(good)
    bad = (r"\begin{table}" "\n" r"\begin{tabular}{lr}" "\n" r"a_b & p\_value \\" "\n" r"\midrule" "\n"
           r"x & 0.0000 \\" "\n" r"y & 3 & 4 \\" "\n" r"z & 261.0 \\" "\n" r"\end{tabular}" "\n"
           r"\caption{" + "x" * 301 + "}\n" r"\end{table}" "\n")
    found = "\n".join(latex_problems(bad + "{"))
    for what in ("without a \\label", "caption of 301", "unescaped _", "a row of other than 2 columns",
                 "p printed as '0.0000'", "a count as a float", "braces unbalanced"):
        assert what in found, what


@pytest.fixture(scope="module")
def latex_outputs(warehouse):
    """The LaTeX of every command of :data:`TEXT_COMMANDS` that has ``--format latex`` (the others
    run as they are there: the set-up of the ones after them)."""
    out = {}
    for args in TEXT_COMMANDS:
        latex = has_latex(args)
        if not latex:     # a set-up (it may have run in the text test already: derive refuses a second time)
            CliRunner().invoke(main, ["--db", str(warehouse[0]), *args])
        else:
            output = run(warehouse[0], *args, "--format", "latex")
            start = next((i for i, x in enumerate(output.splitlines()) if x.startswith(("%", "\\"))), None)
            out[" ".join(args)] = "\n".join(output.splitlines()[start:]) + "\n" if start is not None else ""
    return out


def test_every_command_with_latex_is_checked(latex_outputs):
    with_latex = {name for name in every_command() if has_latex(tuple(name.split()))}
    assert {command_of(tuple(a.split())) for a in latex_outputs} == with_latex
    assert len(with_latex) >= 30


def test_latex_captions_labels_numbers_and_escapes(latex_outputs):
    found = {args: bad[:5] for args, output in latex_outputs.items()
             if (bad := latex_problems(output, args.startswith(("results", "sql"))))}
    assert not found, "\n".join(f"{args}:\n  " + "\n  ".join(bad) for args, bad in found.items())


DOCUMENT = r"""\documentclass[11pt,twocolumn]{article}
\usepackage{booktabs}
\setlength{\textwidth}{455pt}\setlength{\columnsep}{17pt}\setlength{\columnwidth}{219pt}
\begin{document}
%s
\end{document}
"""


@pytest.mark.skipif(shutil.which("pdflatex") is None,
                    reason="pdflatex not installed (apt-get install texlive-latex-recommended)")
def test_latex_compiles_without_an_overfull_box_in_a_two_column_paper(latex_outputs, tmp_path):
    r"""Each command's LaTeX in an ACL-sized two-column article (\columnwidth 219 pt, \textwidth
    455 pt): no error, no overfull box (a ``table`` fits the column, a ``table*`` the page)."""
    found = {}
    for n, (args, output) in enumerate(latex_outputs.items()):
        (tmp_path / f"t{n}.tex").write_text(DOCUMENT % output)
        done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", f"t{n}.tex"],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
        log = (tmp_path / f"t{n}.log").read_text(errors="replace").splitlines()
        bad = [x for x in log if x.startswith("!") or x.startswith("Overfull")]
        if done.returncode or bad:
            found[args] = bad[:3] or [done.stdout[-300:]]
    assert not found, found


def test_no_table_is_printed_by_pandas():
    """Every text table goes through the text table helper (:func:`metaeval.present.plain.fit`:
    it fits the terminal, prints no None / NaN, counts as integers), never ``DataFrame.to_string``
    or ``print``."""
    found = [f"{path}:{n}" for folder in ("warehouse", "ingest", "analyses", "present", "runs", "cli")
             for path in sorted((ROOT / folder).rglob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if re.search(r"\.to_string\(|(?<![\w.])print\(", line.split("#")[0]) and '"""' not in line
             and "``" not in line]
    assert not found, found


def test_wide_prints_everything(warehouse):
    args = ("evaluate", str(EXAMPLES / "mymetric.csv"), *DEMO, *K)
    fitted, wide = run(warehouse[0], *args), run(warehouse[0], "--full-width", *args)
    assert max(map(len, wide.splitlines())) > plain.WIDTH >= max(map(len, fitted.splitlines()))
    assert run(warehouse[0], *args, "--full-width") == wide                 # after the command's name too
    assert "signature metaeval:" in wide and "signature metaeval:" not in fitted
    assert plain.resolve_width() == plain.WIDTH                    # --full-width ends with its command


def test_fit_wraps_text_columns_then_sets_blocks():
    frame = pd.DataFrame({"metric": ["a", "b"], "beats": ["x, " * 40, "y"], "n": [1, 2]})
    text = tables.render(frame, "text")
    assert max(map(len, text.splitlines())) <= plain.WIDTH and "x, x" in text
    assert tables.render(frame, "text", width=None).splitlines()[1].rstrip().endswith("1")
    many = pd.DataFrame({f"column_{i}": [0.123456, 0.5] for i in range(20)}).assign(key=["p", "q"])
    many = many[["key", *many.columns[:-1]]]
    blocks = tables.render(many, "text").split("\n\n")
    assert len(blocks) > 1 and all(b.splitlines()[1].split()[0] == "p" for b in blocks)   # the key leads each
    assert all(len(line) <= plain.WIDTH for line in tables.render(many, "text").splitlines())


def test_missing_values_and_counts_print_plainly():
    frame = pd.DataFrame({"votes": [261.0, float("nan")], "scale": [None, "elo"], "r": [0.5, float("nan")],
                          "n": pd.array([1, None], dtype="Int64")})
    text = tables.render(frame, "text")
    assert not problems(text) and "261" in text and "0.5" in text


def test_captions_keep_their_title_and_verdicts():
    caption = ("Correlation with h on d: level system; tests perm-both (k=50, seed=0); " + "x " * 200
               + "signature metaeval:1|evaluate.")
    shown, rest = tables.split_caption(caption, "Bold: the top cluster. No clusters: they cannot resolve at k=50.")
    assert shown.startswith("Correlation with h on d.") and "cannot resolve" in shown and len(shown) <= 300
    assert "signature" in rest and "level system" in rest
    assert len(tables.caption_text(caption, width=100).splitlines()) <= tables.CAPTION_LINES
    latex = tables.render(pd.DataFrame({"a": [1]}), "latex", caption=caption)
    assert re.search(r"^% .*level system", latex, flags=re.MULTILINE) and r"\label{tab:correlation-with-h-on-d-" in latex


def test_a_command_in_prose_is_continued_not_cut():
    text = "Draw them with: metaeval plot heatmap " + " ".join(f"--option-{i} value" for i in range(12))
    lines = plain.wrap(text, 60).splitlines()
    assert all(len(line) <= 60 for line in lines)
    assert all(line.endswith(" \\") for line in lines[1:-1])
    assert " ".join(line.rstrip(" \\").strip() for line in lines[1:]) == text.split(": ", 1)[1]


def test_the_kind_refusal_names_drop_measure(tmp_path):
    db = tmp_path / "wh.duckdb"
    run(db, "ingest", "table", str(FACTUALITY / "scores.csv"), "--dataset", "factuality")     # --human forgotten
    output = run(db, "ingest", "table", str(FACTUALITY / "scores.csv"), "--dataset", "factuality",
                 "--human", "human.*", ok=False)
    assert "`metaeval drop measure factuality human.consistency`" in output
    output = run(db, "correlate", "--dataset", "factuality", "--human", "human.consistency", ok=False)
    assert "stored as an automatic metric" in output and "`metaeval drop measure factuality human.consistency`" in output


def test_a_short_command_in_backticks_stays_in_its_sentence():
    text = ("note: abstractiveness, coverage need the reference texts and the input documents; dataset 'demo' "
            "stores no reference texts (`metaeval ingest summaries` stores them)")
    lines = plain.wrap(text, 100).splitlines()
    assert len(lines) == 2 and lines[1] == "stores no reference texts (`metaeval ingest summaries` stores them)"


def test_a_family_table_leaves_its_bookkeeping_to_json_and_a_wide_table_repeats_its_keys():
    frame = pd.DataFrame({"method": ["t-test"], "system_a": ["S00"], "system_b": ["S01"],
                          **{f"statistic_{i}": [0.5] for i in range(12)}, "result_id": [3], "fingerprint": ["ab" * 32]})
    from metaeval.runs.engine.families import Family

    text = Family.present(None, frame, "text")
    table, note = text.rstrip("\n").rsplit("\n", 1)
    assert "fingerprint" not in table and note == "(result_id, fingerprint: in the json and csv formats)"
    blocks = table.split("\n\n")
    assert len(blocks) > 1 and all(b.split()[:3] == ["method", "system_a", "system_b"] for b in blocks)
    assert "fingerprint" in Family.present(None, frame, "csv")


def test_markdown_captions_are_cut_as_latex_ones():
    caption = ("Correlation with h on d: level system; tests perm-both (k=50, seed=0); " + "x " * 200
               + "signature metaeval:1|evaluate.")
    text = tables.render(pd.DataFrame({"a": [1]}), "markdown", caption=caption)
    shown, comment = text.split("\n")[:2]
    assert shown.startswith("Correlation with h on d.") and len(shown) <= tables.CAPTION_CHARS
    assert comment.startswith("<!-- ") and "signature metaeval:1|evaluate." in comment and comment.endswith(" -->")
    assert text.split("\n")[3].startswith("| a |")


def test_a_wide_latex_table_of_rows_is_set_in_column_blocks_with_long_texts_as_paragraphs():
    frame = pd.DataFrame({"method": ["t-test", "wilcoxon"], **{f"statistic_{i}": [0.5, 0.25] for i in range(20)},
                          "tiny": [0.5, 1e-7], "note": ["a long note " * 20, "x"], "hash": ["ab" * 32, "cd" * 32]})
    latex = tables.to_latex(frame, caption="Tests between systems: conventions.")
    found = latex_tabulars(latex)
    assert len(found) > 1 and all(header[0] == "method" for _, header, _ in found)    # the key leads each block
    assert "p{150pt}" in latex and "abababababababab\\allowbreak{}" in latex and not latex_problems(latex)
    assert "5.000e-01" in latex and "1.000e-07" in latex             # one number of decimals in a column
    assert tables.to_latex(frame.iloc[:0].reindex(range(201)), caption="t.").startswith("% t: 201 rows")


def test_a_familys_latex_leaves_its_bookkeeping_to_json_and_prints_p_at_its_resolution():
    from types import SimpleNamespace

    from metaeval.runs.engine.families import Family

    frame = pd.DataFrame({"method": ["perm"], "k": [50], "p_value": [0.0], "p_adjusted": [0.5], "result_id": [3],
                          "fingerprint": ["ab" * 32]})
    latex = Family.present(SimpleNamespace(summary="Tests between systems.", name="x", options=()), frame, "latex")
    assert "% (result_id, fingerprint: in the json and csv formats)" in latex and "abab" not in latex
    assert r"\textless{}0.02" in latex and "0.500" in latex and r"\caption{Tests between systems.}" in latex
    assert not latex_problems(latex)


def test_a_familys_latex_says_shared_settings_once_and_keeps_every_result_column():
    """A setting column holding one value on every row (k, the dataset, a family's option) goes
    to the float's comment with its value, an empty column is named as not set, a constant
    result column stays in the table, and a family that cannot resolve says so above the float."""
    import json
    from types import SimpleNamespace

    from metaeval.analyses.stats.resolution import Resolution
    from metaeval.runs.engine.families import Family
    from metaeval.runs.engine.options import Option

    res = Resolution("count", 100, "holm", 10, 0.05, 0.01, 0.005, False, 200)
    frame = pd.DataFrame({"dataset": ["d", "d"], "system": ["a", "b"], "rating": [1010.5, 990.25],
                          "votes": [7, 7], "ties": ["half", "half"], "k": [100, 100], "correction": ["holm", "holm"],
                          "alpha": [0.05, 0.05], "cluster": [None, None],
                          "conventions": [json.dumps({"resolution": res.as_dict()})] * 2})
    family = SimpleNamespace(summary="Ratings.", name="x", options=(Option("ties", default="half"),))
    latex = Family.present(family, frame, "latex")
    comment = " ".join(line[1:].strip() for line in latex.splitlines() if line.startswith("%"))
    body = "\n".join(line for line in latex.splitlines() if not line.startswith("%"))
    for said in ("dataset=d", "ties=half", "k=100", "correction=holm", "alpha=0.05"):
        assert said in comment
    assert "not set: cluster" in comment
    assert "cannot resolve at k = 100" in comment and "1 / k = 0.01" in comment and "k >= 200" in comment
    header = next(line for line in body.splitlines() if "rating" in line)
    assert header.split("&")[0].strip() == "system" and "votes" in header      # a constant result column stays
    assert "dataset" not in header and "ties" not in header and "cluster" not in header
    one = Family.present(family, frame.head(1), "latex")                        # one row: every column kept
    assert "dataset" in next(line for line in one.splitlines() if "rating" in line)
    assert not latex_problems(latex)


def test_a_familys_latex_prints_p_at_its_resolution_when_k_is_said_once():
    """k held on every row goes to the comment, after the p-values are printed at 1/k (review:
    the settings were dropped first and a count p of 0 printed <0.001 at k = 50); a corrected p's
    floor is times the family's size; n_valid, where the rows count it, is the resolution."""
    from types import SimpleNamespace

    from metaeval.runs.engine.families import Family

    family = SimpleNamespace(summary="Tests.", name="x", options=())
    frame = pd.DataFrame({"metric": ["a", "b"], "k": [50, 50], "pvalue": [0.0, 0.3],
                          "pvalue_adjusted": [0.0, 0.3], "correction": ["bonferroni"] * 2, "family_size": [2, 2]})
    body = [line for line in Family.present(family, frame, "latex").splitlines() if line.startswith("a &")]
    assert body and r"\textless{}0.02" in body[0] and r"\textless{}0.04" in body[0] and "0.001" not in body[0]
    fewer = frame.assign(n_valid=[40, 40])
    body = [line for line in Family.present(family, fewer, "latex").splitlines() if line.startswith("a &")]
    assert r"\textless{}0.025" in body[0] and r"\textless{}0.05" in body[0]
