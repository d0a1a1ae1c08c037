-- Search indexes (`metaeval index build`) for retrieval-based metrics (SERA), and their cached
-- retrieval results. The index itself is a directory of the search library's files; this row
-- records what it holds. `build_id` is written into the directory too, so a directory and a
-- row that do not belong together are noticed.
CREATE TABLE IF NOT EXISTS indexes (
    name            VARCHAR PRIMARY KEY,
    path            VARCHAR NOT NULL,        -- the index directory (absolute)
    build_id        VARCHAR NOT NULL,        -- random id of this build, also in the directory's metaeval-index.json
    source          VARCHAR NOT NULL,        -- JSON: the corpus files, or the dataset whose texts were indexed
    corpus_sha256   VARCHAR NOT NULL,        -- of the indexed documents: id, NUL, text, NUL for each, in order
    documents       BIGINT NOT NULL,
    terms           BIGINT NOT NULL,         -- term occurrences in the index (|C| of the query likelihood)
    vocabulary      BIGINT NOT NULL,         -- distinct terms
    mean_idf        DOUBLE,                  -- mean log(N/df) over the vocabulary: KW queries' threshold
    analyzer        VARCHAR NOT NULL,
    retrieval_model VARCHAR NOT NULL,        -- the default of `score --metric sera`: lm-dirichlet or bm25
    mu              DOUBLE NOT NULL,         -- the default Dirichlet prior of lm-dirichlet
    library         VARCHAR NOT NULL,        -- the search library and its version
    command         VARCHAR,
    built_at        TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);

-- Ranked results of one query (a reformulation of one text) on one index build with one
-- retrieval model, to `depth` documents: re-scoring reads them instead of searching again.
CREATE TABLE IF NOT EXISTS retrievals (
    build_id     VARCHAR NOT NULL,
    model        VARCHAR NOT NULL,           -- with its parameters: lm-dirichlet(mu=2000), bm25(k1=1.2,b=0.75)
    query        VARCHAR NOT NULL,           -- the reformulation and the query code's version: plain@q1, kw@q1, np:<spaCy pipeline>@q1
    text_sha256  VARCHAR NOT NULL,           -- of the text the query was made from
    depth        INTEGER NOT NULL,           -- results asked for (fewer when fewer documents match)
    documents    VARCHAR[] NOT NULL,         -- document ids, best first
    PRIMARY KEY (build_id, model, query, text_sha256)
);
