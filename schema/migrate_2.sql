-- Schema 2 -> 3, run by `metaeval init` before the table scripts. Keeps every row.
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
