"""Groups of ``metaeval`` commands, one module per area.

Each module defines click commands (using the helpers of :mod:`metaeval.cli`: ``Context``,
``show``, ``_analysis_options``...) and lists them in ``COMMANDS``; the CLI adds them all.
"""
