-- Schema 2 -> 3, run by `metaeval init` before the table scripts (which then add any table
-- version 2 did not have and re-create the views). Keeps every row.
-- analysis_runs gained the owner process of each run (rows of version 2 have none recorded).
ALTER TABLE IF EXISTS analysis_runs ADD COLUMN IF NOT EXISTS owner_pid INTEGER;
ALTER TABLE IF EXISTS analysis_runs ADD COLUMN IF NOT EXISTS owner_host VARCHAR;
ALTER TABLE IF EXISTS analysis_runs ADD COLUMN IF NOT EXISTS owner_start VARCHAR;
-- correlations, confidence intervals and tests record the inputs a system score averages
-- (--system-inputs); rows of version 2 have none recorded (they averaged every input: all).
ALTER TABLE IF EXISTS correlations ADD COLUMN IF NOT EXISTS system_inputs VARCHAR;
ALTER TABLE IF EXISTS confidence_intervals ADD COLUMN IF NOT EXISTS system_inputs VARCHAR;
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS system_inputs VARCHAR;
ALTER TABLE IF EXISTS pairwise_accuracy ADD COLUMN IF NOT EXISTS system_inputs VARCHAR;
ALTER TABLE IF EXISTS confidence_intervals ADD COLUMN IF NOT EXISTS resample_annotators VARCHAR;
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS resample_annotators VARCHAR;
-- hypothesis_tests gained early stopping (issue 17): the block size and the resamples drawn.
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS k_block INTEGER;
ALTER TABLE IF EXISTS hypothesis_tests ADD COLUMN IF NOT EXISTS k_used INTEGER;
-- measures gained its declared scale (NULL: unknown, as for every measure of version 2).
ALTER TABLE IF EXISTS measures ADD COLUMN IF NOT EXISTS scale VARCHAR;
-- conventions.method now uses the names of the method column (boot-both, not bootstrap-both).
UPDATE confidence_intervals SET conventions = json_merge_patch(conventions, json_object('method', method))
WHERE json_extract_string(conventions, '$.method') IS DISTINCT FROM method;
UPDATE hypothesis_tests SET conventions = json_merge_patch(conventions, json_object('method', method))
WHERE json_extract_string(conventions, '$.method') IS DISTINCT FROM method;
-- scores and judgments lose their FOREIGN KEY and PRIMARY KEY clauses (issue 15: checking three
-- foreign keys per row made loading millions of values 3-4x slower, and the primary key's index
-- stays in memory; the ingest writes only resolved ids, one row per key, and nothing deletes
-- systems, inputs or measures; see 03_measurements.sql). DuckDB cannot drop a constraint: the
-- tables are rebuilt with the same columns.
CREATE TABLE scores_v3 (
    system_id   INTEGER NOT NULL,
    input_id    INTEGER NOT NULL,
    measure_id  INTEGER NOT NULL,
    value       DOUBLE NOT NULL
);
INSERT INTO scores_v3 SELECT system_id, input_id, measure_id, value FROM scores;
DROP TABLE scores;
ALTER TABLE scores_v3 RENAME TO scores;
CREATE TABLE judgments_v3 (
    system_id   INTEGER NOT NULL,
    input_id    INTEGER NOT NULL,
    measure_id  INTEGER NOT NULL,
    annotator   VARCHAR NOT NULL,
    value       DOUBLE NOT NULL
);
INSERT INTO judgments_v3 SELECT system_id, input_id, measure_id, annotator, value FROM judgments;
DROP TABLE judgments;
ALTER TABLE judgments_v3 RENAME TO judgments;
