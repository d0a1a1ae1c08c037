-- Replace the resolved preferences of dataset $dataset_id whose stored winner or probability
-- differs (the caller checked --replace where that is a conflict): delete the stored rows; preferences_insert.sql writes the new ones.
DELETE FROM preferences AS p USING _resolved_preferences AS r
WHERE p.dataset_id = $dataset_id AND p.input_id = r.input_id AND p.system_a_id = r.system_a_id
  AND p.system_b_id = r.system_b_id AND p.judge = r.judge AND p.presentation = r.presentation AND p.replicate = r.replicate
  AND r.changed
