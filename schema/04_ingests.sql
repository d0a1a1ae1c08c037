-- Every ingest that changed the warehouse: which file, what it added, and how it was called.
CREATE SEQUENCE IF NOT EXISTS ingest_id_seq;
CREATE TABLE IF NOT EXISTS ingests (
    ingest_id   INTEGER PRIMARY KEY DEFAULT nextval('ingest_id_seq'),
    dataset_id  INTEGER NOT NULL REFERENCES datasets (dataset_id),
    format      VARCHAR NOT NULL,        -- sacrerouge | summaries | table (also the demo's) | score | attributes | preferences
    file        VARCHAR NOT NULL,
    sha256      VARCHAR NOT NULL,
    options     VARCHAR NOT NULL,        -- JSON: the options that shape what is read
    rows        BIGINT NOT NULL,         -- values (per annotator) and texts read from the file
    inserted    BIGINT NOT NULL,         -- of which new to the warehouse
    replaced    BIGINT NOT NULL,         -- of which replaced stored values (--replace; a judgment cell counts all its values)
    command     VARCHAR,
    ingested_at TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);
