"""Reading a stored result table as it is (``metaeval results`` and ``export``), apart from the
engine: importing this module imports neither numpy nor pandas (nor the run loop), so that
``results`` prints at once (issue 27 item 6). :func:`table_rows` is also
``metaeval.runs.engine.analyse.table_rows``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from metaeval import schema

if TYPE_CHECKING:
    import pandas as pd

    from metaeval.core import Store
    from metaeval.rows import Rows


def table_rows(wh: Store, table: str, dataset: str | None = None, *, latest: bool = False,
               plain: bool = False) -> pd.DataFrame | Rows:
    """Every row of ``table`` (``latest``: its latest view) of ``dataset`` (None: all), by
    result id; for ``analysis_runs``, the runs over ``dataset`` (parameter ``dataset``, or in
    ``datasets``), by run id; for ``replicability``, the groups that include it. ``plain``: as
    :class:`~metaeval.rows.Rows` (printed without pandas). A ``dataset`` the warehouse does not
    have is an error, as in every command (not an empty answer, nor an empty file exported)."""
    schema.latest_view(table)   # a registered table
    if dataset is not None:
        wh.require_dataset(dataset)
    source = schema.latest_view(table) if latest else table
    read = wh.rows if plain else wh.sql
    if table == "analysis_runs":
        return read(f"SELECT * FROM {source} WHERE $dataset IS NULL OR json_extract_string(parameters, '$.dataset') "
                    "= $dataset OR list_contains(json_extract_string(parameters, '$.datasets[*]'), $dataset) "
                    "ORDER BY run_id", {"dataset": dataset})
    if table == "replicability":  # a row's dataset names its group: the datasets joined by '+'
        return read(f"SELECT * FROM {source} WHERE $dataset IS NULL OR dataset = $dataset "
                    "OR list_contains(string_split(dataset, '+'), $dataset) ORDER BY result_id", {"dataset": dataset})
    return read(f"SELECT * FROM {source} WHERE $dataset IS NULL OR dataset = $dataset ORDER BY result_id",
                {"dataset": dataset})
