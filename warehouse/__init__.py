"""metaeval: a DuckDB warehouse for the meta-evaluation of text-generation metrics.

The one import name of the project. Its floors, each importing only the ones below it:

====================  ===========================  ==============================================
package               folder of the repository     what it holds
====================  ===========================  ==============================================
``metaeval``          ``warehouse/``               storage core: connection, schema application,
                                                   atomic loading, ``Store`` and ``Matrix``
``metaeval.schema``   ``schema/``                  the SQL (tables, views, bound statements)
``metaeval.ingest``   ``ingest/``                  one parser per input format, onto the core
``metaeval.analyses`` ``analyses/``                pure statistics and text metrics: arrays in,
                                                   numbers out, no database inside
``metaeval.present``  ``present/``                 tables, figures and paper tables of computed
                                                   rows, no database inside
``metaeval.runs``     ``runs/``                    the analyses run over the warehouse and
                                                   persisted (parameters, seed, fingerprint):
                                                   ``engine/`` and the families by what they
                                                   study (``metrics/``, ``votes/``, ...)
``metaeval.cli``      ``cli/``                     the ``metaeval`` command line: parses options,
                                                   calls the floors below, prints
====================  ===========================  ==============================================

``metaeval.analyses`` and the other subpackages are imported on first attribute access
(``metaeval.analyses.correlate``), so that ``import metaeval`` stays light and the storage core
imports nothing above it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from metaeval.errors import ConflictError, InputError, WarehouseError

if TYPE_CHECKING:
    from metaeval.core import Matrix, Store

__all__ = ["ConflictError", "InputError", "Matrix", "Store", "WarehouseError"]
__version__ = "0.13.0"

_SUBPACKAGES = ("analyses", "cli", "ingest", "present", "runs", "schema")


def __getattr__(name: str):
    """``Store`` and ``Matrix`` on first use (they import pandas and numpy, which
    ``metaeval --help`` does not need), and the subpackages on first use."""
    if name in ("Matrix", "Store"):
        from metaeval import core

        return getattr(core, name)
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'metaeval' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "Matrix", "Store", *_SUBPACKAGES])
