-- The verdicts between each system and the baseline $baseline in dataset $dataset, with the two
-- outputs' lengths (the cell attribute output_length; NULL where not stored) and the instruction's
-- place (the input attribute instruction_index, AlpacaEval's index; NULL where not stored): the
-- human judges' ($judge NULL) or one judge's; each verdict in each presentation order is one item.
-- preference: the probability that the system is preferred, a continuous judge's as stored, else
-- 1 a win, 0 a loss, 0.5 a tie.
SELECT CASE WHEN sa.name = $baseline THEN sb.name ELSE sa.name END AS system,
       i.name AS input,
       CASE WHEN p.probability IS NOT NULL THEN
                 CASE WHEN sa.name = $baseline THEN p.probability ELSE 1.0 - p.probability END
            WHEN p.winner = 'tie' THEN 0.5
            WHEN (p.winner = 'a') = (sa.name <> $baseline) THEN 1.0 ELSE 0.0 END AS preference,
       TRY_CAST(lm.value AS DOUBLE) AS length_system,
       TRY_CAST(lb.value AS DOUBLE) AS length_baseline,
       TRY_CAST(ix.value AS BIGINT) AS instruction_index
FROM preference_means AS p  -- the mean over each cell's runs
JOIN datasets AS d ON d.dataset_id = p.dataset_id
JOIN inputs AS i ON i.input_id = p.input_id
JOIN systems AS sa ON sa.system_id = p.system_a_id
JOIN systems AS sb ON sb.system_id = p.system_b_id
LEFT JOIN attributes AS lm ON lm.dataset = d.name AND lm.input = i.name AND lm.attribute = 'output_length'
     AND lm.system = CASE WHEN sa.name = $baseline THEN sb.name ELSE sa.name END
LEFT JOIN attributes AS lb ON lb.dataset = d.name AND lb.input = i.name AND lb.attribute = 'output_length'
     AND lb.system = $baseline
LEFT JOIN attributes AS ix ON ix.dataset = d.name AND ix.input = i.name AND ix.attribute = 'instruction_index'
     AND ix.system = ''
WHERE d.name = $dataset AND $baseline IN (sa.name, sb.name)
  AND (CASE WHEN $judge IS NULL THEN p.kind = 'human' ELSE p.judge = $judge END)
ORDER BY system, instruction_index NULLS LAST, input, p.judge, p.presentation
