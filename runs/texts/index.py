"""Search indexes on tantivy for retrieval-based metrics (SERA), recorded in the warehouse.

**Building** (:func:`build`). Documents (``id``, ``text``) come from JSONL or Parquet files,
streamed, or from a dataset's stored source documents and references. Each text is analyzed
in Python (:func:`metaeval.analyses.text.retrieval.analyze`: ROUGE words, SMART stopwords out,
Porter stems) and the terms are indexed by tantivy, space-joined, with tantivy's
``whitespace`` tokenizer, so the index's terms are exactly the analyzer's, with positions (for
phrase document frequencies). Every document also gets ``ord`` (its 0-based indexing order,
the tie-breaker of rankings) and ``length`` (its exact number of terms), both u64 fast fields.
The index is written into a temporary directory beside its destination and moved into place
when complete (:func:`metaeval.files.atomic_directory`): a failed build leaves nothing, and an
existing index is replaced only with ``overwrite``. Its row in ``indexes`` is written in the
same step.

**Term statistics** read from tantivy (what its Python API gives, checked with version 0.27):

* ``N`` — ``Searcher.num_docs``; ``df(t)`` — ``Searcher.doc_freq``; the vocabulary with each
  term's df — ``Searcher.terms_with_prefix(field, "")`` (the KW threshold, the mean idf, is
  computed from it once, at build time);
* a phrase's df — the hit count of a ``Query.phrase_query``;
* ``tf(t, d)`` — the ``freq`` of ``Query.explain`` on a ``term_query`` hit (tantivy's BM25
  explanation; exact, unlike its ``dl``, the 1-byte quantised field norm);
* ``|d|`` — the ``length`` fast field (``Searcher.fast_field_values``); ``|C|`` — its sum.

tantivy has no language-model similarity, so **lm-dirichlet** is computed here: the candidates
are the documents a ``term_query`` of some query term hits (the postings of every query term,
read in full: ``cf(t)`` is the sum of their tf), scored by
:func:`metaeval.analyses.text.retrieval.lm_dirichlet` and ranked by decreasing score, ties by
``ord``. Its cost grows with the postings of the query terms, which are cached per term while an
index is open. **bm25** is tantivy's own similarity (k1 = 1.2, b = 0.75, its field-norm
quantised lengths): a boolean query with one SHOULD ``term_query`` per query term occurrence, ties
again broken by ``ord``.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from metaeval import files
from metaeval.analyses.text import retrieval
from metaeval.core import Store
from metaeval.errors import Argument, Hint, InputError, Message, WarehouseError
from metaeval.ingest import common

from typing import TYPE_CHECKING  # noqa: E402

if TYPE_CHECKING:
    from metaeval.runs.engine.runner import ProgressFactory

MODELS = ("lm-dirichlet", "bm25")
#: tantivy's BM25 constants (not settable from its Python API).
BM25_K1, BM25_B = 1.2, 0.75
#: The file that marks a directory as a metaeval index (and holds its build id and statistics).
MARKER = "metaeval-index.json"
CORPUS_SUFFIXES = (".jsonl", ".parquet")
_FIELD = "body"
_WRITER_HEAP = 64_000_000


def _tantivy():
    try:
        import tantivy
    except ImportError:  # a dependency of the project; only a broken install lacks it
        raise WarehouseError("search indexes need the tantivy package: pip install tantivy") from None
    return tantivy


def library() -> str:
    return f"tantivy {metadata.version('tantivy')}"


def default_directory(wh: Store, name: str) -> Path:
    """Where index ``name`` of warehouse ``wh`` lives by default: ``<warehouse file>.indexes/<name>``."""
    if str(wh.path) == ":memory:":
        raise WarehouseError(Message("an in-memory warehouse has no directory beside it: give the index a ",
                                     Argument("directory")))
    return Path(wh.path).resolve().with_name(Path(wh.path).name + ".indexes") / name


def _check_name(name: str) -> str:
    if not name or name != name.strip() or "/" in name or "\\" in name or name in (".", ".."):
        raise WarehouseError(f"invalid index name {name!r}: a non-empty name without slashes or surrounding spaces")
    return name


def _require_table(wh: Store) -> None:
    found = wh.con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'indexes'").fetchone()[0]
    if not found:
        raise WarehouseError(Message(f"the warehouse {wh.path} has no `indexes` table yet: add it with `",
                                     Hint("create", db=str(wh.path), python=f"Store.create({str(wh.path)!r})"),
                                     "` (keeps every row)"))


# --- corpora ------------------------------------------------------------------------------
def _text(value, file: str, line: int, field: str) -> str:
    if isinstance(value, list) and all(isinstance(s, str) for s in value):
        return "\n".join(value)
    if not isinstance(value, str):
        got = "missing" if value is None else type(value).__name__
        raise InputError(file, line, field, f"expected a text (a string or a list of sentence strings), got {got}")
    return value


def count_documents(paths: Sequence[Path]) -> int:
    """How many documents the corpus files hold (Parquet: its metadata; JSONL: non-blank lines)."""
    total = 0
    for path in paths:
        if path.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            total += pq.ParquetFile(path).metadata.num_rows
        else:
            with open(path, "rb") as f:
                total += sum(1 for raw in f if raw.strip())
    return total


def read_corpus(paths: Sequence[Path]) -> Iterator[tuple[str, str, str, int]]:
    """``(id, text, file, line)`` of each document of the JSONL / Parquet files, streamed (Parquet
    in record batches; its "line" is the 1-based row). Ids are unique across the files."""
    seen: set[str] = set()
    for path in paths:
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix not in CORPUS_SUFFIXES:
            raise InputError(str(path), None, None, f"unsupported corpus file type {suffix or '(none)'!r}: "
                             "use .jsonl or .parquet with the fields id and text")
        if not path.is_file():
            raise InputError(str(path), None, None, "no such file")
        if suffix == ".jsonl":
            rows = ((line, obj) for line, obj in common.jsonl_objects(path))
        else:
            rows = _parquet_rows(path)
        for line, obj in rows:
            doc_id = common.identifier(obj.get("id"), str(path), line, "id")
            if doc_id in seen:
                raise InputError(str(path), line, "id", f"document {doc_id!r} is given twice in the corpus")
            seen.add(doc_id)
            yield doc_id, _text(obj.get("text"), str(path), line, "text"), str(path), line


def _parquet_rows(path: Path) -> Iterator[tuple[int, dict]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        handle = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(str(path), None, None, f"not a readable Parquet file: {exc}") from None
    missing = [c for c in ("id", "text") if c not in handle.schema_arrow.names]
    if missing:
        raise InputError(str(path), None, missing[0], "missing column (a corpus has the columns id and text)")
    row = 0
    for batch in handle.iter_batches(columns=["id", "text"], batch_size=4096):
        for obj in batch.to_pylist():
            row += 1
            yield row, obj


def dataset_documents(wh: Store, dataset: str) -> Iterator[tuple[str, str, str, int]]:
    """The dataset's stored source documents (``doc:INPUT:POSITION``) and references
    (``ref:INPUT:REFERENCE``) as ``(id, text, source, 0)``."""
    wh.require_dataset(dataset)
    rows = wh.con.execute("""
        SELECT 'doc:' || i.name || ':' || d.position, d.text FROM documents AS d
        JOIN inputs AS i USING (input_id) JOIN datasets AS ds USING (dataset_id)
        WHERE ds.name = ? ORDER BY i.name, d.position""", [dataset]).fetchall()
    rows += wh.con.execute("""
        SELECT 'ref:' || i.name || ':' || r.reference_id, r.text FROM "references" AS r
        JOIN inputs AS i USING (input_id) JOIN datasets AS ds USING (dataset_id)
        WHERE ds.name = ? ORDER BY i.name, r.reference_id""", [dataset]).fetchall()
    if not rows:
        raise WarehouseError(f"dataset {dataset!r} stores no documents or references to index; "
                             "ingest them with `metaeval ingest summaries`, or index a corpus file")
    for doc_id, text in rows:
        yield doc_id, text, f"dataset {dataset}", 0


# --- building -----------------------------------------------------------------------------
@dataclass(frozen=True)
class IndexInfo:
    name: str
    path: str
    build_id: str
    source: str
    corpus_sha256: str
    documents: int
    terms: int
    vocabulary: int
    mean_idf: float | None
    analyzer: str
    retrieval_model: str
    mu: float
    library: str


def _schema(tantivy):
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field(_FIELD, stored=False, tokenizer_name="whitespace", index_option="position")
    builder.add_unsigned_field("ord", stored=False, fast=True)
    builder.add_unsigned_field("length", stored=False, fast=True)
    return builder.build()


def build(wh: Store, name: str, corpus: Sequence[Path] = (), *, dataset: str | None = None,
          directory: Path | None = None, model: str = "lm-dirichlet", mu: float = retrieval.DEFAULT_MU,
          overwrite: bool = False, progress: ProgressFactory | None = None, command: str | None = None) -> IndexInfo:
    """Index ``corpus`` (JSONL / Parquet files) or the texts of ``dataset`` as index ``name``;
    record it in ``indexes``. ``model`` and ``mu`` are the defaults SERA scoring uses with it."""
    tantivy = _tantivy()
    _check_name(name)
    _require_table(wh)
    if model not in MODELS:
        raise WarehouseError(f"choose a retrieval model from {', '.join(MODELS)}, not {model!r}")
    if not (isinstance(mu, (int, float)) and math.isfinite(mu) and mu > 0):
        raise WarehouseError(f"mu must be a positive number, got {mu!r}")
    if bool(corpus) == bool(dataset):
        raise WarehouseError(Message("index either corpus files or a dataset's texts (", Argument("dataset"),
                                     "), not both"))
    existing = wh.con.execute("SELECT path FROM indexes WHERE name = ?", [name]).fetchall()
    if existing and not overwrite:
        raise WarehouseError(Message(f"the warehouse already has an index {name!r} (at {existing[0][0]}); pass ",
                                     Argument("overwrite", True), " to rebuild it"))
    target = Path(directory) if directory is not None else default_directory(wh, name)
    target = target.resolve()
    taken = wh.con.execute("SELECT name FROM indexes WHERE path = ? AND name <> ?", [str(target), name]).fetchall()
    if taken:
        raise WarehouseError(Message(Argument("directory", placeholder=str(target)),
                                     f" holds the index {taken[0][0]!r}; choose another directory"))
    if corpus:
        paths = [Path(p) for p in corpus]
        for p in paths:   # before anything is written: an unreadable corpus leaves no directory
            if p.suffix.lower() not in CORPUS_SUFFIXES:
                raise InputError(str(p), None, None, f"unsupported corpus file type {p.suffix or '(none)'!r}: "
                                 "use .jsonl or .parquet with the fields id and text")
            if not p.is_file():
                raise InputError(str(p), None, None, "no such file")
        source = {"files": [str(p.resolve()) for p in paths]}
        total = count_documents(paths) if progress else 0
        documents = read_corpus(paths)
    else:
        source = {"dataset": dataset}
        rows = list(dataset_documents(wh, dataset))
        total, documents = len(rows), iter(rows)
    build_id = uuid.uuid4().hex
    bar = _bar(progress, total, f"indexing {name}")
    began = False
    new_parents = [d for d in target.parents if not d.exists()]   # removed again if the build fails
    try:
        with files.atomic_directory(target, warehouse=wh.path, overwrite=overwrite, option=Argument("directory"),
                                    marker=MARKER, what="metaeval index") as tmp:
            stats = _write(tantivy, tmp, documents, bar)
            info = IndexInfo(name=name, path=str(target), build_id=build_id, source=json.dumps(source, sort_keys=True),
                             analyzer=retrieval.ANALYZER, retrieval_model=model, mu=float(mu), library=library(),
                             **stats)
            (tmp / MARKER).write_text(json.dumps(info.__dict__, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            wh.con.begin()
            began = True
            wh.con.execute("DELETE FROM retrievals WHERE build_id IN (SELECT build_id FROM indexes WHERE name = ?)",
                           [name])
            wh.con.execute("DELETE FROM indexes WHERE name = ?", [name])
            wh.con.execute("""INSERT INTO indexes (name, path, build_id, source, corpus_sha256, documents, terms,
                              vocabulary, mean_idf, analyzer, retrieval_model, mu, library, command)
                              VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                           [info.name, info.path, info.build_id, info.source, info.corpus_sha256, info.documents,
                            info.terms, info.vocabulary, info.mean_idf, info.analyzer, info.retrieval_model,
                            info.mu, info.library, command])
        # the directory is in place: record it
        wh.con.commit()
        began = False
    except BaseException:
        if began:
            wh.con.rollback()
        for d in new_parents:   # deepest first
            try:
                d.rmdir()
            except OSError:
                break
        raise
    finally:
        bar.close()
    return info


def _write(tantivy, directory: Path, documents: Iterator[tuple[str, str, str, int]], bar) -> dict:
    index = tantivy.Index(_schema(tantivy), path=str(directory), reuse=False)
    writer = index.writer(_WRITER_HEAP, 1)
    digest = hashlib.sha256()
    n = terms = 0
    try:
        for doc_id, text, _file, _line in documents:
            tokens = retrieval.analyze(text)
            doc = tantivy.Document()
            doc.add_text("id", doc_id)
            doc.add_text(_FIELD, " ".join(tokens))
            doc.add_unsigned("ord", n)
            doc.add_unsigned("length", len(tokens))
            writer.add_document(doc)
            digest.update(doc_id.encode("utf-8", "surrogatepass") + b"\0" + text.encode("utf-8", "surrogatepass") + b"\0")
            n += 1
            terms += len(tokens)
            bar.advance(1)
    except BaseException:
        writer.rollback()               # stop tantivy's threads before the directory is removed
        writer.wait_merging_threads()
        raise
    if n == 0:
        raise WarehouseError("the corpus holds no document")
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    vocabulary = searcher.terms_with_prefix(_FIELD, "")
    mean_idf = retrieval.mean_idf([df for _, df in vocabulary], searcher.num_docs) if vocabulary else None
    return {"corpus_sha256": digest.hexdigest(), "documents": n, "terms": terms,
            "vocabulary": len(vocabulary), "mean_idf": mean_idf}


def _bar(show: bool, total: int, label: str):
    from metaeval.runs.engine.runner import progress_bar

    return progress_bar(show, total, label)


def list_indexes(wh: Store):
    _require_table(wh)
    return wh.sql("SELECT * EXCLUDE (build_id) FROM indexes ORDER BY name")


# --- searching ----------------------------------------------------------------------------
def _rebuild(name: str) -> Hint:
    """How to build index ``name`` again, over what it holds."""
    return Hint("build_index", (("overwrite", True),), positional=(name, "..."),
                python=f"metaeval.runs.texts.index.build(wh, {name!r}, ..., overwrite=True)")


class SearchIndex:
    """An index opened for retrieval, with its term statistics read from tantivy."""

    def __init__(self, info: IndexInfo):
        tantivy = _tantivy()
        self.info = info
        path = Path(info.path)
        marker = path / MARKER
        if not marker.is_file():
            raise WarehouseError(Message(f"index {info.name!r}: its directory {path} is missing or holds no index; "
                                         "rebuild it with `", _rebuild(info.name), "`"))
        if json.loads(marker.read_text(encoding="utf-8")).get("build_id") != info.build_id:
            raise WarehouseError(Message(f"index {info.name!r}: the directory {path} holds another build than the "
                                         "warehouse records; rebuild it with `", _rebuild(info.name), "`"))
        self._tantivy = tantivy
        self.index = tantivy.Index.open(str(path))
        self.schema = self.index.schema
        self.searcher = self.index.searcher()
        self.n_docs = self.searcher.num_docs
        self._postings: dict[str, dict[int, int]] = {}
        self._length: dict[int, int] = {}
        self._address: dict[int, object] = {}
        self._df: dict[tuple[str, ...], int] = {}

    @classmethod
    def open(cls, wh: Store, name: str) -> SearchIndex:
        _require_table(wh)
        rows = wh.con.execute("""SELECT name, path, build_id, source, corpus_sha256, documents, terms, vocabulary,
                                        mean_idf, analyzer, retrieval_model, mu, library
                                 FROM indexes WHERE name = ?""", [name]).fetchall()
        if not rows:
            known = [r[0] for r in wh.con.execute("SELECT name FROM indexes ORDER BY name").fetchall()]
            raise WarehouseError(f"no index {name!r} in the warehouse (indexes: {', '.join(known) or 'none'}); "
                                 f"build one with `metaeval index build {name} ...`")
        return cls(IndexInfo(*rows[0]))

    # statistics
    def doc_freq(self, expression: Sequence[str]) -> int:
        """Documents holding the term, or the phrase at consecutive positions."""
        key = tuple(expression)
        if key not in self._df:
            if len(key) == 1:
                self._df[key] = self.searcher.doc_freq(_FIELD, key[0])
            else:
                query = self._tantivy.Query.phrase_query(self.schema, _FIELD, list(key))
                self._df[key] = self.searcher.search(query, 1, count=True).count
        return self._df[key]

    def postings(self, term: str) -> dict[int, int]:
        """``{ord: tf}`` of every document holding ``term`` (tf from tantivy's explanation)."""
        if term not in self._postings:
            df = self.searcher.doc_freq(_FIELD, term)
            out: dict[int, int] = {}
            if df:
                query = self._tantivy.Query.term_query(self.schema, _FIELD, term)
                hits = [address for _, address in self.searcher.search(query, df, count=False).hits]
                ords = self.searcher.fast_field_values("ord", hits)
                lengths = self.searcher.fast_field_values("length", hits)
                for address, o, length in zip(hits, ords, lengths):
                    out[o] = _freq(json.loads(query.explain(self.searcher, address).to_json()))
                    self._length[o] = length
                    self._address[o] = address
            self._postings[term] = out
        return self._postings[term]

    def _ids(self, ords: Sequence[int]) -> list[str]:
        return [self.searcher.doc(self._address[o])["id"][0] for o in ords]

    # retrieval
    def lm_dirichlet(self, query: Sequence[str], depth: int, mu: float) -> list[str]:
        postings = {t: self.postings(t) for t in dict.fromkeys(query)}
        scores = retrieval.lm_dirichlet(query, postings, self._length, self.info.terms, mu)
        return self._ids(retrieval.rank(scores, {o: o for o in scores}, depth))

    def bm25(self, query: Sequence[str], depth: int) -> list[str]:
        terms = [t for t in query if self.doc_freq((t,))]
        if not terms:
            return []
        q = self._tantivy.Query
        boolean = q.boolean_query([(self._tantivy.Occur.Should, q.term_query(self.schema, _FIELD, t)) for t in terms])
        limit = depth + 1
        while True:   # widen until the documents tied with the last kept one are all in
            hits = self.searcher.search(boolean, limit, count=False).hits
            if len(hits) < limit or hits[-1][0] != hits[depth - 1][0]:
                break
            limit *= 2
        addresses = [a for _, a in hits]
        ords = self.searcher.fast_field_values("ord", addresses)
        for o, a in zip(ords, addresses):
            self._address[o] = a
        ranked = sorted(zip(ords, (s for s, _ in hits)), key=lambda p: (-p[1], p[0]))[:depth]
        return self._ids([o for o, _ in ranked])

    def retrieve(self, query: Sequence[str], model: str, depth: int, mu: float) -> list[str]:
        if depth < 1:
            raise ValueError("depth must be >= 1")
        if model == "lm-dirichlet":
            return self.lm_dirichlet(query, depth, mu)
        if model == "bm25":
            return self.bm25(query, depth)
        raise WarehouseError(f"choose a retrieval model from {', '.join(MODELS)}, not {model!r}")


def model_label(model: str, mu: float) -> str:
    """A retrieval model with its parameters, as cached results and measure options record it."""
    return f"lm-dirichlet(mu={mu:g})" if model == "lm-dirichlet" else f"bm25(k1={BM25_K1:g},b={BM25_B:g})"


def _freq(explanation: dict) -> int:
    """The ``freq`` (term occurrences in the document) of a tantivy BM25 term-query explanation."""
    stack = [explanation]
    while stack:
        node = stack.pop()
        if str(node.get("description", "")).startswith("freq, occurrences of term"):
            return int(node["value"])
        stack.extend(node.get("details", []))
    raise WarehouseError("tantivy's explanation of a term query gives no term frequency "
                         f"(this metaeval reads that of {library()})")
