-- The staged preferences (_staged_preferences; a run given nowhere in the file is run $replicate) with the ids of dataset $dataset_id's systems
-- and inputs (not their names: a million votes' names are 200 MB), and the winner and probability stored for the same key (stored_winner NULL: none),
-- the kind stored for the judge; changed: a stored row this one changes (its winner, or its
-- probability: given where none was stored, or another); conflict: a change that needs --replace
-- (a new probability where none was stored fills it in).
CREATE OR REPLACE TEMP TABLE _resolved_preferences AS
SELECT s.line, s.judge, s.kind, s.presentation, s.winner, coalesce(CAST(s.replicate AS INTEGER), $replicate) AS replicate, i.input_id, sa.system_id AS system_a_id, sb.system_id AS system_b_id,
       s.probability, p.winner AS stored_winner, p.probability AS stored_probability,
       p.winner IS NOT NULL AND (p.winner <> s.winner OR s.probability IS DISTINCT FROM p.probability) AS changed,
       p.winner IS NOT NULL AND (p.winner <> s.winner
                                 OR (p.probability IS NOT NULL AND s.probability IS DISTINCT FROM p.probability))
           AS conflict,
       (SELECT any_value(q.kind) FROM preferences AS q
         WHERE q.dataset_id = $dataset_id AND q.judge = s.judge) AS stored_kind
FROM _staged_preferences AS s
JOIN inputs AS i ON i.dataset_id = $dataset_id AND i.name = s.input
JOIN systems AS sa ON sa.dataset_id = $dataset_id AND sa.name = s.system_a
JOIN systems AS sb ON sb.dataset_id = $dataset_id AND sb.name = s.system_b
LEFT JOIN preferences AS p
  ON p.dataset_id = $dataset_id AND p.input_id = i.input_id AND p.system_a_id = sa.system_id
 AND p.system_b_id = sb.system_id AND p.judge = s.judge AND p.presentation = s.presentation
 AND p.replicate = coalesce(CAST(s.replicate AS INTEGER), $replicate)
