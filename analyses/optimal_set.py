"""The optimal set's share per configuration option (Graham 2015, Table 2).

Graham calls *optimal* a variant of ROUGE not significantly outperformed by any other variant
(``metaeval winners``: ``is_winner``). Table 2 gives, for each configuration option of ROUGE, the
share of the optimal variants with each of its values::

    share(option = v) = |{m in O : option(m) = v}| / |O|

where O is the set of optimal ROUGE variants (metrics that are not ROUGE variants, BLEU in the
paper, are not counted). The options are read from the canonical measure names
(:mod:`metaeval.analyses.text.variants`: ``rouge-2.precision[stem,stop]``): the counting method
(``ngram``: rouge-1 .. rouge-4, rouge-l, rouge-w, rouge-s4, rouge-su4, ...), ``stemming``,
``stopwords`` (removed or not), the summary-level statistic (``statistic``: precision, recall,
f1) and the system-level aggregation (``aggregate``: mean, median; given by the caller, the
measure names do not carry it). For each option the shares of its values sum to 1. Each value
also says how many variants of the ranking have it (``n_variants``): a value can only be
optimal as often as it was tried.

No optimal set, no shares: when the ranking's tests cannot decide (a winner undefined), every
share is undefined (NaN), never a proportion of an unknown set.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from metaeval.analyses.text.variants import Variant

#: the configuration options, in Table 2's order
OPTIONS: tuple[str, ...] = ("ngram", "stemming", "stopwords", "statistic", "aggregate")


def settings(measure: str, aggregate: str = "mean") -> dict[str, str] | None:
    """The configuration of a ROUGE variant's measure name (``rouge-2.precision[stem,stop]`` ->
    ngram rouge-2, stemming stemmed, stopwords removed, statistic precision), with its system-level
    ``aggregate``; None for a measure that is not a ROUGE variant (BLEU, a model metric)."""
    try:
        v = Variant.parse(measure)
    except (ValueError, TypeError):
        return None
    return {"ngram": v.kind, "stemming": "stemmed" if v.stem else "not stemmed",
            "stopwords": "removed" if v.stop else "kept", "statistic": v.statistic, "aggregate": aggregate}


@dataclass(frozen=True)
class Share:
    """One value of one option: how many optimal variants have it (``n_optimal``), their share of
    the optimal set (NaN when the set is undetermined), and how many ranked variants have it."""

    option: str
    value: str
    n_optimal: int | None
    share: float
    n_variants: int


def shares(optimal: Mapping[str, bool | None], aggregates: Mapping[str, str] | None = None) -> list[Share]:
    """The optimal set's share per value of each option (module docstring).

    ``optimal``: each ranked metric -> whether it is optimal (None: undetermined, which makes every
    share NaN); ``aggregates``: a metric's system-level aggregation (default mean). Metrics that are
    not ROUGE variants are left out. Values in order of first appearance among the ranked variants,
    per option in :data:`OPTIONS` order. An error when no ranked metric is a ROUGE variant."""
    aggregates = aggregates or {}
    configured = {m: s for m in optimal if (s := settings(m, aggregates.get(m, "mean"))) is not None}
    if not configured:
        raise ValueError("no ranked metric is a ROUGE variant (rouge-N.statistic[flags]): no option to share")
    decided = all(optimal[m] is not None for m in configured)
    chosen = [m for m in configured if optimal[m]]
    out = []
    for option in OPTIONS:
        values = list(dict.fromkeys(s[option] for s in configured.values()))
        for value in values:
            n_opt = sum(configured[m][option] == value for m in chosen)
            n_all = sum(s[option] == value for s in configured.values())
            share = n_opt / len(chosen) if decided and chosen else np.nan
            out.append(Share(option, value, n_opt if decided else None, share, n_all))
    return out


def shares_table(rows: Sequence[Share]) -> list[dict]:
    """The shares as records (option, value, n_optimal, share, n_variants)."""
    return [{"option": r.option, "value": r.value, "n_optimal": r.n_optimal, "share": r.share,
             "n_variants": r.n_variants} for r in rows]
