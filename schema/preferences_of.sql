-- Every preference of dataset $dataset, by name: one row per judge, item and presentation order.
SELECT i.name AS input, sa.name AS system_a, sb.name AS system_b, p.judge, p.kind, p.presentation, p.winner
FROM preference_means AS p  -- the mean over each cell's runs
JOIN datasets AS d ON d.dataset_id = p.dataset_id
JOIN inputs AS i ON i.input_id = p.input_id
JOIN systems AS sa ON sa.system_id = p.system_a_id
JOIN systems AS sb ON sb.system_id = p.system_b_id
WHERE d.name = $dataset
ORDER BY p.judge, i.name, sa.name, sb.name, p.presentation
