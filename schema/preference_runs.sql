-- The runs of the automatic judges of dataset $dataset on the cells (judge, item, order) they
-- judged more than once, by name: one row per run (replicate), its verdict and probability.
WITH many AS (
    SELECT dataset_id, input_id, system_a_id, system_b_id, judge, presentation
    FROM preferences
    WHERE kind = 'automatic' AND dataset_id = (SELECT dataset_id FROM datasets WHERE name = $dataset)
    GROUP BY ALL HAVING count(*) > 1)
SELECT i.name AS input, sa.name AS system_a, sb.name AS system_b, p.judge, p.presentation, p.replicate,
       p.winner, p.probability
FROM preferences AS p
JOIN many USING (dataset_id, input_id, system_a_id, system_b_id, judge, presentation)
JOIN inputs AS i ON i.input_id = p.input_id
JOIN systems AS sa ON sa.system_id = p.system_a_id
JOIN systems AS sb ON sb.system_id = p.system_b_id
ORDER BY p.judge, i.name, sa.name, sb.name, p.presentation, p.replicate
