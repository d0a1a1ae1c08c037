-- Schema 11 -> 12, run by `metaeval init` before the table scripts. Keeps every row.
-- Repeated runs (issue 45 item 4): a preference carries its run number (replicate, 0 for every row
-- written before), which joins the table's key, so that one judge's repeated runs on an item are
-- stored as one judge. DuckDB changes no primary key in place: the table is rebuilt (an absent
-- one -- a warehouse made before preferences existed -- as an empty table of the old shape first,
-- so that the same statements serve), its rows copied, the old one dropped and the new renamed.
-- judge_statistics gains the judge's repetition stability (NULL for the rows written before: one
-- run, or not computed) and the most runs of a cell (NULL: written before).
CREATE TABLE IF NOT EXISTS preferences (
    dataset_id INTEGER NOT NULL, input_id INTEGER NOT NULL, system_a_id INTEGER NOT NULL,
    system_b_id INTEGER NOT NULL, judge VARCHAR NOT NULL, kind VARCHAR NOT NULL, presentation VARCHAR NOT NULL,
    winner VARCHAR NOT NULL, probability DOUBLE);
DROP VIEW IF EXISTS preference_matrix;
CREATE TABLE preferences_v11 (
    dataset_id    INTEGER NOT NULL,
    input_id      INTEGER NOT NULL,
    system_a_id   INTEGER NOT NULL,
    system_b_id   INTEGER NOT NULL,
    judge         VARCHAR NOT NULL,
    kind          VARCHAR NOT NULL CHECK (kind IN ('automatic', 'human')),
    presentation  VARCHAR NOT NULL CHECK (presentation IN ('ab', 'ba')),
    winner        VARCHAR NOT NULL CHECK (winner IN ('a', 'b', 'tie')),
    probability   DOUBLE,
    replicate     INTEGER NOT NULL DEFAULT 0 CHECK (replicate >= 0),
    PRIMARY KEY (dataset_id, input_id, system_a_id, system_b_id, judge, presentation, replicate)
);
INSERT INTO preferences_v11 (dataset_id, input_id, system_a_id, system_b_id, judge, kind, presentation, winner,
                             probability, replicate)
SELECT dataset_id, input_id, system_a_id, system_b_id, judge, kind, presentation, winner, probability, 0
FROM preferences;
DROP TABLE preferences;
ALTER TABLE preferences_v11 RENAME TO preferences;
ALTER TABLE IF EXISTS judge_statistics ADD COLUMN IF NOT EXISTS stability DOUBLE;
ALTER TABLE IF EXISTS judge_statistics ADD COLUMN IF NOT EXISTS stability_lower DOUBLE;
ALTER TABLE IF EXISTS judge_statistics ADD COLUMN IF NOT EXISTS stability_upper DOUBLE;
ALTER TABLE IF EXISTS judge_statistics ADD COLUMN IF NOT EXISTS runs INTEGER;
