-- The staged preferences (_staged_preferences) with the ids of dataset $dataset_id's systems
-- and inputs, and the winner stored for the same key (NULL: none), the kind stored for the judge.
CREATE OR REPLACE TEMP TABLE _resolved_preferences AS
SELECT s.line, s.judge, s.kind, s.presentation, s.winner, s.input, s.system_a, s.system_b,
       i.input_id, sa.system_id AS system_a_id, sb.system_id AS system_b_id,
       p.winner AS stored_winner,
       (SELECT any_value(q.kind) FROM preferences AS q
         WHERE q.dataset_id = $dataset_id AND q.judge = s.judge) AS stored_kind
FROM _staged_preferences AS s
JOIN inputs AS i ON i.dataset_id = $dataset_id AND i.name = s.input
JOIN systems AS sa ON sa.dataset_id = $dataset_id AND sa.name = s.system_a
JOIN systems AS sb ON sb.dataset_id = $dataset_id AND sb.name = s.system_b
LEFT JOIN preferences AS p
  ON p.dataset_id = $dataset_id AND p.input_id = i.input_id AND p.system_a_id = sa.system_id
 AND p.system_b_id = sb.system_id AND p.judge = s.judge AND p.presentation = s.presentation
