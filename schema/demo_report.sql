-- The demo's first table: per metric, level and coefficient, the correlation with the human
-- judgment, its 95% Boot-Both CI, and how many other metrics it beats significantly
-- (two-sided Perm-Both, Holm within each metric's family; a beats b when the test of (a, b) is
-- significant with delta > 0). $1 dataset, $2 human, $3 k, $4 seed.
SELECT c.metric, c.level, c.coefficient,
       round(c.value, 3) AS r,
       '[' || printf('%.3f', ci.lower) || ', ' || printf('%.3f', ci.upper) || ']' AS ci_95,  -- 3 decimals each
       (SELECT count(*) FROM latest_hypothesis_tests t
        WHERE t.dataset = c.dataset AND t.human = c.human AND t.metric_a = c.metric
          AND t.level = c.level AND t.coefficient = c.coefficient AND t.method = 'perm-both'
          AND t.alternative = 'two-sided' AND t.correction = 'holm' AND t.correction_group = 'metric'
          AND t.k = $3 AND t.seed = $4 AND t.aggregate = 'mean' AND t.significant AND t.delta > 0) AS beats
FROM latest_correlations AS c
JOIN latest_confidence_intervals AS ci
  ON ci.dataset = c.dataset AND ci.human = c.human AND ci.metric = c.metric AND ci.level = c.level
 AND ci.coefficient = c.coefficient AND ci.method = 'boot-both' AND ci.k = $3 AND ci.seed = $4
 AND ci.aggregate = c.aggregate
WHERE c.dataset = $1 AND c.human = $2 AND c.aggregate = 'mean'
ORDER BY c.level DESC, c.coefficient DESC, c.value DESC, c.metric;   -- a tie in name order, every run
