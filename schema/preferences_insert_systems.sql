-- The systems of the staged preferences (_staged_preferences) that dataset $dataset_id lacks,
-- inserted at once in the order of their first line.
INSERT INTO systems (dataset_id, name)
SELECT $dataset_id, name FROM (
    SELECT name, min(line) AS line FROM (
        SELECT system_a AS name, line FROM _staged_preferences
        UNION ALL SELECT system_b, line FROM _staged_preferences)
    GROUP BY name)
WHERE name NOT IN (SELECT name FROM systems WHERE dataset_id = $dataset_id)
ORDER BY line, name;
