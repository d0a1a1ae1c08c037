-- The comparisons of dataset $dataset for `metaeval ppi` (prediction-powered win rates and
-- Bradley-Terry): one row per item (input, system_a, system_b; system_a's name first), with the
-- human judges' mean preference for system_b (b: 1, a: 0, tie: 0.5, over every human verdict in
-- either presentation order; NULL without one) and judge $judge's (the same over its verdicts).
-- Items the judge did not see are left out.
SELECT i.name AS input, sa.name AS system_a, sb.name AS system_b,
       avg(CASE p.winner WHEN 'b' THEN 1.0 WHEN 'a' THEN 0.0 ELSE 0.5 END)
           FILTER (WHERE p.kind = 'human') AS human,
       avg(CASE p.winner WHEN 'b' THEN 1.0 WHEN 'a' THEN 0.0 ELSE 0.5 END)
           FILTER (WHERE p.judge = $judge AND p.kind = 'automatic') AS judged
FROM preference_means AS p  -- the mean over each cell's runs
JOIN datasets AS d ON d.dataset_id = p.dataset_id
JOIN inputs AS i ON i.input_id = p.input_id
JOIN systems AS sa ON sa.system_id = p.system_a_id
JOIN systems AS sb ON sb.system_id = p.system_b_id
WHERE d.name = $dataset
GROUP BY i.name, sa.name, sb.name
HAVING count(*) FILTER (WHERE p.judge = $judge AND p.kind = 'automatic') > 0
ORDER BY sa.name, sb.name, i.name
