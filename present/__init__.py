"""The floor of presentation: tables, figures and paper tables of rows that the analyses computed.

Pure and database-free like :mod:`metaeval.analyses` below it (which computes and never draws or
prints): :mod:`.plain` (numbers and text tables without pandas), :mod:`.tables` (every
``--format``), :mod:`.ranking_tables` and :mod:`.paper_tables` (the paper's ranking tables,
markdown and LaTeX), :mod:`.figures` and :mod:`.agreement_plots` (the report's figures),
:mod:`.study_figures` (plan's power curves, Graham's heatmap, SERA's cut-off sweep). The floors
above (runs/, cli/) give them rows; they import nothing of the warehouse.
"""
