"""The analyses run over the warehouse and persisted.

Each module reads its matrices or texts from a :class:`metaeval.Store`, calls the pure
functions of :mod:`metaeval.analyses`, and writes every result with the run that produced it
(parameters, seed, version, data fingerprint). The engine: :mod:`~metaeval.runs.selection`
(scope and data), :mod:`~metaeval.runs.runner` (the run loop; correlations, confidence intervals,
tests), :mod:`~metaeval.runs.bookkeeping` (runs, the writer), :mod:`~metaeval.runs.engine` (the one
``analyse()`` and ``latest_rows()``); the families: :mod:`~metaeval.runs.ranking`, :mod:`~metaeval.runs.agreement`,
:mod:`~metaeval.runs.simulation`, :mod:`~metaeval.runs.scoring` (metrics computed from the
stored texts), :mod:`~metaeval.runs.report` and :mod:`~metaeval.runs.demo`.
"""


def __getattr__(name: str):
    """``Warehouse``: the core's Warehouse with the analyses as methods
    (:class:`metaeval.runs.api.Warehouse`), imported on first use."""
    if name == "Warehouse":
        from metaeval.runs.api import Warehouse

        return Warehouse
    raise AttributeError(f"module 'metaeval.runs' has no attribute {name!r}")
