"""metaeval-warehouse: a DuckDB warehouse for the meta-evaluation of text-generation metrics."""

from warehouse.core import Matrix, Warehouse
from warehouse.errors import ConflictError, InputError, WarehouseError

__all__ = ["ConflictError", "InputError", "Matrix", "Warehouse", "WarehouseError"]
__version__ = "0.2.0"
