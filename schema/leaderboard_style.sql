-- Statements of the style-controlled leaderboard (runs/votes/leaderboard_style.py), one per `-- name:`
-- section (schema.statements), run with bound parameters.

-- name: votes
-- The votes of dataset $dataset counted by (input, system_a, system_b, winner): the human judges'
-- ($judge NULL) or one judge's; each judge's verdict in each presentation order is one vote.
SELECT i.name AS input, sa.name AS system_a, sb.name AS system_b, p.winner, count(*) AS n
FROM preference_means AS p  -- the mean over each cell's runs
JOIN datasets AS d ON d.dataset_id = p.dataset_id
JOIN inputs AS i ON i.input_id = p.input_id
JOIN systems AS sa ON sa.system_id = p.system_a_id
JOIN systems AS sb ON sb.system_id = p.system_b_id
WHERE d.name = $dataset
  AND (CASE WHEN $judge IS NULL THEN p.kind = 'human' ELSE p.judge = $judge END)
GROUP BY i.name, sa.name, sb.name, p.winner
ORDER BY i.name, sa.name, sb.name, p.winner;
