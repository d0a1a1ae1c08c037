-- The measures of one dataset and what they are (kind, direction, scale), without counting
-- their cells as the measure_summary view does (which reads every cell of the dataset): for
-- checking names and orienting matrices.
SELECT m.name AS measure, m.kind, m.direction, m.scale
FROM measures AS m JOIN datasets AS d USING (dataset_id)
WHERE d.name = $dataset
ORDER BY m.kind, m.name;
