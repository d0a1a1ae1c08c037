-- The latest result of each key of the MT tables (see 22_latest_results.sql).
CREATE OR REPLACE VIEW latest_soft_pairwise_accuracy AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, metric, human, k, seed ORDER BY result_id DESC) AS rn
    FROM soft_pairwise_accuracy)
WHERE rn = 1;
