-- The latest result of each key of the MT tables (see 22_latest_results.sql).
CREATE OR REPLACE VIEW latest_soft_pairwise_accuracy AS
SELECT * EXCLUDE (rn) FROM (
    SELECT *, row_number() OVER (PARTITION BY dataset, subset, aggregate, metric, human, k, seed
                                 ORDER BY result_id DESC) AS rn
    FROM soft_pairwise_accuracy)
WHERE rn = 1;

-- A ranking is a whole: the rows of the newest run of each (task set, k, seed, alpha).
CREATE OR REPLACE VIEW latest_task_rankings AS
SELECT * EXCLUDE (newest) FROM (
    SELECT *, max(run_id) OVER (PARTITION BY task_set, k, seed, alpha) AS newest
    FROM task_rankings)
WHERE run_id = newest;
