"""Groups of ``metaeval`` commands, one module per area.

Each module defines click commands (using the helpers of :mod:`metaeval.cli`: ``Context``,
``show``, ...; an analysis family's options with ``@options_of("<family>")`` of
:mod:`metaeval.cli.families`, read from its declaration) and lists them in ``COMMANDS``; the CLI
adds them all, and a generated command for each registered family without one.
"""
