-- The runs of judge $judge's votes in dataset $dataset that were run several times (view
-- preference_means' runs > 1), one row per run: the vote's systems, its counted verdict (the mean's),
-- a number per vote (item and presentation order) and the run's share of preferring system_b
-- (its probability, else 1 for b, 0 for a, 1/2 for a tie) and the vote's input, in run order
-- (`leaderboard --judge J --replicates resample`, `judge-leaderboard --replicates resample`).
SELECT sa.name AS system_a, sb.name AS system_b, m.winner,
       dense_rank() OVER (ORDER BY p.input_id, p.system_a_id, p.system_b_id, p.presentation) AS vote,
       coalesce(p.probability, CASE p.winner WHEN 'b' THEN 1.0 WHEN 'a' THEN 0.0 ELSE 0.5 END) AS soft,
       i.name AS input
FROM preferences AS p
JOIN preference_means AS m
  ON m.dataset_id = p.dataset_id AND m.input_id = p.input_id AND m.system_a_id = p.system_a_id
 AND m.system_b_id = p.system_b_id AND m.judge = p.judge AND m.presentation = p.presentation
JOIN datasets AS d ON d.dataset_id = p.dataset_id
JOIN inputs AS i ON i.input_id = p.input_id
JOIN systems AS sa ON sa.system_id = p.system_a_id
JOIN systems AS sb ON sb.system_id = p.system_b_id
WHERE d.name = $dataset AND p.judge = $judge AND m.runs > 1
ORDER BY vote, p.replicate
