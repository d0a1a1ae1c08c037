-- Pairwise preferences (`metaeval ingest preferences`): which of two systems' outputs for an
-- input a judge preferred, in each presentation order. A judge is a model (kind automatic) or
-- a person (kind human: several annotators are several human judges).
-- Each comparison is stored with its systems in name order (system_a's name < system_b's); a
-- row given the other way round is stored swapped (system_a <-> system_b, ab <-> ba, a <-> b),
-- which says the same thing. A judge's repeated runs on the same item and order are rows of
-- their run numbers (replicate, default 0); the analyses read their mean (view preference_means).
-- Written only by the ingest (ingest/preferences.py), which keeps the table's key -- one row per
-- (dataset_id, input_id, system_a_id, system_b_id, judge, presentation, replicate): a file's rows
-- are checked to give each once, and each is inserted, replaced or refused against the stored row of
-- its key -- as the scores' (schema 14: no declared primary key, whose index, kept row by row, cost
-- more CPU than reading, checking and storing a million arena votes together; migrate_13.sql).
CREATE TABLE IF NOT EXISTS preferences (
    dataset_id    INTEGER NOT NULL,        -- datasets.dataset_id
    input_id      INTEGER NOT NULL,        -- inputs.input_id
    system_a_id   INTEGER NOT NULL,        -- systems.system_id (name before system_b's)
    system_b_id   INTEGER NOT NULL,        -- systems.system_id
    judge         VARCHAR NOT NULL,        -- a model's name, or a human annotator's id
    kind          VARCHAR NOT NULL CHECK (kind IN ('automatic', 'human')),
    presentation  VARCHAR NOT NULL CHECK (presentation IN ('ab', 'ba')),  -- ab: system_a's output shown first
    winner        VARCHAR NOT NULL CHECK (winner IN ('a', 'b', 'tie')),   -- names the system, not the position
    probability   DOUBLE,                  -- P(system_b preferred) of a continuous judge (AlpacaEval's weighted
                                           -- preferences); winner its rounding; NULL: a verdict only
    replicate     INTEGER NOT NULL DEFAULT 0 CHECK (replicate >= 0)   -- the run (0, 1, ...: the judge asked again)
);
