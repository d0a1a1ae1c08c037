-- Systems (part 'system') and inputs (part 'input') of the staged preferences
-- (_staged_preferences) that dataset $dataset_id lacks, each with the first line giving it.
SELECT part, name, min(line) AS line FROM (
    SELECT 'system' AS part, system_a AS name, line FROM _staged_preferences
    UNION ALL SELECT 'system', system_b, line FROM _staged_preferences
    UNION ALL SELECT 'input', input, line FROM _staged_preferences)
WHERE (part = 'system' AND name NOT IN (SELECT name FROM systems WHERE dataset_id = $dataset_id))
   OR (part = 'input' AND name NOT IN (SELECT name FROM inputs WHERE dataset_id = $dataset_id))
GROUP BY part, name
ORDER BY min(line), part, name
