-- Schema 13 -> 14, run by `metaeval init` before the table scripts. Keeps every row.
-- Votes at DuckDB's pace (issue 47 item 1): preferences has no declared primary key any more; the
-- ingest keeps its key (one row per dataset, input, pair, judge, presentation order and run), as it
-- keeps the scores'. DuckDB drops no primary key in place: the table is rebuilt -- an absent one as an
-- empty table of schema 13's shape first, so that the same statements serve -- its rows copied in
-- their order, the old one dropped and the new renamed; the views reading it are made again by the
-- table scripts after this one.
CREATE TABLE IF NOT EXISTS preferences (
    dataset_id INTEGER NOT NULL, input_id INTEGER NOT NULL, system_a_id INTEGER NOT NULL,
    system_b_id INTEGER NOT NULL, judge VARCHAR NOT NULL, kind VARCHAR NOT NULL, presentation VARCHAR NOT NULL,
    winner VARCHAR NOT NULL, probability DOUBLE, replicate INTEGER NOT NULL DEFAULT 0);
DROP VIEW IF EXISTS preference_matrix;
DROP VIEW IF EXISTS preference_means;
CREATE TABLE preferences_v13 (
    dataset_id    INTEGER NOT NULL,
    input_id      INTEGER NOT NULL,
    system_a_id   INTEGER NOT NULL,
    system_b_id   INTEGER NOT NULL,
    judge         VARCHAR NOT NULL,
    kind          VARCHAR NOT NULL CHECK (kind IN ('automatic', 'human')),
    presentation  VARCHAR NOT NULL CHECK (presentation IN ('ab', 'ba')),
    winner        VARCHAR NOT NULL CHECK (winner IN ('a', 'b', 'tie')),
    probability   DOUBLE,
    replicate     INTEGER NOT NULL DEFAULT 0 CHECK (replicate >= 0)
);
INSERT INTO preferences_v13 (dataset_id, input_id, system_a_id, system_b_id, judge, kind, presentation, winner,
                             probability, replicate)
SELECT dataset_id, input_id, system_a_id, system_b_id, judge, kind, presentation, winner, probability, replicate
FROM preferences;
DROP TABLE preferences;
ALTER TABLE preferences_v13 RENAME TO preferences;
