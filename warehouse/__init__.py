"""metaeval-warehouse: a DuckDB warehouse for the meta-evaluation of text-generation metrics."""

from __future__ import annotations

from typing import TYPE_CHECKING

from warehouse.errors import ConflictError, InputError, WarehouseError

if TYPE_CHECKING:
    from warehouse.core import Matrix, Warehouse

__all__ = ["ConflictError", "InputError", "Matrix", "Warehouse", "WarehouseError"]
__version__ = "0.2.0"


def __getattr__(name: str):
    """``Warehouse`` and ``Matrix`` on first use: they import pandas and numpy, which
    ``metaeval --help`` does not need."""
    if name in ("Matrix", "Warehouse"):
        from warehouse import core

        return getattr(core, name)
    raise AttributeError(f"module 'warehouse' has no attribute {name!r}")
