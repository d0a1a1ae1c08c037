-- The automatic scores as the analyses read them: one row per (system, input, measure), the mean
-- over the cell's runs (scores.replicate; issue 45 item 4). A cell run once is its row as stored, so
-- that a warehouse without repeated runs reads the same rows, values and fingerprints as before runs
-- existed. Only the cells having a run beyond run 0 are grouped: the others pass an anti-join whose
-- build side (those cells, none in a warehouse without runs: the scan of `replicate > 0` is skipped
-- by the column's statistics) is empty, which costs next to nothing on 50M scores (bench/README.md).
-- runs: how many runs the cell has.
CREATE OR REPLACE VIEW score_means AS
WITH repeated AS (
    SELECT DISTINCT system_id, input_id, measure_id FROM scores WHERE replicate > 0
)
SELECT s.system_id, s.input_id, s.measure_id, s.value, CAST(1 AS BIGINT) AS runs
FROM scores AS s
WHERE NOT EXISTS (SELECT 1 FROM repeated AS r
                  WHERE r.system_id = s.system_id AND r.input_id = s.input_id AND r.measure_id = s.measure_id)
UNION ALL
SELECT s.system_id, s.input_id, s.measure_id, avg(s.value) AS value, count(*) AS runs
FROM scores AS s
WHERE EXISTS (SELECT 1 FROM repeated AS r
              WHERE r.system_id = s.system_id AND r.input_id = s.input_id AND r.measure_id = s.measure_id)
GROUP BY s.system_id, s.input_id, s.measure_id;
