"""The page: the sections in their order (:data:`SECTIONS`, each a function of the
:class:`~metaeval.runs.report.context.Context` returning a Section or None), what is not
computed yet, the provenance, and the HTML around them (a table of contents, a few lines of CSS
and of JavaScript to sort the tables)."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

from metaeval import __version__, files
from metaeval.core import Store
from metaeval.errors import WarehouseError, no_human_judgment
from metaeval.runs.report import answer, provenance
from metaeval.runs.report.context import Context, Section, Words

#: A section of the page: what it shows of ``ctx``'s warehouse, or None where it has nothing to
#: show or suggest (e.g. no preferences: no judges' section).
SectionFn = Callable[[Context], "Section | None"]

#: The page's own sections, in order: (name, function): the answer and the dataset's. Every
#: family's sections stand between them (:meth:`metaeval.runs.engine.families.Family.section`, by the
#: families' ``report_position``: :func:`page_sections`); sections that share an anchor (the four
#: of factual consistency) are one section of the page (:func:`merge`). :func:`register_section`
#: adds a section that is no family's; the page closes with what is not computed yet (before the
#: dataset's section) and the provenance of every run shown.
SECTIONS: list[tuple[str, SectionFn]] = [
    ("answer", answer.answer),
    ("dataset", provenance.overview),
]


def register_section(name: str, fn: SectionFn, after: str | None = None) -> None:
    """Add the section ``fn(ctx) -> Section | None`` named ``name`` to the page: after the section
    named ``after`` (a name of :func:`page_sections`), by default after the last section of
    results (before the dataset's). A family shows its sections through its
    :meth:`~metaeval.runs.engine.families.Family.section` instead."""
    names = [n for n, _ in page_sections()]
    if name in names:
        raise ValueError(f"the report already has a section named {name!r}")
    if after is not None and after not in names:
        raise ValueError(f"the report has no section named {after!r}; it has: {', '.join(names)}")
    position = names.index(after) + 1 if after is not None else names.index("dataset") if "dataset" in names \
        else len(names)
    SECTIONS.append((name, fn))
    _PLACED[name] = names[position] if position < len(names) else None


#: a registered section -> the section it stands before (None: the last)
_PLACED: dict[str, str | None] = {}


def page_sections() -> list[tuple[str, SectionFn]]:
    """The page's sections in order: the answer, every registered family's
    (:meth:`metaeval.runs.engine.families.Family.section`, by ``report_position``, then the registry's
    order), the dataset's; a section added by :func:`register_section` where it was placed. A
    family declared in its own module adds its sections to the page with no change here."""
    from metaeval.runs.engine.families import FAMILIES

    families = sorted(FAMILIES.values(), key=lambda f: f.report_position)   # stable: the registry's order
    page = [s for s in SECTIONS if s[0] not in _PLACED]
    at = next((i for i, (n, _) in enumerate(page) if n == "dataset"), len(page))
    page[at:at] = [(f.name, (lambda ctx, f=f: f.section(ctx))) for f in families]
    for name, fn in SECTIONS:
        if name in _PLACED:
            names = [n for n, _ in page]
            before = _PLACED[name]
            page.insert(names.index(before) if before in names else len(page), (name, fn))
    return page


def _flat(sections) -> list[Section]:
    """The sections a section function gave: None, one Section or a list of them (None dropped)."""
    if sections is None:
        return []
    if isinstance(sections, Section):
        return [sections]
    return [s for s in sections if s is not None]


def merge(sections: list[Section]) -> list[Section]:
    """One section per run of consecutive sections that share an anchor: their blocks in order,
    their runs, and their notes (what is missing) joined, after the blocks when there are any."""
    runs: list[list[Section]] = []
    for s in sections:
        if runs and runs[-1][0].anchor == s.anchor:
            runs[-1].append(s)
        else:
            runs.append([s])
    out = []
    for parts in runs:
        if len(parts) == 1:
            out.append(parts[0])
            continue
        s = Section(parts[0].title, parts[0].anchor)
        for p in parts:
            s.blocks += p.blocks
            s.run_ids |= p.run_ids
        text = "; ".join(p.note for p in parts if p.note)
        if text and s.blocks:
            s.blocks.append(f'<p class="note">{html.escape(text[0].upper() + text[1:])}.</p>')
        else:
            s.note = text
        out.append(s)
    return out


def build(wh: Store, dataset: str, out: Path, human: str | None = None, *, overwrite: bool = False,
          words: Words = Words()) -> tuple[Path, int]:
    """Write the report of ``dataset`` to the HTML file ``out``; (``out``, the number of figures).

    One self-contained file: nothing it shows is fetched from elsewhere. It is written beside
    ``out`` and moved into place when complete (a failure leaves nothing behind); an existing
    file is replaced only with ``overwrite``, and never the warehouse (:mod:`metaeval.files`).
    ``words`` name what to run for missing results (default: Python calls; the command line
    gives its command lines)."""
    wh.require_dataset(dataset)
    if human is not None:
        humans = set(wh.measures(dataset, "human")["measure"])
        if human not in humans:
            raise no_human_judgment(dataset, human, humans, wh.measures(dataset, "automatic")["measure"])
    files.check_output_file(out, warehouse=wh.path, overwrite=overwrite)
    page, n = render(wh, dataset, human, words)
    with files.atomic_file(out, warehouse=wh.path, overwrite=overwrite) as tmp:
        tmp.write_text(page, encoding="utf-8")
    return Path(out), n


def render(wh: Store, dataset: str, human: str | None = None, words: Words = Words()) -> tuple[str, int]:
    """The report's page (HTML) and its number of figures; ``words``: see :func:`build`."""
    ctx = Context(wh, dataset, human, words)
    sections = merge([s for _, fn in page_sections() for s in _flat(fn(ctx))])
    judged = any(s.anchor == "judges" and s.blocks for s in sections)
    if not sections[0].blocks and judged:
        # preferences but no correlations: the judges answer first
        first = next(s for s in sections if s.anchor == "judges")
        sections = [first, *(s for s in sections if s is not first)]
    preferences_only = judged and wh.measures(dataset).empty
    if preferences_only:
        # pairwise preferences and no scores: the sections of scores have nothing to say or suggest
        sections = [s for s in sections if s.blocks]
    ctx.run_ids = set().union(*(s.run_ids for s in sections))
    # what is not computed yet: one list of the commands that compute it, after the results
    missing = [s for s in sections if s.note and not s.blocks]
    sections = [s for s in sections if not any(s is m for m in missing) or s.anchor == "ranking"]
    listed = [s for s in missing if s.anchor != "ranking"]
    if listed:
        todo = Section("Not computed yet", "missing")
        todo.blocks.append("<ul>" + "".join(f"<li><b>{html.escape(_short(s.title))}</b>: {html.escape(s.note)}</li>"
                                            for s in listed) + "</ul>")
        at = next((i for i, s in enumerate(sections) if s.anchor == "dataset"), len(sections))
        sections.insert(at, todo)
    sections.append(provenance.provenance(ctx))
    return _page(ctx, sections, preferences_only), ctx.figures


def _page(ctx: Context, sections: list[Section], preferences_only: bool) -> str:
    """The HTML page of ``sections``: title, table of contents, each section with the runs
    behind it, the script that sorts the tables."""
    body = []
    for s in sections:
        body.append(f'<section id="{s.anchor}"><h2>{html.escape(s.title)}</h2>')
        if s.note:
            body.append(f'<p class="note">{html.escape(s.note)}</p>')
        body += s.blocks
        if s.anchor != "provenance":
            body.append(provenance.runs_line(s.run_ids))
        body.append("</section>")
    against = f"with {ctx.human}" if ctx.human else "with the human judgments"
    who = "metrics"
    if preferences_only:
        who, against = "judges", "with the human preferences"
    title = f"Which {who} agree best {against}? {ctx.dataset}"
    toc = " ".join(f'<a href="#{s.anchor}">{html.escape(_short(s.title))}</a>' for s in sections)
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            "<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
            f"<h1>Which {who} agree best {html.escape(against)}? "
            f"<span style='font-weight:normal'>Dataset {html.escape(ctx.dataset)}</span></h1>"
            f"<p class='meta'>metaeval {html.escape(__version__)} report of <code>{html.escape(str(ctx.wh.path))}</code>: "
            "every number is read from the warehouse's tables (nothing is recomputed but the per-input τ of the "
            "agreement figures, said in their captions); each section links the runs behind it.</p>"
            f"<nav class='toc'><b>Contents:</b> {toc}</nav>"
            + "\n".join(body) + f"<script>{SCRIPT}</script></body></html>")


def _short(title: str) -> str:
    """A section title for the table of contents (without its reference in brackets)."""
    return re.sub(r" \((?:the paper's|Deutsch|Bhandari)[^)]*\)$", "", title).split(":")[0]


STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1180px;margin:1.2em auto;padding:0 1em;
color:#222;line-height:1.4}
h1{font-size:1.5em;margin:.2em 0 .1em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ddd}
h3{font-size:1.05em}h4{font-size:.95em;margin:1.2em 0 .3em}
.meta{color:#555;font-size:.85em;margin:0 0 .4em}
nav.toc{font-size:.85em;margin:.3em 0 .8em;padding:.3em .6em;background:#f6f7f9;border-radius:4px}
nav.toc a{margin-right:.9em;white-space:nowrap}
.answer{font-size:1.02em;margin:.4em 0}
table{border-collapse:collapse;font-size:13px;margin:.4em 0}
td,th{padding:2px 8px;border-bottom:1px solid #e3e3e3;text-align:left;vertical-align:top}
th{background:#f6f7f9;position:sticky;top:0}
table.sortable th:not(.nosort){cursor:pointer}
table.sortable th:not(.nosort):after{content:" \\2195";color:#aaa;font-size:.8em}
th.asc:after{content:" \\2191"!important;color:#333!important}th.desc:after{content:" \\2193"!important;color:#333!important}
td.num,th.num,table.data td[data-v]{text-align:right;font-variant-numeric:tabular-nums}
table.data{font-size:12px}
tr.undefined td{color:#888}tfoot td{border-top:2px solid #bbb;color:#8a1c1c}tfoot tr.missing td{color:#888}
.bar{position:relative;display:inline-block;width:180px;height:12px;vertical-align:middle}
.bar .zero{position:absolute;top:0;bottom:0;border-left:1px dotted #999}
.bar .ci{position:absolute;top:5px;height:3px;background:#1f77b4}
.bar .dot{position:absolute;top:2px;width:8px;height:8px;margin-left:-4px;border-radius:50%;background:#222}
.bar .ci.human{background:#d62728;opacity:.5}.bar .dot.human{background:#d62728}
.caption{font-size:.85em;color:#444;max-width:1100px}
figure{margin:1em 0}figure img{max-width:100%;height:auto}figcaption{font-size:.85em;color:#444;max-width:900px}
.note{color:#8a4b00}.runs{font-size:.8em;color:#666}
details{margin:.3em 0 .8em}summary{cursor:pointer;color:#234}
code{background:#f4f4f4;padding:0 3px}
"""

#: Click a header to sort its table (numbers by their data-v value; an empty value always last).
SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('thead th').forEach(function (th, col) {
    if (th.classList.contains('nosort')) return;
    th.addEventListener('click', function () {
      var body = table.tBodies[0], up = !th.classList.contains('asc');
      table.querySelectorAll('thead th').forEach(function (h) { h.classList.remove('asc', 'desc'); });
      th.classList.add(up ? 'asc' : 'desc');
      var key = function (row) {
        var td = row.cells[col]; if (!td) return null;
        var v = td.getAttribute('data-v');
        if (v !== null) return v === '' ? null : parseFloat(v);
        return td.textContent.trim() || null;
      };
      Array.from(body.rows).map(function (r, i) { return [key(r), i, r]; }).sort(function (a, b) {
        if (a[0] === null || b[0] === null) return (a[0] === null) - (b[0] === null) || a[1] - b[1];
        var c = typeof a[0] === 'number' && typeof b[0] === 'number' ? a[0] - b[0]
                : String(a[0]).localeCompare(String(b[0]));
        return (up ? c : -c) || a[1] - b[1];
      }).forEach(function (x) { body.appendChild(x[2]); });
    });
  });
});
"""
