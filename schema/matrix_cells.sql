-- The cells of some measures of one dataset as numbers only, for building matrices without
-- a Python object per cell: the measure's 0-based index in $measures, the system's and the
-- input's positions (system_order, input_order) and the value (scores averaged over runs and
-- judgments over annotators, as in the cells view). Reads only the asked measures.
WITH d AS (SELECT dataset_id FROM datasets WHERE name = $dataset),
m AS (SELECT measure_id, list_position($measures, name) - 1 AS k
      FROM measures WHERE dataset_id = (SELECT dataset_id FROM d) AND list_contains($measures, name)),
so AS (SELECT s.system_id, o.position AS sp
       FROM systems AS s JOIN system_order AS o ON o.dataset = $dataset AND o.system = s.name
       WHERE s.dataset_id = (SELECT dataset_id FROM d)),
io AS (SELECT i.input_id, o.position AS ip
       FROM inputs AS i JOIN input_order AS o ON o.dataset = $dataset AND o.input = i.name
       WHERE i.dataset_id = (SELECT dataset_id FROM d)),
v AS (SELECT system_id, input_id, measure_id, value
      FROM score_means WHERE measure_id IN (SELECT measure_id FROM m)
      UNION ALL
      SELECT system_id, input_id, measure_id, avg(value)
      FROM judgments WHERE measure_id IN (SELECT measure_id FROM m)
      GROUP BY system_id, input_id, measure_id)
SELECT CAST(m.k AS INTEGER) AS k, CAST(so.sp AS INTEGER) AS sp, CAST(io.ip AS INTEGER) AS ip, v.value
FROM v JOIN m USING (measure_id) JOIN so USING (system_id) JOIN io USING (input_id)
