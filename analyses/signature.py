"""A short signature a paper can print under a number, as sacrebleu prints
``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.0.0``.

One string of ``key:value`` fields joined by ``|``, in a fixed order, holding every setting that
changes the number and only those a row has::

    metaeval:0.6.0|ci|level:system|coef:kendall|method:boot-both|k:1000|seed:0|alpha:0.05|sysin:all|data:3f2a9c1d

- ``metaeval:VERSION`` first, then the analysis (``correlate``, ``ci``, ``compare``, ``winners``, ...);
- ``level``, ``coef`` (the coefficient as stored, variants, tie thresholds and partial
  correlations' controls included: ``pearson[control=system]``), ``subset`` (the cells' subset,
  ``split=test&source=xsum``; left out for every cell), ``pos``, ``tune``, ``thr`` (detection: the
  positive label's threshold, the tune subset, a fixed threshold), ``method``, ``alt`` (alternative), ``k``, ``kmax`` and ``risk`` (sequential tests),
  ``seed``, ``corr`` (correction and its family group, ``holm/metric``), ``alpha``,
  ``sysin`` (the system-score protocol), ``agg`` (a system's score over its inputs when not the mean:
  ``median``; a row's ``mean`` is left out, as before the option), ``annot`` (annotators re-drawn), ``clus`` (the
  input attribute whose clusters were resampled, ``--resample-clusters``: read from the row's conventions where
  it is no column), ``reps`` (``resample``: a metric's or judge's runs drawn again inside the resamples,
  ``--replicates resample``; the mean's left out, as before the runs), ``rule`` (cluster rule);
- ``data:`` the first 8 hex digits of the fingerprint of the cells the number was computed
  from (the row's ``fingerprint``; for a table, the run's ``data_fingerprint``).

A field a row does not have (NULL, NaN, absent) is left out. :func:`common` gives the fields
shared by every row of a table (a caption's signature), with ``data:`` only when all agree.
Pure functions: no database.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

#: (signature key, row column) in signature order, after ``metaeval:VERSION`` and the analysis.
FIELDS: tuple[tuple[str, str], ...] = (
    ("level", "level"), ("coef", "coefficient"), ("subset", "subset"), ("pos", "positive"), ("tune", "tune"),
    ("thr", "fixed_threshold"), ("method", "method"), ("alt", "alternative"),
    ("k", "k"), ("risk", "risk"), ("seed", "seed"), ("corr", "correction"), ("alpha", "alpha"),
    ("sysin", "system_inputs"), ("agg", "aggregate"), ("annot", "resample_annotators"), ("clus", "resample_clusters"),
    ("reps", "replicates"), ("rule", "cluster_rule"), ("data", "fingerprint"),
)
#: Hex digits of a fingerprint kept in a signature.
FINGERPRINT_DIGITS = 8


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value != value  # noqa: PLR0124


def _text(key: str, value: object) -> str:
    if isinstance(value, float) and value.is_integer() and key in ("k", "seed"):
        value = int(value)
    if key == "data":
        return str(value)[:FINGERPRINT_DIGITS]
    if key in ("subset", "tune"):
        return str(value).replace(" & ", "&") or "self"   # tune '': tuned on the evaluated cells
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _clusters(row: Mapping[str, object]) -> object:
    """The row's ``resample_clusters``: its column, else its conventions' (a JSON text or a mapping)."""
    if not _missing(value := row.get("resample_clusters")):
        return value
    conventions = row.get("conventions")
    if isinstance(conventions, str) and "resample_clusters" in conventions:
        import json

        try:
            conventions = json.loads(conventions)
        except ValueError:
            return None
    return conventions.get("resample_clusters") if isinstance(conventions, Mapping) else None


def fields(row: Mapping[str, object]) -> dict[str, str]:
    """The signature fields of one result row (a mapping of its columns), in order."""
    out: dict[str, str] = {}
    for key, column in FIELDS:
        value = row.get(column) if column != "resample_clusters" else _clusters(row)
        if _missing(value) or (key == "corr" and value == "none") or (key == "subset" and value == "") \
                or (key in ("agg", "reps") and value == "mean"):
            continue
        if key == "corr" and not _missing(row.get("correction_group")):
            value = f"{value}/{row['correction_group']}"
        out[key] = _text(key, value)
    return out


def signature(version: str, analysis: str, row: Mapping[str, object]) -> str:
    """``metaeval:VERSION|ANALYSIS|key:value|...`` of one result row (see the module docstring)."""
    parts = [f"metaeval:{version}", analysis] + [f"{k}:{v}" for k, v in fields(row).items()]
    return "|".join(parts)


def common(version: str | Iterable[str], analysis: str, rows: Iterable[Mapping[str, object]]) -> str:
    """The signature of the fields every row shares (a table's caption); the versions joined by
    ``+`` if the rows were written by several."""
    versions = [version] if isinstance(version, str) else sorted(set(version))
    shared: dict[str, str] | None = None
    for row in rows:
        f = fields(row)
        shared = f if shared is None else {k: v for k, v in shared.items() if f.get(k) == v}
    parts = [f"metaeval:{'+'.join(versions)}", analysis] + [f"{k}:{v}" for k, v in (shared or {}).items()]
    return "|".join(parts)


def shared(signatures: Iterable[str | None]) -> str | None:
    """The fields (``key:value``) every signature of a table shares, in order: the signature a
    caption prints. None without signatures."""
    rows = [s.split("|") for s in signatures if s]
    if not rows:
        return None
    first = rows[0]
    return "|".join(part for part in first if all(part in r for r in rows[1:]))
