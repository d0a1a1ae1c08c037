-- The inputs of the staged preferences (_staged_preferences) that dataset $dataset_id lacks,
-- inserted at once in the order of their first line (an arena file gives each vote its own input).
INSERT INTO inputs(dataset_id, name)
SELECT $dataset_id, input FROM (SELECT input, min(line) AS line FROM _staged_preferences GROUP BY input)
WHERE input NOT IN (SELECT name FROM inputs WHERE dataset_id = $dataset_id)
ORDER BY line, input;
