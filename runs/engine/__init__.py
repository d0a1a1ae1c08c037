"""The engine: how any family runs and is stored — the registry (families, Option, FAMILIES), typed
parameters, scope and data (selection, subset), the run loop (runner), runs and the writer
(bookkeeping, persist), the one analyse() / latest_rows() (analyse), executors, the Python API (api:
Warehouse with every family as a method).
"""
