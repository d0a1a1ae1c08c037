-- What was measured: measures, automatic scores and per-annotator human judgments.
CREATE SEQUENCE IF NOT EXISTS measure_id_seq;
CREATE TABLE IF NOT EXISTS measures (
    measure_id  INTEGER PRIMARY KEY DEFAULT nextval('measure_id_seq'),
    dataset_id  INTEGER NOT NULL REFERENCES datasets (dataset_id),
    name        VARCHAR NOT NULL,        -- source keys joined by '.', e.g. rouge-2.recall
    kind        VARCHAR NOT NULL CHECK (kind IN ('automatic', 'human')),
    direction   VARCHAR NOT NULL CHECK (direction IN ('higher', 'lower')),  -- which is better
    scale       VARCHAR,                 -- declared range 'low..high' (metaeval scale); NULL: unknown
    UNIQUE (dataset_id, name)
);

-- One automatic value per (system, input, measure) and run (replicate: 0, or 1, 2, ... for a metric
-- run again on the same cell, issue 45 item 4); the analyses read a cell's mean over its runs (view
-- score_means).
-- scores and judgments declare no FOREIGN KEY and no PRIMARY KEY (since schema 3): only the
-- ingest (warehouse/load.py) writes them, with ids it resolved by joining systems, inputs and
-- measures (which nothing deletes), and with at most one row per key (it checks duplicates
-- and merges by key). DuckDB checked three foreign keys per row (3-4x the insert time) and
-- kept the primary key's index in memory: loading 50M values needed more than 1 GB for it.
CREATE TABLE IF NOT EXISTS scores (
    system_id   INTEGER NOT NULL,        -- systems.system_id
    input_id    INTEGER NOT NULL,        -- inputs.input_id
    measure_id  INTEGER NOT NULL,        -- measures.measure_id
    value       DOUBLE NOT NULL,        -- key: (system_id, input_id, measure_id, replicate)
    replicate   INTEGER NOT NULL DEFAULT 0  -- the run (since schema 13; the ingest checks it is >= 0)
);

-- Human values, one per annotator (the source's position in a list, or its annotator id).
CREATE TABLE IF NOT EXISTS judgments (
    system_id   INTEGER NOT NULL,        -- systems.system_id
    input_id    INTEGER NOT NULL,        -- inputs.input_id
    measure_id  INTEGER NOT NULL,        -- measures.measure_id
    annotator   VARCHAR NOT NULL,
    value       DOUBLE NOT NULL         -- key: (system_id, input_id, measure_id, annotator)
);
