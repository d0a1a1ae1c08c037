-- Pairwise preferences (`metaeval ingest preferences`): which of two systems' outputs for an
-- input a judge preferred, in each presentation order. A judge is a model (kind automatic) or
-- a person (kind human: several annotators are several human judges).
-- Each comparison is stored with its systems in name order (system_a's name < system_b's); a
-- row given the other way round is stored swapped (system_a <-> system_b, ab <-> ba, a <-> b),
-- which says the same thing. Written only by the ingest (ingest/preferences.py).
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
    PRIMARY KEY (dataset_id, input_id, system_a_id, system_b_id, judge, presentation)
);

-- The judge x item matrix: one row per judge and item (input, system_a, system_b), with its
-- verdict in each presentation order (NULL: not judged in that order).
CREATE OR REPLACE VIEW preference_matrix AS
SELECT d.name AS dataset, i.name AS input, sa.name AS system_a, sb.name AS system_b, p.judge, p.kind,
       max(p.winner) FILTER (WHERE p.presentation = 'ab') AS winner_ab,
       max(p.winner) FILTER (WHERE p.presentation = 'ba') AS winner_ba
FROM preferences AS p
JOIN datasets AS d ON d.dataset_id = p.dataset_id
JOIN inputs AS i ON i.input_id = p.input_id
JOIN systems AS sa ON sa.system_id = p.system_a_id
JOIN systems AS sb ON sb.system_id = p.system_b_id
GROUP BY d.name, i.name, sa.name, sb.name, p.judge, p.kind;
