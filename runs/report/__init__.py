"""The report of a dataset's persisted results: ONE self-contained HTML file (figures inlined as
SVG data URIs, the table behind each figure as a CSV data-URI download, a few lines of inline CSS
and JavaScript; nothing fetched from the network) that a person browses.

Its first screen answers "which metrics agree best with the humans, and how sure are we": the
metrics ranked by their correlation with the human judgment, with confidence intervals, the
significance clusters where the stored tests support them, and the human ceiling as a row. The
ranking is computed from the stored rows exactly as ``metaeval evaluate`` computes its table
(:func:`metaeval.runs.metrics.evaluate.evaluation_table`: clusters only when every pair of ranked metrics
was tested on the cells the warehouse holds now and the tests can reach their corrected level;
an undefined correlation is never ranked). Then the figures, then the datasets, measures and the
runs behind every number (parameters, versions, data fingerprints), collapsed.

Nothing is recomputed, with one exception, said in its captions: the per-input Kendall tau drawn
against the input properties (the figure 1 of Bhandari et al. 2020) is not persisted, so it is
computed from the stored scores by :func:`metaeval.runs.agreement.score_ranges.tau_vs_property` for a few
metric pairs. The report only reads the warehouse (it is opened read-only).

The page is a list of sections assembled from the family registry (:func:`page.page_sections`):
the answer, every family's sections (:meth:`metaeval.runs.engine.families.Family.section`, by its
``report_position``), the dataset's. Each is a small function ``fn(ctx) -> Section | None`` of a
:class:`Context` (the warehouse, the dataset, the human judgment, the reader's :class:`Words`,
the runs collected): ``answer`` (the first screen), ``factuality`` (partial, subsets, detection,
categories), ``judges``, ``paper`` (intervals, tests, close pairs, power, coverage, normality),
``agreement``, ``provenance`` (the dataset, its measures, the runs). :func:`register_section`
adds one that is no family's; ``cells`` holds the HTML pieces every section uses.
"""

from metaeval.runs.report.answer import ranking_undefined
from metaeval.runs.report.context import Context, Section, Words
from metaeval.runs.report.page import SECTIONS, build, register_section, render
from metaeval.runs.report.paper import correlations

__all__ = ["SECTIONS", "Context", "Section", "Words", "build", "correlations", "ranking_undefined",
           "register_section", "render"]
