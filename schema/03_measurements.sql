-- What was measured: measures, automatic scores and per-annotator human judgments.
CREATE SEQUENCE IF NOT EXISTS measure_id_seq;
CREATE TABLE IF NOT EXISTS measures (
    measure_id  INTEGER PRIMARY KEY DEFAULT nextval('measure_id_seq'),
    dataset_id  INTEGER NOT NULL REFERENCES datasets (dataset_id),
    name        VARCHAR NOT NULL,        -- source keys joined by '.', e.g. rouge-2.recall
    kind        VARCHAR NOT NULL CHECK (kind IN ('automatic', 'human')),
    direction   VARCHAR NOT NULL CHECK (direction IN ('higher', 'lower')),  -- which is better
    UNIQUE (dataset_id, name)
);

-- One automatic value per (system, input, measure).
-- scores and judgments have no FOREIGN KEY clauses (since schema 3): the ingest writes only ids
-- it resolved by joining systems, inputs and measures, and nothing deletes those; DuckDB's
-- check of three foreign keys per row made loading millions of values 3-4x slower.
CREATE TABLE IF NOT EXISTS scores (
    system_id   INTEGER NOT NULL,        -- systems.system_id
    input_id    INTEGER NOT NULL,        -- inputs.input_id
    measure_id  INTEGER NOT NULL,        -- measures.measure_id
    value       DOUBLE NOT NULL,
    PRIMARY KEY (system_id, input_id, measure_id)
);

-- Human values, one per annotator (the source's position in a list, or its annotator id).
CREATE TABLE IF NOT EXISTS judgments (
    system_id   INTEGER NOT NULL,        -- systems.system_id
    input_id    INTEGER NOT NULL,        -- inputs.input_id
    measure_id  INTEGER NOT NULL,        -- measures.measure_id
    annotator   VARCHAR NOT NULL,
    value       DOUBLE NOT NULL,
    PRIMARY KEY (system_id, input_id, measure_id, annotator)
);
