"""What every section of the report reads: the :class:`Context` (the warehouse, the dataset,
the human judgment asked for, the reader's :class:`Words`, the runs collected so far, the
figures drawn) and the :class:`Section` a section function returns."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import pandas as pd

from metaeval.present import figures
from metaeval.analyses.stats import vocabulary
from metaeval.core import Store
from metaeval.errors import Argument, Hint
from metaeval.runs.report import cells


@dataclass
class Section:
    """One ``<section>`` of the page: its heading and anchor, a note (what is missing, and what
    to run), its HTML blocks, and the runs behind it (linked to the provenance). Sections that
    share an anchor are one ``<section>`` on the page (:func:`metaeval.runs.report.page.merge`)."""

    title: str
    anchor: str
    note: str = ""
    blocks: list[str] = field(default_factory=list)     # HTML fragments
    run_ids: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class Words:
    """How the report names what to run (``hint``: a :class:`~metaeval.errors.Hint` as text) and a
    parameter (``argument``: an :class:`~metaeval.errors.Argument`). Default: the Python API's
    words (``wh.compare(dataset='d', ...)``, ``system_inputs=all``); the command line gives its
    own (``metaeval compare --dataset d ...``, ``--system-inputs all``)."""

    hint: Callable[[Hint], str] = str
    argument: Callable[[Argument], str] = str


#: ``metaeval.ingest.summaries``: what stores a dataset's summary texts, references and documents.
SUMMARIES = Hint("load_summaries", python="metaeval.ingest.summaries")


def load_summaries(dataset: str) -> Hint:
    return Hint("load_summaries", (("dataset", dataset),), positional=("SUMMARIES.jsonl",),
                python=f"wh.load({dataset!r}, [metaeval.ingest.summaries.parse('SUMMARIES.jsonl')])")


class Context:
    """What a section function ``fn(ctx) -> Section | None`` reads: ``wh`` (opened read-only by
    the command line), ``dataset``, ``human`` (None: every human judgment), ``words``,
    ``run_ids`` (the runs behind the sections built so far: the page fills it before the
    provenance), ``figures`` (how many were drawn); the latest rows of a view, the duplicated
    measures and the cells of a ranking are read once."""

    def __init__(self, wh: Store, dataset: str, human: str | None, words: Words):
        self.wh, self.dataset, self.human, self.words = wh, dataset, human, words
        self.figures = 0
        self.run_ids: set[int] = set()
        self._data = None
        self._rows: dict[str, pd.DataFrame] = {}

    def rows(self, view: str) -> pd.DataFrame:
        """The latest rows of ``view`` for the report's dataset (and human), of every subset of
        cells: the sections group them by ``subset`` (one figure each; a ``--where`` / ``--by``
        subset's rows never mix with those of every cell). Of the views with an ``aggregate`` key,
        the rows of a system's mean (the report's setting; the medians are not shown)."""
        if view not in self._rows:
            rows = self.wh.sql(f"SELECT * FROM {view} WHERE dataset = ? AND (? IS NULL OR human = ?) "
                               "ORDER BY result_id", [self.dataset, self.human, self.human])
            if "aggregate" in rows.columns:
                rows = rows[rows["aggregate"] == "mean"].reset_index(drop=True)
            self._rows[view] = rows
        return self._rows[view]

    def latest(self, table: str) -> pd.DataFrame:
        """The latest rows of the result ``table`` for the report's dataset, every subset (and
        every human: a family's table may have none); empty when no run ever created the table."""
        from metaeval import schema
        from metaeval.runs.engine import analyse as engine

        view = schema.latest_view(table)
        if not self.wh.con.execute("SELECT count(*) FROM duckdb_views() WHERE view_name = ?", [view]).fetchall()[0][0]:
            return pd.DataFrame()
        return engine.latest_rows(self.wh, table, self.dataset, subset=None)

    def tests(self, family: str) -> pd.DataFrame:
        """The latest stored tests of ``family`` for the report's dataset (every subset and human):
        the rows of its :attr:`~metaeval.runs.engine.families.Family.tests_table`, the table the conclusion
        layer reads its tests from, in the order they were written; empty when none."""
        from metaeval.runs.engine.families import FAMILIES

        table = FAMILIES[family].tests_table
        if table is None:
            raise ValueError(f"family {family!r} stores no tests (its tests_table is None)")
        rows = self.latest(table)
        return rows.sort_values("result_id", kind="stable").reset_index(drop=True) if len(rows) else rows

    def figure(self, section: Section, fig, name: str, caption: str, table: pd.DataFrame, note: str = "") -> None:
        """The figure inlined as SVG, its caption (and a note a reader needs: a hidden curve, a
        test that cannot apply) and the table behind it as a CSV download at full precision."""
        image = cells.data_uri(figures.svg(fig), "image/svg+xml")
        csv = cells.data_uri(table.to_csv(index=False).encode(), "text/csv")
        self.figures += 1
        section.blocks.append(
            f'<figure id="{html.escape(cells.slug("fig", name))}"><img src="{image}" alt="{html.escape(caption)}">'
            f"<figcaption>{html.escape(caption)} — "
            f'<a download="{html.escape(name)}.csv" href="{csv}">table (CSV)</a></figcaption>'
            + (f'<p class="note">{html.escape(note)}</p>' if note else "") + "</figure>")

    def data(self, human: str, metrics: Sequence[str]):
        """The cells of ``metrics`` and ``human`` (read once per human), to check that stored
        tests were computed on the cells the warehouse holds now."""
        from metaeval.runs.engine import selection

        if self._data is None or self._data[0] != human or not set(metrics) <= set(self._data[1]):
            scope = selection.Scope(self.dataset, human, tuple(metrics), vocabulary.LEVELS[:1],
                                    vocabulary.COEFFICIENTS[:1])
            self._data = (human, tuple(metrics), selection.load_data(self.wh, scope))
        return self._data[2]

    @cached_property
    def duplicates(self) -> pd.DataFrame:
        """The dataset's duplicated measures (view measure_duplicates)."""
        return self.wh.duplicates(self.dataset)

    def duplicate_pairs(self) -> set[frozenset]:
        """Pairs of measures of which one duplicates the other."""
        return {frozenset(p) for p in zip(self.duplicates["measure"], self.duplicates["duplicate_of"])}

    def run(self, hint: Hint) -> str:
        """What to run, in the words of the report's reader (:class:`Words`)."""
        return self.words.hint(hint)

    def agreement_hint(self) -> str:
        return self.run(Hint("agreement", (("dataset", self.dataset),)))

    def missing(self, what: str, command: str, *, first: tuple = (), needs_texts: bool = False,
                needs_metric: bool = False, needs_pair: bool = False) -> str:
        """"no WHAT yet", with the call of the ``Warehouse`` method ``command`` (its arguments
        ``first``, then the dataset's) that can run on this warehouse: real measure names (the
        report's human judgment, else the dataset's first), and, when it cannot run here (no human
        judgment, no summary texts), what is missing instead."""
        humans = sorted(self.wh.measures(self.dataset, "human")["measure"])
        human = self.human or (humans[0] if humans else None)
        if human is None:
            return (f"no {what}: dataset {self.dataset} has no human judgment to correlate with "
                    f"(mark one with {self.words.argument(Argument('human'))} when ingesting)")
        if needs_texts and not self.wh.sql("SELECT 1 FROM summary_texts WHERE dataset = ? LIMIT 1",
                                           [self.dataset]).shape[0]:
            return (f"no {what}: they score the summary texts, and dataset {self.dataset} has none "
                    f"(add them with `{self.run(load_summaries(self.dataset))}`)")
        args = [*first, ("dataset", self.dataset), ("human", human)]
        metrics = sorted(self.wh.measures(self.dataset, "automatic")["measure"])
        if len(metrics) < (2 if needs_pair else 1):
            return (f"no {what}: they need {'two automatic metrics' if needs_pair else 'an automatic metric'}, "
                    f"and dataset {self.dataset} has {len(metrics) or 'none'}")
        if needs_metric:
            args += [("metrics", [metrics[0]])]
        return f"no {what} yet: run `{self.run(Hint(command, tuple(args)))}`"
