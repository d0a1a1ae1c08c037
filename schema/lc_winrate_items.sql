-- The verdicts between each system and the baseline $baseline in dataset $dataset, with the two
-- outputs' lengths (the cell attribute output_length; NULL where not stored): the human judges'
-- ($judge NULL) or one judge's; each verdict in each presentation order is one item.
SELECT CASE WHEN sa.name = $baseline THEN sb.name ELSE sa.name END AS system,
       i.name AS input,
       CASE WHEN p.winner = 'tie' THEN 0.5
            WHEN (p.winner = 'a') = (sa.name <> $baseline) THEN 1.0 ELSE 0.0 END AS preference,
       TRY_CAST(lm.value AS DOUBLE) AS length_system,
       TRY_CAST(lb.value AS DOUBLE) AS length_baseline
FROM preferences AS p
JOIN datasets AS d ON d.dataset_id = p.dataset_id
JOIN inputs AS i ON i.input_id = p.input_id
JOIN systems AS sa ON sa.system_id = p.system_a_id
JOIN systems AS sb ON sb.system_id = p.system_b_id
LEFT JOIN attributes AS lm ON lm.dataset = d.name AND lm.input = i.name AND lm.attribute = 'output_length'
     AND lm.system = CASE WHEN sa.name = $baseline THEN sb.name ELSE sa.name END
LEFT JOIN attributes AS lb ON lb.dataset = d.name AND lb.input = i.name AND lb.attribute = 'output_length'
     AND lb.system = $baseline
WHERE d.name = $dataset AND $baseline IN (sa.name, sb.name)
  AND (CASE WHEN $judge IS NULL THEN p.kind = 'human' ELSE p.judge = $judge END)
ORDER BY system, input, p.judge, p.presentation
