-- The preferences as the analyses read them: one row per judge, item and presentation order, the
-- mean over the judge's runs (replicate). The mean is the soft preference: the share of the runs
-- preferring system_b, a tie counting 1/2 and a run with a continuous preference its probability;
-- winner is its rounding (> 0.5: b, < 0.5: a, 0.5: tie), as for a continuous judge. A cell judged
-- once is its row as stored (winner and probability unchanged: results computed before the runs
-- existed read the same rows). runs: how many runs the cell has.
CREATE OR REPLACE VIEW preference_means AS
WITH repeated AS (SELECT EXISTS (SELECT 1 FROM preferences WHERE replicate > 0) AS yes),
grouped AS (      -- (only when some run is not run 0: a warehouse without runs reads its rows as they are)
    SELECT dataset_id, input_id, system_a_id, system_b_id, judge, kind, presentation, count(*) AS runs,
           any_value(winner) AS one_winner, any_value(probability) AS one_probability,
           avg(coalesce(probability, CASE winner WHEN 'b' THEN 1.0 WHEN 'a' THEN 0.0 ELSE 0.5 END)) AS soft
    FROM preferences
    WHERE (SELECT yes FROM repeated)
    GROUP BY dataset_id, input_id, system_a_id, system_b_id, judge, kind, presentation)
SELECT dataset_id, input_id, system_a_id, system_b_id, judge, kind, presentation, winner, probability,
       CAST(1 AS BIGINT) AS runs
FROM preferences
WHERE NOT (SELECT yes FROM repeated)
UNION ALL
SELECT dataset_id, input_id, system_a_id, system_b_id, judge, kind, presentation,
       CASE WHEN runs = 1 THEN one_winner WHEN soft > 0.5 THEN 'b' WHEN soft < 0.5 THEN 'a' ELSE 'tie' END AS winner,
       CASE WHEN runs = 1 THEN one_probability ELSE soft END AS probability,
       runs
FROM grouped;

-- The judge x item matrix: one row per judge and item (input, system_a, system_b), with its
-- verdict (the mean over its runs) in each presentation order (NULL: not judged in that order).
CREATE OR REPLACE VIEW preference_matrix AS
SELECT d.name AS dataset, i.name AS input, sa.name AS system_a, sb.name AS system_b, p.judge, p.kind,
       max(p.winner) FILTER (WHERE p.presentation = 'ab') AS winner_ab,
       max(p.winner) FILTER (WHERE p.presentation = 'ba') AS winner_ba
FROM preference_means AS p
JOIN datasets AS d ON d.dataset_id = p.dataset_id
JOIN inputs AS i ON i.input_id = p.input_id
JOIN systems AS sa ON sa.system_id = p.system_a_id
JOIN systems AS sb ON sb.system_id = p.system_b_id
GROUP BY d.name, i.name, sa.name, sb.name, p.judge, p.kind;
