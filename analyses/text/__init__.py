"""Pure, array-based text metrics (no database): ROUGE, JS divergence, BLEU, chrF.

Build a :class:`TextCorpus` once (it tokenises every distinct text once), then
call the scorers; each returns ``{measure_name: np.ndarray}`` with one value per
summary in corpus order. :func:`direction` tells whether higher or lower is
better for a measure name.
"""

from __future__ import annotations

import re

from .ablation import kept_token_counts, rouge1_ablated
from .corpus import SummaryRecord, TextCorpus, TokenView, read_sacrerouge_jsonl
from .divergence import js_divergence, js_name
from .modelfree import FEATURES as MODEL_FREE_FEATURES
from .modelfree import model_free
from .mt import bleu, bleu_statistics, chrf
from .retrieval import ANALYZER, QUERIES, analyze, kw_expressions, kw_query, lm_dirichlet, np_query, plain_query
from .rouge import rouge
from .sera import sera, sera_dis, sera_name
from .variants import GRAHAM_KINDS, KINDS, STATISTICS, Variant, graham_grid, variant_grid

_JS_NAME = re.compile(r"js-[1-9][0-9]*(\.input)?(\[(stem,?)?(stop,?)?(smooth)?\])?")
_MODEL_FREE_NAME = re.compile(r"(kl\.(input-summary|summary-input)|cosine\.input|logprob-(unigram|multinomial)\.input)"
                              r"(\[(stem,?)?(stop)?\])?"
                              r"|(cosine-topic|topic-fraction|topic-coverage)\.input\[(stem,)?(stop,)?cutoff=[^],]+\]")
_SERA_NAME = re.compile(r"sera(-dis)?-[1-9][0-9]*(\[(kw|np)(,(bm25|mu=[^],]+))?\]|\[(bm25|mu=[^],]+)\])?")


def direction(name: str) -> str:
    """``"higher"`` or ``"lower"`` is better for a measure produced by this package."""
    if name.startswith("js-"):
        if not _JS_NAME.fullmatch(name):
            raise ValueError(f"not a JS-divergence measure name: {name!r}")
        return "lower"
    if name.startswith(("kl.", "cosine", "topic-", "logprob-")):
        if not _MODEL_FREE_NAME.fullmatch(name):
            raise ValueError(f"not a model-free measure name: {name!r}")
        return "lower" if name.startswith("kl.") else "higher"
    if name in ("bleu", "chrf", "corpus-bleu"):
        return "higher"
    if name.startswith("sera"):
        if not _SERA_NAME.fullmatch(name):
            raise ValueError(f"not a SERA measure name: {name!r}")
        return "higher"
    Variant.parse(name)  # validates ROUGE names
    return "higher"


__all__ = [
    "ANALYZER",
    "QUERIES",
    "GRAHAM_KINDS",
    "KINDS",
    "STATISTICS",
    "SummaryRecord",
    "TextCorpus",
    "TokenView",
    "analyze",
    "Variant",
    "bleu",
    "bleu_statistics",
    "chrf",
    "direction",
    "graham_grid",
    "js_divergence",
    "MODEL_FREE_FEATURES",
    "model_free",
    "js_name",
    "kept_token_counts",
    "kw_expressions",
    "kw_query",
    "lm_dirichlet",
    "np_query",
    "plain_query",
    "read_sacrerouge_jsonl",
    "rouge",
    "rouge1_ablated",
    "sera",
    "sera_dis",
    "sera_name",
    "variant_grid",
]
