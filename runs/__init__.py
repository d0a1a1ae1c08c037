"""The analyses run over the warehouse and persisted.

Each family reads its matrices or texts from a :class:`metaeval.Store`, calls the pure
functions of :mod:`metaeval.analyses`, and writes every result with the run that produced it
(parameters, seed, version, data fingerprint). Sub-packages:

- :mod:`~metaeval.runs.engine`: the registry (``families``), parameters, scope and data
  (``selection``), the run loop (``runner``), runs and the writer (``bookkeeping``, ``persist``),
  the one ``analyse()`` / ``latest_rows()`` (``analyse``), executors and the Python API (``api``);
- the families, grouped by what they study: :mod:`~metaeval.runs.metrics` (metrics against
  humans), :mod:`~metaeval.runs.agreement` (metrics and annotators with each other),
  :mod:`~metaeval.runs.factuality`, :mod:`~metaeval.runs.systems`, :mod:`~metaeval.runs.studies`
  (fewer human labels: ppi, plan), :mod:`~metaeval.runs.votes` (judges and leaderboards),
  :mod:`~metaeval.runs.mt` (raters, spans) and :mod:`~metaeval.runs.texts` (metrics computed from
  the stored texts);
- :mod:`~metaeval.runs.report` (the HTML report); :mod:`~metaeval.runs.demo` (the demo dataset),
  :mod:`~metaeval.runs.eee` (the Every Eval Ever export).
"""


def __getattr__(name: str):
    """``Warehouse``: the core's Warehouse with the analyses as methods
    (:class:`metaeval.runs.engine.api.Warehouse`), imported on first use."""
    if name == "Warehouse":
        from metaeval.runs.engine.api import Warehouse

        return Warehouse
    raise AttributeError(f"module 'metaeval.runs' has no attribute {name!r}")
