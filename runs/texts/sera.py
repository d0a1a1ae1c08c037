"""SERA over a dataset's stored texts: queries to a recorded search index, results cached.

For every summary C of the dataset and the references G_1..G_M of its input, each text is
reformulated into a query (:mod:`metaeval.analyses.text.retrieval`: plain, kw, np), run against
the index (:class:`metaeval.runs.texts.index.SearchIndex`) to the largest cut-off, and the ranked lists
are compared by :func:`~metaeval.analyses.text.sera.sera` and
:func:`~metaeval.analyses.text.sera.sera_dis` at each cut-off n.

Each distinct text is queried once per reformulation. The ranked lists are cached in the
``retrievals`` table, keyed by the index build, the retrieval model with its parameters, the
reformulation (with :data:`QUERY_CODE`, the version of the query code) and the sha256 of the
text: scoring again (other cut-offs up to the cached depth,
SERA-DIS after SERA, another dataset with the same texts) reads them instead of searching.
Rankings are deterministic (ties broken by indexing order), so the first n of a deeper cached
list are the top n. Rebuilding an index (``--overwrite``) drops its cached lists.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from metaeval.analyses import text
from metaeval.analyses.text import retrieval
from metaeval.core import Store
from metaeval.errors import Argument, Message, WarehouseError, measures_hint
from metaeval.runs.texts import index as indexing

from typing import TYPE_CHECKING  # noqa: E402

if TYPE_CHECKING:
    from metaeval.runs.engine.runner import ProgressFactory

DEFAULT_CUTOFFS = (5, 10)


@dataclass(frozen=True)
class SERASetting:
    index: str
    queries: tuple[str, ...] = ("plain",)
    cutoffs: tuple[int, ...] = DEFAULT_CUTOFFS
    model: str | None = None          # None: the index's retrieval_model
    mu: float | None = None           # None: the index's mu
    np_model: str = retrieval.DEFAULT_NP_MODEL

    def check(self) -> None:
        unknown = [q for q in self.queries if q not in retrieval.QUERIES]
        if unknown or not self.queries:
            raise WarehouseError(f"choose SERA queries from {', '.join(retrieval.QUERIES)}, not {unknown or 'none'}")
        if not self.cutoffs or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in self.cutoffs):
            raise WarehouseError(f"SERA cut-offs are positive integers, got {list(self.cutoffs)}")
        if self.model is not None and self.model not in indexing.MODELS:
            raise WarehouseError(f"choose a retrieval model from {', '.join(indexing.MODELS)}, not {self.model!r}")
        if self.mu is not None and not self.mu > 0:
            raise WarehouseError(f"mu must be positive, got {self.mu}")

#: The version of the code that turns a text into a query and ranks documents (reformulations,
#: models): part of each cached list's key (``retrievals.query``), so that lists cached by code
#: that answered otherwise are searched again instead of reused. Change it with that code.
QUERY_CODE = "q1"


def _sha(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def resolved(wh: Store, setting: SERASetting) -> tuple[indexing.SearchIndex, str, float]:
    """The opened index and the retrieval model and mu in force (the setting's, else the index's)."""
    setting.check()
    search = indexing.SearchIndex.open(wh, setting.index)
    return search, setting.model or search.info.retrieval_model, setting.mu or search.info.mu


def _reformulator(search: indexing.SearchIndex, query: str, np_model: str):
    if query == "plain":
        return retrieval.plain_query
    if query == "kw":
        if search.info.mean_idf is None:
            raise WarehouseError(f"index {search.info.name!r} holds no term: no idf threshold for KW queries")
        return lambda t: retrieval.kw_query(t, search.doc_freq, search.n_docs, search.info.mean_idf)
    try:
        nlp = retrieval.load_np_chunker(np_model)
    except ValueError as exc:
        raise WarehouseError(str(exc)) from None
    return lambda t: retrieval.np_query(t, nlp)


def retrieve_all(wh: Store, search: indexing.SearchIndex, texts: Sequence[str], query: str, model: str,
                 mu: float, depth: int, *, np_model: str = retrieval.DEFAULT_NP_MODEL,
                 progress: ProgressFactory | None = None, pending: list | None = None) -> tuple[dict[str, list[str]], int]:
    """``{text: ranked document ids (up to depth)}`` for the distinct ``texts``, from the cache
    where it holds them deep enough, else searched and cached; and how many were searched.
    ``pending``: the searched lists' rows are appended to it instead of being cached (see :func:`cache`)."""
    label = indexing.model_label(model, mu)
    query_key = (query if query != "np" else f"np:{np_model}") + f"@{QUERY_CODE}"
    cached = {sha: (d, list(docs)) for sha, d, docs in wh.con.execute(
        "SELECT text_sha256, depth, documents FROM retrievals WHERE build_id = ? AND model = ? AND query = ?",
        [search.info.build_id, label, query_key]).fetchall()}
    distinct = list(dict.fromkeys(texts))
    out, todo = {}, []
    for t in distinct:
        hit = cached.get(_sha(t))
        if hit is not None and hit[0] >= depth:
            out[t] = hit[1][:depth]
        else:
            todo.append(t)
    if todo:
        reformulate = _reformulator(search, query, np_model)
        from metaeval.runs.engine.runner import progress_bar

        bar = progress_bar(progress, len(todo), f"SERA {query} queries")
        rows = []
        try:
            for t in todo:
                out[t] = search.retrieve(reformulate(t), model, depth, mu)
                rows.append((search.info.build_id, label, query_key, _sha(t), depth, out[t]))
                bar.advance(1)
        finally:
            bar.close()
        if pending is None:
            _store(wh, rows)
        else:
            pending.extend(rows)
    return out, len(todo)


def _store(wh: Store, rows: list[tuple]) -> None:
    """Cache ``rows`` in a transaction of their own."""
    wh.con.begin()
    try:
        cache(wh, rows)
        wh.con.commit()
    except BaseException:
        wh.con.rollback()
        raise


def cache(wh: Store, rows: list[tuple]) -> None:
    """Insert the searched lists ``rows`` (as :func:`retrieve_all` gives them) into ``retrievals``,
    inside the caller's transaction."""
    import pyarrow as pa

    table = pa.table({name: [r[i] for r in rows] for i, name in enumerate(
        ["build_id", "model", "query", "text_sha256", "depth", "documents"])},
        schema=pa.schema([("build_id", pa.string()), ("model", pa.string()), ("query", pa.string()),
                          ("text_sha256", pa.string()), ("depth", pa.int32()), ("documents", pa.list_(pa.string()))]))
    wh.con.register("_new_retrievals", table)
    try:
        wh.con.execute("INSERT OR REPLACE INTO retrievals SELECT * FROM _new_retrievals")
    finally:
        wh.con.unregister("_new_retrievals")


def score(wh: Store, corpus: text.TextCorpus, setting: SERASetting, *, progress: ProgressFactory | None = None,
          pending: list | None = None) -> tuple[dict[str, np.ndarray], dict, dict[str, int]]:
    """``{measure name: SERA value per summary}`` (every query x cut-off x plain/discounted),
    what was used (index, build, corpus sha256, model and mu, queries, cut-offs), and how many
    texts each reformulation searched (the others came from the cache).

    The searched lists are cached once every query has run, so a query that fails (an np query
    without spaCy) caches nothing; with ``pending``, they are appended to it instead, for the
    caller to :func:`cache` in its own transaction."""
    rows: list = [] if pending is None else pending
    search, model, mu = resolved(wh, setting)
    depth = max(setting.cutoffs)
    summaries, references = corpus.summary_strings(), corpus.reference_strings()
    texts = summaries + [g for refs in references for g in refs]
    out: dict[str, np.ndarray] = {}
    searched = {}
    for query in dict.fromkeys(setting.queries):
        results, searched[query] = retrieve_all(wh, search, texts, query, model, mu, depth,
                                                np_model=setting.np_model, progress=progress, pending=rows)
        for n in sorted(set(setting.cutoffs)):
            pairs = [(results[c], [results[g] for g in refs]) for c, refs in zip(summaries, references)]
            plain = np.array([text.sera(rc, golds, n) for rc, golds in pairs])
            dis = np.array([text.sera_dis(rc, golds, n) for rc, golds in pairs])
            out[text.sera_name(n, query=query, model=model, mu=mu)] = plain
            out[text.sera_name(n, discounted=True, query=query, model=model, mu=mu)] = dis
    used = {"index": search.info.name, "build_id": search.info.build_id, "corpus_sha256": search.info.corpus_sha256,
            "index_documents": search.info.documents, "model": indexing.model_label(model, mu),
            "queries": list(dict.fromkeys(setting.queries)), "cutoffs": sorted(set(setting.cutoffs)),
            "np_model": setting.np_model if "np" in setting.queries else None, "analyzer": search.info.analyzer,
            "library": search.info.library}
    if pending is None and rows:
        _store(wh, rows)
    return out, used, searched


#: the coefficients of the cut-off sweep (Cohan & Goharian's Table 2 and Fig. 1 report all three)
SWEEP_COEFFICIENTS = ("pearson", "spearman", "kendall")


def check_sweep(wh: Store, dataset: str, human: str, setting: SERASetting) -> None:
    """Before anything is written: ``human`` a human measure of ``dataset``, two cut-offs at least."""
    from metaeval.errors import Argument, Message

    kinds = wh.measure_kinds(dataset)
    row = kinds[kinds["measure"] == human]
    if row.empty or row["kind"].iloc[0] != "human":
        raise WarehouseError(Message(Argument("sweep", human), f": not a human measure of {dataset!r} (`",
                                     measures_hint(dataset), "` lists them with their kinds)"))
    if len(wh.matrix(dataset, human).systems) < 3:
        raise WarehouseError(Message(Argument("sweep", human), " judges fewer than 3 systems: no system-level "
                                     "correlation to sweep"))
    if len(set(setting.cutoffs)) < 2:
        raise WarehouseError(Message(f"a sweep over the cut-off needs two cut-offs or more; got "
                                     f"{sorted(set(setting.cutoffs))}: give them as ",
                                     Argument("cutoff", placeholder="1,2,3")))


def sweep(wh: Store, dataset: str, human: str, measures: Sequence[str], *, prefix: str = "", level: str = "system",
          coefficients: Sequence[str] = SWEEP_COEFFICIENTS, progress: ProgressFactory | None = None):
    """The correlations of the SERA ``measures`` with ``human`` at ``level`` (stored in table
    ``correlations`` by the ordinary correlate analysis, one run), with each measure's variant and
    cut-off (:func:`metaeval.analyses.text.sera_sweep.sweep_frame`)."""
    from metaeval.analyses.text import sera_sweep
    from metaeval.runs.metrics import correlations
    from metaeval.runs.engine import analyse as engine

    literal = ["".join(f"[{c}]" if c in "[]*?" else c for c in m) for m in measures]   # names, not globs
    [outcome] = engine.analyse(wh, lambda scope: [correlations.correlate_analysis(scope)], dataset, human,
                               literal, [level], list(coefficients), progress=progress)
    rows = outcome.rows(wh)
    return sera_sweep.sweep_frame(rows[["metric", "coefficient", "value"]], prefix)
