"""Options shared by several families, declared once beside :mod:`metaeval.runs.engine.families`
(whose shared options they join; kept apart so that the families importing them form no circle).
"""

from __future__ import annotations

from metaeval.runs.engine.options import Option

#: ``--layout`` of a paper table (``--format latex``; a CLI-only option: :attr:`Family.presented`)
LAYOUT = Option("layout", default="auto", kind="choice", choices="metaeval.present.tables:LAYOUTS",
                help="LaTeX layout: wide (per setting its cluster, correlation and CI), compact (the correlations "
                     "only), long (one row per metric and setting); auto: the first that fits an ACL column, else "
                     "the page (table*).")

#: ``--replicates``: what a family reads of a cell run several times (``preferences.replicate``,
#: ``scores.replicate``); each family gives it its own help with ``.but(help=...)``
REPLICATES = Option("replicates", default="mean", kind="choice", choices=("mean", "resample"),
                    help="A judge run several times on the same items (preferences.replicate): mean reads each "
                         "item and order as the mean over its runs (the soft preference; its rounding the "
                         "verdict); resample also draws the runs again inside each item resample, so that the "
                         "statistics' intervals include the judge's run-to-run noise (seeded).")
